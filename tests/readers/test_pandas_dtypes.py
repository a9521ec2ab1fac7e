"""pandas frames: every index kind, every dtype, no pyarrow needed.

The block reader serves a frame whatever its index; object and complex
columns are the arrays pandas holds; Period, Interval and Sparse columns, and
every extension column when pyarrow cannot be imported, are read from
pandas' own arrays (src/_interchange/readers/pandas/pandas_columns.c).  An error of another library
reaches the user as dfbuffer's, naming the column, with the original as
``__cause__``.
"""

from __future__ import annotations

import gc
import sys
import textwrap
import warnings
import weakref

import numpy as np
import pandas as pd
import pytest
from child_processes import ChildProcess

import dfbuffer

NAN = float("nan")


def _indexes(n: int) -> dict[str, pd.Index]:
    return {
        "range": pd.RangeIndex(n),
        "index": pd.Index(np.arange(n) * 10),
        "datetime": pd.date_range("2020-01-01", periods=n),
        "multi": pd.MultiIndex.from_arrays([np.arange(n) % 2, np.arange(n)]),
        "duplicated": pd.Index([1] * n),
        "objects": pd.Index(["a", 1, None][:n] + list(range(n - 3)), dtype=object),
    }


INDEX_KINDS = list(_indexes(3))


