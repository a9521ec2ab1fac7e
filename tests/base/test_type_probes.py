"""The fast paths of polars Series and Arrow imports (probes of heap types that
follow every change of the class, the one-chunk plain-number conversion, the inline first chunk
of an import): each gives what the general path gives, and is not taken
where it must not be (a class whose attributes change, a subclass, an
instance attribute, a chunk with a validity bitmap of unknown null count)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest
from test_arrow_bad import Producer

import dfbuffer
from dfbuffer import Buffer, NativeFormat


def stream_of(arr):
    class S:
        def __arrow_c_stream__(self, requested_schema=None):
            return pa.chunked_array([arr]).__arrow_c_stream__(requested_schema)

    return S


# --------------------------------------------------------------------------
# probes of heap types: answers follow the class


def test_cached_answers_follow_changes_of_the_class():
    class P:
        def __arrow_c_stream__(self, requested_schema=None):
            return pa.chunked_array([pa.array([1.0, 2.0])]).__arrow_c_stream__(requested_schema)

    p = P()
    for _ in range(3):  # first call walks the class, the next ones hit the cache
        np.testing.assert_array_equal(dfbuffer.column_to_ndarray(p), [1.0, 2.0])
        assert Buffer.from_object(p).native == NativeFormat.ARROW
    # the class gains __arrow_c_array__ (asked before the stream): taken at once
    P.__arrow_c_array__ = lambda self, requested_schema=None: pa.array(
        [5, 6, 7]
    ).__arrow_c_array__(requested_schema)
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(p), [5, 6, 7])
    np.testing.assert_array_equal(np.asarray(Buffer.from_object(p)), [5, 6, 7])
    # and loses both: no protocol left
    del P.__arrow_c_array__
    del P.__arrow_c_stream__
    with pytest.raises(TypeError):
        dfbuffer.column_to_ndarray(p)
    with pytest.raises(TypeError):
        Buffer.from_object(p)
    # a protocol added to a base is seen by the (cached) subclass
    class Base:
        pass

    class Sub(Base):
        pass

    s = Sub()
    with pytest.raises(TypeError):
        Buffer.from_object(s)
    Base.__array_interface__ = property(lambda self: np.arange(3.0).__array_interface__)
    b = Buffer.from_object(s)
    assert b.native == NativeFormat.ARRAY_INTERFACE and b.owner is s


def test_a_subclass_has_its_own_answers():
    pl = pytest.importorskip("polars")
    s = pl.Series("a", np.arange(4.0))
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(s), np.arange(4.0))

    class Shadow(pl.Series):
        # a subclass that speaks the array protocol first: not the Series' answers
        def __arrow_c_array__(self, requested_schema=None):
            return pa.array([9, 8]).__arrow_c_array__(requested_schema)

    t = Shadow("b", [1.0, 2.0])
    for _ in range(2):
        np.testing.assert_array_equal(dfbuffer.column_to_ndarray(t), [9, 8])
        np.testing.assert_array_equal(np.asarray(Buffer.from_object(t)), [9, 8])
        np.testing.assert_array_equal(dfbuffer.column_to_ndarray(s), np.arange(4.0))


def test_instance_attributes_are_still_asked_after_a_cached_miss():
    class Plain:
        pass

    assert pytest.raises(TypeError, Buffer.from_object, Plain())  # cached: absent
    p = Plain()
    p.__arrow_c_array__ = pa.array([4, 5]).__arrow_c_array__
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(p), [4, 5])
    assert Buffer.from_object(p).native == NativeFormat.ARROW


def test_class_assignment_and_new_classes_at_old_addresses():
    class A:
        def __arrow_c_array__(self, requested_schema=None):
            return pa.array([1]).__arrow_c_array__(requested_schema)

    class B:
        pass

    x = A()
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(x), [1])
    x.__class__ = B
    with pytest.raises(TypeError):
        dfbuffer.column_to_ndarray(x)
    # classes made and freed in turn (their addresses reused): each answered
    # for what it defines
    for i in range(200):
        if i % 2:
            cls = type("C", (), {"__arrow_c_array__": A.__arrow_c_array__})
            np.testing.assert_array_equal(dfbuffer.column_to_ndarray(cls()), [1])
        else:
            cls = type("C", (), {})
            with pytest.raises(TypeError):
                dfbuffer.column_to_ndarray(cls())
        del cls
        gc.collect()


# --------------------------------------------------------------------------
# the one-chunk conversion of plain numbers


PLAIN = [
    pa.int8(),
    pa.int16(),
    pa.int32(),
    pa.int64(),
    pa.uint8(),
    pa.uint16(),
    pa.uint32(),
    pa.uint64(),
    pa.float16(),
    pa.float32(),
    pa.float64(),
]


def expected_view(out, arr):
    """What the general path made of a plain one-chunk column `arr` (offset
    and length its own): a read-only view into the values buffer, whose base is
    a read-only Arrow Buffer over the buffer from its start, owned by the holder."""
    values = arr.buffers()[1]
    itemsize = arr.type.bit_width // 8
    assert out.dtype == np.dtype(arr.type.to_pandas_dtype())
    assert not out.flags.writeable
    assert out.__array_interface__["data"][0] == values.address + arr.offset * itemsize
    base = out.base
    assert type(base) is Buffer and base.readonly and base.native == NativeFormat.ARROW
    assert base.dtype == out.dtype
    assert base.ptr == values.address
    assert base.nbytes == (arr.offset + len(arr)) * itemsize
    assert "dfbuffer.arrow_array" in repr(base.owner)


@pytest.mark.parametrize("typ", PLAIN, ids=str)
def test_plain_chunks_match_the_general_path(typ):
    np_arr = np.arange(1, 11).astype(typ.to_pandas_dtype())
    arr = pa.array(np_arr)
    for src in (arr, arr.slice(3, 5)):
        out = dfbuffer.column_to_ndarray(pa.chunked_array([src]))
        np.testing.assert_array_equal(out, src.to_numpy())
        expected_view(out, src)
        # the same through a Python stream producer and a record batch
        out2 = dfbuffer.column_to_ndarray(stream_of(src)())
        np.testing.assert_array_equal(out2, out)
        d = dfbuffer.from_dataframe(pa.record_batch([src], names=["a"]))
        np.testing.assert_array_equal(d["a"], out)
        assert d["a"].dtype == out.dtype and not d["a"].flags.writeable


def test_a_bitmap_of_unknown_null_count_takes_the_general_path():
    # null_count -1 with an all-valid bitmap: counted (general path), then the
    # same view as without the bitmap (fast path)
    values = np.arange(8.0)
    bitmap = np.array([0xFF], dtype=np.uint8)
    unknown = Producer(b"g", 8, [bitmap, values], null_count=-1)
    none = Producer(b"g", 8, [None, values], null_count=0)
    zero = Producer(b"g", 8, [bitmap, values], null_count=0)
    outs = [dfbuffer.column_to_ndarray(p) for p in (unknown, none, zero)]
    for out in outs:
        np.testing.assert_array_equal(out, values)
        assert out.dtype == np.float64 and not out.flags.writeable
        assert out.__array_interface__["data"][0] == values.ctypes.data
        assert type(out.base) is Buffer and out.base.ptr == values.ctypes.data
        assert out.base.nbytes == values.nbytes and out.base.readonly
    # with one null the general path masks
    one = Producer(b"g", 8, [np.array([0xFE], dtype=np.uint8), values], null_count=1)
    m = dfbuffer.column_to_ndarray(one)
    assert isinstance(m, np.ma.MaskedArray) and m.mask.tolist() == [True] + [False] * 7
    # an offset into the values: the view starts there, its base at the buffer
    off = Producer(b"g", 5, [None, values], offset=3)
    out = dfbuffer.column_to_ndarray(off)
    np.testing.assert_array_equal(out, values[3:])
    assert out.__array_interface__["data"][0] == values.ctypes.data + 24
    assert out.base.ptr == values.ctypes.data and out.base.nbytes == values.nbytes


def test_plain_chunk_errors_are_the_general_paths():
    values = np.arange(4, dtype=np.int64)
    # a NULL values buffer with a length: the importer's checks, first
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(Producer(b"l", 4, [None, None]))
    with pytest.raises(ValueError, match="buffers"):
        dfbuffer.column_to_ndarray(Producer(b"l", 4, [None], n_buffers=1))
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(Producer(b"l", 2**62, [None, values], offset=2**62))
    # empty and non-plain chunks are not the fast path's and still convert
    e = dfbuffer.column_to_ndarray(Producer(b"l", 0, [None, values]))
    assert e.shape == (0,) and e.dtype == np.int64
    ts = dfbuffer.column_to_ndarray(pa.chunked_array([pa.array([1, 2], pa.timestamp("us"))]))
    assert ts.dtype == np.dtype("M8[us]")


def test_plain_chunk_keeps_the_producer_alive():
    pl = pytest.importorskip("polars")
    s = pl.Series("a", np.arange(1000.0))
    out = dfbuffer.column_to_ndarray(s)
    b = Buffer.from_object(s)
    addr = s.to_numpy().__array_interface__["data"][0]
    assert out.__array_interface__["data"][0] == addr and b.ptr == addr
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None  # the Series goes; its memory stays with the holders
    np.testing.assert_array_equal(out, np.arange(1000.0))
    np.testing.assert_array_equal(np.asarray(b), np.arange(1000.0))


def test_streams_of_several_chunks_leave_the_inline_slot():
    chunks = [pa.array([float(i), float(i) + 0.5]) for i in range(9)]
    out = dfbuffer.column_to_ndarray(pa.chunked_array(chunks))
    np.testing.assert_array_equal(out, np.concatenate([c.to_numpy() for c in chunks]))
    with pytest.raises(NotImplementedError, match="exactly one Arrow chunk"):
        Buffer.from_object(pa.chunked_array(chunks[:2]))
