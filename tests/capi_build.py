"""Builds the C API consumer extensions of tests/capi_consumer/ against the installed (or
staged) dfbuffer: ``dfbuffer.get_include()`` is the only include path, the compiler is the
one setuptools finds (the one Python was built with), run in a child Python.  Used by
tests/test_capi.py (which submits its builds at collection, so they compile while other
tests run) and benchmarks/bench_capi.py."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "capi_consumer"
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]


def _plain_env() -> dict:
    """The compiler runs without the sanitizer runtime the ASan suite preloads."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def start(name: str, source, out_dir: Path, macros=(), *, cpp=False, cython=False,
          opt="-O1", owner: str = __file__) -> Pending:
    """Submit the compilation of ``capi_consumer/<source>`` (one file name, or a list) into
    module ``name`` in ``out_dir`` to tests/background.py (a child Python runs setuptools,
    so neither it nor Cython lands in the test process); ``Pending.load()`` imports it.
    ``macros``: extra (name, value) defines (the ABI/version tests); ``opt``: the
    optimisation flag (the tests compile fast, the benchmark passes -O2)."""
    import background

    import dfbuffer

    spec = {
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
    argv = [sys.executable, str(Path(__file__).resolve()), json.dumps(spec)]
    return Pending(name, background.submit(argv, owner=owner, env=_plain_env(), timeout=600))


class Pending:
    """A submitted build: ``load()`` waits for it and imports the extension."""

    def __init__(self, name: str, job) -> None:
        self.name, self.job, self._mod = name, job, None

    def load(self):
        if self._mod is None:
            proc = self.job.result()
            if proc.returncode != 0:
                raise RuntimeError(f"building {self.name} failed:\n{proc.stdout}{proc.stderr}")
            path = proc.stdout.strip().splitlines()[-1]
            spec = importlib.util.spec_from_file_location(self.name, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            sys.modules[self.name] = mod
            self._mod = mod
        return self._mod


def build(name: str, source, out_dir: Path, macros=(), *, cpp=False, cython=False, opt="-O1"):
    """Compile (see ``start``) and import now."""
    return start(name, source, out_dir, macros, cpp=cpp, cython=cython, opt=opt).load()


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
    print(_compile(json.loads(sys.argv[1])))
