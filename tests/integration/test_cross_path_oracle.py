"""The cross-path oracle: one logical column, built through every path a user
has, gives one answer in every function (docs/api.md, "The result rule",
"pandas columns"; requirements.md L-OR1).

A case is one type family with one null kind: an Arrow array (the column as
Arrow states it, nulls in a bitmap), the pandas Series a pandas user holds for
it (NaN, a mask, a sentinel such as NaT or code -1, or an Arrow bitmap through
``pd.ArrowDtype``) and, where NumPy has the type, the NumPy or masked array.
The paths: a pandas DataFrame (with a RangeIndex and with every other index kind:
Index, DatetimeIndex, MultiIndex, duplicated, object and categorical labels), its
``pa.table`` (the index as columns pandas' metadata marks), a pandas Series,
``{name: Series}``, ``{name: array}``, ``{name: Buffer}``, narwhals over pandas,
polars and pyarrow, a pyarrow Table,
RecordBatch and ChunkedArray (two chunks), a polars DataFrame and Series, a
``__dataframe__``-only producer over pyarrow's interchange object, the
single-use streams ``nanoarrow.ArrayStream`` and ``pa.RecordBatchReader``, and
the ``to_arrow`` / ``to_interchange`` round trips of the pyarrow table and the
pandas frame.  Each function's answer on every path is compared with its answer
on the reference path (the pyarrow table; the pandas frame for Period and
Interval), under the documented differences only:

- a pandas NumPy float column keeps NaN as its null marker: in ``"mask"`` mode
  an ndarray with NaN, in ``"always_mask"`` an all-False mask, the same values
  once filled;
- ``dfbuffer.pandas.from_dataframe`` returns a pandas frame as it is;
- polars has no float16 (those paths are not offered), the interchange
  protocol has no decimal, duration or interval type (the ``__dataframe__``-only
  producer is not offered there: pyarrow's producer refuses them);
- a categorical's codes depend on the producer's categories (``to_matrix`` with
  a dtype is not compared).

A disagreement the docs do not allow is a finding: marked ``xfail(strict=True)``
with the documented rule and what happens.
"""

from __future__ import annotations

import decimal
import math
import warnings

import numpy as np
import pytest

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pa_interchange = pytest.importorskip("pyarrow.interchange")
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the polars paths are left out
    pl = None
try:
    import narwhals as nw
except ImportError:
    nw = None
try:
    import nanoarrow as na
except ImportError:
    na = None

import dfbuffer.pandas as dfb_pandas  # noqa: E402 - after pandas' importorskip


def _polars_series_export_works():
    """Old polars (1.6) exports a logical-type Series as a stream whose batches
    are of the physical type (its get_next fails): its Series paths are left out."""
    try:
        pa.chunked_array(pl.Series("d", [1], dtype=pl.Duration("us")))
    except Exception:  # noqa: BLE001 - any failure is polars'
        return False
    return True


POLARS_SERIES = pl is not None and _polars_series_export_works()

PANDAS3 = int(pd.__version__.split(".")[0]) >= 3
NAME = "c"
NULLS = ("mask", "fill", "always_mask", "raise")
TZ = "Asia/Kathmandu"


# -- the cases --------------------------------------------------------------

class Case:
    """One logical column: ``arrow`` (pa.Array or None for pandas-only types),
    ``pandas`` (a Series named NAME or None), ``numpy`` (an ndarray or
    MaskedArray or None), ``null_kind`` of the pandas Series ("none", "nan",
    "mask", "sentinel", "bitmap", "object")."""

    def __init__(self, family, arrow, pandas, numpy=None, null_kind="none", *,
                 numeric=False, polars=True, interchange=True):
        self.family = family
        self.arrow = arrow
        self.pandas = pandas
        self.numpy = numpy
        self.null_kind = null_kind
        self.numeric = numeric
        self.polars = polars
        self.interchange = interchange


def _masked(values, valid, dtype):
    data = np.array([v if ok else values[0] for v, ok in zip(values, valid, strict=True)],
                    dtype=dtype)
    return np.ma.MaskedArray(data, mask=~np.asarray(valid))


