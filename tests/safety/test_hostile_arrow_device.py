"""Hostile Arrow C device structs: garbage device types and ids, negative or huge lengths
and offsets, NULL buffers and buffer lists, wrong buffer counts, sync events, and release
callbacks that do nothing, raise, or leave themselves set.  Every public entry point that
takes an Arrow device producer answers each with a clean exception (ValueError,
BufferError, TypeError, NotImplementedError) or a correct result, releases what it moved
exactly once, and never reads device memory: the "CUDA" addresses here are not mapped, so
a read would crash the process (the suite runs under ASan + UBSan in CI).

The structs are built by hand with ctypes (tests/_arrow_device_ctypes.py), as no peer
makes broken ones.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest
from _arrow_device_ctypes import (
    ARRAY_RELEASE,
    CUDA,
    GET_LAST_ERROR,
    GET_NEXT,
    GET_SCHEMA,
    SCHEMA_RELEASE,
    STREAM_RELEASE,
    ArrowArray,
    ArrowDeviceArray,
    ArrowDeviceArrayStream,
    ArrowSchema,
    Column,
    DeviceArray,
    DeviceStream,
    capsule,
)

import dfbuffer
import dfbuffer.pandas
from dfbuffer import Buffer

CPU = 1
FAKE = 0x7F0000100000  # a "device" address: never dereferenced
CLEAN = (ValueError, BufferError, TypeError, NotImplementedError, OverflowError)

# the entry points that take a producer with only the device half of the interface
# (schema() and dfbuffer.pandas.from_dataframe refuse those with TypeError, untouched)
ENTRIES = {
    "from_object": Buffer.from_object,
    "to_interchange": lambda p: [
        c.get_buffers() for c in (dfbuffer.to_interchange(p).get_columns())],
    "column_to_ndarray": dfbuffer.column_to_ndarray,
    "from_dataframe": dfbuffer.from_dataframe,
    "to_matrix": dfbuffer.to_matrix,
}
CONVERTERS = ("column_to_ndarray", "from_dataframe", "to_matrix")


def call_clean(entry, prod):
    """Calls ENTRIES[entry](prod): the result, or the clean exception it raised."""
    try:
        return ENTRIES[entry](prod)
    except CLEAN as e:
        return e


def refused(entry, got, device_type=CUDA):
    """True when `got` is the refusal expected of a broken struct: ValueError, or
    BufferError from a converter, which refuses a non-CPU device before any check."""
    if isinstance(got, ValueError):
        return True
    return device_type != CPU and entry in CONVERTERS and isinstance(got, BufferError)


@pytest.mark.parametrize("fn", [dfbuffer.schema, dfbuffer.pandas.from_dataframe])
def test_device_only_producers_refused_untouched(fn):
    prod = DeviceArray(Column("i", 2, [0, FAKE]), device_id=-5)
    with pytest.raises(TypeError):
        fn(prod)
    assert (prod.released.schema, prod.released.array) == (0, 0)


# ------------------------------------------------------------ device fields


@pytest.mark.parametrize("device_type", [0, -1, 5, 6, 99, 1000, 2**31 - 1, -(2**31)])
def test_garbage_device_types_refused(device_type, collect):
    prod = DeviceArray(Column("i", 2, [0, FAKE]), device_type=device_type)
    with pytest.raises(ValueError, match="device"):
        Buffer.from_object(prod)
    collect()
    assert (prod.released.schema, prod.released.array) == (1, 1)


@pytest.mark.parametrize("device_id", [-1, -(2**63), 2**31, 2**63 - 1])
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_garbage_device_ids_refused_everywhere(device_id, entry, collect):
    prod = DeviceArray(Column("i", 2, [0, FAKE]), device_id=device_id)
    got = call_clean(entry, prod)
    assert isinstance(got, ValueError), got
    del got
    collect()
    assert prod.released.array == 1


@pytest.mark.parametrize("device_id", [-1, 0, 7, -(2**63), 2**63 - 1])
def test_cpu_takes_any_device_id(device_id, collect):
    """Arrow's CPU producers give the id -1; any id means the CPU."""
    a = np.array([3, 4, 5], dtype=np.int32)
    prod = DeviceArray(Column("i", 3, [0, a.ctypes.data]), device_type=CPU,
                       device_id=device_id)
    assert dfbuffer.column_to_ndarray(prod).tolist() == [3, 4, 5]
    collect()
    assert prod.released.array == 1


