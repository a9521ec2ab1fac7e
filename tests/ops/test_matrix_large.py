"""dfbuffer.to_matrix on outputs of 16 MiB and more: they come from dfbuffer's
NumPy memory handler, which keeps the last freed block for the next output of
about its size (marked MADV_FREE by a reaper thread after about a second
unused), and column-major copies into such a reused block use non-temporal
stores.  The results must equal the small-output path's for every column
kind, on one and two threads; the GIL is released during the copy; the kept
block survives fork and is given back to the kernel."""

from __future__ import annotations

import gc
import os
import pathlib
import sys
import textwrap
import threading
import weakref

import numpy as np
import pyarrow as pa
import pytest
from child_processes import ChildProcess

import dfbuffer

BIG = 16 << 20  # bytes from which the handler (and non-temporal stores) apply


def assert_equal(got: np.ndarray, expect: np.ndarray) -> None:
    """np.testing.assert_array_equal with a fast path for these 16 MiB arrays: arrays of
    one shape and dtype whose elements are bit for bit the same are equal (NaN where the
    other has NaN included); anything else gets the full comparison and its message."""
    got = np.asarray(got)
    if got.shape == expect.shape and got.dtype == expect.dtype and got.dtype.kind == "f":
        bits = np.dtype(f"u{got.dtype.itemsize}")
        if np.array_equal(got.view(bits), expect.view(bits)):
            return
    assert_equal(got, expect)


def mixed_table(rows: int) -> tuple[pa.Table, np.ndarray]:
    """4 columns (float64; float64 with nulls; int32, cast; float64 in two
    chunks, sliced at an odd offset) and the float64 matrix they make."""
    rng = np.random.default_rng(rows)
    a = rng.random(rows)
    b = rng.random(rows)
    nulls = rng.random(rows) < 0.1
    c = rng.integers(-1000, 1000, rows).astype(np.int32)
    d = rng.random(rows + 7)
    cut = rows // 3 + 1
    d_col = pa.chunked_array([pa.array(d[:cut]), pa.array(d[cut:])]).slice(7 - 4, rows)
    expect_d = d[3 : 3 + rows]
    t = pa.table(
        {
            "a": a,
            "b": pa.array(b, mask=nulls),
            "c": c,
            "d": d_col,
        }
    )
    expect = np.column_stack([a, np.where(nulls, np.nan, b), c.astype(np.float64), expect_d])
    return t, expect


