"""A writer racing the pandas columns read in C (readers/pandas_columns.c): a thread
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
            assert set(np.unique(np.asarray(got))) <= set(range(N))
            assert set(np.unique(np.asarray(out["sp"]))) <= set(map(float, range(N)))
    finally:
        stop.set()
        t.join()
