"""Conformance checks for DataFrame interchange protocol producers.

``check_buffer``, ``check_column`` and ``check_dataframe`` run the producer
requirements of ``docs/requirements.md`` (IDs ``P-n``) against any object
that claims to implement the protocol, plus, for :class:`dfbuffer.Buffer`
objects, the library guarantees that can be checked at run time (``L-n``).
They return a :class:`Report` and never raise on a broken producer: every
check catches everything and records it as a failure with the exception
text.  ``assert_conformant`` is the pytest-friendly wrapper.

Memory is read only where it is safe to do so: host memory (CPU, CUDA host,
ROCm host, CUDA managed), a buffer that passed the pointer and size checks,
and never a byte beyond ``bufsize``.

The dtype and Arrow format checks below read format strings themselves on
purpose: they are an independent oracle for the C core's type table
(src/core/types.c, ``dfbuffer._interchange._arrow_type``), which the rest of
the package uses, so a mistake in the table cannot hide from them.
"""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
import math
import re
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from dfbuffer._interchange import (
    Buffer,
    ColumnNullType,
    DeviceType,
    DtypeKind,
    _host_readable,
    buffer_to_ndarray,
)

__all__ = [
    "Report",
    "assert_conformant",
    "check_buffer",
    "check_column",
    "check_dataframe",
]

# The interchange protocol's enums, dfbuffer's IntEnums (producers use their own IntEnum
# classes or plain ints; only the values matter, and IntEnum members compare as ints).
INT, UINT, FLOAT = DtypeKind.INT, DtypeKind.UINT, DtypeKind.FLOAT
BOOL, STRING, DATETIME, CATEGORICAL = (
    DtypeKind.BOOL, DtypeKind.STRING, DtypeKind.DATETIME, DtypeKind.CATEGORICAL
)
DTYPE_KINDS = set(DtypeKind)
NON_NULLABLE, USE_NAN, USE_SENTINEL = (
    ColumnNullType.NON_NULLABLE, ColumnNullType.USE_NAN, ColumnNullType.USE_SENTINEL
)
USE_BITMASK, USE_BYTEMASK = ColumnNullType.USE_BITMASK, ColumnNullType.USE_BYTEMASK
NULL_KINDS = set(ColumnNullType)
# DLPack device types (dlpack.h 1.x).
DEVICE_TYPES = set(DeviceType)
# the devices whose memory the host reads: the extension's one predicate
HOST_DEVICES = {t for t in DeviceType if _host_readable(t)}

_INT_FORMATS = {8: "c", 16: "s", 32: "i", 64: "l"}
_UINT_FORMATS = {8: "C", 16: "S", 32: "I", 64: "L"}
_FLOAT_FORMATS = {16: "e", 32: "f", 64: "g"}
_DATETIME_RE = re.compile(r"^(tdD|tdm|ts[smun]:.*|tD[smun]|tt[smun])$")
_MAX_ADDRESS = 2 ** (8 * ctypes.sizeof(ctypes.c_void_p))
# Reading validity / values to count nulls is skipped above this many
# elements (the checks stay cheap on big producers).
_MAX_SCAN = 1 << 24


@dataclasses.dataclass
class Report:
    """The outcome of a conformance check.

    The check functions make it; ``str()`` gives a readable summary.

    Parameters
    ----------
    subject : str
        What was checked (``"dataframe PandasDataFrameXchg"``).
    passed : list of str
        The requirement IDs that were checked and never failed.
    failed : list of (str, str)
        ``(id, message)`` pairs; an ID may fail several times, e.g. once
        per column.
    skipped : list of (str, str)
        ``(id, reason)`` for checks that could not run (device memory, a
        feature the object lacks).

    Examples
    --------
    >>> import numpy as np
    >>> import dfbuffer
    >>> from dfbuffer.testing import check_buffer
    >>> report = check_buffer(dfbuffer.Buffer.from_object(np.arange(3)))
    >>> report.ok, report.failed_ids, "P-1" in report.passed
    (True, [], True)
    """

    subject: str = ""
    passed: list[str] = dataclasses.field(default_factory=list)
    failed: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    skipped: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no requirement failed."""
        return not self.failed

    @property
    def failed_ids(self) -> list[str]:
        """The distinct IDs that failed, in requirement order."""
        return _sort_ids({rid for rid, _ in self.failed})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict of the report."""
        return {
            "subject": self.subject,
            "ok": self.ok,
            "passed": list(self.passed),
            "failed": [list(f) for f in self.failed],
            "skipped": [list(s) for s in self.skipped],
        }

    def __str__(self) -> str:
        head = f"{self.subject or 'object'}: "
        if self.ok:
            head += f"conformant ({len(self.passed)} requirements passed"
            if self.skipped:
                head += f", {len(self.skipped)} skipped"
            return head + ")"
        lines = [
            head + f"{len(self.failed_ids)} requirement(s) failed "
            f"({', '.join(self.failed_ids)}); {len(self.passed)} passed"
        ]
        for rid, msg in self.failed:
            lines.append(f"  {rid}: {msg}")
        return "\n".join(lines)


def _id_key(rid: str) -> tuple[int, int]:
    prefix, _, num = rid.partition("-")
    return ("PCL".find(prefix[:1]), int(num) if num.isdigit() else 0)


def _sort_ids(ids: Any) -> list[str]:
    return sorted(ids, key=_id_key)


_ERR = object()  # what _Checker.run returns after an exception


class _Checker:
    """Accumulates results; `run` executes one check and never raises."""

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self.checked: set[str] = set()
        self.failed: list[tuple[str, str]] = []
        self.skipped: list[tuple[str, str]] = []

    def fail(self, rid: str, msg: str) -> None:
        self.checked.add(rid)
        self.failed.append((rid, msg))

    def ok(self, rid: str) -> None:
        self.checked.add(rid)

    def skip(self, rid: str, reason: str) -> None:
        self.skipped.append((rid, reason))

    def expect(self, rid: str, cond: bool, msg: str) -> bool:
        if cond:
            self.ok(rid)
        else:
            self.fail(rid, msg)
        return bool(cond)

    def run(self, rid: str, fn: Callable[[], Any], where: str = "") -> Any:
        """Call fn(); on an exception record rid as failed.  Returns fn's
        result, or _ERR after an exception."""
        try:
            return fn()
        except Exception as exc:  # a broken producer must never crash us
            self.fail(rid, f"{where}{type(exc).__name__}: {exc}")
            return _ERR

    def merge(self, other: Report, where: str) -> None:
        self.checked.update(other.passed)
        for rid, msg in other.failed:
            self.failed.append((rid, f"{where}{msg}"))
        for rid, msg in other.skipped:
            self.skipped.append((rid, f"{where}{msg}"))

    def report(self) -> Report:
        bad = {rid for rid, _ in self.failed}
        return Report(
            subject=self.subject,
            passed=_sort_ids(self.checked - bad),
            failed=list(self.failed),
            skipped=list(self.skipped),
        )


