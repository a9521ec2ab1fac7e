"""Fixed-size batches of any frame or Arrow stream: iter_matrices, iter_batches.

An Arrow stream (anything with ``__arrow_c_stream__``) is read by the C reader
``_ArrowBatchReader`` one source batch at a time, never ahead; the rows of each yielded
batch are zero-copy slices of the source batches (``_ArrowBatch.slice``), joined into one
Arrow stream (``_arrow_batch_stream``) only where a yielded batch spans a border, and
converted by ``to_matrix`` / ``from_dataframe`` themselves.  A pandas DataFrame or a
mapping of arrays is sliced in place.  Which of these a source is, the frame-source
table says (``_OPEN``, an operation of ``dfbuffer._sources``): an interchange-only
object is read as its Arrow export.  The dtypes are fixed once, from the schema, before
the first batch (docs/api.md, "Batches").
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from dfbuffer._interchange import Buffer, _arrow_batch_stream, _ArrowBatchReader
from dfbuffer._interchange import from_dataframe as _from_dataframe
from dfbuffer._interchange import to_matrix as _to_matrix
from dfbuffer._schema import schema
from dfbuffer._sources import Source, arrow_stream, numpy_series, operation, refuse

# the converters, called with options passed through (their overloads type the results
# by the options' literals, which these functions hand on unchanged)
to_matrix: Any = _to_matrix
from_dataframe: Any = _from_dataframe

_NULLS = ("fill", "nan", "raise", "mask", "always_mask")
# iter_matrices converts batches of at most _GROUP_COLUMN_BYTES a column a group at a time
# (at most _GROUP_MAX batches, the group's matrix at most _GROUP_BYTES)
_GROUP_COLUMN_BYTES = 1 << 13
_GROUP_BYTES = 1 << 19
_GROUP_MAX = 16



def _rows_of(value: Any) -> int:
    """The number of rows of a mapping's column (a Buffer's first dimension)."""
    if isinstance(value, Buffer):
        return int(value.shape[0]) if value.shape else 0
    return len(value)


def _slice(value: Any, i: int, j: int) -> Any:
    """Rows ``i:j`` of a mapping's column: a Buffer stays a Buffer (over a view of its
    memory, so each batch reads as the whole mapping's Buffer reads)."""
    if isinstance(value, Buffer):
        return Buffer.from_object(np.asarray(value)[i:j])
    return value[i:j]


class _Joined:
    """Slices of several source batches as one Arrow stream (a new one per call)."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: tuple[Any, ...]) -> None:
        self.pieces = pieces

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        if requested_schema is not None:
            raise NotImplementedError("a requested_schema is not supported")
        return _arrow_batch_stream(self.pieces)


class _Source:
    """One source opened once: its batches of rows, and what the rules read of it (a
    pandas frame's or a mapping's rows sliced in place; an Arrow stream's batches by
    :class:`_ArrowSource`)."""

    def __init__(self, frame: Any, rows: int) -> None:
        self.frame = frame
        self.rows = rows

    def batches(
        self, batch_size: int, drop_last: bool, group: list[int] | None = None
    ) -> Iterator[tuple[object, int]]:
        """Yield (producer of the rows, number of rows) per batch of ``batch_size``.

        ``group`` (read by Arrow sources before each batch, so the caller may change it
        between batches): ``[g]`` with g > 1 yields g batches at once as one piece of
        ``g * batch_size`` rows where that many rows are left inside the source batch
        being cut (a zero-copy slice of it, never a join); others one by one."""
        stop = self.rows - self.rows % batch_size if drop_last else self.rows
        for i in range(0, stop, batch_size):
            j = min(i + batch_size, self.rows)
            yield self.slice(i, j), j - i

    def slice(self, i: int, j: int) -> Any:
        """Rows ``i`` to ``j`` of the source."""
        raise NotImplementedError

    def labels(self, piece: Any) -> Any:
        """The column labels of ``piece``."""
        raise NotImplementedError

    def take(self, piece: Any, labels: list[Any]) -> Any:
        """The columns ``labels`` of ``piece``."""
        raise NotImplementedError

    def select(self, piece: Any, names: list[str]) -> tuple[Any, list[str] | None]:
        """(object, columns=) that reads the columns ``names`` (result keys) of ``piece``:
        a pandas frame or mapping, whose labels need not be str (``from_dataframe``'s
        ``columns=`` takes str), by selecting them here."""
        label = {str(k): k for k in self.labels(piece)}
        return self.take(piece, [label.get(n, n) for n in names]), None

    def probe(self, first: Any) -> Any:
        """A zero-row frame with the source's schema (``first``: a first batch)."""
        return self.slice(0, 0)

    def nullable(self, probe: Any, names: list[str], structs: str) -> set[str]:
        """The names of ``names`` whose schema allows nulls."""
        raise NotImplementedError

    def where(self) -> str:
        """Where in the source a read failed, for an error's note ("" for sources
        sliced in memory)."""
        return ""


