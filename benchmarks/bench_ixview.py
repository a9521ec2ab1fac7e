"""to_interchange on ixview.c (typed C view, re-based once) vs main's Python module.

    PYTHONPATH=build/dev/stage python benchmarks/bench_ixview.py [--rows N] [--repeat N]

The old module (src/dfbuffer/_arrow_interchange.py as of commit 8bfabc6, read with
``git show``, so this benchmark needs the git checkout) and the new one
(dfbuffer._arrow_interchange) are timed interleaved in one run on the same pyarrow table
(sliced at an odd row so that every bitmap needs re-basing).  Prints best-of-N times and
ratios new / old (< 1: the new one is faster), and dfbuffer.from_dataframe vs
pandas.api.interchange.from_dataframe, both over the new to_interchange.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa

import dfbuffer
from dfbuffer._arrow_interchange import to_interchange as new_ti

OLD_REV = "8bfabc6"  # the last commit before ixview.c


def _load_old():
    """The Python-only to_interchange of OLD_REV, as a module (its C helper
    ``_arrow_import`` is still in the extension)."""
    import subprocess
    import types

    src = subprocess.run(
        ["git", "show", f"{OLD_REV}:src/dfbuffer/_arrow_interchange.py"],
        cwd=os.path.dirname(os.path.abspath(__file__)), check=True,
        capture_output=True, text=True).stdout
    mod = types.ModuleType("_old_arrow_interchange")
    mod.__file__ = f"<{OLD_REV}:_arrow_interchange.py>"
    sys.modules[mod.__name__] = mod
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


old_ti = _load_old().to_interchange


def make_table(rows: int, batches: int) -> pa.Table:
    """20 columns of every kind, nulls in most, ``batches`` record batches, sliced at 3."""
    rng = np.random.default_rng(0)
    cols = {}
    for k in range(4):
        v = rng.integers(-1000, 1000, rows)
        cols[f"i{k}"] = pa.array(v, mask=rng.random(rows) < 0.1)
        cols[f"f{k}"] = pa.array(rng.random(rows), mask=rng.random(rows) < 0.1)
        cols[f"b{k}"] = pa.array(rng.random(rows) < 0.5, mask=rng.random(rows) < 0.1)
        cols[f"s{k}"] = pa.array([f"s{x}" for x in v], mask=rng.random(rows) < 0.1)
        cols[f"c{k}"] = pa.array([f"cat{x % 20}" for x in v]).dictionary_encode()
    t = pa.table(cols)
    size = (rows + batches - 1) // batches
    return pa.Table.from_batches(t.to_batches(max_chunksize=size)).slice(3)


def access(ti, t, times: int = 3) -> None:
    """Every column's dtype, offset, null count and buffers, ``times`` times."""
    x = ti(t)
    for _ in range(times):
        for c in x.get_columns():
            c.dtype  # noqa: B018
            c.offset  # noqa: B018
            c.null_count  # noqa: B018
            if c.num_chunks() == 1:
                c.get_buffers()
            else:
                for ch in c.get_chunks():
                    ch.get_buffers()
                    ch.offset  # noqa: B018


def split(ti, t, n: int) -> None:
    """get_chunks(n) of the frame, buffers of every piece."""
    for df in ti(t).get_chunks(n):
        for c in df.get_columns():
            c.get_buffers()


def best_interleaved(fns: dict, repeat: int) -> dict:
    """Best time per contender, the contenders run alternately in each round."""
    out = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            gc.collect()
            t0 = time.perf_counter()
            fn()
            out[k] = min(out[k], time.perf_counter() - t0)
    return out


def run(t: pa.Table, batches: int, repeat: int) -> None:
    """Time every case on ``t`` and print the ratios."""
    # the old and new views agree before anything is timed
    a = dfbuffer.from_dataframe(old_ti(t))
    b = dfbuffer.from_dataframe(new_ti(t))
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(np.ma.getmaskarray(a[k]), np.ma.getmaskarray(b[k]))
    cases = {
        "to_interchange + buffer access x3": (lambda ti: lambda: access(ti, t)),
        "get_chunks(16) + buffers": (lambda ti: lambda: split(ti, t, 16 * batches)),
        "dfbuffer.from_dataframe(to_interchange(t))":
            (lambda ti: lambda: dfbuffer.from_dataframe(ti(t))),
        "pandas from_dataframe(to_interchange(t))":
            (lambda ti: lambda: pd.api.interchange.from_dataframe(ti(t))),
    }
    print(f"\n{t.num_columns} columns x {t.num_rows} rows, {batches} batch(es), "
          "sliced at row 3")
    for name, make in cases.items():
        r = best_interleaved({"old": make(old_ti), "new": make(new_ti)}, repeat)
        print(f"  {name:<44} old {r['old'] * 1e3:8.2f} ms  new {r['new'] * 1e3:8.2f} ms"
              f"  new/old {r['new'] / r['old']:.2f}")
    r = best_interleaved({
        "dfbuffer": lambda: dfbuffer.from_dataframe(new_ti(t)),
        "pandas": lambda: pd.api.interchange.from_dataframe(new_ti(t)),
    }, repeat)
    print(f"  {'dfbuffer.from_dataframe / pandas from_dataframe':<44} "
          f"{r['dfbuffer'] * 1e3:8.2f} ms / {r['pandas'] * 1e3:8.2f} ms"
          f"  = {r['dfbuffer'] / r['pandas']:.2f}")



def print_pair(name: str, t: pa.Table, repeat: int) -> None:
    """pandas from_dataframe over the old and the new to_interchange, interleaved."""
    r = best_interleaved({
        "old": lambda: pd.api.interchange.from_dataframe(old_ti(t)),
        "new": lambda: pd.api.interchange.from_dataframe(new_ti(t)),
    }, repeat)
    print(f"  {name:<44} old {r['old'] * 1e3:8.2f} ms  new {r['new'] * 1e3:8.2f} ms"
          f"  new/old {r['new'] / r['old']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"load: {os.getloadavg()}")
    for batches in (1, 8):
        run(make_table(args.rows, batches), batches, args.repeat)
    # pandas' own work (str objects) dominates its from_dataframe: per column kind
    t = make_table(args.rows // 4, 1)
    print(f"\npandas from_dataframe(to_interchange(t)) per column kind, {t.num_rows} rows")
    for cols in (["s0", "s1"], ["c0", "c1"], ["i0", "f0", "b0"]):
        print_pair(" ".join(cols), t.select(cols), args.repeat + 4)


if __name__ == "__main__":
    main()
