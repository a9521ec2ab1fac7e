"""Buffer.__dlpack__ / __dlpack_device__: DLPack 1.x and legacy capsules."""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pytest
from export_helpers import (
    DLPACK_DTYPES,
    IS_COPIED,
    READ_ONLY,
    DLManagedTensor,
    DLManagedTensorVersioned,
    Owner,
    addr,
    capsule_name,
    check_same,
    consume,
    layouts,
    make_buffer,
    sample,
    tensor_info,
)

import dfbuffer
from dfbuffer import _interchange

CPU = (1, 0)
CUDA = (2, 0)
CUDA_HOST = (3, 0)
CUDA_MANAGED = (13, 0)
VERSION = (_interchange.DLPACK_MAJOR_VERSION, _interchange.DLPACK_MINOR_VERSION)

DL_CODE = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}

LAYOUTS = list(layouts("i1"))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DLPACK_DTYPES)
def test_from_dlpack_round_trip(dtype, layout):
    arr = layouts(dtype)[layout]
    buf = make_buffer(arr)
    out = np.from_dlpack(buf)
    check_same(out, arr)
    if not arr.size:
        assert addr(out) != 0


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["?", "i2", "u8", "f2", "c16"])
def test_capsule_fields(dtype, layout):
    arr = layouts(dtype)[layout]
    buf = make_buffer(arr)
    info = tensor_info(buf.__dlpack__(max_version=(1, 5)))
    assert info["version"] == VERSION
    assert info["flags"] == (0 if arr.flags.writeable else READ_ONLY)
    assert info["device"] == CPU
    assert info["ndim"] == arr.ndim
    assert info["shape"] == arr.shape
    assert not info["strides_null"]
    assert info["byte_offset"] == 0
    dt = np.dtype(dtype)
    assert info["dtype"] == (DL_CODE[dt.kind], 8 * dt.itemsize, 1)
    assert info["data"] != 0
    if arr.size:
        assert info["data"] == addr(arr)
        for n, s_el, s_b in zip(arr.shape, info["strides"], arr.strides, strict=True):
            if n > 1:
                assert s_el * dt.itemsize == s_b


def test_bool_is_kdlbool():
    buf = make_buffer(np.array([True, False]))
    assert tensor_info(buf.__dlpack__(max_version=(1, 0)))["dtype"] == (6, 8, 1)


def test_legacy_when_no_max_version():
    arr = np.arange(6.0)
    buf = make_buffer(arr)
    cap = buf.__dlpack__()
    assert capsule_name(cap) == "dltensor"
    info = tensor_info(cap)
    assert "version" not in info
    assert info["data"] == addr(arr)
    assert info["strides"] == (1,)
    for mv in [(0, 8), (0, 0)]:
        assert capsule_name(buf.__dlpack__(max_version=mv)) == "dltensor"
    for mv in [(1, 0), (1, 99), (2, 0)]:
        assert capsule_name(buf.__dlpack__(max_version=mv)) == "dltensor_versioned"


def test_size_one_dims_with_odd_strides():
    # A size-1 dimension's stride does not matter: not a BufferError even if odd.
    raw = np.arange(4, dtype="f8")
    buf = dfbuffer.Buffer(raw.ctypes.data, 32, owner=raw, dtype="f8", shape=(1, 4), strides=(3, 8))
    info = tensor_info(buf.__dlpack__(max_version=(1, 0)))
    assert info["shape"] == (1, 4)
    assert info["strides"][1] == 1
    np.testing.assert_array_equal(np.from_dlpack(buf), raw.reshape(1, 4))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("legacy", [False, True])
def test_copy_true(layout, legacy):
    arr = layouts("f8")[layout]
    buf = make_buffer(arr)
    kw = {} if legacy else {"max_version": (1, 0)}
    cap = buf.__dlpack__(copy=True, **kw)
    info = tensor_info(cap)
    if not legacy:
        assert info["flags"] == IS_COPIED  # copies are writable
    assert info["shape"] == arr.shape
    # C-contiguous element strides
    expect = np.empty(arr.shape, dtype="f8").strides
    for n, s, e in zip(arr.shape, info["strides"], expect, strict=True):
        if n > 1 and arr.size:
            assert s * 8 == e
    if arr.size:
        assert info["data"] != addr(arr)
        assert info["data"] % 64 == 0
    out = np.from_dlpack(buf, copy=True)
    np.testing.assert_array_equal(out, arr)
    if arr.size:
        assert addr(out) != addr(arr)
    assert out.flags.writeable


