"""Threads benchmark: N threads each converting its own frame, throughput vs 1 thread.

    python benchmarks/bench_threads.py [--threads 1,2,4] [--quick]
    python benchmarks/bench_threads.py --gil-both   # free-threaded CPython only

Each of N threads converts a frame of its own (no data shared) again and again:
(a) from_dataframe on a pandas frame of 200 nullable and plain numeric columns (per-column
    work: protocol probes, dtype and mask decoding, array creation: C API calls that need
    the GIL where there is one);
(b) from_dataframe on a pyarrow table with a 20,000-row string column, strings="object"
    (one Python str object made per value);
(c) to_matrix (threads=1) on a pyarrow table of 16 float64 columns of 50,000 rows (the
    copy runs without the GIL already).
Each is followed by a peer doing the same work by the libraries' own means (pandas'
per-column to_numpy, pyarrow's to_numpy, np.column_stack), measured the same way: how
well the peer scales says what the interpreter and the machine allow.
The figure is the throughput of N threads (conversions per second, all threads together)
divided by that of 1 thread, both measured in the same run: N on a machine with at least
N free cores is the ideal.  With --gil-both (a free-threaded interpreter) the benchmark
runs itself twice, with PYTHON_GIL=0 and PYTHON_GIL=1, and prints both.  Best of
several rounds (each times every thread count in turn); only ratios are compared.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import threading
import time

import numpy as np
import pandas as pd
import pyarrow as pa

import dfbuffer

from_dataframe = dfbuffer.from_dataframe
to_matrix = dfbuffer.to_matrix


def pandas_frame() -> pd.DataFrame:
    n = 1000
    cols = {}
    for k in range(100):
        cols[f"f{k}"] = np.arange(n, dtype=np.float64) + k
        cols[f"m{k}"] = pd.array([None if i % 11 == 0 else i for i in range(n)], dtype="Int32")
    return pd.DataFrame(cols)


def string_table() -> pa.Table:
    n = 20_000
    return pa.table({"s": pa.array([None if i % 7 == 0 else f"v{i}" for i in range(n)])})


def float_table() -> pa.Table:
    n = 50_000
    return pa.table({f"c{k}": np.arange(n, dtype=np.float64) * k for k in range(16)})


WORKLOADS = {
    "from_dataframe, pandas 200 columns": (pandas_frame, lambda f: from_dataframe(f)),
    "  peer: pandas to_numpy per column": (
        pandas_frame,
        lambda f: {c: f[c].to_numpy() for c in f.columns},
    ),
    "from_dataframe, 20k strings to object": (
        string_table,
        lambda f: from_dataframe(f, strings="object"),
    ),
    "  peer: pyarrow to_numpy": (
        string_table,
        lambda f: f.column(0).to_numpy(zero_copy_only=False),
    ),
    "to_matrix, 16 x 50k float64": (float_table, lambda f: to_matrix(f, threads=1)),
    "  peer: np.column_stack of to_numpy": (
        float_table,
        lambda f: np.column_stack([c.to_numpy() for c in f.columns]),
    ),
}


def throughput(make, fn, nthreads: int, calls: int) -> float:
    """Conversions per second of `nthreads` threads each calling fn(own frame) `calls`
    times, started together."""
    frames = [make() for _ in range(nthreads)]
    for f in frames:
        fn(f)  # warm
    barrier = threading.Barrier(nthreads)
    spans: list[tuple[float, float]] = []

    def run(f) -> None:
        barrier.wait()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(f)
        spans.append((t0, time.perf_counter()))  # list.append is atomic

    threads = [threading.Thread(target=run, args=(f,)) for f in frames]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # from the first thread's start to the last one's end, as the threads saw them (a
    # clock read in the main thread after the barrier can come after the work began)
    dt = max(e for _, e in spans) - min(s for s, _ in spans)
    return nthreads * calls / dt


def gil_state() -> str:
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "GIL build"
    return "free-threaded, GIL " + ("on" if sys._is_gil_enabled() else "off")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2,4", help="thread counts (default 1,2,4)")
    ap.add_argument("--quick", action="store_true", help="fewer calls and repeats")
    ap.add_argument("--gil-both", action="store_true",
                    help="run with PYTHON_GIL=0 and =1 (free-threaded CPython)")
    args = ap.parse_args()
    if args.gil_both:
        if not sysconfig.get_config_var("Py_GIL_DISABLED"):
            sys.exit("--gil-both needs a free-threaded interpreter")
        argv = [sys.executable, __file__, "--threads", args.threads]
        argv += ["--quick"] if args.quick else []
        for gil in ("0", "1"):
            print(f"== PYTHON_GIL={gil}", flush=True)
            subprocess.run(argv, env={**os.environ, "PYTHON_GIL": gil}, check=True)
        return
    counts = [int(x) for x in args.threads.split(",")]
    repeat = 2 if args.quick else 5
    print(f"Python {sys.version.split()[0]} ({gil_state()}), {os.cpu_count()} CPUs, "
          f"dfbuffer {dfbuffer.__version__}")
    print(f"{'workload':40s}" + "".join(f"{f'{n} thr':>10s}" for n in counts)
          + "   (throughput / 1 thread's; 1 thread: calls/s)")
    for name, (make, fn) in WORKLOADS.items():
        # calls per thread: about 0.2 s of one thread's work
        f = make()
        fn(f)
        t0 = time.perf_counter()
        fn(f)
        one = max(time.perf_counter() - t0, 1e-5)
        calls = max(3, int((0.05 if args.quick else 0.2) / one))
        # the counts in turn in each round (load from elsewhere hits them alike)
        best = dict.fromkeys(counts, 0.0)
        for _ in range(repeat):
            for n in counts:
                best[n] = max(best[n], throughput(make, fn, n, calls))
        base = best[counts[0]] / counts[0] if counts[0] != 1 else best[1]
        cells = "".join(f"{best[n] / base:>9.2f}x" for n in counts)
        print(f"{name:40s}{cells}   ({base:.0f}/s)", flush=True)


if __name__ == "__main__":
    main()
