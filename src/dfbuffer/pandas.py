"""dfbuffer.pandas: a pandas front end over dfbuffer's C converters.

``from_dataframe(obj)`` builds a :class:`pandas.DataFrame` from any
``__dataframe__`` producer, interchange DataFrame or Arrow PyCapsule
producer, with the dtypes ``pandas.api.interchange.from_dataframe`` gives,
zero-copy wherever the layout allows, and right where pandas' own consumer
is wrong (see docs/requirements.md, "dfbuffer.pandas").  pandas is imported
only by this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dfbuffer._interchange import CategoricalCodes
from dfbuffer._interchange import from_dataframe as _convert
from dfbuffer._schema import ColumnSchema, Schema, schema

__all__ = ["from_dataframe"]

# Arrow logical types that NumPy cannot hold (see dfbuffer.schema)
_DELEGATED = frozenset({"list", "struct", "map", "decimal", "binary", "time", "other"})


def _str_storage() -> str:
    """The storage of pandas' default string dtype ("pyarrow" or "python")."""
    return pd.StringDtype(na_value=np.nan).storage


def _strings(values: np.ndarray) -> Any:
    """pandas' default string array from a StringDType or object array whose
    null slots hold None."""
    data = values.data if isinstance(values, np.ma.MaskedArray) else values
    dtype = pd.StringDtype(na_value=np.nan)
    if dtype.storage == "pyarrow" and data.dtype.kind == "T":
        import pyarrow as pa
        from pandas.arrays import ArrowStringArray

        return ArrowStringArray(pa.array(data, type=pa.large_string()), dtype=dtype)
    if data.dtype.kind == "T":
        data = data.astype(object)
    return pd.array(data, dtype=dtype)


def _categorical(res: CategoricalCodes, col: ColumnSchema) -> pd.Categorical:
    codes = res.codes
    if isinstance(codes, np.ma.MaskedArray):
        if (
            col.null_representation == "sentinel"
            and col.null_value == -1
            and codes.dtype.kind == "i"
        ):
            codes = codes.data  # the null slots already hold -1: no copy
        else:
            codes = codes.astype(np.int64 if codes.dtype.kind == "u" else codes.dtype)
            codes = codes.filled(-1)
    elif codes.dtype.kind == "u":
        codes = codes.astype(np.int64)
    cats = res.categories
    cat_schema = col.categories
    if cat_schema is not None and cat_schema.type == "string":
        cats = _strings(cats)
    else:
        cats = _column(cats, cat_schema) if cat_schema is not None else cats
    return pd.Categorical.from_codes(
        codes, categories=pd.Index(cats), ordered=bool(res.ordered), validate=False
    )


def _column(values: Any, col: ColumnSchema | None) -> Any:
    """The pandas array (or NumPy array) for one converted column."""
    kind = col.type if col is not None else None
    if isinstance(values, CategoricalCodes):
        assert col is not None
        return _categorical(values, col)
    masked = isinstance(values, np.ma.MaskedArray)
    if values.dtype.kind in "TO" and kind in ("string", None):
        return _strings(values) if values.dtype.kind == "T" or kind == "string" else values
    if kind == "datetime" or values.dtype.kind == "M":
        arr = values.filled(np.datetime64("NaT")) if masked else values
        if kind == "date":
            arr = arr.astype("datetime64[s]")  # pandas' unit for dates
        if col is not None and col.tz:
            return pd.array(arr).tz_localize("UTC").tz_convert(col.tz)
        return arr
    if masked:
        mask = np.ma.getmaskarray(values)
        data = values.data
        if data.dtype.kind in "iu":
            return pd.arrays.IntegerArray(data, mask)
        if data.dtype.kind == "b":
            return pd.arrays.BooleanArray(data, mask)
        if data.dtype.kind in "fc":
            return values.filled(np.nan)
        if data.dtype.kind == "m":
            return values.filled(np.timedelta64("NaT"))
        return values.filled()
    return values


def _index(sch: Schema, n: int) -> pd.Index | None:
    """The index the producer's metadata describes, when it can be rebuilt
    without data (interchange "pandas.index", Arrow range indexes)."""
    if sch.source == "interchange":
        idx = sch.metadata.get("pandas.index")
        return idx if isinstance(idx, pd.Index) else None
    meta = sch.metadata.get("pandas")
    if not isinstance(meta, dict):
        return None
    cols = meta.get("index_columns") or []
    if len(cols) == 1 and isinstance(cols[0], dict) and cols[0].get("kind") == "range":
        r = cols[0]
        idx = pd.RangeIndex(r.get("start", 0), r.get("stop", n), r.get("step", 1))
        idx.name = r.get("name")
        return idx if len(idx) == n else None
    return None


def from_dataframe(obj: Any, *, allow_copy: bool = True) -> pd.DataFrame:
    """Return a :class:`pandas.DataFrame` built from ``obj`` by dfbuffer's C
    converters.

    ``obj`` is a pandas DataFrame (returned as it is, as pandas does), an
    Arrow PyCapsule producer (pyarrow, polars, nanoarrow, ...), an object
    with ``__dataframe__`` or an interchange DataFrame.  The dtypes are the
    ones ``pandas.api.interchange.from_dataframe`` gives: categoricals via
    ``Categorical.from_codes`` (the codes are not decoded), tz-aware
    ``datetime64[unit, tz]``, pandas' default ``str`` dtype, NaN for nulls
    of floats and NaT for datetimes; integers and booleans with nulls become
    pandas' nullable ``Int*`` / ``boolean`` arrays over the producer's data
    (no copy of the values), where pandas' consumer gives float64 and turns
    null booleans into False.  Numeric columns without nulls are zero-copy
    views; strings, bit-packed booleans, masked floats/datetimes and several
    chunks are copied, and ``allow_copy=False`` raises RuntimeError there.
    The index is restored where the producer's metadata carries it
    (pandas' interchange ``"pandas.index"``, an Arrow range index).
    """
    if isinstance(obj, pd.DataFrame):
        return obj
    sch = schema(obj)
    strings = "stringdtype" if _str_storage() == "pyarrow" else "object"
    by_name = {c.name: c for c in sch.columns}
    delegated = [c.name for c in sch.columns if c.type in _DELEGATED]
    if sch.source == "arrow" and delegated:
        # nested, decimal, binary and time columns: NumPy has no dtype for
        # them; pyarrow converts those (as pandas' consumer does), dfbuffer
        # the rest
        import pyarrow as pa

        table = pa.table(obj)
        native = [c.name for c in sch.columns if c.type not in _DELEGATED]
        cols = _convert(
            table.select(native),
            nulls="mask",
            allow_copy=allow_copy,
            categorical="codes",
            strings=strings,
        )
        conv = {name: _column(values, by_name.get(name)) for name, values in cols.items()}
        for name in delegated:
            conv[name] = table.column(name).to_pandas(zero_copy_only=not allow_copy)
        data = {c.name: conv[c.name] for c in sch.columns}
    else:
        cols = _convert(
            obj, nulls="mask", allow_copy=allow_copy, categorical="codes", strings=strings
        )
        data = {name: _column(values, by_name.get(name)) for name, values in cols.items()}
    n = len(next(iter(data.values()))) if data else 0
    out = pd.DataFrame(data, copy=False)
    if not data:
        out = pd.DataFrame(index=pd.RangeIndex(0))
    idx = _index(sch, n)
    if idx is not None:
        out.index = idx
    return out
