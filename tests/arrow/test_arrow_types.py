"""The flat Arrow types beyond numbers, strings and dates, as a table: binary (offsets,
views, fixed size), decimals, times of day, each against pyarrow's own values (to_pylist
is the oracle), plain, sliced, chunked, dictionary-encoded and with nulls; and what
schema(), the report and every entry point say about these types. Each family's own
tests are in tests/kernels (test_strings.py, test_decimal.py, test_temporal.py,
test_run_end.py, test_extension_types.py)."""

from __future__ import annotations

import datetime
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from flat_arrays import D, flat_arrays
from racing import as_list
from run_end_arrays import run_end_encode

import dfbuffer

# decimal32/64, uuid, bool8 and opaque arrive in pyarrow 18; the oldest supported pyarrow
# (16) cannot make these inputs, so the module runs from 18 on
if not hasattr(pa, "decimal32"):
    pytest.skip("pyarrow < 18 cannot build these Arrow types", allow_module_level=True)

def _listed(res) -> list:
    """The values of a result, None where masked or None."""
    return as_list(res)


@pytest.mark.parametrize("name", sorted(flat_arrays()))
def test_values_match_pyarrow(name):
    arr = flat_arrays()[name]
    want = arr.to_pylist()
    assert _listed(dfbuffer.column_to_ndarray(arr)) == want
    got = dfbuffer.from_dataframe(pa.table({name: arr}))[name]
    assert _listed(got) == want
    assert got.dtype == object
    # nulls="fill": None in the null slots of a plain object array
    filled = dfbuffer.column_to_ndarray(arr, nulls="fill")
    assert not isinstance(filled, np.ma.MaskedArray) and filled.tolist() == want


@pytest.mark.parametrize("name", sorted(flat_arrays()))
def test_sliced_and_chunked(name):
    arr = flat_arrays()[name]
    for sl in (arr.slice(1), arr.slice(2, 2), arr.slice(len(arr)), arr.slice(3, 1)):
        assert _listed(dfbuffer.column_to_ndarray(sl)) == sl.to_pylist()
    ch = pa.chunked_array([arr.slice(1, 2), arr.slice(0, 1), arr.slice(3)])
    assert _listed(dfbuffer.column_to_ndarray(ch)) == ch.to_pylist()
    t = pa.table({"c": ch})
    assert _listed(dfbuffer.from_dataframe(t)["c"]) == ch.to_pylist()


@pytest.mark.parametrize(
    "name", ["binary", "large_binary", "fixed_size_binary", "decimal128", "time64us"]
)
def test_dictionary_encoded(name):
    arr = flat_arrays()[name]
    enc = arr.dictionary_encode()
    assert _listed(dfbuffer.column_to_ndarray(enc)) == arr.to_pylist()
    assert _listed(dfbuffer.column_to_ndarray(enc.slice(1, 3))) == arr.slice(1, 3).to_pylist()
    codes = dfbuffer.column_to_ndarray(enc, categorical="codes")
    assert _listed(codes.codes) == enc.indices.to_pylist()


def test_polars_binary_decimal_time():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(
        {
            "b": pl.Series([b"ab", None, b""], dtype=pl.Binary),
            "d": pl.Series([D("1.50"), None, D("-2.25")], dtype=pl.Decimal(10, 2)),
            "t": pl.Series([datetime.time(1, 2, 3), None, datetime.time(23, 59, 59, 999999)]),
        }
    )
    got = dfbuffer.from_dataframe(df)
    assert _listed(got["b"]) == [b"ab", None, b""]
    assert _listed(got["d"]) == [D("1.50"), None, D("-2.25")]
    assert _listed(got["t"]) == df["t"].to_list()


def _plain(res) -> list:
    """A result's values, None where masked (any dtype)."""
    mask = np.ma.getmaskarray(res).tolist()
    return [None if m else v for v, m in zip(np.ma.getdata(res).tolist(), mask, strict=True)]


