"""Converters against the real producers (pandas, pyarrow; polars where it
still has ``__dataframe__``), and the peers' known wrong results
(docs/protocol-facts.md, "Known wrong results in the peers' consumers").

Expected values are computed independently from the source (the pandas
Series, ``pyarrow.Array.to_pylist``), never from the interchange objects.

``test_known_wrong_*``: dfbuffer gets the case right.
``test_peer_bug_*``: documents that a peer really gets it wrong in the
installed version (asserts the peer's wrong result; if a peer fixes it, the
test fails and should be turned into a note).

Booleans, strings, dates and times, categoricals: tests/kernels/test_bool.py,
test_strings.py, test_temporal.py, test_categorical.py, with their known wrong results.
"""

from __future__ import annotations

import datetime as dt
import sys

import numpy as np
import pytest
from kernel_checks import check_nulls, col_of, pandas_consumer, pyarrow_consumer, utc_naive
from producers import (
    USE_SENTINEL,
    Buffer,
    ProtocolOnlyFrame,
    base_chain,
    frame,
    nonnative,
    pack_bits,
    primitive,
    to_list,
    with_mask,
)

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pai = pytest.importorskip("pyarrow.interchange")
pdi = pytest.importorskip("pandas.api.interchange")

# pandas 3 emits pandas.errors.Pandas4Warning (a DeprecationWarning subclass)
# from DataFrame.__dataframe__ and from its interchange from_dataframe.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# --------------------------------------------------------------------------
# helpers


def series_expect(s):
    """(values, valid) of a pandas Series, computed by pandas."""
    valid = ~s.isna().to_numpy()
    return s, valid


def owner_of(res):
    chain = base_chain(res)
    assert chain, "not a view"
    assert isinstance(chain[-1], dfbuffer.Buffer), chain
    return chain[-1].owner


# --------------------------------------------------------------------------
# pandas, numpy-backed


NP_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8", "?"]


@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_pandas_numpy_backed_zero_copy(dtype):
    src = (np.arange(30) % 5).astype(dtype)
    df = pd.DataFrame({"x": src, "y": np.arange(30.0)})
    # the interchange path: the owner is pandas' own buffer object
    res = dfbuffer.from_dataframe(ProtocolOnlyFrame(df.__dataframe__()))["x"]
    assert type(res) is np.ndarray and res.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(res, df["x"].to_numpy())
    assert np.shares_memory(res, df["x"].to_numpy())
    owner = owner_of(res)
    assert type(owner).__name__ == "PandasBuffer"
    assert owner.ptr == res.__array_interface__["data"][0]
    if dtype == "?":
        return  # Arrow bools are bit-packed: the Arrow path must copy them
    # the library object itself goes through its Arrow stream: zero-copy too
    via_arrow = dfbuffer.from_dataframe(df)["x"]
    np.testing.assert_array_equal(via_arrow, df["x"].to_numpy())
    assert np.shares_memory(via_arrow, df["x"].to_numpy())


@pytest.mark.parametrize("sl", [slice(3, None), slice(5, 17)], ids=["iloc[3:]", "[5:17]"])
def test_pandas_sliced_frames(sl):
    df = pd.DataFrame(
        {
            "i": np.arange(20, dtype="i4"),
            "f": np.linspace(0, 1, 20),
            "I": pd.array([None if k % 4 == 1 else k for k in range(20)], dtype="Int64"),
            "s": [None if k % 3 == 0 else f"s{k}" for k in range(20)],
            "c": pd.Categorical([None if k % 5 == 2 else "abc"[k % 3] for k in range(20)]),
            "t": pd.Series(pd.date_range("2020-01-01", periods=20, freq="h", tz="Asia/Kathmandu")),
        }
    )
    df.loc[7, "t"] = pd.NaT
    part = df.iloc[sl]
    out = dfbuffer.from_dataframe(part)
    np.testing.assert_array_equal(out["i"], part["i"].to_numpy())
    assert np.shares_memory(out["i"], df["i"].to_numpy())
    np.testing.assert_array_equal(out["f"], part["f"].to_numpy())
    assert to_list(out["I"]) == [None if v is pd.NA else v for v in part["I"]]
    assert to_list(out["s"]) == [None if v is None or v != v else v for v in part["s"]]
    assert to_list(out["c"]) == [None if v != v else v for v in part["c"]]
    t = out["t"]
    check_nulls(t, part["t"].notna().to_numpy())
    exp = utc_naive(part["t"])
    ok = part["t"].notna().to_numpy()
    np.testing.assert_array_equal(
        np.asarray(t.data if ok.size and not ok.all() else t)[ok], exp[ok]
    )


