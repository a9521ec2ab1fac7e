"""The Arrow C device data interface, both ways.

CPU: pyarrow's and nanoarrow's device-interface objects (forced through the device half of
the PyCapsule interface with ``DeviceOnly``) and dfbuffer's own export read by both.
Other devices: hand-built ArrowDeviceArray structs on "CUDA" with fake addresses (no GPU
here); dfbuffer must describe them without ever reading a byte, and call each release
callback exactly once.
"""

from __future__ import annotations

import ctypes
import gc
import weakref

import nanoarrow as na
import nanoarrow.device as nad
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from _arrow_device_ctypes import (
    CUDA,
    Column,
    DeviceArray,
    DeviceOnly,
    DeviceStream,
    read_device_array,
)

import dfbuffer
from dfbuffer import Buffer

# pyarrow speaks the Arrow C device interface from Python from 17.0 on (the declared
# minimum, 16, has neither __arrow_c_device_array__ nor _import_from_c_device_capsule)
needs_pyarrow_device = pytest.mark.skipif(
    not hasattr(pa.Array, "_import_from_c_device_capsule"),
    reason=f"pyarrow {pa.__version__} has no Arrow C device interface in Python (>= 17)",
)

FAKE = 0x7F0000100000  # a "device" address: never dereferenced


def cuda_buffer(n=4, dtype="i4", device_id=1, **kw):
    owner = object()
    itemsize = np.dtype(dtype).itemsize
    return Buffer(FAKE, n * itemsize, owner=owner, dtype=dtype, device=(CUDA, device_id), **kw)


# ---------------------------------------------------------------- export


@needs_pyarrow_device
@pytest.mark.parametrize("dtype", ["i1", "u2", "i4", "i8", "f2", "f4", "f8", "M8[us]", "m8[ns]"])
def test_cpu_export_read_by_pyarrow(dtype):
    arr = np.arange(6).astype(dtype)
    buf = Buffer.from_object(arr)
    out = pa.Array._import_from_c_device_capsule(*buf.__arrow_c_device_array__())
    assert out.to_numpy(zero_copy_only=False).tolist() == arr.tolist()
    # pa.array() prefers the device method, and shares the memory
    got = pa.array(buf)
    assert got.buffers()[1].address == arr.ctypes.data
    assert got.to_numpy(zero_copy_only=False).tolist() == arr.tolist()


def test_cpu_export_read_by_nanoarrow():
    arr = np.array([3, 1, 4, 1, 5], dtype=np.int32)
    dev = nad.c_device_array(Buffer.from_object(arr))
    assert dev.device_type == nad.DeviceType.CPU
    assert dev.device_id == -1  # what Arrow's own CPU producers give
    assert na.Array(dev.array).to_pylist() == [3, 1, 4, 1, 5]


def test_export_fields_cpu_and_cuda():
    buf = Buffer.from_object(np.arange(3, dtype="i8"))
    _, cap = buf.__arrow_c_device_array__()
    d = read_device_array(cap)
    assert (d.device_type, d.device_id, d.sync_event) == (1, -1, None)
    assert list(d.reserved) == [0, 0, 0]
    assert (d.array.length, d.array.n_buffers, d.array.null_count) == (3, 2, 0)
    assert d.array.buffers[1] == buf.ptr

    cbuf = cuda_buffer(device_id=3)
    _, cap = cbuf.__arrow_c_device_array__()
    d = read_device_array(cap)
    assert (d.device_type, d.device_id, d.sync_event) == (CUDA, 3, None)
    assert d.array.buffers[1] == FAKE and d.array.length == 4


def test_export_keeps_buffer_alive_until_release(collect):
    cbuf = cuda_buffer()
    ref = weakref.ref(cbuf)
    schema, cap = cbuf.__arrow_c_device_array__()
    del cbuf
    collect()
    assert ref() is not None  # the exported array's private data holds it
    del cap
    collect()
    assert ref() is None
    del schema


@needs_pyarrow_device
def test_export_moved_then_released_once(collect):
    """A consumer that moves the array out (pyarrow) releases it: the Buffer lives
    exactly as long as the imported pyarrow array."""
    arr = np.arange(4, dtype="f8")
    buf = Buffer.from_object(arr)
    ref = weakref.ref(buf)
    got = pa.Array._import_from_c_device_capsule(*buf.__arrow_c_device_array__())
    del buf
    collect()
    assert ref() is not None
    assert got.to_pylist() == [0.0, 1.0, 2.0, 3.0]
    del got
    collect()
    assert ref() is None


