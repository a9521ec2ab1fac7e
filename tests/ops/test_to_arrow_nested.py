"""dfbuffer.to_arrow hands out every Arrow format an Arrow producer holds (lists, list
views, fixed-size lists, structs, maps, unions, run-end encoded, binary/string views,
dictionaries of these, extension types) node for node: the producer's buffers, zero-copy,
kept alive by the exported arrays; the same through to_interchange's view."""

from __future__ import annotations

import threading
import uuid
import weakref

import numpy as np
import pyarrow as pa
import pytest

import dfbuffer

PA_MAJOR = int(pa.__version__.split(".")[0])
LONG = "a string longer than twelve bytes"


def _list_view(large: bool) -> pa.Array:
    t = pa.large_list_view(pa.int32()) if large else pa.list_view(pa.int32())
    return pa.array([[1, 2], None, [3], [], [4, 5, 6]], t)


def _dict_of_lists() -> pa.Array:
    values = pa.array([[1], [2, 3], None])
    return pa.DictionaryArray.from_arrays(pa.array([0, 2, None, 1, 0], pa.int8()), values)


def _uuid() -> pa.Array:
    vals = [uuid.UUID(int=i).bytes for i in range(4)] + [None]
    return pa.array(vals, pa.uuid())


def _tensor() -> pa.Array:
    typ = pa.fixed_shape_tensor(pa.int32(), (2, 2))
    storage = pa.array([[1, 2, 3, 4], None, [5, 6, 7, 8], [0] * 4, [9] * 4],
                       pa.list_(pa.int32(), 4))
    return pa.ExtensionArray.from_storage(typ, storage)


BUILDERS = {
    "list": lambda: pa.array([[1, 2], None, [3], [], [4, None]]),
    "large_list": lambda: pa.array([["a"], None, [LONG, None], [], ["b"]],
                                   pa.large_list(pa.string())),
    "list_view": lambda: _list_view(False),
    "large_list_view": lambda: _list_view(True),
    "fixed_size_list": lambda: pa.array([[1, 2], None, [3, 4], [5, None], [7, 8]],
                                        pa.list_(pa.int8(), 2)),
    "struct": lambda: pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": LONG},
                                {"a": 4, "b": None}, {"a": 5, "b": "y"}]),
    "nested": lambda: pa.array([[{"p": [1], "q": {"r": 1.5}}], None, [],
                                [{"p": None, "q": None}], [{"p": [2, 3], "q": {"r": 2.5}}]]),
    "map": lambda: pa.array([[("k", 1)], None, [], [("a", 2), ("b", None)], [("z", 3)]],
                            pa.map_(pa.string(), pa.int64())),
    "sparse_union": lambda: pa.UnionArray.from_sparse(
        pa.array([0, 1, 0, 1, 0], pa.int8()),
        [pa.array([1, 2, None, 4, 5]), pa.array(["a", LONG, "c", None, "e"])]),
    "dense_union": lambda: pa.UnionArray.from_dense(
        pa.array([0, 1, 0, 1, 0], pa.int8()), pa.array([0, 0, 1, 1, 2], pa.int32()),
        [pa.array([1, None, 3]), pa.array(["a", LONG])]),
    "run_end_ints": lambda: pa.RunEndEncodedArray.from_arrays(
        pa.array([2, 3, 5], pa.int32()), pa.array([7, None, 9])),
    "run_end_strings": lambda: pa.RunEndEncodedArray.from_arrays(
        pa.array([1, 4, 5], pa.int16()), pa.array(["x", LONG, None])),
    "binary_view": lambda: pa.array([b"x", None, LONG.encode(), b"", b"y" * 40],
                                    pa.binary_view()),
    "string_view": lambda: pa.array(["x", None, LONG, "", "y" * 40], pa.string_view()),
    "null": lambda: pa.nulls(5),
    "dictionary": lambda: pa.array(["a", None, "b", "a", LONG]).dictionary_encode(),
    "dictionary_of_lists": _dict_of_lists,
    "uuid": _uuid,
    "fixed_shape_tensor": _tensor,
}


def _build(name: str) -> pa.Array:
    try:
        return BUILDERS[name]()
    except (AttributeError, NotImplementedError, TypeError, pa.ArrowNotImplementedError,
            pa.ArrowInvalid) as exc:
        pytest.skip(f"pyarrow {pa.__version__} cannot build {name}: {exc}")


