"""One reader of producer offsets and codes (docs/design.md): no C file of the extension
reads a producer's offsets, codes or string views itself; src/core/reader.h does, each
value once into a local, checked where it is used.  A file that indexes such a buffer directly
brings back the crashes the reader made impossible, so these greps fail on the
patterns it replaced (the checker is itself tested on the code it replaced)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "src" / "_interchange").rglob("*.c")) + sorted(
    (ROOT / "src" / "_interchange").rglob("*.h")
)

# the core entry points that may be handed a producer's offsets buffer
CORE_READERS = ("dfb_offsets_init(", "dfb_offsets_validate(", "dfb_codes_init(")
_INT_PTR = r"\(\s*(?:const\s+)?u?int(?:32|64)_t\s*\*\s*\)"
RULES = {
    # a raw pointer into (or a load from) an offsets buffer outside a core call
    "offsets pointer outside the core reader": re.compile(r"\boffsets\s*(?:\.|->)\s*ptr\b"),
    # offsets[i], codes[i], cat_offsets[k] ... (declarations excepted below)
    "direct indexing of offsets or codes": re.compile(r"\b\w*(?:offsets|codes)\s*\["),
    # memcpy(&v, <anything naming offsets or codes>, n)
    "memcpy load from offsets or codes": re.compile(
        r"\bmemcpy\s*\(\s*&\s*\w+\s*,[^;]*?\b\w*(?:offsets|codes|offs)\w*\b"
    ),
    # pointer arithmetic on a buffer named after offsets or codes
    "arithmetic on offsets or codes": re.compile(
        r"\b\w*(?:offsets|codes)\s*\+|\(\s*const\s+char\s*\*\s*\)\s*\w*(?:offsets|codes)\b"
    ),
    # a pointer named after offsets or codes made from a buffer's ptr
    "raw pointer to offsets or codes": re.compile(
        r"\bconst\s+\w+\s*\*\s*\w*(?:offsets|codes)\w*\s*=\s*[^;]*\bptr\b"
    ),
    # a string view's buffer index or offset loaded (bytes 8 and 12 of the view)
    "string view read outside the core reader": re.compile(
        r"\bmemcpy\s*\(\s*&\s*\w+\s*,[^;]*\+\s*(?:8|12)\s*,\s*4\s*\)"
    ),
    # *(const int32_t *)p, and ((int64_t *)p)[i] read (a store into our own array is
    # followed by "=")
    "int32/int64 pointer cast dereferenced": re.compile(rf"\*\s*{_INT_PTR}"),
    "int32/int64 pointer cast indexed and read": re.compile(
        rf"\(\s*{_INT_PTR}\s*[\w.>-]+\s*\)\s*\[[^\]]*\](?!\s*=[^=])"
    ),
}
DECLARATION = re.compile(r"\b(?:u?int(?:8|16|32|64)_t|char|npy_intp)\s+\w+\s*\[")


def strip_comments_and_strings(text: str) -> str:
    """C text without comments and string / char literals (lines kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', '""', text)


def statement_at(text: str, pos: int) -> str:
    """The C statement around position ``pos`` (from the previous ; { or } to the next ;)."""
    start = max(text.rfind(c, 0, pos) for c in ";{}") + 1
    end = text.find(";", pos)
    return text[start : end if end >= 0 else len(text)]


def violations(text: str) -> list[tuple[str, str]]:
    """(rule, statement) for every read of producer offsets or codes in C ``text``
    that does not go through core's reader."""
    code = strip_comments_and_strings(text)
    found = []
    for rule, pattern in RULES.items():
        for m in pattern.finditer(code):
            stmt = " ".join(statement_at(code, m.start()).split())
            if rule == "offsets pointer outside the core reader" and (
                any(r in stmt for r in CORE_READERS) or "==" in stmt
            ):
                continue  # handed to core's reader, or an address compared
            if rule == "direct indexing of offsets or codes" and DECLARATION.search(
                code[max(code.rfind("\n", 0, m.start()), 0) : m.end()]
            ):
                continue  # an array of our own declared
            found.append((rule, stmt))
    return found


def test_no_file_reads_producer_offsets_or_codes_itself():
    assert len(SOURCES) > 30
    bad = {f.name: v for f in SOURCES if (v := violations(f.read_text()))}
    assert not bad, f"read producer offsets / codes through src/core/reader.h: {bad}"


# The code the reader replaced (abridged from the converters before it): each must be
# flagged, or the greps above prove nothing.
REPLACED = {
    "stringdtype offset_at": """
        static inline int64_t offset_at(const void *offsets, int bits, int64_t i) {
            uint32_t v;
            memcpy(&v, (const char *)offsets + i * 4, 4);
            return v;
        }""",
    "strings plain loop": """
        const char *op = (const char *)offsets + offset * 4;
        for (; i < length; i++) { int32_t e32; memcpy(&e32, op + (i + 1) * 4, 4); }""",
    "categories re-read": """
        int64_t s = offset_at(cats->offsets.ptr, bits, swap, cats->offset + code);""",
    "join": """
        const char *op = cs[i].offsets->ptr;""",
    "codes pointer": """
        const char *codes = c->data.ptr + c->offset * sz;""",
    "indexed offsets": "int64_t e = offsets[i + 1];",
    "indexed codes": "int64_t k = codes[i];",
    "cast read": "int64_t v = ((const int64_t *)p)[i];",
    "cast deref": "int32_t v = *(const int32_t *)(op + 4 * i);",
    "view fields": """
        memcpy(&idx, v + 8, 4);
        memcpy(&off, v + 12, 4);""",
}


def test_the_checker_flags_what_the_reader_replaced():
    for name, snippet in REPLACED.items():
        assert violations(snippet), name


def test_the_checker_lets_core_calls_and_own_arrays_pass():
    ok = """
        if (dfb_offsets_init(&ro, cs[i].offsets->ptr, size, w, 0, 0, n, lim, &err)) {}
        return a->offsets.ptr == b->offsets.ptr;
        static const int64_t zero_offsets[1] = {0};
        ((int32_t *)out)[j] = (int32_t)v;
        /* offsets[i] in a comment */ PyErr_SetString(e, "offsets[i]");
    """
    assert violations(ok) == []