class _PandasSource(_Source):
    """A pandas frame (the frame-source table's: a Series as its frame), sliced by
    rows."""

    def slice(self, i: int, j: int) -> Any:
        return self.frame.iloc[i:j]

    def labels(self, piece: Any) -> Any:
        return piece.columns

    def take(self, piece: Any, labels: list[Any]) -> Any:
        return piece[labels]

    def nullable(self, probe: Any, names: list[str], structs: str) -> set[str]:
        # every column that is not a NumPy array (NumPy columns hold no null: a
        # float's NaN is a value of its dtype)
        dtypes = {str(k): v for k, v in self.frame.dtypes.items()}
        return {n for n in names if not isinstance(dtypes.get(n), np.dtype)}


class _MappingSource(_Source):
    """A mapping of arrays (its items taken in one pass), sliced by rows."""

    def slice(self, i: int, j: int) -> Any:
        return {k: _slice(v, i, j) for k, v in self.frame.items()}

    def labels(self, piece: Any) -> Any:
        return piece.keys()

    def take(self, piece: Any, labels: list[Any]) -> Any:
        return {k: piece[k] for k in labels}

    def nullable(self, probe: Any, names: list[str], structs: str) -> set[str]:
        plain = {str(k) for k, v in self.frame.items() if _numpy_column(v)}
        return {n for n in names if n not in plain}


class _ArrowSource(_Source):
    """An Arrow stream, exported once and read one source batch at a time."""

    def __init__(self, capsule: Any) -> None:
        super().__init__(None, 0)
        self.reader = _ArrowBatchReader(capsule)
        self.read = 0  # source batches read so far

    def where(self) -> str:
        return f" while reading source batch {self.read}"

    def batches(
        self, batch_size: int, drop_last: bool, group: list[int] | None = None
    ) -> Iterator[tuple[object, int]]:
        pieces: list[Any] = []
        have = 0
        while True:
            self.read += 1
            try:
                b = next(self.reader)
            except StopIteration:
                self.read -= 1
                break
            except BaseException:
                # the traceback keeps this frame: let it keep no rows of a source batch
                pieces.clear()
                raise
            n, pos = len(b), 0
            while pos < n:
                g = batch_size * group[0] if group is not None else batch_size
                if have == 0 and g > batch_size and n - pos >= g:
                    yield (b if g == n else b.slice(pos, g)), g
                    pos += g
                    continue
                take = min(batch_size - have, n - pos)
                pieces.append(b if take == n else b.slice(pos, take))
                have += take
                pos += take
                if have == batch_size:
                    yield _piece(pieces), have
                    pieces, have = [], 0
            del b  # hold no source batch while the next one is read
        if have and not drop_last:
            yield _piece(pieces), have

    def select(self, piece: Any, names: list[str]) -> tuple[Any, list[str] | None]:
        return piece, names  # by columns=

    def probe(self, first: Any) -> Any:
        pieces = first.pieces if isinstance(first, _Joined) else (first,)
        return pieces[0].slice(0, 0)

    def nullable(self, probe: Any, names: list[str], structs: str) -> set[str]:
        # the field's nullable flag (a leaf of a nullable struct is nullable)
        sch = schema(probe, structs=structs)
        known = set(sch.names)
        return {n for n in names if n not in known or sch[n].nullable}