@needs_pyarrow_device
def test_export_keywords():
    buf = Buffer.from_object(np.arange(3, dtype="i4"))
    # keywords whose value is None are accepted (future keywords default to None)
    s, a = buf.__arrow_c_device_array__(None, stream=None, some_future_keyword=None)
    assert read_device_array(a).array.length == 3
    with pytest.raises(NotImplementedError, match="stream"):
        buf.__arrow_c_device_array__(stream=7)
    with pytest.raises(NotImplementedError, match="some_future_keyword"):
        buf.__arrow_c_device_array__(some_future_keyword=1)
    with pytest.raises(TypeError, match="multiple values"):
        buf.__arrow_c_device_array__(None, requested_schema=None)
    with pytest.raises(TypeError):
        buf.__arrow_c_device_array__(None, None)
    # the schema it already has is fine, another one is not
    same = pa.int32().__arrow_c_schema__()
    pa.Array._import_from_c_device_capsule(*buf.__arrow_c_device_array__(same))
    with pytest.raises(NotImplementedError, match="'i'"):
        buf.__arrow_c_device_array__(pa.int64().__arrow_c_schema__())
    with pytest.raises(TypeError, match="arrow_schema"):
        buf.__arrow_c_device_array__(object())


def test_export_refuses_layouts():
    with pytest.raises(BufferError, match="1-D"):
        Buffer.from_object(np.zeros((2, 2), "i4")).__arrow_c_device_array__()
    with pytest.raises(BufferError, match="contiguous"):
        Buffer.from_object(np.arange(6, dtype="i4")[::2]).__arrow_c_device_array__()
    with pytest.raises(TypeError, match="bit-packed"):
        Buffer.from_object(np.zeros(3, bool)).__arrow_c_device_array__()
    with pytest.raises(BufferError, match="1-D"):
        cuda_buffer(4, shape=(2, 2)).__arrow_c_device_array__()


def test_cuda_export_import_round_trip(collect):
    """A CUDA-typed Buffer exported as a device array and imported back: same
    address, same device, never read; the original Buffer lives as long as the result."""
    cbuf = cuda_buffer(5, "f4", device_id=2)
    ref = weakref.ref(cbuf)
    back = Buffer.from_object(DeviceOnly(cbuf))
    assert back.device == (dfbuffer.DeviceType.CUDA, 2)
    assert (back.ptr, back.bufsize, back.dtype, back.shape) == (FAKE, 20, np.float32, (5,))
    assert back.readonly and back.native == dfbuffer.NativeFormat.ARROW
    del cbuf
    collect()
    assert ref() is not None
    del back
    collect()
    assert ref() is None


# ---------------------------------------------------------------- import, CPU


@needs_pyarrow_device
def test_cpu_from_object_pyarrow_and_nanoarrow():
    pa_arr = pa.array([10, 20, 30, 40], pa.int16()).slice(1)
    b = Buffer.from_object(DeviceOnly(pa_arr))
    assert np.asarray(b).tolist() == [20, 30, 40]
    assert b.device == (dfbuffer.DeviceType.CPU, 0)
    assert b.ptr == pa_arr.buffers()[1].address + 2

    dev = nad.c_device_array(pa.array([1.5, 2.5]))
    b = Buffer.from_object(DeviceOnly(dev))
    assert np.asarray(b).tolist() == [1.5, 2.5]


@needs_pyarrow_device
def test_cpu_converters_and_to_interchange():
    rb = pa.record_batch({"a": pa.array([1, None, 3]), "s": ["x", None, "z"],
                          "c": pa.array(["p", "q", "p"]).dictionary_encode()})
    cols = dfbuffer.from_dataframe(DeviceOnly(rb))
    assert cols["a"].tolist() == [1, None, 3]
    assert cols["s"].tolist() == ["x", None, "z"]
    col = dfbuffer.column_to_ndarray(DeviceOnly(rb.column(0)))
    assert col.tolist() == [1, None, 3]
    df = dfbuffer.to_interchange(DeviceOnly(rb))
    assert df.get_column_by_name("a").get_buffers()["data"][0].__dlpack_device__() == (1, 0)
    out = pd.api.interchange.from_dataframe(df)
    assert out["s"].tolist()[::2] == ["x", "z"] and out["a"].isna().tolist() == [False, True, False]


# ---------------------------------------------------------------- import, CUDA (fake)


