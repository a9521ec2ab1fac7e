"""Lifetime of converter results: a zero-copy result keeps exactly the
producer's buffer object alive (one reference per buffer), so it stays valid
after the source frame, the interchange objects and everything else are gone
and the allocator has reused the memory; and it releases that buffer object
when it dies."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from kernel_checks import churn
from producers import (
    ProtocolOnlyFrame,
    base_chain,
    datetimes,
    frame,
    primitive,
    strings,
    to_list,
    with_mask,
)

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def buffer_owner(res):
    arr = res.data if isinstance(res, np.ma.MaskedArray) else res
    chain = base_chain(arr)
    assert chain and isinstance(chain[-1], dfbuffer.Buffer), chain
    return chain[-1].owner


# --------------------------------------------------------------------------
# hand-written producer: exact weakref bookkeeping


def test_buffer_object_lives_exactly_as_long_as_result(collect):
    col = primitive(np.arange(1000, dtype="i8"), offset=7)
    buf = col.data_buffer
    wr_buf = weakref.ref(buf)
    wr_store = weakref.ref(buf._x)
    res = dfbuffer.column_to_ndarray(col)
    assert buffer_owner(res) is buf
    del col, buf
    gc.collect()
    assert wr_buf() is not None and wr_store() is not None
    churn(8007 * 8)
    np.testing.assert_array_equal(res, np.arange(1000))
    view = res[10:20]  # a view of the result keeps it alive too
    del res
    gc.collect()
    assert wr_buf() is not None
    np.testing.assert_array_equal(view, np.arange(10, 20))
    del view
    gc.collect()
    assert wr_buf() is None and wr_store() is None


def test_masked_result_keeps_data_and_releases_validity(collect):
    valid = np.arange(50) % 3 != 0
    col = with_mask(np.arange(50, dtype="f4"), valid, offset=3)
    data_buf = col.data_buffer
    wr_data = weakref.ref(data_buf)
    wr_valid = weakref.ref(col.get_buffers()["validity"][0])
    res = dfbuffer.column_to_ndarray(col)
    assert isinstance(res, np.ma.MaskedArray)
    del col, data_buf
    gc.collect()
    churn(64 * 4)
    assert wr_data() is not None
    assert to_list(res) == [float(i) if valid[i] else None for i in range(50)]
    del res
    gc.collect()
    assert wr_data() is None and wr_valid() is None


def test_buffer_to_ndarray_result_owns_buffer(collect):
    x = np.arange(300, dtype="u2")
    buf = primitive(x).data_buffer
    wr = weakref.ref(buf)
    res = dfbuffer.buffer_to_ndarray(buf, (1, 16, "S", "="), offset=5, length=100)
    del buf, x
    gc.collect()
    churn(600)
    np.testing.assert_array_equal(res, np.arange(5, 105))
    assert wr() is not None
    del res
    gc.collect()
    assert wr() is None


def test_copying_results_hold_no_buffer(collect):
    col = strings(["a", None, "ccc"] * 10, offset=2)
    wr = [weakref.ref(col.get_buffers()[k][0]) for k in ("data", "offsets", "validity")]
    res = dfbuffer.column_to_ndarray(col)
    del col
    gc.collect()
    assert all(w() is None for w in wr)
    assert to_list(res)[:3] == ["a", None, "ccc"]


def test_from_dataframe_results_independent(collect):
    df = frame(
        a=primitive(np.arange(100, dtype="i4")),
        b=primitive(np.arange(100, 200, dtype="i8"), offset=1),
        t=datetimes(np.arange(100, dtype="i8"), "tsu:UTC"),
    )
    wrs = {k: weakref.ref(df.get_column_by_name(k).data_buffer) for k in "abt"}
    out = dfbuffer.from_dataframe(df)
    b = out["b"]
    del df, out
    gc.collect()
    assert wrs["a"]() is None and wrs["t"]() is None
    assert wrs["b"]() is not None
    churn(800)
    np.testing.assert_array_equal(b, np.arange(100, 200))
    del b
    gc.collect()
    assert wrs["b"]() is None


def test_no_reference_cycle_needed(collect):
    # freed by reference counting alone, without the cyclic GC
    col = primitive(np.arange(10))
    wr = weakref.ref(col.data_buffer)
    res = dfbuffer.column_to_ndarray(col)
    del col
    gc.disable()
    try:
        del res
        assert wr() is None
    finally:
        gc.enable()


# --------------------------------------------------------------------------
# pandas


def test_pandas_numeric_after_frame_deleted(collect):
    src = np.arange(10_000, dtype="f8") * 0.5
    df = pd.DataFrame({"a": src.copy(), "b": np.arange(10_000)})
    x = ProtocolOnlyFrame(df.__dataframe__())
    col = x.get_column_by_name("a")
    res = dfbuffer.column_to_ndarray(col)
    owner = buffer_owner(res)
    assert type(owner).__name__ == "PandasBuffer"
    wr = weakref.ref(owner)
    del df, x, col, owner
    gc.collect()
    churn(80_000, rounds=50)
    np.testing.assert_array_equal(res, src)
    assert wr() is not None
    del res
    gc.collect()
    assert wr() is None


def test_pandas_nullable_after_delete(collect):
    vals = [None if i % 9 == 0 else i for i in range(5000)]
    df = pd.DataFrame({"i": pd.array(vals, dtype="Int32")})
    res = dfbuffer.from_dataframe(df)["i"]
    del df
    gc.collect()
    churn(5000 * 4, rounds=300)
    assert to_list(res) == vals


# --------------------------------------------------------------------------
# pyarrow


def test_pyarrow_after_table_deleted(collect):
    vals = list(range(20_000))
    t = pa.table({"a": pa.array(vals, pa.int64()), "s": pa.array([str(v) for v in vals])})
    x = t.slice(17).__dataframe__()
    res = dfbuffer.column_to_ndarray(x.get_column_by_name("a"))
    owner = buffer_owner(res)
    wr = weakref.ref(owner)
    del t, x, owner
    gc.collect()
    churn(160_000, rounds=50)
    np.testing.assert_array_equal(res, np.arange(17, 20_000))
    assert wr() is not None
    del res
    gc.collect()
    assert wr() is None
