"""to_matrix(..., out=): the result written into the caller's array."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer


def _mixed_table(n: int = 1001) -> pa.Table:
    """13 float64 columns over three chunks (one with nulls), an int32 and a float32."""
    rng = np.random.default_rng(1)
    cols = {}
    for j in range(13):
        v = rng.random(n)
        mask = (np.arange(n) % 17 == j) if j == 5 else None
        arr = pa.array(v, mask=mask)
        cols[f"f{j}"] = pa.chunked_array([arr.slice(0, 300), arr.slice(300, 1), arr.slice(301)])
    cols["i"] = pa.array(rng.integers(-5, 5, n).astype(np.int32))
    cols["h"] = pa.array(rng.random(n).astype(np.float32))
    return pa.table(cols)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("ncols", [1, 4, 8, 15])
def test_out_gets_what_to_matrix_returns(order, ncols):
    t = _mixed_table().select(list(range(ncols)) if ncols < 15 else list(range(15)))
    want = dfbuffer.to_matrix(t)
    out = np.full(want.shape, -1.0, order=order)
    res = dfbuffer.to_matrix(t, out=out)
    assert res is out
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("ncols", range(1, 12))
def test_c_order_every_column_count(ncols, dtype):
    # runs of 8, 4 and 2 columns of 8-byte values and of 8 and 4 of 4-byte values are
    # interleaved together, the rest one by one; a row count of 4k + 1 leaves a last row
    # outside the two- and four-row steps
    rng = np.random.default_rng(ncols)
    src = np.asfortranarray((rng.random((2 * 4098 + 1, ncols)) * 1e6).astype(dtype))
    src[0, 0] = np.nan if dtype != np.int32 else -(2**31)
    df = pd.DataFrame(src, copy=False)
    out = np.full(src.shape, -1, dtype)
    assert dfbuffer.to_matrix(df, out=out, threads=1) is out
    np.testing.assert_array_equal(out, src)
    # a chunk border at row 300 in every third column: it cannot join the interleaved
    # runs of the block around that row
    cols = {}
    for j in range(ncols):
        arr = pa.array(src[:, j])
        cols[f"c{j}"] = pa.chunked_array([arr.slice(0, 300), arr.slice(300)]) if j % 3 == 2 else arr
    out[:] = -1
    assert dfbuffer.to_matrix(pa.table(cols), out=out, threads=1) is out
    np.testing.assert_array_equal(out, src)


def test_out_pandas_frame_and_cast():
    src = np.asfortranarray(np.random.default_rng(0).random((777, 9)))
    df = pd.DataFrame(src, columns=[f"c{j}" for j in range(9)], copy=False)
    for order in "CF":
        out = np.empty((777, 9), order=order)
        assert dfbuffer.to_matrix(df, out=out) is out
        np.testing.assert_array_equal(out, src)
        out32 = np.empty((777, 9), np.float32, order=order)
        dfbuffer.to_matrix(df, out=out32)
        np.testing.assert_array_equal(out32, src.astype(np.float32))
    # an explicit dtype= equal to out's
    out = np.empty((777, 9), np.float32)
    dfbuffer.to_matrix(df, out=out, dtype="float32")
    np.testing.assert_array_equal(out, src.astype(np.float32))


def test_out_with_nulls_mask():
    t = _mixed_table()
    out = np.empty((t.num_rows, t.num_columns))
    res = dfbuffer.to_matrix(t, out=out, nulls="mask")
    want = dfbuffer.to_matrix(t, nulls="mask")
    assert isinstance(res, np.ma.MaskedArray) and np.shares_memory(res.data, out)
    np.testing.assert_array_equal(res.mask, want.mask)
    np.testing.assert_array_equal(res.filled(0), want.filled(0))


def test_out_refused_naming_what_differs():
    t = pa.table({"a": [1.0, 2.0, 3.0], "b": [4.0, 5.0, 6.0]})
    cases = [
        (np.empty((3, 3)), ValueError, r"shape \(3, 3\), the frame gives \(3, 2\)"),
        (np.empty((2, 2)), ValueError, "shape"),
        (np.empty((3, 2), np.int64), ValueError, "does not cast"),
        (np.empty((3, 4))[:, ::2], ValueError, "contiguous"),
        (np.empty((3, 2), ">f8"), ValueError, "native byte order"),
        (np.empty((3, 2), "U3"), ValueError, "dtype"),
        (np.empty(6), ValueError, "shape"),
        ([[0.0, 0.0]] * 3, TypeError, "numpy.ndarray"),
    ]
    for out, exc, match in cases:
        with pytest.raises(exc, match=match):
            dfbuffer.to_matrix(t, out=out)
    ro = np.empty((3, 2))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        dfbuffer.to_matrix(t, out=ro)
    with pytest.raises(ValueError, match="dtype= is"):
        dfbuffer.to_matrix(t, out=np.empty((3, 2), np.float32), dtype="float64")
    with pytest.raises(ValueError, match="order="):
        dfbuffer.to_matrix(t, out=np.empty((3, 2), order="F"), order="C")
    # nulls into an integer out
    tn = pa.table({"a": pa.array([1, None, 3])})
    with pytest.raises(ValueError, match="null"):
        dfbuffer.to_matrix(tn, out=np.empty((3, 1), np.int64), dtype="int64")


def test_out_sharing_a_columns_memory_is_refused():
    buf = np.arange(6.0).reshape(3, 2, order="F")
    t = pa.table({"a": buf[:, 0], "b": buf[:, 1]})  # zero-copy over buf's memory
    with pytest.raises(ValueError, match="shares memory with column 'a'"):
        dfbuffer.to_matrix(t, out=buf)
    assert buf[:, 1].tolist() == [3.0, 4.0, 5.0]


def test_out_in_a_loop_allocates_nothing():
    from test_no_leaks import check

    src = np.random.default_rng(0).random((50_000, 8))
    t = pa.table({f"c{j}": src[:, j].copy() for j in range(8)})
    df = pd.DataFrame(src, columns=[f"c{j}" for j in range(8)])
    for frame in (t, df):
        for order in "CF":
            out = np.empty(src.shape, order=order)

            def call(frame=frame, out=out):
                assert dfbuffer.to_matrix(frame, out=out) is out

            # nothing kept per call: the suite's leak measurement, which measures again
            # after a traced first window when bounded caches (pandas 2's churn a few
            # KiB up and down over any window) fill the first
            check("to_matrix(out=)", call, 300)
            # and no output-sized block made along the way
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                tracemalloc.reset_peak()
                for _ in range(50):
                    call()
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert peak - before < out.nbytes // 50
            np.testing.assert_array_equal(out, src)


def _masked_over(
    buf: np.ndarray, at: int, n: int, reverse: bool
) -> tuple[pd.DataFrame, np.ndarray]:
    """A frame of one Int64 column whose byte mask is buf[at:at + n] (reversed
    when asked: its first byte is then the highest), and that mask."""
    base = buf[at : at + n].view(bool)
    base[::3] = True
    mask = base[::-1] if reverse else base
    arr = pd.arrays.IntegerArray(np.arange(n, dtype="i8"), mask)
    df = pd.DataFrame({"m": arr}, copy=False)
    assert np.shares_memory(df["m"].array._mask, buf)  # pandas kept the mask
    return df, mask


@pytest.mark.parametrize("nulls", ["fill", "mask"])
def test_out_over_the_tail_of_a_byte_mask_is_refused(nulls):
    """A byte mask of n rows is n bytes, not n / 8 + 1: an out= laid over its
    last bytes would be read while it is written."""
    n = 1000
    buf = np.zeros(9 * n + 64, np.uint8)
    df, mask = _masked_over(buf, 0, n, reverse=False)
    before = mask.copy()
    out = buf[n - 8 : n - 8 + 8 * n].view(np.float64).reshape(n, 1)
    with pytest.raises(ValueError, match="shares memory with column 'm'"):
        dfbuffer.to_matrix(df, out=out, nulls=nulls)
    np.testing.assert_array_equal(mask, before)
    # just past the mask: nothing shared, the values are from_dataframe's
    out = buf[n + 8 - n % 8 : n + 8 - n % 8 + 8 * n].view(np.float64).reshape(n, 1)
    res = dfbuffer.to_matrix(df, out=out, nulls=nulls)
    want = dfbuffer.from_dataframe(df)["m"]
    np.testing.assert_array_equal(np.ma.getmaskarray(want), before)
    np.testing.assert_array_equal(np.ma.getdata(res)[~before, 0], np.ma.getdata(want)[~before])


@pytest.mark.parametrize("order", ["C", "F"])
def test_out_below_a_reversed_mask_is_refused(order):
    """A reversed byte mask runs down from its first byte: an out= below that
    byte, over the mask's other rows, is refused."""
    n = 1000
    buf = np.zeros(17 * n + 64, np.uint8)
    df, mask = _masked_over(buf, 16 * n - 8, n, reverse=True)
    df["x"] = np.arange(n, dtype="f8")
    before = mask.copy()
    out = buf[: 16 * n].view(np.float64).reshape((n, 2), order=order)
    with pytest.raises(ValueError, match="shares memory with column 'm'"):
        dfbuffer.to_matrix(df, out=out)
    np.testing.assert_array_equal(mask, before)


def test_out_below_a_reversed_block_is_refused():
    arr = np.arange(40.0).reshape(20, 2)
    df = pd.DataFrame(arr[::-1], copy=False)
    assert np.shares_memory(df[0].to_numpy(), arr)
    with pytest.raises(ValueError, match="shares memory with column '0'"):
        dfbuffer.to_matrix(df, out=arr.reshape(20, 2))
    assert arr.ravel().tolist() == list(np.arange(40.0))


def test_out_beside_a_broadcast_block_is_taken():
    """A broadcast column is one value: an out= right after it shares nothing."""
    buf = np.zeros(1 + 3 * 50)
    df = pd.DataFrame(np.broadcast_to(buf[:1], (50, 3)), copy=False)
    buf[0] = 2.5
    assert np.shares_memory(df[0].to_numpy(), buf)
    out = buf[1:].reshape(50, 3)
    assert dfbuffer.to_matrix(df, out=out) is out
    assert (out == 2.5).all() and buf[0] == 2.5
    with pytest.raises(ValueError, match="shares memory with column '0'"):
        dfbuffer.to_matrix(df, out=buf[:150].reshape(50, 3))
