"""The pandas frame fast path, probes on the type, protocol fallbacks,
and the GIL released in the pure-C kernels."""

from __future__ import annotations

import sys
import threading
import time
import warnings
import weakref

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from producers import INT_FLOAT_DTYPES, ProtocolOnlyColumn, base_chain

import dfbuffer
from dfbuffer import Buffer, NativeFormat


class StreamOnly:
    """Only ``__arrow_c_stream__``: forces dfbuffer's Arrow path for a frame."""

    def __init__(self, obj):
        self._obj = obj

    def __arrow_c_stream__(self, requested_schema=None):
        return self._obj.__arrow_c_stream__(requested_schema)


# --------------------------------------------------------------------------
# pandas frames: numpy-backed columns without copy or scan


NUMERIC = [
    *INT_FLOAT_DTYPES,
    "?",
    "M8[ns]",
    "m8[us]",
]


@pytest.mark.parametrize("dtype", NUMERIC)
def test_numpy_backed_columns_are_zero_copy_views(dtype):
    values = (np.arange(40) % 7).astype(dtype)
    df = pd.DataFrame({"x": values, "y": np.arange(40.0)})
    out = dfbuffer.from_dataframe(df)
    res = out["x"]
    assert type(res) is np.ndarray and res.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(res, df["x"].to_numpy())
    assert np.shares_memory(res, df["x"].to_numpy())
    chain = base_chain(res)
    assert isinstance(chain[-1], Buffer)
    assert chain[-1].native == NativeFormat.NUMPY
    assert isinstance(chain[-1].owner, np.ndarray)  # the column's row of its block
    # pandas (copy-on-write) hands read-only memory: it stays read-only
    assert not res.flags.writeable
    with pytest.raises(ValueError):
        res[0] = res[1]


def test_bool_columns_zero_copy_even_without_copies():
    df = pd.DataFrame({"b": np.array([True, False, True])})
    res = dfbuffer.from_dataframe(df, allow_copy=False)["b"]
    assert res.dtype == np.bool_ and np.shares_memory(res, df["b"].to_numpy())


def test_float_nan_is_a_value_in_mask_and_fill_mode():
    f = np.array([1.5, np.nan, 3.0, np.nan])
    df = pd.DataFrame({"f": f})
    for nulls in ("mask", "fill"):
        res = dfbuffer.from_dataframe(df, nulls=nulls)["f"]
        # no mask and no scan: the array pandas holds, NaN included
        assert type(res) is np.ndarray
        assert np.shares_memory(res, df["f"].to_numpy())
        np.testing.assert_array_equal(np.isnan(res), [False, True, False, True])
    # "raise" asks for the check, so it reads the values
    with pytest.raises(ValueError, match="2 null values"):
        dfbuffer.from_dataframe(df, nulls="raise")
    assert type(dfbuffer.from_dataframe(df[["f"]].fillna(0.0), nulls="raise")["f"]) is np.ndarray


