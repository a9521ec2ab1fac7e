"""C never imports the package's own Python (docs/design.md): the extension holds the
table and the model, src/dfbuffer is a thin front over it, so no C file under
src/_interchange imports a ``dfbuffer.`` module (``PyImport_ImportModule``,
``PyImport_Import``, ``dfb_import_attr``).  C may call pandas', NumPy's and pyarrow's
own APIs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src" / "_interchange").rglob("*.[ch]"))
IMPORT = re.compile(
    r"\b(?:PyImport_ImportModule|PyImport_Import|dfb_import_attr)\s*\(\s*\"dfbuffer[.\"]")
# the sites left, until matrix.c reads pandas frames and exports without Python;
# tightened to none once they go
ALLOWED = {"matrix.c"}


def package_imports(text: str) -> int:
    """The number of imports of a dfbuffer module in C source ``text``."""
    return len(IMPORT.findall(text))


def test_no_c_file_imports_the_package_python():
    found = {p.name: n for p in SOURCES
             if (n := package_imports(p.read_text(encoding="utf-8")))}
    assert set(found) <= ALLOWED, sorted(set(found) - ALLOWED)


def test_the_pandas_readers_import_no_package_python():
    for name in ("pandas_fast.c", "arrow_convert.c", "pandas_columns.c", "pandas_frame.c"):
        (path,) = [p for p in SOURCES if p.name == name]
        assert package_imports(path.read_text(encoding="utf-8")) == 0, name


def test_the_checker_finds_each_kind_of_import():
    assert package_imports('m = PyImport_ImportModule("dfbuffer._pandas_columns");') == 1
    assert package_imports('f = dfb_import_attr("dfbuffer._to_arrow", "to_arrow");') == 1
    assert package_imports('x = dfb_import_attr( "dfbuffer", "Buffer");') == 1
    assert package_imports('m = PyImport_ImportModule("pandas");') == 0
    assert package_imports('c = dfb_import_attr("numpy.dtypes", "StringDType");') == 0
