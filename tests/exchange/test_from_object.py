"""Buffer.from_object: every import path with real producers, lifetimes, dtype override."""

from __future__ import annotations

import array
import mmap
import pickle
import warnings
import weakref

import numpy as np
import pytest
from _dlpack_ctypes import READ_ONLY, Producer, Tensor
from hypothesis import given, settings
from hypothesis import strategies as st
from producers import NoDlpackBuffer, addr

import dfbuffer
from dfbuffer import Buffer, DeviceType, NativeFormat

from_object = Buffer.from_object


def check_view(buf: Buffer, expected: np.ndarray) -> np.ndarray:
    """np.asarray(buf) equals `expected`, has its dtype and shape, and views the
    same memory (element-0 address)."""
    v = np.asarray(buf)
    assert v.dtype == expected.dtype
    assert v.shape == expected.shape
    np.testing.assert_array_equal(v, expected)
    if expected.size:
        assert addr(v) == addr(expected)
    return v


# ---------------------------------------------------------------------------
# 1. dfbuffer.Buffer


def test_buffer_is_returned_itself():
    b = from_object(np.arange(4))
    assert from_object(b) is b
    assert from_object(b, dtype=None) is b


def test_buffer_reinterpreted_same_itemsize():
    a = np.arange(6, dtype="i8").reshape(2, 3)[:, ::-1]
    b = from_object(a)
    c = from_object(b, dtype="f8")
    assert c is not b
    assert c.owner is b
    assert c.dtype == np.dtype("f8")
    assert (c.ptr, c.bufsize, c.shape, c.strides) == (b.ptr, b.bufsize, b.shape, b.strides)
    assert c.native == NativeFormat.NUMPY
    check_view(c, a.view("f8"))


def test_buffer_reinterpreted_other_itemsize():
    a = np.arange(4, dtype="u8")
    b = from_object(a)
    c = from_object(b, dtype="u4")
    assert c.shape == (8,)
    check_view(c, a.view("u4"))
    d = from_object(b, dtype=(dfbuffer.DtypeKind.UINT, 8, "C", "="))
    assert d.shape == (32,) and d.dtype == np.dtype("u1")


# ---------------------------------------------------------------------------
# 2. ndarray


@pytest.mark.parametrize(
    "arr",
    [
        np.arange(10, dtype="i4"),
        np.arange(12.0).reshape(3, 4)[::2, ::-1],
        np.arange(6, dtype=">u2").reshape(2, 3).T,
        np.zeros((0, 3), dtype="c16"),
        np.array(True),
        np.broadcast_to(np.arange(3.0), (4, 3)),
        np.arange(5).astype("M8[s]"),
        np.ma.masked_array(np.arange(3.0)),
    ],
    ids=[
        "1d",
        "strided-negative",
        "bigendian-T",
        "zero-size",
        "0d",
        "zero-stride",
        "datetime",
        "ma",
    ],
)
def test_ndarray(arr):
    b = from_object(arr)
    assert b.native == NativeFormat.NUMPY
    assert b.owner is arr
    assert b.device == (DeviceType.CPU, 0)
    assert b.readonly == (not arr.flags.writeable)
    assert b.shape == arr.shape and b.strides == arr.strides
    check_view(b, np.asarray(arr))


def test_ndarray_readonly_flag():
    a = np.arange(3)
    a.flags.writeable = False
    b = from_object(a)
    assert b.readonly
    assert not np.asarray(b).flags.writeable


@pytest.mark.parametrize("dt", ["O", "U3", "S3", [("a", "i4"), ("b", "f8")], "V8"])
def test_ndarray_unsupported_dtypes(dt):
    with pytest.raises(TypeError):
        from_object(np.zeros(2, dtype=dt))
    # a dtype override must not launder them (object pointers as integers)
    with pytest.raises(TypeError):
        from_object(np.zeros(2, dtype=dt), dtype="u1")


