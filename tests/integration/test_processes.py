"""Beyond one process: shared memory, mmap, and pickling across processes.

Process start is expensive, so the module uses one spawned worker pool and one extra
process; every wait is bounded.
"""

from __future__ import annotations

import gc
import mmap
import multiprocessing
import pickle
import sys
import weakref
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import shared_memory

import _process_workers as workers
import numpy as np
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer import Buffer

CTX = multiprocessing.get_context("spawn")
TIMEOUT = 120  # seconds: generous for a loaded 2-core machine, still bounded


@pytest.fixture(scope="module")
def pool():
    ex = ProcessPoolExecutor(max_workers=1, mp_context=CTX)
    try:
        yield ex
    finally:
        ex.shutdown(wait=False, cancel_futures=True)


# ---------------------------------------------------------------- shared memory, mmap


def test_shared_memory_view_pins_the_segment(collect):
    shm = shared_memory.SharedMemory(create=True, size=80)
    try:
        buf = Buffer.from_object(shm.buf, dtype="f8")
        assert (buf.shape, buf.readonly) == ((10,), False)
        arr = np.asarray(buf)
        arr[:] = np.arange(10)
        assert bytes(shm.buf[8:16]) == np.float64(1).tobytes()  # same memory
        # documented: close() with exported views raises BufferError, and changes nothing
        with pytest.raises(BufferError):
            shm.close()
        assert arr.tolist() == list(range(10))
        del arr, buf
        collect()
        shm.close()  # no view left: closes
    finally:
        shm.unlink()


def test_shared_memory_outlives_its_object(collect):
    """Dropping the SharedMemory object while a Buffer views it: its __del__ cannot close
    the mapping (BufferError, reported as unraisable), so the segment stays mapped for as
    long as the Buffer lives, and goes with the last view."""
    shm = shared_memory.SharedMemory(create=True, size=64)
    name = shm.name
    try:
        buf = Buffer.from_object(shm.buf, dtype="i8")
        np.asarray(buf)[:] = 7
        mv = weakref.ref(shm.buf)
        seen = []
        old = sys.unraisablehook
        sys.unraisablehook = lambda u: seen.append(u.exc_type)
        try:
            del shm
            collect()
        finally:
            sys.unraisablehook = old
        assert seen == [BufferError]
        assert mv() is not None
        assert np.asarray(buf).tolist() == [7] * 8
        del buf
        collect()
        assert mv() is None
    finally:
        shared_memory.SharedMemory(name=name).unlink()


def test_mmap_kept_alive_by_views(collect, tmp_path):
    path = tmp_path / "col.bin"
    path.write_bytes(np.arange(16, dtype="<i4").tobytes())
    with open(path, "r+b") as f:
        mm = mmap.mmap(f.fileno(), 0)
    ref = weakref.ref(mm)
    buf = Buffer.from_object(mm, dtype="<i4")
    col = dfbuffer.buffer_to_ndarray(buf, (dfbuffer.DtypeKind.INT, 32, "i", "="),
                                     offset=2, length=4)
    assert col.tolist() == [2, 3, 4, 5]
    with pytest.raises(BufferError):
        mm.close()  # exported
    del mm, buf
    collect()
    assert ref() is not None  # the array's base chain holds the mapping
    assert col.tolist() == [2, 3, 4, 5]
    del col
    collect()
    assert ref() is None


def test_column_shared_between_processes_without_copy(collect):
    n = 1000
    shm = shared_memory.SharedMemory(create=True, size=16 * n)
    try:
        buf = Buffer.from_object(shm.buf, dtype="f8")
        col = np.asarray(buf)
        col[:n] = np.arange(n) * 0.5
        p = CTX.Process(target=workers.square_column, args=(shm.name, n))
        p.start()
        p.join(TIMEOUT)
        if p.is_alive():
            p.kill()
            pytest.fail("the child process did not finish in time")
        assert p.exitcode == 0
        # the child wrote through its own zero-copy view; the parent sees it in place
        assert np.array_equal(col[n:], (np.arange(n) * 0.5) ** 2)
        del col, buf
        collect()
    finally:
        shm.close()
        shm.unlink()


# ---------------------------------------------------------------- pickling across processes


