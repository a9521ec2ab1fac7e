"""to_matrix(..., out=) in a loop against np.copyto of the same data into the same output.

    PYTHONPATH=build/dev/stage python benchmarks/bench_matrix_out.py [ROWS] [COLS] [REPEATS] [DTYPE]

A frame of ROWS x COLS values of DTYPE (default 200,000 x 20 float64: 32 MB; DTYPE any NumPy
number type, the output's too) whose columns are the columns of one F-ordered array `src`
(a pandas frame over it, and a pyarrow table of its columns).
Each contender is called REPEATS times (default 41) in rotating order and the MEDIAN of its
wall and process-CPU times is printed (the CPU time says more on a loaded machine; a single
thread's fill is both), with the ratio to np.copyto(out, src) into the same `out`:

- to_matrix(frame, out=out): the caller's array, C- and F-ordered (no allocation);
- to_matrix(frame): a new array each call (large outputs come from to_matrix's kept
  block, see docs/api.md);
- np.copyto(np.empty(...), src): a new array each call from NumPy's allocator, what the
  kept block spares to_matrix.

threads=1 throughout except the last line (threads=None: the default for the size).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

import dfbuffer


def medians(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each callable, called in rotating order."""
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            w0, c0 = time.perf_counter(), time.process_time()
            x = fns[name]()
            w1, c1 = time.perf_counter(), time.process_time()
            del x
            wall[name].append(w1 - w0)
            cpu[name].append(c1 - c0)
    return {k: (float(np.median(wall[k])), float(np.median(cpu[k]))) for k in fns}


def main() -> None:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 200_000
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rep = int(sys.argv[3]) if len(sys.argv) > 3 else 41
    dtype = np.dtype(sys.argv[4] if len(sys.argv) > 4 else "float64")
    size = n * k * dtype.itemsize / 1e6
    print(f"load average {os.getloadavg()}  {n} x {k} {dtype} ({size:.0f} MB)")
    src = np.asfortranarray((np.random.default_rng(0).random((n, k)) * 100).astype(dtype))
    names = [f"c{j}" for j in range(k)]
    df = pd.DataFrame(src, columns=names, copy=False)
    table = pa.table({c: src[:, j] for j, c in enumerate(names)})
    print(f"{'case':<44} {'wall ms':>9} {'cpu ms':>9} {'wall x':>7} {'cpu x':>7}")
    for order in "CF":
        out = np.empty((n, k), dtype, order=order)
        fns: dict[str, Callable[[], Any]] = {
            "np.copyto(out, src)": lambda o=out: np.copyto(o, src),
            "to_matrix(pandas, out=out)": lambda o=out: dfbuffer.to_matrix(df, out=o, threads=1),
            "to_matrix(pyarrow, out=out)": lambda o=out: dfbuffer.to_matrix(
                table, out=o, threads=1
            ),
            "to_matrix(pandas) (new array)": lambda o=order: dfbuffer.to_matrix(
                df, order=o, threads=1
            ),
            "np.copyto(np.empty(...), src) (new array)": lambda o=order: np.copyto(
                np.empty((n, k), dtype, order=o), src
            ),
            "to_matrix(pandas, out=out, threads=None)": lambda o=out: dfbuffer.to_matrix(
                df, out=o
            ),
        }
        res = medians(fns, rep)
        w0, c0 = res["np.copyto(out, src)"]
        print(f"order={order}")
        for name, (w, c) in res.items():
            print(f"  {name:<42} {w * 1e3:9.3f} {c * 1e3:9.3f} {w / w0:6.2f}x {c / c0:6.2f}x")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
