"""Arrow's canonical extension types are identified only through the type table, by their
exact ARROW:extension:name (length included), with their metadata read by one parser
(src/core/types.c); arrow.bool8 converts to bool (nonzero is True) on every path,
arrow.uuid to uuid.UUID objects (made as the uuid module makes them), json and opaque
to their storage (docs/requirements.md, "Extension types")."""

from __future__ import annotations

import gc
import json
import weakref

import numpy as np
import pyarrow as pa
import pytest
from racing import as_list, race

import dfbuffer
import dfbuffer.pandas

if not hasattr(pa, "bool8"):
    pytest.skip("pyarrow < 18 has no arrow.bool8", allow_module_level=True)

BOOL8_BYTES = [1, 0, 2, -1]
BOOL8_VALUES = [True, False, True, True]

# name -> the values a call on a one-column table "b" gives, as a list
ENTRY_POINTS = {
    "column_to_ndarray": lambda t: dfbuffer.column_to_ndarray(t.column(0)),
    "column_to_ndarray(chunk)": lambda t: dfbuffer.column_to_ndarray(t.column(0).chunk(0)),
    "from_dataframe": lambda t: dfbuffer.from_dataframe(t)["b"],
    "structs=flatten": lambda t: dfbuffer.from_dataframe(t, structs="flatten")["b"],
    "nulls=fill": lambda t: dfbuffer.from_dataframe(t, nulls="fill")["b"],
    "to_matrix": lambda t: dfbuffer.to_matrix(t)[:, 0],
    "pandas": lambda t: dfbuffer.pandas.from_dataframe(t)["b"].to_numpy(),
}


def _bool8(values, *, chunks: int = 1) -> pa.Table:
    storage = pa.array(values, pa.int8())
    arr = pa.ExtensionArray.from_storage(pa.bool8(), storage)
    if chunks == 1:
        return pa.table({"b": arr})
    return pa.table({"b": pa.chunked_array([arr.slice(0, 2), arr.slice(2)])})


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("chunks", [1, 2])
def test_bool8_without_nulls_is_bool(entry, chunks):
    # one chunk without nulls took the plain-number fast path, which did not look at the
    # extension: the int8 storage came back ([1, 0, 2, -1])
    got = ENTRY_POINTS[entry](_bool8(BOOL8_BYTES, chunks=chunks))
    expected = BOOL8_VALUES[:2] if entry.endswith("(chunk)") and chunks == 2 else BOOL8_VALUES
    assert np.asarray(got).dtype == np.bool_
    assert np.asarray(got).tolist() == expected


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_bool8_with_a_null_is_bool(entry):
    import pandas as pd

    got = ENTRY_POINTS[entry](_bool8([1, None, 2, -1]))
    # nulls="fill" and to_matrix upcast bools to float64 with NaN in the null slots
    plain = [None if v is None or v is pd.NA or v != v else bool(v) for v in got.tolist()]
    assert plain == [True, None, True, True]
    assert set(map(float, np.asarray(np.ma.getdata(got))[[0, 2, 3]])) == {1.0}


def test_bool8_schema_and_interchange_say_bool():
    t = _bool8(BOOL8_BYTES)
    col = dfbuffer.schema(t)["b"]
    assert col.extension_name == "arrow.bool8" and "bool" in str(col)
    ix = dfbuffer.to_interchange(t).get_column(0)
    assert ix.dtype[0] == dfbuffer.DtypeKind.BOOL
    data, dtype = ix.get_buffers()["data"]
    assert dtype[0] == dfbuffer.DtypeKind.BOOL


def _field(name: bytes, typ: pa.DataType, ext_meta: bytes | None = None) -> pa.Field:
    md = {b"ARROW:extension:name": name}
    if ext_meta is not None:
        md[b"ARROW:extension:metadata"] = ext_meta
    return pa.field("b", typ, metadata=md)


def _table(field: pa.Field, arr: pa.Array) -> pa.Table:
    return pa.table([arr], schema=pa.schema([field]))


