"""Dates, times of day, timestamps (every unit, with and without a time zone), durations
and intervals: interchange producers' sentinels and bitmasks, pandas' and pyarrow's
columns against the peers' own values, Arrow's time and interval types against
to_pylist, and the lifetime of the objects they make."""

from __future__ import annotations

import datetime
import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest
from flat_arrays import MONTH_DAY_NANO
from kernel_checks import (
    RawBuffer,
    assert_zero_copy,
    check,
    check_nulls,
    churn,
    pandas_col,
    pyarrow_consumer,
    utc_naive,
)
from producers import (
    BOOL,
    DATETIME,
    INAT,
    USE_SENTINEL,
    addr,
    datetimes,
    frame,
    nonnative,
    primitive,
    to_list,
)
from racing import as_list, race
from test_arrow_bad import Producer

import dfbuffer

pd = pytest.importorskip("pandas")

# pandas 3 emits pandas.errors.Pandas4Warning (a DeprecationWarning subclass)
# from DataFrame.__dataframe__ and from its interchange from_dataframe.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

RAW = np.array([0, 1_600_000_000, INAT, -86_400, 1_700_000_000, INAT], dtype="i8")
RAW_VALID = RAW != INAT


def test_time_nanoseconds_not_whole_microseconds_raise_naming_the_column():
    arr = pa.array([0, 1500], pa.time64("ns"))
    with pytest.raises(ValueError, match="datetime.time cannot hold it"):
        dfbuffer.column_to_ndarray(arr)
    with pytest.raises(ValueError, match="^column 't'.*1500ns at row 1"):
        dfbuffer.from_dataframe(pa.table({"t": arr}))
    # a null slot's value is never read
    masked = pa.Array.from_buffers(
        pa.time64("ns"),
        2,
        [pa.array([True, False]).buffers()[1], pa.array([0, 1500], pa.int64()).buffers()[1]],
    )
    assert as_list(dfbuffer.column_to_ndarray(masked)) == [datetime.time(0), None]


def test_time_out_of_range_raises():
    bad = pa.Array.from_buffers(
        pa.time32("s"), 1, [None, pa.array([86400], pa.int32()).buffers()[1]]
    )
    with pytest.raises(ValueError, match=r"outside \[0, 24 h\)"):
        dfbuffer.column_to_ndarray(bad)


def test_month_day_nano_interval_records():
    arr = pa.array(MONTH_DAY_NANO, pa.month_day_nano_interval())
    res = dfbuffer.column_to_ndarray(arr)
    assert isinstance(res, np.ma.MaskedArray)
    assert res.dtype.names == ("months", "days", "nanoseconds")
    assert res.dtype["months"] == np.int32 and res.dtype["nanoseconds"] == np.int64
    mask = np.ma.getmaskarray(res)["months"].tolist()
    got = [None if m else tuple(v) for v, m in zip(res.data.tolist(), mask, strict=True)]
    want = [None if v is None else (v.months, v.days, v.nanoseconds) for v in arr.to_pylist()]
    assert got == want
    # zero-copy: the records are pyarrow's buffer
    assert res.data.__array_interface__["data"][0] == arr.buffers()[1].address
    assert not res.data.flags.writeable
    sl = arr.slice(2, 2)
    res = dfbuffer.column_to_ndarray(sl)
    assert [tuple(v) for v in res.tolist()] == [(-3, 0, -7), (4, 5, 6)]
    assert res.__array_interface__["data"][0] == arr.buffers()[1].address + 2 * 16
    ch = pa.chunked_array([arr.slice(3), arr.slice(0, 1)])
    assert [tuple(v) for v in dfbuffer.column_to_ndarray(ch).tolist()] == [
        (4, 5, 6),
        (0, 0, 0),
        (1, 2, 3),
    ]


