"""dfbuffer.to_interchange: the interchange protocol served over Arrow producers,
read back by pandas' and pyarrow's own from_dataframe."""

from __future__ import annotations

import datetime as dt
import warnings
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401
import pytest
from producers import ProtocolOnlyFrame
from pyarrow.interchange import from_dataframe as pa_from_dataframe

import dfbuffer
from dfbuffer import ColumnNullType, DtypeKind, to_interchange

pd_from_dataframe = pd.api.interchange.from_dataframe

KTM = "Asia/Kathmandu"


def table(n=20):
    """A pyarrow table with every supported kind, nulls everywhere but bools."""
    rng = range(n)
    return pa.table({
        "i": pa.array([None if k % 5 == 1 else k * 3 - 7 for k in rng], pa.int64()),
        "u8": pa.array([k % 200 for k in rng], pa.uint8()),
        "f": pa.array([None if k % 4 == 2 else k / 3 for k in rng], pa.float64()),
        "f32": pa.array([k * 0.5 for k in rng], pa.float32()),
        "s": pa.array([None if k % 6 == 3 else "x" * (k % 7) + str(k) for k in rng]),
        "ls": pa.array([f"é{k}" for k in rng], pa.large_string()),
        "b": pa.array([k % 3 == 0 for k in rng]),
        "t": pa.array([None if k % 7 == 4 else dt.datetime(2020, 1, 1 + k % 28, k % 24)
                       for k in rng], pa.timestamp("us", KTM)),
        "tn": pa.array([dt.datetime(2021, 3, 1 + k % 28) for k in rng], pa.timestamp("ns")),
        "c": pa.array([None if k % 8 == 5 else "abc"[k % 3] for k in rng]).dictionary_encode(),
    })


_KEEP: list = []


