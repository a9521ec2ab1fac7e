"""The public namespace: __all__, dir(), the lazily loaded dfbuffer.testing, the Schema's
pyarrow-like conventions, and a typed user script (type-checked by .ci/run)."""

import pathlib
import runpy
import warnings

import pandas as pd
import pyarrow as pa
import pytest
from child_processes import ChildProcess

import dfbuffer

HERE = pathlib.Path(__file__).resolve().parents[1]  # tests/


def test_all_names_resolve_and_dir_is_clean():
    for name in dfbuffer.__all__:
        assert getattr(dfbuffer, name) is not None, name
    assert sorted(set(dfbuffer.__all__)) == sorted(dfbuffer.__all__)
    d = dir(dfbuffer)
    assert set(dfbuffer.__all__) <= set(d)
    assert "testing" in d
    for leaked in ("os", "annotations", "TYPE_CHECKING", "_interchange", "__builtins__"):
        assert leaked not in d


def test_typing_only_names_are_absent_at_run_time():
    # the input protocols live in the stubs (src/dfbuffer/_typing.pyi) only
    assert (pathlib.Path(dfbuffer.__file__).parent / "_typing.pyi").is_file()
    for name in ("ArrowStreamExportable", "SupportsInterchange", "DataFrameLike"):
        assert not hasattr(dfbuffer, name)
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        dfbuffer.nonexistent  # noqa: B018


# a fresh interpreter (tests/child_processes.py runs it beside the in-process tests)
_LAZY_TESTING = ChildProcess.python(
    "import sys, dfbuffer\n"
    "assert 'dfbuffer.testing' not in sys.modules\n"
    "t = dfbuffer.testing\n"
    "assert t is sys.modules['dfbuffer.testing']\n"
    "assert t.check_buffer is not None and 'testing' in vars(dfbuffer)\n"
    "from dfbuffer import *\n"
    "print('ok')\n"
)


@pytest.mark.child_process(_LAZY_TESTING)
def test_testing_is_an_attribute_loaded_lazily():
    out = _LAZY_TESTING.result()
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.fixture
def sch():
    t = pa.table(
        {
            "x": pa.array([1, 2], pa.int64()),
            "t": pa.array([0, 1], pa.timestamp("ms", "UTC")),
            "c": pa.array(["a", "b"]).dictionary_encode(),
        }
    )
    return dfbuffer.schema(t)


def test_schema_iterates_and_indexes_like_pyarrow(sch):
    assert [c.name for c in sch] == ["x", "t", "c"]
    assert len(sch) == 3
    assert sch.names == ["x", "t", "c"]
    assert sch[0] is sch["x"] and sch[-1] is sch["c"] and sch[-3] is sch["x"]
    for bad in (3, -4):
        with pytest.raises(IndexError, match="out of range"):
            sch[bad]
    with pytest.raises(KeyError, match="'zz'"):
        sch["zz"]
    with pytest.raises(TypeError, match="str or int"):
        sch[1.0]


def test_schema_duplicate_name_is_a_key_error():
    s = dfbuffer.Schema(
        (dfbuffer.ColumnSchema("a", "int", "l"), dfbuffer.ColumnSchema("a", "float", "g")),
        {},
        "arrow",
    )
    assert s[1].type == "float"
    with pytest.raises(KeyError, match="ambiguous"):
        s["a"]


def test_schema_names_called_as_method_still_works(sch):
    with pytest.warns(DeprecationWarning, match="property"):
        assert sch.names() == ["x", "t", "c"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(sch.names) == ["x", "t", "c"]


def test_schema_repr_is_one_line_per_column(sch):
    r = repr(sch)
    assert r.splitlines() == [
        "dfbuffer.Schema (3 columns, from arrow)",
        "x: int64",
        "t: datetime[ms, tz=UTC]",
        "c: categorical[int32, categories=string]",
    ]
    assert max(len(line) for line in r.splitlines()) < 80


def test_schema_repr_of_pandas_interchange_columns():
    # pandas' interchange object is described as the frame behind it
    df = pd.DataFrame({"f": [1.5], "o": pd.Categorical(["a"], ordered=True)})
    lines = repr(dfbuffer.schema(df.__dataframe__())).splitlines()
    assert lines[1:3] == [
        "f: float64",
        "o: categorical[int8, ordered, categories=string]",
    ]
    assert lines == repr(dfbuffer.schema(df)).splitlines()


def test_typed_user_script_runs():
    # .ci/run checks the same file with `mypy --strict`
    pytest.importorskip("polars")  # the script reads a polars frame
    runpy.run_path(str(HERE / "typing" / "user_script.py"), run_name="__main__")


def test_reprs_name_types_not_format_codes():
    t = pa.table({"a": [1], "t": pa.array([0], pa.timestamp("us", tz="UTC"))})
    assert repr(dfbuffer.to_arrow(t)) == (
        "<dfbuffer.ArrowExport 1 rows, 1 batches; a: int64, t: datetime[us, tz=UTC]>"
    )
    assert repr(dfbuffer.to_interchange(t)) == (
        "<dfbuffer.InterchangeView 1 rows, 2 columns; a: int64, t: datetime[us, tz=UTC]>"
    )
    col = dfbuffer.schema(t)["t"]
    assert repr(col) == "ColumnSchema('t': datetime[us, tz=UTC])"
    assert "\n" not in repr(dfbuffer.schema(pd.DataFrame({"x": [1.5]}).__dataframe__())["x"])


def test_to_interchange_class_is_public():
    ix = dfbuffer.to_interchange(pa.table({"x": [1]}))
    assert type(ix) is dfbuffer.InterchangeView
    assert type(dfbuffer.to_arrow(ix)) is dfbuffer.ArrowExport
    assert {"InterchangeView", "ArrowExport"} <= set(dfbuffer.__all__)
