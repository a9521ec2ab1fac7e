"""A pandas Period column: pandas.Period objects by default, its int64 ordinals only
when asked for (period="ordinal"), the frequency in schema(); never bare ordinals
unasked, whatever the frame's index or the path (frame, pandas' interchange object,
a Series)."""

import gc
import sys
import warnings
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer
import dfbuffer.pandas

INDEXES = {
    "range": lambda n: pd.RangeIndex(n),
    "index": lambda n: pd.Index(np.arange(n) * 2),
    "datetime": lambda n: pd.date_range("2021", periods=n),
    "multi": lambda n: pd.MultiIndex.from_arrays([np.arange(n), np.arange(n) % 2]),
}


def _frame(index: str) -> pd.DataFrame:
    return pd.DataFrame({
        "m": pd.period_range("2020-01", periods=3, freq="M"),
        "d": pd.PeriodIndex(["2020-01-01", None, "2020-01-03"], freq="D"),
        "x": [1.0, 2.0, 3.0],
    }, index=INDEXES[index](3))


def _ix(df):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return df.__dataframe__()


def test_interchange_object_forbidding_copies_forbids_them_per_column():
    # pandas' interchange object made with allow_copy=False: the ordinals view is
    # taken, a fill (a copy) and Period objects (made anew) are refused
    df = _frame("range")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        strict = df.__dataframe__(allow_copy=False)
    out = dfbuffer.from_dataframe(strict, period="ordinal")
    assert np.shares_memory(out["m"], df["m"].array.asi8)
    assert out["d"].mask.tolist() == [False, True, False]
    with pytest.raises(dfbuffer.CopyError, match="column 'd': .*fill mode needs a copy"):
        dfbuffer.from_dataframe(strict, period="ordinal", nulls="fill")
    with pytest.raises(dfbuffer.CopyError, match="column 'm': converting a pandas period"):
        dfbuffer.from_dataframe(strict)


@pytest.mark.parametrize("index", list(INDEXES))
def test_period_objects_by_default_on_every_path(index):
    df = _frame(index)
    want_m = list(df["m"])
    for src in (df, _ix(df)):
        out = dfbuffer.from_dataframe(src)
        assert out["m"].dtype == object and list(out["m"]) == want_m
        assert isinstance(out["d"], np.ma.MaskedArray)
        assert out["d"].mask.tolist() == [False, True, False]
        assert out["d"][0] == pd.Period("2020-01-01", "D")
    # a Series as well (pandas' Arrow export would give bare ordinals)
    got = dfbuffer.column_to_ndarray(df["m"])
    assert got.dtype == object and list(got) == want_m
    assert list(dfbuffer.column_to_ndarray(_ix(df).get_column_by_name("m"))) == want_m


@pytest.mark.parametrize("index", list(INDEXES))
def test_ordinals_when_asked_for(index):
    df = _frame(index)
    ordinals = np.asarray(df["m"].array.asi8)
    for src in (df, _ix(df)):
        out = dfbuffer.from_dataframe(src, period="ordinal")
        m = out["m"]
        assert type(m) is np.ndarray and m.dtype == np.int64
        np.testing.assert_array_equal(m, ordinals)
        assert not m.flags.writeable
        assert np.shares_memory(m, ordinals)  # pandas' own array, zero-copy
        d = out["d"]  # NaT is a null
        assert isinstance(d, np.ma.MaskedArray) and d.mask.tolist() == [False, True, False]
        assert d[0] == pd.Period("2020-01-01", "D").ordinal
    col = dfbuffer.column_to_ndarray(df["m"], period="ordinal")
    np.testing.assert_array_equal(col, ordinals)
    filled = dfbuffer.from_dataframe(df, period="ordinal", nulls="fill")["d"]
    assert filled.dtype == np.float64 and np.isnan(filled[1])
    with pytest.raises(ValueError, match="column 'd'"):
        dfbuffer.from_dataframe(df, period="ordinal", nulls="raise")
    # the ordinals are pandas' own array: no copy needed
    assert dfbuffer.from_dataframe(df[["m"]], period="ordinal", copy=False)["m"].size == 3
    with pytest.raises(RuntimeError, match="column 'm'"):
        dfbuffer.from_dataframe(df[["m"]], copy=False)


def test_period_option_is_checked():
    df = _frame("range")
    for fn in (dfbuffer.from_dataframe, dfbuffer.to_matrix):
        with pytest.raises(ValueError, match="period must be 'object' or 'ordinal'"):
            fn(df, period="ordinals")
        with pytest.raises(TypeError, match="period must be a str"):
            fn(df, period=1)
    with pytest.raises(ValueError, match="period must be"):
        dfbuffer.column_to_ndarray(df["m"], period="int")


@pytest.mark.parametrize("index", list(INDEXES))
def test_schema_gives_the_frequency(index):
    df = _frame(index)
    for sch in (dfbuffer.schema(df), dfbuffer.schema(_ix(df))):
        assert sch["m"].type == "object" and sch["m"].unit == "M"
        assert sch["d"].unit == "D"
        assert "m: object[period[M]]" in repr(sch)
    if int(pd.__version__.split(".")[0]) >= 3:  # pandas 2's Series is no Arrow producer
        s = dfbuffer.schema(df["m"])
        assert s.names == ["m"] and s["m"].unit == "M"


