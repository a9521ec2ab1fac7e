"""The two protocols whose producer hands over a Python array: pyarrow's ``__arrow_array__``
(pandas' extension arrays) and ``__array__`` (the last resort), in Buffer.from_object,
column_to_ndarray and from_dataframe's per-column path (the C API's entry:
tests/api/test_capi.py)."""

from __future__ import annotations

import gc
import sys
import threading
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from producers import DataFrame, to_list

import dfbuffer
from dfbuffer import Buffer, NativeFormat

# ---------------------------------------------------------------- producers


class Shares:
    """``__array__`` hands out its own array (honours copy=False)."""

    def __init__(self, arr):
        self.arr = arr
        self.calls = []

    def __array__(self, dtype=None, copy=None):
        self.calls.append(copy)
        return self.arr


class Copies:
    """``__array__`` must copy (it builds its array), so it refuses copy=False."""

    def __init__(self, values):
        self.values = list(values)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("Copies cannot make an array without a copy")
        return np.array(self.values, dtype=np.float64)


class OldStyle:
    """A producer written before NumPy 2: ``__array__`` takes no copy keyword."""

    def __init__(self, arr):
        self.arr = arr

    def __array__(self, dtype=None):
        return self.arr


class ArrowOnly:
    """Speaks only pyarrow's ``__arrow_array__``."""

    def __init__(self, arr):
        self.arr = arr

    def __arrow_array__(self, type=None):
        return self.arr


# ---------------------------------------------------------------- pandas extension arrays

EXTENSION_ARRAYS = {
    "Int64": (pd.array([1, None, 3, -4], dtype="Int64"), [1, None, 3, -4]),
    "boolean": (pd.array([True, None, False, True], dtype="boolean"), [True, None, False, True]),
    "Float64": (pd.array([1.5, None, -2.0, 0.25], dtype="Float64"), [1.5, None, -2.0, 0.25]),
    "string": (pd.array(["a", None, "ccc", ""], dtype="string"), ["a", None, "ccc", ""]),
    "string[python]": (
        pd.array(["a", None, "ccc", ""], dtype="string[python]"),
        ["a", None, "ccc", ""],
    ),
    "int64[pyarrow]": (pd.array([7, None, 9, 10], dtype="int64[pyarrow]"), [7, None, 9, 10]),
    "string[pyarrow]": (
        pd.array(["x", None, "yz", "w"], dtype="string[pyarrow]"),
        ["x", None, "yz", "w"],
    ),
    "double[pyarrow]": (
        pd.array([0.5, None, 1.5, 2.5], dtype="double[pyarrow]"),
        [0.5, None, 1.5, 2.5],
    ),
}


@pytest.mark.parametrize("name", sorted(EXTENSION_ARRAYS))
def test_pandas_extension_arrays_through_arrow_array(name):
    arr, values = EXTENSION_ARRAYS[name]
    want = values
    res = dfbuffer.column_to_ndarray(arr)
    assert isinstance(res, np.ma.MaskedArray)  # each has a null
    assert to_list(res) == want
    # nulls="fill" and "raise" as for any Arrow input
    with pytest.raises(ValueError):
        dfbuffer.column_to_ndarray(arr, nulls="raise")
    filled = dfbuffer.column_to_ndarray(arr, nulls="fill")
    assert not isinstance(filled, np.ma.MaskedArray)


@pytest.mark.parametrize("name", ["Int64", "Float64", "int64[pyarrow]", "double[pyarrow]"])
def test_from_object_wraps_the_arrow_values_buffer(name):
    arr, values = EXTENSION_ARRAYS[name]
    want = values
    b = Buffer.from_object(arr)
    assert b.native == NativeFormat.ARROW and b.readonly
    got = np.asarray(b).tolist()
    assert [g for g, w in zip(got, want, strict=True) if w is not None] == [
        w for w in want if w is not None
    ]


def test_pyarrow_backed_array_is_read_without_a_copy():
    arr = pd.array(np.arange(1000, dtype=np.int64), dtype="int64[pyarrow]")
    chunk = arr.__arrow_array__()
    chunk = chunk.chunk(0) if isinstance(chunk, pa.ChunkedArray) else chunk
    b = Buffer.from_object(arr)
    assert b.ptr == chunk.buffers()[1].address
    col = dfbuffer.column_to_ndarray(arr)
    assert col.__array_interface__["data"][0] == chunk.buffers()[1].address


@pytest.mark.skipif(not hasattr(pd.Series, "__arrow_c_stream__"),
                    reason="a pandas Series speaks Arrow from pandas 3 on")
