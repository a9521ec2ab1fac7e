"""Lifetime of a Buffer's owner through every export (weakref + gc)."""

from __future__ import annotations

import gc
import os
import pickle
import sys
import weakref

import numpy as np
import pytest
from child_processes import ChildProcess
from export_helpers import Owner, PyBUF_WRITABLE, consume, get_buffer, make_buffer


def new_owner() -> tuple[Owner, weakref.ref]:
    owner = Owner(np.arange(64, dtype="f8"))
    return owner, weakref.ref(owner)


def export_ndarray(buf):
    return np.asarray(buf)


def export_array_method(buf):
    return buf.__array__()


def export_memoryview(buf):
    return memoryview(buf)


def export_capsule(buf):
    return buf.__dlpack__(max_version=(1, 0))


def export_legacy_capsule(buf):
    return buf.__dlpack__()


def export_copy_capsule(buf):
    return buf.__dlpack__(max_version=(1, 0), copy=True)


def export_from_dlpack(buf):
    return np.from_dlpack(buf)


# The consumers below are module-level classes holding the Buffer on the instance, not
# classes made per call that hold it in a class attribute: on free-threaded CPython 3.13,
# once a thread other than the main one has been started, every class and top-level function
# made from then on is immortal (CPython gh-117783: objects meant for deferred reference
# counting, which 3.14 implements), so a per-call class kept its Buffer, and the owner,
# forever.  These tests failed with "owner
# leaked" on 3.13t when they ran after the first test that starts a thread
# (test_dlpack_export.py's test_deleter_runs_on_another_thread_without_gil, the first in
# file order); a reproducer without dfbuffer or NumPy:
#     import gc, threading, weakref
#     class Owner: pass
#     def make(owner):
#         class C:
#             keep = owner
#         return C()
#     threading.Thread(target=str).start()  # comment out: freed
#     o = Owner(); r = weakref.ref(o); x = make(o); del o, x; gc.collect()
#     assert r() is not None  # 3.13t: C is immortal, and holds the owner
class LegacyProducer:
    """A producer that only speaks the old __dlpack__ signature."""

    def __init__(self, buf):
        self.buf = buf

    def __dlpack__(self, stream=None):
        return self.buf.__dlpack__()

    def __dlpack_device__(self):
        return self.buf.__dlpack_device__()


class InterfaceConsumer:
    """An object re-exporting a Buffer's __array_interface__, holding the Buffer."""

    def __init__(self, buf):
        self.__array_interface__ = buf.__array_interface__
        self.keep = buf


def export_from_legacy_dlpack(buf):
    return np.from_dlpack(LegacyProducer(buf))


def export_pickle_oob(buf):
    buffers = []
    data = pickle.dumps(buf, protocol=5, buffer_callback=buffers.append)
    return pickle.loads(data, buffers=buffers)


def export_pickle_oob_strided(buf):
    # non-contiguous: the pickle carries a copy, so the owner is NOT kept alive
    return export_pickle_oob(buf)


def export_array_interface_consumer(buf):
    return np.asarray(InterfaceConsumer(buf))


KEEPS_ALIVE = [
    export_ndarray,
    export_array_method,
    export_memoryview,
    export_capsule,
    export_legacy_capsule,
    export_from_dlpack,
    export_from_legacy_dlpack,
    export_pickle_oob,
    export_array_interface_consumer,
]


@pytest.mark.parametrize("export", KEEPS_ALIVE)
def test_owner_lives_as_long_as_export(export):
    owner, ref = new_owner()
    buf = make_buffer(owner.arr, owner=owner)
    out = export(buf)
    del owner, buf
    gc.collect()
    assert ref() is not None, "export does not keep the owner alive"
    if isinstance(out, np.ndarray):
        assert out.sum() == np.arange(64).sum()  # memory still valid
    del out
    gc.collect()
    assert ref() is None, "owner leaked"


@pytest.mark.parametrize("export", [export_copy_capsule, export_pickle_oob_strided])
def test_copies_release_the_owner(export):
    owner, ref = new_owner()
    buf = make_buffer(owner.arr[::2], owner=owner)
    out = export(buf)
    del owner, buf
    gc.collect()
    assert ref() is None
    del out


def test_owner_lives_as_long_as_buffer():
    owner, ref = new_owner()
    buf = make_buffer(owner.arr, owner=owner)
    del owner
    gc.collect()
    assert ref() is not None
    del buf
    gc.collect()
    assert ref() is None


def test_last_of_several_exports():
    owner, ref = new_owner()
    buf = make_buffer(owner.arr, owner=owner)
    exports = [f(buf) for f in KEEPS_ALIVE]
    del owner, buf
    while exports:
        gc.collect()
        assert ref() is not None
        exports.pop(0)
    gc.collect()
    assert ref() is None


