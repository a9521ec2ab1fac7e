"""Minimal interchange-protocol producers: a conformant one, and for every
producer requirement (P-n in docs/requirements.md) one that breaks it.

Hand-written because no real library makes these layouts on purpose.  The
memory is always real (NumPy arrays kept alive by the objects), so a checker
that reads it reads valid memory; only the description is wrong.

``BROKEN`` maps each requirement ID to a factory returning
``(kind, object)`` with kind one of "buffer", "column", "dataframe".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

INT, UINT, FLOAT, BOOL, STRING, DATETIME, CATEGORICAL = 0, 1, 2, 20, 21, 22, 23
NON_NULLABLE, USE_NAN, USE_SENTINEL, USE_BITMASK, USE_BYTEMASK = 0, 1, 2, 3, 4

_NP_FORMATS = {
    "i1": (INT, 8, "c"),
    "i2": (INT, 16, "s"),
    "i4": (INT, 32, "i"),
    "i8": (INT, 64, "l"),
    "u1": (UINT, 8, "C"),
    "u8": (UINT, 64, "L"),
    "f4": (FLOAT, 32, "f"),
    "f8": (FLOAT, 64, "g"),
}


def dtype_of(arr: np.ndarray) -> tuple:
    """The interchange dtype tuple of a NumPy integer/float array."""
    kind, bits, fmt = _NP_FORMATS[arr.dtype.str[1:]]
    return (kind, bits, fmt, "=")


class Buf:
    """A conformant interchange Buffer over a contiguous NumPy array."""

    def __init__(self, arr: np.ndarray) -> None:
        self._arr = np.ascontiguousarray(arr)

    @property
    def ptr(self) -> int:
        return self._arr.ctypes.data

    @property
    def bufsize(self) -> int:
        return self._arr.nbytes

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int | None]:
        return (1, None)


class Col:
    """A conformant interchange Column: one chunk, NumPy-backed buffers."""

    def __init__(
        self,
        data: np.ndarray,
        *,
        dtype: tuple | None = None,
        data_dtype: tuple | None = None,
        offset: int = 0,
        size: int | None = None,
        null: tuple = (NON_NULLABLE, None),
        null_count: int | None = 0,
        validity: tuple | None = None,
        offsets: tuple | None = None,
        categorical: dict | None = None,
    ) -> None:
        self._data = (Buf(data), data_dtype or dtype or dtype_of(data))
        self._dtype = dtype or dtype_of(data)
        self._offset = offset
        self._size = len(data) - offset if size is None else size
        self._null = null
        self._null_count = null_count
        self._validity = validity
        self._offsets = offsets
        self._categorical = categorical

    def size(self) -> int:
        return self._size

    @property
    def offset(self) -> int:
        return self._offset

    @property
    def dtype(self) -> tuple:
        return self._dtype

    @property
    def describe_categorical(self) -> dict:
        if self._categorical is None:
            raise TypeError("not a categorical column")
        return self._categorical

    @property
    def describe_null(self) -> tuple:
        return self._null

    @property
    def null_count(self) -> int | None:
        return self._null_count

    @property
    def metadata(self) -> dict:
        return {}

    def num_chunks(self) -> int:
        return 1

    def get_chunks(self, n_chunks: int | None = None):
        yield self

    def get_buffers(self) -> dict:
        return {"data": self._data, "validity": self._validity, "offsets": self._offsets}


def int_column(**kw: Any) -> Col:
    return Col(np.arange(10, dtype="i8"), **kw)


def string_column(strings=("a", "bb", None, "dddd"), *, large: bool = False, **kw: Any) -> Col:
    raw = [s.encode() if s is not None else b"" for s in strings]
    data = np.frombuffer(b"".join(raw) or b"\0", dtype="u1").copy()
    offs = np.zeros(len(raw) + 1, dtype="i8" if large else "i4")
    offs[1:] = np.cumsum([len(r) for r in raw])
    valid = np.packbits(np.array([s is not None for s in strings], dtype=bool), bitorder="little")
    nulls = sum(s is None for s in strings)
    args: dict[str, Any] = {
        "dtype": (STRING, 8, "U" if large else "u", "="),
        "data_dtype": (UINT, 8, "C", "="),
        "size": len(strings),
        "null": (USE_BITMASK, 0),
        "null_count": nulls,
        "validity": (Buf(valid), (BOOL, 1, "b", "=")),
        "offsets": (Buf(offs), dtype_of(offs)),
    }
    args.update(kw)
    return Col(data, **args)


def categorical_column(codes=(0, 1, -1, 1), **kw: Any) -> Col:
    cats = string_column(("low", "high"), null=(NON_NULLABLE, None), null_count=0, validity=None)
    c = np.array(codes, dtype="i1")
    args: dict[str, Any] = {
        "dtype": (CATEGORICAL, 8, "c", "="),
        "data_dtype": (INT, 8, "c", "="),
        "null": (USE_SENTINEL, -1),
        "null_count": int(np.count_nonzero(c == -1)),
        "categorical": {"is_ordered": False, "is_dictionary": True, "categories": cats},
    }
    args.update(kw)
    return Col(c, **args)


def masked_column(**kw: Any) -> Col:
    """int32 values with a bitmask; element 3 (after offset 1) is null."""
    vals = np.arange(12, dtype="i4")
    bits = np.ones(12, dtype=bool)
    bits[4] = False
    args: dict[str, Any] = {
        "offset": 1,
        "size": 11,
        "null": (USE_BITMASK, 0),
        "null_count": 1,
        "validity": (Buf(np.packbits(bits, bitorder="little")), (BOOL, 1, "b", "=")),
    }
    args.update(kw)
    return Col(vals, **args)


class DF:
    """A conformant interchange DataFrame over a dict of Columns."""

    def __init__(self, columns: dict[str, Any], *, chunks: list | None = None) -> None:
        self._cols = dict(columns)
        self._chunks = chunks

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> DF:
        return self

    @property
    def metadata(self) -> dict:
        return {}

    def num_columns(self) -> int:
        return len(self._cols)

    def num_rows(self) -> int | None:
        return next(iter(self._cols.values())).size() if self._cols else 0

    def num_chunks(self) -> int:
        return 1 if self._chunks is None else len(self._chunks)

    def column_names(self):
        return list(self._cols)

    def get_column(self, i: int) -> Any:
        return list(self._cols.values())[i]

    def get_column_by_name(self, name: str) -> Any:
        return self._cols[name]

    def get_columns(self):
        return iter(self._cols.values())

    def select_columns(self, indices) -> DF:
        names = list(self._cols)
        return DF({names[i]: self._cols[names[i]] for i in indices})

    def select_columns_by_name(self, names) -> DF:
        return DF({n: self._cols[n] for n in names})

    def get_chunks(self, n_chunks: int | None = None):
        if self._chunks is None:
            yield self
        else:
            yield from self._chunks


def good_dataframe() -> DF:
    floats = np.array([1.0, np.nan, 3.0, 4.0])
    return DF(
        {
            "i": Col(np.arange(4, dtype="i8")),
            "f": Col(floats, null=(USE_NAN, None), null_count=1),
            "s": string_column(),
            "c": categorical_column(),
            "m": masked_column(offset=8, size=4, null_count=0),
        }
    )


# ---------------------------------------------------------------------------
# One broken producer per requirement
# ---------------------------------------------------------------------------

_KEEP = np.arange(16, dtype="u1")  # real memory for raw buffers


class RawBuf:
    """A Buffer whose attributes are given verbatim."""

    def __init__(self, ptr: Any = None, bufsize: Any = 16, device: Any = (1, 0)) -> None:
        self.ptr = _KEEP.ctypes.data if ptr is None else ptr
        self.bufsize = bufsize
        self._device = device

    def __dlpack_device__(self) -> Any:
        return self._device


class NoDeviceBuf:
    ptr = _KEEP.ctypes.data
    bufsize = 16


class WideDLPackBuf(Buf):
    """Claims 8 bytes but exports 16 through DLPack."""

    @property
    def bufsize(self) -> int:
        return 8


class _Override(Col):
    """A Column with attributes/methods overridden verbatim."""

    def __init__(self, base: Col, **attrs: Any) -> None:
        object.__setattr__(self, "_over", attrs)
        self.__dict__.update(base.__dict__)

    def __getattribute__(self, name: str) -> Any:
        over = object.__getattribute__(self, "_over")
        if name in over:
            value = over[name]
            return value() if isinstance(value, _Lazy) else value
        return object.__getattribute__(self, name)


class _Lazy:
    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn

    def __call__(self) -> Any:
        return self.fn()


def _raise(exc: Exception) -> _Lazy:
    def f() -> Any:
        raise exc

    return _Lazy(f)


def _col_with_buffers(base: Col, **changes: Any) -> Col:
    bufs = dict(base.get_buffers())
    bufs.update(changes)
    return _Override(base, get_buffers=lambda: bufs)


class _ChunkedCol(Col):
    def __init__(self, base: Col, sizes: list[int]) -> None:
        self.__dict__.update(base.__dict__)
        self._sizes = sizes

    def num_chunks(self) -> int:
        return len(self._sizes)

    def get_chunks(self, n_chunks: int | None = None):
        start = self._offset
        for s in self._sizes:
            yield Col(np.arange(start + s, dtype="i8"), offset=start, size=s)
            start += s


class _DFOverride(DF):
    def __init__(self, base: DF, **attrs: Any) -> None:
        object.__setattr__(self, "_over", attrs)
        self.__dict__.update(base.__dict__)

    def __getattribute__(self, name: str) -> Any:
        over = object.__getattribute__(self, "_over")
        if name in over:
            return over[name]
        return object.__getattribute__(self, name)


def _no_dataframe_method(base: DF) -> Any:
    class NoDunder:
        pass

    obj = NoDunder()
    for name in (
        "metadata",
        "num_columns",
        "num_rows",
        "num_chunks",
        "column_names",
        "get_column",
        "get_column_by_name",
        "get_columns",
        "select_columns",
        "select_columns_by_name",
        "get_chunks",
    ):
        setattr(obj, name, getattr(base, name))
    return obj


def _broken_P25() -> Col:
    return categorical_column(codes=(0, 1, 5, -1))


def _broken_P26() -> Col:
    return masked_column(null_count=3)


BROKEN: dict[str, Callable[[], tuple[str, Any]]] = {
    # Buffers
    "P-1": lambda: ("buffer", RawBuf(ptr=-8)),
    "P-2": lambda: ("buffer", RawBuf(bufsize=-1)),
    "P-3": lambda: ("buffer", RawBuf(device=(99, 0))),
    "P-4": lambda: ("buffer", RawBuf(ptr=0, bufsize=16)),
    "P-5": lambda: ("buffer", WideDLPackBuf(np.arange(2, dtype="i8"))),
    # Columns
    "P-10": lambda: ("column", _Override(int_column(), size=lambda: -1)),
    "P-11": lambda: ("column", _Override(int_column(), offset=-2)),
    "P-12": lambda: ("column", _Override(int_column(), dtype=(INT, 64, "i", "="))),
    "P-13": lambda: ("column", _Override(masked_column(), describe_null=(USE_BITMASK, 7))),
    "P-14": lambda: ("column", _Override(int_column(), null_count=11)),
    "P-15": lambda: ("column", _Override(int_column(), get_buffers=lambda: {"data": None})),
    "P-16": lambda: ("column", _col_with_buffers(int_column(), validity=masked_column()._validity)),
    "P-17": lambda: (
        "column",
        _col_with_buffers(
            masked_column(), validity=(masked_column()._validity[0], (BOOL, 8, "b", "="))
        ),
    ),
    "P-18": lambda: (
        "column",
        masked_column(
            offset=1,
            size=11,
            null_count=0,
            validity=(Buf(np.array([0xFF], dtype="u1")), (BOOL, 1, "b", "=")),
        ),
    ),
    "P-19": lambda: ("column", string_column(data_dtype=(STRING, 8, "u", "="))),
    "P-20": lambda: ("column", Col(np.arange(4, dtype="i8"), size=6)),
    "P-21": lambda: ("column", string_column(offsets=None)),
    "P-22": lambda: ("column", string_column(dtype=(STRING, 8, "u", "="), large=True)),
    "P-23": lambda: (
        "column",
        string_column(offsets=(Buf(np.array([0, 1, 3, 2, 40], dtype="i4")), (INT, 32, "i", "="))),
    ),
    "P-24": lambda: ("column", _Override(categorical_column(), describe_categorical=None)),
    "P-25": lambda: ("column", _broken_P25()),
    "P-26": lambda: ("column", _broken_P26()),
    "P-27": lambda: ("column", _ChunkedCol(int_column(), [3, 3])),
    "P-28": lambda: ("column", _Override(int_column(), metadata=None)),
    # DataFrames
    "P-30": lambda: ("dataframe", _DFOverride(good_dataframe(), num_columns=lambda: 7)),
    "P-31": lambda: ("dataframe", _DFOverride(good_dataframe(), num_rows=lambda: 3)),
    "P-32": lambda: (
        "dataframe",
        _DFOverride(good_dataframe(), get_column=lambda i: int_column()),
    ),
    "P-33": lambda: (
        "dataframe",
        _DFOverride(good_dataframe(), select_columns=lambda idx: good_dataframe()),
    ),
    "P-34": lambda: (
        "dataframe",
        _DFOverride(good_dataframe(), select_columns_by_name=lambda names: DF({})),
    ),
    "P-35": lambda: (
        "dataframe",
        _DFOverride(good_dataframe(), num_chunks=lambda: 2),
    ),
    "P-36": lambda: ("dataframe", _DFOverride(good_dataframe(), metadata=[("a", 1)])),
    "P-37": lambda: ("dataframe", _no_dataframe_method(good_dataframe())),
}
