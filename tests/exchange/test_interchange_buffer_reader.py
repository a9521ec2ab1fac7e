"""The fast paths of buffer_to_ndarray and of the interchange-buffer reader:
a plain interchange dtype tuple read directly and memoized, exact
ints and exact device tuples read directly, the 1-D whole-block Buffer built in
one pass.  Each gives exactly what the general path gives, and every odd input
(a tuple subclass, a non-int kind, a bool or huge ptr, a changing bufsize...)
takes the general path, with its answer or its error."""

from __future__ import annotations

import gc
import itertools
import sys
import warnings
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from producers import CPU, CUDA, Script
from producers import Buffer as IxBuffer

import dfbuffer
from dfbuffer import Buffer, DtypeKind, NativeFormat

b2n = dfbuffer.buffer_to_ndarray


class Tup(tuple):
    """A tuple subclass without overrides: never the fast path."""

    __slots__ = ()


class Int(int):
    """An int subclass (same value, same repr): never the exact-int fast path."""


def pa_buffer(values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = pa.table({"a": values}).__dataframe__().get_column(0)
        return col.get_buffers()["data"]


def pd_buffer(values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        col = pd.DataFrame({"a": values}).__dataframe__().get_column(0)
        return col.get_buffers()["data"]


def array_outcome(r, buf):
    base = r.base
    return (
        "array",
        type(r).__name__,
        r.dtype.str,
        r.shape,
        r.tobytes(),
        r.flags.writeable,
        r.flags.c_contiguous,
        type(base).__name__,
        getattr(base, "owner", None) is buf,
        getattr(base, "native", None),
        np.shares_memory(r, np.asarray(base)) if isinstance(base, Buffer) else None,
    )


def outcome(fn, buf):
    """What fn() gives, comparable: the exception's type and message, or the
    array's dtype, shape, bytes, flags and base chain."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the outcome is what we compare
        return ("raises", type(e), str(e))
    return array_outcome(r, buf)


KINDS = [0, 1, 2, 20, 21, 22, 23, 3, -1, 2**70, True, DtypeKind.FLOAT, DtypeKind.BOOL,
         Int(2), 2.0, "2", None]
BITS = [1, 8, 16, 32, 64, 7, 0, -1, 2**70, 2000, True, Int(64), 64.0]
FORMATS = ["g", "", "\u00e9", "tsu:", "C", "\ud800", None]
ENDS = ["=", "<", ">", "|", "==", "", "\u00e9", "\ud800", None]


@pytest.mark.parametrize("make", [pa_buffer, pd_buffer], ids=["pyarrow", "pandas"])
def test_dtype_fast_path_equals_the_general_reader(make):
    """Every (kind, bits, format, endianness) in a grid of plain, unsupported and
    malformed values: the exact tuple (fast path, then its memo) and the same
    values in a tuple subclass (the general reader) give the same array or the
    same error, positionally and with keywords."""
    buf, _ = make(np.arange(8.0))
    checked = fast = 0
    for k, b, f, e in itertools.product(KINDS, BITS, FORMATS, ENDS):
        t = (k, b, f, e)
        general = outcome(lambda t=t: b2n(buf, Tup(t)), buf)
        first = outcome(lambda t=t: b2n(buf, t), buf)
        memo = outcome(lambda t=t: b2n(buf, t), buf)
        assert first == general, t
        assert memo == general, t
        kw = outcome(lambda t=t: b2n(buf, Tup(t), offset=1, length=3), buf)
        assert outcome(lambda t=t: b2n(buf, t, offset=1, length=3), buf) == kw, t
        checked += 1
        fast += general[0] == "array"
    assert checked == len(KINDS) * len(BITS) * len(FORMATS) * len(ENDS)
    assert fast > 100  # the grid reaches the fast path, not only errors


@pytest.mark.parametrize(
    "values",
    [np.arange(6.0), np.arange(6, dtype="i4"), np.arange(6, dtype="u2"), np.arange(6, dtype="i1"),
     np.array([True, False, True]), np.arange(6, dtype="f2")],
    ids=["f8", "i4", "u2", "i1", "bool", "f2"],
)
def test_producers_dtype_tuples_give_zero_copy_read_only_views(values):
    """pyarrow's own dtype tuples (IntEnum kinds) take the fast path: the values,
    read-only, base a Buffer whose owner is the producer's buffer (docs/api.md),
    the same as through the general reader."""
    buf, dtype = pa_buffer(values)
    out = b2n(buf, dtype)
    assert out.dtype == values.dtype and out.shape == values.shape
    np.testing.assert_array_equal(out, values)
    assert not out.flags.writeable
    assert isinstance(out.base, Buffer) and out.base.owner is buf
    assert out.base.native == NativeFormat.INTERCHANGE
    if len(values):
        assert out.__array_interface__["data"][0] == buf.ptr
    assert array_outcome(out, buf) == array_outcome(b2n(buf, Tup(dtype)), buf)


def test_an_empty_buffer_gives_what_the_general_reader_gives():
    buf, dtype = pa_buffer(np.arange(0.0))
    out = b2n(buf, dtype)
    assert out.shape == (0,) and out.dtype == np.float64
    assert array_outcome(out, buf) == array_outcome(b2n(buf, Tup(dtype)), buf)


def test_the_memo_holds_only_the_last_plain_tuple():
    buf, _ = pa_buffer(np.arange(4.0))
    t1 = tuple([2, 64, "g", "="])  # fresh tuples: no code-object constants
    t2 = tuple([2, 64, "g", "="])
    rc = sys.getrefcount(t1)
    b2n(buf, t1)
    assert sys.getrefcount(t1) == rc + 1  # the memo
    b2n(buf, t1)
    assert sys.getrefcount(t1) == rc + 1
    b2n(buf, t2)
    assert sys.getrefcount(t1) == rc  # released for t2
    # neither an unsupported nor a subclass tuple replaces the memo
    rc2 = sys.getrefcount(t2)
    with pytest.raises(ValueError):
        b2n(buf, (0, 7, "l", "="))
    b2n(buf, Tup(t2))
    assert sys.getrefcount(t2) == rc2


def test_the_memo_keeps_no_producer_alive():
    buf, dtype = pa_buffer(np.arange(4.0))
    ref = weakref.ref(buf)
    arr = b2n(buf, dtype)
    del buf
    gc.collect()
    assert ref() is not None  # the view's base chain holds it
    np.testing.assert_array_equal(arr, np.arange(4.0))
    del arr
    gc.collect()
    assert ref() is None  # the memo holds the dtype tuple only


def test_a_kind_released_by_the_memo_may_run_code():
    """Replacing the memo drops the old tuple, whose kind (an int subclass) runs
    Python code in __del__, here a nested buffer_to_ndarray call: both calls give
    the right array."""
    buf, _ = pa_buffer(np.arange(4.0))
    nested = []

    class K(int):
        def __del__(self):
            nested.append(b2n(buf, (2, 64, "g", "=")))

    b2n(buf, (K(2), 64, "g", "="))  # the memo holds the only reference to K(2)
    out = b2n(buf, (1, 8, "C", "|"))
    assert out.dtype == np.uint8 and out.shape == (32,)
    assert len(nested) == 1
    np.testing.assert_array_equal(nested[0], np.arange(4.0))


# --------------------------------------------------------------------------
# the interchange-buffer reader: exact ints and device tuples read directly


MEM = np.arange(4, dtype="f8")
P = MEM.ctypes.data


def reads(buf):
    """What each consumer makes of buf: Buffer.from_object's Buffer (its fields)
    and buffer_to_ndarray's array, or their errors."""

    def fields():
        b = Buffer.from_object(buf)
        return ("buffer", b.ptr, b.bufsize, b.shape, b.strides, b.dtype.str, b.device,
                b.readonly, b.native, b.owner is buf, gc.is_tracked(b))

    try:
        got = fields()
    except Exception as e:  # noqa: BLE001
        got = ("raises", type(e), str(e))
    return got, outcome(lambda: b2n(buf, (2, 64, "g", "=")), buf)


@pytest.mark.parametrize(
    "ptr",
    [P, 0, True, False, -1, -(2**62), 2**63 - 1, 2**63, 2**64 - 4, 2**70, -(2**70)],
)
def test_ptr_fast_path_equals_the_general_reader(ptr):
    """An exact int ptr (fast) and the same value as an int subclass (general)
    are read alike; a bool is refused (TypeError), a huge int overflows."""
    # only MEM is readable: any other address spans nothing (or overflows)
    size = 32 if ptr is P else 8 if ptr == 2**64 - 4 else 0
    fast = IxBuffer(MEM, ptr=ptr, bufsize=size)
    if isinstance(ptr, bool):
        got = reads(fast)
        assert got[0][0] == "raises" and got[0][1] is TypeError and "bool" in got[0][2]
        assert got[1][1] is TypeError and "bool" in got[1][2]
        return
    general = IxBuffer(MEM, ptr=Int(ptr), bufsize=fast._bufsize)
    assert reads(fast) == reads(general)


@pytest.mark.parametrize("bufsize", [32, 0, 8, 7, -1, True, 2**63, 2**70, -(2**70)])
def test_bufsize_fast_path_equals_the_general_reader(bufsize):
    fast = IxBuffer(MEM, bufsize=bufsize)
    if isinstance(bufsize, bool):
        got = reads(fast)
        assert got[0][1] is TypeError and got[1][1] is TypeError
        return
    assert reads(fast) == reads(IxBuffer(MEM, bufsize=Int(bufsize)))


DEVICES = [
    (CPU, 0), (CPU, None), (CPU, 3), (CUDA, 0), (CPU, -1), (CPU, 2**31 - 1), (CPU, 2**31),
    (CPU, True), (True, 0), (99, 0), (-1, 0), (CPU, 2**70), (2**70, 0), (1.0, 0),
    (CPU, 0.0), (CPU,), (CPU, 0, 0), (), (CPU, "0"),
]


@pytest.mark.parametrize("device", DEVICES, ids=repr)
def test_device_fast_path_equals_the_general_reader(device):
    """An exact tuple (fast) and the same items in a tuple subclass or a list
    (general) are read alike, errors included."""
    fast = reads(IxBuffer(MEM, device=device))
    assert fast == reads(IxBuffer(MEM, device=Tup(device)))
    assert fast == reads(IxBuffer(MEM, device=list(device)))


def test_real_producers_device_enums():
    """pyarrow's and pandas' (DlpackDeviceType.CPU, None): host memory, id 0."""
    for buf, _ in (pa_buffer(np.arange(3.0)), pd_buffer(np.arange(3.0))):
        b = Buffer.from_object(buf)
        assert b.device == (1, 0) and b.readonly and b.native == NativeFormat.INTERCHANGE
        assert b.owner is buf and gc.is_tracked(b)


def test_each_value_is_read_once_even_when_it_changes():
    """A bufsize (or ptr, device) that changes between reads is read exactly
    once per call; the result is the first answer's."""
    bufsize = Script(16, 32, changes=True)
    ptr = Script(P, 0, changes=True)
    device = Script((CPU, 0), (CUDA, 0), changes=True)
    buf = IxBuffer(MEM, bufsize=bufsize, ptr=ptr, device=device)
    out = b2n(buf, (2, 64, "g", "="))
    assert (bufsize.reads, ptr.reads, device.reads) == (1, 1, 1)
    np.testing.assert_array_equal(out, MEM[:2])
    bufsize, ptr = Script(24, 32, changes=True), Script(P, 0, changes=True)
    buf = IxBuffer(MEM, bufsize=bufsize, ptr=ptr)
    b = Buffer.from_object(buf)
    assert (bufsize.reads, ptr.reads) == (1, 1)
    assert b.bufsize == 24 and b.ptr == P and b.shape == (24,)


# --------------------------------------------------------------------------
# the 1-D whole-block Buffer built in one pass


@pytest.mark.parametrize("dtype", ["u1", "f8", "i4", "c16", "M8[ns]", "?", "<f2"])
def test_one_pass_buffer_equals_the_general_checks(dtype):
    """Buffer(ptr, bufsize, owner=...) without shape and strides (the one-pass
    path of the readers) equals the same Buffer with its shape given (the
    general checks); tracked by the collector because its owner is a GC object."""
    mem = np.zeros(64, "u1")
    owner = [mem]
    isz = np.dtype(dtype).itemsize
    for device in [(1, 0), (2, 1)]:
        kw = dict(owner=owner, dtype=dtype, device=device, readonly=True,
                  native=NativeFormat.INTERCHANGE)
        fast = Buffer(mem.ctypes.data, 64, **kw)
        general = Buffer(mem.ctypes.data, 64, shape=(64 // isz,), **kw)
        for name in ["ptr", "bufsize", "shape", "strides", "dtype", "device", "readonly",
                     "native", "ndim", "itemsize", "nbytes", "c_contiguous"]:
            assert getattr(fast, name) == getattr(general, name), name
        assert fast.owner is owner and gc.is_tracked(fast)
    # owner and dtype holding no GC objects: untracked, as before
    assert not gc.is_tracked(Buffer(mem.ctypes.data, 64, owner=b"x"))
    empty = Buffer(0, 0, owner=owner, dtype=dtype)
    assert empty.shape == (0,) and empty.ptr == 0 and empty.strides == (isz,)


@pytest.mark.parametrize(
    "args, kw, exc, match",
    [
        ((0, 8), {}, ValueError, "NULL pointer cannot describe 8 bytes"),
        ((P, 7), {"dtype": "f8"}, ValueError, "not a multiple of the itemsize 8"),
        ((P, -1), {}, ValueError, ">= 0"),
        ((2**64 - 4, 8), {}, OverflowError, "overflows the address space"),
        ((P, 8), {"dtype": "O"}, TypeError, "plain numbers only"),
        ((P, 8), {"dtype": "V8"}, TypeError, "plain numbers only"),
        ((P, 8), {"device": (99, 0)}, ValueError, "unknown DLPack device type"),
        ((P, 8), {"native": 99}, ValueError, "unknown NativeFormat"),
    ],
)
def test_one_pass_buffer_refusals_are_the_general_errors(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        Buffer(*args, owner=MEM, **kw)


def test_one_pass_buffer_takes_part_in_cycles():
    """The one-pass Buffer is tracked once complete: a producer that holds the
    Buffer made over it forms a cycle the collector frees (ndarrays are no GC
    objects, so a cycle through a view stays, as for any NumPy array)."""
    for make in (pa_buffer, pd_buffer):
        buf = make(np.arange(4.0))[0]
        b = Buffer.from_object(buf)
        assert gc.is_tracked(b)
        buf.keep = b  # producer -> Buffer -> producer
        ref = weakref.ref(buf)
        del buf, b
        gc.collect()
        assert ref() is None


def test_releasing_a_buffer_releases_its_owner_and_dtype():
    """The release without the trashcan (owner and dtype held elsewhere) and
    with it (the last reference to the owner, a weak reference to the Buffer)
    both drop exactly their references."""
    mem = np.zeros(16, "u1")
    owner = [mem]
    dt = np.dtype("f8")
    rc, rcd = sys.getrefcount(owner), sys.getrefcount(dt)
    b = Buffer(mem.ctypes.data, 16, owner=owner, dtype=dt)
    del b
    assert (sys.getrefcount(owner), sys.getrefcount(dt)) == (rc, rcd)
    b = Buffer(mem.ctypes.data, 16, owner=owner, dtype=dt)
    ref = weakref.ref(b)
    del b
    assert ref() is None and (sys.getrefcount(owner), sys.getrefcount(dt)) == (rc, rcd)


    class Owner:
        pass

    last = Owner()
    ref = weakref.ref(last)
    b = Buffer(mem.ctypes.data, 16, owner=last)
    del last
    assert ref() is not None
    del b  # the Buffer held the last reference: the trashcan path frees it
    assert ref() is None
