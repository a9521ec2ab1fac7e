"""Unit tests of the C converters: buffer_to_ndarray in detail, and the basics
of column_to_ndarray / from_dataframe with real pandas and pyarrow producers.

(The broad matrix of kinds, null kinds, quirks and broken producers lives in
the other tests/kernels/test_convert_*.py files.)
"""

from __future__ import annotations

import sys
import warnings
import weakref

import numpy as np
import pytest
from kernel_checks import RawBuffer, pandas_col
from producers import ProtocolOnlyColumn

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

warnings.filterwarnings("ignore", message=".*[Ii]nterchange [Pp]rotocol.*")

INT, UINT, FLOAT, BOOL, STRING, DATETIME, CATEGORICAL = 0, 1, 2, 20, 21, 22, 23
OTHER = ">" if sys.byteorder == "little" else "<"


def chain_end(arr):
    """The last object of arr's base chain."""
    obj = arr
    while getattr(obj, "base", None) is not None and not isinstance(obj, dfbuffer.Buffer):
        obj = obj.base
    return obj


PRIMITIVES = [
    ("i1", (INT, 8, "c", "|")),
    ("i2", (INT, 16, "s", "=")),
    ("i4", (INT, 32, "i", "=")),
    ("i8", (INT, 64, "l", "=")),
    ("u1", (UINT, 8, "C", "|")),
    ("u2", (UINT, 16, "S", "=")),
    ("u4", (UINT, 32, "I", "=")),
    ("u8", (UINT, 64, "L", "=")),
    ("f2", (FLOAT, 16, "e", "=")),
    ("f4", (FLOAT, 32, "f", "=")),
    ("f8", (FLOAT, 64, "g", "=")),
    ("?", (BOOL, 8, "b", "|")),
]


@pytest.mark.parametrize(("np_dtype", "ix_dtype"), PRIMITIVES, ids=[p[0] for p in PRIMITIVES])
def test_buffer_to_ndarray_primitive_zero_copy(np_dtype, ix_dtype):
    src = (np.arange(10) % 3).astype(np_dtype)
    buf = RawBuffer(src)
    for dt in (ix_dtype, np_dtype, np.dtype(np_dtype)):
        res = dfbuffer.buffer_to_ndarray(buf, dt)
        assert res.dtype == np.dtype(np_dtype)
        np.testing.assert_array_equal(res, src)
        assert np.shares_memory(res, buf._x)
        end = chain_end(res)
        assert isinstance(end, dfbuffer.Buffer)
        assert end.owner is buf
        assert end.native == dfbuffer.NativeFormat.INTERCHANGE


def test_buffer_to_ndarray_offset_length():
    buf = RawBuffer(np.arange(10, dtype="i4"))
    res = dfbuffer.buffer_to_ndarray(buf, "i4", offset=3, length=4)
    np.testing.assert_array_equal(res, [3, 4, 5, 6])
    assert res.__array_interface__["data"][0] == buf.ptr + 12
    np.testing.assert_array_equal(dfbuffer.buffer_to_ndarray(buf, "i4", offset=7), [7, 8, 9])
    assert len(dfbuffer.buffer_to_ndarray(buf, "i4", offset=10)) == 0
    assert len(dfbuffer.buffer_to_ndarray(buf, "i4", offset=10, length=0)) == 0


@pytest.mark.parametrize(
    ("offset", "length"),
    [(11, None), (0, 11), (5, 6), (10, 1), (2**62, 1), (1, 2**62)],
)
def test_buffer_to_ndarray_out_of_bounds(offset, length):
    buf = RawBuffer(np.arange(10, dtype="i4"))
    with pytest.raises(ValueError, match="exceed"):
        dfbuffer.buffer_to_ndarray(buf, "i4", offset=offset, length=length)


@pytest.mark.parametrize("kw", [{"offset": -1}, {"length": -1}])
def test_buffer_to_ndarray_negative(kw):
    buf = RawBuffer(np.arange(10, dtype="i4"))
    with pytest.raises(ValueError):
        dfbuffer.buffer_to_ndarray(buf, "i4", **kw)


def test_buffer_to_ndarray_partial_element_not_counted():
    # 10 bytes hold two int32 values, not three
    buf = RawBuffer(np.arange(10, dtype="u1"))
    assert len(dfbuffer.buffer_to_ndarray(buf, "i4")) == 2
    with pytest.raises(ValueError):
        dfbuffer.buffer_to_ndarray(buf, "i4", length=3)


@pytest.mark.parametrize("np_dtype", ["i2", "i4", "i8", "u2", "u4", "u8", "f4", "f8"])
def test_buffer_to_ndarray_byteswapped(np_dtype):
    values = np.array([1, 2, 300, 30000], dtype=np_dtype)
    swapped = values.astype(np.dtype(np_dtype).newbyteorder(OTHER))
    buf = RawBuffer(swapped.view("u1"))
    ix = dict((p[0], p[1]) for p in PRIMITIVES)[np_dtype]
    res = dfbuffer.buffer_to_ndarray(buf, (ix[0], ix[1], ix[2], OTHER))
    assert res.dtype.byteorder == OTHER
    np.testing.assert_array_equal(res, values)
    assert np.shares_memory(res, buf._x)