def _has(obj: Any, name: str) -> bool:
    """hasattr that survives objects whose __getattr__ raises anything."""
    try:
        return hasattr(obj, name)
    except Exception:
        return False


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _describe(obj: Any) -> str:
    if isinstance(obj, _Snap):
        obj = obj.obj
    return type(obj).__qualname__


class _Snap:
    """One interchange buffer with its ``ptr``, ``bufsize`` and
    ``__dlpack_device__()`` read exactly once, when it is first met.

    Every check and every memory read goes through this snapshot, never
    through the producer again: a producer whose ``bufsize`` changes between
    reads cannot make the kit read beyond what it checked.  Other attributes
    (``__dlpack__``, ...) are the producer's own.  ``size_failed`` is set when
    a size requirement (P-18, P-20, P-23) failed: such a buffer is never
    read."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self.size_failed = False
        self._ptr = self._get(lambda: obj.ptr)
        self._bufsize = self._get(lambda: obj.bufsize)
        self._device = self._get(lambda: obj.__dlpack_device__())

    @staticmethod
    def of(obj: Any) -> _Snap:
        return obj if isinstance(obj, _Snap) else _Snap(obj)

    @staticmethod
    def _get(fn: Callable[[], Any]) -> tuple[bool, Any]:
        try:
            return True, fn()
        except Exception as exc:
            return False, exc

    @staticmethod
    def _give(v: tuple[bool, Any]) -> Any:
        if not v[0]:
            raise v[1]
        return v[1]

    @property
    def ptr(self) -> Any:
        return self._give(self._ptr)

    @property
    def bufsize(self) -> Any:
        return self._give(self._bufsize)

    def __dlpack_device__(self) -> Any:
        return self._give(self._device)

    def __getattr__(self, name: str) -> Any:
        if name in ("ptr", "bufsize", "__dlpack_device__", "obj", "size_failed"):
            raise AttributeError(name)  # never a second read of the producer
        return getattr(self.obj, name)


# ---------------------------------------------------------------------------
# Reading host memory safely
# ---------------------------------------------------------------------------


def _device_of(buf: Any) -> tuple[int, int] | None:
    try:
        dev = buf.__dlpack_device__()
        return int(dev[0]), (0 if dev[1] is None else int(dev[1]))
    except Exception:
        return None


def _buffer_sane(buf: Any) -> bool:
    """True when buf's ptr/bufsize/device passed P-1..P-4 (safe to read)."""
    try:
        ptr, size = buf.ptr, buf.bufsize
    except Exception:
        return False
    if not (_is_int(ptr) and _is_int(size)) or ptr < 0 or size < 0:
        return False
    if size > 0 and ptr == 0:
        return False
    if int(ptr) + int(size) > _MAX_ADDRESS:
        return False
    return _device_of(buf) is not None


def _read(buf: Any, dtype: Any, start: int, count: int) -> np.ndarray | None:
    """Returns a copy of elements [start, start+count) of `dtype` in buf, or
    None when the buffer is not host memory or the range is not entirely
    inside [ptr, ptr + bufsize).  Never touches a byte outside that range."""
    dt = np.dtype(dtype)
    if isinstance(buf, _Snap) and buf.size_failed:
        return None  # its size check failed: never read it
    if not _buffer_sane(buf) or count < 0 or start < 0:
        return None
    dev = _device_of(buf)
    if dev is None or dev[0] not in HOST_DEVICES:
        return None
    nbytes = (start + count) * dt.itemsize
    if nbytes > int(buf.bufsize):
        return None
    if count == 0:
        return np.empty(0, dtype=dt)
    try:
        arr = buffer_to_ndarray(buf, dt)
        if (
            isinstance(arr, np.ndarray)
            and arr.ndim == 1
            and arr.dtype == dt
            and arr.shape[0] >= start + count
            and arr.shape[0] * dt.itemsize <= int(buf.bufsize)
            and arr.ctypes.data == int(buf.ptr)
        ):
            return arr[start : start + count].copy()
    except Exception:
        pass
    raw = (ctypes.c_char * nbytes).from_address(int(buf.ptr))
    view = np.frombuffer(raw, dtype=dt, count=start + count)
    return view[start:].copy()


# ---------------------------------------------------------------------------
# Buffers
# ---------------------------------------------------------------------------


def _check_buffer_into(ck: _Checker, buf: Any) -> None:
    """P-1..P-5 (and L-n for dfbuffer Buffers) on `buf`, into `ck`."""
    buf = _Snap.of(buf)
    ptr = ck.run("P-1", lambda: buf.ptr)
    if ptr is not _ERR:
        ck.expect(
            "P-1",
            _is_int(ptr) and 0 <= ptr < _MAX_ADDRESS,
            f"ptr must be an int in [0, 2**{8 * ctypes.sizeof(ctypes.c_void_p)}), got {ptr!r}",
        )
    size = ck.run("P-2", lambda: buf.bufsize)
    if size is not _ERR:
        ok = _is_int(size) and size >= 0
        if ok and _is_int(ptr) and ptr >= 0 and int(ptr) + int(size) > _MAX_ADDRESS:
            ck.fail("P-2", f"ptr + bufsize ({ptr} + {size}) overflows the address space")
        else:
            ck.expect("P-2", ok, f"bufsize must be an int >= 0, got {size!r}")

    def dev_check() -> None:
        if not hasattr(buf, "__dlpack_device__"):
            ck.fail("P-3", "__dlpack_device__ is missing")
            return
        dev = buf.__dlpack_device__()
        if not isinstance(dev, tuple) or len(dev) != 2:
            ck.fail("P-3", f"__dlpack_device__() must return a 2-tuple, got {dev!r}")
            return
        t, i = dev
        if not _is_int(t) or int(t) not in DEVICE_TYPES:
            ck.fail("P-3", f"device type {t!r} is not a DLPack device type")
        elif not (i is None or (_is_int(i) and i >= 0)):
            ck.fail("P-3", f"device id must be an int >= 0 or None, got {i!r}")
        else:
            ck.ok("P-3")

    ck.run("P-3", dev_check)
    if _is_int(ptr) and _is_int(size):
        ck.expect(
            "P-4",
            not (size > 0 and ptr == 0),
            f"a NULL ptr cannot describe {size} bytes",
        )
    ck.run("P-5", lambda: _check_dlpack_within(ck, buf), "__dlpack__: ")
    try:
        is_ours = isinstance(buf.obj, Buffer)
    except Exception:
        is_ours = False
    if is_ours:
        _check_dfbuffer_buffer(ck, buf.obj)  # immutable: safe to re-read


