"""dfbuffer.to_matrix against each library's own frame-to-matrix path.

Prints, for each case, the best-of-N time of every contender measured
interleaved in the same run, and the ratio to each case's peer:
polars ``to_numpy()``, pyarrow ``RecordBatch.to_tensor``, pandas
``to_numpy``.  Then the peak memory of one ``to_matrix`` call (tracemalloc,
which sees NumPy's allocations) against the output size.

    PYTHONPATH=build/dev/stage python benchmarks/bench_matrix.py [--rows N] [--repeat R]

``--sources`` times only the frame sources to_matrix reads in C besides Arrow producers:
a mapping of arrays and pandas frames with a categorical or an Arrow-backed column (run
it against two builds, alternating, to compare them).

Last, the first call of each side in fresh processes (alternating), where no allocator has
pages of an earlier output to hand back.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa

import dfbuffer


def best_of(fns: dict, repeat: int) -> dict:
    """Interleaved best-of-`repeat` (wall, process CPU) times (seconds) of each
    callable; the CPU time (every thread's) says more than the wall time on a
    loaded machine."""
    best = {name: (float("inf"), float("inf")) for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            c0 = time.process_time()
            t0 = time.perf_counter()
            res = fn()
            dt = time.perf_counter() - t0
            dc = time.process_time() - c0
            del res
            best[name] = (min(best[name][0], dt), min(best[name][1], dc))
    return best


def report(title: str, times: dict, peer: str) -> None:
    print(f"\n{title}")
    ref, cref = times[peer]
    for name, (t, c) in times.items():
        print(
            f"  {name:<42} {t * 1e3:9.1f} ms {t / ref:6.2f}x   cpu {c * 1e3:8.1f} ms "
            f"{c / cref:6.2f}x {peer}"
        )


def peak_memory(fn) -> tuple[int, int]:
    """(peak traced bytes during fn(), nbytes of its result (+ mask))."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    res = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    nbytes = res.nbytes + (res.mask.nbytes if isinstance(res, np.ma.MaskedArray) else 0)
    return peak, nbytes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--cols", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sources", action="store_true",
                    help="only the mapping and pandas-extension-column cases")
    args = ap.parse_args()
    n, k = args.rows, args.cols
    if args.sources:
        sources(n, k, args.repeat)
        return
    print(f"to_matrix benchmark: {k} x {n} float64; cpu_count={os.cpu_count()}")
    print(f"load: {os.getloadavg()}")

    rng = np.random.default_rng(0)
    data = {f"c{i}": rng.random(n) for i in range(k)}
    pldf = pl.DataFrame(data)
    table = pa.table(data)
    batch = table.to_batches()[0] if table.num_rows else pa.record_batch(data)
    assert len(table.to_batches()) == 1

    # correctness of what is timed
    ref = np.column_stack(list(data.values()))
    assert np.array_equal(dfbuffer.to_matrix(table), ref)
    assert np.array_equal(dfbuffer.to_matrix(pldf, order="F"), ref)

    times = best_of(
        {
            "dfbuffer.to_matrix(polars, order='F')": lambda: dfbuffer.to_matrix(pldf, order="F"),
            "polars df.to_numpy()": lambda: pldf.to_numpy(),
        },
        args.repeat,
    )
    report("polars, column-major output", times, "polars df.to_numpy()")

    times = best_of(
        {
            "dfbuffer.to_matrix(pyarrow, order='C')": lambda: dfbuffer.to_matrix(batch),
            "dfbuffer.to_matrix(pyarrow, order='F')": lambda: dfbuffer.to_matrix(batch, order="F"),
            "pyarrow to_tensor(row_major=True)": lambda: batch.to_tensor(row_major=True),
            "pyarrow to_tensor(row_major=False)": lambda: batch.to_tensor(row_major=False),
            "np.column_stack(columns)": lambda: np.column_stack(
                [c.to_numpy() for c in batch.columns]
            ),
        },
        args.repeat,
    )
    report("pyarrow RecordBatch", times, "pyarrow to_tensor(row_major=True)")

    times = best_of(
        {
            "dfbuffer.to_matrix(polars, order='C')": lambda: dfbuffer.to_matrix(pldf),
            "polars df.to_numpy(order='c')": lambda: pldf.to_numpy(order="c"),
        },
        args.repeat,
    )
    report("polars, row-major output", times, "polars df.to_numpy(order='c')")

    # 1000 x 1000 mixed int/float with nulls, from pandas
    m = 1000
    cols = {}
    for i in range(m):
        if i % 2:
            v = rng.random(m)
            v[rng.random(m) < 0.05] = np.nan
            cols[f"f{i}"] = v
        else:
            cols[f"i{i}"] = pd.array(rng.integers(0, 100, m), dtype="Int64")
            cols[f"i{i}"][rng.random(m) < 0.05] = pd.NA
    pdf = pd.DataFrame(cols)
    expect = pdf.to_numpy(dtype="float64", na_value=np.nan)
    got = dfbuffer.to_matrix(pdf)
    assert np.array_equal(got, expect, equal_nan=True)
    ptab = pa.table(pdf)
    assert np.array_equal(dfbuffer.to_matrix(ptab), expect, equal_nan=True)
    times = best_of(
        {
            "dfbuffer.to_matrix(pandas)": lambda: dfbuffer.to_matrix(pdf),
            "pandas to_numpy(float64, na_value=nan)": lambda: pdf.to_numpy(
                dtype="float64", na_value=np.nan
            ),
            "pa.table(pdf) (pandas' Arrow export alone)": lambda: pa.table(pdf),
            "dfbuffer.to_matrix(pa.table(pdf) made before)": lambda: dfbuffer.to_matrix(ptab),
        },
        args.repeat,
    )
    report(
        "pandas 1000 x 1000 mixed Int64/float64 with nulls",
        times,
        "pandas to_numpy(float64, na_value=nan)",
    )

    print("\npeak traced memory of one call / output bytes")
    for label, fn in [
        ("to_matrix(pyarrow 50 x 1e6, order='C')", lambda: dfbuffer.to_matrix(batch)),
        ("to_matrix(polars 50 x 1e6, order='F')", lambda: dfbuffer.to_matrix(pldf, order="F")),
        ("to_matrix(pandas 1000 x 1000 nulls)", lambda: dfbuffer.to_matrix(pdf)),
        ("to_matrix(pa.table(pandas 1000 x 1000))", lambda: dfbuffer.to_matrix(ptab)),
        (
            "to_matrix(pandas 1000 x 1000, nulls='mask')",
            lambda: dfbuffer.to_matrix(pdf, nulls="mask"),
        ),
    ]:
        peak, nbytes = peak_memory(fn)
        print(f"  {label:<46} {peak / nbytes:6.3f}  ({peak:,} / {nbytes:,} bytes)")

    first_calls(n, k)
    print(f"load: {os.getloadavg()}")


