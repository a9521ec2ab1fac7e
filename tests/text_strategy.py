"""``text()``: hypothesis' ``st.text()`` with the same characters, without its startup cost.

``st.text()``'s default alphabet is ``characters(codec="utf-8")``: hypothesis builds that
codec's table by encoding every code point once per process (about 2 s) unless its cache
in ``.hypothesis/`` survived, which it never does in CI's clean clones.  UTF-8 encodes
exactly the code points outside the surrogates (category Cs), so excluding Cs draws the
same characters from hypothesis' precomputed category table.
"""

from __future__ import annotations

from hypothesis import strategies as st

_UTF8_CHARACTERS = st.characters(exclude_categories=["Cs"])


def text(*, min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    """Strings of any UTF-8-encodable characters, as ``st.text(min_size, max_size)``."""
    return st.text(_UTF8_CHARACTERS, min_size=min_size, max_size=max_size)