VALID = [True, False, True, True, False]


def _numeric_cases():
    out = []
    ints = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    for dt in ints:
        vals = [1, 2, 3, 120, 7]
        at = getattr(pa, dt)()
        out.append((f"{dt}", Case(dt, pa.array(vals, at), pd.Series(vals, dtype=dt, name=NAME),
                                  np.array(vals, dtype=dt), numeric=True)))
        with_nulls = [v if ok else None for v, ok in zip(vals, VALID, strict=True)]
        arr = pa.array(with_nulls, at)
        out.append((f"{dt}-mask", Case(dt, arr, pd.Series(
            with_nulls, dtype=dt.capitalize().replace("Uint", "UInt"), name=NAME),
            _masked(vals, VALID, dt), "mask", numeric=True)))
        out.append((f"{dt}-bitmap", Case(dt, arr, pd.Series(
            with_nulls, dtype=pd.ArrowDtype(at), name=NAME),
            _masked(vals, VALID, dt), "bitmap", numeric=True)))
    for dt in ["float16", "float32", "float64"]:
        vals = [1.5, -2.0, 3.25, 0.0, 1e3]
        at = getattr(pa, dt)()
        poles = dt != "float16"
        arr_vals = np.array(vals, dtype=dt)
        out.append((dt, Case(dt, pa.array(arr_vals), pd.Series(arr_vals, name=NAME), arr_vals,
                             numeric=True, polars=poles)))
        with_nan = np.where(VALID, arr_vals, np.nan).astype(dt)
        arr = pa.array(arr_vals, mask=~np.asarray(VALID))
        out.append((f"{dt}-nan", Case(dt, arr, pd.Series(with_nan, name=NAME),
                                      _masked(list(arr_vals), VALID, dt), "nan",
                                      numeric=True, polars=poles)))
        if dt != "float16":
            masked = pd.array(with_nan, dtype=dt.capitalize())
            out.append((f"{dt}-mask", Case(dt, arr, pd.Series(masked, name=NAME),
                                           _masked(list(arr_vals), VALID, dt), "mask",
                                           numeric=True)))
        out.append((f"{dt}-bitmap", Case(dt, arr, pd.Series(
            pd.arrays.ArrowExtensionArray(arr), name=NAME),
            _masked(list(arr_vals), VALID, dt), "bitmap", numeric=True, polars=poles)))
    bools = [True, False, True, True, False]
    out.append(("bool", Case("bool", pa.array(bools), pd.Series(bools, name=NAME),
                             np.array(bools), numeric=True)))
    with_nulls = [v if ok else None for v, ok in zip(bools, VALID, strict=True)]
    arr = pa.array(with_nulls, pa.bool_())
    out.append(("bool-mask", Case("bool", arr, pd.Series(with_nulls, dtype="boolean", name=NAME),
                                  _masked(bools, VALID, bool), "mask", numeric=True)))
    out.append(("bool-bitmap", Case("bool", arr, pd.Series(
        with_nulls, dtype=pd.ArrowDtype(pa.bool_()), name=NAME),
        _masked(bools, VALID, bool), "bitmap", numeric=True)))
    return out