class _DLPackOnly:
    """Presents a producer's capsule to numpy.from_dlpack, whatever keywords
    the producer's __dlpack__ accepts."""

    def __init__(self, buf: Any) -> None:
        self._buf = buf

    def __dlpack__(self, **kwargs: Any) -> Any:
        try:
            return self._buf.__dlpack__(**kwargs)
        except TypeError:
            return self._buf.__dlpack__()

    def __dlpack_device__(self) -> Any:
        t, i = self._buf.__dlpack_device__()
        return (int(t), 0 if i is None else int(i))


def _check_dlpack_within(ck: _Checker, buf: Any) -> None:
    """P-5: a DLPack export must lie within [ptr, ptr + bufsize)."""
    if not hasattr(buf, "__dlpack__"):
        ck.skip("P-5", "no __dlpack__")
        return
    dev = _device_of(buf)
    if dev is None or dev[0] != 1 or not _buffer_sane(buf):
        ck.skip("P-5", "not a sane CPU buffer")
        return
    try:
        arr = np.from_dlpack(_DLPackOnly(buf))
    except (NotImplementedError, BufferError) as exc:
        ck.skip("P-5", f"producer does not export DLPack ({type(exc).__name__})")
        return
    ptr, size = int(buf.ptr), int(buf.bufsize)
    if arr.size == 0:
        ck.ok("P-5")
        return
    lo = arr.ctypes.data + sum(
        (n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True) if s < 0
    )
    hi = (
        arr.ctypes.data
        + arr.itemsize
        + sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True) if s > 0)
    )
    ck.expect(
        "P-5",
        ptr <= lo and hi <= ptr + size,
        f"the DLPack tensor spans [{lo:#x}, {hi:#x}), outside the buffer "
        f"[{ptr:#x}, {ptr + size:#x})",
    )


def _check_dfbuffer_buffer(ck: _Checker, buf: Any) -> None:
    """The L-requirements a dfbuffer.Buffer can be checked for at run time."""
    ck.expect("L-1", buf.owner is not None, "Buffer.owner is None (cleared)")
    shape, strides, itemsize = tuple(buf.shape), tuple(buf.strides), buf.itemsize
    ptr, size = int(buf.ptr), int(buf.bufsize)
    nelem = math.prod(shape)
    neg = sum((n - 1) * -s for n, s in zip(shape, strides, strict=True) if s < 0) if nelem else 0
    data = ptr + neg
    if nelem:
        pos = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)
        ck.expect(
            "L-6",
            neg + pos + itemsize <= size and (ptr != 0),
            f"elements span {neg + pos + itemsize} bytes from ptr, bufsize is {size}",
        )
    else:
        ck.ok("L-6")
    host = int(buf.device[0]) in HOST_DEVICES
    views: dict[str, Callable[[], np.ndarray]] = {
        "__dlpack__": lambda: np.from_dlpack(buf),
        "__array_interface__": lambda: np.asarray(_AIOnly(buf.__array_interface__)),
        "buffer protocol": lambda: np.asarray(memoryview(buf)),
    }
    if not host:
        _check_device_refusal(ck, buf)
        return
    for name, make in views.items():
        try:
            arr = make()
        except (NotImplementedError, AttributeError, BufferError) as exc:
            # Not built yet, or a documented refusal (a dtype the protocol
            # cannot express): BufferError is the protocol's way to say no.
            ck.skip("L-5", f"{name} not available ({type(exc).__name__}: {exc})")
            continue
        except Exception as exc:
            ck.fail("L-5", f"{name} export failed: {type(exc).__name__}: {exc}")
            continue
        if arr.dtype.itemsize != itemsize or arr.shape != shape:
            ck.fail("L-5", f"{name} gives shape {arr.shape}, Buffer has {shape}")
        elif nelem and arr.ctypes.data != data:
            ck.fail(
                "L-5",
                f"{name} gives address {arr.ctypes.data:#x}, element 0 is at {data:#x}",
            )
        elif nelem > 1 and any(
            n > 1 and a != b for n, a, b in zip(shape, arr.strides, strides, strict=True)
        ):
            ck.fail("L-5", f"{name} gives strides {arr.strides}, Buffer has {strides}")
        else:
            ck.ok("L-5")
        if name == "buffer protocol":
            ck.expect(
                "L-8",
                memoryview(buf).readonly == bool(buf.readonly),
                "memoryview(buf).readonly disagrees with Buffer.readonly",
            )
        elif buf.readonly:
            ck.expect(
                "L-8",
                not arr.flags.writeable,
                f"{name} gives a writeable view of read-only memory",
            )


class _AIOnly:
    def __init__(self, ai: dict[str, Any]) -> None:
        self.__array_interface__ = ai


