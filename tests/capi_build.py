"""Builds the C API consumer extensions of tests/capi_consumer/ against the installed (or
staged) dfbuffer: ``dfbuffer.get_include()`` is the only include path, the compiler is the
one setuptools finds (the one Python was built with), run in a child Python.  Used by
tests/api/test_capi.py (whose builds start as its tests are collected, so they compile while
other tests run) and benchmarks/bench_capi.py."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent / "capi_consumer"
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]


def _plain_env() -> dict:
    """The compiler runs without the sanitizer runtime the ASan suite preloads."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def _spec(name: str, source, out_dir: Path, macros=(), *, cpp=False, cython=False,
          opt="-O1") -> dict:
    import dfbuffer

    return {
        "name": name,
        "sources": [source] if isinstance(source, str) else list(source),
        "out_dir": str(out_dir),
        "macros": [list(m) for m in macros],
        "cpp": cpp,
        "cython": cython,
        "opt": opt,
        "include": dfbuffer.get_include(),
        "pkg_parent": str(Path(dfbuffer.__file__).resolve().parent.parent),
    }


def consumers(builds: dict, out_dir: Callable[[], Path]):
    """Declare the compilation of several consumers as one child process
    (tests/child_processes.py): one child Python (setuptools, and Cython, never enter the
    test process) builds them one after the other.  ``builds`` maps a key to
    ``(name, source, macros, options)``: module ``name`` from ``capi_consumer/<source>``
    (one file name, or a list) with extra (name, value) defines ``macros`` (the ABI/version
    tests) and ``options`` (cpp, cython, opt) into ``out_dir()/<key>`` (called when the
    child process starts).  Returns the ``ChildProcess`` and key -> ``Pending``, whose
    ``load()`` imports it (building there and then if the child process was not started)."""
    from child_processes import ChildProcess, Command

    def command() -> Command:
        specs = [_spec(name, source, out_dir() / key, macros, **opts)
                 for key, (name, source, macros, opts) in builds.items()]
        argv = [sys.executable, str(Path(__file__).resolve()), json.dumps(specs)]
        return Command(argv, env=_plain_env(), timeout=600)

    job = ChildProcess(command)
    return job, {key: Pending(name, job) for key, (name, *_) in builds.items()}


class Pending:
    """A submitted build: ``load()`` waits for it and imports the extension."""

    def __init__(self, name: str, job) -> None:
        self.name, self.job, self._mod = name, job, None

    def load(self):
        if self._mod is None:
            proc = self.job.result()
            made = {}
            for line in proc.stdout.splitlines():
                if line.startswith("{"):
                    r = json.loads(line)
                    made[r["name"]] = r
            r = made.get(self.name)
            if r is None or r.get("error"):
                why = r["error"] if r else f"exit status {proc.returncode}"
                raise RuntimeError(f"building {self.name} failed: {why}\n{proc.stderr}")
            spec = importlib.util.spec_from_file_location(self.name, r["path"])
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            sys.modules[self.name] = mod
            self._mod = mod
        return self._mod


def build(name: str, source, out_dir: Path, macros=(), *, cpp=False, cython=False, opt="-O1"):
    """Compile ``capi_consumer/<source>`` into module ``name`` in ``out_dir`` (in a child
    Python, see ``consumers``) and import it now.  ``opt``: the optimisation flag (the tests
    compile fast, the benchmark passes -O2)."""
    opts = {"cpp": cpp, "cython": cython, "opt": opt}
    _, pending = consumers({"": (name, source, macros, opts)}, lambda: Path(out_dir))
    return pending[""].load()


def _compile(spec: dict) -> str:
    """In the child: build the extension with setuptools, return the file it made."""
    from setuptools import Distribution, Extension

    name, out_dir = spec["name"], Path(spec["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    macros = [tuple(m) for m in spec["macros"]]
    args = [spec["opt"]] if spec["cython"] else [spec["opt"], *WARNINGS]
    if spec["cpp"]:
        args.append("-std=c++17")
    ext = Extension(
        name,
        [str(HERE / s) for s in spec["sources"]],
        include_dirs=[spec["include"]],
        define_macros=[("CONSUMER_NAME", name), *macros],
        extra_compile_args=args,
        language="c++" if spec["cpp"] else "c",
    )
    exts = [ext]
    if spec["cython"]:
        from Cython.Build import cythonize

        ext.define_macros = list(macros)
        exts = cythonize(
            exts,
            build_dir=str(out_dir / "cython"),
            include_path=[spec["pkg_parent"]],
            quiet=True,
            compiler_directives={"language_level": 3},
        )
    dist = Distribution({"name": name, "ext_modules": exts})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = str(out_dir)
    cmd.build_temp = str(out_dir / "tmp")
    cmd.ensure_finalized()
    with contextlib.redirect_stdout(sys.stderr):
        cmd.run()
    (path,) = cmd.get_outputs()
    return path


if __name__ == "__main__":
    for spec in json.loads(sys.argv[1]):
        try:
            print(json.dumps({"name": spec["name"], "path": _compile(spec)}), flush=True)
        except BaseException as e:  # noqa: B036 - reported for this build, the next one runs
            print(json.dumps({"name": spec["name"], "error": repr(e)}), flush=True)
