"""dfbuffer.to_arrow: any producer dfbuffer reads as an Arrow PyCapsule producer,
zero-copy, the owners kept alive by the release callbacks, without pyarrow."""

from __future__ import annotations

import gc
import threading
import warnings
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from child_processes import ChildProcess

import dfbuffer


def _addr(chunked: pa.ChunkedArray, i: int = 1) -> int:
    return chunked.chunk(0).buffers()[i].address


def test_pyarrow_table_round_trips_zero_copy():
    t = pa.table({"a": [1, 2, None], "s": ["x", None, "zz"], "b": [True, None, False],
                  "c": pa.array(["u", "v", "u"]).dictionary_encode(),
                  "t": pa.array([1, 2, 3], pa.timestamp("us", "UTC"))})
    out = pa.table(dfbuffer.to_arrow(t))
    assert out.equals(t)
    assert _addr(out["a"]) == _addr(t["a"])
    assert _addr(out["s"], 2) == _addr(t["s"], 2)


def test_slices_keep_their_rows():
    t = pa.table({"a": pa.array([1, 2, 3, None, 5]), "s": ["a", "b", None, "d", "e"]})
    out = pa.table(dfbuffer.to_arrow(t.slice(3)))
    assert out.to_pylist() == t.slice(3).to_pylist()


def test_polars_frame_is_read_by_polars_zero_copy():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"x": np.arange(5.0), "s": ["a", "b", None, "d", "e"]})
    out = pl.DataFrame(dfbuffer.to_arrow(df))
    assert out.equals(df)
    src = pa.table(df)
    assert _addr(pa.table(dfbuffer.to_arrow(df))["x"]) == _addr(src["x"])


def test_columns_selects_by_name():
    t = pa.table({"a": [1], "b": [2.0], "c": ["x"]})
    assert pa.table(dfbuffer.to_arrow(t, columns=["c", "a"])).column_names == ["c", "a"]
    with pytest.raises(KeyError):
        dfbuffer.to_arrow(t, columns=["nope"])


def test_mapping_of_arrays_and_buffers_shares_memory():
    x = np.arange(6, dtype="i4")
    y = np.linspace(0, 1, 6)
    m = np.ma.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], mask=[0, 1, 0, 0, 0, 1])
    out = pa.table(dfbuffer.to_arrow({"x": x, "y": dfbuffer.Buffer.from_object(y), "m": m,
                                      "b": x % 2 == 0,
                                      "d": np.arange(6).astype("M8[ms]")}))
    assert out["x"].to_pylist() == x.tolist()
    assert _addr(out["x"]) == x.ctypes.data
    assert _addr(out["y"]) == y.ctypes.data
    assert out["m"].to_pylist() == [1.0, None, 3.0, 4.0, 5.0, None]
    assert out["b"].to_pylist() == [True, False] * 3
    assert out["d"].type == pa.timestamp("ms")


def test_mapping_rejects_unequal_lengths_and_objects():
    with pytest.raises(ValueError, match="'b'"):
        dfbuffer.to_arrow({"a": np.arange(3), "b": np.arange(4)})
    with pytest.raises(TypeError):
        dfbuffer.to_arrow({"a": np.array(["x", "y"], dtype=object)})


