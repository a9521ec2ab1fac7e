"""``python -m dfbuffer``: the interop report runs, exits 0, and its JSON
says what works on this installation."""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from child_processes import ChildProcess, Command

import dfbuffer


def _report(*args: str) -> ChildProcess:
    env = dict(os.environ)
    # The staged package may come from PYTHONPATH or from sys.path[0].
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(dfbuffer.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
    return ChildProcess(lambda: Command([sys.executable, "-m", "dfbuffer", *args], env=env,
                                        timeout=120))


# the report with the peers that `pip install '.[interop]'` adds (and torch, cupy) made
# unimportable, as on an installation of dfbuffer and NumPy alone: a finder ahead of the
# others fails their import, which the report counts as not installed
_HIDE = """
import importlib.abc, importlib.machinery, runpy, sys
HIDDEN = {"pandas", "pyarrow", "polars", "nanoarrow", "torch", "cupy"}
class Hidden(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return importlib.machinery.ModuleSpec(name, self)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        raise ModuleNotFoundError(f"No module named {module.__name__!r}")
sys.meta_path.insert(0, Hidden())
sys.argv = ["dfbuffer", *sys.argv[1:]]
runpy.run_module("dfbuffer", run_name="__main__")
"""


def _report_alone(*args: str) -> ChildProcess:
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(dfbuffer.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_root, env.get("PYTHONPATH", "")) if p)
    return ChildProcess(lambda: Command([sys.executable, "-c", _HIDE, *args], env=env,
                                        timeout=120))


# the reports run as child processes (tests/child_processes.py), started as the tests
# below are collected
_TEXT = _report()
_JSON = _report("--json")
_ALONE = _report_alone()
_ALONE_JSON = _report_alone("--json")
pytestmark = pytest.mark.child_process(_TEXT, _JSON, _ALONE, _ALONE_JSON)

KINDS = ["a frame's columns to NumPy", "a matrix", "an Arrow export", "an interchange view",
         "a stream in batches"]


@pytest.fixture(scope="module")
def report() -> dict:
    proc = _JSON.result()
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_text_report_exits_zero_and_names_everything():
    proc = _TEXT.result()
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith(f"dfbuffer {dfbuffer.__version__}")
    assert "DLPack 1." in out
    # the library line names every library probed, installed or not
    libraries = next(line for line in out.splitlines() if line.startswith("libraries: "))
    for word in ("numpy", "pandas", "pyarrow", "polars", "nanoarrow", "torch", "cupy"):
        assert word in libraries
    assert "zero-copy" in out and "Interchange conformance" in out
    assert "Traceback" not in out + proc.stderr


def test_json_has_versions_protocols_rows(report):
    from dfbuffer import _interchange

    assert report["dfbuffer"] == dfbuffer.__version__
    assert report["dlpack"] == (
        f"{_interchange.DLPACK_MAJOR_VERSION}.{_interchange.DLPACK_MINOR_VERSION}"
    )
    assert report["versions"]["numpy"]
    assert "buffer protocol" in report["protocols"]
    for row in report["rows"]:
        assert set(row) >= {"producer", "path", "status", "zero_copy", "detail"}
        assert row["status"] in ("ok", "n/a", "error", "not installed")


def test_absent_libraries_are_listed_not_installed(report):
    for name in ("torch", "cupy"):
        try:
            __import__(name)
        except ImportError:
            rows = [r for r in report["rows"] if r["producer"] == name]
            assert [r["status"] for r in rows] == ["not installed"]
            assert report["versions"][name] is None


def test_numpy_rows_zero_copy_where_implemented(report):
    rows = {r["path"]: r for r in report["rows"] if r["producer"] == "numpy"}
    assert {"DLPack import", "DLPack export", "buffer protocol export"} <= set(rows)
    implemented = [r for r in rows.values() if r["status"] == "ok"]
    for r in implemented:
        assert r["zero_copy"] is True, r
    # Nothing on the numpy side may error: a path either works or is n/a.
    assert not [r for r in rows.values() if r["status"] == "error"], rows
    # Once the exports landed, DLPack export must be among the working paths.
    probe = report["protocols"]["__dlpack__ (versioned)"]
    if probe == "yes":
        assert rows["DLPack export"]["status"] == "ok"
        assert rows["DLPack export"]["zero_copy"] is True


def test_conformance_rows_match_the_kit(report):
    rows = {c["producer"]: c for c in report["conformance"]}
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    # pandas 2 also fails P-19 (buffer dtypes), which pandas 3 fixed: see test_testing_kit.
    pandas_major = int(report["versions"]["pandas"].split(".")[0])
    assert rows["pandas"]["failed_ids"] == (["P-22"] if pandas_major >= 3 else ["P-19", "P-22"])
    assert rows["pyarrow"]["failed_ids"] == ["P-19", "P-28"]
    # polars has no row where it is not installed (no free-threaded wheel)
    assert rows.get("polars", {"status": "n/a"})["status"] in ("n/a", "ok")


