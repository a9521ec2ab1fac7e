"""The flat Arrow types beyond numbers and strings against pyarrow and polars.

    PYTHONPATH=build/dev/stage python benchmarks/bench_arrow_types.py [ROWS] [REPEATS]

ROWS values (default 1e6, every 10th null) of binary, large binary, binary view,
fixed-size binary, decimal128 / decimal256, time64, month-day-nano interval, run-end
encoded int64 (runs of 10) and arrow.uuid.  dfbuffer.column_to_ndarray(x) is timed
against pyarrow's x.to_numpy(zero_copy_only=False) and, where polars converts the type,
polars' Series.to_numpy(); decimals="float64" against
pyarrow.compute.cast(x, float64).to_numpy(); run-end decoding also against
pyarrow.compute.run_end_decode(x).to_numpy().  arrow.uuid, for which pyarrow's to_numpy
and polars give bytes, also against what gives uuid.UUID objects: pyarrow's to_pylist()
and uuid.UUID(bytes=b) over the storage's to_pylist() (best of at most 2: seconds each).
Each result is freed before the next call, best of REPEATS (default 5).
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


def timed(f: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    x = f()
    t1 = time.perf_counter()
    del x
    return t1 - t0


def best(f: Callable[[], Any], rep: int) -> float:
    return min(timed(f) for _ in range(rep))


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
    return {
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
        "uuid": pa.ExtensionArray.from_storage(pa.uuid(), fixed),
    }


def main() -> None:
    n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**6
    rep = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    print(f"load average {os.getloadavg()}  rows {n:.0e}")
    print(f"{'type':<18} {'dfbuffer':>10} {'pyarrow':>10} {'ratio':>7} {'polars':>10} {'ratio':>7}")
    for name, arr in arrays(n).items():
        ours = best(lambda a=arr: dfbuffer.column_to_ndarray(a), rep)
        pa_t = best(lambda a=arr: a.to_numpy(zero_copy_only=False), rep)
        line = f"{name:<18} {ours * 1e3:8.2f}ms {pa_t * 1e3:8.2f}ms {ours / pa_t:6.2f}x"
        if pl is not None and name == "decimal256":
            line += "  polars: refuses (panics on) decimal256"
        elif pl is not None:
            try:
                s = pl.Series(arr)
                pl_t = best(s.to_numpy, rep)
                line += f" {pl_t * 1e3:8.2f}ms {ours / pl_t:6.2f}x"
            except BaseException as exc:  # noqa: BLE001 (polars panics on some types)
                line += f"  polars: {type(exc).__name__}"
        print(line, flush=True)
    extra = arrays(n)
    dec = extra["decimal128"]
    ours = best(lambda: dfbuffer.column_to_ndarray(dec, decimals="float64", nulls="fill"), rep)
    peer = best(lambda: pc.cast(dec, pa.float64()).to_numpy(zero_copy_only=False), rep)
    print(f"decimals=float64   {ours * 1e3:8.2f}ms {peer * 1e3:8.2f}ms {ours / peer:6.2f}x  (cast)")
    ree = extra["run_end"]
    ours = best(lambda: dfbuffer.column_to_ndarray(ree), rep)
    peer = best(lambda: pc.run_end_decode(ree).to_numpy(zero_copy_only=False), rep)
    print(
        f"run_end decode     {ours * 1e3:8.2f}ms {peer * 1e3:8.2f}ms {ours / peer:6.2f}x"
        "  (run_end_decode)"
    )
    u = extra["uuid"]
    ours = best(lambda: dfbuffer.column_to_ndarray(u), rep)
    for label, peer_fn in (
        ("uuid to_pylist    ", u.to_pylist),
        (
            "uuid UUID(bytes=) ",
            lambda: [None if b is None else uuid.UUID(bytes=b) for b in u.storage.to_pylist()],
        ),
    ):
        peer = best(peer_fn, min(rep, 2))
        print(f"{label} {ours * 1e3:8.2f}ms {peer * 1e3:8.2f}ms {ours / peer:6.2f}x")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
