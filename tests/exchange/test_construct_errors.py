"""Malformed constructions of Buffer(...) and Buffer.from_object(...): each raises
the right exception type (never a crash, never a silent success)."""

from __future__ import annotations

import numpy as np
import pytest
from _dlpack_ctypes import Producer, Tensor

from dfbuffer import Buffer

from_object = Buffer.from_object

MEM = np.zeros(64, dtype="u1")
P = MEM.ctypes.data
O = MEM  # noqa: E741 - the owner


def B(*args, **kwargs):
    kwargs.setdefault("owner", O)
    return Buffer(*args, **kwargs)


class AI:
    def __init__(self, **kw):
        self.__array_interface__ = {
            "version": 3,
            "shape": (4,),
            "typestr": "<i4",
            "data": (P, False),
            "strides": None,
        } | kw


class AIRaw:
    def __init__(self, iface):
        self.__array_interface__ = iface


class CAI:
    def __init__(self, **kw):
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": (4,),
            "typestr": "<f4",
            "data": (0x10000, False),
        } | kw


class IB:
    """A hand-written interchange-protocol Buffer."""

    def __init__(self, ptr=P, bufsize=8, device=(1, 0)):
        self.ptr, self.bufsize, self.device = ptr, bufsize, device

    def __dlpack_device__(self):
        return self.device


class NotCapsule:
    def __dlpack__(self, **kw):
        return 42

    def __dlpack_device__(self):
        return (1, 0)


def dl(**kw):
    """from_object on a hand-made DLPack capsule; the Tensor lives in the call."""
    name = kw.pop("name", None)
    t = Tensor(**kw)
    return from_object(t.capsule(name))


def used_capsule():
    cap = np.arange(3).__dlpack__(max_version=(1, 0))
    from_object(cap)
    return from_object(Producer(cap))


