"""DLPack 1.3's C exchange API through ctypes: dfbuffer.Buffer's own table (its function
pointers, called from Python) and hand-written tables for producers no peer makes.

A producer here is a Python class whose type holds ``__dlpack_c_exchange_api__`` (a capsule
over a table built below) and whose ``__dlpack__`` counts its calls, so a test can tell which
path Buffer.from_object took.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
from _dlpack_ctypes import DLManagedTensorVersioned, DLPackVersion, DLTensor

import dfbuffer

API_NAME = b"dlpack_exchange_api"

_P = ctypes.c_void_p
_PM = ctypes.POINTER(ctypes.c_void_p)

# Called with the GIL held; PYFUNCTYPE raises the Python error a function set.
MANAGED_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, _PM)
MANAGED_FROM_PY_RAW = ctypes.PYFUNCTYPE(ctypes.c_int, _P, _P)  # garbage / NULL arguments
MANAGED_TO_PY = ctypes.PYFUNCTYPE(ctypes.c_int, _P, _PM)
DLTENSOR_FROM_PY = ctypes.PYFUNCTYPE(ctypes.c_int, _P, _P)
CURRENT_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, _PM)
SET_ERROR = ctypes.CFUNCTYPE(None, _P, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATOR = ctypes.PYFUNCTYPE(ctypes.c_int, _P, _PM, _P, _P)


class ApiHeader(ctypes.Structure):
    pass


ApiHeader._fields_ = [("version", DLPackVersion), ("prev_api", ctypes.POINTER(ApiHeader))]


class Api(ctypes.Structure):
    """DLPackExchangeAPI: the header, then five function pointers (raw addresses)."""

    _fields_ = [
        ("header", ApiHeader),
        ("managed_tensor_allocator", _P),
        ("managed_tensor_from_py_object_no_sync", _P),
        ("managed_tensor_to_py_object_no_sync", _P),
        ("dltensor_from_py_object_no_sync", _P),
        ("current_work_stream", _P),
    ]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def own_api() -> Api:
    """dfbuffer.Buffer's table (static: it lives as long as the process)."""
    cap = dfbuffer.Buffer.__dlpack_c_exchange_api__
    return Api.from_address(_get_pointer(cap, API_NAME))


class Own:
    """dfbuffer's five functions, callable from Python."""

    def __init__(self) -> None:
        api = own_api()
        self.api = api
        self.from_py = MANAGED_FROM_PY(api.managed_tensor_from_py_object_no_sync)
        self.from_py_raw = MANAGED_FROM_PY_RAW(api.managed_tensor_from_py_object_no_sync)
        self.to_py = MANAGED_TO_PY(api.managed_tensor_to_py_object_no_sync)
        self.dltensor = DLTENSOR_FROM_PY(api.dltensor_from_py_object_no_sync)
        self.stream = CURRENT_STREAM(api.current_work_stream)
        self.alloc = ALLOCATOR(api.managed_tensor_allocator)

    def export(self, obj: Any) -> int:
        """The address of obj's managed tensor (raises what the function set)."""
        out = ctypes.c_void_p()
        assert self.from_py(obj, ctypes.byref(out)) == 0
        assert out.value
        return out.value

    def to_buffer(self, m: int) -> Any:
        """The Buffer that takes managed tensor `m` over."""
        out = ctypes.c_void_p()
        assert self.to_py(m, ctypes.byref(out)) == 0
        # the function returned a new reference: hand it to Python
        obj = ctypes.cast(out, ctypes.py_object).value
        ctypes.pythonapi.Py_DecRef(ctypes.py_object(obj))
        return obj

    def view(self, obj: Any) -> DLTensor:
        t = DLTensor()
        assert self.dltensor(id(obj), ctypes.addressof(t)) == 0
        return t


def managed(addr: int) -> DLManagedTensorVersioned:
    return DLManagedTensorVersioned.from_address(addr)


def tensor_array(t: DLTensor, dtype: Any) -> np.ndarray:
    """A NumPy view of DLTensor `t` (host memory, element strides)."""
    dt = np.dtype(dtype)

    class View:
        __array_interface__ = {
            "data": (t.data + t.byte_offset, False),
            "shape": tuple(t.shape[i] for i in range(t.ndim)),
            "strides": tuple(t.strides[i] * dt.itemsize for i in range(t.ndim)),
            "typestr": dt.str,
            "version": 3,
        }

    return np.asarray(View())


class Table:
    """A hand-written exchange table over Python callbacks (kept alive here)."""

    def __init__(
        self,
        from_py: Any = None,
        *,
        version: tuple[int, int] = (1, 3),
        prev: Table | None = None,
        null_from_py: bool = False,
    ) -> None:
        self.api = Api()
        self.api.header.version.major, self.api.header.version.minor = version
        if prev is not None:
            self.api.header.prev_api = ctypes.pointer(prev.api.header)
        self.prev = prev
        own = own_api()
        # the other slots borrow dfbuffer's (never called by from_object)
        self.api.managed_tensor_allocator = own.managed_tensor_allocator
        self.api.managed_tensor_to_py_object_no_sync = own.managed_tensor_to_py_object_no_sync
        self.api.current_work_stream = own.current_work_stream
        self.cb = None
        if not null_from_py:
            self.cb = MANAGED_FROM_PY_RAW(from_py)
            self.api.managed_tensor_from_py_object_no_sync = ctypes.cast(self.cb, _P).value

    def capsule(self, name: bytes = API_NAME) -> Any:
        # a capsule keeps neither the table nor its name alive: both are kept here, for
        # the process's life, so that no capsule points at freed memory
        _KEEP.append((self, name))
        return _capsule_new(ctypes.addressof(self.api), name, None)


# the tables and names that capsules point at (Table.capsule)
_KEEP: list[Any] = []


def producer_class(table: Table | None, attr: Any = None) -> type:
    """A new producer type: ``__dlpack_c_exchange_api__`` is table's capsule (or `attr`),
    ``__dlpack__`` exports ``self.inner`` and counts its calls in ``self.dlpack_calls``."""

    class ExchangeProducer:
        __dlpack_c_exchange_api__ = table.capsule() if table is not None else attr

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.dlpack_calls = 0

        def __dlpack__(self, **kw: Any) -> Any:
            self.dlpack_calls += 1
            return self.inner.__dlpack__(**kw)

        def __dlpack_device__(self) -> Any:
            return self.inner.__dlpack_device__()

    ExchangeProducer.table = table  # type: ignore[attr-defined]  # keeps it alive
    return ExchangeProducer


def forwarding_table(**kw: Any) -> Table:
    """A table whose managed_tensor_from_py_object_no_sync exports ``obj.inner`` (a Buffer)
    through dfbuffer's own function: a real tensor through a foreign table."""
    own = Own()

    def from_py(obj_addr: int, out_addr: int) -> int:
        obj = ctypes.cast(obj_addr, ctypes.py_object).value
        return own.from_py(obj.inner, ctypes.cast(out_addr, _PM))

    return Table(from_py, **kw)


def fixed_table(result: int, tensor: Any = None, **kw: Any) -> Table:
    """A table whose function stores `tensor`'s managed tensor (a _dlpack_ctypes.Tensor, or
    None for NULL) and returns `result`, setting no exception."""

    def from_py(obj_addr: int, out_addr: int) -> int:
        addr = 0 if tensor is None else ctypes.addressof(tensor.m)
        ctypes.c_void_p.from_address(out_addr).value = addr
        return result

    return Table(from_py, **kw)
