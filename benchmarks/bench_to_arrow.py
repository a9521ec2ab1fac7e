"""dfbuffer.to_arrow + a consumer vs the consumers' own conversions of a pandas frame.

    PYTHONPATH=build/dev/stage python benchmarks/bench_to_arrow.py [--rows N] [--repeat N]

One run, interleaved, best of N, on the same frames:

* a numeric pandas frame (10 float64 + 10 int64 columns): ``pa.table(to_arrow(df))`` vs
  ``pa.table(df)``, and ``pl.DataFrame(to_arrow(df))`` vs ``pl.from_pandas(df)``;
* pandas' interchange object of that frame (an interchange-only producer):
  ``pa.table(to_arrow(x))`` vs ``pyarrow.interchange.from_dataframe(x)``;
* a pyarrow table with strings and nulls: ``pa.table(to_arrow(t))`` vs ``pa.table(t)``
  (the cost of re-exporting Arrow through dfbuffer);
* a pyarrow table of nested and view columns (list, struct, map, dense union, run-end
  encoded, string view, dictionary), in 16 batches: ``pa.table(to_arrow(t))`` and
  ``pa.table(to_interchange(t))`` vs ``pa.table(t)`` (the node-for-node re-export).

Prints the times and the ratios dfbuffer / peer (< 1: dfbuffer's path is faster).
"""

from __future__ import annotations

import argparse
import gc
import time
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.interchange

import dfbuffer


def best(fn, repeat: int) -> float:
    """Best-of-``repeat`` wall time of ``fn()`` in seconds (gc off while timing)."""
    fn()
    out = float("inf")
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            out = min(out, time.perf_counter() - t0)
    finally:
        gc.enable()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.rows
    df = pd.DataFrame({**{f"f{i}": rng.random(n) for i in range(10)},
                       **{f"i{i}": rng.integers(0, 1000, n) for i in range(10)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = df.__dataframe__()
    t = pa.table({"s": pa.array([f"s{i % 97}" for i in range(n)]),
                  "v": pa.array(rng.random(n), mask=rng.random(n) < 0.1)})
    k = max(n // 16, 1)
    ints = pa.array(rng.integers(0, 1000, k))
    offs = pa.array(np.arange(0, k + 1, dtype=np.int32))
    nested = pa.table({
        "l": pa.ListArray.from_arrays(offs, ints),
        "st": pa.StructArray.from_arrays([ints, ints], ["a", "b"]),
        "m": pa.MapArray.from_arrays(offs, pa.array([f"k{i % 7}" for i in range(k)]), ints),
        "u": pa.UnionArray.from_dense(pa.array(np.zeros(k, dtype=np.int8)),
                                      pa.array(np.arange(k, dtype=np.int32)), [ints]),
        "r": pa.RunEndEncodedArray.from_arrays(pa.array(np.arange(1, k + 1, dtype=np.int32)),
                                              ints),
        "sv": pa.array([f"string view {i % 97:>20}" for i in range(k)], pa.string_view()),
        "d": pa.array([f"c{i % 13}" for i in range(k)]).dictionary_encode(),
    })
    nested = pa.Table.from_batches(nested.to_batches() * 16)
    cases = [
        ("pandas frame -> pyarrow", lambda: pa.table(dfbuffer.to_arrow(df)),
         lambda: pa.table(df)),
        ("pandas interchange object -> pyarrow", lambda: pa.table(dfbuffer.to_arrow(x)),
         lambda: pyarrow.interchange.from_dataframe(x)),
        ("pyarrow table -> pyarrow", lambda: pa.table(dfbuffer.to_arrow(t)),
         lambda: pa.table(t)),
        ("nested pyarrow table -> pyarrow", lambda: pa.table(dfbuffer.to_arrow(nested)),
         lambda: pa.table(nested)),
        ("nested, to_interchange -> pyarrow",
         lambda: pa.table(dfbuffer.to_interchange(nested)), lambda: pa.table(nested)),
    ]
    try:
        import polars as pl

        cases.insert(1, ("pandas frame -> polars", lambda: pl.DataFrame(dfbuffer.to_arrow(df)),
                         lambda: pl.from_pandas(df)))
    except ImportError:
        pass
    print(f"rows={n} repeat={args.repeat}")
    print(f"{'case':40s} {'dfbuffer ms':>12s} {'peer ms':>10s} {'ratio':>8s}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, ours, peer in cases:
            a = best(ours, args.repeat)
            b = best(peer, args.repeat)
            print(f"{name:40s} {a * 1e3:12.3f} {b * 1e3:10.3f} {a / b:8.3f}")


if __name__ == "__main__":
    main()
