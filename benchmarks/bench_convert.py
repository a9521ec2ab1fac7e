"""Converters benchmark: dfbuffer vs the peers, ratios measured in one run.

    PYTHONPATH=build/dev/stage python benchmarks/bench_convert.py [--big] [--quick]

(a) one buffer to an ndarray: dfbuffer.buffer_to_ndarray vs pandas'
    interchange buffer_to_ndarray, vs the seed's ctypes prototype
    (convert_column_to_ndarray of the upstream discussion, reimplemented below), and
    vs np.from_dlpack on a plain ndarray;
(b) from_dataframe on a 1000 x 1000 float64 pandas frame vs
    pandas.api.interchange.from_dataframe, and the consumer overhead per
    column (dfbuffer minus a pure-Python walk of the producer);
(c) a 1e6-row string column with nulls: column_to_ndarray vs pandas'
    interchange consumer;
(d) unpacking 1e7 bits: a bit-packed Arrow bool column through
    column_to_ndarray vs np.unpackbits(bitorder="little") on the same buffer;
(e) with --big: peak memory growth converting a 1 GiB numeric column.

Every time is the best of several timeit repeats; only ratios are compared.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import resource
import sys
import timeit
import tracemalloc
import warnings

import numpy as np
from _minimal_producer import _DF, _Col

import dfbuffer

warnings.filterwarnings("ignore", category=DeprecationWarning)

# Bound once, as the peers' functions are: until dfbuffer/__init__.py imports
# them, every `dfbuffer.<name>` goes through the module __getattr__ (an
# import statement and two attribute look-ups, about 3 µs).
buffer_to_ndarray = dfbuffer.buffer_to_ndarray
column_to_ndarray = dfbuffer.column_to_ndarray
from_dataframe = dfbuffer.from_dataframe

import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
from pandas.api.interchange import from_dataframe as pandas_from_dataframe  # noqa: E402
from pandas.core.interchange.from_dataframe import (  # noqa: E402
    buffer_to_ndarray as pandas_buffer_to_ndarray,
)


def best_alternating(fns, number: int, repeat: int = 5) -> list[float]:
    """Best time of one call of each fn, in seconds: every round times
    ``number`` calls of each fn in turn, so load hits all of them alike."""
    times = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            times[i] = min(times[i], timeit.timeit(fn, number=number) / number)
    return times


# --------------------------------------------------------------------------
# The seed's prototype (the pandas prototype quoted in dataframe-api gh-35 and
# analysed in PR #38), reimplemented: ctypes cast of ptr, no owner kept.


def seed_convert_column_to_ndarray(col) -> np.ndarray:
    if col.offset != 0:
        raise NotImplementedError("column.offset > 0 not handled yet")
    if col.describe_null[0] not in (0, 1):
        raise NotImplementedError("Null values represented as masks or sentinel values")
    kind, bitwidth = col.dtype[0], col.dtype[1]
    if kind not in (0, 1, 2, 20):
        raise RuntimeError("Not a boolean, integer or floating-point dtype")
    ints = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
    uints = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
    floats = {32: np.float32, 64: np.float64}
    np_dtypes = {0: ints, 1: uints, 2: floats, 20: {8: bool}}
    column_dtype = np_dtypes[kind][bitwidth]
    buf = col.get_buffers()["data"][0]
    ctypes_type = np.ctypeslib.as_ctypes_type(column_dtype)
    data_pointer = ctypes.cast(buf.ptr, ctypes.POINTER(ctypes_type))
    return np.ctypeslib.as_array(data_pointer, shape=(buf.bufsize // (bitwidth // 8),))


# --------------------------------------------------------------------------


class Row:
    def __init__(self, name, ours, peer, ratio, goal, ok, note=""):
        self.name, self.ours, self.peer = name, ours, peer
        self.ratio, self.goal, self.ok, self.note = ratio, goal, ok, note


def fmt_time(t: float) -> str:
    if t < 1e-6:
        return f"{t * 1e9:.0f} ns"
    if t < 1e-3:
        return f"{t * 1e6:.2f} µs"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


def bench_one_buffer(rows, quick):
    n = 1000
    arr = np.arange(n, dtype="f8")
    # a minimal buffer (plain attributes), so that the consumers are measured
    # and not the producer's properties; pandas' own buffer on an info line
    col = _Col(arr)
    buf = col._b
    dtype = (2, 64, "g", "=")
    num = 2000 if quick else 20000

    def ours():
        return buffer_to_ndarray(buf, dtype, offset=0, length=n)

    def pandas_():
        return pandas_buffer_to_ndarray(buf, dtype, offset=0, length=n)

    def seed():
        return seed_convert_column_to_ndarray(col)

    def dlpack():
        return np.from_dlpack(arr)

    assert np.array_equal(ours(), pandas_()) and np.array_equal(ours(), seed())
    t_ours, t_pd, t_seed, t_dl = best_alternating([ours, pandas_, seed, dlpack], num // 4)
    rows.append(
        Row(
            "(a) buffer_to_ndarray vs pandas",
            t_ours,
            t_pd,
            t_pd / t_ours,
            ">= 10x",
            t_pd / t_ours >= 10,
        )
    )
    rows.append(
        Row(
            "(a) vs seed prototype (column)",
            t_ours,
            t_seed,
            t_seed / t_ours,
            ">= 10x",
            t_seed / t_ours >= 10,
            "seed includes get_buffers()",
        )
    )
    rows.append(
        Row(
            "(a) vs np.from_dlpack(ndarray)",
            t_ours,
            t_dl,
            t_dl / t_ours,
            "<= 2x slower",
            t_ours <= 2 * t_dl,
        )
    )
    df = pd.DataFrame({"a": arr})
    pbuf, pdtype = df.__dataframe__().get_column(0).get_buffers()["data"]
    t_ours2, t_pd2 = best_alternating(
        [
            lambda: buffer_to_ndarray(pbuf, pdtype, offset=0, length=n),
            lambda: pandas_buffer_to_ndarray(pbuf, pdtype, offset=0, length=n),
        ],
        num // 4,
    )
    rows.append(
        Row(
            "(a) same on pandas' PandasBuffer",
            t_ours2,
            t_pd2,
            t_pd2 / t_ours2,
            "info",
            None,
            "includes PandasBuffer.ptr (builds __array_interface__)",
        )
    )


def interleaved(fns, repeat: int) -> list[float]:
    """Best time of one call of each fn, the fns run in turn in every round
    (so load changes on a busy machine hit all of them alike)."""
    return [min(ts) for ts in interleaved_all(fns, repeat)]


def interleaved_all(fns, repeat: int) -> list[list[float]]:
    """All the times of `interleaved`, per fn."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            gc.collect()
            t0 = timeit.default_timer()
            fn()
            times[i].append(timeit.default_timer() - t0)
    return times


