"""Hardening: no hostile or sloppy producer
can crash dfbuffer, and memory a producer hands over stays read-only unless
the producer says it is writable.

Grouped by kind of fault.  Each test crashed, failed, or (for the
undefined-behaviour group) aborted the ASan+UBSan build before its fix.
Real pyarrow / pandas objects where they can make the input; hand-written
minimal producers (tests/producers.py, the ctypes Arrow structs of
test_arrow_bad.py) where no peer can.
"""

from __future__ import annotations

import collections.abc
import ctypes
import gc
import mmap
import os
import pathlib
import re
import struct
import sys
import textwrap
import threading
import warnings
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from _arrow_ctypes import ARRAY_RELEASE, SCHEMA_RELEASE, ArrowArray, ArrowSchema, capsule
from _dlpack_ctypes import Tensor
from child_processes import ChildProcess, Command, scratch_dir
from producers import (
    BITMASK_DTYPE,
    INT32_DTYPE,
    INT64_DTYPE,
    STRING,
    UINT8_DTYPE,
    USE_BITMASK,
    USE_SENTINEL,
    Buffer,
    Column,
    DataFrame,
    Script,
    calls,
    mutate,
    nonnative,
    pack_bits,
    primitive,
    strings,
)
from test_arrow_bad import Producer

import dfbuffer
from dfbuffer.testing import check_column

ROOT = pathlib.Path(__file__).resolve().parents[2]
STR_DTYPE = (STRING, 8, "u", "=")
LSTR_DTYPE = (STRING, 8, "U", "=")


def odd(nbytes: int) -> np.ndarray:
    """`nbytes` zero bytes at an odd address (a view at offset 1)."""
    store = np.zeros(nbytes + 8, dtype=np.uint8)
    view = store[1 : 1 + nbytes]
    assert view.ctypes.data % 2 == 1
    return view


def odd_copy(a: np.ndarray) -> np.ndarray:
    """The bytes of `a` at an odd address (uint8 view; the caller re-views)."""
    raw = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    v = odd(raw.size)
    v[:] = raw
    return v


# ---------------------------------------------------------------------------
# Use-after-free: borrowed references across calls into producer code
# ---------------------------------------------------------------------------


class FreshPairs(collections.abc.Mapping):
    """get_buffers() result that is a Mapping, not a dict: every
    __getitem__ builds a new (buffer, dtype) pair around a new Buffer
    object, so the pair's only reference is the consumer's."""

    def __init__(self, arrays: dict):
        self.arrays = arrays

    def __getitem__(self, key):
        entry = self.arrays[key]
        if entry is None:
            return None
        arr, dt = entry
        return (Buffer(arr), tuple(list(dt)))

    def __iter__(self):
        return iter(self.arrays)

    def __len__(self):
        return len(self.arrays)


class MappingColumn(Column):
    def __init__(self, arrays: dict, **kw):
        super().__init__(data=None, **kw)
        self._arrays = arrays

    def get_buffers(self):
        return FreshPairs(self._arrays)


def test_uaf_mapping_builds_fresh_pairs():
    vals = np.arange(100, dtype=np.int64)
    valid = np.ones(100, dtype=bool)
    valid[::7] = False
    col = MappingColumn(
        {"data": (vals, INT64_DTYPE), "validity": (pack_bits(valid), BITMASK_DTYPE),
         "offsets": None},
        size=100, dtype=INT64_DTYPE, null=(USE_BITMASK, 0), null_count=int((~valid).sum()),
    )
    for _ in range(20):
        res = dfbuffer.column_to_ndarray(col)
        gc.collect()
        np.testing.assert_array_equal(res.data[valid], vals[valid])
        np.testing.assert_array_equal(res.mask, ~valid)


def clearing_buffer(x, target: dict) -> Buffer:
    """A data buffer whose ptr property empties the dict get_buffers()
    returned (freeing the offsets and validity pairs the consumer read from
    it)."""
    buf = Buffer(x)

    def ptr():
        target.clear()
        gc.collect()
        return buf._ptr

    return mutate(buf, ptr=calls(ptr))