def test_interchange_use_nan_column_keeps_its_mask():
    # an interchange column that *says* USE_NAN is described that way by the
    # producer: column_to_ndarray still masks it (unchanged)
    df = pd.DataFrame({"f": [1.5, np.nan, 3.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        col = ProtocolOnlyColumn(df.__dataframe__().get_column_by_name("f"))
    res = dfbuffer.column_to_ndarray(col)
    assert isinstance(res, np.ma.MaskedArray)
    np.testing.assert_array_equal(np.ma.getmaskarray(res), [False, True, False])


@pytest.mark.parametrize("dtype", ["M8[s]", "M8[ns]", "m8[ms]"])
def test_datetime_nat_still_masked(dtype):
    t = np.array([1, 0, 3, 0], dtype="i8").view(dtype).copy()
    t[1] = t[3] = np.array("NaT", dtype=dtype)
    df = pd.DataFrame({"t": t})
    res = dfbuffer.from_dataframe(df)["t"]
    assert isinstance(res, np.ma.MaskedArray) and res.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.ma.getmaskarray(res), [False, True, False, True])
    assert np.shares_memory(res.data, df["t"].to_numpy())
    filled = dfbuffer.from_dataframe(df, nulls="fill")["t"]
    assert type(filled) is np.ndarray and np.isnat(filled).tolist() == [False, True, False, True]
    with pytest.raises(ValueError, match="2 null values"):
        dfbuffer.from_dataframe(df, nulls="raise")


def test_one_block_frame_gives_strided_views():
    a = np.arange(20.0).reshape(5, 4)
    df = pd.DataFrame(a, columns=list("abcd"))
    out = dfbuffer.from_dataframe(df)
    for j, c in enumerate("abcd"):
        np.testing.assert_array_equal(out[c], a[:, j])
        assert np.shares_memory(out[c], df[c].to_numpy())


def test_mixed_frame_keeps_order_and_values():
    n = 12
    df = pd.DataFrame(
        {
            "i": np.arange(n, dtype="i4"),
            "s": [None if k % 4 == 0 else f"s{k}" for k in range(n)],
            "f": np.linspace(0, 1, n),
            "I": pd.array([None if k % 3 == 0 else k for k in range(n)], dtype="Int64"),
            "c": pd.Categorical(["ab"[k % 2] for k in range(n)]),
            "p": pd.Series([None if k % 5 == 1 else k for k in range(n)], dtype="int64[pyarrow]"),
            "t": pd.date_range("2020-01-01", periods=n, tz="UTC"),
        }
    )
    out = dfbuffer.from_dataframe(df)
    via_arrow = dfbuffer.from_dataframe(StreamOnly(df))
    assert list(out) == list(df.columns) == list(via_arrow)
    for c in df.columns:
        a, b = out[c], via_arrow[c]
        assert type(a) is type(b), c
        assert a.dtype == b.dtype, c
        np.testing.assert_array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b))
        ok = ~np.ma.getmaskarray(a)
        np.testing.assert_array_equal(np.asarray(a)[ok], np.asarray(b)[ok])
    assert np.shares_memory(out["i"], df["i"].to_numpy())


@pytest.mark.parametrize("start", [1, 3, 8])
def test_sliced_arrow_backed_columns_read_the_right_rows(start):
    # P-26: pandas' __dataframe__ drops the slice offset of Arrow-backed columns;
    # the fast path sends them through pandas' Arrow export instead
    vals = [None if k % 3 == 0 else k for k in range(20)]
    df = pd.DataFrame(
        {
            "p": pd.Series(vals, dtype="int64[pyarrow]"),
            "b": pd.Series(
                [None if v is None else v % 2 == 0 for v in vals], dtype="bool[pyarrow]"
            ),
            "x": np.arange(20.0),
        }
    )
    part = df.iloc[start:]
    out = dfbuffer.from_dataframe(part)
    exp = vals[start:]
    got = [
        None if m else int(v)
        for v, m in zip(np.asarray(out["p"]), np.ma.getmaskarray(out["p"]), strict=True)
    ]
    assert got == exp
    gotb = [
        None if m else bool(v)
        for v, m in zip(np.asarray(out["b"]), np.ma.getmaskarray(out["b"]), strict=True)
    ]
    assert gotb == [None if v is None else v % 2 == 0 for v in exp]
    np.testing.assert_array_equal(out["x"], np.arange(start, 20.0))


def test_other_frames_take_the_arrow_path():
    f = [1.0, np.nan, 3.0]
    # a non-range index: the block reader as for a RangeIndex (the index is
    # not a column)
    df = pd.DataFrame({"f": f}, index=[5, 6, 7])
    out = dfbuffer.from_dataframe(df)
    assert list(out) == list(dfbuffer.from_dataframe(StreamOnly(df)))
    assert type(out["f"]) is np.ndarray  # NaN stays the null, as with a RangeIndex
    assert np.shares_memory(out["f"], df["f"].to_numpy())

    class Sub(pd.DataFrame):
        pass

    assert isinstance(dfbuffer.from_dataframe(Sub({"f": f}))["f"], np.ma.MaskedArray)


