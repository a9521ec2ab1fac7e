"""64 threads calling every public entry point at once on shared sources: Buffer.from_object,
buffer_to_ndarray, column_to_ndarray, from_dataframe, schema, to_interchange, to_matrix,
iter_matrices, iter_batches,
dfbuffer.pandas.from_dataframe, the Buffer exports (__dlpack__, __array_interface__,
memoryview, Arrow), the C API table and the DLPack C exchange API table (its five functions,
and Buffer.from_object reading a producer's table; both called through ctypes).  Every
result is checked; the iterations are bounded (a few seconds, also under ASan + UBSan in
CI).  Nothing here times anything: the assertions are on values only.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dfbuffer
import dfbuffer.pandas
from dfbuffer import Buffer

THREADS = 64
ROUNDS = 2

# the C API table (include/dfbuffer/dfbuffer.h): two unsigned ints, the Buffer type, then
# function pointers, each taking the table first
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_P = ctypes.c_void_p
_FROM_OBJECT = ctypes.PYFUNCTYPE(ctypes.py_object, _P, ctypes.py_object, ctypes.py_object)
_COLUMN = ctypes.PYFUNCTYPE(ctypes.py_object, _P, ctypes.py_object, ctypes.c_int)
_FRAME = ctypes.PYFUNCTYPE(ctypes.py_object, _P, ctypes.py_object, ctypes.c_int, ctypes.c_int)


def exchange():
    """dfbuffer's DLPack exchange functions and a producer type whose table forwards to
    them (tests/_dlpack_exchange_ctypes.py)."""
    from _dlpack_exchange_ctypes import Own, forwarding_table, producer_class

    return Own(), producer_class(forwarding_table())


def exchange_work(ints, ex):
    """One round over the DLPack exchange API; raises AssertionError on a wrong value."""
    from _dlpack_ctypes import DLTensor
    from _dlpack_exchange_ctypes import SET_ERROR, tensor_array

    own, producer = ex
    b = Buffer.from_object(ints)
    back = own.to_buffer(own.export(b))
    assert back.ptr == ints.ctypes.data and np.array_equal(np.asarray(back), ints)
    assert np.array_equal(tensor_array(own.view(b), ints.dtype), ints)
    p = producer(b)
    assert Buffer.from_object(p).ptr == ints.ctypes.data and p.dlpack_calls == 0
    stream = ctypes.c_void_p(1)
    assert own.stream(1, 0, ctypes.byref(stream)) == 0 and stream.value is None
    proto = DLTensor()
    proto.device.device_type, proto.ndim = 1, 1
    proto.dtype.code, proto.dtype.bits, proto.dtype.lanes = 0, 64, 1
    dims = (ctypes.c_int64 * 1)(len(ints))
    proto.shape = dims
    out = ctypes.c_void_p()
    set_error = SET_ERROR(lambda ctx, kind, msg: None)
    assert own.alloc(ctypes.addressof(proto), ctypes.byref(out), None,
                     ctypes.cast(set_error, ctypes.c_void_p)) == 0
    fresh = own.to_buffer(out.value)
    assert fresh.shape == ints.shape and not np.asarray(fresh).any()


def capi():
    """(table address, Buffer_FromObject, ColumnToNdarray, FromDataFrame) of the C API, and
    the DLPack exchange functions (exchange())."""
    table = _get_pointer(dfbuffer._interchange._C_API, b"dfbuffer._interchange._C_API")
    slots = (ctypes.c_void_p * 10).from_address(table)
    return (table, _FROM_OBJECT(slots[5]), _COLUMN(slots[8]), _FRAME(slots[9]), exchange())


def sources():
    n = 257
    ints = np.arange(n, dtype=np.int64)
    floats = np.linspace(0.0, 1.0, n)
    df = pd.DataFrame({"i": ints, "f": floats, "m": pd.array(
        [None if k % 7 == 0 else k for k in range(n)], dtype="Int32")})
    tbl = pa.table({"i": ints, "s": pa.array([str(k) for k in range(n)]),
                    "c": pa.array(["x", "y"] * (n // 2) + ["x"]).dictionary_encode()})
    return ints, floats, df, tbl


def work(ints, floats, df, tbl, api):
    """One round over every entry point; raises AssertionError on a wrong value."""
    n = len(ints)
    b = Buffer.from_object(ints)
    assert b.shape == (n,) and b.ptr == ints.ctypes.data
    assert np.array_equal(dfbuffer.buffer_to_ndarray(b, "i8", offset=1, length=5),
                          ints[1:6])
    assert np.array_equal(np.asarray(b), ints)
    assert b.__array_interface__["data"][0] == ints.ctypes.data
    with memoryview(b) as mv:
        assert mv.nbytes == ints.nbytes and mv[3] == 3
    assert np.array_equal(np.from_dlpack(b), ints)
    assert pa.array(Buffer.from_object(floats)).to_numpy()[-1] == 1.0

    col = dfbuffer.column_to_ndarray(tbl.column("s"), strings="object")
    assert col[10] == "10" and len(col) == n
    for kw in ("copy", "allow_copy"):  # each thread's copy error names its own keyword
        with pytest.raises(dfbuffer.CopyError, match=f" {kw}=False forbids"):
            dfbuffer.column_to_ndarray(tbl.column("s"), **{kw: False})
    cats = dfbuffer.column_to_ndarray(tbl.column("c"), categorical="codes")
    assert cats.codes[:3].tolist() == [0, 1, 0]
    d = dfbuffer.from_dataframe(df)
    assert np.array_equal(d["i"], ints) and d["m"].mask[0] and d["m"][1] == 1
    assert [c.name for c in dfbuffer.schema(tbl).columns] == ["i", "s", "c"]
    ix = dfbuffer.to_interchange(tbl)
    assert np.array_equal(dfbuffer.column_to_ndarray(ix.get_column_by_name("i")), ints)
    m = dfbuffer.to_matrix(df, columns=["i", "f"], threads=2)
    assert m.shape == (n, 2) and np.array_equal(m[:, 0], ints) and m[-1, 1] == 1.0
    ms = list(dfbuffer.iter_matrices(tbl.to_reader(max_chunksize=50), 40, columns=["i"]))
    assert np.array_equal(np.concatenate(ms)[:, 0], ints) and len(ms[0]) == 40
    bs = list(dfbuffer.iter_batches(tbl, 100, columns=["s"]))
    assert bs[2]["s"][0] == "200"
    back = dfbuffer.pandas.from_dataframe(tbl)
    assert back["s"].iloc[5] == "5" and list(back.columns) == ["i", "s", "c"]

    table, from_object, column, frame, ex = api
    exchange_work(ints, ex)
    cb = from_object(table, ints, None)
    assert isinstance(cb, Buffer) and cb.ptr == ints.ctypes.data
    assert np.array_equal(column(table, tbl.column("i"), 0), ints)
    assert np.array_equal(frame(table, df, 0, 1)["f"], floats)


def test_64_threads_every_entry_point():
    srcs = sources()
    api = capi()
    work(*srcs, api)  # once alone: a failure here is not a race
    barrier = threading.Barrier(THREADS)
    errors: list = []

    def run():
        try:
            barrier.wait()
            for _ in range(ROUNDS):
                work(*srcs, api)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_64_threads_share_one_buffer_and_its_exports(collect):
    """One Buffer exported from 64 threads at once (every export kind, each released):
    the owner is released once, after the last export."""
    import weakref

    class Owner:
        def __init__(self):
            self.a = np.arange(64, dtype=np.float32)

        @property
        def __array_interface__(self):
            return self.a.__array_interface__

    owner = Owner()
    gone = weakref.ref(owner)
    b = Buffer.from_object(owner)
    barrier = threading.Barrier(THREADS)
    errors: list = []

    def run(k, b):
        try:
            barrier.wait()
            for _ in range(ROUNDS * 4):
                assert np.asarray(b)[k] == k
                with memoryview(b) as mv:
                    assert mv[k] == k
                assert np.from_dlpack(b)[k] == k
                assert pa.array(b)[k].as_py() == k
                assert dfbuffer.buffer_to_ndarray(b, "f4", offset=k, length=1)[0] == k
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k, b)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    del owner, b, threads
    collect()
    assert gone() is None


@pytest.mark.parametrize("nulls", [0, 1, 2])
def test_capi_table_from_ctypes_matches_python(nulls):
    """The ctypes route to the C API used above gives what the Python functions give."""
    table, from_object, column, frame, _ = capi()
    col = pa.array([1.0, None, 3.0])
    if nulls == 2:
        with pytest.raises(ValueError):
            column(table, col, nulls)
        return
    got = column(table, col, nulls)
    want = dfbuffer.column_to_ndarray(col, nulls=["mask", "fill"][nulls])
    assert np.array_equal(np.ma.getdata(got), np.ma.getdata(want), equal_nan=True)
