"""Buffer host exports: __array_interface__, the buffer protocol, __array__, and
__cuda_array_interface__ (plus the refusals of device memory)."""

from __future__ import annotations

import ctypes
import weakref

import numpy as np
import pytest
from export_helpers import (
    ALL_DTYPES,
    Owner,
    PyBUF_ANY_CONTIGUOUS,
    PyBUF_C_CONTIGUOUS,
    PyBUF_F_CONTIGUOUS,
    PyBUF_FORMAT,
    PyBUF_FULL_RO,
    PyBUF_ND,
    PyBUF_RECORDS,
    PyBUF_SIMPLE,
    PyBUF_STRIDES,
    PyBUF_WRITABLE,
    PyBuffer,
    addr,
    check_same,
    get_buffer,
    layouts,
    make_buffer,
)

import dfbuffer

LAYOUTS = list(layouts("i1"))
CUDA = (2, 0)
CUDA_MANAGED = (13, 0)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_asarray_round_trip(dtype, layout):
    arr = layouts(dtype)[layout]
    buf = make_buffer(arr)
    out = np.asarray(buf)
    assert out.dtype == arr.dtype
    check_same(out, arr)
    out2 = buf.__array__()
    assert out2.base is buf
    check_same(out2, arr)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_memoryview_round_trip(dtype, layout):
    arr = layouts(dtype)[layout]
    buf = make_buffer(arr)
    if arr.dtype.kind in "Mm":
        # No struct format for datetimes (as NumPy): BufferError with PyBUF_FORMAT ...
        with pytest.raises(BufferError):
            memoryview(buf)
        # ... but the raw bytes are available without it.
        info = get_buffer(buf, PyBUF_STRIDES)
        assert info["format"] is None
        assert info["itemsize"] == 8
        if arr.size:
            assert info["buf"] == addr(arr)
        return
    mv = memoryview(buf)
    assert mv.obj is buf
    assert mv.shape == arr.shape
    assert mv.ndim == arr.ndim
    assert mv.itemsize == arr.itemsize
    assert mv.readonly == (not arr.flags.writeable)
    assert mv.nbytes == arr.nbytes
    ref = memoryview(np.ascontiguousarray(arr)) if arr.size else None
    if ref is not None:
        assert mv.format.lstrip("@=") in (ref.format.lstrip("@="),)
    out = np.asarray(mv)
    assert out.dtype == arr.dtype
    check_same(out, arr)
    if arr.size and arr.dtype.kind in "biu":
        assert mv.tolist() == arr.tolist()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_array_interface_fields(dtype, layout):
    arr = layouts(dtype)[layout]
    buf = make_buffer(arr)
    ai = buf.__array_interface__
    assert ai["version"] == 3
    assert ai["shape"] == arr.shape
    assert ai["typestr"] == arr.dtype.str
    assert ai["descr"] == [("", arr.dtype.str)]
    assert ai["data"][1] == (not arr.flags.writeable)
    assert ai["data"][0] != 0
    if arr.size:
        assert ai["data"][0] == addr(arr)
    if arr.flags.c_contiguous:
        assert ai["strides"] is None
    else:
        assert ai["strides"] == arr.strides


@pytest.mark.parametrize("dtype", [">i2", ">u4", ">i8", ">f2", ">f4", ">f8", ">c8", ">c16"])
def test_non_native_byte_order(dtype):
    arr = np.arange(6).astype(dtype).reshape(2, 3)
    buf = make_buffer(arr)
    assert buf.__array_interface__["typestr"] == dtype
    check_same(np.asarray(buf), arr)
    assert np.asarray(buf).dtype == np.dtype(dtype)
    mv = memoryview(buf)
    assert mv.format.startswith(">")
    out = np.asarray(mv)
    assert out.dtype == np.dtype(dtype)
    check_same(out, arr)


def test_non_native_datetime_array_interface():
    arr = np.arange(3, dtype=">i8").view(">M8[s]")
    buf = make_buffer(arr)
    out = np.asarray(buf)
    assert out.dtype == np.dtype(">M8[s]")
    check_same(out, arr)


@pytest.mark.parametrize(
    ("dtype", "fmt"),
    [
        ("?", "?"),
        ("i1", "b"),
        ("u1", "B"),
        ("i2", "h"),
        ("u2", "H"),
        ("i4", "i"),
        ("u4", "I"),
        ("f2", "e"),
        ("f4", "f"),
        ("f8", "d"),
        ("c8", "Zf"),
        ("c16", "Zd"),
        (">i4", ">i"),
        (">u8", ">Q"),
        (">f8", ">d"),
        (">c8", ">Zf"),
    ],
)
def test_struct_formats(dtype, fmt):
    buf = make_buffer(np.zeros(2, dtype=dtype))
    assert get_buffer(buf, PyBUF_FORMAT)["format"] == fmt


