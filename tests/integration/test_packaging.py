"""What a release ships: the version in one place, and the wheel's tags and contents.

The wheel checks run on the wheel named by ``DFBUFFER_WHEEL`` (``.ci/run`` builds one from
the sdist and sets it) and skip otherwise, so the suite builds nothing itself.  What the
wheel must hold is read from the source tree next to this file: the public header
``include/dfbuffer/dfbuffer.h`` and ``.pxd`` files are expected exactly when the tree has
them, and once ``dfbuffer.h`` exists it and the Arrow structs' header it includes
(``arrow_c_interface.h``) are the only headers the wheel may install.
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import platform
import re
import sys
import zipfile
from collections.abc import Iterator

import pytest

import dfbuffer

SOURCE = pathlib.Path(__file__).resolve().parents[2]  # the repository or unpacked sdist
HAS_SOURCE = (SOURCE / "meson.build").is_file() and (SOURCE / "src" / "dfbuffer").is_dir()


def _meson_version() -> str:
    text = (SOURCE / "meson.build").read_text()
    m = re.search(r"project\((?:[^()]|\([^()]*\))*?version:\s*'([^']+)'", text, re.S)
    assert m, "no version: in meson.build's project()"
    return m.group(1)


def test_version_is_meson_projects():
    if not HAS_SOURCE:
        pytest.skip("no source tree next to the tests")
    assert dfbuffer.__version__ == _meson_version()


def test_version_matches_installed_metadata():
    try:
        dist = importlib.metadata.distribution("dfbuffer")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("dfbuffer is not installed (a staged development build)")
    installed = pathlib.Path(str(dist.locate_file("dfbuffer/__init__.py"))).resolve()
    if installed != pathlib.Path(dfbuffer.__file__).resolve():
        pytest.skip(f"the imported dfbuffer is not the installed one ({installed})")
    assert dfbuffer.__version__ == dist.version == importlib.metadata.version("dfbuffer")


# --- the wheel --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel() -> Iterator[zipfile.ZipFile]:
    path = os.environ.get("DFBUFFER_WHEEL")
    if not path:
        pytest.skip("set DFBUFFER_WHEEL to a built wheel to check its contents")
    with zipfile.ZipFile(path) as zf:
        yield zf


def _names(wheel: zipfile.ZipFile) -> set[str]:
    return {n for n in wheel.namelist() if not n.endswith("/")}


def _metadata(wheel: zipfile.ZipFile, member: str) -> str:
    (name,) = [n for n in wheel.namelist() if n.endswith(f".dist-info/{member}")]
    return wheel.read(name).decode()


def test_wheel_tags_are_this_interpreter_and_platform(wheel):
    fname = pathlib.Path(wheel.filename or "").name
    name, version, *_, py_tag, abi_tag, plat_tag = fname[: -len(".whl")].split("-")
    assert (name, version) == ("dfbuffer", dfbuffer.__version__)
    tags = [line.split(": ", 1)[1] for line in _metadata(wheel, "WHEEL").splitlines()
            if line.startswith("Tag: ")]
    assert tags == [f"{py_tag}-{abi_tag}-{plat_tag}"], tags
    major, minor = sys.version_info[:2]
    assert py_tag == abi_tag == f"cp{major}{minor}"  # a C extension: no abi3, no py3-none
    assert plat_tag.lower().endswith(platform.machine().lower()), plat_tag
    assert "Root-Is-Purelib: false" in _metadata(wheel, "WHEEL")


def test_wheel_metadata(wheel):
    meta = _metadata(wheel, "METADATA")
    assert f"Version: {dfbuffer.__version__}" in meta
    assert "Requires-Python: >=3.11" in meta
    assert re.search(r"^Requires-Dist: numpy>=2", meta, re.M)


def test_wheel_python_files_and_typing(wheel):
    names = _names(wheel)
    src = {p.name for p in (SOURCE / "src" / "dfbuffer").glob("*.py")} if HAS_SOURCE else set()
    for name in src | {"__init__.py", "__main__.py", "_version.py", "testing.py"}:
        assert f"dfbuffer/{name}" in names, name
    assert "dfbuffer/py.typed" in names
    assert "dfbuffer/_interchange.pyi" in names
    assert "dfbuffer/_typing.pyi" in names
    ext = [n for n in names if re.fullmatch(r"dfbuffer/_interchange\.[^/]*(\.so|\.pyd)", n)]
    assert len(ext) == 1, ext
    assert not [n for n in names if n.endswith((".in", ".c", ".o", ".pyc"))]


def test_wheel_headers_and_pxd(wheel):
    """Headers: only the public ones once dfbuffer.h exists, else only the repository's
    include/ headers (never the extension's sources' headers); .pxd files exactly as in
    the tree."""
    names = _names(wheel)
    headers = {n for n in names if n.endswith(".h")}
    if HAS_SOURCE:
        public = SOURCE / "include" / "dfbuffer" / "dfbuffer.h"
        if public.is_file():
            assert headers == {
                "dfbuffer/include/dfbuffer/dfbuffer.h",
                "dfbuffer/include/dfbuffer/arrow_c_interface.h",
            }, sorted(headers)
        else:
            tree = {f"dfbuffer/include/dfbuffer/{p.name}"
                    for p in (SOURCE / "include" / "dfbuffer").glob("*.h")}
            assert headers <= tree, sorted(headers - tree)
        pxd_tree = {p.name for p in SOURCE.rglob("*.pxd")
                    if "build" not in p.relative_to(SOURCE).parts}
        pxd_wheel = {pathlib.PurePosixPath(n).name for n in names if n.endswith(".pxd")}
        assert pxd_wheel == pxd_tree
    assert not [h for h in headers if not h.startswith("dfbuffer/include/dfbuffer/")]


def test_wheel_has_no_tests_or_build_files(wheel):
    names = _names(wheel)
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "build/", "src/"))]
    assert not [n for n in names if "/.git" in n or n.startswith(".")]


def test_meson_installs_every_file_of_the_package():
    """A module added to src/dfbuffer but not to meson.build's install_sources imports in
    the development stage (which links the whole folder) and is missing from the wheel."""
    if not HAS_SOURCE:
        pytest.skip("no source tree next to the tests")
    text = (SOURCE / "meson.build").read_text()
    listed = set(re.findall(r"'src/dfbuffer/([^'/]+)'", text))
    shipped = {
        p.name
        for p in (SOURCE / "src" / "dfbuffer").iterdir()
        if p.is_file() and p.suffix in (".py", ".pyi", ".pxd", ".typed")
    }
    assert shipped - listed == set()
