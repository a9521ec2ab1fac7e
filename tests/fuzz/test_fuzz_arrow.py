"""Fuzz: hand-built Arrow C data structs (ctypes mirrors, see test_arrow_bad.py) through
to_interchange, column_to_ndarray and Buffer.from_object.

Drawn: the format, length and offset (also negative), null_count (also out of range), the
buffer count, NULL buffers, validity bitmaps, string offsets (also decreasing or negative),
children counts and dictionaries (also a dictionary that is its own dictionary).  Lengths
never exceed the memory a buffer really has (the C data interface states no buffer sizes,
so such a lie cannot be detected; an overflowing length can).  The oracle: the Arrow rules
plus NumPy over the same memory; each imported array is released exactly once."""

from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest
from fuzz_settings import FUZZ, FUZZ_SEED
from hostile import ALLOWED, run
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import rare
from test_arrow_bad import ArrowArray, ArrowSchema, Producer, child_array
from text_strategy import text

import dfbuffer
from dfbuffer import Buffer, to_interchange

pytestmark = pytest.mark.fuzz

PRIMITIVE = {b"c": "i1", b"s": "i2", b"i": "i4", b"l": "i8", b"C": "u1", b"S": "u2",
             b"I": "u4", b"L": "u8", b"f": "f4", b"g": "f8"}
FORMATS = [*PRIMITIVE, b"b", b"u", b"U"]


@st.composite
def arrow_arrays(draw):
    fmt = draw(st.sampled_from(FORMATS))
    length = draw(st.integers(0, 30))
    offset = draw(st.integers(0, 10))
    end = length + offset
    spec = dict(fmt=fmt, length=length, offset=offset, problems=[], either=False)
    valid = draw(hnp.arrays(np.bool_, end)) if rare(draw, 0.5) else None
    if valid is not None:
        bitmap = np.packbits(valid, bitorder="little")
        bitmap = np.concatenate([bitmap, np.zeros(2, np.uint8)])
        actual = int((~valid[offset:]).sum())
        nc = draw(st.sampled_from([-1, actual, actual, 0]))
    else:
        bitmap, actual, nc = None, 0, 0
    if fmt in PRIMITIVE:
        dt = np.dtype(PRIMITIVE[fmt])
        values = draw(hnp.arrays(dt, end + 1))
        buffers = [bitmap, values]
    elif fmt == b"b":
        bits = draw(hnp.arrays(np.bool_, end))
        values = bits
        buffers = [bitmap, np.concatenate([np.packbits(bits, bitorder="little"),
                                           np.zeros(1, np.uint8)])]
    else:
        words = draw(st.lists(text(max_size=4), min_size=end, max_size=end))
        raw = [w.encode() for w in words]
        off = np.zeros(end + 1, np.int64)
        off[1:] = np.cumsum([len(r) for r in raw])
        data = np.frombuffer(b"".join(raw) + b"\0" * 8, np.uint8).copy()
        if rare(draw, 0.12) and end:
            i = draw(st.integers(0, end - 1))
            off[i] = draw(st.sampled_from([-1, -(2**31), int(off[-1]) + 1]))
            # an offset outside the slice may go unread
            spec["problems"].append("offsets" if offset <= i <= end else "unread offsets")
        values = words
        offsets = off.astype(np.int32 if fmt == b"u" else np.int64)
        buffers = [bitmap, offsets, data]
    spec["values"], spec["valid"] = values, valid
    # the lies
    n_buffers = len(buffers)
    if rare(draw, 0.06):
        n_buffers = draw(st.sampled_from([0, 1, len(buffers) - 1, len(buffers) + 1]))
        if n_buffers != len(buffers):
            spec["problems"].append("n_buffers")
            buffers = (buffers + [None, None])[:max(n_buffers, len(buffers))]
    if rare(draw, 0.06) and end:
        i = draw(st.integers(1, len(buffers) - 1))
        buffers = list(buffers)
        buffers[i] = None
        spec["problems"].append("null buffer")
    if rare(draw, 0.06):
        spec["length_lie"] = draw(st.sampled_from(["negative length", "negative offset",
                                                   "overflow"]))
        spec["problems"].append(spec["length_lie"])
    if rare(draw, 0.06):
        nc = draw(st.sampled_from([-2, length + 1, 2**62]))
        spec["problems"].append("null_count")
    elif valid is None and rare(draw, 0.12) and length:
        nc = draw(st.integers(1, length))
        spec["problems"].append("nulls without bitmap")
    elif nc not in (-1, actual, 0) or (nc == 0 and actual):
        spec["either"] = True
    if nc == 0 and actual:
        spec["either"] = True  # a consumer may trust null_count == 0
    spec["null_count"] = nc
    spec["buffers"], spec["n_buffers"] = buffers, n_buffers
    spec["children"] = rare(draw, 0.06)
    if spec["children"]:
        spec["problems"].append("children")
    spec["dictionary"] = None
    if rare(draw, 0.12):
        spec["dictionary"] = draw(st.sampled_from(["loop", "schema only", "array only"]))
        spec["problems"].append("dictionary " + spec["dictionary"])
    return spec