def test_pandas_float_nan():
    df = pd.DataFrame({"f": [1.5, np.nan, 3.0]})
    col = col_of(df, "f")
    res = dfbuffer.column_to_ndarray(col)
    check_nulls(res, [True, False, True])
    assert res.dtype == np.float64
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert type(filled) is np.ndarray
    np.testing.assert_array_equal(filled, df["f"].to_numpy())
    assert np.shares_memory(filled, df["f"].to_numpy())


@pytest.mark.parametrize(
    "dtype,values",
    [
        ("Int64", [1, None, 3, -4]),
        ("Int8", [1, None, 3, -4]),
        ("UInt32", [1, None, 3, 4]),
        ("Float64", [1.5, None, 3.0, 4.0]),
        ("boolean", [True, None, False, True]),
    ],
)
def test_pandas_nullable_masked(dtype, values):
    s = pd.Series(values, dtype=dtype)
    df = pd.DataFrame({"x": s})
    res = dfbuffer.from_dataframe(ProtocolOnlyFrame(df.__dataframe__()))["x"]
    check_nulls(res, s.notna().to_numpy())
    assert res.dtype == s.dtype.numpy_dtype
    # the values are a view of pandas' data array (only the mask is new)
    assert np.shares_memory(res.data, df["x"].array._data)
    via_arrow = dfbuffer.from_dataframe(df)["x"]
    check_nulls(via_arrow, s.notna().to_numpy())
    assert to_list(via_arrow) == [None if v is pd.NA else v for v in s]
    assert to_list(res) == [None if v is pd.NA else v for v in s]
    filled = dfbuffer.from_dataframe(df, nulls="fill")["x"]
    assert filled.dtype == np.float64
    exp = s.astype("Float64").to_numpy(dtype="f8", na_value=np.nan)
    np.testing.assert_array_equal(filled, exp)
    with pytest.raises(ValueError):
        dfbuffer.from_dataframe(df, nulls="raise")


def test_pandas_nullable_no_nulls_zero_copy():
    df = pd.DataFrame({"x": pd.Series([1, 2, 3], dtype="Int64")})
    res = dfbuffer.from_dataframe(df)["x"]
    assert type(res) is np.ndarray
    np.testing.assert_array_equal(res, [1, 2, 3])
    assert np.shares_memory(res, df["x"].array._data)


# --------------------------------------------------------------------------
# pandas, pyarrow-backed


@pytest.mark.parametrize(
    "dtype,values",
    [
        ("int64[pyarrow]", [1, None, 3, 4]),
        ("double[pyarrow]", [1.5, None, 3.0, 4.0]),
        ("bool[pyarrow]", [True, None, False, True, True, False, None, True, False]),
        ("string[pyarrow]", ["a", None, "ccc", ""]),
    ],
)
def test_pandas_pyarrow_backed(dtype, values):
    s = pd.Series(values, dtype=dtype)
    res = dfbuffer.from_dataframe(pd.DataFrame({"x": s}))["x"]
    check_nulls(res, s.notna().to_numpy())
    assert to_list(res) == [None if v is pd.NA or v is None else v for v in s]


def test_pandas_arrowdtype_large_string_and_timestamp():
    s = pd.Series(pd.array(["x", None, "yy"], dtype=pd.ArrowDtype(pa.large_string())))
    t = pd.Series(
        pd.array(
            [0, None, 86_400_000_000], dtype=pd.ArrowDtype(pa.timestamp("us", "Asia/Kathmandu"))
        )
    )
    out = dfbuffer.from_dataframe(pd.DataFrame({"s": s, "t": t}))
    assert to_list(out["s"]) == ["x", None, "yy"]
    check_nulls(out["t"], [True, False, True])
    assert out["t"].dtype == np.dtype("M8[us]")
    assert to_list(out["t"]) == [dt.datetime(1970, 1, 1), None, dt.datetime(1970, 1, 2)]


