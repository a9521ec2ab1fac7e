"""Arrow struct columns beyond the dicts of from_dataframe: ``structs="flatten"`` in
to_matrix, ``columns=`` naming struct leaves (and structs) in from_dataframe, schema and
to_matrix, column_to_ndarray of a bare struct array, and nested columns on a device.
pyarrow's ``Table.flatten`` / ``to_pylist`` are the oracle."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pyarrow as pa
import pytest
from _arrow_device_ctypes import Column, DeviceArray
from test_arrow_nested import to_py

import dfbuffer

FAKE = 0x7F0000100000  # a "device" address: never dereferenced


def flat(table):
    """pyarrow's flattened table (every struct level)."""
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def matrix_of(table):
    """The float64 matrix pyarrow's flattened columns make (None: NaN)."""
    cols = [[np.nan if v is None else v for v in c.to_pylist()] for c in flat(table).columns]
    return np.array(cols, dtype=np.float64).T.reshape(table.num_rows, len(cols))


def numeric_table():
    s = pa.array(
        [{"a": 1, "b": {"c": 2.5, "d": 7}}, None, {"a": None, "b": None},
         {"a": 4, "b": {"c": None, "d": 8}}, {"a": 5, "b": {"c": 0.5, "d": 9}}],
        pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.float64()), ("d", pa.int8())]))]),
    )
    return pa.table({"x": [1.0, 2.0, 3.0, 4.0, 5.0], "s": s})


# ---------------------------------------------------------------- to_matrix


def test_to_matrix_flattens_structs_like_table_flatten():
    table = numeric_table()
    names = ["x", "s.a", "s.b.c", "s.b.d"]
    assert flat(table).column_names == names
    got = dfbuffer.to_matrix(table, structs="flatten")
    np.testing.assert_array_equal(got, matrix_of(table))
    for part in (table.slice(1, 3), table.slice(4), table.slice(2, 0)):
        got = dfbuffer.to_matrix(part, structs="flatten")
        assert got.shape == (part.num_rows, 4)
        np.testing.assert_array_equal(got, matrix_of(part))
    chunked = pa.concat_tables([table.slice(0, 2), table.slice(2, 1), table.slice(3)])
    np.testing.assert_array_equal(
        dfbuffer.to_matrix(chunked, structs="flatten", order="F"), matrix_of(table)
    )
    masked = dfbuffer.to_matrix(table, structs="flatten", nulls="mask")
    want = matrix_of(table)
    assert masked.mask.tolist() == np.isnan(want).tolist()
    with pytest.raises(ValueError, match="'s.a'"):
        dfbuffer.to_matrix(table, structs="flatten", nulls="raise")
    # a struct's null row is a null of every leaf below it, also without nulls of its own
    d = dfbuffer.to_matrix(table, structs="flatten", columns=["s.b.d"])[:, 0]
    assert d[0] == 7 and np.isnan(d[1:3]).all() and d[3:].tolist() == [8, 9]


def test_to_matrix_default_refuses_a_struct_column():
    table = numeric_table()
    with pytest.raises(TypeError, match="'s'"):
        dfbuffer.to_matrix(table)
    with pytest.raises(TypeError, match="'s'"):
        dfbuffer.to_matrix(table, structs="object")
    with pytest.raises(ValueError, match="structs"):
        dfbuffer.to_matrix(table, structs="split")


def test_to_matrix_non_numeric_leaf_named():
    s = pa.array([{"a": 1, "b": "x", "l": [1]}])
    table = pa.table({"s": s})
    with pytest.raises(TypeError, match=r"'s\.b' has a string type \(Arrow format 'u'\)"):
        dfbuffer.to_matrix(table, structs="flatten", columns=["s.a", "s.b"])
    with pytest.raises(TypeError, match=r"'s\.l'.*\+l"):
        dfbuffer.to_matrix(table, structs="flatten", columns=["s.l"])
    assert dfbuffer.to_matrix(table, structs="flatten", columns=["s.a"]).tolist() == [[1]]


@pytest.mark.parametrize(
    "leaf, what, fmt",
    [
        (pa.array(["x"], pa.large_string()), "a string", "U"),
        (pa.array([b"x"]), "a binary", "z"),
        (pa.array([1], pa.date32()), "a date", "tdD"),
        (pa.array([1], pa.duration("ms")), "a duration", "tDm"),
    ],
)
def test_to_matrix_leaf_error_names_the_arrow_format(leaf, what, fmt):
    s = pa.StructArray.from_arrays([pa.array([1]), leaf], names=["a", "b"])
    with pytest.raises(TypeError) as ei:
        dfbuffer.to_matrix(pa.table({"s": s}), structs="flatten")
    assert f"column 's.b' has {what} type (Arrow format '{fmt}')" in str(ei.value)


