"""The Python modules of src/dfbuffer form layers: no module imports, directly or through
others, a module that imports it back.  Every import of a dfbuffer module counts, at the
top of a module, inside a function (where a circle is usually hidden) or under
``if TYPE_CHECKING:``.  The Arrow-outward modules are, bottom up: ``_sources`` (the
frame-source table's Python half), ``_frame_nodes`` (each frame source's columns as Arrow
nodes), ``_schema``, ``_arrow_interchange`` (the
interchange view), ``_to_arrow`` (ArrowExport, to_arrow), the package.  The checker is
itself tested on made-up modules.

(The C extension imports no module of the package: tests/source/
test_c_imports_no_package_python.py.)"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "dfbuffer"


def package_sources(directory: Path = PACKAGE) -> dict[str, str]:
    """``{module name: source}`` of every module of the package: each ``.py`` file, and
    each ``.pyi`` stub without a ``.py`` beside it (the C extension, typing-only
    modules)."""
    out: dict[str, str] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix not in (".py", ".pyi"):
            continue
        if path.suffix == ".pyi" and path.with_suffix(".py").exists():
            continue
        name = "dfbuffer" if path.stem == "__init__" else f"dfbuffer.{path.stem}"
        out[name] = path.read_text(encoding="utf-8")
    return out


def _target(name: str, modules: set[str]) -> str | None:
    """The module of ``modules`` that importing dotted ``name`` runs: its longest
    prefix that is one (None outside the package)."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        cand = ".".join(parts[:n])
        if cand in modules:
            return cand
    return None


def imports_of(module: str, source: str, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``source`` (module ``module``) imports anywhere:
    ``import``, ``from ... import`` (absolute or relative; a name that is a submodule
    counts as that module) and ``importlib.import_module("...")`` of a literal."""
    package = module if module == "dfbuffer" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                where = ".".join(base + ([node.module] if node.module else []))
            else:
                where = node.module or ""
            names = [f"{where}.{a.name}" for a in node.names] + [where]
            # `from pkg import name`: the submodule if name is one, else pkg itself
            subs = [n for n in names[:-1] if n in modules]
            if subs and len(subs) == len(names) - 1:
                names = subs
        elif isinstance(node, ast.Call):
            fn = node.func
            fname = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if (fname == "import_module" and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                names = [node.args[0].value]
        for n in names:
            t = _target(n, modules)
            if t is not None and t != module:
                found.add(t)
    return found


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """``{module: the package modules it imports}``."""
    modules = set(sources)
    return {m: imports_of(m, src, modules) for m, src in sources.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports in ``graph`` (``[a, b, ..., a]``), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_package_modules_have_no_import_circle():
    graph = import_graph(package_sources())
    assert "dfbuffer._to_arrow" in graph and "dfbuffer._interchange" in graph
    cycle = find_cycle(graph)
    assert cycle is None, "modules that import each other: " + " -> ".join(cycle or ())


def test_the_arrow_outward_modules_are_layers():
    graph = import_graph(package_sources())
    below = {
        "dfbuffer._sources": {"dfbuffer._interchange"},
        "dfbuffer._frame_nodes": {"dfbuffer._interchange", "dfbuffer._sources"},
        "dfbuffer._arrow_interchange": {"dfbuffer._interchange", "dfbuffer._frame_nodes",
                                        "dfbuffer._schema", "dfbuffer._sources"},
    }
    for module, allowed in below.items():
        assert graph[module] <= allowed, (module, graph[module] - allowed)
    assert "dfbuffer._to_arrow" not in graph["dfbuffer._arrow_interchange"]
    for low in ("dfbuffer._frame_nodes", "dfbuffer._schema",
                "dfbuffer._arrow_interchange", "dfbuffer._to_arrow", "dfbuffer.testing"):
        assert "dfbuffer" not in graph[low], f"{low} imports the package that imports it"


def test_the_checker_finds_a_circle_hidden_in_a_function():
    sources = {
        "dfbuffer": "from dfbuffer._a import f\n",
        "dfbuffer._a": "import numpy\n\ndef f():\n    from dfbuffer import _b\n    return _b\n",
        "dfbuffer._b": "from dfbuffer._a import f as g\n",
    }
    graph = import_graph(sources)
    assert graph == {"dfbuffer": {"dfbuffer._a"}, "dfbuffer._a": {"dfbuffer._b"},
                     "dfbuffer._b": {"dfbuffer._a"}}
    assert find_cycle(graph) == ["dfbuffer._a", "dfbuffer._b", "dfbuffer._a"]


def test_the_checker_sees_every_import_form():
    modules = {"dfbuffer", "dfbuffer._a", "dfbuffer._b", "dfbuffer._c", "dfbuffer._d",
               "dfbuffer._e"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import dfbuffer._a.inner\n"
        "from . import _b\n"
        "from ._c import x\n"
        "if TYPE_CHECKING:\n"
        "    from dfbuffer._d import T\n"
        "class K:\n"
        "    def m(self):\n"
        "        import importlib\n"
        "        return importlib.import_module('dfbuffer._e')\n"
    )
    assert imports_of("dfbuffer._z", source, modules) == {
        "dfbuffer._a", "dfbuffer._b", "dfbuffer._c", "dfbuffer._d", "dfbuffer._e"}
    # a name of the package that is no submodule: the package itself
    assert imports_of("dfbuffer._z", "from dfbuffer import to_arrow\n", modules) == {
        "dfbuffer"}


def test_the_checker_passes_layers():
    graph = {"top": {"mid", "low"}, "mid": {"low"}, "low": set(), "other": {"low"}}
    assert find_cycle(graph) is None
    assert find_cycle({**graph, "low": {"top"}}) == ["low", "top", "low"]
