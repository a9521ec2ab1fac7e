"""A pandas Series is read as its one-column frame (the frame-source table's pandas
row): every function gives for ``s`` what it gives for the column of ``s.to_frame()``,
whatever the dtype, and the column is named after the Series ("" when unnamed)."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer
import dfbuffer.pandas
from dfbuffer._interchange import _frame_source


def _columns():
    return {
        "f": pd.Series([1.0, None, 3.0]),
        "b": pd.Series([True, False, True]),
        "i": pd.array([1, None, 3], dtype="Int64"),
        "u8": pd.Series(np.array([1, 2, 3], dtype=np.uint8)),
        "c": pd.Series([1 + 2j, 3j, 0j]),
        "o": pd.Series(["a", 1, None], dtype=object),
        "p": pd.period_range("2020", periods=3, freq="D"),
        "cat": pd.Categorical(["a", "b", None]),
        "t": pd.date_range("2020", periods=3, tz="UTC"),
        "iv": pd.interval_range(0, 3),
        "sp": pd.arrays.SparseArray([1.0, 0.0, 2.0]),
    }


NAMES = list(_columns())


def _same(a, b):
    assert type(a) is type(b)
    assert a.dtype == b.dtype
    assert a.flags.writeable == b.flags.writeable
    if isinstance(a, np.ma.MaskedArray):
        assert np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
    assert list(np.asarray(a)) == list(np.asarray(b)) or np.array_equal(
        np.asarray(a), np.asarray(b), equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
def test_a_series_reads_as_its_frame_column(name):
    df = pd.DataFrame(_columns())
    s = df[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' Period / Interval notes
        want = dfbuffer.from_dataframe(df)[name]
        _same(dfbuffer.column_to_ndarray(s), want)
        got = dfbuffer.from_dataframe(s)
        assert list(got) == [name]
        _same(got[name], want)


@pytest.mark.parametrize("name", ["f", "b", "i", "u8"])
def test_every_function_names_the_series_column(name):
    s = pd.DataFrame(_columns())[name]
    assert _frame_source(s)[0] == "pandas"
    assert dfbuffer.schema(s).names == [name]
    assert pa.table(dfbuffer.to_arrow(s)).column_names == [name]
    assert dfbuffer.to_interchange(s).column_names() == [name]
    assert dfbuffer.to_matrix(s).shape == (3, 1)
    np.testing.assert_array_equal(dfbuffer.to_matrix(s)[:, 0],
                                  dfbuffer.to_matrix(s.to_frame())[:, 0])


def test_the_pandas_front_end_keeps_the_series_column():
    s = pd.Series([1, 2, 3], name="n")
    out = dfbuffer.pandas.from_dataframe(s)
    assert list(out.columns) == ["n"]
    assert out["n"].tolist() == [1, 2, 3]
    assert list(dfbuffer.pandas.from_dataframe(pd.Series([1.5]))) == [""]


def test_an_unnamed_series_is_the_column_named_empty():
    s = pd.Series([1.5, None], dtype="Float64")
    assert list(dfbuffer.from_dataframe(s)) == [""]
    assert dfbuffer.schema(s).names == [""]
    assert pa.table(dfbuffer.to_arrow(s)).column_names == [""]
    # no name to give: the message says "the column", as for a bare Arrow array
    with pytest.raises(ValueError, match=r"^the column has 1 null value"):
        dfbuffer.from_dataframe(s, nulls="raise")
    # a non-str name is keyed by its str, as a frame's label is
    assert list(dfbuffer.from_dataframe(pd.Series([1], name=7))) == ["7"]


def test_the_series_name_is_read_once():
    # the name's own lookup raising is the caller's error, not a crash or a wrong name
    class Name:
        calls = 0

        def __str__(self):
            Name.calls += 1
            return "x"

        def __hash__(self):
            return 1

    s = pd.Series([1.0], name=Name())
    assert list(dfbuffer.from_dataframe(s)) == ["x"]
    assert Name.calls == 1


def test_the_series_stays_alive_as_long_as_its_view():
    import gc
    import weakref

    arr = np.arange(5.0)
    s = pd.Series(arr, copy=False)
    out = dfbuffer.from_dataframe(s)[""]
    assert np.shares_memory(out, arr)
    ref = weakref.ref(arr)
    del arr, s
    gc.collect()
    assert ref() is not None  # the view keeps the values alive
    del out
    gc.collect()
    assert ref() is None
