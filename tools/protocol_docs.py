#!/usr/bin/env python3
"""Write (or check) the lists of Buffer.from_object's protocol order in the docs.

Usage: PYTHONPATH=build/dev/stage tools/protocol_docs.py [--check]

The order is written once, in the extension's protocol registry
(src/_interchange/exchange/protocols.c, read here through
``dfbuffer._interchange._protocols()``).  docs/design.md, docs/api.md and
docs/requirements.md hold generated copies between ``<!-- protocol registry -->`` and
``<!-- /protocol registry -->`` markers; this rewrites them, or with --check exits 1 naming the
files whose copy differs (tests/exchange/test_protocol_registry.py runs the check).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence

Row = tuple[str, int, str, str]
BEGIN, END = "<!-- protocol registry -->", "<!-- /protocol registry -->"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _code(name: str) -> str:
    """A registry name with its Python names in backquotes."""
    return re.sub(r"(__\w+__|\bptr\b|\bbufsize\b|numpy\.ndarray|dfbuffer\.Buffer)", r"`\1`", name)


def design(rows: Sequence[Row]) -> str:
    """The table of docs/design.md ("Imports")."""
    out = ["| # | protocol | importer | what the Buffer is over |", "|---|---|---|---|"]
    out += [f"| {p} | {_code(n)} | `{imp}` | {y} |" for n, p, imp, y in rows]
    return "\n".join(out)


def api(rows: Sequence[Row]) -> str:
    """The numbered list of docs/api.md (``Buffer.from_object``)."""
    out = [f"{p}. {_code(n)}: {y};" for n, p, _, y in rows]
    out.append(f"{len(rows) + 1}. anything else: TypeError.")
    return "\n".join(out)


def requirements(rows: Sequence[Row]) -> str:
    """The one-line order of docs/requirements.md (L-33)."""
    return "; ".join(_code(n) for n, _, _, _ in rows)


DOCS: dict[str, Callable[[Sequence[Row]], str]] = {
    "docs/design.md": design,
    "docs/api.md": api,
    "docs/requirements.md": requirements,
}


def rewrite(text: str, block: str, inline: bool) -> str:
    """`text` with the one generated block replaced by `block`; ValueError without markers."""
    sep = "" if inline else "\n"
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"expected one {BEGIN} ... {END} block")
    return pattern.sub(lambda _: BEGIN + sep + block + sep + END, text)


def stale(rows: Sequence[Row], write: bool) -> list[str]:
    """The doc files whose generated block differs from `rows` (rewritten when `write`)."""
    out = []
    for rel, render in DOCS.items():
        path = os.path.join(ROOT, rel)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = rewrite(text, render(rows), inline=render is requirements)
        if new != text:
            out.append(rel)
            if write:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
    return out


def main(argv: list[str]) -> int:
    from dfbuffer import _interchange

    check = argv[1:] == ["--check"]
    if argv[1:] not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    files = stale(_interchange._protocols(), write=not check)
    for rel in files:
        print(f"{rel}: {'differs from' if check else 'rewritten from'} the protocol registry")
    return 1 if check and files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
