"""C API benchmark: a C consumer (tests/capi_consumer/consumer.c, built here with -O2
against dfbuffer.get_include()) against the same work through the Python API.

    PYTHONPATH=build/dev/stage python benchmarks/bench_capi.py [--quick]

(a) a 1000-column interchange frame (the minimal producer, 8 float64 rows per column, so
    that the per-column costs dominate): the C consumer's loop
    ``DfBuffer_ColumnToNdarray(df.get_column(i))`` vs the Python loop
    ``column_to_ndarray(df.get_column(i))``, and ``DfBuffer_FromDataFrame`` vs
    ``dfbuffer.from_dataframe``.  Overhead per column = (time - the producer walk) / ncols,
    where the producer walk is the calls any consumer must make (get_column, get_buffers,
    ptr, bufsize, __dlpack_device__).
(b) a 1000-column Arrow stream (a pyarrow Table, 8 int64 rows per column): the C consumer
    moving the stream out of ``table.__arrow_c_stream__()`` into
    ``DfBuffer_ArrowStreamToDict`` (no Python object per column) vs the Python API
    (``dfbuffer.from_dataframe(table)``, and a Python per-column loop
    ``column_to_ndarray(table.column(i))``).  Overhead per column = (time - pyarrow's
    export alone, measured by a C function that reads and releases the stream) / ncols.

Every path runs interleaved with its peers; times are the best of the repeats, and only
ratios measured in the same run are compared.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import timeit
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
from _minimal_producer import _DF

import dfbuffer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from capi_build import build  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)
column_to_ndarray = dfbuffer.column_to_ndarray
from_dataframe = dfbuffer.from_dataframe


def interleaved(fns, repeat):
    """Best time of each fn over `repeat` interleaved rounds (each round starts one fn
    later, so that no path always runs right after the same peer)."""
    times = [[] for _ in fns]
    for r in range(repeat):
        for k in range(len(fns)):
            i = (k + r) % len(fns)
            fn = fns[i]
            gc.collect()
            t0 = timeit.default_timer()
            fn()
            times[i].append(timeit.default_timer() - t0)
    return [min(t) for t in times]


def walk_producer(x) -> None:
    for i in range(x.num_columns()):
        b = x.get_column(i).get_buffers()["data"][0]
        b.ptr  # noqa: B018
        b.bufsize  # noqa: B018
        b.__dlpack_device__()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    ncols, nrows, rep = (1000, 8, 5) if args.quick else (1000, 8, 25)
    with tempfile.TemporaryDirectory() as tmp:
        cons = build("capi_consumer", "consumer.c", Path(tmp), opt="-O2")
    print(f"load: {os.getloadavg()[0]:.2f} (1-min), {ncols} columns x {nrows} rows, best of {rep}")

    # (a) interchange frame
    x = _DF([np.arange(nrows, dtype=np.float64) + i for i in range(ncols)])
    got = cons.columns_loop(x)
    want = [column_to_ndarray(x.get_column(i)) for i in range(ncols)]
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))

    def py_loop():
        return [column_to_ndarray(x.get_column(i)) for i in range(x.num_columns())]

    t_walk, t_py, t_c, t_pyf, t_cf = interleaved(
        [
            lambda: walk_producer(x),
            py_loop,
            lambda: cons.columns_loop(x),
            lambda: from_dataframe(x),
            lambda: cons.from_dataframe(x),
        ],
        rep,
    )
    rows = []

    def row(name, t_c_, t_py_, base):
        c_over = (t_c_ - base) / ncols * 1e6
        py_over = (t_py_ - base) / ncols * 1e6
        rows.append((name, c_over, py_over, c_over / py_over))

    row("(a) per column: C ColumnToNdarray loop vs Python loop", t_c, t_py, t_walk)
    row("(a) whole frame: C FromDataFrame vs from_dataframe", t_cf, t_pyf, t_walk)
    print(f"(a) producer walk: {t_walk / ncols * 1e6:.2f} us/column")

    # (b) Arrow stream
    table = pa.table({f"c{i}": pa.array(np.arange(nrows) + i) for i in range(ncols)})
    d = cons.arrow_stream(table.__arrow_c_stream__())
    w = from_dataframe(table)
    assert list(d) == list(w) and all(np.array_equal(d[k], w[k]) for k in d)

    def py_cols():
        return [column_to_ndarray(table.column(i)) for i in range(table.num_columns)]

    assert cons.arrow_drain(table.__arrow_c_stream__()) == 1
    t_drain, t_cs, t_pys, t_pyc, t_built = interleaved(
        [
            lambda: cons.arrow_drain(table.__arrow_c_stream__()),
            lambda: cons.arrow_stream(table.__arrow_c_stream__()),
            lambda: from_dataframe(table),
            py_cols,
            lambda: cons.arrow_batch(ncols, nrows),
        ],
        rep,
    )
    row("(b) Arrow stream: C ArrowStreamToDict vs from_dataframe(table)", t_cs, t_pys, t_drain)
    row("(b) Arrow stream: C ArrowStreamToDict vs Python column loop", t_cs, t_pyc, t_drain)
    print(
        f"(b) pyarrow's export alone (read + release the stream in C): "
        f"{t_drain / ncols * 1e6:.2f} us/column; a batch built in C through "
        f"DfBuffer_ArrowToDict (building included): {t_built / ncols * 1e6:.2f} us/column"
    )

    print(f"{'':60s} {'C us/col':>9s} {'Py us/col':>9s} {'C/Py':>6s}")
    for name, c_over, py_over, ratio in rows:
        print(f"{name:60s} {c_over:9.3f} {py_over:9.3f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
