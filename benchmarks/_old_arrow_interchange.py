"""Main's dfbuffer._arrow_interchange before ixview.c (kept for benchmarks/bench_ixview.py
(the old Python re-basing, compared interleaved with the new module in one run).

The DataFrame interchange protocol served over Arrow PyCapsule producers.

``to_interchange(obj)`` imports any object with ``__arrow_c_array__`` or
``__arrow_c_stream__`` (pyarrow, polars, pandas 3, nanoarrow, DuckDB, ...), or only
their device counterparts (``__arrow_c_device_array__`` / ``__arrow_c_device_stream__``:
CPU data as usual, other devices as device Buffers that are never read here),
through the C helper ``dfbuffer._interchange._arrow_import`` and presents it
as a DataFrame interchange object (``__dataframe__``) whose buffers are
:class:`dfbuffer.Buffer` objects over the Arrow memory, without copying.

Layout choices (see docs/design.md):

* A DataFrame chunk is an Arrow record batch (a stream's chunk), so every
  column of a chunk has the same length.
* ``Column.offset`` is 0 whenever that is free: buffers are re-based to the
  first element (the pointers move, nothing is copied).  A bit-packed buffer
  (validity bitmap or bool data) whose Arrow offset is not a multiple of 8
  is copied to bit 0 when ``allow_copy``; otherwise the buffers move by
  whole bytes and ``Column.offset`` is the remaining 0..7 bits, which the
  spec allows and pandas/pyarrow read correctly.
* Strings are ``(STRING, 8, 'u'|'U', '=')`` with ``(INT, 32|64)`` offsets;
  Arrow string views ('vu', polars' strings) are copied to large strings
  ('U') in C, so ``allow_copy=False`` makes such columns raise RuntimeError
  when their buffers are asked for.
* Nulls are ``(USE_BITMASK, 0)`` with the Arrow validity bitmap when a
  chunk has nulls, else ``(NON_NULLABLE, None)`` and no validity buffer.
* The object deliberately has no ``__arrow_c_stream__``: pandas would take
  that path instead of the interchange protocol.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from dfbuffer._interchange import (
    Buffer,
    ColumnNullType,
    DeviceType,
    DtypeKind,
    _arrow_import,
)

__all__ = ["to_interchange"]

_INT = {"c": 8, "s": 16, "i": 32, "l": 64}
_UINT = {"C": 8, "S": 16, "I": 32, "L": 64}
_FLOAT = {"e": 16, "f": 32, "g": 64}

_BOOL_BITS = (DtypeKind.BOOL, 1, "b", "=")
_BYTES = (DtypeKind.UINT, 8, "C", "=")


def _logical_dtype(fmt: str) -> tuple[Any, int, str, str] | None:
    """Return the interchange dtype of Arrow format ``fmt`` (values, not
    dictionary codes), or None when the interchange protocol has none."""
    if fmt in _INT:
        return (DtypeKind.INT, _INT[fmt], fmt, "=")
    if fmt in _UINT:
        return (DtypeKind.UINT, _UINT[fmt], fmt, "=")
    if fmt in _FLOAT:
        return (DtypeKind.FLOAT, _FLOAT[fmt], fmt, "=")
    if fmt == "b":
        return _BOOL_BITS
    if fmt in ("u", "U", "vu"):
        return (DtypeKind.STRING, 8, fmt, "=")
    if fmt == "tdD":
        return (DtypeKind.DATETIME, 32, fmt, "=")
    if fmt == "tdm" or fmt.startswith(("tss:", "tsm:", "tsu:", "tsn:")):
        return (DtypeKind.DATETIME, 64, fmt, "=")
    if fmt in ("tDs", "tDm", "tDu", "tDn"):
        return (DtypeKind.DATETIME, 64, fmt, "=")
    return None


def _physical_dtype(fmt: str) -> tuple[Any, int, str, str]:
    """Return the dtype of the data buffer of a column of Arrow format ``fmt``."""
    if fmt in ("u", "U"):
        return _BYTES
    if fmt == "tdD":
        return (DtypeKind.INT, 32, "i", "=")
    if fmt.startswith("t"):
        return (DtypeKind.INT, 64, "l", "=")
    dt = _logical_dtype(fmt)
    assert dt is not None
    return dt


def _itemsize(fmt: str) -> int:
    """Bytes per stored value of a fixed-width format (0 for bits/strings)."""
    if fmt in ("b", "u", "U", "vu"):
        return 0
    return _physical_dtype(fmt)[1] // 8


def _view(buf: Buffer, start: int, size: int) -> Buffer:
    """A Buffer over ``size`` bytes of ``buf`` from byte ``start`` (same owner, device)."""
    if size == 0:
        return Buffer(buf.ptr + start if buf.ptr else 0, 0, owner=buf.owner,
                      dtype=buf.dtype, readonly=True, native=buf.native, device=buf.device)
    return Buffer(buf.ptr + start, size, owner=buf.owner, dtype=buf.dtype,
                  readonly=True, native=buf.native, device=buf.device)


_HOST = (DeviceType.CPU, DeviceType.CUDA_HOST, DeviceType.ROCM_HOST, DeviceType.CUDA_MANAGED)


def _on_host(buf: Buffer | None) -> bool:
    """Whether a chunk buffer is host memory (device data from an Arrow device
    producer is described, never read)."""
    return buf is None or buf.device[0] in _HOST


def _bits(buf: Buffer | None, offset: int, length: int) -> np.ndarray:
    """Unpacked bits [offset, offset+length) of a bitmap (all ones if None)."""
    if buf is None:
        return np.ones(length, dtype=bool)
    raw = np.asarray(buf).view(np.uint8)
    first = offset // 8
    nbytes = (offset % 8 + length + 7) // 8
    bits = np.unpackbits(raw[first:first + nbytes], bitorder="little")
    return bits[offset % 8: offset % 8 + length].astype(bool)


def _packed(bits: np.ndarray) -> Buffer:
    """A new Buffer holding ``bits`` packed LSB first."""
    arr = np.packbits(bits.astype(np.uint8), bitorder="little")
    if arr.size == 0:
        arr = np.zeros(1, dtype=np.uint8)
        return Buffer(arr.ctypes.data, 0, owner=arr, readonly=True)
    return Buffer(arr.ctypes.data, arr.nbytes, owner=arr, readonly=True)


def _from_array(arr: np.ndarray) -> Buffer:
    """A Buffer over a contiguous NumPy array (the array is the owner)."""
    arr = np.ascontiguousarray(arr)
    if arr.size == 0:
        keep = np.zeros(1, dtype=arr.dtype)
        return Buffer(keep.ctypes.data, 0, owner=keep, dtype=arr.dtype, readonly=True)
    return Buffer(arr.ctypes.data, arr.nbytes, owner=arr, dtype=arr.dtype, readonly=True)


def _raise_error(chunk: dict) -> None:
    """Raise a fresh copy of the exception recorded for a chunk."""
    err = chunk["error"]
    raise type(err)(*err.args)


def _slice_chunk(chunk: dict, start: int, length: int) -> dict:
    """A chunk viewing elements [start, start+length) of ``chunk`` (no copy)."""
    out = dict(chunk)
    out["length"] = length
    if "error" in chunk:
        return out
    out["offset"] = chunk["offset"] + start
    if chunk["validity"] is not None and not _on_host(chunk["validity"]):
        out["null_count"] = None  # on a device: not counted on the host
    elif chunk["validity"] is not None:
        out["null_count"] = int(length - _bits(chunk["validity"], out["offset"], length).sum())
    else:
        out["null_count"] = 0
    if out["null_count"] == 0:
        out["validity"] = None
    return out


class _ArrowColumn:
    """An interchange-protocol Column over one or more Arrow chunks."""

    def __init__(self, name: str, fmt: str, dict_fmt: str | None, ordered: bool,
                 chunks: list[dict], allow_copy: bool) -> None:
        self._name = name
        self._fmt = fmt
        self._dict_fmt = dict_fmt
        self._ordered = ordered
        self._chunks = chunks
        self._allow_copy = allow_copy

    # -- helpers ---------------------------------------------------------
    def _check(self) -> None:
        for c in self._chunks:
            if "error" in c:
                _raise_error(c)

    def _single(self) -> dict:
        """The one chunk, or a concatenation of all chunks (a copy)."""
        self._check()
        if not self._chunks:
            self.dtype  # noqa: B018 - raises NotImplementedError for unsupported formats
            fmt = "U" if self._fmt == "vu" else self._fmt
            chunk = _chunk_from_values(fmt, [])
            if self._dict_fmt is not None:
                chunk["dictionary"] = _chunk_from_values(self._dict_fmt, [])
            return chunk
        if len(self._chunks) == 1:
            return self._chunks[0]
        if not self._allow_copy:
            raise RuntimeError(
                f"column {self._name!r} has {len(self._chunks)} chunks; joining "
                "them needs a copy, which allow_copy=False forbids (use get_chunks())")
        return _concat(self._fmt, self._dict_fmt, self._chunks)

    # -- the protocol ----------------------------------------------------
    def size(self) -> int:
        """Number of elements."""
        return sum(c["length"] for c in self._chunks)

    @property
    def offset(self) -> int:
        """Element offset into the buffers (0 unless a bitmap keeps 0..7 bits)."""
        if len(self._chunks) != 1:
            return 0
        c = self._chunks[0]
        if "error" in c:
            return 0
        return _normalize(self._fmt, c, self._allow_copy)[0]

    @property
    def dtype(self) -> tuple[Any, int, str, str]:
        """(kind, bit_width, Arrow format, endianness)."""
        if self._dict_fmt is not None:
            if self._fmt in _INT:
                return (DtypeKind.CATEGORICAL, _INT[self._fmt], self._fmt, "=")
            if self._fmt in _UINT:
                return (DtypeKind.CATEGORICAL, _UINT[self._fmt], self._fmt, "=")
        dt = _logical_dtype(self._fmt)
        if dt is None:
            self._check()
            raise NotImplementedError(
                f"column {self._name!r}: Arrow format {self._fmt!r} has no "
                "interchange-protocol dtype")
        return dt

    @property
    def describe_categorical(self) -> dict[str, Any]:
        """is_ordered, is_dictionary and the categories (a Column)."""
        if self._dict_fmt is None:
            raise TypeError(f"column {self._name!r} is not categorical (dictionary-encoded)")
        chunk = self._single()
        cats = _ArrowColumn("", self._dict_fmt, None, False, [chunk["dictionary"]],
                            self._allow_copy)
        return {"is_ordered": self._ordered, "is_dictionary": True, "categories": cats}

    @property
    def describe_null(self) -> tuple[Any, Any]:
        """(USE_BITMASK, 0) when the column has nulls, else (NON_NULLABLE, None)."""
        nulls = self.null_count
        if nulls is None or nulls > 0:
            return (ColumnNullType.USE_BITMASK, 0)
        return (ColumnNullType.NON_NULLABLE, None)

    @property
    def null_count(self) -> int | None:
        """Number of nulls (None when unknown: device data whose producer did not count)."""
        counts = [c.get("null_count", 0) for c in self._chunks]
        if any(n is None for n in counts):
            return None
        return sum(counts)

    @property
    def metadata(self) -> dict[str, Any]:
        """Column metadata (none)."""
        return {}

    def num_chunks(self) -> int:
        """Number of chunks (Arrow record batches)."""
        return len(self._chunks)

    def get_chunks(self, n_chunks: int | None = None) -> Iterable[_ArrowColumn]:
        """Yield one Column per chunk; ``n_chunks`` (a multiple of
        num_chunks()) subdivides each chunk without copying."""
        for c in _split(self._chunks, n_chunks):
            yield _ArrowColumn(self._name, self._fmt, self._dict_fmt, self._ordered,
                               [c], self._allow_copy)

    def get_buffers(self) -> dict[str, Any]:
        """{"data": (Buffer, dtype), "validity": ... | None, "offsets": ... | None}."""
        chunk = self._single()
        if self._fmt == "vu" and self._chunks:
            raise RuntimeError(
                f"column {self._name!r}: string views need a copy, which "
                "allow_copy=False forbids")
        _, validity, offsets, data = _normalize(self._fmt, chunk, self._allow_copy)
        if self._dict_fmt is not None:
            data_dtype = self.dtype
            data_dtype = (DtypeKind.INT if self._fmt in _INT else DtypeKind.UINT,
                          data_dtype[1], self._fmt, "=")
        else:
            data_dtype = _physical_dtype(self._fmt)
        out: dict[str, Any] = {"data": (data, data_dtype), "validity": None, "offsets": None}
        if validity is not None:
            out["validity"] = (validity, _BOOL_BITS)
        if offsets is not None:
            bits = 32 if self._fmt == "u" else 64
            out["offsets"] = (offsets, (DtypeKind.INT, bits, "i" if bits == 32 else "l", "="))
        return out

    @property
    def _col(self) -> np.ndarray:
        """The values as a NumPy array (pandas reads categories through it)."""
        if not self._chunks:
            return np.array([], dtype=object)
        parts = [_values(self._fmt, c) for c in self._chunks]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _normalize(fmt: str, chunk: dict, allow_copy: bool):
    """Return (offset, validity, offsets, data) Buffers of one chunk re-based
    so that the exposed offset is 0 (or < 8 when only a copy could do it)."""
    off, n = chunk["offset"], chunk["length"]
    validity, offsets, data = chunk["validity"], chunk["offsets"], chunk["data"]
    if off == 0:
        # the C import sized every buffer for offset + length already
        return 0, validity, offsets, data
    bitpacked = validity is not None or fmt == "b"
    rest = off % 8 if bitpacked else 0
    copy_bits = rest != 0 and allow_copy and _on_host(validity) and _on_host(data)
    shift = off if (copy_bits or rest == 0) else off - rest
    exposed = off - shift
    if validity is not None:
        if copy_bits:
            validity = _packed(_bits(validity, off, n))
        else:
            validity = _view(validity, shift // 8, (exposed + n + 7) // 8)
    if fmt == "b":
        if copy_bits:
            data = _packed(_bits(data, off, n))
        else:
            data = _view(data, shift // 8, (exposed + n + 7) // 8)
    elif offsets is not None:
        w = 4 if fmt == "u" else 8
        offsets = _view(offsets, shift * w, (exposed + n + 1) * w)
    elif data is not None:
        size = _itemsize(fmt)
        data = _view(data, shift * size, (exposed + n) * size)
    return exposed, validity, offsets, data


def _values(fmt: str, chunk: dict) -> np.ndarray:
    """Materialize one chunk's values (object array with None for nulls when
    it has nulls or holds strings).  Used for categories only (small)."""
    if "error" in chunk:
        _raise_error(chunk)
    off, n = chunk["offset"], chunk["length"]
    valid = _bits(chunk["validity"], off, n)
    if fmt in ("u", "U"):
        o = np.asarray(chunk["offsets"]).view(np.int32 if fmt == "u" else np.int64)
        raw = bytes(np.asarray(chunk["data"]).view(np.uint8)) if chunk["data"].bufsize else b""
        out = np.empty(n, dtype=object)
        for i in range(n):
            out[i] = raw[o[off + i]:o[off + i + 1]].decode("utf-8") if valid[i] else None
        return out
    if fmt == "b":
        vals = _bits(chunk["data"], off, n)
    else:
        vals = np.asarray(chunk["data"])[off:off + n]
        if fmt == "tdD":
            vals = vals.astype("datetime64[D]")
    if not valid.all():
        vals = vals.astype(object)
        vals[~valid] = None
    return vals


def _split(chunks: list[dict], n_chunks: int | None) -> list[dict]:
    """The chunks, each cut into n_chunks // len(chunks) slices."""
    if n_chunks is None or not chunks:
        return list(chunks)
    if n_chunks < 1 or n_chunks % len(chunks):
        raise ValueError(
            f"n_chunks must be a positive multiple of num_chunks() = {len(chunks)}, "
            f"got {n_chunks}")
    k = n_chunks // len(chunks)
    out: list[dict[str, Any]] = []
    for c in chunks:
        n = c["length"]
        bounds = [n * i // k for i in range(k + 1)]
        out.extend(_slice_chunk(c, bounds[i], bounds[i + 1] - bounds[i]) for i in range(k))
    return out


def _concat(fmt: str, dict_fmt: str | None, chunks: list[dict]) -> dict:
    """Join chunks into one new chunk (copies; offset 0)."""
    n = sum(c["length"] for c in chunks)
    valid = np.concatenate([_bits(c["validity"], c["offset"], c["length"]) for c in chunks])
    nulls = int(n - valid.sum())
    out: dict[str, Any] = {"length": n, "offset": 0, "null_count": nulls,
                           "validity": _packed(valid) if nulls else None,
                           "offsets": None, "dictionary": None}
    if fmt == "b":
        out["data"] = _packed(np.concatenate(
            [_bits(c["data"], c["offset"], c["length"]) for c in chunks]))
    elif fmt in ("u", "U"):
        pieces, offs, pos = [], [np.zeros(1, dtype=np.int64)], 0
        for c in chunks:
            o = np.asarray(c["offsets"]).view(np.int32 if fmt == "u" else np.int64)
            o = o[c["offset"]:c["offset"] + c["length"] + 1].astype(np.int64)
            raw = np.asarray(c["data"]).view(np.uint8)
            pieces.append(raw[o[0]:o[-1]])
            offs.append(o[1:] - o[0] + pos)
            pos += int(o[-1] - o[0])
        offsets = np.concatenate(offs)
        if fmt == "u" and pos > np.iinfo(np.int32).max:
            raise OverflowError("joined string data exceeds int32 offsets")
        out["offsets"] = _from_array(offsets.astype(np.int32 if fmt == "u" else np.int64))
        out["data"] = _from_array(np.concatenate(pieces) if pieces else np.zeros(0, np.uint8))
    elif dict_fmt is not None:
        return _concat_dictionary(fmt, dict_fmt, chunks, out)
    else:
        parts = [np.asarray(c["data"])[c["offset"]:c["offset"] + c["length"]] for c in chunks]
        out["data"] = _from_array(np.concatenate(parts))
    return out


def _concat_dictionary(fmt: str, dict_fmt: str, chunks: list[dict], out: dict) -> dict:
    """Join dictionary-encoded chunks: unify the dictionaries, remap codes."""
    index: dict[Any, int] = {}
    codes = []
    for c in chunks:
        values = _values(dict_fmt, c["dictionary"])
        mapping = np.array([index.setdefault(_key(v), len(index)) for v in values],
                           dtype=np.int64)
        raw = np.asarray(c["data"])[c["offset"]:c["offset"] + c["length"]].astype(np.int64)
        valid = _bits(c["validity"], c["offset"], c["length"])
        raw = np.where(valid, raw, 0)
        if mapping.size == 0:
            codes.append(np.zeros(len(raw), dtype=np.int64))
        else:
            if raw.size and (raw.min() < 0 or raw.max() >= mapping.size):
                raise ValueError("dictionary code out of range")
            codes.append(mapping[raw])
    dtype = np.dtype({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[
        (_INT.get(fmt) or _UINT[fmt])])
    if fmt in _UINT:
        dtype = np.dtype(dtype.str.replace("i", "u"))
    out["data"] = _from_array(np.concatenate(codes).astype(dtype))
    out["dictionary"] = _chunk_from_values(dict_fmt, [k[1] for k in index])
    return out


def _key(v: Any) -> tuple[str, Any]:
    """A hashable key of a dictionary value (NaN-safe enough for categories)."""
    if isinstance(v, np.generic):
        v = v.item()
    return (type(v).__name__, v)


def _chunk_from_values(fmt: str, values: list) -> dict:
    """A chunk holding ``values`` (no nulls) in Arrow format ``fmt``."""
    n = len(values)
    chunk: dict[str, Any] = {"length": n, "offset": 0, "null_count": 0, "validity": None,
                             "offsets": None, "dictionary": None}
    if fmt in ("u", "U"):
        encoded = [str(v).encode("utf-8") for v in values]
        offsets = np.zeros(n + 1, dtype=np.int32 if fmt == "u" else np.int64)
        offsets[1:] = np.cumsum([len(b) for b in encoded]) if encoded else []
        chunk["offsets"] = _from_array(offsets)
        chunk["data"] = _from_array(np.frombuffer(b"".join(encoded), dtype=np.uint8).copy())
    elif fmt == "b":
        chunk["data"] = _packed(np.array(values, dtype=bool))
    else:
        arr = np.array(values)
        if fmt == "tdD":
            arr = arr.astype("datetime64[D]").astype(np.int32)
        elif fmt.startswith("t"):
            arr = arr.astype(np.int64)
        else:
            dt = {"c": "i1", "s": "i2", "i": "i4", "l": "i8", "C": "u1", "S": "u2",
                  "I": "u4", "L": "u8", "e": "f2", "f": "f4", "g": "f8"}[fmt]
            arr = arr.astype(dt)
        chunk["data"] = _from_array(arr)
    return chunk


class _ArrowDataFrame:
    """An interchange-protocol DataFrame over an Arrow PyCapsule producer."""

    def __init__(self, columns: list[_ArrowColumn], n_batches: int,
                 allow_copy: bool) -> None:
        self._columns = columns
        self._n_batches = n_batches
        self._allow_copy = allow_copy
        self._by_name: dict[str, _ArrowColumn] | None = None

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> _ArrowDataFrame:
        """Return the interchange object (itself, with ``allow_copy`` applied)."""
        if allow_copy == self._allow_copy:
            return self
        cols = [_ArrowColumn(c._name, c._fmt, c._dict_fmt, c._ordered, c._chunks, allow_copy)
                for c in self._columns]
        return _ArrowDataFrame(cols, self._n_batches, allow_copy)

    @property
    def metadata(self) -> dict[str, Any]:
        """DataFrame metadata (none)."""
        return {}

    def num_columns(self) -> int:
        """Number of columns."""
        return len(self._columns)

    def num_rows(self) -> int:
        """Number of rows."""
        return self._columns[0].size() if self._columns else 0

    def num_chunks(self) -> int:
        """Number of chunks (Arrow record batches)."""
        return self._n_batches

    def column_names(self) -> list[str]:
        """Column names, in order."""
        return [c._name for c in self._columns]

    def get_column(self, i: int) -> _ArrowColumn:
        """The column at position ``i``."""
        return self._columns[i]

    def get_column_by_name(self, name: str) -> _ArrowColumn:
        """The first column named ``name`` (KeyError if none)."""
        if self._by_name is None:
            self._by_name = {}
            for c in self._columns:
                self._by_name.setdefault(c._name, c)
        return self._by_name[name]

    def get_columns(self) -> Iterable[_ArrowColumn]:
        """Iterate over the columns."""
        return iter(self._columns)

    def select_columns(self, indices: Sequence[int]) -> _ArrowDataFrame:
        """A DataFrame of the columns at ``indices``."""
        if not isinstance(indices, Sequence):
            raise TypeError("indices must be a sequence of ints")
        return _ArrowDataFrame([self._columns[i] for i in indices], self._n_batches,
                               self._allow_copy)

    def select_columns_by_name(self, names: Sequence[str]) -> _ArrowDataFrame:
        """A DataFrame of the columns named ``names``."""
        if not isinstance(names, Sequence) or isinstance(names, str):
            raise TypeError("names must be a sequence of str")
        return _ArrowDataFrame([self.get_column_by_name(n) for n in names],
                               self._n_batches, self._allow_copy)

    def get_chunks(self, n_chunks: int | None = None) -> Iterable[_ArrowDataFrame]:
        """Yield one DataFrame per record batch (``n_chunks``, a multiple of
        num_chunks(), subdivides the batches without copying)."""
        if self._n_batches == 0:
            return
        per_col = [_split(c._chunks, n_chunks) for c in self._columns]
        total = n_chunks if n_chunks is not None else self._n_batches
        for i in range(total):
            cols = [_ArrowColumn(c._name, c._fmt, c._dict_fmt, c._ordered, [pc[i]],
                                 self._allow_copy)
                    for c, pc in zip(self._columns, per_col, strict=True)]
            yield _ArrowDataFrame(cols, 1, self._allow_copy)


def to_interchange(obj: Any, *, allow_copy: bool = True) -> _ArrowDataFrame:
    """Return a DataFrame-interchange-protocol view of an Arrow producer.

    ``obj`` is any object with ``__arrow_c_stream__`` or ``__arrow_c_array__``
    (pyarrow Table / RecordBatch / Array / ChunkedArray, polars DataFrame /
    Series, pandas 3 DataFrame, nanoarrow, ...).  A struct (table) producer
    gives one column per field; any other array gives one column named after
    its field.  The result has ``__dataframe__`` and every method of the
    protocol; its buffers are :class:`dfbuffer.Buffer` objects over the
    Arrow memory (zero-copy), which stays alive as long as any of them.

    ``allow_copy=False`` forbids copies: string-view columns (polars'
    strings) and joining several chunks of a column then raise RuntimeError
    when the buffers are requested.  Columns whose Arrow type the protocol
    cannot describe (lists, structs, decimals, binary, ...) raise
    NotImplementedError naming the Arrow format when used.
    """
    if isinstance(obj, _ArrowDataFrame):
        return obj.__dataframe__(allow_copy=allow_copy)
    _is_table, columns, chunks = _arrow_import(obj, bool(allow_copy))
    cols = [
        _ArrowColumn(name, fmt, dict_fmt, bool(ordered), [row[i] for row in chunks],
                     bool(allow_copy))
        for i, (name, fmt, dict_fmt, ordered, _nullable) in enumerate(columns)
    ]
    return _ArrowDataFrame(cols, len(chunks), bool(allow_copy))
