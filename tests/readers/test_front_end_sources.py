"""dfbuffer.pandas reads a frame as the frame-source table (src/_interchange/readers/
frame_source.c) says, like every other function: for each kind of source (a pandas frame
with an index other than a RangeIndex, pandas' interchange object, a pyarrow table, a
polars frame, an interchange-only object, a mapping of arrays) the pandas front end's
frame holds the columns, dtypes, values and nulls that from_dataframe, to_matrix, schema
and to_arrow give for the same source."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

try:
    import polars as pl
except ImportError:  # no free-threaded wheel: the polars case skips
    pl = None

import dfbuffer
import dfbuffer.pandas as dpd
from dfbuffer._interchange import _frame_source

NAMES = ["x", "i", "b", "n"]
FLOATS = [1.5, float("nan"), 3.0]  # a NaN value, not a null
INTS = [1, 2, 3]
BOOLS = [True, False, True]
NULLABLE = [1, None, 3]  # an integer null


class _InterchangeOnly:
    """An interchange-only producer (no Arrow interface, no mapping)."""

    def __init__(self, df):
        self._df = df

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self._df


def _table():
    return pa.table({"x": FLOATS, "i": INTS, "b": BOOLS, "n": NULLABLE})


def _pandas(index):
    nullable = pd.array(NULLABLE, dtype="Int64")
    return pd.DataFrame({"x": FLOATS, "i": INTS, "b": BOOLS, "n": nullable}, index=index)


def _sources():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas deprecates its __dataframe__
        pandas_ix = _pandas(pd.Index([10, 20, 30])).__dataframe__()
    got = {
        "pandas, DatetimeIndex": (_pandas(pd.date_range("2024-01-01", periods=3)), "pandas"),
        "pandas, MultiIndex": (
            _pandas(pd.MultiIndex.from_arrays([["a", "a", "b"], [1, 2, 1]])), "pandas"),
        "pandas interchange object": (pandas_ix, "pandas"),
        "pyarrow table": (_table(), "arrow"),
        "interchange object": (_InterchangeOnly(_table().__dataframe__()), "interchange"),
        "mapping": ({"x": np.array(FLOATS), "i": np.array(INTS), "b": np.array(BOOLS),
                     "n": np.ma.MaskedArray([1, 0, 3], mask=[False, True, False])},
                    "mapping"),
    }
    if pl is not None:
        frame = pl.DataFrame({"x": np.array(FLOATS), "i": INTS, "b": BOOLS, "n": NULLABLE})
        got["polars"] = (frame, "arrow")
    return got


SOURCES = sorted(_sources())


def _nan_equal(a, b):
    np.testing.assert_array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


@pytest.mark.parametrize("name", SOURCES)
def test_front_end_reads_each_source_as_the_table_names_it(name):
    obj, kind = _sources()[name]
    assert _frame_source(obj)[0] == kind
    front = dpd.from_dataframe(obj)
    assert list(front.columns) == NAMES
    cols = dfbuffer.from_dataframe(obj)
    assert list(cols) == NAMES
    for c in ("x", "i", "b"):
        assert type(cols[c]) is np.ndarray
        assert front[c].dtype == cols[c].dtype, c
        _nan_equal(front[c].to_numpy(), cols[c])
    # the integer null: a mask in from_dataframe, pandas' nullable Int64 in the front end
    assert isinstance(cols["n"], np.ma.MaskedArray)
    assert front["n"].dtype == pd.Int64Dtype()
    np.testing.assert_array_equal(front["n"].isna().to_numpy(), np.ma.getmaskarray(cols["n"]))
    assert front["n"].dropna().tolist() == cols["n"].compressed().tolist() == [1, 3]


@pytest.mark.parametrize("name", SOURCES)
def test_front_end_frame_agrees_with_every_function(name):
    obj, _ = _sources()[name]
    front = dpd.from_dataframe(obj)
    # to_matrix: the same matrix from the source and from the front end's frame
    _nan_equal(dfbuffer.to_matrix(obj), dfbuffer.to_matrix(front))
    _nan_equal(dfbuffer.to_matrix(obj)[:, 0], front["x"].to_numpy())
    # schema: the same columns, types and widths
    sch, fsch = dfbuffer.schema(obj), dfbuffer.schema(front)
    assert sch.names == fsch.names == NAMES
    assert [(c.type, c.bits if c.type != "bool" else None) for c in sch.columns] == [
        (c.type, c.bits if c.type != "bool" else None) for c in fsch.columns]
    # to_arrow: the same Arrow types and values (NaN and null both read back as NaN)
    t, ft = pa.table(dfbuffer.to_arrow(obj)), pa.table(dfbuffer.to_arrow(front))
    assert t.column_names == ft.column_names == NAMES
    assert t.schema.types == ft.schema.types
    for c in NAMES:
        _nan_equal(t.column(c).to_numpy(zero_copy_only=False),
                   ft.column(c).to_numpy(zero_copy_only=False))
    assert t.column("n").null_count == ft.column("n").null_count == 1


def test_front_end_returns_a_pandas_frame_as_it_is():
    df = _pandas(pd.date_range("2024-01-01", periods=3))
    assert dpd.from_dataframe(df) is df

    class Sub(pd.DataFrame):
        pass

    sub = Sub({"a": [1, 2]})
    assert dpd.from_dataframe(sub) is sub


def test_front_end_mapping_is_zero_copy_where_from_dataframe_is():
    x = np.arange(5.0)
    front = dpd.from_dataframe({"x": x})
    assert np.shares_memory(front["x"].to_numpy(), x)
    assert np.shares_memory(dfbuffer.from_dataframe({"x": x})["x"], x)


def test_front_end_refuses_what_the_table_refuses():
    with pytest.raises(TypeError, match="expects"):
        dpd.from_dataframe(3)
    with pytest.raises(TypeError):
        dpd.from_dataframe(pa.schema([("a", pa.int8())]))  # a schema, no data
    with pytest.raises(TypeError):
        dfbuffer.from_dataframe(pa.schema([("a", pa.int8())]))
    if pl is not None:
        with pytest.raises(TypeError, match=r"\.collect\(\)"):
            dpd.from_dataframe(pl.LazyFrame({"a": [1]}))
        with pytest.raises(TypeError, match=r"\.collect\(\)"):
            dfbuffer.from_dataframe(pl.LazyFrame({"a": [1]}))


def test_front_end_honours_allow_copy_of_pandas_interchange_object():
    # pandas' interchange object made with allow_copy=False: the table answers with the
    # frame behind it and no copies allowed, which the front end keeps
    df = pd.DataFrame({"x": [1.0, 2.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ix = df.__dataframe__(allow_copy=False)
    kind, frame, may_copy = _frame_source(ix)
    assert (kind, may_copy) == ("pandas", False) and isinstance(frame, pd.DataFrame)
    front = dpd.from_dataframe(ix)
    np.testing.assert_array_equal(front["x"].to_numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(dfbuffer.from_dataframe(ix)["x"], [1.0, 2.0])
