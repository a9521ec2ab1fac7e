"""Nested Arrow types (lists, large lists, list views, fixed-size lists and the
fixed_shape_tensor extension, structs, maps, dense and sparse unions) converted by
from_dataframe and column_to_ndarray, checked against pyarrow's own values
(``to_pylist``): plain, sliced, chunked and with nulls; zero-copy where the layout
allows, and the Arrow memory kept alive by the views."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest
from nested_values import to_py
from run_end_arrays import run_end_array

import dfbuffer


def column(arr, **kw):
    return dfbuffer.from_dataframe(pa.table({"c": arr}), **kw)["c"]


def expected(arr):
    """pyarrow's values; maps as lists of tuples (what to_numpy gives)."""
    vals = arr.to_pylist()
    t = arr.type
    if pa.types.is_map(t):
        return [None if v is None else [tuple(e) for e in v] for v in vals]
    return vals


LISTS = {
    "list": pa.list_(pa.int64()),
    "large_list": pa.large_list(pa.int64()),
    "list_view": pa.list_view(pa.int64()),
    "large_list_view": pa.large_list_view(pa.int64()),
}
VALUES = [[1, 2], None, [3, None], [], [4, 5, 6], None, [7]]


@pytest.mark.parametrize("kind", LISTS)
def test_lists_plain_sliced_chunked(kind):
    t = LISTS[kind]
    arr = pa.array(VALUES, t)
    got = column(arr)
    assert isinstance(got, np.ma.MaskedArray) and got.dtype == object
    assert to_py(got) == VALUES
    # pyarrow 26 reads a sliced list view as all nulls: slice its unsliced values
    for start, stop in [(1, 5), (2, 7), (3, 3)]:
        assert to_py(column(arr.slice(start, stop - start))) == VALUES[start:stop]
    ch = pa.chunked_array([arr.slice(0, 3), arr.slice(3)])
    assert to_py(column(ch)) == VALUES
    filled = column(arr, nulls="fill")
    assert type(filled) is np.ndarray and filled[1] is None
    assert filled[2].tolist()[0] == 3 and np.isnan(filled[2][1])
    with pytest.raises(ValueError, match="null"):
        column(arr, nulls="raise")


@pytest.mark.parametrize("kind", LISTS)
def test_list_rows_are_read_only_views_of_the_child(kind):
    arr = pa.array([[1, 2], [3], [4, 5, 6]], LISTS[kind])
    got = column(arr)
    assert type(got) is np.ndarray
    child = np.frombuffer(arr.values.buffers()[1], dtype=np.int64)
    for row in got:
        assert not row.flags.writeable
        assert np.shares_memory(row, child)
    assert [r.tolist() for r in got] == [[1, 2], [3], [4, 5, 6]]


def test_list_of_strings_and_nested_lists():
    vals = [[["a", None], []], None, [["b"], None, ["c", "d"]]]
    arr = pa.array(vals)
    assert to_py(column(arr)) == vals
    assert to_py(column(arr.slice(1))) == vals[1:]
    ok = pa.array([[["a"], ["b", "c"]]])
    rows = column(ok)
    assert rows[0][1].tolist() == ["b", "c"] and not rows[0].flags.writeable


def test_column_to_ndarray_and_allow_copy():
    arr = pa.array([[1], [2, 3]])
    assert to_py(dfbuffer.column_to_ndarray(arr)) == [[1], [2, 3]]
    with pytest.raises(RuntimeError, match="objects"):
        column(arr, allow_copy=False)


def test_fixed_size_list_zero_copy():
    data = np.arange(12, dtype=np.float64)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(data), 3)
    got = column(arr, allow_copy=False)
    assert type(got) is np.ndarray and got.shape == (4, 3)
    assert np.shares_memory(got, np.frombuffer(arr.values.buffers()[1], np.float64))
    assert not got.flags.writeable
    assert got.tolist() == arr.to_pylist()
    sl = arr.slice(1, 2)
    assert column(sl).tolist() == sl.to_pylist()
    # a child with an offset of its own
    child = pa.array(np.arange(14, dtype=np.int32)).slice(2)
    arr2 = pa.FixedSizeListArray.from_arrays(child, 4)
    assert column(arr2).tolist() == arr2.to_pylist()