def assert_source_lives_with_last_view(collect, make, check=lambda b: None):
    """Imports a new float64 array through make(array) -> Buffer: the array
    stays alive through the Buffer, then through an ndarray view of it after
    the Buffer is gone, and dies with that last view.  check(buffer) runs
    once the caller's reference to the array is gone."""
    a = np.arange(6.0)
    r = weakref.ref(a)
    b = make(a)
    del a
    collect()
    assert r() is not None
    check(b)
    v = np.asarray(b)
    del b
    collect()
    assert r() is not None
    assert v[5] == 5.0
    del v
    collect()
    assert r() is None


def test_ndarray_lifetime(collect):
    assert_source_lives_with_last_view(collect, from_object)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(0, 5), min_size=0, max_size=3),
    steps=st.lists(st.sampled_from([1, 2, -1, -2]), min_size=3, max_size=3),
    zero_stride=st.booleans(),
    dtype=st.sampled_from(
        ["?", "i1", "u2", "<i4", ">i8", "f2", "f4", ">f8", "c8", "c16", "m8[ns]"]
    ),
)
def test_property_ndarray_roundtrip(shape, steps, zero_stride, dtype):
    nd = len(shape)
    base = np.arange(int(np.prod([s * 2 for s in shape])) if shape else 1).astype(dtype)
    base = base.reshape([s * 2 for s in shape]) if shape else base.reshape(())
    idx = tuple(slice(None, None, steps[i]) for i in range(nd))
    arr = base[idx + (Ellipsis,)][tuple(slice(0, s) for s in shape) + (Ellipsis,)]
    if zero_stride and nd:
        arr = np.broadcast_to(arr[..., :1], arr.shape)
    b = from_object(arr)
    v = np.asarray(b)
    np.testing.assert_array_equal(v, arr)
    assert v.dtype == arr.dtype
    if arr.size:
        assert addr(v) == addr(arr)
    # every element lies in [ptr, ptr + bufsize)
    if arr.size:
        lo = addr(arr) + sum(
            (n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True) if s < 0
        )
        assert b.ptr == lo
        assert b.ptr + b.bufsize >= lo + b.itemsize


# ---------------------------------------------------------------------------
# 5. buffer protocol


@pytest.mark.parametrize(
    "obj, expected, readonly",
    [
        (b"abcd", np.frombuffer(b"abcd", "u1"), True),
        (bytearray(b"xyz"), None, False),
        (array.array("d", [1.5, 2.5]), None, False),
        (array.array("b", [-1, 2]), None, False),
        (array.array("H", [1, 65535]), None, False),
        (array.array("l", [-(2**31), 7]), None, False),
        (array.array("Q", [2**64 - 1]), None, False),
        (array.array("f", [0.5]), None, False),
    ],
    ids=["bytes", "bytearray", "d", "b", "H", "l", "Q", "f"],
)
def test_buffer_protocol_builtins(obj, expected, readonly):
    exp = np.frombuffer(obj, dtype=memoryview(obj).format) if expected is None else expected
    b = from_object(obj)
    assert b.native == NativeFormat.BUFFER_PROTOCOL
    assert b.readonly is readonly
    assert b.dtype == exp.dtype
    check_view(b, exp)


@pytest.mark.parametrize(
    "dt", ["?", "i1", "u1", "<i2", ">i2", "<u4", ">i8", "<f2", ">f4", "<f8", ">c8", "<c16"]
)
def test_buffer_protocol_formats(dt):
    a = np.arange(6).astype(dt).reshape(2, 3)[:, ::2]
    m = memoryview(a)  # format like '<i' / '>f' / 'Zd'
    b = from_object(m)
    assert b.native == NativeFormat.BUFFER_PROTOCOL
    assert b.dtype == np.dtype(dt)
    assert b.strides == a.strides
    check_view(b, a)


def test_buffer_protocol_memoryview_cast_and_readonly():
    m = memoryview(b"abcdef").cast("B", (2, 3))
    b = from_object(m)
    assert b.shape == (2, 3) and b.readonly
    check_view(b, np.frombuffer(b"abcdef", "u1").reshape(2, 3))


