"""dfbuffer.column_to_ndarray / from_dataframe on Arrow PyCapsule producers
(pyarrow, polars, pandas 3, nanoarrow): values, nulls, zero copy, lifetime."""

from __future__ import annotations

import datetime as dt
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from kernel_checks import arrow_to_ndarray

import dfbuffer
from dfbuffer import _interchange


def from_df(obj, nulls="mask", allow_copy=True):
    """from_dataframe's Arrow path (the private entry: independent of dispatch)."""
    return _interchange._arrow_from_dataframe(obj, nulls, allow_copy)


def _dispatch_wired() -> bool:
    try:
        dfbuffer.column_to_ndarray(pa.array([1]))
        return isinstance(dfbuffer.from_dataframe(pa.table({"a": [1]})), dict)
    except TypeError:
        return False


@pytest.mark.skipif(not _dispatch_wired(),
                    reason="convert.c does not dispatch Arrow producers to arrow.c yet")
def test_public_functions_dispatch_to_arrow():
    arr = pa.array([1.5, None])
    assert values(dfbuffer.column_to_ndarray(arr)) == [1.5, None]
    pl = pytest.importorskip("polars")
    got = dfbuffer.from_dataframe(pl.DataFrame({"a": [1, 2]}))
    assert got["a"].tolist() == [1, 2]
    # a pyarrow Table speaks both protocols: the Arrow path (zero copy) is taken
    t = pa.table({"v": pa.array(np.arange(4.0))})
    out = dfbuffer.from_dataframe(t)["v"]
    assert out.ctypes.data == t.column(0).chunk(0).buffers()[1].address


def values(arr):
    """Python values of a converter result, None for masked/NaN/NaT slots."""
    if isinstance(arr, np.ma.MaskedArray):
        return [None if m else v for v, m in zip(arr.data.tolist(), np.ma.getmaskarray(arr),
                                                 strict=True)]
    return arr.tolist()


def test_primitive_zero_copy_and_base_chain(collect):
    arr = pa.array(np.arange(50, dtype=np.float64)).slice(7, 20)
    got = arrow_to_ndarray(arr)
    assert got.tolist() == list(range(7, 27))
    assert got.ctypes.data == arr.buffers()[1].address + 7 * 8
    b = got
    while not isinstance(b, dfbuffer.Buffer):
        b = b.base
    assert b.native == dfbuffer.NativeFormat.ARROW
    assert "dfbuffer.arrow_array" in repr(b.owner)


@pytest.mark.parametrize("nulls", ["mask", "fill", "raise"])
def test_pyarrow_table_kinds(nulls):
    t = pa.table({
        "i": [1, None, 3, 4],
        "u": pa.array([1, 2, 3, 4], pa.uint16()),
        "f": [0.5, 1.5, None, 3.5],
        "h": pa.array(np.array([1, 2, 3, 4], np.float16)),
        "s": ["a", None, "ccc", ""],
        "ls": pa.array(["x", "y", None, "z"], pa.large_string()),
        "sv": pa.array(["short", None, "a string longer than twelve", "q"], pa.string_view()),
        "b": [True, None, False, True],
        "t": pa.array([dt.datetime(2020, 1, 1), None, dt.datetime(2021, 5, 6),
                       dt.datetime(1969, 1, 1)], pa.timestamp("ms", "Asia/Kathmandu")),
        "d": pa.array([dt.date(2020, 1, 2), dt.date(2020, 1, 3), None, dt.date(1970, 1, 1)]),
        "du": pa.array([dt.timedelta(1), None, dt.timedelta(seconds=1), dt.timedelta(0)]),
        "c": pa.array(["p", "q", None, "p"]).dictionary_encode(),
    })
    if nulls == "raise":
        with pytest.raises(ValueError):
            from_df(t, nulls="raise")
        got = from_df(t.select(["u", "h"]), nulls="raise")
        assert got["u"].tolist() == [1, 2, 3, 4]
        return
    got = from_df(t, nulls=nulls)
    assert list(got) == t.column_names
    if nulls == "mask":
        assert values(got["i"]) == [1, None, 3, 4]
        assert values(got["b"]) == [True, None, False, True]
    else:
        assert np.isnan(got["i"][1]) and got["i"][0] == 1
    assert values(got["s"]) == ["a", None, "ccc", ""]
    assert values(got["ls"]) == ["x", "y", None, "z"]
    assert values(got["sv"]) == ["short", None, "a string longer than twelve", "q"]
    assert values(got["c"]) == ["p", "q", None, "p"]
    assert got["h"].dtype == np.float16
    t_vals = got["t"] if nulls == "fill" else got["t"].data
    # Arrow stores UTC instants; the time zone is metadata
    assert t_vals[0] == np.datetime64("2020-01-01T00:00:00", "ms")
    assert t_vals[3] == np.datetime64("1969-01-01T00:00:00", "ms")


