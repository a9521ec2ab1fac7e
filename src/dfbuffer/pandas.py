"""dfbuffer.pandas: a pandas front end over dfbuffer's C converters.

``from_dataframe(obj)`` builds a :class:`pandas.DataFrame` from any
``__dataframe__`` producer, interchange DataFrame, Arrow PyCapsule
producer or mapping of arrays (as the frame-source table names them), with
the dtypes ``pandas.api.interchange.from_dataframe`` gives, zero-copy
wherever the layout allows, and right where pandas' own consumer is wrong
(see docs/requirements.md, "dfbuffer.pandas").  pandas is imported
only by this module.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import numpy as np
import pandas as pd

if tuple(int(p) for p in pd.__version__.split(".")[:2]) < (2, 2):
    raise ImportError(
        f"dfbuffer.pandas needs pandas >= 2.2; pandas {pd.__version__} is installed."
    )
try:  # pandas >= 3: a frame straight from 2-D blocks, no consolidation
    from pandas.api.internals import create_dataframe_from_blocks as _from_blocks
except ImportError:  # pandas 2.x: pd.DataFrame over the columns
    _from_blocks = None

from dfbuffer._arrow_interchange import InterchangeView
from dfbuffer._frame_nodes import (
    ArrowNodes,
    check_bool,
    foreign_cause,
    not_a_frame,
    pandas_export_error,
    table_format,
)
from dfbuffer._interchange import (
    CategoricalCodes,
    CopyError,
    _arrow_schema,
    _arrow_type,
    _ix_frame,
    _pandas_arrow_block,
    _rows_block,
    _stringdtype_arrow,
)
from dfbuffer._interchange import from_dataframe as _convert
from dfbuffer._schema import _logical, schema
from dfbuffer._sources import (
    Source,
    is_pandas_series,
    native_of,
    operation,
    pandas_frame,
    read_again,
    refuse,
)

__all__ = ["from_dataframe"]

# pandas 3 has the str dtype (Arrow-backed strings) and copy-on-write; pandas 2 gives
# strings as object arrays (docs/api.md, "dfbuffer.pandas on pandas 2")
_PANDAS3 = int(pd.__version__.split(".")[0]) >= 3

_Strings = Literal["object", "stringdtype"]

# the strings pandas' str dtype holds as they are (the type table's format)
_LARGE_UTF8 = table_format("large utf8 string")

# Logical types (of the C core's type table) of numbers and booleans
_NUMERIC = frozenset({"int", "uint", "float", "bool"})
# Arrow logical types that NumPy cannot hold (see dfbuffer.schema)
_DELEGATED = frozenset({"list", "struct", "map", "interval", "other"})


def _str_storage() -> str:
    """The storage of pandas' default string dtype ("pyarrow" or "python")."""
    return pd.StringDtype(na_value=np.nan).storage


def _strings(values: np.ndarray) -> Any:
    """pandas' default string array from a StringDType or object array whose
    null slots hold None (pandas 2: the object array itself, as pandas 2's
    consumer gives)."""
    if not _PANDAS3:
        out = np.ma.getdata(values).astype(object, copy=False)
        if isinstance(values, np.ma.MaskedArray):
            out = out.copy()
            out[np.ma.getmaskarray(values)] = None
        return out
    masked = isinstance(values, np.ma.MaskedArray)
    data = values.data if isinstance(values, np.ma.MaskedArray) else values
    dtype = pd.StringDtype(na_value=np.nan)
    if dtype.storage == "pyarrow" and data.dtype.kind == "T" and data.ndim == 1:
        import pyarrow as pa
        from pandas.arrays import ArrowStringArray

        # the Arrow buffers straight from NumPy's string storage (C; no
        # Python str per value, unlike pyarrow's conversion of StringDType)
        mask = np.ascontiguousarray(np.ma.getmaskarray(values)) if masked else None
        offsets, chars, bitmap, nulls = _stringdtype_arrow(data, mask)
        bufs = [None if bitmap is None else pa.py_buffer(bitmap)]
        arr = pa.Array.from_buffers(
            pa.large_string(),
            len(data),
            [*bufs, pa.py_buffer(offsets), pa.py_buffer(chars)],
            null_count=nulls,
        )
        return ArrowStringArray(arr, dtype=dtype)
    if data.dtype.kind == "T":
        data = data.astype(object)
    return pd.array(data, dtype=dtype)