def _other_cases():
    out = []
    strs = ["a", "bb", "", "dddd", "é"]
    nstrs = [v if ok else None for v, ok in zip(strs, VALID, strict=True)]
    # a NumPy object array is no mapping column (Buffer refuses object dtypes)
    out.append(("string", Case("string", pa.array(strs, pa.large_string()),
                               pd.Series(strs, dtype="string[python]", name=NAME))))
    arr = pa.array(nstrs, pa.large_string())
    out.append(("string-mask", Case("string", arr, pd.Series(nstrs, dtype="string[python]",
                                                            name=NAME),
                                    None, "mask")))
    out.append(("string-object", Case("string", arr, pd.Series(nstrs, dtype=object, name=NAME),
                                      None, "object")))
    out.append(("string-bitmap", Case("string", arr, pd.Series(
        nstrs, dtype=pd.ArrowDtype(pa.large_string()), name=NAME), None, "bitmap")))
    if PANDAS3:
        out.append(("string-str", Case("string", arr, pd.Series(nstrs, dtype="str", name=NAME),
                                       None, "nan")))
    cats = ["b", "a", "b", "c", "a"]
    ncats = [v if ok else None for v, ok in zip(cats, VALID, strict=True)]
    out.append(("category", Case("category", pa.array(cats).dictionary_encode(),
                                 pd.Series(pd.Categorical(cats), name=NAME))))
    out.append(("category-sentinel", Case("category", pa.array(ncats).dictionary_encode(),
                                          pd.Series(pd.Categorical(ncats), name=NAME),
                                          None, "sentinel")))
    us = [0, 86_400_000_000, 1_600_000_000_000_000, 5, 42]
    ts = np.array(us, dtype="datetime64[us]")
    nts = np.where(VALID, ts, np.datetime64("NaT"))
    tarr = pa.array(ts, pa.timestamp("us"))
    ntarr = pa.array(ts, pa.timestamp("us"), mask=~np.asarray(VALID))
    out.append(("timestamp", Case("timestamp", tarr, pd.Series(ts, name=NAME), ts)))
    out.append(("timestamp-sentinel", Case("timestamp", ntarr, pd.Series(nts, name=NAME),
                                           np.ma.MaskedArray(ts, mask=~np.asarray(VALID)),
                                           "sentinel")))
    out.append(("timestamp-bitmap", Case("timestamp", ntarr, pd.Series(
        pd.arrays.ArrowExtensionArray(ntarr), name=NAME), None, "bitmap")))
    tz = pd.Series(ts, name=NAME).dt.tz_localize("UTC").dt.tz_convert(TZ)
    ntz = pd.Series(nts, name=NAME).dt.tz_localize("UTC").dt.tz_convert(TZ)
    out.append(("timestamp-tz", Case("timestamp-tz", tarr.cast(pa.timestamp("us", TZ)), tz)))
    out.append(("timestamp-tz-sentinel", Case(
        "timestamp-tz", ntarr.cast(pa.timestamp("us", TZ)), ntz, None, "sentinel")))
    td = np.array(us, dtype="timedelta64[us]")
    ntd = np.where(VALID, td, np.timedelta64("NaT"))
    darr = pa.array(td, pa.duration("us"))
    ndarr = pa.array(td, pa.duration("us"), mask=~np.asarray(VALID))
    out.append(("duration", Case("duration", darr, pd.Series(td, name=NAME), td,
                                 interchange=False)))
    out.append(("duration-sentinel", Case("duration", ndarr, pd.Series(ntd, name=NAME),
                                          np.ma.MaskedArray(td, mask=~np.asarray(VALID)),
                                          "sentinel", interchange=False)))
    decs = [decimal.Decimal(s) for s in ["1.25", "-3.50", "0.00", "12.75", "9.99"]]
    ndecs = [v if ok else None for v, ok in zip(decs, VALID, strict=True)]
    dt = pa.decimal128(10, 2)
    out.append(("decimal", Case("decimal", pa.array(decs, dt), pd.Series(
        decs, dtype=pd.ArrowDtype(dt), name=NAME), interchange=False)))
    out.append(("decimal-bitmap", Case("decimal", pa.array(ndecs, dt), pd.Series(
        ndecs, dtype=pd.ArrowDtype(dt), name=NAME), None, "bitmap", interchange=False)))
    periods = pd.period_range("2020-01", periods=5, freq="M")
    out.append(("period", Case("period", None, pd.Series(periods, name=NAME))))
    nper = pd.Series(periods, name=NAME).where(VALID)
    out.append(("period-sentinel", Case("period", None, nper, None, "sentinel")))
    iv = pd.interval_range(0, 5)
    out.append(("interval", Case("interval", None, pd.Series(iv, name=NAME))))
    niv = pd.Series(pd.arrays.IntervalArray(iv).where(VALID) if hasattr(
        pd.arrays.IntervalArray, "where") else iv, name=NAME).where(VALID)
    out.append(("interval-nan", Case("interval", None, niv, None, "nan")))
    # an Interval column with nulls (float bounds: NaN on both sides is pandas' null)
    left = np.where(VALID, np.arange(5.0), np.nan)
    fiv = pd.arrays.IntervalArray.from_arrays(left, left + 0.5, closed="left")
    out.append(("interval-float-sentinel", Case("interval", None, pd.Series(fiv, name=NAME),
                                                None, "sentinel")))
    return out


