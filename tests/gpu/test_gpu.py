"""GPU round trips (run by tests/gpu/run.sh on a machine with CUDA and CuPy or torch).

Real device memory through dfbuffer: DLPack and ``__cuda_array_interface__`` in and out
with CuPy and torch, Arrow device arrays, ``Buffer.from_object`` on device memory, and the
host paths refusing to read it.  Every module-level check skips cleanly when its library
or a device is missing.
"""

from __future__ import annotations

import ctypes
import pickle

import numpy as np
import pytest

import dfbuffer
from dfbuffer import Buffer, DeviceType

try:
    import cupy

    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no cupy, no driver, no device
    cupy = None
    HAVE_CUPY = False

try:
    import torch

    HAVE_TORCH = torch.cuda.is_available()
except Exception:
    torch = None
    HAVE_TORCH = False

needs_cupy = pytest.mark.skipif(not HAVE_CUPY, reason="CuPy with a CUDA device needed")
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch with CUDA needed")

if not (HAVE_CUPY or HAVE_TORCH):
    pytest.skip("no CUDA device usable from CuPy or torch", allow_module_level=True)


class DeviceOnly:
    """Only the device half of the Arrow PyCapsule interface of `obj`."""

    def __init__(self, obj):
        self.__arrow_c_device_array__ = obj.__arrow_c_device_array__


def _device_array_fields(cap):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    raw = (ctypes.c_int64 * 16).from_address(get(cap, b"arrow_device_array"))
    # ArrowArray is 10 words; then device_id, device_type (int32), sync_event
    return raw[10], raw[11] & 0xFFFFFFFF, raw[12], raw[5]


def _refuses_host(buf):
    with pytest.raises(TypeError):
        np.asarray(buf)
    with pytest.raises(BufferError):
        memoryview(buf)
    assert not hasattr(buf, "__array_interface__")
    with pytest.raises(TypeError, match="device"):
        pickle.dumps(buf, protocol=5)


@needs_cupy
def test_cupy_cuda_array_interface_round_trip():
    x = cupy.arange(10, dtype=cupy.float32)
    buf = Buffer.from_object(x)
    assert buf.device == (DeviceType.CUDA, x.device.id)
    assert buf.ptr == x.data.ptr and buf.shape == (10,) and buf.dtype == np.float32
    assert buf.native == dfbuffer.NativeFormat.CUDA_ARRAY_INTERFACE
    cai = buf.__cuda_array_interface__
    assert cai["data"][0] == x.data.ptr and cai["shape"] == (10,)
    y = cupy.asarray(buf)  # through __cuda_array_interface__, no copy
    assert y.data.ptr == x.data.ptr
    y[0] = 42
    assert float(x[0]) == 42.0
    _refuses_host(buf)


@needs_cupy
def test_cupy_dlpack_round_trip():
    x = cupy.arange(12, dtype=cupy.int64).reshape(3, 4)[:, ::2]
    buf = Buffer.from_object(x.__dlpack__())
    assert buf.device[0] == DeviceType.CUDA and buf.strides == x.strides
    z = cupy.from_dlpack(buf)
    assert z.data.ptr == x.data.ptr
    assert cupy.array_equal(z, x)
    _refuses_host(buf)


@needs_torch
def test_torch_dlpack_round_trip():
    t = torch.arange(8, dtype=torch.float64, device="cuda")
    buf = Buffer.from_object(t)
    assert buf.device == (DeviceType.CUDA, t.device.index or 0)
    assert buf.ptr == t.data_ptr()
    u = torch.from_dlpack(buf)
    assert u.data_ptr() == t.data_ptr() and u.device == t.device
    u[1] = -1
    assert float(t[1]) == -1.0
    _refuses_host(buf)


@needs_torch
def test_torch_cuda_array_interface_consumer():
    t = torch.arange(5, dtype=torch.int32, device="cuda")
    buf = Buffer.from_object(t)
    assert buf.__cuda_array_interface__["data"][0] == t.data_ptr()
    if HAVE_CUPY:
        assert cupy.asarray(buf).data.ptr == t.data_ptr()


def _device_tensor():
    if HAVE_CUPY:
        x = cupy.arange(6, dtype=cupy.int32)
        return x, x.data.ptr, x.device.id
    t = torch.arange(6, dtype=torch.int32, device="cuda")
    return t, t.data_ptr(), t.device.index or 0


def test_arrow_device_array_export_and_import():
    keep, ptr, dev = _device_tensor()
    buf = Buffer.from_object(keep)
    _, cap = buf.__arrow_c_device_array__()
    device_id, device_type, sync_event, buffers = _device_array_fields(cap)
    assert (device_type, device_id, sync_event) == (2, dev, 0)
    back = Buffer.from_object(DeviceOnly(buf))
    assert back.ptr == ptr and back.device == (DeviceType.CUDA, dev)
    _refuses_host(back)
    with pytest.raises(BufferError, match="CUDA"):
        dfbuffer.column_to_ndarray(DeviceOnly(buf))
    with pytest.raises(BufferError, match="CUDA"):
        dfbuffer.from_dataframe(DeviceOnly(buf))
    df = dfbuffer.to_interchange(DeviceOnly(buf))
    data = df.get_column(0).get_buffers()["data"][0]
    assert data.__dlpack_device__() == (2, dev) and data.ptr == ptr


def test_arrow_device_array_read_by_pyarrow_cuda():
    pa = pytest.importorskip("pyarrow")
    try:
        import pyarrow.cuda  # noqa: F401
    except ImportError:
        pytest.skip("pyarrow built without CUDA")
    keep, ptr, dev = _device_tensor()
    buf = Buffer.from_object(keep)
    arr = pa.Array._import_from_c_device_capsule(*buf.__arrow_c_device_array__())
    assert arr.device_type == pa.DeviceAllocationType.CUDA
    assert arr.buffers()[1].address == ptr


def test_from_object_device_memory_refuses_host_converters():
    keep, ptr, dev = _device_tensor()
    buf = Buffer.from_object(keep)
    with pytest.raises(BufferError):
        dfbuffer.buffer_to_ndarray(buf, (dfbuffer.DtypeKind.INT, 32, "i", "="))