class ClearingColumn(Column):
    def __init__(self, values, **kw):
        enc = [s.encode() for s in values]
        offs = np.zeros(len(enc) + 1, np.int32)
        offs[1:] = np.cumsum([len(b) for b in enc])
        self._raw = np.frombuffer(b"".join(enc), np.uint8).copy()
        self._offs = offs
        valid = np.ones(len(values), bool)
        self._bits = pack_bits(valid)
        super().__init__(size=len(values), dtype=STR_DTYPE, data=None,
                         null=(USE_BITMASK, 0), null_count=0, **kw)

    def get_buffers(self):
        d = {}
        data = clearing_buffer(self._raw, d)
        # the pairs and buffers below are referenced only by `d`
        d["data"] = (data, UINT8_DTYPE)
        d["validity"] = (Buffer(self._bits.copy()), BITMASK_DTYPE)
        d["offsets"] = (Buffer(self._offs.copy()), INT32_DTYPE)
        return d


def test_uaf_ptr_property_clears_buffers_dict():
    values = [f"value-{i}" for i in range(50)]
    for _ in range(10):
        res = dfbuffer.column_to_ndarray(ClearingColumn(values))
        assert res.tolist() == values


class ShrinkingFrame(DataFrame):
    """column_names() returns the producer's own list; get_column() empties
    it (a consumer indexing that list after the call reads freed items)."""

    def column_names(self):
        self._names = [f"c{i}-{'x' * 30}" for i in range(len(self._cols))]
        return self._names

    def get_column(self, i):
        col = self._cols[i][1]
        self._names.clear()
        gc.collect()
        return col


def test_uaf_column_names_list_shrinks():
    cols = {f"c{i}-{'x' * 30}": primitive(np.arange(5) + i) for i in range(8)}
    res = dfbuffer.from_dataframe(ShrinkingFrame(cols))
    assert list(res) == list(cols)
    for i, v in enumerate(res.values()):
        np.testing.assert_array_equal(v, np.arange(5) + i)


class EvilKey:
    """A dict key whose hash equals that of `name`, so that looking up
    `name` calls our __eq__ (once armed), which deletes `victims` from the
    dict."""

    def __init__(self, d: dict, name: str, victims: tuple):
        self.d, self.name, self.victims = d, name, victims
        self.armed = False

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        if self.armed:
            self.armed = False
            for v in self.victims:
                self.d.pop(v, None)
            gc.collect()
        return False


class IfaceProducer:
    def __init__(self, arr, collide: str, victims: tuple):
        self.arr = arr
        self.collide, self.victims = collide, victims

    @property
    def __array_interface__(self):
        # 64 dimensions: the shape tuple is big enough to live outside
        # pymalloc, so ASan sees a use after free.  The colliding key sits
        # before the key it collides with, so that key's look-up meets it.
        d = {"version": 3, "shape": tuple([1] * 63 + [len(self.arr)])}
        evil = EvilKey(d, self.collide, self.victims)
        d[evil] = None
        d["typestr"] = "".join(["<", "i", "8"])
        d["data"] = tuple([self.arr.ctypes.data, False])
        evil.armed = True
        return d


@pytest.mark.parametrize(
    "collide, victims",
    [
        ("typestr", ("shape",)),
        ("descr", ("typestr", "shape")),
        ("strides", ("typestr", "data")),
        ("data", ("typestr",)),
    ],
)
def test_uaf_array_interface_key_eq_pops(collide, victims):
    arr = np.arange(6, dtype="<i8")
    for _ in range(10):
        try:
            b = dfbuffer.Buffer.from_object(IfaceProducer(arr, collide, victims))
        except (ValueError, TypeError):
            continue  # a clean refusal (e.g. 'data' gone) is fine
        np.testing.assert_array_equal(np.asarray(b).reshape(-1), arr)


# ---------------------------------------------------------------------------
# Out-of-bounds reads
# ---------------------------------------------------------------------------


def test_string_offsets_changed_by_another_thread():
    """One thread flips the offsets between a valid and an out-of-range
    state with np.copyto (which drops the GIL) while another converts:
    every result is right or a clean ValueError, never a crash."""
    n = 200_000
    values = [f"s{i % 1000:04d}" for i in range(n)]
    col = strings(values)
    offs_buf = col.get_buffers()["offsets"][0]
    offs = offs_buf._x
    good = offs.copy()
    bad = good.copy()
    bad[1:] = np.int32(2**31 - 1)  # monotonic, far beyond the data
    stop = threading.Event()

    def flip():
        while not stop.is_set():
            np.copyto(offs, bad)
            np.copyto(offs, good)

    t = threading.Thread(target=flip)
    t.start()
    ok = errors = 0
    try:
        for _ in range(40):
            try:
                res = dfbuffer.column_to_ndarray(col)
            except ValueError:
                errors += 1
                continue
            assert res.tolist() == values
            ok += 1
    finally:
        stop.set()
        t.join()
    assert ok + errors == 40


