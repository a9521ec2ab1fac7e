"""Minimal hand-written DataFrame-interchange producers for tests.

They follow the interchange protocol (data-apis/dataframe-api
``protocol/dataframe_protocol.py``; see docs/protocol-facts.md) and are backed by
NumPy arrays, to build the layouts no real peer makes: big-endian columns,
sentinel nulls, bytemasks with either null value, bitmasks with arbitrary bit
offsets, device memory, multiple chunks with different validity, the
producers' quirks, and deliberately broken producers.  DlpackOnly is a DLPack
producer and nothing else, over any object that has ``__dlpack__``.

Dtype kinds and null kinds are plain ints here (the spec's enums are
IntEnums; a consumer must accept both).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

# DtypeKind
INT, UINT, FLOAT, BOOL, STRING, DATETIME, CATEGORICAL = 0, 1, 2, 20, 21, 22, 23
# ColumnNullType
NON_NULLABLE, USE_NAN, USE_SENTINEL, USE_BITMASK, USE_BYTEMASK = 0, 1, 2, 3, 4
# DlpackDeviceType
CPU, CUDA = 1, 2

INAT = np.iinfo(np.int64).min

# The integer and floating dtypes, narrowest first, that every conversion path
# handles: the dtype lists of the tests extend it.
INT_FLOAT_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]

_FORMATS = {
    ("i", 1): "c",
    ("i", 2): "s",
    ("i", 4): "i",
    ("i", 8): "l",
    ("u", 1): "C",
    ("u", 2): "S",
    ("u", 4): "I",
    ("u", 8): "L",
    ("f", 2): "e",
    ("f", 4): "f",
    ("f", 8): "g",
    ("b", 1): "b",
}
_KINDS = {"i": INT, "u": UINT, "f": FLOAT, "b": BOOL}

BITMASK_DTYPE = (BOOL, 1, "b", "=")
BYTEMASK_DTYPE = (BOOL, 8, "b", "=")
UINT8_DTYPE = (UINT, 8, "C", "=")
INT32_DTYPE = (INT, 32, "i", "=")
INT64_DTYPE = (INT, 64, "l", "=")


def interchange_dtype(dt: Any, order: str | None = None) -> tuple[int, int, str, str]:
    """The interchange dtype tuple of a NumPy dtype (byte order kept, or ``order``)."""
    dt = np.dtype(dt)
    fmt = _FORMATS[(dt.kind, dt.itemsize)]
    if order is not None:
        pass
    elif dt.itemsize == 1:
        order = "|"
    elif dt.byteorder in ("=", "|"):
        order = "="
    else:
        order = dt.byteorder
    return (_KINDS[dt.kind], dt.itemsize * 8, fmt, order)


def nonnative(dt: Any) -> np.dtype:
    """The dtype with the byte order opposite to this machine's."""
    return np.dtype(dt).newbyteorder(">" if sys.byteorder == "little" else "<")


