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


# both reports run as child processes (tests/child_processes.py), started as the tests
# below are collected
_TEXT = _report()
_JSON = _report("--json")
pytestmark = pytest.mark.child_process(_TEXT, _JSON)


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
