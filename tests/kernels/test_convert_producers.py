"""Converters against hand-written producers: every dtype kind, every null
kind, offsets, chunks, empty columns and the producers' quirks
(docs/protocol-facts.md, "Producers disagree").

Booleans, strings, dates and times, categoricals: tests/kernels/test_bool.py,
test_strings.py, test_temporal.py, test_categorical.py."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from kernel_checks import assert_zero_copy, check, color_categories, object_array
from producers import (
    BITMASK_DTYPE,
    BOOL,
    BYTEMASK_DTYPE,
    CATEGORICAL,
    DATETIME,
    FLOAT,
    INAT,
    INT,
    STRING,
    UINT,
    USE_BITMASK,
    USE_NAN,
    USE_SENTINEL,
    Buffer,
    Column,
    Frame,
    NoDlpackBuffer,
    NoKwDlpackBuffer,
    addr,
    base_chain,
    bools_bitpacked,
    categorical,
    chunked,
    datetimes,
    frame,
    interchange_dtype,
    nonnative,
    pack_bits,
    primitive,
    strings,
    with_mask,
)

import dfbuffer

NUMERIC = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]


# --------------------------------------------------------------------------
# buffer_to_ndarray


@pytest.mark.parametrize("dt", NUMERIC + ["?"])
@pytest.mark.parametrize("as_tuple", [True, False])
def test_buffer_to_ndarray_dtypes(dt, as_tuple):
    x = (np.arange(20) % 7).astype(dt)
    buf = Buffer(x)
    d = interchange_dtype(x.dtype) if as_tuple else dt
    if as_tuple and dt == "?":
        d = BYTEMASK_DTYPE
    res = dfbuffer.buffer_to_ndarray(buf, d)
    assert type(res) is np.ndarray
    assert res.dtype == x.dtype
    np.testing.assert_array_equal(res, x)
    assert_zero_copy(res, buf)


@pytest.mark.parametrize("offset,length", [(0, 20), (3, 10), (5, None), (20, 0), (0, 0), (19, 1)])
def test_buffer_to_ndarray_offset_length(offset, length):
    x = np.arange(20, dtype="i4")
    buf = Buffer(x)
    res = dfbuffer.buffer_to_ndarray(buf, (INT, 32, "i", "="), offset=offset, length=length)
    end = 20 if length is None else offset + length
    np.testing.assert_array_equal(res, x[offset:end])
    if end > offset:  # empty results need not be views
        assert addr(res) == buf.ptr + 4 * offset
        assert isinstance(base_chain(res)[-1], dfbuffer.Buffer)


@pytest.mark.parametrize("dt", ["i2", "u4", "i8", "f4", "f8"])
def test_buffer_to_ndarray_nonnative(dt):
    x = np.arange(-5, 11).astype(nonnative(dt))
    buf = Buffer(x)
    res = dfbuffer.buffer_to_ndarray(buf, interchange_dtype(x.dtype), offset=2, length=5)
    np.testing.assert_array_equal(res, np.arange(-3, 2).astype(dt))
    # zero-copy: a byte-swapped dtype view
    assert res.dtype == x.dtype and not res.dtype.isnative
    assert_zero_copy(res, buf, 2 * x.itemsize)


def test_buffer_to_ndarray_explicit_native_order():
    native = "<" if sys.byteorder == "little" else ">"
    x = np.arange(6, dtype="i8")
    res = dfbuffer.buffer_to_ndarray(Buffer(x), (INT, 64, "l", native))
    np.testing.assert_array_equal(res, x)


@pytest.mark.parametrize("bit_offset", [0, 3, 8, 13, 200])
def test_buffer_to_ndarray_bitpacked(bit_offset):
    v = np.array([1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 1], dtype=bool)
    buf = Buffer(pack_bits(v, bit_offset))
    res = dfbuffer.buffer_to_ndarray(buf, BITMASK_DTYPE, offset=bit_offset, length=len(v))
    assert res.dtype == np.bool_
    np.testing.assert_array_equal(res, v)


@pytest.mark.parametrize("cls", [NoKwDlpackBuffer, NoDlpackBuffer])
def test_buffer_to_ndarray_minimal_buffers(cls):
    x = np.arange(8, dtype="f8")
    buf = cls(x) if cls is NoKwDlpackBuffer else cls(x, device=(1, None))
    res = dfbuffer.buffer_to_ndarray(buf, (FLOAT, 64, "g", "="))
    np.testing.assert_array_equal(res, x)
    assert_zero_copy(res, buf)


def test_buffer_to_ndarray_enum_dtype_and_device():
    x = np.arange(4, dtype="u2")
    buf = Buffer(x, device=(dfbuffer.DeviceType.CPU, 0))
    res = dfbuffer.buffer_to_ndarray(buf, (dfbuffer.DtypeKind.UINT, 16, "S", "="))
    np.testing.assert_array_equal(res, x)


# --------------------------------------------------------------------------
# fixed-width columns


@pytest.mark.parametrize("dt", NUMERIC)
@pytest.mark.parametrize("offset", [0, 3])
def test_numeric_column_zero_copy(dt, offset):
    v = (np.arange(10) * 3 % 11).astype(dt)
    col = primitive(v, offset=offset, pad=2)
    res = dfbuffer.column_to_ndarray(col)
    check(res, v, dtype=dt)
    assert_zero_copy(res, col.data_buffer, offset * v.itemsize)
    for nulls in ("fill", "raise"):
        r2 = dfbuffer.column_to_ndarray(col, nulls=nulls)
        check(r2, v, dtype=dt)
        assert_zero_copy(r2, col.data_buffer, offset * v.itemsize)


@pytest.mark.parametrize("dt", ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8"])
def test_nonnative_column(dt):
    v = (np.arange(12) - 4).astype(nonnative(dt))
    col = primitive(v, offset=2)
    assert col.dtype[3] in "<>"
    res = dfbuffer.column_to_ndarray(col)
    np.testing.assert_array_equal(res, (np.arange(12) - 4).astype(dt))
    assert type(res) is np.ndarray


def test_nonnative_column_with_nulls_fill():
    v = np.arange(6).astype(nonnative("i4"))
    valid = [1, 0, 1, 1, 0, 1]
    col = with_mask(v, valid, offset=1)
    res = dfbuffer.column_to_ndarray(col, nulls="fill")
    np.testing.assert_array_equal(res, [0, np.nan, 2, 3, np.nan, 5])
    res = dfbuffer.column_to_ndarray(col)
    check(res, np.arange(6), valid)


# --------------------------------------------------------------------------
# null kinds


VALUES = np.array([10, -2, 33, 4, 5, -6, 70, 8, 9, 100, 11, -12, 13], dtype="i8")
VALID = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0], dtype=bool)


@pytest.mark.parametrize("offset", [0, 1, 3, 7, 8, 9, 8 * 13 + 3, 8 * 13 * 2 + 1])
@pytest.mark.parametrize("null_value", [0, 1])
def test_bitmask_offsets(offset, null_value):
    col = with_mask(VALUES, VALID, kind="bitmask", null_value=null_value, offset=offset)
    check(dfbuffer.column_to_ndarray(col), VALUES, VALID, dtype="i8")


@pytest.mark.parametrize("offset", [0, 2, 17])
@pytest.mark.parametrize("null_value", [0, 1])
def test_bytemask(offset, null_value):
    col = with_mask(VALUES, VALID, kind="bytemask", null_value=null_value, offset=offset)
    res = dfbuffer.column_to_ndarray(col)
    check(res, VALUES, VALID, dtype="i8")
    # the data itself is still a view of the producer's buffer
    assert addr(res.data) == col.data_buffer.ptr + 8 * offset


@pytest.mark.parametrize("kind", ["bitmask", "bytemask"])
def test_nulls_fill_ints_upcast(kind):
    col = with_mask(VALUES, VALID, kind=kind, offset=3)
    res = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert type(res) is np.ndarray and res.dtype == np.float64
    np.testing.assert_array_equal(res, np.where(VALID, VALUES.astype(float), np.nan))


@pytest.mark.parametrize("dt", ["f4", "f8"])
def test_nulls_fill_floats(dt):
    v = VALUES.astype(dt)
    col = with_mask(v, VALID, offset=2)
    res = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert type(res) is np.ndarray and res.dtype.kind == "f"
    np.testing.assert_array_equal(res, np.where(VALID, v, np.nan))


@pytest.mark.parametrize("kind", ["bitmask", "bytemask"])
def test_nulls_raise(kind):
    col = with_mask(VALUES, VALID, kind=kind, offset=1)
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(col, nulls="raise")


def test_nulls_bad_argument():
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(primitive([1, 2]), nulls="drop")


def test_sentinel_int():
    v = np.array([1, -999, 3, -999, 5], dtype="i4")
    col = primitive(v, offset=1, null=(USE_SENTINEL, -999), null_count=2)
    valid = v != -999
    check(dfbuffer.column_to_ndarray(col), v, valid, dtype="i4")
    np.testing.assert_array_equal(
        dfbuffer.column_to_ndarray(col, nulls="fill"), [1, np.nan, 3, np.nan, 5]
    )
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(col, nulls="raise")


def test_sentinel_not_present_is_plain():
    v = np.array([1, 2, 3], dtype="i4")
    col = primitive(v, null=(USE_SENTINEL, -999), null_count=0)
    res = dfbuffer.column_to_ndarray(col)
    check(res, v)
    assert_zero_copy(res, col.data_buffer)


def test_use_nan():
    v = np.array([1.5, np.nan, 3.0, np.nan])
    col = primitive(v, null=(USE_NAN, None), null_count=2)
    res = dfbuffer.column_to_ndarray(col)
    check(res, v, ~np.isnan(v), dtype="f8")
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert type(filled) is np.ndarray
    np.testing.assert_array_equal(filled, v)
    assert_zero_copy(filled, col.data_buffer)
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(col, nulls="raise")


# --------------------------------------------------------------------------
# chunks


def test_chunks_different_validity():
    a = primitive(np.array([1, 2, 3], dtype="i8"), offset=1)
    b = with_mask(np.array([4, 5, 6, 7], dtype="i8"), [1, 0, 1, 1], offset=13)
    c = with_mask(np.array([8, 9], dtype="i8"), [0, 1], kind="bytemask", null_value=1, offset=2)
    col = chunked(a, b, c)
    res = dfbuffer.column_to_ndarray(col)
    valid = np.array([1, 1, 1, 1, 0, 1, 1, 0, 1], dtype=bool)
    check(res, np.arange(1, 10), valid, dtype="i8")
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    np.testing.assert_array_equal(filled, np.where(valid, np.arange(1.0, 10.0), np.nan))


def test_chunks_no_nulls_concatenated():
    col = chunked(primitive(np.arange(3.0)), primitive(np.arange(3.0, 7.0), offset=2))
    res = dfbuffer.column_to_ndarray(col)
    check(res, np.arange(7.0), dtype="f8")


def test_chunks_with_empty_chunk():
    col = chunked(primitive(np.arange(2)), primitive(np.arange(0)), primitive(np.arange(2, 4)))
    check(dfbuffer.column_to_ndarray(col), np.arange(4), dtype=np.arange(1).dtype)


# --------------------------------------------------------------------------
# empty columns


@pytest.mark.parametrize("dt", NUMERIC + ["?"])
def test_empty_numeric(dt):
    res = dfbuffer.column_to_ndarray(primitive(np.zeros(0, dtype=dt)))
    assert type(res) is np.ndarray and res.shape == (0,) and res.dtype == np.dtype(dt)


def test_empty_bitpacked_and_datetime():
    assert dfbuffer.column_to_ndarray(bools_bitpacked([])).shape == (0,)
    res = dfbuffer.column_to_ndarray(datetimes(np.zeros(0, "i8"), "tsu:UTC"))
    assert res.dtype == np.dtype("M8[us]") and res.shape == (0,)


def test_empty_buffer_zero_bufsize_null_ptr():
    col = Column(
        size=0,
        dtype=(INT, 64, "l", "="),
        data=(Buffer(np.zeros(0, "i8"), ptr=0), (INT, 64, "l", "=")),
    )
    res = dfbuffer.column_to_ndarray(col)
    assert res.shape == (0,) and res.dtype == np.int64


# --------------------------------------------------------------------------
# quirks


def test_quirk_bitmask_dtype_claims_width_8():
    col = with_mask(VALUES, VALID, kind="bitmask", offset=5, mask_dtype=(BOOL, 8, "b", "="))
    assert col.describe_null[0] == USE_BITMASK
    check(dfbuffer.column_to_ndarray(col), VALUES, VALID)


def test_quirk_device_id_none_and_no_kw_dlpack():
    v = np.arange(5, dtype="i4")
    col = primitive(v, buffer_cls=NoKwDlpackBuffer, offset=1)
    with pytest.raises(TypeError):
        col.data_buffer.__dlpack__(max_version=(1, 0))
    res = dfbuffer.column_to_ndarray(col)
    check(res, v)
    assert_zero_copy(res, col.data_buffer, 4)


def test_quirk_no_dlpack_at_all():
    v = np.arange(5, dtype="f4")
    col = primitive(v, buffer_cls=NoDlpackBuffer)
    res = dfbuffer.column_to_ndarray(col)
    check(res, v)
    assert_zero_copy(res, col.data_buffer)


@pytest.mark.parametrize("kind", ["bitmask", "bytemask"])
def test_quirk_validity_with_zero_nulls(kind):
    v = np.arange(6, dtype="i8")
    col = with_mask(v, [1] * 6, kind=kind, offset=2)
    assert col.get_buffers()["validity"] is not None and col.null_count == 0
    res = dfbuffer.column_to_ndarray(col)
    check(res, v)  # plain ndarray, not a MaskedArray
    assert_zero_copy(res, col.data_buffer, 16)


def test_quirk_null_count_unknown():
    col = with_mask(VALUES, VALID, null_count=None, offset=4)
    check(dfbuffer.column_to_ndarray(col), VALUES, VALID)


def test_quirk_enum_kinds():
    v = np.arange(3, dtype="u1")
    col = primitive(v, col_dtype=(dfbuffer.DtypeKind.UINT, 8, "C", "|"))
    check(dfbuffer.column_to_ndarray(col), v)


# --------------------------------------------------------------------------
# from_dataframe on hand-written producers


def test_from_dataframe_names_become_str():
    df = Frame({1: primitive([1, 2]), "b": primitive([3.0, 4.0]), (1, 2): primitive([5, 6])})
    out = dfbuffer.from_dataframe(df)
    assert list(out) == ["1", "b", "(1, 2)"]
    np.testing.assert_array_equal(out["1"], [1, 2])
    np.testing.assert_array_equal(out["b"], [3.0, 4.0])


def test_from_dataframe_duplicate_names():
    cols = {1: primitive([1, 2]), "1": primitive([3, 4])}
    with pytest.raises(ValueError):
        dfbuffer.from_dataframe(Frame(cols))


def test_from_dataframe_interchange_object_directly():
    df = frame(a=primitive(np.arange(3)), s=strings(["x", None, "z"]))
    out = dfbuffer.from_dataframe(df)
    np.testing.assert_array_equal(out["a"], np.arange(3))
    check(out["s"], object_array(["x", None, "z"]), [1, 0, 1])


def test_from_dataframe_nulls_modes():
    df = frame(a=with_mask(VALUES, VALID, offset=3))
    check(dfbuffer.from_dataframe(df)["a"], VALUES, VALID)
    filled = dfbuffer.from_dataframe(df, nulls="fill")["a"]
    np.testing.assert_array_equal(filled, np.where(VALID, VALUES.astype(float), np.nan))
    with pytest.raises(ValueError):
        dfbuffer.from_dataframe(df, nulls="raise")


def test_from_dataframe_zero_copy_allow_copy_false():
    col = primitive(np.arange(5, dtype="i4"), offset=2)
    f = Frame({"a": col})
    out = dfbuffer.from_dataframe(f, allow_copy=False)
    assert_zero_copy(out["a"], col.data_buffer, 8)
    assert f.calls and f.calls[-1][1] is False  # allow_copy passed to __dataframe__


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: chunked(primitive([1, 2]), primitive([3])), id="chunks"),
        pytest.param(lambda: strings(["a", "b"]), id="strings"),
        pytest.param(lambda: bools_bitpacked([1, 0, 1]), id="bitpacked"),
        pytest.param(lambda: categorical([0, 1], strings(["a", "b"]), null="none"), id="cat"),
    ],
)
def test_from_dataframe_allow_copy_false_refuses_copies(make):
    with pytest.raises(RuntimeError):
        dfbuffer.from_dataframe(frame(a=make()), allow_copy=False)


def test_from_dataframe_allow_copy_false_fill_with_nulls():
    df = frame(a=with_mask(VALUES, VALID))
    with pytest.raises(RuntimeError):
        dfbuffer.from_dataframe(df, nulls="fill", allow_copy=False)
    # no nulls: filling needs no copy
    out = dfbuffer.from_dataframe(frame(a=primitive(VALUES)), nulls="fill", allow_copy=False)
    np.testing.assert_array_equal(out["a"], VALUES)


def test_from_dataframe_empty():
    assert dfbuffer.from_dataframe(frame()) == {}
    out = dfbuffer.from_dataframe(frame(a=primitive(np.zeros(0, "f8"))))
    assert out["a"].shape == (0,)


def test_from_dataframe_every_kind():
    df = frame(
        i=primitive(np.arange(3, dtype="u2")),
        f=primitive(np.array([1.0, 2.0, 3.0], dtype=nonnative("f8"))),
        b=bools_bitpacked([1, 0, 1], offset=5),
        s=strings(["a", None, "c"], large=True),
        t=datetimes(np.array([1, INAT, 3]), "tsm:UTC"),
        c=categorical([1, -1, 0], color_categories()),
    )
    out = dfbuffer.from_dataframe(df)
    assert list(out) == ["i", "f", "b", "s", "t", "c"]
    check(out["i"], np.arange(3), dtype="u2")
    np.testing.assert_array_equal(out["f"], [1.0, 2.0, 3.0])
    check(out["b"], np.array([1, 0, 1], bool), dtype="?")
    check(out["s"], object_array(["a", None, "c"]), [1, 0, 1])
    check(out["t"], np.array([1, 0, 3]).view("M8[ms]"), [1, 0, 1], dtype="M8[ms]")
    check(out["c"], object_array(["green", None, "red"]), [1, 0, 1])


def test_uint_kind_constant():
    # guards the producers module against typos in its constants
    assert (INT, UINT, FLOAT, BOOL, STRING, DATETIME, CATEGORICAL) == (0, 1, 2, 20, 21, 22, 23)
    assert BITMASK_DTYPE == (BOOL, 1, "b", "=")
