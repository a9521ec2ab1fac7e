"""pandas arrays and Series as a mapping's values: each read as column_to_ndarray reads it
alone, which is the frame column's reading (a Categorical, a tz-aware DatetimeArray, a
masked array, a Period array, and Series of them), through every function that takes a
mapping: from_dataframe, to_arrow, to_interchange, schema and to_matrix."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer

VALUES = {
    "categorical": lambda: pd.Categorical(["a", "b", None, "a"]),
    "categorical_int": lambda: pd.Categorical([1, 2, 1, 2]),
    "datetime_tz": lambda: pd.array(pd.date_range("2020", periods=4, tz="UTC")),
    "datetime_paris": lambda: pd.array(pd.date_range("2020", periods=4, tz="Europe/Paris")),
    "datetime": lambda: pd.array(pd.date_range("2020", periods=4)),
    "timedelta": lambda: pd.array(pd.to_timedelta([1, 2, None, 4], unit="s")),
    "Int64": lambda: pd.array([1, None, 3, 4], dtype="Int64"),
    "boolean": lambda: pd.array([True, None, False, True], dtype="boolean"),
    "string": lambda: pd.array(["a", None, "c", "d"], dtype="string"),
    "period": lambda: pd.period_range("2020", periods=4, freq="D").array,
}
WRAPS = {"array": lambda v: v, "series": lambda v: pd.Series(v)}


def _same(got, want) -> None:
    if isinstance(want, dfbuffer.CategoricalCodes):
        np.testing.assert_array_equal(got.codes, want.codes)
        np.testing.assert_array_equal(got.categories, want.categories)
        return
    assert type(got) is type(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    keep = ~np.ma.getmaskarray(want)
    np.testing.assert_array_equal(np.ma.getdata(got)[keep], np.ma.getdata(want)[keep])


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("kind", sorted(VALUES))
@pytest.mark.parametrize("categorical", ["decode", "codes"])
def test_mapping_value_reads_as_the_frame_column(kind, wrap, categorical):
    value = WRAPS[wrap](VALUES[kind]())
    frame = dfbuffer.from_dataframe(pd.DataFrame({"c": value}), categorical=categorical)["c"]
    _same(dfbuffer.from_dataframe({"c": value}, categorical=categorical)["c"], frame)
    if wrap == "array":
        _same(dfbuffer.column_to_ndarray(value, categorical=categorical), frame)


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("kind", sorted(VALUES))
def test_every_function_takes_the_mapping_value(kind, wrap):
    value = WRAPS[wrap](VALUES[kind]())
    df = pd.DataFrame({"c": value, "x": np.arange(4.0)})
    data = {"c": value, "x": np.arange(4.0)}
    want = dfbuffer.from_dataframe(df)
    sch = dfbuffer.schema(data)
    assert sch.names == ["c", "x"]
    assert sch.columns[0].type == dfbuffer.schema(df).columns[0].type
    if kind != "period":  # the frame's Arrow export gives a Period's ordinals
        _same(dfbuffer.from_dataframe(dfbuffer.to_arrow(data))["c"], want["c"])
        assert pa.table(dfbuffer.to_arrow(data)).column_names == ["c", "x"]
        _same(dfbuffer.from_dataframe(dfbuffer.to_interchange(data))["c"], want["c"])
    # to_matrix: the numbers, and a refused type left out exactly as in the frame
    np.testing.assert_array_equal(dfbuffer.to_matrix(data, on_unsupported="skip"),
                                  dfbuffer.to_matrix(df, on_unsupported="skip"))


def test_to_matrix_takes_a_masked_pandas_array_of_a_mapping():
    data = {"i": pd.array([1, None, 3], dtype="Int64"), "f": np.arange(3.0)}
    got = dfbuffer.to_matrix(data)
    np.testing.assert_array_equal(got, [[1.0, 0.0], [np.nan, 1.0], [3.0, 2.0]])


def test_a_pandas_array_value_is_not_held_after_the_call():
    value = pd.Categorical(["a", "b"])
    ref = weakref.ref(value)
    res = dfbuffer.from_dataframe({"c": value})
    del value
    gc.collect()
    assert res["c"].tolist() == ["a", "b"]
    assert ref() is None


def test_a_pandas_array_in_a_reference_cycle_is_collected():
    class Holder(dict):
        pass

    m = Holder(c=pd.array(pd.date_range("2020", periods=3, tz="UTC")))
    m.self = m
    ref = weakref.ref(m)
    for fn in (dfbuffer.from_dataframe, dfbuffer.to_arrow, dfbuffer.schema):
        fn(m)
    del m
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("wrap", ["series", "array"])
def test_dfbuffer_pandas_keeps_the_zone_of_a_mapping_value(wrap):
    # dfbuffer.pandas reads a mapping's value as the frame column: a tz-aware
    # datetime keeps its zone (the converters give its UTC instants)
    import dfbuffer.pandas

    s = pd.Series(pd.to_datetime(["2020-01-01", None]).tz_localize("UTC")
                  .tz_convert("Asia/Kathmandu"), name="t")
    value = s if wrap == "series" else s.array
    got = dfbuffer.pandas.from_dataframe({"t": value})["t"]
    want = dfbuffer.pandas.from_dataframe(s)["t"]
    assert str(got.dtype) == str(want.dtype) and str(got.dtype).endswith("Asia/Kathmandu]")
    pd.testing.assert_series_equal(got, want)
