"""Functions run in child processes by tests/integration/test_processes.py (importable by name, as
the "spawn" start method requires)."""

from __future__ import annotations

import ctypes
import pickle
from multiprocessing import shared_memory

import numpy as np
import pyarrow as pa

import dfbuffer


def describe(obj):
    """What a child sees of a Buffer / ndarray / MaskedArray / dict of them."""
    if isinstance(obj, dict):
        return {k: describe(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [describe(v) for v in obj]
    if isinstance(obj, dfbuffer.Buffer):
        vals = np.asarray(obj).tolist() if obj.size else []
        return ("Buffer", obj.dtype.str, obj.shape, obj.strides, obj.readonly,
                int(obj.native), vals)
    if isinstance(obj, np.ma.MaskedArray):
        return ("masked", obj.dtype.str, obj.shape, obj.data.tolist(),
                np.ma.getmaskarray(obj).tolist())
    return ("ndarray", obj.dtype.str, obj.shape, obj.strides, obj.flags.writeable,
            obj.tolist())


def echo(obj):
    """Return what the child received and what it saw of it (pickled back)."""
    return describe(obj), obj


def _frames(raw_frames):
    """PickleBuffers -> transportable frames: bytes for read-only, bytearray for writable."""
    out = []
    for f in raw_frames:
        view = f.raw()
        out.append(bytes(view) if view.readonly else bytearray(view))
    return out


def dumps5(obj):
    """pickle protocol 5 with every buffer out of band: (payload, frames)."""
    frames = []
    payload = pickle.dumps(obj, protocol=5, buffer_callback=frames.append)
    return payload, _frames(frames)


def echo5(payload, frames):
    """Load a protocol-5 pickle with out-of-band frames, describe it, send it back the
    same way."""
    obj = pickle.loads(payload, buffers=frames)
    return describe(obj), *dumps5(obj)


def square_column(name: str, n: int) -> None:
    """Attach shared memory `name` (2n float64: a column, then room for a result), read
    the column through dfbuffer without copying, write its squares after it."""
    shm = shared_memory.SharedMemory(name=name)
    try:
        base = ctypes.addressof(ctypes.c_char.from_buffer(shm.buf))
        # the column as an Arrow array over the segment, converted by dfbuffer
        column = pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(shm.buf)])
        values = dfbuffer.column_to_ndarray(column)
        if values.ctypes.data != base:
            raise AssertionError("the child's column is a copy")
        out = np.asarray(dfbuffer.Buffer.from_object(shm.buf[8 * n:16 * n], dtype="f8"))
        if out.ctypes.data != base + 8 * n:
            raise AssertionError("the child's result view is a copy")
        np.multiply(values, values, out=out)
        del base, column, values, out
    finally:
        shm.close()
