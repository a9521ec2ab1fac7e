"""categorical="codes" for columns whose chunks have different
dictionaries: the categories are unified in order of first appearance (as
pyarrow's unify_dictionaries orders them) and the codes remapped, in C."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

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
