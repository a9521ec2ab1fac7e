"""The batch reader of iter_matrices / iter_batches (_ArrowBatchReader) against
hostile Arrow streams (hand-built with ctypes over pyarrow's exports: failing
callbacks, batches that do not match the schema, negative lengths), racing writers,
reference cycles and threads.  Each must give a clean exception or a value some
snapshot could give, never a crash, and release every moved struct exactly once."""

from __future__ import annotations

import ctypes
import gc
import threading
import weakref

import numpy as np
import pyarrow as pa
import pytest
from _arrow_ctypes import ArrowArrayStream, StreamProducerBase
from _arrow_device_ctypes import ARRAY_RELEASE, ArrowArray, ArrowSchema
from racing import race

import dfbuffer
from dfbuffer._interchange import _ArrowBatchReader

# Over _arrow_device_ctypes' structs, whose release fields are typed callbacks.
GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                              ctypes.POINTER(ArrowSchema))
GET_NEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                            ctypes.POINTER(ArrowArray))


class HostileStream(StreamProducerBase):
    """A stream of pyarrow's batches of ``table`` (chunks of 4 rows), each handed out
    through ``spoil(k, array)`` (which may change the struct the consumer sees; the
    release restores pyarrow's own and releases it), failing at batch ``fail_at`` with
    errno ``fail``; counts every release."""

    def __init__(self, table, *, spoil=None, fail_at=None, fail=22, schema_fail=0,
                 schema=None):
        self.batches = table.to_batches(max_chunksize=4)
        self.schema = schema if schema is not None else table.schema
        self.spoil, self.fail_at, self.fail, self.schema_fail = spoil, fail_at, fail, schema_fail
        self.k = 0
        self.stream_releases = 0
        self.array_releases = 0
        self.handed = 0
        self.inner: dict[int, ArrowArray] = {}
        self.on_next = None

        def get_schema(_s, out):
            if self.schema_fail:
                return self.schema_fail
            self.schema._export_to_c(ctypes.addressof(out.contents))
            return 0

        def get_next(_s, out):
            if self.on_next is not None:
                self.on_next()
            if self.fail_at is not None and self.k == self.fail_at:
                return self.fail
            if self.k >= len(self.batches):
                out.contents.release = ARRAY_RELEASE()
                return 0
            inner = ArrowArray()
            self.batches[self.k]._export_to_c(ctypes.addressof(inner))
            ctypes.pointer(out.contents)[0] = inner
            out.contents.private_data = self.k
            self.inner[self.k] = inner
            out.contents.release = self._release
            if self.spoil is not None:
                self.spoil(self.k, out.contents)
            self.k += 1
            self.handed += 1
            return 0

        def release_array(p):
            key = p.contents.private_data or 0
            inner = self.inner.pop(key)
            inner.release(ctypes.pointer(inner))
            p.contents.release = ARRAY_RELEASE()
            self.array_releases += 1

        self._release = ARRAY_RELEASE(release_array)
        self._make_stream(GET_SCHEMA(get_schema), GET_NEXT(get_next))


def table():
    return pa.table({"x": np.arange(10.0), "y": np.arange(10)})


def test_well_behaved_stream_releases_once(collect):
    p = HostileStream(table())
    ms = list(dfbuffer.iter_matrices(p, 3))
    assert np.concatenate(ms)[:, 0].tolist() == list(range(10))
    collect()
    assert p.stream_releases == 1 and p.array_releases == p.handed == 3


@pytest.mark.parametrize("errno_, exc", [(22, ValueError), (12, MemoryError),
                                          (38, NotImplementedError), (5, OSError)])