def _buffers():
    c = np.arange(12, dtype="i8")
    return {
        "c": Buffer.from_object(c),
        "readonly": Buffer.from_object(pa.array([1.5, 2.5, 3.5])),
        "fortran": Buffer.from_object(np.asfortranarray(np.arange(6, dtype="f4").reshape(2, 3))),
        "datetime": Buffer.from_object(np.array(["2024-01-01", "2025-06-30"], "M8[D]")),
        "empty": Buffer.from_object(np.zeros((0, 3), "u2")),
        "strided": Buffer.from_object(c[::3]),  # travels compact: strides become C
    }


def _expected(b, key):
    strides = b.strides
    if key in ("strided", "empty"):  # these arrive C-contiguous
        strides, step = [], b.itemsize
        for n in reversed(b.shape):
            strides.insert(0, step)
            step *= n
        strides = tuple(strides)
    vals = np.asarray(b).tolist() if b.size else []
    return ("Buffer", b.dtype.str, b.shape, strides, b.readonly, int(b.native), vals)


def test_pool_round_trip_buffers(pool):
    bufs = _buffers()
    seen, back = pool.submit(workers.echo, bufs).result(timeout=TIMEOUT)
    for key, b in bufs.items():
        assert seen[key] == _expected(b, key), key
        assert workers.describe(back[key]) == _expected(b, key), key


def _frame():
    return pa.table({
        "i": pa.array([1, None, 3], pa.int64()),
        "f": pa.array([1.5, 2.5, 3.5]),
        "s": pa.array(["a", None, "c"]),
        "t": pa.array([0, 86_400_000_000, None], pa.timestamp("us")),
    })


def _check_columns(got, cols, *, readonly_kept):
    assert set(got) == set(cols)
    for k, a in cols.items():
        g = got[k]
        assert type(g) is type(a), k
        assert g.dtype == a.dtype and g.shape == a.shape, k
        if isinstance(a, np.ma.MaskedArray):
            assert np.ma.getmaskarray(g).tolist() == np.ma.getmaskarray(a).tolist(), k
            assert g.compressed().tolist() == a.compressed().tolist(), k
        else:
            assert g.strides == a.strides and g.tolist() == a.tolist(), k
            if readonly_kept:
                assert g.flags.writeable == a.flags.writeable, k


def _seen_columns(cols, *, readonly_kept):
    """What a child should see of from_dataframe results."""
    out = workers.describe(cols)
    if not readonly_kept:  # unpickled in band: NumPy makes a new, writable array
        out = {k: v[:4] + (True,) + v[5:] if v[0] == "ndarray" else v for k, v in out.items()}
    return out


def test_pool_round_trip_from_dataframe(pool):
    cols = dfbuffer.from_dataframe(_frame())
    assert isinstance(cols["i"], np.ma.MaskedArray) and not cols["f"].flags.writeable
    seen, back = pool.submit(workers.echo, cols).result(timeout=TIMEOUT)
    # the pool pickles with the default protocol; NumPy records the read-only flag only
    # from protocol 5 on (pickle.DEFAULT_PROTOCOL is 4 before Python 3.14)
    kept = pickle.DEFAULT_PROTOCOL >= 5
    assert seen == _seen_columns(cols, readonly_kept=kept)
    _check_columns(back, cols, readonly_kept=kept)


def test_pickle5_out_of_band_across_processes(pool):
    """Protocol 5 with every buffer out of band, both ways: the pickle payload carries no
    data, and Buffers and ndarrays keep their read-only flag."""
    bufs = _buffers()
    cols = dfbuffer.from_dataframe(_frame())
    obj = {"buffers": bufs, "columns": cols}
    payload, frames = workers.dumps5(obj)
    big = np.full(4096, 3, dtype="u1")
    big_payload, big_frames = workers.dumps5(Buffer.from_object(big))
    assert len(big_payload) < 1024 and sum(len(f) for f in big_frames) == 4096
    seen, payload2, frames2 = pool.submit(workers.echo5, payload, frames).result(
        timeout=TIMEOUT)
    assert seen["columns"] == _seen_columns(cols, readonly_kept=True)
    assert seen["buffers"] == {k: _expected(b, k) for k, b in bufs.items()}
    back = pickle.loads(payload2, buffers=frames2)
    for key, b in bufs.items():
        assert workers.describe(back["buffers"][key]) == _expected(b, key), key
    _check_columns(back["columns"], cols, readonly_kept=True)


def test_device_buffers_do_not_pickle():
    cuda = Buffer(0x10000, 8, owner=object(), device=(2, 0))
    with pytest.raises(TypeError, match="device"):
        pickle.dumps(cuda, protocol=5)
    gc.collect()
