"""Fuzz: one thread keeps rewriting a column's data and validity memory (np.copyto
releases the GIL) while other threads convert the same column through every entry point.
Each result must be made of bytes that were in memory at some point (at each position the
byte of pattern A or of pattern B), never a crash or bytes from elsewhere."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from fuzz_settings import EXAMPLES
from producers import Buffer as IxBuffer
from producers import frame, with_mask

import dfbuffer
from dfbuffer import testing

pytestmark = pytest.mark.fuzz

N = 4096
ROUNDS = max(EXAMPLES, 5) * 4  # conversions per converting thread


def _column(kind: str):
    a = np.arange(N, dtype="i8")
    b = ~a  # every byte differs from a's
    valid = np.ones(N, bool)
    col = with_mask(a, valid, kind=kind)
    data = col._data[0]._x
    vmem = col._validity[0]._x
    if kind == "bitmask":
        masks = (np.full_like(vmem, 0xFF), np.full_like(vmem, 0x5A))
    else:
        masks = (np.ones_like(vmem), np.zeros_like(vmem))
    return col, data, vmem, (a, b), masks


@pytest.mark.parametrize("kind", ["bitmask", "bytemask"])
def test_convert_while_another_thread_writes(kind):
    col, data, vmem, (a, b), masks = _column(kind)
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer():
        i = 0
        while not stop.is_set():
            np.copyto(data, (a, b)[i & 1])
            np.copyto(vmem, masks[(i >> 1) & 1])
            i += 1

    a_bytes, b_bytes = a.view(np.uint8), b.view(np.uint8)

    def values_ok(res):
        # byte by byte: copyto may tear an element (memcpy gives no 8-byte atomicity,
        # ASan's interceptor copies differently again), but every byte read must be the
        # byte of pattern A or B at the same position
        r = np.array(np.ma.getdata(res), copy=True)
        assert r.shape == (N,) and r.dtype.itemsize == 8
        r = r.view(np.uint8)
        assert ((r == a_bytes) | (r == b_bytes)).all()

    def convert(which: int):
        try:
            for _ in range(ROUNDS):
                if which == 0:
                    values_ok(dfbuffer.column_to_ndarray(col, nulls="mask"))
                elif which == 1:
                    res = dfbuffer.from_dataframe(frame(x=col))["x"]
                    values_ok(res)
                elif which == 2:
                    values_ok(dfbuffer.buffer_to_ndarray(col._data[0], "i8"))
                    values_ok(np.asarray(dfbuffer.Buffer.from_object(IxBuffer(data), dtype="i8")))
                else:
                    assert isinstance(testing.check_column(col), testing.Report)
        except BaseException as e:  # noqa: BLE001 - reported in the main thread
            errors.append(e)

    w = threading.Thread(target=writer)
    workers = [threading.Thread(target=convert, args=(k,)) for k in range(4)]
    w.start()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    stop.set()
    w.join()
    assert not errors, errors[0]


def test_strings_while_another_thread_writes_offsets():
    from producers import strings

    words = ["x" * (i % 7) for i in range(N)]
    col = strings(words, large=True)
    off = col._offsets[0]._x
    good = off.copy()
    bad = good.copy()
    bad[1:] = good[-1] * 50  # past the data buffer
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            np.copyto(off, (good, bad)[i & 1])
            i += 1

    w = threading.Thread(target=writer)
    w.start()
    try:
        for _ in range(ROUNDS * 4):
            try:
                dfbuffer.column_to_ndarray(col)
            except ValueError:
                pass
    finally:
        stop.set()
        w.join()
