"""dfbuffer.schema: what each column is, read without converting any data.

NumPy cannot hold everything a dataframe column says about itself: the time
zone of a timestamp column, the ordering of a categorical, how nulls are
represented.  ``schema(obj)`` reads those from the producer's interchange
objects (``dtype``, ``describe_null``, ``describe_categorical``,
``metadata``) or from its Arrow schema (``__arrow_c_schema__``, or the
schema of ``__arrow_c_stream__`` / ``__arrow_c_array__``), so a consumer can
rebuild what the converters give back as plain NumPy.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, SupportsIndex, overload

import numpy as np

from dfbuffer._frame_nodes import table_format
from dfbuffer._interchange import (
    _arrow_format,
    _arrow_schema,
    _arrow_type,
    _ix_frame,
    _select_columns,
)
from dfbuffer._sources import (
    Source,
    operation,
    pandas_array_frame,
    pandas_series_name,
    refuse,
)

if TYPE_CHECKING:
    from dfbuffer._typing import DataFrameLike

__all__ = ["ColumnSchema", "Schema", "schema"]

# The logical types whose schema reports a value width / a time unit.
_WITH_BITS = frozenset({"int", "uint", "float", "bool", "string", "datetime", "duration"})
_WITH_UNIT = frozenset({"date", "datetime", "duration", "time"})
# the unit of each interval type of the type table, by its row name
_INTERVAL_UNITS = {"interval (months)": "months", "interval (days, ms)": "day_time",
                   "interval (months, days, ns)": "month_day_nano"}
_NULLS = {0: "non-nullable", 1: "nan", 2: "sentinel", 3: "bitmask", 4: "bytemask"}


@functools.lru_cache(maxsize=256)
def _interchange_format(fmt: str) -> str:
    """The format string the interchange protocol reports a column of Arrow format
    ``fmt`` under, from the type table (string views are decoded to large strings,
    "U"); ``fmt`` itself for a string outside the specification."""
    t = _arrow_type(fmt)
    return fmt if t is None else str(t["interchange_format"])


def _logical(fmt: str) -> str:
    """The logical type of Arrow format ``fmt`` in the C core's type table
    ("int", "string", "struct", ...; "other" for an unknown string)."""
    t = _arrow_type(fmt)
    return "other" if t is None else str(t["logical"])


@dataclass(frozen=True)
class ColumnSchema:
    """One column as its producer describes it.

    An item of a :class:`Schema`; frozen.

    Parameters
    ----------
    name : str
        The column name.
    type : str
        The logical type: ``"int"``, ``"uint"``, ``"float"``, ``"bool"``,
        ``"string"``, ``"binary"``, ``"datetime"`` (a timestamp), ``"date"``,
        ``"time"``, ``"duration"``, ``"decimal"``, ``"categorical"``,
        ``"null"``, ``"interval"``, ``"run_end"`` (run-end encoded),
        ``"list"``, ``"struct"``, ``"map"``, ``"union"`` or ``"other"``.
    format : str
        The Arrow C format string of the values.
    bits : int or None
        The width of the values (of the codes, for a categorical).
    unit : str or None
        ``"s" "ms" "us" "ns"`` for datetimes, durations and times, ``"D"``
        or ``"ms"`` for dates; ``"months"``, ``"day_time"`` or
        ``"month_day_nano"`` for intervals.
    tz : str or None
        A timestamp's time zone.
    ordered : bool or None
        Whether a categorical's categories are ordered.
    categories : ColumnSchema or None
        The schema of a categorical's categories.
    nullable : bool
        False when the producer says the column has no nulls.
    null_representation : str
        ``"non-nullable"``, ``"nan"``, ``"sentinel"``, ``"bitmask"`` or
        ``"bytemask"``.
    null_value : int or None
        The sentinel, or the mask value that marks a null.
    null_count : int or None
        The producer's count; None when it gives none (Arrow schemas carry
        none).
    metadata : dict
        The column's metadata.
    children : tuple of ColumnSchema
        The nested types' parts: a list's value type, a struct's fields, a
        map's entries struct, a union's members; ``()`` for other types.
    list_size : int or None
        A fixed-size list's number of values per row.
    union_mode : str or None
        ``"dense"`` or ``"sparse"`` for a union.
    type_ids : tuple of int or None
        A union's type ids, one per member.
    extension_name : str or None
        An Arrow extension type's name (``ARROW:extension:name``), e.g.
        ``"arrow.fixed_shape_tensor"``.
    extension_metadata : Any
        Its ``ARROW:extension:metadata``: parsed JSON where it is JSON,
        else the string; None without an extension.
    precision, scale : int or None
        A decimal's digits and digits after the point (``bits`` is its
        width: 32, 64, 128 or 256).
    byte_width : int or None
        The bytes of one fixed-size binary value.
    values : ColumnSchema or None
        The values of a run-end encoded column (``bits``: its run ends').

    Examples
    --------
    >>> import pandas as pd
    >>> import dfbuffer
    >>> ts = pd.to_datetime(["2020-01-01"]).tz_localize("Asia/Kathmandu").as_unit("us")
    >>> t = pd.DataFrame({"t": ts})
    >>> col = dfbuffer.schema(t)["t"]
    >>> col.type, col.unit, col.tz
    ('datetime', 'us', 'Asia/Kathmandu')
    """

    name: str
    type: str
    format: str
    bits: int | None = None
    unit: str | None = None
    tz: str | None = None
    ordered: bool | None = None
    categories: ColumnSchema | None = None
    nullable: bool = True
    null_representation: str = "bitmask"
    null_value: int | None = None
    null_count: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    children: tuple[ColumnSchema, ...] = ()
    list_size: int | None = None
    union_mode: str | None = None
    type_ids: tuple[int, ...] | None = None
    extension_name: str | None = None
    extension_metadata: Any = None
    precision: int | None = None
    scale: int | None = None
    byte_width: int | None = None
    values: ColumnSchema | None = None

    def __repr__(self) -> str:
        """One line: the name, the type as :class:`Schema` prints it, the null count when
        known, e.g. ``ColumnSchema('t': datetime[us, tz=UTC], nulls=0)``; every field is
        an attribute."""
        count = "" if self.null_count is None else f", nulls={self.null_count}"
        return f"ColumnSchema({self.name!r}: {_type_string(self)}{count})"


class _Names(list[str]):
    """The column names: a list, also callable as the method ``names()`` once was."""

    __slots__ = ()

    def __call__(self) -> list[str]:
        warnings.warn(
            "Schema.names is a property (as in pyarrow); call-style names() is deprecated",
            DeprecationWarning,
            stacklevel=2,
        )
        return list(self)


@dataclass(frozen=True, repr=False)
class Schema:
    """The columns of a dataframe, as :func:`schema` reads them.

    It behaves like ``pyarrow.Schema``: iterating gives the columns in order,
    ``len()`` their number, ``schema[i]`` the column at position ``i``
    (negative counts from the end) and ``schema[name]`` the column of that
    name; ``names`` is the list of column names.

    Parameters
    ----------
    columns : tuple of ColumnSchema
        The columns, in the order the converters return them.
    metadata : dict
        The producer's metadata (pandas' Arrow metadata is parsed from JSON
        under ``"pandas"``).
    source : str
        Where the schema was read from: ``"arrow"`` or ``"interchange"``.
    index_columns : tuple of str, optional
        The names of pandas index columns that the converters leave out.

    Raises
    ------
    IndexError
        ``schema[i]`` with ``i`` out of range.
    KeyError
        ``schema[name]`` for a name no column has, or several columns share.

    Examples
    --------
    >>> import pyarrow as pa
    >>> import dfbuffer
    >>> sch = dfbuffer.schema(pa.table({"x": [1, 2], "s": ["a", None]}))
    >>> sch
    dfbuffer.Schema (2 columns, from arrow)
    x: int64
    s: string
    >>> sch.names
    ['x', 's']
    >>> sch[0] is sch["x"], sch[-1].type, len(sch)
    (True, 'string', 2)
    """

    columns: tuple[ColumnSchema, ...]
    metadata: dict[str, Any]
    source: str
    index_columns: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        """The column names, in order (a new list)."""
        return _Names(c.name for c in self.columns)

    @overload
    def __getitem__(self, key: str) -> ColumnSchema: ...
    @overload
    def __getitem__(self, key: SupportsIndex) -> ColumnSchema: ...
    def __getitem__(self, key: str | SupportsIndex) -> ColumnSchema:
        if isinstance(key, str):
            found = [c for c in self.columns if c.name == key]
            if len(found) == 1:
                return found[0]
            if not found:
                raise KeyError(f"column {key!r} is not in the schema")
            raise KeyError(f"column name {key!r} is ambiguous: {len(found)} columns have it")
        try:
            i = operator.index(key)
        except TypeError:
            raise TypeError(
                f"Schema indices must be str or int, not {type(key).__name__}"
            ) from None
        n = len(self.columns)
        if not -n <= i < n:
            raise IndexError(f"column index {i} is out of range for {n} columns")
        return self.columns[i]

    def __iter__(self) -> Iterator[ColumnSchema]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def __repr__(self) -> str:
        head = f"dfbuffer.Schema ({len(self.columns)} column"
        head += "" if len(self.columns) == 1 else "s"
        head += f", from {self.source})"
        lines = [head]
        lines += [f"{c.name or repr(c.name)}: {_type_string(c)}" for c in self.columns]
        if self.index_columns:
            lines.append("index columns (left out): " + ", ".join(self.index_columns))
        if self.metadata:
            lines.append("metadata keys: " + ", ".join(map(str, self.metadata)))
        return "\n".join(lines)


def _type_string(c: ColumnSchema, nulls: bool = True) -> str:
    """One column's type with its parameters, as pyarrow prints types."""
    t = c.type
    if t in ("int", "uint", "float") and c.bits is not None:
        s = f"{t}{c.bits}"
    elif t == "categorical":
        params = [f"int{c.bits}" if c.bits is not None else "codes"]
        if c.ordered:
            params.append("ordered")
        if c.categories is not None:
            params.append("categories=" + _type_string(c.categories, nulls=False))
        s = f"categorical[{', '.join(params)}]"
    elif t in ("datetime", "duration", "date", "time"):
        params = [c.unit or "?"]
        if c.tz is not None:
            params.append(f"tz={c.tz}")
        s = f"{t}[{', '.join(params)}]"
    elif t == "decimal":
        s = f"decimal{c.bits}({c.precision}, {c.scale})"
    elif t == "binary" and c.byte_width is not None:
        s = f"binary[{c.byte_width}]"
    elif t == "interval":
        s = f"interval[{c.unit}]"
    elif t == "run_end" and c.values is not None:
        s = f"run_end[int{c.bits}, {_type_string(c.values, nulls=False)}]"
    elif t == "other":
        s = f"other[{c.format}]"
    elif t == "object" and _is_period(c):
        s = f"object[period[{c.unit}]]"  # pandas' Period, e.g. period[M]
    elif t == "object" and c.extension_name == "pandas.interval":
        s = "object[interval]"  # pandas' Interval bounds, made Interval objects
    elif c.children:
        s = _nested_type_string(c)
    else:
        s = t
    if c.extension_name is not None:
        s = f"{c.extension_name}<{s}>"
    if not nulls:
        return s
    if not c.nullable:
        s += " not null"
    elif c.null_representation not in ("bitmask", "non-nullable"):
        s += f" (nulls: {c.null_representation})"
    return s