TENSOR_META = json.dumps({"shape": [2, 2]}).encode()


def test_a_tensor_is_named_exactly():
    arr = pa.array([[1, 2, 3, 4], [5, 6, 7, 8]], pa.list_(pa.int8(), 4))
    real = _table(_field(b"arrow.fixed_shape_tensor", arr.type, TENSOR_META), arr)
    assert dfbuffer.from_dataframe(real)["b"].shape == (2, 2, 2)
    # an embedded NUL: the metadata value is longer than its C string, another name.  The
    # name was compared with strcmp and this converted as a (2, 2, 2) tensor while
    # schema() reported the longer name
    for name in (b"arrow.fixed_shape_tensor\x00x", b"arrow.fixed_shape_tensor\x00",
                 b"arrow.fixed_shape_tenso", b"arrow.fixed_shape_tensorx"):
        t = _table(_field(name, arr.type, TENSOR_META), arr)
        for got in (dfbuffer.from_dataframe(t)["b"], dfbuffer.column_to_ndarray(t.column(0))):
            assert got.shape == (2, 4) and got.tolist() == arr.to_pylist()
        assert dfbuffer.schema(t)["b"].extension_name == name.decode()


@pytest.mark.parametrize(
    ("name", "storage"),
    [
        (b"arrow.bool8\x00", pa.array(BOOL8_BYTES, pa.int8())),
        (b"arrow.bool8\x00x", pa.array(BOOL8_BYTES, pa.int8())),
        (b"arrow.bool", pa.array(BOOL8_BYTES, pa.int8())),
        (b"arrow.uuid\x00", pa.array([b"0123456789abcdef"], pa.binary(16))),
    ],
    ids=["bool8-nul", "bool8-nul-x", "bool", "uuid-nul"],
)
def test_other_names_keep_their_storage(name, storage):
    t = _table(_field(name, storage.type), storage)
    for entry in ("column_to_ndarray", "from_dataframe", "pandas"):
        got = np.asarray(ENTRY_POINTS[entry](t))
        assert got.tolist() == storage.to_pylist()
    assert dfbuffer.schema(t)["b"].extension_name == name.decode()


@pytest.mark.parametrize("count", [-1, 1])
def test_malformed_extension_metadata_is_a_value_error(count):
    # a negative count, or a negative key length: ValueError, never a read past it
    import ctypes
    import struct

    from test_arrow_bad import Producer

    md = struct.pack("<i", count) + (struct.pack("<i", -7) if count > 0 else b"")
    p = Producer(b"c", 4, [None, np.array(BOOL8_BYTES, np.int8)])
    keep = ctypes.create_string_buffer(md, len(md) + 8)
    p.keep.append(keep)
    p.schema.metadata = ctypes.cast(keep, ctypes.c_char_p)
    with pytest.raises(ValueError, match="negative"):
        dfbuffer.column_to_ndarray(p)
    with pytest.raises(ValueError, match="negative"):
        dfbuffer.schema(p)


# ---------------------------------------------------------------------------
# uuid.UUID objects: made without calling the class only when it is a real class of the
# expected layout (object's __new__, `int` and `is_safe` slots); whatever else uuid.UUID
# has been replaced by is called.  Monkeypatching can change results, never crash.

UUIDS = [b"\x01" * 16, None, bytes(range(16))]


def _uuid_column() -> pa.Array:
    return pa.array(UUIDS, pa.uuid())


def _convert_everywhere(arr: pa.Array) -> list[list]:
    t = pa.table({"u": arr})
    outs = [
        dfbuffer.column_to_ndarray(arr),
        dfbuffer.from_dataframe(t)["u"],
        dfbuffer.from_dataframe(t, nulls="fill")["u"],
        dfbuffer.pandas.from_dataframe(t)["u"].to_numpy(),
    ]
    return [list(np.ma.getdata(o)) for o in outs]