def _check_device_refusal(ck: _Checker, buf: Any) -> None:
    """L-2: device memory refuses every host access path."""
    try:
        _ = buf.__array_interface__
        ck.fail("L-2", "__array_interface__ served for device memory")
    except AttributeError:
        ck.ok("L-2")
    except Exception as exc:
        ck.fail("L-2", f"__array_interface__ raised {type(exc).__name__}, not AttributeError")
    try:
        memoryview(buf)
        ck.fail("L-2", "the buffer protocol served device memory")
    except BufferError:
        ck.ok("L-2")
    except Exception as exc:
        ck.fail("L-2", f"memoryview raised {type(exc).__name__}, not BufferError")
    try:
        np.asarray(buf)
        ck.fail("L-2", "numpy.asarray gave an array for device memory")
    except (TypeError, BufferError):
        ck.ok("L-2")
    except Exception as exc:
        ck.fail("L-2", f"numpy.asarray raised {type(exc).__name__}")


def check_buffer(obj: Any) -> Report:
    """Check an interchange-protocol Buffer (P-1..P-5; L-n for dfbuffer.Buffer).

    Parameters
    ----------
    obj : object
        An interchange Buffer (``ptr``, ``bufsize``, ``__dlpack_device__``),
        e.g. from a column's ``get_buffers()``, or a :class:`dfbuffer.Buffer`
        (then the run-time L-requirements are checked too).

    Returns
    -------
    Report
        The buffer's requirements: passed, failed (with messages), skipped.

    Raises
    ------
    Nothing: a bad pointer, size or device is a failure in the report.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from dfbuffer.testing import check_buffer
    >>> col = pa.table({"x": [1, 2]}).__dataframe__().get_column(0)
    >>> check_buffer(col.get_buffers()["data"][0]).ok
    True
    """
    ck = _Checker(f"buffer {_describe(obj)}")
    try:
        _check_buffer_into(ck, obj)
    except Exception as exc:  # pragma: no cover - defensive
        ck.fail("P-1", f"unexpected {type(exc).__name__}: {exc}")
    return ck.report()


# ---------------------------------------------------------------------------
# Dtypes
# ---------------------------------------------------------------------------


def _dtype_problem(dt: Any) -> str | None:
    """Returns why `dt` is not a well-formed interchange dtype, or None."""
    if not isinstance(dt, tuple) or len(dt) != 4:
        return f"dtype must be a 4-tuple (kind, bit_width, format, endianness), got {dt!r}"
    kind, bits, fmt, endian = dt
    if not _is_int(kind) or int(kind) not in DTYPE_KINDS:
        return f"kind {kind!r} is not a DtypeKind"
    if not _is_int(bits):
        return f"bit_width must be an int, got {bits!r}"
    if not isinstance(fmt, str):
        return f"format must be a str, got {fmt!r}"
    if not isinstance(endian, str) or endian not in ("=", "<", ">", "|"):
        return f"endianness must be one of '=<>|', got {endian!r}"
    kind, bits = int(kind), int(bits)
    tables: dict[int, dict[int, str]] = {
        INT: _INT_FORMATS, UINT: _UINT_FORMATS, FLOAT: _FLOAT_FORMATS
    }
    if kind in tables:
        if bits not in tables[kind]:
            return f"bit_width {bits} is not valid for kind {kind}"
        if fmt != tables[kind][bits]:
            return f"format {fmt!r} does not match kind {kind} with {bits} bits"
    elif kind == BOOL:
        if bits not in (1, 8):
            return f"a BOOL is 1 (bit-packed) or 8 bits wide, not {bits}"
        if fmt != "b":
            return f"format {fmt!r} is not 'b' for BOOL"
    elif kind == STRING:
        if bits != 8:
            return f"a STRING's bit_width is 8, not {bits}"
        if fmt not in ("u", "U"):
            return f"format {fmt!r} is not 'u' or 'U' for STRING"
    elif kind == DATETIME:
        if not _DATETIME_RE.match(fmt):
            return f"format {fmt!r} is not an Arrow temporal format"
        want = 32 if fmt in ("tdD", "tts", "ttm") else 64
        if bits != want:
            return f"format {fmt!r} stores {want}-bit values, bit_width says {bits}"
    elif kind == CATEGORICAL:
        if bits not in (8, 16, 32, 64):
            return f"a CATEGORICAL's bit_width (codes) must be 8..64, not {bits}"
        if fmt not in (_INT_FORMATS[bits], _UINT_FORMATS[bits]):
            return f"format {fmt!r} is not the {bits}-bit integer format of the codes"
    return None


def _np_dtype(dt: tuple[Any, ...]) -> np.dtype[Any] | None:
    """NumPy dtype of one stored value of a well-formed interchange dtype
    (None for bit-packed, strings)."""
    kind, bits, endian = int(dt[0]), int(dt[1]), dt[3]
    order = {"=": "=", "|": "=", "<": "<", ">": ">"}[endian]
    if kind in (INT, CATEGORICAL, DATETIME):
        return np.dtype(f"{order}i{bits // 8}")
    if kind == UINT:
        return np.dtype(f"{order}u{bits // 8}")
    if kind == FLOAT:
        return np.dtype(f"{order}f{bits // 8}")
    if kind == BOOL and bits == 8:
        return np.dtype("u1")
    return None


# ---------------------------------------------------------------------------
# Columns
# ---------------------------------------------------------------------------