def _nested_type_string(c: ColumnSchema) -> str:
    """A nested type with its parts: ``list<int64>``, ``list<float64>[3]``,
    ``struct<a: int64, b: string>``, ``union[sparse]<0: int64, ...>``."""
    if c.type == "struct" or c.type == "union":
        parts = ", ".join(f"{k.name}: {_type_string(k, nulls=False)}" for k in c.children)
        mode = f"[{c.union_mode}]" if c.union_mode else ""
        return f"{c.type}{mode}<{parts}>"
    if c.type == "map" and c.children and len(c.children[0].children) == 2:
        k, v = c.children[0].children
        return f"map<{_type_string(k, nulls=False)}, {_type_string(v, nulls=False)}>"
    inner = _type_string(c.children[0], nulls=False)
    size = f"[{c.list_size}]" if c.list_size is not None else ""
    return f"{c.type}<{inner}>{size}"


def _nested_fields(node: dict[str, Any], md: dict[str, Any]) -> dict[str, Any]:
    """The nested-type fields of a column (children, list size, union mode and
    ids, extension name and metadata) from its schema node."""
    out: dict[str, Any] = {}
    if node["children"]:
        out["children"] = tuple(_arrow_column(ch) for ch in node["children"])
    t = _arrow_type(node["format"])
    if t is not None and t["layout"] == "fixed_list":
        out["list_size"] = t["size"]
    if t is not None and t["layout"] in ("dense_union", "sparse_union"):
        out["union_mode"] = t["layout"].split("_")[0]
        ids = t["type_ids"]
        out["type_ids"] = tuple(ids) if ids else tuple(range(len(node["children"])))
    name = md.get("ARROW:extension:name")
    if name is not None:
        out["extension_name"] = name
        meta = md.get("ARROW:extension:metadata")
        try:
            out["extension_metadata"] = json.loads(meta) if meta else meta
        except ValueError:
            out["extension_metadata"] = meta
    return out