def test_pandas_pyarrow_backed_zero_copy():
    arr = pa.array(np.arange(10, dtype="i8"))
    s = pd.Series(pd.arrays.ArrowExtensionArray(arr))
    res = dfbuffer.from_dataframe(pd.DataFrame({"x": s}))["x"]
    np.testing.assert_array_equal(res, np.arange(10))
    assert res.__array_interface__["data"][0] == arr.buffers()[1].address


# --------------------------------------------------------------------------
# pandas frames: empty, names, allow_copy


def test_pandas_empty_frames():
    assert dfbuffer.from_dataframe(pd.DataFrame()) == {}
    df = pd.DataFrame(
        {"i": np.zeros(0, "i8"), "s": pd.Series([], dtype=str), "f": np.zeros(0, "f4")}
    )
    out = dfbuffer.from_dataframe(df)
    assert list(out) == ["i", "s", "f"]
    assert out["i"].shape == (0,) and out["i"].dtype == np.int64
    assert out["s"].shape == (0,) and out["s"].dtype == object
    assert out["f"].dtype == np.float32


def test_pandas_names_and_duplicates():
    df = pd.DataFrame({0: [1, 2], "b": [3, 4]})
    assert list(dfbuffer.from_dataframe(df)) == ["0", "b"]
    dup = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ValueError):
        dfbuffer.from_dataframe(dup)


def test_pandas_allow_copy_false():
    df = pd.DataFrame({"i": np.arange(4)})
    out = dfbuffer.from_dataframe(df, allow_copy=False)
    assert np.shares_memory(out["i"], df["i"].to_numpy())
    with pytest.raises(RuntimeError):
        # a string dtype (on pandas 2 a list of str is an object column, read zero-copy)
        s = pd.array(["a", "b"], dtype="string")
        dfbuffer.from_dataframe(pd.DataFrame({"s": s}), allow_copy=False)


def test_interchange_object_accepted():
    df = pd.DataFrame({"a": [1, 2, 3]})
    out = dfbuffer.from_dataframe(df.__dataframe__())
    np.testing.assert_array_equal(out["a"], [1, 2, 3])


# --------------------------------------------------------------------------
# pyarrow


INTS = [1, None, 3, 4, None, 6, 7, 8, 9, None, 11, 12, 13, 14, None, 16, 17, 18, 19, 20]


@pytest.mark.parametrize("start,length", [(0, None), (3, None), (9, 5), (13, None), (17, 3)])
def test_pyarrow_slices(start, length):
    t = pa.table(
        {
            "i": pa.array(INTS, pa.int32()),
            "s": pa.array([None if v is None else str(v) for v in INTS]),
            "S": pa.array([None if v is None else "x" * v for v in INTS], pa.large_string()),
            "f": pa.array([None if v is None else v / 2 for v in INTS], pa.float64()),
        }
    )
    part = t.slice(start, length)
    out = dfbuffer.from_dataframe(part.__dataframe__())
    for name in ["i", "s", "S", "f"]:
        exp = part.column(name).to_pylist()
        assert to_list(out[name]) == exp, name
        check_nulls(out[name], [v is not None for v in exp])
    assert out["i"].dtype == np.int32


def test_pyarrow_slice_zero_copy():
    arr = pa.array(np.arange(100, dtype="i8"))
    part = pa.table({"a": arr}).slice(13, 40)
    res = dfbuffer.from_dataframe(part.__dataframe__())["a"]
    np.testing.assert_array_equal(res, np.arange(13, 53))
    assert res.__array_interface__["data"][0] == arr.buffers()[1].address + 13 * 8
    assert type(owner_of(res)).__name__ == "_PyArrowBuffer"


def test_pyarrow_allow_copy_false():
    arr = pa.array(np.arange(10, dtype="i4"))
    res = dfbuffer.from_dataframe(pa.table({"a": arr}), allow_copy=False)["a"]
    assert res.__array_interface__["data"][0] == arr.buffers()[1].address
    chunked = pa.table({"a": pa.chunked_array([[1, 2], [3]])})
    with pytest.raises(RuntimeError):
        dfbuffer.from_dataframe(chunked, allow_copy=False)
    with pytest.raises(RuntimeError):
        dfbuffer.from_dataframe(pa.table({"s": pa.array(["a", "b"])}), allow_copy=False)


