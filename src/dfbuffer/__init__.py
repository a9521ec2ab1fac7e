"""dfbuffer: the buffer layer of Python data interchange.

One owning :class:`Buffer` type (pointer, size, shape, strides, dtype, device
and a strong reference to the memory's owner) that speaks DLPack 1.x, the
NumPy array interface, the buffer protocol, the CUDA array interface and the
Arrow PyCapsule interface; and C converters from DataFrame-interchange
columns and Arrow arrays to NumPy arrays whose ``base`` keeps the owner alive.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from dfbuffer._interchange import (
    Buffer,
    CategoricalCodes,
    ColumnNullType,
    DeviceType,
    DtypeKind,
    NativeFormat,
    buffer_to_ndarray,
    column_to_ndarray,
    from_dataframe,
    to_matrix,
)
from dfbuffer._schema import ColumnSchema, Schema, schema
from dfbuffer._version import version as __version__

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dfbuffer._to_arrow import ArrowExport
del TYPE_CHECKING

__all__ = [
    "Buffer",
    "ColumnNullType",
    "DeviceType",
    "DtypeKind",
    "NativeFormat",
    "buffer_to_ndarray",
    "column_to_ndarray",
    "from_dataframe",
    "get_include",
    "to_interchange",
    "to_arrow",
    "__version__",
    "to_matrix",
    "CategoricalCodes",
    "ColumnSchema",
    "Schema",
    "schema",
]


def get_include() -> str:
    """Return the include directory of dfbuffer's public C API.

    It holds one header, ``dfbuffer/dfbuffer.h``: pass this directory as an include path
    when compiling a C, C++ or Cython extension that uses the C API (import it with
    ``DfBuffer_ImportAPI()``; Cython: ``from dfbuffer cimport capi``). See docs/c-api.md.
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def to_interchange(obj, *, allow_copy: bool = True):
    """Return a DataFrame interchange protocol object over an Arrow PyCapsule producer.

    ``obj`` is anything with ``__arrow_c_stream__`` or ``__arrow_c_array__`` (a pyarrow
    Table or RecordBatch, a polars DataFrame, a pandas 3 DataFrame, a nanoarrow stream), or
    their device counterparts ``__arrow_c_device_stream__`` / ``__arrow_c_device_array__``
    (data on a non-CPU device gives device buffers, never read on the host).
    The result has ``__dataframe__`` and implements every method of the protocol; its
    buffers are :class:`Buffer` objects that keep the Arrow memory alive. Consumers that
    only speak ``__dataframe__`` (``pandas.api.interchange.from_dataframe``,
    ``pyarrow.interchange.from_dataframe``, plotting libraries) keep working with
    producers that dropped the protocol.
    """
    from dfbuffer._arrow_interchange import to_interchange as _to_interchange

    return _to_interchange(obj, allow_copy=allow_copy)


def to_arrow(obj: object, columns: Sequence[str] | None = None) -> ArrowExport:
    """Return an Arrow PyCapsule producer (``__arrow_c_stream__``, ``__arrow_c_schema__``)
    over the columns of any producer dfbuffer reads, zero-copy wherever the layout allows.

    ``obj`` is an Arrow PyCapsule producer, an object with ``__dataframe__``, an
    interchange DataFrame (pandas' ones are read through the frame behind them) or a
    mapping of column names to 1-D arrays or :class:`Buffer` objects. pyarrow is not
    imported; ``pyarrow.table``, ``polars.DataFrame``, DuckDB and narwhals read the result.
    """
    from dfbuffer._to_arrow import to_arrow as _to_arrow

    return _to_arrow(obj, columns)