@pytest.mark.parametrize("device", [(2, 0), (10, 1), (4, None)])
def test_buffer_to_ndarray_refuses_device(device):
    buf = RawBuffer(np.arange(3.0), device=device)
    with pytest.raises(BufferError, match=rf"\({device[0]}, "):
        dfbuffer.buffer_to_ndarray(buf, "f8")


@pytest.mark.parametrize(
    "bad", [object(), np.arange(3), b"abc"], ids=["object", "ndarray", "bytes"]
)
def test_buffer_to_ndarray_not_a_buffer(bad):
    with pytest.raises(TypeError):
        dfbuffer.buffer_to_ndarray(bad, "f8")


def test_buffer_to_ndarray_bad_dtype():
    buf = RawBuffer(np.arange(3.0))
    with pytest.raises((TypeError, ValueError)):
        dfbuffer.buffer_to_ndarray(buf, (FLOAT, 128, "g", "="))
    with pytest.raises(TypeError):
        dfbuffer.buffer_to_ndarray(buf, "O")
    with pytest.raises(TypeError):
        dfbuffer.buffer_to_ndarray(buf)  # dtype missing
    with pytest.raises(TypeError):
        dfbuffer.buffer_to_ndarray(buf, "f8", bogus=1)


def test_buffer_to_ndarray_of_our_buffer():
    src = np.arange(6, dtype="i8")
    ours = dfbuffer.Buffer(src.ctypes.data, src.nbytes, owner=src, dtype="i8")
    res = dfbuffer.buffer_to_ndarray(ours, (INT, 64, "l", "="), offset=2)
    np.testing.assert_array_equal(res, [2, 3, 4, 5])
    end = chain_end(res)
    assert isinstance(end, dfbuffer.Buffer)
    assert end.owner is ours
    assert end.owner.owner is src


def test_buffer_to_ndarray_keeps_buffer_alive(collect):
    src = np.arange(1000, dtype="f8") * 1.5
    buf = RawBuffer(src.copy())
    wr = weakref.ref(buf)
    res = dfbuffer.buffer_to_ndarray(buf, "f8")
    del buf
    collect()
    assert wr() is not None
    [np.ones(1000) for _ in range(100)]  # churn the allocator
    np.testing.assert_array_equal(res, src)
    del res
    collect()
    assert wr() is None


def test_buffer_to_ndarray_empty_buffer():
    class Empty:
        ptr = 0
        bufsize = 0

        def __dlpack_device__(self):
            return (1, 0)

    res = dfbuffer.buffer_to_ndarray(Empty(), "f8")
    assert res.shape == (0,) and res.dtype == np.float64


# ---------------------------------------------------------------- columns


def test_column_pandas_float_zero_copy_and_nan():
    df = pd.DataFrame({"x": [1.0, np.nan, 3.0]})
    col = ProtocolOnlyColumn(df.__dataframe__().get_column(0))
    res = dfbuffer.column_to_ndarray(col)
    assert isinstance(res, np.ma.MaskedArray)
    np.testing.assert_array_equal(res.mask, [False, True, False])
    assert np.shares_memory(res.data, df["x"].to_numpy())
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert type(filled) is np.ndarray and np.isnan(filled[1])
    with pytest.raises(ValueError, match="null"):
        dfbuffer.column_to_ndarray(col, nulls="raise")
    plain = dfbuffer.column_to_ndarray(pandas_col(pd.Series([1.0, 2.0])))
    assert type(plain) is np.ndarray


def test_column_pandas_nullable_int_fill_upcasts():
    col = pandas_col(pd.array([1, None, 3], dtype="Int32"))
    res = dfbuffer.column_to_ndarray(col)
    assert res.dtype == np.int32
    assert res.mask.tolist() == [False, True, False]
    assert res.compressed().tolist() == [1, 3]
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert filled.dtype == np.float64
    np.testing.assert_array_equal(filled, [1.0, np.nan, 3.0])


def test_column_pandas_strings_and_categorical():
    col = pandas_col(pd.Series(["a", None, "ünï", ""], dtype=object))
    res = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert res.dtype == object and res.tolist() == ["a", None, "ünï", ""]
    cat = pandas_col(pd.Categorical(["x", None, "y", "x"]))
    res = dfbuffer.column_to_ndarray(cat)
    assert res.mask.tolist() == [False, True, False, False]
    assert res.data[[0, 2, 3]].tolist() == ["x", "y", "x"]
    assert dfbuffer.column_to_ndarray(cat, nulls="fill").tolist() == ["x", None, "y", "x"]


