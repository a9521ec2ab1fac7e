"""Fixed workloads for callgrind instruction counts of the converters.

    PYTHONPATH=build/dev/stage valgrind --tool=callgrind \\
        --toggle-collect=from_dataframe python benchmarks/perf_callgrind_convert.py frame N
    PYTHONPATH=build/dev/stage valgrind --tool=callgrind \\
        --toggle-collect=column_to_ndarray python benchmarks/perf_callgrind_convert.py strings

frame N: from_dataframe twice on bench_convert's minimal producer with N
float64 columns of 1000 rows (per column = (count(N=1001) - count(N=1)) / 2000).
strings: column_to_ndarray once on a 1e5-row pyarrow string column, one null
in ten (the (c) data, 10x smaller).
"""

from __future__ import annotations

import sys

import numpy as np
from _minimal_producer import _DF

import dfbuffer


def main(argv: list[str]) -> None:
    if argv[0] == "frame":
        n = int(argv[1])
        rng = np.random.default_rng(0)
        df = _DF([rng.random(1000) for _ in range(n)])
        dfbuffer.from_dataframe(df)
        dfbuffer.from_dataframe(df)
    else:
        import pyarrow as pa

        vals = [None if i % 10 == 3 else f"s{i}" for i in range(100_000)]
        col = pa.table({"s": pa.array(vals, pa.string())}).__dataframe__().get_column(0)
        dfbuffer.column_to_ndarray(col)


if __name__ == "__main__":
    main(sys.argv[1:])
