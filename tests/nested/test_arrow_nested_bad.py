"""Hand-written Arrow producers of nested arrays that lie: a clean ValueError /
NotImplementedError naming the column, never a crash or a read outside the buffers, and
the array released exactly once."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from test_arrow_bad import ArrowArray, ArrowSchema, Producer

import dfbuffer


def attach(p: Producer, kids: list, n_children: int | None = None) -> Producer:
    """Makes the Producers ``kids`` the children of ``p`` (``n_children``: the
    array's count, when it should lie)."""
    sptr, aptr = ctypes.POINTER(ArrowSchema), ctypes.POINTER(ArrowArray)
    schemas = (sptr * len(kids))(*[ctypes.pointer(k.schema) for k in kids])
    arrays = (aptr * len(kids))(*[ctypes.pointer(k.array) for k in kids])
    p.keep += [*kids, schemas, arrays]
    p.schema.n_children = len(kids)
    p.array.n_children = len(kids) if n_children is None else n_children
    p.schema.children = ctypes.cast(schemas, ctypes.POINTER(sptr))
    p.array.children = ctypes.cast(arrays, ctypes.POINTER(aptr))
    return p


def list_producer(offsets, length: int, child_len: int, *, fmt=b"+l", offset=0,
                  children=1, child_ptr=True):
    """A list array over an int64 child of child_len values 0, 1, ..."""
    child = Producer(b"l", child_len, [None, np.arange(max(child_len, 1), dtype=np.int64)],
                     name=b"item")
    p = attach(Producer(fmt, length, [None, offsets], offset=offset), [child], children)
    if not child_ptr:
        p.array.children[0] = None
    return p


def test_hand_built_list_converts_and_is_released_once(collect):
    p = list_producer(np.array([0, 2, 3, 5], np.int32), 2, 5, offset=1)
    got = dfbuffer.column_to_ndarray(p)
    assert [r.tolist() for r in got] == [[2], [3, 4]]
    del got
    collect()
    assert p.release_count == 1


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(offsets=np.array([0, 2, 9], np.int32), length=2, child_len=5), "out of range"),
        (dict(offsets=np.array([3, 1, 2], np.int32), length=2, child_len=5), "out of range"),
        (dict(offsets=np.array([0, 1, 2], np.int32), length=2, child_len=5, children=0),
         "malformed"),
        (dict(offsets=np.array([0, 1, 2], np.int32), length=2, child_len=5, child_ptr=False),
         "lacks child"),
        (dict(offsets=np.array([0, 1, 2], np.int32), length=2, child_len=1), "out of range"),
        (dict(offsets=None, length=2, child_len=5), "without its offsets"),
    ],
)
def test_lying_list_arrays_raise(kw, match, collect):
    p = list_producer(**kw)
    with pytest.raises(ValueError, match=match):
        dfbuffer.column_to_ndarray(p)
    collect()
    assert p.release_count == 1


def test_offsets_beyond_the_address_space_raise(collect):
    p = list_producer(np.array([0, 1, 2], np.int32), 2, 5)
    p.array.buffers[1] = 2**64 - 8
    with pytest.raises(ValueError, match="address space"):
        dfbuffer.column_to_ndarray(p)
    collect()
    assert p.release_count == 1


def fixed_producer(child_len: int):
    """A fixed-size list of 3 over an int64 child of child_len values, 2 rows."""
    child = Producer(b"l", child_len, [None, np.arange(6, dtype=np.int64)], name=b"item")
    return attach(Producer(b"+w:3", 2, [None]), [child])


def test_fixed_size_list_child_too_short(collect):
    p = fixed_producer(5)
    with pytest.raises(ValueError, match="does not hold elements"):
        dfbuffer.column_to_ndarray(p)
    good = fixed_producer(6)
    assert dfbuffer.column_to_ndarray(good).tolist() == [[0, 1, 2], [3, 4, 5]]
    collect()
    assert p.release_count == 1 and good.release_count == 1


_NESTED = {b"+s": 1, b"+l": 2, b"+w:2": 1, b"+m": 2, b"+ud:0": 3}
_COUNTS = ["children", "schema children", "array children", "n_buffers", "length", "offset"]


def negative_counts_producer(fmt: bytes, what: str) -> Producer:
    """A nested array of format ``fmt`` over one int64 child with one count negative."""
    child = Producer(b"l", 4, [None, np.arange(4, dtype=np.int64)], name=b"c")
    bufs = [None] + [np.zeros(8, np.int32)] * (_NESTED[fmt] - 1)
    p = attach(Producer(fmt, 2, bufs), [child])
    if what in ("children", "schema children"):
        p.schema.n_children = -1
    if what in ("children", "array children"):
        p.array.n_children = -1
    if what in ("n_buffers", "length", "offset"):
        setattr(p.array, what, -1)
    return p


@pytest.mark.parametrize("what", _COUNTS)
@pytest.mark.parametrize("fmt", list(_NESTED), ids=lambda f: f.decode())
@pytest.mark.parametrize(
    "call",
    [dfbuffer.column_to_ndarray, lambda p: dfbuffer.from_dataframe(p, structs="flatten")],
    ids=["column_to_ndarray", "flatten"],
)
def test_negative_counts_are_refused_at_the_node_check(call, fmt, what, collect):
    # a struct whose schema and array both said n_children = -1 passed the check and
    # reached PyTuple_New(-1): SystemError
    p = negative_counts_producer(fmt, what)
    with pytest.raises(ValueError):
        call(p)
    collect()
    assert p.release_count == 1