CASES = [
    # --- Buffer(ptr, bufsize): sizes and pointers
    ("negative bufsize", lambda: B(P, -1), ValueError),
    ("bufsize > ssize_t", lambda: B(P, 2**63), OverflowError),
    ("bufsize huge", lambda: B(P, 2**70), OverflowError),
    ("bufsize float", lambda: B(P, 8.0), TypeError),
    ("bufsize None", lambda: B(P, None), TypeError),
    ("NULL ptr, non-zero size", lambda: B(0, 8), ValueError),
    ("negative ptr", lambda: B(-1, 8), ValueError),
    ("float ptr", lambda: B(1.5, 8), TypeError),
    ("str ptr", lambda: B("0x10", 8), TypeError),
    ("bool ptr", lambda: B(True, 8), TypeError),
    ("ptr too large", lambda: B(2**70, 8), OverflowError),
    ("ptr + bufsize wraps", lambda: B(2**64 - 8, 16), OverflowError),
    ("missing owner", lambda: Buffer(P, 8), TypeError),
    ("unknown keyword", lambda: B(P, 8, colour="red"), TypeError),
    ("too many positionals", lambda: Buffer(P, 8, O), TypeError),
    # --- shape / strides
    ("shape leaves the block", lambda: B(P, 8, dtype="i4", shape=(3,)), ValueError),
    ("strides leave the block", lambda: B(P, 8, shape=(2,), strides=(8,)), ValueError),
    ("negative strides leave", lambda: B(P, 8, shape=(2,), strides=(-8,)), ValueError),
    ("strides/shape lengths", lambda: B(P, 8, shape=(2, 2), strides=(4,)), ValueError),
    ("negative shape", lambda: B(P, 8, shape=(-1,)), ValueError),
    ("shape product overflows", lambda: B(P, 8, shape=(2**62, 2**62)), OverflowError),
    ("65 dimensions", lambda: B(P, 8, shape=(1,) * 65), ValueError),
    ("65 strides", lambda: B(P, 8, shape=(1,), strides=(1,) * 65), ValueError),
    ("stride extent overflows", lambda: B(P, 8, shape=(3,), strides=(2**62,)), OverflowError),
    ("shape is a str", lambda: B(P, 8, shape="ab"), TypeError),
    ("shape of floats", lambda: B(P, 8, shape=(1.5,)), TypeError),
    ("strides of None", lambda: B(P, 8, shape=(1,), strides=(None,)), TypeError),
    ("shape is a dict-less object", lambda: B(P, 8, shape=object()), TypeError),
    ("bufsize not a multiple", lambda: B(P, 7, dtype="i4"), ValueError),
    ("strides without shape, ragged", lambda: B(P, 7, dtype="i4", strides=(4,)), ValueError),
    # --- device
    ("unknown device type", lambda: B(P, 8, device=(99, 0)), ValueError),
    ("device type 0", lambda: B(P, 8, device=(0, 0)), ValueError),
    ("device 1-tuple", lambda: B(P, 8, device=(1,)), ValueError),
    ("device 3-tuple", lambda: B(P, 8, device=(1, 0, 0)), ValueError),
    ("device str", lambda: B(P, 8, device="cpu"), TypeError),
    ("device type str", lambda: B(P, 8, device=("1", 0)), TypeError),
    ("negative device id", lambda: B(P, 8, device=(1, -1)), ValueError),
    ("huge device id", lambda: B(P, 8, device=(1, 2**40)), ValueError),
    ("float device id", lambda: B(P, 8, device=(1, 1.5)), TypeError),
    # --- dtype
    ("object dtype", lambda: B(P, 8, dtype="O"), TypeError),
    ("unparseable dtype", lambda: B(P, 8, dtype="not a dtype"), TypeError),
    ("structured dtype", lambda: B(P, 8, dtype=[("a", "i4"), ("b", "i4")]), TypeError),
    ("unicode dtype", lambda: B(P, 8, dtype="U2"), TypeError),
    ("void dtype", lambda: B(P, 8, dtype="V8"), TypeError),
    ("subarray dtype", lambda: B(P, 8, dtype=("i4", 2)), TypeError),
    ("interchange dtype, bad width", lambda: B(P, 8, dtype=(0, 13, "x", "=")), ValueError),
    ("interchange string dtype", lambda: B(P, 8, dtype=(21, 8, "u", "=")), ValueError),
    ("interchange bit-packed bool", lambda: B(P, 8, dtype=(20, 1, "b", "=")), ValueError),
    ("interchange dtype wrong types", lambda: B(P, 8, dtype=(0, "64", "l", "=")), TypeError),
    # --- native
    ("native out of range", lambda: B(P, 8, native=99), ValueError),
    ("native negative", lambda: B(P, 8, native=-1), ValueError),
    ("native str", lambda: B(P, 8, native="RAW"), TypeError),
    # --- from_object: nothing known / signature
    ("from_object(object())", lambda: from_object(object()), TypeError),
    ("from_object(None)", lambda: from_object(None), TypeError),
    ("from_object no args", lambda: from_object(), TypeError),
    ("from_object bad keyword", lambda: from_object(b"x", dtyp="u1"), TypeError),
    ("from_object object dtype", lambda: from_object(np.zeros(2, "O")), TypeError),
    ("from_object string dtype", lambda: from_object(np.zeros(2, "S3")), TypeError),
    ("override dtype object", lambda: from_object(b"abcdefgh", dtype="O"), TypeError),
    ("override dtype ragged", lambda: from_object(b"abc", dtype="u2"), ValueError),
    ("override strided", lambda: from_object(np.arange(4)[::2], dtype="i4"), ValueError),
    ("override 2-D", lambda: from_object(np.zeros((2, 2)), dtype="f4"), ValueError),
    ("unsupported struct format", lambda: from_object(memoryview(b"ab").cast("c")), TypeError),
    # --- from_object: DLPack
    ("capsule with wrong name", lambda: dl(shape=(1,), code=1, bits=8, name="wrong"), BufferError),
    ("already-consumed capsule", used_capsule, BufferError),
    ("__dlpack__ returns an int", lambda: from_object(NotCapsule()), TypeError),
    ("DLPack lanes=2", lambda: dl(shape=(1,), data=P, code=2, bits=32, lanes=2), BufferError),
    ("DLPack bfloat16", lambda: dl(shape=(1,), data=P, code=4, bits=16), BufferError),
    ("DLPack int7", lambda: dl(shape=(1,), data=P, code=0, bits=7), BufferError),
    ("DLPack float8", lambda: dl(shape=(1,), data=P, code=8, bits=8), BufferError),
    ("DLPack ndim 65", lambda: dl(shape=(1,) * 65, data=P, code=1, bits=8), BufferError),
    ("DLPack ndim -1", lambda: dl(shape=(1,), ndim=-1, data=P, code=1, bits=8), BufferError),
    ("DLPack negative shape", lambda: dl(shape=(-2,), data=P, code=1, bits=8), BufferError),
    (
        "DLPack stride overflow",
        lambda: dl(shape=(2,), strides=(2**62,), data=P, code=1, bits=64),
        OverflowError,
    ),
    ("DLPack NULL data", lambda: dl(shape=(4,), data=0, code=1, bits=8), ValueError),
    (
        "DLPack major version 2",
        lambda: dl(shape=(1,), data=P, code=1, bits=8, version=(2, 0)),
        BufferError,
    ),
    (
        "DLPack major version 0",
        lambda: dl(shape=(1,), data=P, code=1, bits=8, version=(0, 9)),
        BufferError,
    ),
    (
        "DLPack unknown device",
        lambda: dl(shape=(1,), data=P, code=1, bits=8, device=(99, 0)),
        ValueError,
    ),
    (
        "DLPack byte_offset wraps",
        lambda: dl(shape=(1,), data=P, code=1, bits=8, byte_offset=2**64 - 1),
        OverflowError,
    ),
    # --- from_object: __array_interface__
    ("array interface with mask", lambda: from_object(AI(mask=np.zeros(4, bool))), BufferError),
    ("array interface version 2", lambda: from_object(AI(version=2)), ValueError),
    ("array interface version str", lambda: from_object(AI(version="3")), ValueError),
    (
        "array interface no typestr",
        lambda: from_object(AIRaw({"version": 3, "shape": (1,), "data": (P, False)})),
        ValueError,
    ),
    ("array interface not a dict", lambda: from_object(AIRaw([("version", 3)])), TypeError),
    ("array interface negative ptr", lambda: from_object(AI(data=(-8, False))), ValueError),
    ("array interface NULL data", lambda: from_object(AI(data=(0, False))), ValueError),
    ("array interface data 3-tuple", lambda: from_object(AI(data=(P, False, 0))), ValueError),
    ("array interface data str", lambda: from_object(AI(data="abc")), TypeError),
    ("array interface strides length", lambda: from_object(AI(strides=(4, 4))), ValueError),
    ("array interface shape list", lambda: from_object(AI(shape=[4])), TypeError),
    ("array interface object typestr", lambda: from_object(AI(typestr="|O8")), TypeError),
    ("array interface bad typestr", lambda: from_object(AI(typestr="<x9")), TypeError),
    (
        "array interface structured descr",
        lambda: from_object(AI(descr=[("a", "<i2"), ("b", "<i2")])),
        TypeError,
    ),
    (
        "array interface offset outside",
        lambda: from_object(AI(data=bytearray(8), offset=6)),
        ValueError,
    ),
    (
        "array interface negative offset",
        lambda: from_object(AI(data=bytearray(32), offset=-4)),
        ValueError,
    ),
    ("array interface shape overflow", lambda: from_object(AI(shape=(2**62, 4))), OverflowError),
    # --- from_object: __cuda_array_interface__
    ("CAI with mask", lambda: from_object(CAI(mask=object())), BufferError),
    ("CAI version 4", lambda: from_object(CAI(version=4)), ValueError),
    ("CAI data not a tuple", lambda: from_object(CAI(data=0x10000)), TypeError),
    ("CAI missing shape", lambda: from_object(CAI(shape=None)), TypeError),
    ("CAI negative shape", lambda: from_object(CAI(shape=(-4,))), ValueError),
    # --- from_object: interchange buffers
    ("interchange negative bufsize", lambda: from_object(IB(bufsize=-1)), ValueError),
    ("interchange str ptr", lambda: from_object(IB(ptr="0")), TypeError),
    ("interchange NULL ptr", lambda: from_object(IB(ptr=0)), ValueError),
    ("interchange bad device", lambda: from_object(IB(device=(99, 0))), ValueError),
    ("interchange device not a tuple", lambda: from_object(IB(device=1)), TypeError),
    ("interchange ragged dtype", lambda: from_object(IB(bufsize=7), dtype="i4"), ValueError),
]


def test_at_least_forty_cases():
    assert len(CASES) >= 40


@pytest.mark.parametrize(("call", "exc"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_construct_error(call, exc):
    with pytest.raises(exc) as info:
        call()
    # the exact type, not a lucky subclass or parent
    assert type(info.value) is exc
    assert str(info.value)  # a message naming the problem


def test_zero_size_with_huge_dims_is_fine():
    # 0 elements: strides computed for the other dims must not overflow
    b = B(P, 0, shape=(0, 2**62, 2**62))
    assert b.bufsize == 0 and b.shape == (0, 2**62, 2**62)


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