def test_names_duplicates_and_empty():
    assert list(dfbuffer.from_dataframe(pd.DataFrame({0: [1.0], "b": ["x"]}))) == ["0", "b"]
    with pytest.raises(ValueError, match="duplicate"):
        dfbuffer.from_dataframe(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(ValueError, match="duplicate"):
        dfbuffer.from_dataframe(pd.DataFrame([[1, 2]], columns=[0, "0"]))
    assert dfbuffer.from_dataframe(pd.DataFrame()) == {}


def test_result_outlives_the_frame():
    import gc
    import weakref

    df = pd.DataFrame({"x": np.arange(5.0)})
    res = dfbuffer.from_dataframe(df)["x"]
    owner = base_chain(res)[-1].owner
    ref = weakref.ref(owner)
    del df, owner
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(res, np.arange(5.0))
    del res
    gc.collect()
    assert ref() is None


# --------------------------------------------------------------------------
# probes on the type


class CountingGetattr:
    """A producer whose class has a __getattr__ hook (as polars' Series does):
    counts every call, answers none."""

    calls = 0

    def __init__(self, arr):
        self._arr = arr

    def __getattr__(self, name):
        type(self).calls += 1
        raise AttributeError(name)

    def __arrow_c_stream__(self, requested_schema=None):
        return self._arr.__arrow_c_stream__(requested_schema)


def test_probes_never_run_getattr():
    p = CountingGetattr(pa.chunked_array([pa.array([1.0, 2.0, 3.0])]))
    CountingGetattr.calls = 0
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(p), [1.0, 2.0, 3.0])
    b = Buffer.from_object(p)
    assert b.native == NativeFormat.ARROW
    np.testing.assert_array_equal(np.asarray(b), [1.0, 2.0, 3.0])
    assert CountingGetattr.calls == 0


def test_protocol_methods_are_called_as_special_methods():
    """A Python function the class defines is called with the object, as CPython calls
    special methods: no __getattribute__ and no bound method for it, and an instance
    attribute of the same name does not shadow it."""
    seen = []

    class Hooked:
        def __init__(self, arr):
            self._arr = arr

        def __getattribute__(self, name):
            seen.append(name)
            return object.__getattribute__(self, name)

        def __arrow_c_stream__(self, requested_schema=None):
            return object.__getattribute__(self, "_arr").__arrow_c_stream__(requested_schema)

    p = Hooked(pa.chunked_array([pa.array([1.0, 2.0])]))
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(p), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(Buffer.from_object(p)), [1.0, 2.0])
    assert "__arrow_c_stream__" not in seen

    class Shadowed:
        def __arrow_c_array__(self, requested_schema=None):
            return pa.array([1, 2]).__arrow_c_array__(requested_schema)

    q = Shadowed()
    q.__arrow_c_array__ = pa.array([7, 8, 9]).__arrow_c_array__
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(q), [1, 2])
    np.testing.assert_array_equal(np.asarray(Buffer.from_object(q)), [1, 2])


def test_instance_attributes_still_count_without_a_hook():
    class Plain:
        pass

    arr = pa.array([4, 5, 6])
    p = Plain()
    p.__arrow_c_array__ = arr.__arrow_c_array__
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(p), [4, 5, 6])
    assert Buffer.from_object(p).native == NativeFormat.ARROW


def test_from_object_polars_series_through_its_stream():
    pl = pytest.importorskip("polars")
    s = pl.Series("a", np.arange(10, dtype="i8"))
    b = Buffer.from_object(s)
    assert b.native == NativeFormat.ARROW and b.readonly
    v = np.asarray(b)
    np.testing.assert_array_equal(v, np.arange(10))
    assert v.__array_interface__["data"][0] == s.to_numpy().__array_interface__["data"][0]
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(s), np.arange(10))


def test_dlpack_before_cuda_array_interface():
    torch = pytest.importorskip("torch")
    t = torch.arange(5.0)
    assert hasattr(type(t), "__cuda_array_interface__")  # a property that raises on CPU
    b = Buffer.from_object(t)
    assert b.native == NativeFormat.DLPACK
    np.testing.assert_array_equal(np.asarray(b), t.numpy())