def test_pyarrow_backed_series_and_frames():
    s = pd.Series([1, None, 3], dtype="int64[pyarrow]")
    assert to_list(dfbuffer.column_to_ndarray(s)) == [1, None, 3]
    assert np.asarray(Buffer.from_object(s))[[0, 2]].tolist() == [1, 3]
    df = pd.DataFrame({"a": s, "b": pd.array(["u", None, "w"], dtype="string[pyarrow]")})
    out = dfbuffer.from_dataframe(df)
    assert to_list(out["a"]) == [1, None, 3]
    assert to_list(out["b"]) == ["u", None, "w"]


def test_string_arrays_need_the_converters_not_a_buffer():
    arr, _ = EXTENSION_ARRAYS["string"]
    with pytest.raises(NotImplementedError, match="fixed-width"):
        Buffer.from_object(arr)


# ---------------------------------------------------------------- __array__


def test_array_method_that_shares_memory():
    base = np.arange(5.0)
    p = Shares(base)
    b = Buffer.from_object(p, allow_copy=False)
    assert p.calls == [False]
    assert b.owner is base and b.native == NativeFormat.NUMPY
    assert b.ptr == base.ctypes.data and not b.readonly
    np.asarray(b)[0] = 42.0  # writable: the producer promised its own memory
    assert base[0] == 42.0
    b2 = Buffer.from_object(p)  # copy=None: it may have copied, so read-only
    assert b2.readonly and b2.ptr == base.ctypes.data


def test_array_method_that_copies():
    p = Copies([1.0, 2.0, 3.0])
    with pytest.raises(BufferError, match="allow_copy=False") as e:
        Buffer.from_object(p, allow_copy=False)
    assert isinstance(e.value.__cause__, ValueError)
    b = Buffer.from_object(p)
    assert b.readonly
    assert np.asarray(b).tolist() == [1.0, 2.0, 3.0]


def test_array_method_without_copy_keyword():
    arr = np.arange(3)
    with pytest.raises(BufferError, match="copy=False"):
        Buffer.from_object(OldStyle(arr), allow_copy=False)
    b = Buffer.from_object(OldStyle(arr))
    assert b.owner is arr and b.readonly


def test_a_read_only_array_stays_read_only():
    arr = np.arange(3)
    arr.flags.writeable = False
    assert Buffer.from_object(Shares(arr), allow_copy=False).readonly


def test_array_method_with_dtype_override():
    b = Buffer.from_object(Shares(np.arange(4, dtype=np.int64)), dtype="u8")
    assert b.dtype == np.dtype("u8")


def test_column_to_ndarray_and_from_dataframe_read_array_method():
    base = np.arange(4, dtype=np.int32)
    res = dfbuffer.column_to_ndarray(Shares(base))
    assert res.tolist() == [0, 1, 2, 3]
    assert np.shares_memory(res, base) and not res.flags.writeable
    frame = DataFrame({"s": Shares(base), "c": Copies([1.5]), "a": ArrowOnly(pa.array([1, None]))})
    with pytest.raises(BufferError, match="allow_copy=False"):
        dfbuffer.from_dataframe(frame, allow_copy=False)
    frame = DataFrame({"s": Shares(base), "a": ArrowOnly(pa.array([1, None]))})
    out = dfbuffer.from_dataframe(frame, allow_copy=False)
    assert np.shares_memory(out["s"], base)
    assert to_list(out["a"]) == [1, None]
    out = dfbuffer.from_dataframe(DataFrame({"c": Copies([1.5, 2.5])}))
    assert out["c"].tolist() == [1.5, 2.5]


# ---------------------------------------------------------------- order and pyarrow


def test_arrow_array_comes_before_array():
    class Both(ArrowOnly):
        def __array__(self, dtype=None, copy=None):
            raise AssertionError("__array__ must not be asked")

    b = Buffer.from_object(Both(pa.array([1.0, 2.0])))
    assert b.native == NativeFormat.ARROW


def test_arrow_array_needs_pyarrow(monkeypatch):
    class Both(ArrowOnly):
        def __array__(self, dtype=None, copy=None):
            return np.arange(2.0)

    obj = Both(pa.array([5.0]))
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    assert Buffer.from_object(obj).native == NativeFormat.NUMPY
    with pytest.raises(TypeError, match="any protocol"):
        Buffer.from_object(ArrowOnly(None))
    with pytest.raises(TypeError, match="__arrow_array__ or __array__"):
        dfbuffer.column_to_ndarray(ArrowOnly(None))


# ---------------------------------------------------------------- lifetimes and cycles


