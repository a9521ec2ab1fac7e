"""A minimal hand-written DLPack producer (ctypes), for layouts no peer makes.

Used by the from_object tests to build tensors with unsupported dtypes, lanes,
versions, byte offsets, NULL strides and a deleter that counts its calls.
"""

from __future__ import annotations

import ctypes

import numpy as np


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
    ]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# Capsule names must outlive the capsules: module-level constants.
NAMES = {
    "dltensor_versioned": b"dltensor_versioned",
    "dltensor": b"dltensor",
    "wrong": b"not_a_dltensor",
}

READ_ONLY = 1


class Tensor:
    """Owns a managed tensor built over `arr` (kept alive here) and counts
    deleter calls.  Keep it alive as long as any capsule made from it."""

    def __init__(
        self,
        arr: np.ndarray | None = None,
        *,
        code: int | None = None,
        bits: int | None = None,
        lanes: int = 1,
        shape: tuple[int, ...] | None = None,
        strides: tuple[int, ...] | None | str = "auto",
        byte_offset: int = 0,
        data: int | None = None,
        device: tuple[int, int] = (1, 0),
        flags: int = 0,
        version: tuple[int, int] = (1, 3),
        legacy: bool = False,
        ndim: int | None = None,
        deleter: bool = True,
    ):
        self.arr = arr
        self.deleted = 0
        if arr is not None:
            kinds = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
            code = kinds[arr.dtype.kind] if code is None else code
            bits = arr.dtype.itemsize * 8 if bits is None else bits
            shape = arr.shape if shape is None else shape
            if strides == "auto":
                strides = tuple(s // arr.itemsize for s in arr.strides)
            data = arr.ctypes.data if data is None else data
        else:
            shape = () if shape is None else shape
            strides = None if strides == "auto" else strides
            data = 0 if data is None else data
        self.shape_arr = (ctypes.c_int64 * max(len(shape), 1))(*shape)
        self.strides_arr = None
        if strides is not None:
            self.strides_arr = (ctypes.c_int64 * max(len(strides), 1))(*strides)

        # a bound method, not a function made per call.  (On free-threaded 3.13 only
        # top-level functions and classes made after the first thread started are
        # immortal, CPython gh-117783, so a closure would be collected too; the leak that
        # showed there was ctypes.cast's cycle, below.)  The method keeps the Tensor in a
        # reference cycle: it lives until a collection, after the capsules a test made
        # from it.
        self._cb = DELETER(self._on_delete) if deleter else DELETER()
        if legacy:
            self.m = DLManagedTensor()
        else:
            self.m = DLManagedTensorVersioned()
            self.m.version.major, self.m.version.minor = version
            self.m.flags = flags
        self.m.deleter = self._cb
        t = self.m.dl_tensor
        t.data = data
        t.device.device_type, t.device.device_id = device
        t.ndim = len(shape) if ndim is None else ndim
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, lanes
        # the arrays are assigned, not ctypes.cast: cast records the array in its own
        # _objects dict, a reference cycle per tensor, which the leak tests saw grow on
        # free-threaded 3.13 (its collections left some of them)
        t.shape = self.shape_arr
        if self.strides_arr is not None:
            t.strides = self.strides_arr
        t.byte_offset = byte_offset
        self.legacy = legacy

    def _on_delete(self, _ptr) -> None:
        self.deleted += 1

    def capsule(self, name: str | None = None):
        """A new capsule over the managed tensor (no capsule destructor: the
        consumer must call the deleter)."""
        if name is None:
            name = "dltensor" if self.legacy else "dltensor_versioned"
        return _capsule_new(ctypes.addressof(self.m), NAMES[name], None)


class Producer:
    """An object exposing only __dlpack__ / __dlpack_device__ returning a fixed
    capsule."""

    def __init__(self, cap, device=(1, 0)):
        self.cap = cap
        self.device = device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self.cap

    def __dlpack_device__(self):
        return self.device
