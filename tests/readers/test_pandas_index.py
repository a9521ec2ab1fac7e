"""dfbuffer.pandas.from_dataframe restores the index that pandas'
metadata in an Arrow schema describes (a range, a named index, a MultiIndex,
an index named like a column) as pyarrow.Table.to_pandas does, and
dfbuffer.from_dataframe returns the same columns whatever the path."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer
import dfbuffer.pandas as dpd

FRAMES = {
    "default": lambda: pd.DataFrame({"x": [1, 2, 3]}),
    "range": lambda: pd.DataFrame({"x": [1, 2, 3]}, index=pd.RangeIndex(10, 16, 2, name="r")),
    "str": lambda: pd.DataFrame({"x": [1, 2, 3]}, index=["a", "b", "c"]),
    "named": lambda: pd.DataFrame({"x": [1, 2, 3]}, index=pd.Index([5, 6, 7], name="k")),
    "like_column": lambda: pd.DataFrame(
        {"x": [1, 2, 3], "k": [4, 5, 6]}, index=pd.Index(["a", "b", "c"], name="k")
    ),
    "multi": lambda: pd.DataFrame(
        {"x": [1, 2, 3]},
        index=pd.MultiIndex.from_arrays([["a", "b", "c"], [1, 2, 3]], names=["k", None]),
    ),
    "tz": lambda: pd.DataFrame(
        {"x": [1.5, 2.5, 3.5]},
        index=pd.date_range("2020-03-29", periods=3, freq="h", tz="Europe/Paris", name="t"),
    ),
    "categorical": lambda: pd.DataFrame(
        {"x": [1, 2, 3]}, index=pd.CategoricalIndex(["a", "b", "a"], name="c")
    ),
}

SOURCES = {
    "Table.from_pandas": pa.Table.from_pandas,
    "pa.table(df)": pa.table,
    "stream of df": pa.RecordBatchReader.from_stream,
}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("frame", list(FRAMES))
def test_index_restored_as_to_pandas(frame, source):
    df = FRAMES[frame]()
    out = dpd.from_dataframe(SOURCES[source](df))
    expect = pa.Table.from_pandas(df).to_pandas()
    pd.testing.assert_frame_equal(out, expect)
    pd.testing.assert_index_equal(out.index, df.index, exact=frame != "range")
    assert list(out.columns) == list(df.columns)


@pytest.mark.parametrize("frame", list(FRAMES))
def test_same_columns_whatever_the_path(frame):
    df = FRAMES[frame]()
    paths = [df, df.__dataframe__(), pa.table(df), pa.Table.from_pandas(df)]
    assert [list(dfbuffer.from_dataframe(p)) for p in paths] == [list(df.columns)] * 4


def test_index_named_like_column_keeps_both():
    df = FRAMES["like_column"]()
    out = dpd.from_dataframe(pa.table(df))
    assert out["k"].tolist() == [4, 5, 6]
    assert out.index.name == "k" and out.index.tolist() == ["a", "b", "c"]


def test_index_zero_copy_and_nullable():
    t = pa.Table.from_pandas(pd.DataFrame({"x": [1, 2, 3]}, index=pd.Index([5, 6, 7], name="k")))
    out = dpd.from_dataframe(t)
    assert np.shares_memory(out.index.to_numpy(), np.asarray(t.column("k").chunk(0)))
    # an integer index with nulls: pandas' nullable Int64, as dfbuffer.pandas gives
    # integer columns with nulls (pyarrow's to_pandas gives float64 there)
    idx = pd.Index(pd.array([1, None, 3], dtype="Int64"), name="n")
    out = dpd.from_dataframe(pa.table(pd.DataFrame({"x": [1, 2, 3]}, index=idx)))
    assert out.index.dtype == "Int64" and out.index.isna().tolist() == [False, True, False]


def test_no_metadata_no_index():
    t = pa.table({"x": [1, 2], "__index_level_0__": [3, 4]})
    out = dpd.from_dataframe(t)
    assert list(out.columns) == ["x", "__index_level_0__"]
    assert isinstance(out.index, pd.RangeIndex)


def test_multiindex_levels_in_metadata_order():
    # index columns stored before the data and out of level order: the levels
    # follow the metadata's index_columns, as in to_pandas
    df = pd.DataFrame(
        {"x": [1, 2]}, index=pd.MultiIndex.from_arrays([["a", "b"], [10, 20]], names=["k1", "k2"])
    )
    meta = pa.Table.from_pandas(df).schema.metadata
    t = pa.table({"k2": [10, 20], "x": [1, 2], "k1": ["a", "b"]}).replace_schema_metadata(meta)
    out = dpd.from_dataframe(t)
    pd.testing.assert_frame_equal(out, t.to_pandas())
    assert out.index.names == ["k1", "k2"] and out.index.tolist() == [("a", 10), ("b", 20)]


def test_index_allow_copy_false():
    t = pa.Table.from_pandas(FRAMES["named"]())
    out = dpd.from_dataframe(t, allow_copy=False)
    assert out.index.name == "k" and out.index.tolist() == [5, 6, 7]
    two = pa.Table.from_batches(t.to_batches() * 2)
    with pytest.raises(RuntimeError, match="copy"):
        dpd.from_dataframe(two, allow_copy=False)


@pytest.mark.parametrize("index", [
    pd.Index([5, 6, 7], name="k"),
    pd.date_range("2020-01-01", periods=3, tz="UTC", name="t"),
    pd.MultiIndex.from_arrays([[1, 2, 3], ["a", "b", "c"]], names=["i", "s"]),
], ids=["Index", "DatetimeIndex", "MultiIndex"])
def test_to_matrix_leaves_out_pandas_index_columns_of_an_arrow_table(index):
    # pa.table(df) holds the index as columns its metadata marks: to_matrix leaves
    # them out, as from_dataframe does, so the matrix is the frame's
    df = pd.DataFrame({"x": [1.5, 2.5, 3.5], "y": [1, 2, 3]}, index=index)
    t = pa.table(df)
    assert len(t.column_names) > 2
    want = dfbuffer.to_matrix(df)
    for src in (t, t.to_reader(), t.to_batches()[0]):
        np.testing.assert_array_equal(dfbuffer.to_matrix(src), want)
    np.testing.assert_array_equal(next(dfbuffer.iter_matrices(t, 3)), want)
