"""narwhals frames and Series (what scikit-learn, plotly and altair hand around) are read
as the native object they wrap: every function gives for ``nw.from_native(x)`` what it
gives for ``x``, never the wrapper's own Arrow export."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer

nw = pytest.importorskip("narwhals")
try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the polars cases skip
    pl = None


def _pandas():
    return pd.DataFrame({"f": [1.0, None, 3.0], "i": [1, 2, 3], "b": [True, False, True],
                         "c": [1 + 2j, 3j, 0j]})


def _natives():
    got = {"pandas": _pandas().drop(columns="c"),  # complex: no Arrow type
           "pyarrow": pa.table({"f": [1.0, None, 3.0], "i": [1, 2, 3]})}
    if pl is not None:
        got["polars"] = pl.DataFrame({"f": [1.0, None, 3.0], "i": [1, 2, 3]})
    return got


def _namespaces():
    import narwhals.stable.v1 as v1

    spaces = [nw, v1]
    try:
        import narwhals.stable.v2 as v2
    except ImportError:
        pass
    else:
        spaces.append(v2)
    return spaces


def _same_dict(a, b):
    assert list(a) == list(b)
    for k in a:
        assert type(a[k]) is type(b[k])
        assert a[k].dtype == b[k].dtype
        np.testing.assert_array_equal(np.ma.getdata(a[k]), np.ma.getdata(b[k]))
        assert np.array_equal(np.ma.getmaskarray(a[k]), np.ma.getmaskarray(b[k]))


@pytest.mark.parametrize("native", list(_natives()))
def test_a_narwhals_frame_reads_as_its_native_frame(native):
    obj = _natives()[native]
    for space in _namespaces():
        wrapped = space.from_native(obj)
        _same_dict(dfbuffer.from_dataframe(wrapped), dfbuffer.from_dataframe(obj))
        assert dfbuffer.schema(wrapped) == dfbuffer.schema(obj)
        assert pa.table(dfbuffer.to_arrow(wrapped)).equals(pa.table(dfbuffer.to_arrow(obj)))
        assert (dfbuffer.to_interchange(wrapped).column_names()
                == dfbuffer.to_interchange(obj).column_names())
        num = ["f", "i"]
        np.testing.assert_array_equal(dfbuffer.to_matrix(wrapped, columns=num),
                                      dfbuffer.to_matrix(obj, columns=num))


def test_a_narwhals_pandas_frame_keeps_pandas_own_reading():
    # the complex column and NaN as pandas' null: as the pandas frame reads them
    df = _pandas()
    got = dfbuffer.from_dataframe(nw.from_native(df))
    assert got["c"].dtype == np.complex128
    assert type(got["f"]) is np.ndarray and np.isnan(got["f"][1])
    assert np.shares_memory(got["f"], df["f"].to_numpy())


def test_a_narwhals_series_reads_as_its_native_series():
    df = _pandas()
    for space in _namespaces():
        s = space.from_native(df["f"], series_only=True)
        want = dfbuffer.column_to_ndarray(df["f"])
        for got in (dfbuffer.column_to_ndarray(s), dfbuffer.from_dataframe(s)["f"],
                    dfbuffer.from_dataframe({"f": s})["f"]):
            assert type(got) is type(want) and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_a_narwhals_lazy_frame_is_told_to_collect():
    if pl is None:
        pytest.skip("polars not installed")
    lazy = nw.from_native(pl.LazyFrame({"a": [1]}))
    for fn in (dfbuffer.from_dataframe, dfbuffer.to_matrix, dfbuffer.to_arrow):
        with pytest.raises(TypeError, match=r"lazy frame .*\.collect\(\)"):
            fn(lazy)


def test_the_native_frame_lives_as_long_as_the_result():
    import gc
    import weakref

    arr = np.arange(4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = pd.DataFrame({"x": arr}, copy=False)
    wrapped = nw.from_native(df)
    out = dfbuffer.from_dataframe(wrapped)["x"]
    assert np.shares_memory(out, arr)
    ref = weakref.ref(arr)
    del arr, df, wrapped
    gc.collect()
    assert ref() is not None
    del out
    gc.collect()
    assert ref() is None


def test_dfbuffer_pandas_returns_the_pandas_frame_a_narwhals_frame_wraps():
    # a pandas frame is returned as it is; narwhals over one is read as that frame,
    # and narwhals over a pandas Series as that Series' one-column frame
    import dfbuffer.pandas as dpd

    df = pd.DataFrame({"a": [1.5, 2.5], "o": [pd.Interval(0, 1), np.nan]},
                      index=pd.Index([4, 2], name="k"))
    assert dpd.from_dataframe(nw.from_native(df, eager_only=True)) is df
    got = dpd.from_dataframe(nw.from_native(df["o"], series_only=True))
    assert got.index.tolist() == [4, 2] and got["o"].dtype == df["o"].dtype
    assert got["o"].tolist()[0] == pd.Interval(0, 1) and got["o"].isna().tolist() == [
        False, True]
