"""Known producer bugs (docs/protocol-facts.md, docs/requirements.md "What the peers
fail"): dfbuffer's consumers give the right values or a clear error, never the wrong
values.  One test per bug, on the real producer that has it."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore:.*Interchange Protocol.*")


def _sliced_arrow_backed() -> pd.DataFrame:
    df = pd.DataFrame({
        "a": pd.array([1, 2, 3], dtype="int64[pyarrow]"),
        "b": pd.array([True, None, False], dtype="bool[pyarrow]"),
        "f": [1.0, 2.0, 3.0],
    })
    return df.iloc[1:]


def _xchg(df: pd.DataFrame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return df.__dataframe__(**kw)


def test_pandas_sliced_arrow_column_is_read_from_the_frame_by_from_dataframe():
    # P-26: pandas' buffers are the unsliced ones with offset 0 (it would give [1, 2])
    cols = dfbuffer.from_dataframe(_xchg(_sliced_arrow_backed()))
    assert cols["a"].tolist() == [2, 3]
    assert cols["b"].tolist() == [None, False]
    assert cols["f"].tolist() == [2.0, 3.0]


def test_pandas_sliced_arrow_column_is_read_from_the_frame_by_column_to_ndarray():
    col = _xchg(_sliced_arrow_backed()).get_column_by_name("a")
    assert dfbuffer.column_to_ndarray(col).tolist() == [2, 3]


def test_pandas_sliced_arrow_column_is_read_from_the_frame_by_to_matrix():
    x = _xchg(_sliced_arrow_backed())
    m = dfbuffer.to_matrix(x, columns=["a", "f"])
    assert m.tolist() == [[2.0, 2.0], [3.0, 3.0]]
    m = dfbuffer.to_matrix(x.select_columns_by_name(["a"]))
    assert m.tolist() == [[2.0], [3.0]]


def test_pandas_sliced_arrow_column_is_read_from_the_frame_by_the_pandas_front_end():
    dp = pytest.importorskip("dfbuffer.pandas")
    out = dp.from_dataframe(_xchg(_sliced_arrow_backed()))
    assert out["a"].tolist() == [2, 3]


def test_pandas_interchange_object_allow_copy_false_is_respected():
    # the object forbids copies: a column that needs one raises, as it would there
    df = pd.DataFrame({"s": pd.array(["x", "yy"], dtype="string"), "a": [1, 2]})
    x = _xchg(df, allow_copy=False)
    cols = dfbuffer.from_dataframe(x.select_columns_by_name(["a"]))
    assert cols["a"].tolist() == [1, 2]
    with pytest.raises(RuntimeError):
        dfbuffer.from_dataframe(x)


def test_pandas_interchange_object_is_read_in_place():
    # O(1) per column: the values are the frame's own memory
    data = np.arange(10.0)
    df = pd.DataFrame({"x": data, "y": data * 2})
    cols = dfbuffer.from_dataframe(_xchg(df))
    assert np.shares_memory(cols["x"], df["x"].to_numpy())


def test_pandas_string_offsets_wider_than_the_format_are_read_by_their_width():
    # P-22: pandas says "u" (32-bit offsets) and hands 64-bit ones
    df = pd.DataFrame({"s": pd.array(["x", None, "zzz"], dtype="string[python]")})
    col = _xchg(df).get_column(0)
    assert col.dtype[2] == "u" and col.get_buffers()["offsets"][1][1] == 64
    got = dfbuffer.column_to_ndarray(col)
    assert got.tolist() == ["x", None, "zzz"]


def test_pyarrow_logical_dtype_on_the_data_buffer_is_read_physically():
    # P-19: the data buffer of strings/timestamps carries the column's logical dtype
    t = pa.table({"s": ["a", "bc"], "t": pa.array([1, 2], pa.timestamp("ns", "Asia/Kathmandu"))})
    x = t.__dataframe__()
    assert x.get_column(0).get_buffers()["data"][1][0] != 1  # not UINT: the bug is there
    cols = dfbuffer.from_dataframe(x)
    assert cols["s"].tolist() == ["a", "bc"]
    assert cols["t"].view("i8").tolist() == [1, 2]


def test_pyarrow_metadata_none_is_accepted():
    # P-28: Column.metadata is None
    x = pa.table({"a": [1, 2]}).__dataframe__()
    assert x.get_column(0).metadata is None
    assert dfbuffer.from_dataframe(x)["a"].tolist() == [1, 2]


def test_pyarrow_bitmap_on_a_non_nullable_slice_is_ignored():
    # P-16: NON_NULLABLE yet a validity bitmap is handed over (nulls outside the slice)
    t = pa.table({"a": pa.array([None, 1, 2], pa.int64())}).slice(1)
    col = t.__dataframe__().get_column(0)
    assert col.describe_null[0] == 0 and col.get_buffers()["validity"] is not None
    assert dfbuffer.column_to_ndarray(col).tolist() == [1, 2]
    assert type(dfbuffer.column_to_ndarray(col)) is np.ndarray


def test_pandas_device_id_none_is_accepted():
    # pandas reports the device id as None
    x = _xchg(pd.DataFrame({"a": [1, 2]}))
    buf = x.get_column(0).get_buffers()["data"][0]
    assert buf.__dlpack_device__()[1] is None
    assert dfbuffer.buffer_to_ndarray(buf, "i8").tolist() == [1, 2]


def test_bitmask_dtype_claiming_8_bits_is_read_as_bits():
    # a bitmask's dtype may claim a width of 8 bits; the null kind decides
    from producers import frame, with_mask

    col = with_mask(np.array([1, 2, 3], dtype="i8"), [True, False, True],
                    mask_dtype=(20, 8, "b", "="))
    got = dfbuffer.column_to_ndarray(col)
    assert np.ma.getmaskarray(got).tolist() == [False, True, False]
    out = pa.table(dfbuffer.to_arrow(frame(x=col)))
    assert out["x"].to_pylist() == [1, None, 3]


def test_dlpack_without_keywords_and_device_id_none_is_read():
    # some __dlpack__ take no keyword arguments and report the device id as None
    from producers import NoKwDlpackBuffer

    buf = NoKwDlpackBuffer(np.arange(4, dtype="i4"))
    assert dfbuffer.buffer_to_ndarray(buf, "i4").tolist() == [0, 1, 2, 3]
    assert dfbuffer.Buffer.from_object(buf).bufsize == 16