# -- the rows' batch sources: source -> _Source ----------------------------------------

def _pandas_row(src: Source) -> _Source:
    return _PandasSource(src.frame, len(src.frame))


def _mapping_row(src: Source) -> _Source:
    lengths = {_rows_of(v) for v in src.frame.values()}
    if len(lengths) > 1:
        raise ValueError("the columns of the mapping have different lengths")
    return _MappingSource(src.frame, lengths.pop() if lengths else 0)


def _arrow_row(src: Source) -> _Source:
    from dfbuffer._to_arrow import to_arrow

    # the one call: a single-use stream is exported exactly once
    return _ArrowSource(arrow_stream(src.frame, lambda o: to_arrow(o, func=src.func)))


_OPEN = operation("batches", pandas=_pandas_row, arrow=_arrow_row, interchange=_arrow_row,
                  mapping=_mapping_row, schema=refuse)


def _numpy_column(v: Any) -> bool:
    if isinstance(v, Buffer):
        return True  # NumPy-typed memory without a mask (no object dtype)
    if isinstance(v, np.ndarray):
        return not isinstance(v, np.ma.MaskedArray) and v.dtype.kind != "O"
    return numpy_series(v)


def _piece(pieces: list[Any]) -> object:
    return pieces[0] if len(pieces) == 1 else _Joined(tuple(pieces))


def _batch_size(batch_size: Any) -> int:
    if isinstance(batch_size, bool | np.bool_):  # True is no row count (NumPy 2.2's
        # np.True_ still has __index__)
        raise TypeError(f"batch_size must be an int, got {type(batch_size).__name__}")
    n = operator.index(batch_size)
    if n < 1:
        raise ValueError(f"batch_size must be at least 1, got {n}")
    return n


def _check_nulls(nulls: object) -> str:
    """``nulls`` checked once per call: the deprecated ``"nan"`` warns here, once, and
    reads as ``"fill"`` for every batch after."""
    if nulls not in _NULLS:
        raise ValueError(f"nulls must be one of {', '.join(map(repr, _NULLS))}, got {nulls!r}")
    if nulls == "nan":
        warnings.warn("nulls='nan' is deprecated, use nulls='fill' (the same: NaN, NaT or "
                      "None in the null slots)", DeprecationWarning, stacklevel=3)
        return "fill"
    return str(nulls)


def _check_out(out: Any, batch_size: int, dtype: Any, order: Any) -> str:
    """Check ``out`` before the stream is read; return its order."""
    if not isinstance(out, np.ndarray) or isinstance(out, np.ma.MaskedArray):
        raise TypeError(f"iter_matrices out must be a numpy.ndarray, got {type(out).__name__}")
    if out.ndim != 2 or out.shape[0] != batch_size:
        raise ValueError(
            f"iter_matrices out has shape {out.shape}, batches of {batch_size} rows need "
            f"({batch_size}, columns)"
        )
    d = out.dtype
    if not (d.isnative and (d.kind in "biu" or (d.kind == "f" and d.itemsize <= 8))):
        # to_matrix's rule for out, checked before the stream is read
        raise ValueError(
            f"iter_matrices out has dtype {d!r}: bool, a (u)int of 8-64 bits or "
            "float16/32/64 in native byte order expected"
        )
    if not out.flags.writeable:
        raise ValueError("iter_matrices out is read-only")
    if out.flags.c_contiguous:
        out_order = "C"
    elif out.flags.f_contiguous:
        out_order = "F"
    else:
        raise ValueError("iter_matrices out must be C- or F-contiguous")
    if out.shape[1] > 1 and out.shape[0] > 1 and order is not None and order != out_order:
        raise ValueError(f"iter_matrices order={order!r}, out is {out_order}-ordered")
    if dtype is not None and np.dtype(dtype) != out.dtype:
        raise ValueError(f"iter_matrices dtype={np.dtype(dtype)}, out has dtype {out.dtype}")
    return out_order if order is None else str(order)