def make(spec):
    """A fresh Producer for `spec` (each can be imported once)."""
    length, offset = spec["length"], spec["offset"]
    lie = spec.get("length_lie")
    if lie == "negative length":
        length = -1 - length
    elif lie == "negative offset":
        offset = -1 - offset
    elif lie == "overflow":
        length, offset = 2**62, 2**62
    p = Producer(spec["fmt"], length, list(spec["buffers"]), null_count=spec["null_count"],
                 offset=offset, n_buffers=spec["n_buffers"])
    if spec["children"]:
        child, keep_c = child_array(b"l", [1, 2])[:2], None
        schemas = (ctypes.POINTER(ArrowSchema) * 1)(ctypes.pointer(child[0]))
        arrays = (ctypes.POINTER(ArrowArray) * 1)(ctypes.pointer(child[1]))
        p.keep += [child, schemas, arrays, keep_c]
        p.schema.n_children = p.array.n_children = 1
        p.schema.children = ctypes.cast(schemas, ctypes.POINTER(ctypes.POINTER(ArrowSchema)))
        p.array.children = ctypes.cast(arrays, ctypes.POINTER(ctypes.POINTER(ArrowArray)))
    d = spec["dictionary"]
    if d == "loop":
        p.schema.dictionary = ctypes.pointer(p.schema)
        p.array.dictionary = ctypes.pointer(p.array)
    elif d in ("schema only", "array only"):
        s, a, keep = child_array(b"l", [10, 20])
        p.keep += [s, a, keep]
        if d == "schema only":
            p.schema.dictionary = ctypes.pointer(s)
        else:
            p.array.dictionary = ctypes.pointer(a)
    return p


def oracle(spec):
    """RAISE, EITHER, or (values, isnull) for column_to_ndarray(nulls='mask')."""
    problems = [p for p in spec["problems"] if p != "unread offsets"]
    if problems:
        if problems == ["offsets"]:
            return "raise" if spec["length"] else "either"
        if problems == ["null buffer"] and spec["length"] == 0:
            return "either"
        if problems == ["null buffer"] and spec["fmt"] in (b"u", b"U") and not any(
                spec["values"]):
            return "either"  # no characters: a NULL data buffer may be accepted
        return "raise"
    if spec["problems"]:
        return "either"
    if spec["either"]:
        return "either"
    off, n = spec["offset"], spec["length"]
    valid = spec["valid"]
    isnull = np.zeros(n, bool) if valid is None else ~valid[off:off + n]
    if spec["null_count"] == 0:
        isnull = np.zeros(n, bool)
    vals = spec["values"]
    if spec["fmt"] in (b"u", b"U"):
        out = np.empty(n, object)
        out[:] = vals[off:off + n]
        return out, isnull
    return np.asarray(vals)[off:off + n], isnull


def judge(outcome, exp):
    kind, value = outcome
    event(f"oracle {exp if isinstance(exp, str) else 'values'}, consumer {kind}")
    if exp == "raise":
        assert kind == "error", value
    elif exp == "either":
        return
    else:
        assert kind == "ok", value
        values, isnull = exp
        assert value.shape == values.shape
        if isnull.any():
            assert isinstance(value, np.ma.MaskedArray)
            np.testing.assert_array_equal(np.ma.getmaskarray(value), isnull)
            got = np.asarray(value.data)[~isnull]
        else:
            assert type(value) is np.ndarray
            got = value
            isnull = np.zeros(len(values), bool)
        if values.dtype == object:
            assert list(got) == list(values[~isnull])
        else:
            np.testing.assert_array_equal(got, values[~isnull])


def released_once(p):
    gc.collect()
    assert p.release_count == 1


def check_consumer(spec, consume):
    """Judges ``consume(p)`` (an outcome as ``run`` returns it) on the producer ``p`` of
    ``spec`` against the oracle, then checks that ``p`` was released exactly once."""
    exp = oracle(spec)
    p = make(spec)
    outcome = consume(p)
    judge(outcome, exp)
    del outcome
    released_once(p)


@FUZZ
@FUZZ_SEED
@given(arrow_arrays())
def test_arrow_column_to_ndarray(spec):
    check_consumer(spec, lambda p: run(lambda: dfbuffer.column_to_ndarray(p)))


@FUZZ
@FUZZ_SEED
@given(arrow_arrays())
def test_arrow_to_interchange(spec):
    def consume(p):
        try:
            x = to_interchange(p)
            col = x.get_column(0)
            return run(lambda: dfbuffer.column_to_ndarray(col))
        except ALLOWED as e:
            return ("error", e)

    check_consumer(spec, consume)


@FUZZ
@FUZZ_SEED
@given(arrow_arrays())
def test_arrow_from_object(spec):
    exp = oracle(spec)
    p = make(spec)
    kind, b = run(lambda: Buffer.from_object(p))
    event(f"oracle {exp if isinstance(exp, str) else 'values'}, consumer {kind}")
    if exp == "raise":
        assert kind == "error", b
    if kind == "ok" and isinstance(exp, tuple) and spec["fmt"] in PRIMITIVE:
        # the values buffer from the array's offset on
        want = exp[0][~exp[1]]
        got = np.asarray(b).view(PRIMITIVE[spec["fmt"]])[: spec["length"]][~exp[1]]
        np.testing.assert_array_equal(got, want)
    del b
    released_once(p)
