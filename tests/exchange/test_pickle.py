"""Pickling Buffers: protocol 5 out of band (zero copy in process), in band, and < 5."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from export_helpers import ALL_DTYPES, addr, layouts, make_buffer

import dfbuffer

LAYOUTS = list(layouts("i1"))


def check_restored(r: dfbuffer.Buffer, buf: dfbuffer.Buffer, arr: np.ndarray) -> None:
    assert isinstance(r, dfbuffer.Buffer)
    assert r.dtype == buf.dtype
    assert r.shape == buf.shape
    assert r.readonly == buf.readonly
    assert r.native == buf.native
    assert r.device == (dfbuffer.DeviceType.CPU, 0)
    if buf.f_contiguous and not buf.c_contiguous:
        assert r.f_contiguous and r.strides == buf.strides  # Fortran order travels as is
    else:
        assert r.c_contiguous
    np.testing.assert_array_equal(np.asarray(r), arr)
    assert np.asarray(r).dtype == arr.dtype


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_protocol5_out_of_band(dtype, layout):
    arr = layouts(dtype)[layout]
    buf = make_buffer(arr)
    buffers = []
    data = pickle.dumps(buf, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1
    assert len(data) < 400  # the memory itself is not in the pickle
    r = pickle.loads(data, buffers=buffers)
    check_restored(r, buf, arr)
    if (arr.flags.c_contiguous or arr.flags.f_contiguous) and arr.size:
        assert addr(np.asarray(r)) == addr(arr)  # zero copy in process
    # through bytes, as a transport would deliver them
    raw = [bytes(b.raw()) for b in buffers]
    r2 = pickle.loads(data, buffers=raw)
    check_restored(r2, buf, arr)


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
@pytest.mark.parametrize("layout", ["1d", "3d-sliced", "negative", "zero-size", "0d", "readonly"])
@pytest.mark.parametrize("dtype", ["?", "i8", "f2", "c16", "M8[ns]", ">f4"])
def test_in_band(protocol, layout, dtype):
    base = layouts(dtype)[layout]
    arr = base.astype(dtype) if dtype.startswith(">") else base
    if not base.flags.writeable:
        arr.flags.writeable = False
    buf = make_buffer(arr)
    r = pickle.loads(pickle.dumps(buf, protocol=protocol))
    check_restored(r, buf, arr)
    if arr.size:
        assert addr(np.asarray(r)) != addr(arr)
    if not r.readonly:
        np.asarray(r)[...] = arr.flat[0] if arr.size else 0  # writable memory


def test_writable_restored_from_readonly_transport():
    arr = np.arange(5.0)
    buf = make_buffer(arr)
    buffers = []
    data = pickle.dumps(buf, protocol=5, buffer_callback=buffers.append)
    r = pickle.loads(data, buffers=[bytes(buffers[0].raw())])  # bytes are read-only
    assert not r.readonly
    out = np.asarray(r)
    out[0] = 9.0  # the reconstructor made writable memory
    assert arr[0] == 0.0


def test_shared_memory_in_process():
    arr = np.zeros(4)
    buf = make_buffer(arr)
    buffers = []
    r = pickle.loads(pickle.dumps(buf, 5, buffer_callback=buffers.append), buffers=buffers)
    np.asarray(r)[1] = 5.0
    assert arr[1] == 5.0


def test_copy_module():
    arr = np.arange(6, dtype="i2").reshape(2, 3)
    buf = make_buffer(arr)
    c = copy.deepcopy(buf)
    np.testing.assert_array_equal(np.asarray(c), arr)
    assert addr(np.asarray(c)) != addr(arr)


def test_native_format_restored():
    arr = np.arange(3)
    buf = dfbuffer.Buffer(
        arr.ctypes.data, arr.nbytes, owner=arr, dtype="i8", native=dfbuffer.NativeFormat.ARROW
    )
    r = pickle.loads(pickle.dumps(buf, 5))
    assert r.native == dfbuffer.NativeFormat.ARROW


@pytest.mark.parametrize("device", [(2, 0), (3, 0), (13, 0)])
@pytest.mark.parametrize("protocol", [2, 5])
def test_device_buffer_refuses(device, protocol):
    buf = make_buffer(np.arange(3.0), device=device)
    with pytest.raises(TypeError, match="device"):
        pickle.dumps(buf, protocol=protocol)


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        ((b"\0" * 8, "f8", (2,), True, 0), ValueError),  # wrong byte count
        ((b"\0" * 8, "f8", (-1,), True, 0), ValueError),
        ((b"\0" * 8, "O", (1,), True, 0), TypeError),
        ((b"\0" * 8, "f8", [1], True, 0), TypeError),
        ((12, "f8", (1,), True, 0), TypeError),
        ((b"\0" * 8, "f8", (1,), True, 99), ValueError),
    ],
)
def test_rebuild_rejects_malformed(args, exc):
    from dfbuffer._interchange import _rebuild

    with pytest.raises(exc):
        _rebuild(*args)