def _stream_dtype(
    src: _Source, probe: Any, dtype: Any, nulls: str, opts: dict[str, Any]
) -> np.dtype[Any]:
    """The one dtype of every matrix, from the schema (a zero-row probe), never values."""
    m = to_matrix(probe, dtype=dtype, nulls=nulls, **opts)
    if dtype is not None:
        return m.dtype
    d = m.dtype
    if nulls in ("fill", "nan") and d.kind in "biu":
        names = [str(n) for n in _matrix_names(probe, opts)]
        for name in src.nullable(probe, names, opts.get("structs", "object")):
            col = to_matrix(probe, nulls=nulls, **{**opts, "columns": [name]})
            if col.dtype.kind in "biu":
                return np.result_type(d, np.float64)
    return d


def _matrix_names(probe: Any, opts: dict[str, Any]) -> list[str]:
    """The names of the matrix's columns (to_matrix's selection, in its order)."""
    columns = opts.get("columns")
    if columns is not None:
        return [str(c) for c in columns]
    sch = schema(probe, structs=opts.get("structs", "object"))
    return [str(n) for n in sch.names]


def iter_matrices(
    source: object,
    batch_size: int,
    *,
    columns: Any = None,
    dtype: Any = None,
    order: Any = None,
    nulls: str = "fill",
    drop_last: bool = False,
    out: np.ndarray[Any, Any] | None = None,
    threads: int | None = None,
    decimals: str = "decimal",
    structs: str = "object",
    on_unsupported: str = "raise",
    period: str = "object",
) -> Iterator[Any]:
    """Yield 2-D NumPy arrays of ``batch_size`` rows of ``source``, at bounded memory.

    ``source`` is anything :func:`to_matrix` reads.  An Arrow stream (a pyarrow
    ``RecordBatchReader`` or ``Table``, a dataset scanner's ``to_reader()``, a nanoarrow
    ``ArrayStream``, a DuckDB relation, a polars DataFrame or ``collect_batches()``: any
    ``__arrow_c_stream__``) is exported once and read one source batch at a time, never
    more than one ahead; a pandas DataFrame or a mapping of arrays is sliced.  Each batch
    has ``batch_size`` rows, re-chunked across the source's batch borders; the last may be
    shorter unless ``drop_last``.  Each is what ``to_matrix`` gives for those rows (same
    columns, nulls and errors) with one dtype for the whole stream, fixed from the schema
    before the first batch: ``dtype`` if given, else ``to_matrix``'s promotion where, with
    ``nulls="fill"``, a bool or integer column the schema lets hold nulls (an Arrow field
    marked nullable, a pandas or masked column that is not a NumPy array) counts as
    float64 whether or not a batch has a null.

    Parameters
    ----------
    source : frame or Arrow stream
        What :func:`to_matrix` accepts; an Arrow stream is read once, lazily.
    batch_size : int
        Rows per batch (at least 1).
    columns, dtype, nulls, threads, decimals, structs, on_unsupported, period
        As in :func:`to_matrix`; ``nulls`` defaults to ``"fill"``.
    order : {"C", "F"}, optional
        The batches' memory order: ``"C"`` unless ``out`` is F-ordered.
    drop_last : bool, optional
        Leave out a last batch shorter than ``batch_size`` (default False).
    out : numpy.ndarray, optional
        A writeable C- or F-contiguous array of shape ``(batch_size, columns)`` every
        batch is written into, as ``io.RawIOBase.readinto`` fills its buffer: each yielded
        array is the view ``out[:n]`` (a MaskedArray over it for the mask modes), which
        the next batch overwrites.  Its dtype is the batches' (``dtype``, when given, must
        be the same; the stream's dtype must cast to it under ``same_kind``).

    Returns
    -------
    iterator of numpy.ndarray or numpy.ma.MaskedArray
        Lazily, one ``(n, columns)`` array per batch, ``n == batch_size`` but for the
        last.  The arguments (and the source's type) are checked at the call; the
        columns at the first batch.

    Raises
    ------
    TypeError
        A source dfbuffer cannot read, a column to_matrix refuses (at the first batch),
        ``out`` not an ndarray, a ``batch_size`` that is no int (a bool included).
    ValueError
        ``batch_size`` below 1, a wrong ``nulls`` word, ``out`` of the wrong shape,
        dtype or order; a null under ``nulls="raise"`` or in an integer ``dtype``.
    BufferError, ValueError
        A stream whose producer fails or hands out a batch that does not match its
        schema (the stream is then released).

    An error raised by a batch (reading the source or converting) carries a note
    (PEP 678) naming the batch and its rows; the batches before it were yielded whole.

    Examples
    --------
    >>> import numpy as np
    >>> import pyarrow as pa
    >>> import dfbuffer
    >>> t = pa.table({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "y": [1, 2, 3, 4, 5]})
    >>> [m.shape for m in dfbuffer.iter_matrices(t.to_reader(max_chunksize=2), 3)]
    [(3, 2), (2, 2)]
    >>> out = np.empty((2, 2), np.float32)
    >>> [m.tolist() for m in dfbuffer.iter_matrices(t, 2, out=out, drop_last=True)]
    [[[1.0, 1.0], [2.0, 2.0]], [[3.0, 3.0], [4.0, 4.0]]]
    """
    n = _batch_size(batch_size)
    nulls = _check_nulls(nulls)
    out_order = _check_out(out, n, dtype, order) if out is not None else None
    if order is not None and order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    opts: dict[str, Any] = {
        "columns": columns,
        "decimals": decimals,
        "structs": structs,
        "on_unsupported": on_unsupported,
        "period": period,
    }
    src = _OPEN(source, "iter_matrices")
    return _matrices(src, n, drop_last, dtype, out_order or order or "C", nulls, out,
                     threads, opts)