def test_month_and_day_time_intervals():
    # pyarrow has no Python class for these two (its to_pylist fails): the oracle is the
    # layout itself, written by a hand-made producer (kept alive while its results
    # live: they are views of its memory and call its release callback)
    months = np.array([1, -2, 0, 7], np.int32)
    pm = Producer(b"tiM", 3, [None, months], offset=1)
    res = dfbuffer.column_to_ndarray(pm)
    assert res.dtype.names == ("months",) and res["months"].tolist() == [-2, 0, 7]
    dt = np.array([(1, 500), (-2, 0), (3, -7)], [("d", "<i4"), ("ms", "<i4")])
    valid = np.packbits([1, 0, 1], bitorder="little")
    pd_ = Producer(b"tiD", 3, [valid, dt], null_count=1)
    res2 = dfbuffer.column_to_ndarray(pd_)
    assert res2.dtype.names == ("days", "milliseconds")
    assert np.ma.getmaskarray(res2)["days"].tolist() == [False, True, False]
    assert [tuple(v) for v in res2.data.tolist()] == [(1, 500), (-2, 0), (3, -7)]
    del res, res2
    gc.collect()
    assert pm.release_count == 1 and pd_.release_count == 1


def test_interval_lifetime_and_cycles():
    arr = pa.array(MONTH_DAY_NANO * 100, pa.month_day_nano_interval())
    res = dfbuffer.column_to_ndarray(arr.slice(3))
    addr = arr.buffers()[1].address
    ref = weakref.ref(arr)
    del arr
    gc.collect()
    # the view keeps the memory alive whatever happens to the pyarrow array
    assert res.data[0]["months"] == 4
    assert res.data.__array_interface__["data"][0] == addr + 3 * 16
    # a cycle through the result is collected
    holder = [res]
    holder.append(holder)
    w = weakref.ref(res.data.base) if res.data.base is not None else None
    del res, holder
    gc.collect()
    assert ref() is None
    if w is not None:
        assert w() is None


def test_buffer_to_ndarray_datetime_units():
    vals = np.array([0, 86_400, -1], dtype="i8")
    buf = RawBuffer(vals)
    for unit in "smun":
        res = dfbuffer.buffer_to_ndarray(buf, (DATETIME, 64, f"ts{unit}:UTC", "="))
        name = {"s": "s", "m": "ms", "u": "us", "n": "ns"}[unit]
        assert res.dtype == np.dtype(f"M8[{name}]")
        np.testing.assert_array_equal(res.view("i8"), vals)
        res = dfbuffer.buffer_to_ndarray(buf, (DATETIME, 64, f"tD{unit}", "="))
        assert res.dtype == np.dtype(f"m8[{name}]")


def test_buffer_to_ndarray_date32_and_bits():
    days = RawBuffer(np.array([0, 1, 19_000], dtype="i4"))
    res = dfbuffer.buffer_to_ndarray(days, (DATETIME, 32, "tdD", "="))
    assert res.dtype == np.dtype("M8[D]")
    np.testing.assert_array_equal(res.view("i8"), [0, 1, 19_000])
    bits = RawBuffer(np.array([0b10110100, 0b00000011], dtype="u1"))
    res = dfbuffer.buffer_to_ndarray(bits, (BOOL, 1, "b", "="), offset=2, length=9)
    assert res.dtype == np.bool_
    np.testing.assert_array_equal(res, [1, 0, 1, 1, 0, 1, 1, 1, 0])
    with pytest.raises(ValueError):
        dfbuffer.buffer_to_ndarray(bits, (BOOL, 1, "b", "="), offset=8, length=9)


def test_column_pandas_datetime_tz_nat():
    s = pd.Series(pd.to_datetime(["2020-01-01", None]).tz_localize("Asia/Kathmandu"))
    res = dfbuffer.column_to_ndarray(pandas_col(s), nulls="fill")
    assert res.dtype.kind == "M"
    assert res[0] == np.datetime64("2019-12-31T18:15")
    assert np.isnat(res[1])


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "Asia/Kathmandu", "UTC"])
def test_pandas_datetimes(unit, tz):
    s = pd.Series(
        pd.to_datetime(["2020-01-01T00:00:01", None, "1969-07-20T20:17:40", "2038-01-19T03:14:08"])
    ).astype(f"datetime64[{unit}]")
    if tz:
        s = s.dt.tz_localize(tz)
    res = dfbuffer.from_dataframe(pd.DataFrame({"t": s}))["t"]
    valid = s.notna().to_numpy()
    check_nulls(res, valid)
    assert res.dtype == np.dtype(f"M8[{unit}]")
    np.testing.assert_array_equal(np.asarray(res.data)[valid], utc_naive(s)[valid])
    filled = dfbuffer.from_dataframe(pd.DataFrame({"t": s}), nulls="fill")["t"]
    np.testing.assert_array_equal(np.isnat(filled), ~valid)