def test_string_offsets_out_of_range_at_use():
    """The decoder itself refuses offsets beyond the data (the check is
    where the bytes are read, not only in validation)."""
    col = strings(["abc", "de"], data_bufsize=3)
    with pytest.raises(ValueError, match="too small|beyond the data|outside"):
        dfbuffer.column_to_ndarray(col)


@pytest.mark.parametrize(
    "ptr, bufsize, exc",
    [
        (-(2**62), 8, ValueError),
        (-1, 0, ValueError),
        (True, 8, TypeError),
        (None, True, TypeError),
        (None, -8, ValueError),
        (0, 8, ValueError),
        (2**64 - 4, 8, OverflowError),
    ],
)
def test_converters_read_buffers_like_from_object(ptr, bufsize, exc):
    """One reader of interchange buffers: the converters refuse exactly what
    Buffer.from_object refuses (a negative or bool ptr, a bool bufsize...)."""
    arr = np.arange(1, dtype=np.int64)
    buf = Buffer(arr)
    if ptr is not None:
        buf._ptr = ptr
    buf._bufsize = bufsize
    col = Column(size=1, dtype=INT64_DTYPE, data=(buf, INT64_DTYPE))
    with pytest.raises(exc):
        dfbuffer.Buffer.from_object(buf)
    with pytest.raises(exc):
        dfbuffer.column_to_ndarray(col)
    with pytest.raises(exc):
        dfbuffer.buffer_to_ndarray(buf, "i8")


def test_arrow_length_overflow_checked_before_bitmap():
    """int64 array of length 2**63-1 over an 8-byte bitmap: the size
    overflow is found before the bitmap is scanned."""
    p = Producer(b"l", 2**63 - 1, [np.zeros(8, np.uint8), np.zeros(1, np.int64)],
                 null_count=-1)
    with pytest.raises(ValueError, match="overflow"):
        dfbuffer.column_to_ndarray(p)
    assert p.release_count == 1


def test_arrow_struct_bitmap_checked_after_children():
    """A struct of length 2**63-1 with an 8-byte bitmap and an int64 child
    of the same length: refused before the struct's bitmap is read."""
    keep = []
    rel_a = ARRAY_RELEASE(lambda p: setattr(p.contents, "release", None))
    rel_s = SCHEMA_RELEASE(lambda p: setattr(p.contents, "release", None))
    keep += [rel_a, rel_s]
    big = 2**63 - 1
    child_s = ArrowSchema(format=b"l", name=b"a", flags=2)
    child_bufs = (ctypes.c_void_p * 2)(None, np.zeros(1, np.int64).ctypes.data)
    child_data = np.zeros(1, np.int64)
    child_bufs[1] = child_data.ctypes.data
    child_a = ArrowArray(length=big, null_count=0, n_buffers=2,
                         buffers=ctypes.cast(child_bufs, ctypes.POINTER(ctypes.c_void_p)))
    bitmap = np.zeros(8, np.uint8)
    top_bufs = (ctypes.c_void_p * 1)(bitmap.ctypes.data)
    schildren = (ctypes.POINTER(ArrowSchema) * 1)(ctypes.pointer(child_s))
    achildren = (ctypes.POINTER(ArrowArray) * 1)(ctypes.pointer(child_a))
    pp_schema = ctypes.POINTER(ctypes.POINTER(ArrowSchema))
    top_s = ArrowSchema(format=b"+s", name=b"", flags=0, n_children=1,
                        children=ctypes.cast(schildren, pp_schema),
                        release=ctypes.cast(rel_s, ctypes.c_void_p).value)
    top_a = ArrowArray(length=big, null_count=-1, n_buffers=1, n_children=1,
                       buffers=ctypes.cast(top_bufs, ctypes.POINTER(ctypes.c_void_p)),
                       children=ctypes.cast(achildren, ctypes.POINTER(ctypes.POINTER(ArrowArray))),
                       release=ctypes.cast(rel_a, ctypes.c_void_p).value)
    keep += [child_s, child_bufs, child_data, child_a, bitmap, top_bufs, schildren, achildren]

    class Table:
        def __arrow_c_array__(self, requested_schema=None):
            return capsule(top_s, b"arrow_schema"), capsule(top_a, b"arrow_array")

    with pytest.raises(ValueError, match="overflow"):
        dfbuffer.from_dataframe(Table())


