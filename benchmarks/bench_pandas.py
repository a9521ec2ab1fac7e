"""dfbuffer.pandas.from_dataframe vs pandas.api.interchange.from_dataframe,
and strings="stringdtype" vs strings="object".

    PYTHONPATH=build/dev/stage python benchmarks/bench_pandas.py [--quick]

(a) a 1000-column float64 frame (1000 rows) and (b) a 1e6-row mixed frame
(int64 with nulls, strings with nulls, a categorical, tz-aware timestamps),
each from three producers: a pandas interchange object (df.__dataframe__()),
a pyarrow Table, and dfbuffer.to_interchange(polars DataFrame).  Both
consumers get the same producer object; the two are timed interleaved
(9 times each) and the medians and their ratio are reported.
For interchange producers the time of the producer's own calls (get_columns,
every column's dtype, describe_null, offset, size, get_buffers, and each
buffer's ptr, bufsize, __dlpack_device__), which
any interchange consumer pays, is printed too (median of the same repeats).
(c) 1e6 short strings with 10 % nulls (a pyarrow string column):
column_to_ndarray(strings="stringdtype") vs strings="object", time and the
memory the result holds (tracemalloc).
(d) dfbuffer.from_dataframe of a 100 float64 column x 1e5 row frame with each
index kind (RangeIndex, Index, DatetimeIndex, MultiIndex) against the
``{c: df[c].to_numpy() for c in df}`` dict, interleaved; ratio = dfbuffer's
time / the dict's (below 1.0: dfbuffer is faster).
(e) dfbuffer.from_dataframe of a 1e5-row frame of the columns read from
pandas' own arrays (Period with NaT, Interval, Sparse float and int), each
column alone and all together, period="object" and "ordinal", against the
``{c: df[c].to_numpy() for c in df}`` dict (object Periods and Intervals,
dense values), interleaved; ``--special`` runs (e) only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import timeit
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa

import dfbuffer
import dfbuffer.pandas as dpd

warnings.filterwarnings("ignore")

pandas_from_dataframe = pd.api.interchange.from_dataframe


def best(fn, repeat: int) -> float:
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def pair(a, b, repeat: int) -> tuple[float, float]:
    """Median times of a and b, measured alternately."""
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(best(a, 1))
        tb.append(best(b, 1))
    return statistics.median(ta), statistics.median(tb)


def wide_frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.random((1000, 1000)), columns=[f"c{i}" for i in range(1000)])


def mixed_frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    ints = pd.array(rng.integers(0, 1000, n), dtype="Int64")
    ints[rng.random(n) < 0.1] = pd.NA
    words = np.array([f"w{i}" for i in range(1000)], dtype=object)
    strs = words[rng.integers(0, 1000, n)]
    strs[rng.random(n) < 0.1] = None
    cats = pd.Categorical.from_codes(rng.integers(0, 5, n), ["a", "b", "c", "d", "e"])
    ts = pd.to_datetime(rng.integers(0, 10**9, n), unit="s").tz_localize("UTC")
    ts = ts.tz_convert("Europe/Paris")
    return pd.DataFrame({"i": ints, "s": pd.array(strs, dtype="str"), "c": cats, "t": ts})


def producers(df: pd.DataFrame) -> dict[str, object]:
    return {
        "pandas __dataframe__": df.__dataframe__(),
        "pyarrow Table": pa.table(df),
        "to_interchange(polars)": dfbuffer.to_interchange(pl.from_pandas(df)),
    }


def producer_walk(ix) -> None:
    """What any interchange consumer must call on the producer: the columns
    (one get_columns() call, as dfbuffer.pandas fetches them), and every
    column's dtype, describe_null, offset, size and get_buffers, and the ptr,
    bufsize and __dlpack_device__ of each buffer it returns."""
    for c in ix.get_columns():
        c.dtype, c.describe_null, c.offset, c.size()
        for b in c.get_buffers().values():
            if b is not None:
                b[0].ptr, b[0].bufsize, b[0].__dlpack_device__()


def bench_frames(quick: bool) -> None:
    n = 10**5 if quick else 10**6
    rep = 3 if quick else 9
    for label, df in (("1000 float columns", wide_frame()), (f"{n:.0e}-row mixed", mixed_frame(n))):
        for pname, src in producers(df).items():
            ours = dpd.from_dataframe(src)
            theirs = pandas_from_dataframe(src)
            assert list(ours) == list(theirs)
            t_ours, t_pd = pair(
                lambda src=src: dpd.from_dataframe(src),
                lambda src=src: pandas_from_dataframe(src),
                rep,
            )
            extra = ""
            if hasattr(src, "get_column"):
                walk = lambda src=src: producer_walk(src)  # noqa: E731
                t_walk = statistics.median(best(walk, 1) for _ in range(rep))
                extra = (
                    f"  (the producer's own calls: {t_walk * 1e3:.2f} ms; bound pandas / "
                    f"those calls {t_pd / t_walk:.1f}x)"
                )
            print(
                f"{label:20s} {pname:24s} dfbuffer.pandas {t_ours * 1e3:9.2f} ms  "
                f"pandas {t_pd * 1e3:9.2f} ms  ratio {t_pd / t_ours:6.1f}x{extra}"
            )


def held_bytes(fn) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    res = fn()
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del res
    return held


def bench_strings(quick: bool) -> None:
    n = 10**5 if quick else 10**6
    rng = np.random.default_rng(2)
    vals = [f"s{i}" for i in range(n)]  # distinct, 2..7 bytes
    mask = rng.random(n) < 0.1
    arr = pa.array(vals, mask=mask)
    s = lambda: dfbuffer.column_to_ndarray(arr, strings="stringdtype")  # noqa: E731
    o = lambda: dfbuffer.column_to_ndarray(arr, strings="object")  # noqa: E731
    fs = dfbuffer.column_to_ndarray(arr, strings="stringdtype", nulls="fill")
    assert fs.tolist() == dfbuffer.column_to_ndarray(arr, nulls="fill").tolist()
    t_s, t_o = pair(s, o, 5)
    m_s, m_o = held_bytes(s), held_bytes(o)
    print(
        f"{n:.0e} short strings, 10% nulls: stringdtype {t_s * 1e3:8.2f} ms  "
        f"object {t_o * 1e3:8.2f} ms  ratio {t_o / t_s:5.1f}x;  memory held "
        f"stringdtype {m_s / 2**20:6.1f} MiB  object {m_o / 2**20:6.1f} MiB  "
        f"ratio {m_o / m_s:4.1f}x"
    )


def index_frames(n: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(3)
    base = pd.DataFrame(rng.random((n, 100)), columns=[f"c{i}" for i in range(100)])
    return {
        "RangeIndex": base,
        "Index": base.set_axis(pd.Index(np.arange(n) * 2)),
        "DatetimeIndex": base.set_axis(pd.date_range("2020-01-01", periods=n, freq="s")),
        "MultiIndex": base.set_axis(
            pd.MultiIndex.from_arrays([np.arange(n) % 7, np.arange(n)])),
    }


def bench_index_kinds(quick: bool) -> None:
    n = 10**5
    rep = 5 if quick else 15
    for kind, df in index_frames(n).items():
        ours = dfbuffer.from_dataframe(df)
        assert all(type(v) is np.ndarray for v in ours.values())
        t_ours, t_dict = pair(
            lambda df=df: dfbuffer.from_dataframe(df),
            lambda df=df: {c: df[c].to_numpy() for c in df},
            rep,
        )
        print(
            f"100 float cols x {n:.0e} rows, {kind:13s}  dfbuffer {t_ours * 1e3:7.3f} ms  "
            f"to_numpy dict {t_dict * 1e3:7.3f} ms  ratio {t_ours / t_dict:5.2f}x"
        )


def special_frame(n: int) -> pd.DataFrame:
    per = pd.period_range("2020-01-01", periods=n, freq="D").to_numpy()
    per[::10] = pd.NaT
    values = np.arange(n, dtype=np.float64)
    values[::3] = 0.0
    return pd.DataFrame({
        "period": pd.array(per, dtype="period[D]"),
        "interval": pd.arrays.IntervalArray.from_breaks(np.arange(n + 1)),
        "sparse_f": pd.arrays.SparseArray(values, fill_value=0.0),
        "sparse_i": pd.arrays.SparseArray(values.astype(np.int64), fill_value=0),
    })


def bench_special_columns(quick: bool) -> None:
    n = 10**5
    rep = 5 if quick else 11
    df = special_frame(n)
    cases = {c: df[[c]] for c in df.columns} | {"all four": df}
    for name, sub in cases.items():
        for period in ("object", "ordinal"):
            if period == "ordinal" and "period" not in sub:
                continue
            t_ours, t_dict = pair(
                lambda sub=sub, period=period: dfbuffer.from_dataframe(sub, period=period),
                lambda sub=sub: {c: sub[c].to_numpy() for c in sub},
                rep,
            )
            print(
                f"{name:9s} period={period:7s} {n:.0e} rows  dfbuffer {t_ours * 1e3:8.3f} ms  "
                f"to_numpy dict {t_dict * 1e3:8.3f} ms  ratio {t_ours / t_dict:5.2f}x"
            )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--special", action="store_true", help="(e) only")
    args = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores")
    bench_special_columns(args.quick)
    if args.special:
        return 0
    bench_index_kinds(args.quick)
    bench_strings(args.quick)
    bench_frames(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