def test_pandas_datetime_zero_copy():
    df = pd.DataFrame({"t": pd.date_range("2000-01-01", periods=5, freq="D", unit="ns")})
    res = dfbuffer.from_dataframe(df)["t"]
    assert type(res) is np.ndarray and res.dtype == np.dtype("M8[ns]")
    np.testing.assert_array_equal(res, df["t"].to_numpy())
    assert np.shares_memory(res, df["t"].to_numpy())


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_pyarrow_timestamps_tz(unit):
    vals = [0, None, 1_600_000_000, -86_400, None, 1_700_000_000]
    arr = pa.array(vals, pa.timestamp(unit, "Asia/Kathmandu"))
    for part in (pa.table({"t": arr}), pa.table({"t": arr}).slice(3)):
        res = dfbuffer.from_dataframe(part.__dataframe__())["t"]
        assert res.dtype == np.dtype(f"M8[{unit}]")
        raw = part.column(0).cast(pa.int64()).to_pylist()
        check_nulls(res, [v is not None for v in raw])
        exp = [None if v is None else np.datetime64(v, unit) for v in raw]
        assert to_list(res.astype("i8")) == [
            None if v is None else int(v.astype("i8")) for v in exp
        ]


@pytest.mark.parametrize("typ", ["date32", "date64"])
def test_pyarrow_dates(typ):
    days = [datetime.date(2020, 1, 1), None, datetime.date(1969, 12, 31)]
    arr = pa.array(days, getattr(pa, typ)())
    try:
        x = pa.table({"d": arr}).__dataframe__()
        x.get_column(0)
    except (ValueError, NotImplementedError) as e:
        # pyarrow 26: "Data type date32[day] not supported by interchange
        # protocol"; dates are covered by hand-written producers in
        # test_convert_producers.py
        pytest.skip(f"pyarrow's producer refuses {typ}: {e}")
    res = dfbuffer.from_dataframe(x)["d"]  # pragma: no cover
    assert to_list(res.astype("M8[D]")) == arr.to_pylist()  # pragma: no cover


@pytest.mark.parametrize("unit", ["s", "m", "u", "n"])
def test_known_wrong_datetimes(unit):
    npunit = unit if unit == "s" else unit + "s"
    raw = np.array([0, INAT, 1000, 5], dtype="i8")
    x = frame(t=datetimes(raw, f"ts{unit}:Asia/Kathmandu", offset=2))
    res = dfbuffer.from_dataframe(x)["t"]
    assert res.dtype == np.dtype(f"M8[{npunit}]")
    assert to_list(res.astype("i8")) == [0, None, 1000, 5]
    bm = frame(t=datetimes(np.array([7, 8, 9]), f"ts{unit}:UTC", valid=[1, 0, 1], offset=9))
    assert to_list(dfbuffer.from_dataframe(bm)["t"].astype("i8")) == [7, None, 9]
    s = pd.Series(pd.to_datetime(["2020-01-01", None]).as_unit(npunit)).dt.tz_localize(
        "Asia/Kathmandu"
    )
    res = dfbuffer.from_dataframe(pd.DataFrame({"t": s}))["t"]
    assert to_list(res)[1] is None
    assert res.data[0] == np.datetime64("2019-12-31T18:15:00", npunit)


def test_peer_bug_pyarrow_datetime_sentinel_with_offset():
    """pyarrow's consumer applies the column offset twice to the bitmap it
    computes from an iNaT sentinel: validity shifted by the offset."""
    x = frame(t=datetimes(np.array([0, INAT, 1000]), "tsm:UTC", offset=2))
    got = pyarrow_consumer(x)
    assert got[1] is None and got[2] is None  # 1000 ms wrongly null