@pytest.mark.parametrize("device_type", [CPU, CUDA])
@pytest.mark.parametrize("event", [1, 2**64 - 1])
@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_sync_event_refused_on_any_device(device_type, event, entry, collect):
    """A non-NULL sync_event is refused (dfbuffer cannot wait on it) without ever being
    dereferenced, whatever the address."""
    a = np.array([1, 2], dtype=np.int32)
    prod = DeviceArray(Column("i", 2, [0, a.ctypes.data if device_type == CPU else FAKE]),
                       device_type=device_type, sync_event=event)
    got = call_clean(entry, prod)
    assert isinstance(got, BufferError) and "sync_event" in str(got), got
    del got
    collect()
    assert prod.released.array == 1


# ------------------------------------------------ lengths, offsets, buffers


@pytest.mark.parametrize("length, offset, null_count", [
    (-1, 0, 0), (2, -1, 0), (-(2**63), 0, 0), (2**63 - 1, 1, 0), (1, 2**63 - 1, 0),
    (2**62, 0, 0), (2**61, 2**61, 0), (2**63 - 1, 0, 0), (2, 0, 3), (2, 0, -2),
])
@pytest.mark.parametrize("entry", ["from_object", "to_interchange", "column_to_ndarray",
                                   "to_matrix"])
@pytest.mark.parametrize("device_type", [CPU, CUDA])
def test_bad_lengths_and_offsets_refused(length, offset, null_count, entry, device_type,
                                         collect):
    """Negative lengths and offsets, sums and byte sizes past 2**63 or the address space
    are refused before a Buffer is made or a byte read (on the CPU too: the buffer is
    four real bytes)."""
    a = np.array([1], dtype=np.int32)
    data = a.ctypes.data if device_type == CPU else FAKE
    prod = DeviceArray(Column("i", length, [0, data], offset=offset, null_count=null_count),
                       device_type=device_type)
    got = call_clean(entry, prod)
    assert refused(entry, got, device_type) or isinstance(got, BufferError), got
    del got
    collect()
    assert prod.released.array == 1


@pytest.mark.parametrize("buffers, why", [
    ([0], "one buffer for a primitive"),
    ([0, FAKE, FAKE], "three buffers for a primitive"),
    ([], "no buffers"),
    ([0, 0], "NULL data"),
    ([FAKE, 0], "NULL data with a bitmap"),
])
@pytest.mark.parametrize("entry", ["from_object", "to_interchange", "column_to_ndarray"])
def test_wrong_buffer_lists_refused(buffers, why, entry, collect):
    prod = DeviceArray(Column("i", 2, buffers))
    got = call_clean(entry, prod)
    assert refused(entry, got), (why, got)
    del got
    collect()
    assert prod.released.array == 1


def test_empty_array_may_have_null_buffers(collect):
    prod = DeviceArray(Column("i", 0, [0, 0]))
    b = Buffer.from_object(prod)
    assert b.bufsize == 0
    del b
    collect()
    assert prod.released.array == 1


class RawProducer:
    """One device array whose ArrowArray fields are set after building: n_buffers and
    the buffers pointer can disagree with the list actually there."""

    def __init__(self, col, *, n_buffers=None, buffers_null=False, children_null=False,
                 n_children=None, array_release=None, schema_release=None,
                 device_type=CUDA):
        self.inner = DeviceArray(col, device_type=device_type)
        self.n_buffers, self.buffers_null = n_buffers, buffers_null
        self.children_null, self.n_children = children_null, n_children
        self.array_release, self.schema_release = array_release, schema_release
        self.released = self.inner.released

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        scap, acap = self.inner.__arrow_c_device_array__()
        d = ArrowDeviceArray.from_address(
            ctypes.pythonapi.PyCapsule_GetPointer(acap, b"arrow_device_array"))
        if self.n_buffers is not None:
            d.array.n_buffers = self.n_buffers
        if self.buffers_null:
            d.array.buffers = None
        if self.n_children is not None:
            d.array.n_children = self.n_children
        if self.children_null:
            d.array.children = None
        if self.array_release is not None:
            d.array.release = self.array_release
        if self.schema_release is not None:
            s = ArrowSchema.from_address(
                ctypes.pythonapi.PyCapsule_GetPointer(scap, b"arrow_schema"))
            s.release = self.schema_release
        return scap, acap


ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@pytest.mark.parametrize("kw", [
    {"n_buffers": -1}, {"n_buffers": 0}, {"n_buffers": 3}, {"n_buffers": 2**40},
    {"n_buffers": 2**63 - 1}, {"n_buffers": -(2**63)}, {"buffers_null": True},
    {"n_buffers": 0, "buffers_null": True}, {"n_children": 1}, {"n_children": -1},
    {"n_children": 2**40, "children_null": True},
], ids=str)
@pytest.mark.parametrize("entry", ["from_object", "to_interchange", "column_to_ndarray"])
def test_buffer_and_child_counts_that_lie_refused(kw, entry, collect):
    """n_buffers / n_children that disagree with the format are refused before the lists
    are read (a list of two pointers is never read past its end)."""
    prod = RawProducer(Column("i", 2, [0, FAKE]), **kw)
    got = call_clean(entry, prod)
    assert refused(entry, got), (kw, got)
    del got
    collect()
    assert prod.released.array == 1