@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_get_next_error(errno_, exc, fn, collect):
    p = HostileStream(table(), fail_at=1, fail=errno_)
    it = getattr(dfbuffer, fn)(p, 3)
    next(it)                                 # rows 0..2 of the first source batch
    with pytest.raises(exc, match="get_next failed.*boom from the producer"):
        list(it)
    del it
    collect()
    assert p.stream_releases == 1 and p.array_releases == p.handed == 1


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
@pytest.mark.parametrize("batch_size, yielded, batch, first", [
    (3, 6, 3, 6),           # the failing read completes neither batch 3 nor its rows
    (4, 8, 3, 8),           # batch borders on source batch borders
    (5, 5, 2, 5),
])
def test_stream_failing_after_some_batches(fn, batch_size, yielded, batch, first, collect):
    """Source batches of 4, 4 and 2 rows; the third get_next fails: every batch before
    the error comes whole and once, in order; the error names the batch and the source
    batch it was reading."""
    p = HostileStream(table(), fail_at=2)
    it = getattr(dfbuffer, fn)(p, batch_size)
    got = []
    with pytest.raises(ValueError, match="get_next failed") as err:
        for b in it:
            got.append(np.array(b[:, 0] if fn == "iter_matrices" else b["x"], copy=True))
    assert [len(g) for g in got] == [batch_size] * (yielded // batch_size)
    assert np.concatenate(got).tolist() == list(map(float, range(yielded)))
    assert err.value.__notes__ == [
        f"dfbuffer.{fn}: batch {batch} (rows from {first} of the source) failed while "
        "reading source batch 3; every batch before it was yielded whole"]
    with pytest.raises(StopIteration):          # the generator has ended
        next(it)
    del it, b                                   # b: iter_batches' views of batch 2
    collect()
    # the exception (its traceback) holds no source batch either
    assert p.stream_releases == 1 and p.array_releases == p.handed == 2
    assert err.value is not None


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_python_producer_raising_mid_stream(fn):
    """A pyarrow reader over a Python generator that raises after two batches: the
    producer's own exception text reaches the consumer, and the note names the batch."""
    def gen():
        yield pa.record_batch({"x": [0.0, 1.0, 2.0]})
        yield pa.record_batch({"x": [3.0, 4.0]})
        raise KeyError("the producer's disk went away")

    rd = pa.RecordBatchReader.from_batches(pa.schema([("x", pa.float64())]), gen())
    it = getattr(dfbuffer, fn)(rd, 2)
    assert [np.asarray(b if fn == "iter_matrices" else b["x"]).ravel().tolist()
            for b in (next(it), next(it))] == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.raises(ValueError, match="disk went away") as err:
        next(it)
    assert err.value.__notes__[0].startswith(
        f"dfbuffer.{fn}: batch 3 (rows from 4 of the source) failed while reading source "
        "batch 3")


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_conversion_error_names_the_batch(fn):
    t = pa.table({"x": pa.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, None, 8.0])})
    it = getattr(dfbuffer, fn)(t.to_reader(max_chunksize=5), 3, nulls="raise")
    assert np.asarray(next(it) if fn == "iter_matrices" else next(it)["x"]).ravel().tolist(
    ) == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="null") as err:
        next(it)                                 # rows 3 to 5 are fine: the batch after
        next(it)
    assert err.value.__notes__ == [f"dfbuffer.{fn}: batch 3 (rows 6 to 7 of the source) failed"]
    # a pandas frame and a mapping are numbered the same way
    for src in (t.to_pandas(), {"x": np.ma.masked_invalid(t.column("x").to_numpy(
            zero_copy_only=False))}):
        with pytest.raises(ValueError, match="null") as err:
            list(getattr(dfbuffer, fn)(src, 3, nulls="raise"))
        assert err.value.__notes__ == [
            f"dfbuffer.{fn}: batch 3 (rows 6 to 7 of the source) failed"]


def test_get_schema_error(collect):
    p = HostileStream(table(), schema_fail=22)
    with pytest.raises(ValueError, match="get_schema failed"):
        dfbuffer.iter_matrices(p, 3)
    collect()
    assert p.stream_releases == 1


def test_schema_not_a_table(collect):
    p = HostileStream(table(), schema=pa.int64())
    with pytest.raises(TypeError, match="record batches"):
        dfbuffer.iter_batches(p, 3)
    collect()
    assert p.stream_releases == 1


def _children(k, a):
    a.n_children = 1                         # the schema has two


def _negative_length(k, a):
    if k == 1:
        a.length = -4


def _negative_offset(k, a):
    a.offset = -1


def _too_long(k, a):
    a.length = 1000                          # longer than its columns


def _null_count(k, a):
    a.null_count = 99


_KEEP: list = []


def _null_child(k, a):
    kids = (ctypes.POINTER(ArrowArray) * 2)(a.children[0], None)   # pyarrow's list kept
    _KEEP.append(kids)
    a.children = ctypes.cast(kids, ctypes.POINTER(ctypes.POINTER(ArrowArray)))


