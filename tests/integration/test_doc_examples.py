"""Every ```python block of README.md and docs/*.md runs as written; those of README.md
and docs/api.md emit no warning (as under ``python -W error``).

A file's blocks run in order in one namespace (a later block may use what an earlier one
made), in a fresh temporary working directory, with ``__name__`` set to "__doc_example__"
(so a block that is a script's text guards its side effects as a script does).  Signatures,
shell commands and fragments use other fences (```text, ```pycon, ```c, ...).

A block needing an optional library is marked by an HTML comment on the line before its
fence, which this test reads: ``<!-- doc-example: requires dask distributed -->`` skips the
rest of the file when one of the modules is missing.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HAS_SOURCE = (ROOT / "README.md").is_file() and (ROOT / "docs").is_dir()

_FENCE = re.compile(r"^```(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*doc-example:\s*requires\s+([\w. ]+?)\s*-->\s*$")


def python_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """The ```python blocks of a Markdown text: (first line number, source, the modules
    the marker before the fence requires)."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i + 1
        j = start
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        if lang == "python":
            marker = _MARKER.match(lines[i - 1]) if i > 0 else None
            needs = marker.group(1).split() if marker else []
            out.append((start + 1, "\n".join(lines[start:j]) + "\n", needs))
        i = j + 1
    return out


def test_block_parser_reads_fences_and_markers():
    text = (
        "intro\n```python\na = 1\n```\n```text\nnot(python\n```\n"
        "<!-- doc-example: requires dask distributed -->\n```python\nb = a\n```\n"
    )
    assert python_blocks(text) == [(3, "a = 1\n", []), (10, "b = a\n", ["dask", "distributed"])]


@pytest.mark.skipif(not HAS_SOURCE, reason="needs the source tree's README.md and docs/")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    # every python block compiles, including those a missing module skips below
    code = [(n, compile(src, f"{path.name}:{n}", "exec"), needs) for n, src, needs in blocks]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    for line, compiled, needs in code:
        # an optional peer the block imports itself counts as a need too (polars has no
        # free-threaded wheel)
        needs = needs + sorted(set(compiled.co_names) & OPTIONAL_PEERS)
        missing = [m for m in needs if importlib.util.find_spec(m) is None]
        if missing:
            pytest.skip(f"{path.name}:{line} needs {', '.join(missing)}")
        with warnings.catch_warnings():
            if path.name in STRICT:
                # a newcomer's first examples: no warning of any kind (-W error)
                warnings.simplefilter("error")
            else:
                # the other docs may show deprecated protocols (pandas' __dataframe__)
                warnings.simplefilter("ignore", DeprecationWarning)
            exec(compiled, namespace)  # noqa: S102


# the peers an example may import that a supported CPython can lack (no wheel for it)
OPTIONAL_PEERS = frozenset({"polars", "duckdb", "datafusion", "torch", "dask", "distributed"})

# README.md and docs/api.md run as under ``python -W error``
STRICT = frozenset({"README.md", "api.md"})


@pytest.mark.skipif(not HAS_SOURCE, reason="needs the source tree's README.md and docs/")
def test_every_public_function_has_an_example_in_api_md():
    import dfbuffer  # noqa: PLC0415

    code = "\n".join(src for _, src, _ in python_blocks((ROOT / "docs" / "api.md").read_text()))
    functions = [n for n in dfbuffer.__all__ if callable(getattr(dfbuffer, n)) and n[0].islower()]
    missing = [n for n in functions if f"dfbuffer.{n}(" not in code]
    assert not missing, f"docs/api.md has no runnable example of {missing}"
    assert "dfbuffer.pandas.from_dataframe(" in code
    assert "dfbuffer.testing.check_dataframe(" in code


@pytest.mark.skipif(not HAS_SOURCE, reason="needs the source tree's README.md and docs/")
def test_readme_opens_with_the_four_jobs():
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    calls = ("dfbuffer.from_dataframe(", "dfbuffer.to_matrix(", "dfbuffer.to_arrow(",
             "dfbuffer.iter_matrices(")
    for (_, src, _), call in zip(blocks[:4], calls, strict=True):
        assert call in src