@pytest.mark.parametrize("index", list(INDEXES))
def test_to_matrix_takes_ordinals_only_when_asked_for(index):
    df = _frame(index)
    with pytest.raises(TypeError, match="column 'm'.*period='ordinal'"):
        dfbuffer.to_matrix(df)
    m = dfbuffer.to_matrix(df, period="ordinal")
    np.testing.assert_array_equal(m[:, 0], df["m"].array.asi8)
    assert np.isnan(m[1, 1]) and m[0, 1] == pd.Period("2020-01-01", "D").ordinal
    np.testing.assert_array_equal(m[:, 2], [1.0, 2.0, 3.0])
    # skip: the Period columns are left out unless their ordinals are asked for
    assert dfbuffer.to_matrix(df, on_unsupported="skip").shape == (3, 1)
    assert dfbuffer.to_matrix(df, on_unsupported="skip", period="ordinal").shape == (3, 3)
    np.testing.assert_array_equal(dfbuffer.to_matrix(df, columns=["m"], period="ordinal",
                                                     dtype=np.int64)[:, 0],
                                  df["m"].array.asi8)
    # the caller's frame is left as it was
    assert isinstance(df.dtypes["m"], pd.PeriodDtype)


def test_pandas_front_end_keeps_the_period_dtype():
    df = _frame("datetime")
    back = dfbuffer.pandas.from_dataframe(df)
    assert back["m"].dtype == df["m"].dtype and back["m"].tolist() == df["m"].tolist()
    # through pandas' Arrow export and dfbuffer's own producers as well
    plain = _frame("range")
    for src in (*_arrow_paths(plain).values(), _ix(plain)):
        back = dfbuffer.pandas.from_dataframe(src)
        assert back.dtypes.tolist() == plain.dtypes.tolist()
        assert back.equals(plain)


def test_ordinals_keep_pandas_memory_alive():
    df = _frame("datetime")
    out = dfbuffer.from_dataframe(df[["m"]], period="ordinal")["m"]
    want = out.tolist()
    ref = weakref.ref(df)
    del df
    gc.collect()
    assert ref() is None
    assert out.tolist() == want


def _arrow_paths(df):
    pa = pytest.importorskip("pyarrow")
    return {"pa.table": pa.table(df), "to_arrow": dfbuffer.to_arrow(df),
            "to_interchange": dfbuffer.to_interchange(df)}


@pytest.mark.parametrize("path", ["pa.table", "to_arrow", "to_interchange"])
def test_pandas_period_arrow_type_gives_the_same_answer(path):
    # pandas' Arrow export holds a Period column as its ordinals with the frequency in
    # the pandas.period extension type: read as the frame's column is read
    df = _frame("range")
    src = _arrow_paths(df)[path]
    out = dfbuffer.from_dataframe(src)
    want = dfbuffer.from_dataframe(df)
    assert list(out["m"]) == list(want["m"])
    assert out["d"].mask.tolist() == want["d"].mask.tolist()
    assert out["d"][0] == want["d"][0]
    ordinal = dfbuffer.from_dataframe(src, period="ordinal")
    np.testing.assert_array_equal(ordinal["m"], df["m"].array.asi8)
    assert ordinal["d"].mask.tolist() == [False, True, False]
    filled = dfbuffer.from_dataframe(src, nulls="fill")["d"]
    assert filled[1] is None and filled[2] == pd.Period("2020-01-03", "D")
    sch = dfbuffer.schema(src)
    assert (sch["m"].type, sch["m"].unit) == ("object", "M")
    assert sch["m"].extension_name == "pandas.period"
    with pytest.raises(TypeError, match="column 'm'.*period='ordinal'"):
        dfbuffer.to_matrix(src)
    m = dfbuffer.to_matrix(src, period="ordinal")
    np.testing.assert_array_equal(m, dfbuffer.to_matrix(df, period="ordinal"))
    assert dfbuffer.to_matrix(src, on_unsupported="skip").shape == (3, 1)
    with pytest.raises(dfbuffer.CopyError, match="column 'm'.* copy=False forbids"):
        dfbuffer.from_dataframe(src, copy=False)


def test_pandas_period_arrow_column():
    pa = pytest.importorskip("pyarrow")
    col = pa.table(_frame("range")).column("m")
    assert list(dfbuffer.column_to_ndarray(col)) == list(_frame("range")["m"])
    assert dfbuffer.column_to_ndarray(col, period="ordinal").tolist() == [600, 601, 602]


@pytest.mark.parametrize("period", ["object", "ordinal"])
def test_results_in_a_cycle_with_their_source_are_collected(period):
    pa = pytest.importorskip("pyarrow")
    df = _frame("datetime")
    table = pa.table(df)
    refs = [weakref.ref(df)]
    cycle: list = [df, table, dfbuffer.from_dataframe(df, period=period),
                   dfbuffer.from_dataframe(table, period=period)]
    cycle.append(cycle)
    df.attrs["cycle"] = cycle  # the frame holds what holds it
    del df, table, cycle
    gc.collect()
    assert all(r() is None for r in refs)


@pytest.mark.parametrize(("column", "what"), [("p", "Period ordinals"),
                                              ("i", "Interval bounds")])
def test_pandas_extension_columns_without_pandas_name_the_column(monkeypatch, column, what):
    # pandas' Arrow types whose objects need pandas: a clear NotImplementedError naming
    # the column, the ImportError kept as its cause
    t = pa.table(pd.DataFrame({"p": pd.period_range("2020-01", periods=3, freq="M"),
                               "i": pd.interval_range(0, 3)}))
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(NotImplementedError,
                       match=f"column '{column}': pandas {what} need pandas") as e:
        dfbuffer.from_dataframe(t.select([column]))
    assert isinstance(e.value.__cause__, ImportError)
