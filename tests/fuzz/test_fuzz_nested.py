"""Hypothesis-drawn nested Arrow types (lists, large lists, list views, fixed-size lists,
structs and maps of each other and of numbers, strings and bools, to depth 3), with nulls
at every level,
sliced and chunked, converted by from_dataframe and compared with pyarrow's own values
(``to_pylist``; a sliced list view's values are the unsliced array's, sliced in Python,
since pyarrow 26 reads a sliced list view as all nulls)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from fuzz_settings import FUZZ, FUZZ_SEED
from hypothesis import given
from hypothesis import strategies as st
from nested_values import canon, to_py
from text_strategy import text

import dfbuffer

LEAVES = [pa.int64(), pa.float64(), pa.string(), pa.bool_(), pa.int8()]


def nested_types(depth: int) -> st.SearchStrategy:
    leaf = st.sampled_from(LEAVES)
    if depth == 0:
        return leaf
    inner = nested_types(depth - 1)
    return st.one_of(
        leaf,
        inner.map(pa.list_),
        inner.map(pa.large_list),
        inner.map(pa.list_view),
        inner.map(lambda t: pa.list_(t, 2)),
        st.lists(inner, min_size=1, max_size=3).map(
            lambda ts: pa.struct([pa.field(f"f{i}", t) for i, t in enumerate(ts)])
        ),
        inner.map(lambda t: pa.map_(pa.string(), t)),
    )


def values_of(t: pa.DataType) -> st.SearchStrategy:
    if pa.types.is_boolean(t):
        v = st.booleans()
    elif pa.types.is_unsigned_integer(t):
        v = st.integers(0, 100)
    elif pa.types.is_integer(t):
        v = st.integers(-100, 100)
    elif pa.types.is_floating(t):
        v = st.integers(-1000, 1000).map(lambda x: x / 4)
    elif pa.types.is_string(t):
        v = text(max_size=4)
    elif pa.types.is_fixed_size_list(t):
        v = st.lists(values_of(t.value_type), min_size=t.list_size, max_size=t.list_size)
    elif pa.types.is_struct(t):
        v = st.fixed_dictionaries({f.name: values_of(f.type) for f in t})
    elif pa.types.is_map(t):
        v = st.dictionaries(text(max_size=3), values_of(t.item_type), max_size=3).map(
            lambda d: list(d.items())
        )
    else:
        v = st.lists(values_of(t.value_type), max_size=4)
    return st.one_of(st.none(), v)


def pylist(arr):
    """to_pylist, with a map's entries as (key, value) tuples (as converted)."""
    def fix(v, t):
        if v is None:
            return None
        if pa.types.is_map(t):
            return [(k, fix(x, t.item_type)) for k, x in v]
        if pa.types.is_struct(t):
            return {f.name: fix(v[f.name], f.type) for f in t}
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) \
                or pa.types.is_fixed_size_list(t):
            return [fix(x, t.value_type) for x in v]
        return v
    return [fix(v, arr.type) for v in arr.to_pylist()]


def top_has_null(vals, t):
    """Whether a column's own elements hold a null: its rows, and the elements of the
    fixed-size lists at its top (one N-D array with it)."""
    return any(
        v is None or (pa.types.is_fixed_size_list(t) and top_has_null(v, t.value_type))
        for v in vals
    )


def check_sliced_and_chunked(data, sliced, want):
    """from_dataframe of ``sliced`` and of it cut into two chunks at a drawn row
    gives ``want`` (pyarrow's values)."""
    cut = data.draw(st.integers(0, len(want)))
    inputs = [sliced]
    if 0 < cut < len(want):
        inputs.append(pa.chunked_array([sliced.slice(0, cut), sliced.slice(cut)]))
    for a in inputs:
        got = dfbuffer.from_dataframe(pa.table({"c": a}))["c"]
        assert len(got) == len(want)
        assert canon(to_py(got)) == canon(want)


@FUZZ
@FUZZ_SEED
@given(data=st.data(), t=nested_types(3))
def test_nested_against_pyarrow(data, t):
    vals = data.draw(st.lists(values_of(t), max_size=12))
    arr = pa.array(vals, t)
    start = data.draw(st.integers(0, len(vals)))
    stop = data.draw(st.integers(start, len(vals)))
    sliced = arr.slice(start, stop - start)
    want = pylist(arr)[start:stop]
    check_sliced_and_chunked(data, sliced, want)


