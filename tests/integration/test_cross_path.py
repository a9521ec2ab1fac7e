"""One answer per column, whatever the path: the same logical data built
through every producer dfbuffer reads gives the same result.

Types: ints, floats, bools, strings, naive and tz-aware datetimes,
categoricals, each with and without nulls. Paths: a pandas frame with each
index kind, pandas' ``__dataframe__`` object, pandas' Arrow export
(``pa.table(df)``), a pyarrow table built directly, polars, DuckDB (when
installed), the ``to_interchange`` view, ``to_arrow`` and back, and a dict
of arrays (when ``from_dataframe`` takes one).

The rule (docs/api.md, "pandas columns"): in ``nulls="fill"`` mode every path
gives the same ndarray (type, dtype, values, NaN/NaT/None in the null slots).
In ``"mask"`` mode every path gives the same result too, except that a
pandas float column stored as NumPy float64 keeps NaN as its null marker (an
ndarray with NaN, zero-copy) where Arrow producers, which state nulls in a
bitmap, give a MaskedArray: the two agree once filled with NaN.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

KINDS = ["int64", "float64", "bool", "string", "datetime", "category", "tz"]
INDEX_KINDS = ["range", "index", "datetime", "multi", "duplicated"]


def _index(kind: str, n: int):
    return {
        "range": lambda: pd.RangeIndex(n),
        "index": lambda: pd.Index(np.arange(n) * 3 + 1),
        "datetime": lambda: pd.date_range("2021-01-01", periods=n, freq="h"),
        "multi": lambda: pd.MultiIndex.from_arrays([np.arange(n) % 3, np.arange(n)]),
        "duplicated": lambda: pd.Index(np.zeros(n, dtype=np.int64)),
    }[kind]()


def _arrow_type(kind: str):
    return {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
            "string": pa.large_string(), "datetime": pa.timestamp("us"),
            "tz": pa.timestamp("us", "Asia/Kathmandu")}[kind]


def _pandas_series(kind: str, values: list, valid: list[bool]):
    """The pandas column users make for these values: NumPy when there is no
    null (and for floats, whose null is NaN, and datetimes, NaT), pandas'
    nullable dtypes otherwise."""
    vals = [v if ok else None for v, ok in zip(values, valid, strict=True)]
    if kind == "float64":
        return pd.Series([np.nan if v is None else v for v in vals], dtype="float64")
    if kind == "datetime":
        return pd.Series(np.array([np.datetime64("NaT") if v is None else v for v in vals],
                                  dtype="datetime64[us]"))
    if kind == "string":
        return pd.Series(vals, dtype="string[python]" if not all(valid) else "str")
    if kind == "category":
        cats = pd.Index(sorted({v for v in vals if v is not None}), dtype="str")
        return pd.Series(pd.Categorical(vals, categories=cats))
    if kind == "tz":
        utc = pd.Series(np.array([np.datetime64("NaT") if v is None else v for v in vals],
                                 dtype="datetime64[us]"))
        return utc.dt.tz_localize("UTC").dt.tz_convert("Asia/Kathmandu")
    if all(valid):
        return pd.Series(vals, dtype={"int64": "int64", "bool": "bool"}[kind])
    return pd.Series(vals, dtype={"int64": "Int64", "bool": "boolean"}[kind])


@st.composite
def tables(draw):
    n = draw(st.integers(0, 12))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=4))
    cols = {}
    for j, kind in enumerate(kinds):
        elems = {
            "int64": st.integers(-(2**62), 2**62),
            "float64": st.floats(allow_nan=False, width=64),
            "bool": st.booleans(),
            "string": st.text(max_size=5),
            "datetime": st.integers(0, 2**50).map(
                lambda us: np.datetime64(us, "us")),
            "tz": st.integers(0, 2**50).map(lambda us: np.datetime64(us, "us")),
            "category": st.sampled_from(["a", "b", "ccc"]),
        }[kind]
        values = draw(st.lists(elems, min_size=n, max_size=n))
        valid = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        cols[f"c{j}_{kind}"] = (kind, values, valid)
    return cols


def _arrow_table(cols):
    arrays = {}
    for name, (kind, values, valid) in cols.items():
        vals = [v if ok else None for v, ok in zip(values, valid, strict=True)]
        if kind in ("datetime", "tz"):
            vals = [None if v is None else int(v.astype("int64")) for v in vals]
            arrays[name] = pa.array(vals, pa.int64()).cast(_arrow_type(kind))
        elif kind == "category":
            arrays[name] = pa.array(vals, pa.string()).dictionary_encode()
        else:
            arrays[name] = pa.array(vals, _arrow_type(kind))
    return pa.table(arrays)


def _pandas_frame(cols, index_kind):
    n = len(next(iter(cols.values()))[1])
    df = pd.DataFrame({name: _pandas_series(*spec) for name, spec in cols.items()})
    return df.set_axis(_index(index_kind, n))


def _is_pandas_nan_float(cols, name):
    kind = cols[name][0]
    return kind == "float64"


def _norm(res, nulls: str, *, nan_float: bool):
    """A comparable form: (type name, dtype, mask, values at the valid
    slots).  A pandas NaN float in "mask" mode is compared as its filled
    form, the documented difference."""
    if nan_float and nulls == "mask" and isinstance(res, np.ma.MaskedArray):
        res = res.filled(np.nan)
    mask = np.ma.getmaskarray(res)
    data = np.ma.getdata(res)
    vals = [None if m else (v if not isinstance(v, float) or v == v else "nan")
            for v, m in zip(data.tolist(), mask.tolist(), strict=True)]
    if data.dtype.kind == "M":
        vals = [None if m else int(v) for v, m in zip(
            data.view("int64").tolist(), mask.tolist(), strict=True)]
        vals = [("NaT" if v == np.iinfo(np.int64).min else v) if v is not None else None
                for v in vals]
    return (type(res).__name__, str(data.dtype), mask.tolist(), vals)


_DUCKDB = []


def _duckdb_connection(duckdb):
    """One in-memory DuckDB connection for the module (connecting costs more than a query of
    these small tables); each path registers its table and unregisters it after."""
    if not _DUCKDB:
        _DUCKDB.append(duckdb.connect())
    return _DUCKDB[0]


def _paths(cols, index_kind):
    """name -> thunk giving the from_dataframe input for one path."""
    import dfbuffer as d

    df = _pandas_frame(cols, index_kind)
    table = _arrow_table(cols)
    paths = {
        f"pandas[{index_kind}]": lambda: df,
        "pandas.__dataframe__": lambda: _quiet(df.__dataframe__),
        "pa.table(pandas)": lambda: pa.table(df.reset_index(drop=True)),
        "pyarrow": lambda: table,
        "to_interchange(pyarrow)": lambda: d.to_interchange(table),
        "to_arrow(pyarrow)": lambda: d.to_arrow(table),
        "to_arrow(pandas)": lambda: d.to_arrow(df),
        "to_interchange(pandas)": lambda: d.to_interchange(df),
    }
    try:
        import polars as pl

        paths["polars"] = lambda: pl.from_arrow(table)
    except ImportError:
        pass
    try:
        import duckdb

        def _duck():
            con = _duckdb_connection(duckdb)
            con.register("t", table)
            try:
                rel = con.sql("select * from t")
                return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
            finally:
                con.unregister("t")

        paths["duckdb"] = _duck
    except ImportError:
        pass
    return paths


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn()


def _dict_path(table):
    """A dict of arrays, when from_dataframe takes one (else None)."""
    arrays = dfbuffer.from_dataframe(table, nulls="mask")
    try:
        dfbuffer.from_dataframe({k: v for k, v in arrays.items()})
    except TypeError:
        return None
    return arrays


def _check_all_paths(cols, index_kind, nulls):
    paths = _paths(cols, index_kind)
    ref_name = "pyarrow"
    results = {}
    for name, make in paths.items():
        src = make()
        results[name] = _quiet(lambda s=src: dfbuffer.from_dataframe(s, nulls=nulls))
    d = _dict_path(paths["pyarrow"]())
    if d is not None:
        results["dict"] = dfbuffer.from_dataframe(d, nulls=nulls)
    ref = results[ref_name]
    assert list(ref) == list(cols)
    for path, got in results.items():
        assert list(got) == list(cols), path
        for col in cols:
            nan_float = _is_pandas_nan_float(cols, col)
            want = _norm(ref[col], nulls, nan_float=nan_float)
            have = _norm(got[col], nulls, nan_float=nan_float)
            assert have == want, (path, col, have, want)
            # the documented rule for a pandas NumPy float in "mask" mode
            if nan_float and path.startswith("pandas") and nulls == "mask":
                assert type(got[col]) is np.ndarray, (path, col)
    return results


@hypothesis.settings(max_examples=40, deadline=None,
                     suppress_health_check=[hypothesis.HealthCheck.too_slow])
@hypothesis.given(cols=tables(), index_kind=st.sampled_from(INDEX_KINDS),
                  nulls=st.sampled_from(["mask", "fill"]))
def test_every_path_gives_the_same_columns(cols, index_kind, nulls):
    _check_all_paths(cols, index_kind, nulls)


@pytest.mark.parametrize("index_kind", INDEX_KINDS)
def test_zero_copy_where_the_rule_says(index_kind):
    # a pandas NumPy column is its block's memory, whatever the index; a
    # pyarrow column without nulls is its buffer's
    cols = {"i": ("int64", [1, 2, 3], [True] * 3), "f": ("float64", [1.0, 2.0, 3.0],
                                                        [True, False, True]),
            "b": ("bool", [True, False, True], [True] * 3)}
    df = _pandas_frame(cols, index_kind)
    out = dfbuffer.from_dataframe(df)
    for name in cols:
        assert np.shares_memory(out[name], df[name].to_numpy()), name
    table = _arrow_table(cols)
    got = dfbuffer.from_dataframe(table)
    addr = table.column("i").chunk(0).buffers()[1].address
    assert got["i"].__array_interface__["data"][0] == addr


@pytest.mark.parametrize("index_kind", INDEX_KINDS)
def test_the_examples_of_the_rule(index_kind):
    cols = {"x": ("float64", [1.5, 0.0, 3.0], [True, False, True]),
            "b": ("bool", [True, False, True], [True] * 3)}
    res = _check_all_paths(cols, index_kind, "mask")
    assert type(res[f"pandas[{index_kind}]"]["x"]) is np.ndarray
    assert isinstance(res["pyarrow"]["x"], np.ma.MaskedArray)
    for path, out in res.items():
        assert type(out["b"]) is np.ndarray, path


def _several_dtypes(index_kind: str):
    n = 3
    cols = {
        "i": [1, 2, 3], "f": [1.5, np.nan, 3.0], "b": [True, False, True],
        "I": pd.array([1, None, 3], dtype="Int64"), "u": np.array([1, 2, 3], dtype=np.uint8),
        "s": pd.Series(["a", None, "c"], dtype="str"),
        "S": pd.array(["a", None, "c"], dtype="string[python]"),
        "t": pd.to_datetime(["2020-01-01", None, "2020-01-03"]).as_unit("us"),
        "z": pd.to_datetime(["2020-01-01"] * n).tz_localize("UTC").tz_convert("Asia/Kathmandu"),
        "c": pd.Categorical(["a", "b", None], ordered=True),
    }
    if int(pd.__version__.split(".")[0]) < 3:
        # pandas 2's "str" is object dtype: the frame holds Python objects, which
        # pa.table infers as strings, so the paths rightly differ there ("S" stays)
        del cols["s"]
    return pd.DataFrame(cols, index=_index(index_kind, n))


@pytest.mark.parametrize("index_kind", INDEX_KINDS)
def test_schema_is_the_same_on_every_path(index_kind):
    # schema() of the pandas frame, pandas' interchange object (read as the frame
    # behind it), pandas' Arrow export and the to_interchange view: one answer
    df = _several_dtypes(index_kind)
    want = dfbuffer.schema(df)
    assert want.names == list(df.columns)
    paths = {
        "interchange": _quiet(df.__dataframe__),
        "pa.table": pa.table(df.reset_index(drop=True)),
        "to_interchange": dfbuffer.to_interchange(df),
    }
    for path, src in paths.items():
        got = dfbuffer.schema(src)
        assert got.names == want.names, path
        for a, b in zip(got, want, strict=True):
            assert dataclasses.replace(a, metadata={}) == dataclasses.replace(b, metadata={}), (
                path, a, b)
    # the interchange object's answer is the frame's, metadata included
    assert dfbuffer.schema(paths["interchange"]) == want
    # and it names what from_dataframe returns, through every path
    for src in (df, *paths.values()):
        assert list(_quiet(lambda s=src: dfbuffer.from_dataframe(s))) == want.names