def test_buffer_protocol_mmap_and_picklebuffer():
    mm = mmap.mmap(-1, 16)
    mm[:4] = b"\x01\x02\x03\x04"
    b = from_object(mm)
    assert b.shape == (16,) and not b.readonly
    v = np.asarray(b)
    assert list(v[:4]) == [1, 2, 3, 4]
    v[5] = 9
    assert mm[5] == 9
    del v, b
    mm.close()  # the export is released: closing works
    ba = bytearray(b"hello")
    pb = pickle.PickleBuffer(ba)
    b = from_object(pb)
    assert bytes(np.asarray(b)) == b"hello" and not b.readonly


def test_buffer_protocol_export_pins_and_releases(collect):
    arr = array.array("i", [1, 2, 3])
    r = weakref.ref(arr)
    b = from_object(arr)
    with pytest.raises(BufferError):
        arr.append(4)  # exported: cannot resize under the Buffer
    v = np.asarray(b)
    del b
    collect()
    with pytest.raises(BufferError):
        arr.append(4)  # the view still holds the Buffer
    del v
    collect()
    arr.append(4)  # export released exactly when the last user died
    b = from_object(arr)
    del arr
    collect()
    assert r() is not None
    del b
    collect()
    assert r() is None


def test_buffer_protocol_unsupported_format():
    a = np.zeros(2, dtype=[("a", "i4"), ("b", "f8")])
    with pytest.raises(TypeError, match="format"):
        from_object(memoryview(a))
    with pytest.raises(TypeError, match="format"):
        from_object(memoryview(b"ab").cast("c"))


# ---------------------------------------------------------------------------
# 6. interchange-protocol buffers


def _pandas_buffer(values, dtype=None):
    pd = pytest.importorskip("pandas")
    with _nowarn():
        df = pd.DataFrame({"a": np.asarray(values, dtype=dtype)})
        col = df.__dataframe__().get_column(0)
        return col.get_buffers()["data"][0], df


class _nowarn:
    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def test_interchange_pandas_buffer():
    buf, df = _pandas_buffer([1, 2, 3], "i8")
    b = from_object(buf)
    assert b.native == NativeFormat.INTERCHANGE
    assert b.owner is buf
    assert b.dtype == np.dtype("u1") and b.shape == (24,)
    assert b.ptr == buf.ptr and b.bufsize == buf.bufsize
    assert b.readonly
    assert b.device == (DeviceType.CPU, 0)  # pandas reports device id None
    t = from_object(buf, dtype="i8")
    v = check_view(t, df["a"].to_numpy())
    assert np.shares_memory(v, df["a"].to_numpy())
    t2 = from_object(buf, dtype=(dfbuffer.DtypeKind.INT, 64, "l", "="))
    assert t2.dtype == np.dtype("i8") and t2.shape == (3,)
    with pytest.raises(ValueError, match="multiple"):
        from_object(_pandas_buffer([1, 2, 3], "i1")[0], dtype="i2")


def test_interchange_pyarrow_buffer():
    pa = pytest.importorskip("pyarrow")
    with _nowarn():
        tbl = pa.table({"a": pa.array([1.5, 2.5, 3.5])})
        buf = tbl.__dataframe__().get_column(0).get_buffers()["data"][0]
    b = from_object(buf, dtype="f8")
    assert b.native == NativeFormat.INTERCHANGE and b.owner is buf
    assert b.ptr == buf.ptr
    v = np.asarray(b)
    np.testing.assert_array_equal(v, [1.5, 2.5, 3.5])
    assert addr(v) == buf.ptr
    assert not v.flags.writeable  # Arrow memory is immutable


def test_interchange_lifetime(collect):
    buf, df = _pandas_buffer([1.0, 2.0], "f8")
    r = weakref.ref(buf)
    v = np.asarray(from_object(buf, dtype="f8"))
    del buf
    collect()
    assert r() is not None
    del v
    collect()
    assert r() is None


