"""The type table of src/core/types.c is where type knowledge lives: the
extension's C files read it instead of switching on the type enum."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Extension files that may switch on the type enum with three or more case
# labels (at most two may: the limit below).
MAX_SWITCHING_FILES = 2
MAX_LABELS = 2


def _type_enum_members() -> set[str]:
    """The members of dfb_type, read from src/core/format.h."""
    text = (ROOT / "src" / "core" / "format.h").read_text()
    body = re.search(r"typedef enum \{(.*?)\} dfb_type;", text, re.S)
    assert body is not None, "dfb_type not found in format.h"
    members = set(re.findall(r"^\s*(DFB_T_[A-Z0-9_]+)", body.group(1), re.M))
    assert {"DFB_T_INT", "DFB_T_UTF8", "DFB_T_DECIMAL"} <= members
    return members


def _labels_per_file() -> dict[str, int]:
    members = _type_enum_members()
    counts = {}
    for path in sorted((ROOT / "src" / "_interchange").rglob("*.c")):
        labels = re.findall(r"\bcase\s+(DFB_T_[A-Z0-9_]+)\s*:", path.read_text())
        counts[path.name] = sum(1 for name in labels if name in members)
    return counts


def test_counter_sees_case_labels():
    # the pattern counts what it must (guards the test against a silent 0)
    text = "switch (t) {\n    case DFB_T_INT:\n    case  DFB_T_UINT :\n}"
    assert len(re.findall(r"\bcase\s+(DFB_T_[A-Z0-9_]+)\s*:", text)) == 2


def test_few_extension_files_switch_on_the_type_enum():
    counts = _labels_per_file()
    assert len(counts) > 20  # every C file of the extension was read
    switching = {name: n for name, n in counts.items() if n > MAX_LABELS}
    assert len(switching) <= MAX_SWITCHING_FILES, (
        f"C files switching on dfb_type (more than {MAX_LABELS} case labels): "
        f"{switching}; read the type table (src/core/types.h) instead"
    )


def test_arrow_type_describes_every_family():
    from dfbuffer._interchange import _arrow_type

    ts = _arrow_type("tsn:Europe/Paris")
    assert ts["logical"] == "datetime" and ts["unit"] == "ns"
    assert ts["tz"] == "Europe/Paris" and ts["converts"] == "view"
    assert ts["numpy"] == "=M8[ns]" and ts["interchange"] == (22, 64, "tsn:Europe/Paris")
    assert _arrow_type("tdD")["converts"] == "kernel"
    assert _arrow_type("tdD")["result"] == "=M8[D]"
    assert _arrow_type("u")["buffers"] == ("validity", "offsets", "data")
    assert _arrow_type("vu")["interchange"] == (21, 8, "vu")
    dec = _arrow_type("d:38,-2,256")
    assert (dec["precision"], dec["scale"], dec["item_bits"]) == (38, -2, 256)
    assert dec["converts"] == "objects" and dec["readable"]
    assert _arrow_type("tin")["converts"] == "view"
    assert _arrow_type("w:5")["size"] == 5
    assert _arrow_type("+w:4")["layout"] == "fixed_list"
    assert _arrow_type("+ud:1,3")["type_ids"] == (1, 3)
    assert _arrow_type("+vL")["buffers"] == ("validity", "offsets", "sizes")
    assert _arrow_type("+s")["children"] is None  # one per field
    assert _arrow_type("+r")["children"] == 2
    for bad in ("", "x", "d:", "w:0", "+ud:1,", "u\0"):
        assert _arrow_type(bad) is None
    with pytest.raises(TypeError):
        _arrow_type(b"u")


def test_schema_reads_the_table():
    import pyarrow as pa

    import dfbuffer

    t = pa.table(
        {
            "t": pa.array([1], pa.time32("ms")),
            "d": pa.array([1], pa.decimal128(5, 2)),
            "s": pa.array(["x"], pa.string_view()),
            "z": pa.array([1], pa.timestamp("us", tz="UTC")),
        }
    )
    got = {c.name: (c.type, c.bits, c.unit, c.tz) for c in dfbuffer.schema(t)}
    assert got == {
        "t": ("time", None, "ms", None),
        "d": ("decimal", 128, None, None),
        "s": ("string", 8, None, None),
        "z": ("datetime", 64, "us", "UTC"),
    }
