"""Builds the C API consumer extensions of tests/capi_consumer/ against the installed (or
staged) dfbuffer: ``dfbuffer.get_include()`` is the only include path, the compiler is the
one setuptools finds (the one Python was built with).  Used by tests/test_capi.py and
benchmarks/bench_capi.py."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from pathlib import Path

import dfbuffer

HERE = Path(__file__).resolve().parent / "capi_consumer"
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]


@contextlib.contextmanager
def _plain_env():
    """The compiler runs without the sanitizer runtime the ASan suite preloads."""
    saved = os.environ.pop("LD_PRELOAD", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["LD_PRELOAD"] = saved


def build(name: str, source, out_dir: Path, macros=(), *, cpp=False, cython=False, opt="-O1"):
    """Compile ``capi_consumer/<source>`` (one file name, or a list) into module ``name``
    in ``out_dir`` and import it.  ``macros``: extra (name, value) defines (the ABI/version
    tests); ``opt``: the optimisation flag (the tests compile fast, the benchmark passes
    -O2)."""
    from setuptools import Distribution, Extension

    out_dir.mkdir(parents=True, exist_ok=True)
    sources = [source] if isinstance(source, str) else list(source)
    args = [opt] if cython else [opt, *WARNINGS]
    if cpp:
        args.append("-std=c++17")
    ext = Extension(
        name,
        [str(HERE / s) for s in sources],
        include_dirs=[dfbuffer.get_include()],
        define_macros=[("CONSUMER_NAME", name), *macros],
        extra_compile_args=args,
        language="c++" if cpp else "c",
    )
    exts = [ext]
    if cython:
        from Cython.Build import cythonize

        ext.define_macros = list(macros)
        exts = cythonize(
            exts,
            build_dir=str(out_dir / "cython"),
            include_path=[str(Path(dfbuffer.__file__).resolve().parent.parent)],
            quiet=True,
            compiler_directives={"language_level": 3},
        )
    dist = Distribution({"name": name, "ext_modules": exts})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = str(out_dir)
    cmd.build_temp = str(out_dir / "tmp")
    cmd.ensure_finalized()
    with _plain_env():
        cmd.run()
    (path,) = (Path(p) for p in cmd.get_outputs())
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules[name] = mod
    return mod
