"""Type knowledge in the table (docs/design.md, "The type table"): no C file of the
extension switches on a dfb_type (``case DFB_T_...``) or spells an Arrow format string;
src/core/types.c's table has a row per type with its Arrow format letters, and core's
parser and predicates (dfb_arrow_format_type, dfb_type_is_nested,
dfb_type_has_validity, dfb_type_arrow_format) answer for it.  A new type is then a row,
not a hunt through the extension for every place that compares its format.  These greps
fail on the patterns the table replaced (the checker is itself tested on them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src" / "_interchange").rglob("*.c")) + sorted(
    (ROOT / "src" / "_interchange").rglob("*.h")
)

# a literal that is a whole Arrow format string of more than one letter (or its prefix)
_MULTI = re.compile(
    r"\+[a-zA-Z]*(?::.*)?|v[uz]|td[Dm]?|ts[smun]?:?.*|tD[smun]?|tt[smun]?|ti[MDn]?|[dw]:.*"
)
# the one-letter formats: flagged where a format is compared or passed
_ONE = re.compile(r"[nbcCsSiIlLefguUzZ]")
_FORMAT_USE = re.compile(r"\bstrn?cmp\b|\bformat\b|\bfmt\b|\bfs\b|\bdtype_tuple\b|_schema_init\b")
_CHAR_TEST = re.compile(r"\b(?:format|fmt|fs)\s*\[\s*\d+\s*\]\s*[!=]=\s*'(?!\\0')[^']+'")
_LITERAL = re.compile(r'"((?:\\.|[^"\\\n])*)"')


def strip_comments(text: str) -> str:
    """C text without comments (lines kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def statement_at(text: str, pos: int) -> str:
    """The C statement around position ``pos`` (from the previous ; { or } to the next ;)."""
    start = max(text.rfind(c, 0, pos) for c in ";{}") + 1
    end = text.find(";", pos)
    return text[start : end if end >= 0 else len(text)]


def violations(text: str) -> list[tuple[str, str]]:
    """(rule, statement) for every ``case DFB_T_`` and Arrow format string in C ``text``."""
    code = strip_comments(text)
    found = []
    for m in re.finditer(r"\bcase\s+DFB_T_\w+", code):
        found.append(("case on a dfb_type", m.group()))
    for m in _LITERAL.finditer(code):
        lit = m.group(1)
        stmt = " ".join(statement_at(code, m.start()).split())
        if _MULTI.fullmatch(lit) or (
            _ONE.fullmatch(lit) and _FORMAT_USE.search(stmt.replace(m.group(), '""'))
        ):
            found.append(("Arrow format string", stmt))
    for m in _CHAR_TEST.finditer(code):
        found.append(("format letter compared", m.group()))
    return found


def test_no_file_knows_types_outside_the_table():
    assert len(SOURCES) > 30
    bad = {f.name: v for f in SOURCES if (v := violations(f.read_text()))}
    assert not bad, f"ask src/core/types.h (the type table) instead: {bad}"


# The code the table replaced (abridged from the extension before it): each must be
# flagged, or the greps above prove nothing.
REPLACED = {
    "nested switch": """
        switch (f.type) {
            case DFB_T_FIXED_LIST: rc = dfb_nested_fixed_list(cx, nd, &f, out); break;
        }""",
    "struct test": 'return s->format != NULL && strcmp(s->format, "+s") == 0;',
    "nested test": """return s->format[0] == '+' && strcmp(s->format, "+r") != 0;""",
    "fixed list prefix": 'dcx.in_list |= strncmp(dn.schema->format, "+w", 2) == 0;',
    "union prefixes": """
        if (strncmp(fmt, "+ud", 3) == 0 || strncmp(fmt, "+us", 3) == 0) { return 0; }""",
    "null type": 'return strcmp(fmt, "n") == 0 ? length : -1;',
    "string views": """
        if (decode && strcmp(s->format, "vu") == 0) { return PyUnicode_FromString("U"); }""",
    "schema written": 'if (dfb_arrow_schema_init(s, "+s", "", NULL, 0, 0, n) < 0) {}',
    "offsets dtype": 'odt = dtype_tuple(st, K_INT, 64, "l");',
    "byte bools": 'return s->dictionary == NULL && strcmp(s->format, "c") == 0;',
    "run ends": "return fmt[0] == 's' ? 2 : fmt[0] == 'i' ? 4 : 0;",
}


def test_the_checker_flags_what_the_table_replaced():
    for name, snippet in REPLACED.items():
        assert violations(snippet), name


def test_the_checker_lets_messages_and_other_strings_pass():
    ok = """
        PyErr_Format(PyExc_ValueError, "%lld null%s", n, n == 1 ? "" : "s");
        static const char *const orders[] = {"C", "F", NULL};
        return PyObject_CallFunction(cls, "l", value);
        PyErr_Format(e, "column '%U': Arrow format '+r' (run-end encoded)", name);
        /* strcmp(s->format, "+s") in a comment */
        switch (r->layout) { case DFB_LAYOUT_STRUCT: break; }
        if (fmt == NULL || fmt[0] == '\\0') { return 0; }
        if (dfb_arrow_format_type(s->format) == DFB_T_STRUCT) {}
    """
    assert violations(ok) == []
