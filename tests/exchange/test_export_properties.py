"""Property test: every export of a Buffer over any strided view agrees with the view."""

from __future__ import annotations

import pickle

import numpy as np
from export_helpers import ALL_DTYPES, check_same, make_buffer, sample
from hypothesis import given, settings
from hypothesis import strategies as st


@st.composite
def views(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES + [">i4", ">f8", ">c8"]))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    full = tuple(s * 2 for s in shape) + (2,)  # room for steps of 2 and a gap
    base = sample(dtype, int(np.prod(full))).astype(dtype).reshape(full)[..., :1].reshape(full[:-1])
    index = []
    for s in shape:
        step = draw(st.sampled_from([1, 2, -1, -2]))
        index.append(slice(None, None, step) if s else slice(0, 0))
    view = base[tuple(index)] if index else base  # a[()] would give a scalar
    if draw(st.booleans()) and ndim:
        view = np.broadcast_to(view[..., :1], view.shape)  # a zero stride
    if draw(st.booleans()):
        view = view.view()
        view.flags.writeable = False
    return view


@settings(max_examples=100, deadline=None)
@given(views())
def test_all_exports_agree(arr):
    buf = make_buffer(arr)
    outs = [np.asarray(buf), buf.__array__()]
    if arr.dtype.kind not in "Mm":
        outs.append(np.asarray(memoryview(buf)))
    if arr.dtype.kind not in "Mm" and arr.dtype.isnative:
        outs.append(np.from_dlpack(buf))
    for out in outs:
        check_same(out, arr)
    for protocol in (4, 5):
        r = pickle.loads(pickle.dumps(buf, protocol=protocol))
        np.testing.assert_array_equal(np.asarray(r), arr)
        assert r.readonly == buf.readonly
    oob = []
    r = pickle.loads(pickle.dumps(buf, 5, buffer_callback=oob.append), buffers=oob)
    np.testing.assert_array_equal(np.asarray(r), arr)
