"""Strings and binary: offsets (32- and 64-bit, non-native, sliced, chunked) from
hand-written producers, pandas and pyarrow, against the peers' own values; UTF-8
decoding as Python decodes; binary as bytes; and string_view ("vu") columns decoded to
str objects and to StringDType straight from the 16-byte views.  Values equal pyarrow's
and polars' own; hostile views give a clean ValueError."""

from __future__ import annotations

import ctypes
import gc
import struct
import weakref

import numpy as np
import pyarrow as pa
import pytest
from kernel_checks import RawBuffer, check, check_nulls, churn, object_array, pyarrow_consumer
from producers import (
    INT,
    STRING,
    UINT,
    UINT8_DTYPE,
    Buffer,
    chunked,
    frame,
    interchange_dtype,
    long_large_strings,
    nonnative,
    strings,
    to_list,
)
from pyarrow.interchange import from_dataframe as pa_from_dataframe
from racing import as_list, race
from test_arrow_bad import Producer

import dfbuffer
from dfbuffer import to_interchange

pd = pytest.importorskip("pandas")

# pandas 3 emits pandas.errors.Pandas4Warning (a DeprecationWarning subclass)
# from DataFrame.__dataframe__ and from its interchange from_dataframe.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STRS = ["a", None, "", "héllo", "日本語", None, "xyz" * 20, "", "end"]
STR_VALID = np.array([s is not None for s in STRS])

# pyarrow 16 (the declared minimum) makes string_view arrays but cannot cast to or from them
needs_view_casts = pytest.mark.skipif(
    int(pa.__version__.split(".")[0]) < 17,
    reason=f"pyarrow {pa.__version__} cannot cast to or from string_view (>= 17)",
)

WORDS = ["", "a", "twelve bytes", "thirteen byte", "héllo wörld, out of line",
         "ünï", "日本語のテキスト", "x" * 200, "🙂 emoji 🙂", "twelve bytes"]


def values(n: int = 300, with_nulls: bool = True) -> list:
    out = []
    for i in range(n):
        out.append(None if with_nulls and i % 7 == 3 else WORDS[i % len(WORDS)] + str(i % 5))
    return out


@pytest.mark.parametrize("strings", ["object", "stringdtype"])
@pytest.mark.parametrize("with_nulls", [False, True])
def test_views_equal_pyarrow(strings, with_nulls):
    arr = pa.array(values(with_nulls=with_nulls), pa.string_view())
    res = dfbuffer.column_to_ndarray(arr, strings=strings, nulls="fill")
    assert to_list(res) == arr.to_pylist()
    if strings == "object" and not with_nulls:
        assert res.tolist() == arr.to_numpy(zero_copy_only=False).tolist()


@pytest.mark.parametrize("strings", ["object", "stringdtype"])
@pytest.mark.parametrize("start,stop", [(0, 1), (3, 40), (1, 299), (150, 300), (299, 300)])
def test_sliced_views(strings, start, stop):
    arr = pa.array(values(), pa.string_view()).slice(start, stop - start)
    res = dfbuffer.column_to_ndarray(arr, strings=strings, nulls="fill")
    assert to_list(res) == arr.to_pylist()


def test_masked_result_has_the_nulls():
    arr = pa.array(values(), pa.string_view())
    res = dfbuffer.column_to_ndarray(arr)
    assert isinstance(res, np.ma.MaskedArray)
    assert np.ma.getmaskarray(res).tolist() == [v is None for v in arr.to_pylist()]


@needs_view_casts
@pytest.mark.parametrize("strings", ["object", "stringdtype"])
def test_chunked_views_and_mixed_with_large_strings(strings):
    a = pa.array(values(), pa.string_view())
    ch = pa.chunked_array([a.slice(5, 100), a.slice(200), pa.array([], pa.string_view()), a])
    res = dfbuffer.column_to_ndarray(ch, strings=strings, nulls="fill")
    assert to_list(res) == ch.to_pylist()
    table = pa.table({"v": ch, "s": ch.cast(pa.large_string())})
    out = dfbuffer.from_dataframe(table, strings=strings, nulls="fill")
    assert to_list(out["v"]) == to_list(out["s"]) == ch.to_pylist()


