"""A writer racing the pandas columns read in C (readers/pandas/pandas_columns.c): a thread
rewrites a Period column's ordinals and a Sparse column's values while from_dataframe
reads them.  Whatever a read sees, it stays inside the arrays pandas gave (ASan checks
the reads), every result has the frame's length, and each value is one the writer
wrote."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dfbuffer

pd = pytest.importorskip("pandas")

N = 2000
ROUNDS = 40


def _bytes_written(got: np.ndarray, first: np.ndarray) -> bool:
    """Whether every byte of each value of ``got`` is that byte of the value first there
    (``first``) or of 0 or 1, the writer's values: a read may see a value torn between
    two writes (under the ASan runtime a copy moves single bytes), never a neighbour's
    value or garbage."""
    # a copy: a zero-copy result is the producer's memory, which the writer still changes
    g = np.array(got, copy=True).view(np.uint8).reshape(len(got), -1)
    ok = g == np.ascontiguousarray(first).view(np.uint8).reshape(len(first), -1)
    for k in (0, 1):
        ok |= g == np.array([k], dtype=first.dtype).view(np.uint8)
    return bool(ok.all())


@pytest.mark.parametrize("period", ["object", "ordinal"])
def test_racing_writer_on_pandas_columns_read_in_c(period):
    per = pd.arrays.PeriodArray(np.arange(N, dtype=np.int64), dtype=pd.PeriodDtype("D"))
    ordinals = per._ndarray
    ordinals.flags.writeable = True
    sparse = pd.arrays.SparseArray(np.arange(N, dtype=np.float64))
    sp_values = sparse.sp_values
    sp_values.flags.writeable = True
    df = pd.DataFrame({"p": per, "sp": sparse}, copy=False)
    stop = threading.Event()

    def write() -> None:
        k = 0
        while not stop.is_set():
            k ^= 1
            ordinals[:] = k  # every ordinal 0 or 1, NaT never
            sp_values[:] = k

    t = threading.Thread(target=write)
    t.start()
    try:
        for _ in range(ROUNDS):
            out = dfbuffer.from_dataframe(df, period=period)
            assert out["p"].shape == (N,) and out["sp"].shape == (N,)
            got = out["p"] if period == "ordinal" else np.array(
                [x.ordinal for x in out["p"]])
            assert _bytes_written(np.asarray(got, dtype=np.int64), np.arange(N))
            assert _bytes_written(np.asarray(out["sp"]), np.arange(N, dtype=np.float64))
    finally:
        stop.set()
        t.join()
