"""Decimals of every width (decimal32/64/128/256, negative scales): to decimal.Decimal
objects by default, to float64 with decimals="float64" on every path (column_to_ndarray,
from_dataframe, to_matrix), pyarrow's to_pylist the oracle."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from flat_arrays import D, flat_arrays

import dfbuffer

# decimal32 and decimal64 arrive in pyarrow 18; the oldest supported pyarrow (16) cannot
# make these inputs
if not hasattr(pa, "decimal32"):
    pytest.skip("pyarrow < 18 cannot build these Arrow types", allow_module_level=True)


def test_decimals_float64():
    for name, arr in flat_arrays().items():
        if not name.startswith("decimal"):
            continue
        want = [np.nan if v is None else float(v) for v in arr.to_pylist()]
        # masked by default, as float columns with nulls are; NaN under the mask
        got = dfbuffer.column_to_ndarray(arr, decimals="float64")
        assert got.dtype == np.float64 and isinstance(got, np.ma.MaskedArray)
        np.testing.assert_allclose(got.data, want, rtol=1e-15)
        assert np.ma.getmaskarray(got).tolist() == [v is None for v in arr.to_pylist()]
        filled = dfbuffer.column_to_ndarray(arr, decimals="float64", nulls="fill")
        assert type(filled) is np.ndarray
        np.testing.assert_allclose(filled, want, rtol=1e-15)
        frame = dfbuffer.from_dataframe(pa.table({"d": arr}), decimals="float64", nulls="fill")
        np.testing.assert_allclose(frame["d"], want, rtol=1e-15)
    with pytest.raises(ValueError, match="decimals"):
        dfbuffer.column_to_ndarray(flat_arrays()["decimal128"], decimals="float32")
    with pytest.raises(TypeError, match="decimals"):
        dfbuffer.from_dataframe(pa.table({"d": flat_arrays()["decimal128"]}), decimals=1)



def test_decimal_extremes():
    # the widest values of each width, both signs
    for bits, prec in ((32, 9), (64, 18), (128, 38), (256, 76)):
        typ = {32: pa.decimal32, 64: pa.decimal64, 128: pa.decimal128, 256: pa.decimal256}[bits]
        top = "9" * (prec - 3) + ".999"
        arr = pa.array([D(top), D("-" + top), D("0.001"), D(0)], typ(prec, 3))
        assert dfbuffer.column_to_ndarray(arr).tolist() == arr.to_pylist()



def test_to_matrix_decimals_float64():
    t = pa.table({"a": [1, 2, 3], "d": pa.array([D("1.25"), None, D("-3.5")], pa.decimal128(5, 2))})
    got = dfbuffer.to_matrix(t, decimals="float64")
    np.testing.assert_array_equal(got, [[1, 1.25], [2, np.nan], [3, -3.5]])
    masked = dfbuffer.to_matrix(t.slice(1), decimals="float64", nulls="mask")
    assert masked.mask.tolist() == [[False, True], [False, False]]
    both = pa.concat_tables([t, t.slice(2)])
    np.testing.assert_array_equal(
        dfbuffer.to_matrix(both, decimals="float64", dtype="f4")[:, 1],
        np.array([1.25, np.nan, -3.5, -3.5], "f4"),
    )
    with pytest.raises(TypeError, match="column 'd'.*decimal"):
        dfbuffer.to_matrix(t)
