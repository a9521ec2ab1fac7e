"""dfbuffer.to_arrow: any producer dfbuffer reads as an Arrow PyCapsule producer.

The top of the Arrow-outward Python.  The frame-source table
(src/_interchange/readers/frame_source.c, ``_frame_source``) decides how a frame is
read; its columns become Arrow nodes in ``_frame_nodes`` (pandas frames, Arrow
producers, interchange objects, mappings) or ``_arrow_interchange`` (the interchange
view's own nodes), and :class:`ArrowExport` hands them out.  pyarrow is never imported.
See docs/design.md, "to_arrow".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dfbuffer._arrow_interchange import InterchangeView, frame_array, to_interchange, view_nodes
from dfbuffer._frame_nodes import (
    ArrowNodes,
    _from_arrow,
    _from_interchange,
    _from_mapping,
    _from_pandas,
    check_choice,
    not_a_frame,
)
from dfbuffer._interchange import _frame_source
from dfbuffer._schema import _type_string, schema

__all__ = ["ArrowExport", "to_arrow"]


class ArrowExport(ArrowNodes):
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

    __slots__ = ()

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> Any:
        """The DataFrame interchange view of these columns (for consumers that
        speak only ``__dataframe__``: plotly, seaborn): ``to_interchange(self)``."""
        return to_interchange(self, allow_copy=allow_copy)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """A 2-D (rows, columns) copy, :func:`dfbuffer.to_matrix` of the columns
        (numeric ones only; for consumers that call ``numpy.asarray``: scikit-learn).
        NumPy 2's ``copy``: False raises :class:`dfbuffer.CopyError`."""
        return frame_array(self, dtype, copy)

    def __repr__(self) -> str:
        try:
            cols = ", ".join(f"{c.name}: {_type_string(c)}" for c in schema(self).columns)
        except Exception:  # noqa: BLE001 - a repr never raises
            cols = ", ".join(f"{f[0]}: {f[1]}" for f in self._fields)
        return (f"<dfbuffer.ArrowExport {self.num_rows} rows, "
                f"{len(self._batches)} batches; {cols}>")


def _export(nodes: ArrowNodes) -> ArrowExport:
    """``nodes`` as the ArrowExport that to_arrow returns."""
    return ArrowExport(nodes._fields, nodes._batches)


def _unique_names(func: str, frame: Any) -> None:
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


def to_arrow(obj: Any, columns: Sequence[str] | None = None,
             on_unsupported: str = "raise", func: str = "to_arrow") -> ArrowExport:
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
    producer's formats are all handed out).  ``func`` names the public function
    called in errors (``to_matrix`` reads a mapping through here).
    """
    check_choice(func, "on_unsupported", on_unsupported, ("raise", "skip"))
    # the frame-source table (src/_interchange/readers/frame_source.c) decides how obj is
    # read; `frame` is what it held, read once (a pandas frame over its manager read once,
    # a mapping's items copied in one pass), and is all that is read from here on
    kind, frame, _ = _frame_source(obj)
    if kind == "pandas":
        _unique_names(func, frame)
        return _export(_from_pandas(frame, columns, skip=on_unsupported == "skip"))
    if kind == "arrow":
        # dfbuffer's own producers are read from what they hold
        if isinstance(frame, ArrowExport) and columns is None:
            return frame
        if isinstance(frame, ArrowNodes):
            return _export(frame._selected(columns))
        if isinstance(frame, InterchangeView):
            return _export(view_nodes(frame, columns))
        return _export(_from_arrow(frame, columns))
    if kind == "mapping":
        return _export(_from_mapping(frame, columns, func))
    if kind == "interchange":
        return _export(_from_interchange(frame, columns, on_unsupported == "skip"))
    raise not_a_frame(func, obj)