def test_nonnative_timestamps_with_sentinel():
    raw = np.array([0, 1000, INAT, 5], dtype="i8")
    be = raw.astype(nonnative("i8"))
    col = primitive(
        be,
        col_dtype=(DATETIME, 64, "tsm:UTC", be.dtype.byteorder),
        null=(USE_SENTINEL, INAT),
        null_count=1,
    )
    res = dfbuffer.column_to_ndarray(col)
    check(res, raw.view("M8[ms]"), raw != INAT)
    assert res.dtype.kind == "M" and np.datetime_data(res.dtype) == ("ms", 1)


@pytest.mark.parametrize("unit", ["s", "m", "u", "n"])
@pytest.mark.parametrize("tz", ["", "UTC", "Asia/Kathmandu", "+05:45"])
def test_timestamps_sentinel(unit, tz):
    npunit = unit if unit == "s" else unit + "s"
    col = datetimes(RAW, f"ts{unit}:{tz}", offset=2)
    res = dfbuffer.column_to_ndarray(col)
    expected = RAW.view(f"M8[{npunit}]")  # UTC instants
    check(res, expected, RAW_VALID, dtype=f"M8[{npunit}]")
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert type(filled) is np.ndarray and filled.dtype == np.dtype(f"M8[{npunit}]")
    np.testing.assert_array_equal(np.isnat(filled), ~RAW_VALID)
    np.testing.assert_array_equal(filled[RAW_VALID], expected[RAW_VALID])
    # the values are a view of the producer's buffer
    assert addr(filled) == col.data_buffer.ptr + 16
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(col, nulls="raise")


@pytest.mark.parametrize("unit", ["s", "m", "u", "n"])
def test_timestamps_bitmask(unit):
    npunit = unit if unit == "s" else unit + "s"
    raw = np.array([5, 77, 12345, 0, -3], dtype="i8")  # null slot holds a real value
    valid = np.array([1, 0, 1, 1, 0], dtype=bool)
    col = datetimes(raw, f"ts{unit}:Asia/Kathmandu", valid=valid, offset=11)
    res = dfbuffer.column_to_ndarray(col)
    check(res, raw.view(f"M8[{npunit}]"), valid, dtype=f"M8[{npunit}]")
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    np.testing.assert_array_equal(np.isnat(filled), ~valid)


def test_timestamp_no_nulls_zero_copy():
    raw = np.array([1, 2, 3], dtype="i8")
    col = datetimes(raw, "tsn:")
    res = dfbuffer.column_to_ndarray(col)
    check(res, raw.view("M8[ns]"), dtype="M8[ns]")
    assert_zero_copy(res, col.data_buffer)


def test_date32_days():
    raw = np.array([0, 18000, -1, 20000], dtype="i4")
    col = datetimes(raw, "tdD", storage=np.int32, offset=1)
    res = dfbuffer.column_to_ndarray(col)
    check(res, raw.astype("M8[D]"), dtype="M8[D]")


def test_date64_ms():
    raw = np.array([0, 86_400_000, 1_555_200_000_000], dtype="i8")
    col = datetimes(raw, "tdm", sentinel=False)
    res = dfbuffer.column_to_ndarray(col)
    check(res, raw.view("M8[ms]"), dtype="M8[ms]")


def test_date32_with_nulls():
    raw = np.array([0, 18000, -1, 20000], dtype="i4")
    valid = [1, 0, 1, 1]
    col = datetimes(raw, "tdD", storage=np.int32, valid=valid, offset=3)
    check(dfbuffer.column_to_ndarray(col), raw.astype("M8[D]"), valid, dtype="M8[D]")


@pytest.mark.parametrize("unit", ["s", "m", "u", "n"])
def test_durations(unit):
    npunit = unit if unit == "s" else unit + "s"
    raw = np.array([0, -5, 1_000_000, INAT], dtype="i8")
    col = datetimes(raw, f"tD{unit}", offset=1)
    res = dfbuffer.column_to_ndarray(col)
    check(res, raw.view(f"m8[{npunit}]"), raw != INAT, dtype=f"m8[{npunit}]")


def test_quirk_datetime_data_buffer_has_column_dtype():
    col = datetimes(RAW, "tsu:Asia/Kathmandu", data_as_column_dtype=True, offset=1)
    assert col.get_buffers()["data"][1][0] == DATETIME
    check(dfbuffer.column_to_ndarray(col), RAW.view("M8[us]"), RAW_VALID, dtype="M8[us]")


