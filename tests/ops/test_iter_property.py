"""Property test: iter_matrices and iter_batches give, batch after batch, what to_matrix
and from_dataframe give for the whole table, for random columns of every type family they
read (bool, integers, floats, decimals, dictionaries, run-end encoded, structs), with every
kind of null (validity bitmaps at any bit offset, null dictionary indices, null run
values, null struct rows, NaN among float values), over source batches cut anywhere
(empty ones included) and batch sizes that cut them."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dfbuffer

INTS = {
    "int8": (pa.int8(), st.integers(-128, 127)),
    "uint8": (pa.uint8(), st.integers(0, 255)),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "uint64": (pa.uint64(), st.integers(0, 2**64 - 1)),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
}
FLOATS = {
    "float16": (pa.float16(), st.floats(width=16)),
    "float32": (pa.float32(), st.floats(width=32)),
    "float64": (pa.float64(), st.floats()),
}
FAMILIES = ["bool", *INTS, *FLOATS, "decimal", "dictionary", "run_end", "struct"]


@st.composite
def column(draw, n: int) -> pa.Array:
    """An array of ``n`` rows of a drawn family, nulls drawn (possibly none)."""
    family = draw(st.sampled_from(FAMILIES))
    nulls = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if draw(
        st.booleans()) else [False] * n

    def values(strategy):
        vals = draw(st.lists(strategy, min_size=n, max_size=n))
        return [None if z else v for v, z in zip(vals, nulls, strict=True)]

    if family == "bool":
        return pa.array(values(st.booleans()), pa.bool_())
    if family in INTS:
        typ, strategy = INTS[family]
        return pa.array(values(strategy), typ)
    if family in FLOATS:
        typ, strategy = FLOATS[family]
        vals = values(strategy)
        if family == "float16":
            return pa.array(np.array([0 if v is None else v for v in vals], np.float16),
                            mask=np.array(nulls, bool))
        return pa.array(vals, typ)
    if family == "decimal":
        return pa.array([None if v is None else decimal.Decimal(v).scaleb(-2)
                         for v in values(st.integers(-(10**8), 10**8))], pa.decimal128(12, 2))
    if family == "dictionary":
        # a null index, and (drawn) a null among the dictionary's values
        words = pa.array(["a", None, "c"] if draw(st.booleans()) else ["a", "b", "c"])
        idx = pa.array(values(st.integers(0, 2)), pa.int16())
        return pa.DictionaryArray.from_arrays(idx, words)
    if family == "run_end":
        return pc.run_end_encode(pa.array(values(st.integers(-3, 3)), pa.int32()))
    # a struct of two leaves with its own null rows (validity of the struct) and the
    # leaves' own nulls
    a = pa.array(values(st.integers(-5, 5)), pa.int64())
    b = pa.array(draw(st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n)), pa.float64())
    rows = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return pa.StructArray.from_arrays([a, b], names=["a", "b"], mask=pa.array(rows, pa.bool_()))


@st.composite
def streams(draw):
    """(table, source batches, batch size): the table is a slice at a drawn offset (so
    validity bitmaps start mid-byte) of drawn columns; the batches cover it, cut anywhere,
    empty ones included."""
    n = draw(st.integers(0, 40))
    lead = draw(st.integers(0, 9))
    k = draw(st.integers(1, 4))
    cols = {f"c{i}": draw(column(n + lead)) for i in range(k)}
    t = pa.table(cols).slice(lead, n)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=5)))
    bounds = [0, *cuts, n]
    batches = [t.slice(a, b - a).combine_chunks().to_batches()
               for a, b in zip(bounds, bounds[1:], strict=False)]
    batches = [b[0] if b else pa.RecordBatch.from_pylist([], schema=t.schema)
               for b in batches]
    return t, batches, draw(st.integers(1, n + 3))


def plain(v) -> list:
    """A column as a list: None where masked, "nan" for a NaN of any float width."""
    data = np.ma.getdata(v)
    vals = data.tolist() if data.dtype != object else list(data)
    mask = np.ma.getmaskarray(v).tolist()
    return [None if m else "nan" if isinstance(x, float) and x != x else x
            for x, m in zip(vals, mask, strict=True)]


def joined(batches, name) -> list:
    return [x for b in batches for x in plain(b[name])]


def _reader(t: pa.Table, batches) -> pa.RecordBatchReader:
    return pa.RecordBatchReader.from_batches(t.schema, batches)


def _rows(ms) -> int:
    return sum(len(m) for m in ms)


@settings(max_examples=150, deadline=None)
@given(streams(), st.sampled_from(["fill", "mask", "always_mask"]), st.booleans())
def test_matrices_as_to_matrix_of_the_whole(stream, nulls, drop_last):
    t, batches, size = stream
    opts = {"decimals": "float64", "structs": "flatten", "dtype": np.float64}
    ms = list(dfbuffer.iter_matrices(_reader(t, batches), size, nulls=nulls,
                                     drop_last=drop_last, **opts))
    whole = dfbuffer.to_matrix(t, nulls=nulls, **opts)
    n = t.num_rows - (t.num_rows % size if drop_last else 0)
    assert [len(m) for m in ms] == [min(size, n - i) for i in range(0, n, size)]
    if not ms:
        return
    got = np.ma.concatenate(ms) if nulls != "fill" else np.concatenate(ms)
    # bit for bit (NaN payloads included), and the same mask
    assert np.ma.getdata(got).view(np.uint64).tolist() == np.ma.getdata(
        whole[:n]).view(np.uint64).tolist()
    if nulls != "fill":
        assert np.ma.getmaskarray(got).tolist() == np.ma.getmaskarray(whole[:n]).tolist()


@settings(max_examples=150, deadline=None)
@given(streams(), st.sampled_from(["mask", "fill", "always_mask"]))
def test_batches_as_from_dataframe_of_the_whole(stream, nulls):
    t, batches, size = stream
    opts = {"structs": "flatten"}
    got = list(dfbuffer.iter_batches(_reader(t, batches), size, nulls=nulls, **opts))
    whole = dfbuffer.from_dataframe(t, nulls=nulls, **opts)
    assert _rows([next(iter(b.values())) for b in got]) == t.num_rows
    for name in whole:
        w = whole[name]
        if got and got[0][name].dtype != w.dtype:
            # fill: a nullable bool or integer column is float64 in every batch, whether
            # or not the whole has a null (docs/api.md, "One result type per column")
            assert nulls == "fill" and w.dtype.kind in "biu", name
            assert got[0][name].dtype == np.float64
            w = w.astype(np.float64)
        assert joined(got, name) == plain(w), name
    # one type per column in every batch, fixed by the schema
    for name in whole:
        assert len({(type(b[name]), getattr(b[name], "dtype", None)) for b in got}) <= 1


@pytest.mark.parametrize("size", [1, 3, 8, 9, 64])
def test_every_family_at_sizes_that_cut_source_batches(size):
    """The families above, every null kind present, over source batches of 5 and 7 rows
    (offsets not on byte borders): the fixed-example twin of the properties."""
    n = 47
    i = np.arange(n + 3)
    mask = i % 4 == 1
    t = pa.table({
        "b": pa.array(i % 3 == 0, mask=mask),
        "i8": pa.array((i % 100).astype(np.int8), mask=mask),
        "u64": pa.array(i.astype(np.uint64) * 2**40),
        "f16": pa.array((i / 8).astype(np.float16), mask=i % 6 == 0),
        "f32": pa.array(np.where(i % 5 == 0, np.nan, i / 4).astype(np.float32), mask=mask),
        "dec": pa.array([None if k % 7 == 0 else decimal.Decimal(k).scaleb(-1)
                         for k in range(n + 3)], pa.decimal128(6, 1)),
        "dict": pa.DictionaryArray.from_arrays(
            pa.array(np.where(i % 9 == 0, -1, i % 3), mask=i % 9 == 0).cast(pa.int8()),
            pa.array(["x", None, "z"])),
        "ree": pc.run_end_encode(pa.array([None if k % 10 < 3 else k // 10
                                           for k in range(n + 3)])),
        "st": pa.StructArray.from_arrays(
            [pa.array(i, mask=mask), pa.array(i / 2)], names=["a", "b"],
            mask=pa.array(i % 11 == 2)),
    }).slice(3, n)
    sizes = [7, 5, 0, 7, 5, 7, 5, 0, 7, 4]             # 47 rows, two empty batches
    bounds = np.cumsum([0, *sizes])
    assert bounds[-1] == n

    def rd():
        return _reader(t, [t.slice(a, b - a).combine_chunks().to_batches()[0] if b > a else
                           pa.RecordBatch.from_pylist([], schema=t.schema)
                           for a, b in zip(bounds, bounds[1:], strict=False)])

    opts = {"decimals": "float64", "structs": "flatten", "dtype": np.float64}
    for nulls in ("fill", "mask"):
        ms = list(dfbuffer.iter_matrices(rd(), size, nulls=nulls, **opts))
        whole = dfbuffer.to_matrix(t, nulls=nulls, **opts)
        got = np.ma.concatenate(ms) if nulls == "mask" else np.concatenate(ms)
        assert np.ma.getdata(got).view(np.uint64).tolist() == np.ma.getdata(
            whole).view(np.uint64).tolist()
        assert np.ma.getmaskarray(got).tolist() == np.ma.getmaskarray(whole).tolist()
        assert np.isnan(np.ma.getdata(whole)).any()          # NaN values (and fill's nulls)
        assert np.ma.getmaskarray(whole).any() == (nulls == "mask")
    for nulls in ("mask", "fill"):
        got = list(dfbuffer.iter_batches(rd(), size, nulls=nulls, structs="flatten"))
        whole = dfbuffer.from_dataframe(t, nulls=nulls, structs="flatten")
        assert list(whole) == ["b", "i8", "u64", "f16", "f32", "dec", "dict", "ree", "st.a",
                               "st.b"]
        for name in whole:
            assert joined(got, name) == plain(whole[name]), (nulls, name)