@FUZZ
@FUZZ_SEED
@given(data=st.data(), t=nested_types(2), mode=st.sampled_from(["mask", "fill", "raise"]))
def test_nested_nulls_in_every_mode_against_pyarrow(data, t, mode):
    """A null nested element is None in object results, masked or filled in array
    results, whatever the nulls= mode; nulls="raise" refuses only the column's own
    nulls."""
    vals = data.draw(st.lists(values_of(t), max_size=10))
    arr = pa.array(vals, t)
    start = data.draw(st.integers(0, len(vals)))
    sliced = arr.slice(start)
    want = pylist(arr)[start:]
    table = pa.table({"c": sliced})
    if mode == "raise" and top_has_null(want, t):
        with pytest.raises(ValueError, match="nulls='raise'"):
            dfbuffer.from_dataframe(table, nulls=mode)
        return
    got = dfbuffer.from_dataframe(table, nulls=mode)["c"]
    assert canon(to_py(got)) == canon(want)
    if mode != "mask":
        assert not isinstance(got, np.ma.MaskedArray)


NUMBERS = [pa.int64(), pa.float64(), pa.bool_(), pa.int8(), pa.uint16(), pa.float32()]


def numeric_structs(depth: int) -> st.SearchStrategy:
    """Struct types whose leaves are numbers and bools (what to_matrix takes)."""
    leaf = st.sampled_from(NUMBERS)
    inner = leaf if depth == 0 else st.one_of(leaf, numeric_structs(depth - 1))
    return st.lists(inner, min_size=1, max_size=3).map(
        lambda ts: pa.struct([pa.field(f"f{i}", t) for i, t in enumerate(ts)])
    )


def flattened(table: pa.Table) -> pa.Table:
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


@FUZZ
@FUZZ_SEED
@given(data=st.data(), t=numeric_structs(2))
def test_structs_flatten_to_matrix_against_table_flatten(data, t):
    """to_matrix(structs="flatten") and from_dataframe(structs="flatten") of a drawn
    struct column of numbers (nulls at every level, sliced, chunked) against pyarrow's
    Table.flatten values."""
    vals = data.draw(st.lists(values_of(t), max_size=12))
    table = pa.table({"s": pa.array(vals, t), "x": pa.array(range(len(vals)), pa.int32())})
    start = data.draw(st.integers(0, len(vals)))
    stop = data.draw(st.integers(start, len(vals)))
    part = table.slice(start, stop - start)
    cut = data.draw(st.integers(0, part.num_rows))
    inputs = [part]
    if 0 < cut < part.num_rows:
        inputs.append(pa.concat_tables([part.slice(0, cut), part.slice(cut)]))
    want = flattened(part)
    for tab in inputs:
        got = dfbuffer.to_matrix(tab, structs="flatten", nulls="mask", dtype="float64")
        assert got.shape == (want.num_rows, want.num_columns)
        for j, name in enumerate(want.column_names):
            col = [None if m else v for v, m in zip(got.data[:, j].tolist(),
                                                   got.mask[:, j].tolist(), strict=True)]
            assert col == [None if v is None else float(v)
                           for v in want.column(name).to_pylist()], name
        cols = dfbuffer.from_dataframe(tab, structs="flatten")
        assert list(cols) == want.column_names
        assert {k: to_py(v) for k, v in cols.items()} == want.to_pydict()


@FUZZ
@FUZZ_SEED
@given(data=st.data(), t=nested_types(2))
def test_dictionary_of_nested_values_against_pyarrow(data, t):
    """A drawn nested dictionary, drawn codes (nulls among them), sliced and chunked:
    decoded like pyarrow's to_pylist."""
    values = data.draw(st.lists(values_of(t), min_size=1, max_size=6))
    dictionary = pa.array(values, t)
    codes = data.draw(
        st.lists(st.one_of(st.none(), st.integers(0, len(values) - 1)), max_size=12)
    )
    try:
        arr = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int16()), dictionary)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError) as e:
        pytest.skip(f"pyarrow {pa.__version__} cannot build this dictionary array: {e}")
    start = data.draw(st.integers(0, len(codes)))
    sliced = arr.slice(start)
    check_sliced_and_chunked(data, sliced, sliced.to_pylist())
