"""str objects from string_view and large_string columns against pyarrow.

    PYTHONPATH=build/dev/stage python benchmarks/bench_string_views.py [ROWS] [REPEATS]

ROWS strings (default 1e6) of 50-150 ASCII characters.  column_to_ndarray(x) and
x.to_numpy(zero_copy_only=False) are timed alternately, each result freed before the
next call, best of REPEATS (default 7).  Ratio = dfbuffer / pyarrow (lower is better).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pyarrow as pa

import dfbuffer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from producers import long_large_strings  # noqa: E402


def timed(f) -> float:
    t0 = time.perf_counter()
    x = f()
    t1 = time.perf_counter()
    del x
    return t1 - t0


def main() -> None:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**6
    rep = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    rng = np.random.default_rng(0)
    large = long_large_strings(rng, n)
    views = large.cast(pa.string_view())
    print(f"load average {os.getloadavg()}")
    for name, arr in [("string_view", views), ("large_string", large)]:
        assert dfbuffer.column_to_ndarray(arr)[7] == arr[7].as_py()
        bo = bp = float("inf")
        for _ in range(rep):
            bo = min(bo, timed(lambda a=arr: dfbuffer.column_to_ndarray(a)))
            bp = min(bp, timed(lambda a=arr: a.to_numpy(zero_copy_only=False)))
        print(
            f"{name:<12} n={n:.0e}  dfbuffer {bo * 1e3:8.1f} ms  "
            f"pyarrow {bp * 1e3:8.1f} ms  ratio {bo / bp:.2f}x  (goal <= 0.8x)",
            flush=True,
        )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
