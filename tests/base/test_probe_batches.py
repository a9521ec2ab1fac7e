"""Probes asked in batches (probe.c's dfb_probe_mask: several protocol names in one walk of
the MRO) pick the same protocol as asking each name in turn would.

Every subset of the protocol names `Buffer.from_object` and `column_to_ndarray` look for is
given to a class, each member raising `Tried(name)` when used, so the exception names the
protocol taken.  The names are placed on the class, on a mixin after a static base in the
MRO, or (the callables) in the instance's __dict__.  The expected choice is the documented
order (docs/design.md, "Buffer.from_object", generated from the registry that
dfbuffer._interchange._protocols() returns), written out below as an independent oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

import dfbuffer
from dfbuffer import Buffer

NAMES = (
    "__dlpack__",
    "__dlpack_device__",
    "__cuda_array_interface__",
    "ptr",
    "bufsize",
    "__array_interface__",
    "__arrow_c_array__",
    "__arrow_c_stream__",
    "__arrow_c_device_array__",
    "__arrow_array__",
    "__array__",
)
CALLABLES = {
    "__dlpack__",
    "__dlpack_device__",
    "__arrow_c_array__",
    "__arrow_c_stream__",
    "__arrow_c_device_array__",
    "__arrow_array__",
    "__array__",
}


class Tried(LookupError):
    """Raised by a protocol member when it is used: args[0] is its name."""


def raiser(name):
    def member(self, *args, **kwargs):
        raise Tried(name)

    return member


def prop(name):
    return property(raiser(name))


def expected(names: frozenset) -> set:
    """The members Buffer.from_object may use first (any one of them), or {"TypeError"}."""
    dlpack = {"__dlpack__", "__dlpack_device__"} <= names
    if "__cuda_array_interface__" in names:
        return {"__dlpack__", "__dlpack_device__"} if dlpack else {"__cuda_array_interface__"}
    if {"ptr", "bufsize", "__dlpack_device__"} <= names:
        return {"ptr", "bufsize", "__dlpack_device__"}
    if "__array_interface__" in names:
        return {"__array_interface__"}
    if dlpack:
        return {"__dlpack__", "__dlpack_device__"}
    if "__arrow_c_array__" in names:
        return {"__arrow_c_array__"}
    if "__arrow_c_stream__" in names:
        return {"__arrow_c_stream__"}
    if "__arrow_c_device_array__" in names:
        return {"__arrow_c_device_array__"}
    if "__arrow_array__" in names:  # pyarrow is importable here
        return {"__arrow_array__"}
    if "__array__" in names:
        return {"__array__"}
    return {"TypeError"}


def used(obj) -> str:
    try:
        Buffer.from_object(obj)
    except Tried as e:
        return e.args[0]
    except TypeError:
        return "TypeError"
    raise AssertionError("from_object returned for an object whose members all raise")


def members(names) -> dict:
    return {n: raiser(n) if n in CALLABLES else prop(n) for n in names}


SUBSETS = [frozenset(c) for k in range(len(NAMES) + 1) for c in itertools.combinations(NAMES, k)]


def test_every_subset_on_the_class():
    wrong = []
    for names in SUBSETS:
        obj = type("P", (), members(names))()
        for _ in range(2):  # the second call meets the probe caches
            got = used(obj)
            if got not in expected(names):
                wrong.append((sorted(names), got))
    assert wrong == []


class Mixin:
    pass


def test_every_subset_on_a_mixin_after_a_static_base():
    # MRO: P, int, M, Mixin, object -- int is a static type (cached answers), the names sit
    # in a heap type after it
    wrong = []
    for names in SUBSETS:
        m = type("M", (Mixin,), members(names))
        obj = type("P", (int, m), {})(7)
        got = used(obj)
        if got not in expected(names):
            wrong.append((sorted(names), got))
    assert wrong == []


def test_every_subset_split_between_class_and_instance():
    # the callables in the instance __dict__ (a generic attribute hook: read there too),
    # the rest on the class
    wrong = []
    for names in SUBSETS:
        on_class = {n: v for n, v in members(names).items() if n not in CALLABLES}
        obj = type("P", (), on_class)()
        for n in names & CALLABLES:
            setattr(obj, n, raiser(n).__get__(obj))
        got = used(obj)
        if got not in expected(names):
            wrong.append((sorted(names), got))
    assert wrong == []


def test_a_ptr_without_the_rest_of_an_interchange_buffer_is_not_read():
    # `ptr` is read only when `bufsize` and `__dlpack_device__` are there too: an object
    # with only `ptr` (here a property that would raise) is not an interchange Buffer
    arr = np.arange(4.0)

    class P:
        ptr = prop("ptr")
        __array_interface__ = arr.__array_interface__

    b = Buffer.from_object(P())
    np.testing.assert_array_equal(np.asarray(b), arr)


def test_column_to_ndarray_takes_get_buffers_before_arrow():
    class C:  # the interchange path asks num_chunks first
        num_chunks = raiser("num_chunks")
        get_buffers = raiser("get_buffers")
        __arrow_c_stream__ = raiser("__arrow_c_stream__")

    with pytest.raises(Tried, match="num_chunks|get_buffers"):
        dfbuffer.column_to_ndarray(C())

    class A:
        __arrow_c_stream__ = raiser("__arrow_c_stream__")
        __arrow_c_array__ = raiser("__arrow_c_array__")

    with pytest.raises(Tried, match="__arrow_c_array__"):
        dfbuffer.column_to_ndarray(A())


class Colliding(str):
    """A class-dict key with the hash of probe name `target` but never equal to it: looking
    `target` up meets it and calls __eq__, which (once armed) adds a stream method to the
    class and deletes its array interface while the probe's walk is under way."""

    def __new__(cls, target):
        self = super().__new__(cls, "colliding " + target)
        self.target = target
        return self

    def __hash__(self):
        return hash(self.target)

    def __eq__(self, other):
        global armed_class
        if armed_class is not None:
            cls, armed_class = armed_class, None
            cls.__arrow_c_stream__ = lambda self, requested_schema=None: pa.chunked_array(
                [pa.array([5.0])]
            ).__arrow_c_stream__(requested_schema)
            if "__array_interface__" in cls.__dict__:
                del cls.__array_interface__
        return False


armed_class = None


@pytest.mark.parametrize("target", ["__cuda_array_interface__", "ptr", "__arrow_c_array__"])
def test_class_changed_by_a_colliding_key_during_the_walk(target):
    """The class dict changes under a batch: the walk holds the dict and the MRO and does
    not crash; the answer is the array interface, the added stream, or (a mix of the dict
    before and after the change) a clean TypeError."""
    global armed_class
    arr = np.arange(3.0)
    ns = {"__array_interface__": arr.__array_interface__, Colliding(target): None}
    cls = type("P", (), ns)
    armed_class = cls
    try:
        try:
            got = np.asarray(Buffer.from_object(cls())).tolist()
        except TypeError:
            got = "TypeError"
        assert armed_class is None, "the colliding key was not compared"
        assert got in (arr.tolist(), [5.0], "TypeError")
    finally:
        armed_class = None
