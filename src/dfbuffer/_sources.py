"""The frame-source table's Python half: each Python operation as one function per row.

The table itself is C (src/_interchange/readers/frame_source.c): its rows, asked in one
order, decide which kind of source an object is (pandas frame, Arrow producer,
interchange DataFrame, mapping of arrays, schema only; a narwhals wrapper as the native
object it wraps) and read the row's frame once.  An operation that
Python implements (the Arrow nodes of ``to_arrow``, ``schema``, ``to_interchange``,
``dfbuffer.pandas.from_dataframe``, the batches of ``iter_batches``) is an
:func:`operation`: one function per row, keyed by the names of the C table's rows
(``_frame_kinds``) and checked complete when it is made, so a new row of the C table
fails at import until every operation has its function.  The operation is a C object
(``_FrameOperation``, frame_source.c): calling it asks the table once and calls the
row's function with the :class:`Source` it read; no module compares a kind.

This is also the one module that tests a value by its producer's classes or protocol
attributes (pandas Series and extension arrays, pyarrow streams, Arrow PyCapsule
producers); tests/source/test_source_kinds.py fails on such a test anywhere else in
src/dfbuffer.  Of the package it imports only the C extension.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from dfbuffer._interchange import _frame_kinds, _FrameOperation, _not_a_frame_error

__all__ = ["KINDS", "Source", "arrow_stream", "has_host_arrow", "is_arrow_producer",
           "is_pandas_series", "native_of", "numpy_series", "operation", "pandas_array_frame",
           "pandas_frame", "pandas_series_name", "read_again", "refuse"]

#: The rows of the C frame-source table, in the order they are asked.
KINDS: tuple[str, ...] = _frame_kinds()

_ARROW_ATTRS = ("__arrow_c_stream__", "__arrow_c_array__",
                "__arrow_c_device_stream__", "__arrow_c_device_array__")


class Source(NamedTuple):
    """What the table read for one call: ``obj`` as the caller gave it, ``frame`` what
    its row reads (read once: a pandas frame over its manager read once, a mapping's
    items copied in one pass, the interchange DataFrame of ``__dataframe__()``, the
    native object of a narwhals wrapper), ``allow_copy`` (False when ``obj`` forbids
    copies: pandas' interchange object made with ``allow_copy=False``) and ``func``,
    the public function called (for errors)."""

    obj: Any
    frame: Any
    allow_copy: bool
    func: str


def operation(name: str, **rows: Callable[..., Any]) -> _FrameOperation:
    """One operation of the table: a function ``f(source, *args)`` per row.

    ``operation(name, pandas=..., arrow=..., ...)`` takes one function for each row of
    the C table (``KINDS``): RuntimeError for a missing or unknown row.  The result, a
    C ``_FrameOperation``, is called as ``op(obj, func, *args)``: it asks the table
    once (frame_source.c), then calls the row's function with the :class:`Source` it
    read; an object no row reads raises the TypeError of ``_not_a_frame_error`` for
    ``func``."""
    missing = [k for k in KINDS if k not in rows]
    unknown = [k for k in rows if k not in KINDS]
    if missing or unknown:
        raise RuntimeError(f"operation {name!r} of the frame-source table: no function "
                           f"for the rows {missing}, unknown rows {unknown}")
    return _FrameOperation(name, tuple(rows[k] for k in KINDS), Source)


def refuse(src: Source, *args: Any) -> Any:
    """The function of a row that an operation does not read (a schema-only object for
    everything but ``schema``): the TypeError of ``_not_a_frame_error``."""
    raise _not_a_frame_error(src.func, src.obj)


# -- tests of a value by its producer ------------------------------------------------

def is_arrow_producer(value: Any) -> bool:
    """Whether ``value``'s type speaks the Arrow PyCapsule interface (an array or a
    stream, on the host or a device)."""
    t = type(value)
    return any(hasattr(t, a) for a in _ARROW_ATTRS)


def pandas_series_name(obj: Any) -> str | None:
    """``str(obj.name)`` when ``obj`` is a pandas Series (a subclass too) with a name,
    else None (pandas is never imported here)."""
    pd = sys.modules.get("pandas")
    if pd is None or not isinstance(obj, pd.Series) or obj.name is None:
        return None
    return str(obj.name)


def pandas_array_frame(value: Any, name: str) -> Any:
    """A one-column pandas DataFrame over ``value``, its column named ``name`` (so an
    error names the mapping's key), when it is a pandas Series (exactly
    ``pandas.Series``, of any dtype, on every pandas) or a pandas ExtensionArray
    (Categorical, a tz-aware DatetimeArray, ...), read as a frame's column is read, as
    column_to_ndarray reads it; else None (pandas is never imported here)."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    if type(value) is pd.Series:
        return value.to_frame(name=name)
    if not isinstance(value, pd.api.extensions.ExtensionArray):
        return None
    return pd.Series(value, copy=False, name=name).to_frame()


def pandas_frame(obj: Any) -> Any:
    """``obj`` when it is a pandas DataFrame (a subclass too), else None (pandas is
    never imported here)."""
    pd = sys.modules.get("pandas")
    return obj if pd is not None and isinstance(obj, pd.DataFrame) else None


def has_host_arrow(obj: Any) -> bool:
    """Whether ``obj``'s type exports Arrow host data (``__arrow_c_stream__`` or
    ``__arrow_c_array__``), not only the device half of the interface."""
    t = type(obj)
    return hasattr(t, "__arrow_c_stream__") or hasattr(t, "__arrow_c_array__")


def numpy_series(value: Any) -> bool:
    """Whether ``value`` is exactly a pandas Series of a NumPy dtype (pandas is never
    imported here)."""
    pd = sys.modules.get("pandas")
    return (pd is not None and type(value) is pd.Series
            and isinstance(value.dtype, np.dtype))


def native_of(obj: Any) -> Any:
    """The native object a narwhals frame or Series wraps (as the frame-source table
    reads it), else ``obj``."""
    if type(obj).__module__.partition(".")[0] == "narwhals" and hasattr(obj, "to_native"):
        return obj.to_native()
    return obj


def is_pandas_series(value: Any) -> bool:
    """Whether ``value`` is a pandas Series (a subclass too)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.Series)


def arrow_stream(obj: Any, export: Callable[[Any], Any]) -> Any:
    """An ``arrow_array_stream`` capsule of ``obj``, exported exactly once: its own
    ``__arrow_c_stream__`` when its type has one, else that of ``export(obj)`` (an
    Arrow producer of it that has)."""
    if not hasattr(type(obj), "__arrow_c_stream__"):
        obj = export(obj)
    return type(obj).__arrow_c_stream__(obj)


def read_again(obj: Any, import_once: Callable[[Any], Any]) -> Any:
    """Arrow producer ``obj`` as one that can be exported several times: pandas frames
    and Series, pyarrow tables and arrays, and producers without a stream export (new
    structs on every export) as they are; a pyarrow reader read into a table (schema
    metadata kept); any other stream through ``import_once`` (exported exactly once)."""
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, pd.DataFrame | pd.Series):
        return obj
    if not hasattr(type(obj), "__arrow_c_stream__"):
        return obj
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        if isinstance(obj, pa.Table | pa.RecordBatch | pa.ChunkedArray | pa.Array):
            return obj
        if isinstance(obj, pa.RecordBatchReader):
            return obj.read_all()
    return import_once(obj)