def test_fixed_size_list_nulls_chunked_and_nested():
    vals = [[1, 2], None, [3, None], [5, 6]]
    arr = pa.array(vals, pa.list_(pa.int16(), 2))
    got = column(arr)
    assert got.shape == (4, 2)
    assert got.mask.tolist() == [[0, 0], [1, 1], [0, 1], [0, 0]]
    assert got[0].tolist() == [1, 2] and got[3].tolist() == [5, 6]
    filled = column(arr, nulls="fill")
    assert np.isnan(filled[1]).all() and filled[2, 0] == 3 and np.isnan(filled[2, 1])
    ch = pa.chunked_array([arr.slice(0, 1), arr.slice(1)])
    assert column(ch).mask.tolist() == got.mask.tolist()
    with pytest.raises(RuntimeError):
        column(ch, allow_copy=False)
    nested = pa.array(
        [[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]],
        pa.list_(pa.list_(pa.int64(), 3), 2),
    )
    got = column(nested, allow_copy=False)
    assert got.shape == (2, 2, 3) and got.tolist() == nested.to_pylist()


@pytest.mark.parametrize("perm", [None, [0, 1, 2], [2, 0, 1], [1, 2, 0]])
def test_fixed_shape_tensor(perm):
    ty = pa.fixed_shape_tensor(pa.float32(), [2, 3, 4], permutation=perm)
    flat = np.arange(5 * 24, dtype=np.float32)
    storage = pa.FixedSizeListArray.from_arrays(pa.array(flat), 24)
    arr = pa.ExtensionArray.from_storage(ty, storage)
    got = column(arr, allow_copy=False)
    # the specification: `shape` is the stored (row-major) shape, result axis i
    # its axis perm[i]; pyarrow 26's to_numpy_ndarray has that shape, but its
    # strides overlap for 3-D permutations, so only its shape is the oracle there
    p = list(range(3)) if perm is None else perm
    want = flat.reshape(5, 2, 3, 4).transpose(0, *(1 + np.array(p)))
    assert got.shape == arr.to_numpy_ndarray().shape
    assert np.array_equal(got, want)
    if p in ([0, 1, 2],):
        assert np.array_equal(got, arr.to_numpy_ndarray())
    assert np.shares_memory(got, np.frombuffer(storage.values.buffers()[1], np.float32))
    sl = arr.slice(2, 2)
    assert np.array_equal(column(sl), want[2:4])


STRUCT_VALUES = [
    {"x": 1, "s": "a", "l": [1, 2]},
    None,
    {"x": None, "s": None, "l": None},
    {"x": 4, "s": "d", "l": []},
]


def test_struct_as_dicts():
    arr = pa.array(STRUCT_VALUES)
    got = column(arr)
    assert got.dtype == object and to_py(got) == STRUCT_VALUES
    for a, b in [(1, 3), (2, 4), (0, 0)]:
        assert to_py(column(arr.slice(a, b - a))) == STRUCT_VALUES[a:b]
    ch = pa.chunked_array([arr.slice(0, 2), arr.slice(2)])
    assert to_py(column(ch)) == STRUCT_VALUES
    assert column(arr, nulls="fill")[1] is None
    # a struct whose child arrays carry offsets of their own
    inner = pa.StructArray.from_arrays(
        [pa.array([0, 1, 2, 3, 4]).slice(1), pa.array(["a", "b", "c", "d", "e"]).slice(1)],
        names=["i", "t"],
    )
    assert to_py(column(inner.slice(1))) == inner.slice(1).to_pylist()


def test_map_as_lists_of_tuples():
    vals = [[("a", 1), ("b", None)], None, [], [("c", 3)]]
    arr = pa.array(vals, pa.map_(pa.string(), pa.int64()))
    got = column(arr)
    assert to_py(got) == expected(arr)
    assert got[0] == [("a", 1), ("b", None)]
    assert to_py(column(arr.slice(2))) == expected(arr.slice(2))
    ch = pa.chunked_array([arr.slice(0, 1), arr.slice(1)])
    assert to_py(column(ch)) == expected(arr)