def HandBuffer(arr, device=(1, None)):  # noqa: N802 - reads as the class it was
    """An interchange-protocol Buffer over a numpy array (ints or enum device) whose
    __dlpack__ raises NotImplementedError."""
    return NoDlpackBuffer(arr, device=device)


def test_interchange_hand_buffer_device_and_dtype():
    a = np.arange(4, dtype="i2")
    b = from_object(HandBuffer(a, (DeviceType.CPU, 0)), dtype="i2")
    check_view(b, a)
    b = from_object(HandBuffer(a, (2, 1)))  # CUDA device: never dereferenced
    assert b.device == (DeviceType.CUDA, 1)
    with pytest.raises(ValueError):
        from_object(HandBuffer(a, (99, 0)))
    with pytest.raises(TypeError):
        from_object(HandBuffer(a, "cpu"))


# ---------------------------------------------------------------------------
# 8. DLPack producers


class DL:
    """Exposes only __dlpack__ / __dlpack_device__ of a numpy array (so the
    ndarray fast path is not taken)."""

    def __init__(self, arr):
        self.arr = arr
        self.kwargs = None

    def __dlpack__(self, **kwargs):
        self.kwargs = kwargs
        return self.arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.arr.__dlpack_device__()


class LegacyDL(DL):
    def __dlpack__(self):  # a producer older than DLPack 1.0: no keywords
        return self.arr.__dlpack__()


@pytest.mark.parametrize("wrapper", [DL, LegacyDL])
@pytest.mark.parametrize(
    "arr",
    [
        np.arange(12.0).reshape(3, 4)[::-1, ::2],
        np.arange(5, dtype="u1"),
        np.zeros((2, 0), dtype="i4"),
        np.array([True, False]),
        np.arange(4).astype("c8"),
        np.arange(3).astype("f2"),
        np.array(7, dtype="i2"),
    ],
)
def test_dlpack_numpy(wrapper, arr):
    w = wrapper(arr)
    b = from_object(w)
    assert b.native == NativeFormat.DLPACK
    assert b.device == (DeviceType.CPU, 0)
    assert not b.readonly
    assert b.dtype == arr.dtype
    check_view(b, arr)
    if wrapper is DL:
        assert w.kwargs == {"max_version": (1, 3)}  # no stream on CPU


def test_dlpack_readonly_versioned():
    a = np.arange(3)
    a.flags.writeable = False
    b = from_object(DL(a))
    assert b.readonly
    with pytest.raises(BufferError):  # numpy refuses a legacy read-only export
        from_object(LegacyDL(a))


def test_dlpack_lifetime_deleter_runs_with_last_user(collect):
    # the managed tensor holds the array; numpy's deleter runs when the last
    # view dies
    def owner_is_dlpack_owner(b):
        assert type(b.owner).__name__ == "dlpack_owner"

    assert_source_lives_with_last_view(collect, lambda a: from_object(DL(a)),
                                       owner_is_dlpack_owner)


def test_dlpack_capsule_consumed_once():
    a = np.arange(3)
    cap = a.__dlpack__(max_version=(1, 0))
    p = Producer(cap)
    b = from_object(p)
    check_view(b, a)
    with pytest.raises(BufferError, match="used_dltensor_versioned"):
        from_object(p)
    with pytest.raises(ValueError):  # numpy refuses the capsule we consumed
        np.from_dlpack(p)
    legacy = a.__dlpack__()
    b2 = from_object(legacy)  # a bare capsule works too
    check_view(b2, a)
    with pytest.raises(BufferError, match="used_dltensor"):
        from_object(legacy)


