"""The typed C view behind dfbuffer.to_interchange (src/_interchange/outward/ixview.c):
_IxField / _IxChunk struct sequences with buffers re-based once, and the C
helpers that slice, join and read chunks.  Checked against pyarrow."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer import DtypeKind, NativeFormat, to_interchange
from dfbuffer._interchange import (
    _IxChunk,
    _IxField,
    _ixview_concat,
    _ixview_import,
    _ixview_slice,
    _ixview_values,
)


def bits(buf, offset: int, length: int) -> list[bool]:
    """Bits [offset, offset + length) of a bitmap Buffer (test-side reference)."""
    raw = np.frombuffer(memoryview(buf), dtype=np.uint8) if buf.bufsize else np.zeros(0, np.uint8)
    return [bool((raw[(offset + i) // 8] >> ((offset + i) % 8)) & 1) for i in range(length)]


def values_of(chunk):
    """The chunk's values through the C converter, None for nulls."""
    v = _ixview_values(chunk)
    if isinstance(v, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(v)
        return [None if m else x for x, m in zip(v.data.tolist(), mask, strict=True)]
    return v.tolist()


BASE_INT = [None if k % 5 == 1 else k * 3 - 7 for k in range(40)]
BASE_BOOL = [None if k % 7 == 3 else k % 3 == 0 for k in range(40)]
BASE_STR = [None if k % 6 == 2 else "x" * (k % 5) + str(k) for k in range(40)]


def test_types_and_fields():
    t = pa.table({
        "i": pa.array([1, None, 3], pa.int32()),
        "s": pa.array(["a", None, "c"]),
        "ls": pa.array(["a", "b", "c"], pa.large_string()),
        "b": pa.array([True, False, None]),
        "d": pa.array([1, 2, 3], pa.date32()),
        "ts": pa.array([1, 2, 3], pa.timestamp("us", "UTC")),
        "c": pa.array(["x", "y", "x"]).dictionary_encode(),
        "bin": pa.array([b"a", b"b", b"c"]),
        "list": pa.array([[1], [], None]),
    })
    fields, chunks = _ixview_import(t)
    assert isinstance(fields, tuple) and all(type(f) is _IxField for f in fields)
    assert len(chunks) == 1 and all(type(c) is _IxChunk for c in chunks[0])
    by = {f.name: f for f in fields}
    assert [f.name for f in fields] == t.column_names
    assert by["i"].dtype == (DtypeKind.INT, 32, "i", "=") and by["i"].offsets_dtype is None
    assert by["s"].data_dtype == (DtypeKind.UINT, 8, "C", "=")
    assert by["s"].offsets_dtype == (DtypeKind.INT, 32, "i", "=")
    assert by["ls"].offsets_dtype == (DtypeKind.INT, 64, "l", "=")
    assert by["b"].dtype == (DtypeKind.BOOL, 1, "b", "=")
    assert by["d"].dtype == (DtypeKind.DATETIME, 32, "tdD", "=")
    assert by["d"].data_dtype == (DtypeKind.INT, 32, "i", "=")
    assert by["ts"].dtype == (DtypeKind.DATETIME, 64, "tsu:UTC", "=")
    assert by["ts"].data_dtype == (DtypeKind.INT, 64, "l", "=")
    c = by["c"]
    assert c.dtype == (DtypeKind.CATEGORICAL, 32, "i", "=")
    assert c.data_dtype == (DtypeKind.INT, 32, "i", "=")
    assert type(c.dictionary) is _IxField and c.dictionary.format == "u"
    assert c.dictionary.dtype == (DtypeKind.STRING, 8, "u", "=")
    assert by["bin"].dtype is None and by["bin"].data_dtype is None
    assert by["list"].dtype is None and by["list"].format == "+l"
    # binary is described (no interchange dtype: raised when used); a list
    # cannot be described: its chunk carries the error to raise
    col = dict(zip(t.column_names, chunks[0], strict=True))
    assert col["bin"].error is None and col["bin"].offsets is not None
    assert isinstance(col["list"].error, NotImplementedError)
    assert col["list"].data is None and col["list"].length == 3
    assert col["i"].error is None and col["i"].null_count == 1
    assert col["c"].dictionary is not None and values_of(col["c"].dictionary) == ["x", "y"]
    assert values_of(col["s"]) == ["a", None, "c"]
    assert values_of(col["b"]) == [True, False, None]


@pytest.mark.parametrize("kind", ["int", "bool", "str"])
@pytest.mark.parametrize("off", range(12))
@pytest.mark.parametrize("allow_copy", [True, False])
def test_sliced_at_every_bit_offset(kind, off, allow_copy):
    base = {"int": pa.array(BASE_INT, pa.int64()), "bool": pa.array(BASE_BOOL),
            "str": pa.array(BASE_STR)}[kind]
    n = 17
    arr = base.slice(off, n)
    fields, chunks = _ixview_import(arr, allow_copy)
    (c,) = chunks[0]
    assert c.length == n and c.null_count == arr.null_count
    expect = arr.to_pylist()
    assert values_of(c) == expect
    if allow_copy:
        assert c.offset == 0  # bitmaps copied to bit 0
    else:
        assert c.offset == off % 8
    if c.validity is not None:
        assert bits(c.validity, c.offset, n) == [v is not None for v in expect]
        validity_addr = base.buffers()[0].address
        if c.offset:  # moved by whole bytes, zero-copy
            assert c.validity.native == NativeFormat.ARROW
            assert c.validity.ptr == validity_addr + (off - c.offset) // 8
    if kind == "int":
        assert c.data.native == NativeFormat.ARROW  # never copied
        assert c.data.ptr == base.buffers()[1].address + 8 * (off - c.offset)
        got = np.frombuffer(memoryview(c.data), np.int64)[c.offset:c.offset + n]
        assert [g for g, e in zip(got.tolist(), expect, strict=True) if e is not None] == \
            [e for e in expect if e is not None]
    if kind == "bool":
        got_bits = bits(c.data, c.offset, n)
        assert [b for b, e in zip(got_bits, expect, strict=True) if e is not None] == \
            [e for e in expect if e is not None]
    if kind == "str":
        o = np.frombuffer(memoryview(c.offsets), np.int32)
        assert len(o) == c.offset + n + 1
        raw = bytes(memoryview(c.data))
        got = [raw[o[c.offset + i]:o[c.offset + i + 1]].decode() for i in range(n)]
        assert [g for g, e in zip(got, expect, strict=True) if e is not None] == \
            [e for e in expect if e is not None]


@pytest.mark.parametrize("start", range(9))
@pytest.mark.parametrize("allow_copy", [True, False])
def test_slice_of_chunk(start, allow_copy):
    base = pa.array(BASE_INT, pa.int64()).slice(3, 30)
    (c,), = _ixview_import(base, allow_copy)[1]
    s = _ixview_slice(c, start, 11, allow_copy)
    expect = base.slice(start, 11)
    assert s.null_count == expect.null_count
    assert values_of(s) == expect.to_pylist()
    assert s.offset == (0 if allow_copy else (3 + start) % 8)
    if s.null_count == 0:
        assert s.validity is None


def test_chunked_concat_and_unify():
    t = pa.Table.from_batches([
        pa.record_batch({"i": pa.array([1, None, 3]), "s": pa.array(["a", None, "ccc"]),
                         "b": pa.array([True, None, False]),
                         "c": pa.array(["x", "y", None]).dictionary_encode()}),
        pa.record_batch({"i": pa.array([4, 5]), "s": pa.array(["dd", "e"]),
                         "b": pa.array([False, True]),
                         "c": pa.array(["z", "x"]).dictionary_encode()}),
    ])
    fields, chunks = _ixview_import(t)
    assert len(chunks) == 2
    cols = list(zip(*chunks, strict=True))
    for name, col in zip(t.column_names[:3], cols[:3], strict=True):
        fmt = fields[t.column_names.index(name)].format
        joined = _ixview_concat(fmt, list(col))
        assert joined.offset == 0 and joined.length == 5
        assert values_of(joined) == t.column(name).to_pylist()
    # the dictionary column through to_interchange: unified in order of first use
    x = to_interchange(t).get_column_by_name("c")
    cat = x.describe_categorical["categories"]
    assert cat._col.tolist() == ["x", "y", "z"]
    codes = np.frombuffer(memoryview(x.get_buffers()["data"][0]), np.int32)
    assert codes.tolist() == [0, 1, 0, 2, 0]  # the null's slot holds 0
    assert x.null_count == 1
    # empty joins
    empty = _ixview_concat("U", [])
    assert empty.length == 0 and values_of(empty) == []
    assert np.frombuffer(memoryview(empty.offsets), np.int64).tolist() == [0]


def test_string_views():
    arr = pa.array(["short", None, "a string longer than twelve bytes", ""], pa.string_view())
    fields, chunks = _ixview_import(arr)
    (c,) = chunks[0]
    assert fields[0].format == "U" and c.format == "U" and c.offset == 0
    assert c.offsets.native == NativeFormat.NUMPY  # copied in C
    assert values_of(c) == arr.to_pylist()
    fields, chunks = _ixview_import(arr.slice(1), False)
    assert fields[0].format == "vu"
    assert fields[0].offsets_dtype == (DtypeKind.INT, 64, "l", "=")
    assert isinstance(chunks[0][0].error, RuntimeError)
    with pytest.raises(RuntimeError, match="allow_copy=False"):
        _ixview_values(chunks[0][0])


def test_empty_string_view_column():
    # no batches: an empty large-string chunk, with offsets typed as such
    t = pa.Table.from_batches([], schema=pa.schema([("v", pa.string_view())]))
    for allow_copy in (True, False):
        col = to_interchange(t, allow_copy=allow_copy).get_column(0)
        bufs = col.get_buffers()
        assert bufs["offsets"][1] == (DtypeKind.INT, 64, "l", "=")
        assert np.frombuffer(memoryview(bufs["offsets"][0]), np.int64).tolist() == [0]
        assert col.size() == 0


def test_dictionary_sliced():
    d = pa.array(["p", "q", "r", None, "p"] * 4).dictionary_encode().slice(5, 11)
    fields, chunks = _ixview_import(d)
    (c,) = chunks[0]
    assert fields[0].dictionary.format == "u"
    assert values_of(c.dictionary) == d.dictionary.to_pylist()
    assert values_of(c) == [None if i is None else i for i in d.indices.to_pylist()]
    assert c.null_count == d.null_count


def test_arrow_memory_lives_as_long_as_the_buffers(collect):
    before = pa.total_allocated_bytes()
    arr = pa.array(range(1_000_000), pa.int64()).slice(3)  # pyarrow's pool
    grown = pa.total_allocated_bytes() - before
    assert grown >= 8_000_000
    (c,), = _ixview_import(arr)[1]
    data = c.data
    ref = weakref.ref(data)
    del arr, c
    collect()
    assert ref() is data
    assert pa.total_allocated_bytes() - before >= grown  # the Buffer keeps it
    # a slice keeps it too, after the first Buffer is gone
    s = _ixview_slice(_IxChunk((999_997, 0, 0, None, None, data, None, None, "l")), 5, 10)
    del data
    collect()
    assert ref() is None
    assert pa.total_allocated_bytes() - before >= grown
    assert s.data.bufsize == 80
    del s
    collect()
    assert pa.total_allocated_bytes() - before < grown  # released once


def test_copied_bitmap_owns_its_memory(collect):
    arr = pa.array(BASE_INT, pa.int64()).slice(3)
    (c,), = _ixview_import(arr)[1]
    assert c.offset == 0 and c.validity.native == NativeFormat.NUMPY
    v = c.validity
    del arr, c
    collect()
    assert bits(v, 0, 5) == [v2 is not None for v2 in BASE_INT[3:8]]


def test_bad_input():
    with pytest.raises(TypeError, match="not an Arrow PyCapsule producer"):
        _ixview_import(42)
    with pytest.raises(TypeError, match="expected an _IxChunk"):
        _ixview_slice((1, 2), 0, 1)
    with pytest.raises(TypeError, match="expected an _IxChunk"):
        _ixview_values("x")
    (c,), = _ixview_import(pa.array([1, 2, 3]))[1]
    for start, n in [(-1, 1), (0, 4), (2, 2), (0, -1)]:
        with pytest.raises(ValueError, match="outside the chunk"):
            _ixview_slice(c, start, n)
    # forged chunks: wrong field types, buffers too small, bad formats
    buf = dfbuffer.Buffer.from_object(np.zeros(2, np.uint8))
    with pytest.raises(TypeError, match="validity must be a 1-D dfbuffer.Buffer"):
        _ixview_slice(_IxChunk((3, 0, 0, "x", None, None, None, None, "l")), 0, 1)
    with pytest.raises(TypeError, match="length must be an int"):
        _ixview_slice(_IxChunk(("3", 0, 0, None, None, None, None, None, "l")), 0, 1)
    with pytest.raises(ValueError, match="must be >= 0"):
        _ixview_slice(_IxChunk((3, -2, 0, None, None, None, None, None, "l")), 0, 1)
    with pytest.raises(ValueError, match="too small"):
        _ixview_slice(_IxChunk((100, 0, 0, buf, None, buf, None, None, "b")), 20, 50)
    with pytest.raises(ValueError, match="too small"):
        _ixview_concat("l", [_IxChunk((100, 0, 0, None, None, buf, None, None, "l"))])
    huge = 2**61
    with pytest.raises(ValueError, match="too large"):
        _ixview_slice(_IxChunk((huge, huge, 0, None, None, buf, None, None, "l")), 1, 2)
    with pytest.raises(ValueError, match="too long"):
        _ixview_concat("n", [_IxChunk((huge, 0, 0, None, None, None, None, None, "n"))] * 3)
    with pytest.raises(ValueError, match="no buffer layout"):
        _ixview_concat("+s", [])
    with pytest.raises(ValueError, match="has format 'i', not 'l'"):
        _ixview_concat("l", [_ixview_import(pa.array([1], pa.int32()))[1][0][0]])
    with pytest.raises(ValueError, match="too small"):
        _ixview_values(_IxChunk((100, 0, 0, None, None, buf, None, None, "l")))
    # a null count that lies is not trusted: the bitmap is counted
    (v,), = _ixview_import(pa.array([1, None, 3]))[1]
    liar = _IxChunk((3, 0, 0, v.validity, None, v.data, None, None, "l"))
    assert values_of(liar) == [1, None, 3]
    # dictionary maps
    (d,), = _ixview_import(pa.array(["a", "b", "a"]).dictionary_encode())[1]
    with pytest.raises(ValueError, match="1 maps for 2 chunks"):
        _ixview_concat("i", [d, d], maps=[np.arange(2)])
    with pytest.raises(ValueError, match="out of range"):
        _ixview_concat("i", [d], maps=[np.arange(1)])
    with pytest.raises(ValueError, match="need integer codes"):
        _ixview_concat("u", [], maps=[])
    (d8,), = _ixview_import(pa.array(["a", "b"]).dictionary_encode().cast(
        pa.dictionary(pa.int8(), pa.string())))[1]
    with pytest.raises(ValueError, match="does not fit format 'c'"):
        _ixview_concat("c", [d8], maps=[np.array([0, 300])])
    # the recorded error of an unsupported column is raised fresh each time
    (e,), = _ixview_import(pa.array([[1]]))[1]
    with pytest.raises(NotImplementedError) as one:
        _ixview_values(e)
    with pytest.raises(NotImplementedError) as two:
        _ixview_concat("l", [_IxChunk((1, 0, 0, None, None, None, None, e.error, "l"))])
    assert one.value is not two.value and one.value is not e.error
    gc.collect()


def test_dataframe_allow_copy_rebases_once():
    t = pa.table({"i": pa.array(BASE_INT, pa.int64()).slice(3)})
    x = to_interchange(t, allow_copy=False)
    col = x.get_column(0)
    assert col.offset == 3
    assert col.get_buffers()["validity"][0].native == NativeFormat.ARROW
    y = x.__dataframe__(allow_copy=True)
    assert y.get_column(0).offset == 0  # copied to bit 0 once, here
    assert y.get_column(0)._chunks[0] is y.get_column(0)._chunks[0]
    assert x.get_column(0).offset == 3
    for z in (x, y):
        got = dfbuffer.from_dataframe(z)["i"]
        vals = got.data.tolist()
        assert [None if m else v for v, m in zip(vals, got.mask, strict=True)] == BASE_INT[3:]


def test_join_reads_a_private_copy_of_its_lists():
    """An item whose conversion empties the caller's list (a map's __array__) must not make
    the join read past the list's end: it reads a copy taken first."""
    arr = pa.chunked_array([pa.array(["x", "y"]).dictionary_encode(),
                            pa.array(["y"]).dictionary_encode()])
    fields, chunks = _ixview_import(pa.table({"c": arr}))
    col = [c[0] for c in chunks]
    maps = []

    class Clearing:
        def __array__(self, dtype=None, copy=None):
            maps.clear()
            col.clear()
            return np.array([0, 1], dtype=np.int64)

    maps.extend([Clearing(), np.array([1], dtype=np.int64)])
    fmt = fields[0].format
    joined = _ixview_concat(fmt, list(col), maps=maps)
    assert joined.length == 3
    codes = np.frombuffer(memoryview(joined.data), np.dtype(fmt.lower()).newbyteorder("="))
    assert codes[:3].tolist() == [0, 1, 1]


@pytest.mark.parametrize("kw", ["allow_copy", "nan_as_null"])
@pytest.mark.parametrize("bad", ["no", 1, None, 0.0])
def test_dataframe_options_are_bools(kw, bad):
    x = to_interchange(pa.table({"i": [1, 2]}))
    with pytest.raises(TypeError, match=f"__dataframe__\\(\\) {kw} must be True or False"):
        x.__dataframe__(**{kw: bad})
    assert x.__dataframe__(**{kw: np.bool_(True)}).num_columns() == 1
