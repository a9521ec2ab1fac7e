"""The Buffer type itself: attributes, layout rules, immutability, GC, enums."""

from __future__ import annotations

import gc
import os
import sys
import textwrap
import weakref

import numpy as np
import pytest
from child_processes import ChildProcess

import dfbuffer
from dfbuffer import Buffer, ColumnNullType, DeviceType, DtypeKind, NativeFormat


class Owner:
    def __init__(self, arr):
        self.arr = arr


def test_attributes_of_a_c_contiguous_buffer():
    a = np.arange(12, dtype="<i4").reshape(3, 4)
    b = Buffer(a.ctypes.data, a.nbytes, owner=a, dtype="i4", shape=(3, 4))
    assert b.ptr == a.ctypes.data
    assert b.bufsize == 48
    assert b.shape == (3, 4)
    assert b.strides == (16, 4)
    assert b.dtype == np.dtype("i4")
    assert b.itemsize == 4
    assert b.ndim == 2
    assert b.size == 12
    assert b.nbytes == 48
    assert b.device == (DeviceType.CPU, 0)
    assert isinstance(b.device[0], DeviceType)
    assert b.owner is a
    assert b.readonly is False
    assert b.native is NativeFormat.RAW
    assert b.c_contiguous and not b.f_contiguous


def test_default_shape_is_bufsize_over_itemsize():
    a = np.zeros(10, dtype="f8")
    b = Buffer(a.ctypes.data, 80, owner=a, dtype="f8")
    assert b.shape == (10,)
    assert b.strides == (8,)
    assert Buffer(a.ctypes.data, 80, owner=a).shape == (80,)  # bytes by default


def test_interchange_dtype_tuples():
    a = np.zeros(4, dtype="i8")
    p = a.ctypes.data
    assert Buffer(p, 32, owner=a, dtype=(0, 64, "l", "=")).dtype == np.dtype("i8")
    assert Buffer(p, 32, owner=a, dtype=(1, 8, "C", "=")).dtype == np.dtype("u1")
    assert Buffer(p, 32, owner=a, dtype=(2, 16, "e", "=")).dtype == np.dtype("f2")
    assert Buffer(p, 32, owner=a, dtype=(20, 8, "b", "=")).dtype == np.dtype("?")
    assert Buffer(p, 32, owner=a, dtype=(0, 32, "i", ">")).dtype == np.dtype(">i4")
    assert Buffer(p, 32, owner=a, dtype=(22, 64, "tsn:UTC", "=")).dtype == np.dtype("M8[ns]")
    assert Buffer(p, 32, owner=a, dtype=(22, 64, "tDm", "=")).dtype == np.dtype("m8[ms]")
    with pytest.raises(ValueError, match="bit-packed"):
        Buffer(p, 32, owner=a, dtype=(20, 1, "b", "="))
    with pytest.raises(ValueError):
        Buffer(p, 32, owner=a, dtype=(99, 8, "C", "="))


def test_negative_strides_ptr_is_lowest_address():
    a = np.arange(6, dtype="f8")
    rev = a[::-1]
    # ptr is the lowest address; element 0 of the reversed view is the highest one
    b = Buffer(a.ctypes.data, 48, owner=a, dtype="f8", strides=(-8,))
    np.testing.assert_array_equal(np.asarray(b), rev)
    assert not b.c_contiguous


def test_zero_strides_and_zero_size():
    a = np.array([7.0])
    b = Buffer(a.ctypes.data, 8, owner=a, dtype="f8", shape=(5,), strides=(0,))
    np.testing.assert_array_equal(np.asarray(b), [7.0] * 5)
    e = Buffer(0, 0, owner=None, dtype="f8", shape=(0, 3))
    assert e.size == 0 and e.shape == (0, 3)


