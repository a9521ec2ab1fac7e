"""column_to_ndarray and from_dataframe of one Series against the Series' own
``to_numpy()``, in the same run, paired.

A Series is a one-column frame (docs/api.md): reading one must not cost more than
the native call.  For pandas and polars Series of 1000 and 1e6 rows of float64,
int64 and nullable Int64 with nulls (every third value null), each statement is
timed in turn with its peer (``number`` calls each), ``repeat`` times; the figure
is the median of the paired ratios (ours / peer; below 1 dfbuffer is faster).

    PYTHONPATH=build/dev/stage python benchmarks/bench_series.py [--quick]

``--quick`` takes fewer repeats.  The peer of a nullable Int64 Series is its
``to_numpy()`` as well: pandas gives an object array of ints and ``pd.NA`` there
(slow), polars a float64 array with NaN.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np
import pandas as pd
import polars as pl

import dfbuffer


def _series(lib, kind, n):
    if kind == "float64":
        vals = np.arange(n, dtype=np.float64)
        return pd.Series(vals, name="a") if lib == "pandas" else pl.Series("a", vals)
    if kind == "int64":
        vals = np.arange(n, dtype=np.int64)
        return pd.Series(vals, name="a") if lib == "pandas" else pl.Series("a", vals)
    vals = [None if i % 3 == 0 else i for i in range(n)]
    if lib == "pandas":
        return pd.Series(vals, dtype="Int64", name="a")
    return pl.Series("a", vals, dtype=pl.Int64)


def _paired(ours, peer, number, repeat):
    """Median of ``repeat`` paired ratios, and the medians of each side (s/call)."""
    ratios, a, b = [], [], []
    for _ in range(repeat):
        t1 = timeit.timeit(ours, number=number) / number
        t2 = timeit.timeit(peer, number=number) / number
        ratios.append(t1 / t2)
        a.append(t1)
        b.append(t2)
    return statistics.median(ratios), statistics.median(a), statistics.median(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeat = 5 if args.quick else 15
    print(f"{'statement':58} {'ours':>10} {'to_numpy()':>10} {'ratio':>6}")
    for lib in ("pandas", "polars"):
        for kind in ("float64", "int64", "Int64-nulls"):
            for n in (1000, 1_000_000):
                s = _series(lib, kind, n)
                number = 2000 if n == 1000 else 20
                cases = [
                    ("column_to_ndarray", lambda s=s: dfbuffer.column_to_ndarray(s)),
                    ("from_dataframe", lambda s=s: dfbuffer.from_dataframe(s)),
                ]
                peer = lambda s=s: s.to_numpy()  # noqa: E731 - a call like ours
                for fname, ours in cases:
                    ratio, t1, t2 = _paired(ours, peer, number, repeat)
                    label = f"{fname}({lib} {kind} {n:.0e})"
                    print(f"{label:58} {t1 * 1e6:8.2f}us {t2 * 1e6:8.2f}us {ratio:6.2f}")


if __name__ == "__main__":
    main()
