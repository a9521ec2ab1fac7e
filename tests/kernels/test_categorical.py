"""Categorical and dictionary-encoded columns: codes to their categories (null codes,
sentinels never wrapped, validity, out-of-range codes refused) from hand-written
producers, pandas and pyarrow, against the peers' own values; and categorical="codes"
for columns whose chunks have different dictionaries: the categories are unified in
order of first appearance (as pyarrow's unify_dictionaries orders them) and the codes
remapped, in C."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from kernel_checks import (
    arrow_to_ndarray,
    check,
    check_nulls,
    color_categories,
    object_array,
    pandas_consumer,
    pyarrow_consumer,
)
from producers import CATEGORICAL, categorical, nonnative, primitive, strings, to_list

import dfbuffer

PANDAS3 = int(pd.__version__.split(".")[0]) >= 3


INT8 = pa.int8()


def _dict(codes, values, index=INT8, ordered=False):
    return pa.DictionaryArray.from_arrays(
        pa.array(codes, type=index), pa.array(values), ordered=ordered
    )


def _chunked(ordered=False, index=INT8):
    return pa.chunked_array(
        [
            _dict([0, 1, None, 1], ["a", "b"], index, ordered),
            _dict([2, 0, 1, None], ["c", "b", "d"], index, ordered),
            _dict([0, 0], ["a", "b"], index, ordered),
        ]
    )


def _unified_categories(ch):
    return pa.table({"x": ch}).unify_dictionaries().column("x").chunk(0).dictionary.to_pylist()


def _decode(res):
    codes = np.ma.getdata(res.codes)
    mask = np.ma.getmaskarray(res.codes)
    return [None if m else res.categories[c] for c, m in zip(codes.tolist(), mask, strict=True)]


@pytest.mark.parametrize(
    "make",
    [
        lambda ch: ch,
        lambda ch: pa.table({"x": ch}),
        lambda ch: dfbuffer.to_interchange(pa.table({"x": ch})),
    ],
    ids=["chunked_array", "table", "to_interchange"],
)
def test_codes_unify_different_dictionaries(make):
    ch = _chunked()
    src = make(ch)
    if isinstance(src, pa.ChunkedArray):
        res = dfbuffer.column_to_ndarray(src, categorical="codes")
    else:
        res = dfbuffer.from_dataframe(src, categorical="codes")["x"]
    assert isinstance(res, dfbuffer.CategoricalCodes)
    assert list(res.categories) == _unified_categories(ch) == ["a", "b", "c", "d"]
    assert _decode(res) == ch.to_pylist()
    assert np.ma.getmaskarray(res.codes).tolist() == [v is None for v in ch.to_pylist()]
    # null slots hold -1: pandas' sentinel, usable without a copy
    assert np.ma.getdata(res.codes)[np.ma.getmaskarray(res.codes)].tolist() == [-1, -1]
    assert res.ordered is False
    # the decoded path agrees
    dec = (
        dfbuffer.column_to_ndarray(src)
        if isinstance(src, pa.ChunkedArray)
        else dfbuffer.from_dataframe(src)["x"]
    )
    assert dec.tolist() == ch.to_pylist()


def test_codes_unify_matches_pyarrow_to_pandas():
    ch = _chunked()
    res = dfbuffer.column_to_ndarray(ch, categorical="codes", nulls="fill")
    expect = pa.table({"x": ch}).to_pandas()["x"]
    assert type(res.codes) is np.ndarray
    assert res.codes.tolist() == expect.cat.codes.tolist()
    assert list(res.categories) == list(expect.cat.categories)


def test_codes_unify_ordered_flag_and_nulls_modes():
    ch = _chunked(ordered=True)
    res = dfbuffer.column_to_ndarray(ch, categorical="codes")
    assert res.ordered is True
    assert list(res.categories) == ["a", "b", "c", "d"]
    with pytest.raises(ValueError, match="null"):
        dfbuffer.column_to_ndarray(ch, categorical="codes", nulls="raise")
    nonull = pa.chunked_array([_dict([1, 0], ["x", "y"]), _dict([0], ["z"])])
    res = dfbuffer.column_to_ndarray(nonull, categorical="codes", nulls="raise")
    assert type(res.codes) is np.ndarray and res.codes.tolist() == [1, 0, 2]
    assert list(res.categories) == ["x", "y", "z"]


def test_codes_unify_integer_categories_and_wider_codes():
    # 200 + 100 distinct categories do not fit int8 codes: the codes widen
    a = _dict(list(range(200)), [f"v{i}" for i in range(200)], pa.int16())
    b = _dict([0, 99], [f"w{i}" for i in range(100)], pa.int16())
    res = dfbuffer.column_to_ndarray(pa.chunked_array([a, b]), categorical="codes")
    assert res.codes.dtype == np.int16
    assert res.codes.tolist()[-2:] == [200, 299] and len(res.categories) == 300
    ints = pa.chunked_array([_dict([0, 1], [10, 20]), _dict([1, 0], [30, 10])])
    res = dfbuffer.column_to_ndarray(ints, categorical="codes")
    assert res.categories.tolist() == [10, 20, 30]
    assert res.codes.tolist() == [0, 1, 0, 2]


def test_codes_equal_dictionaries_in_other_memory_keep_codes():
    ch = pa.chunked_array([_dict([0, 1], ["a", "b"]), _dict([1, 1], ["a", "b"])])
    res = dfbuffer.column_to_ndarray(ch, categorical="codes")
    assert list(res.categories) == ["a", "b"] and res.codes.tolist() == [0, 1, 1, 1]


def test_codes_unify_out_of_range_and_no_copy():
    bad = pa.DictionaryArray.from_arrays(
        pa.array([0, 5], pa.int8()), pa.array(["q", "r"]), safe=False
    )
    ch = pa.chunked_array([_dict([0], ["a"]), bad])
    with pytest.raises(ValueError, match="out of range"):
        dfbuffer.column_to_ndarray(ch, categorical="codes")
    with pytest.raises(RuntimeError, match="allow_copy"):
        dfbuffer.from_dataframe(pa.table({"x": _chunked()}), categorical="codes", allow_copy=False)


def test_codes_unify_null_categories_refused():
    a = _dict([0, 1], ["a", None])
    b = _dict([0], ["b"])
    ch = pa.chunked_array([a, b])
    with pytest.raises(NotImplementedError, match="decode"):
        dfbuffer.column_to_ndarray(ch, categorical="codes")
    # one dictionary with a null category stays supported
    one = dfbuffer.column_to_ndarray(a, categorical="codes")
    assert one.codes.tolist() == [0, 1] and len(one.categories) == 2


def test_codes_unify_polars_producer():
    pl = pytest.importorskip("polars")
    t = pa.table({"x": _chunked()})
    df = pl.from_arrow(t, rechunk=False)
    res = dfbuffer.from_dataframe(df, categorical="codes")["x"]
    assert _decode(res) == t.column("x").to_pylist()
    assert set(res.categories) == {"a", "b", "c", "d"}


@pytest.mark.parametrize("ordered", [False, True])
def test_pandas_front_end_unified_categorical(ordered):
    import dfbuffer.pandas as dpd

    t = pa.table(
        {
            "x": _chunked(ordered=ordered),
            "y": pa.chunked_array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]),
        }
    )
    out = dpd.from_dataframe(t)
    expect = t.to_pandas()
    assert isinstance(out["x"].dtype, pd.CategoricalDtype)
    assert out["x"].cat.ordered is ordered
    assert list(out["x"].cat.categories) == list(expect["x"].cat.categories)
    assert out["x"].cat.codes.tolist() == expect["x"].cat.codes.tolist()
    pd.testing.assert_frame_equal(out, expect, check_categorical=True)


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@st.composite
def _chunks(draw):
    words = ["a", "b", "c", "d", "e", "f", "g"]
    chunks = []
    for _ in range(draw(st.integers(1, 4))):
        vals = draw(st.lists(st.sampled_from(words), min_size=1, max_size=5, unique=True))
        codes = draw(
            st.lists(
                st.one_of(st.none(), st.integers(0, len(vals) - 1)), min_size=0, max_size=8
            )
        )
        chunks.append(_dict(codes, vals))
    return pa.chunked_array(chunks)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(_chunks())
def test_codes_unify_property(ch):
    res = dfbuffer.column_to_ndarray(ch, categorical="codes")
    assert _decode(res) == ch.to_pylist()
    assert list(res.categories) == _unified_categories(ch)
    fill = dfbuffer.column_to_ndarray(ch, categorical="codes", nulls="fill")
    assert fill.codes.tolist() == pa.table({"x": ch}).to_pandas()["x"].cat.codes.tolist()


def test_pandas_categorical_with_nulls():
    s = pd.Series(pd.Categorical(["b", None, "a", "c", None, "c"], categories=["a", "b", "c"]))
    res = dfbuffer.from_dataframe(pd.DataFrame({"c": s}))["c"]
    check_nulls(res, s.notna().to_numpy())
    assert res.dtype == object
    assert to_list(res) == ["b", None, "a", "c", None, "c"]
    filled = dfbuffer.from_dataframe(pd.DataFrame({"c": s}), nulls="fill")["c"]
    assert list(filled) == ["b", None, "a", "c", None, "c"]


def test_pandas_categorical_int_categories():
    s = pd.Series(pd.Categorical([10, None, 30], categories=[10, 20, 30]))
    res = dfbuffer.from_dataframe(pd.DataFrame({"c": s}))["c"]
    check_nulls(res, [True, False, True])
    assert to_list(res)[0] == 10 and to_list(res)[2] == 30


def test_pyarrow_dictionary():
    d = pa.array(["x", None, "y", "x", "z", None, "y", "x", "x", "z", "q"]).dictionary_encode()
    t = pa.table({"d": d})
    for part in (t, t.slice(3), t.slice(9, 2)):
        res = dfbuffer.from_dataframe(part.__dataframe__())["d"]
        exp = part.column(0).to_pylist()
        assert to_list(res) == exp
        check_nulls(res, [v is not None for v in exp])


@pytest.mark.parametrize("index", ["int8", "int16", "int64", "uint8", "uint32"])
def test_pyarrow_dictionary_index_types(index):
    codes = pa.array([0, 1, None, 2, 1, 0, None, 2, 2, 1], getattr(pa, index)())
    d = pa.DictionaryArray.from_arrays(codes, pa.array(["a", "bb", "ccc"]))
    t = pa.table({"d": d})
    for part in (t, t.slice(3), t.slice(9)):
        res = dfbuffer.from_dataframe(part.__dataframe__())["d"]
        assert res.dtype == object
        assert to_list(res) == part.column(0).to_pylist()


def test_known_wrong_categorical_nulls():
    s = pd.Series(pd.Categorical(["x", None, "y", "x", None, "y"]))
    for part in (s, s.iloc[2:]):
        res = dfbuffer.from_dataframe(pd.DataFrame({"c": part}))["c"]
        assert to_list(res) == [None if v != v else v for v in part]
    col = categorical([0, -1, 1], strings(["x", "y"]), null="bitmask", valid=[1, 0, 1])
    assert to_list(dfbuffer.column_to_ndarray(col)) == ["x", None, "y"]


def test_peer_bug_pandas_categorical_null_wrapped_to_last_category():
    """pandas' consumer takes code -1 modulo the number of categories (the
    last category) and never masks it: sentinel nulls are ignored when the
    column has no validity buffer."""
    s = pd.Series(pd.Categorical(["x", None, "y", "x"]))
    assert pandas_consumer(pd.DataFrame({"c": s}).__dataframe__()) == ["x", "y", "y", "x"]
    # pyarrow's consumer is right in this version
    assert pyarrow_consumer(pd.DataFrame({"c": s}).__dataframe__()) == ["x", None, "y", "x"]


def test_nonnative_categorical_codes():
    codes = np.array([1, 0, -1, 1], dtype=nonnative("i2"))
    col = categorical(codes, strings(["x", "y"]), code_dtype=codes.dtype)
    assert col.get_buffers()["data"][1][3] in "<>"
    check(dfbuffer.column_to_ndarray(col), object_array(["y", "x", None, "y"]), [1, 1, 0, 1])


@pytest.mark.parametrize("code_dtype", ["i1", "i2", "i4", "i8"])
def test_categorical_sentinel_never_wrapped(code_dtype):
    codes = [0, -1, 2, 1, -1, 2]
    col = categorical(codes, color_categories(), code_dtype=code_dtype, offset=2)
    res = dfbuffer.column_to_ndarray(col)
    exp = object_array(["red", None, "blue", "green", None, "blue"])
    valid = np.array(codes) != -1
    check(res, exp, valid, dtype=object)
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    assert list(filled) == list(exp)  # never "blue" (the last category) for -1
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(col, nulls="raise")


@pytest.mark.parametrize("garbage", [-1, 99, 3])
@pytest.mark.parametrize("offset", [0, 5, 8 * 6 + 1])
def test_categorical_codes_with_validity(garbage, offset):
    codes = [0, garbage, 2, 1, garbage, 2]
    valid = [1, 0, 1, 1, 0, 1]
    col = categorical(codes, color_categories(), null="bitmask", valid=valid, offset=offset)
    res = dfbuffer.column_to_ndarray(col)
    check(res, object_array(["red", None, "blue", "green", None, "blue"]), valid, dtype=object)


def test_categorical_numeric_categories():
    cats = primitive(np.array([1.5, 2.5, 3.5]))
    col = categorical([2, -1, 0], cats)
    res = dfbuffer.column_to_ndarray(col)
    check(res, np.array([3.5, 0, 1.5]), [1, 0, 1], dtype="f8")
    filled = dfbuffer.column_to_ndarray(col, nulls="fill")
    np.testing.assert_array_equal(filled, [3.5, np.nan, 1.5])


def test_categorical_no_nulls():
    col = categorical([2, 0, 1, 1], color_categories(), null="none")
    res = dfbuffer.column_to_ndarray(col)
    check(res, object_array(["blue", "red", "green", "green"]), dtype=object)


def test_categorical_code_out_of_range_is_error():
    col = categorical([0, 5, 1], color_categories(), null="none")
    with pytest.raises((ValueError, IndexError)):
        dfbuffer.column_to_ndarray(col)


def test_quirk_categorical_kind_ints():
    col = categorical([1, 0], color_categories(), null="none")
    col._dtype = (CATEGORICAL, 8, "c", "|")
    assert list(dfbuffer.column_to_ndarray(col)) == ["green", "red"]


def test_dictionary_codes_checked_and_null_type():
    from test_arrow_bad import Producer, child_array

    s, a, keep = child_array(b"l", [10, 20])
    p = Producer(b"i", 3, [None, np.array([1, 0, 1], np.int32)], dictionary=(s, a))
    assert arrow_to_ndarray(p).tolist() == [20, 10, 20]
    for bad in (5, -1):
        p = Producer(b"i", 3, [None, np.array([1, 0, bad], np.int32)], dictionary=(s, a))
        with pytest.raises(ValueError, match="out of range"):
            arrow_to_ndarray(p)
    got = arrow_to_ndarray(pa.nulls(3))
    assert np.ma.getmaskarray(got).all()


@pytest.mark.parametrize(
    "values, fill",
    [(["a", None, "c"], None), ([1.5, None, 3.0], np.nan)],
)
def test_dictionary_with_null_categories_decodes_to_nulls(values, fill):
    # a code that names a null category is a null row, as in pyarrow
    arr = pa.DictionaryArray.from_arrays(
        pa.array([0, 1, None, 2, 1], pa.int8()), pa.array(values)
    )
    want = arr.to_pylist()
    out = dfbuffer.column_to_ndarray(arr)
    assert list(np.ma.getmaskarray(out)) == [v is None for v in want]
    assert [v for v, m in zip(out.data, out.mask, strict=True) if not m] == [
        v for v in want if v is not None
    ]
    filled = dfbuffer.column_to_ndarray(arr, nulls="fill")
    for got, w in zip(filled, want, strict=True):
        if w is not None:
            assert got == w
        elif fill is None:
            assert got is None
        else:
            assert np.isnan(got)
    with pytest.raises(ValueError, match="3 null values"):
        dfbuffer.column_to_ndarray(arr, nulls="raise")
    via = dfbuffer.from_dataframe(dfbuffer.to_interchange(pa.table({"x": arr})))
    assert list(np.ma.getmaskarray(via["x"])) == [v is None for v in want]


@pytest.mark.parametrize("bad", [5, -3, 2])
def test_null_categories_with_out_of_range_codes_raise(bad):
    # the null-category pass skips codes it cannot index; the decoder names them
    arr = pa.DictionaryArray.from_arrays(
        pa.array([0, bad, 1], pa.int8()), pa.array(["a", None]), safe=False
    )
    with pytest.raises(ValueError, match=f"categorical code {bad} at row 1 is out of range"):
        dfbuffer.column_to_ndarray(arr)
