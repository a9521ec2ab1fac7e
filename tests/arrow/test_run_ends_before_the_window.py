"""A sliced run-end encoded array (an offset into its runs) whose run ends before the
window are garbage: decreasing, negative, huge.  They are read only by the search for the
window's first run, whose answer the walk re-checks (docs/design.md, "One reader of
producer offsets and codes", run ends), so every conversion gives each row the value of a
run whose ends, as read, bracket the row, or ValueError; never a read outside the run ends,
the values or the output (the ASan build runs this file too).  Hand-built C structs: no peer
makes such an array."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from _arrow_ctypes import ARRAY_RELEASE, SCHEMA_RELEASE, ArrowArray, ArrowSchema, PairProducer

import dfbuffer


def _release_schema(p):
    p.contents.release = None


def _release_array(p):
    p.contents.release = None


_RS = SCHEMA_RELEASE(_release_schema)
_RA = ARRAY_RELEASE(_release_array)
_RS_ADDR = ctypes.cast(_RS, ctypes.c_void_p).value
_RA_ADDR = ctypes.cast(_RA, ctypes.c_void_p).value


class _Node(PairProducer):
    """One hand-built (schema, array) pair; keeps every buffer and child alive."""

    def __init__(self, fmt: bytes, length: int, buffers: list, *, offset: int = 0,
                 children: list[_Node] = (), name: bytes = b"") -> None:
        self.keep: list = [list(children)]
        bufs = (ctypes.c_void_p * max(len(buffers), 1))(*[self._addr(b) for b in buffers])
        self.keep.append(bufs)
        self.schema = ArrowSchema(format=fmt, name=name, flags=2, release=_RS_ADDR)
        self.array = ArrowArray(length=length, null_count=0, offset=offset,
                                n_buffers=len(buffers),
                                buffers=ctypes.cast(bufs, ctypes.POINTER(ctypes.c_void_p)),
                                release=_RA_ADDR)
        if children:
            schemas = (ctypes.POINTER(ArrowSchema) * len(children))(
                *[ctypes.pointer(c.schema) for c in children])
            arrays = (ctypes.POINTER(ArrowArray) * len(children))(
                *[ctypes.pointer(c.array) for c in children])
            self.keep += [schemas, arrays]
            self.schema.n_children = self.array.n_children = len(children)
            self.schema.children = ctypes.cast(
                schemas, ctypes.POINTER(ctypes.POINTER(ArrowSchema)))
            self.array.children = ctypes.cast(
                arrays, ctypes.POINTER(ctypes.POINTER(ArrowArray)))


N_RUNS_VALUES = 7  # runs, and values
INTS = np.arange(100, 100 + N_RUNS_VALUES, dtype=np.int64)
STRS = [f"s{i}" for i in range(N_RUNS_VALUES)]
BOOLS = np.array([i % 3 == 0 for i in range(N_RUNS_VALUES)])


def _values(kind: str, count: int = N_RUNS_VALUES) -> _Node:
    if kind == "int64":
        return _Node(b"l", count, [None, INTS])
    if kind == "utf8":
        data = np.frombuffer("".join(STRS).encode(), np.uint8)
        offsets = np.cumsum([0] + [len(s) for s in STRS]).astype(np.int32)
        return _Node(b"u", count, [None, offsets, data])
    bits = np.packbits(BOOLS, bitorder="little")
    return _Node(b"b", count, [None, bits])


def _ree(ends: list[int], kind: str, offset: int, length: int,
         count: int = N_RUNS_VALUES) -> _Node:
    run_ends = _Node(b"i", len(ends), [None, np.array(ends, np.int32)], name=b"run_ends")
    values = _values(kind, count)
    values.schema.name = b"values"
    return _Node(b"+r", length, [], offset=offset, children=[run_ends, values], name=b"r")


def _table(ree: _Node) -> _Node:
    return _Node(b"+s", ree.array.length, [None], children=[ree])


def _expected(kind: str) -> list:
    return {"int64": INTS.tolist(), "utf8": STRS, "bool": BOOLS.tolist()}[kind]


OFFSET, LENGTH = 6, 6  # rows 6 .. 11

# run ends whose runs from the end before the window on are right: the window decodes
# as the valid array [2, 4, 6, 9, 12, 13, 14] does, whatever the ends before it say
RIGHT_FROM_THE_WINDOW = {
    "valid": [2, 4, 6, 9, 12, 13, 14],
    "decreasing_before": [5, 1, 6, 9, 12, 13, 14],
    "huge_and_negative_before": [2**31 - 1, -7, 6, 9, 12, 13, 14],
    "negative_before": [-3, -2, 6, 9, 12, 13, 14],
}
# ends that no valid array has, around the window too
GARBAGE = {
    "a_huge_end_before_the_window_run": [1, 2, 3, 100, 6, 9, 12],
    "negative_end_before_the_first_run": [1, 2, -5, 9, 12, 13, 14],
    "all_decreasing": [14, 13, 12, 9, 6, 4, 2],
    "all_negative": [-1, -2, -3, -4, -5, -6, -7],
    "all_zero": [0] * 7,
    "ends_below_the_window": [1, 2, 3, 4, 5, 5, 5],
    "int_min_max": [-(2**31), 2**31 - 1] * 3 + [12],
}


def _runs(ends: list[int], row: int) -> set[int]:
    """The runs whose ends, as given, bracket logical row ``row``."""
    return {j for j in range(len(ends))
            if (ends[j - 1] if j > 0 else 0) <= row < ends[j]}


def _conversions(kind: str, ends: list[int]):
    """(name, call) of each conversion, over structs made for that call (a conversion
    moves them and releases them)."""
    def ree() -> _Node:
        return _ree(ends, kind, OFFSET, LENGTH)

    yield "column_to_ndarray", lambda: dfbuffer.column_to_ndarray(ree(), nulls="fill")
    yield "from_dataframe", lambda: dfbuffer.from_dataframe(_table(ree()), nulls="fill")["r"]
    if kind != "utf8":
        yield "to_matrix", lambda: dfbuffer.to_matrix(_table(ree()), dtype=np.int64)[:, 0]


def _as_list(res) -> list:
    return [x.item() if isinstance(x, np.generic) else x for x in np.asarray(res).tolist()]


@pytest.mark.parametrize("kind", ["int64", "utf8", "bool"])
@pytest.mark.parametrize("case", sorted(RIGHT_FROM_THE_WINDOW))
def test_ends_before_the_window_do_not_change_it(case, kind):
    values = _expected(kind)
    want = [values[3]] * 3 + [values[4]] * 3  # rows 6-8: run 3, rows 9-11: run 4
    for how, convert in _conversions(kind, RIGHT_FROM_THE_WINDOW[case]):
        got = _as_list(convert())
        if how == "to_matrix":
            want_m = [int(v) for v in want]
            assert got == want_m, how
        else:
            assert got == want, how


@pytest.mark.parametrize("kind", ["int64", "utf8", "bool"])
@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_garbage_run_ends_give_a_bracketing_run_or_value_error(case, kind):
    ends = GARBAGE[case]
    values = _expected(kind)
    for how, convert in _conversions(kind, ends):
        try:
            got = _as_list(convert())
        except ValueError as e:
            assert "run" in str(e), how
            continue
        assert len(got) == LENGTH, how
        for i, v in enumerate(got):
            row = OFFSET + i
            allowed = {int(values[j]) if how == "to_matrix" else values[j]
                       for j in _runs(ends, row)}
            assert v in allowed, (how, row, v, allowed)


@pytest.mark.parametrize("kind", ["int64", "utf8", "bool"])
def test_a_window_run_past_the_values_is_refused(kind):
    # seven run ends over three values: the window's runs 3 and 4 have no value
    def ree() -> _Node:
        return _ree(RIGHT_FROM_THE_WINDOW["decreasing_before"], kind, OFFSET, LENGTH, 3)

    calls = [lambda: dfbuffer.column_to_ndarray(ree()),
             lambda: dfbuffer.from_dataframe(_table(ree()))]
    if kind != "utf8":
        calls.append(lambda: dfbuffer.to_matrix(_table(ree())))
    for call in calls:
        with pytest.raises(ValueError):
            call()