# ---------------------------------------------------------------------------
# what schema(), the report and the entry points say about every type here


def test_schema_reports_parameters():
    t = pa.table(
        {
            "d": pa.array([1], pa.decimal64(12, 3)),
            "w": pa.array([b"ab"], pa.binary(2)),
            "i": pa.array([(1, 2, 3)], pa.month_day_nano_interval()),
            "r": run_end_encode([1], pa.int16()),
            "t": pa.array([1], pa.time64("ns")),
            "u": pa.array([bytes(16)], pa.uuid()),
            "b8": pa.array([1], pa.int8()).cast(pa.bool8()),
        }
    )
    s = dfbuffer.schema(t)
    assert (s["d"].type, s["d"].bits, s["d"].precision, s["d"].scale) == ("decimal", 64, 12, 3)
    assert (s["w"].type, s["w"].byte_width) == ("binary", 2)
    assert (s["i"].type, s["i"].unit) == ("interval", "month_day_nano")
    assert (s["r"].type, s["r"].bits, s["r"].values.type) == ("run_end", 16, "int")
    assert (s["t"].type, s["t"].unit) == ("time", "ns")
    assert (s["u"].extension_name, s["u"].byte_width) == ("arrow.uuid", 16)
    assert (s["b8"].type, s["b8"].extension_name) == ("bool", "arrow.bool8")
    assert repr(s).splitlines()[1:] == [
        "d: decimal64(12, 3)",
        "w: binary[2]",
        "i: interval[month_day_nano]",
        "r: run_end[int16, int64]",
        "t: time[ns]",
        "u: arrow.uuid<binary[16]>",
        "b8: arrow.bool8<bool>",
    ]


def test_pandas_frontend_object_columns():
    import pandas as pd

    import dfbuffer.pandas

    t = pa.table(
        {
            "b": pa.array([b"a", None], pa.binary()),
            "d": pa.array([D("1.5"), None], pa.decimal128(5, 1)),
            "t": pa.array([datetime.time(1), None]),
            "r": run_end_encode([1, 1]),
        }
    )
    df = dfbuffer.pandas.from_dataframe(t)
    assert df["b"].tolist() == [b"a", None]
    assert df["d"].tolist() == [D("1.5"), None]
    assert df["t"].tolist() == [datetime.time(1), None]
    assert df["r"].tolist() == [1, 1]
    assert isinstance(df, pd.DataFrame)


def test_report_lists_the_type_table():
    from dfbuffer import _interchange
    from dfbuffer._report import _arrow_types

    rows = {t["type"]: t for t in _arrow_types(_interchange)}
    # one line per type of the table, the extension row one per recognised extension
    assert len(rows) == len(_interchange._arrow_types()) - 1 + 4
    assert rows["decimal"]["reads"] and not rows["decimal"]["zero_copy"]
    assert rows["interval (months, days, ns)"]["zero_copy"]
    assert rows["run-end encoded"]["converts"] == "kernel"
    assert rows["int"]["zero_copy"] and rows["binary view"]["reads"]
    assert rows["list"]["reads"] and rows["fixed-size list"]["zero_copy"]


def test_on_unsupported_skip_lets_the_rest_through():
    # a dictionary whose values are run-end encoded: not read (yet)
    bad = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()), run_end_encode([5, 6]))
    t = pa.table({"a": [1, 2], "bad": bad, "d": pa.array([D("1.5"), None])})
    with pytest.raises(NotImplementedError, match=r"column 'bad'.*\+r"):
        dfbuffer.from_dataframe(t)
    got = dfbuffer.from_dataframe(t, on_unsupported="skip")
    assert list(got) == ["a", "d"] and _plain(got["d"]) == [D("1.5"), None]
    # other errors still raise
    ns = pa.table({"t": pa.array([1500], pa.time64("ns"))})
    with pytest.raises(ValueError, match="column 't'"):
        dfbuffer.from_dataframe(ns, on_unsupported="skip")
    with pytest.raises(ValueError, match="on_unsupported"):
        dfbuffer.from_dataframe(t, on_unsupported="ignore")