@needs_view_casts
def test_dedup_like_the_offsets_decoder():
    short = pa.array(["ab", "cd", "ab", "long string here, 40 bytes or more....."] * 500)
    obj_large = dfbuffer.column_to_ndarray(short)
    obj_views = dfbuffer.column_to_ndarray(short.cast(pa.string_view()))
    assert obj_views.tolist() == obj_large.tolist()
    # equal short values share one object, as the offsets decoder does
    assert (obj_views[0] is obj_views[2]) == (obj_large[0] is obj_large[2])
    assert obj_views[0] is obj_views[4]


def test_polars_string_columns():
    pl = pytest.importorskip("polars")
    s = pl.Series("s", values())
    assert dfbuffer.column_to_ndarray(s, nulls="fill").tolist() == s.to_list()
    sd = dfbuffer.column_to_ndarray(s, strings="stringdtype")
    assert to_list(sd) == s.to_list()
    df = pl.DataFrame({"s": values(), "t": values(50, False) * 6})
    out = dfbuffer.from_dataframe(df, nulls="fill")
    assert out["s"].tolist() == df["s"].to_list()
    assert out["t"].tolist() == df["t"].to_list()


@needs_view_casts
def test_long_views_of_50_to_150_chars_equal_pyarrow():
    rng = np.random.default_rng(1)
    n = 20000
    large = long_large_strings(rng, n)
    views = large.cast(pa.string_view())
    peer = views.to_numpy(zero_copy_only=False)
    assert dfbuffer.column_to_ndarray(views).tolist() == peer.tolist()


def test_allow_copy_false_refuses_views():
    table = pa.table({"v": pa.array(["a", "b"], pa.string_view())})
    with pytest.raises(RuntimeError, match="allow_copy"):
        dfbuffer.from_dataframe(table, allow_copy=False)


# --------------------------------------------------------------------------
# hostile views


def view(n: int, prefix: bytes = b"", idx: int = 0, off: int = 0) -> bytes:
    if 0 <= n <= 12:
        return struct.pack("<i12s", n, prefix)
    return struct.pack("<i4sii", n, prefix[:4], idx, off)


DATA = b"0123456789abcdefghijklmnopqrstuvwxyz"


def producer(views: list[bytes], bufs: list, sizes: list[int], *, misalign: bool = False):
    raw = np.frombuffer(b"".join(views), np.uint8)
    if misalign:
        # one byte in: the views (and the sizes) start at an odd address
        raw = np.frombuffer(b"\0" + raw.tobytes(), np.uint8)[1:]
        assert raw.ctypes.data % 2 == 1
    sz = np.frombuffer(b"\0" + np.array(sizes, "<i8").tobytes(), np.uint8)[1:]
    return Producer(b"vu", len(views), [None, raw, *bufs, sz])


def data_buf():
    return np.frombuffer(DATA, np.uint8).copy()


@pytest.mark.parametrize("strings", ["object", "stringdtype"])
@pytest.mark.parametrize(
    "bad_view",
    [
        view(20, b"0123", idx=1),            # index out of range
        view(20, b"0123", idx=-1),           # negative index
        view(20, b"0123", off=30),           # offset + length past the buffer
        view(20, b"0123", off=-4),           # negative offset
        view(-5),                            # negative length
        view(-(2**31)),                      # most negative length
    ],
)
def test_hostile_views_raise_value_error(strings, bad_view):
    p = producer([view(3, b"abc"), bad_view], [data_buf()], [len(DATA)])
    with pytest.raises(ValueError, match="string view 1"):
        dfbuffer.column_to_ndarray(p, strings=strings)
    assert p.release_count == 1


@pytest.mark.parametrize("strings", ["object", "stringdtype"])
def test_misaligned_views_read_correctly(strings):
    p = producer([view(5, b"hello"), view(20, b"2345", off=2), view(0)],
                 [data_buf()], [len(DATA)], misalign=True)
    res = dfbuffer.column_to_ndarray(p, strings=strings)
    assert res.tolist() == ["hello", DATA[2:22].decode(), ""]