def test_consumed_capsule_keeps_owner_until_deleter():
    import ctypes

    owner, ref = new_owner()
    buf = make_buffer(owner.arr, owner=owner)
    cap = buf.__dlpack__(max_version=(1, 0))
    m, deleter = consume(cap)
    del cap, buf, owner
    gc.collect()
    assert ref() is not None
    deleter(ctypes.addressof(m))
    gc.collect()
    assert ref() is None


# Only exports the cycle collector can traverse: NumPy arrays do not traverse their
# `base`, and capsules hide their pointer, so cycles through those stay uncollectable
# (a NumPy / CPython limitation, the same for any producer).
@pytest.mark.parametrize("export", [None, export_memoryview, export_pickle_oob])
def test_reference_cycle_through_owner_is_collected(export, collect):
    owner, ref = new_owner()
    buf = make_buffer(owner.arr, owner=owner)
    owner.buf = buf  # owner -> Buffer -> owner
    if export is not None:
        owner.export = export(buf)  # owner -> export -> Buffer -> owner
    del owner, buf
    collect()
    assert ref() is None


REFCOUNT_LOOPS = [
    ("dlpack", lambda b: b.__dlpack__(max_version=(1, 0))),
    ("dlpack-legacy", lambda b: b.__dlpack__()),
    ("from_dlpack", np.from_dlpack),
    ("asarray", np.asarray),
    ("__array__", lambda b: b.__array__()),
    ("memoryview", memoryview),
    ("array_interface", lambda b: b.__array_interface__),
    ("pickle5", lambda b: pickle.loads(pickle.dumps(b, 5))),
    ("pickle5-oob", export_pickle_oob),
    ("pickle2", lambda b: pickle.loads(pickle.dumps(b, 2))),
]


@pytest.mark.parametrize(("name", "fn"), REFCOUNT_LOOPS, ids=[n for n, _ in REFCOUNT_LOOPS])
def test_refcount_unchanged_after_loops(name, fn):
    owner = np.arange(16, dtype="f8")
    buf = make_buffer(owner)
    for _ in range(100):  # warm caches
        fn(buf)
    gc.collect()
    before_owner = sys.getrefcount(owner)
    before_buf = sys.getrefcount(buf)
    n = 2_000 if name.startswith("pickle") else 20_000
    for _ in range(n):
        fn(buf)
    gc.collect()
    assert sys.getrefcount(owner) == before_owner
    assert sys.getrefcount(buf) == before_buf


def test_refcount_unchanged_after_refused_exports():
    owner = np.arange(16, dtype="f8")
    owner.flags.writeable = False
    buf = make_buffer(owner)
    before = sys.getrefcount(buf)
    for _ in range(2_000):
        for call in (
            lambda: buf.__dlpack__(),
            lambda: buf.__dlpack__(stream=1),
            lambda: buf.__dlpack__(max_version=(1, 0), dl_device=(2, 0)),
        ):
            with pytest.raises(BufferError):
                call()
        with pytest.raises(BufferError):
            get_buffer(buf, PyBUF_WRITABLE)
    gc.collect()
    assert sys.getrefcount(buf) == before


FINALIZE_SCRIPT = r"""
import ctypes, os, sys, threading
import numpy as np
sys.path.insert(0, {tests!r})
from export_helpers import Owner, consume, make_buffer

class Loud(Owner):
    def __del__(self, _w=os.write):
        _w(1, b"owner freed\n")

owner = Loud(np.arange(8.0))
buf = make_buffer(owner.arr, owner=owner)
# unconsumed capsules alive until the interpreter clears __main__ at exit
cap_v = buf.__dlpack__(max_version=(1, 0))
cap_l = buf.__dlpack__()
if {with_thread}:
    # a consumed tensor whose deleter runs on a daemon thread racing with exit
    cap_t = buf.__dlpack__(max_version=(1, 0))
    m, deleter = consume(cap_t)
    go = threading.Event()
    def late():
        go.wait()
        deleter(ctypes.addressof(m))
    t = threading.Thread(target=late, daemon=True)
    t.start()
    import atexit
    atexit.register(go.set)
del owner, buf
print("exiting", flush=True)
"""


def _finalize_job(with_thread: bool) -> ChildProcess:
    """The child process of test_deleters_at_interpreter_exit (tests/child_processes.py)."""
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = FINALIZE_SCRIPT.format(tests=tests, with_thread=with_thread)
    return ChildProcess.python(code)


_FINALIZE = {with_thread: _finalize_job(with_thread) for with_thread in (False, True)}


@pytest.mark.child_process(*_FINALIZE.values())
@pytest.mark.parametrize("with_thread", [False, True])
def test_deleters_at_interpreter_exit(with_thread):
    r = _FINALIZE[with_thread].result()
    assert r.returncode == 0, r.stderr
    assert "exiting" in r.stdout
    assert "Fatal" not in r.stderr and "Error" not in r.stderr, r.stderr
    # Whether "owner freed" appears depends on the Python version: 3.11 marks the
    # interpreter uninitialized before the last destructors run, and the deleter then
    # leaks its reference on purpose instead of touching a dying interpreter.