def test_int64_format_matches_numpy():
    for dt in ("i8", "u8", np.longlong, np.ulonglong, np.intp):
        arr = np.zeros(2, dtype=dt)
        assert memoryview(make_buffer(arr)).format == memoryview(arr).format


def test_memoryview_writes_through():
    arr = np.zeros((3, 4), dtype="i4")
    mv = memoryview(make_buffer(arr[:, ::2]))
    mv[1, 1] = 7
    assert arr[1, 2] == 7


# ---------------------------------------------------------------- buffer protocol flags

_c = np.arange(12.0).reshape(3, 4)
_f = np.asfortranarray(_c)
_s = _c[:, ::2]
C = make_buffer(_c)
F = make_buffer(_f)
S = make_buffer(_s)
_ro = np.arange(4.0)
_ro.flags.writeable = False
RO = make_buffer(_ro)


@pytest.mark.parametrize(
    ("name", "flags", "expect"),
    [
        ("simple", PyBUF_SIMPLE, {"ndim": 1, "shape": None, "strides": None, "format": None}),
        ("nd", PyBUF_ND, {"ndim": 2, "shape": (3, 4), "strides": None}),
        ("strides", PyBUF_STRIDES, {"shape": (3, 4), "strides": (32, 8), "format": None}),
        ("format", PyBUF_FORMAT, {"format": "d", "ndim": 1}),
        ("records", PyBUF_RECORDS, {"format": "d", "strides": (32, 8), "readonly": False}),
        ("c", PyBUF_C_CONTIGUOUS, {"strides": (32, 8)}),
        ("any", PyBUF_ANY_CONTIGUOUS, {"strides": (32, 8)}),
        ("full-ro", PyBUF_FULL_RO, {"format": "d", "readonly": False}),
    ],
)
def test_buffer_flags_c_contiguous(name, flags, expect):
    info = get_buffer(C, flags)
    assert info["buf"] == addr(_c)
    assert info["len"] == 96
    assert info["itemsize"] == 8  # kept even without PyBUF_FORMAT
    assert info["obj_is_set"]
    for k, v in expect.items():
        assert info[k] == v, k


def test_buffer_flags_fortran():
    info = get_buffer(F, PyBUF_F_CONTIGUOUS)
    assert info["strides"] == _f.strides
    assert get_buffer(F, PyBUF_ANY_CONTIGUOUS)["strides"] == _f.strides


def test_buffer_flags_strided():
    info = get_buffer(S, PyBUF_STRIDES | PyBUF_FORMAT)
    assert info["strides"] == _s.strides
    assert info["shape"] == (3, 2)
    assert info["len"] == 48


def test_readonly_without_writable_request():
    info = get_buffer(RO, PyBUF_STRIDES)
    assert info["readonly"]
    assert info["buf"] == addr(_ro)


DEV = make_buffer(np.arange(3.0), device=CUDA)
_dt = make_buffer(np.arange(3, dtype="i8").view("M8[ms]"))
_ld = make_buffer(np.zeros(3, dtype=np.dtype(np.longdouble).newbyteorder(">")))

BUFFER_REFUSALS = [
    ("writable-of-readonly", RO, PyBUF_WRITABLE),
    ("records-of-readonly", RO, PyBUF_RECORDS),
    ("simple-non-contiguous", S, PyBUF_SIMPLE),
    ("nd-non-contiguous", S, PyBUF_ND),
    ("c-of-strided", S, PyBUF_C_CONTIGUOUS),
    ("f-of-strided", S, PyBUF_F_CONTIGUOUS),
    ("any-of-strided", S, PyBUF_ANY_CONTIGUOUS),
    ("c-of-fortran", F, PyBUF_C_CONTIGUOUS),
    ("f-of-c", C, PyBUF_F_CONTIGUOUS),
    ("simple-of-fortran", F, PyBUF_SIMPLE),
    ("format-of-datetime", _dt, PyBUF_FORMAT),
    ("full-ro-of-datetime", _dt, PyBUF_FULL_RO),
    ("format-of-non-native-longdouble", _ld, PyBUF_FORMAT),
    ("device-simple", DEV, PyBUF_SIMPLE),
    ("device-full-ro", DEV, PyBUF_FULL_RO),
]


@pytest.mark.parametrize(
    ("obj", "flags"), [pytest.param(o, f, id=i) for i, o, f in BUFFER_REFUSALS]
)
def test_buffer_refusals(obj, flags):
    view = PyBuffer()
    view.obj = 12345  # garbage the exporter must reset
    with pytest.raises(BufferError):
        ctypes.pythonapi.PyObject_GetBuffer(obj, ctypes.byref(view), flags)
    assert not view.obj