def test_sliced_bitmaps_any_offset():
    vals = [None if k % 3 == 0 else k for k in range(200)]
    arr = pa.array(vals)
    for start, n in [(0, 200), (1, 5), (13, 40), (150, 3), (199, 1), (64, 0)]:
        got = arrow_to_ndarray(arr.slice(start, n))
        assert values(got) == vals[start:start + n]
    bools = pa.array([k % 7 == 0 for k in range(100)])
    assert arrow_to_ndarray(bools.slice(45, 20)).tolist() == \
        [k % 7 == 0 for k in range(45, 65)]


def test_chunked_and_stream():
    ca = pa.chunked_array([[1, None], [3], [], [4, 5]])
    assert values(arrow_to_ndarray(ca)) == [1, None, 3, 4, 5]
    t = pa.Table.from_batches(pa.table({"a": range(10), "s": [str(k) for k in range(10)]})
                              .to_batches(max_chunksize=3))
    got = from_df(t)
    assert got["a"].tolist() == list(range(10))
    assert got["s"].tolist() == [str(k) for k in range(10)]
    with pytest.raises(RuntimeError):
        from_df(t, allow_copy=False)


def test_polars_and_pandas_and_nanoarrow():
    pl = pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly
    df = pl.DataFrame({"i": [1, None, 3], "s": ["x", "yy", None],
                       "c": pl.Series(["a", None, "b"], dtype=pl.Categorical),
                       "tz": pl.Series([dt.datetime(2020, 1, 1)] * 3).dt.replace_time_zone("UTC")})
    got = from_df(df)
    assert values(got["i"]) == [1, None, 3]
    assert values(got["s"]) == ["x", "yy", None]
    assert values(got["c"]) == ["a", None, "b"]
    assert values(arrow_to_ndarray(df["i"])) == [1, None, 3]
    s = pl.Series("f", [1.5, 2.5])
    out = arrow_to_ndarray(s)
    assert np.shares_memory(out, s.to_numpy())
    pdf = pd.DataFrame({"a": [1, 2], "s": ["p", "q"]})
    got = from_df(pdf)
    assert got["a"].tolist() == [1, 2] and got["s"].tolist() == ["p", "q"]
    na = pytest.importorskip("nanoarrow")
    assert arrow_to_ndarray(na.c_array([1, 2, 3], na.int32())).tolist() == [1, 2, 3]


def test_empty_stream_and_empty_columns():
    t = pa.table({"a": pa.array([], pa.int64()), "s": pa.array([], pa.string()),
                  "c": pa.array([], pa.string()).dictionary_encode()})
    got = from_df(t)
    assert got["a"].dtype == np.int64 and len(got["a"]) == 0
    assert len(got["s"]) == 0 and len(got["c"]) == 0


def test_unsupported_named_and_struct_column():
    assert [x.tolist() for x in arrow_to_ndarray(pa.array([[1], [2]]))] == [[1], [2]]
    # column_to_ndarray reads any array as one column: a record batch's rows as dicts
    assert arrow_to_ndarray(pa.record_batch({"a": [1]})).tolist() == [{"a": 1}]
    assert from_df(pa.record_batch({"a": [1]}))["a"].tolist() == [1]


def test_duplicate_names():
    t = pa.table([pa.array([1]), pa.array([2])], names=["a", "a"])
    with pytest.raises(ValueError, match="duplicate"):
        from_df(t)


def test_lifetime_arrow_memory(collect):
    before = pa.total_allocated_bytes()
    v = pc.add(pa.array(np.arange(300_000, dtype=np.int64)), 1)   # Arrow-allocated
    after = pa.total_allocated_bytes()
    assert after - before >= 2_400_000
    got = arrow_to_ndarray(v)
    assert got.ctypes.data == v.buffers()[1].address
    b = got.base
    while not isinstance(b, dfbuffer.Buffer):
        b = b.base
    wb = weakref.ref(b)
    del v, b
    collect()
    assert pa.total_allocated_bytes() >= after
    assert got[-1] == 300_000
    del got
    collect()
    assert wb() is None
    assert pa.total_allocated_bytes() <= before