def test_column_pyarrow_sliced_bits_and_strings():
    t = pa.table(
        {
            "b": pa.array([True, None, False, True, None, True, False, True, True, False]),
            "s": pa.array(["a", "bb", None, "ccc", "d", None, "e", "f", "g", "h"]),
            "ls": pa.array(["x"] * 9 + [None], pa.large_string()),
        }
    ).slice(3, 6)
    out = dfbuffer.from_dataframe(t, nulls="fill")
    assert out["b"].tolist() == [1.0, np.nan, 1.0, 0.0, 1.0, 1.0] or np.allclose(
        out["b"], [1.0, np.nan, 1.0, 0.0, 1.0, 1.0], equal_nan=True
    )
    assert out["s"].tolist() == ["ccc", "d", None, "e", "f", "g"]
    assert out["ls"].tolist() == ["x"] * 6
    mask = dfbuffer.from_dataframe(t)
    assert mask["b"].mask.tolist() == [False, True, False, False, False, False]
    assert type(mask["ls"]) is np.ndarray


def test_column_pyarrow_chunked():
    ca = pa.chunked_array([[1, None], [3], [None, 5]], pa.int16())
    t = pa.table({"a": ca})
    res = dfbuffer.from_dataframe(t)["a"]
    assert res.dtype == np.int16
    assert res.mask.tolist() == [False, True, False, True, False]
    with pytest.raises(RuntimeError, match="allow_copy"):
        dfbuffer.from_dataframe(t, allow_copy=False)


def test_column_to_ndarray_bad_arguments():
    col = pandas_col(pd.Series([1.0]))
    with pytest.raises(ValueError, match="nulls"):
        dfbuffer.column_to_ndarray(col, nulls="drop")
    with pytest.raises(TypeError):
        dfbuffer.column_to_ndarray(object())
    with pytest.raises(TypeError):
        dfbuffer.column_to_ndarray()


def test_from_dataframe_names():
    df = pd.DataFrame({0: [1.0], "b": [2.0]})
    out = dfbuffer.from_dataframe(df)
    assert list(out) == ["0", "b"]
    with pytest.raises(TypeError):
        dfbuffer.from_dataframe(42)


def test_from_dataframe_allow_copy_false():
    df = pd.DataFrame({"f": [1.0, 2.0], "s": ["a", "b"]})
    with pytest.raises(RuntimeError, match="allow_copy"):
        dfbuffer.from_dataframe(df[["s"]].astype("string[python]"), allow_copy=False)
    # an object column is the object array itself: no copy needed
    obj = df[["s"]].astype(object)
    got = dfbuffer.from_dataframe(obj, allow_copy=False)["s"]
    assert np.shares_memory(got, obj["s"].to_numpy())
    out = dfbuffer.from_dataframe(df[["f"]], allow_copy=False)
    np.testing.assert_array_equal(out["f"], [1.0, 2.0])


@pytest.mark.parametrize("offset", [0, 1, 7, 8, 9, 63, 64, 65, 130])
@pytest.mark.parametrize("length", [0, 1, 7, 64, 65, 200, 515])
def test_bit_unpacking_matches_numpy(offset, length):
    rng = np.random.default_rng(offset * 1000 + length)
    raw = rng.integers(0, 256, (offset + length + 7) // 8 + 1, dtype=np.uint8)
    res = dfbuffer.buffer_to_ndarray(
        RawBuffer(raw), (BOOL, 1, "b", "="), offset=offset, length=length
    )
    want = np.unpackbits(raw, bitorder="little")[offset : offset + length].astype(bool)
    np.testing.assert_array_equal(res, want)


@pytest.mark.parametrize("start", [0, 1, 5, 8, 63, 64, 100])
def test_bitmask_validity_sliced_matches_pyarrow(start):
    rng = np.random.default_rng(start)
    n = 300
    valid = rng.random(n) < 0.7
    arr = pa.array(np.arange(n, dtype="i4"), mask=~valid).slice(start)
    res = dfbuffer.from_dataframe(pa.table({"a": arr}))["a"]
    assert res.mask.tolist() == (~valid[start:]).tolist()
    assert res.compressed().tolist() == [v for v in arr.to_pylist() if v is not None]


def test_buffer_to_ndarray_readonly_buffer_stays_readonly():
    src = np.arange(4, dtype="i4")
    ro = dfbuffer.Buffer(src.ctypes.data, src.nbytes, owner=src, dtype="i4", readonly=True)
    for dt in ("i4", (INT, 32, "i", "=")):
        res = dfbuffer.buffer_to_ndarray(ro, dt)
        assert not res.flags.writeable
        np.testing.assert_array_equal(res, src)
    rw = dfbuffer.Buffer(src.ctypes.data, src.nbytes, owner=src, dtype="i4")
    assert dfbuffer.buffer_to_ndarray(rw, "i4").flags.writeable