def pack_bits(
    valid: Sequence[bool] | np.ndarray, bit_offset: int = 0, *, pad: int = 0
) -> np.ndarray:
    """LSB-first bitmap with value i at bit ``bit_offset + i``; the bits before
    the offset and after the end are set to the complement of their neighbour
    (garbage a wrong consumer would read); ``pad`` extra bytes at the end."""
    valid = np.asarray(valid, dtype=bool)
    n = bit_offset + len(valid)
    bits = np.zeros(((n + 7) // 8) * 8 + pad * 8, dtype=bool)
    bits[:bit_offset] = True if (len(valid) == 0 or not valid[0]) else False
    bits[bit_offset:n] = valid
    bits[n:] = True if (len(valid) == 0 or not valid[-1]) else False
    return np.packbits(bits, bitorder="little")


class Buffer:
    """An interchange Buffer over a NumPy array (or any buffer-protocol object).

    ``bufsize``/``ptr`` may be overridden to lie; ``device`` is what
    ``__dlpack_device__`` returns; the memory is always host memory (for a
    "device" buffer it is just never supposed to be read).  Each of the three may
    also be a ``Script`` (an answer that changes between reads or raises)."""

    def __init__(
        self,
        x: Any,
        *,
        bufsize: int | None = None,
        ptr: int | None = None,
        device: tuple[Any, Any] = (CPU, 0),
    ) -> None:
        self._x = np.asarray(x)
        assert self._x.flags.c_contiguous
        self._ptr = self._x.ctypes.data if ptr is None else ptr
        self._bufsize = self._x.nbytes if bufsize is None else bufsize
        self._device = device

    @property
    def bufsize(self) -> int:
        return answer(self._bufsize)

    @property
    def ptr(self) -> int:
        return answer(self._ptr)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._device[0] != CPU:
            raise BufferError("device memory")
        return (
            self._x.view(np.uint8)
            .reshape(-1)
            .__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
        )

    def __dlpack_device__(self) -> tuple[Any, Any]:
        return answer(self._device)

    def __repr__(self) -> str:  # reads no Script
        return f"Buffer(ptr={self._ptr!r}, bufsize={self._bufsize!r}, device={self._device!r})"


class NoKwDlpackBuffer(Buffer):
    """Quirk: ``__dlpack__`` takes no keywords (TypeError if given any),
    device id ``None``."""

    def __init__(self, x: Any, **kw: Any) -> None:
        kw.setdefault("device", (CPU, None))
        super().__init__(x, **kw)

    def __dlpack__(self):  # type: ignore[override]
        return self._x.view(np.uint8).reshape(-1).__dlpack__()


class NoDlpackBuffer(Buffer):
    """A Buffer with only ptr, bufsize and ``__dlpack_device__`` (the spec's minimum)."""

    def __dlpack__(self, *a, **k):  # type: ignore[override]
        raise NotImplementedError("no DLPack here")


class Categorical:
    def __init__(self, categories: Column, *, ordered: bool = False, is_dictionary: bool = True):
        self.d = {"is_ordered": ordered, "is_dictionary": is_dictionary, "categories": categories}


class Column:
    """An interchange Column with explicitly given buffers."""

    def __init__(
        self,
        *,
        size: int,
        dtype: tuple,
        data: tuple[Buffer, tuple] | None,
        validity: tuple[Buffer, tuple] | None = None,
        offsets: tuple[Buffer, tuple] | None = None,
        offset: int = 0,
        null: tuple[int, Any] = (NON_NULLABLE, None),
        null_count: int | None = None,
        categorical: Categorical | None = None,
        chunks: Sequence[Column] | None = None,
        metadata: dict | None = None,
    ) -> None:
        self._size = size
        self._dtype = dtype
        self._data = data
        self._validity = validity
        self._offsets = offsets
        self._offset = offset
        self._null = null
        self._null_count = null_count
        self._categorical = categorical
        self._chunks = list(chunks) if chunks is not None else None
        self._metadata = metadata or {}

    def size(self) -> int:
        if self._chunks is not None:
            return sum(c.size() for c in self._chunks)
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
        return self._categorical.d

    @property
    def describe_null(self) -> tuple[int, Any]:
        return self._null

    @property
    def null_count(self) -> int | None:
        return self._null_count

    @property
    def metadata(self) -> dict:
        return self._metadata

    def num_chunks(self) -> int:
        return 1 if self._chunks is None else len(self._chunks)

    def get_chunks(self, n_chunks: int | None = None) -> Iterable[Column]:
        if self._chunks is None:
            yield self
        else:
            yield from self._chunks

    def get_buffers(self) -> dict:
        if self._chunks is not None:
            raise RuntimeError("get_buffers on a multi-chunk column")
        return {"data": self._data, "validity": self._validity, "offsets": self._offsets}

    # convenience for tests
    @property
    def data_buffer(self) -> Buffer | None:
        return None if self._data is None else self._data[0]


class DataFrame:
    """An interchange DataFrame over a dict of Columns (insertion order)."""

    def __init__(self, columns: dict[Any, Column], *, metadata: dict | None = None) -> None:
        self._cols = list(columns.items())
        self._metadata = metadata or {}

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> DataFrame:
        return self

    @property
    def metadata(self) -> dict:
        return self._metadata

    def num_columns(self) -> int:
        return len(self._cols)

    def num_rows(self) -> int | None:
        return self._cols[0][1].size() if self._cols else 0

    def num_chunks(self) -> int:
        return 1

    def column_names(self) -> list:
        return [n for n, _ in self._cols]

    def get_column(self, i: int) -> Column:
        return self._cols[i][1]

    def get_column_by_name(self, name: Any) -> Column:
        for n, c in self._cols:
            if n == name:
                return c
        raise KeyError(name)

    def get_columns(self) -> Iterable[Column]:
        return (c for _, c in self._cols)

    def select_columns(self, indices: Sequence[int]) -> DataFrame:
        return DataFrame({self._cols[i][0]: self._cols[i][1] for i in indices})

    def select_columns_by_name(self, names: Sequence[Any]) -> DataFrame:
        return DataFrame({n: self.get_column_by_name(n) for n in names})

    def get_chunks(self, n_chunks: int | None = None) -> Iterable[DataFrame]:
        yield self


class Frame:
    """A "library" object whose ``__dataframe__`` returns a DataFrame."""

    def __init__(self, columns: dict[Any, Column]) -> None:
        self._df = DataFrame(columns)
        self.calls: list[tuple] = []

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> DataFrame:
        self.calls.append((nan_as_null, allow_copy))
        return self._df


# ---------------------------------------------------------------------------
# Column builders


def primitive(
    values: Any,
    *,
    dtype: Any = None,
    offset: int = 0,
    pad: int = 0,
    buffer_cls: type[Buffer] = Buffer,
    device: tuple | None = None,
    col_dtype: tuple | None = None,
    data_dtype: tuple | None = None,
    null: tuple = (NON_NULLABLE, None),
    null_count: int | None = 0,
    validity: tuple[Buffer, tuple] | None = None,
) -> Column:
    """A fixed-width column of ``values`` placed at element ``offset`` of its
    buffer (preceded by ``offset`` and followed by ``pad`` garbage elements)."""
    v = np.asarray(values, dtype=dtype)
    store = np.empty(offset + len(v) + pad, dtype=v.dtype)
    # garbage a consumer ignoring the offset (or reading too far) would see
    store[:offset] = _garbage(v.dtype, offset)
    store[offset + len(v) :] = _garbage(v.dtype, pad)
    store[offset : offset + len(v)] = v
    kw = {} if device is None else {"device": device}
    buf = buffer_cls(store, **kw)
    idt = data_dtype if data_dtype is not None else interchange_dtype(v.dtype)
    return Column(
        size=len(v),
        dtype=col_dtype if col_dtype is not None else idt,
        data=(buf, idt),
        validity=validity,
        offset=offset,
        null=null,
        null_count=null_count,
    )


def _garbage(dt: np.dtype, n: int) -> np.ndarray:
    if dt.kind == "b":
        return np.ones(n, dtype=dt)
    if dt.kind == "f":
        return np.full(n, 12345.5, dtype=dt)
    return np.full(n, 99, dtype=dt)


def with_mask(
    values: Any,
    valid: Sequence[bool],
    *,
    kind: str = "bitmask",
    null_value: int = 0,
    dtype: Any = None,
    offset: int = 0,
    mask_dtype: tuple | None = None,
    null_count: Any = "auto",
    **kw: Any,
) -> Column:
    """A primitive column with a validity bitmask or bytemask (``null_value``
    marks a null); the column offset applies to the mask as well."""
    valid = np.asarray(valid, dtype=bool)
    if kind == "bitmask":
        bits = valid if null_value == 0 else ~valid
        vbuf = Buffer(pack_bits(bits, offset, pad=1))
        vdt = mask_dtype or BITMASK_DTYPE
        nk = USE_BITMASK
    else:
        m = np.empty(offset + len(valid) + 3, dtype=np.uint8)
        m[:] = 7  # garbage: neither 0 nor 1 would be right to read
        m[offset : offset + len(valid)] = valid if null_value == 0 else ~valid
        vbuf = Buffer(m)
        vdt = mask_dtype or BYTEMASK_DTYPE
        nk = USE_BYTEMASK
    nc = int((~valid).sum()) if null_count == "auto" else null_count
    return primitive(
        values,
        dtype=dtype,
        offset=offset,
        validity=(vbuf, vdt),
        null=(nk, null_value),
        null_count=nc,
        **kw,
    )


def bools_bitpacked(
    values: Sequence[bool], *, offset: int = 0, valid: Sequence[bool] | None = None
) -> Column:
    """A bit-packed bool column (data bits start at bit ``offset``)."""
    values = np.asarray(values, dtype=bool)
    dbuf = Buffer(pack_bits(values, offset, pad=1))
    validity = None
    null = (NON_NULLABLE, None)
    nc = 0
    if valid is not None:
        valid = np.asarray(valid, dtype=bool)
        validity = (Buffer(pack_bits(valid, offset, pad=1)), BITMASK_DTYPE)
        null = (USE_BITMASK, 0)
        nc = int((~valid).sum())
    return Column(
        size=len(values),
        dtype=BITMASK_DTYPE,
        data=(dbuf, BITMASK_DTYPE),
        validity=validity,
        offset=offset,
        null=null,
        null_count=nc,
    )


def strings(
    values: Sequence[str | None],
    *,
    large: bool = False,
    offset: int = 0,
    mask: str = "bitmask",
    null_value: int = 0,
    data_as_column_dtype: bool = False,
    offsets_override: np.ndarray | None = None,
    data_bufsize: int | None = None,
) -> Column:
    """A UTF-8 string column ('u' or large 'U'); None marks a null.  The
    column offset applies to the offsets and the validity."""
    pre = ["garbage-before"] * offset
    allv = pre + [("" if s is None else s) for s in values] + ["after"]
    enc = [s.encode() for s in allv]
    offs = np.zeros(len(enc) + 1, dtype=np.int64 if large else np.int32)
    offs[1:] = np.cumsum([len(b) for b in enc])
    if offsets_override is not None:
        offs = np.asarray(offsets_override, dtype=offs.dtype)
    raw = b"".join(enc)
    data = np.frombuffer(raw, dtype=np.uint8).copy() if raw else np.zeros(0, np.uint8)
    fmt = "U" if large else "u"
    col_dtype = (STRING, 8, fmt, "=")
    valid = np.array([s is not None for s in values], dtype=bool)
    validity = None
    null: tuple = (NON_NULLABLE, None)
    if not valid.all() or mask == "always":
        if mask in ("bitmask", "always"):
            bits = valid if null_value == 0 else ~valid
            validity = (Buffer(pack_bits(bits, offset)), BITMASK_DTYPE)
            null = (USE_BITMASK, null_value)
        else:
            m = np.zeros(offset + len(values), dtype=np.uint8)
            m[offset:] = valid if null_value == 0 else ~valid
            validity = (Buffer(m), BYTEMASK_DTYPE)
            null = (USE_BYTEMASK, null_value)
    return Column(
        size=len(values),
        dtype=col_dtype,
        data=(
            Buffer(data, bufsize=data_bufsize),
            col_dtype if data_as_column_dtype else UINT8_DTYPE,
        ),
        offsets=(Buffer(offs), INT64_DTYPE if large else INT32_DTYPE),
        validity=validity,
        offset=offset,
        null=null,
        null_count=int((~valid).sum()),
    )


def datetimes(
    values: Any,
    fmt: str,
    *,
    storage: Any = np.int64,
    offset: int = 0,
    sentinel: bool = True,
    valid: Sequence[bool] | None = None,
    data_as_column_dtype: bool = False,
) -> Column:
    """A DATETIME column of raw integer ``values`` with Arrow format ``fmt``
    (tss:/tsm:/tsu:/tsn: + tz, tdD, tdm, tDs...).  With ``sentinel``, iNaT
    values are nulls (USE_SENTINEL); with ``valid``, a bitmask."""
    v = np.asarray(values, dtype=storage)
    bits = v.dtype.itemsize * 8
    cdt = (DATETIME, bits, fmt, "=")
    ddt = cdt if data_as_column_dtype else interchange_dtype(v.dtype)
    if valid is not None:
        return with_mask(v, valid, offset=offset, col_dtype=cdt, data_dtype=ddt)
    if sentinel and v.dtype == np.int64:
        nc = int((v == INAT).sum())
        null = (USE_SENTINEL, INAT)
    else:
        nc = 0
        null = (NON_NULLABLE, None)
    return primitive(v, offset=offset, col_dtype=cdt, data_dtype=ddt, null=null, null_count=nc)


def categorical(
    codes: Any,
    categories: Column,
    *,
    code_dtype: Any = np.int8,
    null: str = "sentinel",
    valid: Sequence[bool] | None = None,
    offset: int = 0,
    ordered: bool = False,
) -> Column:
    """A CATEGORICAL column of integer ``codes`` into ``categories``.
    ``null="sentinel"``: -1 codes are nulls (USE_SENTINEL -1, as pandas);
    ``null="bitmask"``: ``valid`` gives the validity (codes may hold -1 or any
    garbage in null slots)."""
    c = np.asarray(codes, dtype=code_dtype)
    cdt = interchange_dtype(c.dtype)
    col_dtype = (CATEGORICAL, cdt[1], cdt[2], "=")
    cat = Categorical(categories, ordered=ordered)
    if null == "sentinel":
        col = primitive(
            c,
            offset=offset,
            col_dtype=col_dtype,
            null=(USE_SENTINEL, -1),
            null_count=int((c == -1).sum()),
        )
    elif null == "none":
        col = primitive(c, offset=offset, col_dtype=col_dtype)
    else:
        assert valid is not None
        col = with_mask(c, valid, offset=offset, col_dtype=col_dtype, kind=null, null_value=0)
    col._categorical = cat
    return col


def chunked(*chunks: Column) -> Column:
    """A column made of several chunks (a single chunk is returned as is:
    a one-chunk column must answer get_buffers itself)."""
    if len(chunks) == 1:
        return chunks[0]
    return Column(
        size=0,
        dtype=chunks[0].dtype,
        data=None,
        chunks=chunks,
        null=chunks[-1].describe_null,
        null_count=sum((c.null_count or 0) for c in chunks),
    )


def frame(**cols: Column) -> DataFrame:
    return DataFrame(dict(cols))


def base_chain(a: Any) -> list:
    """The objects reached by following ``.base`` from ``a`` (or ``a.data``
    for a MaskedArray)."""
    if isinstance(a, np.ma.MaskedArray):
        a = a.data
    out = []
    b = getattr(a, "base", None)
    while b is not None:
        out.append(b)
        b = getattr(b, "base", None) if isinstance(b, np.ndarray) else None
    return out


def addr(a: np.ndarray) -> int:
    """The address of an array's first element."""
    return a.__array_interface__["data"][0]


def to_list(res: np.ndarray) -> list:
    """A conversion's values as a list, with None where a masked result is masked."""
    if isinstance(res, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(res)
        return [None if m else v for v, m in zip(np.asarray(res.data).tolist(), mask, strict=True)]
    return np.asarray(res).tolist()


# ---------------------------------------------------------------------------
# Mutators: a producer that breaks one rule.  Every broken producer of the tests is a
# conformant one from above with some answers replaced.


class Script:
    """The answers of one attribute: ``first`` for the first ``first_reads`` reads, then
    ``later`` (default: ``first``; a producer that changes its answer between reads); an
    answer that is an exception instance is raised.  ``reads`` counts the reads.  ``hook``
    (a callable) runs before every answer: it may mutate the producer."""

    __slots__ = ("first", "later", "reads", "hook", "first_reads")

    def __init__(self, first: Any, later: Any = None, *, changes: bool = False, hook=None,
                 first_reads: int = 1):
        self.first = first
        self.later = later if changes else first
        self.reads = 0
        self.hook = hook
        self.first_reads = first_reads

    def __call__(self) -> Any:
        if self.hook is not None:
            self.hook()
        v = self.first if self.reads < self.first_reads else self.later
        self.reads += 1
        if isinstance(v, BaseException):
            raise v
        return v

    def __repr__(self) -> str:
        if self.later is self.first:
            return f"Script({self.first!r})"
        return f"Script({self.first!r}, later={self.later!r})"


class calls:  # noqa: N801 - reads as a marker: mutate(col, get_column=calls(fn))
    """A replaced method that is ``fn`` itself (called with the consumer's arguments)."""

    def __init__(self, fn) -> None:
        self.fn = fn


MISSING = object()  # mutate(obj, name=MISSING): the attribute does not exist


def answer(a: Any, args: tuple = (), kw: dict | None = None) -> Any:
    """What a replaced attribute gives: ``calls(fn)`` -> fn(*args), a Script -> its next
    answer, an exception instance -> raised, anything else -> itself."""
    if isinstance(a, calls):
        return a.fn(*args, **(kw or {}))
    if isinstance(a, Script):
        return a()
    if isinstance(a, BaseException):
        raise a
    return a


def _replaced_method(a: Any):
    def method(self, *args: Any, **kw: Any) -> Any:
        return answer(a, args, kw)

    return method


def _absent(name: str) -> property:
    def get(self) -> Any:
        raise AttributeError(name)

    return property(get)


def mutate(obj: Any, **answers: Any) -> Any:
    """A copy of producer ``obj`` (same state, an instance of a subclass of its class) in
    which each named attribute answers as given instead.  For a method of ``obj``'s class
    (``size``, ``get_buffers``, ``num_chunks``, ``get_column``...) the answer is what every
    call returns; for a property or a data attribute (``ptr``, ``offset``, ``dtype``,
    ``describe_null``, ``metadata``...) what every read returns.  An answer is a value, a
    ``Script`` (changes between reads, or raises on a later read), an exception instance
    (raised), ``calls(fn)`` (the method is ``fn``) or ``MISSING`` (no such attribute)."""
    import inspect

    cls = type(obj)
    ns: dict[str, Any] = {}
    for name, a in answers.items():
        static = inspect.getattr_static(cls, name, None)
        if a is MISSING:
            ns[name] = _absent(name)
        elif static is not None and not isinstance(static, property) and callable(static):
            ns[name] = _replaced_method(a)
        else:
            ns[name] = property(lambda self, a=a: answer(a))
    sub = type(f"{cls.__name__}*", (cls,), ns)
    new = object.__new__(sub)
    new.__dict__.update(obj.__dict__)
    return new


_KEEP = np.arange(16, dtype="u1")  # real memory behind raw buffers


def raw_buffer(ptr: Any = None, bufsize: Any = None, device: Any = (CPU, 0), *,
               mem: np.ndarray = _KEEP) -> Buffer:
    """A Buffer without ``__dlpack__`` (the spec's minimum) over ``mem`` (kept alive; by
    default 16 bytes) whose ptr, bufsize and device are given verbatim or as Scripts;
    ``ptr`` and ``bufsize`` default to the start and size of ``mem``."""
    return mutate(Buffer(mem, ptr=ptr, bufsize=bufsize, device=device), __dlpack__=MISSING)


# ---------------------------------------------------------------------------
# Conformant producers over one NumPy array each (the testing kit's subjects)


def _ix(arr: np.ndarray) -> tuple:
    return (*interchange_dtype(arr.dtype)[:3], "=")


def column(
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
    categorical: Categorical | None = None,
) -> Column:
    """A conformant one-chunk Column whose data buffer is all of ``data`` (size: what follows
    ``offset``)."""
    buf = Buffer(np.ascontiguousarray(data), device=(CPU, None))
    return Column(
        size=len(data) - offset if size is None else size,
        dtype=dtype or _ix(data),
        data=(buf, data_dtype or dtype or _ix(data)),
        validity=validity,
        offsets=offsets,
        offset=offset,
        null=null,
        null_count=null_count,
        categorical=categorical,
    )


def int_column(**kw: Any) -> Column:
    return column(np.arange(10, dtype="i8"), **kw)


def string_column(strs=("a", "bb", None, "dddd"), *, large: bool = False, **kw: Any) -> Column:
    raw = [s.encode() if s is not None else b"" for s in strs]
    data = np.frombuffer(b"".join(raw) or b"\0", dtype="u1").copy()
    offs = np.zeros(len(raw) + 1, dtype="i8" if large else "i4")
    offs[1:] = np.cumsum([len(r) for r in raw])
    valid = np.packbits(np.array([s is not None for s in strs], dtype=bool), bitorder="little")
    args: dict[str, Any] = {
        "dtype": (STRING, 8, "U" if large else "u", "="),
        "data_dtype": UINT8_DTYPE[:3] + ("=",),
        "size": len(strs),
        "null": (USE_BITMASK, 0),
        "null_count": sum(s is None for s in strs),
        "validity": (Buffer(valid, device=(CPU, None)), BITMASK_DTYPE),
        "offsets": (Buffer(offs, device=(CPU, None)), _ix(offs)),
    }
    args.update(kw)
    return column(data, **args)


def categorical_column(codes=(0, 1, -1, 1), **kw: Any) -> Column:
    cats = string_column(("low", "high"), null=(NON_NULLABLE, None), null_count=0, validity=None)
    c = np.array(codes, dtype="i1")
    args: dict[str, Any] = {
        "dtype": (CATEGORICAL, 8, "c", "="),
        "data_dtype": (INT, 8, "c", "="),
        "null": (USE_SENTINEL, -1),
        "null_count": int(np.count_nonzero(c == -1)),
        "categorical": Categorical(cats),
    }
    args.update(kw)
    return column(c, **args)


def masked_validity() -> tuple:
    """The bitmask of ``masked_column``: 12 bits, bit 4 clear."""
    bits = np.ones(12, dtype=bool)
    bits[4] = False
    return (Buffer(np.packbits(bits, bitorder="little"), device=(CPU, None)), BITMASK_DTYPE)


def masked_column(**kw: Any) -> Column:
    """int32 values with a bitmask; element 3 (after offset 1) is null."""
    args: dict[str, Any] = {
        "offset": 1,
        "size": 11,
        "null": (USE_BITMASK, 0),
        "null_count": 1,
        "validity": masked_validity(),
    }
    args.update(kw)
    return column(np.arange(12, dtype="i4"), **args)


def good_dataframe() -> DataFrame:
    return DataFrame(
        {
            "i": column(np.arange(4, dtype="i8")),
            "f": column(np.array([1.0, np.nan, 3.0, 4.0]), null=(USE_NAN, None), null_count=1),
            "s": string_column(),
            "c": categorical_column(),
            "m": masked_column(offset=8, size=4, null_count=0),
        }
    )


def _with_buffers(base: Column, **changes: Any) -> Column:
    bufs = dict(base.get_buffers())
    bufs.update(changes)
    return mutate(base, get_buffers=bufs)


def _wrong_chunks() -> Column:
    """size() says 10, its two chunks hold 3 + 3 values."""
    chunks = [column(np.arange(3, dtype="i8")), column(np.arange(6, dtype="i8"), offset=3)]
    return mutate(int_column(), num_chunks=2, get_chunks=calls(lambda n_chunks=None: iter(chunks)))


def _no_dataframe_method(base: DataFrame) -> Any:
    return mutate(base, __dataframe__=MISSING)


# For every producer requirement (P-n in docs/requirements.md) one producer that breaks it:
# requirement ID -> factory returning (kind, object), kind "buffer", "column" or "dataframe".
BROKEN: dict[str, Any] = {
    # Buffers
    "P-1": lambda: ("buffer", raw_buffer(ptr=-8)),
    "P-2": lambda: ("buffer", raw_buffer(bufsize=-1)),
    "P-3": lambda: ("buffer", raw_buffer(device=(99, 0))),
    "P-4": lambda: ("buffer", raw_buffer(ptr=0, bufsize=16)),
    # claims 8 bytes but exports 16 through DLPack
    "P-5": lambda: ("buffer", Buffer(np.arange(2, dtype="i8"), bufsize=8, device=(CPU, None))),
    # Columns
    "P-10": lambda: ("column", mutate(int_column(), size=-1)),
    "P-11": lambda: ("column", mutate(int_column(), offset=-2)),
    "P-12": lambda: ("column", mutate(int_column(), dtype=(INT, 64, "i", "="))),
    "P-13": lambda: ("column", mutate(masked_column(), describe_null=(USE_BITMASK, 7))),
    "P-14": lambda: ("column", mutate(int_column(), null_count=11)),
    "P-15": lambda: ("column", mutate(int_column(), get_buffers={"data": None})),
    "P-16": lambda: ("column", _with_buffers(int_column(), validity=masked_validity())),
    "P-17": lambda: (
        "column",
        _with_buffers(masked_column(), validity=(masked_validity()[0], BYTEMASK_DTYPE)),
    ),
    "P-18": lambda: (
        "column",
        masked_column(
            null_count=0,
            validity=(Buffer(np.array([0xFF], dtype="u1"), device=(CPU, None)), BITMASK_DTYPE),
        ),
    ),
    "P-19": lambda: ("column", string_column(data_dtype=(STRING, 8, "u", "="))),
    "P-20": lambda: ("column", column(np.arange(4, dtype="i8"), size=6)),
    "P-21": lambda: ("column", string_column(offsets=None)),
    "P-22": lambda: ("column", string_column(dtype=(STRING, 8, "u", "="), large=True)),
    "P-23": lambda: (
        "column",
        string_column(offsets=(Buffer(np.array([0, 1, 3, 2, 40], dtype="i4")), INT32_DTYPE)),
    ),
    "P-24": lambda: ("column", mutate(categorical_column(), describe_categorical=None)),
    "P-25": lambda: ("column", categorical_column(codes=(0, 1, 5, -1))),
    "P-26": lambda: ("column", masked_column(null_count=3)),
    "P-27": lambda: ("column", _wrong_chunks()),
    "P-28": lambda: ("column", mutate(int_column(), metadata=None)),
    # DataFrames
    "P-30": lambda: ("dataframe", mutate(good_dataframe(), num_columns=7)),
    "P-31": lambda: ("dataframe", mutate(good_dataframe(), num_rows=3)),
    "P-32": lambda: ("dataframe", mutate(good_dataframe(), get_column=int_column())),
    "P-33": lambda: ("dataframe", mutate(good_dataframe(), select_columns=good_dataframe())),
    "P-34": lambda: ("dataframe", mutate(good_dataframe(), select_columns_by_name=DataFrame({}))),
    "P-35": lambda: ("dataframe", mutate(good_dataframe(), num_chunks=2)),
    "P-36": lambda: ("dataframe", mutate(good_dataframe(), metadata=[("a", 1)])),
    "P-37": lambda: ("dataframe", _no_dataframe_method(good_dataframe())),
}


class ProtocolOnlyColumn:
    """A peer's interchange Column seen through the protocol only: every
    attribute forwarded, the peer's type hidden (dfbuffer reads pandas' own
    objects through the frame behind them; tests of the protocol walker on
    pandas' buffers wrap them in this)."""

    def __init__(self, col: Any) -> None:
        self._wrapped = col

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__arrow"):  # the protocol only: no Arrow export
            raise AttributeError(name)
        return getattr(self._wrapped, name)


class ProtocolOnlyFrame(ProtocolOnlyColumn):
    """A peer's interchange DataFrame seen through the protocol only."""

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> Any:
        return self

    def get_column(self, i: int) -> Any:
        return ProtocolOnlyColumn(self._wrapped.get_column(i))

    def get_column_by_name(self, name: str) -> Any:
        return ProtocolOnlyColumn(self._wrapped.get_column_by_name(name))

    def get_columns(self) -> Any:
        return [ProtocolOnlyColumn(c) for c in self._wrapped.get_columns()]


def long_large_strings(rng: np.random.Generator, n: int) -> Any:
    """A pyarrow ``large_string`` array of ``n`` strings of 50 to 150 characters
    (a-z, 0-9) drawn from ``rng``: the long strings of the string-view tests and
    benchmarks."""
    import pyarrow as pa

    lens = rng.integers(50, 151, n)
    chars = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", "u1")
    data = chars[rng.integers(0, len(chars), int(lens.sum()))].tobytes()
    offs = np.zeros(n + 1, "i8")
    np.cumsum(lens, out=offs[1:])
    return pa.Array.from_buffers(
        pa.large_string(), n, [None, pa.py_buffer(offs), pa.py_buffer(data)]
    )


class DlpackOnly:
    """A DLPack producer (and nothing else) over an array-like `inner`: a plain,
    GC-visible object, so what is stored on it can close a cycle."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __dlpack__(self, **kw: Any) -> Any:
        return self.inner.__dlpack__(**kw)

    def __dlpack_device__(self) -> Any:
        return self.inner.__dlpack_device__()