@pytest.mark.parametrize("entry", ["from_object", "to_interchange", "column_to_ndarray"])
def test_struct_with_null_children_list_refused(entry, collect):
    children = [Column("i", 2, [0, FAKE], name="x")]
    prod = DeviceArray(Column("+s", 2, [0]), children=children)
    base = prod.__arrow_c_device_array__

    def broken(requested_schema=None, **kw):
        scap, acap = base()
        d = ArrowDeviceArray.from_address(
            ctypes.pythonapi.PyCapsule_GetPointer(acap, b"arrow_device_array"))
        d.array.children = None
        return scap, acap

    prod.__arrow_c_device_array__ = broken
    got = call_clean(entry, prod)
    assert refused(entry, got) or isinstance(got, NotImplementedError), got
    del got
    collect()
    assert prod.released.array == 1


# ------------------------------------------------------------ release callbacks


@pytest.fixture
def unraisable(monkeypatch):
    """Collects what release callbacks raised (ctypes reports it as unraisable)."""
    seen: list = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_type))
    return seen


def counting_release(calls, kind, struct=ARRAY_RELEASE):
    def release(p):
        calls.append(kind)
        if kind == "raises":
            raise RuntimeError("release failed")
        if kind == "other":
            p.contents.release = other
        # "noop": leaves release set

    def other_release(p):
        calls.append("other called")

    other = struct(other_release)
    fn = struct(release)
    calls.append_keep = (fn, other)  # type: ignore[attr-defined]
    return fn


class Calls(list):
    pass


@pytest.mark.parametrize("kind", ["noop", "raises", "other"])
@pytest.mark.parametrize("entry", ["from_object", "to_interchange", "column_to_ndarray"])
@pytest.mark.parametrize("good", [True, False])
def test_odd_array_release_called_exactly_once(kind, entry, good, collect, unraisable):
    """A release callback that does nothing, raises, or sets release to another function
    is called exactly once, and never again, whether the import succeeded or failed."""
    calls = Calls()
    a = np.array([1, 2], dtype=np.int32)
    col = Column("i", 2, [0, a.ctypes.data]) if good else Column("i", -2, [0, FAKE])
    prod = RawProducer(col, device_type=CPU if good else CUDA,
                       array_release=counting_release(calls, kind))
    got = call_clean(entry, prod)
    if good and entry == "column_to_ndarray":
        assert got.tolist() == [1, 2]
    elif not good:
        assert refused(entry, got), got
    del got
    collect()
    assert list(calls) == [kind]
    assert unraisable == ([RuntimeError] if kind == "raises" else [])


@pytest.mark.parametrize("kind", ["noop", "raises", "other"])
def test_odd_schema_release_called_exactly_once(kind, collect, unraisable):
    calls = Calls()
    a = np.array([1, 2], dtype=np.int32)
    prod = RawProducer(Column("i", 2, [0, a.ctypes.data]), device_type=CPU,
                       schema_release=counting_release(calls, kind, SCHEMA_RELEASE))
    assert dfbuffer.column_to_ndarray(prod).tolist() == [1, 2]
    collect()
    assert list(calls) == [kind]
    assert unraisable == ([RuntimeError] if kind == "raises" else [])


@pytest.mark.parametrize("which", ["array", "schema"])
def test_null_release_means_consumed(which, collect):
    prod = RawProducer(Column("i", 2, [0, FAKE]),
                       **{f"{which}_release": (ARRAY_RELEASE if which == "array"
                                               else SCHEMA_RELEASE)()})
    with pytest.raises(ValueError, match="released"):
        Buffer.from_object(prod)
    collect()