CASES = dict(_numeric_cases() + _other_cases())


# -- the paths ----------------------------------------------------------------

class _OnlyDataframe:
    """A producer that speaks only ``__dataframe__`` (pyarrow's interchange
    object under it): no Arrow PyCapsule method, no pandas type."""

    def __init__(self, table):
        self._table = table

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self._table.__dataframe__(nan_as_null, allow_copy)


def _indexes(n):
    """Every kind of pandas index, of ``n`` labels: the frame's columns are the same
    whatever it is (docs/api.md, "pandas columns")."""
    return {
        "Index": pd.Index(np.arange(n) * 10 + 3),
        "DatetimeIndex": pd.date_range("2020-01-01", periods=n, tz="UTC"),
        "MultiIndex": pd.MultiIndex.from_arrays([np.arange(n), [f"k{i}" for i in range(n)]],
                                                names=["a", "b"]),
        "duplicated": pd.Index([7] * n),
        "object": pd.Index([f"r{i}" for i in range(n)], dtype=object, name=NAME),
        "CategoricalIndex": pd.CategoricalIndex(["x"] * n),
    }


INDEX_KINDS = sorted(_indexes(0))
PANDAS_STORAGE = {"pandas.DataFrame", "pandas.Series", "{name: Series}", "narwhals[pandas]",
                  "narwhals[pandas].Series", *(f"pandas[{k}]" for k in INDEX_KINDS)}
# paths of one column (column_to_ndarray reads them) and their result's key
SINGLE = {"pandas.Series": NAME, "pa.ChunkedArray": "", "pa.Array": "",
          "polars.Series": NAME, "narwhals[pandas].Series": NAME,
          "narwhals[polars].Series": NAME}


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn(*args, **kw)


_PATHS: dict[int, dict] = {}


def paths(case):
    """path name -> a thunk giving a fresh input (single-use streams are new
    each call); made once per case."""
    if id(case) not in _PATHS:
        _PATHS[id(case)] = _make_paths(case)
    return _PATHS[id(case)]


