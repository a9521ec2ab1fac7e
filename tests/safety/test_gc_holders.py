"""Export holders inside reference cycles (docs/design.md, "Safety rules", the GC rule for
holders): every producer kind ``Buffer.from_object`` takes, with the Buffer, views of it and
ndarray results inside a cycle (a closure, a list that holds itself, an object attribute),
collected in several orders.  Nothing crashes, and everything is freed afterwards."""

from __future__ import annotations

import gc
import importlib.util
import mmap
import pickle
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from producers import DlpackOnly

from dfbuffer import Buffer


def test_memoryview_source_in_a_cycle_is_collected():
    m = memoryview(bytearray(b"abcdefgh"))
    r = weakref.ref(m)
    cycle = [Buffer.from_object(m), m]
    cycle.append(cycle)
    del m, cycle
    gc.collect()
    assert r() is None


# --- producers: each returns (source, cleanup); cleanup runs after the collection ------------


class _ArrayInterfacePtr:
    """__array_interface__ with an integer address: the Buffer's owner is this object."""

    def __init__(self) -> None:
        self.arr = np.arange(6, dtype="f8")
        self.__array_interface__ = dict(self.arr.__array_interface__)


class _ArrayInterfaceMemoryview:
    """__array_interface__ whose data is a memoryview: dfbuffer holds a buffer export of it."""

    def __init__(self) -> None:
        self.mem = memoryview(bytearray(48))
        self.__array_interface__ = {"version": 3, "shape": (6,), "typestr": "<f8",
                                    "data": self.mem}


class _PyBuffer:
    """A Python-level exporter (CPython 3.12+ ``__buffer__``) handing out a memoryview."""

    def __init__(self) -> None:
        self.data = bytearray(b"abcdefgh")

    def __buffer__(self, flags: int) -> memoryview:
        return memoryview(self.data)

    def __release_buffer__(self, view: memoryview) -> None:
        view.release()


def _unpickled_buffer() -> Buffer:
    """A Buffer rebuilt by pickle protocol 5 from out-of-band buffers (owner: a memoryview
    of the PickleBuffer)."""
    oob: list[pickle.PickleBuffer] = []
    data = pickle.dumps(Buffer.from_object(np.arange(6, dtype="f8")), protocol=5,
                        buffer_callback=oob.append)
    return pickle.loads(data, buffers=oob)


def _nothing() -> None:
    pass


def _shared_memory() -> tuple[Any, Callable[[], None]]:
    from multiprocessing import shared_memory

    shm = shared_memory.SharedMemory(create=True, size=64)

    def cleanup() -> None:
        shm.close()  # BufferError if an export of shm.buf were still alive
        shm.unlink()

    return shm.buf, cleanup


def _pandas_ix_buffer() -> Any:
    import pandas as pd

    col = pd.DataFrame({"a": [1, 2, 3]}).__dataframe__().get_column(0)
    return col.get_buffers()["data"][0]


def _torch_tensor() -> Any:
    import torch

    return torch.arange(6, dtype=torch.float64)


_HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _pyarrow() -> Any:
    import pyarrow as pa

    return pa


def _polars() -> Any:
    return pytest.importorskip("polars")  # no free-threaded wheel: skip cleanly


def _exchange_producer() -> Any:
    """A producer whose DLPack C exchange table forwards to dfbuffer's own function."""
    from _dlpack_exchange_ctypes import forwarding_table, producer_class

    return producer_class(forwarding_table())(Buffer.from_object(np.arange(6, dtype="f8")))


PRODUCERS: dict[str, Callable[[], Any]] = {
    "numpy": lambda: np.arange(6, dtype="f8"),
    "bytes": lambda: b"abcdefgh",
    "bytearray": lambda: bytearray(b"abcdefgh"),
    "memoryview": lambda: memoryview(bytearray(b"abcdefgh")),
    "memoryview of ndarray": lambda: memoryview(np.arange(6, dtype="f8")),
    "memoryview of memoryview": lambda: memoryview(memoryview(bytearray(8))),
    "mmap": lambda: mmap.mmap(-1, 64),
    "pickle buffer": lambda: pickle.PickleBuffer(bytearray(8)),
    "python __buffer__": _PyBuffer,
    "unpickled Buffer (protocol 5)": _unpickled_buffer,
    "array interface (address)": _ArrayInterfacePtr,
    "array interface (memoryview data)": _ArrayInterfaceMemoryview,
    "dlpack capsule (numpy)": lambda: np.arange(6, dtype="f8").__dlpack__(),
    "dlpack producer (numpy)": lambda: DlpackOnly(np.arange(6, dtype="f8")),
    "dlpack producer (torch)": lambda: DlpackOnly(_torch_tensor()),
    "torch tensor": _torch_tensor,
    "DLPack exchange API producer": lambda: _exchange_producer(),
    "pyarrow array (dlpack)": lambda: _pyarrow().array([1, 2, 3]),
    "pyarrow array (arrow capsule)": lambda: _pyarrow().array([1, None, 3]),
    "pyarrow buffer": lambda: _pyarrow().py_buffer(b"abcdefgh"),
    "shared memory": _shared_memory,
    "pandas interchange buffer": _pandas_ix_buffer,
    "polars series": lambda: _polars().Series([1, 2, 3]),
}


