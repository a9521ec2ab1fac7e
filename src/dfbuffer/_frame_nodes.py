"""The bottom of the Arrow-outward Python: each frame source's columns as Arrow nodes.

Every function here returns an :class:`ArrowNodes`, the ``(fields, batches)`` of the
Arrow C structs that ``_arrow_table_schema`` / ``_arrow_table_stream`` (src/_interchange/
outward/arrow_table_export.c) assemble over :class:`dfbuffer.Buffer` objects, so
every exported buffer keeps its producer's memory alive until the consumer's release
callback drops it.  It imports only the C extension; the modules above it are, in
order, ``_schema`` (schema()), ``_arrow_interchange`` (the interchange view,
to_interchange), ``_to_arrow`` (ArrowExport, to_arrow) and the package
(tests/source/test_module_layers.py checks that no import runs back up).

Sources (see docs/design.md, "to_arrow"), each as the frame-source table
(src/_interchange/readers/frame_source.c, ``_frame_source``) names it:

* pandas DataFrames and pandas' interchange objects: the frame behind them,
  its numeric columns through the block reader, the others through pandas'
  own Arrow export (pandas' ``__dataframe__`` buffers drop the slice offset of
  Arrow-backed columns) or, without pyarrow, from pandas' own arrays;
* Arrow PyCapsule producers: imported once (``_arrow_nodes``,
  src/_interchange/outward/arrow_passthrough.c) and handed out again node for
  node, zero-copy, whatever the format (lists, structs, maps, unions,
  run-end encoded, views, dictionaries, extension types);
* interchange-only objects: the protocol's buffers, zero-copy; null
  representations Arrow has no form for (byte masks, sentinels, a bitmask
  where 1 marks a null, bytes for booleans) become a copied bitmap;
* a mapping of column names to arrays or Buffers: each value zero-copy
  (masked arrays get a bitmap of their mask; NumPy booleans are packed).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dfbuffer._interchange import (
    Buffer,
    CopyError,
    _arrow_column_nodes,
    _arrow_format,
    _arrow_nodes,
    _arrow_table_schema,
    _arrow_table_stream,
    _arrow_type,
    _not_a_frame_error,
    _select_columns,
    from_dataframe,
)
from dfbuffer._sources import is_arrow_producer, pandas_array_frame

__all__ = ["ArrowNodes", "check_bool", "check_choice", "have_pyarrow", "not_a_frame",
           "table_format", "unique_names"]

def table_format(t: str | np.dtype[Any]) -> str:
    """The Arrow format the type table gives ``t``: the name of one of its rows without
    parameters ("utf8 string", "null", ...) or a NumPy dtype it has one for
    (``_arrow_format``); RuntimeError for anything else (a programming error here)."""
    fmt = _arrow_format(t)
    if fmt is None:
        raise RuntimeError(f"the type table has no Arrow format for {t!r}")
    return fmt


# the formats of the type table's rows these columns are made of
_BOOL = table_format("bit-packed bool")
_NULL = table_format("null")
_UTF8 = table_format("utf8 string")
_LARGE_UTF8 = table_format("large utf8 string")
# the logical types an interchange DATETIME column may have
_TEMPORAL = frozenset({"date", "datetime", "duration", "time", "interval"})

_Chunk = tuple  # (length, null_count, offset, buffers, dictionary chunk | None)


class ArrowNodes:
    """Arrow nodes held for export: a table's fields and its batches of column
    chunks, handed out as new Arrow structs on every ``__arrow_c_stream__`` call.

    :class:`dfbuffer.ArrowExport` is this with the conversions of the layers
    above (``__dataframe__``, ``__array__``, its repr).
    """

    __slots__ = ("_batches", "_fields", "__weakref__")

    def __init__(self, fields: tuple[tuple[str, str, str | None, bool], ...],
                 batches: tuple[tuple[int, tuple[_Chunk, ...]], ...]) -> None:
        self._fields = fields
        self._batches = batches

    @property
    def column_names(self) -> list[str]:
        """The column names, in order."""
        return [f[0] for f in self._fields]

    @property
    def num_rows(self) -> int:
        """The number of rows (summed over the batches)."""
        return sum(b[0] for b in self._batches)

    def __arrow_c_schema__(self) -> object:
        """An ``arrow_schema`` capsule: a struct of the columns."""
        return _arrow_table_schema(self._fields)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """An ``arrow_array_stream`` capsule of the batches, zero-copy.

        ``requested_schema`` is ignored (the PyCapsule interface lets a
        producer that cannot cast answer in its own schema)."""
        return _arrow_table_stream(self._fields, self._batches)

    def _selected(self, columns: Sequence[str] | None) -> ArrowNodes:
        """The columns named ``columns``, in that order (all: ``self``)."""
        if columns is None:
            return self
        keep = _select(self.column_names, columns)
        return ArrowNodes(tuple(self._fields[i] for i in keep),
                          tuple((n, tuple(c[i] for i in keep)) for n, c in self._batches))


def have_pyarrow() -> bool:
    """True when pyarrow can be imported (a blocked or missing one: False)."""
    if "pyarrow" in sys.modules:
        return sys.modules["pyarrow"] is not None
    try:
        import pyarrow  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def check_bool(func: str, what: str, value: object) -> bool:
    """``value`` of bool option ``what`` of function ``func`` (``allow_copy=``): True,
    False or a NumPy bool scalar, as the C functions take it; TypeError naming the
    function and the keyword for anything else (no truth value is guessed)."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{func}() {what} must be True or False, not {type(value).__name__}")
    return bool(value)


