"""dfbuffer's own exports inside reference cycles (docs/design.md, "Safety rules", the GC
rule for holders): a cycle that runs through what an export keeps (Arrow nodes, streams,
DLPack tensors and the holders dfbuffer moves them into when it imports its own export
again) is collected, and is kept while a foreign consumer of the export (pyarrow, NumPy)
still reads the memory."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from producers import DlpackOnly

import dfbuffer
from dfbuffer import Buffer


class Source:
    """A GC-visible producer (``__array_interface__`` with an address) whose Buffers own it,
    so that anything stored on it closes a cycle through the export."""

    def __init__(self) -> None:
        self.arr = np.arange(6, dtype="f8")
        self.__array_interface__ = dict(self.arr.__array_interface__)
        self.keep: Any = None


def _buffer(src: Source) -> Buffer:
    return Buffer.from_object(src)


class _ArrowProducer:
    """An Arrow producer (and nothing else) over dfbuffer's own export."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.inner.__arrow_c_stream__(requested_schema)


def _frame_of(src: Source) -> Any:
    import pandas as pd

    # a frame of its own numbers and strings (NumPy arrays, which the collector does not
    # see into, would keep any cycle through them), pointing back at the source
    df = pd.DataFrame({"x": [1.0, 2.0], "s": ["a", None]})
    object.__setattr__(df, "source", src)  # not in attrs, which pandas' export serializes
    return df


# name -> make(src): an export of src's memory, read back by dfbuffer where it is a
# consumer; the result is stored on src
EXPORTS: dict[str, Callable[[Source], Any]] = {
    "to_interchange of a mapping": lambda s: dfbuffer.to_interchange({"x": _buffer(s)}),
    "to_interchange of a mapping, a buffer of it": lambda s: dfbuffer.to_interchange(
        {"x": _buffer(s)}).get_column(0).get_buffers()["data"][0],
    "to_interchange of a pandas frame": lambda s: dfbuffer.to_interchange(_frame_of(s)),
    "to_interchange of an Arrow producer": lambda s: dfbuffer.to_interchange(
        _ArrowProducer(dfbuffer.to_arrow({"x": _buffer(s)}))),
    "to_interchange of Buffer.__arrow_c_array__": lambda s: dfbuffer.to_interchange(
        _buffer(s)),
    "to_interchange of Buffer.__arrow_c_device_array__": lambda s: dfbuffer.to_interchange(
        _DeviceArrayOnly(_buffer(s))),
    "to_arrow of a mapping": lambda s: dfbuffer.to_arrow({"x": _buffer(s)}),
    "to_arrow of a view (node pass-through)": lambda s: dfbuffer.to_arrow(
        dfbuffer.to_interchange({"x": _buffer(s)})),
    "to_arrow of an Arrow producer": lambda s: dfbuffer.to_arrow(
        _ArrowProducer(dfbuffer.to_arrow({"x": _buffer(s)}))),
    "Buffer.__dlpack__ capsule": lambda s: Buffer.from_object(
        _buffer(s).__dlpack__(max_version=(1, 0))),
    "Buffer.__dlpack__ legacy capsule": lambda s: Buffer.from_object(
        _writable(s).__dlpack__()),
    "Buffer.__dlpack__ producer": lambda s: Buffer.from_object(DlpackOnly(_buffer(s))),
    "Buffer.__arrow_c_array__ read back": lambda s: Buffer.from_object(
        _ArrowArrayOnly(_buffer(s))),
    "DLPack exchange API, to_py of from_py": lambda s: _exchange_round_trip(_buffer(s)),
    "DLPack exchange API of a foreign type": lambda s: Buffer.from_object(
        _exchange_producer()(_buffer(s))),
}


def _exchange_round_trip(b: Buffer) -> Buffer:
    """b through dfbuffer's own exchange functions (managed tensor out, Buffer back)."""
    from _dlpack_exchange_ctypes import Own

    own = Own()
    return own.to_buffer(own.export(b))


def _exchange_producer() -> type:
    """A producer type whose DLPack exchange table forwards to dfbuffer's own function."""
    from _dlpack_exchange_ctypes import forwarding_table, producer_class

    return producer_class(forwarding_table())


class _ArrowArrayOnly:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        return self.inner.__arrow_c_array__(requested_schema)


class _DeviceArrayOnly:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __arrow_c_device_array__(self, requested_schema: Any = None, **kw: Any) -> Any:
        return self.inner.__arrow_c_device_array__(requested_schema, **kw)


def _writable(src: Source) -> Buffer:
    """A writable Buffer over src (the legacy DLPack capsule has no read-only flag)."""
    b = Buffer.from_object(src)
    assert not b.readonly
    return b


def _collect_young_first() -> None:
    gc.collect(0)
    gc.collect(1)
    gc.collect()


@pytest.mark.parametrize("make", list(EXPORTS.values()), ids=list(EXPORTS))
def test_a_cycle_through_an_export_is_collected(make):
    src = Source()
    src.keep = make(src)
    refs = [weakref.ref(src)]
    try:
        refs.append(weakref.ref(src.keep))
    except TypeError:  # not weakly referenceable
        pass
    del src
    _collect_young_first()
    assert [r() for r in refs if r() is not None] == []


# name -> (make a dfbuffer export over src stored on src, a foreign consumer of it)
CONSUMED: dict[str, tuple[Callable[[Source], Any], Callable[[Any], Any]]] = {
    "to_arrow, pyarrow table": (
        lambda s: dfbuffer.to_arrow(dfbuffer.to_interchange({"x": _buffer(s)})),
        lambda e: pa.table(e)["x"].to_numpy()),
    "to_interchange, pyarrow table": (
        lambda s: dfbuffer.to_interchange({"x": _buffer(s)}),
        lambda v: pa.table(dfbuffer.to_arrow(v))["x"].to_numpy()),
    "Buffer.__arrow_c_array__, pyarrow array": (
        lambda s: Buffer.from_object(_ArrowArrayOnly(_buffer(s))),
        lambda b: pa.array(b).to_numpy()),
    "Buffer.__dlpack__, numpy": (
        lambda s: Buffer.from_object(DlpackOnly(_buffer(s))),
        lambda b: np.from_dlpack(b)),
    "DLPack exchange API, tvm_ffi": (
        lambda s: _exchange_round_trip(_buffer(s)),
        lambda b: np.from_dlpack(_tvm_ffi().from_dlpack(b))),
}


def _tvm_ffi() -> Any:
    return pytest.importorskip("tvm_ffi")


@pytest.mark.parametrize("make, consume", list(CONSUMED.values()), ids=list(CONSUMED))
def test_a_cycle_lives_while_a_foreign_consumer_reads_it(make, consume):
    src = Source()
    src.keep = make(src)
    values = consume(src.keep)  # holds the export's memory, not the cycle's objects
    ref = weakref.ref(src)
    del src
    _collect_young_first()
    assert ref() is not None  # the consumer's export keeps the cycle
    assert values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    del values
    _collect_young_first()
    assert ref() is None
