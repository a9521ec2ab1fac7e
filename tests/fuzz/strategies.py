"""Hypothesis strategies that build hostile interchange producers (see hostile.py)."""

from __future__ import annotations

import numpy as np
from hostile import (
    BOOL,
    NON_NULLABLE,
    UINT,
    USE_BITMASK,
    USE_BYTEMASK,
    USE_NAN,
    USE_SENTINEL,
    HColumn,
    ProducerError,
    Script,
    StoredMapping,
    ix_dtype,
    raw_buffer,
)
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

KINDS = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "?"]
BITMASK_DTYPE = (BOOL, 1, "b", "=")
BYTEMASK_DTYPE = (BOOL, 8, "b", "=")
SLACK = 16  # bytes of real memory past what the honest answers need

# Answers of the wrong type or an impossible value (bools and negative pointers included:
# the converters refuse them as Buffer.from_object does).
GARBAGE = st.sampled_from(
    [None, "8", 8.0, [], (), {}, object(), 2**64, -(2**63) - 1, -1, ProducerError("lie")]
)
GARBAGE_PTR = st.sampled_from(
    [None, "8", 8.0, [], object(), 2**64, True, False, -8, -(2**62), ProducerError("ptr")]
)
GARBAGE_BUFSIZE = st.sampled_from(
    [None, "8", 8.0, [], object(), 2**64, -1, -(2**62), True, ProducerError("bufsize")]
)


def rare(draw, p: float) -> bool:
    """True with probability about p (a power of 1/2); shrinks to False.  (Hypothesis
    draws small integers and floats far more often than uniformly.)"""
    k = 1
    while 0.5**k > p and k < 8:
        k += 1
    return all(draw(st.booleans()) for _ in range(k)) if p > 0 else False


@st.composite
def scripted(draw, honest, lies, garbage=GARBAGE, *, p_hostile=0.06, may_change=True):
    """A Script answering ``honest`` (mostly), a lie, or garbage; later reads may
    return garbage (a producer that changes its answer)."""
    if not rare(draw, p_hostile):
        firsta = honest
    else:
        firsta = draw(st.one_of(lies, garbage) if lies is not None else garbage)
    changes = may_change and draw(st.booleans()) and draw(st.booleans())
    later = draw(garbage) if changes else None
    return Script(firsta, later, changes=changes)


@st.composite
def memory(draw, kind: str, count: int):
    """A NumPy array of `count` drawn values plus SLACK spare bytes, as uint8."""
    dt = np.dtype(kind)
    if dt.kind == "f":
        elems = st.floats(width=dt.itemsize * 8, allow_nan=True)
        vals = draw(hnp.arrays(dt, count, elements=elems))
    else:
        vals = draw(hnp.arrays(dt, count))
    spare = draw(hnp.arrays(np.uint8, SLACK))
    if dt.kind == "b":
        spare = spare & 1
    return np.concatenate([vals.view(np.uint8), spare])


@st.composite
def hostile_buffer(draw, mem: np.ndarray, need: int, *, aligned: int = 1, p_hostile=0.06,
                   may_change=True):
    """A raw_buffer over `mem` whose honest answers are (mem start, need bytes)."""
    base = mem.ctypes.data
    shifts = [0] if aligned > 1 else [0, 1, 3]
    shift = draw(st.sampled_from(shifts)) if draw(st.booleans()) else 0
    real = mem.nbytes - shift
    ptr_lies = st.sampled_from([base + shift, 0])
    size_lies = st.one_of(
        st.integers(0, real), st.sampled_from([max(need - 1, 0), 2**62, 2**63 - 1])
    )
    ptr = draw(scripted(base + shift, ptr_lies, GARBAGE_PTR, p_hostile=p_hostile,
                        may_change=may_change))
    size = draw(scripted(min(need, real), size_lies, GARBAGE_BUFSIZE, p_hostile=p_hostile,
                         may_change=may_change))
    dev_lies = st.sampled_from([(2, 0), (1, None), (13, 0), [1, 0], (1,), (1, 0, 0)])
    dev = draw(scripted((1, 0), dev_lies, p_hostile=p_hostile / 2, may_change=may_change))
    return raw_buffer(ptr, size, dev, mem=mem)


