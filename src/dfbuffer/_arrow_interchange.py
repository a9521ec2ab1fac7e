"""The DataFrame interchange protocol served over Arrow PyCapsule producers.

``to_interchange(obj)`` imports any object with ``__arrow_c_array__`` or
``__arrow_c_stream__`` (pyarrow, polars, pandas 3, nanoarrow, DuckDB, ...), or only
their device counterparts (``__arrow_c_device_array__`` / ``__arrow_c_device_stream__``:
CPU data as usual, other devices as device Buffers that are never read here),
through the C helper ``dfbuffer._interchange._ixview_import`` (src/_interchange/
ops/to_interchange/ixview.c) and presents it as a DataFrame interchange object (``__dataframe__``)
whose buffers are :class:`dfbuffer.Buffer` objects over the Arrow memory,
without copying.  The C helper returns struct sequences (``_IxField`` per
column, ``_IxChunk`` per column chunk) whose Buffers are already re-based;
slicing (``get_chunks(n)``), joining chunks and reading category values are
C functions too (``_ixview_slice``, ``_ixview_concat``, ``_ixview_values``),
so this module holds no bit or offset arithmetic.

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
  ('U') in C, so ``allow_copy=False`` makes such columns raise CopyError
  when their buffers are asked for.
* Nulls are ``(USE_BITMASK, 0)`` with the Arrow validity bitmap when a
  chunk has nulls, else ``(NON_NULLABLE, None)`` and no validity buffer.
* The DataFrame object is also an Arrow PyCapsule producer
  (``__arrow_c_stream__``, ``__arrow_c_schema__``): :func:`dfbuffer.to_arrow`
  hands out the producer's Arrow nodes it was built from, every format,
  without copying (kept per column beside the typed chunks; see
  ``_raw_piece``).  ``_df`` is the
  object itself (the convention of the dataframe-api issue 360, by which
  narwhals recovers the object behind ``select_columns_by_name``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from dfbuffer._frame_nodes import (
    ArrowNodes,
    _Chunk,
    _from_arrow,
    _select,
    check_bool,
    table_format,
)
from dfbuffer._interchange import (
    ColumnNullType,
    CopyError,
    DtypeKind,
    _arrow_type,
    _IxChunk,
    _IxField,
    _ixview_concat,
    _ixview_import,
    _ixview_slice,
    _ixview_values,
    to_matrix,
)
from dfbuffer._schema import _interchange_format, _type_string, schema
from dfbuffer._sources import has_host_arrow

__all__ = ["InterchangeView", "frame_array", "to_interchange"]

_BOOL_BITS = (DtypeKind.BOOL, 1, table_format("bit-packed bool"), "=")


def _raise_error(chunk: _IxChunk) -> None:
    """Raise a fresh copy of the exception recorded for a chunk."""
    err = chunk.error
    assert err is not None
    raise type(err)(*err.args)


def _empty(field: _IxField) -> _IxChunk:
    """A chunk of no elements of ``field``'s format (a column without chunks)."""
    fmt = _interchange_format(field.format)
    if field.dictionary is None:
        return _ixview_concat(fmt, [])
    dfmt = _interchange_format(field.dictionary.format)
    return _ixview_concat(fmt, [], dictionary=_ixview_concat(dfmt, []))


