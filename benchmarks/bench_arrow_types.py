"""The flat Arrow types against pyarrow and polars (the nested ones: bench_nested_types.py).

    PYTHONPATH=build/dev/stage python benchmarks/bench_arrow_types.py [ROWS] [REPEATS] [--cpu]

ROWS values (default 1e6, every 10th null) of int64, float64, bool, date32, timestamp,
duration, string, large string, string view, dictionary of strings, binary, large binary,
binary view, fixed-size binary, decimal128 / decimal256, time64, month-day-nano interval,
run-end encoded int64 (runs of 1, 2, 4, 10 and 100, with and without nulls; also against
np.repeat of the values over the run lengths, and np.full(ROWS, 7), one store pass over an
output of the same size: the floor of any decode; and, in the last column, dfbuffer against
pyarrow timed alone, the two in turn, since where the other contenders leave each output in
the cache moves these memory-bound ratios) and run-end strings, and
arrow.uuid.  dfbuffer.column_to_ndarray(x) is timed against pyarrow's
x.to_numpy(zero_copy_only=False) and, where polars converts the type, polars'
Series.to_numpy(); decimals="float64" against pyarrow.compute.cast(x, float64).to_numpy();
run-end decoding also against pyarrow.compute.run_end_decode(x).to_numpy().  arrow.uuid,
for which pyarrow's to_numpy and polars give bytes, also against what gives uuid.UUID
objects: pyarrow's to_pylist() and uuid.UUID(bytes=b) over the storage's to_pylist() (at
most 2 calls: seconds each, as pyarrow's interval row).
The contenders of a row are called REPEATS times (default 7) in rotating order, each result
freed before the next call; the MEDIAN of each is printed (wall time, or process CPU time
with --cpu: steadier on a loaded machine, and the same for these one-thread conversions).
Ratio = dfbuffer / peer (lower is better).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import dfbuffer

try:
    import polars as pl
except ImportError:  # polars is optional here
    pl = None


CLOCK = time.process_time if "--cpu" in sys.argv else time.perf_counter


def medians(fns: list[Callable[[], Any]], rep: int) -> list[float]:
    """The median time of each callable over `rep` calls in rotating order."""
    times: list[list[float]] = [[] for _ in fns]
    for r in range(rep):
        for i in [(r + k) % len(fns) for k in range(len(fns))]:
            t0 = CLOCK()
            x = fns[i]()
            t1 = CLOCK()
            del x
            times[i].append(t1 - t0)
    return [float(np.median(t)) for t in times]


def run_end(n: int, run: int, nulls: bool) -> pa.Array:
    """Run-end encoded int64 of `n` rows in runs of `run` (every 7th value null)."""
    runs = np.repeat(np.arange(n // run + 1), run)[:n]
    return pc.run_end_encode(pa.array(runs, mask=(runs % 7 == 3) if nulls else None))


def arrays(n: int) -> dict[str, pa.Array]:
    rng = np.random.default_rng(0)
    mask = np.arange(n) % 10 == 3
    lens = rng.integers(0, 24, n)
    offs = np.zeros(n + 1, np.int32)
    np.cumsum(lens, out=offs[1:])
    data = rng.integers(0, 256, int(offs[-1]), dtype=np.uint8)
    valid = pa.array(~mask).buffers()[1]
    binary = pa.Array.from_buffers(pa.binary(), n, [valid, pa.py_buffer(offs), pa.py_buffer(data)])
    ints = rng.integers(-(10**12), 10**12, n)
    dec = pa.array(ints, mask=mask).cast(pa.decimal128(20, 0)).cast(pa.decimal128(24, 4))
    us = rng.integers(0, 86_400 * 10**6, n)
    runs = np.repeat(np.arange(n // 10 + 1), 10)[:n]
    fixed = pa.Array.from_buffers(
        pa.binary(16), n, [valid, pa.py_buffer(rng.integers(0, 256, 16 * n, dtype=np.uint8))]
    )
    keys = rng.integers(0, 10**6, n).tolist()
    nulls = mask.tolist()
    words = pa.array([None if m else f"w{v}" for v, m in zip(keys, nulls, strict=True)])
    ts = pa.array(us, pa.timestamp("us"), mask=mask)
    return {
        "int64": pa.array(ints, mask=mask),
        "float64": pa.array(ints / 7.0, mask=mask),
        "bool": pa.array(ints % 3 == 0, mask=mask),
        "date32": pa.array((us // 86_400_000).astype(np.int32), pa.date32(), mask=mask),
        "timestamp[us]": ts,
        "duration[us]": pa.array(us, pa.duration("us"), mask=mask),
        "string": words,
        "large_string": words.cast(pa.large_string()),
        "string_view": words.cast(pa.string_view()),
        "dictionary<string>": pc.dictionary_encode(
            pa.array([None if m else f"c{v % 100}" for v, m in zip(keys, nulls, strict=True)])
        ),
        "binary": binary,
        "large_binary": binary.cast(pa.large_binary()),
        "binary_view": binary.cast(pa.binary_view()),
        "fixed_size_binary": fixed,
        "decimal128": dec,
        "decimal256": dec.cast(pa.decimal256(40, 4)),
        "time64us": pa.array(us, pa.time64("us"), mask=mask),
        "interval": pa.array(
            [None if m else (1, 2, 3) for m in mask.tolist()], pa.month_day_nano_interval()
        ),
        "run_end": pc.run_end_encode(pa.array(runs, mask=(runs % 7 == 3))),
        "run_end<string>": pc.run_end_encode(words.take(pa.array(runs))),
        "uuid": pa.ExtensionArray.from_storage(pa.uuid(), fixed),
    }


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--cpu"]
    n = int(float(args[0])) if args else 10**6
    rep = int(args[1]) if len(args) > 1 else 7
    clock = "process CPU" if CLOCK is time.process_time else "wall"
    print(f"load average {os.getloadavg()}  rows {n:.0e}  median of {rep}, {clock} time")
    print(f"{'type':<18} {'dfbuffer':>10} {'pyarrow':>10} {'ratio':>7} {'polars':>10} {'ratio':>7}")
    for name, arr in arrays(n).items():
        fns: list[Callable[[], Any]] = [
            lambda a=arr: dfbuffer.column_to_ndarray(a),
            lambda a=arr: a.to_numpy(zero_copy_only=False),
        ]
        note = ""
        if pl is not None and name == "decimal256":
            note = "  polars: refuses (panics on) decimal256"
        elif pl is not None:
            try:
                s = pl.Series(arr)
                s.to_numpy()
                fns.append(s.to_numpy)
            except BaseException as exc:  # noqa: BLE001 (polars panics on some types)
                note = f"  polars: {type(exc).__name__}"
        # pyarrow's DateOffset objects for an interval take seconds: 2 calls
        t = medians(fns, min(rep, 2) if name == "interval" else rep)
        line = f"{name:<18} {t[0] * 1e3:8.2f}ms {t[1] * 1e3:8.2f}ms {t[0] / t[1]:6.2f}x"
        if len(t) > 2:
            line += f" {t[2] * 1e3:8.2f}ms {t[0] / t[2]:6.2f}x"
        print(line + note, flush=True)
    head = f"{'run-end int64':<18} {'dfbuffer':>10} {'pyarrow':>10} {'ratio':>7}"
    print(f"{head} {'np.repeat':>10} {'ratio':>7} {'np.full':>10} {'ratio':>7} {'alone':>7}")
    for run in (1, 2, 4, 10, 100):
        for nulls in (False, True):
            ree = run_end(n, run, nulls)
            vals = np.asarray(ree.values.fill_null(0))
            lens = np.diff(np.asarray(ree.run_ends), prepend=0)
            t = medians(
                [
                    lambda a=ree: dfbuffer.column_to_ndarray(a),
                    lambda a=ree: a.to_numpy(zero_copy_only=False),
                    lambda v=vals, k=lens: np.repeat(v, k),
                    lambda: np.full(n, 7),
                ],
                rep,
            )
            # dfbuffer and pyarrow alone in turn: no other output between their calls
            alone = medians(
                [
                    lambda a=ree: dfbuffer.column_to_ndarray(a),
                    lambda a=ree: a.to_numpy(zero_copy_only=False),
                ],
                rep,
            )
            label = f"runs of {run}{', nulls' if nulls else ''}"
            print(
                f"{label:<18} {t[0] * 1e3:8.2f}ms {t[1] * 1e3:8.2f}ms {t[0] / t[1]:6.2f}x"
                f" {t[2] * 1e3:8.2f}ms {t[0] / t[2]:6.2f}x {t[3] * 1e3:8.2f}ms {t[0] / t[3]:6.2f}x"
                f" {alone[0] / alone[1]:6.2f}x",
                flush=True,
            )
    extra = arrays(n)
    dec = extra["decimal128"]
    t = medians(
        [
            lambda: dfbuffer.column_to_ndarray(dec, decimals="float64", nulls="fill"),
            lambda: pc.cast(dec, pa.float64()).to_numpy(zero_copy_only=False),
        ],
        rep,
    )
    print(f"decimals=float64   {t[0] * 1e3:8.2f}ms {t[1] * 1e3:8.2f}ms {t[0] / t[1]:6.2f}x  (cast)")
    ree = extra["run_end"]
    t = medians(
        [
            lambda: dfbuffer.column_to_ndarray(ree),
            lambda: pc.run_end_decode(ree).to_numpy(zero_copy_only=False),
        ],
        rep,
    )
    print(
        f"run_end decode     {t[0] * 1e3:8.2f}ms {t[1] * 1e3:8.2f}ms {t[0] / t[1]:6.2f}x"
        "  (run_end_decode)"
    )
    u = extra["uuid"]
    for label, peer_fn in (
        ("uuid to_pylist    ", u.to_pylist),
        (
            "uuid UUID(bytes=) ",
            lambda: [None if b is None else uuid.UUID(bytes=b) for b in u.storage.to_pylist()],
        ),
    ):
        t = medians([lambda: dfbuffer.column_to_ndarray(u), peer_fn], min(rep, 2))
        print(f"{label} {t[0] * 1e3:8.2f}ms {t[1] * 1e3:8.2f}ms {t[0] / t[1]:6.2f}x")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
