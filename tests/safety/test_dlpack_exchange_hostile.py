"""Hostile DLPack C exchange API tables and garbage arguments (safety rule 3): dfbuffer's own
five functions given NULL, wrong objects and malformed tensors report through the header's
convention (-1 with a Python exception, or SetError once for the allocator) and call a
stolen tensor's deleter exactly once; Buffer.from_object given tables with a wrong capsule
name, version or NULL function, or functions that fail or hand over bad tensors, falls back to
``__dlpack__`` or raises a clean exception, never crashes, and deletes each tensor it was
given exactly once."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from _dlpack_ctypes import DLTensor, Tensor
from _dlpack_exchange_ctypes import (
    SET_ERROR,
    Own,
    Table,
    fixed_table,
    forwarding_table,
    producer_class,
)

from dfbuffer import Buffer


@pytest.fixture(scope="module")
def own() -> Own:
    return Own()


def _inner() -> Buffer:
    return Buffer.from_object(np.arange(4, dtype="i8"))


# ---------------------------------------------------------------- tables from_object skips


@pytest.mark.parametrize("attr", [
    None, 0, "dlpack_exchange_api", b"", object(),
    Table(null_from_py=True).capsule(b"dltensor"),
    Table(null_from_py=True).capsule(b"dlpack_exchange_api_v2"),
])
def test_not_a_table_falls_back_to_dlpack(attr):
    p = producer_class(None, attr=attr)(_inner())
    b = Buffer.from_object(p)
    assert p.dlpack_calls == 1
    np.testing.assert_array_equal(np.asarray(b), np.arange(4))


@pytest.mark.parametrize("version", [(0, 9), (1, 0), (1, 2), (2, 0), (2, 5), (2**32 - 1, 3)])
def test_unreadable_version_falls_back_to_dlpack(version):
    # a working function behind a version dfbuffer does not read: never called
    p = producer_class(forwarding_table(version=version))(_inner())
    Buffer.from_object(p)
    assert p.dlpack_calls == 1


def test_future_minor_is_read():
    p = producer_class(forwarding_table(version=(1, 9)))(_inner())
    Buffer.from_object(p)
    assert p.dlpack_calls == 0


def test_chain_without_readable_table_and_a_loop():
    newer = forwarding_table(version=(3, 0))
    # a loop of newer tables: the walk is bounded
    newer.api.header.prev_api = ctypes.pointer(newer.api.header)
    p = producer_class(newer)(_inner())
    Buffer.from_object(p)
    assert p.dlpack_calls == 1
    # a chain down to an older major stops there
    p = producer_class(forwarding_table(version=(2, 0), prev=forwarding_table(version=(0, 8))))(
        _inner())
    Buffer.from_object(p)
    assert p.dlpack_calls == 1


def test_null_function_falls_back_to_dlpack():
    p = producer_class(Table(null_from_py=True))(_inner())
    Buffer.from_object(p)
    assert p.dlpack_calls == 1


def test_failing_function_falls_back_to_dlpack():
    for rc in (-1, 1, -(2**31)):
        p = producer_class(fixed_table(rc))(_inner())
        np.testing.assert_array_equal(np.asarray(Buffer.from_object(p)), np.arange(4))
        assert p.dlpack_calls == 1


def test_failing_function_and_failing_dlpack_raise():
    class Refuses:
        def __dlpack__(self, **kw):
            raise BufferError("refused")

        def __dlpack_device__(self):
            return (1, 0)

    p = producer_class(fixed_table(-1))(Refuses())
    with pytest.raises(BufferError, match="refused"):
        Buffer.from_object(p)


def test_function_raising_through_dfbuffer_falls_back():
    # dfbuffer's own function behind a foreign type: TypeError set, -1 returned
    own = dfbuffer_function_table()
    p = producer_class(own)(_inner())
    Buffer.from_object(p)
    assert p.dlpack_calls == 1


def dfbuffer_function_table() -> Table:
    t = Table(null_from_py=True)
    from _dlpack_exchange_ctypes import own_api

    t.api.managed_tensor_from_py_object_no_sync = own_api().managed_tensor_from_py_object_no_sync
    return t


def test_success_without_a_tensor():
    p = producer_class(fixed_table(0, None))(_inner())
    with pytest.raises(BufferError, match="gave no tensor"):
        Buffer.from_object(p)


BAD_TENSORS = {
    "negative dim": lambda: Tensor(np.arange(4.0), shape=(-1,)),
    "too many dims": lambda: Tensor(np.arange(4.0), ndim=65),
    "negative ndim": lambda: Tensor(np.arange(4.0), ndim=-3),
    "null shape": lambda: Tensor(None, code=2, bits=64, shape=(3,), data=16, ndim=1),
    "lanes": lambda: Tensor(np.arange(4.0), lanes=4),
    "bfloat": lambda: Tensor(np.arange(4, dtype="u2"), code=4, bits=16),
    "huge stride": lambda: Tensor(np.arange(4.0), strides=(2**62,)),
    "huge offset": lambda: Tensor(np.arange(4.0), byte_offset=2**63),
    "major 2": lambda: Tensor(np.arange(4.0), version=(2, 0)),
    "major 0": lambda: Tensor(np.arange(4.0), version=(0, 8)),
}


@pytest.mark.parametrize("case", BAD_TENSORS)
def test_bad_tensor_is_refused_and_deleted_once(case, collect):
    t = BAD_TENSORS[case]()
    if case == "null shape":
        t.m.dl_tensor.shape = ctypes.POINTER(ctypes.c_int64)()
    p = producer_class(fixed_table(0, t))(_inner())
    with pytest.raises((BufferError, OverflowError, ValueError)):
        Buffer.from_object(p)
    collect()
    assert t.deleted == 1
    assert p.dlpack_calls == 0


def test_device_tensor_goes_through_dlpack_and_is_deleted(collect):
    t = Tensor(np.arange(4.0), device=(2, 0))
    p = producer_class(fixed_table(0, t))(_inner())
    b = Buffer.from_object(p)
    assert p.dlpack_calls == 1 and b.device == (1, 0)
    collect()
    assert t.deleted == 1


def test_good_tensor_through_a_hand_written_table(collect):
    arr = np.arange(6, dtype="i2").reshape(2, 3)
    t = Tensor(arr, flags=1)
    p = producer_class(fixed_table(0, t))(_inner())
    b = Buffer.from_object(p)
    assert p.dlpack_calls == 0 and b.readonly and b.ptr == arr.ctypes.data
    np.testing.assert_array_equal(np.asarray(b), arr)
    del b
    collect()
    assert t.deleted == 1


# ---------------------------------------------------------------- dfbuffer's functions


def test_from_py_garbage(own):
    out = ctypes.c_void_p(99)
    with pytest.raises(TypeError, match="NULL"):
        own.from_py_raw(None, ctypes.addressof(out))
    assert out.value is None
    for obj in (np.arange(3), 3, None, Buffer):
        out.value = 99
        with pytest.raises(TypeError, match="expected a dfbuffer.Buffer"):
            own.from_py(obj, ctypes.byref(out))
        assert out.value is None
    inner = _inner()  # held: only its address is passed
    with pytest.raises(ValueError, match="out is NULL"):
        own.from_py_raw(id(inner), None)


def test_from_py_refuses_what_dlpack_refuses(own):
    out = ctypes.c_void_p()
    with pytest.raises(BufferError):
        own.from_py(Buffer.from_object(np.arange(3).astype("M8[s]")), ctypes.byref(out))
    assert out.value is None


def test_to_py_garbage(own, collect):
    out = ctypes.c_void_p(99)
    with pytest.raises(ValueError, match="tensor is NULL"):
        own.to_py(None, ctypes.byref(out))
    assert out.value is None
    t = Tensor(np.arange(4.0))
    with pytest.raises(ValueError, match="out_py_object is NULL"):
        own.to_py(ctypes.addressof(t.m), None)
    assert t.deleted == 1  # stolen: deleted on the failure


@pytest.mark.parametrize("case", BAD_TENSORS)
def test_to_py_bad_tensor_deleted_once(own, case, collect):
    t = BAD_TENSORS[case]()
    if case == "null shape":
        t.m.dl_tensor.shape = ctypes.POINTER(ctypes.c_int64)()
    out = ctypes.c_void_p(99)
    with pytest.raises((BufferError, OverflowError, ValueError)):
        own.to_py(ctypes.addressof(t.m), ctypes.byref(out))
    assert out.value is None
    collect()
    assert t.deleted == 1


def test_to_py_without_deleter(own, collect):
    t = Tensor(np.arange(4.0), deleter=False)
    b = own.to_buffer(ctypes.addressof(t.m))
    np.testing.assert_array_equal(np.asarray(b), np.arange(4.0))
    del b
    collect()


def test_dltensor_garbage(own):
    t = DLTensor()
    with pytest.raises(TypeError, match="NULL"):
        own.dltensor(None, ctypes.addressof(t))
    # held: only their addresses are passed, which keep nothing alive
    arr, inner = np.arange(3), _inner()
    with pytest.raises(TypeError, match="expected a dfbuffer.Buffer"):
        own.dltensor(id(arr), ctypes.addressof(t))
    with pytest.raises(ValueError, match="out is NULL"):
        own.dltensor(id(inner), None)


def test_current_work_stream_garbage(own):
    with pytest.raises(ValueError, match="NULL"):
        own.stream(1, 0, None)
    out = ctypes.c_void_p()
    with pytest.raises(ValueError, match="negative device id"):
        own.stream(1, -1, ctypes.byref(out))


def _proto(shape=(3,), code=2, bits=64, lanes=1, device=(1, 0), ndim=None):
    proto = DLTensor()
    proto.device.device_type, proto.device.device_id = device
    proto.ndim = len(shape) if ndim is None else ndim
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = code, bits, lanes
    proto._dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)  # kept alive with proto
    proto.shape = proto._dims
    return proto


ALLOC_CASES = {
    "null prototype": (None, "ValueError"),
    "cuda": (_proto(device=(2, 0)), "BufferError"),
    "cpu 1": (_proto(device=(1, 1)), "BufferError"),
    "lanes": (_proto(lanes=2), "BufferError"),
    "bits 12": (_proto(bits=12), "BufferError"),
    "code 99": (_proto(code=99), "BufferError"),
    "ndim -1": (_proto(ndim=-1), "ValueError"),
    "ndim 65": (_proto(ndim=65), "ValueError"),
    "negative dim": (_proto(shape=(3, -2)), "ValueError"),
    "overflow": (_proto(shape=(2**31, 2**31, 2**31)), "ValueError"),
    "too large": (_proto(shape=(2**62,)), "ValueError"),
}


@pytest.mark.parametrize("case", ALLOC_CASES)
def test_allocator_garbage(own, case):
    proto, kind = ALLOC_CASES[case]
    if case == "ndim 65":
        proto.shape = (ctypes.c_int64 * 65)(*([1] * 65))
    errors: list = []
    set_error = SET_ERROR(lambda ctx, k, msg: errors.append((ctx, k, msg)))
    out = ctypes.c_void_p(99)
    ctx = ctypes.c_void_p(12345)
    rc = own.alloc(None if proto is None else ctypes.addressof(proto), ctypes.byref(out),
                   ctx.value, ctypes.cast(set_error, ctypes.c_void_p))
    assert rc == -1 and out.value is None
    assert len(errors) == 1 and errors[0][0] == 12345 and errors[0][1] == kind.encode()


def test_allocator_null_out_and_null_shape(own):
    errors: list = []
    set_error = SET_ERROR(lambda ctx, k, msg: errors.append(k))
    proto = _proto()
    assert own.alloc(ctypes.addressof(proto), None, None,
                     ctypes.cast(set_error, ctypes.c_void_p)) == -1
    proto.shape = ctypes.POINTER(ctypes.c_int64)()
    out = ctypes.c_void_p()
    assert own.alloc(ctypes.addressof(proto), ctypes.byref(out), None,
                     ctypes.cast(set_error, ctypes.c_void_p)) == -1
    assert errors == [b"ValueError", b"ValueError"] and out.value is None


# ---------------------------------------------------------------- a racing writer


def test_table_replaced_while_threads_import():
    """One thread swaps the type's table (readable, unreadable, none) while 8 threads
    import: each import gives the right values through the table or ``__dlpack__``."""
    import threading

    good = forwarding_table()
    tables = [good.capsule(), forwarding_table(version=(0, 1)).capsule(), None,
              Table(null_from_py=True).capsule(), fixed_table(-1).capsule()]
    keep = tables[:]  # the capsules' tables outlive every reader
    Producer = producer_class(good)
    arr = np.arange(64, dtype="i4")
    stop = threading.Event()
    errors: list = []

    def writer():
        k = 0
        while not stop.is_set():
            Producer.__dlpack_c_exchange_api__ = tables[k % len(tables)]
            k += 1

    def reader():
        try:
            for _ in range(300):
                b = Buffer.from_object(Producer(Buffer.from_object(arr)))
                assert b.ptr == arr.ctypes.data and np.asarray(b)[63] == 63
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    w = threading.Thread(target=writer)
    readers = [threading.Thread(target=reader) for _ in range(8)]
    w.start()
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    stop.set()
    w.join()
    assert errors == [] and keep