def test_copy_false_and_none_never_copy():
    arr = np.arange(10, dtype="i4")[::2]
    buf = make_buffer(arr)
    for copy in (None, False):
        out = np.from_dlpack(buf, copy=copy)
        assert addr(out) == addr(arr)
        assert tensor_info(buf.__dlpack__(max_version=(1, 0), copy=copy))["flags"] == 0


def test_dl_device_own_and_cpu():
    arr = np.arange(3.0)
    buf = make_buffer(arr)
    for dev in [CPU, (dfbuffer.DeviceType.CPU, 0)]:
        info = tensor_info(buf.__dlpack__(max_version=(1, 0), dl_device=dev, copy=False))
        assert info["device"] == CPU
        assert info["data"] == addr(arr)
    out = np.from_dlpack(buf, device="cpu")
    assert addr(out) == addr(arr)


@pytest.mark.parametrize("device", [CUDA_HOST, CUDA_MANAGED, (11, 0)])
def test_host_accessible_to_cpu(device):
    # Pinned / managed memory is host-readable: exported to kDLCPU without a copy.
    arr = np.arange(4.0)
    buf = make_buffer(arr, device=device)
    assert buf.__dlpack_device__() == device
    info = tensor_info(buf.__dlpack__(max_version=(1, 0), dl_device=CPU, copy=False))
    assert info["device"] == CPU
    assert info["data"] == addr(arr)
    info = tensor_info(buf.__dlpack__(max_version=(1, 0)))
    assert info["device"] == device
    cap = buf.__dlpack__(max_version=(1, 0), dl_device=CPU, copy=True)
    assert tensor_info(cap)["flags"] == IS_COPIED
    assert tensor_info(cap)["device"] == CPU
    out = np.from_dlpack(buf, device="cpu")  # NumPy asks for dl_device=(kDLCPU, 0)
    assert addr(out) == addr(arr)
    np.testing.assert_array_equal(out, arr)


def test_dlpack_device():
    buf = make_buffer(np.arange(3))
    dev = buf.__dlpack_device__()
    assert dev == CPU
    # (DeviceType member, int), as the interchange spec types it
    assert type(dev[0]) is dfbuffer.DeviceType and type(dev[1]) is int
    dbuf = make_buffer(np.arange(3), device=(2, 3))
    assert dbuf.__dlpack_device__() == (2, 3)


def test_readonly_versioned_flag_and_numpy_readonly():
    arr = np.arange(5)
    arr.flags.writeable = False
    buf = make_buffer(arr)
    assert buf.readonly
    assert tensor_info(buf.__dlpack__(max_version=(1, 0)))["flags"] == READ_ONLY
    out = np.from_dlpack(buf)
    assert not out.flags.writeable
    assert addr(out) == addr(arr)


def test_writable_memory_is_shared():
    arr = np.zeros(4, dtype="i8")
    out = np.from_dlpack(make_buffer(arr))
    out[2] = 42
    assert arr[2] == 42


# ---------------------------------------------------------------- device buffers


def test_device_buffer_capsule():
    host = np.arange(6, dtype="f4")  # never read through the capsule
    owner = Owner(host)
    buf = make_buffer(host, owner=owner, device=(2, 1))
    assert buf.__dlpack_device__() == (2, 1)
    cap = buf.__dlpack__(max_version=(1, 0))
    info = tensor_info(cap)
    assert info["device"] == (2, 1)
    assert info["data"] == addr(host)
    assert info["shape"] == (6,)
    assert info["dtype"] == (2, 32, 1)
    # CUDA streams per the array API (no synchronisation is performed).
    for stream in (None, -1, 1, 2, 12345678, 2**64 - 1):
        tensor_info(buf.__dlpack__(max_version=(1, 0), stream=stream))
    # Consume it by hand and call the deleter: the owner is released exactly then.
    ref = weakref.ref(owner)
    m, deleter = consume(cap)
    del buf, owner, host
    assert ref() is not None
    del cap  # used_ capsule: its destructor does nothing
    assert ref() is not None
    deleter(ctypes_addr(m))
    assert ref() is None


def ctypes_addr(m: DLManagedTensorVersioned | DLManagedTensor) -> int:
    import ctypes

    return ctypes.addressof(m)


def test_numpy_refuses_device_capsule():
    buf = make_buffer(np.arange(3.0), device=CUDA)
    with pytest.raises((BufferError, RuntimeError)):
        np.from_dlpack(buf)