def test_uuid_replaced_by_functools_partial_is_a_type_error(monkeypatch):
    # functools.partial is a class with a __new__ of its own: object.__new__ made
    # uninitialised partial objects (SIGSEGV when used)
    import functools
    import uuid

    monkeypatch.setattr(uuid, "UUID", functools.partial)
    for call in (lambda a: dfbuffer.column_to_ndarray(a),
                 lambda a: dfbuffer.from_dataframe(pa.table({"u": a})),
                 lambda a: dfbuffer.pandas.from_dataframe(pa.table({"u": a}))):
        with pytest.raises(TypeError):
            call(_uuid_column())


class _Slots:
    __slots__ = ("int", "is_safe", "__weakref__")


class _Property:
    def __init__(self, *, bytes):  # noqa: A002  (uuid.UUID's keyword)
        self.got = bytes


def _made_by(cls) -> list:
    return [None if b is None else cls(bytes=b) for b in UUIDS]


@pytest.mark.parametrize(
    ("replacement", "expected"),
    [
        (dict, lambda: _made_by(dict)),
        (lambda bytes: bytes.hex(), lambda: [None if b is None else b.hex() for b in UUIDS]),
        (_Property, None),
        (_Slots, None),
    ],
    ids=["dict", "function", "class", "slots-class"],
)
def test_uuid_replaced_by_another_callable_is_called(monkeypatch, replacement, expected):
    import uuid

    real = uuid.UUID
    monkeypatch.setattr(uuid, "UUID", replacement)
    for got in _convert_everywhere(_uuid_column()):
        assert got[1] is None or got[1] != got[1]  # pandas makes str columns' None NaN
        if replacement is _Property:
            assert [type(v) for v in got[::2]] == [_Property] * 2
            assert [v.got for v in got[::2]] == [UUIDS[0], UUIDS[2]]
        elif replacement is _Slots:
            # the expected layout: made as uuid.UUID's are, with the right values
            assert [type(v) for v in got[::2]] == [_Slots] * 2
            assert [v.int for v in got[::2]] == [real(bytes=UUIDS[0]).int,
                                                 real(bytes=UUIDS[2]).int]
        else:
            assert got[::2] == expected()[::2]
    monkeypatch.undo()
    assert _convert_everywhere(_uuid_column())[0] == [
        None if b is None else uuid.UUID(bytes=b) for b in UUIDS]


@pytest.mark.parametrize("replacement", [object, int, type, property, None, 5])
def test_uuid_replaced_by_a_builtin_is_a_clean_error(monkeypatch, replacement):
    import uuid

    monkeypatch.setattr(uuid, "UUID", replacement)
    with pytest.raises(TypeError):
        dfbuffer.column_to_ndarray(_uuid_column())


def test_a_uuid_subclass_makes_its_objects(monkeypatch):
    import uuid

    class Sub(uuid.UUID):
        __slots__ = ()

    monkeypatch.setattr(uuid, "UUID", Sub)
    got = list(np.ma.getdata(dfbuffer.column_to_ndarray(_uuid_column())))
    assert type(got[0]) is Sub and got[0] == Sub(bytes=UUIDS[0]) and got[1] is None


def test_bool8_is_a_zero_copy_bool_view():
    arr = pa.array([1, 0, None, 1], pa.int8()).cast(pa.bool8())
    res = dfbuffer.column_to_ndarray(arr)
    assert res.dtype == np.bool_ and as_list(res) == [True, False, None, True]
    assert res.data.__array_interface__["data"][0] == arr.storage.buffers()[1].address
    assert not res.data.flags.writeable
    ref = weakref.ref(arr)
    del arr
    gc.collect()
    assert ref() is None and as_list(res) == [True, False, None, True]
    cycle = [res]
    cycle.append(cycle)
    base = weakref.ref(res.data.base)
    del res, cycle
    gc.collect()
    assert base() is None


