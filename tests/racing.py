"""A writer thread that rewrites a producer's memory while dfbuffer converts it.

``flipping(target, good, bad)`` rewrites the NumPy array ``target`` (memory a
hand-written producer hands out) with ``bad`` once, then ``good`` a few times,
again and again, until the block ends.  The writer's copy
(``np.positive(src, out=dst, order="C")``) goes into a view that repeats
``target`` many times (stride 0) from one that repeats the (bad, good...)
cycle, so it spends its time in NumPy's copy loop, which runs without the GIL:
the conversions on the main thread see the memory change under them while
they read it.

``race(...)`` runs a conversion a bounded number of times under such a writer
and checks every outcome: a result that some snapshot of the producer memory
could give (the caller's ``check``), or a clean ValueError / BufferError.
A crash ends the test process (and the ASan suite reports it).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from producers import categorical, strings

# bytes written by one copy call of the writer, about (the copy runs without the
# GIL, so a conversion on the main thread overlaps it whole)
COPY_BYTES = 1 << 25


@contextlib.contextmanager
def flipping(
    target: np.ndarray, good: np.ndarray, bad: np.ndarray, *, every: int = 16
) -> Iterator[None]:
    """Inside the block, a thread rewrites ``target`` with ``bad`` once, then
    ``every - 1`` times with ``good``, again and again (mostly good: a conversion
    then often validates a good state and reads a bad one later); on exit it stops
    and ``target`` holds ``good`` again."""
    assert target.shape == good.shape == bad.shape and target.flags.c_contiguous
    cycle = np.stack([bad] + [good] * (every - 1)).astype(target.dtype)  # C-contiguous
    reps = max(1, COPY_BYTES // max(cycle.nbytes, 1))
    # the cycle repeated `reps` times, in place: both views have stride 0 outside
    src = np.lib.stride_tricks.as_strided(
        cycle, shape=(reps, *cycle.shape), strides=(0, *cycle.strides), writeable=False
    )
    dst = np.lib.stride_tricks.as_strided(
        target, shape=(reps, *cycle.shape), strides=(0, 0, *target.strides)
    )
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            # a copy in C order: element after element of each rewrite (np.copyto
            # would order the loops by stride and rewrite one element at a time)
            np.positive(src, out=dst, order="C")

    t = threading.Thread(target=write, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()
        np.copyto(target, good)


def race(
    convert: Callable[[], Any],
    check: Callable[[Any], None],
    targets: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    rounds: int = 8,
) -> tuple[int, int]:
    """Runs ``convert()`` ``rounds`` times while every (target, good, bad) of
    ``targets`` is being rewritten; ``check(result)`` asserts each result is
    one a snapshot could give.  ValueError (UnicodeDecodeError among them) and
    BufferError count as clean refusals.  Returns (results, refusals); the
    conversion runs once more after the writers stopped and must succeed."""
    ok = refused = 0
    with contextlib.ExitStack() as stack:
        for target, good, bad in targets:
            stack.enter_context(flipping(target, good, bad))
        for _ in range(rounds):
            try:
                res = convert()
            except (ValueError, BufferError):
                refused += 1
                continue
            check(res)
            ok += 1
    check(convert())  # the memory is good again: the same call succeeds
    return ok, refused


# ---------------------------------------------------------------------------
# Producers whose offsets and codes the tests rewrite, and checks of the results

N = 40_000  # elements: enough that a conversion and a rewrite overlap
NCATS = 50


def string_values(n: int = N) -> list[str | None]:
    return [None if i % 11 == 3 else f"s{i % 997:05d}" for i in range(n)]


def bad_offsets(good: np.ndarray) -> np.ndarray:
    """Every other offset far beyond the data: spans run past the end or backwards."""
    bad = good.copy()
    bad[1::2] = np.iinfo(good.dtype).max if good.dtype == np.int32 else 2**40
    return bad


def offsets_of(col) -> np.ndarray:
    return col.get_buffers()["offsets"][0]._x


def codes_of(col) -> np.ndarray:
    return col.get_buffers()["data"][0]._x


def category_column(*, large: bool = False, code_dtype=np.int16):
    """A categorical of N rows (every 7th null: sentinel -1) over NCATS string
    categories; returns the column, its expected values and the (target, good, bad)
    rewrites of its codes and of its categories' offsets."""
    cats = strings([f"category-{k:03d}-" + "x" * (k % 5) for k in range(NCATS)], large=large)
    good_codes = (np.arange(N) * 7919 % NCATS).astype(code_dtype)
    good_codes[::7] = -1
    col = categorical(good_codes, cats, code_dtype=code_dtype)
    names = [f"category-{k:03d}-" + "x" * (k % 5) for k in range(NCATS)]
    expected = [None if c < 0 else names[c] for c in good_codes.tolist()]
    codes = codes_of(col)
    bad_codes = codes.copy()
    bad_codes[1::2] = np.where(codes[1::2] < 0, -1, np.iinfo(code_dtype).max)
    offs = offsets_of(cats)
    return col, expected, [(codes, codes.copy(), bad_codes), (offs, offs.copy(), bad_offsets(offs))]


def as_list(res) -> list:
    """The values of a result, None where masked."""
    if isinstance(res, list):
        return res
    if isinstance(res, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(res).tolist()
        return [None if m else v for v, m in zip(res.data.tolist(), mask, strict=True)]
    return res.tolist()


def values_equal(expected):
    def check(res) -> None:
        assert as_list(res) == expected

    return check


def run_ends_target(
    n_runs: int = 20_000, run: int = 3
) -> tuple[Any, list, tuple[np.ndarray, ...]]:
    """A pyarrow run-end encoded array of n_runs runs of `run` rows whose int32 run ends
    live in NumPy memory: (array, its to_pylist(), (ends, good, bad)) for race(); the bad
    run ends go backwards.  Imports pyarrow (only its callers need it)."""
    import pyarrow as pa

    good = (np.arange(1, n_runs + 1) * run).astype(np.int32)
    ends = good.copy()
    values = pa.array(np.arange(n_runs) % 97)
    run_ends = pa.Array.from_buffers(pa.int32(), n_runs, [None, pa.py_buffer(ends)])
    # from_buffers: pyarrow 16's from_arrays cannot take the length from these run ends
    ree = pa.RunEndEncodedArray.from_buffers(
        pa.run_end_encoded(pa.int32(), values.type), run * n_runs, [None], 0, 0,
        [run_ends, values])
    bad = good.copy()
    bad[1::2] = 1  # not increasing: runs that go backwards
    return ree, ree.to_pylist(), (ends, good, bad)
