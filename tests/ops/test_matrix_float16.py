"""to_matrix of float16 columns: into float16 the values move as bits (NaN
payloads and signalling NaNs kept), into wider floats as NumPy's astype widens
them, checked bit for bit over all 65536 half values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer

ALL = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
NAN_BITS = [0x7C01, 0x7D00, 0x7DFF, 0x7E00, 0x7E01, 0x7FFF, 0xFC01, 0xFD55, 0xFE00, 0xFFFF]
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(UINT[a.dtype.itemsize])


def _frames(h: np.ndarray) -> dict[str, object]:
    """The same float16 values from each producer that keeps them as float16."""
    rev = h[::-1].copy()
    block = np.stack([h, rev], axis=1)  # one C-ordered block: strided columns
    return {
        "pandas": pd.DataFrame({"a": h, "b": rev}),
        "pandas block": pd.DataFrame(block, columns=["a", "b"], copy=False),
        "pyarrow": pa.table({"a": pa.array(h), "b": pa.array(rev)}),
    }


@pytest.mark.parametrize("producer", ["pandas", "pandas block", "pyarrow"])
@pytest.mark.parametrize("dtype", [None, "f2", "f4", "f8"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_every_half_value_as_numpy_casts_it(producer, dtype, order):
    df = _frames(ALL)[producer]
    want = np.stack([ALL, ALL[::-1]], axis=1).astype(dtype or "f2")
    got = dfbuffer.to_matrix(df, dtype=dtype, order=order)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_nan_payloads_kept(dtype):
    h = np.array(NAN_BITS * 5, np.uint16).view(np.float16)
    for name, df in _frames(h).items():
        got = dfbuffer.to_matrix(df, dtype=dtype, threads=2)
        np.testing.assert_array_equal(_bits(got[:, 0]), _bits(h.astype(dtype)))
        m = dfbuffer.to_matrix(df, dtype=dtype, nulls="mask")
        if name == "pyarrow":  # a NaN is a value there: kept as it is
            assert not np.ma.getmaskarray(m).any()
            np.testing.assert_array_equal(_bits(m.data[:, 0]), _bits(h.astype(dtype)))
        else:  # pandas' missing float
            assert np.ma.getmaskarray(m).all()


def test_values_into_bool_and_ints_as_numpy_casts_them():
    finite = ALL[np.isfinite(ALL) & (np.abs(ALL.astype("f8")) < 100)]
    df = pd.DataFrame({"a": finite})
    for dtype in ["?", "i1", "i2", "i8", "u2"]:
        src = finite[finite >= 0] if dtype[0] == "u" else finite
        got = dfbuffer.to_matrix(pd.DataFrame({"a": src}), dtype=dtype)
        np.testing.assert_array_equal(got[:, 0], src.astype(dtype))
    nan = pa.table({"a": pa.array(ALL[np.isnan(ALL)])})  # NaN values, not nulls
    assert dfbuffer.to_matrix(nan, dtype="?").all()  # NaN is true, as in NumPy
    assert (dfbuffer.to_matrix(nan, dtype="i2") == 0).all()
    assert dfbuffer.to_matrix(df).dtype == np.float16