def pandas_read(x, **kw):
    """pandas' from_dataframe over to_interchange(x), through the protocol (the
    object's own __arrow_c_stream__, which pandas would prefer, hidden).

    pandas keeps the interchange buffers in ``df.attrs`` and deep-copies attrs
    on every column access; the buffers are moved to _KEEP (they must stay
    alive: pandas' arrays point into them without a base).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = x if hasattr(x, "_columns") else to_interchange(x)
        got = pd_from_dataframe(ProtocolOnlyFrame(view), **kw)
    _KEEP.append(got.attrs.pop("_INTERCHANGE_PROTOCOL_BUFFERS", None))
    return got


def check_pandas(got: pd.DataFrame, expect: pa.Table):
    assert list(got.columns) == expect.column_names
    for name in expect.column_names:
        want = expect.column(name).to_pylist()
        have = got[name].tolist()
        for w, h in zip(want, have, strict=True):
            if w is None:
                assert h is None or h is pd.NaT or (isinstance(h, float) and np.isnan(h)), name
            elif isinstance(w, dt.datetime):
                h = pd.Timestamp(h)
                if w.tzinfo is None:
                    assert h.tz is None and h.to_pydatetime() == w, name
                else:
                    assert h.tz is not None and h.to_pydatetime() == w, name
            else:
                assert h == w, (name, h, w)


@pytest.mark.parametrize("sl", [None, (3, None), (1, 9), (9, 10), (17, 3), (0, 0)])
def test_pyarrow_table_roundtrip(sl):
    t = table()
    if sl is not None:
        t = t.slice(*sl)
    got = pa_from_dataframe(to_interchange(t))
    assert got.to_pylist() == t.to_pylist()
    check_pandas(pandas_read(t), t)


def test_pyarrow_multichunk_and_n_chunks():
    t = table(30)
    t = pa.Table.from_batches(t.to_batches(max_chunksize=7))
    x = to_interchange(t)
    assert x.num_chunks() == 5
    assert [c.num_rows() for c in x.get_chunks()] == [7, 7, 7, 7, 2]
    assert [c.num_rows() for c in x.get_chunks(10)] == [3, 4, 3, 4, 3, 4, 3, 4, 1, 1]
    with pytest.raises(ValueError):
        list(x.get_chunks(7))
    assert pa_from_dataframe(x).to_pylist() == t.to_pylist()
    check_pandas(pandas_read(t), t)
    # a whole multi-chunk column joins its chunks (a copy)
    for name in t.column_names:
        col = x.get_column_by_name(name)
        assert col.num_chunks() == 5
        bufs = col.get_buffers()
        assert bufs["data"][0].ptr != 0
    col = x.get_column_by_name("s")
    assert col.null_count == t.column("s").null_count
    sub = pa_from_dataframe(to_interchange(t).select_columns_by_name(["s", "c"]))
    assert sub.to_pylist() == t.select(["s", "c"]).to_pylist()
    # allow_copy=False refuses to join chunks
    y = to_interchange(t, allow_copy=False)
    with pytest.raises(RuntimeError, match="allow_copy"):
        y.get_column(0).get_buffers()


def test_multichunk_dictionaries_differ_are_unified():
    a = pa.array(["x", "y", None]).dictionary_encode()
    b = pa.array(["z", "x"]).dictionary_encode()
    t = pa.Table.from_batches([pa.record_batch({"c": a}), pa.record_batch({"c": b})])
    col = to_interchange(t).get_column(0)
    cats = col.describe_categorical["categories"]._col.tolist()
    codes = np.asarray(col.get_buffers()["data"][0]).tolist()
    valid = col.get_buffers()["validity"]
    assert sorted(cats) == ["x", "y", "z"]
    assert [cats[codes[i]] for i in (0, 1, 3, 4)] == ["x", "y", "z", "x"]
    assert valid is not None and col.null_count == 1


def test_polars_roundtrip():
    pl = pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly
    df = pl.DataFrame({
        "i": [1, None, 3, 4, 5],
        "f": [1.5, 2.0, None, 4.0, 5.0],
        "s": ["a", None, "a much longer string than twelve", "", "d"],
        "b": [True, False, True, True, False],
        "t": [dt.datetime(2020, 1, 1), None, dt.datetime(2021, 1, 1),
              dt.datetime(2022, 1, 1), dt.datetime(2023, 6, 1)],
        "tz": pl.Series([dt.datetime(2020, 1, 1)] * 5).dt.replace_time_zone(KTM),
        "c": pl.Series(["x", "y", None, "x", "z"], dtype=pl.Categorical),
        "e": pl.Series(["p", "q", "p", None, "q"], dtype=pl.Enum(["p", "q"])),
    })
    for x in (df, df.slice(1, 3), df.slice(2)):
        expect = x.to_arrow()
        got = pa_from_dataframe(to_interchange(x))
        assert got.to_pylist() == expect.to_pylist()
        check_pandas(pandas_read(x), expect)
        col = to_interchange(x).get_column_by_name("s")
        assert col.dtype == (DtypeKind.STRING, 8, "U", "=")
    e = to_interchange(df).get_column_by_name("e")
    assert e.dtype[0] == DtypeKind.CATEGORICAL
    assert e.describe_categorical["is_ordered"] in (True, False)
    # string views need a copy
    y = to_interchange(df, allow_copy=False)
    with pytest.raises(RuntimeError, match="allow_copy"):
        y.get_column_by_name("s").get_buffers()
    assert np.asarray(y.get_column_by_name("i").get_buffers()["data"][0])[0] == 1


def test_pandas3_dataframe_producer():
    pdf = pd.DataFrame({"a": [1, 2, 3], "s": ["x", None, "z"],
                        "c": pd.Categorical(["p", "q", "p"])})
    assert hasattr(pdf, "__arrow_c_stream__")
    got = pa_from_dataframe(to_interchange(pdf))
    assert got.column("a").to_pylist() == [1, 2, 3]
    assert got.column("s").to_pylist() == ["x", None, "z"]
    assert got.column("c").to_pylist() == ["p", "q", "p"]


def test_single_arrays_and_series():
    x = to_interchange(pa.chunked_array([[1, 2], [3]]))
    assert x.num_columns() == 1 and x.num_rows() == 3 and x.num_chunks() == 2
    pl = pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly
    x = to_interchange(pl.Series("name", [1.0, None]))
    assert x.column_names() == ["name"]
    assert x.get_column(0).describe_null == (ColumnNullType.USE_BITMASK, 0)
    assert x.get_column(0).null_count == 1


def test_dates_durations_float16_pandas():
    t = pa.table({
        "d": pa.array([dt.date(2020, 1, 2), None, dt.date(1969, 12, 31)]),
        "d64": pa.array([dt.date(2020, 1, 2), dt.date(2021, 1, 1), None], pa.date64()),
        "h": pa.array(np.array([1.5, -2, 0], np.float16)),
        "du": pa.array([dt.timedelta(seconds=3), None, dt.timedelta(1)]),
    })
    x = to_interchange(t)
    assert x.get_column_by_name("d").dtype == (DtypeKind.DATETIME, 32, "tdD", "=")
    assert x.get_column_by_name("h").dtype == (DtypeKind.FLOAT, 16, "e", "=")
    assert x.get_column_by_name("du").dtype == (DtypeKind.DATETIME, 64, "tDu", "=")
    h = np.asarray(x.get_column_by_name("h").get_buffers()["data"][0])
    assert h.dtype == np.float16 and h.tolist() == [1.5, -2, 0]
    got = pandas_read(t.select(["d", "d64"]))  # pandas reads no float16
    assert got["d"][0] == pd.Timestamp("2020-01-02") and pd.isna(got["d"][1])
    assert got["d"][2] == pd.Timestamp("1969-12-31")
    assert got["d64"][1] == pd.Timestamp("2021-01-01") and pd.isna(got["d64"][2])


def test_buffers_are_zero_copy_and_offsets():
    arr = pa.array(np.arange(100, dtype=np.float64))
    t = pa.table({"v": arr, "s": pa.array([str(k) for k in range(100)])})
    base = arr.buffers()[1].address
    x = to_interchange(t.slice(10, 20))
    col = x.get_column(0)
    buf, dtype = col.get_buffers()["data"]
    assert col.offset == 0
    assert buf.ptr == base + 10 * 8 and buf.bufsize == 20 * 8
    assert dtype == (DtypeKind.FLOAT, 64, "g", "=")
    assert isinstance(buf, dfbuffer.Buffer) and buf.native == dfbuffer.NativeFormat.ARROW
    assert np.asarray(buf).tolist() == list(range(10, 30))
    assert buf.__dlpack_device__() == (1, 0)
    s = x.get_column(1).get_buffers()
    assert s["offsets"][1] == (DtypeKind.INT, 32, "i", "=")
    assert s["data"][1] == (DtypeKind.UINT, 8, "C", "=")
    assert s["validity"] is None


@pytest.mark.parametrize("start", [0, 3, 8, 13, 45])
@pytest.mark.parametrize("allow_copy", [True, False])
def test_bitmap_offsets(start, allow_copy):
    vals = [None if k % 3 == 0 else k for k in range(64)]
    bools = [k % 5 == 0 for k in range(64)]
    t = pa.table({"v": vals, "b": bools}).slice(start, 11)
    x = to_interchange(t, allow_copy=allow_copy)
    col = x.get_column(0)
    if allow_copy or start % 8 == 0:
        assert col.offset == 0
    else:
        assert col.offset == start % 8
    assert col.describe_null == (ColumnNullType.USE_BITMASK, 0)
    assert pa_from_dataframe(x).to_pylist() == t.to_pylist()
    got = pandas_read(x, allow_copy=allow_copy)
    assert got["b"].tolist() == t.column("b").to_pylist()
    assert [None if np.isnan(v) else v for v in got["v"]] == t.column("v").to_pylist()


def test_dataframe_api():
    t = table(5)
    x = to_interchange(t)
    assert x.__dataframe__() is x
    assert x.__dataframe__(allow_copy=False)._allow_copy is False
    assert x.metadata == {} and x.num_columns() == len(t.column_names)
    assert x.num_rows() == 5 and x.column_names() == t.column_names
    assert [c.size() for c in x.get_columns()] == [5] * len(t.column_names)
    assert x.select_columns([1, 0]).column_names() == ["u8", "i"]
    with pytest.raises(TypeError):
        x.select_columns_by_name("i")
    with pytest.raises(KeyError):
        x.get_column_by_name("nope")
    col = x.get_column_by_name("c")
    cat = col.describe_categorical
    assert cat["is_dictionary"] and not cat["is_ordered"]
    assert cat["categories"]._col.tolist() == ["a", "b", "c"]
    with pytest.raises(TypeError):
        _ = x.get_column(0).describe_categorical
    assert col.metadata == {} and col.num_chunks() == 1
    assert [c.size() for c in col.get_chunks(2)] == [2, 3]
    assert hasattr(x, "__arrow_c_stream__") and x._df is x


def test_unsupported_types_named():
    t = pa.table({"l": pa.array([[1], [2, 3]]), "d": pa.array([1, 2], pa.decimal128(5, 2)),
                  "w": pa.array([b"ab", b"cd"], pa.binary(2)), "ok": [1, 2]})
    x = to_interchange(t)
    for name, fmt in [("l", "+l"), ("d", "d:5,2"), ("w", "w:2")]:
        with pytest.raises(NotImplementedError, match=fmt.replace("+", r"\+")):
            _ = x.get_column_by_name(name).dtype
    got = pa_from_dataframe(x.select_columns_by_name(["ok"]))
    assert got.column("ok").to_pylist() == [1, 2]


def test_lifetime_total_allocated_bytes(collect):
    before = pa.total_allocated_bytes()
    v = pa.compute.add(pa.array(np.arange(200_000, dtype=np.int64)), 0)  # Arrow-allocated
    t = pa.table({"v": v, "s": pa.compute.cast(v, pa.string())})
    del v
    after = pa.total_allocated_bytes()
    assert after - before >= 1_600_000
    x = to_interchange(t)
    buf = x.get_column(0).get_buffers()["data"][0]
    owner = buf.owner
    assert "dfbuffer.arrow_array" in repr(owner)
    wbuf = weakref.ref(buf)
    view = np.asarray(buf)
    del t, x, buf, owner
    collect()
    assert pa.total_allocated_bytes() >= after       # the view keeps the batch alive
    assert wbuf() is not None
    assert view[12345] == 12345
    del view
    collect()
    assert wbuf() is None
    assert pa.total_allocated_bytes() <= before      # released after the last view
