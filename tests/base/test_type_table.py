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
    # the format the interchange protocol reports: string views decoded
    assert _arrow_type("vu")["interchange_format"] == "U"
    for same in ("u", "U", "l", "tsu:UTC", "d:10,2", "+s", "+w:3", "vz"):
        assert _arrow_type(same)["interchange_format"] == same
    # a validity bitmap first, but for the null type, unions and run-end encoded
    for fmt, has in (("l", True), ("+s", True), ("n", False), ("+ud:0", False),
                     ("+us:", False), ("+r", False)):
        assert _arrow_type(fmt)["validity"] is has
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


def test_python_asks_the_table_for_the_interchange_format():
    from dfbuffer._schema import _interchange_format

    assert _interchange_format("vu") == "U"
    assert _interchange_format("tsn:UTC") == "tsn:UTC"
    assert _interchange_format("not a format") == "not a format"


# -- _arrow_format: the table's answers for Python (dfbuffer._frame_nodes, _schema) --

_NUMPY_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
                 "M8[s]", "M8[ms]", "M8[us]", "M8[ns]", "m8[s]", "m8[ms]", "m8[us]", "m8[ns]"]


@pytest.mark.parametrize("typestr", _NUMPY_DTYPES)
def test_arrow_format_of_a_numpy_dtype_is_pyarrows(typestr):
    np = pytest.importorskip("numpy")
    pa = pytest.importorskip("pyarrow")
    from dfbuffer._interchange import _arrow_format, _arrow_schema

    dt = np.dtype(typestr)
    want = _arrow_schema(pa.array(np.zeros(2, dt)))["format"]
    assert _arrow_format(dt) == want
    # and a Buffer over such an array exports under the same format
    import dfbuffer

    buf = dfbuffer.Buffer.from_object(np.zeros(2, dt))
    assert _arrow_schema(buf)["format"] == want


def test_arrow_format_refusals_and_parameters():
    np = pytest.importorskip("numpy")
    from dfbuffer._interchange import _arrow_format, _arrow_type

    for typestr in (">i4", "c16", "O", "M8[D]", "M8[2s]", "V8", "U3"):
        assert _arrow_format(np.dtype(typestr)) is None, typestr
    # a NumPy bool column exports bit-packed
    assert _arrow_type(_arrow_format(np.dtype(bool)))["type"] == "bit-packed bool"
    tz = _arrow_format(np.dtype("M8[us]"), "Europe/Paris")
    assert _arrow_type(tz)["tz"] == "Europe/Paris"
    assert _arrow_format(np.dtype("m8[us]"), "UTC") is None  # only datetimes have one
    # interchange (kind, bits): the numbers
    assert _arrow_type(_arrow_format((0, 32)))["type"] == "int"
    assert _arrow_type(_arrow_format((1, 8)))["type"] == "uint"
    assert _arrow_type(_arrow_format((2, 16)))["item_bits"] == 16
    assert _arrow_format((20, 8)) is None and _arrow_format((0, 7)) is None
    # the rows without parameters, by name; the others have no one format
    for name in ("null", "utf8 string", "large utf8 string", "bit-packed bool", "binary"):
        assert _arrow_type(_arrow_format(name))["type"] == name
    assert _arrow_format("timestamp") is None and _arrow_format("no such type") is None
    with pytest.raises(TypeError):
        _arrow_format(3)
    with pytest.raises(TypeError):
        _arrow_format(np.dtype("i4"), 5)