def test_dlpack_pyarrow_array():
    pa = pytest.importorskip("pyarrow")
    arr = pa.array([1, 2, 3], type=pa.int32())
    b = from_object(arr)
    assert b.native == NativeFormat.DLPACK
    # pyarrow >= 26 exports a versioned capsule flagged read-only; older pyarrow only the
    # legacy capsule, which cannot say so (docs/protocol-facts.md, "DLPack").
    assert b.readonly == (int(pa.__version__.split(".")[0]) >= 26)
    v = np.asarray(b)
    np.testing.assert_array_equal(v, [1, 2, 3])
    assert addr(v) == arr.buffers()[1].address
    with warnings.catch_warnings():
        # pyarrow refuses DLPack for an array with nulls (ArrowTypeError, a TypeError
        # subclass): no retry through the deprecated legacy export, but the next
        # protocol the array speaks, its Arrow values buffer
        warnings.simplefilter("error")
        nulls = pa.array([1, None, 3])
        b = from_object(nulls)
    assert b.native == NativeFormat.ARROW and b.readonly
    v = np.asarray(b)
    assert v.dtype == np.int64 and v.shape == (3,)
    assert v[0] == 1 and v[2] == 3  # the null slot holds whatever Arrow left there
    assert addr(v) == nulls.buffers()[1].address
    with pytest.raises(TypeError, match="null"):
        # refused by DLPack and by the Arrow fallback (strings are not fixed-width):
        # the first refusal, pyarrow's own, is what the caller sees
        from_object(pa.array(["a", None]))


def test_dlpack_torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)[:, ::2]
    b = from_object(t)
    assert b.native == NativeFormat.DLPACK
    np.testing.assert_array_equal(np.asarray(b), t.numpy())
    assert addr(np.asarray(b)) == t.data_ptr()


# hand-made tensors --------------------------------------------------------


@pytest.mark.parametrize("legacy", [False, True])
def test_dlpack_deleter_called_exactly_once(legacy, collect):
    a = np.arange(4, dtype="i4")
    t = Tensor(a, legacy=legacy)
    b = from_object(t.capsule())
    v = np.asarray(b)
    del b
    collect()
    assert t.deleted == 0
    np.testing.assert_array_equal(v, a)
    del v
    collect()
    assert t.deleted == 1
    collect()
    assert t.deleted == 1


def test_dlpack_null_deleter(collect):
    a = np.arange(3.0)
    t = Tensor(a, deleter=False)
    b = from_object(t.capsule())
    check_view(b, a)
    del b
    collect()  # no crash with a NULL deleter


def test_dlpack_byte_offset_and_null_strides():
    a = np.arange(10, dtype="i8")
    t = Tensor(a, shape=(2, 3), strides=None, byte_offset=16)
    b = from_object(t.capsule())
    check_view(b, a[2:8].reshape(2, 3))
    assert b.strides == (24, 8)


def test_dlpack_negative_and_zero_strides():
    a = np.arange(12, dtype="f4")
    t = Tensor(a, shape=(3, 2), strides=(-4, 0), byte_offset=8 * 4)
    b = from_object(t.capsule())
    expected = np.lib.stride_tricks.as_strided(a[8:], shape=(3, 2), strides=(-16, 0))
    check_view(b, expected)
    assert b.ptr == addr(a) and b.bufsize == 36  # elements a[8], a[4], a[0]


def test_dlpack_read_only_flag():
    a = np.arange(3)
    b = from_object(Tensor(a, flags=READ_ONLY).capsule())
    assert b.readonly
    keep = Tensor(a)
    assert not from_object(keep.capsule()).readonly


def test_dlpack_device_memory_not_touched():
    t = Tensor(code=2, bits=32, shape=(4,), data=0x10000, device=(2, 1))
    b = from_object(t.capsule())
    assert b.device == (DeviceType.CUDA, 1)
    assert b.ptr == 0x10000 and b.bufsize == 16
    with pytest.raises((TypeError, BufferError)):
        np.asarray(b)