def _categorical(res: CategoricalCodes) -> pd.Categorical:
    codes = res.codes
    if isinstance(codes, np.ma.MaskedArray):
        data = codes.data
        mask = np.ma.getmaskarray(codes)
        if data.dtype.kind == "i" and bool((data[mask] == -1).all()):
            codes = data  # a -1 sentinel (pandas' producer): no copy
        else:
            wide = np.int64 if data.dtype.kind == "u" else data.dtype
            codes = np.ma.MaskedArray(data.astype(wide), mask).filled(-1)
    elif codes.dtype.kind == "u":
        codes = codes.astype(np.int64)
    cats = res.categories
    if cats.ndim != 1 or (
        cats.dtype == object
        and any(isinstance(v, (np.ndarray, list, dict)) for v in np.ma.getdata(cats))
    ):
        # nested values (rows, dicts, lists) cannot be pandas categories
        return _decoded(codes, cats)
    if isinstance(cats, np.ma.MaskedArray) or cats.dtype.kind == "T":
        cats = _column(cats, None)
    return pd.Categorical.from_codes(
        codes, categories=pd.Index(cats), ordered=bool(res.ordered), validate=False
    )


def _decoded(codes: np.ndarray, cats: Any) -> np.ndarray:
    """An object array of the categories the codes name (None for -1): the values
    of a dictionary of nested values, which pandas cannot hold as categories."""
    null: np.ndarray = np.ma.getmaskarray(cats)
    data: np.ndarray = np.ma.getdata(cats)
    if null.ndim > 1:  # rows of a fixed-size list: their null values filled
        kind = data.dtype.kind
        if null.any() and kind in "biufmMO":
            fill = None if kind == "O" else np.nan if kind in "biuf" else "NaT"
            wide = np.float64 if kind in "biu" else data.dtype
            data = np.ma.MaskedArray(data.astype(wide), null).filled(fill)
        null = np.asarray(null.reshape(len(cats), -1).all(axis=1))
    rows = [None if m else v for v, m in zip(data, null, strict=True)]
    out = np.empty(len(codes), dtype=object)
    for i, c in enumerate(codes.tolist()):
        out[i] = None if c < 0 else rows[c]
    return out


def _column(values: Any, tz: Any) -> Any:
    """The pandas (or NumPy) array for one converted column; ``tz`` is the
    time zone of a timestamp column (the converters return UTC)."""
    if isinstance(values, CategoricalCodes):
        return _categorical(values)
    masked = isinstance(values, np.ma.MaskedArray)
    kind = values.dtype.kind
    if kind == "T":
        return _strings(values)
    if kind == "O":
        # the object converters hold None in the null slots (filled(None)
        # would write the mask's default fill value instead)
        if _all_str(values):
            return _strings(values)
        return _periods(np.ma.getdata(values))
    if kind == "M":
        arr = values.filled(np.datetime64("NaT")) if masked else values
        unit = np.datetime_data(arr.dtype)[0]
        if unit == "D":
            return arr.astype("datetime64[s]")  # pandas' unit for dates
        if tz:
            # the int64 values are UTC instants: a view, no conversion
            dtype = pd.DatetimeTZDtype(unit, tz)
            return pd.DatetimeIndex(arr.view(np.int64), dtype=dtype, copy=False).array
        return arr
    if masked:
        mask = np.ma.getmaskarray(values)
        data = values.data
        if kind in "iu":
            return pd.arrays.IntegerArray(data, mask)
        if kind == "b":
            return pd.arrays.BooleanArray(data, mask)
        if kind in "fc":
            return values.filled(np.nan)
        if kind == "m":
            return values.filled(np.timedelta64("NaT"))
        return values.filled()
    return values


def _periods(data: np.ndarray) -> Any:
    """``data`` (objects, None where null) as pandas' Period array when its values are
    Periods of one frequency (pandas' ``pandas.period`` Arrow type, read as Period
    objects), else ``data`` itself."""
    first = next((v for v in data if v is not None), None)
    if not isinstance(first, pd.Period):
        return data
    dtype = pd.PeriodDtype(first.freq)
    if not all(v is None or (isinstance(v, pd.Period) and v.freq == first.freq)
               for v in data):
        return data
    return pd.array(data, dtype=dtype)


