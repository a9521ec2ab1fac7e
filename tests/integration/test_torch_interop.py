"""PyTorch interop in both directions: torch.from_dlpack(Buffer) and
Buffer.from_object(torch.Tensor), every dtype torch shares with NumPy, every
layout, lifetimes, and torch's known sharp edges (recorded with torch 2.13):

- negative strides: torch has none; torch.from_dlpack of a negative-stride
  DLPack tensor (ours or NumPy's own) aborts the whole process in C++
  ("Storage size calculation overflowed"), so it is only tried in a
  subprocess.  ``torch.from_dlpack(buf, copy=True)`` is the way around it.
- read-only memory: the capsule carries DLPack's READ_ONLY flag, torch ignores
  it (no warning) and gives a writable tensor over the memory.
- tensors with the conjugate or negative bit set: torch refuses the first in
  __dlpack__ but exports the second's un-negated memory; from_object refuses both.
"""

from __future__ import annotations

import os
import sys
import textwrap
import weakref

import numpy as np
import pytest
from child_processes import ChildProcess, Command
from export_helpers import (
    DLPACK_DTYPES,
    IS_COPIED,
    READ_ONLY,
    Owner,
    addr,
    layouts,
    make_buffer,
    sample,
    tensor_info,
)

import dfbuffer
from dfbuffer import Buffer, DeviceType, NativeFormat

torch = pytest.importorskip("torch")

# Under LD_PRELOAD=libasan.so alone (the ASan CI run), ASan's __cxa_throw
# interceptor finds no real __cxa_throw (python does not link libstdc++), so
# ANY C++ exception thrown inside torch kills the process ("CHECK failed:
# asan_interceptors.cpp ... real___cxa_throw").  Preloading libstdc++ after
# libasan fixes it; without it, tests that make torch throw in C++ are skipped.
_PRELOAD = os.environ.get("LD_PRELOAD", "")
CXX_THROW_BROKEN = "libasan" in _PRELOAD and "libstdc++" not in _PRELOAD
needs_cxx_throw = pytest.mark.skipif(
    CXX_THROW_BROKEN,
    reason="torch C++ exceptions abort under an ASan preload without libstdc++",
)

# torch's unsigned 16/32/64-bit dtypes are "limited" (few kernels) but DLPack
# and .numpy() work for them.
TORCH_DTYPES = [*DLPACK_DTYPES, "u2", "u4", "u8"]
NUMPY_TO_TORCH = {
    "?": torch.bool,
    "i1": torch.int8,
    "i2": torch.int16,
    "i4": torch.int32,
    "i8": torch.int64,
    "u1": torch.uint8,
    "u2": torch.uint16,
    "u4": torch.uint32,
    "u8": torch.uint64,
    "f2": torch.float16,
    "f4": torch.float32,
    "f8": torch.float64,
    "c8": torch.complex64,
    "c16": torch.complex128,
}
# "negative" is covered by test_negative_strides_* (torch aborts on it).
POSITIVE_LAYOUTS = [k for k in layouts("i1") if k != "negative"]


class Spy:
    """Forwards __dlpack__ to a Buffer and records the capsule torch is given."""

    def __init__(self, buf: Buffer) -> None:
        self.buf = buf
        self.calls: list[tuple[dict, dict]] = []

    def __dlpack__(self, **kw):
        cap = self.buf.__dlpack__(**kw)
        self.calls.append((kw, tensor_info(cap)))
        return cap

    def __dlpack_device__(self):
        return self.buf.__dlpack_device__()


# ---------------------------------------------------------------- Buffer -> torch


@pytest.mark.parametrize("layout", POSITIVE_LAYOUTS)
@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_torch_from_dlpack(dtype, layout):
    arr = layouts(dtype)[layout]
    buf = make_buffer(arr)
    t = torch.from_dlpack(buf)
    assert t.dtype == NUMPY_TO_TORCH[dtype]
    assert t.device.type == "cpu"
    assert tuple(t.shape) == arr.shape
    out = t.numpy()
    assert out.dtype == arr.dtype
    np.testing.assert_array_equal(out, arr)
    if arr.size:
        assert t.data_ptr() == addr(arr)
        for n, s_t, s_a in zip(arr.shape, t.stride(), arr.strides, strict=True):
            if n > 1:
                assert s_t * arr.itemsize == s_a


