"""The Arrow fallback of Buffer.from_object (dfb_arrow_buffer_from_object),
reached here through the private _arrow_buffer helper."""

from __future__ import annotations

import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import dfbuffer
from dfbuffer._interchange import _arrow_buffer


def test_values_buffer_zero_copy_sliced():
    a = pa.array(np.arange(10.0)).slice(2, 5)
    b = _arrow_buffer(a)
    assert isinstance(b, dfbuffer.Buffer)
    assert b.ptr == a.buffers()[1].address + 2 * 8 and b.bufsize == 40
    assert b.native == dfbuffer.NativeFormat.ARROW and b.readonly
    assert np.asarray(b).tolist() == [2.0, 3.0, 4.0, 5.0, 6.0]
    assert _arrow_buffer(a, "i8").dtype == np.int64
    assert _arrow_buffer(pa.array([1, None, 3])).shape == (3,)     # nulls are not masked
    ts = _arrow_buffer(pa.array([0, 1], pa.timestamp("ns")))
    assert ts.dtype == np.dtype("M8[ns]")
    assert len(np.asarray(_arrow_buffer(pa.array([], pa.int32())))) == 0
    assert _arrow_buffer(pa.chunked_array([[1, 2]])).shape == (2,)


@pytest.mark.parametrize("obj, match", [
    (pa.array(["a"]), "'u'"),
    (pa.array([True]), "'b'"),
    (pa.array([1]).dictionary_encode(), "'i'"),
    (pa.array([[1]]), r"'\+l'"),
    (pa.chunked_array([[1], [2]]), "one Arrow chunk"),
])
def test_refused(obj, match):
    with pytest.raises(NotImplementedError, match=match):
        _arrow_buffer(obj)


def test_itemsize_mismatch():
    with pytest.raises(ValueError, match="itemsize"):
        _arrow_buffer(pa.array([1.0]), "i4")


def test_lifetime(collect):
    before = pa.total_allocated_bytes()
    v = pc.add(pa.array(np.arange(100_000, dtype=np.int64)), 1)
    b = _arrow_buffer(v)
    wb = weakref.ref(b)
    del v
    collect()
    assert pa.total_allocated_bytes() - before >= 800_000
    assert np.asarray(b)[-1] == 100_000
    del b
    collect()
    assert wb() is None and pa.total_allocated_bytes() <= before
