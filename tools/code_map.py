#!/usr/bin/env python3
"""Print the file-level dependency map of dfbuffer's C code; fail on a cycle.

Usage: tools/code_map.py [BUILD_DIR]   (default build/dev, a configured and built meson dir)

For every C file that meson compiled into the extension or into core (listed by the build
dir's compile_commands.json), `nm` on its object file gives the external symbols it defines
and the ones it uses.  File A depends on file B when A uses a symbol B defines.  The map
prints, per file, its one job (the first sentence of the file's leading comment) and the
files it uses.

It then checks the include graph of src/_interchange against LAYERS, the one table of the
extension's layers (a folder each, in dependency order): every quoted include is resolved as
the compiler does (the including file's folder, then the layer folders meson lists, then
src/core and include/), and an include that runs up a layer (a file including a header of a
later layer) is an error.  A "unit" is a .c file with the header of its own name beside it;
the graph of units, over includes and link uses together, must have no circle, and a
header declares only the definitions of its own unit, or (the one header of a folder, named
after it) of its folder's .c files.  Each layer folder's README.md names each of its files
with its job, and holds at most MAX_SOURCES .c files.

The exit status is 1 when the link graph or the unit graph has a cycle or an include runs up
a layer (each is printed), 2 on a usage error, else 0.  Test programs (tests/c) are left out.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

# The layers of src/_interchange, lowest first: a file may include headers of its own layer
# and of the layers before it, never of a later one (src/core and include/ lie below them
# all).  Each folder's README.md says what the layer holds and each file's job.
LAYERS = [
    "base",  # module state, compat, the argument parser, probes, dtypes, checked sizes
    "model",  # Buffer construction, the column model, the frame model
    "arrow",  # Arrow import, describe, device, schema, Buffer's export, nodes, extensions
    "exchange",  # one-buffer protocols both ways, and Buffer.from_object's registry
    "kernels",  # described chunks to NumPy, one file per result kind
    "nested",  # nested Arrow values (lists, structs, maps, unions) to NumPy
    "readers",  # one reader per frame source: interchange, Arrow; pandas in readers/pandas
    "ops/matrix",  # to_matrix
    "outward",  # dfbuffer's Arrow going out: to_arrow's export, to_interchange's view
    "ops",  # from_dataframe, column_to_ndarray, the stream batches
    "api",  # module init, the Buffer type, the C API, type info, test hooks
]
# Folders inside a layer's folder that belong to that layer (their files include one
# another's headers freely, as files of one folder do).
SUBFOLDERS = {"readers/pandas": "readers"}
INTERCHANGE = "src/_interchange"
MAX_SOURCES = 15  # .c files per layer folder: more, and the folder no longer reads at a glance
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: str) -> int:
    """The rank of `path` in LAYERS (-1 below them: src/core, include/); ValueError if none."""
    if not path.startswith(INTERCHANGE + "/"):
        return -1
    folder = os.path.dirname(path.removeprefix(INTERCHANGE + "/"))
    return LAYERS.index(SUBFOLDERS.get(folder, folder))


def includes(root: str) -> dict[str, set[str]]:
    """Each file of src/_interchange -> the files of this tree its quoted includes name."""
    dirs = [f"{INTERCHANGE}/{d}" for d in LAYERS + list(SUBFOLDERS)] + ["src/core", "include"]
    out: dict[str, set[str]] = {}
    for folder, _, names in os.walk(os.path.join(root, INTERCHANGE)):
        for name in names:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.relpath(os.path.join(folder, name), root)
            with open(os.path.join(root, path)) as f:
                text = f.read()
            found = set()
            for inc in INCLUDE.findall(text):
                for d in [os.path.dirname(path)] + dirs:
                    if os.path.isfile(os.path.join(root, d, inc)):
                        found.add(os.path.normpath(os.path.join(d, inc)))
                        break
            out[path] = found
    return out


def unit(path: str) -> str:
    """A header stands for the .c file of its own name beside it, when there is one."""
    return path[:-2] + ".c" if path.endswith(".h") else path


def is_folder_header(path: str) -> bool:
    """The one header of a folder, named after it (kernels/kernels.h, ops/matrix/matrix.h):
    it declares what the .c files of its folder define, whichever defines it."""
    folder = os.path.dirname(path)
    return path.endswith(".h") and os.path.basename(path) == os.path.basename(folder) + ".h"


DECLARATION = re.compile(
    r"^(?:extern\s+)?[A-Za-z_][\w\s*]*?\b(\w+)\s*(?:\([^;{}]*\)|\[[^\]]*\])\s*;", re.M)


def check_headers(root: str, definer: dict[str, str]) -> list[str]:
    """Each header of src/_interchange declares only what the .c file of its own name
    defines, a folder's one header (is_folder_header) what the .c files of its folder
    define; any other header without a .c: types, macros and inline functions only."""
    faults = []
    for folder, _, names in os.walk(os.path.join(root, INTERCHANGE)):
        for name in sorted(names):
            if not name.endswith(".h"):
                continue
            path = os.path.relpath(os.path.join(folder, name), root)
            with open(os.path.join(root, path)) as f:
                text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
            text = re.sub(r"^#.*$", "", text, flags=re.M)
            for decl in sorted(set(DECLARATION.findall(text))):
                owner = definer.get(decl)
                if owner and is_folder_header(os.path.join(root, path)):
                    if os.path.dirname(owner) != os.path.dirname(path):
                        faults.append(f"{path} declares {decl}, which {owner} defines: "
                                      "a .c file of another folder")
                elif owner and owner != unit(path):
                    faults.append(f"{path} declares {decl}, which {owner} defines")
    return faults


def check_layers(root: str, graph: dict[str, set[str]]) -> list[str]:
    """The include-graph faults: files in no layer, includes that run up, unit circles."""
    faults = []
    inc = includes(root)
    units = {unit(p) for p in inc if os.path.isfile(os.path.join(root, unit(p)))}
    for path in sorted(inc):
        try:
            mine = layer_of(path)
        except ValueError:
            faults.append(f"{path}: in no layer of tools/code_map.py's LAYERS")
            continue
        for h in sorted(inc[path]):
            if h.startswith(INTERCHANGE + "/") and layer_of(h) > mine:
                faults.append(f"{path} includes {h}, a later layer ({LAYERS[layer_of(h)]})")
    ugraph: dict[str, set[str]] = {}
    def as_unit(p: str) -> str:
        # a folder's one header is a node of its own: every file of the folder includes it
        return p if is_folder_header(p) or unit(p) not in units else unit(p)

    for path, hs in inc.items():
        u = as_unit(path)
        for h in hs:
            v = as_unit(h)
            if v != u and v.startswith(INTERCHANGE + "/"):
                ugraph.setdefault(u, set()).add(v)
        ugraph.setdefault(u, set())
    for src, deps in graph.items():
        if src.startswith(INTERCHANGE + "/"):
            ugraph.setdefault(src, set()).update(
                d for d in deps if d.startswith(INTERCHANGE + "/"))
    for v in list(ugraph):
        for w in ugraph[v]:
            ugraph.setdefault(w, set())
    for comp in cycles(ugraph):
        faults.append("include/use circle: " + " <-> ".join(comp))
    for layer in LAYERS + list(SUBFOLDERS):
        folder = os.path.join(root, INTERCHANGE, layer)
        sources = [n for n in os.listdir(folder) if n.endswith(".c")]
        if len(sources) > MAX_SOURCES:
            faults.append(f"{INTERCHANGE}/{layer}: {len(sources)} .c files, more than "
                          f"{MAX_SOURCES}: cut the layer")
        readme = os.path.join(folder, "README.md")
        text = open(readme).read() if os.path.isfile(readme) else ""
        for name in sorted(os.listdir(folder)):
            if name.endswith((".c", ".h")) and f"`{name}`" not in text:
                faults.append(f"{INTERCHANGE}/{layer}/README.md does not name {name}")
    return faults


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
    faults = check_layers(root, graph) + check_headers(root, definer)
    for fault in faults:
        print(fault, file=sys.stderr)
    if found or faults:
        return 1
    print(f"{len(graph)} files, no cycle; includes follow the {len(LAYERS)} layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
