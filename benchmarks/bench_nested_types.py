"""Nested Arrow types to NumPy against pyarrow and polars.

    PYTHONPATH=build/dev/stage python benchmarks/bench_nested_types.py [VALUES] [REPEATS]

VALUES child values (default 1e6, every 10th null) in lists of 10 (list, large_list,
list_view, map), fixed-size lists of 10 and a fixed_shape_tensor (zero-copy: timed
at VALUES / 10 too, to show O(1)), a struct of two fields and a sparse and a dense
union.  dfbuffer.from_dataframe, pyarrow's to_numpy(zero_copy_only=False) and
polars' to_numpy (where polars converts the type) are timed alternately, each result
freed before the next call, best of REPEATS (default 5).  Ratio = dfbuffer / peer
(lower is better).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow as pa
from bench_string_views import timed  # one timer for the benchmarks

import dfbuffer

try:
    import polars as pl
except ImportError:  # pragma: no cover - polars is optional here
    pl = None


def columns(n: int) -> dict[str, pa.Array]:
    """Arrays of n child values (every 10th null) for every nested family."""
    rng = np.random.default_rng(0)
    vals = pa.array(rng.random(n), mask=np.arange(n) % 10 == 3)
    rows = n // 10
    offs = pa.array(np.arange(0, rows * 10 + 1, 10, dtype=np.int32))
    valid = pa.array(np.arange(rows) % 10 != 7)
    lst = pa.ListArray.from_arrays(offs, vals, mask=pa.compute.invert(valid))
    keys = pa.array(np.arange(n) % 1000)
    out = {
        "list": lst,
        "large_list": lst.cast(pa.large_list(pa.float64())),
        "list_view": pa.ListViewArray.from_arrays(
            offs.slice(0, rows), pa.array(np.full(rows, 10, np.int32)), vals,
            mask=pa.compute.invert(valid),
        ),
        "map": pa.MapArray.from_arrays(offs, keys, vals),
        "fixed_size_list": pa.FixedSizeListArray.from_arrays(vals, 10),
        "fixed_shape_tensor": pa.FixedShapeTensorArray.from_numpy_ndarray(
            rng.random((rows, 2, 5))
        ),
        "struct": pa.StructArray.from_arrays(
            [vals, pa.array(np.arange(n))], ["x", "i"], mask=pa.array(np.arange(n) % 10 == 5)
        ),
        "sparse_union": pa.UnionArray.from_sparse(
            pa.array((np.arange(n) % 2).astype(np.int8)), [vals, pa.array(np.arange(n))]
        ),
        "dense_union": pa.UnionArray.from_dense(
            pa.array((np.arange(n) % 2).astype(np.int8)),
            pa.array((np.arange(n) // 2).astype(np.int32)),
            [vals.slice(0, (n + 1) // 2), pa.array(np.arange((n + 1) // 2))],
        ),
    }
    return out


def peer_polars(arr: pa.Array):
    if pl is None:
        return None
    try:
        s = pl.from_arrow(arr)
        s.to_numpy()
    except Exception:
        return None
    return s


def main() -> None:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**6
    rep = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print(f"load average {os.getloadavg()}")
    for size in (n // 10, n):
        for name, arr in columns(size).items():
            table = pa.table({"c": arr})
            conv = lambda t=table: dfbuffer.from_dataframe(t)["c"]  # noqa: E731
            try:
                arr.to_numpy(zero_copy_only=False)
                pa_ok = True
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid, NotImplementedError):
                pa_ok = False
            s = peer_polars(arr)
            bo = bp = bq = float("inf")
            for _ in range(rep):
                bo = min(bo, timed(conv))
                if pa_ok:
                    bp = min(bp, timed(lambda a=arr: a.to_numpy(zero_copy_only=False)))
                if s is not None:
                    bq = min(bq, timed(lambda s=s: s.to_numpy()))
            pa_txt = f"pyarrow {bp * 1e3:8.2f} ms ratio {bo / bp:5.2f}x" if pa_ok else (
                "pyarrow  refuses" + " " * 17
            )
            pl_txt = f"polars {bq * 1e3:8.2f} ms ratio {bo / bq:5.2f}x" if s is not None else (
                "polars refuses"
            )
            print(
                f"{name:<18} n={size:.0e}  dfbuffer {bo * 1e3:8.2f} ms  {pa_txt}  {pl_txt}",
                flush=True,
            )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