def test_pandas_tz_datetime_temporary(collect):
    """tz-aware columns: pandas converts to UTC into a temporary array."""
    s = pd.Series(pd.date_range("2024-01-01", periods=3000, freq="min", tz="Asia/Kathmandu"))
    exp = s.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()
    df = pd.DataFrame({"t": s})
    res = dfbuffer.from_dataframe(df)["t"]
    del df, s
    gc.collect()
    churn(3000 * 8, rounds=300)
    np.testing.assert_array_equal(res, exp)


@pytest.mark.parametrize(
    "typ", [pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")]
)
def test_times_of_every_unit_equal_pyarrows(typ):
    # each unit's loop: values across the day, nulls, a slice, a last value just inside 24 h
    per_second = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[typ.unit]
    seconds = [0, 1, 59, 3600, 45_296, 86_399, 7, 12 * 3600]
    raw = [s * per_second + (per_second - 1000 if per_second >= 10**6 else 0) for s in seconds]
    storage = pa.int32() if typ.bit_width == 32 else pa.int64()
    valid = pa.array([i % 3 != 1 for i in range(len(raw))]).buffers()[1]
    arr = pa.Array.from_buffers(typ, len(raw), [valid, pa.array(raw, storage).buffers()[1]])
    for sl in (arr, arr.slice(3), arr.slice(1, 4)):
        assert as_list(dfbuffer.column_to_ndarray(sl)) == sl.to_pylist()
    for v in (-1000, 86_400 * per_second):
        bad = pa.Array.from_buffers(typ, 2, [None, pa.array([0, v], storage).buffers()[1]])
        with pytest.raises(ValueError, match=r"at row 1 is outside \[0, 24 h\)"):
            dfbuffer.column_to_ndarray(bad)


def test_date32_byte_swapped_with_nulls():
    # the widening loop of days in the other byte order, nulls as NaT
    raw = np.array([0, 18000, -1, 20000, -719_162], dtype="i4")
    valid = [1, 0, 1, 1, 1]
    col = datetimes(raw.astype(nonnative("i4")), "tdD", storage=nonnative("i4"), valid=valid)
    check(dfbuffer.column_to_ndarray(col), raw.astype("M8[D]"), valid, dtype="M8[D]")


def test_racing_time_values():
    # a writer rewrites the time values while they become datetime.time objects: each
    # value is read once, so every object is the old or the new value of its row
    n = 40_000
    good = (np.arange(n, dtype=np.int64) * 1_000_003) % (86_400 * 10**6)
    other = (good + 7) % (86_400 * 10**6)
    data = good.copy()
    nulls = [i % 13 == 5 for i in range(n)]
    valid = pa.array([not m for m in nulls]).buffers()[1]
    arr = pa.Array.from_buffers(pa.time64("us"), n, [valid, pa.py_buffer(data)])

    def as_time(us: int) -> datetime.time:
        s, u = divmod(int(us), 10**6)
        return datetime.time(s // 3600, s // 60 % 60, s % 60, u)

    def check(res) -> None:
        got = as_list(res)
        assert [v is None for v in got] == nulls
        for i in range(0, n, 97):
            assert nulls[i] or got[i] in (as_time(good[i]), as_time(other[i]))

    ok, refused = race(lambda: dfbuffer.column_to_ndarray(arr), check, [(data, good, other)])
    assert ok == 8 and refused == 0


def test_racing_date32_days():
    # the widening loop under a writer: every day is the old or the new one, nulls NaT
    n = 40_000
    good = np.arange(n, dtype=np.int32) % 30_000
    other = good + 1
    data = good.copy()
    nulls = np.arange(n) % 11 == 4
    valid = pa.array(~nulls).buffers()[1]
    arr = pa.Array.from_buffers(pa.date32(), n, [valid, pa.py_buffer(data)])

    def check(res) -> None:
        days = np.ma.getdata(res).view("i8")
        assert (np.ma.getmaskarray(res) == nulls).all()
        assert ((days == good) | (days == other))[~nulls].all()

    ok, refused = race(lambda: dfbuffer.column_to_ndarray(arr), check, [(data, good, other)])
    assert ok == 8 and refused == 0