def test_export_released_twice_by_a_consumer_is_harmless(collect):
    """dfbuffer's own export: a consumer calling release twice (against the spec) finds
    release NULL after the first call, so nothing is freed twice."""
    b = Buffer.from_object(np.arange(4, dtype=np.int64))
    _, acap = b.__arrow_c_device_array__()
    d = ArrowDeviceArray.from_address(
        ctypes.pythonapi.PyCapsule_GetPointer(acap, b"arrow_device_array"))
    release = d.array.release
    release(ctypes.pointer(d.array))
    assert not d.array.release
    del acap, d
    collect()


# ------------------------------------------------------------ device streams


class RawStream:
    """A device stream whose callbacks can be missing or fail."""

    def __init__(self, *, device_type=CUDA, get_schema=True, get_next=True,
                 next_rc=0, schema_rc=0, last_error=True, chunk_device_type=None):
        self.inner = DeviceStream(Column("i", 0, []), [(Column("i", 2, [0, FAKE]), None, 1)],
                                  device_type=device_type)
        self.kw = dict(get_schema=get_schema, get_next=get_next, next_rc=next_rc,
                       schema_rc=schema_rc, last_error=last_error,
                       chunk_device_type=chunk_device_type)
        self.released = self.inner.released
        self.keep: list = []

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        cap = self.inner.__arrow_c_device_stream__()
        st = ArrowDeviceArrayStream.from_address(
            ctypes.pythonapi.PyCapsule_GetPointer(cap, b"arrow_device_array_stream"))
        kw, keep = self.kw, self.keep
        if not kw["get_schema"]:
            st.get_schema = GET_SCHEMA()
        elif kw["schema_rc"]:
            st.get_schema = keep_(keep, GET_SCHEMA(lambda s, out: kw["schema_rc"]))
        # a new function pointer at the producer's address (the field itself is
        # replaced below)
        real_next = GET_NEXT(ctypes.cast(st.get_next, ctypes.c_void_p).value)
        if not kw["get_next"]:
            st.get_next = GET_NEXT()
        elif kw["next_rc"] or kw["chunk_device_type"] is not None:
            def get_next(s, out):
                rc = real_next(s, out)
                if kw["chunk_device_type"] is not None and out.contents.array.release:
                    out.contents.device_type = kw["chunk_device_type"]
                return kw["next_rc"] or rc
            st.get_next = keep_(keep, GET_NEXT(get_next))
        if not kw["last_error"]:
            st.get_last_error = GET_LAST_ERROR()
        keep.append(real_next)
        return cap


def keep_(keep, fn):
    keep.append(fn)
    return fn


@pytest.mark.parametrize("kw, exc", [
    ({"get_schema": False}, ValueError),
    ({"get_next": False}, ValueError),
    ({"schema_rc": 22}, ValueError),
    ({"schema_rc": 5, "last_error": False}, OSError),
    ({"next_rc": 12}, MemoryError),
    ({"next_rc": -1, "last_error": False}, OSError),
    ({"device_type": 0}, ValueError),
    ({"device_type": 2**31 - 1}, ValueError),
    ({"chunk_device_type": CPU}, ValueError),
    ({"chunk_device_type": 99}, ValueError),
], ids=str)
@pytest.mark.parametrize("entry", ["from_object", "to_interchange", "column_to_ndarray"])
def test_broken_device_streams_refused(kw, exc, entry, collect):
    prod = RawStream(**kw)
    with pytest.raises(exc):
        ENTRIES[entry](prod)
    collect()
    assert prod.released.stream == 1
    # every chunk the stream handed out is released once
    assert prod.released.array in (0, 1)


def test_stream_release_noop_called_once(collect):
    calls = Calls()
    prod = DeviceStream(Column("i", 0, []), [(Column("i", 2, [0, FAKE]), None, 1)])
    base = prod.__arrow_c_device_stream__

    def wrapped(requested_schema=None, **kw):
        cap = base()
        st = ArrowDeviceArrayStream.from_address(
            ctypes.pythonapi.PyCapsule_GetPointer(cap, b"arrow_device_array_stream"))
        st.release = counting_release(calls, "noop", STREAM_RELEASE)
        return cap

    prod.__arrow_c_device_stream__ = wrapped
    df = dfbuffer.to_interchange(prod)
    assert df.get_column(0).get_buffers()["data"][0].ptr == FAKE
    del df
    collect()
    assert list(calls) == ["noop"] and prod.released.array == 1