@pytest.mark.parametrize("strings", ["object", "stringdtype"])
def test_null_variadic_buffer_with_out_of_line_views(strings):
    # a NULL data buffer that claims bytes
    p = producer([view(20, b"0123")], [None], [len(DATA)])
    with pytest.raises(ValueError, match="NULL"):
        dfbuffer.column_to_ndarray(p, strings=strings)
    # a NULL data buffer of size 0: an out-of-line view cannot point into it
    p = producer([view(4, b"okay"), view(20, b"0123")], [None], [0])
    with pytest.raises(ValueError, match="string view 1"):
        dfbuffer.column_to_ndarray(p, strings=strings)
    # no variadic buffer at all
    p = producer([view(20, b"0123")], [], [])
    with pytest.raises(ValueError, match="string view 0"):
        dfbuffer.column_to_ndarray(p, strings=strings)


def test_negative_variadic_size_and_missing_views():
    p = producer([view(3, b"abc")], [data_buf()], [-1])
    with pytest.raises(ValueError, match="bad size"):
        dfbuffer.column_to_ndarray(p)
    p = Producer(b"vu", 2, [None, None, np.zeros(0, np.int64)])
    with pytest.raises(ValueError, match="without views"):
        dfbuffer.column_to_ndarray(p)


@pytest.mark.parametrize("strings", ["object", "stringdtype"])
@pytest.mark.parametrize("bad", [view(2, b"\xff\xfe"), view(14, b"0123", off=0)])
def test_invalid_utf8_in_a_view(strings, bad):
    buf = data_buf()
    buf[5] = 0xC3  # a lead byte without its continuation
    p = producer([bad], [buf], [len(DATA)])
    with pytest.raises(UnicodeDecodeError):
        dfbuffer.column_to_ndarray(p, strings=strings)


def test_to_interchange_still_gives_offsets():
    arr = pa.array(values(), pa.string_view())
    col = dfbuffer.to_interchange(pa.table({"v": arr})).get_column(0)
    assert col.dtype[2] == "U"
    bufs = col.get_buffers()
    assert bufs["offsets"] is not None


def test_interchange_column_claiming_views_is_not_read_as_views():
    import producers as P

    views = np.frombuffer(view(20, b"0123", off=0), np.uint8).copy()
    col = P.Column(size=1, dtype=(P.STRING, 8, "vu", "="),
                   data=(P.Buffer(views), P.UINT8_DTYPE), offsets=None, validity=None,
                   offset=0, null=(P.NON_NULLABLE, None), null_count=0)
    with pytest.raises(NotImplementedError, match="string view"):
        dfbuffer.column_to_ndarray(col)


# --------------------------------------------------------------------------
# the ASCII fast path and the read-ahead of the views


def large_from_bytes(items: list[bytes]) -> pa.Array:
    """A large_string array of raw (possibly invalid UTF-8) bytes, unvalidated."""
    offs = np.zeros(len(items) + 1, "i8")
    np.cumsum([len(b) for b in items], out=offs[1:])
    return pa.Array.from_buffers(pa.large_string(), len(items),
                                 [None, pa.py_buffer(offs), pa.py_buffer(b"".join(items))])


def views_producer(items: list[bytes]):
    """A string_view producer of raw bytes (inline when <= 12 bytes)."""
    buf = np.frombuffer(b"".join(items) + b"\0", np.uint8).copy()
    views, pos = [], 0
    for b in items:
        views.append(view(len(b), b if len(b) <= 12 else b[:4], off=pos))
        pos += len(b)
    return producer(views, [buf], [pos])


@pytest.mark.parametrize("kind", ["views", "large"])
def test_pure_ascii_of_every_length(kind):
    items = ["".join(chr(33 + (i + j) % 94) for j in range(n)) for i, n in
             enumerate(list(range(0, 101)) + [127, 128, 129, 255, 256, 1000])]
    arr = pa.array(items, pa.string_view() if kind == "views" else pa.large_string())
    res = dfbuffer.column_to_ndarray(arr)
    assert res.dtype == object
    assert res.tolist() == items
    assert all(type(s) is str and s.isascii() for s in res)
    # the bytes are copied: equal to pyarrow's own conversion
    assert res.tolist() == arr.to_numpy(zero_copy_only=False).tolist()