def test_main_function_in_process(capsys):
    from dfbuffer.__main__ import main

    assert main(["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rows"]


def test_interchange_rows_zero_copy_once_converters_landed(report):
    if report["protocols"]["from_dataframe"] != "yes":
        pytest.skip("dfbuffer.from_dataframe not built yet")
    rows = {(r["producer"], r["path"]): r for r in report["rows"]}
    for producer in ("pandas", "pyarrow"):
        row = rows.get((producer, "interchange __dataframe__"))
        if row is None or report["versions"][producer] is None:
            continue
        assert row["status"] == "ok", row
        assert row["zero_copy"] is True, row


def test_torch_rows_when_installed(report):
    if report["versions"]["torch"] is None:
        pytest.skip("torch not installed")
    rows = {r["path"]: r for r in report["rows"] if r["producer"] == "torch"}
    for path in ("DLPack import", "DLPack export"):
        assert rows[path]["status"] == "ok", rows[path]
        assert rows[path]["zero_copy"] is True, rows[path]


def test_text_report_explains_the_requirement_ids():
    out = _TEXT.result().stdout.splitlines()
    legend = [line for line in out if line.startswith("legend: ")]
    assert len(legend) == 1
    assert "P-n: producer requirement n of docs/requirements.md" in legend[0]
    # every ID the conformance table names has a line with its first failure message
    start = out.index("Interchange conformance (dfbuffer.testing.check_dataframe):")
    table = out[start : out.index(legend[0])]
    named = {m for line in table for m in re.findall(r"P-[0-9]+", line)}
    if not named:
        pytest.skip("no installed producer fails a requirement")
    explained = {line.split()[0] for line in out if line.startswith("  P-")}
    assert named == explained


def test_nanoarrow_rows_zero_copy(report):
    if report["versions"]["nanoarrow"] is None:
        pytest.skip("nanoarrow not installed")
    rows = {r["path"]: r for r in report["rows"] if r["producer"] == "nanoarrow"}
    assert len(rows) == 4
    for r in rows.values():
        assert (r["status"], r["zero_copy"]) == ("ok", True), r


def test_text_report_wraps_details_whole(report):
    # each first failure message of the JSON appears whole in the text (wrapped between
    # words, never cut), and no line but the libraries line outgrows the report's width
    from dfbuffer._report import _WIDTH

    out = _TEXT.result().stdout
    flat = " ".join(out.split())
    for c in report["conformance"]:
        seen = set()
        for rid, msg in c.get("failed") or ():
            if rid not in seen:
                seen.add(rid)
                assert " ".join(f"{rid} {c['producer']}: {msg}".split()) in flat
    for line in out.splitlines()[2:]:
        assert len(line) <= _WIDTH or " " not in line.strip(), line


def test_table_and_failures_wrap_between_words():
    from dfbuffer._report import _WIDTH, _first_failures, _table

    detail = ("the data buffer's dtype must be (UINT, 8, 'C', ...), got "
              "(<DtypeKind.STRING: 21>, 8, 'u', '=') " * 4).strip()
    text = _table(["producer", "path", "detail"], [["pyarrow", "DLPack import", detail]])
    lines = text.splitlines()
    assert len(lines) > 3 and all(len(line) <= _WIDTH for line in lines)
    cells = " ".join(line[len("pyarrow  DLPack import  "):] for line in lines[2:])
    assert " ".join(cells.split()) == detail  # every word whole, in order, nothing added
    assert "..." not in text.replace("'C', ...)", "")
    failures = _first_failures([{"producer": "pyarrow", "failed": [["P-19", detail]]}])
    assert len(failures) > 1 and all(len(line) <= _WIDTH for line in failures)
    assert " ".join(" ".join(failures).split()) == f"P-19 pyarrow: {detail}"


def _demo_section(out: str) -> list[str]:
    lines = out.splitlines()
    start = lines.index("What dfbuffer does (one conversion of each kind, on data made here):")
    return lines[start : lines.index("dfbuffer protocols:")]


def test_text_shows_one_conversion_of_each_kind_first():
    """After the versions and before the capability report: the five conversions, in
    order, each with its call and its result, none failed."""
    out = _TEXT.result().stdout
    lines = out.splitlines()
    demo = _demo_section(out)
    assert lines.index(demo[0]) == 3                 # after the two header lines
    headings = [line for line in demo if line[:5].strip()[:1].isdigit()]
    assert [h.split(": ")[0].split(". ", 1)[1] for h in headings] == KINDS
    assert "FAILED" not in "\n".join(demo)
    text = " ".join(" ".join(demo).split())
    for call in ("dfbuffer.from_dataframe(df)", "dfbuffer.to_matrix(df,", "dfbuffer.to_arrow(",
                 "dfbuffer.to_interchange(", "dfbuffer.iter_matrices(reader, 3, out=out)"):
        assert call in text
    assert "(3, 2) float32, NaN where null: [[1.5, 1.0], [nan, 2.0], [3.0, 3.0]]" in text
    assert "4 batches (3, 2) (3, 2) (3, 2) (1, 2), float32" in text
    assert "the first: [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]" in text
    assert all(len(line) <= 100 for line in demo)


def test_json_demo_rows(report):
    rows = report["demo"]
    assert [r["kind"] for r in rows] == KINDS
    assert all(r["status"] == "ok" and r["result"] for r in rows), rows
    by = {r["kind"]: r for r in rows}
    if report["versions"]["pyarrow"]:
        assert by["an Arrow export"]["note"] == ""
        assert "(zero-copy)" in by["an Arrow export"]["result"][0]
        assert "source batches of 4, 4, 2 rows" in by["a stream in batches"]["input"]
    # x of the frame is a view of the producer's memory, whichever frame was at hand
    assert by["a frame's columns to NumPy"]["result"][0].endswith("float64, zero-copy)")


def test_demo_runs_with_numpy_and_dfbuffer_alone():
    """Without pandas, pyarrow, polars and nanoarrow every conversion still runs, on NumPy
    arrays and dfbuffer's own Arrow export, and says which library it did without."""
    proc = _ALONE.result()
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    libraries = proc.stdout.splitlines()[1]
    for name in ("pandas", "pyarrow", "polars", "nanoarrow"):
        assert f"{name} not installed" in libraries
    demo = " ".join(" ".join(_demo_section(proc.stdout)).split())
    assert "FAILED" not in demo
    assert "input: dict of NumPy (masked) arrays (polars, pandas, pyarrow not installed)" in demo
    assert "read back by dfbuffer.from_dataframe: x [0. 1. 2.], y [1 2 3] (zero-copy)" in demo
    assert "one source batch of 10 (pyarrow not installed)" in demo
    assert "4 batches (3, 2) (3, 2) (3, 2) (1, 2), float32" in demo
    assert "(3, 2) float32, NaN where null: [[1.5, 1.0], [nan, nan], [3.0, 3.0]]" in demo
    # the capability report follows, whole
    assert "Exchange paths" in proc.stdout and "Interchange conformance" in proc.stdout
    rows = json.loads(_ALONE_JSON.result().stdout)["demo"]
    assert [(r["kind"], r["status"]) for r in rows] == [(k, "ok") for k in KINDS]
    assert all("not installed" in r["note"] for r in rows)


def test_demo_rows_render_failures_and_wrap():
    from dfbuffer._demo import render_demo
    from dfbuffer._report import _wrap

    rows = [{"kind": "a matrix", "call": "dfbuffer.to_matrix(df)", "input": "pyarrow.Table",
             "note": "", "status": "failed",
             "result": ["TypeError: column 's' has a string type " + "word " * 30]},
            {"kind": "an Arrow export", "call": "dfbuffer.to_arrow(d)", "input": "NumPy arrays",
             "note": "pyarrow not installed", "status": "ok", "result": ["3 rows"]}]
    lines = render_demo(rows, _wrap, 60)
    assert lines[1:3] == ["  1. a matrix: dfbuffer.to_matrix(df)", "     input: pyarrow.Table"]
    assert lines[3].startswith("     -> FAILED: TypeError: column 's'")
    assert all(len(line) <= 60 for line in lines[1:]) and lines[4].startswith("        word")
    assert lines[-3:] == ["  2. an Arrow export: dfbuffer.to_arrow(d)",
                          "     input: NumPy arrays (pyarrow not installed)", "     -> 3 rows"]


def test_readme_shows_what_the_main_command_prints():
    """README.md's sample of the main command's output is what it prints (where polars
    and pyarrow, which the sample uses, are installed)."""
    import pathlib

    readme = pathlib.Path(__file__).resolve().parents[2] / "README.md"
    if not readme.is_file():
        pytest.skip("needs the source tree's README.md")
    pytest.importorskip("polars")
    pytest.importorskip("pyarrow")
    sample = readme.read_text(encoding="utf-8").split(
        "It begins (`--json` prints the same for machines):\n\n```text\n")[1].split("```")[0]
    assert sample.splitlines() == _demo_section(_TEXT.result().stdout)[:-1]
