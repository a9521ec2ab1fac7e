"""Hostile DataFrame-interchange producers for the fuzz suite, and their oracle.

Built on the one producer stack (tests/producers.py: its Buffer without ``__dlpack__``,
``raw_buffer``, and its ``Script``).  A producer is described by a *model*: the real memory
(NumPy arrays the producer keeps alive) and, for every attribute a consumer may read, a
*script* of answers: the first read
gets ``first``, every later read gets ``later`` (which may differ: a producer that changes
its answer between calls), and an answer that is an exception instance is raised.
Containers may be dicts or Mappings, and some callbacks mutate the producer's own
containers.

The oracle (``expected_column``) computes with NumPy what a correct consumer returns from
the *first* answers: the values, the mask, or ``RAISE`` when those answers are invalid
(wrong types, negative sizes, buffers too small, device memory).  ``EITHER`` marks answers
whose acceptance is the consumer's choice (a bool where an int is expected); then only the
shape of a successful result is checked.  A consumer that reads a value twice sees
``later`` the second time: the scripts choose ``later`` answers that are invalid, so a
double read ends in a clean exception or in the first answer's result, never in another
value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from producers import (  # the one producer stack (tests/producers.py)
    BOOL,
    FLOAT,
    INT,
    NON_NULLABLE,
    STRING,
    UINT,
    USE_BITMASK,
    USE_BYTEMASK,
    USE_NAN,
    USE_SENTINEL,
    Buffer,
    Script,
    interchange_dtype,
    raw_buffer,
)

__all__ = ["BOOL", "FLOAT", "INT", "NON_NULLABLE", "STRING", "UINT", "USE_BITMASK",
           "USE_BYTEMASK", "USE_NAN", "USE_SENTINEL", "Script", "raw_buffer"]


class ProducerError(Exception):
    """What a hostile producer raises: must propagate unchanged (or chained)."""


ALLOWED = (
    BufferError,
    TypeError,
    ValueError,
    OverflowError,
    IndexError,
    NotImplementedError,  # a type dfbuffer does not convert, named in the message
    ProducerError,
)

HOST_READABLE = (1, 3, 11, 13)  # CPU, CUDA host, ROCm host, CUDA managed
RAISE = "raise"
EITHER = "either"
UNSAFE = "unsafe"  # the model claims more memory than it has and the column needs it

def ix_dtype(dt: np.dtype, order: str = "=") -> tuple:
    return interchange_dtype(dt, order)


def _answer(s: Any) -> Any:
    return s() if isinstance(s, Script) else s


class StoredMapping(Mapping):
    """A Mapping (not a dict) over stored items: each look-up returns the same object."""

    def __init__(self, d: dict):
        self._d = d

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def clear(self):
        self._d.clear()

    def __repr__(self) -> str:
        return f"StoredMapping({self._d!r})"


def _scripted(name: str) -> property:
    """A property answering with the script `name` of the object's ``_get``."""
    return property(lambda self: self._get(name))


def _scripted_call(name: str):
    """A method (any arguments) answering with the script `name` of ``_get``."""

    def method(self, *args, **kwargs):
        return self._get(name)

    method.__name__ = name
    return method


class HColumn:
    """An interchange Column whose every attribute is a Script (or a plain value)."""

    def __init__(self, **scripts: Any):
        self.s = scripts

    def _get(self, name: str):
        if name not in self.s:
            raise AttributeError(name)
        return _answer(self.s[name])

    size = _scripted_call("size")
    offset = _scripted("offset")
    dtype = _scripted("dtype")
    describe_null = _scripted("describe_null")
    null_count = _scripted("null_count")
    describe_categorical = _scripted("describe_categorical")
    metadata = _scripted("metadata")
    num_chunks = _scripted_call("num_chunks")
    get_chunks = _scripted_call("get_chunks")  # (n_chunks=None)
    get_buffers = _scripted_call("get_buffers")

    def __repr__(self) -> str:
        return f"HColumn({self.s!r})"