def _make_paths(case):
    got = {}
    arr = case.arrow
    if arr is not None:
        table = pa.table({NAME: arr})
        got["pa.Table"] = lambda: table
        got["pa.RecordBatch"] = lambda: pa.record_batch({NAME: arr})
        got["pa.ChunkedArray"] = lambda: pa.chunked_array([arr[:2], arr[2:]])
        got["pa.Array"] = lambda: arr
        if case.interchange:
            got["__dataframe__ only"] = lambda: _OnlyDataframe(table)
        got["pa.RecordBatchReader"] = table.to_reader
        if na is not None:
            got["nanoarrow.ArrayStream"] = lambda: na.ArrayStream(table)
        got["to_arrow(pa.Table)"] = lambda: dfbuffer.to_arrow(table)
        got["to_interchange(pa.Table)"] = lambda: dfbuffer.to_interchange(table)
        if nw is not None:
            got["narwhals[pyarrow]"] = lambda: nw.from_native(table, eager_only=True)
        if pl is not None and case.polars:
            pdf = pl.from_arrow(table)
            got["polars.DataFrame"] = lambda: pdf
            if POLARS_SERIES:
                got["polars.Series"] = lambda: pdf[NAME]
            if nw is not None:
                got["narwhals[polars]"] = lambda: nw.from_native(pdf, eager_only=True)
                if POLARS_SERIES:
                    got["narwhals[polars].Series"] = lambda: nw.from_native(
                        pdf[NAME], series_only=True)
    ser = case.pandas
    if ser is not None:
        frame = pd.DataFrame({NAME: ser})
        got["pandas.DataFrame"] = lambda: frame
        got["pandas.Series"] = lambda: ser
        got["{name: Series}"] = lambda: {NAME: ser}
        try:
            dfbuffer.to_arrow(frame)
        except NotImplementedError:
            pass  # a column Arrow cannot hold: no Arrow path (documented)
        else:
            got["to_arrow(pandas)"] = lambda: dfbuffer.to_arrow(frame)
            got["to_interchange(pandas)"] = lambda: dfbuffer.to_interchange(frame)
        if nw is not None:
            got["narwhals[pandas]"] = lambda: nw.from_native(frame, eager_only=True)
            got["narwhals[pandas].Series"] = lambda: nw.from_native(ser, series_only=True)
        for kind, index in _indexes(len(ser)).items():
            indexed = frame.set_axis(index, axis=0)
            got[f"pandas[{kind}]"] = lambda f=indexed: f
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    arrow = pa.table(indexed)  # the index columns, marked in its metadata
            except (pa.ArrowException, TypeError, ValueError):
                continue  # pandas' Arrow export refuses the column (object Intervals)
            got[f"pa.table(pandas[{kind}])"] = lambda t=arrow: t
    if case.numpy is not None:
        got["{name: ndarray}"] = lambda: {NAME: case.numpy}
        if type(case.numpy) is np.ndarray and case.numeric and case.family != "bool":
            # (a bool Buffer is refused: Arrow's booleans are bits, docs/api.md)
            got["{name: Buffer}"] = lambda: {NAME: dfbuffer.Buffer.from_object(case.numpy)}
    return got


def reference_path(case):
    return "pa.Table" if case.arrow is not None else "pandas.DataFrame"


# -- comparable answers -----------------------------------------------------------

def _value(v):
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, np.generic):
        return _value(v.item())
    return v


def _array(res):
    """(result type, dtype, mask, values at the valid slots) of one column."""
    mask = np.ma.getmaskarray(res)
    data = np.ma.getdata(res)
    if data.dtype.kind in "mM":
        vals = data.view("int64").tolist()
    else:
        vals = data.tolist()
    vals = [None if m else _value(v) for v, m in zip(vals, mask.tolist(), strict=True)]
    return (type(res).__name__, str(data.dtype), mask.tolist(), vals)


def _outcome(fn):
    """("ok", answer) or ("error", exception type) of ``fn()``."""
    try:
        return ("ok", _quiet(fn))
    except Exception as e:  # noqa: BLE001 - the error is the answer compared
        return ("error", type(e).__name__)


def _one(cols, key):
    assert list(cols) == [key], list(cols)
    return cols[key]


def _arrow_type(t):
    if pa.types.is_dictionary(t):
        return f"dictionary<{_arrow_type(t.value_type)}>"
    if t in (pa.string(), pa.large_string(), pa.string_view()):
        return "string"
    if pa.types.is_decimal(t):
        return f"decimal(scale={t.scale})"  # polars widens the precision
    return str(t)


def _arrow_column(col):
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return (_arrow_type(col.type), [_value(v) for v in col.to_pylist()])


def _pandas_column(s):
    isna = s.isna().tolist()
    vals = [None if m else _value(v) for v, m in zip(s.astype(object).tolist(), isna,
                                                     strict=True)]
    return (str(s.dtype), vals)


def _schema_column(c):
    cats = c.categories
    return (c.name, c.type, c.unit, c.tz, None if cats is None else cats.type,
            getattr(c, "scale", None))


# -- the functions, each an answer per path ---------------------------------------

def _key(path):
    return SINGLE.get(path, NAME)