def test_dlpack_major_version_mismatch_calls_deleter(collect):
    t = Tensor(np.arange(2), version=(2, 0))
    cap = t.capsule()
    with pytest.raises(BufferError, match="version 2.0"):
        from_object(cap)
    assert t.deleted == 1  # the ABI says: call the deleter, touch nothing else
    with pytest.raises(BufferError):
        from_object(cap)
    assert t.deleted == 1


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"code": 2, "bits": 32, "lanes": 4}, BufferError, "lanes=4"),
        ({"code": 4, "bits": 16}, BufferError, "bfloat16"),
        ({"code": 3, "bits": 64}, BufferError, "opaque"),
        ({"code": 10, "bits": 8}, BufferError, "code=10"),
        ({"code": 0, "bits": 24}, BufferError, "int24"),
        ({"code": 6, "bits": 1}, BufferError, "bool1"),
        ({"code": 5, "bits": 32}, BufferError, "complex32"),
    ],
)
def test_dlpack_unsupported_dtypes(kwargs, exc, match):
    t = Tensor(shape=(2,), data=0x1000, **kwargs)
    cap = t.capsule()
    with pytest.raises(exc, match=match):
        from_object(cap)
    assert t.deleted == 0  # refused before taking ownership


# ---------------------------------------------------------------------------
# 4. __cuda_array_interface__


class CAI:
    def __init__(self, **kw):
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": (4, 2),
            "typestr": "<f4",
            "data": (0x20000, False),
            "strides": None,
            "stream": 1,
        } | kw


def test_cuda_array_interface():
    p = CAI()
    b = from_object(p)
    assert b.native == NativeFormat.CUDA_ARRAY_INTERFACE
    assert b.device == (DeviceType.CUDA, 0)
    assert b.owner is p
    assert b.ptr == 0x20000 and b.bufsize == 32 and b.strides == (8, 4)
    assert not b.readonly
    with pytest.raises((TypeError, BufferError)):
        np.asarray(b)  # never read on the host
    b = from_object(CAI(data=(0x20000, True), strides=(4, 16), descr=[("", "<f4")]))
    assert b.readonly and b.strides == (4, 16)
    assert from_object(CAI(shape=(0,), data=(0, False))).bufsize == 0


def test_cuda_array_interface_device_id_from_dlpack_device():
    class P(CAI):
        def __dlpack_device__(self):
            return (2, 3)

    assert from_object(P()).device == (DeviceType.CUDA, 3)


def test_cuda_array_interface_wins_over_host_protocols():
    class Both(CAI):
        __array_interface__ = property(lambda self: pytest.fail("host protocol used"))

    assert from_object(Both()).device == (DeviceType.CUDA, 0)


# ---------------------------------------------------------------------------
# 7. __array_interface__


class AI:
    def __init__(self, iface, keep=None):
        self.__array_interface__ = iface
        self.keep = keep


def test_array_interface_pointer():
    a = np.arange(12, dtype="<i2").reshape(3, 4)[::-1, 1::2]
    p = AI(a.__array_interface__, a)
    b = from_object(p)
    assert b.native == NativeFormat.ARRAY_INTERFACE and b.owner is p
    check_view(b, a)
    a2 = np.arange(3)
    a2.flags.writeable = False
    assert from_object(AI(a2.__array_interface__, a2)).readonly


def test_array_interface_buffer_object_with_offset(collect):
    ba = bytearray(range(16))
    p = AI({"version": 3, "shape": (3,), "typestr": "|u1", "data": ba, "offset": 5})
    b = from_object(p)
    assert b.native == NativeFormat.ARRAY_INTERFACE
    v = np.asarray(b)
    assert list(v) == [5, 6, 7]
    v[0] = 99
    assert ba[5] == 99
    with pytest.raises(BufferError):
        ba.append(1)  # the export is held
    del b, v, p
    collect()
    ba.append(1)
    with pytest.raises(ValueError, match="outside"):
        from_object(AI({"version": 3, "shape": (3,), "typestr": "|u1", "data": ba, "offset": 15}))


def test_array_interface_dtype_via_typestr_and_descr():
    a = np.arange(4, dtype=">f8")
    b = from_object(AI(a.__array_interface__, a))
    assert b.dtype == np.dtype(">f8")
    check_view(b, a)
    s = np.zeros(2, dtype=[("x", "i4"), ("y", "i4")])
    with pytest.raises(TypeError):
        from_object(AI(s.__array_interface__, s))