class HFrame:
    """An interchange DataFrame with scripted answers."""

    def __init__(self, **scripts: Any):
        self.s = scripts

    def _get(self, name: str):
        return _answer(self.s[name])

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self

    column_names = _scripted_call("column_names")

    def get_column(self, i):
        cols = self._get("columns")
        return cols[i]

    def get_column_by_name(self, name):
        return self.get_column(list(self.s["names"]).index(name))

    def get_columns(self):
        return iter(self._get("columns"))

    num_columns = _scripted_call("num_columns")
    num_rows = _scripted_call("num_rows")

    def num_chunks(self):
        return 1

    def get_chunks(self, n_chunks=None):
        yield self

    @property
    def metadata(self):
        return {}

    def select_columns(self, indices):
        raise ProducerError("select_columns")

    def select_columns_by_name(self, names):
        raise ProducerError("select_columns_by_name")

    def __repr__(self) -> str:
        return f"HFrame({self.s!r})"


# --------------------------------------------------------------------------- oracle


def is_int(v: Any) -> bool:
    return type(v) is int


def int_or_either(v: Any):
    """v as an int, RAISE for a non-int, EITHER for an int subclass (bool)."""
    if type(v) is int:
        return v
    if isinstance(v, int):
        return EITHER
    return RAISE


def mem_of(buf: Buffer):
    """(bytes view of the buffer's first answers, device ok) or RAISE/EITHER."""
    if not isinstance(buf, Buffer):
        return RAISE
    ptr, size, dev = buf._ptr, buf._bufsize, buf._device
    ptr = ptr.first if isinstance(ptr, Script) else ptr
    size = size.first if isinstance(size, Script) else size
    dev = dev.first if isinstance(dev, Script) else dev
    for v in (ptr, size, dev):
        if isinstance(v, BaseException):
            return RAISE
    p, n = int_or_either(ptr), int_or_either(size)
    if RAISE in (p, n):
        return RAISE
    if EITHER in (p, n):
        return EITHER
    if n < 0 or p < 0 or n >= 2**63 or p >= 2**64:
        return RAISE
    if isinstance(dev, list) and len(dev) == 2:
        return EITHER  # a sequence, not a tuple: accepted or refused
    if not (isinstance(dev, tuple) and len(dev) == 2):
        return RAISE
    if not (type(dev[0]) is int and (dev[1] is None or type(dev[1]) is int)):
        return EITHER
    if dev[0] not in HOST_READABLE:
        return RAISE  # device memory is never read
    base = buf._x.ctypes.data
    if p == 0 and n > 0:
        return EITHER  # NULL with a size: refused now or when memory is needed
    if n == 0:
        return (p, n, np.zeros(0, np.uint8))
    assert base <= p <= base + buf._x.nbytes, "the model points outside its memory"
    start = p - base
    return (p, n, buf._x.view(np.uint8).reshape(-1)[start : start + n])


def first(s: Any) -> Any:
    return s.first if isinstance(s, Script) else s