def _all_str(values: Any) -> bool:
    """True for an object array of str (None in null slots): a string column
    converted with strings="object"."""
    data = values.data if isinstance(values, np.ma.MaskedArray) else values
    return all(v is None or isinstance(v, str) for v in data[:64])


def _tz_of(fmt: str) -> str | None:
    """The time zone of Arrow timestamp format ``fmt`` (None: none)."""
    t = _arrow_type(fmt)
    return t["tz"] if t is not None and t["logical"] == "datetime" else None


def _range_index(meta: Any, n: int) -> pd.Index | None:
    """The range index that pandas' Arrow metadata (its parsed
    ``index_columns``) describes, if it has one."""
    if isinstance(meta, list) and len(meta) == 1 and isinstance(meta[0], dict):
        r = meta[0]
        if r.get("kind") == "range":
            idx = pd.RangeIndex(r.get("start", 0), r.get("stop", n), r.get("step", 1))
            idx.name = r.get("name")
            return idx if len(idx) == n else None
    return None


def _block_ok(a: Any) -> bool:
    """True if pandas takes NumPy array ``a`` as a block as it is."""
    k = a.dtype.kind
    if k in "mM":
        return np.datetime_data(a.dtype)[0] in ("s", "ms", "us", "ns")
    return k in "biufcO"


# Same-dtype NumPy columns are copied into one 2-D block (as pandas' own
# consumers do) when there are at least _STACK_MIN of them and each holds at
# most _STACK_MAX_BYTES: pandas' per-block cost (~15 us) then exceeds the copy.
_STACK_MIN = 8
_STACK_MAX_BYTES = 256 * 1024


def _frame(data: dict[str, Any], allow_copy: bool) -> pd.DataFrame:
    """A DataFrame over the arrays of ``data``: every column zero-copy, except
    many small same-dtype NumPy columns, which ``allow_copy`` lets share one
    copied 2-D block."""
    if not data:
        return pd.DataFrame(index=pd.RangeIndex(0))
    names = list(data)
    arrays = list(data.values())
    n = len(arrays[0])
    make = _from_blocks
    if make is None or len(set(names)) != len(names):
        return pd.DataFrame(data, copy=False)
    blocks: list[tuple[Any, np.ndarray]] = []
    groups: dict[np.dtype, list[int]] = {}
    for i, a in enumerate(arrays):
        if type(a) is not np.ndarray:
            if is_pandas_series(a):
                a = a.to_numpy() if isinstance(a.dtype, np.dtype) else a.array
                arrays[i] = a
            if not isinstance(a, np.ndarray):
                if len(a) != n:
                    return pd.DataFrame(data, copy=False)
                blocks.append((a, np.array([i], dtype=np.intp)))
                continue
        dt = a.dtype
        g = groups.get(dt)
        if g is None:
            if a.ndim != 1 or not _block_ok(a):
                return pd.DataFrame(data, copy=False)
            groups[dt] = g = []
        g.append(i)
    for dt, idx in groups.items():
        if len(idx) > 1 and dt.kind in "biuf":
            # columns that lie one after the other (the columns of a 2-D
            # block, as pandas' own producer hands them): one view of them
            rows = _rows_block([arrays[i] for i in idx])
            if rows is not None and rows.shape[1] == n:
                blocks.append((rows, np.array(idx, dtype=np.intp)))
                continue
        if any(len(arrays[i]) != n for i in idx):
            return pd.DataFrame(data, copy=False)
        if (
            allow_copy
            and len(idx) >= _STACK_MIN
            and n * dt.itemsize <= _STACK_MAX_BYTES
            and dt.kind in "biuf"
        ):
            # one copy into the C-ordered (columns, rows) block pandas stores
            block = np.concatenate([arrays[i] for i in idx]).reshape(len(idx), n)
            blocks.append((block, np.array(idx, dtype=np.intp)))
        else:
            blocks.extend((arrays[i].reshape(1, n), np.array([i], dtype=np.intp)) for i in idx)
    return make(blocks, index=pd.RangeIndex(n), columns=pd.Index(names))