def test_cuda_from_object_never_reads(collect):
    prod = DeviceArray(Column("i", 3, [0, FAKE], offset=1), device_id=1)
    b = Buffer.from_object(prod)
    assert b.device == (dfbuffer.DeviceType.CUDA, 1)
    assert (b.ptr, b.bufsize, b.dtype, b.readonly) == (FAKE + 4, 12, np.int32, True)
    assert b.__dlpack_device__() == (CUDA, 1)
    assert b.__cuda_array_interface__["data"] == (FAKE + 4, True)
    with pytest.raises(TypeError):
        np.asarray(b)
    with pytest.raises(BufferError):
        memoryview(b)
    assert not hasattr(b, "__array_interface__")
    assert (prod.released.schema, prod.released.array) == (1, 0)
    del b
    collect()
    assert (prod.released.schema, prod.released.array) == (1, 1)


def test_cuda_from_object_dtype_override_and_refusals(collect):
    prod = DeviceArray(Column("l", 2, [0, FAKE]))
    b = Buffer.from_object(prod, dtype="f8")
    assert b.dtype == np.float64 and b.device[0] == dfbuffer.DeviceType.CUDA
    del b
    collect()
    assert prod.released.array == 1
    strings = DeviceArray(Column("u", 2, [0, FAKE, FAKE + 64]))
    with pytest.raises(NotImplementedError, match="fixed-width"):
        Buffer.from_object(strings)
    assert strings.released.array == 1


@pytest.mark.parametrize("convert", ["column_to_ndarray", "from_dataframe"])
def test_cuda_converters_refuse_naming_device(convert, collect):
    prod = DeviceArray(Column("g", 4, [0, FAKE]), device_id=1)
    with pytest.raises(BufferError, match=r"CUDA:1") as info:
        getattr(dfbuffer, convert)(prod)
    assert "CPU memory only" in str(info.value)
    del info
    collect()
    assert (prod.released.schema, prod.released.array) == (1, 1)


def test_cuda_to_interchange_device_buffers(collect):
    children = [
        Column("l", 4, [FAKE, FAKE + 0x100], null_count=1, name="x"),
        Column("f", 4, [0, FAKE + 0x200], name="y"),
        Column("u", 4, [0, FAKE + 0x300, FAKE + 0x400], name="s"),
        Column("c", 4, [0, FAKE + 0x500], name="cat",
               dictionary=Column("f", 2, [0, FAKE + 0x600])),
    ]
    prod = DeviceArray(Column("+s", 4, [0]), children=children, device_id=1)
    df = dfbuffer.to_interchange(prod)
    assert df.column_names() == ["x", "y", "s", "cat"]
    x = df.get_column_by_name("x")
    assert x.null_count == 1
    bufs = x.get_buffers()
    data, dtype = bufs["data"]
    assert data.__dlpack_device__() == (CUDA, 1)
    assert (data.ptr, data.bufsize) == (FAKE + 0x100, 32)
    assert dtype[:2] == (dfbuffer.DtypeKind.INT, 64)
    validity = bufs["validity"][0]
    assert validity.__dlpack_device__() == (CUDA, 1) and validity.ptr == FAKE
    y = df.get_column_by_name("y").get_buffers()
    assert y["validity"] is None and y["data"][0].__dlpack_device__() == (CUDA, 1)
    with pytest.raises(NotImplementedError, match="CUDA:1"):
        df.get_column_by_name("s").get_buffers()
    cats = df.get_column_by_name("cat").describe_categorical["categories"]
    assert cats.get_buffers()["data"][0].ptr == FAKE + 0x600
    # the interchange consumers refuse device memory instead of reading it
    with pytest.raises(BufferError):
        dfbuffer.column_to_ndarray(df.get_column_by_name("y"))
    assert prod.released.array == 0
    del df, x, bufs, data, validity, y, cats
    collect()
    assert (prod.released.schema, prod.released.array) == (1, 1)


def test_cuda_unknown_null_count_is_none(collect):
    prod = DeviceArray(Column("i", 8, [FAKE, FAKE + 64], null_count=-1))
    col = dfbuffer.to_interchange(prod).get_column(0)
    assert col.null_count is None
    assert col.describe_null == (dfbuffer.ColumnNullType.USE_BITMASK, 0)
    assert col.get_buffers()["validity"][0].__dlpack_device__() == (CUDA, 1)


def test_cuda_stream_chunks(collect):
    batches = [(Column("l", 3, [0, FAKE]), None, 0), (Column("l", 2, [0, FAKE + 24]), None, 0)]
    prod = DeviceStream(Column("l", 0, []), batches)
    df = dfbuffer.to_interchange(prod)
    chunks = list(df.get_column(0).get_chunks())
    assert [c.size() for c in chunks] == [3, 2]
    assert [c.get_buffers()["data"][0].ptr for c in chunks] == [FAKE, FAKE + 24]
    assert prod.released.stream == 1 and prod.released.array == 0
    del df, chunks
    collect()
    assert (prod.released.schema, prod.released.array, prod.released.stream) == (1, 2, 1)