def _addresses(arr: pa.Array) -> list[int]:
    """Every buffer address of an array, its children and dictionary included."""
    return [b.address for b in arr.buffers() if b is not None]


@pytest.fixture(params=sorted(BUILDERS))
def arr(request) -> pa.Array:
    return _build(request.param)


def test_round_trips_plain_sliced_and_chunked(arr):
    t = pa.table({"c": arr, "i": pa.array(range(len(arr)))})
    assert pa.table(dfbuffer.to_arrow(t)).equals(t)
    for part in (t.slice(1), t.slice(2, 2), t.slice(len(arr))):
        out = pa.table(dfbuffer.to_arrow(part))
        assert out.equals(part)
        assert out.to_pylist() == part.to_pylist()
    chunked = pa.table({"c": pa.chunked_array([arr, arr.slice(1), arr.slice(0, 0)])})
    out = pa.table(dfbuffer.to_arrow(chunked))
    assert out.equals(chunked)
    assert out.column("c").num_chunks >= 2  # a batch per chunk (pyarrow leaves out empty ones)


def test_hands_out_the_producers_buffers(arr):
    t = pa.table({"c": arr}).slice(1)
    out = pa.table(dfbuffer.to_arrow(t))
    got, want = out.column("c").chunk(0), t.column("c").chunk(0)
    assert _addresses(got) == _addresses(want)
    assert got.offset == want.offset


def test_through_to_interchange(arr):
    t = pa.table({"c": arr, "i": pa.array(range(len(arr)))})
    for part in (t, t.slice(1)):
        view = dfbuffer.to_interchange(part)
        out = pa.table(view)
        assert out.equals(part)
        assert _addresses(out.column("c").chunk(0)) == _addresses(part.column("c").chunk(0))
        assert pa.table(dfbuffer.to_arrow(view, columns=["c"])).column("c").equals(
            part.column("c"))
    got = dfbuffer.from_dataframe(dfbuffer.to_interchange(t))
    want = dfbuffer.from_dataframe(t)
    assert list(got) == list(want)
    assert repr(got["c"]) == repr(want["c"])


