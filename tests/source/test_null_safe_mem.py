"""Source rules for memcpy / memmove / memset / memcmp (docs/design.md, "Safety rules"): C
makes a NULL pointer undefined even for size 0, and producers hand over NULL for empty
buffers.  A call whose size is computed at run time must go through src/core/mem.h
(dfb_memcpy, dfb_memmove, dfb_memset, dfb_memcmp, which do nothing for size 0); a raw call
is allowed only with a constant size (sizeof, an integer literal)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RAW = re.compile(r"(?<![\w.])(memcpy|memmove|memset|memcmp)\s*\(")
SIZEOF = re.compile(r"\bsizeof\s*(\((?:[^()]|\([^()]*\))*\)|\s\w+)")
CAST = re.compile(r"\(\s*(size_t|int64_t|Py_ssize_t)\s*\)")
CONSTANT = re.compile(r"[\d\s()+*]+")
HELPER = ROOT / "src" / "core" / "mem.h"


def _sources() -> list[Path]:
    files = [*ROOT.glob("src/**/*.c"), *ROOT.glob("src/**/*.h"), *ROOT.glob("include/**/*.h")]
    return sorted(f for f in files if f != HELPER)


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _args(text: str, start: int) -> list[str]:
    """The top-level arguments of the call whose '(' is at text[start]."""
    depth, args, cur = 0, [], []
    for ch in text[start:]:
        if ch == "(":
            depth += 1
            if depth == 1:
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return args
        elif ch == "," and depth == 1:
            args.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    raise AssertionError("unbalanced call")


def is_constant_size(expr: str) -> bool:
    """True for sizes fixed at compile time: literals, sizeof, and products of them."""
    expr = SIZEOF.sub("1", expr)
    expr = CAST.sub("", expr)
    return CONSTANT.fullmatch(expr.strip()) is not None


def raw_calls_with_runtime_size() -> list[str]:
    bad = []
    for f in _sources():
        text = _strip_comments(f.read_text())
        for m in RAW.finditer(text):
            size = _args(text, m.end() - 1)[-1]
            if not is_constant_size(size):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{f.relative_to(ROOT)}:{line}: {m.group(1)}(..., {size.strip()})")
    return bad


def test_no_raw_call_with_a_runtime_size():
    assert raw_calls_with_runtime_size() == []


def test_the_checker_sees_what_it_forbids():
    assert is_constant_size("8")
    assert is_constant_size("sizeof(*out)")
    assert is_constant_size("sizeof o")
    assert is_constant_size("(size_t)(2 * sizeof(int64_t))")
    assert not is_constant_size("n")
    assert not is_constant_size("(size_t)len")
    assert not is_constant_size("size < sizeof(info) ? size : sizeof(info)")
    assert not is_constant_size("ndim * sizeof(Py_ssize_t)")
    text = "f(a); memcpy(dst, src, g(n, m)); memset(&x, 0, sizeof(x));"
    assert _args(text, text.index("memcpy") + 6) == ["dst", " src", " g(n, m)"]


def test_the_c_api_uses_the_helpers():
    capi = (ROOT / "src" / "_interchange" / "api" / "capi.c").read_text()
    assert '#include "mem.h"' in capi
    assert "dfb_memcpy(" in capi