def _block_frame(
    names: list[str], block: np.ndarray | None, extra: dict[Any, Any] | None, meta: Any
) -> pd.DataFrame:
    """The frame of a ``_pandas_arrow_block`` result: the columns of one
    numeric type in ``block`` (their (columns, rows) copy; ``extra`` the
    null masks of int columns with nulls), or, when ``block`` is None, the
    column dict ``extra`` of the converters; ``meta`` pandas' parsed
    ``index_columns`` (a range index, if any)."""
    if block is None:
        data = {
            k: v if type(v) is np.ndarray else _column(v, None)
            for k, v in (extra or {}).items()
        }
        out = _frame(data, True)
        idx = _range_index(meta, len(out))
        if idx is not None:
            out.index = idx
        return out
    n = block.shape[1]
    index = _range_index(meta, n)
    if index is None:
        index = pd.RangeIndex(n)
    if not extra:
        blocks = [(block, np.arange(len(names), dtype=np.intp))]
    else:
        # int columns with nulls: pandas' nullable arrays over their rows
        # of the block; the other rows as _frame would group them
        keep = [i for i in range(len(names)) if i not in extra]
        blocks = [
            (pd.arrays.IntegerArray(block[j], m), np.array([j], dtype=np.intp))
            for j, m in extra.items()
        ]
        if len(keep) >= _STACK_MIN:
            blocks.append((block[keep], np.array(keep, dtype=np.intp)))
        else:
            blocks.extend((block[i : i + 1], np.array([i], dtype=np.intp)) for i in keep)
    assert _from_blocks is not None  # _from_arrow asks for a block only then
    return _from_blocks(
        blocks, index=index, columns=pd.Index(names)
    )


def _memory_bytes() -> int:
    """The machine's physical memory (the bound of core's dfb_alloc_limit)."""
    import os

    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # not on this platform
        return 2**63 - 1


def _check_delegated_size(name: str, column: Any) -> None:
    """MemoryError naming column ``name`` (a pyarrow ChunkedArray) when the values its
    pyarrow conversion makes (every level's rows; a list view's rows counted by their
    sizes, as each row is materialised) cannot fit in memory at 8 bytes each: a valid
    array of 2**61 null values below a list holds no buffer, and pyarrow would try to
    allocate them (or abort).  Cannot fail otherwise."""
    import pyarrow as pa

    limit = _memory_bytes() // 8
    total = 0
    stack = list(column.chunks)
    while stack:
        a = stack.pop()
        total += len(a)
        t = a.type
        if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
            # Python ints: pyarrow's int64 sum wraps (sizes of 2**63 - 65 and 64 rows)
            total += sum(v for v in a.sizes.to_pylist() if v is not None)
        if total > limit:
            raise MemoryError(
                f"column {name!r}: {total} nested values or more do not fit in memory"
            )
        if pa.types.is_dictionary(t):
            stack.append(a.dictionary)
        elif pa.types.is_run_end_encoded(t):
            stack.append(a.values)
        elif pa.types.is_struct(t) or pa.types.is_union(t):
            stack.extend(a.field(i) for i in range(t.num_fields))
        elif pa.types.is_map(t):
            stack.extend([a.keys, a.items])
        elif hasattr(a, "values") and (
            pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
            or pa.types.is_list_view(t) or pa.types.is_large_list_view(t)
        ):
            stack.append(a.values)
        elif isinstance(a, pa.ExtensionArray):
            stack.append(a.storage)


def _read_once(obj: Any) -> Any:
    """Arrow producer ``obj`` as one that can be read several times, exported
    once: ``_from_arrow`` asks its producer for the schema, the data and, for
    pandas' metadata, a pyarrow table, and a stream (``nanoarrow.ArrayStream``,
    ``pyarrow.RecordBatchReader``, a DuckDB result) can be exported only once.
    dfbuffer's own producers are read as they are; the others as
    ``dfbuffer._sources.read_again`` says: pandas' and pyarrow's tables and arrays as
    they are, a pyarrow reader read into a table (schema metadata kept), any other
    stream imported once by ``to_arrow`` (zero-copy nodes, read any number of times;
    its table-level metadata is not kept)."""
    if isinstance(obj, ArrowNodes | InterchangeView):
        return obj
    from dfbuffer._to_arrow import to_arrow

    return read_again(obj, lambda o: to_arrow(o, func="from_dataframe"))