def walk_producer(obj) -> None:
    """The producer's own cost: what any consumer must call to find the
    memory (get_column, get_buffers, ptr, bufsize, and the device, which a
    safe consumer must check), nothing more."""
    x = obj.__dataframe__()
    for i in range(x.num_columns()):
        b = x.get_column(i).get_buffers()["data"][0]
        b.ptr  # noqa: B018
        b.bufsize  # noqa: B018
        b.__dlpack_device__()




def bench_wide_frame(rows, quick):
    ncols, nrows = (200, 1000) if quick else (1000, 1000)
    rng = np.random.default_rng(0)
    arrays = [rng.random(nrows) for _ in range(ncols)]
    df = pd.DataFrame({f"c{i}": a for i, a in enumerate(arrays)})

    def ours():
        # the interchange path (a pandas frame itself takes the fast path)
        return from_dataframe(df.__dataframe__())

    def ours_arrow():
        return from_dataframe(df)

    def pandas_():
        return pandas_from_dataframe(df.__dataframe__())

    out = ours()
    assert np.array_equal(out["c7"], df["c7"].to_numpy())
    rep = 3 if quick else 9
    all_t = interleaved_all([lambda: walk_producer(df), ours, pandas_, ours_arrow], rep)
    t_walk, t_ours, t_pd, t_arrow = (min(ts) for ts in all_t)
    rows.append(
        Row(
            f"(b) from_dataframe(df) (pandas fast path) {ncols}x{nrows} f8 vs pandas (info)",
            t_arrow,
            t_pd,
            t_pd / t_arrow,
            "info",
            True,
        )
    )
    # run-to-run spread of the producer walk alone: the resolution of the
    # overhead estimate on this machine
    noise = (sorted(all_t[0])[1] - t_walk) / ncols * 1e6
    rows.append(
        Row(
            f"(b) from_dataframe {ncols}x{nrows} f8 vs pandas",
            t_ours,
            t_pd,
            t_pd / t_ours,
            "faster",
            t_ours < t_pd,
        )
    )
    over = (t_ours - t_walk) / ncols * 1e6
    over_pd = (t_pd - t_walk) / ncols * 1e6
    rows.append(
        Row(
            "(b) consumer overhead/col (pandas producer)",
            (t_ours - t_walk) / ncols,
            (t_pd - t_walk) / ncols,
            over_pd / over if over > 0 else None,
            "<= 1 µs",
            over <= 1.0,
            f"producer walk {t_walk / ncols * 1e6:.0f} µs/col, resolution ±{noise:.1f} µs; "
            f"dfbuffer {over:+.2f} µs, pandas {over_pd:+.1f} µs",
        )
    )
    # the same with a minimal producer whose own cost is ~1 µs per column
    cheap = _DF(arrays)
    t_walk2, t_ours2 = interleaved(
        [lambda: walk_producer(cheap), lambda: from_dataframe(cheap)], rep
    )
    over2 = (t_ours2 - t_walk2) / ncols * 1e6
    rows.append(
        Row(
            "(b) consumer overhead/col (minimal producer)",
            (t_ours2 - t_walk2) / ncols,
            None,
            None,
            "<= 1 µs",
            over2 <= 1.0,
            f"producer walk {t_walk2 / ncols * 1e6:.2f} µs/col, dfbuffer total "
            f"{t_ours2 / ncols * 1e6:.2f} µs/col",
        )
    )