def _matrices(
    src: _Source,
    n: int,
    drop_last: bool,
    dtype: Any,
    order: str,
    nulls: str,
    out: np.ndarray[Any, Any] | None,
    threads: int | None,
    opts: dict[str, Any],
) -> Iterator[Any]:
    final: np.dtype[Any] | None = None
    made: list[Any] = []
    # Small batches are converted a group at a time (one to_matrix call per group,
    # each batch a row view of it) where a batch's values cannot make it differ from
    # its own conversion: an Arrow stream, C order, nulls filled, a float dtype (with
    # out=, the group is converted into a matrix kept for the stream and each batch
    # copied into out).  A call's cost beyond the copy grows with the columns (about
    # 1 us each), which at 256 rows outweighs the copy; past _GROUP_COLUMN_BYTES a
    # column grouping measured slower from Parquet (4096 float32 rows: 1.19-1.24x), and
    # a group stays within _GROUP_BYTES (1 MiB groups, each a fresh matrix, measured
    # slower from Parquet too).
    group = [1]
    groupable = isinstance(src, _ArrowSource) and order == "C" and nulls in ("fill", "nan")
    kept: np.ndarray[Any, Any] | None = None  # with out=: the groups' matrix
    m: Any = None
    for k, start, piece, rows in _numbered(src, n, drop_last, "iter_matrices", group):
        try:
            if final is None:
                final = _stream_dtype(src, src.probe(piece), dtype, nulls, opts)
                if out is not None:
                    k_cols = to_matrix(src.probe(piece), dtype=final, nulls=nulls,
                                       **opts).shape[1]
                    if out.shape[1] != k_cols:
                        raise ValueError(
                            f"iter_matrices out has shape {out.shape}, the stream gives "
                            f"({n}, {k_cols})"
                        )
                    if not np.can_cast(final, out.dtype, "same_kind"):
                        raise ValueError(
                            f"iter_matrices out has dtype {out.dtype}, the stream gives "
                            f"{final}, which does not cast to it (same_kind)"
                        )
                    final = out.dtype
            kw = {"dtype": final, "nulls": nulls, "threads": threads, **opts}
            if rows > n and out is None:  # a group: one matrix, a row view per batch
                m = to_matrix(piece, order=order, **kw)
            elif rows > n:  # a group through the kept matrix, copied into out
                assert out is not None  # groups of rows > n form without out= above
                if kept is None or kept.shape[0] != rows:
                    kept = np.empty((rows, out.shape[1]), out.dtype)
                to_matrix(piece, out=kept, **kw)
                m = kept
            else:
                made.append(_matrix(piece, rows, order, out, kw))
        except Exception as exc:
            _note(exc, "iter_matrices", k, start, rows)
            raise
        del piece
        if rows > n:
            for i in range(0, rows, n):
                if out is None:
                    made.append(m[i : i + n])
                else:
                    made.append(out[:n])
                    np.copyto(made[-1], m[i : i + n])
                yield made.pop()
            m = None
            continue
        if groupable:
            first = made[-1]
            if type(first) is np.ndarray and first.dtype.kind == "f":
                if n * first.itemsize <= _GROUP_COLUMN_BYTES:
                    g = _GROUP_BYTES // max(1, n * first.shape[1] * first.itemsize)
                    group[0] = max(1, min(_GROUP_MAX, g))
            groupable = False
            del first
        # popped as it is yielded: while the consumer runs, this frame holds no view of
        # out, whose link to its base the cycle collector cannot see (a cycle through out
        # would keep the iterator and the stream alive)
        yield made.pop()