def test_testing_kit_reads_bufsize_once():
    page = mmap.mmap(-1, mmap.PAGESIZE)
    mem = np.frombuffer(page, dtype=np.uint8)[-8:]  # the last 8 bytes of a page
    n = (16 << 20) // 8
    # bufsize is honest (8 bytes) for its first five reads, then claims 16 MiB: a
    # checker reading bufsize again would read far past the memory
    bufsize = Script(8, 16 << 20, changes=True, first_reads=5)
    col = Column(size=n, dtype=INT64_DTYPE, data=(Buffer(mem, bufsize=bufsize), INT64_DTYPE),
                 null=(USE_SENTINEL, -1), null_count=0)
    report = check_column(col)
    assert "P-20" in report.failed_ids
    assert "P-26" not in report.passed  # the data buffer was never read
    assert bufsize.reads <= 2
    del mem, report
    gc.collect()


# ---------------------------------------------------------------------------
# Undefined behaviour (misaligned loads, memcmp(NULL, NULL, 0))
# ---------------------------------------------------------------------------


def test_odd_address_int64_sentinel():
    vals = np.array([5, -1, 7, -1, 9] * 20, dtype=np.int64)
    raw = odd_copy(vals)
    col = Column(size=len(vals), dtype=INT64_DTYPE, data=(Buffer(raw), INT64_DTYPE),
                 null=(USE_SENTINEL, -1), null_count=40)
    assert Buffer(raw).ptr % 2 == 1
    res = dfbuffer.column_to_ndarray(col)
    np.testing.assert_array_equal(res.mask, vals == -1)
    np.testing.assert_array_equal(res.data[vals != -1], vals[vals != -1])


@pytest.mark.parametrize("large", [False, True])
@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("n", [10, 300])
def test_odd_address_string_offsets(large, swapped, n):
    values = [f"v{i % 7}" for i in range(n)]
    enc = [s.encode() for s in values]
    ot = np.int64 if large else np.int32
    offs = np.zeros(n + 1, ot)
    offs[1:] = np.cumsum([len(b) for b in enc])
    odt = INT64_DTYPE if large else INT32_DTYPE
    if swapped:
        offs = offs.astype(nonnative(ot))
        odt = (odt[0], odt[1], odt[2], ">" if sys.byteorder == "little" else "<")
    data = odd_copy(np.frombuffer(b"".join(enc), np.uint8))
    col = Column(size=n, dtype=LSTR_DTYPE if large else STR_DTYPE,
                 data=(Buffer(data), UINT8_DTYPE), offsets=(Buffer(odd_copy(offs)), odt))
    assert dfbuffer.column_to_ndarray(col).tolist() == values


@pytest.mark.parametrize("typ", [pa.string(), pa.large_string()])
def test_odd_address_arrow_offsets(typ):
    values = [f"w{i}" for i in range(100)]
    offs = np.zeros(101, np.int32 if typ == pa.string() else np.int64)
    offs[1:] = np.cumsum([len(s) for s in values])
    ob = odd_copy(offs)
    db = odd_copy(np.frombuffer("".join(values).encode(), np.uint8))
    arr = pa.Array.from_buffers(typ, 100, [None, pa.py_buffer(ob), pa.py_buffer(db)])
    assert arr.buffers()[1].address % 2 == 1
    assert dfbuffer.column_to_ndarray(arr).tolist() == values


def test_odd_address_string_view_sizes():
    long = b"a string longer than twelve bytes"
    data = np.frombuffer(long, np.uint8).copy()
    views = np.zeros(32, np.uint8)
    struct.pack_into("<i4s", views, 0, 2, b"hi")
    struct.pack_into("<i4sii", views, 16, len(long), long[:4], 0, 0)
    sizes = odd_copy(np.array([len(long)], np.int64))
    p = Producer(b"vu", 2, [None, views, data, sizes])
    assert dfbuffer.column_to_ndarray(p).tolist() == ["hi", long.decode()]


def test_odd_address_dlpack_shape_and_strides():
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = Tensor(arr)
    raw = (ctypes.c_char * 40)()
    struct.pack_into("=qq", raw, 1, 2, 3)
    struct.pack_into("=qq", raw, 17, 3, 1)
    t.m.dl_tensor.shape = ctypes.cast(ctypes.addressof(raw) + 1, ctypes.POINTER(ctypes.c_int64))
    t.m.dl_tensor.strides = ctypes.cast(ctypes.addressof(raw) + 17,
                                        ctypes.POINTER(ctypes.c_int64))
    t.raw = raw
    b = dfbuffer.Buffer.from_object(t.capsule())
    np.testing.assert_array_equal(np.asarray(b), arr)
    del b
    gc.collect()
    assert t.deleted == 1


