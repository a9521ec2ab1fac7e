"""One table of sources, one table of types, for the Python of src/dfbuffer too.

The C frame-source table (src/_interchange/readers/frame_source.c) decides what kind of
source an object is; the Python operations are tables of one function per row of it
(``dfbuffer._sources.operation``).  So no module of src/dfbuffer but ``_sources.py``
tests what kind of producer a value is: no ``isinstance`` / ``type(x) is`` against a
pandas, pyarrow, polars or narwhals container class, no probe of ``__arrow_c_stream__``
and the other PyCapsule attributes or of ``__dataframe__``, no test of a type's module
name, and no module at all compares the kind the table answers with (``kind ==
"pandas"``).  Type knowledge comes from the C type table (src/core/types.c, through
``_arrow_format`` and ``_arrow_type``): no module spells an Arrow format string or maps
NumPy dtypes to formats (see tests/source/test_type_sources.py for the C side).  These
checks walk the syntax tree; the checker is itself tested on the code they replaced.
In C too, only readers/frame_source.c branches on a dfb_frame_kind: an operation of the
C functions (from_dataframe, to_matrix) is a table indexed by kind with an entry for
every row.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "dfbuffer"
# the one front file: the Python half of the frame-source table
FRONT = "_sources.py"
# testing helpers and the environment report build producers' objects on purpose
EXEMPT = {"testing.py", "_report.py"}

_LIBS = {"pd", "pandas", "pa", "pyarrow", "pl", "polars", "nw", "narwhals"}
# the container classes whose test decides a kind of source
_CONTAINERS = {"DataFrame", "Series", "LazyFrame", "Table", "RecordBatch",
               "RecordBatchReader", "ChunkedArray", "Array", "BaseFrame"}
_PROTOCOL_ATTRS = {"__arrow_c_stream__", "__arrow_c_array__", "__arrow_c_device_stream__",
                   "__arrow_c_device_array__", "__arrow_c_schema__", "__dataframe__"}
# the names of the table's rows, as a kind compared with
_KINDS = {"pandas", "arrow", "interchange", "mapping", "schema", "none"}

# a whole Arrow format string of more than one letter (or a prefix of one)
_MULTI = re.compile(
    r"\+[a-zA-Z]+(?::.*)?|v[uz]|td[Dm]|ts[smun]:.*|ts[smun]?:|tD[smun]|tt[smun]|ti[MDn]"
    r"|[dw]:\d.*"
)
_ONE = re.compile(r"[nbcCsSiIlLefguUzZ]")
_FORMAT_NAME = re.compile(r"(?:^|_)(?:fmt|format|formats|dfmt)(?:$|_)", re.I)


def _dotted(node: ast.AST) -> str:
    """``pd.DataFrame`` for an attribute chain, ``""`` for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _producer_class(node: ast.AST) -> str | None:
    """The dotted name when ``node`` names a producer library's container class."""
    names = []
    if isinstance(node, ast.Tuple):
        names = [_dotted(e) for e in node.elts]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _producer_class(node.left) or _producer_class(node.right)
    else:
        names = [_dotted(node)]
    for n in names:
        parts = n.split(".")
        if len(parts) >= 2 and parts[0] in _LIBS and (
            parts[-1] in _CONTAINERS or parts[-2:] == ["extensions", "ExtensionArray"]
        ):
            return n
    return None


