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


def _numpy_series():
    base = np.arange(12.0)
    return {
        "float64 NaN": pd.Series([1.5, np.nan, 3.0], name="x"),
        "int8": pd.Series(np.array([1, -2, 3], dtype=np.int8), name=7),
        "bool": pd.Series([True, False, True], name=None),
        "float16": pd.Series(np.array([1, 2, 3], dtype=np.float16), name="h"),
        "strided": pd.Series(base[::3], name="s", copy=False),
        "object": pd.Series(["a", None, np.nan, 2], dtype=object, name="o"),
        "complex": pd.Series([1j, np.nan, 2.0], name="c"),
        "Int64 nulls": pd.Series([1, None, 3], dtype="Int64", name="i"),
        "Int64": pd.Series([1, 2, 3], dtype="Int64", name="i"),
        "UInt8 nulls": pd.Series([None, 2, 255], dtype="UInt8", name="u"),
        "Float32 nulls": pd.Series([1.5, None, np.nan], dtype="Float32", name="f"),
        "Int16 sliced": pd.Series([1, None, 3, None, 5], dtype="Int16", name="s")[1:4],
    }


@pytest.mark.parametrize("nulls", ["mask", "fill", "raise", "always_mask"])
@pytest.mark.parametrize("kind", sorted(_numpy_series()))
def test_a_numpy_series_gives_its_frame_column_in_every_mode(kind, nulls):
    # a Series of NumPy values is read from its block without making its frame:
    # the same array, key, flags and errors as the frame's column
    s = _numpy_series()[kind]
    key = "" if s.name is None else str(s.name)
    frame = s.to_frame(name=key)

    def outcome(fn):
        try:
            return fn()
        except ValueError as e:
            return str(e)

    want = outcome(lambda: dfbuffer.from_dataframe(frame, nulls=nulls))
    got = outcome(lambda: dfbuffer.from_dataframe(s, nulls=nulls))
    one = outcome(lambda: dfbuffer.column_to_ndarray(s, nulls=nulls))
    if isinstance(want, str):
        assert got == want
        assert isinstance(one, str) and "null value" in one
        return
    assert list(got) == [key]
    _same(got[key], want[key])
    _same(one, want[key])
    copied = dfbuffer.column_to_ndarray(s, nulls=nulls, copy=True)
    assert copied.flags.writeable and not np.shares_memory(copied, s.to_numpy())
    # copy=False: the same refusal (a CopyError naming the column) or the same view
    want = outcome(lambda: dfbuffer.from_dataframe(frame, nulls=nulls, copy=False))
    got = outcome(lambda: dfbuffer.from_dataframe(s, nulls=nulls, copy=False))
    if isinstance(want, str):
        assert got == want and "copy=False forbids" in want
    else:
        _same(got[key], want[key])


def test_a_numpy_series_result_keeps_the_values_not_the_series():
    import gc
    import weakref

    values = np.arange(5.0)
    s = pd.Series(values, name="x", copy=False)
    s.attrs["me"] = s  # a reference cycle through the Series
    ref = weakref.ref(s)
    got = dfbuffer.column_to_ndarray(s)
    whole = dfbuffer.from_dataframe(s)["x"]
    assert np.shares_memory(got, values) and not got.flags.writeable
    del s
    gc.collect()
    assert ref() is None  # the results hold the values, never the Series
    del values
    gc.collect()
    assert got.tolist() == whole.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_racing_writer_on_a_numpy_series():
    # a thread renames the Series and rewrites its values in place while it is
    # read: every read has the Series' length, a key it had and values written
    import threading

    n = 4096
    values = np.zeros(n)
    s = pd.Series(values, name="a", copy=False)
    stop = threading.Event()

    def write():
        k = 0
        while not stop.is_set():
            s.name = "ab"[k % 2]
            values[:] = k % 2
            k += 1

    t = threading.Thread(target=write, daemon=True)
    t.start()
    try:
        for _ in range(300):
            got = dfbuffer.from_dataframe(s, nulls="fill")
            (key, arr), = got.items()
            # a zero-copy view: the writer's memory itself (its values may be torn
            # under the ASan runtime, whose copies move single bytes)
            assert key in ("a", "b") and arr.shape == (n,)
            assert np.shares_memory(arr, values) and not arr.flags.writeable
            assert dfbuffer.column_to_ndarray(s).shape == (n,)
    finally:
        stop.set()
        t.join()


def test_racing_writer_on_a_nullable_series():
    # a thread rewrites a nullable Int64 Series' values and mask in place while it is
    # read: the mask read is the one copy taken, the values one of those written
    import threading

    n = 4096
    s = pd.Series(np.arange(n), dtype="Int64", name="i")
    data, mask = s.array._data, s.array._mask
    stop = threading.Event()

    def write():
        k = 0
        while not stop.is_set():
            mask[::3] = bool(k % 2)
            data[:] = k % 2
            k += 1

    t = threading.Thread(target=write, daemon=True)
    t.start()
    try:
        for _ in range(300):
            for nulls in ("mask", "fill"):
                got = dfbuffer.column_to_ndarray(s, nulls=nulls)
                assert got.shape == (n,)
                # the mask is the one copy taken: only rows the writer masks
                m = np.ma.getmaskarray(got) if nulls == "mask" else np.isnan(got)
                assert not m[1::3].any() and not m[2::3].any()
                if nulls == "mask":  # the values: a view of the writer's memory
                    assert np.shares_memory(np.ma.getdata(got), data)
    finally:
        stop.set()
        t.join()