def bench_strings(rows, quick):
    n = 100_000 if quick else 1_000_000
    for label, suffix, goal in (("ASCII", "", ">= 20x"), ("non-ASCII", "-é", "info")):
        vals = [None if i % 10 == 3 else f"s{i}{suffix}" for i in range(n)]
        arr = pa.array(vals, pa.string())
        x = pa.table({"s": arr}).__dataframe__()
        col = x.get_column(0)

        def ours(col=col):
            return column_to_ndarray(col)

        def pandas_(x=x):
            return pandas_from_dataframe(x)

        res = ours()
        assert res[5] == vals[5] and res.mask[3]
        t_ours, t_pd = interleaved([ours, pandas_], 2 if goal == "info" else 3)
        ok = t_pd / t_ours >= 20 if goal != "info" else None
        rows.append(
            Row(
                f"(c) {n:.0e} {label} strings w/ nulls vs pandas",
                t_ours,
                t_pd,
                t_pd / t_ours,
                goal,
                ok,
                "pyarrow producer" if goal != "info" else "",
            )
        )
    # the same through pandas' own producer (its get_buffers marshals the
    # strings in Python: both consumers pay it)
    pdf = pd.DataFrame({"s": pd.Series(vals, dtype=object)})
    pcol = pdf.__dataframe__().get_column(0)
    t_ours2, t_pd2 = interleaved(
        [lambda: column_to_ndarray(pcol), lambda: pandas_from_dataframe(pdf.__dataframe__())], 1
    )
    rows.append(
        Row(
            "(c) same, pandas object column producer",
            t_ours2,
            t_pd2,
            t_pd2 / t_ours2,
            "info",
            None,
            "includes pandas' producer marshalling",
        )
    )


def bench_bits(rows, quick):
    n = 1_000_000 if quick else 10_000_000
    rng = np.random.default_rng(1)
    arr = pa.array(rng.random(n) < 0.5)
    s = pd.Series(pd.arrays.ArrowExtensionArray(arr))
    col = pd.DataFrame({"b": s}).__dataframe__().get_column(0)
    assert col.dtype[1] == 1
    bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8)

    def ours():
        return column_to_ndarray(col)

    def npy():
        return np.unpackbits(bits, count=n, bitorder="little").view(bool)

    assert np.array_equal(ours(), npy())
    num = 3 if quick else 5
    t_ours, t_np = best_alternating([ours, npy], num, 5)
    rows.append(
        Row(
            f"(d) unpack {n:.0e} bits vs np.unpackbits",
            t_ours,
            t_np,
            t_np / t_ours,
            "not slower",
            t_ours <= t_np * 1.05,
        )
    )






def bench_big_memory(rows):
    n = (1 << 30) // 8
    a = np.ones(n, dtype="f8")  # touched: resident
    col = _Col(a)
    gc.collect()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    tracemalloc.start()
    res = column_to_ndarray(col)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert res.shape == (n,) and res[-1] == 1.0 and np.shares_memory(res, a)
    growth = max(peak, (rss1 - rss0) * 1024)
    rows.append(
        Row(
            "(e) peak memory, 1 GiB f8 column",
            growth,
            None,
            None,
            "< 1 MiB",
            growth < (1 << 20),
            f"tracemalloc peak {peak} B, ru_maxrss delta {(rss1 - rss0)} KiB",
        )
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="also (e): convert a 1 GiB column")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (smoke test)")
    args = ap.parse_args(argv)
    rows: list[Row] = []
    print(
        f"dfbuffer {dfbuffer.__version__}, numpy {np.__version__}, pandas {pd.__version__}, "
        f"pyarrow {pa.__version__}, Python {sys.version.split()[0]}"
    )
    bench_one_buffer(rows, args.quick)
    bench_wide_frame(rows, args.quick)
    bench_strings(rows, args.quick)
    bench_bits(rows, args.quick)
    if args.big:
        bench_big_memory(rows)
    w = max(len(r.name) for r in rows)
    print(f"{'benchmark':<{w}}  {'dfbuffer':>10}  {'peer':>10}  {'ratio':>8}  {'goal':>13}  result")
    for r in rows:
        ours = f"{r.ours / 1024:.1f} KiB" if r.name.startswith("(e)") else fmt_time(r.ours)
        peer = "" if r.peer is None else fmt_time(r.peer)
        ratio = "" if r.ratio is None else f"{r.ratio:.1f}x"
        res = "info" if r.ok is None else ("PASS" if r.ok else "MISS")
        print(f"{r.name:<{w}}  {ours:>10}  {peer:>10}  {ratio:>8}  {r.goal:>13}  {res}")
        if r.note:
            print(f"{'':<{w}}    ({r.note})")
    print("ratio = peer time / dfbuffer time (higher is better for dfbuffer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