def test_cuda_stream_chunks_on_two_devices_refused(collect):
    batches = [(Column("l", 1, [0, FAKE]), None, 0), (Column("l", 1, [0, FAKE]), None, 1)]
    prod = DeviceStream(Column("l", 0, []), batches)
    with pytest.raises(NotImplementedError, match="different devices"):
        dfbuffer.to_interchange(prod)
    collect()
    assert (prod.released.schema, prod.released.array, prod.released.stream) == (1, 2, 1)


def test_sync_event_refused_and_released(collect):
    event = ctypes.c_int64(0)
    prod = DeviceArray(Column("i", 2, [0, FAKE]), sync_event=ctypes.addressof(event))
    with pytest.raises(BufferError, match="sync_event"):
        Buffer.from_object(prod)
    collect()
    assert (prod.released.schema, prod.released.array) == (1, 1)


def test_unknown_device_and_bad_id_refused(collect):
    for kw in ({"device_type": 5}, {"device_id": -2}, {"device_id": 2**40}):
        prod = DeviceArray(Column("i", 2, [0, FAKE]), **kw)
        with pytest.raises(ValueError, match="device"):
            Buffer.from_object(prod)
        collect()
        assert prod.released.array == 1, kw


def test_malformed_device_array_refused(collect):
    prod = DeviceArray(Column("i", 2, [0]))  # one buffer for a primitive
    with pytest.raises(ValueError, match="buffers"):
        Buffer.from_object(prod)
    nulldata = DeviceArray(Column("i", 2, [0, 0]))
    with pytest.raises(ValueError, match="NULL"):
        Buffer.from_object(nulldata)
    collect()
    assert prod.released.array == 1 and nulldata.released.array == 1


def test_consumed_capsule_refused():
    prod = DeviceArray(Column("i", 2, [0, FAKE]))
    schema, arr = prod.__arrow_c_device_array__()
    b = Buffer.from_object(type("P", (), {"__arrow_c_device_array__": lambda s: (schema, arr)})())
    assert b.ptr == FAKE
    again = type("P", (), {"__arrow_c_device_array__": lambda s: (schema, arr)})()
    with pytest.raises(ValueError, match="already consumed"):
        Buffer.from_object(again)
    del b
    gc.collect()


def test_cpu_device_stream_converts_like_a_stream(collect):
    """A hand-built CPU device stream (real memory) takes the ordinary Arrow path: chunks
    joined by the converters, each chunk released once."""
    a = np.array([1, 2, 3], dtype=np.int64)
    b = np.array([4, 5], dtype=np.int64)
    valid = np.array([0b01], dtype=np.uint8)  # second chunk: [4, null]
    batches = [(Column("l", 3, [0, a.ctypes.data]), None, -1),
               (Column("l", 2, [valid.ctypes.data, b.ctypes.data], null_count=1), None, -1)]
    prod = DeviceStream(Column("l", 0, []), batches, device_type=1)
    out = dfbuffer.column_to_ndarray(prod)
    assert out.tolist() == [1, 2, 3, 4, None]
    collect()
    assert (prod.released.schema, prod.released.array, prod.released.stream) == (1, 2, 1)
    one = DeviceStream(Column("l", 0, []), batches[:1], device_type=1)
    df = dfbuffer.to_interchange(one)
    data = df.get_column(0).get_buffers()["data"][0]
    assert data.__dlpack_device__() == (1, 0) and data.ptr == a.ctypes.data
    assert np.asarray(data).tolist() == [1, 2, 3]


# ------------------------------------------- checks the device import now shares with the CPU's


def test_device_capsules_in_wrong_order_refused():
    """The capsule move is the CPU import's: (array, schema) is named as swapped, and
    nothing is consumed."""
    prod = DeviceArray(Column("i", 2, [0, FAKE]))
    swapped = type("P", (), {"__arrow_c_device_array__":
                             lambda s: prod.__arrow_c_device_array__()[::-1]})()
    with pytest.raises(TypeError, match="wrong order"):
        Buffer.from_object(swapped)
    assert (prod.released.schema, prod.released.array) == (0, 0)


@pytest.mark.parametrize("convert", ["from_object", "to_interchange"])
def test_device_buffer_past_address_space_refused(convert, collect):
    """The size checks are the CPU import's: a device buffer that would wrap the address
    space is refused before a Buffer is made over it."""
    prod = DeviceArray(Column("l", 4, [0, 2**64 - 16]))
    with pytest.raises(ValueError, match="address space"):
        if convert == "from_object":
            Buffer.from_object(prod)
        else:
            dfbuffer.to_interchange(prod).get_column(0).get_buffers()
    collect()
    assert prod.released.array == 1
