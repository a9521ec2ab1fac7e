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


def best(stmt, number: int, repeat: int = 7) -> float:
    """Best time per call in nanoseconds."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e9


def row(name: str, ours: float, peer: float, peer_name: str) -> None:
    print(f"{name:<52} {ours:9.0f} ns   {peer_name:<34} {peer:9.0f} ns   ratio {ours / peer:5.2f}x")


def main() -> None:
    from_object = Buffer.from_object
    arr = np.arange(1000.0).reshape(10, 100)
    n = 200_000
    ours = best(lambda: from_object(arr), n)
    peer = best(lambda: memoryview(arr), n)
    row("Buffer.from_object(ndarray)", ours, peer, "memoryview(ndarray)")

    data = b"x" * 4096
    ours = best(lambda: from_object(data), n)
    peer = best(lambda: memoryview(data), n)
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
    ours = best(lambda: np.asarray(from_object(buf, dtype="i8")), n)
    peer = best(lambda: buffer_to_ndarray(buf, dtype, offset=0, length=100_000), n)
    row("np.asarray(Buffer.from_object(pandas buffer, i8))", ours, peer, "pandas buffer_to_ndarray")
    ours = best(lambda: from_object(buf), n)
    row("Buffer.from_object(pandas buffer)", ours, peer, "pandas buffer_to_ndarray")


if __name__ == "__main__":
    main()
