"""Fuzz: hand-built DLPack capsules (DLManagedTensor and DLManagedTensorVersioned, via
ctypes) through Buffer.from_object, directly and behind __dlpack__.

Drawn: the capsule name (right, wrong, used), the version, ndim (also negative or larger
than supported), a NULL or negative shape, strides (NULL, huge, negative), byte_offset
(also overflowing), the dtype code/bits/lanes, the device and the read-only flag.  The
oracle is the DLPack validity rules plus NumPy's as_strided over the real memory; the
deleter runs exactly once for a consumed capsule and never for a refused one."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
from _dlpack_ctypes import Producer, Tensor
from fuzz_settings import FUZZ, FUZZ_SEED
from hostile import ALLOWED, run
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import rare

from dfbuffer import Buffer

pytestmark = pytest.mark.fuzz

MAXDIM = 64
PAD = MAXDIM + 2  # shape/strides arrays always this long: ndim never reads past them
SUPPORTED = {(0, 8), (0, 16), (0, 32), (0, 64), (1, 8), (1, 16), (1, 32), (1, 64),
             (2, 16), (2, 32), (2, 64), (5, 64), (5, 128), (6, 8)}
NP = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
SSIZE_MAX = 2**63 - 1

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


@st.composite
def tensors(draw):
    if not rare(draw, 0.12):
        code, bits = draw(st.sampled_from(sorted(SUPPORTED)))
    else:
        code, bits = draw(st.tuples(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 17, 255]),
                                    st.sampled_from([0, 1, 4, 7, 8, 16, 24, 32, 64, 128, 255])))
    lanes = 1 if not rare(draw, 0.06) else draw(st.sampled_from([0, 2, 4, 65535]))
    ok = (code, bits) in SUPPORTED and lanes == 1
    itemsize = max(bits // 8, 1)
    ndim_real = draw(st.integers(0, 3))
    shape = draw(st.lists(st.integers(0, 4), min_size=ndim_real, max_size=ndim_real))
    if ndim_real and rare(draw, 0.12):
        shape[draw(st.integers(0, ndim_real - 1))] = draw(
            st.sampled_from([-1, -(2**63), 2**62, 2**63 - 1]))
    ndim = ndim_real
    if rare(draw, 0.06):
        ndim = draw(st.sampled_from([-1, -(2**31), MAXDIM, MAXDIM + 1, 2**31 - 1]))
    stride_kind = draw(st.sampled_from(["null", "contig", "drawn", "huge"]))
    n_elems = int(np.prod([max(s, 0) for s in shape[:4]] or [1])) if all(
        0 <= s <= 4 for s in shape) else 0
    if stride_kind == "contig":
        strides = [int(np.prod(shape[i + 1:])) for i in range(ndim_real)]
    elif stride_kind == "drawn":
        strides = draw(st.lists(st.integers(-6, 6), min_size=ndim_real, max_size=ndim_real))
    elif stride_kind == "huge":
        strides = draw(st.lists(st.sampled_from([2**62, -(2**62), 2**63 - 1, -(2**63), 1]),
                                min_size=ndim_real, max_size=ndim_real))
    else:
        strides = None
    backing_elems = 64
    backing = draw(hnp.arrays(np.uint8, backing_elems * 16))
    start = draw(st.integers(0, 32)) * itemsize  # bytes into the backing, via byte_offset
    byte_offset = start
    if rare(draw, 0.06):
        byte_offset = draw(st.sampled_from([2**63, 2**64 - 1, 2**63 - 1, 2**62]))
    data = draw(st.sampled_from(["base", "base", "null"]))
    device = draw(st.sampled_from([(1, 0), (1, 0), (1, 0), (2, 0), (13, 0)]))
    legacy = draw(st.booleans())
    version = (1, 3) if not rare(draw, 0.06) else draw(st.sampled_from([(0, 8), (2, 0)]))
    flags = draw(st.sampled_from([0, 0, 1]))
    name = "right" if not rare(draw, 0.12) else draw(st.sampled_from(["wrong", "used"]))
    null_shape = ndim_real > 0 and rare(draw, 0.06)
    via_producer = draw(st.booleans())
    return dict(code=code, bits=bits, lanes=lanes, ok_dtype=ok, itemsize=itemsize,
                shape=shape, ndim=ndim, strides=strides, backing=backing,
                byte_offset=byte_offset, data=data, device=device, legacy=legacy,
                version=version, flags=flags, name=name, null_shape=null_shape,
                n_elems=n_elems, via_producer=via_producer)


def build(d):
    shape = list(d["shape"]) + [1] * (PAD - len(d["shape"]))
    strides = None if d["strides"] is None else list(d["strides"]) + [1] * (
        PAD - len(d["strides"]))
    t = Tensor(None, code=d["code"], bits=d["bits"], lanes=d["lanes"], shape=tuple(shape),
               strides=tuple(strides) if strides is not None else None,
               byte_offset=d["byte_offset"],
               data=0 if d["data"] == "null" else d["backing"].ctypes.data,
               device=d["device"], flags=d["flags"], version=d["version"],
               legacy=d["legacy"], ndim=d["ndim"])
    t.keep = d["backing"]
    if d["null_shape"]:
        t.m.dl_tensor.shape = None
    right = "dltensor" if d["legacy"] else "dltensor_versioned"
    if d["name"] == "wrong":
        cap = t.capsule("wrong")
    else:
        cap = t.capsule(right)
        if d["name"] == "used":
            ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
            ctypes.pythonapi.PyCapsule_SetName(cap, USED[right])
    return t, cap


USED = {"dltensor": b"used_dltensor", "dltensor_versioned": b"used_dltensor_versioned"}


def oracle(d):
    """'refuse' (deleter not run), 'refuse-consumed' (deleter run), 'wrap' (a Buffer whose
    memory must not be read), or ('values', ndarray)."""
    if d["name"] in ("wrong", "used"):
        return "refuse"
    if not d["legacy"] and d["version"][0] != 1:
        return "refuse-consumed"
    ndim = d["ndim"]
    if ndim < 0 or ndim > MAXDIM:
        return "refuse"
    if ndim > 0 and d["null_shape"]:
        return "refuse"
    if not d["ok_dtype"]:
        return "refuse"
    shape = (list(d["shape"]) + [1] * PAD)[:ndim]
    if any(s < 0 for s in shape):
        return "refuse"
    itemsize = d["itemsize"]
    if d["strides"] is not None:
        strides = (list(d["strides"]) + [1] * PAD)[:ndim]
        if any(not (-(2**63) <= s * itemsize <= SSIZE_MAX) for s in strides):
            return "refuse"
    else:
        strides = [int(np.prod(shape[i + 1:], dtype=object)) for i in range(ndim)]
    if d["byte_offset"] > SSIZE_MAX:
        return "refuse"
    if any(s == 0 for s in shape):
        # NumPy too refuses a zero-size shape whose other dimensions overflow, such as
        # (2**62, 2, 0): "array is too big"
        big = int(np.prod([s for s in shape if s], dtype=object)) * itemsize >= 2**62
        return "maybe" if big else "wrap-empty"
    if d["data"] == "null":
        return "refuse-consumed"  # NULL data for a non-empty tensor, refused when wrapped
    # the extent (lowest and highest byte) in Python integers
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True)) * itemsize
    hi = (sum(max(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True)) + 1) * itemsize
    if max(abs(lo), abs(hi)) >= 2**62 or int(np.prod(shape, dtype=object)) * itemsize >= 2**62:
        return "maybe"  # refused as overflowing, or wrapped (never read)
    if d["device"][0] not in (1, 3, 13):
        return "wrap"
    start = d["byte_offset"]
    if start + lo < 0 or start + hi > d["backing"].nbytes:
        return "wrap"  # valid for the consumer, but beyond our memory: never read
    dt = np.dtype(f"{NP[d['code']]}{itemsize}")
    arr = np.ndarray(shape, dt, buffer=d["backing"].tobytes(), offset=start,
                     strides=[s * itemsize for s in strides])
    return ("values", np.array(arr))


@FUZZ
@FUZZ_SEED
@given(tensors())
def test_dlpack_capsules(d):
    exp = oracle(d)
    t, cap = build(d)
    name_before = _get_name(cap)
    obj = Producer(cap, device=d["device"]) if d["via_producer"] else cap
    try:
        res = Buffer.from_object(obj)
    except ALLOWED as e:
        event(f"oracle {exp if isinstance(exp, str) else 'values'}, refused")
        assert exp in ("refuse", "refuse-consumed", "maybe"), (exp, e)
        gc.collect()
        if exp == "refuse":
            assert t.deleted == 0 and _get_name(cap) == name_before
        elif exp == "refuse-consumed":
            assert t.deleted == 1
        else:
            assert t.deleted == (1 if _get_name(cap).startswith(b"used_") else 0)
        del cap, obj
        return
    event(f"oracle {exp if isinstance(exp, str) else 'values'}, accepted")
    assert exp not in ("refuse", "refuse-consumed"), exp
    assert _get_name(cap).startswith(b"used_")
    assert res.readonly == bool(not d["legacy"] and d["flags"] & 1) or not res.readonly
    if not d["legacy"] and d["flags"] & 1:
        assert res.readonly
    if isinstance(exp, tuple):
        np.testing.assert_array_equal(np.asarray(res), exp[1])
    elif exp == "wrap-empty" and d["device"][0] == 1:
        # NumPy itself may refuse a shape like (0, 2**62) (ValueError)
        kind, arr = run(lambda r=res: np.asarray(r))
        assert kind == "error" or arr.size == 0
        del arr  # a view keeps the Buffer alive
    assert t.deleted == 0
    del res, obj
    gc.collect()
    assert t.deleted == 1