@st.composite
def hostile_columns(draw, kind=None, *, may_change=True, mutate=True, p_hostile=0.06):
    """(HColumn, kind) of one chunk: a numeric or bool column with drawn values, null
    representation, and hostile answers."""
    kind = draw(st.sampled_from(KINDS)) if kind is None else kind
    dt = np.dtype(kind)
    n = draw(st.integers(0, 40))
    off = draw(st.integers(0, 20))
    mem = draw(memory(kind, n + off))
    nk = draw(st.sampled_from([NON_NULLABLE, USE_NAN, USE_SENTINEL, USE_BITMASK, USE_BYTEMASK]))
    if nk == USE_SENTINEL and dt.kind in "iu" and n + off:
        nv = int(np.frombuffer(mem[: (n + off) * dt.itemsize].tobytes(), dt)[
            draw(st.integers(0, n + off - 1))])
    elif nk == USE_SENTINEL:
        nv = -1
    elif nk in (USE_BITMASK, USE_BYTEMASK):
        nv = draw(st.sampled_from([0, 1]))
    else:
        nv = None
    order = draw(st.sampled_from(["=", "|" if dt.itemsize == 1 else "="]))
    dtype = ix_dtype(dt, order)
    # any alignment: every typed load of producer memory goes through memcpy
    aligned = 1
    data = draw(hostile_buffer(mem, (n + off) * dt.itemsize, aligned=aligned,
                               p_hostile=p_hostile, may_change=may_change))
    validity = None
    if nk in (USE_BITMASK, USE_BYTEMASK) and draw(st.integers(0, 4)) > 0:
        vneed = (n + off + 7) // 8 if nk == USE_BITMASK else n + off
        if nk == USE_BITMASK:
            vmem = draw(hnp.arrays(np.uint8, vneed + SLACK))
        else:
            vmem = draw(hnp.arrays(np.uint8, vneed + SLACK,
                                   elements=st.sampled_from([0, 1, 2, 255])))
        vbuf = draw(hostile_buffer(vmem, vneed, p_hostile=p_hostile, may_change=may_change))
        validity = (vbuf, BITMASK_DTYPE if nk == USE_BITMASK else BYTEMASK_DTYPE)
    elif nk == USE_NAN and draw(st.booleans()):
        validity = None
    bufs = {"data": (data, dtype), "validity": validity, "offsets": None}
    container = draw(st.sampled_from(["dict", "mapping"]))
    stored = bufs if container == "dict" else StoredMapping(bufs)
    honest_nc = None
    int_lies = st.integers(-(2**63), 2**63 - 1)
    small_lies = st.integers(-3, 60)
    s = {
        "size": draw(scripted(n, st.one_of(small_lies, int_lies), p_hostile=p_hostile,
                              may_change=may_change)),
        "offset": draw(scripted(off, st.one_of(small_lies, st.none(), int_lies),
                                p_hostile=p_hostile, may_change=may_change)),
        "describe_null": draw(scripted(
            (nk, nv),
            st.one_of(st.tuples(st.integers(-1, 6), st.one_of(st.none(), small_lies)),
                      st.sampled_from([(nk,), [nk, nv], (nk, nv, 0), (float(nk), nv)])),
            p_hostile=p_hostile, may_change=may_change)),
        "dtype": draw(scripted(dtype, st.sampled_from(
            [(dtype[0], dtype[1], dtype[2]), list(dtype), (UINT, 7, "C", "="),
             (99, dtype[1], dtype[2], "=")]), p_hostile=p_hostile / 2, may_change=may_change)),
        "null_count": draw(scripted(honest_nc, small_lies, p_hostile=p_hostile,
                                    may_change=may_change)),
        "num_chunks": draw(scripted(1, st.sampled_from([0, 1, -1]), p_hostile=p_hostile / 2,
                                    may_change=may_change)),
        "get_buffers": draw(scripted(stored, st.sampled_from(
            [{}, {"data": None}, {"data": (data,)}, {"data": [data, dtype]},
             {"data": (None, dtype)}, {"data": (data, dtype), "validity": (None, None)},
             {"data": (data, dtype), "validity": 5}]),
            p_hostile=p_hostile / 2, may_change=may_change)),
        "describe_categorical": ProducerError("not categorical"),
        "metadata": {},
    }
    col = HColumn(**s)
    # a callback read before get_buffers() empties the producer's own container
    # (a callback that empties it after get_buffers(): test_known_ptr_clears_the_buffers_dict)
    col.mutated = False
    if mutate and rare(draw, 0.06):
        hooked = draw(st.sampled_from(["size", "offset", "describe_null", "dtype"]))
        s[hooked].hook = stored.clear
        col.mutated = True
    return col, kind