def _null_buffers(k, a):
    a.n_buffers = 0


@pytest.mark.parametrize("spoil, match", [
    (_children, "1 children, its schema 2"),
    (_negative_length, "negative"),
    (_negative_offset, "negative"),
    (_too_long, "fewer than the struct's offset"),
    (_null_count, "null_count"),
    (_null_child, "child 1 is NULL"),
    (_null_buffers, "1 buffer"),
])
@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_batch_not_matching_the_schema(spoil, match, fn, collect):
    p = HostileStream(table(), spoil=spoil)
    with pytest.raises(ValueError, match=match):
        list(getattr(dfbuffer, fn)(p, 3))
    collect()
    # the stream is released after the bad batch; every batch handed out once
    assert p.stream_releases == 1 and p.array_releases == p.handed


def test_reader_reentered_from_its_producer(collect):
    p = HostileStream(table())
    r = _ArrowBatchReader(p.__arrow_c_stream__())
    seen = []

    def again():
        p.on_next = None
        try:
            next(r)
        except RuntimeError as e:
            seen.append(str(e))

    p.on_next = again
    assert len(next(r)) == 4
    assert seen and "already reading" in seen[0]
    assert [len(b) for b in r] == [4, 2]


def test_reference_cycles_are_collected(collect):
    """An iterator (and the reader and batches it holds) in a cycle is collected, and its
    stream released, by the cycle collector."""
    values = np.arange(100.0)
    gone = weakref.ref(values)
    t = pa.table({"x": values})
    del values

    class Box:
        pass

    box = Box()
    box.self = box
    box.it = dfbuffer.iter_batches(t.to_reader(max_chunksize=30), 40)
    box.first = next(box.it)
    box.reader = _ArrowBatchReader(t.to_reader().__arrow_c_stream__())
    box.batch = next(box.reader)
    box_ref = weakref.ref(box)
    del t, box
    collect()
    assert box_ref() is None and gone() is None
    r = _ArrowBatchReader(pa.table({"x": [1.0]}).to_reader().__arrow_c_stream__())
    assert gc.is_tracked(r)
    cyc = [r]
    cyc.append(cyc)
    r_ref = weakref.ref(r)
    del r, cyc
    collect()
    assert r_ref() is None


def _bytes_from(got: np.ndarray, *states: np.ndarray) -> bool:
    """Whether every byte of each value of ``got`` is that byte of the value in one of
    ``states`` (the memory's old and new contents): a read may see a value torn between
    two writes (under the ASan runtime a copy moves single bytes), never a neighbour's
    value or garbage.  Reads a copy: a zero-copy result is memory the writer changes."""
    g = np.array(got, copy=True).view(np.uint8).reshape(len(got), -1)
    ok = np.zeros(g.shape, bool)
    for st in states:
        ok |= g == np.ascontiguousarray(st).view(np.uint8).reshape(len(st), -1)
    return bool(ok.all())


def test_racing_writer():
    """Another thread rewrites the NumPy memory behind a pyarrow batch (values and
    string offsets) while the batches are converted (batches of 1000 rows over source
    batches of 2500: some inside one, some joined across a border; into a new matrix,
    into out, as zero-copy columns): every value byte by byte the old or the new one, or
    a clean ValueError, never a crash."""
    n = 20_000
    vals = np.arange(n, dtype=np.float64)
    good, bad = vals.copy(), np.full(n, np.nan)
    words = np.frombuffer(b"".join(b"w%04d" % (k % 10_000) for k in range(n)), np.uint8)
    offs = (np.arange(n + 1) * 5).astype(np.int32)
    bad_offs = offs.copy()
    bad_offs[1::2] = np.iinfo(np.int32).max
    strings = pa.StringArray.from_buffers(n, pa.py_buffer(offs), pa.py_buffer(words))
    t = pa.table({"x": pa.array(vals), "s": strings})
    assert np.shares_memory(np.frombuffer(t.column("x").chunks[0].buffers()[1]), vals)
    out = np.empty((1000, 1))

    def convert_matrices(use_out):
        return [np.array(m[:, 0], copy=True) for m in dfbuffer.iter_matrices(
            t.to_reader(max_chunksize=2500), 1000, columns=["x"],
            out=out if use_out else None)]

    def check_matrices(ms):
        got = np.concatenate(ms)
        assert got.shape == (n,) and _bytes_from(got, good, bad)

    for use_out in (False, True):
        race(lambda use_out=use_out: convert_matrices(use_out), check_matrices,
             [(vals, good, bad)], rounds=4)

    def convert_views():
        return [b["x"] for b in dfbuffer.iter_batches(t.to_reader(max_chunksize=2500), 1000,
                                                      columns=["x"])]

    def check_views(cols):
        assert sum(len(c) for c in cols) == n
        assert _bytes_from(np.concatenate(cols), good, bad)

    race(convert_views, check_views, [(vals, good, bad)], rounds=4)

    def convert_batches():
        return [b["s"] for b in dfbuffer.iter_batches(t.to_reader(max_chunksize=2500), 1000,
                                                      columns=["s"])]

    def check_batches(cols):
        assert sum(len(c) for c in cols) == n
        # a torn offset may pick another span of the words (never outside them)
        assert all(isinstance(s, str) and set(s) <= set("w0123456789") for c in cols
                   for s in c)

    race(convert_batches, check_batches, [(offs, offs.copy(), bad_offs)], rounds=4)