def test_memoryview_of_readonly_is_readonly():
    mv = memoryview(RO)
    assert mv.readonly
    with pytest.raises(TypeError):
        mv[0] = 1.0


# ---------------------------------------------------------------- __array__


def test_array_dtype_and_copy():
    arr = np.arange(6, dtype="i4")
    buf = make_buffer(arr)
    v = buf.__array__()
    assert addr(v) == addr(arr)
    c = buf.__array__(copy=True)
    assert addr(c) != addr(arr)
    np.testing.assert_array_equal(c, arr)
    f = buf.__array__("f8")
    assert f.dtype == np.float64
    np.testing.assert_array_equal(f, arr)
    same = buf.__array__(np.dtype("i4"), copy=False)
    assert addr(same) == addr(arr)
    with pytest.raises(ValueError):
        buf.__array__("f8", copy=False)
    # through NumPy's own entry points
    assert addr(np.asarray(buf, dtype="i4")) == addr(arr)
    assert addr(np.array(buf)) != addr(arr)
    np.testing.assert_array_equal(np.asarray(buf, dtype="i8"), arr)


def test_asarray_of_copy_false():
    arr = np.arange(3.0)
    out = np.asarray(make_buffer(arr), copy=False)
    assert addr(out) == addr(arr)


# ---------------------------------------------------------------- device memory


@pytest.mark.parametrize("device", [CUDA, CUDA_MANAGED, (10, 0), (2, 5)])
def test_cuda_and_device_refusals(device):
    host = np.arange(6, dtype="f4").reshape(2, 3)  # never read
    buf = make_buffer(host, device=device)
    host_ok = device[0] == 13  # managed memory is host-accessible
    assert hasattr(buf, "__array_interface__") == host_ok
    if not host_ok:
        with pytest.raises(BufferError):
            memoryview(buf)
        with pytest.raises(TypeError):
            np.asarray(buf)
        with pytest.raises(TypeError):
            np.array(buf)
        with pytest.raises((BufferError, RuntimeError)):
            np.from_dlpack(buf)
    is_cuda = device[0] in (2, 13)
    assert hasattr(buf, "__cuda_array_interface__") == is_cuda
    if is_cuda:
        cai = buf.__cuda_array_interface__
        assert cai["version"] == 3
        assert cai["shape"] == (2, 3)
        assert cai["typestr"] == "<f4"
        assert cai["data"] == (addr(host), False)
        assert cai["strides"] is None
        assert cai["stream"] is None


def test_cuda_array_interface_strided_readonly_zero_size():
    host = np.arange(12, dtype="i2").reshape(3, 4)[:, ::-2]
    buf = make_buffer(host, device=CUDA, readonly=True)
    cai = buf.__cuda_array_interface__
    assert cai["strides"] == host.strides
    assert cai["data"] == (addr(host), True)
    empty = dfbuffer.Buffer(0, 0, owner=host, dtype="f8", shape=(0, 3), device=CUDA)
    assert empty.__cuda_array_interface__["data"] == (0, False)


def test_cpu_has_no_cuda_array_interface():
    assert not hasattr(C, "__cuda_array_interface__")
    with pytest.raises(AttributeError):
        C.__cuda_array_interface__  # noqa: B018


def test_asarray_device_is_not_object_array():
    with pytest.raises(TypeError):
        np.asarray(DEV)
    with pytest.raises(TypeError):
        DEV.__array__()


def test_zero_size_array_interface_pointer():
    buf = dfbuffer.Buffer(0, 0, owner=None, dtype="f8", shape=(0,))
    assert buf.ptr == 0
    assert buf.__array_interface__["data"][0] != 0
    assert np.asarray(buf).shape == (0,)
    assert memoryview(buf).nbytes == 0
    assert get_buffer(buf, PyBUF_SIMPLE)["buf"] != 0


# ---------------------------------------------------------------- a real buffer consumer


def test_pyarrow_py_buffer(collect):
    pa = pytest.importorskip("pyarrow")
    owner = Owner(np.arange(6.0))
    ref = weakref.ref(owner)
    pb = pa.py_buffer(make_buffer(owner.arr, owner=owner))
    assert pb.address == addr(owner.arr)
    assert pb.size == 48
    assert pb.is_mutable
    values = pa.Array.from_buffers(pa.float64(), 6, [None, pb])
    assert values.to_pylist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    del owner, pb
    collect()
    assert ref() is not None  # the Arrow array keeps the Buffer, the Buffer the owner
    del values
    collect()
    assert ref() is None
    assert not pa.py_buffer(RO).is_mutable
    with pytest.raises(BufferError):
        pa.py_buffer(S)  # not contiguous