def _check_column_into(ck: _Checker, col: Any, depth: int = 0) -> None:
    size = ck.run("P-10", col.size)
    if size is not _ERR:
        ck.expect("P-10", _is_int(size) and size >= 0, f"size() must be an int >= 0, got {size!r}")
    if not (_is_int(size) and size >= 0):
        size = None
    offset = ck.run("P-11", lambda: col.offset)
    if offset is not _ERR:
        ck.expect(
            "P-11", _is_int(offset) and offset >= 0, f"offset must be an int >= 0, got {offset!r}"
        )
    if not (_is_int(offset) and offset >= 0):
        offset = None
    dtype = ck.run("P-12", lambda: col.dtype)
    dtype_ok = False
    if dtype is not _ERR:
        problem = _dtype_problem(dtype)
        dtype_ok = ck.expect("P-12", problem is None, f"column dtype: {problem}")
    kind = int(dtype[0]) if dtype_ok else None

    null = ck.run("P-13", lambda: col.describe_null)
    null_kind = null_value = None
    if null is not _ERR:
        if not isinstance(null, tuple) or len(null) != 2:
            ck.fail("P-13", f"describe_null must be a 2-tuple, got {null!r}")
        elif not _is_int(null[0]) or int(null[0]) not in NULL_KINDS:
            ck.fail("P-13", f"{null[0]!r} is not a ColumnNullType")
        else:
            nk, nv = int(null[0]), null[1]
            msg = None
            if nk in (USE_BITMASK, USE_BYTEMASK) and not (_is_int(nv) and int(nv) in (0, 1)):
                msg = f"a mask's null value must be 0 or 1, got {nv!r}"
            elif nk == USE_SENTINEL and not _is_int(nv):
                msg = f"a sentinel must be an int, got {nv!r}"
            elif nk == USE_NAN and kind is not None and kind != FLOAT:
                msg = f"USE_NAN on a column of kind {kind} (not FLOAT)"
            if ck.expect("P-13", msg is None, msg or ""):
                null_kind, null_value = nk, (int(nv) if _is_int(nv) else nv)

    null_count = ck.run("P-14", lambda: col.null_count)
    nc_ok = False
    if null_count is not _ERR:
        if null_count is None:
            ck.ok("P-14")
        elif not _is_int(null_count) or null_count < 0 or (size is not None and null_count > size):
            ck.fail("P-14", f"null_count must be None or an int in [0, size()], got {null_count!r}")
        elif null_kind == NON_NULLABLE and null_count != 0:
            ck.fail("P-14", f"NON_NULLABLE column reports null_count {null_count}")
        else:
            nc_ok = True
            ck.ok("P-14")

    meta = ck.run("P-28", lambda: col.metadata)
    if meta is not _ERR:
        ck.expect(
            "P-28",
            isinstance(meta, dict) and all(isinstance(k, str) for k in meta),
            f"Column.metadata must be a dict with str keys, got {_describe(meta)}",
        )

    bufs = ck.run("P-15", col.get_buffers)
    data = validity = offsets = None
    if bufs is _ERR:
        bufs = None
    if bufs is not None:
        if not isinstance(bufs, dict) or not {"data", "validity", "offsets"} <= set(bufs):
            ck.fail(
                "P-15",
                f"get_buffers() must return a dict with keys data, validity, offsets, got {bufs!r}",
            )
        else:
            good = True
            # each buffer's ptr / bufsize / device is read once, here
            snaps: dict[str, Any] = {"data": None, "validity": None, "offsets": None}
            for key in ("data", "validity", "offsets"):
                entry = bufs[key]
                if entry is None and key != "data":
                    continue
                if not isinstance(entry, tuple) or len(entry) != 2:
                    ck.fail(
                        "P-15",
                        f"get_buffers()[{key!r}] must be a (buffer, dtype) pair, got {entry!r}",
                    )
                    good = False
                    continue
                problem = _dtype_problem(entry[1])
                if problem is not None:
                    ck.fail("P-15", f"{key} buffer dtype: {problem}")
                    good = False
                entry = snaps[key] = (_Snap.of(entry[0]), entry[1])
                sub = check_buffer(entry[0])
                ck.merge(sub, f"{key} buffer: ")
                if not sub.ok:
                    good = False
            if good:
                ck.ok("P-15")
                data, validity, offsets = snaps["data"], snaps["validity"], snaps["offsets"]

    n_total = offset + size if offset is not None and size is not None else None

    # P-16: validity present exactly for the mask kinds.
    if null_kind is not None and bufs is not None and isinstance(bufs, dict):
        has_validity = bufs.get("validity") is not None
        if null_kind in (USE_BITMASK, USE_BYTEMASK):
            ck.expect(
                "P-16",
                has_validity,
                "describe_null is a mask but get_buffers()['validity'] is None",
            )
        else:
            ck.expect(
                "P-16",
                not has_validity,
                "get_buffers()['validity'] is present but describe_null is not a mask "
                f"(kind {null_kind})",
            )

    # P-17 / P-18: validity dtype and size.
    if validity is not None and null_kind in (USE_BITMASK, USE_BYTEMASK):
        vbuf, vdt = validity
        vbits = int(vdt[1])
        if null_kind == USE_BITMASK:
            ck.expect(
                "P-17",
                int(vdt[0]) == BOOL and vbits == 1,
                f"a bitmask's dtype must be (BOOL, 1, 'b', ...), got {vdt!r}",
            )
        else:
            ck.expect(
                "P-17",
                int(vdt[0]) in (BOOL, UINT, INT) and vbits == 8,
                f"a bytemask's dtype must be 8 bits wide, got {vdt!r}",
            )
        if n_total is not None and _buffer_sane(vbuf):
            need = -(-n_total // 8) if null_kind == USE_BITMASK else n_total
            if not ck.expect(
                "P-18",
                int(vbuf.bufsize) >= need,
                f"validity holds {vbuf.bufsize} bytes, offset+size={n_total} needs {need}",
            ):
                vbuf.size_failed = True

    # P-19 / P-20: data buffer dtype and size.
    data_np = None
    if data is not None and kind is not None:
        dbuf, ddt = data
        dkind, dbits = int(ddt[0]), int(ddt[1])
        cbits = int(dtype[1])
        if kind == STRING:
            want = dkind == UINT and dbits == 8
            wmsg = "(UINT, 8, 'C', ...)"
        elif kind == DATETIME:
            want = dkind == INT and dbits == cbits
            wmsg = f"(INT, {cbits}, ...)"
        elif kind == CATEGORICAL:
            want = dkind in (INT, UINT) and dbits == cbits
            wmsg = f"an integer of {cbits} bits (the codes)"
        else:
            want = dkind == kind and dbits == cbits
            wmsg = f"the column's own kind and width ({kind}, {cbits})"
        ck.expect("P-19", want, f"the data buffer's dtype must be {wmsg}, got {ddt!r}")
        if kind != STRING and n_total is not None and _buffer_sane(dbuf):
            bits = dbits if want else cbits
            need = -(-(n_total * bits) // 8)
            if not ck.expect(
                "P-20",
                int(dbuf.bufsize) >= need,
                f"data holds {dbuf.bufsize} bytes, offset+size={n_total} of "
                f"{bits} bits needs {need}",
            ):
                dbuf.size_failed = True
            if want:
                data_np = _np_dtype(ddt)

    # P-21 .. P-23: offsets.
    if kind is not None and bufs is not None and isinstance(bufs, dict):
        has_offsets = bufs.get("offsets") is not None
        if kind == STRING:
            ck.expect("P-21", has_offsets, "a STRING column must have an offsets buffer")
        else:
            ck.expect("P-21", not has_offsets, f"a column of kind {kind} must not have offsets")
    if kind == STRING and offsets is not None and n_total is not None:
        obuf, odt = offsets
        okind, obits = int(odt[0]), int(odt[1])
        if okind != INT or obits not in (32, 64):
            ck.fail("P-21", f"offsets must be int32 or int64, got {odt!r}")
        else:
            want_bits = {"u": 32, "U": 64}[dtype[2]]
            ck.expect(
                "P-22",
                obits == want_bits,
                f"format {dtype[2]!r} means {want_bits}-bit offsets, the offsets "
                f"buffer holds {obits}-bit ones",
            )
            if n_total > 0 or offset:
                need = (n_total + 1) * obits // 8
                if not _buffer_sane(obuf) or int(obuf.bufsize) < need:
                    obuf.size_failed = True
                    ck.fail(
                        "P-23",
                        f"offsets hold {getattr(obuf, 'bufsize', '?')} bytes, "
                        f"{n_total + 1} entries need {need}",
                    )
                elif data is not None and n_total <= _MAX_SCAN:
                    offs = _read(obuf, _np_dtype(odt), offset, size + 1)
                    if offs is None:
                        ck.skip("P-23", "offsets not in host memory")
                    else:
                        dsize = int(data[0].bufsize) if _buffer_sane(data[0]) else 0
                        if len(offs) and (offs[0] < 0 or np.any(np.diff(offs) < 0)):
                            ck.fail("P-23", "offsets are negative or decreasing")
                        elif len(offs) and int(offs[-1]) > dsize:
                            ck.fail(
                                "P-23",
                                f"last offset {int(offs[-1])} is beyond the data "
                                f"buffer ({dsize} bytes)",
                            )
                        else:
                            ck.ok("P-23")

    # P-24 / P-25: categoricals.
    if kind is not None:
        _check_categorical(
            ck, col, kind, data, validity, null_kind, null_value, offset, size, depth
        )

    # P-26: null_count agrees with the null representation.
    if (
        nc_ok
        and null_count is not None
        and size is not None
        and offset is not None
        and size <= _MAX_SCAN
    ):
        counted = _count_nulls(data, validity, null_kind, null_value, offset, size, data_np, kind)
        if counted is None:
            ck.skip("P-26", "nulls cannot be counted cheaply here")
        else:
            ck.expect(
                "P-26",
                counted == null_count,
                f"null_count is {null_count} but the {_NULL_NAMES.get(null_kind, '?')} "
                f"marks {counted} nulls",
            )

    # P-27: chunks.
    _check_chunks(ck, col, size, depth)


_NULL_NAMES: dict[int | None, str] = {
    NON_NULLABLE: "column",
    USE_NAN: "NaN data",
    USE_SENTINEL: "sentinel",
    USE_BITMASK: "bitmask",
    USE_BYTEMASK: "bytemask",
}


def _count_nulls(
    data: Any, validity: Any, null_kind: Any, null_value: Any, offset: int, size: int,
    data_np: Any, kind: Any,
) -> int | None:
    """Counts nulls from the buffers, or None when not computable."""
    if null_kind == NON_NULLABLE:
        return 0
    if null_kind in (USE_BITMASK, USE_BYTEMASK):
        if validity is None:
            return None
        vbuf = validity[0]
        if null_kind == USE_BITMASK:
            first, last = offset // 8, -(-(offset + size) // 8)
            raw = _read(vbuf, np.uint8, first, last - first)
            if raw is None:
                return None
            bits = np.unpackbits(raw, bitorder="little")[offset - 8 * first :][:size]
        else:
            raw = _read(vbuf, np.uint8, offset, size)
            if raw is None:
                return None
            bits = (raw != 0).astype(np.uint8)
        return int(np.count_nonzero(bits == null_value))
    if data is None or data_np is None:
        return None
    values = _read(data[0], data_np, offset, size)
    if values is None:
        return None
    if null_kind == USE_NAN:
        return int(np.count_nonzero(np.isnan(values))) if values.dtype.kind == "f" else None
    if null_kind == USE_SENTINEL and values.dtype.kind in "iu":
        return int(np.count_nonzero(values == null_value))
    return None


def _check_categorical(
    ck: _Checker, col: Any, kind: Any, data: Any, validity: Any, null_kind: Any,
    null_value: Any, offset: int, size: int, depth: int,
) -> None:
    if kind != CATEGORICAL:
        try:
            _ = col.describe_categorical
        except TypeError:
            ck.ok("P-24")
        except Exception as exc:
            ck.fail(
                "P-24",
                f"describe_categorical on a non-categorical column raised "
                f"{type(exc).__name__}, not TypeError",
            )
        else:
            ck.fail("P-24", "describe_categorical must raise TypeError on a non-categorical column")
        return
    desc = ck.run("P-24", lambda: col.describe_categorical)
    if desc is _ERR:
        return
    if not isinstance(desc, dict) or not {"is_ordered", "is_dictionary", "categories"} <= set(desc):
        ck.fail(
            "P-24",
            "describe_categorical must be a dict with is_ordered, is_dictionary, "
            f"categories; got {desc!r}",
        )
        return
    if not isinstance(desc["is_ordered"], bool) or not isinstance(desc["is_dictionary"], bool):
        ck.fail("P-24", "is_ordered and is_dictionary must be bools")
        return
    cats = desc["categories"]
    if not desc["is_dictionary"]:
        ck.ok("P-24")
        return
    if cats is None or not _has(cats, "get_buffers"):
        ck.fail("P-24", f"is_dictionary is True but categories is not a Column: {cats!r}")
        return
    ck.ok("P-24")
    if depth < 2:
        ck.merge(_column_report(cats, depth + 1), "categories: ")
    ncat = ck.run("P-24", cats.size, "categories.size(): ")
    if not _is_int(ncat) or data is None or offset is None or size is None or size > _MAX_SCAN:
        return
    np_dt = _np_dtype(data[1]) if _dtype_problem(data[1]) is None else None
    if np_dt is None or np_dt.kind not in "iu":
        return
    codes = _read(data[0], np_dt, offset, size)
    if codes is None:
        ck.skip("P-25", "codes not in host memory or out of the data buffer")
        return
    valid = np.ones(size, dtype=bool)
    if null_kind == USE_SENTINEL:
        valid &= codes != null_value
    elif null_kind in (USE_BITMASK, USE_BYTEMASK) and validity is not None:
        if null_kind == USE_BITMASK:
            first, last = offset // 8, -(-(offset + size) // 8)
            raw = _read(validity[0], np.uint8, first, last - first)
            if raw is not None:
                bits = np.unpackbits(raw, bitorder="little")[offset - 8 * first :][:size]
                valid &= bits != null_value
        else:
            raw = _read(validity[0], np.uint8, offset, size)
            if raw is not None:
                valid &= (raw != 0) != bool(null_value)
    bad = codes[valid & ((codes < 0) | (codes >= ncat))]
    ck.expect(
        "P-25",
        bad.size == 0,
        f"{bad.size} non-null code(s) outside [0, {ncat}), e.g. {bad[:3].tolist()}",
    )


def _check_chunks(ck: _Checker, col: Any, size: int | None, depth: int) -> None:
    n = ck.run("P-27", col.num_chunks)
    if n is _ERR:
        return
    if not _is_int(n) or n < 0 or (n == 0 and size != 0):
        ck.fail("P-27", f"num_chunks() must be an int >= 1 (0 only when empty), got {n!r}")
        return
    chunks = ck.run("P-27", lambda: _take(col.get_chunks(), n + 1), "get_chunks(): ")
    if chunks is _ERR:
        return
    if len(chunks) != n:
        ck.fail("P-27", f"get_chunks() yielded {len(chunks)} chunks, num_chunks() is {n}")
        return
    sizes = ck.run("P-27", lambda: [c.size() for c in chunks], "chunk.size(): ")
    if sizes is _ERR:
        return
    if size is not None and sum(sizes) != size:
        ck.fail("P-27", f"chunk sizes {sizes} sum to {sum(sizes)}, size() is {size}")
        return
    ck.ok("P-27")
    if n > 1 and depth < 2:
        for i, c in enumerate(chunks):
            ck.merge(_column_report(c, depth + 1), f"chunk {i}: ")


def _column_report(col: Any, depth: int) -> Report:
    ck = _Checker(f"column {_describe(col)}")
    try:
        _check_column_into(ck, col, depth)
    except Exception as exc:  # pragma: no cover - defensive
        ck.fail("P-10", f"unexpected {type(exc).__name__}: {exc}")
    return ck.report()


def check_column(col: Any) -> Report:
    """Check an interchange-protocol Column (P-10..P-28, and its buffers).

    Parameters
    ----------
    col : object
        A column of an interchange DataFrame (``get_column(i)``).

    Returns
    -------
    Report
        The requirements of the column and of each of its buffers.

    Raises
    ------
    Nothing: a column method that raises is a failure in the report.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from dfbuffer.testing import check_column
    >>> col = pa.table({"s": ["a", None]}).__dataframe__().get_column(0)
    >>> check_column(col).failed_ids  # pyarrow describes string data as STRING
    ['P-19', 'P-28']
    """
    return _column_report(col, 0)


# ---------------------------------------------------------------------------
# DataFrames
# ---------------------------------------------------------------------------


_MAX_ITEMS = 1 << 16  # a producer yielding more columns or chunks is cut off


def _take(iterable: Any, limit: int) -> list[Any]:
    """At most `limit` items of `iterable` (guards against endless generators)."""
    return list(itertools.islice(iter(iterable), max(0, min(limit, _MAX_ITEMS))))


def _names_of(df: Any) -> list[Any]:
    return _take(df.column_names(), _MAX_ITEMS)


def _check_dataframe_into(ck: _Checker, df: Any, depth: int = 0) -> None:
    ncols = ck.run("P-30", df.num_columns, "num_columns(): ")
    names = ck.run("P-30", lambda: _names_of(df), "column_names(): ")
    if ncols is not _ERR and names is not _ERR:
        if not _is_int(ncols) or ncols < 0:
            ck.fail("P-30", f"num_columns() must be an int >= 0, got {ncols!r}")
        elif ncols != len(names):
            ck.fail("P-30", f"num_columns() is {ncols} but column_names() has {len(names)} names")
        elif not all(isinstance(n, str) for n in names):
            ck.fail("P-30", f"column names must be str, got {names!r}")
        else:
            ck.ok("P-30")
    if names is _ERR or not all(isinstance(n, str) for n in names):
        names = None

    nrows = ck.run("P-31", df.num_rows, "num_rows(): ")
    if nrows is _ERR:
        nrows = None
    elif nrows is not None and not (_is_int(nrows) and nrows >= 0):
        ck.fail("P-31", f"num_rows() must be None or an int >= 0, got {nrows!r}")
        nrows = None
    else:
        ck.ok("P-31")

    meta = ck.run("P-36", lambda: df.metadata, "metadata: ")
    if meta is not _ERR:
        ck.expect(
            "P-36",
            isinstance(meta, dict) and all(isinstance(k, str) for k in meta),
            f"DataFrame.metadata must be a dict with str keys, got {_describe(meta)}",
        )

    limit = len(names) + 1 if names is not None else _MAX_ITEMS
    columns = ck.run("P-32", lambda: _take(df.get_columns(), limit), "get_columns(): ")
    if columns is _ERR:
        columns = None
    if names is not None and columns is not None:
        if len(columns) != len(names):
            ck.fail("P-32", f"get_columns() yielded {len(columns)} columns for {len(names)} names")
            columns = None
        else:
            agree = True
            for i, (name, c) in enumerate(zip(names, columns, strict=True)):
                by_i = ck.run(
                    "P-32", lambda i=i: df.get_column(i), f"get_column({i}): "  # type: ignore[misc]
                )
                by_n = ck.run(
                    "P-32",
                    lambda n=name: df.get_column_by_name(n),  # type: ignore[misc]
                    f"get_column_by_name({name!r}): ",
                )
                if by_i is _ERR or by_n is _ERR:
                    agree = False
                    continue
                sig = [
                    ck.run(
                        "P-32",
                        lambda x=x: (x.size(), tuple(x.dtype)),  # type: ignore[misc]
                        f"column {name!r}: ",
                    )
                    for x in (c, by_i, by_n)
                ]
                if _ERR in sig:
                    agree = False
                elif len(set(sig)) != 1:
                    ck.fail(
                        "P-32",
                        f"column {name!r}: get_columns(), get_column({i}) and "
                        f"get_column_by_name() disagree: {sig}",
                    )
                    agree = False
            if agree:
                ck.ok("P-32")
    if nrows is not None and columns is not None and names is not None:
        sizes = []
        for name, c in zip(names, columns, strict=True):
            try:
                sizes.append((name, c.size()))
            except Exception:
                pass
        wrong = [(n, s) for n, s in sizes if s != nrows]
        ck.expect("P-31", not wrong, f"num_rows() is {nrows} but columns have sizes {wrong}")

    if names:
        idx = list(range(len(names)))[::-1][:2]
        want = [names[i] for i in idx]
        sel = ck.run("P-33", lambda: df.select_columns(idx), f"select_columns({idx}): ")
        if sel is not _ERR:
            got = ck.run("P-33", lambda: _names_of(sel), "selection's column_names(): ")
            if got is not _ERR:
                ck.expect(
                    "P-33", got == want, f"select_columns({idx}) has names {got}, expected {want}"
                )
        sel = ck.run(
            "P-34", lambda: df.select_columns_by_name(want), f"select_columns_by_name({want}): "
        )
        if sel is not _ERR:
            got = ck.run("P-34", lambda: _names_of(sel), "selection's column_names(): ")
            if got is not _ERR:
                ck.expect("P-34", got == want, f"select_columns_by_name({want}) has names {got}")

    n = ck.run("P-35", df.num_chunks, "num_chunks(): ")
    if n is not _ERR:
        if not _is_int(n) or n < 0 or (n == 0 and nrows != 0):
            ck.fail("P-35", f"num_chunks() must be an int >= 1 (0 only without rows), got {n!r}")
        else:
            chunks = ck.run("P-35", lambda: _take(df.get_chunks(), n + 1), "get_chunks(): ")
            if chunks is not _ERR:
                rows = ck.run("P-35", lambda: [c.num_rows() for c in chunks], "chunk.num_rows(): ")
                if len(chunks) != n:
                    ck.fail(
                        "P-35", f"get_chunks() yielded {len(chunks)} chunks, num_chunks() is {n}"
                    )
                elif rows is not _ERR and nrows is not None and sum(rows) != nrows:
                    ck.fail(
                        "P-35", f"chunk row counts {rows} sum to {sum(rows)}, num_rows() is {nrows}"
                    )
                elif rows is not _ERR:
                    ck.ok("P-35")

    def again() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            other = df.__dataframe__(nan_as_null=False, allow_copy=True)
        got = _names_of(other)
        ck.expect(
            "P-37",
            names is None or got == names,
            f"__dataframe__() gives names {got}, expected {names}",
        )

    if not _has(df, "__dataframe__"):
        ck.fail("P-37", "the interchange DataFrame has no __dataframe__ method")
    else:
        ck.run("P-37", again, "__dataframe__(): ")

    if columns is not None:
        labels = names if names is not None else [str(i) for i in range(len(columns))]
        for name, c in zip(labels, columns, strict=True):
            ck.merge(_column_report(c, depth), f"column {name!r}: ")


def check_dataframe(df: Any) -> Report:
    """Check an interchange-protocol DataFrame (P-30..P-37, and every column).

    Parameters
    ----------
    df : object
        The interchange object (the result of ``__dataframe__()``); a
        library object (a pandas DataFrame, a pyarrow Table) is accepted too
        and its ``__dataframe__()`` is checked.

    Returns
    -------
    Report
        The frame's requirements and those of every column and buffer.

    Raises
    ------
    Nothing: an exception of the producer is recorded as a failure.

    Examples
    --------
    >>> import pandas as pd
    >>> from dfbuffer.testing import check_dataframe
    >>> report = check_dataframe(pd.DataFrame({"x": [1.5, None], "n": [1, 2]}))
    >>> report.ok, len(report.passed) > 20
    (True, True)
    """
    ck = _Checker(f"dataframe {_describe(df)}")
    if _has(df, "__dataframe__") and not _has(df, "get_column_by_name"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            xdf = ck.run("P-37", df.__dataframe__, "__dataframe__(): ")
        if xdf is _ERR:
            return ck.report()
        df = xdf
        ck.subject = f"dataframe {_describe(df)}"
    try:
        _check_dataframe_into(ck, df)
    except Exception as exc:  # pragma: no cover - defensive
        ck.fail("P-30", f"unexpected {type(exc).__name__}: {exc}")
    return ck.report()


def assert_conformant(obj: Any) -> Report:
    """Check `obj` and raise AssertionError listing every failure.

    Parameters
    ----------
    obj : object
        An interchange DataFrame, Column or Buffer, or any object with
        ``__dataframe__`` (its interchange object is checked).

    Returns
    -------
    Report
        The report, when everything passed.

    Raises
    ------
    AssertionError
        A requirement failed; the message lists every failure.
    TypeError
        ``obj`` is none of the above.

    Examples
    --------
    >>> import pandas as pd
    >>> from dfbuffer.testing import assert_conformant
    >>> assert_conformant(pd.DataFrame({"x": [1, 2]})).ok
    True
    >>> assert_conformant(pd.DataFrame({"s": ["a"]}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    AssertionError: dataframe PandasDataFrameXchg: ... failed (...P-22); ... passed
    ...P-22: column 's': format 'u' means 32-bit offsets, the offsets buffer holds 64-bit ones
    """
    if _has(obj, "column_names") and _has(obj, "get_column"):
        report = check_dataframe(obj)
    elif _has(obj, "get_buffers"):
        report = check_column(obj)
    elif _has(obj, "__dataframe__"):
        report = check_dataframe(obj)
    elif _has(obj, "ptr") or _has(obj, "bufsize"):
        report = check_buffer(obj)
    else:
        raise TypeError(f"{_describe(obj)} is not an interchange DataFrame, Column or Buffer")
    if not report.ok:
        raise AssertionError(str(report))
    return report


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: python -m dfbuffer")
