"""dfbuffer: the buffer layer of Python data interchange.

One owning :class:`Buffer` type (pointer, size, shape, strides, dtype, device
and a strong reference to the memory's owner) that speaks DLPack 1.x, the
NumPy array interface, the buffer protocol, the CUDA array interface and the
Arrow PyCapsule interface; and C converters from DataFrame-interchange
columns and Arrow arrays to NumPy arrays whose ``base`` keeps the owner alive.
"""

from typing import TYPE_CHECKING

from dfbuffer._batches import iter_batches, iter_matrices
from dfbuffer._interchange import (
    Buffer,
    CategoricalCodes,
    ColumnNullType,
    CopyError,
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
    # typing-only names (src/dfbuffer/_typing.pyi has no module behind it): import them
    # under `if TYPE_CHECKING:` or in quoted annotations
    from collections.abc import Mapping, Sequence
    from typing import Literal

    from dfbuffer import testing as testing
    from dfbuffer._arrow_interchange import InterchangeView as InterchangeView
    from dfbuffer._to_arrow import ArrowExport as ArrowExport
    from dfbuffer._typing import ArrowArrayExportable as ArrowArrayExportable
    from dfbuffer._typing import ArrowDeviceArrayExportable as ArrowDeviceArrayExportable
    from dfbuffer._typing import ArrowDeviceStreamExportable as ArrowDeviceStreamExportable
    from dfbuffer._typing import ArrowExportable as ArrowExportable
    from dfbuffer._typing import ArrowSchemaExportable as ArrowSchemaExportable
    from dfbuffer._typing import ArrowStreamExportable as ArrowStreamExportable
    from dfbuffer._typing import DataFrameLike as DataFrameLike
    from dfbuffer._typing import InterchangeDataFrame as InterchangeDataFrame
    from dfbuffer._typing import SupportsInterchange as SupportsInterchange

__all__ = [
    "ArrowExport",
    "Buffer",
    "CategoricalCodes",
    "ColumnNullType",
    "ColumnSchema",
    "CopyError",
    "DeviceType",
    "DtypeKind",
    "InterchangeView",
    "NativeFormat",
    "Schema",
    "__version__",
    "buffer_to_ndarray",
    "column_to_ndarray",
    "from_dataframe",
    "get_include",
    "iter_batches",
    "iter_matrices",
    "to_arrow",
    "schema",
    "to_interchange",
    "to_matrix",
]

# submodules that `import dfbuffer` does not load: reached as attributes on first use
_LAZY_SUBMODULES = ("testing",)
# classes of modules that `import dfbuffer` does not load, likewise
_LAZY_CLASSES = {
    "ArrowExport": "dfbuffer._to_arrow",
    "InterchangeView": "dfbuffer._arrow_interchange",
}


def __dir__() -> list[str]:
    return sorted([*__all__, *_LAZY_SUBMODULES])


if not TYPE_CHECKING:  # for type checkers, `testing` is the import above

    def __getattr__(name: str) -> object:
        import importlib

        if name in _LAZY_SUBMODULES:
            return importlib.import_module(f"{__name__}.{name}")
        if name in _LAZY_CLASSES:
            return getattr(importlib.import_module(_LAZY_CLASSES[name]), name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_include() -> str:
    """Return the include directory of dfbuffer's public C API.

    It holds one header, ``dfbuffer/dfbuffer.h``: pass this directory as an include path
    when compiling a C, C++ or Cython extension that uses the C API (import it with
    ``DfBuffer_ImportAPI()``; Cython: ``from dfbuffer cimport capi``). See docs/c-api.md.

    Returns
    -------
    str
        The absolute path of the directory.

    Raises
    ------
    Nothing.

    Examples
    --------
    >>> import os
    >>> import dfbuffer
    >>> os.path.isfile(os.path.join(dfbuffer.get_include(), "dfbuffer", "dfbuffer.h"))
    True
    """
    import os

    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def to_interchange(
    obj: "ArrowExportable | Mapping[str, object]",
    *,
    allow_copy: bool = True,
    columns: "Sequence[str] | None" = None,
    on_unsupported: "Literal['raise', 'skip']" = "raise",
) -> "InterchangeView":
    """Return a DataFrame interchange protocol object over an Arrow PyCapsule producer.

    ``obj`` is anything with ``__arrow_c_stream__`` or ``__arrow_c_array__`` (a pyarrow
    Table or RecordBatch, a polars DataFrame, a pandas 3 DataFrame, a nanoarrow stream), or
    their device counterparts ``__arrow_c_device_stream__`` / ``__arrow_c_device_array__``
    (data on a non-CPU device gives device buffers, never read on the host), a pandas
    frame, an object with only ``__dataframe__`` or an interchange DataFrame (its columns
    read as :func:`to_arrow` reads them), or a mapping.
    The result has ``__dataframe__`` and implements every method of the protocol; its
    buffers are :class:`Buffer` objects that keep the Arrow memory alive. Consumers that
    only speak ``__dataframe__`` (``pandas.api.interchange.from_dataframe``,
    ``pyarrow.interchange.from_dataframe``, plotting libraries) keep working with
    producers that dropped the protocol.

    Parameters
    ----------
    obj : Arrow PyCapsule producer or mapping
        A table, record batch or stream (or their device counterparts), or a mapping of
        column names to 1-D arrays or :class:`Buffer` objects (read through
        :func:`to_arrow`, zero-copy).
    allow_copy : bool, optional
        False raises CopyError where the protocol needs a copy (default True).
    columns : sequence of str, optional
        Only these columns, in this order (KeyError for a name no column has), as
        ``from_dataframe(..., columns=...)`` selects them.
    on_unsupported : {"raise", "skip"}, optional
        ``"raise"`` (default): a column whose Arrow type the protocol has no dtype for
        (binary, decimals, intervals, nested types, run-end encoded values other than
        fixed-width ones) is kept and raises NotImplementedError naming the column and its
        Arrow format when used. ``"skip"`` leaves such columns out (also dictionaries of
        such values), as ``from_dataframe(..., on_unsupported="skip")`` does.

    Returns
    -------
    InterchangeView
        An interchange DataFrame (``__dataframe__``, ``column_names()``,
        ``get_column(i)``, ...), itself an Arrow PyCapsule producer.

    Raises
    ------
    TypeError
        ``obj`` speaks no Arrow PyCapsule interface and is no pandas DataFrame or
        mapping of arrays (a list of rows, an array, None: the message says what to
        pass); a mapping value that is no array (a list: pass ``np.asarray``).
    ValueError
        A mapping value that is not 1-D (naming the column and its shape), columns of
        different lengths, or a pandas frame with duplicate column names.

    Examples
    --------
    >>> import pandas as pd
    >>> import polars as pl
    >>> import dfbuffer
    >>> ix = dfbuffer.to_interchange(pl.DataFrame({"x": [1, 2], "s": ["a", None]}))
    >>> list(ix.column_names()), ix.get_column_by_name("s").null_count
    (['x', 's'], 1)
    >>> pd.api.interchange.from_dataframe(ix)["x"].tolist()
    [1, 2]
    """
    from dfbuffer._frame_nodes import check_bool, check_choice
    from dfbuffer._to_arrow import INTERCHANGE

    check_choice("to_interchange", "on_unsupported", on_unsupported, ("raise", "skip"))
    allow_copy = check_bool("to_interchange", "allow_copy", allow_copy)
    # the frame-source table decides how obj is read: its row's interchange view
    skip = on_unsupported == "skip"
    ix = INTERCHANGE(obj, "to_interchange", columns, skip, allow_copy)
    return ix._servable() if skip else ix


def to_arrow(
    obj: object,
    *args: "Sequence[str] | None",
    columns: "Sequence[str] | None" = None,
    on_unsupported: "Literal['raise', 'skip']" = "raise",
) -> "ArrowExport":
    """Return an Arrow PyCapsule producer (``__arrow_c_stream__``, ``__arrow_c_schema__``)
    over the columns of any producer dfbuffer reads, zero-copy wherever the layout allows.

    ``obj`` is an Arrow PyCapsule producer, an object with ``__dataframe__``, an
    interchange DataFrame (pandas' ones are read through the frame behind them) or a
    mapping of column names to 1-D arrays or :class:`Buffer` objects. pyarrow is not
    imported; ``pyarrow.table``, ``polars.DataFrame``, DuckDB and narwhals read the result.

    Parameters
    ----------
    obj : dataframe, interchange DataFrame or mapping
        The columns to export.
    columns : sequence of str, optional, keyword-only
        The columns to take, in this order (default: all). Giving it positionally is
        deprecated (DeprecationWarning): every argument after the first is keyword-only.
    on_unsupported : {"raise", "skip"}, optional
        ``"raise"`` (default): a column of an interchange source whose type has no Arrow
        format here raises NotImplementedError naming it; ``"skip"`` leaves it out (an
        Arrow producer's formats are all handed out, node for node).

    Returns
    -------
    ArrowExport
        An object with ``__arrow_c_stream__`` and ``__arrow_c_schema__``; the release
        callbacks of what it exports keep the source memory alive.

    Raises
    ------
    TypeError
        ``obj`` is nothing dfbuffer reads.
    KeyError
        A name in ``columns`` is not in ``obj``.

    Examples
    --------
    >>> import numpy as np
    >>> import pyarrow as pa
    >>> import dfbuffer
    >>> x = np.arange(3.0)
    >>> t = pa.table(dfbuffer.to_arrow({"x": x}))
    >>> t.column("x").to_pylist()
    [0.0, 1.0, 2.0]
    """
    from dfbuffer._to_arrow import to_arrow as _to_arrow

    if args:
        if len(args) > 1 or columns is not None:
            raise TypeError("to_arrow() takes one positional argument (and columns=)")
        import warnings

        warnings.warn(
            "to_arrow(obj, columns): columns given positionally is deprecated, "
            "use to_arrow(obj, columns=...)",
            DeprecationWarning,
            stacklevel=2,
        )
        columns = args[0]
    return _to_arrow(obj, columns, on_unsupported)
