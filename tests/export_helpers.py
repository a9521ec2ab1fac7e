"""Helpers shared by the Buffer export tests (test_dlpack_export, test_array_exports,
test_pickle, test_export_lifetime): Buffers made from NumPy arrays with the documented
``ptr`` semantics, and ctypes views of DLPack capsules and of ``Py_buffer``."""

from __future__ import annotations

import ctypes

import numpy as np
from _dlpack_ctypes import (  # noqa: F401
    DELETER,
    DLDataType,
    DLDevice,
    DLManagedTensor,
    DLManagedTensorVersioned,
    DLPackVersion,
    DLTensor,
)
from producers import INT_FLOAT_DTYPES, addr

import dfbuffer

# Every dtype the exports support, with a short id.
ALL_DTYPES = [
    "?",
    *INT_FLOAT_DTYPES,
    "c8",
    "c16",
    "M8[ns]",
    "m8[s]",
]
DLPACK_DTYPES = [d for d in ALL_DTYPES if d[0] not in "Mm"]


class Owner:
    """A weakref-able owner wrapping a NumPy array (the memory)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr


def lowest_address(arr: np.ndarray) -> tuple[int, int]:
    """Return (ptr, bufsize) of the block `arr` addresses (ptr = lowest address)."""
    addr = arr.__array_interface__["data"][0]
    if arr.size == 0:
        return addr, 0
    lo = hi = 0
    for n, s in zip(arr.shape, arr.strides, strict=True):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return addr + lo, hi - lo + arr.itemsize


def make_buffer(
    arr: np.ndarray,
    *,
    owner: object = None,
    readonly: bool | None = None,
    dtype: object = None,
    device: tuple[int, int] | None = None,
) -> dfbuffer.Buffer:
    """A Buffer describing exactly the elements of `arr` (same address, strides)."""
    ptr, size = lowest_address(arr)
    kw = {}
    if device is not None:
        kw["device"] = device
    return dfbuffer.Buffer(
        ptr,
        size,
        owner=arr if owner is None else owner,
        dtype=arr.dtype if dtype is None else dtype,
        shape=arr.shape,
        strides=arr.strides,
        readonly=(not arr.flags.writeable) if readonly is None else readonly,
        **kw,
    )


def sample(dtype: str, n: int) -> np.ndarray:
    """Deterministic, distinct-ish values of `dtype` (n elements, 1-D)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.arange(n) % 3 == 1
    if dt.kind in "Mm":
        return (np.arange(n, dtype=np.int64) * 1_000_003 - 7).view(dt)
    if dt.kind == "c":
        return (np.arange(n) * 0.5 + 1j * (np.arange(n) - 3)).astype(dt)
    if dt.kind == "u":
        return (np.arange(n) * 7 % 251).astype(dt)
    return (np.arange(n) * 3 - n).astype(dt)


def layouts(dtype: str) -> dict[str, np.ndarray]:
    """Arrays of `dtype` in every layout the tests cover (views of fresh memory)."""
    base = sample(dtype, 4 * 5 * 6).reshape(4, 5, 6)
    ro = base[1:3].copy()
    ro.flags.writeable = False
    return {
        "0d": base[1, 2, 3:4].reshape(()),
        "1d": base[0, 0],
        "2d-C": base[0],
        "2d-F": base[0].T,
        "3d-C": base,
        "3d-sliced": base[::2, 1:, ::3],
        "negative": base[::-1, :, ::-2],
        "broadcast": np.broadcast_to(base[0, 0], (3, 6)),
        "zero-size": base[:, 2:2],
        "empty-1d": base[0, 0, :0],
        "readonly": ro,
    }


def check_same(out: np.ndarray, arr: np.ndarray) -> None:
    """Asserts that `out` is `arr` exported and read back without a copy: the same
    dtype, shape, values, writeability, address and strides (NumPy keeps element
    strides; a consumer may normalize those of size-1 dimensions)."""
    assert out.dtype == arr.dtype
    assert out.shape == arr.shape
    np.testing.assert_array_equal(out, arr)
    assert out.flags.writeable == arr.flags.writeable
    if arr.size:
        assert addr(out) == addr(arr)
        for n, s_out, s_in in zip(arr.shape, out.strides, arr.strides, strict=True):
            if n > 1:
                assert s_out == s_in


