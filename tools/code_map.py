#!/usr/bin/env python3
"""Print the file-level dependency map of dfbuffer's C code; fail on a cycle.

Usage: tools/code_map.py [BUILD_DIR]   (default build/dev, a configured and built meson dir)

For every C file that meson compiled into the extension or into core (listed by the build
dir's compile_commands.json), `nm` on its object file gives the external symbols it defines
and the ones it uses.  File A depends on file B when A uses a symbol B defines.  The map
prints, per file, its one job (the first sentence of the file's leading comment) and the
files it uses; the exit status is 1 when the graph over files has a cycle (each cycle is
printed), 2 on a usage error, else 0.  Test programs (tests/c) are left out.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys


def objects(build: str) -> dict[str, str]:
    """Source path (relative to the repository) -> its object file, for the library code."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = json.load(f)
    root = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(root)
    out: dict[str, str] = {}
    for c in commands:
        src = os.path.relpath(os.path.join(c["directory"], c["file"]), root)
        if not src.startswith("src/"):
            continue  # tests/c and anything else that is not library code
        out[src] = os.path.join(c["directory"], c["output"])
    return out


def symbols(obj: str) -> tuple[set[str], set[str]]:
    """(defined, undefined) external symbols of object file `obj`."""
    text = subprocess.run(
        ["nm", "--extern-only", obj], check=True, capture_output=True, text=True
    ).stdout
    defined: set[str] = set()
    undefined: set[str] = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in ("U", "w", "v"):
            defined.add(parts[2])
    return defined, undefined


def job(path: str) -> str:
    """The first sentence of the leading /* ... */ comment of `path`."""
    with open(path) as f:
        text = f.read(4000)
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    if not m:
        return "?"
    body = " ".join(line.strip().lstrip("*").strip() for line in m.group(1).splitlines())
    body = re.sub(r"\s+", " ", body).strip()
    body = re.sub(r"^dfbuffer( core)?:\s*", "", body)
    end = re.search(r"\.(\s|$)", body)
    return body[: end.start()] if end else body


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one file (or with a self loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    build = argv[1] if len(argv) == 2 else "build/dev"
    objs = objects(build)
    if not objs:
        print(f"{build}: no compiled sources in compile_commands.json", file=sys.stderr)
        return 2
    definer: dict[str, str] = {}
    uses: dict[str, set[str]] = {}
    for src, obj in objs.items():
        defined, undefined = symbols(obj)
        uses[src] = undefined
        for s in defined:
            definer[s] = src
    graph = {
        src: {definer[s] for s in used if s in definer and definer[s] != src}
        for src, used in uses.items()
    }
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for src in sorted(graph, key=lambda s: (not s.startswith("src/core/"), s)):
        deps = ", ".join(sorted(d.removeprefix("src/_interchange/").removeprefix("src/")
                                for d in graph[src]))
        name = src.removeprefix("src/_interchange/").removeprefix("src/")
        print(f"{name}: {job(os.path.join(root, src))}")
        print(f"    uses: {deps or '-'}")
    found = cycles(graph)
    for comp in found:
        print("cycle: " + " <-> ".join(comp), file=sys.stderr)
    if found:
        return 1
    print(f"{len(graph)} files, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