def test_to_matrix_flatten_polars_and_pandas():
    pl = pytest.importorskip("polars")
    table = numeric_table()
    df = pl.from_arrow(table)
    if not hasattr(df, "__arrow_c_stream__"):
        pytest.skip(f"polars {pl.__version__} DataFrame has no __arrow_c_stream__")
    np.testing.assert_array_equal(dfbuffer.to_matrix(df, structs="flatten"), matrix_of(table))
    got = dfbuffer.to_matrix(df, structs="flatten", columns=["s.b", "x"])
    np.testing.assert_array_equal(got, matrix_of(table)[:, [2, 3, 0]])
    pd = pytest.importorskip("pandas")
    frame = table.to_pandas(types_mapper=pd.ArrowDtype)
    if not hasattr(frame, "__arrow_c_stream__"):
        pytest.skip(f"pandas {pd.__version__} DataFrame has no __arrow_c_stream__")
    np.testing.assert_array_equal(
        dfbuffer.to_matrix(frame, structs="flatten"), matrix_of(table)
    )


# ---------------------------------------------------------------- columns=


def test_columns_names_leaves_and_structs_everywhere():
    table = numeric_table()
    cases = {
        ("s.a",): ["s.a"],
        ("s",): ["s.a", "s.b.c", "s.b.d"],
        ("s.b", "x"): ["s.b.c", "s.b.d", "x"],
        ("s.b.d", "s.a"): ["s.b.d", "s.a"],
    }
    want = flat(table).to_pydict()
    for cols, names in cases.items():
        got = dfbuffer.from_dataframe(table, structs="flatten", columns=list(cols))
        assert list(got) == names
        assert {k: to_py(v) for k, v in got.items()} == {k: want[k] for k in names}
        assert dfbuffer.schema(table, structs="flatten", columns=list(cols)).names == names
        m = dfbuffer.to_matrix(table, structs="flatten", columns=list(cols))
        np.testing.assert_array_equal(m, matrix_of(table.select(["x", "s"]))[
            :, [["x", "s.a", "s.b.c", "s.b.d"].index(n) for n in names]])
    sliced = table.slice(2)
    got = dfbuffer.from_dataframe(sliced, structs="flatten", columns=["s.b"])
    assert to_py(got["s.b.c"]) == flat(sliced).column("s.b.c").to_pylist()
    for bad in (["s.q"], ["q"], ["s.a.b"]):
        with pytest.raises(KeyError):
            dfbuffer.from_dataframe(table, structs="flatten", columns=bad)
        with pytest.raises(KeyError):
            dfbuffer.schema(table, structs="flatten", columns=bad)
        with pytest.raises(KeyError):
            dfbuffer.to_matrix(table, structs="flatten", columns=bad)
    # without flattening a leaf is no column
    with pytest.raises(KeyError):
        dfbuffer.from_dataframe(table, columns=["s.a"])
    with pytest.raises(KeyError):
        dfbuffer.schema(table, columns=["s.a"])


def test_columns_names_leaves_of_a_pandas_frame():
    pd = pytest.importorskip("pandas")
    table = numeric_table()
    frame = table.to_pandas(types_mapper=pd.ArrowDtype)
    frame.index = range(10, 15)  # an index of its own: left out
    if not hasattr(frame, "__arrow_c_stream__"):
        pytest.skip(f"pandas {pd.__version__} DataFrame has no __arrow_c_stream__")
    want = flat(table).to_pydict()
    for cols, names in [(["s.a"], ["s.a"]), (["x", "s.b"], ["x", "s.b.c", "s.b.d"])]:
        got = dfbuffer.from_dataframe(frame, structs="flatten", columns=cols)
        assert list(got) == names
        assert {k: to_py(v) for k, v in got.items()} == {k: want[k] for k in names}
        assert dfbuffer.schema(frame, structs="flatten", columns=cols).names == names
        m = dfbuffer.to_matrix(frame, structs="flatten", columns=cols)
        assert m.shape == (5, len(names))
    with pytest.raises(KeyError):
        dfbuffer.from_dataframe(frame, structs="flatten", columns=["s.q"])


def test_a_column_named_like_a_leaf_is_ambiguous():
    s = pa.array([{"a": 1, "b": 2}, None])
    table = pa.table({"s": s, "s.a": [10.0, 20.0]})
    for cols in (["s.a"], ["x", "s.a"]):
        table_x = table.append_column("x", pa.array([0.0, 0.0]))
        with pytest.raises(ValueError, match="ambiguous"):
            dfbuffer.from_dataframe(table_x, structs="flatten", columns=cols)
        with pytest.raises(ValueError, match="ambiguous"):
            dfbuffer.schema(table_x, structs="flatten", columns=cols)
        with pytest.raises(ValueError, match="ambiguous"):
            dfbuffer.to_matrix(table_x, structs="flatten", columns=cols)
    # the struct's name is not ambiguous: its leaves only
    got = dfbuffer.from_dataframe(table, structs="flatten", columns=["s"])
    assert list(got) == ["s.a", "s.b"] and to_py(got["s.a"]) == [1, None]
    assert dfbuffer.to_matrix(table, structs="flatten", columns=["s"]).shape == (2, 2)
    # every column at once: the names collide
    with pytest.raises(ValueError, match="duplicate"):
        dfbuffer.from_dataframe(table, structs="flatten")
    with pytest.raises(ValueError, match="duplicate"):
        dfbuffer.to_matrix(table, structs="flatten")
    # without flattening the real column is the only one of that name
    assert dfbuffer.from_dataframe(table, columns=["s.a"])["s.a"].tolist() == [10.0, 20.0]