def _same(a, b):
    """Same type, dtype, values and mask (NaN equal to NaN)."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, dfbuffer.CategoricalCodes):
        _same(a.codes, b.codes)
        _same(a.categories, b.categories)
        assert a.ordered == b.ordered
        return
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
    m = np.ma.getmaskarray(a)
    da, db = np.ma.getdata(a)[~m], np.ma.getdata(b)[~m]
    if a.dtype.kind == "O":
        assert [type(x) for x in da] == [type(x) for x in db]
        assert [repr(x) for x in da] == [repr(y) for y in db]
    else:
        np.testing.assert_array_equal(da, db)


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "x": [1.5, NAN, 3.0],
        "b": [True, False, True],
        "i": np.array([1, 2, 3], dtype=np.int16),
        "h": np.array([1, 2, 3], dtype=np.float16),
        "c": np.array([1 + 2j, NAN, 3j], dtype=np.complex64),
        "z": np.array([1 + 2j, 2, 3j]),
        "td": pd.to_timedelta([1, None, 3], unit="s"),
        "ts": np.array(["2020-01-01", "NaT", "2020-01-03"], dtype="datetime64[ms]"),
        "o": pd.array(["a", 1, None], dtype=object),
        "I": pd.array([1, None, 3], dtype="Int64"),
        "F": pd.array([1.5, None, 3], dtype="Float32"),
        "B": pd.array([True, None, False], dtype="boolean"),
        "s": pd.array(["a", None, "c"], dtype="string[python]"),
        "cat": pd.Categorical(["a", None, "b"]),
        "tz": pd.date_range("2020", periods=3, tz="Asia/Kathmandu"),
        "per": pd.period_range("2020-01", periods=3, freq="M"),
        "iv": pd.interval_range(0, 3),
        "sp": pd.arrays.SparseArray([0.0, 1.0, 0.0]),
    })


@pytest.mark.parametrize("kind", INDEX_KINDS)
@pytest.mark.parametrize("nulls", ["mask", "fill"])
def test_every_index_gives_the_range_index_result(kind, nulls):
    base = _frame()
    df = base.set_axis(_indexes(3)[kind])
    want = dfbuffer.from_dataframe(base, nulls=nulls)
    got = dfbuffer.from_dataframe(df, nulls=nulls)
    assert list(got) == list(want) == list(base.columns)
    for name in want:
        _same(got[name], want[name])
    # zero-copy where the block is NumPy: the same memory with any index
    for name in ("x", "b", "i", "h", "c", "z", "td", "o"):
        arr = np.ma.getdata(got[name])
        assert np.shares_memory(arr, df[name].to_numpy()), name
        assert not arr.flags.writeable


@pytest.mark.parametrize("kind", INDEX_KINDS)
def test_every_index_same_matrix_schema_and_arrow(kind):
    base = pd.DataFrame({"x": [1.5, NAN, 3.0], "b": [True, False, True],
                         "I": pd.array([1, None, 3], dtype="Int64")})
    df = base.set_axis(_indexes(3)[kind])
    np.testing.assert_array_equal(dfbuffer.to_matrix(df), dfbuffer.to_matrix(base))
    assert [(c.name, c.type, c.format) for c in dfbuffer.schema(df).columns] == [
        (c.name, c.type, c.format) for c in dfbuffer.schema(base).columns]
    a, b = dfbuffer.from_dataframe(dfbuffer.to_arrow(df)), dfbuffer.from_dataframe(
        dfbuffer.to_arrow(base))
    assert list(a) == list(b) == ["x", "b", "I"]
    for name in a:
        _same(a[name], b[name])
    ix = dfbuffer.to_interchange(df)
    assert list(ix.column_names()) == ["x", "b", "I"]


def test_float_nan_stays_in_the_array_and_bools_are_not_copied():
    df = pd.DataFrame({"x": [1.5, NAN, 3.0], "b": [True, False, True]},
                      index=pd.date_range("2020", periods=3))
    out = dfbuffer.from_dataframe(df)
    assert type(out["x"]) is np.ndarray and np.isnan(out["x"][1])
    assert type(out["b"]) is np.ndarray
    assert np.shares_memory(out["b"], df["b"].to_numpy())


def test_object_column_is_the_object_array():
    df = pd.DataFrame({"o": ["a", 1, None]})
    raw = df["o"].to_numpy()
    out = dfbuffer.from_dataframe(df)["o"]
    assert isinstance(out, np.ma.MaskedArray)
    assert np.shares_memory(out.data, raw) and not out.data.flags.writeable
    assert out.mask.tolist() == [False, False, True]
    assert out.data[0] == "a" and out.data[1] == 1
    filled = dfbuffer.from_dataframe(df, nulls="fill")["o"]
    assert type(filled) is np.ndarray and filled.tolist() == ["a", 1, None]
    with pytest.raises(ValueError, match="column 'o' has 1 null value"):
        dfbuffer.from_dataframe(df, nulls="raise")
    full = pd.DataFrame({"o": [object(), 2.5, "x"]})
    got = dfbuffer.from_dataframe(full, nulls="raise")["o"]
    assert type(got) is np.ndarray and got[0] is full["o"].iloc[0]
    sch = dfbuffer.schema(df)
    assert (sch["o"].type, sch["o"].format) == ("object", "")


def test_object_column_in_the_other_functions():
    df = pd.DataFrame({"o": ["a", 1, None], "x": [1.0, 2.0, 3.0]})
    with pytest.raises(TypeError, match="column 'o' has an object type"):
        dfbuffer.to_matrix(df)
    np.testing.assert_array_equal(dfbuffer.to_matrix(df, columns=["x"]), [[1.0], [2.0], [3.0]])
    for fn in (dfbuffer.to_arrow, dfbuffer.to_interchange):
        with pytest.raises(NotImplementedError, match="column 'o'") as info:
            fn(df)
        assert info.value.__cause__ is not None
        assert type(info.value.__cause__).__module__.startswith("pyarrow")
    assert list(dfbuffer.from_dataframe(dfbuffer.to_arrow(df, columns=["x"]))) == ["x"]


def test_complex_columns():
    z = np.array([1 + 2j, NAN, 3j])
    df = pd.DataFrame({"z": z, "z64": z.astype(np.complex64)})
    out = dfbuffer.from_dataframe(df)
    for name in df:
        assert type(out[name]) is np.ndarray and out[name].dtype == df[name].dtype
        assert np.shares_memory(out[name], df[name].to_numpy())
    with pytest.raises(ValueError, match="null value"):
        dfbuffer.from_dataframe(df, nulls="raise")
    assert dfbuffer.schema(df)["z"].type == "complex" and dfbuffer.schema(df)["z"].bits == 128
    with pytest.raises(NotImplementedError, match="column 'z': Arrow has no type"):
        dfbuffer.to_arrow(df)
    with pytest.raises(TypeError, match="column 'z' has a complex type"):
        dfbuffer.to_matrix(df)


def test_period_and_interval_are_their_objects():
    df = pd.DataFrame({"per": pd.PeriodIndex(["2020-01", None, "2020-03"], freq="M"),
                       "iv": pd.arrays.IntervalArray.from_breaks([0, 1, 2, 3])})
    out = dfbuffer.from_dataframe(df)
    per = out["per"]
    assert isinstance(per, np.ma.MaskedArray) and per.mask.tolist() == [False, True, False]
    assert per.data[0] == pd.Period("2020-01", freq="M")
    assert type(out["iv"]) is np.ndarray and out["iv"][2] == pd.Interval(2, 3)
    sch = dfbuffer.schema(df)
    assert (sch["per"].type, sch["per"].unit) == ("object", "M")
    assert sch["iv"].type == "object"
    with pytest.raises(TypeError, match="column 'per' has a pandas period"):
        dfbuffer.to_matrix(df)


def test_sparse_is_read_dense():
    df = pd.DataFrame({"sp": pd.arrays.SparseArray([0.0, NAN, 2.0]),
                       "si": pd.arrays.SparseArray([0, 0, 5])})
    out = dfbuffer.from_dataframe(df)
    np.testing.assert_array_equal(out["sp"], [0.0, NAN, 2.0])
    assert out["si"].dtype == np.int64 and out["si"].tolist() == [0, 0, 5]
    assert dfbuffer.schema(df)["si"].type == "int"
    np.testing.assert_array_equal(dfbuffer.to_matrix(df), [[0, 0], [NAN, 0], [2, 5]])


def test_another_librarys_error_is_named_with_its_cause():
    df = pd.DataFrame({"x": [1.0, 2.0], "c": pd.Categorical(["a", 1])},
                      index=pd.Index([5, 6]))
    with pytest.raises(NotImplementedError, match="column 'c': pandas' Arrow export") as info:
        dfbuffer.from_dataframe(df)
    cause = info.value.__cause__
    assert cause is not None and type(cause).__module__.startswith("pyarrow")
    out = dfbuffer.from_dataframe(df, on_unsupported="skip")
    assert list(out) == ["x"]


def test_result_outlives_the_frame():
    df = pd.DataFrame({"o": ["a", None, "c"], "z": [1j, 2j, 3j], "p": pd.period_range(
        "2020", periods=3, freq="D")}, index=pd.date_range("2020", periods=3))
    ref = weakref.ref(df)
    out = dfbuffer.from_dataframe(df)
    del df
    gc.collect()
    assert ref() is None
    assert out["o"].data.tolist() == ["a", None, "c"]
    assert out["z"].tolist() == [1j, 2j, 3j]
    assert out["p"][2] == pd.Period("2020-01-03", freq="D")


def test_frame_in_a_reference_cycle_is_collected():
    df = pd.DataFrame({"o": ["a", 1, None], "x": [1.0, 2.0, 3.0]},
                      index=pd.Index([3, 2, 1]))
    out = dfbuffer.from_dataframe(df)
    df.attrs["cycle"] = out  # frame -> result -> (base) frame's block
    out["self"] = df
    ref = weakref.ref(df)
    del df, out
    gc.collect()
    assert ref() is None


def test_racing_writer_on_an_object_block():
    # A writer thread swaps the objects of the block while it is read (the block's own
    # array, written as pandas would).  The result is a zero-copy view of the block, so
    # it shows whatever the writer left there; only the mask is computed, from one pass
    # over the items.  With the GIL on, NumPy's whole-row assignment holds the GIL and
    # that pass reads one row state (half None); with the GIL off no snapshot of an
    # object array written item by item exists (NumPy's thread-safety notes: a
    # concurrent reader gets racy results), so what holds with the GIL on or off is:
    # each item read once, the mask saying what that read found (masked only where the
    # writer ever put None, never where no writer did; a masked result has a mask bit
    # set), the block's memory shared, and no crash.  The objects the writer puts are
    # held by `good` and `bad` all along: one it freed while being read would be a
    # hazard for NumPy's own readers too.
    import threading

    n = 60_000
    idx = pd.Index(np.arange(n) * 2)
    good_row = [None, "x", "z"] * (n // 3)
    bad_row = ["y", None, "z"] * (n // 3)
    df = pd.DataFrame({"o": pd.Series(good_row, index=idx, dtype=object),
                       "x": np.arange(n, dtype=float)}, index=idx)
    block = next(b.values for b in df._mgr.blocks if b.dtype == object)
    block.flags.writeable = True
    good = block[0].copy()
    bad = np.array(bad_row, dtype=object)
    never_none = np.arange(n) % 3 == 2
    stop = threading.Event()

    def write():
        while not stop.is_set():
            block[0, :] = bad
            block[0, :] = good

    t = threading.Thread(target=write, daemon=True)
    t.start()
    try:
        for _ in range(20):
            out = dfbuffer.from_dataframe(df)["o"]
            data, m = np.ma.getdata(out), np.ma.getmaskarray(out)
            assert m.shape == (n,) and np.shares_memory(data, block)
            assert not m[never_none].any()  # a mask bit only where None was read
            if isinstance(out, np.ma.MaskedArray):
                assert m.any()  # masked because this pass found a None
            if getattr(sys, "_is_gil_enabled", lambda: True)():
                assert m.sum() == n // 3  # one row state: a third None
    finally:
        stop.set()
        t.join()
    out = dfbuffer.from_dataframe(df)["o"]
    assert out.mask.tolist() == [x is None for x in good]


_NO_PYARROW = ChildProcess.python(textwrap.dedent("""
    import sys
    sys.modules["pyarrow"] = None  # an import of pyarrow fails
    import warnings
    warnings.simplefilter("error")
    import numpy as np, pandas as pd, dfbuffer
    df = pd.DataFrame({
        "x": [1.5, float("nan"), 3.0], "o": pd.array(["a", 1, None], dtype=object),
        "I": pd.array([1, None, 3], dtype="Int64"),
        "B": pd.array([True, None, False], dtype="boolean"),
        "s": pd.array(["a", None, "c"], dtype="string"), "d": ["a", None, "c"],
        "cat": pd.Categorical(["a", None, "b"], ordered=True),
        "tz": pd.date_range("2020", periods=3, tz="UTC"),
        "per": pd.period_range("2020", periods=3, freq="M"),
        "sp": pd.arrays.SparseArray([0, 1, 0]), "z": [1j, 2j, 3j],
    }, index=pd.date_range("2021", periods=3))
    out = dfbuffer.from_dataframe(df)
    assert out["I"].mask.tolist() == [False, True, False] and out["I"].dtype == np.int64
    assert out["B"].dtype == bool and out["B"].mask.tolist() == [False, True, False]
    assert out["s"].data.tolist() == ["a", None, "c"] and out["s"].mask[1]
    assert out["d"].data.tolist() == ["a", None, "c"]
    assert out["cat"].data.tolist() == ["a", None, "b"]
    assert out["tz"].dtype.kind == "M" and out["per"][0] == pd.Period("2020-01", "M")
    assert dfbuffer.from_dataframe(df, nulls="fill")["I"].tolist()[0] == 1.0
    codes = dfbuffer.from_dataframe(df, categorical="codes")["cat"]
    assert codes.ordered and codes.categories.tolist() == ["a", "b"]
    sch = dfbuffer.schema(df)
    assert [sch[c].type for c in ("x", "o", "I", "cat", "tz", "z")] == [
        "float", "object", "int", "categorical", "datetime", "complex"]
    assert sch["tz"].tz == "UTC"
    num = df[["x", "I", "B", "sp"]]
    np.testing.assert_array_equal(dfbuffer.to_matrix(num)[:, 1], [1, np.nan, 3])
    back = dfbuffer.from_dataframe(dfbuffer.to_arrow(df[["x", "I", "s", "tz"]]))
    assert back["s"].data.tolist() == ["a", None, "c"]
    assert list(dfbuffer.to_interchange(num).column_names()) == ["x", "I", "B", "sp"]
    assert sys.modules["pyarrow"] is None
    print("ok")
