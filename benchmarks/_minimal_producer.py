"""The benchmarks' minimal interchange producer: float64 columns held in NumPy arrays,
with plain attributes, so that timings and instruction counts measure the consumer and not
the producer."""

from __future__ import annotations


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
    """A minimal interchange DataFrame of float64 columns (cheap producer,
    to measure the consumer's overhead without pandas' noise)."""

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

    def get_columns(self):
        return iter(self._cols)

    def num_chunks(self):
        return 1