@pytest.mark.parametrize("kind", ["views", "large"])
@pytest.mark.parametrize("char", ["\x80", "é", "日", "🙂"])
def test_non_ascii_at_every_position_0_to_40(kind, char):
    items = ["x" * p + char + "y" * tail for p in [*range(41), 63, 64, 95, 96, 127, 140]
             for tail in (0, 1, 3, 11, 40, 90)]
    arr = pa.array(items, pa.string_view() if kind == "views" else pa.large_string())
    res = dfbuffer.column_to_ndarray(arr)
    assert res.tolist() == items
    assert not any(s.isascii() for s in res)
    assert [len(s) for s in res] == [len(s) for s in items]


@pytest.mark.parametrize("kind", ["views", "large"])
@pytest.mark.parametrize("bad", [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"])
def test_invalid_utf8_at_every_position_raises_unicode_decode_error(kind, bad):
    for p in range(41):
        for tail in (0, 5, 40):
            item = b"x" * p + bad + b"y" * tail
            items = [b"ok, plain ascii and long enough", item, b"z" * 30]
            src = views_producer(items) if kind == "views" else large_from_bytes(items)
            with pytest.raises(UnicodeDecodeError):
                dfbuffer.column_to_ndarray(src)
            # CPython's own decoder agrees that the bytes are invalid
            with pytest.raises(UnicodeDecodeError):
                item.decode("utf-8")


def test_views_producer_round_trip_inline_and_out_of_line():
    items = [b"", b"a", b"twelve bytes", b"thirteen byte", "héllo".encode(), b"x" * 50]
    res = dfbuffer.column_to_ndarray(views_producer(items))
    assert res.tolist() == [b.decode() for b in items]


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 33])
@pytest.mark.parametrize("pattern", ["nulls-first", "nulls-last", "alternating", "none"])
def test_empty_inline_and_null_strings_around_the_read_ahead(n, pattern):
    words = ["", "short", "twelve bytes", "thirteen byte", "a much longer string of ascii",
             "ünïcode, out of line", "日本"]
    items = [words[i % len(words)] for i in range(n)]
    if pattern == "nulls-first":
        items[0] = None
    elif pattern == "nulls-last":
        items[-1] = None
    elif pattern == "alternating":
        items = [None if i % 2 else v for i, v in enumerate(items)]
    arr = pa.array(items, pa.string_view())
    res = dfbuffer.column_to_ndarray(arr, nulls="fill")
    assert res.tolist() == items
    for start in range(min(n, 3)):
        assert dfbuffer.column_to_ndarray(arr.slice(start), nulls="fill").tolist() == items[start:]


@pytest.mark.parametrize("where", [0, 5, 8, 9, 20])
def test_hostile_view_anywhere_in_the_read_ahead(where):
    views = [view(3, b"abc") if i % 2 else view(20, b"0123", off=i % 10) for i in range(24)]
    views[where] = view(20, b"0123", idx=3)
    p = producer(views, [data_buf()], [len(DATA)])
    with pytest.raises(ValueError, match=f"string view {where} "):
        dfbuffer.column_to_ndarray(p)
    assert p.release_count == 1


class ArenaAllocator(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("alloc", ctypes.c_void_p), ("free", ctypes.c_void_p)]


def arena_allocator() -> tuple:
    a = ArenaAllocator()
    ctypes.pythonapi.PyObject_GetArenaAllocator(ctypes.byref(a))
    return (a.ctx, a.alloc, a.free)