def test_layout_leaving_the_block_is_refused():
    a = np.zeros(4, dtype="f8")
    with pytest.raises(ValueError, match="more than bufsize"):
        Buffer(a.ctypes.data, 32, owner=a, dtype="f8", shape=(5,))
    with pytest.raises(ValueError, match="more than bufsize"):
        Buffer(a.ctypes.data, 32, owner=a, dtype="f8", shape=(2, 2), strides=(24, 8))
    with pytest.raises(OverflowError):
        Buffer(a.ctypes.data, 32, owner=a, dtype="f8", shape=(3,), strides=(2**62,))


def test_buffer_is_immutable_and_final():
    a = np.zeros(4)
    b = Buffer(a.ctypes.data, 32, owner=a)
    with pytest.raises(AttributeError):
        b.ptr = 0
    with pytest.raises(AttributeError):
        b.anything = 1
    with pytest.raises(TypeError):

        class Sub(Buffer):  # noqa: F841
            pass


def test_repr_names_dtype_shape_device_native_owner():
    a = np.zeros(4)
    r = repr(Buffer(a.ctypes.data, 32, owner=a, dtype="f8"))
    for part in ("float64", "(4,)", "CPU:0", "RAW", "ndarray"):
        assert part in r


def test_owner_lives_exactly_as_long_as_the_buffer():
    o = Owner(np.zeros(4))
    ref = weakref.ref(o)
    b = Buffer(o.arr.ctypes.data, 32, owner=o)
    del o
    gc.collect()
    assert ref() is not None
    del b
    gc.collect()
    assert ref() is None


def test_cycle_through_the_owner_is_collected():
    o = Owner(np.zeros(4))
    o.buf = Buffer(o.arr.ctypes.data, 32, owner=o)
    ref = weakref.ref(o)
    bref = weakref.ref(o.buf)
    del o
    gc.collect()
    assert ref() is None
    assert bref() is None


def test_owner_refcount_is_stable():
    o = Owner(np.zeros(4))
    before = sys.getrefcount(o)
    for _ in range(20_000):
        Buffer(o.arr.ctypes.data, 32, owner=o)
    assert sys.getrefcount(o) == before


def test_enum_values_match_the_protocols():
    assert DeviceType.CPU == 1 and DeviceType.CUDA == 2 and DeviceType.CUDA_MANAGED == 13
    assert DeviceType.CPU_PINNED == DeviceType.CUDA_HOST == 3
    assert DeviceType.ROCM == 10 and DeviceType.ONE_API == 14
    assert [int(k) for k in DtypeKind] == [0, 1, 2, 20, 21, 22, 23]
    assert [int(k) for k in ColumnNullType] == [0, 1, 2, 3, 4]
    assert NativeFormat.RAW == 0
    assert {m.name for m in NativeFormat} >= {
        "RAW",
        "NUMPY",
        "ARROW",
        "DLPACK",
        "CUDA_ARRAY_INTERFACE",
        "BUFFER_PROTOCOL",
        "ARRAY_INTERFACE",
        "INTERCHANGE",
    }
    assert DeviceType.__module__ == "dfbuffer"


def test_get_include_has_the_public_header_only():
    inc = dfbuffer.get_include()
    assert os.path.isfile(os.path.join(inc, "dfbuffer", "dfbuffer.h"))
    for h in ("arrow.h", "format.h", "model.h", "common.h", "kernels.h"):  # internal
        assert not os.path.exists(os.path.join(inc, "dfbuffer", h)), h


# --- buffer.c buffer_dealloc: no trashcan, deep owner chains overflowed the C
# stack (segfault) when the last reference went away.


# The child process of the test below (tests/child_processes.py).
_DEEP_CHAIN = ChildProcess.python(textwrap.dedent("""
    import threading
    import numpy as np
    from dfbuffer import Buffer

    def run():
        b = Buffer.from_object(np.zeros(8, "u1"))
        for i in range(20000):
            b = Buffer.from_object(b, dtype="i1" if i % 2 else "u1")
        del b

    threading.stack_size(512 * 1024)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    print("ok")
"""))


@pytest.mark.child_process(_DEEP_CHAIN)
def test_deep_owner_chain_dealloc_does_not_overflow_the_stack():
    r = _DEEP_CHAIN.result()
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "ok"
