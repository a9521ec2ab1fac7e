"""to_matrix of pandas frames whose blocks and masks are NumPy views of any
stride: broadcast (stride 0), reversed (negative), strided, read in place.

Every frame is checked to hold the view (np.shares_memory with its base: pandas
did not copy it), and every result against from_dataframe's reading of the same
frame and against NumPy's values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dfbuffer

N = 2100  # rows: more than one conversion piece (1024) and several 64-row thread shares


def _expected(df: pd.DataFrame, dtype="f8") -> tuple[np.ndarray, np.ndarray]:
    """from_dataframe's columns stacked: values (NaN at nulls) and the null mask."""
    got = dfbuffer.from_dataframe(df)
    vals, nulls = [], []
    for name in df.columns:
        col = got[name]
        miss = np.ma.getmaskarray(col)
        v = np.ma.getdata(col).astype(dtype)
        v[miss] = np.nan
        vals.append(v)
        nulls.append(miss)
    return np.column_stack(vals), np.column_stack(nulls)


def _check_all_modes(df: pd.DataFrame, numpy_values: np.ndarray) -> None:
    """to_matrix in C and F order, with nulls fill / mask / raise and with two
    threads, against from_dataframe and (where no null is) NumPy's values."""
    expect, nulls = _expected(df)
    np.testing.assert_array_equal(np.where(nulls, np.nan, numpy_values), expect)
    for order in "CF":
        for threads in (None, 2):
            got = dfbuffer.to_matrix(df, order=order, threads=threads, dtype="f8")
            np.testing.assert_array_equal(got, expect)
            m = dfbuffer.to_matrix(df, order=order, threads=threads, nulls="mask", dtype="f8")
            np.testing.assert_array_equal(np.ma.getmaskarray(m), nulls)
            np.testing.assert_array_equal(np.ma.getdata(m)[~nulls], expect[~nulls])
            if nulls.any():
                with pytest.raises(ValueError, match="null"):
                    dfbuffer.to_matrix(df, order=order, nulls="raise")
            else:
                raised = dfbuffer.to_matrix(df, order=order, threads=threads, nulls="raise")
                np.testing.assert_array_equal(raised, numpy_values.astype(raised.dtype))


def _block_views(dtype: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(base, 2-D view) pairs: a frame made over the view keeps it as its block."""
    rng = np.random.default_rng(7)
    base = (rng.integers(-60, 60, (N, 4)) / 4).astype(dtype)
    one = base[0].copy()
    fbase = np.asfortranarray(base)
    return {
        "broadcast": (one, np.broadcast_to(one, (N, 4))),
        "reversed": (fbase, fbase[::-1]),
        "reversed rows": (base, base[::-1]),
        "strided": (base, base[::2]),
        "strided columns": (fbase, fbase[::3]),
    }


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i4", "u1", "?", "f2"])
@pytest.mark.parametrize(
    "view", ["broadcast", "reversed", "reversed rows", "strided", "strided columns"]
)
def test_block_views(view, dtype):
    base, arr = _block_views(dtype)[view]
    df = pd.DataFrame(arr, columns=list("abcd"), copy=False)
    assert np.shares_memory(df["a"].to_numpy(), base)  # pandas kept the view
    _check_all_modes(df, arr.astype("f8"))
    # the frame's own dtype: the copy (memcpy, interleave) paths
    for order in "CF":
        got = dfbuffer.to_matrix(df, order=order)
        assert got.dtype == arr.dtype
        np.testing.assert_array_equal(got, arr)


def _mask_views(dtype: str, seed: int = 5) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(values, mask) views of one kind each, over bases 2N long."""
    rng = np.random.default_rng(seed)
    v = rng.integers(-100, 100, 2 * N)
    vals = (v > 0) if dtype == "?" else (v / 4 if dtype[0] == "f" else v % 120).astype(dtype)
    miss = rng.random(2 * N) < 0.3
    return {
        "broadcast": (np.broadcast_to(vals[:1], (N,)), np.broadcast_to(miss[:1], (N,))),
        "broadcast null": (vals[:N], np.broadcast_to(np.array([True]), (N,))),
        "broadcast valid": (vals[:N], np.broadcast_to(np.array([False]), (N,))),
        "reversed": (vals[:N][::-1], miss[:N][::-1]),
        "strided": (vals[::2], miss[::2]),
        "reversed strided": (vals[::-2], miss[::-2]),
        "mixed": (vals[1::2][::-1], np.broadcast_to(miss[3:4], (N,))),
    }


MASKED = {
    "Int64": ("i8", pd.arrays.IntegerArray),
    "Int8": ("i1", pd.arrays.IntegerArray),
    "UInt16": ("u2", pd.arrays.IntegerArray),
    "Float64": ("f8", pd.arrays.FloatingArray),
    "Float32": ("f4", pd.arrays.FloatingArray),
    "boolean": ("?", pd.arrays.BooleanArray),
}


@pytest.mark.parametrize("kind", list(MASKED))
@pytest.mark.parametrize(
    "view",
    [
        "broadcast",
        "broadcast null",
        "broadcast valid",
        "reversed",
        "strided",
        "reversed strided",
        "mixed",
    ],
)
def test_masked_column_views(view, kind):
    dtype, make = MASKED[kind]
    vals, miss = _mask_views(dtype)[view]
    other = make(*_mask_views(dtype, seed=9)["strided"])
    df = pd.DataFrame({"a": make(vals, miss), "b": other, "c": np.arange(N) * 0.5}, copy=False)
    # pandas kept both views: its values and mask are the ones made here
    assert np.shares_memory(df["a"].array._mask, miss)
    assert np.shares_memory(df["a"].array._data, vals)
    numpy_values = np.column_stack(
        [df[c].to_numpy(dtype="f8", na_value=np.nan) for c in df.columns]
    )
    _check_all_modes(df, numpy_values)
    # nulls counted from the mask as it is: exactly the rows pandas calls missing
    m = dfbuffer.to_matrix(df, nulls="mask", columns=["a"])
    np.testing.assert_array_equal(np.ma.getmaskarray(m)[:, 0], df["a"].isna().to_numpy())


def test_broadcast_block_alone_reads_one_row():
    """A broadcast frame of one value per column is that value in every row
    (its block is 8 bytes a column: reading N rows of it would run past it)."""
    one = np.array([1.5, -2.0, 3.25])
    df = pd.DataFrame(np.broadcast_to(one, (N, 3)), copy=False)
    assert np.shares_memory(df[0].to_numpy(), one)
    for order in "CF":
        got = dfbuffer.to_matrix(df, order=order)
        assert (got == one).all()
        ints = dfbuffer.to_matrix(df, order=order, dtype="i8")
        assert (ints == one.astype("i8")).all()
