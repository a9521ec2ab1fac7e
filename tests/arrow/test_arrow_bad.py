"""Malformed Arrow producers: hand-built C structs (ctypes mirrors of the
Arrow C data interface), wrong capsules, consumed capsules.  Each must give a
clear exception, never a crash, and release what was moved exactly once."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pyarrow as pa
import pytest
from _arrow_ctypes import (
    ARRAY_RELEASE,
    GET_NEXT,
    GET_SCHEMA,
    SCHEMA_RELEASE,
    ArrowArray,
    ArrowSchema,
    PairProducer,
    StreamProducerBase,
)

import dfbuffer
from dfbuffer import to_interchange
from dfbuffer._interchange import _arrow_import


class Producer(PairProducer):
    """A hand-written producer of one array; counts release calls.

    Keeps every ctypes object alive.  ``release_count`` counts calls of the
    array's release callback (the test checks it is exactly once).
    """

    def __init__(self, fmt: bytes, length: int, buffers: list, *, null_count=0,
                 offset=0, n_buffers=None, name=b"x", dictionary=None):
        self.release_count = 0
        self.keep: list = []

        def release_array(p):
            self.release_count += 1
            p.contents.release = None

        def release_schema(p):
            p.contents.release = None

        self._ra = ARRAY_RELEASE(release_array)
        self._rs = SCHEMA_RELEASE(release_schema)
        self.schema = ArrowSchema(format=fmt, name=name, flags=2,
                                  release=ctypes.cast(self._rs, ctypes.c_void_p).value)
        bufs = (ctypes.c_void_p * max(len(buffers), 1))(*[self._addr(b) for b in buffers])
        self.keep.append(bufs)
        self.array = ArrowArray(
            length=length, null_count=null_count, offset=offset,
            n_buffers=len(buffers) if n_buffers is None else n_buffers,
            buffers=ctypes.cast(bufs, ctypes.POINTER(ctypes.c_void_p)),
            release=ctypes.cast(self._ra, ctypes.c_void_p).value)
        if dictionary is not None:
            dschema, darray = dictionary
            self.keep.append(dictionary)
            if dschema is not None:
                self.schema.dictionary = ctypes.pointer(dschema)
            if darray is not None:
                self.array.dictionary = ctypes.pointer(darray)


def child_array(fmt: bytes, values: list):
    """(schema, array, keep) for a simple dictionary values array (no release needed)."""
    keep = []
    arr = np.asarray(values, dtype=np.int64)
    keep.append(arr)
    bufs = (ctypes.c_void_p * 2)(None, arr.ctypes.data)
    keep.append(bufs)
    noop_s = SCHEMA_RELEASE(lambda p: None)
    noop_a = ARRAY_RELEASE(lambda p: None)
    keep += [noop_s, noop_a]
    s = ArrowSchema(format=fmt, name=b"", release=ctypes.cast(noop_s, ctypes.c_void_p).value)
    a = ArrowArray(length=len(values), n_buffers=2,
                   buffers=ctypes.cast(bufs, ctypes.POINTER(ctypes.c_void_p)),
                   release=ctypes.cast(noop_a, ctypes.c_void_p).value)
    return s, a, keep


def test_hand_built_good_array_and_release_once(collect):
    p = Producer(b"l", 3, [None, np.array([1, 2, 3], dtype=np.int64)])
    df = to_interchange(p)
    buf, dtype = df.get_column(0).get_buffers()["data"]
    assert np.asarray(buf).tolist() == [1, 2, 3]
    assert p.release_count == 0
    del df
    collect()
    assert p.release_count == 0          # the Buffer keeps the array alive
    del buf
    collect()
    assert p.release_count == 1          # released exactly once, when the last view went


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(fmt=b"l", length=-1, buffers=[None, np.zeros(1, np.int64)]), "negative"),
        (dict(fmt=b"l", length=1, offset=-2, buffers=[None, np.zeros(1, np.int64)]),
         "negative"),
        (dict(fmt=b"l", length=1, buffers=[None]), "buffers"),
        (dict(fmt=b"l", length=1, buffers=[None, np.zeros(1, np.int64)], n_buffers=3),
         "buffers"),
        (dict(fmt=b"l", length=2, null_count=5, buffers=[None, np.zeros(2, np.int64)]),
         "null_count"),
        (dict(fmt=b"l", length=2, null_count=1, buffers=[None, np.zeros(2, np.int64)]),
         "validity"),
        (dict(fmt=b"l", length=2, buffers=[None, None]), "NULL"),
        (dict(fmt=b"u", length=2,
              buffers=[None, np.array([0, 3, 1], np.int32), np.zeros(3, np.uint8)]),
         "non-decreasing"),
        (dict(fmt=b"u", length=1,
              buffers=[None, np.array([-4, 1], np.int32), np.zeros(3, np.uint8)]),
         "non-negative"),
        (dict(fmt=b"u", length=1, buffers=[None, None, None]), "offsets"),
        (dict(fmt=b"U", length=1,
              buffers=[None, np.array([0, 5], np.int64), None]), "NULL"),
        (dict(fmt=b"l", length=2**62, offset=2**62, buffers=[None, np.zeros(1, np.int64)]),
         "overflow"),
        (dict(fmt=b"l", length=2**61, buffers=[None, np.zeros(1, np.int64)]), "overflow"),
    ],
)
def test_inconsistent_arrays_raise_value_error(kwargs, match, collect):
    p = Producer(**kwargs)
    with pytest.raises(ValueError, match=match):
        to_interchange(p)
    collect()
    assert p.release_count == 1          # moved in, then released once on the error path


def test_dictionary_mismatch(collect):
    s, a, keep = child_array(b"l", [10, 20])
    p = Producer(b"i", 2, [None, np.array([0, 1], np.int32)], dictionary=(s, None))
    with pytest.raises(ValueError, match="dictionary"):
        _arrow_import(p)
    collect()
    assert p.release_count == 1


def test_dictionary_hand_built(collect):
    s, a, keep = child_array(b"l", [10, 20])
    p = Producer(b"i", 3, [None, np.array([1, 0, 1], np.int32)], dictionary=(s, a))
    col = to_interchange(p).get_column(0)
    assert col.dtype[0] == dfbuffer.DtypeKind.CATEGORICAL
    cats = col.describe_categorical["categories"]
    assert np.asarray(cats.get_buffers()["data"][0]).tolist() == [10, 20]
    del col, cats
    collect()
    assert p.release_count == 1


def test_string_view_out_of_range(collect):
    views = np.zeros(16, np.uint8)
    views[:4] = np.frombuffer(np.int32(20).tobytes(), np.uint8)     # length 20 > 12
    views[8:12] = np.frombuffer(np.int32(3).tobytes(), np.uint8)    # buffer index 3: none
    sizes = np.array([30], np.int64)
    p = Producer(b"vu", 1, [None, views, np.zeros(30, np.uint8), sizes])
    with pytest.raises(ValueError, match="outside"):
        _arrow_import(p)
    views[8:12] = 0                                                   # buffer 0 ...
    views[12:16] = np.frombuffer(np.int32(25).tobytes(), np.uint8)  # ... but 25 + 20 > 30
    p2 = Producer(b"vu", 1, [None, views, np.zeros(30, np.uint8), sizes])
    with pytest.raises(ValueError, match="outside"):
        _arrow_import(p2)
    collect()
    assert p.release_count == p2.release_count == 1


def test_string_view_hand_built_inline_and_out_of_line():
    data = np.frombuffer(b"hello, wide world of views", np.uint8).copy()
    views = np.zeros(32, np.uint8)
    views[0:4] = np.frombuffer(np.int32(3).tobytes(), np.uint8)
    views[4:7] = np.frombuffer(b"abc", np.uint8)
    views[16:20] = np.frombuffer(np.int32(20).tobytes(), np.uint8)
    views[20:24] = data[:4]
    views[24:28] = 0
    views[28:32] = np.frombuffer(np.int32(2).tobytes(), np.uint8)
    p = Producer(b"vu", 2, [None, views, data, np.array([data.size], np.int64)])
    df = to_interchange(p)
    col = df.get_column(0)
    assert col.dtype[:3] == (dfbuffer.DtypeKind.STRING, 8, "U")
    assert col._col.tolist() == ["abc", "llo, wide world of v"]


def test_unsupported_format_deferred_then_named():
    p = Producer(b"+l", 1, [None, np.array([0, 1], np.int32)])
    col = to_interchange(p).get_column(0)
    with pytest.raises(NotImplementedError, match=r"\+l"):
        _ = col.dtype
    with pytest.raises(NotImplementedError, match=r"\+l"):
        col.get_buffers()


class Returns:
    """A producer whose __arrow_c_array__ / __arrow_c_stream__ returns ``value``."""

    def __init__(self, value, stream=False):
        self.value = value
        if stream:
            self.__arrow_c_stream__ = lambda requested_schema=None: self.value
        else:
            self.__arrow_c_array__ = lambda requested_schema=None: self.value


def test_wrong_capsule_names_and_order():
    arr = pa.array([1, 2, 3])
    s, a = arr.__arrow_c_array__()
    with pytest.raises(TypeError, match="wrong order"):
        _arrow_import(Returns((a, s)))
    with pytest.raises(TypeError, match="arrow_schema"):
        _arrow_import(Returns((a, a)))
    with pytest.raises(TypeError, match="tuple"):
        _arrow_import(Returns([s, a]))
    with pytest.raises(TypeError, match="PyCapsule"):
        _arrow_import(Returns((s, 42)))
    with pytest.raises(TypeError, match="arrow_array_stream"):
        _arrow_import(Returns(s, stream=True))
    # nothing was consumed: the capsules still work
    assert pa.Array._import_from_c_capsule(s, a).to_pylist() == [1, 2, 3]


def test_consumed_capsules():
    arr = pa.array([1, 2, 3])
    s, a = arr.__arrow_c_array__()
    # the first import moves the array out of the capsules
    assert _arrow_import(Returns((s, a)))[2][0][0]["length"] == 3
    with pytest.raises(ValueError, match="released"):
        _arrow_import(Returns((s, a)))
    stream = pa.table({"a": [1]}).__arrow_c_stream__()
    pa.RecordBatchReader._import_from_c_capsule(stream).read_all()
    with pytest.raises(ValueError, match="released"):
        _arrow_import(Returns(stream, stream=True))


def test_not_a_producer():
    with pytest.raises(TypeError,
                       match=r"to_interchange\(\) expects a dataframe: an Arrow PyCapsule"):
        to_interchange([1, 2, 3])


def test_released_child_array():
    t = pa.record_batch({"a": [1, 2]})
    s, a = t.__arrow_c_array__()
    ptr = ctypes.pythonapi.PyCapsule_GetPointer
    ptr.restype = ctypes.c_void_p
    ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
    arr = ArrowArray.from_address(ptr(a, b"arrow_array"))
    child = arr.children[0].contents
    child.release = None  # (pyarrow then leaks that child's private data: tiny)
    with pytest.raises(ValueError, match="released"):
        _arrow_import(Returns((s, a)))
    gc.collect()


class StreamProducer(StreamProducerBase):
    """A hand-written stream of ``n_ok`` copies of one int64 array, then
    ``fail`` (an errno) or the end.  Counts releases."""

    def __init__(self, n_ok: int, *, fail: int = 0, schema_fail: int = 0):
        self.base = Producer(b"l", 3, [None, np.array([1, 2, 3], np.int64)])
        self.n_ok, self.fail, self.schema_fail = n_ok, fail, schema_fail
        self.stream_releases = 0

        def get_schema(_s, out):
            if self.schema_fail:
                return self.schema_fail
            ctypes.memmove(out, ctypes.addressof(self.base.schema), ctypes.sizeof(ArrowSchema))
            return 0

        def get_next(_s, out):
            if self.n_ok > 0:
                self.n_ok -= 1
                ctypes.memmove(out, ctypes.addressof(self.base.array), ctypes.sizeof(ArrowArray))
                return 0
            if self.fail:
                return self.fail
            out.contents.release = None
            return 0

        self._make_stream(GET_SCHEMA(get_schema), GET_NEXT(get_next))


def test_stream_good_releases_each_chunk_once(collect):
    p = StreamProducer(3)
    x = to_interchange(p)
    assert x.num_chunks() == 3 and x.num_rows() == 9
    assert p.stream_releases == 1
    bufs = [c.get_column(0).get_buffers()["data"][0] for c in x.get_chunks()]
    del x
    collect()
    assert p.base.release_count == 0
    del bufs
    collect()
    assert p.base.release_count == 3


@pytest.mark.parametrize("errno_, exc", [(22, ValueError), (12, MemoryError),
                                          (38, NotImplementedError), (5, OSError)])
def test_stream_get_next_error(errno_, exc, collect):
    p = StreamProducer(2, fail=errno_)
    with pytest.raises(exc, match="boom from the producer"):
        to_interchange(p)
    collect()
    assert p.stream_releases == 1
    assert p.base.release_count == 2          # chunks already taken are released


def test_stream_get_schema_error(collect):
    p = StreamProducer(1, schema_fail=22)
    with pytest.raises(ValueError, match="get_schema"):
        to_interchange(p)
    assert p.stream_releases == 1


def struct_producer(child_len: int, parent_len: int, parent_offset: int = 0,
                    parent_nulls: int = 0):
    """A record batch (top-level '+s') with one int64 child, built by hand."""
    child = Producer(b"l", child_len, [None, np.arange(max(child_len, 1), dtype=np.int64)],
                     name=b"a")
    p = Producer(b"+s", parent_len, [np.zeros(8, np.uint8) if parent_nulls else None],
                 null_count=parent_nulls, offset=parent_offset)
    schemas = (ctypes.POINTER(ArrowSchema) * 1)(ctypes.pointer(child.schema))
    arrays = (ctypes.POINTER(ArrowArray) * 1)(ctypes.pointer(child.array))
    p.keep += [child, schemas, arrays]
    p.schema.n_children = p.array.n_children = 1
    p.schema.children = ctypes.cast(schemas, ctypes.POINTER(ctypes.POINTER(ArrowSchema)))
    p.array.children = ctypes.cast(arrays, ctypes.POINTER(ctypes.POINTER(ArrowArray)))
    return p


def test_struct_table_hand_built(collect):
    p = struct_producer(5, 3, parent_offset=2)
    col = to_interchange(p).get_column_by_name("a")
    assert np.asarray(col.get_buffers()["data"][0]).tolist() == [2, 3, 4]
    del col
    collect()
    assert p.release_count == 1


@pytest.mark.parametrize("kw, exc, match", [
    (dict(child_len=2, parent_len=3), ValueError, "fewer"),
    (dict(child_len=5, parent_len=3, parent_offset=3), ValueError, "fewer"),
    (dict(child_len=3, parent_len=3, parent_nulls=1), NotImplementedError, "null rows"),
])
def test_struct_table_inconsistent(kw, exc, match, collect):
    p = struct_producer(**kw)
    with pytest.raises(exc, match=match):
        to_interchange(p)
    collect()
    assert p.release_count == 1


def test_struct_children_count_mismatch(collect):
    p = struct_producer(3, 3)
    p.array.n_children = 0
    with pytest.raises(ValueError, match="children"):
        to_interchange(p)


def test_struct_null_count_out_of_range(collect):
    """The table check is shared with the device import: a struct null_count outside
    [-1, length] is refused even where a bitmap could be counted."""
    p = struct_producer(3, 3, parent_nulls=1)
    p.array.null_count = 4
    with pytest.raises(ValueError, match="null_count 4"):
        to_interchange(p)
    collect()
    assert p.release_count == 1


# --- schema metadata whose count or lengths no metadata holds ----------------------------
# The C data interface gives no size of the metadata: a count or length beyond the int32
# bound is refused before anything past it is read (a count that only overstates the
# entries held cannot be told from the bytes that follow it).

METADATA_READERS = {
    "column_to_ndarray": dfbuffer.column_to_ndarray,
    "from_dataframe": dfbuffer.from_dataframe,
    "schema": dfbuffer.schema,
    "to_interchange": to_interchange,
    "to_arrow": lambda p: dfbuffer.to_arrow(p).__arrow_c_stream__(),
}


def _with_metadata(md: bytes) -> Producer:
    p = Producer(b"l", 3, [None, np.arange(3, dtype=np.int64)])
    buf = ctypes.create_string_buffer(md, len(md))  # exactly the bytes given
    p.keep.append(buf)
    p.schema.metadata = ctypes.cast(buf, ctypes.c_char_p)
    return p


def _entry(key: bytes, value: bytes) -> bytes:
    import struct

    return struct.pack("<i", len(key)) + key + struct.pack("<i", len(value)) + value


@pytest.mark.parametrize("reader", list(METADATA_READERS))
@pytest.mark.parametrize(
    "md",
    [
        (2**31 - 1).to_bytes(4, "little") + _entry(b"k", b"v"),  # more entries than 2**31 bytes
        (2**28).to_bytes(4, "little") + _entry(b"k", b"v"),
        (1).to_bytes(4, "little") + (2**31 - 1).to_bytes(4, "little") + b"k",  # a key past it
        (1).to_bytes(4, "little") + (2**31 - 9).to_bytes(4, "little") + b"k",
        (1).to_bytes(4, "little") + (1).to_bytes(4, "little") + b"k"
        + (2**31 - 13).to_bytes(4, "little"),  # a value past it
    ],
    ids=["count-int32-max", "count-2**28", "key-int32-max", "key-to-the-bound",
         "value-past-the-bound"],
)
def test_metadata_claiming_more_than_int32_bytes_is_refused(reader, md):
    # each read on until it crashed (a count or a length taken as given)
    with pytest.raises(ValueError, match="negative count or length|metadata lengths"):
        METADATA_READERS[reader](_with_metadata(md))


@pytest.mark.parametrize("reader", list(METADATA_READERS))
def test_metadata_within_its_bytes_still_reads(reader):
    md = (2).to_bytes(4, "little") + _entry(b"a", b"1") + _entry(b"bc", b"")
    got = METADATA_READERS[reader](_with_metadata(md))
    assert got is not None
    assert dfbuffer.schema(_with_metadata(md)).metadata == {"a": "1", "bc": ""}


# --- fixed-size values whose width times length no machine holds -------------------------
# Arrow gives no buffer sizes: a 16-byte data buffer cannot be told from the 256 TiB that
# w:268435455 (the widest width an int32 bit width allows) over 2**20 rows claims, but no
# machine holds that many bytes of values: refused before a value is read or made.

WIDE = b"w:268435455"
FIXED_READERS = {
    "column_to_ndarray": dfbuffer.column_to_ndarray,
    "from_dataframe": dfbuffer.from_dataframe,
    "pandas": lambda p: __import__("dfbuffer.pandas").pandas.from_dataframe(p),
}


class _StructOf(PairProducer):
    """A struct array ("+s") of one hand-built child column (the nested form)."""

    def __init__(self, child: Producer) -> None:
        self.child = child
        self._rs = SCHEMA_RELEASE(lambda p: setattr(p.contents, "release", None))
        self._ra = ARRAY_RELEASE(lambda p: setattr(p.contents, "release", None))
        self._sch = (ctypes.POINTER(ArrowSchema) * 1)(ctypes.pointer(child.schema))
        self._arr = (ctypes.POINTER(ArrowArray) * 1)(ctypes.pointer(child.array))
        self._bufs = (ctypes.c_void_p * 1)(None)
        self.schema = ArrowSchema(format=b"+s", name=b"", n_children=1, children=self._sch,
                                  release=ctypes.cast(self._rs, ctypes.c_void_p).value)
        self.array = ArrowArray(length=child.array.length, n_buffers=1, n_children=1,
                                buffers=ctypes.cast(self._bufs, ctypes.POINTER(ctypes.c_void_p)),
                                children=self._arr,
                                release=ctypes.cast(self._ra, ctypes.c_void_p).value)


@pytest.mark.parametrize("nested", [False, True], ids=["column", "struct child"])
@pytest.mark.parametrize("reader", list(FIXED_READERS))
@pytest.mark.parametrize("rows", [2**20, 100_000])
def test_fixed_size_values_beyond_memory_are_refused(reader, nested, rows):
    # each read the 16 bytes on into unmapped memory and crashed
    p = Producer(WIDE, rows, [None, np.zeros(16, np.uint8)])
    with pytest.raises(MemoryError, match="268435455 bytes"):
        FIXED_READERS[reader](_StructOf(p) if nested else p)


def test_fixed_size_values_that_fit_still_convert():
    p = Producer(b"w:3", 2, [None, np.frombuffer(b"abcdef", np.uint8)])
    assert dfbuffer.column_to_ndarray(p).tolist() == [b"abc", b"def"]
