"""Buffer.from_object against the peers' own paths, measured in one run.

    PYTHONPATH=build/dev/stage python benchmarks/bench_import.py

Prints ratios (ours / peer; lower is better), best of several repeats:
- Buffer.from_object(ndarray) vs memoryview(ndarray) (goal: <= 3x);
- Buffer.from_object(bytes) vs memoryview(bytes);
- Buffer.from_object(pandas interchange buffer, dtype) + np.asarray vs pandas'
  own buffer_to_ndarray (pandas.core.interchange.from_dataframe).
"""

from __future__ import annotations

import timeit
import warnings

import numpy as np

from dfbuffer import Buffer


def best(ours, peer, number: int, repeat: int = 7) -> tuple[float, float]:
    """Best time per call of ours and of peer in nanoseconds, the two timed
    alternately in every round (so load changes hit both alike)."""
    bo = bp = float("inf")
    for _ in range(repeat):
        bo = min(bo, timeit.timeit(ours, number=number))
        bp = min(bp, timeit.timeit(peer, number=number))
    return bo / number * 1e9, bp / number * 1e9


def row(name: str, ours: float, peer: float, peer_name: str) -> None:
    print(f"{name:<52} {ours:9.0f} ns   {peer_name:<34} {peer:9.0f} ns   ratio {ours / peer:5.2f}x")


def main() -> None:
    from_object = Buffer.from_object
    arr = np.arange(1000.0).reshape(10, 100)
    n = 200_000
    ours, peer = best(lambda: from_object(arr), lambda: memoryview(arr), n)
    row("Buffer.from_object(ndarray)", ours, peer, "memoryview(ndarray)")

    data = b"x" * 4096
    ours, peer = best(lambda: from_object(data), lambda: memoryview(data), n)
    row("Buffer.from_object(bytes)", ours, peer, "memoryview(bytes)")

    try:
        import pandas as pd
        from pandas.core.interchange.from_dataframe import buffer_to_ndarray
    except ImportError:  # pragma: no cover
        print("pandas not available: interchange row skipped")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = pd.DataFrame({"a": np.arange(100_000, dtype="i8")})
        col = df.__dataframe__().get_column(0)
        buf, dtype = col.get_buffers()["data"]
    n = 50_000
    def peer_fn():
        return buffer_to_ndarray(buf, dtype, offset=0, length=100_000)

    ours, peer = best(lambda: np.asarray(from_object(buf, dtype="i8")), peer_fn, n)
    row("np.asarray(Buffer.from_object(pandas buffer, i8))", ours, peer, "pandas buffer_to_ndarray")
    ours, peer = best(lambda: from_object(buf), peer_fn, n)
    row("Buffer.from_object(pandas buffer)", ours, peer, "pandas buffer_to_ndarray")


if __name__ == "__main__":
    main()