def _matrix(
    piece: Any, rows: int, order: str, out: np.ndarray[Any, Any] | None, kw: dict[str, Any]
) -> Any:
    """The matrix of one batch: new, or written into ``out[:rows]``."""
    if out is None:
        return to_matrix(piece, order=order, **kw)
    if order == "C" or rows == out.shape[0]:
        return to_matrix(piece, out=out[:rows], **kw)
    # out[:rows] of an F-ordered out is not contiguous: the last, short batch goes
    # through a matrix of its own
    tmp = to_matrix(piece, order="F", **kw)
    view = out[:rows]
    np.copyto(view, np.ma.getdata(tmp))
    return np.ma.MaskedArray(view, mask=tmp.mask) if np.ma.isMaskedArray(tmp) else view


def _numbered(
    src: _Source, n: int, drop_last: bool, fn: str, group: list[int] | None = None
) -> Iterator[tuple[int, int, Any, int]]:
    """``src.batches`` as (batch number from 1, its first row, piece, rows); an error
    reading the source is raised with a note naming the batch and the source batch.
    A group of batches (``group``, see ``_Source.batches``) is numbered by its first."""
    batches = src.batches(n, drop_last, group)
    k = start = 0
    while True:
        try:
            piece, rows = next(batches)
        except StopIteration:
            return
        except Exception as exc:
            where = src.where()
            exc.add_note(
                f"dfbuffer.{fn}: batch {k + 1} (rows from {start} of the source) "
                f"failed{where}; every batch before it was yielded whole"
            )
            raise
        first = k + 1
        k += max(1, rows // n)
        yield first, start, piece, rows
        del piece
        start += rows


def _note(exc: BaseException, fn: str, k: int, start: int, rows: int) -> None:
    """Name the batch whose conversion raised ``exc`` (PEP 678 note, type unchanged)."""
    exc.add_note(f"dfbuffer.{fn}: batch {k} (rows {start} to {start + rows - 1} of the "
                 "source) failed")


def iter_batches(
    source: object,
    batch_size: int,
    *,
    columns: Any = None,
    nulls: str = "mask",
    drop_last: bool = False,
    categorical: str = "decode",
    strings: str = "object",
    structs: str = "object",
    decimals: str = "decimal",
    on_unsupported: str = "raise",
    copy: bool | None = None,
    period: str = "object",
) -> Iterator[dict[str, Any]]:
    """Yield dicts of NumPy columns of ``batch_size`` rows of ``source``, at bounded memory.

    The batches of :func:`iter_matrices` (the same sources, read the same way) as
    :func:`from_dataframe` gives them: each column by the result rule, zero-copy where a
    batch lies inside one source batch (a batch spanning a border is a copy, joined by
    ``from_dataframe`` itself).  Each column's type and dtype are fixed by the schema, so
    that no batch differs from another by its values: with ``nulls="mask"``, a column
    the schema lets hold nulls (an Arrow field marked nullable, a pandas or masked column
    that is not a NumPy array) is a ``numpy.ma.MaskedArray`` in every batch (all-False
    mask where a batch has none), any other a plain ndarray; with ``nulls="fill"``, such a
    bool or integer column is float64 in every batch.  ``"raise"`` and ``"always_mask"``
    are as in ``from_dataframe``.

    Parameters
    ----------
    source : frame or Arrow stream
        What :func:`from_dataframe` accepts; an Arrow stream is read once, lazily.
    batch_size : int
        Rows per batch (at least 1).
    columns, nulls, categorical, strings, structs, decimals, on_unsupported, copy, period
        As in :func:`from_dataframe` (``nulls`` as above).
    drop_last : bool, optional
        Leave out a last batch shorter than ``batch_size`` (default False).

    Returns
    -------
    iterator of dict of str to numpy.ndarray or CategoricalCodes
        Lazily, one dict per batch: an entry per column, ``n`` rows each (``n ==
        batch_size`` but for the last).

    Raises
    ------
    TypeError, ValueError, NotImplementedError, RuntimeError
        As :func:`from_dataframe` raises them, for the batch that has the cause, with
        a note (PEP 678) naming the batch and its rows; ValueError for ``batch_size``
        below 1 or a wrong ``nulls`` word, TypeError for a ``batch_size`` that is no
        int (a bool included).

    Examples
    --------
    >>> import pyarrow as pa
    >>> import dfbuffer
    >>> t = pa.table({"x": [1, 2, None], "s": ["a", "b", "c"]})
    >>> [b["x"].tolist() for b in dfbuffer.iter_batches(t.to_reader(max_chunksize=2), 2)]
    [[1, 2], [None]]
    """
    n = _batch_size(batch_size)
    nulls = _check_nulls(nulls)
    opts: dict[str, Any] = {
        "categorical": categorical,
        "strings": strings,
        "structs": structs,
        "decimals": decimals,
        "on_unsupported": on_unsupported,
        "copy": copy,
        "period": period,
    }
    src = _OPEN(source, "iter_batches")
    return _dicts(src, n, drop_last, nulls, columns, opts)


def _dicts(
    src: _Source,
    n: int,
    drop_last: bool,
    nulls: str,
    columns: Any,
    opts: dict[str, Any],
) -> Iterator[dict[str, Any]]:
    names: list[str] | None = None
    nullable: set[str] = set()
    for k, start, piece, rows in _numbered(src, n, drop_last, "iter_batches"):
        try:
            if names is None:
                probe = src.probe(piece)
                names = list(from_dataframe(probe, nulls=nulls, columns=columns, **opts))
                nullable = src.nullable(probe, names, opts["structs"])
                del probe
            if nulls == "mask":
                masked = [c for c in names if c in nullable]
                plain = [c for c in names if c not in nullable]
                got = {}
                if masked:
                    obj, cols = src.select(piece, masked)
                    got.update(from_dataframe(obj, nulls="always_mask", columns=cols, **opts))
                if plain:
                    obj, cols = src.select(piece, plain)
                    got.update(from_dataframe(obj, nulls="mask", columns=cols, **opts))
                res = {c: got[c] for c in names}
            else:
                obj, cols = src.select(piece, names)
                res = from_dataframe(obj, nulls=nulls, columns=cols, **opts)
                if nulls == "fill":
                    for c in nullable:
                        v = res.get(c)
                        if type(v) is np.ndarray and v.dtype.kind in "biu":
                            res[c] = v.astype(np.float64)
        except Exception as exc:
            _note(exc, "iter_batches", k, start, rows)
            raise
        del piece
        obj, got = None, {}  # hold no view of a source batch here while the consumer runs
        yield res
        del res