def check_choice(func: str, what: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` of str option ``what`` of function ``func``, one of ``choices``, with
    the C functions' errors: TypeError for a non-str, ValueError naming the choices."""
    names = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"
    if not isinstance(value, str):
        raise TypeError(f"{func}() {what} must be a str ({names}), not {type(value).__name__}")
    if value not in choices:
        raise ValueError(f"{func}() {what} must be {names}, not {value!r}")
    return value


def not_a_frame(func: str, obj: object) -> BaseException:
    """The TypeError of public function ``func`` for ``obj``, which it does not read:
    the C functions' own (``_not_a_frame_error``, src/_interchange/readers/
    frame_source.c), so every function's message is the same but for its name."""
    return _not_a_frame_error(func, obj)


def unique_names(func: str, frame: Any) -> None:
    """ValueError naming the first column name that several columns of pandas frame
    ``frame`` share (an Arrow schema, like a dict, keeps one column per name here)."""
    names = [str(c) for c in frame.columns]
    if len(set(names)) == len(names):
        return
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{func}() takes a frame of unique column names: duplicate "
                             f"column name {name!r} (rename the columns)")
        seen.add(name)


def _select(names: list[str], columns: Sequence[Any] | None) -> list[int]:
    """The positions in ``names`` of the columns ``columns=`` selects, by the one rule
    of every function (``_select_columns``: names matched as ``str()``, a repeated
    name repeated, the same KeyError / TypeError / ValueError text)."""
    return _select_columns(names, columns)


# -- Arrow producers ------------------------------------------------------

def _from_arrow(obj: Any, columns: Sequence[str] | None) -> ArrowNodes:
    """An Arrow producer's columns handed out again node for node (every
    format: nested, views, run-end encoded, extension types with their
    metadata), zero-copy, without reading a value (``_arrow_nodes``)."""
    fields, batches = _arrow_nodes(obj)
    return ArrowNodes(fields, batches)._selected(columns)


# -- interchange producers ------------------------------------------------

def _buffer(pair: Any, keep: tuple[Any, ...], name: str) -> Buffer:
    """A dfbuffer.Buffer over an interchange buffer (its owner: the buffer,
    its column and frame, which pandas' temporaries need)."""
    buf = pair[0]
    if isinstance(buf, Buffer):
        return buf
    dev = buf.__dlpack_device__()
    if int(dev[0]) != 1:
        raise BufferError(f"column {name!r}: to_arrow exports host memory only, "
                          f"the buffer is on device {dev}")
    return Buffer(int(buf.ptr), int(buf.bufsize), owner=(buf, *keep), dtype="u1")


def _need(buf: Buffer, nbytes: int, name: str, what: str) -> None:
    if buf.bufsize < nbytes:
        raise BufferError(f"column {name!r}: the {what} buffer holds {buf.bufsize} "
                          f"bytes, {nbytes} are needed")


def _view(buf: Buffer, dtype: Any, count: int) -> np.ndarray:
    """The first ``count`` items of host Buffer ``buf`` as a read-only array."""
    if count == 0:  # an empty column's Buffer may say stride 0
        return np.empty(0, dtype=dtype)
    return np.frombuffer(memoryview(buf), dtype=dtype, count=count)  # type: ignore[arg-type]


def _bitmap_from_bool(valid: np.ndarray) -> Buffer:
    bits = np.packbits(np.ascontiguousarray(valid, dtype=bool), bitorder="little")
    return Buffer.from_object(bits)


def _validity(col: Any, bufs: dict[str, Any], data: Buffer, size: int, off: int,
              bits: int, name: str, keep: tuple[Any, ...]) -> tuple[Buffer | None, int]:
    """(validity bitmap or None, null count) for Arrow, at offset ``off``."""
    kind, value = col.describe_null
    kind = int(kind)
    if kind in (0, 1):  # NON_NULLABLE (a bitmap handed anyway is ignored), USE_NAN
        return None, 0
    if kind == 3:  # USE_BITMASK
        vb = bufs.get("validity")
        if vb is None:
            raise ValueError(f"column {name!r}: USE_BITMASK without a validity buffer")
        v = _buffer(vb, keep, name)
        _need(v, (off + size + 7) // 8, name, "validity")
        if int(value) == 0:
            return v, -1
        raw = _view(v, dtype=np.uint8, count=(off + size + 7) // 8)
        return Buffer.from_object(np.invert(raw)), -1
    if kind == 4:  # USE_BYTEMASK
        vb = bufs.get("validity")
        if vb is None:
            raise ValueError(f"column {name!r}: USE_BYTEMASK without a validity buffer")
        v = _buffer(vb, keep, name)
        _need(v, off + size, name, "validity")
        raw = _view(v, dtype=np.uint8, count=off + size)
        return _bitmap_from_bool(raw == 0 if int(value) == 1 else raw != 0), -1
    if kind == 2:  # USE_SENTINEL
        dt = np.dtype(f"i{bits // 8}")
        vals = _view(data, dtype=dt, count=off + size)
        return _bitmap_from_bool(vals != value), -1
    raise ValueError(f"column {name!r}: unknown null representation {kind}")


def _ix_chunk(col: Any, name: str, keep: tuple[Any, ...]) -> tuple[str, str | None, _Chunk]:
    """(format, dictionary format, chunk) of one interchange column chunk."""
    kind, bits, fmt, endian = col.dtype
    kind, bits = int(kind), int(bits)
    if endian not in ("=", "|") and endian != ("<" if np.little_endian else ">"):
        raise NotImplementedError(f"column {name!r}: non-native byte order {endian!r}")
    size, off = int(col.size()), int(col.offset)
    keep = (col, *keep)
    bufs = col.get_buffers()
    data = _buffer(bufs["data"], keep, name)
    dic = None
    if kind in (0, 1, 2, 22, 23):
        if kind == 22:
            t = _arrow_type(fmt) if isinstance(fmt, str) else None
            if t is None or t["logical"] not in _TEMPORAL:
                raise NotImplementedError(f"column {name!r}: datetime format {fmt!r}")
            out_fmt = fmt
        else:
            # the data buffer's own width for categorical codes; the
            # column's kind and width otherwise (never the data buffer's
            # label, which some producers give the logical dtype)
            key = (0, int(bufs["data"][1][1])) if kind == 23 else (kind, bits)
            number = _arrow_format(key)
            if number is None:
                raise NotImplementedError(f"column {name!r}: dtype {col.dtype!r}")
            out_fmt = number
            bits = key[1]
        _need(data, (off + size) * bits // 8, name, "data")
        validity, nulls = _validity(col, bufs, data, size, off, bits, name, keep)
        chunk_bufs: tuple[Any, ...] = (validity, data)
        if kind == 23:
            cat = col.describe_categorical
            if not cat.get("is_dictionary", False) or cat.get("categories") is None:
                raise NotImplementedError(f"column {name!r}: categorical without a dictionary")
            dfmt, _, dic = _ix_chunk(cat["categories"], name, keep)
            return out_fmt, dfmt, (size, nulls, off, chunk_bufs, dic)
        return out_fmt, None, (size, nulls, off, chunk_bufs, None)
    if kind == 20:  # BOOL
        validity, nulls = _validity(col, bufs, data, size, off, 8, name, keep)
        if bits == 1:
            _need(data, (off + size + 7) // 8, name, "data")
            return _BOOL, None, (size, nulls, off, (validity, data), None)
        _need(data, off + size, name, "data")
        raw = _view(data, dtype=np.uint8, count=off + size)
        return _BOOL, None, (size, nulls, off, (validity, _bitmap_from_bool(raw != 0)), None)
    if kind == 21:  # STRING
        ob = bufs.get("offsets")
        if ob is None:
            raise ValueError(f"column {name!r}: a string column without offsets")
        width = int(ob[1][1])  # the offsets' own width decides (pandas says "u" with 64)
        if width not in (32, 64):
            raise ValueError(f"column {name!r}: offsets of {width} bits")
        offs = _buffer(ob, keep, name)
        _need(offs, (off + size + 1) * width // 8, name, "offsets")
        # read once into our own copy, checked: consumers index data with it
        copy = _view(offs, dtype=f"i{width // 8}", count=off + size + 1).copy()
        part = copy[off:]
        if part.size and (part[0] < 0 or np.any(part[1:] < part[:-1])
                          or part[-1] > data.bufsize):
            raise ValueError(f"column {name!r}: string offsets out of order or past "
                             "the data buffer")
        validity, nulls = _validity(col, bufs, data, size, off, 8, name, keep)
        out_fmt = _UTF8 if width == 32 else _LARGE_UTF8
        return out_fmt, None, (size, nulls, off,
                               (validity, Buffer.from_object(copy), data), None)
    raise NotImplementedError(f"column {name!r}: interchange dtype {col.dtype!r}")


class _Unsupported(Exception):
    """A column (by index) whose interchange type to_arrow has no Arrow format for."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _from_interchange(df: Any, columns: Sequence[str] | None,
                      skip: bool = False) -> ArrowNodes:
    names = [str(n) for n in df.column_names()]
    keep_idx = _select(names, columns)
    while True:
        try:
            return _ix_export(df, names, keep_idx, skip)
        except _Unsupported as e:  # skip: leave the column out, start again
            keep_idx = [i for i in keep_idx if i != e.index]


def _ix_export(df: Any, names: list[str], keep_idx: list[int], skip: bool) -> ArrowNodes:
    nchunks = int(df.num_chunks())
    parts = list(df.get_chunks()) if nchunks > 1 else [df]
    fields: list[tuple[str, str, str | None, bool]] | None = None
    batches = []
    for part in parts:
        chunks = []
        fmts = []
        for i in keep_idx:
            n = names[i]
            try:
                col = part.get_column(i)
            except (ValueError, TypeError, NotImplementedError) as e:
                # how producers refuse a column the protocol cannot describe (pyarrow's
                # ValueError for a list column), named as from_dataframe names it
                if skip:
                    raise _Unsupported(i) from None
                raise NotImplementedError(
                    f"column {n!r}: its producer's get_column() failed to describe it: "
                    f"{type(e).__name__}: {e}") from e
            sub = list(col.get_chunks()) if int(col.num_chunks()) > 1 else [col]
            if len(sub) != 1:
                raise NotImplementedError(
                    f"column {n!r}: columns chunked apart from their frame")
            try:
                fmt, dfmt, chunk = _ix_chunk(sub[0], n, (part, df))
            except NotImplementedError:
                if not skip:
                    raise
                raise _Unsupported(i) from None
            ordered = False
            if dfmt is not None:
                ordered = bool(sub[0].describe_categorical.get("is_ordered", False))
            fmts.append((n, fmt, dfmt, ordered))
            chunks.append(chunk)
        if fields is None:
            fields = fmts
        elif [f[1:3] for f in fields] != [f[1:3] for f in fmts]:
            raise ValueError("the chunks of the frame disagree on the column types")
        length = int(part.num_rows()) if keep_idx else 0
        batches.append((length, tuple(chunks)))
    if fields is None:
        fields = [(names[i], _NULL, None, False) for i in keep_idx]
    return ArrowNodes(tuple(fields), tuple(batches))


# -- pandas frames --------------------------------------------------------

def _from_pandas(frame: Any, columns: Sequence[str] | None, *,
                 skip: bool = False, allow_copy: bool = True) -> ArrowNodes:
    """A pandas DataFrame: its numpy-backed numeric columns through the frame
    reader (zero-copy where contiguous; a strided column, as of ``df[::2]``
    or a 2-D block viewed across its rows, is copied into a contiguous
    buffer the export owns, or with ``allow_copy`` False raises CopyError;
    float NaN and NaT become nulls, as pandas' own Arrow export says, with a
    bitmap of them), the other columns through pandas' Arrow export of that
    sub-frame; the whole frame through the export when the parts cannot be
    joined (duplicate names, several batches).  A column Arrow cannot hold
    raises NotImplementedError naming it, or with ``skip`` is left out."""
    if skip:
        names = [str(c) for c in frame.columns]
        dtypes = list(frame.dtypes)
        ok = []
        for i in _select(names, columns):
            try:
                if not (isinstance(dtypes[i], np.dtype) and dtypes[i].kind in "biufmM"):
                    _from_pandas(frame.iloc[:, [i]], None)  # an export tried alone
            except NotImplementedError:
                continue
            ok.append(names[i])
        columns = ok
    names = [str(c) for c in frame.columns]
    if len(set(names)) != len(names):
        return _from_arrow(frame, columns)
    keep = _select(names, columns)
    dtypes = list(frame.dtypes)
    for i in keep:
        if isinstance(dtypes[i], np.dtype) and dtypes[i].kind in "cV":
            raise NotImplementedError(
                f"column {names[i]!r}: Arrow has no type for a pandas {dtypes[i]} column")
    numeric = [i for i in keep
               if isinstance(dtypes[i], np.dtype) and dtypes[i].kind in "biufmM"]
    rest = [i for i in keep if i not in set(numeric)]
    parts: dict[int, tuple[tuple[str, str, str | None, bool], _Chunk]] = {}
    pd = sys.modules["pandas"]
    arrow = have_pyarrow()
    own = [i for i in rest if not arrow or isinstance(dtypes[i], pd.SparseDtype)]
    for i in own:
        parts[i] = _pandas_own(frame, i, names[i])
    rest = [i for i in rest if i not in set(own)]
    if rest:
        sub = frame.iloc[:, rest]
        if type(sub.index) is not pd.RangeIndex:
            sub = sub.reset_index(drop=True)  # no index column to export
        other = _pandas_export(sub, [names[i] for i in rest])
        if len(other._batches) != 1 or len(other._fields) != len(rest):
            return _from_arrow(frame, columns)
        for j, i in enumerate(rest):
            parts[i] = (other._fields[j], other._batches[0][1][j])
    if numeric:
        # the whole frame when it is all numeric (a sub-frame is a view on
        # pandas 3, a copy on pandas 2)
        sub = frame if len(numeric) == len(names) else frame.iloc[:, numeric]
        conv = from_dataframe(sub, nulls="mask")
        for i, values in zip(numeric, conv.values(), strict=True):
            # a NaN makes the sum NaN (so may infinities of both signs): the
            # full scan only then
            if (type(values) is np.ndarray and values.dtype.kind == "f"
                    and np.isnan(np.add.reduce(values))):
                nan = np.isnan(values)
                if nan.any():
                    values = np.ma.MaskedArray(values, mask=nan)
            values = _contiguous(names[i], values, allow_copy)
            fmt, chunk = _mapping_column(names[i], values)
            parts[i] = ((names[i], fmt, None, False), chunk)
    fields = tuple(parts[i][0] for i in keep)
    chunks = tuple(parts[i][1] for i in keep)
    return ArrowNodes(fields, ((len(frame), chunks),))


def _contiguous(name: str, values: Any, allow_copy: bool) -> Any:
    """Column ``values`` (an ndarray or MaskedArray) with contiguous data, as Arrow
    needs: itself when it is, else a contiguous copy (the mask kept), or CopyError
    naming column ``name`` when ``allow_copy`` is False."""
    data = np.ma.getdata(values)
    if data.ndim != 1 or data.shape[0] < 2 or data.strides[0] == data.itemsize:
        return values
    if not allow_copy:
        raise CopyError(f"column {name!r}: exporting a strided column to Arrow needs a "
                        "copy, which allow_copy=False forbids")
    if isinstance(values, np.ma.MaskedArray):
        return np.ma.MaskedArray(np.ascontiguousarray(data), mask=np.ma.getmaskarray(values))
    return np.ascontiguousarray(data)


def _foreign(e: BaseException | None) -> bool:
    """Whether ``e`` is an error of another library's type (pyarrow's, polars')."""
    return e is not None and type(e).__module__.split(".")[0] not in ("builtins", "dfbuffer")


def foreign_cause(e: BaseException) -> BaseException | None:
    """The other library's error behind ``e``: ``e`` itself when it is one, or the
    ``__cause__`` of the NotImplementedError that the C Arrow import makes of a
    producer's failed export; None when ``e`` is dfbuffer's own or a builtin one."""
    if _foreign(e):
        return e
    return e.__cause__ if _foreign(e.__cause__) else None


def pandas_export_error(frame: Any, names: list[str],
                        error: BaseException) -> NotImplementedError:
    """The NotImplementedError for pandas' Arrow export of ``frame`` (columns
    ``names``) having failed with another library's ``error``: naming the first
    column whose export alone fails, with its error as ``__cause__``."""
    for j, name in enumerate(names):
        try:
            _from_arrow(frame.iloc[:, [j]], None)
        except Exception as e:  # noqa: BLE001
            root = foreign_cause(e) or e
            out = NotImplementedError(f"column {name!r}: pandas' Arrow export failed: "
                                      f"{type(root).__name__}: {root}")
            out.__cause__ = root
            return out
    root = foreign_cause(error) or error
    out = NotImplementedError(f"pandas' Arrow export failed: {type(root).__name__}: {root}")
    out.__cause__ = root
    return out


def _pandas_export(sub: Any, names: list[str]) -> ArrowNodes:
    """pandas' own Arrow export of sub-frame ``sub``; an error of pyarrow's
    becomes a NotImplementedError naming the first column it fails on
    (found column by column), with the original as ``__cause__``."""
    try:
        return _from_arrow(sub, None)
    except Exception as e:
        if foreign_cause(e) is None:
            raise
        err = pandas_export_error(sub, names, e)
        raise err from err.__cause__


def _string_chunk(values: np.ndarray, mask: np.ndarray) -> _Chunk:
    """A large_string chunk (UTF-8 copied) of the str objects in ``values``
    (nulls where ``mask``)."""
    enc = [b"" if m else str(v).encode("utf-8") for v, m in zip(values, mask, strict=True)]
    n = len(enc)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=n), out=offsets[1:])
    data = np.frombuffer(b"".join(enc) or b"\0", dtype=np.uint8)
    nulls = int(mask.sum())
    validity = _bitmap_from_bool(~mask) if nulls else None
    return (n, nulls, 0, (validity, Buffer.from_object(offsets), Buffer.from_object(data)), None)


def _pandas_own(frame: Any, i: int, name: str) -> tuple[tuple[str, str, str | None, bool], _Chunk]:
    """Column ``i`` of pandas frame ``frame`` without pyarrow: read as
    from_dataframe reads it (readers/pandas/pandas_columns.c), then exported as a
    mapping column; strings are encoded as a large_string column."""
    sub = frame.iloc[:, [i]]
    values = next(iter(from_dataframe(sub, nulls="mask").values()))
    data = np.ma.getdata(values)
    if data.dtype.kind == "O":
        mask = np.ma.getmaskarray(values)
        if not all(isinstance(v, str) for v, m in zip(data, mask, strict=True) if not m):
            raise NotImplementedError(
                f"column {name!r}: Arrow has no type for a pandas {frame.dtypes.iloc[i]} "
                "column (without pyarrow only strings export)")
        return (name, _LARGE_UTF8, None, False), _string_chunk(data, mask)
    fmt, chunk = _mapping_column(name, values)
    return (name, fmt, None, False), chunk


# -- mappings -------------------------------------------------------------

def _numpy_format(dt: np.dtype, name: str) -> str:
    """The Arrow format the type table gives NumPy dtype ``dt`` of column ``name``;
    TypeError when it has none."""
    fmt = _arrow_format(dt)
    if fmt is None:
        what = "type" if dt.kind in "mM" else "primitive type"
        raise TypeError(f"column {name!r}: Arrow has no {what} for {dt}")
    return fmt


def _mapping_column(name: str, value: Any, func: str = "to_arrow",
                    allow_copy: bool = True) -> tuple[str, _Chunk]:
    mask = None
    if isinstance(value, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(value)
        value = np.ma.getdata(value)
    if isinstance(value, list | tuple):
        raise TypeError(f"column {name!r}: {func}() takes arrays as a mapping's values, "
                        f"got {type(value).__name__}: pass np.asarray(...) of it")
    try:
        buf = value if isinstance(value, Buffer) else Buffer.from_object(value)
    except (TypeError, ValueError, BufferError) as e:
        raise type(e)(f"column {name!r}: {e}") from e
    if buf.ndim != 1:
        raise ValueError(f"column {name!r}: {func}() takes 1-D columns, got an array of "
                         f"shape {buf.shape}")
    dt = buf.dtype
    n = buf.shape[0]
    if n > 1 and buf.strides[0] != dt.itemsize:
        # Arrow needs contiguous values: a strided host column is copied, as a strided
        # pandas frame's columns are
        if buf.device != (1, 0):
            raise BufferError(f"column {name!r}: only contiguous columns export to Arrow "
                              f"(a strided column on device {buf.device} is not copied)")
        buf = Buffer.from_object(_contiguous(name, np.asarray(buf), allow_copy))
    validity = None
    nulls = 0
    if mask is not None and mask.any():
        validity = _bitmap_from_bool(~mask)
        nulls = int(mask.sum())
    if dt.kind == "b":
        data = _bitmap_from_bool(_view(buf, dtype=bool, count=n))
        return _BOOL, (n, nulls, 0, (validity, data), None)
    return _numpy_format(dt, name), (n, nulls, 0, (validity, buf), None)


def _from_mapping(data: Mapping[Any, Any], columns: Sequence[str] | None,
                  func: str = "to_arrow", allow_copy: bool = True) -> ArrowNodes:
    # the items in one pass, so that each name goes with its own value
    items = list(data.items())
    names = [str(k) for k, _ in items]
    values = [v for _, v in items]
    fields = []
    chunks = []
    length = None
    for i in _select(names, columns):
        name, value = names[i], values[i]
        pd_frame = pandas_array_frame(value, name)
        if pd_frame is not None or (is_arrow_producer(value) and not isinstance(value, Buffer)):
            # a pandas array as the column of a frame (as column_to_ndarray reads it)
            # an Arrow value is one column: a struct array one struct field
            sub = (ArrowNodes(*_arrow_column_nodes(value)) if pd_frame is None
                   else _from_pandas(pd_frame, None))
            if len(sub._batches) > 1 or len(sub._fields) != 1:
                raise ValueError(f"column {name!r}: pass one Arrow array (one chunk)")
            f = sub._fields[0]
            fields.append((name, *f[1:]))
            # an empty column's export may hold no batch at all
            chunk = sub._batches[0][1][0] if sub._batches else None
        else:
            fmt, chunk = _mapping_column(name, value, func, allow_copy)
            fields.append((name, fmt, None, False))
        n = chunk[0] if chunk is not None else 0
        if length is None:
            length = n
        elif n != length:
            raise ValueError(f"column {name!r}: {func}() takes columns of one length: this "
                             f"one has {n} values, the others {length}")
        chunks.append(chunk)
    full = tuple(c for c in chunks if c is not None)
    if len(full) != len(chunks):
        return ArrowNodes(tuple(fields), ())  # every column is empty: no batch
    return ArrowNodes(tuple(fields), ((length or 0, full),))
