"""dfbuffer.to_matrix: one 2-D array from any frame, against np.column_stack of
the columns' values (pyarrow, polars, pandas and hand-written interchange
producers for the layouts no library makes)."""

from __future__ import annotations

import gc
import itertools
import warnings
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from child_processes import ChildProcess
from producers import (
    INAT,
    USE_NAN,
    USE_SENTINEL,
    Buffer,
    Column,
    DataFrame,
    bools_bitpacked,
    categorical,
    chunked,
    datetimes,
    frame,
    nonnative,
    primitive,
    strings,
    with_mask,
)
from test_convert_errors import CASES

import dfbuffer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DTYPES = ["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]


def values(dt: str, n: int, seed: int = 0) -> np.ndarray:
    """`n` values of NumPy dtype `dt` that every cast in the tests keeps exact
    (small non-negative numbers, halves for floats)."""
    rng = np.random.default_rng(seed)
    if dt == "b1":
        return rng.random(n) < 0.5
    if dt[0] == "f":
        return (rng.integers(0, 100, n) / 2).astype(dt)
    return rng.integers(0, 100, n).astype(dt)


def check(got: np.ndarray, expect: np.ndarray, order: str = "C") -> None:
    assert type(got) is np.ndarray
    assert got.dtype == expect.dtype, (got.dtype, expect.dtype)
    assert got.shape == expect.shape
    assert got.flags.c_contiguous if order == "C" else got.flags.f_contiguous
    np.testing.assert_array_equal(got, expect)


# --------------------------------------------------------------------------
# dtype pairings and casts (pyarrow, bools bit-packed)


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)))
def test_every_pairing_promotes_like_numpy(a, b):
    x, y = values(a, 37, 1), values(b, 37, 2)
    t = pa.table({"x": x, "y": y})
    expect = np.column_stack([x, y])
    assert expect.dtype == np.result_type(x.dtype, y.dtype)
    check(dfbuffer.to_matrix(t), expect)
    check(dfbuffer.to_matrix(t, order="F"), np.asfortranarray(expect), "F")


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_explicit_dtype_casts(src, dst):
    x = values(src, 41, 3)
    y = values("f8", 41, 4)
    t = pa.table({"x": x, "y": y})
    expect = np.column_stack([x.astype(dst), y.astype(dst)])
    check(dfbuffer.to_matrix(t, dtype=dst), expect)
    check(dfbuffer.to_matrix(t, dtype=np.dtype(dst), order="F"), np.asfortranarray(expect), "F")


@pytest.mark.filterwarnings("ignore:overflow")
def test_float16_rounding_matches_numpy():
    rng = np.random.default_rng(5)
    x = np.concatenate(
        [
            rng.standard_normal(2000) * 10.0 ** rng.integers(-9, 6, 2000),
            [0.0, -0.0, np.inf, -np.inf, 65504.0, 65519.0, 65520.0, 1e-8, 2.0**-25, 3 * 2.0**-26],
            [2.0**-24, 2.0**-14, 1 + 2.0**-11, 1 + 3 * 2.0**-11],
        ]
    )
    t = pa.table({"x": x})
    got = dfbuffer.to_matrix(t, dtype="f2")
    np.testing.assert_array_equal(got[:, 0].view("u2"), x.astype("f2").view("u2"))
    h = pa.table({"h": x.astype("f2")})
    np.testing.assert_array_equal(
        dfbuffer.to_matrix(h, dtype="f8")[:, 0], x.astype("f2").astype("f8")
    )


def test_float_to_int_casts_saturate_and_nan_is_zero():
    x = np.array([1.9, -1.9, 1e10, -1e10, 300.0, -300.0])
    got = dfbuffer.to_matrix(pa.table({"x": x}), dtype="i1")[:, 0]
    np.testing.assert_array_equal(got, [1, -1, 127, -128, 127, -128])
    got = dfbuffer.to_matrix(pa.table({"x": x}), dtype="u2")[:, 0]
    np.testing.assert_array_equal(got, [1, 0, 65535, 0, 300, 0])
    # a NaN that is a value (no validity bitmap), not a null
    got = dfbuffer.to_matrix(pa.table({"x": [np.nan, 2.5]}), dtype="i8", nulls="raise")
    np.testing.assert_array_equal(got[:, 0], [0, 2])


def test_bad_arguments():
    t = pa.table({"x": [1, 2]})
    for dt in ["c16", "O", "U3", "M8[s]", "f16" if hasattr(np, "float128") else "V8"]:
        with pytest.raises(TypeError):
            dfbuffer.to_matrix(t, dtype=dt)
    with pytest.raises(ValueError, match="order"):
        dfbuffer.to_matrix(t, order="K")
    with pytest.raises(ValueError, match="nulls"):
        dfbuffer.to_matrix(t, nulls="nothing")
    with pytest.raises(ValueError, match="threads"):
        dfbuffer.to_matrix(t, threads=0)
    with pytest.raises(TypeError, match="threads"):
        dfbuffer.to_matrix(t, threads=1.5)
    with pytest.raises(TypeError):
        dfbuffer.to_matrix(t, "f8")  # keyword-only
    with pytest.raises(TypeError, match="expects"):
        dfbuffer.to_matrix(object())
    with pytest.raises(TypeError, match="single string"):
        dfbuffer.to_matrix(t, columns="x")


def test_byte_order_of_requested_dtype_is_native():
    t = pa.table({"x": [1.5, 2.5]})
    got = dfbuffer.to_matrix(t, dtype=">f8")
    assert got.dtype.isnative
    np.testing.assert_array_equal(got[:, 0], [1.5, 2.5])


# --------------------------------------------------------------------------
# nulls


def _nullable_table():
    return pa.table(
        {
            "i": pa.array([1, None, 3, 4, None], pa.int32()),
            "f": pa.array([0.5, 1.5, None, np.nan, 4.5]),
            "b": pa.array([True, None, False, True, True]),
        }
    )