@pytest.mark.parametrize("kind", ["views", "large"])
def test_large_conversions_restore_the_arena_allocator(kind):
    # 4e5 strings of 40 bytes: large enough for the prefaulting arena allocator
    n = 400_000
    before = arena_allocator()
    items = [b"%039d" % i for i in range(n)]
    good = pa.array([b.decode() for b in items],
                    pa.string_view() if kind == "views" else pa.large_string())
    res = dfbuffer.column_to_ndarray(good)
    assert arena_allocator() == before
    assert res[12345] == items[12345].decode() and len(res) == n
    # a conversion that fails half-way (invalid UTF-8) restores it too
    items[n // 2] = b"\xff" * 39
    bad = views_producer(items) if kind == "views" else large_from_bytes(items)
    with pytest.raises(UnicodeDecodeError):
        dfbuffer.column_to_ndarray(bad)
    assert arena_allocator() == before
    del res
    gc.collect()
    assert arena_allocator() == before


def test_buffer_to_ndarray_string_bytes_dtype_quirk():
    raw = np.frombuffer(b"hello", dtype="u1")
    buf = RawBuffer(raw)
    for dt in [(UINT, 8, "C", "="), (STRING, 8, "u", "=")]:
        res = dfbuffer.buffer_to_ndarray(buf, dt)
        assert res.tobytes() == b"hello"


class StringColumn:
    """A minimal interchange string column over UTF-8 bytes and int64 offsets."""

    def __init__(self, chunks: list[bytes]):
        offsets = np.zeros(len(chunks) + 1, dtype="i8")
        offsets[1:] = np.cumsum([len(c) for c in chunks])
        self._data = RawBuffer(np.frombuffer(b"".join(chunks) or b"\0", dtype="u1"))
        self._offsets = RawBuffer(offsets)
        self._n = len(chunks)
        self.offset = 0
        self.dtype = (STRING, 8, "u", "=")
        self.describe_null = (0, None)
        self.null_count = 0

    def size(self):
        return self._n

    def num_chunks(self):
        return 1

    def get_buffers(self):
        return {
            "data": (self._data, (UINT, 8, "C", "=")),
            "validity": None,
            "offsets": (self._offsets, (INT, 64, "l", "=")),
        }


def test_utf8_decoding_matches_python():
    rng = np.random.default_rng(7)
    alphabet = ["a", "é", "ß", "€", "中", "😀", "\x00", "\u07ff", "\u0800", "\uffff", "\U0010ffff"]
    words = ["".join(rng.choice(alphabet, size=k)) for k in rng.integers(0, 40, 400)]
    words += ["x" * 100 + "é", "€" * 30]  # beyond the short-string path
    res = dfbuffer.column_to_ndarray(StringColumn([w.encode() for w in words]))
    assert res.tolist() == words
    for got, want in zip(res, words, strict=True):
        assert got == want and hash(got) == hash(want)


@pytest.mark.parametrize(
    "bad",
    [
        b"\xff",
        b"\xc0\x80",  # overlong NUL
        b"\xc3",  # truncated
        b"\xe0\x80\x80",  # overlong
        b"\xed\xa0\x80",  # surrogate
        b"\xf4\x90\x80\x80",  # beyond U+10FFFF
        b"ab\x80",
    ],
)
def test_utf8_invalid_raises(bad):
    with pytest.raises(UnicodeDecodeError):
        dfbuffer.column_to_ndarray(StringColumn([b"ok", bad]))


def test_pandas_string_buffers_only_buffer_keeps_alive(collect):
    """pandas builds a string column's data/offsets/validity buffers inside
    get_buffers(): only the buffer objects keep them alive, not the frame."""
    vals = [f"row-{i}-{'é' * (i % 5)}" if i % 4 else None for i in range(2000)]
    df = pd.DataFrame({"s": pd.Series(vals, dtype=object)})
    col = df.__dataframe__().get_column(0)
    bufs = col.get_buffers()
    data_buf = bufs["data"][0]
    wr = weakref.ref(data_buf)
    raw = dfbuffer.buffer_to_ndarray(data_buf, UINT8_DTYPE)
    offs_buf, offs_dtype = bufs["offsets"]
    offs = dfbuffer.buffer_to_ndarray(offs_buf, offs_dtype)
    strs = dfbuffer.column_to_ndarray(col)
    expected_bytes = "".join(v for v in vals if v is not None).encode()
    del df, col, bufs, data_buf, offs_buf
    gc.collect()
    churn(len(expected_bytes), rounds=300)
    assert raw.tobytes() == expected_bytes
    assert offs[-1] == len(expected_bytes) and len(offs) == len(vals) + 1
    assert to_list(strs) == vals
    assert wr() is not None
    del raw
    gc.collect()
    assert wr() is None


@pytest.mark.parametrize("dtype", [object, "str", "string[python]"])
def test_pandas_strings_with_none(dtype):
    vals = ["alpha", None, "", "ünïcödé", "日本", None, "z"]
    s = pd.Series(vals, dtype=dtype)
    res = dfbuffer.from_dataframe(pd.DataFrame({"s": s}))["s"]
    check_nulls(res, [v is not None for v in vals])
    assert res.dtype == object
    assert to_list(res) == vals
    assert all(type(v) is str for v in res.compressed())
    filled = dfbuffer.from_dataframe(pd.DataFrame({"s": s}), nulls="fill")["s"]
    assert list(filled) == vals


def test_pyarrow_large_string_empty_and_all_null():
    for arr in (
        pa.array([], pa.large_string()),
        pa.array([None, None], pa.large_string()),
        pa.array(["", ""], pa.string()),
    ):
        res = dfbuffer.from_dataframe(pa.table({"s": arr}).__dataframe__())["s"]
        assert res.dtype == object
        assert to_list(res) == arr.to_pylist()


def test_known_wrong_strings():
    cases = [
        pd.DataFrame({"s": ["a", None, "c"]}).__dataframe__(),
        pd.DataFrame({"s": pd.Series([], dtype=str)}).__dataframe__(),
        pa.table({"s": pa.array(["a", None, "c"], pa.large_string())}).__dataframe__(),
        pa.table({"s": pa.array([], pa.string())}).__dataframe__(),
        frame(s=strings(["a", None, "c", "dd"], offset=3, mask="bytemask")),
    ]
    expected = [["a", None, "c"], [], ["a", None, "c"], [], ["a", None, "c", "dd"]]
    for x, exp in zip(cases, expected, strict=True):
        assert to_list(dfbuffer.from_dataframe(x)["s"]) == exp


def test_peer_bug_pyarrow_string_bytemask_with_offset():
    """pyarrow's consumer applies the column offset twice to the bitmap it
    computes from a bytemask (once reading the mask, once on the result)."""
    x = frame(s=strings(["a", None, "c", "dd"], offset=3, mask="bytemask"))
    assert pyarrow_consumer(x) == ["a", None, None, None]


def test_known_wrong_string_buffer_temporaries(collect):
    exp = [f"value-{i}" if i % 7 else None for i in range(500)]
    df = pd.DataFrame({"s": exp})
    col = df.__dataframe__().get_column(0)
    res = dfbuffer.column_to_ndarray(col)
    del df, col
    collect()
    junk = [("x" * 9) * (i % 50) for i in range(20000)]
    del junk
    assert to_list(res) == exp


@pytest.mark.parametrize("large", [False, True])
def test_nonnative_string_offsets(large):
    col = strings(["ab", None, "cde", ""], large=large, offset=1)
    offs, odt = col._offsets
    be = offs._x.astype(nonnative(offs._x.dtype))
    col._offsets = (Buffer(be), interchange_dtype(be.dtype))
    check(dfbuffer.column_to_ndarray(col), object_array(["ab", None, "cde", ""]), [1, 0, 1, 1])


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("offset", [0, 3, 11])
@pytest.mark.parametrize("mask,null_value", [("bitmask", 0), ("bytemask", 0), ("bytemask", 1)])
def test_strings(large, offset, mask, null_value):
    col = strings(STRS, large=large, offset=offset, mask=mask, null_value=null_value)
    res = dfbuffer.column_to_ndarray(col)
    check(res, object_array(STRS), STR_VALID, dtype=object)
    assert all(type(s) is str for s in res.compressed())
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert type(filled) is np.ndarray and filled.dtype == object
    assert list(filled) == STRS
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(col, nulls="raise")


@pytest.mark.parametrize("large", [False, True])
def test_strings_no_nulls(large):
    vals = ["x", "", "yy", "zzz"]
    col = strings(vals, large=large, offset=1)
    res = dfbuffer.column_to_ndarray(col)
    assert type(res) is np.ndarray and res.dtype == object
    assert list(res) == vals


def test_strings_validity_with_zero_nulls():
    vals = ["x", "", "yy"]
    col = strings(vals, mask="always")
    assert col.get_buffers()["validity"] is not None
    res = dfbuffer.column_to_ndarray(col)
    assert type(res) is np.ndarray and list(res) == vals


@pytest.mark.parametrize("large", [False, True])
def test_strings_empty_column(large):
    col = strings([], large=large)
    res = dfbuffer.column_to_ndarray(col)
    assert type(res) is np.ndarray and res.dtype == object and res.shape == (0,)


def test_strings_all_empty_strings():
    col = strings(["", "", ""])
    res = dfbuffer.column_to_ndarray(col)
    assert list(res) == ["", "", ""]


def test_strings_all_null():
    col = strings([None, None])
    res = dfbuffer.column_to_ndarray(col)
    assert isinstance(res, np.ma.MaskedArray) and res.mask.all()
    assert list(dfbuffer.column_to_ndarray(col, nulls="fill")) == [None, None]


def test_chunks_strings():
    col = chunked(strings(["a", None], offset=1), strings(["b", "c"], large=False))
    res = dfbuffer.column_to_ndarray(col)
    check(res, object_array(["a", None, "b", "c"]), [1, 0, 1, 1], dtype=object)


@pytest.mark.parametrize("large", [False, True])
def test_quirk_string_data_buffer_has_column_dtype(large):
    col = strings(STRS, large=large, offset=2, data_as_column_dtype=True)
    assert col.get_buffers()["data"][1][0] == STRING
    check(dfbuffer.column_to_ndarray(col), object_array(STRS), STR_VALID)


def test_quirk_string_offsets_wider_than_format():
    # pandas: column format 'u' (int32 offsets) but the offsets buffer is int64
    col = strings(["ab", None, "c"], large=True)
    col._dtype = (STRING, 8, "u", "=")
    check(dfbuffer.column_to_ndarray(col), object_array(["ab", None, "c"]), [1, 0, 1])


def test_binary_without_nulls_is_plain_bytes():
    arr = pa.array([b"a", b"bc", b""], pa.binary())
    res = dfbuffer.column_to_ndarray(arr)
    assert type(res) is np.ndarray and res.tolist() == [b"a", b"bc", b""]
    assert all(type(v) is bytes for v in res)


@pytest.mark.parametrize("large", [False, True])
def test_racing_binary_offsets(large):
    # the kernel's one pass over the offsets (32- and 64-bit loops), and the
    # re-check that names a bad span, against offsets rewritten meanwhile
    n = 20_000
    values = [None if i % 13 == 5 else bytes([i % 251]) * (i % 7) for i in range(n)]
    otype = np.int64 if large else np.int32
    lens = np.array([0 if v is None else len(v) for v in values], otype)
    good = np.zeros(n + 1, otype)
    good[1:] = np.cumsum(lens)
    offs = good.copy()
    data = np.frombuffer(b"".join(v or b"" for v in values), np.uint8).copy()
    valid = pa.array([v is not None for v in values]).buffers()[1]
    arr = pa.Array.from_buffers(
        pa.large_binary() if large else pa.binary(),
        n,
        [valid, pa.py_buffer(offs), pa.py_buffer(data)],
    )
    bad = good.copy()
    bad[1::2] = np.iinfo(otype).max

    def check(res) -> None:
        assert as_list(res) == values

    ok, refused = race(lambda: dfbuffer.column_to_ndarray(arr), check, [(offs, good, bad)])
    assert ok + refused == 8


def test_string_view_pyarrow_sliced_with_nulls():
    vals = [None if k % 4 == 0 else ("short" if k % 2 else f"a longer string #{k}")
            for k in range(40)]
    arr = pa.array(vals, pa.string_view())
    for t in (pa.table({"s": arr}), pa.table({"s": arr}).slice(5, 17)):
        got = pa_from_dataframe(to_interchange(t))
        assert got.column("s").to_pylist() == t.column("s").to_pylist()