# ---------------------------------------------------------------------------
# 8. dtype override and 9. nothing known


def test_dtype_override_paths():
    a = np.arange(4, dtype="i4")
    assert from_object(a, dtype="f4").dtype == np.dtype("f4")
    c = from_object(a, dtype="i8")
    assert c.shape == (2,)
    check_view(c, a.view("i8"))
    assert from_object(bytearray(8), dtype="f8").shape == (1,)
    assert from_object(DL(a), dtype="u1").shape == (16,)
    with pytest.raises(ValueError, match="contiguous"):
        from_object(a[::2], dtype="i8")
    with pytest.raises(ValueError, match="contiguous"):
        from_object(a.reshape(2, 2), dtype="i8")
    with pytest.raises(ValueError, match="whole number"):
        from_object(np.arange(3, dtype="i4"), dtype="i8")
    with pytest.raises(TypeError):
        from_object(a, dtype="O")
    with pytest.raises(TypeError):
        from_object(a, dtype="not a dtype")
    # a single element may have any stride
    one = np.arange(8, dtype="i4")[::4][:1]
    assert from_object(one, dtype="u1").shape == (4,)


@pytest.mark.parametrize("obj", [object(), 3, "text", None, [1, 2], {"ptr": 1}])
def test_nothing_known(obj):
    with pytest.raises(TypeError, match="does not export memory through any protocol"):
        from_object(obj)


def test_call_signature():
    with pytest.raises(TypeError):
        from_object()
    with pytest.raises(TypeError):
        from_object(b"a", b"b")
    with pytest.raises(TypeError, match="unexpected keyword"):
        from_object(b"a", dtpe="u1")
    assert from_object(b"ab", dtype="u2").shape == (1,)


# --- import.c export_owner: the buffer-protocol export was held by a PyCapsule,
# which the garbage collector cannot traverse; a cycle through the exporter
# (an exporter instance keeping its own Buffer) was never collected.


class _ByteArray(bytearray):
    pass


class _AIBuffer:
    """__array_interface__ whose data is a buffer object (exported by dfbuffer)."""

    def __init__(self):
        self.mem = _ByteArray(32)
        self.__array_interface__ = {"version": 3, "shape": (4,), "typestr": "<f8", "data": self.mem}


def _cycle_collected(collect, make):
    import array
    import weakref

    class _Array(array.array):
        pass

    obj = make(_Array)
    r = weakref.ref(obj)
    obj.keep = Buffer.from_object(obj)
    view = np.asarray(obj.keep)  # an export of the Buffer, released below
    assert view.size > 0
    del obj, view
    collect()
    return r() is None


@pytest.mark.parametrize(
    "make",
    [
        lambda _Array: _ByteArray(16),
        lambda _Array: _Array("d", [1.0, 2.0]),
    ],
    ids=["bytearray subclass", "array.array subclass"],
)
def test_buffer_protocol_cycle_through_exporter_is_collected(collect, make):
    assert _cycle_collected(collect, make)


def test_array_interface_buffer_cycle_is_collected(collect):
    import weakref

    x = _AIBuffer()
    x.mem.keep = Buffer.from_object(x)  # the Buffer's export pins x.mem
    r = weakref.ref(x.mem)
    del x
    collect()
    assert r() is None


def test_buffer_protocol_owner_pins_the_export():
    ba = bytearray(16)
    b = Buffer.from_object(ba)
    with pytest.raises(BufferError):
        ba.extend(b"x" * 100)  # cannot resize while the Buffer lives
    assert not hasattr(b.owner, "release")  # no early release from Python
    del b
    ba.extend(b"x")
    assert len(ba) == 17


def test_buffer_protocol_owner_type_is_private():
    b = Buffer.from_object(bytearray(8))
    tp = type(b.owner)
    assert tp.__name__ == "buffer_export"
    with pytest.raises(TypeError):
        tp()