def test_torch_asks_for_a_versioned_capsule():
    spy = Spy(make_buffer(np.arange(3.0)))
    torch.from_dlpack(spy)
    [(kw, info)] = spy.calls
    assert kw["max_version"][0] == 1
    assert info["version"][0] == 1
    assert info["flags"] == 0


def test_torch_shares_memory_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(make_buffer(a))
    t[1, 2] = -1.0
    assert a[1, 2] == -1.0
    a[0, 0] = 42.0
    assert t[0, 0].item() == 42.0


def test_torch_readonly_flag_is_sent():
    # torch 2.13 ignores READ_ONLY (no warning, writable tensor): dfbuffer's
    # part is to send the flag, which is what this checks.
    a = np.arange(4.0)
    a.flags.writeable = False
    spy = Spy(make_buffer(a))
    t = torch.from_dlpack(spy)
    [(_, info)] = spy.calls
    assert info["flags"] & READ_ONLY
    assert t.data_ptr() == addr(a)
    np.testing.assert_array_equal(t.numpy(), a)


def test_torch_copy_keywords():
    a = np.arange(5, dtype="i4")
    buf = make_buffer(a)
    spy = Spy(buf)
    t = torch.from_dlpack(spy, copy=False)
    assert spy.calls[-1][0]["copy"] is False
    assert t.data_ptr() == addr(a)
    t = torch.from_dlpack(spy, copy=True)
    assert spy.calls[-1][0]["copy"] is True
    assert spy.calls[-1][1]["flags"] & IS_COPIED
    assert t.data_ptr() != addr(a)
    t[0] = 7
    assert a[0] == 0
    np.testing.assert_array_equal(t.numpy()[1:], a[1:])


def test_torch_device_keyword():
    a = np.arange(3.0)
    spy = Spy(make_buffer(a))
    t = torch.from_dlpack(spy, device="cpu")
    assert spy.calls[-1][0]["dl_device"] == (DeviceType.CPU, 0)
    assert t.data_ptr() == addr(a)


@pytest.mark.parametrize("legacy", [False, True])
def test_torch_from_capsule(legacy):
    a = np.arange(4.0)
    buf = make_buffer(a)
    cap = buf.__dlpack__() if legacy else buf.__dlpack__(max_version=(1, 0))
    t = torch.from_dlpack(cap)
    assert t.data_ptr() == addr(a)
    np.testing.assert_array_equal(t.numpy(), a)


def test_torch_tensor_keeps_owner_alive(collect):
    owner = Owner(np.arange(6.0))
    r = weakref.ref(owner)
    buf = make_buffer(owner.arr[::2], owner=owner)
    t = torch.from_dlpack(buf)
    view = t[1:]  # shares the storage
    del owner, buf, t
    collect()
    assert r() is not None
    assert view.tolist() == [2.0, 4.0]
    del view
    collect()
    assert r() is None


def test_negative_strides_copy_keyword():
    # The way around torch's missing negative strides: copy=True gives a
    # compact positive-stride copy.
    arr = layouts("f4")["negative"]
    buf = make_buffer(arr)
    t = torch.from_dlpack(buf, copy=True)
    assert all(s > 0 for s in t.stride())
    np.testing.assert_array_equal(t.numpy(), arr)
    info = tensor_info(buf.__dlpack__(max_version=(1, 0), copy=True))
    assert info["flags"] & IS_COPIED
    assert all(s > 0 for s in info["strides"])


