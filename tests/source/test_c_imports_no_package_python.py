"""C never imports the package's own Python (docs/design.md, "to_matrix" and section 14):
the C extension holds the table and the model, and ``src/dfbuffer`` is a thin front over
it, so no C file under src/_interchange imports a ``dfbuffer`` module
(``PyImport_ImportModule("dfbuffer...")``, ``dfb_import_attr("dfbuffer...", ...)`` and
their kin).  C may call NumPy's and pandas' own APIs.  The checker is itself tested on
made-up sources."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src" / "_interchange").rglob("*.[ch]"))

# an import call whose first argument is a literal naming the package or a module of it
IMPORT = re.compile(
    r"\b(PyImport_ImportModule\w*|PyImport_Import|dfb_import_attr|PyImport_AddModule\w*)"
    r"\s*\(\s*\"dfbuffer(?:\.[\w.]*)?\"")

def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def package_imports(text: str) -> list[str]:
    """The calls in C source ``text`` that import a module of the package."""
    return [m.group(0) for m in IMPORT.finditer(_strip_comments(text))]


def test_the_checker_finds_package_imports():
    assert package_imports('PyObject *m = PyImport_ImportModule("dfbuffer._to_arrow");')
    assert package_imports('fn = dfb_import_attr(\n    "dfbuffer._to_arrow", "to_arrow");')
    assert package_imports('m = PyImport_ImportModule("dfbuffer");')
    assert package_imports('m = PyImport_ImportModuleLevel("dfbuffer.x", 0, 0, 0, 0);')
    # other libraries' modules, comments and strings that only mention the package
    assert not package_imports('cls = dfb_import_attr("numpy.ma", "MaskedArray");')
    assert not package_imports('m = PyImport_ImportModule("pandas");')
    assert not package_imports('/* PyImport_ImportModule("dfbuffer._to_arrow") */')
    assert not package_imports('PyErr_SetString(PyExc_TypeError, "dfbuffer.Buffer");')
    assert not package_imports('m = PyImport_ImportModule("dfbufferx");')


def test_no_c_file_imports_the_package():
    found = {}
    for path in SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        calls = package_imports(path.read_text(encoding="utf-8"))
        if calls:
            found[rel] = calls
    assert not found, f"C imports the package's Python: {found}"