def test_many_empty_strings_over_null_data():
    """64+ empty strings (the de-duplication table is on) over a legal
    ptr=0, bufsize=0 data buffer: no memcmp / pointer arithmetic on NULL."""
    for n in (64, 500):
        offs = np.zeros(n + 1, np.int32)
        col = Column(size=n, dtype=STR_DTYPE,
                     data=(Buffer(np.zeros(0, np.uint8), ptr=0, bufsize=0), UINT8_DTYPE),
                     offsets=(Buffer(offs), INT32_DTYPE))
        assert dfbuffer.column_to_ndarray(col).tolist() == [""] * n


# ---------------------------------------------------------------------------
# Read-only means read-only
# ---------------------------------------------------------------------------


def shares(a, b) -> bool:
    return np.shares_memory(np.asarray(a), np.asarray(b))


def assert_not_writable_view(res, memory):
    """`res` either does not share `memory`, or cannot write to it."""
    data = res.data if isinstance(res, np.ma.MaskedArray) else res
    if shares(data, memory):
        assert not data.flags.writeable
        with pytest.raises(ValueError):
            data[0] = data[0]


def test_readonly_pyarrow_interchange_column():
    t = pa.table({"a": np.arange(10, dtype=np.int64), "f": np.linspace(0, 1, 10)})
    mem = np.frombuffer(t.column("a").chunk(0).buffers()[1], np.int64)
    col = t.__dataframe__().get_column(0)
    res = dfbuffer.column_to_ndarray(col)
    assert shares(res, mem)
    assert not res.flags.writeable
    with pytest.raises(ValueError):
        res[0] = 99
    assert t.column("a")[0].as_py() == 0
    buf, dt = col.get_buffers()["data"]
    view = dfbuffer.buffer_to_ndarray(buf, dt)
    assert shares(view, mem) and not view.flags.writeable
    view2 = dfbuffer.buffer_to_ndarray(buf, "u1")
    assert not view2.flags.writeable