def _params() -> list[Any]:
    out = []
    for name in PRODUCERS:
        marks = [pytest.mark.skipif(not _HAVE_TORCH, reason="torch not installed")] if (
            "torch" in name) else []
        if name == "python __buffer__":
            marks = [pytest.mark.skipif(sys.version_info < (3, 12), reason="CPython 3.12+")]
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def _make(name: str) -> tuple[Any, Callable[[], None]]:
    made = PRODUCERS[name]()
    return made if isinstance(made, tuple) else (made, _nothing)


def _views(b: Buffer) -> list[Any]:
    """Views of the Buffer and ndarray results over it, each holding an export of it."""
    mv = memoryview(b)
    return [
        np.asarray(b),
        mv,
        np.from_dlpack(b),
        np.frombuffer(b, dtype=np.uint8),
        np.asarray(mv)[::-1],
        Buffer.from_object(mv),  # a holder over a memoryview of a Buffer
    ]


def _weak(objs: list[Any]) -> list[weakref.ref]:
    refs = []
    for o in objs:
        try:
            refs.append(weakref.ref(o))
        except TypeError:  # bytes, bytearray, capsules: not weakly referenceable
            pass
    return refs


def _closure(items: list[Any]) -> Any:
    def f() -> Any:
        return items, f  # f's cell refers to f: a cycle through the function

    return f


def _self_list(items: list[Any]) -> Any:
    cycle = list(items)
    cycle.append(cycle)
    return cycle


class _Node:
    pass


def _attribute(items: list[Any]) -> Any:
    node = _Node()
    for i, item in enumerate(items):
        setattr(node, f"item{i}", item)
    node.me = node
    return node


SHAPES = {"closure": _closure, "self-referencing list": _self_list, "attribute": _attribute}


def _collect_young_first() -> None:
    gc.collect(0)
    gc.collect(1)
    gc.collect()


def _collect_full() -> None:
    gc.collect()


@pytest.mark.parametrize("collect_how", [_collect_young_first, _collect_full],
                         ids=["young first", "full"])
@pytest.mark.parametrize("reverse", [False, True], ids=["source first", "views first"])
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("producer", _params())
def test_producer_in_a_cycle(producer, shape, reverse, collect_how):
    src, cleanup = _make(producer)
    b = Buffer.from_object(src)
    items = [src, b, b.owner, *_views(b)]
    if reverse:
        items.reverse()
    # the source of a producer with a cleanup stays alive with it (shm.buf)
    refs = _weak([o for o in items if cleanup is _nothing or o is not src])
    assert refs  # the Buffer at least
    SHAPES[shape](items)
    del src, b, items
    collect_how()
    alive = [r() for r in refs if r() is not None]
    assert alive == []
    cleanup()


@pytest.mark.parametrize(
    "producer", [p for p in _params() if "capsule (numpy)" not in p.id]  # used up once
)
def test_source_released_after_cycle(producer):
    """The export dies with the cycle: a bytearray can grow again, an mmap can close."""
    src, cleanup = _make(producer)
    b = Buffer.from_object(src)
    _self_list([b, np.asarray(b), memoryview(b)])
    del b
    gc.collect()
    if isinstance(src, bytearray):
        src.extend(b"x")  # BufferError while an export is alive
        assert len(src) == 9
    elif isinstance(src, mmap.mmap):
        src.close()  # BufferError while an export is alive
        assert src.closed
    elif isinstance(src, memoryview):
        src.release()  # BufferError while an export is alive
        with pytest.raises(ValueError):
            len(src)
    else:
        assert sys_refcount_settles(src)
    cleanup()


def sys_refcount_settles(src: Any) -> bool:
    """A fresh Buffer over `src` adds references that go away again with it."""
    before = sys.getrefcount(src)
    b = Buffer.from_object(src)
    del b
    gc.collect()
    return sys.getrefcount(src) == before


class _ByteArray(bytearray):
    pass


SELF_HOLDING: dict[str, Callable[[], Any]] = {
    "array interface (address)": _ArrayInterfacePtr,
    "array interface (memoryview data)": _ArrayInterfaceMemoryview,
    "dlpack producer (numpy)": lambda: DlpackOnly(np.arange(6, dtype="f8")),
    "pandas interchange buffer": _pandas_ix_buffer,
    "bytearray subclass": lambda: _ByteArray(16),
}