class _ArrowColumn:
    """An interchange-protocol Column over one or more Arrow chunks."""

    def __init__(self, field: _IxField, chunks: list[_IxChunk], allow_copy: bool,
                 raw: _Raw | None = None, piece: tuple[int, int] | None = None) -> None:
        self._field = field
        self._chunks = chunks
        self._allow_copy = allow_copy
        # the producer's own Arrow nodes (to_arrow's field and one chunk per
        # chunk), which dfbuffer.to_arrow hands out again; None for device data.
        # A column of get_chunks(n) keeps its parent's nodes and (n, index):
        # its own piece is cut only when to_arrow asks for it.
        self._raw_nodes = raw
        self._piece = piece

    @property
    def _name(self) -> str:
        return self._field.name

    @property
    def _raw(self) -> _Raw | None:
        if self._piece is not None and self._raw_nodes is not None:
            self._raw_nodes = _raw_piece(self._raw_nodes, *self._piece)
            self._piece = None
        return self._raw_nodes

    # -- helpers ---------------------------------------------------------
    def _check(self) -> None:
        for c in self._chunks:
            if c.error is not None:
                _raise_error(c)
        # buffers the import copied (run ends decoded, string views): refused
        # by this column's allow_copy, not the import's
        if self._field.copy_error is not None and self._chunks and not self._allow_copy:
            raise CopyError(self._field.copy_error)

    def _single(self) -> _IxChunk:
        """The one chunk, or a concatenation of all chunks (a copy)."""
        self._check()
        if not self._chunks:
            self.dtype  # noqa: B018 - raises NotImplementedError for unsupported formats
            return _empty(self._field)
        if len(self._chunks) == 1:
            return self._chunks[0]
        if not self._allow_copy:
            raise CopyError(
                f"column {self._name!r} has {len(self._chunks)} chunks; joining "
                "them needs a copy, which allow_copy=False forbids (use get_chunks())")
        return _concat(self._field, self._chunks)

    # -- the protocol ----------------------------------------------------
    def size(self) -> int:
        """Number of elements."""
        return sum(c.length for c in self._chunks)

    @property
    def offset(self) -> int:
        """Element offset into the buffers (0 unless a bitmap keeps 0..7 bits)."""
        if len(self._chunks) != 1:
            return 0
        return self._chunks[0].offset

    @property
    def dtype(self) -> tuple[Any, int, str, str]:
        """(kind, bit_width, Arrow format, endianness)."""
        dt = self._field.dtype
        if dt is None:
            self._check()
            raise NotImplementedError(
                f"column {self._name!r}: Arrow format {self._field.format!r} has no "
                "interchange-protocol dtype")
        return dt

    @property
    def describe_categorical(self) -> dict[str, Any]:
        """is_ordered, is_dictionary and the categories (a Column)."""
        if self._field.dictionary is None:
            raise TypeError(f"column {self._name!r} is not categorical (dictionary-encoded)")
        chunk = self._single()
        assert chunk.dictionary is not None
        cats = _ArrowColumn(self._field.dictionary, [chunk.dictionary], self._allow_copy)
        return {"is_ordered": self._field.ordered, "is_dictionary": True, "categories": cats}

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
        total = 0
        for c in self._chunks:
            if c.null_count is None:
                return None
            total += c.null_count
        return total

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
        raw = self._raw
        for i, c in enumerate(_split(self._chunks, n_chunks, self._allow_copy)):
            yield _ArrowColumn(self._field, [c], self._allow_copy, raw, (n_chunks or 0, i))

    def get_buffers(self) -> dict[str, Any]:
        """{"data": (Buffer, dtype), "validity": ... | None, "offsets": ... | None}."""
        chunk = self._single()
        self.dtype  # noqa: B018 - raises NotImplementedError for a type without a dtype
        if _interchange_format(self._field.format) != self._field.format and self._chunks:
            raise CopyError(
                f"column {self._name!r}: string views need a copy, which "
                "allow_copy=False forbids")
        field = self._field
        out: dict[str, Any] = {"data": (chunk.data, field.data_dtype), "validity": None,
                               "offsets": None}
        if chunk.validity is not None:
            out["validity"] = (chunk.validity, _BOOL_BITS)
        if chunk.offsets is not None:
            out["offsets"] = (chunk.offsets, field.offsets_dtype)
        return out

    @property
    def _col(self) -> np.ndarray:
        """The values as a NumPy array (pandas reads categories through it)."""
        if not self._chunks:
            return np.array([], dtype=object)
        parts = [_values(c) for c in self._chunks]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _values(chunk: _IxChunk) -> np.ndarray:
    """One chunk's values (converted in C), as an object array with None for
    nulls when it has nulls.  Used for categories only (small)."""
    if chunk.error is not None:
        _raise_error(chunk)
    vals = _ixview_values(chunk)
    if isinstance(vals, np.ma.MaskedArray):
        out = vals.data.astype(object)
        out[np.ma.getmaskarray(vals)] = None
        return out
    return vals


_Raw = tuple  # (to_arrow field, list of to_arrow chunks)


def _slice_nulls(fmt: str, size: int) -> int:
    """The null count of a slice of ``size`` elements of format ``fmt``: unknown
    (-1), but for the types without a validity bitmap (unions and run-end encoded
    arrays have 0 nulls, the null type all)."""
    t = _arrow_type(fmt)
    if t is None:
        return -1
    if t["logical"] == "null":
        return size
    return -1 if t["validity"] else 0