def test_nulls_nan_promotes_ints_and_bools_with_nulls_to_float64():
    t = _nullable_table()
    got = dfbuffer.to_matrix(t)
    expect = np.array(
        [[1, 0.5, 1], [np.nan, 1.5, np.nan], [3, np.nan, 0], [4, np.nan, 1], [np.nan, 4.5, 1]]
    )
    check(got, expect)
    # alone, an int column with nulls becomes float64 too; without nulls it stays int
    check(dfbuffer.to_matrix(t, columns=["i"]), expect[:, :1])
    check(
        dfbuffer.to_matrix(pa.table({"i": pa.array([1, 2], pa.int16())})),
        np.array([[1], [2]], "i2"),
    )
    # float32 with an int column with nulls: float64 (the int column counts as float64)
    t2 = pa.table({"a": pa.array([1.0, 2.0], pa.float32()), "i": pa.array([1, None], pa.int8())})
    assert dfbuffer.to_matrix(t2).dtype == np.float64
    t3 = pa.table({"a": pa.array([1.0, 2.0], pa.float32()), "i": pa.array([1, 2], pa.int8())})
    assert dfbuffer.to_matrix(t3).dtype == np.float32


@pytest.mark.parametrize("dst", ["f2", "f4", "f8"])
def test_nulls_nan_into_requested_float(dst):
    got = dfbuffer.to_matrix(_nullable_table(), dtype=dst)
    assert got.dtype == dst
    np.testing.assert_array_equal(
        np.isnan(got), [[0, 0, 0], [1, 0, 1], [0, 1, 0], [0, 1, 0], [1, 0, 0]]
    )


def test_nulls_nan_into_int_raises_naming_the_column():
    with pytest.raises(ValueError, match="'i'.*nulls='mask'"):
        dfbuffer.to_matrix(_nullable_table(), dtype="i8")
    # without nulls the cast is fine
    got = dfbuffer.to_matrix(_nullable_table().slice(0, 1), dtype="i8")
    np.testing.assert_array_equal(got, [[1, 0, 1]])


def test_nulls_raise_names_the_column():
    with pytest.raises(ValueError, match="'i' has 2 null values"):
        dfbuffer.to_matrix(_nullable_table(), nulls="raise")
    with pytest.raises(ValueError, match="'b' has 1 null value"):
        dfbuffer.to_matrix(_nullable_table(), nulls="raise", columns=["b"])
    # NaN is a value in Arrow, not a null
    got = dfbuffer.to_matrix(pa.table({"f": [np.nan, 1.0]}), nulls="raise")
    assert np.isnan(got[0, 0])


@pytest.mark.parametrize("order", ["C", "F"])
def test_nulls_mask(order):
    t = _nullable_table()
    got = dfbuffer.to_matrix(t, nulls="mask", order=order)
    assert isinstance(got, np.ma.MaskedArray)
    assert got.dtype == np.float64  # ints and bools promote with the float column
    mask = np.ma.getmaskarray(got)
    assert mask.shape == (5, 3) and mask.dtype == bool
    assert mask.flags.c_contiguous if order == "C" else mask.flags.f_contiguous
    assert got.data.flags.c_contiguous if order == "C" else got.data.flags.f_contiguous
    np.testing.assert_array_equal(mask, [[0, 0, 0], [1, 0, 1], [0, 1, 0], [0, 0, 0], [1, 0, 0]])
    valid = ~mask
    expect = np.array([[1, 0.5, 1], [0, 1.5, 0], [3, 0, 0], [4, np.nan, 1], [0, 4.5, 1]])
    np.testing.assert_array_equal(got.data[valid], expect[valid])
    # in mask mode ints keep their type
    gi = dfbuffer.to_matrix(t, nulls="mask", columns=["i"])
    assert gi.dtype == np.int32
    np.testing.assert_array_equal(gi.data[:, 0][[0, 2, 3]], [1, 3, 4])
    np.testing.assert_array_equal(np.ma.getmaskarray(gi)[:, 0], [0, 1, 0, 0, 1])
    # and the null slots hold 0
    np.testing.assert_array_equal(gi.data[:, 0][[1, 4]], [0, 0])
    # no nulls: still a MaskedArray, all False
    m = dfbuffer.to_matrix(pa.table({"x": [1, 2]}), nulls="mask")
    assert isinstance(m, np.ma.MaskedArray) and not np.ma.getmaskarray(m).any()