def unions():
    sparse = pa.UnionArray.from_sparse(
        pa.array([0, 1, 0, 1, 1], pa.int8()),
        [pa.array([1, 2, 3, 4, 5]), pa.array(["a", "b", None, None, "e"])],
    )
    dense = pa.UnionArray.from_dense(
        pa.array([0, 1, 1, 0, 1], pa.int8()),
        pa.array([0, 0, 1, 1, 2], pa.int32()),
        [pa.array([1.5, None]), pa.array(["a", None, "c"])],
    )
    coded = pa.UnionArray.from_sparse(
        pa.array([5, 2, 5], pa.int8()),
        [pa.array([1, 2, 3]), pa.array([True, False, None])],
        type_codes=[5, 2],
    )
    return {"sparse": sparse, "dense": dense, "coded": coded}


@pytest.mark.parametrize("kind", ["sparse", "dense", "coded"])
def test_unions(kind):
    arr = unions()[kind]
    got = column(arr)
    assert got.dtype == object and to_py(got) == arr.to_pylist()
    for a in range(1, 4):
        # the unsliced oracle, sliced here (pyarrow 16 reads sliced sparse unions wrong)
        assert to_py(column(arr.slice(a))) == arr.to_pylist()[a:]
    ch = pa.chunked_array([arr.slice(0, 2), arr.slice(2)])
    assert to_py(column(ch)) == arr.to_pylist()


def test_bad_list_offsets_and_union_ids_raise():
    # pyarrow checks the buffers it is given: they turn bad after that
    child = pa.array(np.arange(4, dtype=np.int64))
    mem = np.array([0, 2, 4], dtype=np.int32)
    bad = pa.Array.from_buffers(
        pa.list_(pa.int64()), 2, [None, pa.py_buffer(mem)], children=[child]
    )
    for wrong in ([0, 2, 9], [3, 1, 4], [0, 3, 1], [-1, 0, 4]):
        mem[:] = wrong
        with pytest.raises(ValueError, match="out of range|offsets"):
            column(bad)
    mem[:] = [0, 2, 4]
    assert to_py(column(bad)) == [[0, 1], [2, 3]]
    ids = pa.py_buffer(np.array([0, 7], dtype=np.int8))
    bad = pa.Array.from_buffers(
        pa.sparse_union([pa.field("a", pa.int64())]), 2, [None, ids], children=[child.slice(0, 2)]
    )
    with pytest.raises(ValueError, match="type ids"):
        column(bad)
    umem = np.array([0, 3], dtype=np.int32)
    ids = pa.py_buffer(np.array([0, 0], dtype=np.int8))
    bad = pa.Array.from_buffers(
        pa.dense_union([pa.field("a", pa.int64())]), 2,
        [None, ids, pa.py_buffer(umem)], children=[child],
    )
    assert to_py(column(bad)) == [0, 3]
    for wrong in (4, -1, 2**31 - 1):
        umem[1] = wrong
        with pytest.raises(ValueError, match="offsets"):
            column(bad)


def test_views_keep_the_arrow_memory_alive():
    data = np.arange(3000, dtype=np.int64)
    gc.collect()  # what earlier tests left is freed before, not during
    before = pa.total_allocated_bytes()
    table = pa.table({"f": pa.FixedSizeListArray.from_arrays(pa.array(data + 1), 3),
                      "l": pa.ListArray.from_arrays(pa.array(np.arange(0, 3001, 3)),
                                                    pa.array(data * 2))})
    assert pa.total_allocated_bytes() > before
    ref = weakref.ref(table)
    got = dfbuffer.from_dataframe(table)
    del table
    gc.collect()
    assert ref() is None
    assert got["f"].sum() == (data + 1).sum() and got["l"][1].tolist() == [6, 8, 10]
    del got
    gc.collect()
    assert pa.total_allocated_bytes() <= before


def test_reference_cycle_through_a_row_is_collected():
    data = np.arange(1000, dtype=np.int64)
    gc.collect()  # what earlier tests left is freed before, not during
    before = pa.total_allocated_bytes()
    table = pa.table({"l": pa.ListArray.from_arrays(pa.array([0, 500, 1000]),
                                                    pa.array(data + 1))})
    got = dfbuffer.from_dataframe(table)["l"]
    del table
    holder = {"rows": got}
    holder["self"] = holder
    ref = weakref.ref(got)
    del got, holder
    gc.collect()
    assert ref() is None
    assert pa.total_allocated_bytes() <= before