class ArrowMixin:
    """A heap class defining __arrow_c_array__, placed after a static base in an MRO."""

    def __arrow_c_array__(self, requested_schema=None):
        return pa.array([7, 8, 9]).__arrow_c_array__(requested_schema)


def test_probe_walks_past_static_bases():
    # MRO (IntArrow, int, ArrowMixin, object): int is a static type whose cached
    # answer (absent) skips its dict; the walk goes on to the heap mixin
    class IntArrow(int, ArrowMixin):
        pass

    assert [t.__name__ for t in IntArrow.__mro__] == ["IntArrow", "int", "ArrowMixin", "object"]
    x = IntArrow(3)
    np.testing.assert_array_equal(dfbuffer.column_to_ndarray(x), [7, 8, 9])
    assert Buffer.from_object(x).native == NativeFormat.ARROW

    # a heap subclass of a static type: the base's dict is skipped for the
    # protocols it lacks, its buffer protocol still found
    class Bytes(bytearray):
        pass

    b = Buffer.from_object(Bytes(b"abc"))
    assert b.native == NativeFormat.BUFFER_PROTOCOL
    assert bytes(np.asarray(b)) == b"abc"
    # a name found on a static base (torch.Tensor.is_conj lives on the static
    # TensorBase): still seen, so a conjugated tensor is refused
    torch = pytest.importorskip("torch")
    z = torch.tensor([1 + 2j]).conj()
    with pytest.raises(BufferError, match="conjugate"):
        Buffer.from_object(z)


def test_each_probe_is_read_once_per_call():
    # the class speaks DLPack and the interchange protocol when from_object
    # first looks (__dlpack_device__ is probed with __dlpack__); reading `ptr`
    # (producer code) then removes __dlpack_device__ from the class.  The probe
    # answer stands for the rest of the call: the call fails on the
    # interchange protocol instead of switching protocol mid-call.
    backing = np.arange(4.0)

    class Shifty:
        @property
        def ptr(self):
            if "__dlpack_device__" in vars(type(self)):
                del type(self).__dlpack_device__
            return backing.ctypes.data

        bufsize = backing.nbytes

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):  # probed first, with __dlpack_device__
            raise AssertionError("not reached")

        __array_interface__ = backing.__array_interface__

    with pytest.raises(TypeError, match="interchange-protocol buffer"):
        Buffer.from_object(Shifty())
    # the next call probes afresh: no __dlpack_device__ now, so the
    # __array_interface__ is taken
    b = Buffer.from_object(Shifty())
    assert b.native == NativeFormat.ARRAY_INTERFACE
    np.testing.assert_array_equal(np.asarray(b), backing)


def test_buffers_over_capsules_cost_the_collector_nothing():
    import gc

    # owner a DLPack owner or an Arrow holder over a producer's memory: untracked
    b = Buffer.from_object(pa.array([1.0, 2.0]))
    assert b.native == NativeFormat.DLPACK and not gc.is_tracked(b)
    b = Buffer.from_object(pa.array([1.0, None]))
    assert b.native == NativeFormat.ARROW and not gc.is_tracked(b)
    col = dfbuffer.column_to_ndarray(pa.chunked_array([pa.array([1.0, 2.0])]))
    assert isinstance(col.base, Buffer) and not gc.is_tracked(col.base)

    # owner a Python object: tracked, and a cycle through it is collected
    class Producer:
        def __init__(self):
            self.arr = np.arange(3.0)
            self.__array_interface__ = self.arr.__array_interface__

    p = Producer()
    b = Buffer.from_object(p)
    assert b.owner is p and gc.is_tracked(b)
    p.cycle = b
    ref = weakref.ref(p)
    del p, b
    gc.collect()
    assert ref() is None


