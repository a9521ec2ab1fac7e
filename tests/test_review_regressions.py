"""Regression tests for the bugs found by the adversarial review of the C core
(buffer.c, export_*.c, import.c).  Each test failed (or crashed) before its
fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dfbuffer import Buffer

MEM = np.zeros(64, dtype="u1")
P = MEM.ctypes.data


# --- buffer.c dfb_extent: hi - lo overflowed (signed overflow, UB) -------------
# Each reach fits in Py_ssize_t, but the span from the lowest to the highest
# byte does not: hi - lo wrapped negative and passed the "fits in bufsize"
# check, giving a 16-byte Buffer whose elements lie 2**62 bytes apart.


@pytest.mark.parametrize(
    ("shape", "strides"),
    [
        ((2, 2), (2**62, -(2**62))),
        ((2, 2), (-(2**62), 2**62)),
        ((3, 2), (2**62 - 1, -(2**62))),
    ],
)
def test_extent_span_overflow_is_refused(shape, strides):
    with pytest.raises(OverflowError):
        Buffer(P, 16, owner=MEM, shape=shape, strides=strides)


def test_extent_span_overflow_dlpack_import():
    from _dlpack_ctypes import Tensor

    t = Tensor(MEM, shape=(2, 2), strides=(2**62, -(2**62)), code=1, bits=8)
    with pytest.raises(OverflowError):
        Buffer.from_object(t.capsule())


def test_extent_large_but_valid_span_still_accepted():
    # a span just inside Py_ssize_t over a zero-size array: nothing addressed
    b = Buffer(P, 0, owner=MEM, shape=(0, 2), strides=(2**62, -(2**62)))
    assert b.bufsize == 0


# --- buffer.c parse_dims: borrowed items of a list mutated by __index__ --------
# PySequence_Fast returns the list itself; an item's __index__ that shrinks
# the list made the loop read freed / out-of-bounds item slots (segfault).


def test_shape_list_mutated_by_index_does_not_crash():
    lst: list = []

    class Shrinker:
        def __index__(self):
            lst.clear()
            return 1

    lst[:] = [Shrinker(), Shrinker(), 1]
    b = Buffer(P, 8, owner=MEM, shape=lst)
    assert b.shape == (1, 1, 1)


def test_strides_list_mutated_by_index_does_not_crash():
    lst: list = []

    class Shrinker:
        def __index__(self):
            lst.clear()
            return 1

    lst[:] = [Shrinker(), Shrinker()]
    b = Buffer(P, 8, owner=MEM, shape=(2, 2), strides=lst)
    assert b.strides == (1, 1)


# --- buffer.c buffer_dealloc: no trashcan, deep owner chains overflowed the C
# stack (segfault) when the last reference went away.


def test_deep_owner_chain_dealloc_does_not_overflow_the_stack():
    code = textwrap.dedent(
        """
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
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "ok"


# --- import.c export_owner: the buffer-protocol export was held by a PyCapsule,
# which the garbage collector cannot traverse; a cycle through the exporter
# (an exporter instance keeping its own Buffer) was never collected.


class _ByteArray(bytearray):
    pass


class _AIBuffer:
    """__array_interface__ whose data is a buffer object (exported by dfbuffer)."""

    def __init__(self):
        self.mem = _ByteArray(32)
        self.__array_interface__ = {"version": 3, "shape": (4,), "typestr": "<f8", "data": self.mem}


def _cycle_collected(collect, make):
    import array
    import weakref

    class _Array(array.array):
        pass

    obj = make(_Array)
    r = weakref.ref(obj)
    obj.keep = Buffer.from_object(obj)
    view = np.asarray(obj.keep)  # an export of the Buffer, released below
    assert view.size > 0
    del obj, view
    collect()
    return r() is None


@pytest.mark.parametrize(
    "make",
    [
        lambda _Array: _ByteArray(16),
        lambda _Array: _Array("d", [1.0, 2.0]),
    ],
    ids=["bytearray subclass", "array.array subclass"],
)
def test_buffer_protocol_cycle_through_exporter_is_collected(collect, make):
    assert _cycle_collected(collect, make)


def test_array_interface_buffer_cycle_is_collected(collect):
    import weakref

    x = _AIBuffer()
    x.mem.keep = Buffer.from_object(x)  # the Buffer's export pins x.mem
    r = weakref.ref(x.mem)
    del x
    collect()
    assert r() is None


def test_buffer_protocol_owner_pins_the_export():
    ba = bytearray(16)
    b = Buffer.from_object(ba)
    with pytest.raises(BufferError):
        ba.extend(b"x" * 100)  # cannot resize while the Buffer lives
    assert not hasattr(b.owner, "release")  # no early release from Python
    del b
    ba.extend(b"x")
    assert len(ba) == 17


def test_buffer_protocol_owner_type_is_private():
    b = Buffer.from_object(bytearray(8))
    tp = type(b.owner)
    assert tp.__name__ == "buffer_export"
    with pytest.raises(TypeError):
        tp()


# --- buffer.c tp_new: integers were accepted as shape items only -------------
# shape=(np.int64(8),) worked but shape=np.int64(8), bufsize=np.int64(64) and
# ptr=np.uint64(...) raised TypeError: every size and pointer argument now
# takes any integer (operator.index), never bool or float.


def test_numpy_integers_accepted_everywhere():
    a = np.arange(8.0)
    p = a.ctypes.data
    b = Buffer(np.uint64(p), np.int64(64), owner=a, dtype="f8", shape=np.int64(8))
    assert (b.ptr, b.bufsize, b.shape) == (p, 64, (8,))
    assert type(b.bufsize) is int
    b2 = Buffer(p, 64, owner=a, dtype="f8", shape=np.array([2, 4]))  # still a sequence
    assert b2.shape == (2, 4)


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"ptr": np.float64(1.0)}, TypeError),
        pytest.param(
            {"bufsize": np.True_},
            TypeError,
            marks=pytest.mark.skipif(
                np.lib.NumpyVersion(np.__version__) < "2.3.0",
                reason="NumPy < 2.3 still accepts np.bool_ as an index (with a DeprecationWarning)",
            ),
        ),
        ({"bufsize": True}, TypeError),
        ({"bufsize": np.int64(-1)}, ValueError),
        ({"ptr": np.int64(-8)}, ValueError),
        ({"shape": np.float64(2.0)}, TypeError),
    ],
)
def test_numpy_scalars_still_checked(kwargs, exc):
    a = np.arange(8.0)
    args = {"ptr": a.ctypes.data, "bufsize": 64} | kwargs
    with pytest.raises(exc):
        Buffer(args.pop("ptr"), args.pop("bufsize"), owner=a, **args)


# --- export_dlpack.c copy_to_c_order: the rewritten strided inner loop ---------


@pytest.mark.parametrize("step", [-3, -1, 2])
def test_dlpack_copy_of_strided_inner_dimension(step):
    v = np.arange(60, dtype="i4").reshape(5, 12)[::-2, ::step]
    b = Buffer.from_object(v)

    class Wrap:
        def __init__(self, cap):
            self.cap = cap

        def __dlpack__(self, **kw):
            return self.cap

        def __dlpack_device__(self):
            return (1, 0)

    r = np.from_dlpack(Wrap(b.__dlpack__(max_version=(1, 0), copy=True)))
    assert r.flags.c_contiguous
    assert r.tolist() == v.tolist()
