"""pandas' Interval columns through Arrow: pandas' Arrow export holds one as its
bounds, a struct<left, right> of the ``pandas.interval`` extension type with the
closed side in its metadata; every function reads such a column as the frame's
Interval column is read: ``pandas.Interval`` objects (docs/api.md, "pandas
columns")."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import dfbuffer

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pa_interchange = pytest.importorskip("pyarrow.interchange")

import dfbuffer.pandas  # noqa: E402 - after pandas' importorskip

NULLS = ("mask", "fill", "raise", "always_mask")


def _frames():
    nan_bounds = pd.arrays.IntervalArray.from_arrays(
        [0.0, np.nan, 2.5], [1.0, np.nan, 3.5], closed="left")
    return {
        "int64-right": pd.DataFrame({"c": pd.interval_range(0, 3)}),
        "float64-left-nan": pd.DataFrame({"c": nan_bounds}),
        "int64-both": pd.DataFrame({"c": pd.interval_range(0, 3, closed="both")}),
        "int64-neither": pd.DataFrame({"c": pd.interval_range(0, 3, closed="neither")}),
        "datetime": pd.DataFrame({"c": pd.interval_range(pd.Timestamp("2020-01-01"),
                                                         periods=3)}),
    }


def _paths(df):
    t = pa.table(df)
    return {
        "pa.table": lambda: t,
        "pa.table sliced": lambda: pa.table(pd.concat([df.iloc[:1], df])).slice(1),
        "two chunks": lambda: pa.concat_tables([t.slice(0, 1), t.slice(1)]),
        "to_arrow": lambda: dfbuffer.to_arrow(df),
        "to_interchange": lambda: dfbuffer.to_interchange(df),
    }


def _same(got, want):
    assert type(got) is type(want)
    assert np.ma.getmaskarray(got).tolist() == np.ma.getmaskarray(want).tolist()
    g, w = np.ma.getdata(got).tolist(), np.ma.getdata(want).tolist()
    assert len(g) == len(w)
    for a, b in zip(g, w, strict=True):
        assert (a is None and b is None) or (
            type(a) is type(b) is pd.Interval and a == b and a.closed == b.closed
            and type(a.left) is type(b.left))


@pytest.mark.parametrize("path", sorted(_paths(pd.DataFrame({"c": [1]}))))
@pytest.mark.parametrize("kind", sorted(_frames()))
def test_an_arrow_interval_column_gives_the_frames_intervals(kind, path):
    df = _frames()[kind]
    make = _paths(df)[path]
    for nulls in NULLS:
        want = pytest.raises(ValueError) if nulls == "raise" and df["c"].isna().any() else None
        if want is not None:
            with pytest.raises(ValueError, match="column 'c' has 1 null value"):
                dfbuffer.from_dataframe(make(), nulls=nulls)
            with pytest.raises(ValueError, match="column 'c' has 1 null value"):
                dfbuffer.from_dataframe(df, nulls=nulls)
            continue
        _same(dfbuffer.from_dataframe(make(), nulls=nulls)["c"],
              dfbuffer.from_dataframe(df, nulls=nulls)["c"])
    sch = dfbuffer.schema(make())
    assert sch["c"].type == "object" == dfbuffer.schema(df)["c"].type


def test_an_interval_column_of_one_array():
    df = _frames()["float64-left-nan"]
    col = pa.table(df).column("c")
    _same(dfbuffer.column_to_ndarray(col), dfbuffer.column_to_ndarray(df["c"]))
    _same(dfbuffer.column_to_ndarray(col.chunk(0), nulls="fill"),
          dfbuffer.column_to_ndarray(df["c"], nulls="fill"))


def test_an_empty_interval_column():
    df = _frames()["int64-right"].iloc[:0]
    got = dfbuffer.from_dataframe(pa.table(df))["c"]
    assert got.dtype == object and got.shape == (0,)


def test_an_arrow_interval_column_is_not_flattened():
    # structs="flatten" opens struct columns; an Interval column stays whole, as the
    # frame's does
    df = _frames()["int64-right"].assign(x=1.5)
    t = pa.table(df)
    got = dfbuffer.from_dataframe(t, structs="flatten")
    assert list(got) == ["c", "x"]
    _same(got["c"], dfbuffer.from_dataframe(df, structs="flatten")["c"])
    assert dfbuffer.schema(t, structs="flatten").names == ["c", "x"]
    assert repr(dfbuffer.schema(t)["c"]) == (
        "ColumnSchema('c': pandas.interval<object[interval]>)")


def test_copy_false_refuses_the_interval_objects():
    t = pa.table(_frames()["int64-right"])
    with pytest.raises(dfbuffer.CopyError, match="column 'c'.* copy=False forbids"):
        dfbuffer.from_dataframe(t, copy=False)


def test_dfbuffer_pandas_gives_an_interval_column():
    df = _frames()["float64-left-nan"]
    for src in (pa.table(df), dfbuffer.to_arrow(df), {"c": df["c"]}, df["c"]):
        got = dfbuffer.pandas.from_dataframe(src)["c"]
        assert got.dtype == df["c"].dtype
        assert got.isna().tolist() == [False, True, False]
        assert got.tolist()[::2] == df["c"].tolist()[::2]


def test_bounds_pandas_refuses_are_named():
    # a struct of the pandas.interval type whose left bound exceeds its right one:
    # pandas refuses it; the error names the column, pandas' error its cause
    t = pa.table(_frames()["int64-right"])
    typ = t.schema.field("c").type
    storage = pa.StructArray.from_arrays([pa.array([5, 0]), pa.array([1, 1])],
                                         ["left", "right"])
    bad = pa.table({"c": pa.ExtensionArray.from_storage(typ, storage)})
    with pytest.raises(NotImplementedError, match="column 'c': pandas could not make "
                       "Intervals") as e:
        dfbuffer.from_dataframe(bad)
    assert type(e.value.__cause__).__module__.startswith("pandas") or isinstance(
        e.value.__cause__, ValueError)


class _Cycle:
    """An Arrow producer in a reference cycle with itself."""

    def __init__(self, table):
        self.table = table
        self.me = self

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


def test_the_result_holds_no_producer_and_a_cycle_is_collected():
    t = pa.table(_frames()["datetime"])
    prod = _Cycle(t)
    ref = weakref.ref(prod)
    got = dfbuffer.from_dataframe(prod)["c"]
    del prod
    gc.collect()
    assert ref() is None  # the Interval objects hold no reference to the producer
    assert got[2] == pd.Interval(pd.Timestamp("2020-01-03"), pd.Timestamp("2020-01-04"))


def test_racing_writer_on_interval_bounds():
    from racing import N, race

    left = np.arange(N, dtype=np.int64)
    right = np.arange(1, N + 1, dtype=np.int64)
    typ = pa.table(_frames()["int64-right"]).schema.field("c").type
    storage = pa.StructArray.from_arrays([pa.array(left), pa.array(right)],
                                         ["left", "right"])
    arr = pa.ExtensionArray.from_storage(typ, storage)
    good = left.copy()
    bad = left - 1  # still at most the right bound: every snapshot is valid

    def check(res):
        assert res.shape == (N,) and res.dtype == object
        lefts = np.array([iv.left for iv in res])
        assert ((lefts == good) | (lefts == bad)).all()
        assert [iv.right for iv in res[:3]] == [1, 2, 3]

    def convert():
        # the bounds are copied before pandas checks them; a value torn between two
        # writes (the ASan runtime's copies move single bytes) can still cross its right
        # bound, which pandas refuses: named, a clean refusal
        try:
            return dfbuffer.column_to_ndarray(arr)
        except NotImplementedError as e:
            assert str(e).startswith("column '': pandas could not make Intervals")
            raise ValueError(str(e)) from e

    ok, refused = race(convert, check, [(left, good, bad)], rounds=3)
    assert ok + refused == 3