def test_readonly_pandas_interchange_frame():
    df = pd.DataFrame({"i": np.arange(5, dtype=np.int64), "f": np.arange(5.0),
                       "b": np.array([True, False] * 2 + [True])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        xdf = df.__dataframe__()
        res = dfbuffer.from_dataframe(xdf)
    for name, arr in res.items():
        assert_not_writable_view(arr, df[name].to_numpy())
        assert not arr.flags.writeable, name
    assert df["i"].tolist() == [0, 1, 2, 3, 4]


def test_readonly_hand_written_producer_and_masks():
    vals = np.arange(20, dtype=np.int64)
    col = primitive(vals)
    res = dfbuffer.column_to_ndarray(col)
    assert shares(res, col.data_buffer._x) and not res.flags.writeable
    valid = np.ones(20, bool)
    valid[3] = False
    masked = Column(size=20, dtype=INT64_DTYPE, data=(Buffer(vals), INT64_DTYPE),
                    validity=(Buffer(pack_bits(valid)), BITMASK_DTYPE),
                    null=(USE_BITMASK, 0), null_count=1)
    m = dfbuffer.column_to_ndarray(masked)
    assert isinstance(m, np.ma.MaskedArray)
    assert_not_writable_view(m, vals)
    assert shares(m.data, vals)
    with pytest.raises(ValueError):
        m[0] = 5
    assert vals[0] == 0


def test_readonly_chunks_copy_is_independent():
    from producers import chunked

    a, b = np.arange(3, dtype=np.int64), np.arange(3, 6, dtype=np.int64)
    res = dfbuffer.column_to_ndarray(chunked(primitive(a), primitive(b)))
    np.testing.assert_array_equal(res, np.arange(6))
    assert_not_writable_view(res, a)
    assert_not_writable_view(res, b)


def test_writable_only_when_the_producer_says_so():
    src = np.arange(4, dtype=np.int64)
    rw = dfbuffer.Buffer(src.ctypes.data, src.nbytes, owner=src, dtype="i8")
    ro = dfbuffer.Buffer(src.ctypes.data, src.nbytes, owner=src, dtype="i8", readonly=True)
    assert dfbuffer.buffer_to_ndarray(rw, "i8").flags.writeable
    assert not dfbuffer.buffer_to_ndarray(ro, "i8").flags.writeable
    col_rw = Column(size=4, dtype=INT64_DTYPE, data=(rw, INT64_DTYPE))
    col_ro = Column(size=4, dtype=INT64_DTYPE, data=(ro, INT64_DTYPE))
    assert dfbuffer.column_to_ndarray(col_rw).flags.writeable
    assert not dfbuffer.column_to_ndarray(col_ro).flags.writeable
    # an interchange buffer that is not a dfbuffer.Buffer never says so
    assert dfbuffer.Buffer.from_object(Buffer(src)).readonly
    assert not dfbuffer.buffer_to_ndarray(Buffer(src), "i8").flags.writeable


def test_readonly_arrow_paths():
    arr = pa.array(np.arange(8, dtype=np.int64))
    mem = np.frombuffer(arr.buffers()[1], np.int64)
    res = dfbuffer.column_to_ndarray(arr)
    assert shares(res, mem) and not res.flags.writeable
    tab = dfbuffer.from_dataframe(pa.table({"x": arr}))
    assert shares(tab["x"], mem) and not tab["x"].flags.writeable
    b = dfbuffer.Buffer.from_object(arr)
    # Buffer.from_object reads a pyarrow Array through DLPack: pyarrow >= 26 flags its
    # versioned capsule read-only; older pyarrow exports only the legacy capsule, which
    # cannot say so (test_from_object.py::test_dlpack_pyarrow_array, docs/protocol-facts.md)
    if int(pa.__version__.split(".")[0]) >= 26:
        assert b.readonly and not np.asarray(b).flags.writeable
    withnull = pa.array([1, None, 3], pa.int64())
    m = dfbuffer.column_to_ndarray(withnull)
    assert isinstance(m, np.ma.MaskedArray) and not m.data.flags.writeable
    xcol = dfbuffer.to_interchange(pa.table({"x": arr})).get_column(0)
    xb = xcol.get_buffers()["data"][0]
    assert xb.readonly
    assert not dfbuffer.column_to_ndarray(xcol).flags.writeable


# ---------------------------------------------------------------------------
# Interpreters and the C API surface
# ---------------------------------------------------------------------------


def _has_run_in_subinterp() -> bool:
    try:
        import _testcapi
    except ImportError:
        return False
    return hasattr(_testcapi, "run_in_subinterp")


def _subinterpreter_out() -> pathlib.Path:
    """The file the child process of test_refuses_subinterpreter writes its message to."""
    return scratch_dir() / "subinterpreter.txt"


def _subinterpreter_command() -> Command:
    """The child process of test_refuses_subinterpreter (tests/child_processes.py): a
    subinterpreter that loaded NumPy-using extensions can leave state behind in the
    process that ran it."""
    so = pathlib.Path(dfbuffer._interchange.__file__)
    out = _subinterpreter_out()
    code = textwrap.dedent(f"""
        import importlib.machinery, importlib.util
        loader = importlib.machinery.ExtensionFileLoader("dfbuffer._interchange", {str(so)!r})
        spec = importlib.util.spec_from_file_location(
            "dfbuffer._interchange", {str(so)!r}, loader=loader)
        try:
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            msg = "loaded"
        except ImportError as e:
            msg = "ImportError: " + str(e)
        except BaseException as e:
            msg = type(e).__name__ + ": " + str(e)
        open({str(out)!r}, "w").write(msg)
    """)
    return Command([sys.executable, "-c",
                    f"import _testcapi; _testcapi.run_in_subinterp({code!r})"], timeout=120)


_SUBINTERPRETER = ChildProcess(_subinterpreter_command) if _has_run_in_subinterp() else None


@pytest.mark.child_process(_SUBINTERPRETER)
def test_refuses_subinterpreter():
    if _SUBINTERPRETER is None:
        pytest.skip("no _testcapi.run_in_subinterp")
    r = _SUBINTERPRETER.result()
    assert r.returncode == 0, r.stderr
    msg = _subinterpreter_out().read_text()
    assert msg.startswith("ImportError"), msg
    assert "main interpreter" in msg or "subinterpreter" in msg


class RaisingArrowAttr:
    @property
    def __arrow_c_array__(self):
        raise RuntimeError("producer bug")


def test_arrow_probe_reports_producer_errors():
    with pytest.raises(RuntimeError, match="producer bug"):
        dfbuffer.from_dataframe(RaisingArrowAttr())
    with pytest.raises(RuntimeError, match="producer bug"):
        dfbuffer.column_to_ndarray(RaisingArrowAttr())


@pytest.mark.parametrize("method, name", [("__arrow_c_array__", b"arrow_array"),
                                          ("__arrow_c_device_array__", b"arrow_device_array")])
def test_arrow_export_release_without_gil_on_another_thread(method, name):
    """The exported array's release callback may run on any thread without
    the GIL (ctypes calls drop it): it takes the GIL to drop the Buffer.  A
    device array starts with its ArrowArray, released the same way."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    src = np.arange(4, dtype=np.int64)
    buf = dfbuffer.Buffer.from_object(src)
    ref = weakref.ref(buf)
    _s, acap = getattr(buf, method)()
    ptr = get(acap, name)
    a = ArrowArray.from_address(ptr)
    release = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(a.release)
    del buf
    gc.collect()
    assert ref() is not None  # the export holds it
    t = threading.Thread(target=release, args=(ptr,))
    t.start()
    t.join()
    assert a.release is None
    del acap, _s
    gc.collect()
    assert ref() is None


_CHILD_ENV = {**os.environ, "PYTHONPATH": str(pathlib.Path(dfbuffer.__file__).parents[1])}

# The two child processes of the tests below (tests/child_processes.py).
_EXPORTS_AT_EXIT = ChildProcess.python(textwrap.dedent("""
    import threading, numpy as np, pyarrow as pa, dfbuffer
    b = dfbuffer.Buffer.from_object(np.arange(5))
    keep_arrow = pa.array(b)
    keep_dlpack = np.from_dlpack(b)
    keep_device = b.__arrow_c_device_array__()
    # a daemon thread still holding exports while the interpreter exits
    ev = threading.Event()
    def hold(x=pa.array(dfbuffer.Buffer.from_object(np.arange(3)))):
        ev.set()
        threading.Event().wait()
    threading.Thread(target=hold, daemon=True).start()
    ev.wait()
    print("ok")
"""), env=_CHILD_ENV)

# The first MaskedArray result and the first datetime column, from many threads at once
# in a fresh process.
_FIRST_USE = ChildProcess.python(textwrap.dedent("""
    import threading, numpy as np, pyarrow as pa, dfbuffer
    arrs = [pa.array([1, None, 3]), pa.array(np.arange(3).astype("M8[us]"))]
    barrier = threading.Barrier(8)
    out = []
    def work():
        barrier.wait()
        out.append([dfbuffer.column_to_ndarray(a) for a in arrs])
    ts = [threading.Thread(target=work) for _ in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert len(out) == 8
    assert all(isinstance(m, np.ma.MaskedArray) for m, _ in out)
    assert all(m.mask.tolist() == [False, True, False] for m, _ in out)
    assert all(d.dtype == np.dtype("M8[us]") for _, d in out)
    print("ok")
"""), env=_CHILD_ENV)


@pytest.mark.child_process(_EXPORTS_AT_EXIT)
def test_exports_released_at_interpreter_exit():
    r = _EXPORTS_AT_EXIT.result()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.child_process(_FIRST_USE)
def test_concurrent_first_use_of_module_state():
    """The first MaskedArray result and the first datetime column, from many
    threads at once in a fresh process: all succeed."""
    r = _FIRST_USE.result()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_public_c_api_only():
    """No private CPython API and no deprecated error-indicator calls
    outside the one compat header; no hasattr-style probes that swallow
    errors."""
    private = re.compile(r"\b_Py[A-Za-z]+\s*\(")
    deprecated = re.compile(r"\bPyErr_(Fetch|Restore|NormalizeException)\b")
    swallowing = re.compile(r"\bPyObject_HasAttr(String)?\b")
    files = list((ROOT / "src" / "_interchange").rglob("*.c")) + list(
        (ROOT / "include" / "dfbuffer").glob("*.h")
    )
    assert files
    bad = []
    for f in files:
        text = re.sub(r"/\*.*?\*/", "", f.read_text(), flags=re.S)
        if private.search(text):
            bad.append((f.name, private.search(text).group()))
        if f.name != "compat.h" and deprecated.search(text):
            bad.append((f.name, deprecated.search(text).group()))
        if swallowing.search(text):
            bad.append((f.name, swallowing.search(text).group()))
    assert not bad


class Iface:
    def __init__(self, typestr):
        self.a = np.zeros(4, np.uint8)
        self.__array_interface__ = {"version": 3, "shape": (4,), "typestr": typestr,
                                    "data": (self.a.ctypes.data, False)}


BAD_TYPESTRS = ["_,,,", "i4,,", ",", "i4,(", "("]


@pytest.mark.parametrize("typestr", BAD_TYPESTRS)
def test_bad_typestr_is_value_or_type_error(typestr):
    """NumPy's parser raises SyntaxError for some strings ("i4,,"): the
    array interface reports ValueError / TypeError naming the typestr."""
    with pytest.raises((ValueError, TypeError)) as ei:
        dfbuffer.Buffer.from_object(Iface(typestr))
    assert not isinstance(ei.value, SyntaxError)
    assert typestr in str(ei.value) or typestr in str(ei.value.__cause__)


@pytest.mark.parametrize("typestr", BAD_TYPESTRS)
def test_bad_dtype_argument_is_value_or_type_error(typestr):
    src = np.zeros(8, np.uint8)
    for call in (
        lambda: dfbuffer.Buffer(src.ctypes.data, 8, owner=src, dtype=typestr),
        lambda: dfbuffer.Buffer.from_object(src, dtype=typestr),
        lambda: dfbuffer.buffer_to_ndarray(Buffer(src), typestr),
    ):
        with pytest.raises((ValueError, TypeError)) as ei:
            call()
        assert not isinstance(ei.value, SyntaxError)



def _odd_buffer(a: np.ndarray) -> Buffer:
    b = Buffer(odd_copy(a))
    assert b.ptr % 2 == 1
    return b


def _ix(dt) -> tuple:
    """The interchange dtype tuple of a NumPy dtype, byte order kept."""
    dt = np.dtype(dt)
    kind = {"i": 0, "u": 1, "f": 2}[dt.kind]
    fmt = {"i": "csil", "u": "CSIL", "f": " efg"}[dt.kind][int(np.log2(dt.itemsize))]
    return (kind, dt.itemsize * 8, fmt, "=" if dt.isnative else dt.byteorder)


@pytest.mark.parametrize("dt", ["<f8", "<f4", "<f2", ">f8", ">f4"])
def test_odd_address_nan_nulls(dt):
    vals = np.array([1.5, np.nan, 3.0] * 30, dtype=dt)
    col = Column(size=len(vals), dtype=_ix(dt), data=(_odd_buffer(vals), _ix(dt)),
                 null=(1, None), null_count=30)
    res = dfbuffer.column_to_ndarray(col)
    np.testing.assert_array_equal(res.mask, np.isnan(vals))
    np.testing.assert_array_equal(res.data[~res.mask], vals[~np.isnan(vals)])


@pytest.mark.parametrize("dt", ["<i2", ">i4", "<i4", "<u8"])
def test_odd_address_sentinels_other_widths(dt):
    vals = np.array([3, 9, 4, 9] * 10, dtype=dt)
    idt = _ix(dt)
    col = Column(size=len(vals), dtype=idt, data=(_odd_buffer(vals), idt),
                 null=(USE_SENTINEL, 9), null_count=20)
    res = dfbuffer.column_to_ndarray(col, nulls="fill")
    expect = np.where(vals == 9, np.nan, vals.astype(float))
    np.testing.assert_array_equal(res, expect)


def test_odd_address_date32_categorical_bytemask():
    days = np.array([0, 1, 19000, -5], dtype=np.int32)
    d = Column(size=4, dtype=(22, 32, "tdD", "="), data=(_odd_buffer(days), INT32_DTYPE))
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(d), days.astype("M8[D]"))
    cats = primitive(np.array([10, 20, 30], dtype=np.int64))
    codes = np.array([2, 0, 1, 2] * 5, dtype=np.int16)
    cdt = (23, 16, "s", "=")
    from producers import Categorical

    c = Column(size=len(codes), dtype=cdt, data=(_odd_buffer(codes), (0, 16, "s", "=")),
               categorical=Categorical(cats))
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(c), np.array([10, 20, 30])[codes])
    vals = np.arange(16, dtype=np.int64)
    mask = (np.arange(16) % 3 == 0).astype(np.uint8)
    m = Column(size=16, dtype=INT64_DTYPE, data=(_odd_buffer(vals), INT64_DTYPE),
               validity=(_odd_buffer(mask), (20, 8, "b", "=")), null=(4, 1),
               null_count=int(mask.sum()))
    res = dfbuffer.column_to_ndarray(m)
    np.testing.assert_array_equal(res.mask, mask.astype(bool))
