"""Fuzz: hostile DataFrame-interchange producers through column_to_ndarray,
from_dataframe, buffer_to_ndarray, Buffer.from_object and the conformance kit.

Every producer method may raise, return the wrong type, lie about sizes or change its
answer between calls; get_buffers() may return a dict or another Mapping, and callbacks
may empty the producer's own container.  The oracle is hostile.expected_column (NumPy over
the producer's real memory)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from fuzz_settings import FUZZ, FUZZ_SEED
from hostile import (
    EITHER,
    HOST_READABLE,
    RAISE,
    UNSAFE,
    HColumn,
    HFrame,
    ProducerError,
    Script,
    check_result,
    expected_column,
    mem_of,
    raw_buffer,
    run,
)
from hypothesis import assume, event, given
from hypothesis import strategies as st
from producers import calls, mutate
from strategies import GARBAGE, hostile_buffer, hostile_columns, memory, scripted
from text_strategy import text

import dfbuffer
from dfbuffer import testing

pytestmark = pytest.mark.fuzz

NULLS = st.sampled_from(["mask", "fill", "raise"])


def oracle(col: HColumn, kind: str, nulls: str, chunk: bool = False):
    if getattr(col, "mutated", False):
        return RAISE
    return expected_column(col, kind, nulls, chunk=chunk)


def judge(outcome, exp, nulls):
    kind, value = outcome
    event(f"oracle {exp if isinstance(exp, str) else 'values'}, consumer {kind}")
    if exp == RAISE:
        assert kind == "error", f"accepted a producer the oracle refuses: {value!r}"
    elif exp == EITHER:
        if kind == "ok":
            assert isinstance(value, np.ndarray)
    else:
        assert kind == "ok", f"refused a valid producer: {value!r}"
        check_result(value, exp, nulls)


@FUZZ
@FUZZ_SEED
@given(hostile_columns(), NULLS)
def test_column_to_ndarray(colkind, nulls):
    col, kind = colkind
    exp = oracle(col, kind, nulls)
    assume(exp != UNSAFE)
    judge(run(lambda: dfbuffer.column_to_ndarray(col, nulls=nulls)), exp, nulls)


@FUZZ
@FUZZ_SEED
@given(st.sampled_from(["i4", "f8", "u1", "?"]).flatmap(
    lambda k: st.lists(hostile_columns(k, p_hostile=0.02), min_size=2, max_size=4)
), NULLS)
def test_column_to_ndarray_chunks(chunks, nulls):
    kind = chunks[0][1]
    cols = [c for c, _ in chunks]
    exps = [oracle(c, kind, "mask", chunk=True) for c in cols]
    assume(UNSAFE not in exps)
    outer = HColumn(num_chunks=Script(len(cols)), get_chunks=Script(cols))
    outcome = run(lambda: dfbuffer.column_to_ndarray(outer, nulls=nulls))
    if RAISE in exps:
        exp = RAISE
    elif EITHER in exps:
        exp = EITHER
    else:
        values = np.concatenate([e[0] for e in exps]).astype(np.dtype(kind))
        isnull = np.concatenate([e[1] for e in exps])
        exp = RAISE if nulls == "raise" and isnull.any() else (values, isnull)
    judge(outcome, exp, nulls)


NAMES = st.one_of(text(max_size=3), st.integers(-2, 3))


@FUZZ
@FUZZ_SEED
@given(st.lists(st.tuples(NAMES, hostile_columns(p_hostile=0.03)), max_size=4),
       st.sampled_from(["list", "tuple", "iter", "garbage", "raises"]), NULLS)
def test_from_dataframe(named, names_as, nulls):
    names = [n for n, _ in named]
    cols = [c for _, (c, _) in named]
    exps = [oracle(c, k, nulls) for _, (c, k) in named]
    assume(UNSAFE not in exps)
    answer = {
        "list": list(names),
        "tuple": tuple(names),
        "iter": iter(list(names)),
        "garbage": 42,
        "raises": ProducerError("column_names"),
    }[names_as]
    df = HFrame(column_names=Script(answer), columns=Script(cols), names=names,
                num_columns=Script(len(cols)), num_rows=Script(None))
    outcome = run(lambda: dfbuffer.from_dataframe(df, nulls=nulls))
    keys = [str(n) for n in names]
    if names_as in ("garbage", "raises") or len(set(keys)) != len(keys) or RAISE in exps:
        # a refused column, duplicate names, or bad names: an error (a duplicate may
        # also be found only after an earlier column failed)
        assert outcome[0] == "error", outcome
        return
    if EITHER in exps:
        return
    kind, value = outcome
    assert kind == "ok", value
    assert list(value) == keys
    for k, e in zip(keys, exps, strict=True):
        check_result(value[k], e, nulls)


@FUZZ
@FUZZ_SEED
@given(st.data())
def test_buffer_to_ndarray(data):
    kind = data.draw(st.sampled_from(["i1", "i2", "i4", "i8", "u8", "f4", "f8", "?"]))
    dt = np.dtype(kind)
    count = data.draw(st.integers(0, 24))
    mem = data.draw(memory(kind, count))
    buf = data.draw(hostile_buffer(mem, count * dt.itemsize, aligned=1))
    offset = data.draw(st.one_of(st.integers(-2, count + 2), GARBAGE))
    length = data.draw(st.one_of(st.none(), st.integers(-2, count + 2), GARBAGE))
    m = mem_of(buf)
    assume(m != EITHER)
    outcome = run(lambda: dfbuffer.buffer_to_ndarray(buf, kind, offset=offset, length=length))
    if offset is None:
        offset = 0  # the default
    if m == RAISE or type(offset) is not int or (length is not None and type(length) is not int):
        assert outcome[0] == "error", outcome
        return
    ptr, claimed, real = m
    total = claimed // dt.itemsize
    if length is None:
        stop = total
    else:
        stop = offset + length
    if offset < 0 or (length is not None and length < 0) or stop > total or offset > total:
        assert outcome[0] == "error", outcome
        return
    assume(stop * dt.itemsize <= real.size)
    kind_, value = outcome
    assert kind_ == "ok", value
    want = np.frombuffer(real[: stop * dt.itemsize].tobytes(), dt)[offset:stop]
    np.testing.assert_array_equal(value, want)


def _byte_buffer(data, most: int, **kw):
    """Draws a hostile interchange buffer over up to `most` bytes (kw: hostile_buffer's
    options); returns it and what mem_of says of it."""
    count = data.draw(st.integers(0, most))
    buf = data.draw(hostile_buffer(data.draw(memory("u1", count)), count, **kw))
    return buf, mem_of(buf)


@FUZZ
@FUZZ_SEED
@given(st.data())
def test_from_object_interchange_buffer(data):
    buf, m = _byte_buffer(data, 64)
    dtype = data.draw(st.sampled_from([None, "u1", "i2", "f8"]))
    outcome = run(lambda: dfbuffer.Buffer.from_object(buf, dtype=dtype))
    if m == RAISE:
        # device memory is wrapped (never read); anything else invalid is refused
        dev = buf._device.first if isinstance(buf._device, Script) else buf._device
        if outcome[0] == "ok":
            assert dev[0] not in HOST_READABLE, outcome
        return
    if m == EITHER or outcome[0] == "error":
        # a dtype whose itemsize does not divide the size is refused
        if m != EITHER and outcome[0] == "error":
            assert dtype is not None and m[1] % np.dtype(dtype).itemsize, outcome
        return
    ptr, claimed, real = m
    b = outcome[1]
    assert b.ptr == ptr and b.readonly
    nbytes = int(np.prod(b.shape)) * b.dtype.itemsize
    assert nbytes == claimed
    if claimed <= real.size:
        got = np.asarray(b).view(np.uint8).reshape(-1)
        np.testing.assert_array_equal(got, real[:claimed])


def _kit_ok(report):
    assert isinstance(report, testing.Report)
    assert isinstance(report.ok, bool)
    str(report)


@FUZZ
@FUZZ_SEED
@given(hostile_columns(mutate=False))
def test_check_column_never_raises(colkind):
    col, _ = colkind
    assume(expected_column(col, colkind[1], "mask") != UNSAFE)
    _kit_ok(testing.check_column(col))


@FUZZ
@FUZZ_SEED
@given(st.data())
def test_check_buffer_and_dataframe_never_raise(data):
    buf, m = _byte_buffer(data, 32, may_change=False)
    assume(m in (RAISE, EITHER) or m[1] <= m[2].size)
    _kit_ok(testing.check_buffer(buf))
    col, kind = data.draw(hostile_columns(may_change=False, mutate=False))
    assume(expected_column(col, kind, "mask") != UNSAFE)
    df = HFrame(
        column_names=data.draw(scripted(["a"], st.just(["a", "b"]), may_change=False)),
        columns=Script([col]), names=["a"],
        num_columns=data.draw(scripted(1, st.integers(-1, 3), may_change=False)),
        num_rows=data.draw(scripted(None, st.integers(-1, 50), may_change=False)),
    )
    _kit_ok(testing.check_dataframe(df))


# ---------------------------------------------------------------- known crashes
# Each shape below crashed (or returned a wrong view) before the hardening fixes
# (tests/safety/test_hostile_producers.py has their regression tests too).


def _column(**over):
    a = np.arange(4, dtype="i8")
    buf = raw_buffer(a.ctypes.data, a.nbytes, mem=a)
    dt = (0, 64, "l", "=")
    s = dict(size=4, offset=0, dtype=dt, describe_null=(0, None), null_count=0,
             num_chunks=1, get_buffers={"data": (buf, dt), "validity": None, "offsets": None})
    s.update(over)
    return HColumn(**s), a


def test_known_mapping_with_fresh_tuples():
    from collections.abc import Mapping

    col, a = _column()

    class Fresh(Mapping):
        def __getitem__(self, k):
            buf = raw_buffer(a.ctypes.data, a.nbytes, mem=a)
            return {"data": (buf, (0, 64, "l", "=")), "validity": None, "offsets": None}[k]

        def __iter__(self):
            return iter(("data", "validity", "offsets"))

        def __len__(self):
            return 3

    col.s["get_buffers"] = Fresh()
    for _ in range(50):
        assert dfbuffer.column_to_ndarray(col).tolist() == [0, 1, 2, 3]
        gc.collect()


def test_known_ptr_clears_the_buffers_dict():
    a = np.arange(4, dtype="i8")
    d: dict = {}

    def clearing_ptr():
        d.clear()
        gc.collect()
        return a.ctypes.data

    clearing = mutate(raw_buffer(0, a.nbytes, mem=a), ptr=calls(clearing_ptr))
    d.update(data=(clearing, (0, 64, "l", "=")), validity=None)
    col, _ = _column(get_buffers=d)
    dfbuffer.column_to_ndarray(col)  # the values or a clean error


def test_known_column_names_shrunk_from_get_column():
    names = [f"c{i}" + "x" * 40 for i in range(8)]
    cols = [_column()[0] for _ in names]

    class Shrinking(HFrame):
        def get_column(self, i):
            del names[:]
            gc.collect()
            return cols[i]

    df = Shrinking(column_names=Script(names), columns=Script(cols), names=list(names))
    dfbuffer.from_dataframe(df)


@pytest.mark.parametrize("ptr, bufsize", [(-(2**62), 8), (True, 8), (8, True)])
def test_known_negative_or_bool_ptr_refused(ptr, bufsize):
    a = np.zeros(1, "i8")
    buf = raw_buffer(ptr, bufsize, mem=a)
    with pytest.raises((TypeError, ValueError, BufferError)):
        dfbuffer.buffer_to_ndarray(buf, "u1", length=0)
    col, _ = _column(size=0)
    col.s["get_buffers"] = {"data": (buf, (0, 64, "l", "=")), "validity": None}
    with pytest.raises((TypeError, ValueError, BufferError)):
        dfbuffer.column_to_ndarray(col)


def test_known_misaligned_int64_sentinel():
    raw = np.zeros(8 * 4 + 1, np.uint8)
    buf = raw_buffer(raw.ctypes.data + 1, 32, mem=raw)
    dt = (0, 64, "l", "=")
    col, _ = _column(describe_null=(2, -1), get_buffers={"data": (buf, dt), "validity": None})
    assert dfbuffer.column_to_ndarray(col).tolist() == [0, 0, 0, 0]


def test_known_kit_bufsize_grows_after_p20():
    a = np.zeros(8, "u1")
    col, _ = _column()
    grow = Script(4, 16 << 20, changes=True)
    buf = raw_buffer(a.ctypes.data, grow, mem=a)
    col.s["get_buffers"] = {"data": (buf, (0, 64, "l", "=")), "validity": None}
    _kit_ok(testing.check_column(col))
