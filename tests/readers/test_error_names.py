"""Per-column errors of from_dataframe name the column, on every path (pandas' own frame,
Arrow producers, interchange objects), with the count's number agreeing; a pandas Series
keeps its name as the key."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer


def _frames(values):
    """The same one-column frame 'x' through each path from_dataframe takes."""
    df = pd.DataFrame({"x": values})
    frames = {
        "pandas": df,
        "pandas-interchange": df.__dataframe__(),
        "pyarrow": pa.table({"x": pa.array(values, from_pandas=True)}),
    }
    try:  # optional: polars has no free-threaded wheel
        import polars as pl
    except ImportError:
        return frames
    frames["polars"] = pl.DataFrame({"x": pl.Series(values, nan_to_null=True)})
    return frames


@pytest.mark.parametrize("categorical", ["decode", "codes"])
@pytest.mark.parametrize("strings", ["object", "stringdtype"])
@pytest.mark.parametrize(
    ("values", "count"), [([1.0, None, 3.0], "1 null value "), ([None, 2.0, None], "2 null values")]
)
def test_nulls_raise_names_the_column(values, count, categorical, strings):
    for path, frame in _frames(values).items():
        with pytest.raises(ValueError) as info:
            dfbuffer.from_dataframe(frame, nulls="raise", categorical=categorical, strings=strings)
        assert str(info.value) == f"column 'x' has {count.strip()} (nulls='raise')", path


@pytest.mark.parametrize(
    "frame",
    [
        pd.DataFrame({"a": [1, 2], "c": pd.Categorical(["u", None])}),
        pa.table({"a": [1, 2], "c": pa.array(["u", None]).dictionary_encode()}),
    ],
)
def test_categorical_codes_raise_names_the_column(frame):
    with pytest.raises(ValueError, match=r"^column 'c' has 1 null value \(nulls='raise'\)$"):
        dfbuffer.from_dataframe(frame, nulls="raise", categorical="codes")


def test_pandas_datetime_and_masked_columns_name_the_column():
    df = pd.DataFrame(
        {"ok": [1, 2], "t": pd.to_datetime(["2020", None]), "i": pd.array([1, None], "Int64")}
    )
    with pytest.raises(ValueError, match="^column 't' has 1 null value "):
        dfbuffer.from_dataframe(df, nulls="raise")
    with pytest.raises(ValueError, match="^column 'i' has 1 null value "):
        dfbuffer.from_dataframe(df[["ok", "i"]], nulls="raise")


def test_other_column_errors_name_the_column():
    with pytest.raises(RuntimeError, match="^column 's': .*allow_copy=False"):
        dfbuffer.from_dataframe(pa.table({"n": [1], "s": ["a"]}), allow_copy=False)
    with pytest.raises(ValueError, match="^column 'y' has 1 null value, which the requested"):
        dfbuffer.to_matrix(pa.table({"x": [1], "y": [None]}), dtype=np.int64)


def test_null_count_of_one_reads_singular_without_a_name():
    with pytest.raises(ValueError, match=r"^the column has 1 null value \(nulls='raise'\)$"):
        dfbuffer.column_to_ndarray(pa.array([1, None]), nulls="raise")


@pytest.mark.skipif(not hasattr(pd.Series, "__arrow_c_stream__"),
                    reason="a pandas Series speaks Arrow from pandas 3 on")
def test_pandas_series_keeps_its_name():
    assert list(dfbuffer.from_dataframe(pd.Series([1, 2], name="a"))) == ["a"]
    assert list(dfbuffer.from_dataframe(pd.Series([1.5], name=3))) == ["3"]
    got = dfbuffer.from_dataframe(pd.Series(["p", None], name="s"), nulls="fill")
    assert list(got) == ["s"] and got["s"].tolist() == ["p", None]
    assert dfbuffer.schema(pd.Series([1], name="a")).names == ["a"]


@pytest.mark.skipif(not hasattr(pd.Series, "__arrow_c_stream__"),
                    reason="a pandas Series speaks Arrow from pandas 3 on")
def test_errors_about_a_series_name_it():
    s = pd.Series([1.5, None], name="price", dtype="Float64")
    with pytest.raises(ValueError, match=r"^column 'price' has 1 null value \(nulls='raise'\)$"):
        dfbuffer.from_dataframe(s, nulls="raise")
    # unnamed: the message names no column, as for a pyarrow array
    with pytest.raises(ValueError, match=r"^the column has 1 null value \(nulls='raise'\)$"):
        dfbuffer.from_dataframe(pd.Series([1.5, None], dtype="Float64"), nulls="raise")
    with pytest.raises(ValueError, match=r"^the column has 1 null value"):
        dfbuffer.from_dataframe(pa.chunked_array([[1, None]]), nulls="raise")


@pytest.mark.skipif(not hasattr(pd.Series, "__arrow_c_stream__"),
                    reason="a pandas Series speaks Arrow from pandas 3 on")
def test_series_name_that_cannot_be_a_str():
    class Name:
        def __str__(self):
            raise RuntimeError("no str")

        def __hash__(self):
            return 1

    s = pd.Series([1.5, None], name=Name(), dtype="Float64")
    with pytest.raises(RuntimeError, match="no str"):
        dfbuffer.from_dataframe(s)
    # a Series is read as its one-column frame: the names first, so the
    # name's own error wins over any conversion error
    with pytest.raises(RuntimeError, match="no str"):
        dfbuffer.from_dataframe(s, nulls="raise")


@pytest.mark.skipif(not hasattr(pd.Series, "__arrow_c_stream__"),
                    reason="a pandas Series speaks Arrow from pandas 3 on")
def test_unnamed_series_is_keyed_by_the_empty_string():
    # as a pyarrow array, or a polars Series named "", whose Arrow field has no name
    assert list(dfbuffer.from_dataframe(pd.Series([1, 2]))) == [""]
    assert list(dfbuffer.from_dataframe(pa.chunked_array([[1, 2]]))) == [""]
    assert dfbuffer.schema(pd.Series([1])).names == [""]
    assert repr(dfbuffer.schema(pd.Series([1]))).splitlines()[1] == "'': int64"