def test_flattened_leaf_selected_zero_copy_keeps_memory_alive():
    data = np.arange(2000, dtype=np.float64)
    gc.collect()  # what earlier tests left is freed before, not during
    before = pa.total_allocated_bytes()
    x = pa.array(data + 1)
    table = pa.table({"s": pa.StructArray.from_arrays([x, pa.array(data)], ["x", "y"])})
    got = dfbuffer.from_dataframe(table, structs="flatten", columns=["s.x"], allow_copy=False)
    leaf = got["s.x"]
    assert np.shares_memory(leaf, np.frombuffer(x.buffers()[1], np.float64))
    ref = weakref.ref(table)
    del table, x
    gc.collect()
    assert ref() is None and leaf.sum() == (data + 1).sum()
    holder = {"leaf": leaf}
    holder["self"] = holder
    del got, leaf, holder
    gc.collect()
    assert pa.total_allocated_bytes() <= before


# ---------------------------------------------------------------- column_to_ndarray


def test_column_to_ndarray_of_a_struct_array():
    vals = [{"a": 1, "b": "x"}, None, {"a": None, "b": "z"}, {"a": 4, "b": None}]
    arr = pa.array(vals)
    got = dfbuffer.column_to_ndarray(arr)
    assert got.dtype == object and to_py(got) == vals
    assert got.mask.tolist() == [False, True, False, False]
    assert to_py(dfbuffer.column_to_ndarray(arr.slice(1, 2))) == vals[1:3]
    ch = pa.chunked_array([arr.slice(0, 1), arr.slice(1)])
    assert to_py(dfbuffer.column_to_ndarray(ch)) == vals
    filled = dfbuffer.column_to_ndarray(arr, nulls="fill")
    assert type(filled) is np.ndarray and filled[1] is None
    # the same values as the column of a table
    table_col = dfbuffer.from_dataframe(pa.table({"c": arr}))["c"]
    assert to_py(table_col) == to_py(got)
    # from_dataframe still reads a record batch as a table
    batch = pa.record_batch({"a": [1, 2]})
    assert dfbuffer.from_dataframe(batch)["a"].tolist() == [1, 2]
    assert dfbuffer.column_to_ndarray(batch).tolist() == [{"a": 1}, {"a": 2}]


def test_column_to_ndarray_of_a_polars_struct_series():
    pl = pytest.importorskip("polars")
    vals = [{"a": 1, "b": "x"}, None, {"a": 3, "b": None}]
    series = pl.Series("s", vals)
    if not hasattr(series, "__arrow_c_stream__"):
        pytest.skip(f"polars {pl.__version__} Series has no __arrow_c_stream__")
    got = dfbuffer.column_to_ndarray(series)
    assert to_py(got) == series.to_arrow().to_pylist()


# ---------------------------------------------------------------- devices


@pytest.mark.parametrize("convert", ["from_dataframe", "column_to_ndarray", "to_matrix"])
def test_nested_column_on_a_device_is_a_buffer_error(convert, collect):
    items = Column("i", 8, [0, FAKE])
    lst = Column("+l", 4, [0, FAKE + 0x100], name="lst", children=[items])
    prod = DeviceArray(Column("+s", 4, [0]), children=[Column("i", 4, [0, FAKE]), lst])
    with pytest.raises(BufferError, match=r"column 'lst'.*\+l.*CUDA:1") as info:
        getattr(dfbuffer, convert)(prod)
    assert "host" in str(info.value)
    del info
    collect()
    assert (prod.released.schema, prod.released.array) == (1, 1)


@pytest.mark.parametrize("nulls", ["mask", "fill"])
def test_fixed_size_list_value_nulls_inside_a_struct_are_nulls(nulls):
    # a struct's rows are dicts (no mask): a fixed-size list field's null values must
    # show as nulls (NaN), as a variable list's do, never as the bytes under them
    t = pa.struct([pa.field("f", pa.list_(pa.int64(), 2)), pa.field("g", pa.list_(pa.int64()))])
    arr = pa.array([{"f": [None, 7], "g": [None, 7]}, {"f": [1, 2], "g": [1, 2]}], t)
    got = dfbuffer.column_to_ndarray(arr, nulls=nulls)
    f0, g0 = got[0]["f"], got[0]["g"]
    assert np.isnan(f0[0]) and f0[1] == 7
    np.testing.assert_array_equal(f0, g0)  # the fixed and the variable list alike
    assert got[1]["f"].tolist() == [1.0, 2.0]


def test_fixed_size_list_value_nulls_inside_a_list_are_nulls():
    arr = pa.array([[[None, 1]], [[1, 2]]], pa.list_(pa.list_(pa.int64(), 2)))
    got = dfbuffer.column_to_ndarray(arr)
    assert np.isnan(got[0][0, 0]) and got[0][0, 1] == 1
