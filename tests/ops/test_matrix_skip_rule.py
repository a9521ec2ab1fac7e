"""to_matrix's one rule of the columns it takes: on_unsupported="skip" leaves out exactly
the columns that "raise" refuses (TypeError naming them), for every type family the
suite builds, through pyarrow, polars and pandas, with and without dtype= and
decimals="float64"; run-end encoded columns are judged and read by their values."""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from flat_arrays import flat_arrays
from run_end_arrays import run_end_array

import dfbuffer

N = 4


def _ree(values: pa.Array) -> pa.Array:
    return run_end_array([1, 3, N], values)


# one Arrow column of each type family, N rows (a null in most)
ARROW_COLUMNS = {
    "null": pa.nulls(N),
    "bool": pa.array([True, None, False, True]),
    "int8": pa.array([1, None, -3, 4], pa.int8()),
    "uint64": pa.array([1, 2, None, 4], pa.uint64()),
    "float16": pa.array(np.array([0.5, 1.5, 2.5, 3.5], np.float16)),
    "float64": pa.array([0.5, None, 2.5, 3.5]),
    "string": pa.array(["a", None, "c", "d"]),
    "large_string": pa.array(["a", "b", "c", None], pa.large_string()),
    "string_view": pa.array(["a", "b", "c", "d"], pa.string_view()),
    "binary": pa.array([b"a", b"b", None, b"d"]),
    "fixed_binary": pa.array([b"ab", b"cd", b"ef", b"gh"], pa.binary(2)),
    "decimal": pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("-2"),
                         decimal.Decimal("3")], pa.decimal128(5, 1)),
    "date32": pa.array([datetime.date(2020, 1, d) for d in range(1, N + 1)]),
    "timestamp": pa.array([1, 2, None, 4], pa.timestamp("us")),
    "timestamp_tz": pa.array([1, 2, 3, 4], pa.timestamp("ns", tz="UTC")),
    "duration": pa.array([1, 2, 3, None], pa.duration("s")),
    "time32": pa.array([1, 2, 3, 4], pa.time32("s")),
    "dictionary": pa.array(["x", "y", None, "x"]).dictionary_encode(),
    "list": pa.array([[1], [], None, [2, 3]]),
    "fixed_list": pa.array([[1, 2], [3, 4], None, [5, 6]], pa.list_(pa.int64(), 2)),
    "struct": pa.array([{"a": 1}, None, {"a": 3}, {"a": 4}]),
    "ree_bool": _ree(pa.array([True, None, False])),
    "ree_int16": _ree(pa.array([7, None, -1], pa.int16())),
    "ree_float": _ree(pa.array([0.5, 1.5, None])),
    "ree_null": _ree(pa.nulls(3)),
    "ree_decimal": _ree(pa.array([decimal.Decimal("1.5"), None, decimal.Decimal("2")],
                                 pa.decimal128(5, 1))),
    "ree_string": _ree(pa.array(["a", None, "b"])),
    "ree_timestamp": _ree(pa.array([1, 2, 3], pa.timestamp("ms"))),
}

# and the binary, decimal and time arrays the kernel tests build (their own lengths)
ARROW_COLUMNS.update({f"flat_{k}": v for k, v in flat_arrays().items()})

# one pandas column of each of its own dtypes
PANDAS_COLUMNS = {
    "object": pd.Series(["a", None, "c", "d"], dtype=object),
    "datetime64": pd.Series(pd.date_range("2020", periods=N)),
    "datetime_tz": pd.Series(pd.date_range("2020", periods=N, tz="UTC")),
    "timedelta": pd.Series(pd.to_timedelta([1, 2, 3, 4], unit="s")),
    "complex": pd.Series(np.arange(N) + 1j),
    "category": pd.Series(["a", "b", None, "a"], dtype="category"),
    "period": pd.Series(pd.period_range("2020", periods=N, freq="D")),
    "interval": pd.Series(pd.interval_range(0, N)),
    "Int64": pd.Series([1, None, 3, 4], dtype="Int64"),
    "boolean": pd.Series([True, None, False, True], dtype="boolean"),
    "Float32": pd.Series([0.5, None, 1.5, 2.0], dtype="Float32"),
    "string": pd.Series(["a", None, "c", "d"], dtype="string"),
    "arrow_int": pd.Series([1, None, 3, 4], dtype="int32[pyarrow]"),
    "arrow_string": pd.Series(["a", None, "c", "d"], dtype="string[pyarrow]"),
    "uint8": pd.Series(np.arange(N, dtype=np.uint8)),
    "float64": pd.Series([0.5, np.nan, 1.5, 2.0]),
    "bool": pd.Series([True, False, True, True]),
}

class _InterchangeOnly:
    """A producer of nothing but ``__dataframe__`` (read through the interchange walk)."""

    def __init__(self, df) -> None:
        self.df = df

    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True):
        return self.df


OPTIONS = [{}, {"dtype": np.float64}, {"decimals": "float64"}, {"period": "ordinal"}]
OPTION_IDS = ["default", "dtype", "decimals", "period"]


