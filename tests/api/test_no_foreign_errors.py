"""No raw error of another library reaches the caller: where a peer (pandas' Arrow
export through pyarrow, polars) refuses an input, every public function raises
dfbuffer's own error (NotImplementedError for a type it cannot read, TypeError or
ValueError as docs/api.md says) naming the column, the peer's error as ``__cause__``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer

try:
    import dfbuffer.pandas as dpd
except ImportError:  # the front end needs a pandas it supports
    dpd = None

_PEERS = ("pyarrow", "polars", "pandas", "nanoarrow", "duckdb", "narwhals")

# inputs that make a peer raise: pyarrow refuses complex numbers and objects of mixed
# types when pandas exports them
INPUTS = {
    "complex frame": lambda: pd.DataFrame({"x": [1.0, 2.0], "c": [1j, 2j]}),
    "mixed object frame": lambda: pd.DataFrame({"x": [1.0, 2.0], "c": [1, "a"]}),
    "objects of dicts and ints": lambda: pd.DataFrame({"c": [{"a": 1}, 2]}),
    "mixed categorical frame": lambda: pd.DataFrame({"c": pd.Categorical(["a", 1])}),
    "complex Series": lambda: pd.Series([1j, 2j], name="c"),
    "mixed object Series": lambda: pd.Series([1, "a"], name="c"),
    "interchange object of a complex frame": lambda: pd.DataFrame({"c": [1j]}).__dataframe__(),
    "interchange object of a mixed frame": lambda: pd.DataFrame({"c": [1, "a"]}).__dataframe__(),
    "mapping of a mixed pandas array": lambda: {"c": pd.array([1, "a"], dtype=object)},
}

FUNCTIONS = {
    "from_dataframe": dfbuffer.from_dataframe,
    "column_to_ndarray": dfbuffer.column_to_ndarray,
    "to_matrix": dfbuffer.to_matrix,
    "to_arrow": lambda obj: pa.table(dfbuffer.to_arrow(obj)),
    "to_interchange": lambda obj: pd.api.interchange.from_dataframe(
        dfbuffer.to_interchange(obj)),
    "schema": dfbuffer.schema,
    "dfbuffer.pandas.from_dataframe": dpd.from_dataframe if dpd is not None else None,
}


def _package(exc):
    return type(exc).__module__.split(".")[0]


@pytest.mark.parametrize("func", list(FUNCTIONS))
@pytest.mark.parametrize("name", list(INPUTS))
def test_no_error_of_another_library_escapes(func, name):
    fn = FUNCTIONS[func]
    if fn is None:
        pytest.skip("dfbuffer.pandas needs a pandas it supports")
    try:
        fn(INPUTS[name]())
    except Exception as e:  # noqa: BLE001 - the type is what is checked
        assert _package(e) not in _PEERS, f"{func}({name}) let {type(e)!r} escape: {e}"
        cause = e.__cause__
        if cause is not None and _package(cause) in _PEERS:
            # the peer's error is kept as the cause of dfbuffer's, named
            assert isinstance(e, NotImplementedError | TypeError | ValueError)


@pytest.mark.skipif(dpd is None, reason="dfbuffer.pandas needs a pandas it supports")
@pytest.mark.parametrize("make", [lambda: pd.DataFrame({"c": [1, "a"]}).__dataframe__()],
                         ids=["mixed interchange object"])
def test_the_pandas_front_end_names_the_column_with_the_cause(make):
    with pytest.raises(NotImplementedError, match="column 'c': pandas' Arrow export failed") as ei:
        dpd.from_dataframe(make())
    assert _package(ei.value.__cause__) == "pyarrow"


@pytest.mark.skipif(dpd is None, reason="dfbuffer.pandas needs a pandas it supports")
@pytest.mark.parametrize("values", [[1j, 2j], [1, "a"], [pd.Interval(0, 1), np.nan]],
                         ids=["complex", "mixed objects", "Intervals and NaN"])
def test_the_pandas_front_end_reads_a_series_pyarrow_refuses(values):
    # a Series is its one-column frame, read as a mapping's Series value is: no
    # detour through pandas' Arrow export, which refuses these columns
    ser = pd.Series(values, name="c", index=[5, 7])
    got = dpd.from_dataframe(ser)
    assert got.index.tolist() == [5, 7] and list(got.columns) == ["c"]
    assert got["c"].dtype == ser.dtype
    assert got["c"].isna().tolist() == ser.isna().tolist()
    assert [v for v, m in zip(got["c"], ser.isna(), strict=True) if not m] == [
        v for v, m in zip(ser, ser.isna(), strict=True) if not m]
    same = dpd.from_dataframe({"c": ser})["c"]
    assert same.dtype == got["c"].dtype


def test_an_arrow_export_refused_by_pyarrow_is_dfbuffers_error():
    # column_to_ndarray of a frame reads its Arrow export: pyarrow's refusal, wrapped
    with pytest.raises(NotImplementedError, match="pandas' Arrow export failed") as ei:
        dfbuffer.column_to_ndarray(pd.DataFrame({"c": [1, "a"]}))
    assert _package(ei.value.__cause__) == "pyarrow"


@pytest.mark.parametrize("func", ["to_arrow", "to_interchange"])
def test_a_mapping_value_refused_by_pyarrow_is_named_by_its_key(func):
    with pytest.raises(NotImplementedError, match="^column 'c': pandas' Arrow export") as ei:
        getattr(dfbuffer, func)({"c": pd.array([1, "a"], dtype=object)})
    assert _package(ei.value.__cause__) == "pyarrow"


def test_schema_describes_a_mapping_object_value_as_the_frame_column():
    # schema() reads what from_dataframe reads: an object column, as for the frame
    value = pd.array([1, "a"], dtype=object)
    got = dfbuffer.schema({"c": value, "x": np.arange(2.0)})
    want = dfbuffer.schema(pd.DataFrame({"c": value, "x": np.arange(2.0)}))
    assert [(c.name, c.type) for c in got] == [(c.name, c.type) for c in want] == [
        ("c", "object"), ("x", "float")]
    with pytest.raises(ValueError, match="column 'c': schema.. takes columns of one length"):
        dfbuffer.schema({"x": np.arange(3.0), "c": value})


def test_to_matrix_refuses_a_mapping_object_value_as_a_frame_column():
    # to_matrix reads a mapping's values in C, as the frame's columns: its own refusal
    value = pd.array([1, "a"], dtype=object)
    for obj in ({"c": value}, pd.DataFrame({"c": value})):
        with pytest.raises(TypeError, match="^column 'c' has an object type"):
            dfbuffer.to_matrix(obj)


def test_to_arrow_names_the_column_with_the_cause():
    df = pd.DataFrame({"x": np.arange(2.0), "c": [1, "a"]})
    with pytest.raises(NotImplementedError, match="column 'c': pandas' Arrow export") as ei:
        dfbuffer.to_arrow(df)
    assert _package(ei.value.__cause__) == "pyarrow"