def _name_of(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name_of(node.value)
    return ""


def _str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _names_a_library(node: ast.AST) -> bool:
    """Whether a str constant in ``node`` is a producer library's name."""
    libs = {"pandas", "pyarrow", "polars", "narwhals"}
    return any(_str(n) in libs for n in ast.walk(node))


def kind_violations(source: str) -> list[str]:
    """What in Python ``source`` decides a producer's kind, or compares the table's."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            fn = _dotted(node.func)
            if fn == "isinstance" and len(node.args) == 2:
                cls = _producer_class(node.args[1])
                if cls:
                    found.append(f"isinstance(..., {cls})")
            if fn in ("hasattr", "getattr") and len(node.args) >= 2:
                attr = _str(node.args[1])
                if attr in _PROTOCOL_ATTRS:
                    found.append(f"{fn}(..., {attr!r})")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for side in sides:
                cls = _producer_class(side)
                if cls and any(isinstance(o, ast.Is | ast.IsNot) for o in node.ops):
                    found.append(f"type(...) is {cls}")
            names = {_name_of(s) for s in sides}
            strs = {_str(s) for s in sides} | {
                _str(e) for s in sides if isinstance(s, ast.Tuple | ast.List | ast.Set)
                for e in s.elts
            }
            if "kind" in names and strs & _KINDS:
                found.append(f"kind compared with {sorted(strs & _KINDS)}")
            if "__module__" in ast.dump(node) and _names_a_library(node):
                found.append("a type's module compared")
        if (isinstance(node, ast.Call) and _name_of(node.func) == "startswith"
                and "__module__" in ast.dump(node.func) and _names_a_library(node)):
            found.append("a type's module tested")
    return found


def format_violations(source: str) -> list[str]:
    """The Arrow format strings and dtype-to-format maps spelt in Python ``source``."""
    tree = ast.parse(source)
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and n.body and isinstance(n.body[0], ast.Expr) and _str(n.body[0].value) is not None
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            head = _str(node.values[0]) if node.values else None
            if head in ("ts", "tD", "tt", "+w:", "d:", "w:"):
                found.append(f"line {node.lineno}: format built: f{head!r}...")
            continue
        if isinstance(node, ast.FormattedValue):
            continue
        lit = _str(node)
        if lit is not None and id(node) not in docstrings and _MULTI.fullmatch(lit):
            found.append(f"line {node.lineno}: format string {lit!r}")
        if isinstance(node, ast.Tuple):
            # a field or chunk spelt with its format: (name, "U", None, False), "b", None
            elts = node.elts
            for x, y in zip(elts, elts[1:], strict=False):
                s = _str(x)
                if s is not None and _ONE.fullmatch(s) and (
                    isinstance(y, ast.Constant) and y.value is None
                ):
                    found.append(f"line {node.lineno}: format letter {s!r} in a tuple")
        if isinstance(node, ast.Dict):
            vals = [_str(v) for v in node.values]
            if sum(1 for v in vals if v is not None and _ONE.fullmatch(v)) >= 3:
                found.append(f"line {node.lineno}: a map to format letters")
        # a one-letter format given to, compared with or returned as a format
        targets: list[ast.AST] = []
        values: list[ast.AST] = []
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            values = [node.value] if node.value is not None else []
        elif isinstance(node, ast.Compare):
            targets, values = [node.left], list(node.comparators)
            targets, values = targets + values, targets + values
        elif isinstance(node, ast.keyword) and node.arg:
            targets, values = [ast.Name(id=node.arg)], [node.value]
        if any(_FORMAT_NAME.search(_name_of(t)) for t in targets):
            for v in values:
                for sub in ast.walk(v):
                    s = _str(sub)
                    if s is not None and _ONE.fullmatch(s):
                        found.append(f"line {node.lineno}: format letter {s!r}")
        if isinstance(node, ast.Call) and _name_of(node.func) == "startswith":
            if _FORMAT_NAME.search(_name_of(getattr(node.func, "value", node.func))):
                found.append(f"line {node.lineno}: a format prefix tested")
    return found


# -- the C side: the kind is branched on in readers/frame_source.c only ---------------

C_SOURCES = sorted((ROOT / "src" / "_interchange").rglob("*.c"))
C_TABLE = "frame_source.c"


def _c_code(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _c_kinds() -> set[str]:
    """The kinds of dfb_frame_kind (src/_interchange/readers/readers.h), NONE and
    COUNT left out."""
    text = _c_code((ROOT / "src" / "_interchange" / "readers" / "readers.h").read_text())
    body = re.search(r"typedef enum \{(.*?)\} dfb_frame_kind;", text, re.S)
    assert body is not None
    return set(re.findall(r"\b(DFB_SRC_\w+)", body.group(1))) - {"DFB_SRC_NONE",
                                                                 "DFB_SRC_COUNT"}


def c_kind_violations(text: str) -> list[str]:
    """A branch on the kind (a case label, a comparison) in C ``text``."""
    code = _c_code(text)
    return (re.findall(r"\bcase\s+DFB_SRC_\w+", code)
            + re.findall(r"[!=]=\s*DFB_SRC_\w+|\bDFB_SRC_\w+\s*[!=]=", code))


def c_operation_tables(text: str) -> dict[str, set[str]]:
    """``{table: the kinds it has an entry for}`` of every operation table indexed by
    kind (``... name[DFB_SRC_COUNT] = {[DFB_SRC_X] = f, ...}``) in C ``text``."""
    code = _c_code(text)
    out = {}
    for m in re.finditer(r"(\w+)\s*\[\s*DFB_SRC_COUNT\s*\]\s*=\s*\{(.*?)\};", code, re.S):
        out[m.group(1)] = set(re.findall(r"\[\s*(DFB_SRC_\w+)\s*\]\s*=", m.group(2)))
    return out


def test_the_c_kind_is_branched_on_in_the_table_only():
    bad = {f.name: v for f in C_SOURCES
           if f.name != C_TABLE and (v := c_kind_violations(f.read_text()))}
    assert not bad, f"give the operation a table of one function per row instead: {bad}"


def test_every_c_operation_table_has_every_row():
    kinds = _c_kinds()
    assert {"DFB_SRC_PANDAS", "DFB_SRC_ARROW", "DFB_SRC_MAPPING"} <= kinds
    tables = {f"{f.name}:{name}": rows for f in C_SOURCES
              for name, rows in c_operation_tables(f.read_text()).items()}
    assert len(tables) >= 2, tables  # from_dataframe's and to_matrix's
    bad = {t: sorted(kinds - rows) for t, rows in tables.items() if rows != kinds}
    assert not bad, f"a row without an entry (NULL for a row it refuses): {bad}"


def test_the_c_checks_flag_what_the_tables_replaced():
    switch = """
        switch (src.kind) {
            case DFB_SRC_PANDAS: res = pandas_to_dict(st, src.frame); break;
        }"""
    assert c_kind_violations(switch)
    assert c_kind_violations("if (kind == DFB_SRC_ARROW && own == NULL) {}")
    assert c_kind_violations("int x = DFB_SRC_MAPPING != src.kind;")
    assert c_kind_violations("/* case DFB_SRC_PANDAS: in a comment */") == []
    table = "static const f rows[DFB_SRC_COUNT] = {[DFB_SRC_PANDAS] = a, [DFB_SRC_ARROW] = b};"
    assert c_operation_tables(table) == {"rows": {"DFB_SRC_PANDAS", "DFB_SRC_ARROW"}}


def _modules() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(PACKAGE.glob("*.py"))}


def test_only_the_front_file_tests_a_producer_kind():
    mods = _modules()
    assert FRONT in mods and "_to_arrow.py" in mods
    bad = {name: v for name, src in mods.items()
           if name != FRONT and name not in EXEMPT and (v := kind_violations(src))}
    assert not bad, f"ask the frame-source table (dfbuffer._sources) instead: {bad}"


def test_no_module_compares_the_kind_the_table_answers():
    # the front file included: its operations are looked up by row in C, never branched on
    bad = {name: v for name, src in _modules().items()
           if name not in EXEMPT and (v := [x for x in kind_violations(src)
                                            if x.startswith("kind compared")])}
    assert not bad, bad


def test_no_module_knows_formats_outside_the_type_table():
    bad = {name: v for name, src in _modules().items()
           if name not in EXEMPT and (v := format_violations(src))}
    assert not bad, f"ask the type table (_arrow_format, _arrow_type) instead: {bad}"


# The code the tables replaced (abridged from src/dfbuffer before them): each must be
# flagged, or the checks above prove nothing.
REPLACED_KINDS = {
    "kind switch": 'kind, frame, _ = _frame_source(obj)\nif kind == "pandas":\n    pass\n',
    "kind in": 'if kind in ("arrow", "schema"):\n    pass\n',
    "pandas frame": "if isinstance(obj, pd.DataFrame) and frame is obj:\n    pass\n",
    "pyarrow reader": "if isinstance(obj, pa.Table | pa.RecordBatch):\n    pass\n",
    "exact Series": "if pd is not None and type(source) is pd.Series:\n    pass\n",
    "stream probe": 'if not hasattr(type(obj), "__arrow_c_stream__"):\n    pass\n',
    "interchange probe": 'meth = getattr(obj, "__dataframe__", None)\n',
    "narwhals module": 'if type(source).__module__.partition(".")[0] == "narwhals":\n    pass\n',
    "pandas module": 'if type(x).__module__.startswith("pandas"):\n    pass\n',
    "extension array": "if not isinstance(value, pd.api.extensions.ExtensionArray):\n    pass\n",
}
REPLACED_FORMATS = {
    "number map": '_NUMBER = {(0, 8): "c", (0, 16): "s", (0, 32): "i", (0, 64): "l"}\n',
    "numpy map": '_F = {("i", 1): "c", ("u", 1): "C", ("f", 8): "g", ("b", 1): "b"}\n',
    "datetime format": 'fmt = f"ts{unit}:{tz or \'\'}" if dt.kind == "M" else f"tD{unit}"\n',
    "string letter": 'out_fmt = "u" if width == 32 else "U"\n',
    "bool field": 'return "b", None, (size, nulls)\n',
    "string field": 'return (name, "U", None, False), _string_chunk(data, mask)\n',
    "null field": 'fields = [(names[i], "n", None, False) for i in keep_idx]\n'
                  'x = ColumnSchema(name=name, format="u")\n',
    "datetime prefix": 'if not (isinstance(fmt, str) and fmt.startswith("t")):\n    pass\n',
    "nested": 'if fmt == "+s":\n    pass\n',
}


def test_the_checker_flags_what_the_tables_replaced():
    for name, snippet in REPLACED_KINDS.items():
        assert kind_violations(snippet), name
    for name, snippet in REPLACED_FORMATS.items():
        assert format_violations(snippet), name


def test_the_checker_lets_other_code_pass():
    ok = '''
"""Docstring naming "tsu:" and hasattr(x, "__arrow_c_stream__")."""
if isinstance(values, np.ma.MaskedArray) or values.dtype.kind in "biufmM":
    pass
if isinstance(obj, ArrowNodes | InterchangeView):
    pass
if dt.kind == "b" and kind == 3:
    pass
name = "s"
raise TypeError(f"column {name!r}: Arrow format {fmt!r}")
fmt = _arrow_format(np.dtype("i8"))
ours = type(e).__module__.split(".")[0] in ("builtins", "dfbuffer")
'''
    assert kind_violations(ok) == []
    assert format_violations(ok) == []