def test_run_end_encoded_nested_values():
    # each row the value of its run; a null value is a null row
    arr = run_end_array([2, 3, 5], pa.array([[1], None, [2, None]]))
    got = column(arr)
    assert to_py(got) == arr.to_pylist()
    assert got.mask.tolist() == [False, False, True, False, False]
    assert to_py(column(arr.slice(1, 3), nulls="fill")) == arr.slice(1, 3).to_pylist()
    with pytest.raises(RuntimeError):
        column(arr, allow_copy=False)


def test_reference_cycle_through_a_run_end_encoded_row_is_collected():
    values = pa.array([{"a": 1}, {"a": 2}])
    arr = run_end_array([2, 3], values)
    got = column(arr)
    assert got[0] is got[1]  # one object per run, as a dictionary's rows share theirs
    holder = {"rows": got, "row": got[0]}
    holder["self"] = holder
    ref = weakref.ref(got)
    del got, holder
    gc.collect()
    assert ref() is None


def test_run_end_encoded_dictionary_refused_with_the_column_name():
    # a composition of no kernel: the error names the column
    values = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()), pa.array([1.5, 2.5]))
    try:
        arr = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), values)
    except (TypeError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pytest.skip("this pyarrow cannot build a run-end encoded dictionary")
    with pytest.raises(NotImplementedError, match="'c'"):
        column(arr)


def test_schema_reports_the_nested_parameters():
    tensor = pa.FixedShapeTensorArray.from_numpy_ndarray(np.zeros((1, 2, 3)))
    table = pa.table(
        {
            "l": pa.array([[{"a": 1, "b": "x"}]]),
            "u": unions()["coded"].slice(0, 1),
            "d": unions()["dense"].slice(0, 1),
            "f": pa.array([[1, 2]], pa.list_(pa.float32(), 2)),
            "m": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int64())),
            "t": tensor,
            "v": pa.array([[1]], pa.large_list_view(pa.int8())),
        }
    )
    s = dfbuffer.schema(table)
    assert s["l"].type == "list" and s["l"].children[0].type == "struct"
    assert [c.name for c in s["l"].children[0].children] == ["a", "b"]
    assert s["u"].type == "union" and s["u"].union_mode == "sparse"
    assert s["u"].type_ids == (5, 2) and s["d"].union_mode == "dense"
    assert s["f"].list_size == 2 and s["f"].children[0].bits == 32
    assert s["m"].type == "map"
    assert s["t"].extension_name == "arrow.fixed_shape_tensor"
    assert s["t"].extension_metadata["shape"] == [2, 3] and s["t"].list_size == 6
    assert s["v"].children[0].bits == 8
    text = repr(s)
    assert "l: list<struct<a: int64, b: string>>" in text
    assert "f: list<float32>[2]" in text and "m: map<string, int64>" in text
    assert "u: union[sparse]<" in text


def test_structs_flatten_like_table_flatten():
    s = pa.array(
        [{"a": 1, "b": {"c": "x", "d": 2.5}}, None, {"a": None, "b": None},
         {"a": 4, "b": {"c": "z", "d": 1.0}}]
    )
    table = pa.table({"s": s, "i": [1, 2, 3, 4]})
    want = table.flatten().flatten().to_pydict()
    got = dfbuffer.from_dataframe(table, structs="flatten")
    assert list(got) == ["s.a", "s.b.c", "s.b.d", "i"]
    assert {k: to_py(v) for k, v in got.items()} == want
    filled = dfbuffer.from_dataframe(table, structs="flatten", nulls="fill")
    assert filled["s.b.c"].tolist() == ["x", None, None, "z"]
    assert np.isnan(filled["s.a"][1]) and filled["s.a"][3] == 4
    sliced = table.slice(1, 3)
    got = dfbuffer.from_dataframe(sliced, structs="flatten")
    assert {k: to_py(v) for k, v in got.items()} == sliced.flatten().flatten().to_pydict()
    chunked = pa.concat_tables([table.slice(0, 2), table.slice(2)])
    got = dfbuffer.from_dataframe(chunked, structs="flatten")
    assert {k: to_py(v) for k, v in got.items()} == want
    names = dfbuffer.schema(table, structs="flatten").names
    assert names == ["s.a", "s.b.c", "s.b.d", "i"]
    assert dfbuffer.schema(table, structs="flatten")["s.b.d"].type == "float"
    with pytest.raises(ValueError, match="structs"):
        dfbuffer.from_dataframe(table, structs="split")
    with pytest.raises(ValueError, match="structs"):
        dfbuffer.schema(table, structs="split")