def answer(func, case, path, make):
    """The comparable answer of ``func`` for the column made by ``make``."""
    key = _key(path)
    if func.startswith("from_dataframe"):
        nulls = func.split(":")[1]
        return _outcome(lambda: _array(_one(dfbuffer.from_dataframe(make(), nulls=nulls), key)))
    if func.startswith("column_to_ndarray"):
        nulls = func.split(":")[1]
        return _outcome(lambda: _array(dfbuffer.column_to_ndarray(make(), nulls=nulls)))
    if func.startswith("to_matrix"):
        kw = {"fill": {}, "mask": {"nulls": "mask"}, "float32": {"dtype": np.float32},
              "skip": {"on_unsupported": "skip"}}[func.split(":")[1]]

        def matrix():
            m = dfbuffer.to_matrix(make(), **kw)
            return (type(m).__name__, m.shape, str(m.dtype), _array(m.ravel()))
        return _outcome(matrix)
    if func == "schema":
        return _outcome(lambda: [_schema_column(c) for c in dfbuffer.schema(make())])
    if func == "to_arrow":
        return _outcome(lambda: _arrow_column(pa.table(dfbuffer.to_arrow(make())).column(0)))
    if func == "to_interchange":
        return _outcome(lambda: _arrow_column(
            pa_interchange.from_dataframe(dfbuffer.to_interchange(make())).column(0)))
    if func == "pandas":
        return _outcome(lambda: _pandas_column(dfb_pandas.from_dataframe(make()).iloc[:, 0]))
    raise AssertionError(func)


def expected(func, case, path, ref):
    """The reference answer as the docs say ``path`` gives it."""
    if ref[0] != "ok":
        return ref
    nan_float = case.null_kind == "nan" and path in PANDAS_STORAGE and case.family.startswith(
        "float")
    kind, (rtype, dtype, mask, vals) = ref if func.split(":")[0] in (
        "from_dataframe", "column_to_ndarray") else (None, (None,) * 4)
    if kind and nan_float:
        nulls = func.split(":")[1]
        filled = [("nan" if m else v) for v, m in zip(vals, mask, strict=True)]
        if nulls == "mask":
            # NaN is the pandas column's null: an ndarray with NaN in it
            return ("ok", ("ndarray", dtype, [False] * len(mask), filled))
        if nulls == "always_mask":
            return ("ok", ("MaskedArray", dtype, [False] * len(mask), filled))
    if func == "schema":
        # the name is the path's (a pyarrow array or ChunkedArray has none); a
        # pandas object column is described as "object" (docs/api.md, "pandas
        # columns"), a mapping's Series as that frame column
        want = [(_key(path), *c[1:]) for c in ref[1]]
        if case.null_kind == "object" and path in PANDAS_STORAGE:
            want = [(n, "object", *c) for n, _, *c in want]
        return ("ok", want)
    return ref


def offered(func, case, path):
    """Whether ``func`` is compared on ``path`` (the documented exceptions)."""
    if func.startswith("column_to_ndarray"):
        return path in SINGLE
    if func == "pandas" and (path in ("pandas.DataFrame", "narwhals[pandas]")
                             or path.startswith("pandas[")):
        return False  # a pandas frame is returned as it is
    if func == "to_matrix:float32" and case.family == "category":
        return False  # the codes: each producer orders its categories
    return True


FUNCS = [*(f"from_dataframe:{n}" for n in NULLS), *(f"column_to_ndarray:{n}" for n in NULLS),
         "to_matrix:fill", "to_matrix:mask", "to_matrix:float32", "to_matrix:skip",
         "schema", "to_arrow", "to_interchange", "pandas"]


def disagreements(func, case):
    got = paths(case)
    ref_path = reference_path(case)
    if func.startswith("column_to_ndarray"):
        ref = answer(func.replace("column_to_ndarray", "from_dataframe"), case, ref_path,
                     got[ref_path])
    elif func == "pandas" and ref_path == "pandas.DataFrame":
        ref = answer(func, case, "pandas.Series", got["pandas.Series"])
    else:
        ref = answer(func, case, ref_path, got[ref_path])
    bad = []
    for path, make in got.items():
        if not offered(func, case, path):
            continue
        want = expected(func, case, path, ref)
        have = answer(func, case, path, make)
        if have != want:
            bad.append((path, have, want))
    return bad