"""))


@pytest.mark.child_process(_NO_PYARROW)
def test_no_pyarrow_needed():
    if int(pd.__version__.split(".")[0]) < 3:
        # pandas 2's own lib.is_pyarrow_array reads pyarrow.Array once pyarrow counts as
        # installed, and fails on the blocked import before dfbuffer is asked anything
        pytest.skip("pandas 2 itself needs pyarrow importable once it saw it installed")
    r = _NO_PYARROW.result()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_every_datetime_unit_zero_copy(unit):
    arr = np.array(["2020-01-01", "NaT"], dtype=f"datetime64[{unit}]")
    df = pd.DataFrame({"t": arr, "d": arr - arr[0]}, index=pd.Index([7, 8]))
    out = dfbuffer.from_dataframe(df, nulls="fill")
    for name in df:
        assert out[name].dtype == df[name].dtype
        assert np.shares_memory(out[name], df[name].to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dfbuffer.schema(df)["t"].unit == unit


def _arrow_arrays():
    import decimal

    pa = pytest.importorskip("pyarrow")
    return {
        "list": pa.array([[1], None, [2, 3]]),
        "struct": pa.array([{"a": 1}, None, {"a": 2}]),
        "dictionary": pa.array(["x", None, "x"]).dictionary_encode(),
        "decimal": pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("2")]),
        "duration": pa.array([1, None, 3], pa.duration("ms")),
        "large_string": pa.array(["a", None, "c"], pa.large_string()),
        "date32": pa.array([1, None, 3], pa.date32()),
        "binary": pa.array([b"a", None, b"c"]),
        "time64": pa.array([1, None, 3], pa.time64("us")),
        "int8": pa.array([1, None, 3], pa.int8()),
    }


@pytest.mark.parametrize("kind", ["range", "datetime", "multi"])
def test_arrow_dtype_columns_read_as_the_arrow_column(kind):
    pa = pytest.importorskip("pyarrow")
    arrs = _arrow_arrays()
    df = pd.DataFrame({k: pd.Series(pd.arrays.ArrowExtensionArray(v))
                       for k, v in arrs.items()}).set_axis(_indexes(3)[kind])
    out = dfbuffer.from_dataframe(df)
    ref = dfbuffer.from_dataframe(pa.table(arrs))
    assert list(out) == list(arrs)
    for name in arrs:
        _same(out[name], ref[name])
    assert dfbuffer.schema(df).names == list(arrs)


def test_allow_copy_false_refuses_what_is_made_anew():
    df = pd.DataFrame({"p": pd.period_range("2020", periods=2, freq="D"),
                       "o": ["a", 1], "z": [1j, 2j]}, index=pd.Index([4, 5]))
    with pytest.raises(RuntimeError, match="column 'p'.*allow_copy=False"):
        dfbuffer.from_dataframe(df, allow_copy=False)
    sub = df[["o", "z"]]  # a copy on pandas 2 without copy-on-write: compare with it
    out = dfbuffer.from_dataframe(sub, allow_copy=False)
    assert np.shares_memory(out["z"], sub["z"].to_numpy())


def test_to_interchange_selects_and_skips_before_exporting():
    df = pd.DataFrame({"o": ["a", 1, None], "x": [1.0, 2.0, 3.0], "z": [1j, 2, 3],
                       "s": ["a", None, "c"]}, index=pd.date_range("2020", periods=3))
    with pytest.raises(NotImplementedError, match="column 'z'"):
        dfbuffer.to_interchange(df)
    assert list(dfbuffer.to_interchange(df, on_unsupported="skip").column_names()) == [
        "x", "s"]
    ix = dfbuffer.to_interchange(df, columns=["s", "x"])
    assert list(ix.column_names()) == ["s", "x"]
    assert ix.get_column_by_name("s").null_count == 1


def test_an_object_series_reads_as_its_frame_column():
    # column_to_ndarray of an object Series gives what from_dataframe gives for that
    # column: the object array itself (read-only, None masked), whatever its items;
    # pandas' Arrow export refused mixed items and turned bytes and Decimal into
    # Arrow types of their own
    import decimal

    for items in (["a", 1, None], [b"x", None, b"yz"], [decimal.Decimal("1.5"), None, 2]):
        s = pd.Series(items, dtype=object, name="o")
        got = dfbuffer.column_to_ndarray(s)
        want = dfbuffer.from_dataframe(pd.DataFrame({"o": s}))["o"]
        data = np.ma.getdata(got)
        assert data.dtype == object and data.tolist() == np.ma.getdata(want).tolist()
        assert [type(v) for v in data.tolist()] == [type(v) for v in s.tolist()]
        assert np.ma.getmaskarray(got).tolist() == [v is None for v in items]
        assert np.shares_memory(data, s.to_numpy()) and not data.flags.writeable
    # the result keeps the Series' array alive, and only as long as it lives
    s = pd.Series(["a", 1, None], dtype=object)
    got = dfbuffer.column_to_ndarray(s)
    ref = weakref.ref(s.to_numpy().base if s.to_numpy().base is not None else s.to_numpy())
    del s
    gc.collect()
    assert np.ma.getdata(got).tolist() == ["a", 1, None] and ref() is not None
    del got
    gc.collect()
    assert ref() is None