def test_threads_share_one_reader():
    """Many threads calling next() on one reader: each batch is handed to exactly one
    of them (or a thread is told the reader is busy); nothing crashes."""
    t = pa.table({"x": np.arange(4000.0)})
    r = _ArrowBatchReader(t.to_reader(max_chunksize=10).__arrow_c_stream__())
    got: list = []
    errors: list = []
    barrier = threading.Barrier(16)

    def run():
        barrier.wait()
        while True:
            try:
                b = next(r)
            except StopIteration:
                return
            except RuntimeError:
                continue
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
                return
            got.append(dfbuffer.from_dataframe(b)["x"][0])

    threads = [threading.Thread(target=run) for _ in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert sorted(got) == [10.0 * k for k in range(400)]


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_schema_changing_mid_stream(fn):
    """A pyarrow reader over batches whose schema changes after the first (pyarrow's
    from_batches does not check): a change of layout (a float column turned string, a
    column added) is refused at that batch, naming the column, after the batches before
    it; a change that keeps the layout (a renamed column) is read under the stream's
    schema, as the Arrow C stream interface gives one schema per stream."""
    sch = pa.schema([("x", pa.float64()), ("y", pa.float64())])
    first = pa.record_batch({"x": [0.0, 1.0], "y": [2.0, 3.0]})
    changes = [
        (pa.record_batch({"x": ["a", "b"], "y": [4.0, 5.0]}), "column 'x'.*2 buffers, got 3"),
        (pa.record_batch({"x": [4.0, 5.0], "y": [4.0, 5.0], "z": [6.0, 7.0]}),
         "3 children, its schema 2"),
    ]
    for changed, match in changes:
        rd = pa.RecordBatchReader.from_batches(sch, [first, changed])
        it = getattr(dfbuffer, fn)(rd, 2)
        head = next(it)
        assert np.asarray(head if fn == "iter_matrices" else head["y"]).ravel().tolist()[-1] == 3.0
        with pytest.raises(ValueError, match=match) as err:
            next(it)
        # the child count is checked as the batch is read, the buffers as it is converted
        assert err.value.__notes__[0].startswith(f"dfbuffer.{fn}: batch 2 (rows ")
    renamed = pa.record_batch({"a": [4.0, 5.0], "b": [6.0, 7.0]})
    got = list(getattr(dfbuffer, fn)(pa.RecordBatchReader.from_batches(sch, [first, renamed]), 3))
    if fn == "iter_batches":
        assert [list(b) for b in got] == [["x", "y"], ["x", "y"]]
        assert [b["y"].tolist() for b in got] == [[2.0, 3.0, 6.0], [7.0]]
    else:
        assert np.concatenate(got).tolist() == [[0.0, 2.0], [1.0, 3.0], [4.0, 6.0], [5.0, 7.0]]
    # int64 in place of float64 has the same buffers: read as the schema's float64 (its
    # bits), as any consumer of the stream reads it
    ints = pa.record_batch({"x": pa.array([1, 2], pa.int64()), "y": [4.0, 5.0]})
    got = list(getattr(dfbuffer, fn)(pa.RecordBatchReader.from_batches(sch, [first, ints]), 4))
    x = got[0][:, 0] if fn == "iter_matrices" else got[0]["x"]
    assert x.dtype == np.float64 and x[2:].view(np.int64).tolist() == [1, 2]


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_struct_length_disagreeing_with_its_children(fn):
    """A nanoarrow stream (built unvalidated) whose second batch is a struct of length 4
    over children of 6 rows reads its 4 rows; one of length 9 over the same children is
    refused at that batch, after the rows before it."""
    from nanoarrow.c_array_stream import CArrayStream

    na = pytest.importorskip("nanoarrow")
    sch = na.c_schema(na.struct({"x": na.float64()}))
    child = na.c_array_from_buffers(na.float64(), 6, [None, np.arange(6.0)])
    good = na.c_array_from_buffers(sch, 6, [None], children=[child])

    def stream(length):
        bad = na.c_array_from_buffers(sch, length, [None], children=[child],
                                      validation_level="none")
        return CArrayStream.from_c_arrays([good, bad, good], sch, validate=False)

    def flat(bs):
        return [v for b in bs for v in np.asarray(b if fn == "iter_matrices" else b["x"]).ravel()]

    assert flat(getattr(dfbuffer, fn)(stream(4), 5)) == [0, 1, 2, 3, 4, 5, 0, 1, 2, 3,
                                                         0, 1, 2, 3, 4, 5]
    got = []
    with pytest.raises(ValueError, match="child 0 has length 6, fewer than the struct's "
                                         "offset \\+ length 9") as err:
        for b in getattr(dfbuffer, fn)(stream(9), 5):
            got.append(b)
    assert flat(got) == [0, 1, 2, 3, 4]
    assert "batch 2 (rows from 5 of the source)" in err.value.__notes__[0]


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_iterator_abandoned_half_way_releases_the_stream(fn, collect):
    """An iterator dropped (or closed) after its first batch releases the stream and
    every batch it was handed at once, by reference counting: no collection needed."""
    for end in ("del", "close"):
        p = HostileStream(table())
        it = getattr(dfbuffer, fn)(p, 3)
        first = next(it)
        del first
        assert p.handed == 1 and p.stream_releases == 0
        gc.disable()
        try:
            if end == "del":
                gone = weakref.ref(it)
                del it
                assert gone() is None
            else:
                it.close()
                with pytest.raises(StopIteration):
                    next(it)
            assert p.stream_releases == 1 and p.array_releases == p.handed == 1, end
        finally:
            gc.enable()
    # the same through pyarrow: the Python generator behind the reader is finalized
    finalized = []

    def gen():
        try:
            for k in range(5):
                yield pa.record_batch({"x": np.full(4, float(k))})
        finally:
            finalized.append(True)

    rd = pa.RecordBatchReader.from_batches(pa.schema([("x", pa.float64())]), gen())
    it = getattr(dfbuffer, fn)(rd, 6)
    next(it)
    del rd, it
    assert finalized == [True]


class _OutPool(np.ndarray):
    """An ``out`` array that refers to its consumer (a cycle through the iterator)."""

    consumer: object = None


@pytest.mark.parametrize("fn", ["iter_matrices", "iter_batches"])
def test_cycles_through_the_iterator_are_collected(fn, collect):
    """A reference cycle through a live iterator (the iterator holds a pandas frame whose
    attrs refer back to it; or an ``out`` array that refers to it) is collected by the
    cycle collector, the iterator freed and the stream released."""
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"x": np.arange(10.0)})
    it = getattr(dfbuffer, fn)(df, 3)
    next(it)
    df.attrs["consumer"] = it
    refs = weakref.ref(it), weakref.ref(df)
    del df, it
    collect()
    assert [r() for r in refs] == [None, None]
    if fn != "iter_matrices":
        return
    p = HostileStream(table())
    out = np.empty((3, 2)).view(_OutPool)
    it = dfbuffer.iter_matrices(p, 3, out=out)
    next(it)
    out.consumer = it
    refs = weakref.ref(it), weakref.ref(out)
    del out, it
    assert p.stream_releases == 0
    collect()
    assert [r() for r in refs] == [None, None]
    assert p.stream_releases == 1 and p.array_releases == p.handed == 1