# ---------------------------------------------------------------- DLPack via ctypes

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.restype = ctypes.c_int
_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]

_USED_NAMES = {
    b"dltensor_versioned": b"used_dltensor_versioned",
    b"dltensor": b"used_dltensor",
}

READ_ONLY = 1
IS_COPIED = 2


def capsule_name(cap: object) -> str:
    return _get_name(cap).decode()


def decode(cap: object) -> DLManagedTensorVersioned | DLManagedTensor:
    """The managed tensor inside a DLPack capsule (still owned by the capsule)."""
    name = _get_name(cap)
    ptr = _get_pointer(cap, name)
    if name == b"dltensor_versioned":
        return DLManagedTensorVersioned.from_address(ptr)
    assert name == b"dltensor", name
    return DLManagedTensor.from_address(ptr)


def consume(cap: object) -> tuple[DLManagedTensorVersioned | DLManagedTensor, DELETER]:
    """Take ownership of a capsule's tensor as a consumer does (rename to used_*).

    Returns the tensor and its deleter; the caller must call the deleter once.
    """
    m = decode(cap)
    # PyCapsule_SetName keeps the pointer: pass bytes that live forever.
    _set_name(cap, _USED_NAMES[_get_name(cap)])
    # a function pointer of its own (the field's would read the tensor's freed memory)
    deleter = DELETER(ctypes.cast(m.deleter, ctypes.c_void_p).value)
    return m, deleter


def tensor_info(cap: object) -> dict:
    """Decoded fields of a capsule's DLTensor (plus version and flags if versioned)."""
    m = decode(cap)
    t = m.dl_tensor
    info = {
        "data": t.data or 0,
        "device": (t.device.device_type, t.device.device_id),
        "ndim": t.ndim,
        "dtype": (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        "shape": tuple(t.shape[i] for i in range(t.ndim)),
        "strides": tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None,
        "byte_offset": t.byte_offset,
        "strides_null": not bool(t.strides),
    }
    if isinstance(m, DLManagedTensorVersioned):
        info["version"] = (m.version.major, m.version.minor)
        info["flags"] = m.flags
    return info


# ---------------------------------------------------------------- buffer protocol


class PyBuffer(ctypes.Structure):
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
        ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
        ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)),
        ("internal", ctypes.c_void_p),
    ]


PyBUF_SIMPLE = 0
PyBUF_WRITABLE = 0x0001
PyBUF_FORMAT = 0x0004
PyBUF_ND = 0x0008
PyBUF_STRIDES = 0x0010 | PyBUF_ND
PyBUF_C_CONTIGUOUS = 0x0020 | PyBUF_STRIDES
PyBUF_F_CONTIGUOUS = 0x0040 | PyBUF_STRIDES
PyBUF_ANY_CONTIGUOUS = 0x0080 | PyBUF_STRIDES
PyBUF_INDIRECT = 0x0100 | PyBUF_STRIDES
PyBUF_RECORDS = PyBUF_STRIDES | PyBUF_WRITABLE | PyBUF_FORMAT
PyBUF_FULL_RO = PyBUF_INDIRECT | PyBUF_FORMAT

_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.restype = ctypes.c_int
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(PyBuffer), ctypes.c_int]
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.restype = None
_release_buffer.argtypes = [ctypes.POINTER(PyBuffer)]


def get_buffer(obj: object, flags: int) -> dict:
    """Call PyObject_GetBuffer(obj, flags); return the view's fields (released again).

    Raises what the exporter raises.
    """
    view = PyBuffer()
    _get_buffer(obj, ctypes.byref(view), flags)
    try:
        nd = view.ndim
        return {
            "buf": view.buf or 0,
            "obj_is_set": bool(view.obj),
            "len": view.len,
            "itemsize": view.itemsize,
            "readonly": bool(view.readonly),
            "ndim": nd,
            "format": None if view.format is None else view.format.decode(),
            "shape": tuple(view.shape[i] for i in range(nd)) if view.shape else None,
            "strides": tuple(view.strides[i] for i in range(nd)) if view.strides else None,
        }
    finally:
        _release_buffer(ctypes.byref(view))