def test_arrow_null_type_column():
    t = pa.table({"n": pa.nulls(3), "x": [1, 2, 3]})
    got = dfbuffer.to_matrix(t)
    assert got.dtype == np.float64
    assert np.isnan(got[:, 0]).all()
    np.testing.assert_array_equal(got[:, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="'n'"):
        dfbuffer.to_matrix(t, nulls="raise")
    m = dfbuffer.to_matrix(t, nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(m)[:, 0], [1, 1, 1])


# --------------------------------------------------------------------------
# slices and chunks


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("start,length", [(1, 20), (3, 61), (7, 9), (13, 0)])
def test_slices_at_odd_offsets(order, start, length):
    n = 100
    rng = np.random.default_rng(7)
    valid = rng.random(n) < 0.8
    i = pa.array(rng.integers(0, 50, n), mask=~valid)
    b = pa.array(rng.random(n) < 0.5, mask=~np.roll(valid, 3))
    f = pa.array(rng.random(n).astype("f4"))
    t = pa.table({"i": i, "b": b, "f": f}).slice(start, length)
    cols = [t[c].to_numpy(zero_copy_only=False) for c in t.column_names]
    expect = np.column_stack([np.asarray(c, dtype="f8") for c in cols])
    if length == 0:
        expect = np.empty((0, 3))
    got = dfbuffer.to_matrix(t, order=order)
    assert got.shape == (length, 3)
    np.testing.assert_array_equal(got, expect)
    m = dfbuffer.to_matrix(t, order=order, nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(m), np.isnan(expect))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("order", ["C", "F"])
def test_chunks_and_threads(order, threads):
    rng = np.random.default_rng(8)
    sizes = [1, 4999, 0, 130, 3000]
    batches = []
    for n in sizes:
        valid = rng.random(n) < 0.9
        batches.append(
            pa.record_batch(
                {
                    "a": pa.array(rng.random(n)),
                    "b": pa.array(rng.integers(0, 9, n).astype("i2"), mask=~valid),
                    "c": pa.array(rng.random(n) < 0.5),
                }
            )
        )
    t = pa.Table.from_batches(batches)
    assert t["a"].num_chunks == len(sizes)
    expect = np.column_stack(
        [np.asarray(t[c].to_numpy(zero_copy_only=False), dtype="f8") for c in "abc"]
    )
    got = dfbuffer.to_matrix(t, order=order, threads=threads)
    check(got, np.asfortranarray(expect) if order == "F" else expect, order)
    m = dfbuffer.to_matrix(t, order=order, threads=threads, nulls="mask", dtype="f4")
    np.testing.assert_array_equal(np.ma.getmaskarray(m), np.isnan(expect))


def test_wide_frame_uses_column_groups():
    # more columns than one cache-block group (64), odd row count
    rng = np.random.default_rng(9)
    data = {f"c{i}": rng.integers(0, 1000, 301).astype("i4" if i % 3 else "f8") for i in range(150)}
    t = pa.table(data)
    expect = np.column_stack(list(data.values()))
    check(dfbuffer.to_matrix(t), expect)
    check(dfbuffer.to_matrix(t, threads=2, order="F"), np.asfortranarray(expect), "F")


def test_threads_more_than_cpus_is_capped():
    t = pa.table({"x": np.arange(10000.0)})
    np.testing.assert_array_equal(dfbuffer.to_matrix(t, threads=10**6)[:, 0], np.arange(10000.0))


# --------------------------------------------------------------------------
# columns=, empty frames, lengths


def test_columns_select_and_order():
    t = pa.table({"a": [1, 2], "b": [3.5, 4.5], "c": ["x", "y"]})
    check(dfbuffer.to_matrix(t, columns=["b", "a"]), np.array([[3.5, 1], [4.5, 2]]))
    check(dfbuffer.to_matrix(t, columns=("a", "a")), np.array([[1, 1], [2, 2]]))
    with pytest.raises(KeyError, match="'z'"):
        dfbuffer.to_matrix(t, columns=["a", "z"])
    with pytest.raises(TypeError, match="'c'"):
        dfbuffer.to_matrix(t)
    # the string column is not read when not selected
    dup = pa.table([pa.array([1]), pa.array([2])], names=["d", "d"])
    with pytest.raises(ValueError, match="ambiguous"):
        dfbuffer.to_matrix(dup, columns=["d"])
    check(dfbuffer.to_matrix(dup), np.array([[1, 2]]))


def test_columns_on_interchange_and_polars():
    ix = frame(a=primitive([1, 2]), s=strings(["u", "v"]), b=primitive([7.0, 8.0]))
    check(dfbuffer.to_matrix(ix, columns=["b", "a"]), np.array([[7.0, 1], [8.0, 2]]))
    pl = pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly
    df = pl.DataFrame({"a": [1, 2], "b": [0.5, 1.5], "s": ["x", "y"]})
    check(dfbuffer.to_matrix(df, columns=["b", "a"]), np.array([[0.5, 1], [1.5, 2]]))
    with pytest.raises(KeyError, match="'nope'"):
        dfbuffer.to_matrix(ix, columns=["nope"])
    # non-str names are compared as str
    ix2 = DataFrame({0: primitive([1, 2]), 1: primitive([3, 4])})
    check(dfbuffer.to_matrix(ix2, columns=[1]), np.array([[3], [4]]))


def test_empty_frames():
    assert dfbuffer.to_matrix(pa.table({})).shape == (0, 0)
    z = dfbuffer.to_matrix(pa.table({"a": pa.array([], pa.int8()), "b": pa.array([], pa.int8())}))
    assert z.shape == (0, 2) and z.dtype == np.int8
    assert dfbuffer.to_matrix(pa.table({"a": [1, 2, 3]}), columns=[]).shape == (3, 0)
    assert dfbuffer.to_matrix(pd.DataFrame(index=range(4))).shape == (4, 0)
    pl = pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly
    assert dfbuffer.to_matrix(pl.DataFrame()).shape == (0, 0)
    assert dfbuffer.to_matrix(pl.DataFrame({"a": []}, schema={"a": pl.Float32})).dtype == "f4"
    assert dfbuffer.to_matrix(DataFrame({})).shape == (0, 0)
    m = dfbuffer.to_matrix(pa.table({"a": pa.array([], pa.int8())}), nulls="mask", order="F")
    assert m.shape == (0, 1) and np.ma.getmaskarray(m).shape == (0, 1)
    # an empty stream (no batches) still has its columns
    s = pa.RecordBatchReader.from_batches(pa.schema([("a", pa.float32())]), [])
    z = dfbuffer.to_matrix(s)
    assert z.shape == (0, 1) and z.dtype == np.float32


def test_columns_of_different_lengths():
    df = frame(a=primitive([1, 2, 3]), b=primitive([1.0, 2.0]))
    with pytest.raises(ValueError, match="different lengths.*'b' has 2"):
        dfbuffer.to_matrix(df)


# --------------------------------------------------------------------------
# polars and pandas sources


def test_polars_sources():
    pl = pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly
    df = pl.DataFrame(
        {
            "i8": pl.Series([1, 2, None, 4], dtype=pl.Int8),
            "u32": pl.Series([1, 2, 3, 4], dtype=pl.UInt32),
            "f": [0.5, None, 2.5, 3.5],
            "b": [True, False, None, True],
        }
    )
    cols = [df[c].to_numpy() for c in df.columns]
    expect = np.column_stack([np.asarray(c, "f8") for c in cols])
    check(dfbuffer.to_matrix(df), expect)
    nn = df.drop_nulls()
    check(dfbuffer.to_matrix(nn, order="F"), np.asfortranarray(nn.to_numpy()), "F")
    chunked_df = pl.concat([df, df.slice(1, 3), df], rechunk=False)
    assert chunked_df.n_chunks() > 1
    cols = [chunked_df[c].to_numpy() for c in chunked_df.columns]
    check(dfbuffer.to_matrix(chunked_df), np.column_stack([np.asarray(c, "f8") for c in cols]))
    check(dfbuffer.to_matrix(df.slice(1, 2), columns=["u32"]), np.array([[2], [3]], "u4"))


def test_pandas_sources():
    pdf = pd.DataFrame(
        {
            "f": [0.5, np.nan, 2.5],
            "i": pd.array([1, None, 3], dtype="Int64"),
            "n": np.array([1, 2, 3], "i2"),
            "b": [True, False, True],
        }
    )
    expect = pdf.to_numpy(dtype="float64", na_value=np.nan)
    check(dfbuffer.to_matrix(pdf), expect)
    # the interchange path gives the same
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ix = pdf.__dataframe__()
    check(dfbuffer.to_matrix(ix), expect)
    check(
        dfbuffer.to_matrix(pdf, columns=["n", "b"]),
        np.column_stack([pdf["n"].to_numpy(), pdf["b"].to_numpy()]),
    )
    with pytest.raises(ValueError, match="'f' has 1 null"):
        dfbuffer.to_matrix(ix, nulls="raise", columns=["f", "n"])
    m = dfbuffer.to_matrix(ix, nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(m), np.isnan(expect))


def test_pandas_index_is_not_a_column():
    pdf = pd.DataFrame({"x": [1, 2], "y": [0.5, 1.5]}, index=pd.Index([7, 8], name="k"))
    check(dfbuffer.to_matrix(pdf), pdf.to_numpy())
    spdf = pd.DataFrame({"x": [1, 2]}, index=["a", "b"])
    check(dfbuffer.to_matrix(spdf), np.array([[1], [2]]))


def test_pandas_categorical_codes():
    pdf = pd.DataFrame({"c": pd.Categorical(["a", "b", None, "a"]), "x": [1, 2, 3, 4]})
    with pytest.raises(TypeError, match="'c' is categorical"):
        dfbuffer.to_matrix(pdf)
    codes = pdf["c"].cat.codes.to_numpy()
    got = dfbuffer.to_matrix(pdf, dtype="f8")
    np.testing.assert_array_equal(got[:, 0], np.where(codes < 0, np.nan, codes))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ix = pdf.__dataframe__()
    got = dfbuffer.to_matrix(ix, dtype="i2", nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(got)[:, 0], codes < 0)
    np.testing.assert_array_equal(got.data[codes >= 0, 0], codes[codes >= 0])


def test_arrow_dictionary_codes():
    d = pa.array(["x", "y", None, "x"]).dictionary_encode()
    t = pa.table({"d": d})
    with pytest.raises(TypeError, match="'d' is categorical"):
        dfbuffer.to_matrix(t)
    got = dfbuffer.to_matrix(t, dtype="f4")
    np.testing.assert_array_equal(got[:, 0], [0, 1, np.nan, 0])


@pytest.mark.parametrize(
    "col,what",
    [
        (pa.array(["a"]), "string"),
        (pa.array(["a"], pa.large_string()), "string"),
        (pa.array(["a"], pa.string_view()), "string"),
        (pa.array([b"a"]), "binary"),
        (pa.array([1], pa.timestamp("us")), "timestamp"),
        (pa.array([1], pa.date32()), "date"),
        (pa.array([1], pa.duration("s")), "duration"),
        (pa.array([[1]]), "format"),
        (pa.array([{"a": 1}]), "format"),
        (pa.array([1], pa.decimal128(5, 2)), "decimal"),
    ],
)
def test_unsupported_types_raise_type_error_naming_the_column(col, what):
    t = pa.table({"ok": pa.array([1]), "bad col": col})
    with pytest.raises(TypeError, match=f"'bad col'.*{what}"):
        dfbuffer.to_matrix(t, dtype="f8")
    check(dfbuffer.to_matrix(t, columns=["ok"]), np.array([[1]]))


# --------------------------------------------------------------------------
# interchange layouts no library makes


def test_interchange_layouts():
    n = 11
    v = np.arange(n, dtype="i4")
    valid = np.arange(n) % 3 != 0
    f = np.linspace(0, 5, n)
    f_nan = f.copy()
    f_nan[[2, 5]] = np.nan
    sentinel = np.arange(n, dtype="i8")
    sentinel[4] = INAT
    df = frame(
        big=primitive(v.astype(nonnative("i4")), offset=3),
        bigf=primitive(f.astype(nonnative("f8")), offset=1),
        bits=with_mask(v, valid, offset=5),
        bits1=with_mask(v, valid, offset=2, null_value=1),
        bytes0=with_mask(v.astype("u2"), valid, kind="bytemask", offset=4),
        bytes1=with_mask(v.astype("u2"), valid, kind="bytemask", null_value=1),
        nan=primitive(f_nan, null=(USE_NAN, None), null_count=None),
        sent=primitive(sentinel, null=(USE_SENTINEL, INAT), null_count=None),
        bool=bools_bitpacked(valid, offset=3),
        bool_n=bools_bitpacked(valid, offset=6, valid=~valid | (np.arange(n) == 1)),
        half=primitive(f.astype("f2"), offset=2),
    )
    vf = np.where(valid, v, np.nan)
    sf = np.where(np.arange(n) == 4, np.nan, sentinel)
    bn = np.where(~valid | (np.arange(n) == 1), valid, np.nan)
    expect = np.column_stack(
        [v, f, vf, vf, vf, vf, f_nan, sf, valid, bn, f.astype("f2").astype("f8")]
    )
    check(dfbuffer.to_matrix(df), expect)
    check(dfbuffer.to_matrix(df, order="F", threads=2), np.asfortranarray(expect), "F")
    m = dfbuffer.to_matrix(df, nulls="mask", dtype="f4")
    np.testing.assert_array_equal(np.ma.getmaskarray(m), np.isnan(expect))
    with pytest.raises(ValueError, match="'bits'"):
        dfbuffer.to_matrix(df, nulls="raise")
    # the columns without nulls, in raise mode, cast to their own types
    got = dfbuffer.to_matrix(df, nulls="raise", columns=["big", "bool"])
    check(got, np.column_stack([v, valid.astype("i4")]))


def test_interchange_chunks():
    c = chunked(
        primitive(np.arange(3, dtype="i8"), offset=1),
        with_mask(np.arange(4, dtype="i8"), [1, 0, 1, 1], offset=3),
        primitive(np.arange(2, dtype="i8")),
    )
    df = frame(c=c, d=primitive(np.arange(9.0)))
    expect = np.column_stack([[0, 1, 2, 0, np.nan, 2, 3, 0, 1], np.arange(9.0)])
    check(dfbuffer.to_matrix(df), expect)


def test_interchange_strings_and_datetimes_raise():
    with pytest.raises(TypeError, match="'s'.*string"):
        dfbuffer.to_matrix(frame(s=strings(["a", "b"])))
    with pytest.raises(TypeError, match="'t'"):
        dfbuffer.to_matrix(frame(t=datetimes([1, 2], "tss:")))
    cat = categorical([0, 1, -1], strings(["a", "b"]))
    with pytest.raises(TypeError, match="'c' is categorical"):
        dfbuffer.to_matrix(frame(c=cat))
    got = dfbuffer.to_matrix(frame(c=cat), dtype="i8", nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(got)[:, 0], [0, 0, 1])


# --------------------------------------------------------------------------
# hostile producers


@pytest.mark.parametrize("make,exc", [pytest.param(m, e, id=i) for i, m, e in CASES])
def test_broken_columns(make, exc):
    try:
        col = make()
    except Exception:  # pragma: no cover - a factory itself failing is not ours
        pytest.skip("factory failed")
    df = frame(a=primitive(np.arange(len_of(col))), b=col)
    allowed = (exc if isinstance(exc, tuple) else (exc,)) + (TypeError, ValueError)
    try:
        res = dfbuffer.to_matrix(df, dtype="f8")
    except allowed:
        return
    # the few layouts a matrix can take (categorical codes, never decoded)
    assert isinstance(res, np.ndarray) and res.ndim == 2


def len_of(col) -> int:
    try:
        n = col.size()
        return n if isinstance(n, int) and 0 <= n < 100 else 3
    except Exception:
        return 3


class _Boom(Exception):
    pass


def test_raising_frame_methods():
    class Raising(DataFrame):
        def column_names(self):
            raise _Boom("names")

    with pytest.raises(_Boom):
        dfbuffer.to_matrix(Raising({"a": primitive([1])}))

    class RaisingGet(DataFrame):
        def get_column(self, i):
            raise _Boom("get")

    with pytest.raises(_Boom):
        dfbuffer.to_matrix(RaisingGet({"a": primitive([1])}))

    class RaisingDF:
        def __dataframe__(self, **kw):
            raise _Boom("df")

    with pytest.raises(_Boom):
        dfbuffer.to_matrix(RaisingDF())

    class RaisingStream:
        def __arrow_c_stream__(self, requested_schema=None):
            raise _Boom("stream")

    with pytest.raises(_Boom):
        dfbuffer.to_matrix(RaisingStream())


def test_lying_sizes():
    short = primitive(np.arange(8, dtype="i8"))
    short._data = (Buffer(np.arange(8, dtype="i8"), bufsize=16), short._data[1])
    with pytest.raises(ValueError, match="'s'.*too small"):
        dfbuffer.to_matrix(frame(a=primitive(np.arange(8)), s=short))
    big = Column(
        size=1000,
        dtype=short.dtype,
        data=(Buffer(np.arange(8, dtype="i8")), short.dtype),
    )
    with pytest.raises(ValueError):
        dfbuffer.to_matrix(frame(b=big))
    bad_mask = with_mask(np.arange(64), [1] * 64, offset=0)
    bad_mask._validity = (Buffer(np.zeros(2, "u1")), bad_mask._validity[1])
    bad_mask._null_count = None
    with pytest.raises(ValueError):
        dfbuffer.to_matrix(frame(m=bad_mask))


def test_num_chunks_lies():
    c = chunked(primitive(np.arange(3)), primitive(np.arange(2)))
    c.num_chunks = lambda: 7  # get_chunks yields what it yields
    got = dfbuffer.to_matrix(frame(c=c))
    np.testing.assert_array_equal(got[:, 0], [0, 1, 2, 0, 1])


# --------------------------------------------------------------------------
# ownership, lifetime, DLPack


def test_result_owns_its_memory_and_frees_the_producer(collect):
    data = np.arange(30.0)
    col = primitive(data)
    df = frame(x=col, y=primitive(np.arange(30, dtype="i4")))
    ref = weakref.ref(df)
    buf_ref = weakref.ref(col.data_buffer)
    got = dfbuffer.to_matrix(df)
    got_m = dfbuffer.to_matrix(df, nulls="mask")
    assert got.base is None and got.flags.owndata and got.flags.writeable
    del df, col
    collect()
    assert ref() is None and buf_ref() is None
    np.testing.assert_array_equal(got[:, 0], data)
    np.testing.assert_array_equal(got_m.data[:, 1], np.arange(30))


def test_arrow_memory_is_released(collect):
    pool = pa.default_memory_pool()
    before = pool.bytes_allocated()
    t = pa.table({"x": pa.array(np.arange(100_000.0))})
    t = pa.table({"x": pa.compute.add(t["x"], 1)})  # memory in pyarrow's pool
    assert pool.bytes_allocated() > before
    got = dfbuffer.to_matrix(t)
    del t
    collect()
    assert pool.bytes_allocated() == before
    assert got[-1, 0] == 100_000.0


def test_polars_source_not_kept_alive(collect):
    pl = pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly
    df = pl.DataFrame({"a": np.arange(10.0)})
    got = dfbuffer.to_matrix(df)
    r = weakref.ref(df)
    del df
    collect()
    assert r() is None
    assert got.sum() == 45.0


def test_torch_from_dlpack_shares_the_memory():
    torch = pytest.importorskip("torch")
    got = dfbuffer.to_matrix(pa.table({"a": [1.0, 2.0], "b": [3.0, 4.0]}))
    tt = torch.from_dlpack(got)
    assert tt.data_ptr() == got.ctypes.data
    assert tuple(tt.shape) == (2, 2)
    assert tt.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    tt[0, 0] = 9.0
    assert got[0, 0] == 9.0
    f = dfbuffer.to_matrix(pa.table({"a": [1, 2], "b": [3, 4]}), order="F", dtype="f4")
    tf = torch.from_dlpack(f)
    assert tf.data_ptr() == f.ctypes.data and tf.stride() == (1, 2)
    del got, tt
    gc.collect()


# --------------------------------------------------------------------------
# leaks (the measurement of test_no_leaks.py)


def _leak_paths():
    t = _nullable_table()
    ix = frame(a=with_mask(np.arange(8), [1, 0] * 4), s=strings(["x"] * 8))
    bad = frame(a=primitive([1, 2, 3]), b=primitive([1.0, 2.0]))

    def run():
        dfbuffer.to_matrix(t)
        dfbuffer.to_matrix(t, nulls="mask", order="F")
        dfbuffer.to_matrix(ix, columns=["a"], dtype="f4")
        for obj, kw in [(t, {"nulls": "raise"}), (ix, {}), (bad, {}), (t, {"columns": ["?"]})]:
            try:
                dfbuffer.to_matrix(obj, **kw)
            except (TypeError, ValueError, KeyError):
                pass

    return run


def test_no_leaks():
    # check() measures again after a traced first window when the first measurement is
    # over: on free-threaded 3.13, numpy.ma's bounded caches and the deferred frees of the
    # error paths left 200-380 blocks in a first window of 300 calls, and about as many
    # in one of 900 (not one per call); with a traced first window, 2 blocks.
    from test_no_leaks import check

    check("to_matrix", _leak_paths(), 300)


# --------------------------------------------------------------------------
# pandas frames read through their blocks (numpy blocks, masked arrays)

PANDAS_MAJOR = int(pd.__version__.split(".")[0])


def _masked_frame(n: int = 40, seed: int = 3) -> pd.DataFrame:
    """Int64 / boolean / Float64 / Float32 / UInt8 with pd.NA, numpy float
    with NaN, numpy int, bool and float16: one block each, not consolidated."""
    rng = np.random.default_rng(seed)
    miss = rng.random((6, n)) < 0.2
    i64 = pd.array(rng.integers(-50, 50, n), dtype="Int64")
    i64[miss[0]] = pd.NA
    bo = pd.array(rng.random(n) < 0.5, dtype="boolean")
    bo[miss[1]] = pd.NA
    f64 = pd.array(rng.integers(0, 100, n) / 2, dtype="Float64")
    f64[miss[2]] = pd.NA
    f32 = pd.array(rng.integers(0, 100, n) / 4, dtype="Float32")
    f32[miss[3]] = pd.NA
    u8 = pd.array(rng.integers(0, 200, n), dtype="UInt8")
    u8[miss[4]] = pd.NA
    fl = rng.integers(0, 100, n) / 2
    fl[miss[5]] = np.nan
    df = pd.DataFrame({"i64": i64, "bo": bo, "f64": f64})
    df["fl"] = fl
    df["f32"] = f32
    df["n"] = rng.integers(0, 9, n).astype("i2")
    df["u8"] = u8
    df["b"] = rng.random(n) < 0.5
    df["h"] = (rng.integers(0, 64, n) / 4).astype("f2")
    return df


def _stack(df: pd.DataFrame, dtype="f8") -> tuple[np.ndarray, np.ndarray]:
    """np.column_stack of the columns' values (NA -> NaN) and the null mask."""
    vals = [df[c].to_numpy(dtype=dtype, na_value=np.nan) for c in df.columns]
    nulls = [df[c].isna().to_numpy() for c in df.columns]
    shape = (len(df), 0)
    if not vals:
        return np.empty(shape, dtype), np.zeros(shape, bool)
    return np.column_stack(vals), np.column_stack(nulls)


def _as_arrow(df: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(df, preserve_index=False)


@pytest.mark.parametrize("order", ["C", "F"])
def test_pandas_blocks_nulls_modes(order):
    df = _masked_frame()
    expect, nulls = _stack(df)
    got = dfbuffer.to_matrix(df, order=order)
    assert got.flags.c_contiguous if order == "C" else got.flags.f_contiguous
    np.testing.assert_array_equal(got, expect)
    # the same as the Arrow path on the same data (pandas' own export)
    np.testing.assert_array_equal(got, dfbuffer.to_matrix(_as_arrow(df), order=order))
    m = dfbuffer.to_matrix(df, order=order, nulls="mask")
    assert isinstance(m, np.ma.MaskedArray)
    np.testing.assert_array_equal(np.ma.getmaskarray(m), nulls)
    np.testing.assert_array_equal(m.data[~nulls], expect[~nulls])
    am = dfbuffer.to_matrix(_as_arrow(df), order=order, nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(am), np.ma.getmaskarray(m))
    with pytest.raises(ValueError, match="'i64' has \\d+ null value.*nulls='raise'"):
        dfbuffer.to_matrix(df, nulls="raise")
    with pytest.raises(ValueError, match="'fl' has \\d+ null value"):
        dfbuffer.to_matrix(df, nulls="raise", columns=["n", "fl"])
    with pytest.raises(ValueError, match="'bo'.*non-float dtype"):
        dfbuffer.to_matrix(df, dtype="i8", columns=["n", "bo"])
    # no nulls selected: the columns' own types promote, nothing becomes float
    got = dfbuffer.to_matrix(df, columns=["n", "b"], nulls="raise")
    check(got, np.column_stack([df["n"].to_numpy(), df["b"].to_numpy()]))
    assert got.dtype == np.int16


@pytest.mark.parametrize("dtype", ["f4", "f8", "f2"])
def test_pandas_masked_arrays_cast(dtype):
    df = _masked_frame(n=25)
    expect, nulls = _stack(df, dtype)
    got = dfbuffer.to_matrix(df, dtype=dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, expect)
    m = dfbuffer.to_matrix(df, dtype="i4", nulls="mask", order="F")
    np.testing.assert_array_equal(np.ma.getmaskarray(m), nulls)
    as_f8, _ = _stack(df)
    np.testing.assert_array_equal(m.data[~nulls], as_f8[~nulls].astype("i4"))


def test_pandas_masked_float_nan_is_a_value():
    # a NaN stored in a Float64 array (not masked) is a value, as in pandas'
    # Arrow export; a masked slot is a null
    f = pd.arrays.FloatingArray(np.array([1.0, np.nan, 3.0]), np.array([False, False, True]))
    df = pd.DataFrame({"f": f})
    got = dfbuffer.to_matrix(df, nulls="mask")
    ref = dfbuffer.to_matrix(_as_arrow(df), nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(ref))
    np.testing.assert_array_equal(got.data[:2], ref.data[:2])
    np.testing.assert_array_equal(np.ma.getmaskarray(got)[:, 0], [False, False, True])


@pytest.mark.parametrize("order", ["C", "F"])
def test_pandas_slices_and_strided_views(order):
    df = _masked_frame(n=101)
    for sub in [
        df.iloc[7:90],
        df.iloc[3::3],
        df.iloc[::-2],
        df.iloc[5:60:7, ::-1],
        df.iloc[:, [4, 0, 2]],
        df.iloc[0:0],
        df.iloc[50:51],
    ]:
        expect, nulls = _stack(sub)
        got = dfbuffer.to_matrix(sub, order=order)
        np.testing.assert_array_equal(got, expect)
        m = dfbuffer.to_matrix(sub, order=order, nulls="mask")
        np.testing.assert_array_equal(np.ma.getmaskarray(m), nulls)


def test_pandas_consolidated_2d_blocks():
    rng = np.random.default_rng(1)
    for arr in [
        rng.random((37, 6)),  # C-ordered 2-D: pandas 2 keeps it, strided columns
        np.asfortranarray(rng.random((37, 6))),
        rng.integers(0, 9, (37, 6)).astype("u2"),
        (rng.random((37, 6)) < 0.5),
        rng.random((37, 6)).astype("f2"),
    ]:
        df = pd.DataFrame(arr, columns=list("abcdef"))
        for order in "CF":
            check(dfbuffer.to_matrix(df, order=order), np.asarray(arr, order=order), order)
        sub = df.iloc[1::4, 1::2]
        check(dfbuffer.to_matrix(sub), arr[1::4, 1::2])
        check(dfbuffer.to_matrix(df, columns=["f", "a"]), arr[:, [5, 0]])
    # one consolidated float block after an operation, plus masked blocks
    df = pd.DataFrame(rng.random((20, 3)), columns=["x", "y", "z"])
    df["m"] = pd.array([1, None] * 10, dtype="Int32")
    df = df.copy()
    expect, _ = _stack(df)
    np.testing.assert_array_equal(dfbuffer.to_matrix(df), expect)


def test_pandas_non_consolidated_frames():
    base = _masked_frame(n=30)
    parts = [base[[c]] for c in base.columns]
    cat = pd.concat(parts, axis=1)
    expect, nulls = _stack(base)
    np.testing.assert_array_equal(dfbuffer.to_matrix(cat), expect)
    grown = pd.DataFrame(index=range(30))
    for c in base.columns:
        grown[c] = base[c]
    np.testing.assert_array_equal(dfbuffer.to_matrix(grown, order="F"), expect)
    m = dfbuffer.to_matrix(grown, nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(m), nulls)


def test_pandas_refusals_name_the_column():
    df = pd.DataFrame({"a": [1, 2], "o": np.array([1, 2], dtype=object)})
    with pytest.raises(TypeError, match="'o' has an object type"):
        dfbuffer.to_matrix(df)
    check(dfbuffer.to_matrix(df, columns=["a"]), np.array([[1], [2]]))
    s = pd.DataFrame({"a": [1.0, 2.0], "s": ["x", "y"]})
    # pandas 3 stores strings as str (its Arrow export says string); pandas 2
    # as object
    with pytest.raises(TypeError, match="'s'.*(string|object)"):
        dfbuffer.to_matrix(s)
    t = pd.DataFrame({"t": pd.to_datetime(["2024-01-01", "2024-01-02"]), "a": [1, 2]})
    with pytest.raises(TypeError, match="'t'.*timestamp"):
        dfbuffer.to_matrix(t)
    d = pd.DataFrame({"a": [1, 2], "d": pd.to_timedelta([1, 2], unit="s")})
    with pytest.raises(TypeError, match="'d'.*duration"):
        dfbuffer.to_matrix(d)
    z = pd.DataFrame({"a": [1, 2], "z": np.array([1 + 2j, 3j])})
    with pytest.raises(TypeError, match="'z' has a complex type"):
        dfbuffer.to_matrix(z)
    # columns the blocks path does not read go through pandas' Arrow export
    c = pd.DataFrame({"a": [1, 2, 3], "c": pd.Categorical(["x", "y", "x"])})
    got = dfbuffer.to_matrix(c, dtype="i8")
    np.testing.assert_array_equal(got, [[1, 0], [2, 1], [3, 0]])
    ar = pd.DataFrame({"a": pd.array([1, None, 3], dtype="int64[pyarrow]"), "b": [1.0, 2, 3]})
    np.testing.assert_array_equal(
        dfbuffer.to_matrix(ar), np.array([[1, 1], [np.nan, 2], [3, 3]], dtype="f8")
    )


def test_pandas_string_semantics_by_version():
    s = pd.DataFrame({"s": ["x", "y"]})
    what = "object" if s["s"].dtype == object else "string"
    with pytest.raises(TypeError, match=f"'s' has an? {what} type"):
        dfbuffer.to_matrix(s)
    if PANDAS_MAJOR >= 3:
        assert what == "string"


def test_pandas_duplicate_names_and_subclass():
    dup = pd.DataFrame([[1, 2], [3, 4]], columns=["d", "d"])
    check(dfbuffer.to_matrix(dup), np.array([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="ambiguous"):
        dfbuffer.to_matrix(dup, columns=["d"])
    num = pd.DataFrame({0: [1.5, 2.5], 1: [3, 4]})
    check(dfbuffer.to_matrix(num, columns=[1]), np.array([[3], [4]]))

    class Sub(pd.DataFrame):
        pass

    sub = Sub({"x": pd.array([1, None], dtype="Int64"), "y": [0.5, 1.5]})
    np.testing.assert_array_equal(dfbuffer.to_matrix(sub), [[1, 0.5], [np.nan, 1.5]])


def test_pandas_read_only_sources_and_copies():
    arr = np.arange(12.0).reshape(4, 3)
    arr.flags.writeable = False
    df = pd.DataFrame(arr, columns=list("abc"), copy=False)
    got = dfbuffer.to_matrix(df)
    assert got.flags.writeable and got.flags.owndata and got.base is None
    got[0, 0] = 99.0  # our own memory: the source is not touched
    assert arr[0, 0] == 0.0 and df.iloc[0, 0] == 0.0
    ro = np.array([1, 2, 3], "i8")
    mask = np.array([False, True, False])
    ro.flags.writeable = False
    mask.flags.writeable = False
    mdf = pd.DataFrame({"m": pd.arrays.IntegerArray(ro, mask)})
    np.testing.assert_array_equal(dfbuffer.to_matrix(mdf), [[1.0], [np.nan], [3.0]])
    # later writes to the frame do not reach an earlier result
    w = pd.DataFrame({"a": [1.0, 2.0], "m": pd.array([1, None], dtype="Int64")})
    before = dfbuffer.to_matrix(w)
    w.loc[0, "a"] = 7.0
    w.loc[1, "m"] = 5
    np.testing.assert_array_equal(before, [[1.0, 1.0], [2.0, np.nan]])
    np.testing.assert_array_equal(dfbuffer.to_matrix(w), [[7.0, 1.0], [2.0, 5.0]])


def test_pandas_blocks_lifetime(collect):
    df = _masked_frame(n=50)
    expect, _ = _stack(df)
    arrays = [df[c].array for c in ("i64", "f64")]
    refs = [weakref.ref(df)] + [weakref.ref(a) for a in arrays]
    got = dfbuffer.to_matrix(df, nulls="mask", order="F")
    del df, arrays
    collect()
    assert all(r() is None for r in refs)
    assert got.data.base is None or got.data.base.base is None
    np.testing.assert_array_equal(got.filled(np.nan), expect)


def test_pandas_empty_and_zero_rows():
    assert dfbuffer.to_matrix(pd.DataFrame()).shape == (0, 0)
    z = dfbuffer.to_matrix(pd.DataFrame({"a": pd.array([], dtype="Int8"), "b": np.array([], "f4")}))
    assert z.shape == (0, 2) and z.dtype == np.float32
    m = dfbuffer.to_matrix(pd.DataFrame({"a": pd.array([None, None], dtype="Int8")}), nulls="mask")
    np.testing.assert_array_equal(np.ma.getmaskarray(m), [[True], [True]])


def test_large_outputs_reuse_memory_correctly():
    # outputs of 16 MiB and more come from dfbuffer's NumPy memory handler,
    # which keeps the last freed block for the next one of about its size
    t = pa.table({f"c{i}": np.full(300_000, float(i)) for i in range(8)})
    first = dfbuffer.to_matrix(t)
    assert first.nbytes >= 16 << 20
    assert first.flags.owndata and first.base is None
    np.testing.assert_array_equal(first[-1], np.arange(8.0))
    del first
    for order in "CFC":
        got = dfbuffer.to_matrix(t, order=order)
        np.testing.assert_array_equal(got[123], np.arange(8.0))
        np.testing.assert_array_equal(got[:, 5], np.full(300_000, 5.0))
    kept = got
    other = dfbuffer.to_matrix(t, order="F")  # while another one is alive
    assert other.ctypes.data != kept.ctypes.data
    np.testing.assert_array_equal(other, kept)
    # NumPy operations on such an array still work (resize uses the handler)
    c = other.copy()
    c.resize((10, 8), refcheck=False)
    assert c.shape == (10, 8)


def test_pandas_blocks_no_leaks():
    from test_no_leaks import check

    pdf = pd.DataFrame({"m": pd.array([1, None] * 4, dtype="Int64"), "f": np.arange(8.0)})
    pdf["o"] = pd.Series([1, "x"] * 4, dtype=object)  # stays object in pandas 3
    strided = pdf.iloc[::3]  # made once: pandas tracks its views

    def run():
        dfbuffer.to_matrix(pdf, columns=["m", "f"], nulls="mask")
        dfbuffer.to_matrix(strided, columns=["f", "m"], order="F")
        try:
            dfbuffer.to_matrix(pdf)
        except TypeError:
            pass

    # pandas' own bookkeeping (Cython, so tracemalloc names this test's lines) grows and
    # is pruned now and then by several hundred blocks: windows of 2000 calls keep that
    # bounded growth far below one block per call, which a real leak still exceeds
    check("to_matrix(pandas blocks)", run, 2000)


# --------------------------------------------------------------------------
# numpy.ma.MaskedArray: one cached class for every masked result

_MASKED_PATHS = {
    "matrix": "dfbuffer.to_matrix(pa.table({'a': [1, None]}), nulls='mask')",
    "pandas": "dfbuffer.from_dataframe(pd.DataFrame({'a': pd.array([1, None], 'Int64')}))['a']",
    "column": "dfbuffer.column_to_ndarray(pa.array([1, None]))",
}
# each path first in a fresh process (it imports and caches the class), then the others
_FIRST_MASKED = {
    first: ChildProcess.python(
        "import sys, numpy as np, pandas as pd, pyarrow as pa, dfbuffer\n"
        f"got = [{first_code}] + [{', '.join(c for k, c in _MASKED_PATHS.items() if k != first)}]\n"
        "assert all(type(g) is np.ma.MaskedArray for g in got), [type(g) for g in got]\n"
        "assert [np.ma.getmaskarray(g).ravel().tolist() for g in got] == [[False, True]] * 3\n"
        "print('ok')\n"
    )
    for first, first_code in _MASKED_PATHS.items()
}


@pytest.mark.child_process(*_FIRST_MASKED.values())
@pytest.mark.parametrize("first", sorted(_FIRST_MASKED))
def test_masked_results_share_one_cached_class_whichever_comes_first(first):
    out = _FIRST_MASKED[first].result()
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_pandas_other_columns_keep_their_order_beside_block_columns():
    # block, Arrow-backed (one export of them all), categorical and Period columns
    # interleaved, a non-range index (never a column), a column selected twice
    n = 5
    df = pd.DataFrame({
        "a": np.arange(n, dtype=np.float64),
        "p1": pd.array([1.5, None, 3.5, 4.5, 5.5], dtype="float64[pyarrow]"),
        "c": pd.Categorical(list("xyxyx")),
        "s": pd.array(list("abcde"), dtype="string[pyarrow]"),
        "p2": pd.array(np.arange(n), dtype="int32[pyarrow]"),
        "per": pd.period_range("2020", periods=n, freq="D").array,
    }, index=pd.Index(list("vwxyz"), name="p1"))
    got = dfbuffer.to_matrix(df, dtype=np.float64, on_unsupported="skip", period="ordinal")
    ordinals = df["per"].array.asi8.astype(np.float64)
    want = np.column_stack([np.arange(n), [1.5, np.nan, 3.5, 4.5, 5.5], [0, 1, 0, 1, 0],
                            np.arange(n), ordinals])
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="column 's'"):
        dfbuffer.to_matrix(df, dtype=np.float64, period="ordinal")
    sel = dfbuffer.to_matrix(df, columns=["p2", "a", "p2", "p1"])
    np.testing.assert_array_equal(sel, want[:, [3, 0, 3, 1]])
    with pytest.raises(TypeError, match="column 'per' has a pandas period"):
        dfbuffer.to_matrix(df, columns=["a", "per"])
