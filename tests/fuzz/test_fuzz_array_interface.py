"""Fuzz: drawn ``__array_interface__`` dicts through Buffer.from_object, with NumPy's own
reading of the same dict as the oracle.

Drawn: version, shape (also negative, huge, not a tuple), typestr (also garbage), data (a
(ptr, readonly) pair, a buffer object, NULL, wrong types), strides (also huge or of the
wrong length), offset, descr and mask.  Whatever NumPy accepts and can read inside the
real memory must come back with the same values; what NumPy refuses must be refused
(dfbuffer may refuse more: dtypes a Buffer does not hold)."""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_settings import FUZZ, FUZZ_SEED
from hostile import run
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import rare
from text_strategy import text

from dfbuffer import Buffer

pytestmark = pytest.mark.fuzz

MEM = 1024
TYPESTRS = ["<i4", "|u1", "<f8", "|b1", ">i2", "<u8", "<f2", "<c16", "|i1", "<i8"]
BAD_TYPESTRS = ["", "<i3", "|V8", "<U4", "|O8", "<M8[ns]", "x", "<f16", "i4", "<i4,<i4",
                "|S0", "<q", 4, None, b"<i4"]


# NumPy 2.2 (the oldest supported) dereferences NULL when an interface has no "shape";
# NumPy 2.3 raises ValueError("Missing __array_interface__ shape")
NUMPY_CRASHES_WITHOUT_SHAPE = np.lib.NumpyVersion(np.__version__) < "2.3.0"


def numpy_reads(obj):
    """NumPy's answer for the oracle: ('ok', array) or ('error', exception).  NumPy's typestr
    parser raises SyntaxError for strings such as "i4,," (dfbuffer must refuse them with
    ValueError: tests/safety/test_hostile_producers.py).  An interface without "shape" is
    NumPy 2.3's ValueError without asking a NumPy that would crash on it."""
    if NUMPY_CRASHES_WITHOUT_SHAPE and "shape" not in obj.__array_interface__:
        return "error", ValueError("Missing __array_interface__ shape")
    try:
        return run(lambda: np.asarray(obj))
    except (SyntaxError, MemoryError) as e:
        # some interfaces (a huge shape with a bad descr or version) send NumPy down its
        # copying path, which refuses with MemoryError: a refusal like any other
        return "error", e


class AI:
    def __init__(self, d, keep):
        self.__array_interface__ = d
        self._keep = keep


@st.composite
def interfaces(draw):
    mem = draw(hnp.arrays(np.uint8, MEM))
    base = mem.ctypes.data
    if not rare(draw, 0.12):
        typestr = draw(st.sampled_from(TYPESTRS))
    else:
        typestr = draw(st.one_of(st.sampled_from(BAD_TYPESTRS),
                                 text(max_size=5)))
    try:
        itemsize = np.dtype(typestr).itemsize or 1
    except (Exception, SyntaxError):
        itemsize = 1
    ndim = draw(st.integers(0, 3))
    shape = draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim))
    shape = tuple(shape)
    if rare(draw, 0.06):
        shape = draw(st.sampled_from([(-1,), (2**62,), (2**63,), [2], "2", None, (1.5,),
                                      (2**31, 2**31, 2**31)]))
    strides = None
    if ndim and rare(draw, 0.25):
        strides = tuple(draw(st.lists(st.integers(-4, 4), min_size=ndim, max_size=ndim)))
        strides = tuple(s * itemsize for s in strides)
        if rare(draw, 0.25):
            strides = draw(st.sampled_from([(2**62,) * ndim, (1,) * (ndim + 1), [itemsize],
                                            (-(2**63),) * ndim]))
    # start in the middle of the memory so that negative strides stay inside it
    start = MEM // 2 + draw(st.integers(0, 8)) * itemsize
    data_kind = "tuple" if not rare(draw, 0.25) else draw(st.sampled_from(
        ["buffer", "null", "negative", "bool ptr", "list", "huge", "str", "readonly"]))
    data = {
        "tuple": (base + start, False),
        "readonly": (base + start, True),
        "buffer": bytes(mem[start:].tobytes()),
        "null": (0, False),
        "negative": (-8, False),
        "bool ptr": (True, False),
        "list": [base + start, False],
        "huge": (2**64, False),
        "str": "0x10",
    }[data_kind]
    d = {"version": 3, "shape": shape, "typestr": typestr, "data": data}
    if strides is not None:
        d["strides"] = strides
    if rare(draw, 0.06):
        d["version"] = draw(st.sampled_from([2, 4, "3", None]))
    if rare(draw, 0.06):
        del d[draw(st.sampled_from(["version", "shape", "typestr", "data"]))]
    if rare(draw, 0.06):
        d["mask"] = None if draw(st.booleans()) else mem
    if data_kind == "buffer" and rare(draw, 0.25):
        d["offset"] = draw(st.sampled_from([0, 8, -1, 2**62, MEM]))
    if rare(draw, 0.06):
        d["descr"] = draw(st.sampled_from([[("", typestr)], "x", [("a", "<i4"), ("b", "<i4")]]))
    return AI(d, mem), mem, start, data_kind