def test_interchange_only_producer_reaches_arrow():
    df = pd.DataFrame({"a": [1, 2, 3], "f": [0.5, np.nan, 1.5], "s": ["x", None, "z"],
                       "c": pd.Categorical(["u", None, "u"], ordered=True),
                       "n": pd.array([1, None, 3], dtype="Int64"),
                       "b": pd.array([True, None, False], dtype="boolean")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = df.__dataframe__()
    from producers import ProtocolOnlyFrame

    out = pa.table(dfbuffer.to_arrow(ProtocolOnlyFrame(x)))  # the protocol's buffers
    assert out["a"].to_pylist() == [1, 2, 3]
    assert out["s"].to_pylist() == ["x", None, "z"]
    assert out["c"].to_pylist() == ["u", None, "u"] and out["c"].type.ordered
    assert out["n"].to_pylist() == [1, None, 3]
    assert out["b"].to_pylist() == [True, None, False]
    assert _addr(out["a"]) == df["a"].to_numpy().ctypes.data


def test_pandas_sliced_arrow_backed_interchange_object_gives_the_right_rows():
    df = pd.DataFrame({"a": pd.array([1, 2, 3], dtype="int64[pyarrow]")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = df.iloc[1:].__dataframe__()
    assert pa.table(dfbuffer.to_arrow(x))["a"].to_pylist() == [2, 3]


def test_pandas_frame_numeric_columns_are_zero_copy_and_nan_is_null():
    df = pd.DataFrame({"f": [0.5, np.nan, 1.5], "i": [1, 2, 3], "s": ["x", None, "z"],
                       "t": pd.to_datetime(["2020-01-01", None, "2020-01-03"])})
    out = pa.table(dfbuffer.to_arrow(df))
    ref = pa.table(df)
    assert out.to_pylist() == ref.to_pylist()  # NaN and NaT are nulls, as pandas says
    if int(pd.__version__.split(".")[0]) >= 3:  # pandas 2 copies a frame's sub-frame
        assert _addr(out["i"]) == df["i"].to_numpy().ctypes.data
        assert _addr(out["f"]) == df["f"].to_numpy().ctypes.data
    num = pd.DataFrame({"a": np.arange(4.0), "b": np.arange(4)})
    assert _addr(pa.table(dfbuffer.to_arrow(num))["a"]) == num["a"].to_numpy().ctypes.data
    assert dfbuffer.to_arrow(df, columns=["s", "i"]).column_names == ["s", "i"]



def _strided_frames():
    base = pd.DataFrame({"f": [0.5, np.nan, 1.5, 2.5, 3.5, 4.5], "i": np.arange(6),
                         "t": pd.to_datetime(["2020-01-01", None, "2020-01-03",
                                              "2020-01-04", None, "2020-01-06"])})
    block = np.arange(12.0).reshape(4, 3)  # columns across the block's rows
    return {"every other row": base.iloc[::2], "reversed": base[::-1],
            "2-D block": pd.DataFrame(block, columns=["x", "y", "z"], copy=False)}


@pytest.mark.parametrize("which", ["every other row", "reversed", "2-D block"])
def test_strided_pandas_columns_are_copied_into_the_export(which):
    df = _strided_frames()[which]
    ref = pa.Table.from_pandas(df, preserve_index=False)
    out = pa.table(dfbuffer.to_arrow(df))
    assert out.to_pylist() == ref.to_pylist()  # NaN and NaT are nulls, as pandas says
    assert out.schema.types == ref.schema.types
    ix = dfbuffer.to_interchange(df)
    assert pa.table(ix).to_pylist() == ref.to_pylist()
    assert pd.api.interchange.from_dataframe(ix).shape == df.shape
    # the copy is refused only where no copy was allowed
    with pytest.raises(dfbuffer.CopyError, match=r"column '.*': exporting a strided "
                       "column to Arrow needs a copy, which allow_copy=False forbids"):
        dfbuffer.to_interchange(df, allow_copy=False)


def test_strided_mapping_values_are_copied_into_the_export():
    x = np.arange(10.0)
    values = {"every other": x[::2], "reversed": dfbuffer.Buffer.from_object(x[::-2]),
              "masked": np.ma.MaskedArray(x[1::2], mask=[0, 1, 0, 0, 0]),
              "contiguous": x[:5]}
    out = pa.table(dfbuffer.to_arrow(values))
    assert out.to_pydict() == {"every other": [0.0, 2.0, 4.0, 6.0, 8.0],
                               "reversed": [9.0, 7.0, 5.0, 3.0, 1.0],
                               "masked": [1.0, None, 5.0, 7.0, 9.0],
                               "contiguous": [0.0, 1.0, 2.0, 3.0, 4.0]}
    assert np.shares_memory(out["contiguous"].chunk(0).to_numpy(), x)
    assert not np.shares_memory(out["every other"].chunk(0).to_numpy(), x)
    assert pa.table(dfbuffer.to_interchange(values)).to_pydict() == out.to_pydict()
    with pytest.raises(dfbuffer.CopyError, match=r"column 'every other': exporting a "
                       "strided column to Arrow needs a copy, which allow_copy=False"):
        dfbuffer.to_interchange({"every other": x[::2]}, allow_copy=False)
    ix = dfbuffer.to_interchange({"contiguous": x[:5]}, allow_copy=False)
    assert np.shares_memory(pa.table(ix)["contiguous"].chunk(0).to_numpy(), x)


def test_contiguous_pandas_columns_stay_zero_copy_beside_strided_ones():
    a = np.arange(8.0)
    df = pd.DataFrame({"c": a, "s": np.arange(16.0)[::2]}, copy=False)
    if not np.shares_memory(df["c"].to_numpy(), a):
        pytest.skip("this pandas copies the arrays of a dict")
    out = pa.table(dfbuffer.to_arrow(df))
    assert np.shares_memory(out["c"].chunk(0).to_numpy(), a)
    assert out["s"].to_pylist() == list(np.arange(16.0)[::2])
    alone = pd.DataFrame({"c": a}, copy=False)  # (pandas 2 copies a sub-frame)
    view = pa.table(dfbuffer.to_interchange(alone, allow_copy=False))
    assert np.shares_memory(view["c"].chunk(0).to_numpy(), a)


def test_data_outlives_the_source():
    t = pa.table({"a": np.arange(1000, dtype="i8")})
    wr = weakref.ref(t)
    exp = dfbuffer.to_arrow(t)
    del t
    gc.collect()
    assert wr() is None
    out = pa.table(exp)
    del exp
    gc.collect()
    assert out["a"].to_pylist() == list(range(1000))

    arr = np.arange(100.0)
    wa = weakref.ref(arr)
    cap = dfbuffer.to_arrow({"v": arr}).__arrow_c_stream__()
    del arr
    gc.collect()
    assert wa() is not None  # the capsule's arrays hold it
    out = pa.RecordBatchReader._import_from_c_capsule(cap).read_all()
    del cap
    gc.collect()
    assert out["v"].to_pylist() == [float(i) for i in range(100)]
    del out
    gc.collect()
    assert wa() is None


def test_reference_cycle_is_collected():
    class Holder:
        pass

    h = Holder()
    h.arr = np.arange(10)
    h.exp = dfbuffer.to_arrow({"v": h.arr})
    h.cap = h.exp.__arrow_c_stream__()
    h.self = h
    wr = weakref.ref(h)
    wa = weakref.ref(h.arr)
    del h
    gc.collect()
    assert wr() is None and wa() is None


def test_racing_writer_never_crashes():
    arr = np.zeros(100_000, dtype="i8")
    stop = threading.Event()

    def write():
        v = 0
        while not stop.is_set():
            v += 1
            arr[:] = v

    th = threading.Thread(target=write)
    th.start()
    try:
        for _ in range(20):
            got = pa.table(dfbuffer.to_arrow({"v": arr}))["v"].to_numpy()
            assert got.min() >= 0
    finally:
        stop.set()
        th.join()


def test_stream_can_be_read_many_times():
    exp = dfbuffer.to_arrow(pa.table({"a": [1, 2]}))
    assert pa.table(exp).equals(pa.table(exp))
    assert exp.num_rows == 2 and exp.column_names == ["a"]
    schema = pa.schema(exp)
    assert schema.field("a").type == pa.int64()


def test_to_interchange_object_is_an_arrow_producer():
    t = pa.table({"a": [1, 2, 3], "s": ["x", "y", None]})
    x = dfbuffer.to_interchange(t)
    out = pa.table(x)
    assert out.equals(t)
    assert _addr(out["a"]) == _addr(t["a"])
    assert x._df is x
    assert x.select_columns_by_name(["a"])._df.column_names() == ["a"]


# a fresh interpreter (tests/child_processes.py runs it beside the in-process tests)
_NO_PYARROW = ChildProcess.python("import sys, numpy as np, dfbuffer\n"
                                  "e = dfbuffer.to_arrow({'a': np.arange(3)})\n"
                                  "e.__arrow_c_stream__(); e.__arrow_c_schema__()\n"
                                  "assert 'pyarrow' not in sys.modules\n")


@pytest.mark.child_process(_NO_PYARROW)
def test_no_pyarrow_import():
    out = _NO_PYARROW.result()
    assert out.returncode == 0, out.stderr


def test_interchange_masks_arrow_has_no_form_for_become_bitmaps():
    from producers import frame, strings

    vals = ["a", None, "ccc", None]
    for kw in ({"mask": "bytemask"}, {"mask": "bytemask", "null_value": 1},
               {"mask": "bitmask", "null_value": 1}, {"offset": 3}):
        out = pa.table(dfbuffer.to_arrow(frame(s=strings(vals, **kw))))
        assert out["s"].to_pylist() == vals, kw


def test_interchange_bad_string_offsets_raise_naming_the_column():
    from producers import frame, strings

    bad = strings(["ab", "c"], offsets_override=np.array([0, 5, 2, 9], dtype=np.int32))
    with pytest.raises(ValueError, match="'s'"):
        dfbuffer.to_arrow(frame(s=bad))
    short = strings(["ab", "c"], data_bufsize=1)
    with pytest.raises((ValueError, BufferError), match="'s'"):
        dfbuffer.to_arrow(frame(s=short))


def test_racing_writer_on_string_offsets_never_reaches_past_the_data():
    from producers import frame, strings

    col = strings(["x" * 8] * 2000)
    offs = col.get_buffers()["offsets"][0]._x
    good = offs.copy()
    stop = threading.Event()

    def write():
        while not stop.is_set():
            offs[1000] = 10**9  # past the data: never read through the export
            offs[:] = good

    th = threading.Thread(target=write)
    th.start()
    try:
        for _ in range(50):
            try:
                t = pa.table(dfbuffer.to_arrow(frame(s=col)))
            except ValueError:
                continue  # the copy caught the bad offset
            t.validate(full=True)  # the copied offsets are the checked ones
    finally:
        stop.set()
        th.join()


def test_export_is_also_an_interchange_object_and_an_array():
    exp = dfbuffer.to_arrow({"a": np.arange(3), "b": np.arange(3.0)})
    assert np.asarray(exp).tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    assert dfbuffer.from_dataframe(exp.__dataframe__())["a"].tolist() == [0, 1, 2]
    assert "3 rows" in repr(exp)


def test_bad_input_is_a_type_error():
    with pytest.raises(TypeError, match="to_arrow"):
        dfbuffer.to_arrow(42)
    with pytest.raises(TypeError):
        dfbuffer.to_arrow({"a": np.arange(3)}, columns="a")
