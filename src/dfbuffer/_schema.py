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

import json
from dataclasses import dataclass, field
from typing import Any

from dfbuffer._interchange import _arrow_schema, _arrow_type

__all__ = ["ColumnSchema", "Schema", "schema"]

# The logical types whose schema reports a value width / a time unit.
_WITH_BITS = frozenset({"int", "uint", "float", "bool", "string", "datetime", "duration"})
_WITH_UNIT = frozenset({"date", "datetime", "duration", "time"})
_NULLS = {0: "non-nullable", 1: "nan", 2: "sentinel", 3: "bitmask", 4: "bytemask"}


@dataclass(frozen=True)
class ColumnSchema:
    """One column as its producer describes it.

    ``type`` is the logical type: ``"int"``, ``"uint"``, ``"float"``, ``"bool"``,
    ``"string"``, ``"binary"``, ``"datetime"`` (a timestamp; ``tz`` its time
    zone or None), ``"date"``, ``"time"``, ``"duration"``, ``"decimal"``,
    ``"categorical"`` (``ordered``, ``categories`` the schema of the
    categories, ``bits`` the width of the codes), ``"null"``, ``"list"``,
    ``"struct"``, ``"map"`` or ``"other"``.  ``unit`` is ``"s" "ms" "us" "ns"``
    for datetimes and durations, ``"D"`` or ``"ms"`` for dates.
    ``null_representation`` is ``"non-nullable"``, ``"nan"``, ``"sentinel"``
    (``null_value`` the sentinel), ``"bitmask"`` or ``"bytemask"``
    (``null_value`` the mask value that marks a null); ``null_count`` is the
    producer's count, None when it gives none (Arrow schemas carry none).
    ``format`` is the Arrow C format string of the values.
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


@dataclass(frozen=True)
class Schema:
    """The columns of a dataframe (``columns``, in order), the producer's
    metadata (``metadata``; pandas' Arrow metadata is parsed from JSON under
    ``"pandas"``), where it was read from (``source``: ``"arrow"`` or
    ``"interchange"``) and the names of pandas index columns that the
    converters leave out (``index_columns``)."""

    columns: tuple[ColumnSchema, ...]
    metadata: dict[str, Any]
    source: str
    index_columns: tuple[str, ...] = ()

    def names(self) -> list[str]:
        """The column names, in order."""
        return [c.name for c in self.columns]

    def __getitem__(self, name: str) -> ColumnSchema:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def __iter__(self):
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)


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
    return ColumnSchema(format=node["format"], **_format_type(node["format"]), **common)


def _arrow_schema_of(desc: dict[str, Any]) -> Schema:
    md = _parse_metadata(desc["metadata"])
    if desc["format"] != "+s":  # one column (an Array, a Series)
        return Schema((_arrow_column(desc),), md, "arrow")
    skip = set(desc.get("index_columns", ()))
    cols = tuple(
        _arrow_column(ch) for i, ch in enumerate(desc["children"]) if i not in skip
    )
    idx = tuple(desc["children"][i]["name"] for i in sorted(skip))
    return Schema(cols, md, "arrow", idx)


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


def _ix_frame(obj: Any) -> Any:
    if hasattr(obj, "column_names") and hasattr(obj, "get_column"):
        return obj
    meth = getattr(obj, "__dataframe__", None)
    if meth is None:
        return None
    try:
        return meth(allow_copy=True)
    except TypeError:
        return meth()


def schema(obj: Any) -> Schema:
    """Return the :class:`Schema` of ``obj`` without converting its data.

    ``obj`` is what :func:`dfbuffer.from_dataframe` accepts: an Arrow
    PyCapsule producer (read from its Arrow schema; the columns that pandas'
    metadata marks as the index are left out, as the converters leave them
    out), an object with ``__dataframe__`` or an interchange DataFrame (read
    from its column objects' ``dtype``, ``describe_null``, ``null_count``,
    ``describe_categorical`` and ``metadata``; no buffer is touched).  The
    columns are the ones ``from_dataframe`` returns, in the same order.
    Raises TypeError for anything else.
    """
    if hasattr(obj, "__arrow_c_stream__") or hasattr(obj, "__arrow_c_array__") or (
        hasattr(obj, "__arrow_c_schema__") and not hasattr(obj, "column_names")
    ):
        desc = _arrow_schema(obj)
        if desc is not None:
            return _arrow_schema_of(desc)
    df = _ix_frame(obj)
    if df is None:
        raise TypeError(
            "schema() expects an Arrow PyCapsule producer, an object with "
            f"__dataframe__ or an interchange DataFrame, got {type(obj).__name__}"
        )
    md = df.metadata
    cols = tuple(
        _ix_column(str(name), df.get_column(i)) for i, name in enumerate(df.column_names())
    )
    return Schema(cols, dict(md) if isinstance(md, dict) else {}, "interchange")