def sources(n: int, k: int, repeat: int) -> None:
    """to_matrix of a mapping of `k` float64 arrays and a masked array, and of pandas
    frames of `k` float64 columns and one categorical or Arrow-backed column, against
    np.column_stack / pandas to_numpy."""
    print(f"to_matrix sources: {k} x {n} float64 + 1; load: {os.getloadavg()}")
    rng = np.random.default_rng(0)
    data = {f"c{i}": rng.random(n) for i in range(k)}
    data["m"] = np.ma.MaskedArray(rng.random(n), mask=rng.random(n) < 0.05)
    ref = np.column_stack([np.ma.filled(v, np.nan) for v in data.values()])
    assert np.array_equal(dfbuffer.to_matrix(data), ref, equal_nan=True)
    times = best_of(
        {
            "dfbuffer.to_matrix(mapping)": lambda: dfbuffer.to_matrix(data),
            "np.column_stack(filled values)": lambda: np.column_stack(
                [np.ma.filled(v, np.nan) for v in data.values()]),
        },
        repeat,
    )
    report("mapping of arrays (one masked)", times, "np.column_stack(filled values)")
    base = {f"c{i}": rng.random(n) for i in range(k)}
    extra = {
        "categorical": pd.Categorical.from_codes(rng.integers(0, 8, n), list(range(8))),
        "float64[pyarrow]": pd.array(rng.random(n), dtype="float64[pyarrow]"),
    }
    for label, col in extra.items():
        pdf = pd.DataFrame({**base, "x": col})
        expect = pdf.to_numpy(dtype="float64") if label != "categorical" else np.column_stack(
            [pdf[c].to_numpy() for c in base] + [col.codes.astype("float64")])
        assert np.array_equal(dfbuffer.to_matrix(pdf, dtype="float64"), expect)
        times = best_of(
            {
                "dfbuffer.to_matrix(pandas, dtype=float64)": lambda pdf=pdf: dfbuffer.to_matrix(
                    pdf, dtype="float64"),
                "pandas to_numpy(float64)": lambda pdf=pdf: pdf.to_numpy(dtype="float64"),
            },
            repeat,
        )
        report(f"pandas {k} float64 + one {label} column", times, "pandas to_numpy(float64)")


FIRST_CALL = """
import sys, time, numpy as np, polars as pl, dfbuffer
rng = np.random.default_rng(0)
df = pl.DataFrame({f"c{i}": rng.random(%d) for i in range(%d)})
t0 = time.perf_counter()
df.to_numpy() if sys.argv[1] == "polars" else dfbuffer.to_matrix(df, order="F")
print(time.perf_counter() - t0)
"""


def first_calls(n: int, k: int, runs: int = 3) -> None:
    code = FIRST_CALL % (n, k)
    got: dict = {"polars": [], "dfbuffer": []}
    for _ in range(runs):
        for who in got:
            out = subprocess.run(
                [sys.executable, "-c", code, who], capture_output=True, text=True, check=True
            )
            got[who].append(float(out.stdout))
    print("\nfirst call in a fresh process, order='F' vs polars to_numpy() (each run)")
    for who, ts in got.items():
        print(f"  {who:<10} " + "  ".join(f"{t * 1e3:7.1f} ms" for t in ts))
    ratios = [a / b for a, b in zip(got["dfbuffer"], got["polars"], strict=True)]
    print("  ratios     " + "  ".join(f"{r:7.2f}x  " for r in ratios))


if __name__ == "__main__":
    main()
