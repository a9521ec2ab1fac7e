"""DLPack 1.3's C exchange API: dfbuffer.Buffer's table (``__dlpack_c_exchange_api__``), its
five functions called through ctypes, and Buffer.from_object reading a producer's table
(dfbuffer's own behind a foreign type, torch, hand-written ones) before ``__dlpack__``."""

from __future__ import annotations

import ctypes
import weakref

import numpy as np
import pytest
from _dlpack_ctypes import READ_ONLY, Tensor
from _dlpack_exchange_ctypes import (
    API_NAME,
    Own,
    Table,
    fixed_table,
    forwarding_table,
    managed,
    own_api,
    producer_class,
    tensor_array,
)

import dfbuffer
from dfbuffer import Buffer


@pytest.fixture(scope="module")
def own() -> Own:
    return Own()


class Holder:
    """A GC-visible owner whose lifetime a weakref reports."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr


def make(arr: np.ndarray, owner: object = None, readonly: bool = False) -> Buffer:
    """A Buffer over `arr` (any layout), owned by `owner` (contiguous `arr`) or the array."""
    if owner is not None:
        return Buffer(arr.ctypes.data, arr.nbytes, owner=owner, dtype=arr.dtype,
                      shape=arr.shape, readonly=readonly)
    if readonly:
        arr = arr.view()
        arr.flags.writeable = False
    return Buffer.from_object(arr)


# ---------------------------------------------------------------- the table


def test_table_on_the_type():
    cap = Buffer.__dlpack_c_exchange_api__
    assert type(cap).__name__ == "PyCapsule"
    assert "__dlpack_c_exchange_api__" in Buffer.__dict__
    api = own_api()
    assert (api.header.version.major, api.header.version.minor) == (1, 3)
    assert not api.header.prev_api
    for slot in ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                 "managed_tensor_to_py_object_no_sync", "dltensor_from_py_object_no_sync",
                 "current_work_stream"):
        assert getattr(api, slot), slot
    # immutable type: Python cannot replace it
    with pytest.raises(TypeError):
        Buffer.__dlpack_c_exchange_api__ = None  # type: ignore[misc]
    # every instance of the module points at the same static table
    assert ctypes.addressof(own_api()) == ctypes.addressof(api)


# ---------------------------------------------------------------- managed tensor export


@pytest.mark.parametrize("readonly", [False, True])
def test_managed_from_py_is_what_dlpack_exports(own, readonly):
    arr = np.arange(12, dtype="i4").reshape(3, 4)[:, ::2]
    b = make(arr, readonly=readonly)
    m = managed(own.export(b))
    assert (m.version.major, m.version.minor) == (1, 3)
    assert m.flags == (READ_ONLY if readonly else 0)
    t = m.dl_tensor
    assert (t.device.device_type, t.device.device_id) == (1, 0)
    assert t.ndim == 2 and (t.shape[0], t.shape[1]) == (3, 2)
    assert (t.strides[0], t.strides[1]) == (4, 2)
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (0, 32, 1)
    assert t.data + t.byte_offset == arr.ctypes.data
    np.testing.assert_array_equal(tensor_array(t, "i4"), arr)
    m.deleter(ctypes.addressof(m))


def test_managed_round_trip_and_lifetime(own, collect):
    holder = Holder(np.arange(10.0))
    ref = weakref.ref(holder)
    b = make(holder.arr, owner=holder)
    bref = weakref.ref(b)
    back = own.to_buffer(own.export(b))
    assert back.ptr == b.ptr and back.shape == b.shape and back.dtype == b.dtype
    assert back.native == dfbuffer.NativeFormat.DLPACK and not back.readonly
    del b, holder
    collect()
    # the tensor holds the first Buffer, which holds the owner
    assert bref() is not None and ref() is not None
    np.testing.assert_array_equal(np.asarray(back), np.arange(10.0))
    del back
    collect()
    assert bref() is None and ref() is None


def test_to_py_keeps_the_read_only_flag(own):
    b = make(np.arange(4, dtype="u1"), readonly=True)
    back = own.to_buffer(own.export(b))
    assert back.readonly
    assert memoryview(back).readonly


def test_to_py_of_a_foreign_tensor_calls_its_deleter_once(own, collect):
    arr = np.arange(6, dtype="f4").reshape(2, 3)
    t = Tensor(arr, flags=READ_ONLY)
    back = own.to_buffer(ctypes.addressof(t.m))
    assert back.readonly and back.shape == (2, 3) and back.ptr == arr.ctypes.data
    assert t.deleted == 0
    del back
    collect()
    assert t.deleted == 1


def test_from_object_of_a_foreign_type_with_dfbuffer_table(collect):
    # a real tensor through a table a foreign type publishes (dfbuffer's function inside)
    Producer = producer_class(forwarding_table())
    holder = Holder(np.arange(8, dtype="i8"))
    ref = weakref.ref(holder)
    p = Producer(make(holder.arr, owner=holder))
    b = Buffer.from_object(p)
    assert p.dlpack_calls == 0
    assert b.ptr == holder.arr.ctypes.data and b.native == dfbuffer.NativeFormat.DLPACK
    np.testing.assert_array_equal(np.asarray(b), np.arange(8))
    del p, holder
    collect()
    assert ref() is not None
    del b
    collect()
    assert ref() is None


def test_from_object_dtype_through_the_table():
    Producer = producer_class(forwarding_table())
    p = Producer(make(np.arange(4, dtype="i8")))
    b = Buffer.from_object(p, dtype="u1")
    assert b.shape == (32,) and p.dlpack_calls == 0


def test_read_only_through_the_table():
    Producer = producer_class(forwarding_table())
    arr = np.arange(4, dtype="i8")
    b = Buffer.from_object(Producer(make(arr, readonly=True)))
    assert b.readonly


def test_newer_table_chained_to_a_readable_one():
    old = forwarding_table()
    Producer = producer_class(fixed_table(-1, version=(2, 0), prev=old))
    p = Producer(make(np.arange(3.0)))
    Buffer.from_object(p)
    assert p.dlpack_calls == 0


# ---------------------------------------------------------------- DLTensor view


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "0-d", "empty"])
def test_dltensor_view(own, layout):
    base = np.arange(24, dtype="f8").reshape(4, 6)
    arr = {
        "contiguous": base,
        "strided": base[::2, 1::3],
        "reversed": base[::-1],
        "0-d": np.array(7.5),
        "empty": base[:0],
    }[layout]
    b = make(arr)
    t = own.view(b)
    assert t.ndim == arr.ndim and t.byte_offset == 0 and t.data
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (2, 64, 1)
    assert tuple(t.shape[i] for i in range(t.ndim)) == arr.shape
    if arr.ndim == 0:
        assert not t.shape and not t.strides
    np.testing.assert_array_equal(tensor_array(t, "f8"), arr)


def test_dltensor_view_borrows_the_buffer(own):
    b = make(np.arange(6, dtype="i2").reshape(2, 3))
    t1, t2 = own.view(b), own.view(b)
    # no allocation: both point at the Buffer's own slots
    assert ctypes.addressof(t1.shape.contents) == ctypes.addressof(t2.shape.contents)


def test_dltensor_view_refusals(own):
    with pytest.raises(BufferError, match="read-only"):
        own.view(make(np.arange(3.0), readonly=True))
    arr = np.zeros(10, dtype="u1")
    odd = Buffer(arr.ctypes.data, 10, owner=arr, dtype="i4", shape=(2,), strides=(5,))
    with pytest.raises(BufferError, match="multiple of the itemsize"):
        own.view(odd)
    with pytest.raises(BufferError, match="DLPack"):
        own.view(make(np.arange(3).astype("M8[s]")))


# ---------------------------------------------------------------- stream and allocator


def test_current_work_stream_is_none(own):
    out = ctypes.c_void_p(1234)
    for device in ((1, 0), (2, 0), (2, 3), (10, 1)):
        out.value = 1234
        assert own.stream(device[0], device[1], ctypes.byref(out)) == 0
        assert out.value is None


@pytest.mark.parametrize(("code", "bits", "dtype"), [
    (0, 32, "i4"), (1, 8, "u1"), (2, 64, "f8"), (2, 16, "f2"), (5, 128, "c16"), (6, 8, "?")])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3)])
def test_allocator(own, collect, code, bits, dtype, shape):
    from _dlpack_ctypes import DLTensor

    errors: list[tuple[bytes, bytes]] = []
    from _dlpack_exchange_ctypes import SET_ERROR

    set_error = SET_ERROR(lambda ctx, kind, msg: errors.append((kind, msg)))
    proto = DLTensor()
    proto.device.device_type, proto.device.device_id = 1, 0
    proto.ndim = len(shape)
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = code, bits, 1
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    proto.shape = dims
    out = ctypes.c_void_p()
    assert own.alloc(ctypes.addressof(proto), ctypes.byref(out), None,
                     ctypes.cast(set_error, ctypes.c_void_p)) == 0
    assert errors == []
    m = managed(out.value)
    t = m.dl_tensor
    assert (m.version.major, m.version.minor) == (1, 3) and m.flags == 0
    assert t.data % 64 == 0 and t.byte_offset == 0
    assert tuple(t.shape[i] for i in range(t.ndim)) == shape
    b = own.to_buffer(out.value)
    assert b.shape == shape and b.dtype == np.dtype(dtype) and b.c_contiguous
    assert not b.readonly
    a = np.asarray(b)
    assert not a.any()
    if a.size:
        a[...] = 1  # writable host memory
        assert np.asarray(b).all()
    del a, b
    collect()


def test_allocator_without_error_callback(own):
    out = ctypes.c_void_p(1)
    assert own.alloc(None, ctypes.byref(out), None, None) == -1
    assert out.value is None


# ---------------------------------------------------------------- peers


def test_torch_exchange_api():
    torch = pytest.importorskip("torch")
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("this torch has no DLPack C exchange API")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1::2]
    b = Buffer.from_object(t)
    assert b.ptr == t.data_ptr() and b.shape == (3, 2) and b.strides == (16, 8)
    np.testing.assert_array_equal(np.asarray(b), t.numpy())
    # torch's table reads dfbuffer's Buffer through its own function pointers
    # (torch.from_dlpack itself calls __dlpack__)
    back = torch.from_dlpack(b)
    assert back.data_ptr() == t.data_ptr()


def test_torch_table_is_used_not_dlpack(collect):
    torch = pytest.importorskip("torch")
    if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        pytest.skip("this torch has no DLPack C exchange API")

    class NoDlpack(torch.Tensor):
        def __dlpack__(self, *a, **k):  # type: ignore[override]
            raise AssertionError("the exchange API was not used")

    t = torch.arange(5, dtype=torch.int64).as_subclass(NoDlpack)
    ref = weakref.ref(t)
    b = Buffer.from_object(t)
    np.testing.assert_array_equal(np.asarray(b), np.arange(5))
    del t
    collect()
    assert ref() is not None  # the managed tensor keeps the tensor
    del b
    collect()
    assert ref() is None


def test_torch_refusals_stay_those_of_dlpack():
    torch = pytest.importorskip("torch")
    # requires_grad: torch's table exports it, its __dlpack__ refuses; dfbuffer asks the latter
    with pytest.raises(BufferError, match="gradient"):
        Buffer.from_object(torch.ones(3, requires_grad=True))


def test_tvm_ffi_reads_the_table(collect):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    holder = Holder(np.arange(6.0))
    ref = weakref.ref(holder)
    ro = make(holder.arr, owner=holder, readonly=True)
    # __dlpack__() (the legacy capsule tvm_ffi asks for) refuses read-only memory: the
    # tensor tvm_ffi holds came through the table
    with pytest.raises(BufferError):
        ro.__dlpack__()
    t = tvm_ffi.from_dlpack(ro)
    del ro, holder
    collect()
    assert ref() is not None
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(6.0))
    del t
    collect()
    assert ref() is None


def test_tvm_ffi_exchange_producer():
    tvm_ffi = pytest.importorskip("tvm_ffi")
    wrapper = getattr(tvm_ffi.core, "DLTensorTestWrapper", None)
    if wrapper is None or not hasattr(wrapper, "__dlpack_c_exchange_api__"):
        pytest.skip("this tvm_ffi has no exchange API producer")
    t = tvm_ffi.from_dlpack(np.arange(4, dtype="i4"))
    w = wrapper(t)
    b = Buffer.from_object(w)
    np.testing.assert_array_equal(np.asarray(b), np.arange(4))


def test_capsule_name_constant():
    assert API_NAME == b"dlpack_exchange_api"
    assert isinstance(Table(null_from_py=True).capsule(), type(Buffer.__dlpack_c_exchange_api__))