@pytest.mark.parametrize("rows", [BIG // 32 - 1, BIG // 32, BIG // 32 + 3])
def test_reused_large_outputs_equal_the_small_path(rows):
    # 4 float64 columns: just under, at and over 16 MiB; odd row counts put
    # column starts off cache-line (and thread borders inside a line)
    t, expect = mixed_table(rows)
    step = 1 << 16  # 2 MiB outputs: NumPy memory, plain stores
    small = np.vstack([dfbuffer.to_matrix(t.slice(i, step)) for i in range(0, rows, step)])
    assert_equal(small, expect)
    for order in "FFCF":  # the second F call writes into the block the first freed
        for threads in (1, 2):
            got = dfbuffer.to_matrix(t, order=order, threads=threads)
            assert got.flags.f_contiguous if order == "F" else got.flags.c_contiguous
            assert_equal(got, expect)
            m = dfbuffer.to_matrix(t, order=order, threads=threads, nulls="mask")
            np.testing.assert_array_equal(np.ma.getmaskarray(m)[:, 1], np.isnan(expect[:, 1]))
            assert_equal(m.filled(np.nan), expect)
            del got, m


def test_reused_block_with_casts_and_two_live_outputs():
    t, expect = mixed_table(BIG // 32 + 3)
    f32 = expect.astype(np.float32)
    for _ in range(3):
        x = dfbuffer.to_matrix(t, order="F", dtype="float32")  # below 16 MiB
        y = dfbuffer.to_matrix(t, order="F")
        z = dfbuffer.to_matrix(t, order="F")  # y is alive: a block of its own
        assert y.ctypes.data != z.ctypes.data
        assert_equal(x, f32)
        assert_equal(y, expect)
        assert_equal(z, expect)
        del x, y, z


def test_large_output_does_not_keep_its_sources_alive():
    rng = np.random.default_rng(1)
    cols = [rng.random(BIG // 24) for _ in range(3)]
    expect = np.column_stack(cols)
    refs = [weakref.ref(c) for c in cols]
    t = pa.table({f"c{i}": c for i, c in enumerate(cols)})  # views of the arrays
    del cols
    outs = [dfbuffer.to_matrix(t, order="F", threads=n) for n in (1, 2, 2)]
    del t
    gc.collect()
    assert all(r() is None for r in refs)
    for out in outs:
        assert out.base is None and out.flags.owndata
        assert_equal(out, expect)


def test_another_python_thread_runs_during_a_large_copy():
    # with a switch interval far beyond the test, a waiting thread gets the GIL
    # only when the running one releases it: to_matrix does during its copy
    t = pa.table({f"c{i}": np.full(1 << 20, float(i)) for i in range(8)})  # 64 MiB
    go = threading.Lock()
    go.acquire()
    ran = []

    def other():
        with go:
            ran.append(1)

    old = sys.getswitchinterval()
    th = threading.Thread(target=other)
    th.start()
    try:
        sys.setswitchinterval(1000.0)
        go.release()
        for _ in range(50):
            out = dfbuffer.to_matrix(t, order="F", threads=1)
            assert out[-1, 7] == 7.0
            del out
            if ran:
                break
        assert ran == [1]
    finally:
        sys.setswitchinterval(old)
        th.join()


# The two tests below run in child processes (tests/child_processes.py)
# with a reaper delay of 50 ms instead of 1 s (DFBUFFER_MATRIX_DECAY_MS): a fresh process
# to fork (not the test process with its threads) and whose memory counters only this
# test moves.
_CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        p for p in (str(pathlib.Path(dfbuffer.__file__).parents[1]),
                    os.path.dirname(__file__), os.path.dirname(os.path.dirname(__file__)),
                    os.environ.get("PYTHONPATH", "")) if p),
    "DFBUFFER_MATRIX_DECAY_MS": "50",
}

_FORK_CHILD = textwrap.dedent("""
    import os, time, warnings
    import numpy as np
    import dfbuffer
    from test_matrix_large import BIG, mixed_table

    t, expect = mixed_table(BIG // 32 + 3)
    dfbuffer.to_matrix(t, order="F")  # freed at once: kept by the parent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads
        pid = os.fork()
    if pid == 0:  # the child reports through its exit code
        ok = 1
        try:
            for _ in range(3):
                ok &= bool(np.array_equal(dfbuffer.to_matrix(t, order="F"), expect,
                                          equal_nan=True))
            time.sleep(0.2)  # the child's own reaper marks its block
            ok &= bool(np.array_equal(dfbuffer.to_matrix(t, order="F"), expect,
                                      equal_nan=True))
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, status
    assert np.array_equal(dfbuffer.to_matrix(t, order="F"), expect, equal_nan=True)
    print("ok")
""")

_GIVEN_BACK_CHILD = textwrap.dedent("""
    import time
    import numpy as np
    import pyarrow as pa
    import dfbuffer

    def memory_kb():
        # Rss and LazyFree (pages marked MADV_FREE) of this process, in kB
        got = {}
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Rss", "LazyFree"):
                    got[key] = int(rest.split()[0])
        return got

    t = pa.table({f"c{i}": np.full(1 << 20, float(i)) for i in range(12)})  # 96 MiB
    out = dfbuffer.to_matrix(t, order="F")
    out[:] = 1.0  # every page resident
    before = memory_kb()
    del out  # kept as it is for the next output of its size
    # after 50 ms unused the reaper marks it MADV_FREE (the kernel may take the
    # pages back) or frees it; wait generously

    def given_back():
        now = memory_kb()
        return (now.get("LazyFree", 0) - before.get("LazyFree", 0) >= 80 << 10
                or before["Rss"] - now["Rss"] >= 80 << 10)

    deadline = time.monotonic() + 60
    while not given_back() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert given_back(), (before, memory_kb())
    # a marked block is still handed out again, and gives correct results
    again = dfbuffer.to_matrix(t, order="F")
    assert (again[-1] == np.arange(12.0)).all()
    assert (again[:, 11] == 11.0).all()
    print("ok")
""")

_FORK = ChildProcess.python(_FORK_CHILD, env=_CHILD_ENV) if hasattr(os, "fork") else None
_GIVEN_BACK = ChildProcess.python(_GIVEN_BACK_CHILD, env=_CHILD_ENV) if (
    os.path.exists("/proc/self/smaps_rollup")) else None


@pytest.mark.child_process(_FORK)
@pytest.mark.skipif(_FORK is None, reason="needs fork")
def test_fork_with_a_kept_block():
    r = _FORK.result()
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok"


@pytest.mark.child_process(_GIVEN_BACK)
@pytest.mark.skipif(_GIVEN_BACK is None, reason="reads /proc/self/smaps_rollup")
def test_kept_block_is_given_back_when_unused():
    r = _GIVEN_BACK.result()
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok"
