"""dfbuffer.to_arrow: any producer dfbuffer reads as an Arrow PyCapsule producer.

The top of the Arrow-outward Python.  The frame-source table
(src/_interchange/readers/frame_source.c) decides how a frame is read; its rows'
operations here (:data:`NODES`, :data:`INTERCHANGE`, tables of ``dfbuffer._sources``)
give its columns as Arrow nodes from ``_frame_nodes`` (pandas frames, Arrow producers,
interchange objects, mappings) or ``_arrow_interchange`` (the interchange view's own
nodes), and :class:`ArrowExport` hands them out.  pyarrow is never imported.
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
    _select,
    check_choice,
    unique_names,
)
from dfbuffer._schema import _type_string, schema
from dfbuffer._sources import Source, operation, refuse

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


# -- the rows' Arrow nodes: (source, columns, skip, allow_copy) -> ArrowNodes --------

def _pandas_nodes(src: Source, columns: Sequence[str] | None, skip: bool,
                  allow_copy: bool) -> ArrowNodes:
    # a pandas frame (any index, every dtype): only the columns asked for are
    # exported, and with skip those Arrow cannot hold (object, complex) are left out
    unique_names(src.func, src.frame)
    return _from_pandas(src.frame, columns, skip=skip, allow_copy=allow_copy)


def _arrow_nodes(src: Source, columns: Sequence[str] | None, skip: bool,
                 allow_copy: bool) -> ArrowNodes:
    frame = src.frame
    # dfbuffer's own producers are read from what they hold (an ArrowExport, all
    # its columns: itself)
    if isinstance(frame, ArrowNodes):
        return frame._selected(columns)
    if isinstance(frame, InterchangeView):
        return view_nodes(frame, columns)
    return _from_arrow(frame, columns)


def _interchange_nodes(src: Source, columns: Sequence[str] | None, skip: bool,
                       allow_copy: bool) -> ArrowNodes:
    # a __dataframe__-only producer (modin, any interchange object)
    return _from_interchange(src.frame, columns, skip)


def _mapping_nodes(src: Source, columns: Sequence[str] | None, skip: bool,
                   allow_copy: bool) -> ArrowNodes:
    return _from_mapping(src.frame, columns, src.func, allow_copy)


#: Each row's columns as Arrow nodes (to_arrow; to_interchange of all but Arrow).
NODES = operation("nodes", pandas=_pandas_nodes, arrow=_arrow_nodes,
                  interchange=_interchange_nodes, mapping=_mapping_nodes, schema=refuse)


# -- the rows' interchange views: (source, columns, skip, allow_copy) -> view ------

def _view_of(nodes_of: Any) -> Any:
    """The row function that gives the view of ``nodes_of``'s Arrow nodes (only the
    columns selected are exported)."""
    def view(src: Source, columns: Sequence[str] | None, skip: bool,
             allow_copy: bool) -> InterchangeView:
        return to_interchange(nodes_of(src, columns, skip, allow_copy), allow_copy=allow_copy)
    return view


def _arrow_view(src: Source, columns: Sequence[str] | None, skip: bool,
                allow_copy: bool) -> InterchangeView:
    """An Arrow producer's own view (device data stays device buffers), then
    ``columns``."""
    ix = to_interchange(src.frame, allow_copy=allow_copy)
    if columns is not None:
        ix = ix.select_columns(_select(list(ix.column_names()), columns))
    return ix


def _mapping_view(src: Source, columns: Sequence[str] | None, skip: bool,
                  allow_copy: bool) -> InterchangeView:
    """A mapping's view: every column exported (each checked), then ``columns``."""
    nodes = _from_mapping(src.frame, None, src.func, allow_copy)
    return _arrow_view(src._replace(frame=nodes), columns, skip, allow_copy)


#: Each row's DataFrame interchange view (to_interchange).
INTERCHANGE = operation("interchange", pandas=_view_of(_pandas_nodes), arrow=_arrow_view,
                        interchange=_view_of(_interchange_nodes), mapping=_mapping_view,
                        schema=refuse)


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
    # read; its row's frame is read once (a pandas frame over its manager read once, a
    # mapping's items copied in one pass) and is all that is read from here on
    nodes = NODES(obj, func, columns, on_unsupported == "skip", True)
    return nodes if isinstance(nodes, ArrowExport) else _export(nodes)