def test_capsule_pointing_at_garbage_struct_fields(collect):
    """A schema with a NULL format and a device array with a NULL release inside a valid
    capsule pair."""
    s = ArrowSchema()
    s.release = SCHEMA_RELEASE(lambda p: None)
    d = ArrowDeviceArray()
    d.device_type = CUDA
    d.array.release = ARRAY_RELEASE(lambda p: None)
    keep = (s, d, s.release, d.array.release)
    prod = type("P", (), {"__arrow_c_device_array__": lambda self: (
        capsule(s, "arrow_schema"), capsule(d, "arrow_device_array"))})()
    with pytest.raises(ValueError, match="format"):
        Buffer.from_object(prod)
    del keep


def _struct_prod(device_type):
    return DeviceArray(Column("+s", 2, [0]), children=[Column("i", 2, [0, FAKE], name="x")],
                       device_type=device_type)


def _dict_prod(device_type):
    return DeviceArray(Column("c", 2, [0, FAKE], dictionary=Column("u", 2, [0, FAKE, FAKE])),
                       device_type=device_type)


def _null_child(s, d):
    d.array.children[0] = ctypes.POINTER(ArrowArray)()


def _null_schema_child(s, d):
    s.children[0] = ctypes.POINTER(ArrowSchema)()


def _more_schema_children(s, d):
    s.n_children = 5


def _released_child(s, d):
    d.array.children[0].contents.release = ARRAY_RELEASE()


def _child_without_format(s, d):
    s.children[0].contents.format = None


def _null_dictionary(s, d):
    d.array.dictionary = ctypes.POINTER(ArrowArray)()


@pytest.mark.parametrize("make, mutate", [
    (_struct_prod, _null_child), (_struct_prod, _null_schema_child),
    (_struct_prod, _more_schema_children), (_struct_prod, _released_child),
    (_struct_prod, _child_without_format), (_dict_prod, _null_dictionary),
], ids=lambda f: f.__name__)
@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("device_type", [CPU, CUDA])
def test_broken_children_and_dictionaries_refused(make, mutate, entry, device_type, collect):
    """NULL or released children, schema children the array does not have, a NULL
    dictionary: refused before any buffer is read (the buffers are unmapped addresses even
    on the CPU here, so a read would crash)."""
    prod = make(device_type)
    base = prod.__arrow_c_device_array__

    def broken(requested_schema=None, **kw):
        scap, acap = base()
        d = ArrowDeviceArray.from_address(
            ctypes.pythonapi.PyCapsule_GetPointer(acap, b"arrow_device_array"))
        s = ArrowSchema.from_address(ctypes.pythonapi.PyCapsule_GetPointer(scap, b"arrow_schema"))
        mutate(s, d)
        return scap, acap

    prod.__arrow_c_device_array__ = broken
    got = call_clean(entry, prod)
    assert refused(entry, got, device_type) or isinstance(got, NotImplementedError), got
    del got
    collect()
    assert prod.released.array == 1


def test_export_refuses_hostile_requested_schemas():
    """Buffer.__arrow_c_device_array__(requested_schema): a non-capsule, a capsule of
    another name, a released schema and one without a format are refused cleanly."""
    import pyarrow as pa

    b = Buffer.from_object(np.arange(3, dtype=np.int32))
    released = ArrowSchema()
    no_format = ArrowSchema()
    no_format.release = SCHEMA_RELEASE(lambda p: None)
    keep = (released, no_format, no_format.release)
    for req, exc in ((5, TypeError), (capsule(released, "arrow_device_array"), TypeError),
                     (capsule(released, "arrow_schema"), NotImplementedError),
                     (capsule(no_format, "arrow_schema"), NotImplementedError),
                     (pa.int64().__arrow_c_schema__(), NotImplementedError)):
        with pytest.raises(exc):
            b.__arrow_c_device_array__(req)
    schema, arr = b.__arrow_c_device_array__(pa.int32().__arrow_c_schema__())
    if hasattr(pa.Array, "_import_from_c_device_capsule"):  # pyarrow >= 17
        assert pa.Array._import_from_c_device_capsule(schema, arr).to_pylist() == [0, 1, 2]
    del keep
