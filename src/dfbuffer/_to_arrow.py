"""dfbuffer.to_arrow: any producer dfbuffer reads as an Arrow PyCapsule producer.

The layout is decided here; the Arrow C structs are assembled in C
(``_arrow_table_schema`` / ``_arrow_table_stream``, src/_interchange/
ops/to_arrow/arrow_table_export.c) over :class:`dfbuffer.Buffer` objects, so every
exported buffer keeps its producer's memory alive until the consumer's
release callback drops it.  pyarrow is never imported.

Sources (see docs/design.md, "to_arrow"):

* pandas DataFrames and pandas' interchange objects: the frame behind them,
  through pandas' own Arrow export (pandas' ``__dataframe__`` buffers drop
  the slice offset of Arrow-backed columns);
* Arrow PyCapsule producers: imported once (``_arrow_nodes``,
  src/_interchange/ops/to_arrow/arrow_passthrough.c) and handed out again node for
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
    _arrow_nodes,
    _arrow_table_schema,
    _arrow_table_stream,
    _frame_source,
)
from dfbuffer._schema import _interchange_format

__all__ = ["ArrowExport", "to_arrow"]

# interchange (kind, bits) -> Arrow format of the numbers
_NUMBER = {
    (0, 8): "c", (0, 16): "s", (0, 32): "i", (0, 64): "l",
    (1, 8): "C", (1, 16): "S", (1, 32): "I", (1, 64): "L",
    (2, 16): "e", (2, 32): "f", (2, 64): "g",
}
_ARROW_ATTRS = ("__arrow_c_stream__", "__arrow_c_array__",
                "__arrow_c_device_stream__", "__arrow_c_device_array__")

_Chunk = tuple  # (length, null_count, offset, buffers, dictionary chunk | None)


class ArrowExport:
    """A table exported through the Arrow PyCapsule interface.

    Made by :func:`dfbuffer.to_arrow`; it holds the buffers (and through them
    the producers' memory) and hands out new Arrow structs over them on every
    ``__arrow_c_stream__`` call, so it can be read any number of times.

    Parameters
    ----------
    fields, batches : tuple
        Private: what ``to_arrow`` built. Make one with :func:`dfbuffer.to_arrow`.

    Examples
    --------
    >>> import numpy as np
    >>> import pyarrow as pa
    >>> import dfbuffer
    >>> exp = dfbuffer.to_arrow({"x": np.arange(3.0)})
    >>> exp
    <dfbuffer.ArrowExport 3 rows, 1 batches; x: float64>
    >>> pa.table(exp).column("x").to_pylist()
    [0.0, 1.0, 2.0]
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

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> Any:
        """The DataFrame interchange view of these columns (for consumers that
        speak only ``__dataframe__``: plotly, seaborn): ``to_interchange(self)``."""
        from dfbuffer._arrow_interchange import to_interchange  # noqa: PLC0415

        return to_interchange(self, allow_copy=allow_copy)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """A 2-D (rows, columns) copy, :func:`dfbuffer.to_matrix` of the columns
        (numeric ones only; for consumers that call ``numpy.asarray``: scikit-learn)."""
        if copy is False:
            raise ValueError("a table becomes a 2-D array only by a copy")
        from dfbuffer._interchange import to_matrix  # noqa: PLC0415

        return to_matrix(self, dtype=dtype)

    def __repr__(self) -> str:
        from dfbuffer._schema import _type_string, schema  # noqa: PLC0415

        try:
            cols = ", ".join(f"{c.name}: {_type_string(c)}" for c in schema(self).columns)
        except Exception:  # noqa: BLE001 - a repr never raises
            cols = ", ".join(f"{f[0]}: {f[1]}" for f in self._fields)
        return (f"<dfbuffer.ArrowExport {self.num_rows} rows, "
                f"{len(self._batches)} batches; {cols}>")


def not_a_frame(func: str, obj: object, expects: str) -> TypeError:
    """The TypeError of ``func`` for ``obj``, which it does not read: a lazy frame
    (anything with ``.collect``: polars' or narwhals' LazyFrame) is told to collect."""
    if hasattr(obj, "collect"):
        return TypeError(
            f"{func}() got a lazy frame ({type(obj).__name__}), which holds no data yet: "
            "call .collect() on it first")
    return TypeError(f"{func}() expects {expects}, got {type(obj).__name__}")


def frame_source(obj: Any) -> tuple[str, Any]:
    """The frame-source table's answer for ``obj`` (``_frame_source``), a mapping of
    arrays given as its zero-copy Arrow export: ``(kind, frame)``, kind one of "pandas",
    "arrow", "interchange", "schema", "none"."""
    kind, frame, _ = _frame_source(obj)
    if kind == "mapping":
        return "arrow", _from_mapping(obj, None)
    return kind, frame


def _is_arrow(obj: Any) -> bool:
    t = type(obj)
    return any(hasattr(t, a) for a in _ARROW_ATTRS)


def _select(names: list[str], columns: Sequence[str] | None) -> list[int]:
    if columns is None:
        return list(range(len(names)))
    if isinstance(columns, str):
        raise TypeError("columns must be a sequence of column names, not a str")
    pos: dict[str, int] = {}
    for i, n in enumerate(names):
        pos.setdefault(n, i)
    out = []
    for c in columns:
        if c not in pos:
            raise KeyError(f"no column named {c!r}")
        out.append(pos[c])
    return out


# -- Arrow producers ------------------------------------------------------

def _exportable(field: Any) -> bool:
    """Whether to_arrow hands out a column of the import: a type the interchange view
    describes, or one whose flat buffers it holds as they are (nulls, binary, decimals,
    fixed-size binary, intervals; extension types as their storage)."""
    fmt = field.format
    return (field.dtype is not None or fmt in ("n", "z", "Z", "tiM", "tiD", "tin")
            or fmt.startswith(("d:", "w:")))


def _ix_arrow_chunk(chunk: Any, name: str) -> _Chunk:
    if chunk.error is not None:
        raise type(chunk.error)(f"column {name!r}: {chunk.error}")
    bufs: tuple[Any, ...]
    if chunk.format == "n":
        bufs = ()  # the null type has no buffers
    elif chunk.offsets is not None:
        bufs = (chunk.validity, chunk.offsets, chunk.data)
    else:
        bufs = (chunk.validity, chunk.data)
    dic = None if chunk.dictionary is None else _ix_arrow_chunk(chunk.dictionary, name)
    return (chunk.length, chunk.null_count, chunk.offset, bufs, dic)


def _from_arrow(obj: Any, columns: Sequence[str] | None) -> ArrowExport:
    """An Arrow producer's columns handed out again node for node (every
    format: nested, views, run-end encoded, extension types with their
    metadata), zero-copy, without reading a value (``_arrow_nodes``)."""
    fields, batches = _arrow_nodes(obj)
    keep = _select([f[0] for f in fields], columns)
    if keep == list(range(len(fields))):
        return ArrowExport(fields, batches)
    return ArrowExport(tuple(fields[i] for i in keep),
                       tuple((n, tuple(c[i] for i in keep)) for n, c in batches))


def _from_view(view: Any, columns: Sequence[str] | None) -> ArrowExport:
    """to_interchange's own object: the Arrow buffers it holds, as they are."""
    from dfbuffer._arrow_interchange import _rebase
    cols = view._columns
    keep = _select([c._name for c in cols], columns)
    fields = []
    for i in keep:
        if cols[i]._raw is not None:  # the producer's own nodes
            fields.append(cols[i]._raw[0])
            continue
        f = cols[i]._field
        if not _exportable(f):
            raise NotImplementedError(
                f"column {f.name!r}: to_arrow cannot export Arrow format {f.format!r}")
        dfmt = None if f.dictionary is None else _interchange_format(f.dictionary.format)
        fields.append((f.name, _interchange_format(f.format), dfmt, bool(f.ordered)))
    batches = []
    for b in range(view._n_batches):
        # a chunk that kept 0..7 bits of a bitmap offset (allow_copy=False)
        # is re-based to bit 0 (a copy of the bit-packed buffers)
        chunks = tuple(cols[i]._raw[1][b] if cols[i]._raw is not None else
                       _ix_arrow_chunk(_rebase(cols[i]._chunks[b], True), cols[i]._name)
                       for i in keep)
        batches.append((chunks[0][0] if chunks else 0, chunks))
    return ArrowExport(tuple(fields), tuple(batches))


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
            if not (isinstance(fmt, str) and fmt.startswith("t")):
                raise NotImplementedError(f"column {name!r}: datetime format {fmt!r}")
            out_fmt = fmt
        else:
            # the data buffer's own width for categorical codes; the
            # column's kind and width otherwise (never the data buffer's
            # label, which some producers give the logical dtype)
            key = (0, int(bufs["data"][1][1])) if kind == 23 else (kind, bits)
            if key not in _NUMBER:
                raise NotImplementedError(f"column {name!r}: dtype {col.dtype!r}")
            out_fmt = _NUMBER[key]
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
            return "b", None, (size, nulls, off, (validity, data), None)
        _need(data, off + size, name, "data")
        raw = _view(data, dtype=np.uint8, count=off + size)
        return "b", None, (size, nulls, off, (validity, _bitmap_from_bool(raw != 0)), None)
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
        out_fmt = "u" if width == 32 else "U"
        return out_fmt, None, (size, nulls, off,
                               (validity, Buffer.from_object(copy), data), None)
    raise NotImplementedError(f"column {name!r}: interchange dtype {col.dtype!r}")


class _Unsupported(Exception):
    """A column (by index) whose interchange type to_arrow has no Arrow format for."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _from_interchange(df: Any, columns: Sequence[str] | None,
                      skip: bool = False) -> ArrowExport:
    names = [str(n) for n in df.column_names()]
    keep_idx = _select(names, columns)
    while True:
        try:
            return _ix_export(df, names, keep_idx, skip)
        except _Unsupported as e:  # skip: leave the column out, start again
            keep_idx = [i for i in keep_idx if i != e.index]


def _ix_export(df: Any, names: list[str], keep_idx: list[int], skip: bool) -> ArrowExport:
    nchunks = int(df.num_chunks())
    parts = list(df.get_chunks()) if nchunks > 1 else [df]
    fields: list[tuple[str, str, str | None, bool]] | None = None
    batches = []
    for part in parts:
        chunks = []
        fmts = []
        for i in keep_idx:
            col = part.get_column(i)
            n = names[i]
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
        fields = [(names[i], "n", None, False) for i in keep_idx]
    return ArrowExport(tuple(fields), tuple(batches))


# -- pandas frames --------------------------------------------------------

def _from_pandas(frame: Any, columns: Sequence[str] | None, *,
                 skip: bool = False) -> ArrowExport:
    """A pandas DataFrame: its numpy-backed numeric columns through the frame
    reader (zero-copy; float NaN and NaT become nulls, as pandas' own Arrow
    export says, with a bitmap of them), the other columns through pandas'
    Arrow export of that sub-frame; the whole frame through the export when
    the parts cannot be joined (duplicate names, several batches).  A column
    Arrow cannot hold raises NotImplementedError naming it, or with ``skip``
    is left out."""
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
    from dfbuffer._interchange import from_dataframe  # noqa: PLC0415
    from dfbuffer._pandas_columns import have_pyarrow  # noqa: PLC0415

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
            fmt, chunk = _mapping_column(names[i], values)
            parts[i] = ((names[i], fmt, None, False), chunk)
    fields = tuple(parts[i][0] for i in keep)
    chunks = tuple(parts[i][1] for i in keep)
    return ArrowExport(fields, ((len(frame), chunks),))


def _matrix_source(frame: Any, columns: Sequence[str] | None = None,
                   period_ordinal: bool = False) -> ArrowExport:
    """What ``to_matrix`` reads pandas frame ``frame`` through when its
    blocks are not all read in place: its columns (those of ``columns``,
    default all) as :func:`to_arrow` reads them.  Period, Interval, object
    and complex columns, which have no number to put in a matrix (ordinals
    would be a silent guess), raise TypeError naming the column when
    selected; with ``period_ordinal`` (``period="ordinal"``) a Period column
    gives its int64 ordinals, NaT a null."""
    pd = sys.modules["pandas"]
    names = [str(c) for c in frame.columns]
    dtypes = list(frame.dtypes)
    keep: Sequence[int] = range(len(names))
    if columns is not None:
        # a selected column, or the struct column of a selected leaf ("s.a",
        # structs="flatten"); a name of neither is the caller's KeyError
        wanted = set(columns)
        keep = [i for i, n in enumerate(names)
                if n in wanted or any(w.startswith(n + ".") for w in wanted)]
        columns = [names[i] for i in keep]
    ordinals = {}
    for i in keep:
        dt = dtypes[i]
        if isinstance(dt, pd.PeriodDtype) and period_ordinal:
            values = frame.iloc[:, i].array
            ordinals[i] = pd.arrays.IntegerArray(np.asarray(values.asi8),
                                                 np.asarray(values.isna(), dtype=bool))
            continue
        if isinstance(dt, pd.SparseDtype):
            dt = np.dtype(dt.subtype)
        if isinstance(dt, pd.PeriodDtype | pd.IntervalDtype) or (
                isinstance(dt, np.dtype) and dt.kind in "Oc"):
            hint = (" (period='ordinal' takes a Period column's ordinals)"
                    if isinstance(dt, pd.PeriodDtype) else "")
            raise TypeError(f"column {names[i]!r} has a pandas {dt} type; to_matrix "
                            f"takes bool, integer and float columns{hint}")
    if ordinals:
        frame = frame.copy(deep=False)  # the caller's frame is left as it is
        for i, values in ordinals.items():
            frame.isetitem(i, values)
    return _from_pandas(frame, columns)


def _pandas_export(sub: Any, names: list[str]) -> ArrowExport:
    """pandas' own Arrow export of sub-frame ``sub``; an error of pyarrow's
    becomes a NotImplementedError naming the first column it fails on
    (found column by column), with the original as ``__cause__``."""
    try:
        return _from_arrow(sub, None)
    except (ValueError, TypeError, NotImplementedError) as e:
        if type(e) in (ValueError, TypeError, NotImplementedError):
            raise
        first: BaseException = e
    for j, name in enumerate(names):
        try:
            _from_arrow(sub.iloc[:, [j]], None)
        except Exception as e:  # noqa: BLE001
            first = e
            raise NotImplementedError(
                f"column {name!r}: pandas' Arrow export failed: {type(e).__name__}: {e}"
            ) from e
    raise NotImplementedError(
        f"pandas' Arrow export failed: {type(first).__name__}: {first}") from first


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
    from_dataframe reads it (dfbuffer._pandas_columns), then exported as a
    mapping column; strings are encoded as a large_string column."""
    from dfbuffer._interchange import from_dataframe  # noqa: PLC0415

    sub = frame.iloc[:, [i]]
    values = next(iter(from_dataframe(sub, nulls="mask").values()))
    data = np.ma.getdata(values)
    if data.dtype.kind == "O":
        mask = np.ma.getmaskarray(values)
        if not all(isinstance(v, str) for v, m in zip(data, mask, strict=True) if not m):
            raise NotImplementedError(
                f"column {name!r}: Arrow has no type for a pandas {frame.dtypes.iloc[i]} "
                "column (without pyarrow only strings export)")
        return (name, "U", None, False), _string_chunk(data, mask)
    fmt, chunk = _mapping_column(name, values)
    return (name, fmt, None, False), chunk


# -- mappings -------------------------------------------------------------

def _numpy_format(dt: np.dtype, name: str) -> str:
    if dt.kind in "mM":
        unit = np.datetime_data(dt)[0]
        if unit not in ("s", "ms", "us", "ns"):
            raise TypeError(f"column {name!r}: Arrow has no type for {dt}")
        u = {"s": "s", "ms": "m", "us": "u", "ns": "n"}[unit]
        return f"ts{u}:" if dt.kind == "M" else f"tD{u}"
    key = ({"i": 0, "u": 1, "f": 2}.get(dt.kind, -1), dt.itemsize * 8)
    if key not in _NUMBER or not dt.isnative:
        raise TypeError(f"column {name!r}: Arrow has no primitive type for {dt}")
    return _NUMBER[key]


def _mapping_column(name: str, value: Any) -> tuple[str, _Chunk]:
    mask = None
    if isinstance(value, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(value)
        value = np.ma.getdata(value)
    try:
        buf = value if isinstance(value, Buffer) else Buffer.from_object(value)
    except (TypeError, ValueError, BufferError) as e:
        raise type(e)(f"column {name!r}: {e}") from e
    if buf.ndim != 1:
        raise ValueError(f"column {name!r}: to_arrow takes 1-D columns, got {buf.ndim}-D")
    dt = buf.dtype
    n = buf.shape[0]
    if n > 1 and buf.strides[0] != dt.itemsize:
        raise BufferError(f"column {name!r}: only contiguous columns export to Arrow")
    validity = None
    nulls = 0
    if mask is not None and mask.any():
        validity = _bitmap_from_bool(~mask)
        nulls = int(mask.sum())
    if dt.kind == "b":
        data = _bitmap_from_bool(_view(buf, dtype=bool, count=n))
        return "b", (n, nulls, 0, (validity, data), None)
    return _numpy_format(dt, name), (n, nulls, 0, (validity, buf), None)


def _from_mapping(data: Mapping[Any, Any], columns: Sequence[str] | None) -> ArrowExport:
    names = [str(k) for k in data]
    values = list(data.values())
    fields = []
    chunks = []
    length = None
    for i in _select(names, columns):
        name, value = names[i], values[i]
        if _is_arrow(value) and not isinstance(value, Buffer):
            sub = _from_arrow(value, None)
            if len(sub._batches) != 1 or len(sub._fields) != 1:
                raise ValueError(f"column {name!r}: pass one Arrow array (one chunk)")
            f = sub._fields[0]
            fields.append((name, *f[1:]))
            chunk = sub._batches[0][1][0]
        else:
            fmt, chunk = _mapping_column(name, value)
            fields.append((name, fmt, None, False))
        if length is None:
            length = chunk[0]
        elif chunk[0] != length:
            raise ValueError(f"column {name!r} has {chunk[0]} values, the others {length}")
        chunks.append(chunk)
    return ArrowExport(tuple(fields), ((length or 0, tuple(chunks)),))


def to_arrow(obj: Any, columns: Sequence[str] | None = None,
             on_unsupported: str = "raise") -> ArrowExport:
    """Return an Arrow PyCapsule producer (``__arrow_c_stream__``,
    ``__arrow_c_schema__``) over the columns of ``obj``, zero-copy wherever
    the layout allows, without importing pyarrow.

    ``obj`` is anything dfbuffer reads: an Arrow PyCapsule producer (pyarrow,
    polars, pandas, DuckDB, nanoarrow), an object with ``__dataframe__`` or
    an interchange DataFrame (pandas' ones are read through the frame behind
    them), or a mapping of column names to 1-D arrays or
    :class:`dfbuffer.Buffer` objects (masked arrays give nulls).
    ``columns`` selects columns by name. ``on_unsupported="skip"`` leaves out the
    columns of an interchange source whose type has no Arrow format here (an Arrow
    producer's formats are all handed out).
    """
    if on_unsupported not in ("raise", "skip"):
        raise ValueError(f"on_unsupported must be 'raise' or 'skip', not {on_unsupported!r}")
    # the frame-source table (src/_interchange/readers/frame_source.c) decides how obj is read
    kind, frame, _ = _frame_source(obj)
    if kind == "pandas":
        return _from_pandas(frame, columns, skip=on_unsupported == "skip")
    if kind == "arrow":
        # dfbuffer's own producers are read from what they hold
        if isinstance(obj, ArrowExport):
            if columns is None:
                return obj
            keep = _select(obj.column_names, columns)
            return ArrowExport(tuple(obj._fields[i] for i in keep),
                               tuple((n, tuple(c[i] for i in keep)) for n, c in obj._batches))
        from dfbuffer._arrow_interchange import InterchangeView  # noqa: PLC0415

        if isinstance(obj, InterchangeView):
            return _from_view(obj, columns)
        return _from_arrow(obj, columns)
    if kind == "mapping":
        return _from_mapping(obj, columns)
    if kind == "interchange":
        return _from_interchange(frame, columns, on_unsupported == "skip")
    raise not_a_frame("to_arrow", obj, "an Arrow PyCapsule producer, an object with "
                      "__dataframe__, an interchange DataFrame or a mapping")