def test_stream_chunks_and_end_marker():
    # each chunk moved into its own holder; the end-of-stream marker needs none
    chunks = [pa.array([1.0, 2.0]), pa.array([3.0]), pa.array([], pa.float64())]
    out = dfbuffer.column_to_ndarray(pa.chunked_array(chunks))
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    empty = dfbuffer.column_to_ndarray(pa.chunked_array([], pa.float64()))
    assert empty.dtype == np.float64 and empty.shape == (0,)
    # one chunk: a zero-copy view that keeps the producer's memory alive
    a = pa.array(np.arange(5.0))
    v = dfbuffer.column_to_ndarray(pa.chunked_array([a]))
    assert v.__array_interface__["data"][0] == a.buffers()[1].address
    del a
    import gc

    gc.collect()
    np.testing.assert_array_equal(v, np.arange(5.0))


def test_buffer_to_ndarray_plain_dtypes_are_views_of_the_buffer():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for arr, dt in [
            (np.arange(6.0), (2, 64, "g", "=")),
            (np.arange(6, dtype="i4"), (0, 32, "i", "=")),
            (np.arange(6, dtype="u2"), (1, 16, "S", "=")),
            (np.array([True, False, True]), (20, 8, "b", "=")),
        ]:
            col = pa.table({"a": arr}).__dataframe__().get_column(0)
            buf, dtype = col.get_buffers()["data"]
            assert dtype[:2] == dt[:2]
            out = dfbuffer.buffer_to_ndarray(buf, dtype)
            np.testing.assert_array_equal(out, arr)
            assert out.dtype == arr.dtype and not out.flags.writeable
            assert isinstance(out.base, Buffer) and out.base.owner is buf
            assert out.__array_interface__["data"][0] == buf.ptr
            part = dfbuffer.buffer_to_ndarray(buf, dtype, offset=1, length=2)
            np.testing.assert_array_equal(part, arr[1:3])
            empty = dfbuffer.buffer_to_ndarray(buf, dtype, offset=len(arr))
            assert empty.shape == (0,) and empty.dtype == arr.dtype
            with pytest.raises(ValueError, match="exceed"):
                dfbuffer.buffer_to_ndarray(buf, dtype, offset=1, length=len(arr))
        # a non-native byte order still takes the converters (swapped dtype)
        col = pa.table({"a": np.arange(3.0)}).__dataframe__().get_column(0)
        buf, dtype = col.get_buffers()["data"]
        swapped = dfbuffer.buffer_to_ndarray(buf, (2, 64, "g", ">"))
        assert swapped.dtype == np.dtype(">f8")


# --------------------------------------------------------------------------
# the GIL is released in the pure-C kernels


def progress_of_other_thread(convert):
    """Iterations a second thread makes while convert() runs.  The switch interval
    is huge and the spinner hands the GIL back itself, so the spinner runs only
    while the main thread has released the GIL on its own."""
    counter = [0]
    stop = threading.Event()
    started = threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            counter[0] += 1
            if counter[0] % 256 == 0:
                time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=spin)
        t.start()
        started.wait()
        during = 0
        for _ in range(3):  # a loaded machine may not schedule the spinner at once
            before = counter[0]
            result = convert()
            during += counter[0] - before
            if during:
                break
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(old)
    return during, result


def test_second_thread_runs_during_unpacking_1e8_bits():
    n = 10**8
    packed = np.random.default_rng(0).integers(0, 256, n // 8, dtype=np.uint8)
    # a dfbuffer.Buffer: no producer code (which might release the GIL itself)
    # runs during the conversion, only dfbuffer's unpacking kernel
    buf = Buffer.from_object(packed)
    bits = (dfbuffer.DtypeKind.BOOL, 1, "b", "=")
    during, out = progress_of_other_thread(lambda: dfbuffer.buffer_to_ndarray(buf, bits))
    assert out.dtype == np.bool_ and out.shape == (n,)
    np.testing.assert_array_equal(out[:4096], np.unpackbits(packed[:512], bitorder="little"))
    assert during > 0


def test_second_thread_runs_during_a_nan_scan():
    df = pd.DataFrame({"f": np.arange(2 * 10**7, dtype="f8")})
    df.iloc[-1, 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        col = ProtocolOnlyColumn(df.__dataframe__().get_column(0))
    during, out = progress_of_other_thread(lambda: dfbuffer.column_to_ndarray(col))
    assert isinstance(out, np.ma.MaskedArray) and out.mask.sum() == 1
    assert during > 0
