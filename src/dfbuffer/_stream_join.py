"""The columns of an Arrow stream's groups of batches joined into one array each.

``from_dataframe`` of a stream (C, ``arrow_convert.c``) converts the batches read so far
(a group of about 16 MiB) as ``from_dataframe`` of those batches alone, hands the dict to
:class:`Join` and drops the batches.  A fixed-width column (numbers, bools, datetimes) is
copied into one array that grows by its allocator's realloc (NumPy's ``resize``, with the
array made read-only for the call so that NumPy does not zero the rows added: a large
block is remapped, not copied, and its new pages are touched only when written), then
trimmed to its rows; an object or ``StringDType`` column keeps its pieces and joins them
at the end.  The result is what ``from_dataframe`` of all the batches at once gives
(docs/api.md, "from_dataframe of a stream"): a MaskedArray where any group had a null
under ``nulls="mask"``, an integer column that meets its first null under
``nulls="fill"`` made float64 (its rows so far cast), a categorical's categories unified
in order of first appearance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dfbuffer._interchange import CategoricalCodes

_FIXED = "biufcmM"


class _Grown:
    """A 1-D array of ``n`` rows in a block that grows geometrically."""

    __slots__ = ("a", "n")

    def __init__(self, dtype: np.dtype[Any], n: int, fill: Any = None) -> None:
        self.a: np.ndarray[Any, Any] = (
            np.zeros(max(n, 1), dtype) if fill is not None else np.empty(max(n, 1), dtype)
        )
        self.n = n

    def reserve(self, k: int) -> None:
        need = self.n + k
        if need > len(self.a):
            _resize(self.a, max(need, 2 * len(self.a)))

    def put(self, values: Any) -> None:
        k = len(values)
        self.reserve(k)
        self.a[self.n : self.n + k] = values
        self.n += k

    def cast(self, dtype: np.dtype[Any]) -> None:
        """The rows so far as ``dtype`` (NumPy's cast, as ``astype``)."""
        b = np.empty(len(self.a), dtype)
        b[: self.n] = self.a[: self.n]
        self.a = b

    def finish(self) -> np.ndarray[Any, Any]:
        if len(self.a) != self.n:
            _resize(self.a, self.n)
        return self.a


def _resize(a: np.ndarray[Any, Any], n: int) -> None:
    """``a.resize(n)`` without NumPy zeroing the rows added (a is ours alone)."""
    a.flags.writeable = False
    try:
        a.resize(n, refcheck=False)
    finally:
        a.flags.writeable = True


def _smallest_codes(ncats: int) -> np.dtype[Any]:
    for t in (np.int8, np.int16, np.int32):
        if ncats <= np.iinfo(t).max:
            return np.dtype(t)
    return np.dtype(np.int64)


class _Column:
    """One column of the stream: its rows so far."""

    def __init__(self) -> None:
        self.n = 0
        self.data: _Grown | None = None
        self.pieces: list[np.ndarray[Any, Any]] | None = None
        self.mask: _Grown | None = None
        self.codes = False
        self.cats: Any = None
        self.ordered = False
        self.code_dtypes: set[np.dtype[Any]] = set()
        self.unified = False

    def add(self, v: Any) -> None:
        if isinstance(v, CategoricalCodes):
            codes = v.codes
            self.code_dtypes.add(np.ma.getdata(codes).dtype)
            if not self.codes:
                self.codes, self.cats, self.ordered = True, v.categories, v.ordered
            elif not _same(v.categories, self.cats):
                codes = self._remap(codes, v.categories)
            v = codes
        data = np.ma.getdata(v)
        k = len(data)
        if isinstance(v, np.ma.MaskedArray):
            if self.mask is None:
                self.mask = _Grown(np.dtype(bool), self.n, fill=False)
            self.mask.put(np.ma.getmaskarray(v))
        elif self.mask is not None:
            self.mask.reserve(k)
            self.mask.a[self.mask.n : self.mask.n + k] = False
            self.mask.n += k
        if self.pieces is not None or data.dtype.kind not in _FIXED:
            if self.pieces is None:
                self.pieces = [] if self.data is None else [self.data.finish()]
                self.data = None
            self.pieces.append(data)  # a group's own conversion: new memory
        else:
            if self.data is None:
                self.data = _Grown(data.dtype, 0)
            elif data.dtype != self.data.a.dtype:
                t = np.result_type(self.data.a.dtype, data.dtype)
                if t != self.data.a.dtype:
                    self.data.cast(t)
            self.data.put(data)
        self.n += k

    def _remap(self, codes: Any, cats: Any) -> Any:
        """``codes`` of categories ``cats`` as codes of the categories unified so far."""
        if np.ma.isMaskedArray(cats) or np.ma.isMaskedArray(self.cats):
            raise NotImplementedError(
                "the chunks of the categorical column have different categories, some of "
                "them null; use categorical='decode'"
            )
        self.unified = True
        index = {v: i for i, v in enumerate(self.cats.tolist())}
        fresh = [v for v in cats.tolist() if v not in index]
        if fresh:
            self.cats = np.concatenate([self.cats, np.asarray(fresh, self.cats.dtype)])
            for v in fresh:
                index[v] = len(index)
        table = np.array([index[v] for v in cats.tolist()], np.int64)
        data = np.ma.getdata(codes).astype(np.int64)
        valid = data >= 0
        data[valid] = table[data[valid]]
        if np.ma.isMaskedArray(codes):
            return np.ma.MaskedArray(data, mask=np.ma.getmaskarray(codes))
        return data

    def finish(self) -> Any:
        if self.pieces is not None:
            data = np.concatenate(self.pieces) if len(self.pieces) > 1 else self.pieces[0]
        else:
            assert self.data is not None
            data = self.data.finish()
        if self.codes and (self.unified or len(self.code_dtypes) > 1):
            data = data.astype(_smallest_codes(len(self.cats)))
        res: Any = data
        if self.mask is not None:
            res = np.ma.MaskedArray(data, mask=self.mask.finish())
        if self.codes:
            return CategoricalCodes((res, self.cats, self.ordered))
        return res


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if np.ma.getdata(a).dtype != np.ma.getdata(b).dtype or len(a) != len(b):
        return False
    if np.ma.isMaskedArray(a) or np.ma.isMaskedArray(b):
        if not np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b)):
            return False
        a, b = np.ma.filled(a, a[:0].dtype.type()), np.ma.filled(b, b[:0].dtype.type())
    return a.tolist() == b.tolist()


class Join:
    """The groups of one stream, joined column by column (``add``, then ``finish``)."""

    def __init__(self, first: dict[str, Any]) -> None:
        self.cols = {k: _Column() for k in first}
        self.add(first)

    def add(self, group: dict[str, Any]) -> None:
        if list(group) != list(self.cols):
            raise ValueError(
                f"from_dataframe: the batches of the Arrow stream give the columns "
                f"{list(group)}, its first batches {list(self.cols)}"
            )
        for k, col in self.cols.items():
            col.add(group[k])

    def finish(self) -> dict[str, Any]:
        return {k: col.finish() for k, col in self.cols.items()}