def _refused(frame, name: str, options: dict) -> bool:
    """Whether to_matrix(..., on_unsupported="raise") refuses column ``name``: the
    TypeError naming it (any other outcome is a taken column)."""
    try:
        dfbuffer.to_matrix(frame, columns=[name], **options)
    except TypeError as e:
        assert repr(name) in str(e)
        return True
    return False


def _check_skip(frame, name: str, options: dict, n: int = N) -> None:
    refused = _refused(frame, name, options)
    got = dfbuffer.to_matrix(frame, on_unsupported="skip", **options)
    alone = dfbuffer.to_matrix(frame, columns=["x"], **options)
    if refused:
        np.testing.assert_array_equal(got, alone)
        assert got.shape == (n, 1)
    else:
        both = dfbuffer.to_matrix(frame, **options)
        np.testing.assert_array_equal(got, both)
        assert got.shape == (n, 2)
    # the selection too, repeated names kept
    sel = dfbuffer.to_matrix(frame, on_unsupported="skip", columns=["x", name, "x"],
                             **options)
    assert sel.shape == (n, 2 if refused else 3)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("kind", sorted(ARROW_COLUMNS))
@pytest.mark.parametrize("producer", ["pyarrow", "polars", "interchange"])
def test_skip_leaves_out_what_raise_refuses_arrow(kind, producer, options):
    col = ARROW_COLUMNS[kind]
    table = pa.table({"c": col, "x": pa.array(np.arange(len(col), dtype=np.int64))})
    if producer == "interchange":
        table = _InterchangeOnly(dfbuffer.to_interchange(table).__dataframe__())
    if producer == "polars":
        pl = pytest.importorskip("polars")
        try:
            table = pl.from_arrow(table)
        except BaseException as e:  # noqa: BLE001 - a type polars does not hold
            # polars raises, or panics (pyo3's PanicException is a BaseException)
            if isinstance(e, KeyboardInterrupt | SystemExit):
                raise
            pytest.skip(f"polars does not take {kind}")
    _check_skip(table, "c", options, len(col))


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("kind", sorted(PANDAS_COLUMNS))
def test_skip_leaves_out_what_raise_refuses_pandas(kind, options):
    df = pd.DataFrame({"c": PANDAS_COLUMNS[kind], "x": np.arange(N, dtype=np.int64)})
    _check_skip(df, "c", options)


@pytest.mark.parametrize("kind", ["ree_bool", "ree_int16", "ree_float", "ree_null"])
@pytest.mark.parametrize("nulls", ["fill", "mask"])
def test_run_end_encoded_columns_read_as_their_decoded_values(kind, nulls):
    ree = ARROW_COLUMNS[kind]
    got = dfbuffer.to_matrix(pa.table({"c": ree}), nulls=nulls)
    want = dfbuffer.to_matrix(pa.table({"c": pc.run_end_decode(ree)}), nulls=nulls)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.ma.getdata(got), np.ma.getdata(want))
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))


def test_run_end_encoded_bool_in_a_table():
    r = pa.RunEndEncodedArray.from_arrays([2, 5], pa.array([True, False]))
    t = pa.table({"r": r, "x": [1, 2, 3, 4, 5]})
    assert dfbuffer.to_matrix(t).tolist() == [[1, 1], [1, 2], [0, 3], [0, 4], [0, 5]]
    assert dfbuffer.to_matrix(t, on_unsupported="skip").shape == (5, 2)
    # sliced: the window's runs only
    assert dfbuffer.to_matrix(t.slice(1, 2), dtype=np.int8).tolist() == [[1, 2], [0, 3]]


def test_run_end_encoded_decimals_with_decimals_float64():
    t = pa.table({"r": ARROW_COLUMNS["ree_decimal"]})
    with pytest.raises(TypeError, match="column 'r' is run-end encoded with a decimal"):
        dfbuffer.to_matrix(t)
    got = dfbuffer.to_matrix(t, decimals="float64")
    np.testing.assert_array_equal(got[:, 0], [1.5, np.nan, np.nan, 2.0])


def test_skip_rule_is_no_call_into_the_package():
    # the rule lives in C, where the plan is made: no Python helper decides it
    import dfbuffer._schema as schema

    assert not hasattr(schema, "_matrix_columns")
    assert not hasattr(schema, "_matrix_takes")


def test_a_frame_whose_columns_are_all_left_out_keeps_its_rows():
    t = pa.table({"s": ["a", "b", "c"]})
    for src in (t, _InterchangeOnly(dfbuffer.to_interchange(t).__dataframe__()),
                t.to_pandas()):
        assert dfbuffer.to_matrix(src, on_unsupported="skip").shape == (3, 0)


def test_a_layout_the_plan_refuses_is_skipped_like_a_type():
    # an interchange float column with sentinel nulls: refused by name, so left out
    from producers import USE_SENTINEL, frame, primitive

    def make():
        return frame(f=primitive([1.0, -1.0, 2.0], null=(USE_SENTINEL, -1), null_count=None),
                     x=primitive(np.arange(3, dtype=np.int64)))

    with pytest.raises(TypeError, match="column 'f': sentinel nulls"):
        dfbuffer.to_matrix(make())
    assert dfbuffer.to_matrix(make(), on_unsupported="skip").tolist() == [[0], [1], [2]]