def _negative_strides_command() -> Command:
    # torch 2.13 aborts in C++ on any negative-stride DLPack tensor (NumPy's
    # own __dlpack__ too), so this runs in a child (tests/child_processes.py).
    code = textwrap.dedent(
        """
        import numpy as np, torch
        from export_helpers import make_buffer
        a = np.arange(24, dtype="f4").reshape(4, 6)[::-1, ::-2]
        b = make_buffer(a)
        assert np.array_equal(np.asarray(b), a)
        try:
            t = torch.from_dlpack(b)
        except Exception as e:
            print("RAISED", type(e).__name__)
        else:
            print("VALUES", np.array_equal(t.numpy(), a))
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *sys.path]
    )
    return Command([sys.executable, "-c", code], env=env, timeout=300)


_NEGATIVE_STRIDES = ChildProcess(_negative_strides_command)


@pytest.mark.child_process(_NEGATIVE_STRIDES)
def test_negative_strides_never_silently_wrong():
    # Acceptable outcomes: a Python exception, or the right values; an abort is
    # torch's known bug (xfail); wrong values fail.
    p = _NEGATIVE_STRIDES.result()
    if p.returncode != 0 and "real___cxa_throw" in p.stderr:
        pytest.skip("torch C++ exceptions abort under an ASan preload without libstdc++")
    if p.returncode != 0 and "Storage size calculation overflowed" in p.stderr:
        pytest.xfail("torch aborts on negative DLPack strides (torch bug, any producer)")
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() in (
        ["RAISED", "BufferError"],
        ["RAISED", "ValueError"],
        ["RAISED", "RuntimeError"],
        ["VALUES", "True"],
    ), p.stdout


# ---------------------------------------------------------------- torch -> Buffer


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
def test_from_object_torch_dtypes(dtype):
    t = torch.from_numpy(sample(dtype, 7).copy())
    assert t.dtype == NUMPY_TO_TORCH[dtype]
    b = Buffer.from_object(t)
    assert b.native == NativeFormat.DLPACK
    assert b.dtype == np.dtype(dtype)
    assert b.device == (DeviceType.CPU, 0)
    assert not b.readonly
    assert b.ptr == t.data_ptr()
    v = np.asarray(b)
    assert addr(v) == t.data_ptr()
    np.testing.assert_array_equal(v, t.numpy())


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
@pytest.mark.parametrize(
    "dtype",
    ["bfloat16", "float8_e4m3fn", "float8_e5m2", "complex32"],
)
def test_from_object_torch_dtypes_without_numpy_equivalent(dtype):
    t = torch.zeros(3, dtype=getattr(torch, dtype))
    with pytest.raises(BufferError, match="no NumPy equivalent"):
        Buffer.from_object(t)
    if dtype == "bfloat16":
        with pytest.raises(BufferError, match="bfloat16"):
            Buffer.from_object(t)
    if dtype.startswith("float8"):
        with pytest.raises(BufferError, match=dtype):
            Buffer.from_object(t)


LAYOUTS = {
    "transposed": lambda: torch.arange(12.0).reshape(3, 4).T,
    "sliced-3d": lambda: torch.arange(60.0).reshape(3, 4, 5)[::2, 1:, ::3],
    "storage-offset": lambda: torch.arange(10, dtype=torch.int16)[3:8],
    "expanded": lambda: torch.arange(3.0).expand(4, 3),
    "size-1-dims": lambda: torch.ones(1, 3, 1)[:, ::2],
    "0d": lambda: torch.tensor(3.5),
    "zero-size": lambda: torch.zeros(0, 3),
    "zero-size-strided": lambda: torch.zeros(4, 0, 3)[:, :, ::2],
    "flipped": lambda: torch.arange(6.0).flip(0),  # torch copies: positive strides
}


@pytest.mark.parametrize("make", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_from_object_torch_layouts(make):
    t = make()
    b = Buffer.from_object(t)
    assert b.shape == tuple(t.shape)
    for n, s_b, s_t in zip(b.shape, b.strides, t.stride(), strict=True):
        if n > 1:
            assert s_b == s_t * t.element_size()
    v = np.asarray(b)
    np.testing.assert_array_equal(v, t.numpy())
    if t.numel():
        assert addr(v) == t.data_ptr()


def test_from_object_torch_writes_are_shared():
    t = torch.zeros(2, 3)
    v = np.asarray(Buffer.from_object(t[:, 1:]))
    v[1, 1] = 5.0
    assert t[1, 2].item() == 5.0


@pytest.mark.parametrize("legacy", [False, True])
def test_from_object_torch_capsule(legacy):
    t = torch.arange(5.0)
    cap = torch.utils.dlpack.to_dlpack(t) if legacy else t.__dlpack__(max_version=(1, 0))
    b = Buffer.from_object(cap)
    assert b.ptr == t.data_ptr()
    np.testing.assert_array_equal(np.asarray(b), t.numpy())


def test_round_trip_torch_buffer_torch():
    t0 = torch.arange(12.0).reshape(3, 4)[:, 1::2]
    t1 = torch.from_dlpack(Buffer.from_object(t0))
    assert t1.data_ptr() == t0.data_ptr()
    assert t1.stride() == t0.stride()
    assert torch.equal(t0, t1)


def test_from_object_torch_keeps_storage_alive(collect):
    # numpy owner -> torch.from_numpy -> Buffer -> np.asarray: the NumPy array
    # lives exactly as long as the last of them.
    arr = np.arange(5.0)
    r_owner = weakref.ref(arr)
    t = torch.from_numpy(arr)
    r_tensor = weakref.ref(t)  # torch tensors are weakref-able
    b = Buffer.from_object(t)
    del arr, t
    collect()
    # torch keeps the Python tensor object alive while its C++ tensor is
    # referenced (the DLPack capsule's), so both weakrefs live.
    assert r_owner() is not None
    assert r_tensor() is not None
    v = np.asarray(b)
    del b
    collect()
    assert r_owner() is not None
    assert v[4] == 4.0
    del v
    collect()
    assert r_tensor() is None
    assert r_owner() is None


def test_from_object_torch_requires_grad():
    with pytest.raises(BufferError, match="gradient"):
        Buffer.from_object(torch.ones(3, requires_grad=True))
    b = Buffer.from_object(torch.ones(3, requires_grad=True).detach())
    assert b.shape == (3,)


@needs_cxx_throw
def test_from_object_torch_refused_layouts_and_devices():
    with pytest.raises(BufferError):
        Buffer.from_object(torch.eye(3).to_sparse())
    with pytest.raises(BufferError):
        Buffer.from_object(torch.empty(3, device="meta"))


def test_from_object_torch_conjugate_bit():
    z = torch.tensor([1 + 2j, 3 - 4j])
    with pytest.raises(BufferError, match="conjugate"):
        Buffer.from_object(z.conj())
    v = np.asarray(Buffer.from_object(z.conj().resolve_conj()))
    np.testing.assert_array_equal(v, [1 - 2j, 3 + 4j])


def test_from_object_torch_negative_bit():
    # z.conj().imag is a lazily negated view of z's imaginary parts; torch's
    # __dlpack__ exports the memory as is (np.from_dlpack reads +2, +(-4)).
    z = torch.tensor([1 + 2j, 3 - 4j])
    im = z.conj().imag
    assert im.is_neg()
    with pytest.raises(BufferError, match="negative bit"):
        Buffer.from_object(im)
    v = np.asarray(Buffer.from_object(im.resolve_neg()))
    np.testing.assert_array_equal(v, [-2.0, 4.0])


def test_lazy_view_check_ignores_non_callables_and_propagates_errors():
    a = np.arange(3.0)

    class Prod:
        is_neg = True  # not callable: not torch's flag

        def __dlpack__(self, **kw):
            return make_buffer(a).__dlpack__(**kw)

        def __dlpack_device__(self):
            return (1, 0)

    np.testing.assert_array_equal(np.asarray(Buffer.from_object(Prod())), a)

    class Broken(Prod):
        def is_conj(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        Buffer.from_object(Broken())


def test_lazy_view_check_cuda_array_interface():
    # torch's __cuda_array_interface__ checks neither bit: the CAI path
    # refuses them too (no CUDA here: a producer with torch's methods).
    class Cai:
        def __init__(self, neg):
            self.neg = neg
            self.__cuda_array_interface__ = {
                "shape": (2,),
                "typestr": "<f4",
                "data": (4096, False),
                "version": 3,
                "stream": None,
            }

        def is_conj(self):
            return False

        def is_neg(self):
            return self.neg

    with pytest.raises(BufferError, match="negative bit"):
        Buffer.from_object(Cai(True))
    b = Buffer.from_object(Cai(False))
    assert b.device[0] == DeviceType.CUDA
    assert dfbuffer.Buffer.from_object(b) is b