# -- the findings: (case, function) -> the documented rule vs what happens --------

def _findings():
    """(case, function) -> "<the documented rule> vs <what happens>": none open."""
    return {}


def _params():
    found = _findings()
    out = []
    for cname in CASES:
        for func in FUNCS:
            marks = ()
            reason = found.get((cname, func))
            if reason is not None:
                marks = pytest.mark.xfail(strict=True, reason=reason)
            out.append(pytest.param(cname, func, marks=marks, id=f"{cname}-{func}"))
    return out


@pytest.mark.parametrize(("case_name", "func"), _params())
def test_every_path_gives_the_documented_answer(case_name, func):
    bad = disagreements(func, CASES[case_name])
    assert not bad, "\n".join(f"{p}: got {h!r}\n    want {w!r}" for p, h, w in bad)


# -- the property: random values and nulls, the fast paths ------------------------

FAMILIES = {
    "int64": (st.integers(-(2**62), 2**62), pa.int64(), "Int64", "int64"),
    "uint8": (st.integers(0, 255), pa.uint8(), "UInt8", "uint8"),
    "float64": (st.floats(allow_nan=False, width=64), pa.float64(), "Float64", "float64"),
    "float32": (st.floats(allow_nan=False, width=32), pa.float32(), "Float32", "float32"),
    "bool": (st.booleans(), pa.bool_(), "boolean", "bool"),
    "string": (st.text(max_size=4), pa.large_string(), "string[python]", None),
}


# the pandas NumPy families: nulls are the dtype's own marker (NaN, NaT)
NUMPY_FAMILIES = {
    "float64-nan": (st.floats(allow_nan=False, width=64), pa.float64(), "float64"),
    "timestamp": (st.integers(0, 2**50), pa.timestamp("us"), "datetime64[us]"),
}


@st.composite
def columns(draw):
    family = draw(st.sampled_from(sorted(FAMILIES) + sorted(NUMPY_FAMILIES)))
    if family in NUMPY_FAMILIES:
        elems, at, np_dtype = NUMPY_FAMILIES[family]
    else:
        elems, at, masked_dtype, np_dtype = FAMILIES[family]
    n = draw(st.integers(0, 9))
    values = draw(st.lists(elems, min_size=n, max_size=n))
    valid = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    with_nulls = [v if ok else None for v, ok in zip(values, valid, strict=True)]
    numpy = None
    if np_dtype is not None:
        data = np.array(values, dtype=np.int64 if family == "timestamp" else np_dtype)
        data = data.view(np_dtype) if family == "timestamp" else data
        numpy = np.ma.MaskedArray(data, mask=~np.array(valid, dtype=bool))
    if family in NUMPY_FAMILIES:
        arrow = pa.array(np.ma.getdata(numpy), at, mask=~np.array(valid, dtype=bool))
        ser = pd.Series(numpy.filled(np.nan if family == "float64-nan" else
                                     np.datetime64("NaT")), name=NAME)
        kind = "none" if all(valid) else ("nan" if family == "float64-nan" else "sentinel")
        return Case(family.split("-")[0], arrow, ser, numpy, kind,
                    numeric=family == "float64-nan")
    arrow = pa.array(with_nulls, at)
    kind = "none" if all(valid) else "mask"
    ser = pd.Series(pd.array(with_nulls, dtype=masked_dtype), name=NAME)
    return Case(family, arrow, ser, numpy, kind, numeric=np_dtype is not None)


@hypothesis.settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=[hypothesis.HealthCheck.too_slow])
@hypothesis.given(case=columns(), func=st.sampled_from(
    ["from_dataframe:mask", "from_dataframe:fill", "from_dataframe:always_mask",
     "to_matrix:fill", "to_matrix:mask", "schema", "to_arrow", "pandas"]))
def test_random_columns_give_one_answer(case, func):
    try:
        bad = disagreements(func, case)
    finally:
        _PATHS.pop(id(case), None)
    assert not bad, "\n".join(f"{p}: got {h!r}\n    want {w!r}" for p, h, w in bad)
