"""Checks and inputs the converter tests share (tests/kernels): a result against expected
values and nulls, zero-copy views, hand-written buffers, allocator churn, the peers' consumers."""

from __future__ import annotations

import numpy as np
from producers import ProtocolOnlyColumn, addr, base_chain, raw_buffer, strings

import dfbuffer
from dfbuffer import _interchange


def check(res, values, valid=None, dtype=None):
    """res holds `values` (where `valid`), is a MaskedArray iff some value is
    null, with the mask exactly the nulls."""
    values = np.asarray(values)
    if valid is None or np.all(valid):
        assert type(res) is np.ndarray, type(res)
        np.testing.assert_array_equal(res, values)
    else:
        valid = np.asarray(valid, dtype=bool)
        assert isinstance(res, np.ma.MaskedArray), type(res)
        np.testing.assert_array_equal(np.ma.getmaskarray(res), ~valid)
        np.testing.assert_array_equal(np.asarray(res.data)[valid], values[valid])
    assert res.shape == values.shape
    if dtype is not None:
        assert res.dtype == np.dtype(dtype), (res.dtype, dtype)


def assert_zero_copy(res, buf, offset_bytes=0):
    """`res` views `buf` at `offset_bytes` and its base chain ends in a
    dfbuffer.Buffer whose owner is `buf`."""
    arr = res.data if isinstance(res, np.ma.MaskedArray) else res
    assert addr(arr) == buf.ptr + offset_bytes
    chain = base_chain(arr)
    assert chain, "result owns its memory: not zero-copy"
    assert isinstance(chain[-1], dfbuffer.Buffer), chain
    assert chain[-1].owner is buf


def check_nulls(res, valid):
    """res is a MaskedArray masking exactly where `valid` is False, a plain ndarray when
    nothing is null."""
    valid = np.asarray(valid, dtype=bool)
    if valid.all():
        assert type(res) is np.ndarray, type(res)
    else:
        assert isinstance(res, np.ma.MaskedArray), type(res)
        np.testing.assert_array_equal(np.ma.getmaskarray(res), ~valid)


def utc_naive(s):
    """datetime64[unit] UTC instants of a (tz-aware or naive) datetime Series."""
    if getattr(s.dt, "tz", None) is not None:
        s = s.dt.tz_convert("UTC").dt.tz_localize(None)
    return s.to_numpy()


def pyarrow_consumer(x):
    """pyarrow's interchange consumer's values of the first column of `x`."""
    import pyarrow.interchange as pai

    return pai.from_dataframe(x).column(0).to_pylist()


def churn(nbytes: int, rounds: int = 200) -> None:
    """Allocate and free many same-sized blocks, filled with junk, so freed
    memory gets reused (and overwritten) by the allocator."""
    nbytes = max(int(nbytes), 1)
    keep = []
    for i in range(rounds):
        a = np.full(nbytes, (i * 37 + 11) % 251, dtype=np.uint8)
        b = bytes([i % 251]) * nbytes
        keep.append((a, b))
        if len(keep) > 20:
            keep.pop(0)
    del keep


def RawBuffer(arr, device=(1, None)):  # noqa: N802 - reads as the class it was
    """A minimal interchange-protocol buffer over a NumPy array (no __dlpack__)."""
    a = np.ascontiguousarray(arr)
    return raw_buffer(device=device, mem=a)


def pandas_col(series):
    """pandas' interchange column of `series`."""
    import pandas as pd

    return pd.DataFrame({"x": series}).__dataframe__().get_column(0)


def object_array(values):
    """A 1-d object array of `values` (lists inside stay objects)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def color_categories():
    """A string column of three categories: red, green, blue."""
    return strings(["red", "green", "blue"])


def pandas_consumer(x):
    """pandas' interchange consumer's values of the first column of `x`."""
    import pandas.api.interchange as pdi

    return pdi.from_dataframe(x).iloc[:, 0].tolist()


def arrow_to_ndarray(obj, nulls="mask"):
    """column_to_ndarray's Arrow path (the private entry: independent of dispatch)."""
    return _interchange._arrow_to_ndarray(obj, nulls)


def col_of(df, name):
    """The interchange column `name` of pandas frame `df`, seen through the protocol only."""
    return ProtocolOnlyColumn(df.__dataframe__().get_column_by_name(name))
