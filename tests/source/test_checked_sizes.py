"""Checked sizes (docs/design.md, "Checked sizes"): in the converters of
src/_interchange, a product of a length and a size is made by core's checked helpers
(src/core/checked.h, src/_interchange/base/sizes.h), never by a raw `*` that a valid but huge
producer length (a run-end array of 2**61 rows) overflows into a heap overflow.  A product
proven in range by an earlier check carries a comment naming the bound (`bounded`) on its line
or the two before.  The checker is itself tested on the code it replaced."""

from __future__ import annotations

import re
from pathlib import Path

from test_reader_sources import strip_comments_and_strings

ROOT = Path(__file__).resolve().parents[2]
# the kernels that size their results from a producer's lengths, wherever they live
KERNEL_NAMES = re.compile(
    r"^(?:convert\w*|arrow_\w+|nested_\w+|categorical|strings|stringdtype|column_readers"
    r"|ixview\w*|ixwalk)\.c$"
)
KERNELS = sorted(
    p for p in (ROOT / "src" / "_interchange").rglob("*.c") if KERNEL_NAMES.match(p.name)
)

_MEMBER = r"(?:\w+(?:->|\.))*"
_LEN = (
    rf"{_MEMBER}(?:n|length|len|nrows|total|count|end|nelem|nitems|items"
    r"|\w+_length|\w+_len|length_\w+)\b"
)
_SIZE = (
    rf"{_MEMBER}(?:isz|itemsize|elsize|width|w|bytes|sz|head|\w+_isz|\w+_itemsize)\b"
    r"|\d+\b|sizeof\s*\([^)]*\)"
)
_CAST = r"(?:\(\s*\w+\s*\)\s*)?"
PRODUCT = re.compile(
    rf"(?<![\w>.])\(?{_CAST}(?:{_LEN})\)?\s*\*\s*\(?{_CAST}(?:{_SIZE})"
    rf"|(?<![\w>.])\(?{_CAST}(?:{_SIZE})\)?\s*\*\s*\(?{_CAST}(?:{_LEN})"
)
BOUNDED = re.compile(r"/\*[^*]*\bbounded\b")


def violations(text: str) -> list[str]:
    """The lines of C ``text`` with a raw product of a length and a size and no
    `bounded` comment on them or the line before."""
    raw = text.split("\n")
    code = strip_comments_and_strings(text).split("\n")
    found = []
    for i, line in enumerate(code):
        if PRODUCT.search(line) and not any(
            BOUNDED.search(raw[k]) for k in (i - 2, i - 1, i) if k >= 0
        ):
            found.append(line.strip())
    return found


def test_no_kernel_multiplies_a_length_by_a_size_unchecked():
    assert len(KERNELS) > 20
    bad = {f.name: v for f in KERNELS if (v := violations(f.read_text()))}
    hint = "use dfb_checked_mul (src/core/checked.h) or dfb_alloc_bytes (sizes.h)"
    assert not bad, f"{hint}: {bad}"


# what the helpers replaced: each must be flagged, or the test proves nothing
REPLACED = {
    "run-end output": "PyArrayObject *out = zeroed(n * isz, refs);",
    "run-end codes": "col->data.size = 8 * nd->length;",
    "cast size": "dfb_buffer_new(st, p, (Py_ssize_t)(nd.length * itemsize), o);",
    "members": "int64_t b = c->length * lay.width;",
    "sizeof": "PyMem_Malloc((size_t)n * sizeof(PyObject *));",
}


def test_the_checker_flags_what_the_helpers_replaced():
    for name, snippet in REPLACED.items():
        assert violations(snippet), name


def test_the_checker_passes_helpers_indices_and_marked_bounds():
    ok = """
        if (dfb_alloc_bytes(name, n, isz, &nbytes) < 0) { return -1; }
        memcpy(d + 8 * i, &x, 8);
        const char *val = f->src + v * f->isz; /* bounded: v < vlen */
        /* bounded: total < INT64_MAX / 16 (checked per chunk) */
        PyObject *arr = dfb_ixv_new_bytes(total * w, &d);
        /* n * isz in a comment */ PyErr_SetString(e, "n * isz");
    """
    assert violations(ok) == []
