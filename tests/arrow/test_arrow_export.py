"""Buffer.__arrow_c_schema__ / __arrow_c_array__: zero-copy export of 1-D
primitive buffers to pyarrow, polars and nanoarrow."""

from __future__ import annotations

import weakref

import nanoarrow as na
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from dfbuffer import Buffer
from dfbuffer._interchange import _arrow_import


def buf_of(arr: np.ndarray, **kw) -> Buffer:
    return Buffer(arr.ctypes.data, arr.nbytes, owner=arr, dtype=arr.dtype, **kw)


@pytest.mark.parametrize(
    "dtype, arrow_type",
    [
        ("i1", pa.int8()), ("u1", pa.uint8()), ("i2", pa.int16()), ("u2", pa.uint16()),
        ("i4", pa.int32()), ("u4", pa.uint32()), ("i8", pa.int64()), ("u8", pa.uint64()),
        ("f2", pa.float16()), ("f4", pa.float32()), ("f8", pa.float64()),
        ("M8[s]", pa.timestamp("s")), ("M8[ms]", pa.timestamp("ms")),
        ("M8[us]", pa.timestamp("us")), ("M8[ns]", pa.timestamp("ns")),
        ("m8[s]", pa.duration("s")), ("m8[ns]", pa.duration("ns")),
    ],
)
def test_pyarrow_reads_without_copy(dtype, arrow_type):
    arr = (np.arange(7) * 3).astype(dtype)
    b = buf_of(arr)
    got = pa.array(b)
    assert got.type == arrow_type
    assert got.buffers()[1].address == b.ptr
    assert got.null_count == 0
    np.testing.assert_array_equal(got.to_numpy(), arr)
    assert pa.array(b, type=arrow_type).equals(got)       # requested == ours


def test_schema_capsule():
    b = buf_of(np.zeros(3, np.int32))
    assert pa.DataType._import_from_c_capsule(b.__arrow_c_schema__()) == pa.int32()
    assert str(na.c_schema(b).format) == "i"


def _polars_version() -> tuple[int, int]:
    major, minor = pl.__version__.split(".")[:2]
    return int(major), int(minor)


def test_polars_and_nanoarrow_read_without_copy():
    arr = np.arange(10, dtype=np.float64)
    b = buf_of(arr)
    s = pl.Series(b)
    assert s.to_list() == arr.tolist()
    assert s.to_numpy().ctypes.data == b.ptr
    # polars 1.x from_arrow takes no bare Arrow array producer (1.6: TypeError, 1.31: a panic)
    if _polars_version() >= (2, 0):
        assert pl.from_arrow(b).to_list() == arr.tolist()
    n = na.c_array(b)
    assert n.length == 10 and n.buffers[1] == b.ptr


def test_roundtrip_through_our_import():
    arr = np.arange(5, dtype=np.int16)
    b = buf_of(arr)
    _, cols, chunks = _arrow_import(b)
    assert cols[0][1] == "s"
    assert chunks[0][0]["data"].ptr == b.ptr


def test_lifetime(collect):
    arr = np.arange(1000, dtype=np.int64)
    b = buf_of(arr)
    wb = weakref.ref(b)
    warr = weakref.ref(arr)
    got = pa.array(b)
    del b, arr
    collect()
    assert wb() is not None and warr() is not None   # the Arrow array holds the Buffer
    assert got[999].as_py() == 999
    del got
    collect()
    assert wb() is None and warr() is None           # released, Buffer dropped


def test_unconsumed_capsules_release(collect):
    b = buf_of(np.arange(3, dtype=np.int64))
    wb = weakref.ref(b)
    caps = b.__arrow_c_array__()
    del b
    collect()
    assert wb() is not None
    del caps
    collect()
    assert wb() is None


def test_empty_and_sliced():
    arr = np.arange(10, dtype=np.int32)
    got = pa.array(buf_of(arr[:0]))
    assert len(got) == 0 and got.type == pa.int32()
    got = pa.array(buf_of(arr[3:]))
    assert got.to_pylist() == list(range(3, 10))


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda a: Buffer(a.ctypes.data, 8, owner=a, dtype="?"), TypeError, "bit-packed"),
        (lambda a: Buffer(a.ctypes.data, 16, owner=a, dtype="c8"), TypeError, "complex64"),
        (lambda a: Buffer(a.ctypes.data, 16, owner=a, dtype="M8[D]"), TypeError, "units"),
        (lambda a: Buffer(a.ctypes.data, 16, owner=a, dtype=">i8"), BufferError, "byte"),
        (lambda a: Buffer(a.ctypes.data, 64, owner=a, dtype="i8", shape=(2, 2)),
         BufferError, "1-D"),
        (lambda a: Buffer(a.ctypes.data, 64, owner=a, dtype="i8", shape=(2,), strides=(16,)),
         BufferError, "contiguous"),
        (lambda a: Buffer(a.ctypes.data, 64, owner=a, dtype="i8", device=(2, 0)),
         BufferError, "device"),
    ],
)
def test_refused(make, exc, match):
    a = np.zeros(8, np.int64)
    b = make(a)
    with pytest.raises(exc, match=match):
        b.__arrow_c_array__()
    with pytest.raises(exc, match=match):
        b.__arrow_c_schema__()


def test_requested_schema_other_type_refused():
    b = buf_of(np.zeros(3, np.float64))
    with pytest.raises(NotImplementedError, match="cannot be cast"):
        b.__arrow_c_array__(pa.int64().__arrow_c_schema__())
    with pytest.raises(TypeError, match="arrow_schema"):
        b.__arrow_c_array__(requested_schema=42)
    s, a = b.__arrow_c_array__(requested_schema=pa.float64().__arrow_c_schema__())
    assert pa.Array._import_from_c_capsule(s, a).to_pylist() == [0.0, 0.0, 0.0]