def _from_arrow(obj: Any, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    obj = _read_once(obj)
    if allow_copy and _from_blocks is not None:
        # a table of one numeric type: one C call reads it into one block
        got = _pandas_arrow_block(obj, _STACK_MIN, _STACK_MAX_BYTES)
        if got is not None:
            return _block_frame(*got)
    desc = _arrow_schema(obj)
    if desc is None:
        # only the device half of the Arrow interface: host memory only here,
        # so its __dataframe__ if it has one
        df = _ix_frame(obj)
        if df is None:
            raise not_a_frame("from_dataframe", obj)
        return _from_interchange(df, allow_copy, strings)
    is_table = _logical(desc["format"]) == "struct"  # a table, or one column
    if is_table:
        skip = set(desc.get("index_columns", ()))
        fields = [f for i, f in enumerate(desc["children"]) if i not in skip]
    else:
        fields = [desc]
    has_strings = False
    delegated = []
    for f in fields:
        logical = _logical(f["format"])
        if f["dictionary"] is not None or logical in _NUMERIC:
            continue
        if logical == "string":
            has_strings = True
        elif logical in _DELEGATED:
            delegated.append(f["name"])
    pyarrow_strings = strings == "stringdtype" and has_strings
    conv: dict[str, Any] = {}
    src = obj
    index_pos = desc.get("index_columns", ()) if is_table else ()
    index_levels: list[tuple[int, Any]] = []
    if index_pos:
        try:
            import pyarrow as pa
        except ImportError:  # the index columns stay out, no index restored
            index_pos = ()
    if index_pos:
        # pandas' metadata marks these columns as the index: read them with
        # the same converters (pyarrow wrote that metadata)
        src = pa.table(obj)
        for pos in index_pos:
            values = _convert_one(src.column(pos), allow_copy, strings)
            tz = _tz_of(desc["children"][pos]["format"])
            index_levels.append(
                (pos, values if isinstance(values, CategoricalCodes) else (values, tz))
            )
    if is_table and (pyarrow_strings or delegated):
        # strings: pandas' str dtype is an Arrow array, taken as it is (as
        # pandas' consumer does); nested, decimal, binary and time columns,
        # which NumPy cannot hold: pyarrow's conversion.  The rest: dfbuffer.
        import pyarrow as pa
        from pandas.arrays import ArrowStringArray

        src = table = pa.table(src)
        for f in fields:
            name, fmt = f["name"], f["format"]
            if f["dictionary"] is None and pyarrow_strings and _logical(fmt) == "string":
                if not allow_copy and fmt != _LARGE_UTF8:
                    raise CopyError(
                        f"column {name!r}: Arrow format {fmt!r} strings need a copy "
                        "to large strings, which allow_copy=False forbids"
                    )
                conv[name] = ArrowStringArray(
                    table.column(name), dtype=pd.StringDtype(na_value=np.nan)
                )
            elif name in delegated:
                column = table.column(name)
                _check_delegated_size(name, column)
                if column.num_chunks == 0:
                    # pyarrow 26 aborts converting a list view column of no chunks
                    column = pa.chunked_array([pa.array([], column.type)])
                conv[name] = column.to_pandas(zero_copy_only=not allow_copy)
        native = [f["name"] for f in fields if f["name"] not in conv]
        src = table.select(native) if len(native) < len(fields) else table
    if len(conv) < len(fields):
        cols = _convert(
            src, nulls="mask", allow_copy=allow_copy, categorical="codes", strings=strings
        )
        fmts = None
        for name, values in cols.items():
            if type(values) is np.ndarray and values.dtype.kind in "biuf":
                conv[name] = values  # the common case: a zero-copy view
                continue
            tz = None
            if not isinstance(values, CategoricalCodes) and values.dtype.kind == "M":
                if fmts is None:
                    fmts = {f["name"]: f["format"] for f in fields}
                tz = _tz_of(fmts.get(name, ""))
            conv[name] = _column(values, tz)
    data = {f["name"]: conv[f["name"]] for f in fields if f["name"] in conv}
    out = _frame(data, allow_copy)
    idx = _arrow_index(desc, index_levels, len(out))
    if idx is not None:
        out.index = idx
    return out


def _convert_one(column: Any, allow_copy: bool, strings: _Strings) -> Any:
    """One Arrow column (a pyarrow ChunkedArray) through the converters."""
    from dfbuffer._interchange import column_to_ndarray

    if column.num_chunks != 1 and not allow_copy:
        raise CopyError("an index column of several chunks needs a copy, which "
                        "allow_copy=False forbids")
    return column_to_ndarray(column, nulls="mask", categorical="codes", strings=strings)


def _arrow_index(
    desc: dict[str, Any], levels: list[tuple[int, Any]], n: int
) -> pd.Index | None:
    """The index pandas' Arrow metadata describes (a range, or the columns
    it marks, converted into ``levels``: (child position, converted)), named
    as the metadata names it,
    as ``pyarrow.Table.to_pandas`` restores it; None where it describes
    none or is not understood."""
    meta = desc.get("pandas_index")
    if not levels:
        return _range_index(meta, n)
    try:
        md = json.loads(desc["metadata"]["pandas"])
        names = {c["field_name"]: c["name"] for c in md["columns"]}
        fields = [str(k) for k in md["index_columns"]]
        level_names = [names[k] for k in fields]
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    if len(fields) != len(levels):
        return None
    # the levels in the metadata's order; each is the last child of its name
    # (as the converters pick the columns they leave out)
    left = dict(levels)
    arrays = []
    for k in fields:
        pos = max((p for p in left if desc["children"][p]["name"] == k), default=None)
        if pos is None:
            return None
        lv = left.pop(pos)
        arr = _column(lv, None) if isinstance(lv, CategoricalCodes) else _column(*lv)
        if len(arr) != n:
            return None
        arrays.append(arr)
    if len(arrays) == 1:
        return pd.Index(arrays[0], name=level_names[0], copy=False)
    return pd.MultiIndex.from_arrays(arrays, names=level_names)


class _Fetched:
    """An interchange DataFrame whose columns were fetched with one
    ``get_columns()`` call (pandas' producer makes each ``get_column(i)``
    an ``iloc`` look-up, three times the cost of its ``get_columns``)."""

    def __init__(self, names: list[Any], cols: list[Any]) -> None:
        self._names = names
        self._cols = cols
        self.get_column = cols.__getitem__  # a C call per column, no Python frame

    def column_names(self) -> list[Any]:
        return self._names


def _fetch_columns(df: Any) -> tuple[list[Any], list[Any]] | None:
    """The names and column objects of interchange DataFrame ``df`` from one
    ``get_columns()`` call, or None (no such method, duplicate names, or a
    count that does not match: the caller walks ``get_column(i)``)."""
    get_columns = getattr(df, "get_columns", None)
    if get_columns is None:
        return None
    names = df.column_names()
    names = list(names) if not isinstance(names, str) else None
    if names is None or len({str(k) for k in names}) != len(names):
        return None
    cols = list(get_columns())
    return (names, cols) if len(cols) == len(names) else None


def _mapping_tz(data: Any, name: str) -> Any:
    """The time zone of datetime column ``name`` of mapping ``data`` (the
    converters give a tz-aware column's UTC instants): a pandas value's dtype
    says it, any other value's schema (as for an Arrow producer's column)."""
    for key, value in data.items():
        if str(key) == name:
            dt = getattr(value, "dtype", None)
            if isinstance(dt, pd.DatetimeTZDtype):
                return dt.tz
            break
    return schema(data, columns=[name])[0].tz


def _mapping_dtype(data: Any, name: str) -> Any:
    """The dtype of the value of column ``name`` of mapping ``data`` (None when
    it has none)."""
    for key, value in data.items():
        if str(key) == name:
            return getattr(value, "dtype", None)
    return None


def _from_mapping(data: Any, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    """A mapping of column names to 1-D arrays, Buffers or Arrow arrays: each
    column as ``from_dataframe`` reads it, in pandas' dtypes (a pandas Interval
    value's Interval objects as pandas' Interval array of its dtype, as the
    frame's column is)."""
    cols = _convert(
        data, nulls="mask", allow_copy=allow_copy, categorical="codes", strings=strings
    )
    out = {}
    for name, values in cols.items():
        if type(values) is np.ndarray and values.dtype.kind in "biuf":
            out[name] = values
            continue
        tz = None
        if not isinstance(values, CategoricalCodes) and values.dtype.kind == "M":
            tz = _mapping_tz(data, name)
        out[name] = _column(values, tz)
        if not isinstance(values, CategoricalCodes) and values.dtype.kind == "O":
            dt = _mapping_dtype(data, name)
            if isinstance(dt, pd.IntervalDtype):
                out[name] = pd.array(np.ma.getdata(values), dtype=dt)
    return _frame(out, allow_copy)


def _from_series(frame: pd.DataFrame, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    """The one-column frame of a pandas Series (``Series.to_frame()``, the frame-source
    table's): its column read as a mapping's Series value is (so as that frame column
    is read, never through pandas' Arrow export, which refuses object columns of
    anything but strings), with the Series' own index."""
    out = _from_mapping({str(frame.columns[0]): frame.iloc[:, 0]}, allow_copy, strings)
    out.index = frame.index
    return out


def _from_interchange(df: Any, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    """Interchange DataFrame ``df`` (the frame-source table's, or ``__dataframe__()``
    of a device-only Arrow producer)."""
    fetched = _fetch_columns(df)
    src = df if fetched is None else _Fetched(*fetched)
    cols = _convert(
        src, nulls="mask", allow_copy=allow_copy, categorical="codes", strings=strings
    )
    md = df.metadata
    idx = md.get("pandas.index") if isinstance(md, dict) else None
    make = _from_blocks
    rows = _rows_block(list(cols.values())) if len(cols) > 1 and make is not None else None
    if rows is not None and make is not None:
        # every column a plain array, one after the other in the producer's
        # memory (a pandas 2-D block): one zero-copy block, no per-column step
        n = rows.shape[1]
        index = idx if isinstance(idx, pd.Index) and len(idx) == n else pd.RangeIndex(n)
        placement = np.arange(len(cols), dtype=np.intp)
        return make([(rows, placement)], index=index, columns=pd.Index(list(cols)))
    data = {}
    for i, (name, values) in enumerate(cols.items()):
        if type(values) is np.ndarray and values.dtype.kind in "biuf":
            data[name] = values  # the common case: a zero-copy view
            continue
        tz = None
        if not isinstance(values, CategoricalCodes) and values.dtype.kind == "M":
            col = df.get_column_by_name(name) if fetched is None else fetched[1][i]
            tz = _tz_of(col.dtype[2])  # only datetimes
        data[name] = _column(values, tz)
    out = _frame(data, allow_copy)
    if isinstance(idx, pd.Index) and len(idx) == len(out):
        out.index = idx
    return out


def from_dataframe(obj: Any, *, allow_copy: bool = True) -> pd.DataFrame:
    """Return a :class:`pandas.DataFrame` built from ``obj`` by dfbuffer's C
    converters.

    ``obj`` is a pandas DataFrame (returned as it is, as pandas does), an
    Arrow PyCapsule producer (pyarrow, polars, nanoarrow, ...), an object
    with ``__dataframe__``, an interchange DataFrame or a mapping of column
    names to 1-D arrays; the frame-source table decides how it is read, as
    for every other function of dfbuffer.  The dtypes are the
    ones ``pandas.api.interchange.from_dataframe`` gives: categoricals via
    ``Categorical.from_codes`` (the codes are not decoded), tz-aware
    ``datetime64[unit, tz]``, pandas' default ``str`` dtype, NaN for nulls
    of floats and NaT for datetimes; integers and booleans with nulls become
    pandas' nullable ``Int*`` / ``boolean`` arrays over the producer's data
    (no copy of the values), where pandas' consumer gives float64 and turns
    null booleans into False.  Numeric columns without nulls are zero-copy
    views; same-dtype ones that lie one after the other in the producer's
    memory (a pandas 2-D block, also through a pyarrow table made from the
    frame) are one zero-copy, read-only 2-D block.  Strings of an Arrow
    producer are pandas' Arrow-backed ``str`` arrays over the producer's
    Arrow memory (32-bit offsets and string views are widened to large
    strings); Arrow columns NumPy has no dtype for
    (lists, structs, maps, decimals, binary, times) are converted by pyarrow,
    as pandas' consumer does.  Strings of interchange producers,
    bit-packed booleans, masked floats/datetimes and several chunks are
    copied, and ``allow_copy=False`` raises CopyError there.  The index
    is restored where the producer's metadata carries it: pandas'
    interchange ``"pandas.index"``, or pandas' Arrow schema metadata (a
    range, a named index, a MultiIndex, as ``pyarrow.Table.to_pandas``
    restores them; the index columns are never columns of the result).

    Parameters
    ----------
    obj : object
        A pandas DataFrame, an Arrow PyCapsule producer, an object with
        ``__dataframe__``, an interchange DataFrame or a mapping of column
        names to 1-D arrays.
    allow_copy : bool, optional
        False raises CopyError where a copy is unavoidable (default True).

    Returns
    -------
    pandas.DataFrame
        The frame, sharing the producer's memory where the layout allows.

    Raises
    ------
    TypeError
        ``obj`` is not a dataframe dfbuffer reads.
    CopyError
        ``allow_copy=False`` and a copy is unavoidable (a ValueError and RuntimeError).
    ValueError
        Buffers that do not match their description (naming the column).

    Examples
    --------
    >>> import pyarrow as pa
    >>> import dfbuffer.pandas
    >>> t = pa.table({"n": pa.array([1, None]), "s": ["a", "b"]})
    >>> df = dfbuffer.pandas.from_dataframe(t)
    >>> df["n"].dtype, df["n"].tolist()
    (Int64Dtype(), [1, <NA>])
    """
    allow_copy = check_bool("from_dataframe", "allow_copy", allow_copy)
    as_is = pandas_frame(obj)
    if as_is is not None:
        return as_is  # a pandas frame (a subclass too) is the result as it is
    strings: _Strings = (
        "stringdtype" if _PANDAS3 and _str_storage() == "pyarrow" else "object"
    )
    # the frame-source table (src/_interchange/readers/frame_source.c) decides how
    # obj is read; an interchange DataFrame is asked for with allow_copy=True (the
    # conversion below honours the caller's); its row's frame is read once (a pandas
    # frame over its manager read once, a mapping's items copied in one pass)
    return _PANDAS(obj, "from_dataframe", allow_copy, strings)


# -- the rows' pandas frames: (source, allow_copy, strings) -> DataFrame -------------

def _pandas_row(src: Source, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    native = native_of(src.obj)
    if pandas_frame(native) is not None:
        return native  # narwhals over a pandas frame: that frame, as it is
    frame = src.frame
    if is_pandas_series(native):
        # a pandas Series (or narwhals over one): its one-column frame, read as a
        # mapping's Series value is
        return _from_series(frame, allow_copy, strings)
    # pandas' interchange object: the frame behind it, through its Arrow export
    # (pandas' own buffers drop the slice offset of Arrow-backed columns), with the
    # dtypes pandas' consumer gives; src.allow_copy is False when pandas' interchange
    # object forbids copies
    try:
        return _from_arrow(frame, allow_copy and src.allow_copy, strings)
    except Exception as e:
        if foreign_cause(e) is None:
            raise
        # pyarrow refused a column (complex, mixed objects): named, as from_dataframe
        err = pandas_export_error(frame, [str(c) for c in frame.columns], e)
        raise err from err.__cause__


def _arrow_row(src: Source, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    return _from_arrow(src.frame, allow_copy, strings)


def _interchange_row(src: Source, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    return _from_interchange(src.frame, allow_copy, strings)


def _mapping_row(src: Source, allow_copy: bool, strings: _Strings) -> pd.DataFrame:
    return _from_mapping(src.frame, allow_copy, strings)


_PANDAS = operation("pandas", pandas=_pandas_row, arrow=_arrow_row,
                    interchange=_interchange_row, mapping=_mapping_row, schema=refuse)