def _raw_piece(raw: _Raw, n_chunks: int, i: int) -> _Raw:
    """Piece ``i`` of a column's raw nodes cut as ``_split`` cuts its chunks
    into ``n_chunks`` (0: one piece per chunk): a slice moves only the
    top-level offset and length (null count unknown)."""
    if not n_chunks:
        return (raw[0], [raw[1][i]])
    k = n_chunks // len(raw[1])
    c = raw[1][i // k]
    length, j = c[0], i % k
    start, stop = length * j // k, length * (j + 1) // k
    size = stop - start
    nulls = c[1] if size == length else _slice_nulls(raw[0][1], size)
    return (raw[0], [(size, nulls, c[2] + start, *c[3:])])


def _split(chunks: list[_IxChunk], n_chunks: int | None, allow_copy: bool) -> list[_IxChunk]:
    """The chunks, each cut into n_chunks // len(chunks) slices (re-based in C)."""
    if n_chunks is None or not chunks:
        return list(chunks)
    if n_chunks < 1 or n_chunks % len(chunks):
        raise ValueError(
            f"n_chunks must be a positive multiple of num_chunks() = {len(chunks)}, "
            f"got {n_chunks}")
    k = n_chunks // len(chunks)
    out: list[_IxChunk] = []
    for c in chunks:
        n = c.length
        bounds = [n * i // k for i in range(k + 1)]
        out.extend(_ixview_slice(c, bounds[i], bounds[i + 1] - bounds[i], allow_copy)
                   for i in range(k))
    return out


def _concat(field: _IxField, chunks: list[_IxChunk]) -> _IxChunk:
    """Join chunks into one new chunk (copies, in C; offset 0)."""
    fmt = _interchange_format(field.format)
    if field.dictionary is None:
        return _ixview_concat(fmt, chunks)
    # dictionaries: unify the values (first occurrence wins), remap the codes
    index: dict[tuple[str, Any], int] = {}
    firsts: list[_IxChunk] = []
    maps = []
    for c in chunks:
        assert c.dictionary is not None
        values = _values(c.dictionary)
        mapping = np.empty(len(values), dtype=np.int64)
        for i, v in enumerate(values):
            key = _key(v)
            pos = index.get(key)
            if pos is None:
                pos = index[key] = len(index)
                firsts.append(_ixview_slice(c.dictionary, i, 1, True))
            mapping[i] = pos
        maps.append(mapping)
    dfmt = _interchange_format(field.dictionary.format)
    return _ixview_concat(fmt, chunks, dictionary=_ixview_concat(dfmt, firsts), maps=maps)


def _key(v: Any) -> tuple[str, Any]:
    """A hashable key of a dictionary value (NaN-safe enough for categories)."""
    if isinstance(v, np.generic):
        v = v.item()
    return (type(v).__name__, v)


class InterchangeView:
    """An interchange-protocol DataFrame over an Arrow PyCapsule producer: what
    :func:`dfbuffer.to_interchange` returns.

    It implements every method of the protocol (``__dataframe__``, ``column_names``,
    ``get_column``, ``select_columns_by_name``, ...) and is itself an Arrow PyCapsule
    producer (``__arrow_c_stream__``, ``__arrow_c_schema__``). Its buffers are
    :class:`dfbuffer.Buffer` objects that keep the Arrow memory alive.

    Parameters
    ----------
    columns, n_batches, allow_copy
        Private: what ``to_interchange`` built. Make one with
        :func:`dfbuffer.to_interchange`.

    Examples
    --------
    >>> import pyarrow as pa
    >>> import dfbuffer
    >>> ix = dfbuffer.to_interchange(pa.table({"x": [1, 2], "s": ["a", None]}))
    >>> ix
    <dfbuffer.InterchangeView 2 rows, 2 columns; x: int64, s: string>
    >>> ix.get_column_by_name("s").null_count
    1
    """

    def __init__(self, columns: list[_ArrowColumn], n_batches: int,
                 allow_copy: bool) -> None:
        self._columns = columns
        self._n_batches = n_batches
        self._allow_copy = allow_copy
        self._by_name: dict[str, _ArrowColumn] | None = None

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> InterchangeView:
        """Return the interchange object (itself, with ``allow_copy`` applied:
        chunks whose bitmaps kept 0..7 bits are re-based once more; columns
        the import copied are served, or refused with ``allow_copy=False``)."""
        check_bool("__dataframe__", "nan_as_null", nan_as_null)
        allow_copy = check_bool("__dataframe__", "allow_copy", allow_copy)
        if allow_copy == self._allow_copy:
            return self
        cols = [_ArrowColumn(c._field, [_rebase(ch, allow_copy) for ch in c._chunks],
                             allow_copy, c._raw)
                for c in self._columns]
        return InterchangeView(cols, self._n_batches, allow_copy)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """A 2-D (rows, columns) copy, :func:`dfbuffer.to_matrix` of the columns
        (numeric ones only; for consumers that call ``numpy.asarray``: scikit-learn).
        NumPy 2's ``copy``: False raises :class:`dfbuffer.CopyError`."""
        return frame_array(self, dtype, copy)

    def __repr__(self) -> str:
        try:
            cols = ", ".join(f"{c.name}: {_type_string(c)}" for c in schema(self).columns)
        except Exception:  # noqa: BLE001 - a repr never raises
            cols = ", ".join(self.column_names())
        return (f"<dfbuffer.InterchangeView {self.num_rows()} rows, "
                f"{self.num_columns()} columns; {cols}>")

    @property
    def _df(self) -> InterchangeView:
        """The dataframe behind this interchange object: itself."""
        return self

    def __arrow_c_schema__(self) -> object:
        """An ``arrow_schema`` capsule of the columns (a struct)."""
        return view_nodes(self, None).__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """An ``arrow_array_stream`` capsule over the Arrow buffers this view
        was built from (zero-copy; see :func:`dfbuffer.to_arrow`)."""
        return view_nodes(self, None).__arrow_c_stream__(requested_schema)

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

    def _servable(self) -> InterchangeView:
        """The frame without the columns whose Arrow type has no interchange dtype
        (``to_interchange(..., on_unsupported="skip")``)."""
        return InterchangeView([c for c in self._columns if _has_dtype(c._field, c._chunks)],
                               self._n_batches, self._allow_copy)

    def select_columns(self, indices: Sequence[int]) -> InterchangeView:
        """A DataFrame of the columns at ``indices``."""
        if not isinstance(indices, Sequence):
            raise TypeError("indices must be a sequence of ints")
        return InterchangeView([self._columns[i] for i in indices], self._n_batches,
                               self._allow_copy)

    def select_columns_by_name(self, names: Sequence[str]) -> InterchangeView:
        """A DataFrame of the columns named ``names``."""
        if not isinstance(names, Sequence) or isinstance(names, str):
            raise TypeError("names must be a sequence of str")
        return InterchangeView([self.get_column_by_name(n) for n in names],
                               self._n_batches, self._allow_copy)

    def get_chunks(self, n_chunks: int | None = None) -> Iterable[InterchangeView]:
        """Yield one DataFrame per record batch (``n_chunks``, a multiple of
        num_chunks(), subdivides the batches without copying)."""
        if self._n_batches == 0:
            return
        per_col = [_split(c._chunks, n_chunks, self._allow_copy) for c in self._columns]
        raws = [c._raw for c in self._columns]
        total = n_chunks if n_chunks is not None else self._n_batches
        for i in range(total):
            cols = [_ArrowColumn(c._field, [pc[i]], self._allow_copy, rc, (n_chunks or 0, i))
                    for c, pc, rc in zip(self._columns, per_col, raws, strict=True)]
            yield InterchangeView(cols, 1, self._allow_copy)


def frame_array(frame: Any, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """``numpy.asarray(frame)`` of dfbuffer's own frames (:class:`InterchangeView`,
    :class:`dfbuffer.ArrowExport`), their ``__array__``: ``to_matrix`` of the columns,
    which is always a new array, so NumPy 2's ``copy=False`` raises CopyError."""
    if copy is False:
        raise CopyError("numpy.asarray(): a frame becomes a 2-D array only by a copy "
                        "(dfbuffer.to_matrix), which copy=False forbids")
    return to_matrix(frame, dtype=dtype)


def _has_dtype(field: _IxField, chunks: list[_IxChunk]) -> bool:
    """Whether the protocol can describe a column (and its categories): its field has a
    dtype and no chunk was refused as unsupported (NotImplementedError)."""
    if field.dtype is None or any(isinstance(c.error, NotImplementedError) for c in chunks):
        return False
    if field.dictionary is None:
        return True
    return _has_dtype(field.dictionary, [c.dictionary for c in chunks if c.dictionary is not None])


def _rebase(chunk: _IxChunk, allow_copy: bool) -> _IxChunk:
    """``chunk`` re-based for another ``allow_copy`` (only a chunk whose bitmap
    kept 0..7 bits changes: it is copied to bit 0 when copies are allowed)."""
    if chunk.offset == 0 or chunk.error is not None:
        return chunk
    return _ixview_slice(chunk, 0, chunk.length, allow_copy)


def to_interchange(obj: Any, *, allow_copy: bool = True) -> InterchangeView:
    """Return a DataFrame-interchange-protocol view of an Arrow producer.

    ``obj`` is any object with ``__arrow_c_stream__`` or ``__arrow_c_array__``
    (pyarrow Table / RecordBatch / Array / ChunkedArray, polars DataFrame /
    Series, nanoarrow, an :class:`ArrowNodes` of another source, ...), or only their
    device counterparts; :func:`dfbuffer.to_interchange` gives pandas frames and
    mappings as their ``_frame_nodes`` (the frame-source table's reading).  A
    struct (table) producer gives one column per field; any other array gives
    one column named after its field.  The result has ``__dataframe__`` and every method of the
    protocol; its buffers are :class:`dfbuffer.Buffer` objects over the
    Arrow memory (zero-copy), which stays alive as long as any of them.
    It is an Arrow PyCapsule producer too (``__arrow_c_stream__``,
    ``__arrow_c_schema__``: that Arrow memory handed out again, see
    :func:`dfbuffer.to_arrow`) and has ``_df`` (itself), which narwhals'
    interchange level (plotly) needs.

    ``allow_copy=False`` forbids copies: string-view columns (polars'
    strings) and joining several chunks of a column then raise CopyError
    when the buffers are requested.  Columns whose Arrow type the protocol
    cannot describe (lists, structs, decimals, binary, intervals, ...) raise
    NotImplementedError naming the column and the Arrow format when used.
    Times of day are ``(DATETIME, 32|64, 'tt[smun]', '=')``; a run-end
    encoded column of fixed-width values (numbers, timestamps, ...) is
    served as its values, decoded once in C (a copy: CopyError with
    ``allow_copy=False``).
    """
    if isinstance(obj, InterchangeView):
        return obj.__dataframe__(allow_copy=allow_copy)
    allow_copy = bool(allow_copy)
    if has_host_arrow(obj):
        # host data: imported once node for node (kept for to_arrow), the
        # typed view read from those nodes
        nodes = _from_arrow(obj, None)
        fields, chunks = _ixview_import(nodes, allow_copy)
        cols = [_ArrowColumn(field, [row[i] for row in chunks], allow_copy,
                             (nodes._fields[i], [b[1][i] for b in nodes._batches]))
                for i, field in enumerate(fields)]
        return InterchangeView(cols, len(chunks), allow_copy)
    fields, chunks = _ixview_import(obj, allow_copy)
    cols = [_ArrowColumn(field, [row[i] for row in chunks], allow_copy)
            for i, field in enumerate(fields)]
    return InterchangeView(cols, len(chunks), allow_copy)


# -- the view's own Arrow nodes (to_arrow, __arrow_c_stream__) -------------

# the logical types whose flat buffers the view holds as they are (not views)
_HELD = frozenset({"null", "binary", "decimal", "interval"})
_NULL = table_format("null")


def _exportable(field: Any) -> bool:
    """Whether to_arrow hands out a column of the import: a type the interchange view
    describes, or one whose flat buffers it holds as they are (nulls, binary, decimals,
    fixed-size binary, intervals; extension types as their storage)."""
    if field.dtype is not None:
        return True
    t = _arrow_type(field.format)  # the type table's row
    return t is not None and t["logical"] in _HELD and t["layout"] != "views"


def _ix_arrow_chunk(chunk: Any, name: str) -> _Chunk:
    if chunk.error is not None:
        raise type(chunk.error)(f"column {name!r}: {chunk.error}")
    bufs: tuple[Any, ...]
    if chunk.format == _NULL:
        bufs = ()  # the null type has no buffers
    elif chunk.offsets is not None:
        bufs = (chunk.validity, chunk.offsets, chunk.data)
    else:
        bufs = (chunk.validity, chunk.data)
    dic = None if chunk.dictionary is None else _ix_arrow_chunk(chunk.dictionary, name)
    return (chunk.length, chunk.null_count, chunk.offset, bufs, dic)


def view_nodes(view: InterchangeView, columns: Sequence[str] | None) -> ArrowNodes:
    """The Arrow nodes of ``view`` (its ``columns``; None: all): the producer's own
    nodes where the view keeps them, else the Arrow buffers it holds, as they are."""
    cols = view._columns
    keep = _select([c._name for c in cols], columns)
    raws = [cols[i]._raw for i in keep]  # the producer's own nodes, where kept
    fields = []
    for i, raw in zip(keep, raws, strict=True):
        if raw is not None:
            fields.append(raw[0])
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
        chunks = tuple(raw[1][b] if raw is not None else
                       _ix_arrow_chunk(_rebase(cols[i]._chunks[b], True), cols[i]._name)
                       for i, raw in zip(keep, raws, strict=True))
        batches.append((chunks[0][0] if chunks else 0, chunks))
    return ArrowNodes(tuple(fields), tuple(batches))


# the class's former private name
_ArrowDataFrame = InterchangeView