def expected_column(col: HColumn, kind: str, nulls: str, *, chunk: bool = False):
    """What column_to_ndarray(col, nulls=nulls) returns for a one-chunk numeric column
    built by the strategies: (values, isnull) or RAISE or EITHER."""
    s = col.s
    answers = {k: first(v) for k, v in s.items()}
    if chunk:  # a chunk's own num_chunks() is not asked
        answers["num_chunks"] = 1
    for k in ("size", "offset", "describe_null", "dtype", "get_buffers", "num_chunks"):
        if isinstance(answers.get(k), BaseException):
            return RAISE
    nch = int_or_either(answers["num_chunks"])
    if nch is not EITHER and nch is not RAISE and nch > 1:
        return EITHER  # get_chunks is a scripted answer of its own
    if nch is RAISE:
        return RAISE
    if nch is not EITHER and nch < 1:
        return EITHER  # invalid (at least one chunk): ignored, or refused (outside int64)
    size = int_or_either(answers["size"])
    off = answers["offset"]
    off = 0 if off is None else int_or_either(off)
    if RAISE in (size, off):
        return RAISE
    dn = answers["describe_null"]
    if not (isinstance(dn, tuple) and len(dn) == 2 and isinstance(dn[0], int)):
        return RAISE
    if type(dn[0]) is not int:
        return EITHER
    nk, nv = dn
    if not 0 <= nk <= 4:
        return RAISE
    if nk == USE_SENTINEL and nv is None:
        return RAISE
    if nv is not None and nk in (USE_SENTINEL, USE_BITMASK, USE_BYTEMASK):
        if type(nv) is not int:
            return RAISE if not isinstance(nv, int) else EITHER
        if nk != USE_SENTINEL and nv not in (0, 1):
            return RAISE
    dt = answers["dtype"]
    bufs = answers["get_buffers"]
    if EITHER in (size, off, nch):
        return EITHER
    if size < 0 or off < 0:
        return RAISE
    if not isinstance(bufs, Mapping):
        return RAISE
    bufs = dict(bufs)
    data = bufs.get("data")
    if not (isinstance(data, tuple) and len(data) == 2):
        return RAISE
    if not (isinstance(dt, tuple) and len(dt) == 4) or data[1] != dt:
        return EITHER if isinstance(dt, tuple) else RAISE
    npdt = np.dtype(kind)
    order = dt[3]
    if order in ("<", ">"):
        npdt = npdt.newbyteorder(order)
    m = mem_of(data[0])
    if m in (RAISE, EITHER):
        return m
    ptr, claimed, mem = m
    need = (off + size) * npdt.itemsize
    if need > 0 and (ptr == 0 or claimed < need):
        # an empty column reads nothing: its offset may be checked or not
        return EITHER if size == 0 else RAISE
    if need > mem.size:
        return UNSAFE
    values = np.frombuffer(mem[:need].tobytes(), npdt)[off:] if need else np.zeros(0, npdt)
    vpair = bufs.get("validity")
    isnull = np.zeros(size, bool)
    if vpair is not None and nk not in (USE_BITMASK, USE_BYTEMASK):
        ok = (isinstance(vpair, tuple) and len(vpair) == 2 and isinstance(vpair[0], Buffer)
              and isinstance(vpair[1], tuple) and len(vpair[1]) == 4)
        if not ok:
            return EITHER  # an unused but malformed validity entry: refused or ignored
    if nk in (USE_BITMASK, USE_BYTEMASK):
        if vpair is None:
            nc = answers.get("null_count")
            if isinstance(nc, BaseException):
                return RAISE
            if nc is not None:
                nc = int_or_either(nc)
                if nc in (RAISE, EITHER):
                    return nc
                if nc < 0:
                    # invalid (null_count is None or in [0, size]): a consumer may
                    # ignore it, or refuse it (one outside int64 cannot be read)
                    return EITHER
                if nc > 0:
                    return RAISE
        else:
            if not (isinstance(vpair, tuple) and len(vpair) == 2):
                return RAISE
            if not isinstance(vpair[0], Buffer) or not isinstance(vpair[1], tuple):
                return RAISE
            vm = mem_of(vpair[0])
            if vm in (RAISE, EITHER):
                return vm
            vptr, vclaimed, vmem = vm
            if vptr == 0:
                return EITHER
            else:
                vneed = (off + size + 7) // 8 if nk == USE_BITMASK else off + size
                if vclaimed < vneed:
                    return EITHER if size == 0 else RAISE
                if vmem.size < vneed:
                    return UNSAFE
                if size:
                    if nk == USE_BITMASK:
                        bits = np.unpackbits(vmem[:vneed], bitorder="little")[off : off + size]
                        isnull = bits == (nv if nv is not None else 0)
                    else:
                        b = vmem[off : off + size] != 0
                        isnull = ~b if (nv or 0) == 0 else b
    elif nk == USE_SENTINEL:
        if npdt.kind not in "iu":
            return EITHER
        isnull = values.astype(np.int64) == nv if size else isnull
        if npdt.kind == "u" or nv < np.iinfo(npdt).min or nv > np.iinfo(npdt).max:
            return EITHER
    elif nk == USE_NAN and npdt.kind == "f":
        isnull = np.isnan(values)
    if nulls == "raise" and isnull.any():
        return RAISE
    return values, isnull


def check_result(res: Any, exp: tuple, nulls: str) -> None:
    """Asserts the converter's result equals the oracle's (values, isnull)."""
    values, isnull = exp
    assert isinstance(res, np.ndarray)
    assert res.shape == values.shape, (res.shape, values.shape)
    if not isnull.any():
        assert type(res) is np.ndarray, type(res)
        np.testing.assert_array_equal(res, values)
        return
    if nulls == "mask":
        assert isinstance(res, np.ma.MaskedArray)
        np.testing.assert_array_equal(np.ma.getmaskarray(res), isnull)
        np.testing.assert_array_equal(np.asarray(res.data)[~isnull], values[~isnull])
        return
    assert type(res) is np.ndarray
    np.testing.assert_array_equal(res[~isnull], values[~isnull])
    assert np.isnan(res[isnull].astype(float)).all()


def run(fn):
    """('ok', result) or ('error', exception) for an allowed exception; anything else
    (another exception type) propagates and fails the example."""
    try:
        return "ok", fn()
    except ALLOWED as e:
        return "error", e