def test_deleter_runs_on_another_thread_without_gil(collect):
    # ctypes releases the GIL around foreign calls: the deleter must take it itself.
    owner = Owner(np.arange(100.0))
    ref = weakref.ref(owner)
    buf = make_buffer(owner.arr, owner=owner)
    caps = [buf.__dlpack__(max_version=(1, 0)), buf.__dlpack__()]
    consumed = [consume(c) for c in caps]
    del buf, owner
    collect()
    assert ref() is not None
    threads = [threading.Thread(target=d, args=(ctypes_addr(m),)) for m, d in consumed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    del caps
    collect()
    assert ref() is None


# ---------------------------------------------------------------- torch


@pytest.mark.parametrize("layout", ["1d", "2d-F", "3d-sliced", "zero-size", "0d"])
def test_torch_round_trip(layout):
    torch = pytest.importorskip("torch")
    arr = layouts("f4")[layout]
    buf = make_buffer(arr)
    t = torch.from_dlpack(buf)
    np.testing.assert_array_equal(t.numpy(), arr)
    if arr.size:
        assert t.data_ptr() == addr(arr)


# ---------------------------------------------------------------- malformed requests

ro = np.arange(3.0)
ro.flags.writeable = False
RO = make_buffer(ro)
F8 = make_buffer(np.arange(3.0))
_dt = np.arange(3, dtype="i8")
DT = make_buffer(_dt.view("M8[ns]"))
TD = make_buffer(_dt.view("m8[us]"))
BIG = make_buffer(np.arange(3, dtype=">i4"))
LONGDOUBLE = make_buffer(np.arange(3, dtype=np.longdouble))
_raw = np.zeros(3, dtype="f8")
ODD = dfbuffer.Buffer(_raw.ctypes.data, 24, owner=_raw, dtype="f8", shape=(2,), strides=(12,))
DEV = make_buffer(np.arange(3.0), device=CUDA)
MANAGED = make_buffer(np.arange(3.0), device=CUDA_MANAGED)
ROCM = make_buffer(np.arange(3.0), device=(10, 0))

MALFORMED = [
    ("legacy-readonly", RO, {}, BufferError),
    ("legacy-readonly-old-version", RO, {"max_version": (0, 8)}, BufferError),
    ("stream-on-cpu", F8, {"stream": 1}, BufferError),
    ("stream-minus-one-on-cpu", F8, {"stream": -1}, BufferError),
    ("stream-on-cpu-target", MANAGED, {"stream": 1, "dl_device": CPU}, BufferError),
    ("dl_device-cuda-from-cpu", F8, {"dl_device": CUDA}, BufferError),
    ("dl_device-other-cpu-id", F8, {"dl_device": (1, 1)}, BufferError),
    ("dl_device-str", F8, {"dl_device": "cpu"}, TypeError),
    ("dl_device-short", F8, {"dl_device": (1,)}, ValueError),
    ("dl_device-float", F8, {"dl_device": (1.0, 0)}, TypeError),
    ("dl_device-negative", F8, {"dl_device": (-1, 0)}, ValueError),
    ("max_version-int", F8, {"max_version": 1}, TypeError),
    ("max_version-short", F8, {"max_version": (1,)}, ValueError),
    ("max_version-str", F8, {"max_version": ("1", "0")}, TypeError),
    ("max_version-list", F8, {"max_version": [1, 0]}, TypeError),
    ("max_version-negative", F8, {"max_version": (-1, 0)}, ValueError),
    ("copy-str", F8, {"copy": "yes"}, TypeError),
    ("copy-false-device-change", F8, {"copy": False, "dl_device": CUDA}, BufferError),
    ("copy-false-cuda-to-cpu", DEV, {"copy": False, "dl_device": CPU}, BufferError),
    ("copy-true-cuda", DEV, {"copy": True, "max_version": (1, 0)}, BufferError),
    ("copy-true-managed-no-target", MANAGED, {"copy": True}, BufferError),
    ("cuda-to-cpu", DEV, {"dl_device": CPU}, BufferError),
    ("cuda-stream-zero", DEV, {"stream": 0}, ValueError),
    ("cuda-stream-str", DEV, {"stream": "s"}, TypeError),
    ("cuda-stream-below-minus-one", DEV, {"stream": -2}, ValueError),
    ("rocm-stream-one", ROCM, {"stream": 1}, ValueError),
    ("datetime", DT, {"max_version": (1, 0)}, BufferError),
    ("timedelta", TD, {"max_version": (1, 0)}, BufferError),
    ("non-native-byte-order", BIG, {"max_version": (1, 0)}, BufferError),
    ("longdouble", LONGDOUBLE, {"max_version": (1, 0)}, BufferError),
    ("stride-not-multiple-of-itemsize", ODD, {"max_version": (1, 0)}, BufferError),
    ("unknown-keyword", F8, {"device": CPU}, TypeError),
]


@pytest.mark.parametrize(
    ("buf", "kwargs", "exc"),
    [pytest.param(b, k, e, id=i) for i, b, k, e in MALFORMED],
)
def test_malformed_request(buf, kwargs, exc):
    with pytest.raises(exc):
        buf.__dlpack__(**kwargs)


def test_positional_argument_refused():
    with pytest.raises(TypeError):
        F8.__dlpack__(None)


def test_repeated_keyword_refused():
    # Only reachable through the vectorcall protocol with duplicate kwnames; a dict
    # cannot repeat a key, so check the message of the unknown-keyword path instead.
    with pytest.raises(TypeError, match="unexpected keyword"):
        F8.__dlpack__(streams=None)


def test_readonly_legacy_ok_with_copy():
    cap = RO.__dlpack__(copy=True)
    assert capsule_name(cap) == "dltensor"
    np.testing.assert_array_equal(np.from_dlpack(RO, copy=True), ro)


def test_zero_size_has_non_null_data():
    for arr in (np.empty((0, 3)), np.empty(0, dtype="c8"), sample("i2", 8)[4:4]):
        buf = dfbuffer.Buffer(0, 0, owner=arr, dtype=arr.dtype, shape=arr.shape)
        for kw in ({}, {"max_version": (1, 0)}, {"copy": True}):
            assert tensor_info(buf.__dlpack__(**kw))["data"] != 0
        assert np.from_dlpack(buf).shape == arr.shape


# ---------------------------------------------------------------- a second C++ consumer


@pytest.mark.parametrize("layout", [k for k in LAYOUTS if k not in ("broadcast", "readonly")])
@pytest.mark.parametrize("dtype", DLPACK_DTYPES)
def test_tvm_ffi_round_trip(dtype, layout):
    # apache-tvm-ffi's from_dlpack (C++) asks for a legacy capsule (no max_version).
    tvm_ffi = pytest.importorskip("tvm_ffi")
    arr = layouts(dtype)[layout]
    t = tvm_ffi.from_dlpack(make_buffer(arr))
    assert tuple(t.shape) == arr.shape
    back = np.from_dlpack(t)
    assert back.dtype == arr.dtype
    np.testing.assert_array_equal(back, arr)
    if arr.size:
        assert addr(back) == addr(arr)


def test_tvm_ffi_lifetime_and_readonly(collect):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    owner = Owner(np.arange(12.0).reshape(3, 4))
    ref = weakref.ref(owner)
    t = tvm_ffi.from_dlpack(make_buffer(owner.arr[:, ::2], owner=owner))
    del owner
    collect()
    assert ref() is not None
    del t
    collect()
    assert ref() is None
    # read-only memory has no legacy capsule (BufferError); tvm_ffi takes it through the
    # C exchange API instead, whose versioned tensor carries the READ_ONLY flag
    with pytest.raises(BufferError):
        RO.__dlpack__()
    np.testing.assert_array_equal(np.from_dlpack(tvm_ffi.from_dlpack(RO)), np.asarray(RO))


# --- dlpack.c copy_to_c_order: the rewritten strided inner loop ---------


@pytest.mark.parametrize("step", [-3, -1, 2])
def test_dlpack_copy_of_strided_inner_dimension(step):
    v = np.arange(60, dtype="i4").reshape(5, 12)[::-2, ::step]
    b = dfbuffer.Buffer.from_object(v)

    class Wrap:
        def __init__(self, cap):
            self.cap = cap

        def __dlpack__(self, **kw):
            return self.cap

        def __dlpack_device__(self):
            return (1, 0)

    r = np.from_dlpack(Wrap(b.__dlpack__(max_version=(1, 0), copy=True)))
    assert r.flags.c_contiguous
    assert r.tolist() == v.tolist()


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_zero_size_export_with_huge_dims_round_trips(max_version):
    # dims whose product overflows: only a tensor with no elements can have them, and
    # its strides must still fit in bytes for every importer (dfbuffer's own too)
    mem = np.empty(0, np.float64)

    class Huge:
        __array_interface__ = {"version": 3, "shape": (0, 2**62, 2**62), "typestr": "<f8",
                               "data": (mem.ctypes.data, False)}

    b = dfbuffer.Buffer.from_object(Huge())
    kw = {} if max_version is None else {"max_version": max_version}
    back = dfbuffer.Buffer.from_object(b.__dlpack__(**kw))
    assert back.shape == (0, 2**62, 2**62)
    assert back.bufsize == 0 and back.dtype == np.float64