def test_structs_flatten_is_zero_copy_for_numbers():
    x = pa.array(np.arange(5.0))
    table = pa.table({"s": pa.StructArray.from_arrays([x], ["x"])})
    got = dfbuffer.from_dataframe(table, structs="flatten", allow_copy=False)["s.x"]
    assert np.shares_memory(got, np.frombuffer(x.buffers()[1], np.float64))
    dup = pa.table({"s": pa.StructArray.from_arrays([x], ["x"]), "s.x": x})
    with pytest.raises(ValueError, match="duplicate"):
        dfbuffer.from_dataframe(dup, structs="flatten")


def test_pandas_front_end_holds_nested_objects():
    import dfbuffer.pandas

    table = pa.table(
        {"l": pa.array([[1, 2], None]), "s": pa.array([{"a": 1}, None]),
         "f": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float64(), 2))}
    )
    df = dfbuffer.pandas.from_dataframe(table)
    assert df["l"][0].tolist() == [1, 2] and df["l"][1] is None
    assert df["s"][0] == {"a": 1} and df["s"][1] is None
    assert df["f"][1].tolist() == [3.0, 4.0]


def test_to_matrix_names_a_nested_column():
    table = pa.table({"i": [1, 2], "l": pa.array([[1], [2]])})
    with pytest.raises(TypeError, match="'l'"):
        dfbuffer.to_matrix(table)


def test_null_fixed_size_rows_inside_a_list_are_filled():
    # the child values under a null fixed-size row are not nulls themselves
    child = pa.array(np.arange(1, 5, dtype=np.int64))
    valid = pa.py_buffer(np.packbits([1, 0], bitorder="little"))
    fixed = pa.Array.from_buffers(pa.list_(pa.int64(), 2), 2, [valid], children=[child])
    outer = pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()), fixed)
    row = column(outer)[0]
    assert row[0].tolist() == [1, 2] and np.isnan(row[1]).all()
    top = column(fixed, nulls="fill")
    assert top[0].tolist() == [1, 2] and np.isnan(top[1]).all()


def test_polars_frame_with_nested_columns():
    pl = pytest.importorskip("polars")
    df = pl.DataFrame(
        {
            "l": [[1, 2], None, [3]],
            "a": pl.Series([[1.0, 2.0], [3.0, 4.0], None], dtype=pl.Array(pl.Float64, 2)),
            "s": [{"x": 1, "y": "a"}, None, {"x": 3, "y": None}],
            "ls": [["a"], [], None],
        }
    )
    got = dfbuffer.from_dataframe(df)
    want = df.to_dict(as_series=False)
    for name in ("l", "s", "ls"):
        assert to_py(got[name]) == want[name]
    assert got["a"][:2].tolist() == want["a"][:2] and got["a"].mask[2].all()
    assert [c.type for c in dfbuffer.schema(df)] == ["list", "list", "struct", "list"]


def test_duckdb_relation_with_nested_columns():
    duckdb = pytest.importorskip("duckdb")
    rel = duckdb.sql(
        "select [1, 2, NULL] as l, {'a': 1, 'b': 'x'} as s, map([1, 2], ['p', 'q']) as m,"
        " [1.5, 2.5]::DOUBLE[2] as f,"
        " union_value(k := 2)::UNION(k INT, t VARCHAR) as u from range(3)"
    )
    got = dfbuffer.from_dataframe(rel)
    assert to_py(got["l"][0]) == [1, 2, None]
    assert got["s"][2] == {"a": 1, "b": "x"}
    assert got["m"][1] == [(1, "p"), (2, "q")]
    assert got["f"].shape == (3, 2) and got["f"][0].tolist() == [1.5, 2.5]
    assert got["u"].tolist() == [2, 2, 2]
    assert dfbuffer.schema(rel)["u"].union_mode == "sparse"