def test_the_returned_ndarray_lives_as_long_as_the_buffer():
    p = Shares(np.arange(3.0))
    b = Buffer.from_object(p)
    wa = weakref.ref(p.arr)
    del p
    gc.collect()
    assert wa() is not None and np.asarray(b).tolist() == [0.0, 1.0, 2.0]
    del b
    gc.collect()
    assert wa() is None


def test_extension_array_memory_outlives_the_producer():
    arr = pd.array(np.arange(100, dtype=np.int64), dtype="int64[pyarrow]")
    wa = weakref.ref(arr)
    b = Buffer.from_object(arr)
    col = dfbuffer.column_to_ndarray(arr)
    del arr
    gc.collect()
    assert wa() is None  # nothing holds the pandas array
    assert np.asarray(b).tolist() == list(range(100)) == col.tolist()
    wb = weakref.ref(b)
    del b, col
    gc.collect()
    assert wb() is None


class Keeper(np.ndarray):
    """An ndarray that can hold attributes (to close a cycle through the Buffer)."""


def test_reference_cycle_through_the_returned_array_is_collected():
    arr = np.arange(4.0).view(Keeper)
    b = Buffer.from_object(Shares(arr))
    arr.keep = b  # Buffer -> owner arr -> Buffer
    wb, wa = weakref.ref(b), weakref.ref(arr)
    del b, arr
    gc.collect()
    assert wb() is None and wa() is None


def test_reference_cycle_through_an_arrow_array_producer_is_collected():
    class Cyclic(ArrowOnly):
        pass

    p = Cyclic(pa.array([1.0, 2.0]))
    p.me = p
    p.buf = Buffer.from_object(p)
    p.col = dfbuffer.column_to_ndarray(p)
    wp = weakref.ref(p)
    del p
    gc.collect()
    assert wp() is None


# ---------------------------------------------------------------- hostile producers


@pytest.mark.parametrize("bad", [[1, 2], None, np.float64(1.0), "x"])
def test_array_method_returning_the_wrong_type(bad):
    with pytest.raises(TypeError, match="not a NumPy array"):
        Buffer.from_object(Shares(bad))
    with pytest.raises(TypeError, match="not a NumPy array"):
        dfbuffer.column_to_ndarray(Shares(bad))


@pytest.mark.parametrize("bad", [np.arange(3), [1, 2], pa.array([1]).__arrow_c_array__()])
def test_arrow_array_returning_the_wrong_type(bad):
    with pytest.raises(TypeError, match="not a pyarrow Array"):
        Buffer.from_object(ArrowOnly(bad))
    with pytest.raises(TypeError, match="not a pyarrow Array"):
        dfbuffer.column_to_ndarray(ArrowOnly(bad))


class Boom(Exception):
    pass


def test_producers_that_raise():
    class RaisesArray:
        def __array__(self, dtype=None, copy=None):
            raise Boom("array")

    class RaisesArrow:
        def __arrow_array__(self, type=None):
            raise Boom("arrow")

    for obj in (RaisesArray(), RaisesArrow()):
        with pytest.raises(Boom):
            Buffer.from_object(obj)
        with pytest.raises(Boom):
            Buffer.from_object(obj, allow_copy=False)
        with pytest.raises(Boom):
            dfbuffer.column_to_ndarray(obj)


def test_producers_that_mutate_their_class_during_the_call():
    class Vanishing:
        def __array__(self, dtype=None, copy=None):
            del type(self).__array__
            type(self).__arrow_array__ = lambda self, type=None: pa.array([9])
            self.__dict__.clear()
            return np.arange(3)

    obj = Vanishing()
    assert np.asarray(Buffer.from_object(obj)).tolist() == [0, 1, 2]
    # the next call sees the class as it is now
    assert Buffer.from_object(obj).native == NativeFormat.ARROW

    class SelfMutating(ArrowOnly):
        def __arrow_array__(self, type=None):
            out, self.arr = self.arr, None
            del self.__class__.__arrow_array__
            return out

    obj = SelfMutating(pa.array([1.5, None]))
    assert to_list(dfbuffer.column_to_ndarray(obj)) == [1.5, None]
    with pytest.raises(TypeError):
        dfbuffer.column_to_ndarray(obj)


def test_racing_writer_swaps_the_producers_array():
    a, c = np.zeros(64), np.ones(64)
    p = Shares(a)
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            p.arr = c if p.arr is a else a

    t = threading.Thread(target=writer)
    t.start()
    try:
        for _ in range(2000):
            b = Buffer.from_object(p, allow_copy=False)
            got = set(np.asarray(b).tolist())
            assert got in ({0.0}, {1.0}) and (b.owner is a or b.owner is c)
    finally:
        stop.set()
        t.join()