@pytest.mark.parametrize("reverse", [False, True], ids=["source first", "views first"])
@pytest.mark.parametrize("make", list(SELF_HOLDING.values()), ids=list(SELF_HOLDING))
def test_source_holding_its_buffer_is_collected(make, reverse):
    """The source keeps its own Buffer and GC-visible views of it (an ndarray view would make
    the cycle uncollectable: NumPy arrays are not tracked by the collector)."""
    src = make()
    b = Buffer.from_object(src)
    items = [b, memoryview(b), Buffer.from_object(b)]
    src.keep = items[::-1] if reverse else items
    refs = _weak([src, *items])
    del src, b, items
    _collect_young_first()
    assert [r() for r in refs if r() is not None] == []


def test_cycle_back_through_an_exported_memoryview_is_kept():
    """A held export of a memoryview is invisible to the collector (clearing the memoryview
    under it would crash CPython), so a cycle that runs back through that memoryview is kept
    alive (a leak, never a crash) until broken by hand."""
    src = _ArrayInterfacePtr()
    mv = memoryview(Buffer.from_object(src))
    src.keep = Buffer.from_object(mv)  # src -> Buffer -> holder ~> mv -> Buffer -> src
    r = weakref.ref(src)
    del src, mv
    _collect_young_first()
    src = r()
    assert src is not None
    src.keep = None
    del src
    _collect_young_first()
    assert r() is None


class _Holder:
    """A plain object that can sit in a cycle."""


@pytest.mark.parametrize("nulls", ["fill", "mask"])
@pytest.mark.parametrize("collect_how", [_collect_young_first, _collect_full],
                         ids=["young first", "full"])
def test_pandas_views_read_by_to_matrix_in_a_cycle(collect_how, nulls):
    """to_matrix reads a pandas frame's broadcast block and reversed mask in place and
    keeps nothing of them: the frame, its bases and the result inside a cycle (the frame's
    attrs hold the holder that holds the frame) are all freed, the result owning its
    memory."""
    import pandas as pd

    import dfbuffer

    row = np.arange(3.0)
    mask = np.zeros(50, bool)
    mask[::4] = True
    cols = {c: np.broadcast_to(row[j : j + 1], (50,)) for j, c in enumerate("abc")}
    col = pd.arrays.IntegerArray(np.arange(50)[::-1], mask[::-1])
    df = pd.DataFrame({**cols, "m": col}, copy=False)
    assert np.shares_memory(df["a"].to_numpy(), row)
    h = _Holder()
    h.df, h.me = df, h
    h.res = dfbuffer.to_matrix(df, nulls=nulls)
    df.attrs["holder"] = h
    assert nulls == "mask" or h.res.base is None  # a MaskedArray's data is a view
    refs = _weak([h, df, row, mask, h.res])
    del h, df, row, mask, cols, col
    collect_how()
    assert [r() for r in refs if r() is not None] == []
def test_to_matrix_of_decoded_runs_in_a_cycle_is_collected():
    # the arrays to_matrix decodes run-end bools into live for the call only
    import pyarrow as pa
    from run_end_arrays import run_end_array

    from dfbuffer import to_matrix

    ree = run_end_array([2, 5], pa.array([True, None]))
    table = pa.table({"r": ree})
    r = weakref.ref(table)
    cycle: list[Any] = [table, to_matrix(table, nulls="mask")]
    cycle.append(cycle)
    del table, cycle
    gc.collect()
    assert r() is None


def test_mapping_pandas_array_in_a_cycle_is_collected():
    pd = pytest.importorskip("pandas")
    from dfbuffer import from_dataframe

    value = pd.array(pd.date_range("2020", periods=3, tz="UTC"))
    r = weakref.ref(value)
    data: dict[str, Any] = {"t": value}
    res = from_dataframe(data)
    data["cycle"] = data  # the result is taken first: no longer a column
    cycle: list[Any] = [data, res, value]
    cycle.append(cycle)
    del value, data, res, cycle
    gc.collect()
    assert r() is None



@pytest.mark.parametrize("period", ["object", "ordinal"])
def test_pandas_columns_read_in_c_in_a_cycle_are_collected(period):
    # Period (its ordinals a view of pandas' array), Interval, Sparse and a nullable
    # Int64 reached through a categorical: the columns pandas_columns.c reads
    pd = pytest.importorskip("pandas")
    from dfbuffer import from_dataframe

    df = pd.DataFrame({
        "p": pd.period_range("2020", periods=4, freq="M"),
        "pn": pd.PeriodIndex(["2020-01", None, "2020-03", "2020-04"], freq="M"),
        "iv": pd.arrays.IntervalArray.from_breaks([0, 1, 2, 3, 4]),
        "sp": pd.arrays.SparseArray([0.0, np.nan, 2.0, 0.0]),
    })
    r = weakref.ref(df)
    res = from_dataframe(df, period=period)
    assert res["p"].shape == (4,)
    cycle: list[Any] = [df, res, res["p"], res["sp"]]
    cycle.append(cycle)
    res["cycle"] = cycle
    del df, res, cycle
    gc.collect()
    assert r() is None
