"""ctypes mirrors of the Arrow C data and stream interface structs, for hand-built
producers of inputs no peer makes (malformed structs, hostile streams).

Every ``release`` and stream callback field is a plain address (``c_void_p``), so a
test can store any callback, a garbage address or None; SCHEMA_RELEASE, ARRAY_RELEASE
and the stream callback types make callbacks to store there (cast to an address).
``_arrow_device_ctypes`` has the device interface, with typed release fields.
PairProducer is the base of a producer of one hand-built (schema, array) pair,
StreamProducerBase that of a hand-built stream.
"""

from __future__ import annotations

import ctypes

import numpy as np


class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]

SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))


class ArrowArrayStream(ctypes.Structure):
    _fields_ = [
        ("get_schema", ctypes.c_void_p),
        ("get_next", ctypes.c_void_p),
        ("get_last_error", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


GET_SCHEMA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                              ctypes.POINTER(ArrowSchema))
GET_NEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ArrowArrayStream),
                            ctypes.POINTER(ArrowArray))
GET_ERROR = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(ArrowArrayStream))
STREAM_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArrayStream))

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def capsule(struct, name: bytes):
    """A PyCapsule named ``name`` over a ctypes struct (no destructor)."""
    return _capsule_new(ctypes.addressof(struct), name, None)


class PairProducer:
    """Base of a producer of one hand-built (schema, array) pair: a subclass sets
    ``schema`` and ``array`` (and ``keep``, a list, to use ``_addr``)."""

    schema: ArrowSchema
    array: ArrowArray
    keep: list

    def _addr(self, b):
        """The address of a contiguous copy of ``b``, kept in ``keep`` (None for None)."""
        if b is None:
            return None
        arr = np.ascontiguousarray(b)
        self.keep.append(arr)
        return arr.ctypes.data

    def __arrow_c_array__(self, requested_schema=None):
        return capsule(self.schema, b"arrow_schema"), capsule(self.array, b"arrow_array")


class StreamProducerBase:
    """Base of a hand-built stream producer: ``_make_stream`` builds ``stream`` over its
    get_schema and get_next callbacks (made with the caller's callback types), a
    get_last_error that gives "boom from the producer" and a release that counts in
    ``stream_releases`` (which the subclass sets to 0)."""

    stream_releases: int

    def _make_stream(self, get_schema, get_next) -> None:
        def release(s):
            self.stream_releases += 1
            s.contents.release = None

        self._err = ctypes.create_string_buffer(b"boom from the producer")
        self._cbs = [get_schema, get_next,
                     GET_ERROR(lambda s: ctypes.addressof(self._err)), STREAM_RELEASE(release)]
        self.stream = ArrowArrayStream(*[ctypes.cast(c, ctypes.c_void_p).value
                                         for c in self._cbs])

    def __arrow_c_stream__(self, requested_schema=None):
        return capsule(self.stream, b"arrow_array_stream")