@pytest.mark.parametrize(
    ("col", "what"),
    [
        (pa.array([b"a"]), "binary"),
        (pa.array([(1, 2, 3)], pa.month_day_nano_interval()), "interval"),
        (pa.array([D("1.5")]), "decimal"),
        (pa.array([1], pa.time32("s")), "time"),
        (pc.run_end_encode(pa.array(["s"])), "run-end encoded"),
    ],
)
def test_to_matrix_refuses_naming_the_column(col, what):
    t = pa.table({"ok": [1], "bad": col})
    for dtype in (None, "f8"):
        with pytest.raises(TypeError, match=f"column 'bad'.*{what}"):
            dfbuffer.to_matrix(t, dtype=dtype)


def test_interchange_view_serves_the_other_columns():
    # the interchange protocol has no dtype for these: NotImplementedError when used
    t = pa.table(
        {
            "b": pa.array([b"a", None]),
            "d": pa.array([D("1.5"), None]),
            "i": pa.array([(1, 2, 3), None], pa.month_day_nano_interval()),
            "r": run_end_encode(["a", "a"]),  # strings: not decoded into the view
            "x": [1, 2],
        }
    )
    ix = dfbuffer.to_interchange(t)
    for k, fmt in enumerate(["z", "d:2,1", "tin", "+r"]):
        with pytest.raises(NotImplementedError, match=re.escape(f"'{fmt}'")):
            _ = ix.get_column(k).dtype
    assert ix.get_column(4).dtype[1] == 64


def test_duckdb_frame_of_these_types():
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    query = (
        "select 'ab'::blob as b, 1.25::decimal(10,2) as d, time '01:02:03.5' as t, "
        "interval 3 day as i, 12345678901234567890.5::decimal(38,1) as d38 "
        "union all select null, null, null, null, null"
    )
    got = dfbuffer.from_dataframe(con.sql(query))
    assert _plain(got["b"]) == [b"ab", None]
    assert _plain(got["d"]) == [D("1.25"), None]
    assert _plain(got["t"]) == [datetime.time(1, 2, 3, 500000), None]
    assert _plain(got["d38"]) == [D("12345678901234567890.5"), None]
    assert got["i"].dtype.names == ("months", "days", "nanoseconds")
    assert tuple(got["i"].data[0]) == (0, 3, 0) and got["i"].mask[1]["days"]


def test_columns_selects_by_name_everywhere():
    import pandas as pd

    t = pa.table({"a": [1, 2], "b": ["x", "y"], "c": pa.array([[1], [2]])})
    frames = {
        "pyarrow": t,
        "pandas": pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}),
        "interchange": pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}).__dataframe__(),
    }
    try:  # optional: polars has no free-threaded wheel
        import polars as pl
    except ImportError:
        pass
    else:
        frames["polars"] = pl.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [[1], [2]]})
    for path, frame in frames.items():
        got = dfbuffer.from_dataframe(frame, columns=["b", "a"])
        assert list(got) == ["b", "a"], path
        assert got["a"].tolist() == [1, 2] and got["b"].tolist() == ["x", "y"], path
        with pytest.raises(KeyError, match="zz"):
            dfbuffer.from_dataframe(frame, columns=["a", "zz"])
    with pytest.raises(TypeError, match="not a single string"):
        dfbuffer.from_dataframe(t, columns="a")
    assert dfbuffer.schema(t, columns=["b", "a"]).names == ["b", "a"]
    with pytest.raises(KeyError, match="zz"):
        dfbuffer.schema(t, columns=["zz"])
    assert list(dfbuffer.to_interchange(t, columns=["b"]).column_names()) == ["b"]
    assert pa.table(dfbuffer.to_arrow(t, columns=["a"])).column_names == ["a"]
