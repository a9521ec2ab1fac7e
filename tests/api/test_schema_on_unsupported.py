"""schema(on_unsupported=): a column that cannot be described raises an error naming
it ("raise"), or is left out with every column from_dataframe leaves out ("skip"), so
that schema, from_dataframe, to_matrix, to_arrow and to_interchange agree on the
columns they drop."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from producers import frame, mutate, primitive
from run_end_arrays import run_end_array

import dfbuffer

INDEXES = {
    "range": lambda n: pd.RangeIndex(n),
    "index": lambda n: pd.Index(np.arange(n) + 5),
    "datetime": lambda n: pd.date_range("2020", periods=n),
    "multi": lambda n: pd.MultiIndex.from_arrays([np.arange(n), np.arange(n) % 2]),
}


def _mixed_categorical_frame(index: str) -> pd.DataFrame:
    # "m": categories of str and int, which pandas' Arrow export cannot hold
    return pd.DataFrame({"x": [1.0, 2.0, 3.0], "m": pd.Categorical(["a", 1, "a"]),
                         "i": [1, 2, 3]}, index=INDEXES[index](3))


def _arrow_names(obj):
    return pa.table(obj).column_names


@pytest.mark.parametrize("index", list(INDEXES))
def test_every_function_skips_the_same_column(index):
    df = _mixed_categorical_frame(index)
    kept = ["x", "i"]
    assert list(dfbuffer.from_dataframe(df, on_unsupported="skip")) == kept
    assert dfbuffer.schema(df, on_unsupported="skip").names == kept
    assert _arrow_names(dfbuffer.to_arrow(df, on_unsupported="skip")) == kept
    assert list(dfbuffer.to_interchange(df, on_unsupported="skip").column_names()) == kept
    np.testing.assert_array_equal(dfbuffer.to_matrix(df, on_unsupported="skip"),
                                  [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    # the same through pandas' own interchange object (read as the frame behind it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ix = df.__dataframe__()
    assert dfbuffer.schema(ix, on_unsupported="skip").names == kept
    assert list(dfbuffer.from_dataframe(ix, on_unsupported="skip")) == kept


@pytest.mark.parametrize("index", list(INDEXES))
def test_raise_names_the_column_with_the_cause(index):
    df = _mixed_categorical_frame(index)
    with pytest.raises(NotImplementedError, match="column 'm': pandas' Arrow export") as info:
        dfbuffer.schema(df)
    cause = info.value.__cause__
    assert cause is not None and type(cause).__module__.startswith("pyarrow")
    with pytest.raises(NotImplementedError, match="column 'm'"):
        dfbuffer.from_dataframe(df)
    # a column not selected is not described, nor can it fail
    assert dfbuffer.schema(df, columns=["i", "x"]).names == ["i", "x"]
    assert dfbuffer.schema(df, columns=["i", "m"], on_unsupported="skip").names == ["i"]
    with pytest.raises(KeyError):
        dfbuffer.schema(df, columns=["nope"], on_unsupported="skip")


def test_on_unsupported_is_checked():
    df = pd.DataFrame({"x": [1.0]})
    with pytest.raises(ValueError, match="on_unsupported must be 'raise' or 'skip'"):
        dfbuffer.schema(df, on_unsupported="drop")
    with pytest.raises(TypeError, match="positional"):
        dfbuffer.schema(df, "object")  # type: ignore[misc]


def _refused_arrow_table():
    # a dictionary whose values are run-end encoded: described, not converted
    bad = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()),
                                         run_end_array([1, 2], pa.array([5, 6])))
    return pa.table({"a": [1, 2], "bad": bad, "l": pa.array([[1], [2]])})


def test_arrow_skip_keeps_what_from_dataframe_keeps():
    t = _refused_arrow_table()
    with pytest.raises(NotImplementedError, match="column 'bad'"):
        dfbuffer.from_dataframe(t)
    kept = list(dfbuffer.from_dataframe(t, on_unsupported="skip"))
    assert kept == ["a", "l"]
    assert dfbuffer.schema(t, on_unsupported="skip").names == kept
    assert dfbuffer.schema(t, columns=["bad", "a"], on_unsupported="skip").names == ["a"]
    # "raise" lists the column: its type is described, so it can be seen why
    sch = dfbuffer.schema(t)
    assert sch.names == ["a", "bad", "l"]
    assert sch["bad"].type == "categorical" and sch["bad"].categories.type == "run_end"
    # to_matrix takes the integer column only
    assert dfbuffer.to_matrix(t, on_unsupported="skip").tolist() == [[1], [2]]


def test_struct_leaves_skip_like_from_dataframe():
    bad = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()),
                                         run_end_array([1, 2], pa.array([5, 6])))
    s = pa.StructArray.from_arrays([pa.array([1, 2]), bad], names=["k", "r"])
    t = pa.table({"s": s, "x": [0.5, 1.5]})
    got = dfbuffer.from_dataframe(t, structs="flatten", on_unsupported="skip")
    sch = dfbuffer.schema(t, structs="flatten", on_unsupported="skip")
    assert sch.names == list(got) == ["s.k", "x"]


def test_polars_128_bit_integers_skip_everywhere():
    pl = pytest.importorskip("polars")
    if not hasattr(pl, "Int128"):
        pytest.skip("this polars has no Int128")
    df = pl.DataFrame({"i": pl.Series([2**100, None], dtype=pl.Int128), "x": [1, 2]})
    kept = list(dfbuffer.from_dataframe(df, on_unsupported="skip"))
    assert dfbuffer.schema(df, on_unsupported="skip").names == kept
    assert dfbuffer.schema(df).names == ["i", "x"]


def _refusing_frame():
    """A pure interchange DataFrame (no Arrow) whose column "r" has no dtype: its
    producer refuses to state one (NotImplementedError)."""
    refused = mutate(primitive(np.array([3, 4])),
                     dtype=NotImplementedError("this producer has no dtype for it"))
    return frame(a=primitive(np.array([1, 2])), r=refused)


def test_interchange_producer_refusal_is_named_or_skipped():
    ix = _refusing_frame()
    with pytest.raises(NotImplementedError, match="column 'r'.*no dtype for it") as info:
        dfbuffer.schema(ix)
    assert isinstance(info.value.__cause__, NotImplementedError)
    assert dfbuffer.schema(ix, on_unsupported="skip").names == ["a"]
    assert list(dfbuffer.from_dataframe(ix, on_unsupported="skip")) == ["a"]
    assert _arrow_names(dfbuffer.to_arrow(ix, on_unsupported="skip")) == ["a"]


def test_to_arrow_skip_leaves_out_a_pandas_column_arrow_cannot_hold():
    df = pd.DataFrame({"x": [1.0, 2.0], "z": np.array([1j, 2j])},
                      index=pd.date_range("2020", periods=2))
    with pytest.raises(NotImplementedError, match="column 'z'"):
        dfbuffer.to_arrow(df)
    t = pa.table(dfbuffer.to_arrow(df, on_unsupported="skip"))
    assert t.column_names == ["x"] and t.column("x").to_pylist() == [1.0, 2.0]


@pytest.mark.parametrize("index", list(INDEXES))
def test_to_matrix_columns_never_reads_an_unselected_column(index):
    # a Period and an object column, not selected: to_matrix reads only x and i
    n = 3
    df = pd.DataFrame({"x": [1.5, 2.0, 3.0], "o": ["a", 1, None],
                       "p": pd.period_range("2020-01", periods=n, freq="M"), "i": [1, 2, 3]},
                      index=INDEXES[index](n))
    np.testing.assert_array_equal(dfbuffer.to_matrix(df, columns=["x", "i"]),
                                  [[1.5, 1.0], [2.0, 2.0], [3.0, 3.0]])
    with pytest.raises(TypeError, match="column 'p'"):
        dfbuffer.to_matrix(df, columns=["x", "p"])
    assert dfbuffer.to_matrix(df, on_unsupported="skip").shape == (3, 2)


def test_a_column_get_column_refuses_is_named_or_skipped():
    # pyarrow's interchange producer raises ValueError from get_column() for a column
    # the protocol cannot describe (a list): every function names the column and keeps
    # pyarrow's error as the cause, and "skip" drops just that column
    ix = pa.table({"a": [1, 2], "l": [[1], [2]], "b": [0.5, 1.5]}).__dataframe__()
    for fn in (dfbuffer.from_dataframe, dfbuffer.schema, dfbuffer.to_matrix):
        with pytest.raises((NotImplementedError, TypeError),
                           match=r"column 'l': its producer's get_column\(\)") as info:
            fn(ix)
        cause = info.value.__cause__
        while not isinstance(cause, ValueError):  # to_matrix: TypeError from it
            cause = cause.__cause__
        assert "list<item: int64>" in str(cause)
    assert list(dfbuffer.from_dataframe(ix, on_unsupported="skip")) == ["a", "b"]
    assert dfbuffer.schema(ix, on_unsupported="skip").names == ["a", "b"]
    assert dfbuffer.to_matrix(ix, on_unsupported="skip").tolist() == [[1, 0.5], [2, 1.5]]
    assert _arrow_names(dfbuffer.to_arrow(ix, on_unsupported="skip")) == ["a", "b"]
    with pytest.raises(NotImplementedError, match="column 'l'") as info:
        dfbuffer.to_arrow(ix)
    assert isinstance(info.value.__cause__, ValueError)


class _GetColumnFails:
    """An interchange frame whose get_column() raises ``exc`` for column "bad"."""

    def __init__(self, exc):
        self._ix = pa.table({"ok": [1, 2], "bad": [3, 4]}).__dataframe__()
        self._exc = exc

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self

    def get_column(self, i):
        if i == 1:
            raise self._exc
        return self._ix.get_column(i)

    def __getattr__(self, name):
        return getattr(self._ix, name)


def test_only_a_refusal_of_the_column_is_skipped():
    # a RuntimeError or MemoryError from get_column() is not a refusal of the column's
    # type: it propagates as it is, with or without "skip"
    for exc in (RuntimeError("producer broke"), MemoryError()):
        src = _GetColumnFails(exc)
        for kw in ({}, {"on_unsupported": "skip"}):
            with pytest.raises(type(exc)):
                dfbuffer.from_dataframe(src, **kw)
    src = _GetColumnFails(TypeError("no such type"))
    assert list(dfbuffer.from_dataframe(src, on_unsupported="skip")) == ["ok"]
    with pytest.raises(NotImplementedError, match="column 'bad'") as info:
        dfbuffer.from_dataframe(src)
    assert isinstance(info.value.__cause__, TypeError)
