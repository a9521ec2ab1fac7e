"""The pandas columns that neither the block reader nor pandas' Arrow export
serve as they should, read from pandas' own arrays (no pyarrow).

``from_dataframe`` on a pandas frame (``pandas_fast.c``) hands the columns
its block reader did not take to :func:`convert`:

* Period and Interval columns become object arrays of ``pandas.Period`` /
  ``pandas.Interval`` objects (pandas' Arrow export would give bare int64
  ordinals or a struct of bounds, losing the frequency or the closed side);
  with ``period="ordinal"`` a Period column is its int64 ordinals instead
  (a read-only view of pandas' own array, NaT a null), on request only;
* Sparse columns are densified (a copy) and read as the dense column;
* when pyarrow cannot be imported, every other extension column (nullable
  Int/UInt/Float/boolean, strings, categoricals, tz-aware datetimes) is read
  here too, with the same result as pandas' Arrow export gives: numeric
  values and masks go through ``to_arrow``'s mapping export and the Arrow
  converter, so ``nulls=`` fills exactly as for any Arrow column.

Every other column is left to the caller (None), which reads it through
pandas' Arrow export.  Any error of pandas' becomes an error naming the
column (NotImplementedError, which ``on_unsupported="skip"`` drops), with
the original as ``__cause__``.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

import numpy as np

from dfbuffer._frame_nodes import _from_mapping, have_pyarrow
from dfbuffer._interchange import CopyError, from_dataframe

__all__ = ["arrow_periods", "convert"]

_MODE_BITS = 0xFF
_CATEGORICAL_CODES = 0x100
_STRINGDTYPE = 0x200
_PERIOD_ORDINAL = 0x400
_SKIP_UNSUPPORTED = 0x1000
_COPY_KEYWORD = 0x2000  # the caller's copy keyword is copy=, not allow_copy=
_NO_COPY = 0x4000  # convert()'s allow_copy is false: copies are refused
_MODES: dict[int, Literal["mask", "fill", "raise"]] = {0: "mask", 1: "fill", 2: "raise"}


def _objects(name: str, data: Any, mask: Any, mode: int) -> Any:
    """An object array with None at the nulls: a MaskedArray in "mask" mode
    when there are any, the array in "fill" mode, ValueError in "raise"."""
    data = np.array(data, dtype=object)
    if mask is None or not mask.any():
        return data
    if mode == 2:
        n = int(mask.sum())
        raise ValueError(
            f"column {name!r} has {n} null value{'' if n == 1 else 's'} (nulls='raise')")
    data[mask] = None
    return data if mode == 1 else np.ma.MaskedArray(data, mask=mask)


def _numeric(name: str, data: Any, mask: Any, mode: int, forbid: str | None = None) -> Any:
    """A numeric column with a bool mask (1 = null), converted as the Arrow
    converter converts the same values and validity; ``forbid`` ("copy" or
    "allow_copy"): the keyword that forbade copies, passed on as False."""
    if data.dtype.kind == "M" and getattr(data.dtype, "tz", None) is not None:
        raise TypeError(f"column {name!r}: unexpected {data.dtype}")
    col = np.ma.MaskedArray(data, mask=mask) if mask is not None else data
    return _read(_from_mapping({name: col}, None), mode, forbid)[name]


def _read(src: Any, mode: int, forbid: str | None) -> Any:
    """``from_dataframe(src)`` in nulls mode ``mode``, with ``forbid=False``."""
    if forbid == "copy":
        return from_dataframe(src, nulls=_MODES[mode], copy=False)
    if forbid == "allow_copy":
        return from_dataframe(src, nulls=_MODES[mode], allow_copy=False)
    return from_dataframe(src, nulls=_MODES[mode])


def _strings(name: str, values: Any, mode: int, opts: int) -> Any:
    mask = np.asarray(values.isna(), dtype=bool)
    data = np.asarray(values.to_numpy(dtype=object, na_value=None), dtype=object)
    if opts & _STRINGDTYPE:
        if mode == 2 and mask.any():
            return _objects(name, data, mask, mode)
        return np.array(data, dtype=np.dtypes.StringDType(na_object=None))
    return _objects(name, data, mask, mode)


def _categorical(name: str, values: Any, mode: int, opts: int, pd: Any) -> Any:
    codes = np.asarray(values.codes)
    mask = codes < 0
    cats = values.categories
    if opts & _CATEGORICAL_CODES:
        from dfbuffer._interchange import CategoricalCodes  # noqa: PLC0415

        if mode == 2 and mask.any():
            return _objects(name, codes, mask, mode)
        c = np.ma.MaskedArray(codes, mask=mask) if mask.any() else codes
        cat_vals = _column(name, cats.array, 0, 0, pd)
        return CategoricalCodes((c, cat_vals, bool(values.ordered)))
    taken = cats.take(np.where(mask, 0, codes)) if len(cats) else cats.take([])
    return _column(name, taken.array, mode, opts, pd, mask)


def _forbid(opts: int) -> str | None:
    """The keyword that forbade copies (``"copy"`` or ``"allow_copy"``), None if none."""
    if not opts & _NO_COPY:
        return None
    return "copy" if opts & _COPY_KEYWORD else "allow_copy"


def _copy_error(name: str, what: str, opts: int) -> CopyError:
    """The CopyError for column ``name``: ``what`` needs a copy, which the keyword
    given forbids."""
    return CopyError(f"column {name!r}: {what} needs a copy, which "
                     f"{_forbid(opts) or 'allow_copy'}=False forbids")


def _column(name: str, values: Any, mode: int, opts: int, pd: Any,
            extra_mask: Any = None) -> Any:
    """One pandas array read without pyarrow (see the module docstring)."""
    dt = values.dtype
    forbid = _forbid(opts)
    if isinstance(values, np.ndarray):
        if extra_mask is None:  # as the block reader reads it
            one = pd.DataFrame({name: values}, copy=False)
            return _read(one, mode, forbid)[name]
        mask = extra_mask | np.isnat(values) if dt.kind in "mM" else extra_mask
        if dt.kind == "O":
            return _objects(name, values, mask, mode)
        return _numeric(name, values, mask if mask.any() else None, mode, forbid)
    if isinstance(dt, pd.PeriodDtype) and opts & _PERIOD_ORDINAL:
        return _ordinals(name, values, mode, extra_mask, forbid)
    if isinstance(dt, pd.PeriodDtype | pd.IntervalDtype):
        mask = np.asarray(values.isna(), dtype=bool)
        if extra_mask is not None:
            mask = mask | extra_mask
        return _objects(name, np.asarray(values, dtype=object), mask, mode)
    if isinstance(dt, pd.SparseDtype):
        return _column(name, pd.array(values.to_dense()), mode, opts, pd, extra_mask)
    if isinstance(dt, pd.CategoricalDtype):
        return _categorical(name, values, mode, opts, pd)
    if isinstance(dt, pd.StringDtype):
        if extra_mask is not None:
            values = values.copy()
            values[extra_mask] = None
        return _strings(name, values, mode, opts)
    if isinstance(dt, pd.DatetimeTZDtype):
        data = values._ndarray  # the UTC instants, as Arrow holds them
        mask = np.isnat(data)
        if extra_mask is not None:
            mask = mask | extra_mask
        return _numeric(name, data, mask if mask.any() else None, mode, forbid)
    for kind in ("IntegerArray", "FloatingArray", "BooleanArray"):
        if type(values) is getattr(pd.arrays, kind, None):
            mask = np.asarray(values._mask, dtype=bool)
            if extra_mask is not None:
                mask = mask | extra_mask
            return _numeric(name, values._data, mask if mask.any() else None, mode, forbid)
    if isinstance(values, pd.arrays.NumpyExtensionArray):
        return _column(name, values.to_numpy(), mode, opts, pd, extra_mask)
    raise NotImplementedError(
        f"column {name!r}: dfbuffer cannot read a pandas {dt} column without pyarrow")


def _ordinals(name: str, values: Any, mode: int, extra_mask: Any,
              forbid: str | None = None) -> Any:
    """A Period array's int64 ordinals (``period="ordinal"``): a read-only view of
    pandas' own values when there is no NaT, else converted as an int64 column with
    those nulls (masked, filled or refused by ``mode``; a fill is a copy, which
    ``forbid``, the keyword that forbade copies, refuses as any int64 column's)."""
    data = np.asarray(values.asi8)
    mask = np.asarray(values.isna(), dtype=bool)
    if extra_mask is not None:
        mask = mask | extra_mask
    if not mask.any():
        view = data.view()
        view.flags.writeable = False
        return view
    return _numeric(name, data, mask, mode, forbid)


def arrow_periods(name: str, values: Any, meta: str | None, allow_copy: bool) -> Any:
    """pandas Period objects of the int64 ordinals ``values`` that the Arrow converter
    read from a column of pandas' ``pandas.period`` extension type (``meta``: its
    extension metadata, ``{"freq": ...}``); nulls (masked, or NaN where ``nulls="fill"``
    upcast the ints) become None, masked when ``values`` was masked.  Without pandas,
    or without a frequency, NotImplementedError naming the column (``period="ordinal"``
    gives the ordinals)."""
    import json  # noqa: PLC0415

    try:
        freq = json.loads(meta)["freq"] if meta else None
    except (ValueError, TypeError, KeyError):
        freq = None
    if not isinstance(freq, str):
        raise NotImplementedError(
            f"column {name!r}: a pandas.period column without a frequency "
            f"({meta!r}); period='ordinal' gives its ordinals")
    try:
        import pandas as pd  # noqa: PLC0415
    except ImportError as e:
        raise NotImplementedError(
            f"column {name!r}: pandas Period ordinals need pandas to become Period "
            "objects; period='ordinal' gives the ordinals") from e
    if not allow_copy:
        raise CopyError(f"column {name!r}: converting pandas Period ordinals to "
                        "Period objects needs a copy, which allow_copy=False forbids")
    masked = isinstance(values, np.ma.MaskedArray)
    data = np.ma.getdata(values)
    mask = np.ma.getmaskarray(values) if masked else np.zeros(len(data), dtype=bool)
    if data.dtype.kind == "f":  # nulls="fill": ints with nulls came as float64 NaN
        mask = mask | np.isnan(data)
        data = np.where(mask, 0, data)
    ordinals = np.where(mask, np.iinfo(np.int64).min, data.astype(np.int64))
    try:
        periods = pd.arrays.PeriodArray(ordinals, dtype=pd.PeriodDtype(freq))
    except Exception as e:  # noqa: BLE001 - pandas' error, named
        raise NotImplementedError(
            f"column {name!r}: pandas could not make Periods of frequency {freq!r}: "
            f"{type(e).__name__}: {e}") from e
    out = np.asarray(periods, dtype=object)
    if mask.any():
        out[mask] = None
        if masked:
            return np.ma.MaskedArray(out, mask=mask)
    return out


def _special(dt: Any, pd: Any) -> bool:
    """Read here whatever pyarrow says: Period, Interval, Sparse."""
    return isinstance(dt, pd.PeriodDtype | pd.IntervalDtype | pd.SparseDtype)


def _needs_copy(values: Any, pd: Any, ordinal: bool = False) -> bool:
    """Whether reading ``values`` here makes new values (objects, decoded
    categories, densified or re-encoded strings) rather than viewing them."""
    if isinstance(values, np.ndarray):
        return False
    dt = values.dtype
    if isinstance(dt, pd.PeriodDtype) and ordinal:
        return False  # the ordinals are pandas' own array
    return not (isinstance(dt, pd.DatetimeTZDtype) or type(values) in tuple(
        getattr(pd.arrays, k) for k in ("IntegerArray", "FloatingArray", "BooleanArray")))


def convert(frame: Any, positions: list[int], nulls: int, allow_copy: bool = True) -> list[Any]:
    """For each column position of pandas frame ``frame``: its array read
    here, None for the caller's Arrow export, or Ellipsis when
    ``on_unsupported="skip"`` drops it.  ``nulls`` is the C
    converter's mode and option bits; with ``allow_copy`` false a column
    whose values must be made anew raises CopyError naming the keyword given
    (``_COPY_KEYWORD``)."""
    pd = sys.modules["pandas"]
    mode, opts = nulls & _MODE_BITS, nulls & ~_MODE_BITS
    if not allow_copy:
        opts |= _NO_COPY
    arrow = have_pyarrow()
    names = [str(c) for c in frame.columns]
    dtypes = list(frame.dtypes)  # one pass; a Series per column only when read here
    out: list[Any] = []
    for pos in positions:
        if arrow and not _special(dtypes[pos], pd):
            out.append(None)
            continue
        values = frame.iloc[:, pos].array
        if not allow_copy and _needs_copy(values, pd, bool(opts & _PERIOD_ORDINAL)):
            raise _copy_error(names[pos], f"converting a pandas {values.dtype} column",
                              opts)
        try:
            out.append(_column(names[pos], values, mode, opts, pd))
        except NotImplementedError:
            if not nulls & _SKIP_UNSUPPORTED:
                raise
            out.append(...)  # on_unsupported="skip"
        except (ValueError, MemoryError):
            raise
        except Exception as e:  # pandas' own errors, named
            if nulls & _SKIP_UNSUPPORTED:
                out.append(...)
                continue
            raise NotImplementedError(
                f"column {names[pos]!r}: pandas could not give its values: "
                f"{type(e).__name__}: {e}") from e
    return out
