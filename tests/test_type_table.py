"""The type table of src/core/types.c is where type knowledge lives: the
extension's C files read it instead of switching on the type enum."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
    for path in sorted((ROOT / "src" / "_interchange").glob("*.c")):
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