def test_to_interchange_chunks_and_selections_keep_the_nodes(arr):
    t = pa.Table.from_batches([pa.record_batch({"c": arr, "i": pa.array(range(len(arr)))})]
                              * 2)
    view = dfbuffer.to_interchange(t)
    parts = [pa.table(p) for p in view.get_chunks(4)]
    n = len(arr)
    want = [t.slice(start, size) for b in range(2) for start, size in
            [(b * n, n // 2), (b * n + n // 2, n - n // 2)]]
    assert len(parts) == len(want) == 4
    for got, exp in zip(parts, want, strict=True):
        assert got.equals(exp)
    assert pa.table(view.select_columns_by_name(["c"])).column("c").equals(t.column("c"))
    assert pa.table(view.__dataframe__(allow_copy=False)).equals(t)


@pytest.mark.parametrize("name", ["list", "large_list", "fixed_size_list", "struct",
                                  "binary_view", "string_view", "dictionary"])
def test_polars_reads_the_view(name):
    pl = pytest.importorskip("polars")
    if not hasattr(pl.DataFrame, "__arrow_c_stream__"):
        pytest.skip("this polars reads no PyCapsule stream")
    arr = _build(name)
    t = pa.table({"c": arr})
    got = pl.DataFrame(dfbuffer.to_interchange(t))
    assert got.equals(pl.from_arrow(t))
    assert pl.DataFrame(dfbuffer.to_arrow(t)).equals(pl.from_arrow(t))


def test_record_batch_with_a_top_level_offset():
    # a struct array as the producer: its own offset moves every column
    for name in ("sparse_union", "run_end_strings", "null", "list"):
        try:
            col = BUILDERS[name]()
        except (AttributeError, NotImplementedError, TypeError,
                pa.ArrowNotImplementedError):
            continue  # a pyarrow that cannot build it
        st = pa.StructArray.from_arrays([col, pa.array(range(5))], ["c", "i"]).slice(2)
        out = pa.table(dfbuffer.to_arrow(st))
        assert out.column("c").to_pylist() == col.slice(2).to_pylist(), name
        out.validate(full=True)


def test_offsets_inside_children():
    child = pa.array(range(10)).slice(3)
    inner = pa.StructArray.from_arrays([child, pa.array([LONG] * 8).slice(1)], ["n", "s"])
    lists = pa.ListArray.from_arrays(pa.array([0, 2, 2, 5], pa.int32()), inner.slice(1))
    t = pa.table({"l": lists}).slice(1)
    out = pa.table(dfbuffer.to_arrow(t))
    assert out.equals(t)
    assert out.to_pylist() == t.to_pylist()
    got_child = out.column("l").chunk(0).values.field("n")
    assert got_child.offset == t.column("l").chunk(0).values.field("n").offset == 4


def test_schema_keeps_names_nullability_and_metadata():
    fields = [
        pa.field("req", pa.list_(pa.field("elem", pa.int64(), nullable=False)),
                 nullable=False, metadata={"k": "v"}),
        pa.field("st", pa.struct([pa.field("x", pa.int8(), nullable=False,
                                           metadata={"m": "1"})])),
    ]
    t = pa.table([pa.array([[1], [2, 3]], fields[0].type),
                  pa.array([{"x": 1}, {"x": 2}], fields[1].type)],
                 schema=pa.schema(fields))
    exp = dfbuffer.to_arrow(t)
    for schema in (pa.schema(exp), pa.table(exp).schema,
                   pa.table(dfbuffer.to_interchange(t)).schema):
        assert schema.equals(t.schema, check_metadata=True)


def test_extension_types_keep_their_name():
    t = pa.table({"u": _build("uuid")})
    out = pa.table(dfbuffer.to_arrow(t))
    assert out.column("u").type == t.column("u").type
    assert out.schema.field("u").type.extension_name == "arrow.uuid"
    t2 = pa.table({"f": _tensor()})
    out2 = pa.table(dfbuffer.to_interchange(t2))
    assert out2.schema.field("f").type.extension_name == "arrow.fixed_shape_tensor"
    assert out2.equals(t2)


def test_view_variadic_buffers_and_sizes_are_handed_out():
    arr = _build("string_view")
    out = pa.table(dfbuffer.to_arrow(pa.table({"v": arr}))).column("v").chunk(0)
    assert len(out.buffers()) == len(arr.buffers()) >= 3  # views and a variadic buffer
    assert _addresses(out) == _addresses(arr)
    out.validate(full=True)


def test_data_outlives_the_source(collect):
    values = np.arange(1000, dtype=np.int64)
    wv = weakref.ref(values)
    offsets = pa.array(np.arange(0, 1001, 10, dtype=np.int32))
    lists = pa.ListArray.from_arrays(offsets, pa.array(values))
    t = pa.table({"l": lists, "s": pa.StructArray.from_arrays([lists], ["x"])})
    wt = weakref.ref(t)
    exp = dfbuffer.to_arrow(t)
    del values, lists, t
    collect()
    assert wt() is None
    assert wv() is not None  # the export holds the producer's memory
    out = pa.table(exp)
    del exp
    collect()
    assert wv() is not None
    assert out.column("l").chunk(0).values.to_pylist() == list(range(1000))
    del out
    collect()
    assert wv() is None


def test_capsule_outlives_the_view(collect):
    values = np.arange(100, dtype=np.int64)
    wv = weakref.ref(values)
    t = pa.table({"l": pa.ListArray.from_arrays(pa.array([0, 50, 100], pa.int32()),
                                                pa.array(values))})
    cap = dfbuffer.to_interchange(t).__arrow_c_stream__()
    del values, t
    collect()
    assert wv() is not None
    out = pa.RecordBatchReader._import_from_c_capsule(cap).read_all()
    del cap
    collect()
    assert out.column("l").to_pylist()[1] == list(range(50, 100))
    del out
    collect()
    assert wv() is None


def test_reference_cycle_is_collected(collect):
    class Holder:
        pass

    h = Holder()
    h.values = np.arange(10, dtype=np.int64)
    lists = pa.ListArray.from_arrays(pa.array([0, 4, 10], pa.int32()), pa.array(h.values))
    h.exp = dfbuffer.to_arrow(pa.table({"l": lists}))
    h.view = dfbuffer.to_interchange(h.exp)
    h.cap = h.view.__arrow_c_stream__()
    h.self = h
    wh, wv = weakref.ref(h), weakref.ref(h.values)
    del h, lists
    collect()
    assert wh() is None and wv() is None


def test_racing_writer_never_crashes():
    # nothing of the producer's values or offsets is read: a writer changing the
    # child values under the export changes only what the consumer sees
    values = np.zeros(100_000, dtype=np.int64)
    lists = pa.ListArray.from_arrays(pa.array([0, 50_000, 100_000], pa.int32()),
                                     pa.array(values))
    t = pa.table({"l": lists})
    stop = threading.Event()

    def write():
        v = 0
        while not stop.is_set():
            v += 1
            values[:] = v

    th = threading.Thread(target=write)
    th.start()
    try:
        for _ in range(20):
            out = pa.table(dfbuffer.to_arrow(t))
            assert out.column("l").chunk(0).values.to_numpy().min() >= 0
    finally:
        stop.set()
        th.join()


def _deep(levels: int) -> pa.Array:
    typ = pa.int8()
    for _ in range(levels):
        typ = pa.list_(typ)
    return pa.array([None, []], typ)


def test_too_deep_nesting_is_refused():
    with pytest.raises(ValueError, match="deeper"):
        pa.table(dfbuffer.to_arrow(pa.table({"d": _deep(300)})))


def test_deep_column_leaves_the_others_served():
    # deeper than the readers (and pyarrow) go (64), within the export's bound (256)
    t = pa.table({"d": _deep(70), "x": [1, 2]})
    view = dfbuffer.to_interchange(t)
    assert dfbuffer.from_dataframe(view.select_columns_by_name(["x"]))["x"].tolist() == [1, 2]
    assert pa.table(dfbuffer.to_arrow(view, columns=["x"])).equals(t.select(["x"]))


@pytest.mark.parametrize("length, offset", [(4, 2), (6, 0), (-1, 0), (1, -1), (2**62, 2**62)])
def test_a_node_slice_outside_its_rows_is_refused(length, offset):
    # the chunk of a producer's node names rows to hand out; rows the node does not
    # hold would let a consumer read past the producer's buffers
    from dfbuffer._interchange import _arrow_nodes, _arrow_table_stream

    fields, batches = _arrow_nodes(pa.table({"l": pa.array([[1], [2, 3], None, [4], []])}))
    n, (chunk,) = batches[0]
    bad = (length, -1, offset, *chunk[3:])
    with pytest.raises(ValueError):
        _arrow_table_stream(fields, ((n, (bad,)),))
    good = (3, -1, 2, *chunk[3:])
    got = pa.table(_StreamOf(_arrow_table_stream(fields, ((3, (good,)),))))
    assert got.column("l").to_pylist() == [None, [4], []]


class _StreamOf:
    def __init__(self, capsule):
        self._capsule = capsule

    def __arrow_c_stream__(self, requested_schema=None):
        return self._capsule


class _StructProducer:
    """An Arrow array producer (a struct array) in a reference cycle with itself."""

    def __init__(self, arr):
        self.arr = arr
        self.me = self

    def __arrow_c_array__(self, requested_schema=None):
        return self.arr.__arrow_c_array__(requested_schema)


@pytest.mark.parametrize("make", [
    lambda: pa.array([{"a": 1}, {"a": None}]),
    lambda: pa.array([{"a": 1, "b": "x"}, None]),
    lambda: pa.chunked_array([pa.array([{"a": 1}, {"a": 2}])]),
    lambda: _StructProducer(pa.array([{"a": 1.5}, {"a": 2.5}])),
], ids=["one field", "two fields, a null row", "ChunkedArray", "producer in a cycle"])
def test_a_struct_array_mapping_value_is_one_struct_column(make):
    # a mapping's Arrow value is one column (as column_to_ndarray reads it): a struct
    # array is a struct column, never a table of its fields
    value = make()
    ref = weakref.ref(value) if isinstance(value, _StructProducer) else None
    exp = dfbuffer.to_arrow({"s": value, "x": np.arange(2.0)})
    want = dfbuffer.from_dataframe({"s": value})["s"]
    assert [c.type for c in dfbuffer.schema({"s": value})] == ["struct"]
    del value
    import gc

    gc.collect()
    if ref is not None:
        assert ref() is None  # the export holds the arrays, not the producer
    t = pa.table(exp)
    assert t.column_names == ["s", "x"] and pa.types.is_struct(t.schema.field("s").type)
    assert t.column("s").to_pylist() == [
        None if m else v for v, m in zip(np.ma.getdata(want).tolist(),
                                         np.ma.getmaskarray(want).tolist(), strict=True)]