def _format_type(fmt: str) -> dict[str, Any]:
    """Logical type fields of Arrow format string ``fmt``, from the type
    table of the C core (``_arrow_type``)."""
    t = _arrow_type(fmt)
    if t is None:
        return {"type": "other"}
    logical = t["logical"]
    out: dict[str, Any] = {"type": logical}
    if logical in _WITH_BITS:
        out["bits"] = t["interchange"][1]
    if logical in _WITH_UNIT:
        out["unit"] = t["unit"]
    if logical == "datetime":
        out["tz"] = t["tz"]
    if logical == "decimal":
        out.update(bits=t["bits"], precision=t["precision"], scale=t["scale"])
    if t["type"] == "fixed-size binary":
        out["byte_width"] = t["size"]
    if logical == "interval":
        out["unit"] = _INTERVAL_UNITS[t["type"]]
    return out


def _parse_metadata(md: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = dict(md)
    if "pandas" in out:
        try:
            out["pandas"] = json.loads(out["pandas"])
        except ValueError:
            pass
    return out


def _arrow_column(node: dict[str, Any]) -> ColumnSchema:
    nullable = bool(node["nullable"])
    common: dict[str, Any] = {
        "name": node["name"] or "",
        "nullable": nullable,
        "null_representation": "bitmask" if nullable else "non-nullable",
        "null_value": 0 if nullable else None,
        "metadata": _parse_metadata(node["metadata"]),
    }
    d = node["dictionary"]
    if d is not None:
        cats = _arrow_column(dict(d, name=""))
        bits = _format_type(node["format"]).get("bits")
        return ColumnSchema(
            type="categorical",
            format=node["format"],
            bits=bits,
            ordered=bool(node["dictionary_ordered"]),
            categories=cats,
            **common,
        )
    kw = _format_type(node["format"])
    if kw["type"] == "run_end" and len(node["children"] or ()) == 2:
        ends, values = node["children"]
        kw["bits"] = _format_type(ends["format"]).get("bits")
        kw["values"] = _arrow_column(values)
    ext = common["metadata"].get("ARROW:extension:name")
    if ext == "arrow.bool8" and kw == {"type": "int", "bits": 8}:
        kw = {"type": "bool", "bits": 8}  # converts as a bool view
    if ext == "pandas.period" and kw == {"type": "int", "bits": 64}:
        # pandas' Period ordinals, converted to Period objects (period="object"), as
        # a pandas Period column is described: the frequency as unit
        freq = _nested_fields(node, common["metadata"]).get("extension_metadata")
        kw = {"type": "object"}
        if isinstance(freq, dict) and isinstance(freq.get("freq"), str):
            kw["unit"] = freq["freq"]
    if ext == "pandas.interval" and kw == {"type": "struct"} and [
            c["name"] for c in node["children"] or ()] == ["left", "right"]:
        # pandas' Interval bounds, converted to Interval objects, as a pandas
        # Interval column is described
        kw = {"type": "object"}
    return ColumnSchema(
        format=node["format"],
        **kw,
        **_nested_fields(node, common["metadata"]),
        **common,
    )


def _arrow_schema_of(desc: dict[str, Any]) -> Schema:
    md = _parse_metadata(desc["metadata"])
    if _logical(desc["format"]) != "struct":  # one column (an Array, a Series)
        return Schema((_arrow_column(desc),), md, "arrow")
    skip = set(desc.get("index_columns", ()))
    cols = tuple(
        _arrow_column(ch) for i, ch in enumerate(desc["children"]) if i not in skip
    )
    idx = tuple(desc["children"][i]["name"] for i in sorted(skip))
    return Schema(cols, md, "arrow", idx)


def _series_named(obj: Any, sch: Schema) -> Schema:
    """A subclass of pandas Series (the frame-source table reads an exact one as
    its one-column frame) exports its values through Arrow without its name: the
    one column takes ``str(obj.name)`` (unless None), as from_dataframe keys it."""
    if len(sch.columns) != 1 or sch.columns[0].name:
        return sch
    name = pandas_series_name(obj)
    if name is None:
        return sch
    col = dataclasses.replace(sch.columns[0], name=name)
    return dataclasses.replace(sch, columns=(col,))


def _ix_column(name: str, col: Any, depth: int = 0) -> ColumnSchema:
    kind, bits, fmt, _ = col.dtype
    kind = int(kind)
    null_kind, null_value = col.describe_null
    null_kind = int(null_kind)
    try:
        nc = col.null_count
    except Exception:  # the spec lets producers not know it
        nc = None
    md = col.metadata
    common: dict[str, Any] = {
        "name": name,
        "nullable": null_kind != 0,
        "null_representation": _NULLS.get(null_kind, str(null_kind)),
        "null_value": None if null_kind in (0, 1) else int(null_value),
        "null_count": nc if isinstance(nc, int) else None,
        "metadata": dict(md) if isinstance(md, dict) else {},
    }
    if kind == 23:  # CATEGORICAL
        desc = col.describe_categorical
        cats = desc.get("categories")
        return ColumnSchema(
            type="categorical",
            format=fmt,
            bits=int(bits),
            ordered=bool(desc.get("is_ordered")),
            categories=_ix_column("", cats, depth + 1)
            if cats is not None and depth == 0
            else None,
            **common,
        )
    info = _format_type(fmt)
    if kind in (0, 1, 2, 20) or "bits" not in info:
        info["bits"] = int(bits)
    if kind == 20 and int(bits) == 8:
        info["type"] = "bool"
    return ColumnSchema(format=fmt, **info, **common)


def _flatten(c: ColumnSchema) -> list[ColumnSchema]:
    """The leaves of struct column ``c`` named ``parent.child`` (a struct that
    may be null makes every leaf below it nullable), or ``[c]``."""
    return [leaf for leaf, _ in _flatten_below(c, "", False, ())]


def _flatten_below(
    c: ColumnSchema, prefix: str, nullable: bool, above: tuple[str, ...]
) -> list[tuple[ColumnSchema, tuple[str, ...]]]:
    """``_flatten`` of ``c`` (named ``prefix + c.name``), each leaf with the
    names of the structs above it (``above`` and the ones opened here)."""
    name = prefix + c.name
    nullable = nullable or c.nullable
    if c.type != "struct" or _logical(c.format) != "struct":
        if not nullable or c.nullable:
            return [(dataclasses.replace(c, name=name), above)]
        leaf = dataclasses.replace(
            c, name=name, nullable=True, null_representation="bitmask", null_value=0
        )
        return [(leaf, above)]
    above = (*above, name)
    return [x for k in c.children for x in _flatten_below(k, name + ".", nullable, above)]


def _select_flat(
    columns: tuple[ColumnSchema, ...], names: Sequence[str]
) -> tuple[ColumnSchema, ...]:
    """``columns=`` over the leaves of ``columns`` (not yet flattened), as the
    converters select them: a name gives the column or leaf of that name, or
    every leaf below the struct of that name."""
    entries = [x for c in columns for x in _flatten_below(c, "", False, ())]
    out: list[ColumnSchema] = []
    for name in names:
        key = name if isinstance(name, str) else str(name)  # as every function matches
        exact = [leaf for leaf, _ in entries if leaf.name == key]
        below = [leaf for leaf, above in entries if key in above]
        if len(exact) > 1 or (exact and below):
            what = "several columns have it" if len(exact) > 1 else "a column and a struct have it"
            raise ValueError(f"column name {key!r} is ambiguous with structs='flatten': {what}")
        if not exact and not below:
            raise KeyError(f"column {key!r} is not in the frame")
        out.extend(exact or below)
    return tuple(out)


def schema(
    obj: DataFrameLike | Mapping[str, object],
    *,
    structs: str = "object",
    columns: Sequence[str] | None = None,
    on_unsupported: str = "raise",
) -> Schema:
    """Return the :class:`Schema` of ``obj`` without converting its data.

    Parameters
    ----------
    obj : object
        What :func:`dfbuffer.from_dataframe` accepts: an Arrow PyCapsule
        producer (read from its Arrow schema; the columns that pandas'
        metadata marks as the index are left out, as the converters leave
        them out), a pandas DataFrame or pandas' own interchange object
        (``df.__dataframe__()``: described as the frame behind it, the same
        answer as for the frame), an object with ``__dataframe__`` or an
        interchange DataFrame (read from its column objects' ``dtype``,
        ``describe_null``, ``null_count``, ``describe_categorical`` and
        ``metadata``; no buffer is touched), or a mapping of column names
        to 1-D arrays (read as :func:`dfbuffer.to_arrow` exports it).
    structs : {'object', 'flatten'}, optional
        ``'flatten'`` lists the leaves of Arrow struct columns, named
        ``parent.child``, as ``from_dataframe(..., structs='flatten')``
        returns them.
    columns : sequence of str, optional
        Only these columns, in this order (KeyError for a name no column
        has), as ``from_dataframe(..., columns=...)`` selects them; with
        ``structs='flatten'`` a leaf (``'s.a'``) or a struct (``'s'``: all
        its leaves), ValueError for a name both a column and a leaf have.
        Columns not selected are not described (nor can they fail).
    on_unsupported : {'raise', 'skip'}, optional
        ``'raise'`` (the default): a column that cannot be described (its
        producer, or pandas' Arrow export of it, fails) raises
        NotImplementedError naming it, the original error as
        ``__cause__``; a column whose type is described but that
        ``from_dataframe`` refuses (an Arrow format outside the type table,
        a dictionary of run-end encoded or dictionary values) is still
        listed, so its type can be seen.  ``'skip'`` leaves out both: the
        columns listed are those ``from_dataframe(..., on_unsupported=
        'skip')`` returns.

    Returns
    -------
    Schema
        The columns that ``from_dataframe`` returns, in the same order.

    Raises
    ------
    TypeError
        ``obj`` is none of the above.
    ValueError
        ``structs`` is neither ``'object'`` nor ``'flatten'``, or
        ``on_unsupported`` neither ``'raise'`` nor ``'skip'``.
    NotImplementedError
        With ``on_unsupported='raise'``, a selected column that cannot be
        described, named.

    Examples
    --------
    >>> import pandas as pd
    >>> import dfbuffer
    >>> df = pd.DataFrame({"c": pd.Categorical(["a", "b"], ordered=True)})
    >>> sch = dfbuffer.schema(df)
    >>> sch["c"].type, sch["c"].ordered, sch["c"].categories.type
    ('categorical', True, 'string')
    >>> bad = pd.DataFrame({"x": [1.0, 2.0], "m": pd.Categorical(["a", 1])})
    >>> dfbuffer.schema(bad, on_unsupported="skip").names
    ['x']
    """
    from dfbuffer._frame_nodes import check_choice  # noqa: PLC0415

    check_choice("schema", "on_unsupported", on_unsupported, ("raise", "skip"))
    check_choice("schema", "structs", structs, ("object", "flatten"))
    if isinstance(columns, str | bytes) or not (columns is None
                                                 or hasattr(type(columns), "__iter__")):
        _select_columns([], columns)  # the TypeError of every function
    whole = _schema_of(obj)
    full = whole
    if structs == "flatten":
        full = dataclasses.replace(
            whole, columns=tuple(leaf for c in whole.columns for leaf in _flatten(c)))
    entries = full.columns
    if columns is not None:
        if structs == "flatten":
            entries = _select_flat(whole.columns, columns)
        else:
            # each once, as from_dataframe's dict holds a repeated name
            pos = _select_columns([c.name for c in entries], columns)
            entries = tuple(entries[i] for i in dict.fromkeys(pos))
    kept: list[ColumnSchema] = []
    for c in entries:
        if isinstance(c, _Refused):
            if on_unsupported == "raise" and c.error is not None:
                raise c.error from c.error.__cause__
            continue
        if on_unsupported == "skip" and not _convertible(c):
            continue
        kept.append(c)
    return dataclasses.replace(full, columns=tuple(kept))


@dataclass(frozen=True, repr=False)
class _Refused(ColumnSchema):
    """A column that could not be described (never in a returned :class:`Schema`):
    ``error`` is the NotImplementedError naming it, the original as ``__cause__``,
    that ``on_unsupported='raise'`` raises when the column is selected."""

    error: BaseException | None = None


def _refused(name: str, what: str, e: BaseException) -> _Refused:
    """The :class:`_Refused` entry of column ``name`` for error ``e``; ``what`` says
    who failed (``"pandas' Arrow export"``, ``"its producer"``)."""
    if isinstance(e, NotImplementedError) and str(e).startswith(f"column {name!r}"):
        err = NotImplementedError(str(e))
    else:
        err = NotImplementedError(
            f"column {name!r}: {what} failed to describe it: {type(e).__name__}: {e}")
    err.__cause__ = e
    return _Refused(name=name, type="unsupported", format="", error=err)


def _convertible(c: ColumnSchema) -> bool:
    """Whether the converters read a column of schema ``c``: what they refuse by its
    type (NotImplementedError, so ``on_unsupported='skip'`` drops it) is an Arrow
    format outside the type table, and a dictionary whose values are run-end encoded
    or a dictionary; anywhere in the column (its children, values, categories)."""
    if c.type == "other" and c.format:
        return False
    if c.type == "categorical" and c.categories is not None:
        if c.categories.type in ("run_end", "categorical"):
            return False
        return _convertible(c.categories)
    if c.values is not None and not _convertible(c.values):
        return False
    return all(_convertible(k) for k in c.children)


_UTF8 = table_format("utf8 string")


def _numpy_column(name: str, dt: Any, tz: str | None = None) -> ColumnSchema:
    """A NumPy-typed pandas column as pandas' Arrow export describes it (its format
    from the type table)."""
    fmt = _arrow_format(dt, tz)
    if fmt is None:
        return ColumnSchema(name=name, type="other", format="", metadata={"pandas_dtype": str(dt)})
    return ColumnSchema(name=name, format=fmt, **_format_type(fmt),
                        null_value=0, metadata={})


def _pandas_own_column(name: str, dt: Any, pd: Any) -> ColumnSchema:
    """The schema of a pandas column read from its dtype, as
    ``from_dataframe`` reads it (no pyarrow): object and complex columns,
    which Arrow has no type for, Period (its frequency in ``unit``),
    Interval, Sparse (its dense type) and, without pyarrow, every dtype."""
    md = {"pandas_dtype": str(dt)}
    if isinstance(dt, np.dtype):
        if dt.kind == "O":
            return ColumnSchema(name=name, type="object", format="",
                                null_representation="sentinel", metadata=md)
        if dt.kind == "c":
            return ColumnSchema(name=name, type="complex", format="", bits=dt.itemsize * 8,
                                null_representation="nan", metadata=md)
        return _numpy_column(name, dt)
    if isinstance(dt, pd.PeriodDtype):
        return ColumnSchema(name=name, type="object", format="", unit=str(dt)[len("period["):-1],
                            null_representation="sentinel", metadata=md)
    if isinstance(dt, pd.IntervalDtype):
        return ColumnSchema(name=name, type="object", format="",
                            null_representation="sentinel", metadata=md)
    if isinstance(dt, pd.SparseDtype):
        return _pandas_own_column(name, np.dtype(dt.subtype), pd)
    if isinstance(dt, pd.DatetimeTZDtype):
        return _numpy_column(name, np.dtype(f"M8[{dt.unit}]"), str(dt.tz))
    if isinstance(dt, pd.CategoricalDtype):
        n = len(dt.categories)
        # the codes: the narrowest signed integers that hold them, as pandas' are
        codes = np.dtype("i1" if n < 128 else "i2" if n < 32768 else "i4" if n < 2**31
                         else "i8")
        fmt = table_format(codes)
        cats = _pandas_own_column("", dt.categories.dtype, pd)
        return ColumnSchema(name=name, type="categorical", format=fmt,
                            bits=_format_type(fmt).get("bits"),
                            ordered=bool(dt.ordered), categories=cats, null_value=0)
    if isinstance(dt, pd.StringDtype):
        return ColumnSchema(name=name, format=_UTF8, **_format_type(_UTF8), null_value=0)
    numpy_type = getattr(dt, "numpy_dtype", None)  # Int*, UInt*, Float*, boolean
    if isinstance(numpy_type, np.dtype):
        return _numpy_column(name, numpy_type)
    return ColumnSchema(name=name, type="other", format="", metadata=md)


def _pandas_arrow_desc(sub: Any) -> Any:
    """The Arrow schema description of pandas' Arrow export of ``sub`` (its columns
    alone when its index is one Arrow cannot hold)."""
    try:
        desc = _arrow_schema(sub)
    except Exception:  # an index Arrow cannot hold: the columns alone
        desc = _arrow_schema(sub.reset_index(drop=True))
    if desc is None:
        raise TypeError("pandas' Arrow export gave no schema")
    return desc


def _pandas_schema(frame: Any) -> Schema:
    """A pandas DataFrame's schema: what Arrow can describe from pandas'
    Arrow export schema (when pyarrow can be imported), the rest (object,
    complex, Period, Interval, Sparse; every column without pyarrow) from
    the dtypes; never an error of pyarrow's: a column pandas' Arrow export
    fails on is a :class:`_Refused` entry naming it."""
    from dfbuffer._frame_nodes import have_pyarrow  # noqa: PLC0415

    pd = sys.modules["pandas"]
    names = [str(c) for c in frame.columns]
    dtypes = list(frame.dtypes)
    arrow = have_pyarrow()
    special = (pd.PeriodDtype, pd.IntervalDtype, pd.SparseDtype)
    cols: dict[int, ColumnSchema] = {}
    for i, dt in enumerate(dtypes):
        if not arrow or isinstance(dt, special) or (isinstance(dt, np.dtype) and dt.kind in "Oc"):
            try:
                cols[i] = _pandas_own_column(names[i], dt, pd)
            except Exception as e:  # noqa: BLE001 - pandas' error, named
                cols[i] = _refused(names[i], "pandas", e)
    rest = [i for i in range(len(names)) if i not in cols]
    md: dict[str, Any] = {}
    idx: tuple[str, ...] = ()
    if rest:
        sub = frame if len(rest) == len(names) else frame.iloc[:, rest]
        try:
            sch = _arrow_schema_of(_pandas_arrow_desc(sub))
            if len(sch.columns) != len(rest):
                raise TypeError("pandas' Arrow export gave another number of columns")
        except MemoryError:
            raise
        except Exception:  # noqa: BLE001 - found column by column below
            sch = None
        if sch is not None:
            md, idx = sch.metadata, sch.index_columns
            for i, c in zip(rest, sch.columns, strict=True):
                cols[i] = dataclasses.replace(c, name=names[i])
        else:
            for i in rest:
                try:
                    one = _arrow_schema_of(_pandas_arrow_desc(frame.iloc[:, [i]]))
                    cols[i] = dataclasses.replace(one.columns[0], name=names[i])
                except MemoryError:
                    raise
                except Exception as e:  # noqa: BLE001 - pyarrow's error, named
                    cols[i] = _refused(names[i], "pandas' Arrow export", e)
    return Schema(tuple(cols[i] for i in range(len(names))), md, "arrow", idx)


def _ix_schema(df: Any) -> Schema:
    """An interchange DataFrame's schema, from its column objects; a column whose
    producer refuses to describe it (NotImplementedError from ``dtype``,
    ``describe_null``, ..., the error ``from_dataframe(..., on_unsupported="skip")``
    skips) is a :class:`_Refused` entry naming it."""
    md = df.metadata
    cols: list[ColumnSchema] = []
    for i, name in enumerate(df.column_names()):
        try:
            col = df.get_column(i)
        except (ValueError, TypeError, NotImplementedError) as e:
            # how producers refuse a column the protocol cannot describe (pyarrow's
            # ValueError for a list column); from_dataframe refuses it the same way
            cols.append(_refused(str(name), "its producer's get_column()", e))
            continue
        try:
            cols.append(_ix_column(str(name), col))
        except NotImplementedError as e:
            cols.append(_refused(str(name), "its producer", e))
    return Schema(tuple(cols), dict(md) if isinstance(md, dict) else {}, "interchange")


# -- the rows' schemas: source -> Schema (structs as objects; a column that cannot be
# described is a _Refused entry) -------------------------------------------------------

def _pandas_row(src: Source) -> Schema:
    # pandas' own interchange object is read as the frame behind it, as from_dataframe
    # reads it, so its schema is the frame's
    return _pandas_schema(src.frame)


def _arrow_row(src: Source) -> Schema:
    desc = _arrow_schema(src.frame)
    if desc is not None:
        return _series_named(src.obj, _arrow_schema_of(desc))
    # only the device half of the Arrow interface: its __dataframe__, if it has one
    df = _ix_frame(src.frame)
    if df is None:
        return refuse(src)
    return _ix_schema(df)


def _interchange_row(src: Source) -> Schema:
    return _ix_schema(src.frame)


def _mapping_row(src: Source) -> Schema:
    from dfbuffer._frame_nodes import _from_mapping  # noqa: PLC0415

    # its pandas values as the frame columns they are; the others described as the
    # Arrow nodes to_arrow gives of them (zero-copy)
    sch = _mapping_schema(src.frame)
    if sch is not None:
        return sch
    return _arrow_row(src._replace(frame=_from_mapping(src.frame, None, src.func)))


#: Each row's schema (schema(); a schema-only object is read here alone).
SCHEMA = operation("schema", pandas=_pandas_row, arrow=_arrow_row,
                   interchange=_interchange_row, mapping=_mapping_row, schema=_arrow_row)


def _schema_of(obj: DataFrameLike | Mapping[str, object]) -> Schema:
    """Every column of ``obj`` (see :func:`schema`), structs as objects; a column that
    cannot be described is a :class:`_Refused` entry."""
    return SCHEMA(obj, "schema")


def _mapping_schema(data: Mapping[Any, Any]) -> Schema | None:
    """The schema of mapping ``data`` (its items read once) when a value is a pandas
    Series or array: that value described as the column of a frame it is (pandas'
    object, Period and Interval columns as ``_pandas_schema`` describes them, never
    through pandas' Arrow export, which calls an object column of str ``string`` and
    refuses other objects), the other values as ``to_arrow`` exports them; None when
    no value is pandas'."""
    from dfbuffer._frame_nodes import _from_mapping  # noqa: PLC0415

    items = list(data.items())
    frames = [pandas_array_frame(v, str(k)) for k, v in items]
    if all(f is None for f in frames):
        return None
    rest = {k: v for (k, v), f in zip(items, frames, strict=True) if f is None}
    others: Iterator[ColumnSchema] = iter(())
    length = None
    if rest:
        nodes = _from_mapping(rest, None, "schema")
        desc = _arrow_schema(nodes)
        assert desc is not None  # dfbuffer's own nodes always carry their schema
        others = iter(_arrow_schema_of(desc).columns)
        length = nodes.num_rows
    cols = []
    for (key, _), f in zip(items, frames, strict=True):
        if f is None:
            cols.append(next(others))
            continue
        if length is None:
            length = len(f)
        elif len(f) != length:
            raise ValueError(f"column {str(key)!r}: schema() takes columns of one length: "
                             f"this one has {len(f)} values, the others {length}")
        cols.append(dataclasses.replace(_pandas_schema(f).columns[0], name=str(key)))
    return Schema(tuple(cols), {}, "arrow")


def _is_period(c: ColumnSchema) -> bool:
    """Whether ``c`` is a pandas Period column (its pandas dtype, or pandas'
    ``pandas.period`` Arrow extension type)."""
    return (str(c.metadata.get("pandas_dtype", "")).startswith("period[")
            or (c.extension_name == "pandas.period" and c.type == "object"))
