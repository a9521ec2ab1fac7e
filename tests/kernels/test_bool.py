"""Booleans: one byte per value (zero-copy) and bit-packed (at every bit offset, with
validity, chunked) from hand-written producers, pandas and pyarrow, against the peers' own
values; the pandas consumer's null read as False."""

from __future__ import annotations

import numpy as np
import pytest
from kernel_checks import assert_zero_copy, check, col_of, pandas_consumer
from producers import BOOL, UINT, bools_bitpacked, chunked, primitive, to_list, with_mask

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

# pandas 3 emits pandas.errors.Pandas4Warning (a DeprecationWarning subclass)
# from DataFrame.__dataframe__ and from its interchange from_dataframe.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_pyarrow_bools():
    vals = [True, None, False, True, True, False, None, True, False, False, True]
    t = pa.table({"b": pa.array(vals)})
    for part in (t, t.slice(3), t.slice(9)):
        res = dfbuffer.from_dataframe(part.__dataframe__())["b"]
        assert res.dtype == np.bool_
        assert to_list(res) == part.column(0).to_pylist()


def test_bitpacked_bools_from_pandas_bool_pyarrow():
    # pandas' bool[pyarrow] hands out the bit-packed Arrow buffer itself
    vals = [True, None, False, True, True, False, None, True, False, False, True]
    s = pd.Series(vals, dtype="bool[pyarrow]")
    col = col_of(pd.DataFrame({"b": s}), "b")
    assert col.dtype[1] == 1  # really bit-packed
    res = dfbuffer.column_to_ndarray(col)
    assert res.dtype == np.bool_
    assert to_list(res) == vals


def test_peer_bug_pandas_nullable_bool_null_read_as_false():
    """pandas' consumer writes None into a bool ndarray: the null becomes
    False (its Int64 handling is right: float64 with NaN)."""
    df = pd.DataFrame({"b": pd.array([True, None, False], dtype="boolean")})
    assert pandas_consumer(df.__dataframe__()) == [True, False, False]
    t = pa.table({"b": pa.array([True, None, False])})
    assert pandas_consumer(t.__dataframe__()) == [True, False, False]


def test_bool_bytes_column_zero_copy():
    v = np.array([True, False, True, True, False])
    col = primitive(v, offset=2)
    res = dfbuffer.column_to_ndarray(col)
    check(res, v, dtype="?")
    assert_zero_copy(res, col.data_buffer, 2)


@pytest.mark.parametrize("offset", [0, 1, 7, 8, 13, 64, 8 * 11 + 5])
def test_bool_bitpacked_offsets(offset):
    v = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1], dtype=bool)
    res = dfbuffer.column_to_ndarray(bools_bitpacked(v, offset=offset))
    check(res, v, dtype="?")


@pytest.mark.parametrize("offset", [0, 5, 8 * 9 + 3])
def test_bool_bitpacked_with_validity(offset):
    v = np.array([1, 0, 1, 1, 0, 0, 0, 1, 1], dtype=bool)
    valid = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1], dtype=bool)
    col = bools_bitpacked(v, offset=offset, valid=valid)
    check(dfbuffer.column_to_ndarray(col), v, valid, dtype="?")
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert filled.dtype == np.float64
    np.testing.assert_array_equal(filled, np.where(valid, v.astype(float), np.nan))


def test_nulls_fill_bool_bytes_upcast():
    v = np.array([True, False, True, False])
    col = with_mask(v, [1, 1, 0, 1], kind="bytemask")
    res = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert res.dtype == np.float64
    np.testing.assert_array_equal(res, [1.0, 0.0, np.nan, 0.0])


def test_chunks_bitpacked_bools():
    col = chunked(bools_bitpacked([1, 0, 1], offset=3), bools_bitpacked([0, 0, 1, 1], offset=9))
    check(dfbuffer.column_to_ndarray(col), np.array([1, 0, 1, 0, 0, 1, 1], bool), dtype="?")


def test_quirk_bool_kind_uint8_storage():
    # a bool column whose buffer claims (UINT, 8)
    v = np.array([1, 0, 1], dtype="u1")
    col = primitive(v, col_dtype=(BOOL, 8, "b", "|"), data_dtype=(UINT, 8, "C", "="))
    res = dfbuffer.column_to_ndarray(col)
    np.testing.assert_array_equal(res, [True, False, True])
