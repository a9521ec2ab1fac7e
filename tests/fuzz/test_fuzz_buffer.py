"""Fuzz: the Buffer constructor with drawn pointers, sizes, dtypes, shapes and strides
(also negative, huge, of the wrong type or length), then every export of what it accepts.

The oracle: NumPy's np.ndarray(buffer=...) over the same real memory for a Buffer that
fits inside it; every export (memoryview, __array_interface__, DLPack) must agree with it
or refuse cleanly."""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_settings import FUZZ, FUZZ_SEED
from hostile import run
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import rare

from dfbuffer import Buffer

pytestmark = pytest.mark.fuzz

MEM = 512
DTYPES = ["u1", "i2", "<i4", "f8", "?", "c8", ">i4", "M8[ns]"]


@st.composite
def constructions(draw):
    mem = draw(hnp.arrays(np.uint8, MEM))
    base = mem.ctypes.data
    dtype = draw(st.sampled_from(DTYPES)) if not rare(draw, 0.12) else draw(
        st.sampled_from(["O", "U3", "V0", "x", 5, None, "i4,i4"]))
    try:
        itemsize = np.dtype(dtype).itemsize or 1
    except Exception:
        itemsize = 1
    start = MEM // 2
    ptr = base + start
    if rare(draw, 0.12):
        ptr = draw(st.sampled_from([0, -1, 2**64, True, 1.0, "1", None]))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    strides = None
    if ndim and rare(draw, 0.25):
        strides = tuple(s * itemsize for s in draw(
            st.lists(st.integers(-3, 3), min_size=ndim, max_size=ndim)))
    if rare(draw, 0.06):
        shape = draw(st.sampled_from([(-1,), (2**62,), [2], 2, "2", (1.5,)]))
    if rare(draw, 0.06):
        strides = draw(st.sampled_from([(2**62,), (1, 1, 1, 1), -8, (None,)]))
    n_items = int(np.prod(shape)) if isinstance(shape, tuple) and all(
        type(s) is int and 0 <= s < 2**31 for s in shape) else 0
    bufsize = min(n_items * itemsize, MEM - start)
    if rare(draw, 0.12):
        bufsize = draw(st.sampled_from([0, -1, 2**63, bufsize + 1, True, None]))
    readonly = draw(st.booleans())
    kw = {"owner": mem, "dtype": dtype, "readonly": readonly}
    if draw(st.booleans()):
        kw["shape"] = shape
    if strides is not None:
        kw["strides"] = strides
    return mem, ptr, bufsize, kw


@FUZZ
@FUZZ_SEED
@given(constructions())
def test_buffer_constructor_and_exports(case):
    mem, ptr, bufsize, kw = case
    kind, b = run(lambda: Buffer(ptr, bufsize, **kw))
    event(f"Buffer() {kind}")
    if kind == "error":
        return
    assert b.ptr == ptr and b.owner is mem
    base = mem.ctypes.data
    lo = hi = 0
    for n, st_ in zip(b.shape, b.strides, strict=True):
        lo += min(0, (n - 1) * st_)
        hi += max(0, (n - 1) * st_)
    # ptr is the block's lowest address: element 0 lies -lo bytes above it
    empty = 0 in b.shape
    if empty or not (base <= ptr and ptr + hi - lo + b.dtype.itemsize <= base + mem.nbytes):
        return  # empty, or beyond our memory: nothing may read it
    ref = np.ndarray(b.shape, b.dtype, buffer=mem.data, offset=ptr - lo - base,
                     strides=b.strides)
    exports = {
        "asarray": lambda: np.asarray(b),
        "dlpack": lambda: np.from_dlpack(b),
        "memoryview": lambda: np.asarray(memoryview(b)),
    }
    for name, fn in exports.items():
        k, arr = run(fn)
        event(f"{name} {k}")
        if k == "ok":
            assert arr.shape == ref.shape, name
            if ref.dtype.kind == "M":  # compare NaT bit patterns as integers
                arr, want = arr.view(np.int64), ref.view(np.int64)
            else:
                want = ref
            np.testing.assert_array_equal(arr, want, err_msg=name)
            if kw["readonly"]:
                assert not arr.flags.writeable, name
        del arr