def test_pyarrow_chunked_different_validity():
    ca = pa.chunked_array([[1, 2, 3], [None, 5], [6, None, 8, 9, 10, 11, 12, 13, None]], pa.int64())
    t = pa.table({"a": ca})
    exp = ca.to_pylist()
    res = dfbuffer.from_dataframe(t)["a"]
    assert to_list(res) == exp
    # the chunks one by one, as a consumer iterating DataFrame.get_chunks sees them
    got = []
    for chunk in t.__dataframe__().get_chunks():
        got += to_list(dfbuffer.column_to_ndarray(chunk.get_column(0)))
    assert got == exp


def test_pyarrow_float16():
    arr = pa.array(np.array([1.5, 2.25, -3.0], dtype="f2"))
    try:
        x = pa.table({"h": arr}).__dataframe__()
        x.get_column(0).dtype  # noqa: B018
    except (ValueError, NotImplementedError) as e:  # pragma: no cover
        pytest.skip(f"pyarrow's producer refuses float16: {e}")
    res = dfbuffer.from_dataframe(x)["h"]
    assert res.dtype == np.float16
    np.testing.assert_array_equal(res, [1.5, 2.25, -3.0])


# --------------------------------------------------------------------------
# polars


def test_polars():
    pl = pytest.importorskip("polars")
    if not hasattr(pl.DataFrame(), "__dataframe__"):
        pytest.skip(f"polars {pl.__version__} has no __dataframe__ (removed in polars 2)")
    df = pl.DataFrame({"a": [1, None, 3], "s": ["x", None, "z"]})  # pragma: no cover
    out = dfbuffer.from_dataframe(df)  # pragma: no cover
    assert to_list(out["a"]) == [1, None, 3]  # pragma: no cover
    assert to_list(out["s"]) == ["x", None, "z"]  # pragma: no cover


# --------------------------------------------------------------------------
# Known wrong results in the peers' consumers


# 1. sliced columns, bitmask validity with a bit offset


BIG_OFFSET = 8 * 3 + 27  # more than 8 x length (3)


def test_known_wrong_sliced_bitmask_offsets():
    t = pa.table({"a": pa.array(INTS)})
    for start in (3, 9, 13):
        part = t.slice(start)
        assert to_list(dfbuffer.from_dataframe(part.__dataframe__())["a"]) == (
            part.column(0).to_pylist()
        )
    col = with_mask(np.array([1, 2, 3]), [1, 0, 1], offset=BIG_OFFSET)
    assert to_list(dfbuffer.column_to_ndarray(col)) == [1, None, 3]
    # both peers' consumers get pyarrow slices right in this version


def test_peer_bug_pandas_bitmask_offset_beyond_8x_length():
    """pandas' consumer hands pyarrow a bitmap of `length` bytes and fails
    when the bit offset is beyond 8 x length."""
    col = with_mask(np.array([1, 2, 3]), [1, 0, 1], offset=BIG_OFFSET)
    with pytest.raises(pa.ArrowInvalid):
        pandas_consumer(frame(a=col))
    # pyarrow's consumer is right here
    assert pyarrow_consumer(frame(a=col)) == [1, None, 3]


def test_known_wrong_sliced_pandas_arrow_backed():
    """df.iloc[3:] of an Arrow-backed pandas column: the result must start at
    element 3.  (pandas' producer drops the slice offset, see
    test_peer_bug_pandas_producer_drops_arrow_offset: a consumer can only be
    right through the Arrow PyCapsule interface.)"""
    s = pd.Series([1, None, 3, 4, None, 6, 7, 8, 9, 10], dtype="int64[pyarrow]")
    part = pd.DataFrame({"a": s}).iloc[3:]
    assert to_list(dfbuffer.from_dataframe(part)["a"]) == [4, None, 6, 7, 8, 9, 10]


