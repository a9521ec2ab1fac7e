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

import dfbuffer


class _Buf:
    def __init__(self, a):
        self._a = a
        self.ptr = a.ctypes.data
        self.bufsize = a.nbytes

    def __dlpack_device__(self):
        return (1, 0)


class _Col:
    def __init__(self, a):
        self._b = _Buf(a)
        self._n = len(a)
        self.offset = 0
        self.dtype = (2, 64, "g", "=")
        self.describe_null = (0, None)
        self.null_count = 0
        self.metadata = {}

    def size(self):
        return self._n

    def num_chunks(self):
        return 1

    def get_chunks(self, n=None):
        yield self

    def get_buffers(self):
        return {"data": (self._b, self.dtype), "validity": None, "offsets": None}


class _DF:
    def __init__(self, arrays):
        self._cols = [_Col(a) for a in arrays]
        self._names = [f"c{i}" for i in range(len(arrays))]

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self

    def num_columns(self):
        return len(self._cols)

    def column_names(self):
        return self._names

    def get_column(self, i):
        return self._cols[i]

    def num_chunks(self):
        return 1


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