def test_uuid_json_and_unknown_extensions():
    import uuid

    ids = [uuid.UUID(int=k * 2**100 + 7) for k in range(3)]
    arr = pa.array([ids[0].bytes, None, ids[2].bytes], pa.uuid())
    assert as_list(dfbuffer.column_to_ndarray(arr)) == arr.to_pylist() == [ids[0], None, ids[2]]
    assert as_list(dfbuffer.column_to_ndarray(arr.slice(2))) == [ids[2]]
    js = pa.array(['{"a": 1}', None], pa.json_())
    assert as_list(dfbuffer.column_to_ndarray(js)) == ['{"a": 1}', None]
    opaque = pa.opaque(pa.int32(), "geo", "vendor")
    op = pa.ExtensionArray.from_storage(opaque, pa.array([1, None, 3], pa.int32()))
    assert as_list(dfbuffer.column_to_ndarray(op)) == [1, None, 3]


def _uuid_array(n: int) -> tuple[pa.Array, list]:
    import uuid

    rng = np.random.default_rng(5)
    ids = [uuid.UUID(bytes=rng.bytes(16)) for _ in range(n - 4)]
    ids += [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.UUID(int=2**64), None]
    values = [None if i % 7 == 3 else u for i, u in enumerate(ids)]
    return pa.array([None if u is None else u.bytes for u in values], pa.uuid()), values


def test_uuids_behave_as_the_uuid_module_makes_them():
    import pickle
    import uuid

    arr, values = _uuid_array(300)
    got = as_list(dfbuffer.column_to_ndarray(arr))
    assert got == values == arr.to_pylist()
    for ours, theirs in zip(got, values, strict=True):
        if theirs is None:
            assert ours is None
            continue
        assert type(ours) is uuid.UUID and type(ours.int) is int
        assert (ours.int, ours.is_safe, str(ours)) == (theirs.int, theirs.is_safe, str(theirs))
        assert hash(ours) == hash(theirs) and {theirs: 1}[ours] == 1
        assert pickle.loads(pickle.dumps(ours)) == theirs
        assert (ours < uuid.UUID(int=2**127)) == (theirs < uuid.UUID(int=2**127))
        assert gc.is_tracked(ours) == gc.is_tracked(theirs)
        with pytest.raises(TypeError):
            ours.int = 1  # immutable, as uuid.UUID is


def test_uuids_sliced_chunked_and_the_collector_state():
    arr, values = _uuid_array(100)
    assert as_list(dfbuffer.column_to_ndarray(arr.slice(3, 50))) == values[3:53]
    chunked = pa.chunked_array([arr.slice(0, 40), arr.slice(40)])
    assert as_list(dfbuffer.column_to_ndarray(chunked)) == values
    assert gc.isenabled()
    gc.disable()
    try:
        dfbuffer.column_to_ndarray(arr)
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
    dfbuffer.column_to_ndarray(arr)
    assert gc.isenabled()


def test_racing_uuid_values():
    import uuid

    n = 20_000
    data = np.frombuffer(np.random.default_rng(1).bytes(16 * n), np.uint8).copy()
    good = data.copy()
    other = np.full_like(data, 0xAB)
    valid = pa.array([i % 9 != 2 for i in range(n)]).buffers()[1]
    storage = pa.Array.from_buffers(pa.binary(16), n, [valid, pa.py_buffer(data)])
    arr = pa.ExtensionArray.from_storage(pa.uuid(), storage)

    nulls = [i % 9 == 2 for i in range(n)]
    good_rows = good.reshape(n, 16)[~np.array(nulls)]

    def check(res) -> None:
        got = as_list(res)
        assert len(got) == n
        assert [v is None for v in got] == nulls
        present = [v for v in got if v is not None]
        assert all(isinstance(v, uuid.UUID) for v in present)
        # each byte is the old or the new one
        b = np.frombuffer(b"".join(v.bytes for v in present), np.uint8).reshape(-1, 16)
        assert ((b == good_rows) | (b == 0xAB)).all()

    ok, refused = race(lambda: dfbuffer.column_to_ndarray(arr), check, [(data, good, other)])
    assert ok == 8 and refused == 0