def test_peer_bug_pandas_producer_drops_arrow_offset():
    """pandas' producer reports offset 0 for a sliced Arrow-backed column and
    hands out the unsliced buffer: every interchange consumer reads from the
    array's element 0."""
    s = pd.Series([1, None, 3, 4, None, 6, 7, 8, 9, 10], dtype="int64[pyarrow]")
    x = pd.DataFrame({"a": s}).iloc[3:].__dataframe__()
    assert x.get_column(0).offset == 0
    assert pyarrow_consumer(x) == [1, None, 3, 4, None, 6, 7]
    assert [None if v != v else v for v in pandas_consumer(x)] == [1, None, 3, 4, None, 6, 7]


# 2. categorical with nulls


# 3. non-native byte order


def _big_endian_frame():
    return frame(a=primitive(np.array([1, 2, 3], dtype=nonnative("i4"))))


def test_known_wrong_nonnative_byte_order():
    assert to_list(dfbuffer.from_dataframe(_big_endian_frame())["a"]) == [1, 2, 3]


def test_peer_bug_nonnative_byte_order_read_as_native():
    """Both consumers ignore the dtype's endianness."""
    swapped = np.array([1, 2, 3], dtype="i4").byteswap().tolist()
    assert pandas_consumer(_big_endian_frame()) == swapped
    assert pyarrow_consumer(_big_endian_frame()) == swapped


# 4. strings with nulls, empty string columns, large strings


    # pandas' and pyarrow's consumers get pandas/pyarrow strings right in this
    # version (pandas gives NaN for nulls, by its own convention)


# 5. timezone-aware datetimes, datetimes with nulls, every unit


    # pandas' consumer is right here


# 6. chunked columns whose chunks carry different validity


def test_known_wrong_chunks_different_validity():
    ca = pa.chunked_array([[1, 2], [None, 4, 5], [6, None]], pa.int16())
    res = dfbuffer.from_dataframe(pa.table({"a": ca}).__dataframe__())["a"]
    assert to_list(res) == [1, 2, None, 4, 5, 6, None]
    assert res.dtype == np.int16
    # both peers' consumers are right on pyarrow chunks in this version


# 7. nullable integer and boolean columns (masked), sentinels


def test_known_wrong_nullable_masked():
    df = pd.DataFrame(
        {
            "i": pd.array([1, None, 3], dtype="Int64"),
            "b": pd.array([True, None, False], dtype="boolean"),
        }
    )
    out = dfbuffer.from_dataframe(df)
    assert to_list(out["i"]) == [1, None, 3]
    assert to_list(out["b"]) == [True, None, False]
    sent = frame(a=primitive(np.array([1, -999, 3]), null=(USE_SENTINEL, -999), null_count=1))
    assert to_list(dfbuffer.from_dataframe(sent)["a"]) == [1, None, 3]


def test_peer_bug_pandas_int_sentinel_ignored():
    """pandas' consumer skips sentinel nulls of columns without a validity buffer."""
    sent = frame(a=primitive(np.array([1, -999, 3]), null=(USE_SENTINEL, -999), null_count=1))
    assert pandas_consumer(sent) == [1, -999, 3]
    assert pyarrow_consumer(sent) == [1, None, 3]


def test_peer_bug_pandas_bitmask_claiming_width_8():
    """pandas' consumer trusts a bitmask's claimed width 8 and reads bytes."""
    col = with_mask(np.array([1, 2, 3]), [1, 0, 1], offset=5, mask_dtype=(20, 8, "b", "="))
    # bits 5..7 of byte 0; bytes 1.. are zero and long enough for pandas'
    # byte reads at 5..7 to stay inside the buffer
    col._validity = (Buffer(pack_bits([1, 0, 1], 5, pad=8)), (20, 8, "b", "="))
    assert to_list(dfbuffer.column_to_ndarray(col)) == [1, None, 3]
    got = pandas_consumer(frame(a=col))
    assert all(v != v for v in got)  # bytes 5..7 are 0: every value wrongly NaN


# 8. buffers that only their buffer object keeps alive (pandas' strings)


def test_native_order_marker_on_this_machine():
    # the non-native tests above are meaningful only if 'nonnative' really is
    assert not nonnative("i4").isnative and sys.byteorder in ("little", "big")
