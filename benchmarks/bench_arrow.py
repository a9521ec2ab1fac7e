"""Benchmark dfbuffer's Arrow path against the peers' own zero-copy exports.

    PYTHONPATH=build/dev/stage python benchmarks/bench_arrow.py [--cols N] [--rows N]

Prints the best-of-N time of each contender and the ratio dfbuffer / peer
(< 1 means dfbuffer is faster), measured in one run on the same data.
"""

from __future__ import annotations

import argparse
import gc
import time
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa

import dfbuffer
from dfbuffer import _interchange


def best(fns, repeat: int, number: int) -> list[float]:
    """Best mean time per call of each of ``fns`` over ``repeat`` rounds of
    ``number`` calls, the fns timed in turn in every round (so load changes on
    a busy machine hit all of them alike)."""
    times = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            times[i] = min(times[i], (time.perf_counter() - t0) / number)
    return times


def arrow_entry(table):
    """dfbuffer.from_dataframe if it takes the Arrow path for ``table`` (the
    result's base chain ends in an ARROW Buffer), else the private Arrow entry
    (convert.c not dispatching yet).  Returns (function, label)."""
    try:
        arr = next(iter(dfbuffer.from_dataframe(table).values()))
        while arr is not None and not isinstance(arr, dfbuffer.Buffer):
            arr = getattr(arr, "base", None)
        if arr is not None and arr.native == dfbuffer.NativeFormat.ARROW:
            return dfbuffer.from_dataframe, "dfbuffer.from_dataframe"
    except TypeError:
        pass
    return _interchange._arrow_from_dataframe, "_arrow_from_dataframe (public dispatch not wired)"


def report(title: str, ours: float, peer: float, peer_name: str) -> None:
    print(f"{title}")
    print(f"  dfbuffer  {ours * 1e3:9.3f} ms")
    print(f"  {peer_name:<9} {peer * 1e3:9.3f} ms")
    print(f"  ratio dfbuffer/{peer_name} = {ours / peer:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cols", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    data = {f"c{i}": rng.random(args.rows) for i in range(args.cols)}
    print(f"{args.cols} float64 columns x {args.rows} rows; best of {args.repeat}"
          f" x {args.number}")

    # pyarrow table: Arrow memory (copied once into Arrow buffers)
    table = pa.table({k: pa.array(v).cast(pa.float64()) for k, v in data.items()})

    from_dataframe, label = arrow_entry(table)
    print(f"dfbuffer entry: {label}")

    def ours_pa():
        return from_dataframe(table)

    def peer_pa():
        return {name: col.to_numpy() for name, col in zip(table.column_names, table.columns,
                                                            strict=True)}

    def peer_pa_zc():
        return {name: col.chunk(0).to_numpy(zero_copy_only=True)
                for name, col in zip(table.column_names, table.columns, strict=True)}

    r = ours_pa()
    first = table.column_names[0]
    assert np.shares_memory(r[first], peer_pa_zc()[first])
    t_ours, t_zc, t_pa = best([ours_pa, peer_pa_zc, peer_pa], args.repeat, args.number)
    report("from_dataframe(pyarrow.Table) vs {name: chunk.to_numpy(zero_copy_only=True)}",
           t_ours, t_zc, "pyarrow")
    report("from_dataframe(pyarrow.Table) vs {name: chunked_array.to_numpy()}",
           t_ours, t_pa, "pyarrow")

    # polars frame
    frame = pl.DataFrame(data)

    def ours_pl():
        return from_dataframe(frame)

    def peer_pl():
        return {s.name: s.to_numpy() for s in frame.get_columns()}

    assert np.shares_memory(ours_pl()[first], peer_pl()[first])
    report("from_dataframe(polars.DataFrame) vs {s.name: s.to_numpy()}",
           *best([ours_pl, peer_pl], args.repeat, args.number), "polars")

    # the interchange protocol served over Arrow, read by pandas
    small = table.select(table.column_names[:100])

    def ours_ix():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.api.interchange.from_dataframe(dfbuffer.to_interchange(small))

    def peer_ix():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pd.api.interchange.from_dataframe(small.__dataframe__())

    report("pandas from_dataframe over to_interchange(table) vs table.__dataframe__()"
           " (100 columns)",
           *best([ours_ix, peer_ix], args.repeat, args.number), "pyarrow")


if __name__ == "__main__":
    main()