def may_refuse(d: dict, ref: np.ndarray, data_kind: str, within: bool) -> bool:
    """What dfbuffer may refuse although NumPy reads it: dtypes a Buffer does not hold,
    masks, explicit descr, loose types NumPy tolerates (a bytes typestr, a list shape)."""
    dt = ref.dtype
    return (dt.kind not in "biufc" or (not dt.isnative and dt.itemsize > 1)
            or data_kind in ("null", "negative", "bool ptr", "huge", "list")
            # NumPy accepts views past the end of a buffer object's memory
            or (data_kind == "buffer" and not within)
            or "mask" in d or "descr" in d or d.get("version") != 3
            # without "data" (and no buffer protocol on the object) NumPy does not read the
            # interface: it converts the object as a scalar (bool(obj) for "|b1")
            or "data" not in d
            or not isinstance(d.get("typestr"), str) or not isinstance(d.get("shape"), tuple)
            or ("strides" in d and not isinstance(d["strides"], tuple))
            # an extent no address space holds: NumPy builds the view, dfbuffer refuses
            or any(abs(st_) * max(n - 1, 0) >= 2**61
                   for n, st_ in zip(ref.shape, ref.strides, strict=True)))


def inside(arr: np.ndarray, mem: np.ndarray) -> bool:
    """True if every byte arr spans lies inside mem (so reading it is safe)."""
    if arr.size == 0:
        return True
    lo = hi = arr.__array_interface__["data"][0]
    for n, s in zip(arr.shape, arr.strides, strict=True):
        lo += min(0, (n - 1) * s)
        hi += max(0, (n - 1) * s)
    hi += arr.itemsize
    return mem.ctypes.data <= lo and hi <= mem.ctypes.data + mem.nbytes


def _numpy_takes_null_for_empty() -> bool:
    """NumPy 2.2 and 2.3 read a NULL data pointer as "no data" (the scalar path, which
    refuses the object, or a new array of the shape); NumPy 2.4, like dfbuffer, accepts NULL
    for an array of no elements and refuses it otherwise."""
    probe = AI({"version": 3, "shape": (0,), "typestr": "<i4", "data": (0, False)}, None)
    try:
        np.asarray(probe)
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


NUMPY_TAKES_NULL_FOR_EMPTY = _numpy_takes_null_for_empty()


@FUZZ
@FUZZ_SEED
@given(interfaces())
def test_array_interface(case):
    obj, mem, start, data_kind = case
    if data_kind == "null" and not NUMPY_TAKES_NULL_FOR_EMPTY:
        # this NumPy reads NULL data as "no data" (its scalar path, or a new array of the
        # shape), so it is no oracle here; the rule of later NumPy instead: NULL only for an
        # array of no elements
        kind, b = run(lambda: Buffer.from_object(obj))
        event(f"NULL data, dfbuffer {kind}")
        assert kind == "error" or 0 in b.shape, (obj.__array_interface__, b)
        return
    npk, ref = numpy_reads(obj)
    if data_kind == "buffer" and npk == "ok":
        # NumPy reads the bytes object, which we made a copy of: compare over that
        src = obj.__array_interface__["data"]
        mem = np.frombuffer(src, np.uint8)
    kind, b = run(lambda: Buffer.from_object(obj))
    event(f"numpy {npk}, dfbuffer {kind}")
    if npk == "error":
        assert kind == "error", (obj.__array_interface__, ref, b)
        return
    if kind == "error":
        # dfbuffer refuses what a Buffer cannot hold; never a plain numeric array
        # (never let pytest repr `ref`: it may span memory we do not own)
        ok = may_refuse(obj.__array_interface__, ref, data_kind, inside(ref, mem))
        assert ok, (obj.__array_interface__, b)
        return
    shape, readable = ref.shape, ref.size and inside(ref, mem)
    assert b.shape == shape
    if b.device == (1, 0) and readable:
        np.testing.assert_array_equal(np.asarray(b).view(ref.dtype), ref)
    readonly = isinstance(obj.__array_interface__["data"], bytes) or (
        isinstance(obj.__array_interface__["data"], tuple)
        and obj.__array_interface__["data"][1])
    if readonly:
        assert b.readonly
