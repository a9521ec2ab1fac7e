"""Hand-built Arrow C device data interface producers (ctypes), for devices no
peer can make here (no GPU): ArrowDeviceArray / ArrowDeviceArrayStream structs
on "CUDA" with fake buffer addresses that nothing may dereference, and release
callbacks that count their calls.

Every struct and callback is kept alive for the session; the capsules have no
destructor, so a capsule that is never consumed is simply never released (the
counts then stay 0, which the tests check where it matters).
"""

from __future__ import annotations

import ctypes

c_int64 = ctypes.c_int64


class ArrowSchema(ctypes.Structure):
    pass


SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", c_int64),
    ("n_children", c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", SCHEMA_RELEASE),
    ("private_data", ctypes.c_void_p),
]


class ArrowArray(ctypes.Structure):
    pass


ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
ArrowArray._fields_ = [
    ("length", c_int64),
    ("null_count", c_int64),
    ("offset", c_int64),
    ("n_buffers", c_int64),
    ("n_children", c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ARRAY_RELEASE),
    ("private_data", ctypes.c_void_p),
]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [
        ("array", ArrowArray),
        ("device_id", c_int64),
        ("device_type", ctypes.c_int32),
        ("sync_event", ctypes.c_void_p),
        ("reserved", c_int64 * 3),
    ]


class ArrowDeviceArrayStream(ctypes.Structure):
    pass


GET_SCHEMA = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream), ctypes.POINTER(ArrowSchema))
GET_NEXT = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ArrowDeviceArrayStream), ctypes.POINTER(ArrowDeviceArray))
GET_LAST_ERROR = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.POINTER(ArrowDeviceArrayStream))
STREAM_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowDeviceArrayStream))
ArrowDeviceArrayStream._fields_ = [
    ("device_type", ctypes.c_int32),
    ("get_schema", GET_SCHEMA),
    ("get_next", GET_NEXT),
    ("get_last_error", GET_LAST_ERROR),
    ("release", STREAM_RELEASE),
    ("private_data", ctypes.c_void_p),
]

CUDA = 2
FLAG_NULLABLE = 2

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]

# capsule names must outlive the capsules
_NAMES = {n: n.encode() for n in (
    "arrow_schema", "arrow_device_array", "arrow_device_array_stream")}


def capsule(struct, name: str):
    """A destructor-less capsule named ``name`` over ``struct`` (kept alive by the caller)."""
    return _capsule_new(ctypes.addressof(struct), _NAMES[name], None)


def read_device_array(cap) -> ArrowDeviceArray:
    """The ArrowDeviceArray inside an "arrow_device_array" capsule (a view, not a copy)."""
    return ArrowDeviceArray.from_address(_capsule_ptr(cap, b"arrow_device_array"))


class Counter:
    """Counts the release calls of every struct a producer made."""

    def __init__(self) -> None:
        self.schema = 0
        self.array = 0
        self.stream = 0


class Column:
    """One column: format, length, offset, null_count, buffer addresses, dictionary,
    and the child columns of a nested format."""

    def __init__(self, fmt: str, length: int, buffers, *, offset: int = 0,
                 null_count: int = 0, name: str = "", dictionary: Column | None = None,
                 children: list[Column] | None = None):
        self.fmt, self.length, self.buffers = fmt, length, list(buffers)
        self.offset, self.null_count, self.name = offset, null_count, name
        self.dictionary, self.children = dictionary, children


# Every struct and callback ever made stays alive until the process ends: a consumer may
# release an array after its producer object is gone (that is what moving means), and a
# ctypes callback must not be freed before it is called.
_ALIVE: list = []


class _Keep:
    """Keeps ctypes objects alive (for the whole test session)."""

    def __init__(self) -> None:
        self.items: list = []
        _ALIVE.append(self.items)

    def __call__(self, obj):
        self.items.append(obj)
        return obj


def _link(node, release_type, col: Column, children, make, keep: _Keep, counter: Counter,
          field: str, top: bool):
    """Gives a new ArrowSchema or ArrowArray `node` its children (made by make(child)),
    its dictionary (make(col.dictionary)) and a release callback that counts in
    counter.<field> (top-level nodes only: children and dictionary are released with
    the top-level node) and marks the node released.  Returns node."""
    cls = type(node)
    if children:
        kids = [make(c) for c in children]
        node.n_children = len(kids)
        node.children = keep((ctypes.POINTER(cls) * len(kids))(
            *[ctypes.pointer(keep(k)) for k in kids]))
    if col.dictionary is not None:
        node.dictionary = ctypes.pointer(keep(make(col.dictionary)))

    def release(p):
        if top:
            setattr(counter, field, getattr(counter, field) + 1)
        p.contents.release = release_type()

    node.release = keep(release_type(release))
    return node


def _schema(col: Column, counter: Counter, keep: _Keep, children=None,
            top: bool = True) -> ArrowSchema:
    s = ArrowSchema()
    s.format = keep(col.fmt.encode())
    s.name = keep(col.name.encode())
    s.flags = FLAG_NULLABLE
    kid = lambda c: _schema(c, counter, keep, top=False)  # noqa: E731
    return _link(s, SCHEMA_RELEASE, col, children or col.children, kid, keep, counter,
                 "schema", top)


def _array(col: Column, counter: Counter, keep: _Keep, children=None,
           top: bool = True) -> ArrowArray:
    a = ArrowArray()
    a.length, a.null_count, a.offset = col.length, col.null_count, col.offset
    a.n_buffers = len(col.buffers)
    a.buffers = keep((ctypes.c_void_p * max(1, len(col.buffers)))(*col.buffers))
    kid = lambda c: _array(c, counter, keep, top=False)  # noqa: E731
    return _link(a, ARRAY_RELEASE, col, children or col.children, kid, keep, counter,
                 "array", top)


def _device_array(col, counter, keep, children, device_type, device_id, sync_event):
    d = keep(ArrowDeviceArray())
    d.array = _array(col, counter, keep, children)
    d.device_type, d.device_id = device_type, device_id
    d.sync_event = sync_event
    return d


class DeviceArray:
    """A producer with only ``__arrow_c_device_array__``: one column (or, with
    ``children``, a struct "+s" record batch) on ``device_type``/``device_id``."""

    def __init__(self, col: Column, *, children=None, device_type: int = CUDA,
                 device_id: int = 1, sync_event: int | None = None):
        self.col, self.children = col, children
        self.device_type, self.device_id, self.sync_event = device_type, device_id, sync_event
        self.released = Counter()
        self._keep = _Keep()

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        s = self._keep(_schema(self.col, self.released, self._keep, self.children))
        d = _device_array(self.col, self.released, self._keep, self.children,
                          self.device_type, self.device_id, self.sync_event)
        return capsule(s, "arrow_schema"), capsule(d, "arrow_device_array")


class DeviceStream:
    """A producer with only ``__arrow_c_device_stream__``: ``batches`` is a list of
    (Column, children, device_id) chunks of one schema, all on ``device_type``."""

    def __init__(self, schema_col: Column, batches, *, children=None, device_type: int = CUDA):
        self.schema_col, self.batches, self.children = schema_col, batches, children
        self.device_type = device_type
        self.released = Counter()
        self._keep = _Keep()

    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        keep, counter = self._keep, self.released
        pending = list(self.batches)

        def get_schema(_stream, out):
            s = keep(_schema(self.schema_col, counter, keep, self.children))
            ctypes.memmove(out, ctypes.addressof(s), ctypes.sizeof(ArrowSchema))
            return 0

        def get_next(_stream, out):
            if not pending:
                ctypes.memset(out, 0, ctypes.sizeof(ArrowDeviceArray))
                return 0
            col, children, device_id = pending.pop(0)
            d = _device_array(col, counter, keep, children, self.device_type, device_id, None)
            ctypes.memmove(out, ctypes.addressof(d), ctypes.sizeof(ArrowDeviceArray))
            return 0

        def release(p):
            counter.stream += 1
            p.contents.release = STREAM_RELEASE()

        st = keep(ArrowDeviceArrayStream())
        st.device_type = self.device_type
        st.get_schema = keep(GET_SCHEMA(get_schema))
        st.get_next = keep(GET_NEXT(get_next))
        st.get_last_error = keep(GET_LAST_ERROR(lambda _s: None))
        st.release = keep(STREAM_RELEASE(release))
        return capsule(st, "arrow_device_array_stream")


class DeviceOnly:
    """Forwards only ``__arrow_c_device_array__`` / ``__arrow_c_device_stream__`` of a peer
    object (pyarrow, nanoarrow, a dfbuffer.Buffer), hiding its other protocols, so that the
    device half of the PyCapsule interface is what a consumer must use."""

    def __init__(self, obj):
        self._obj = obj
        if hasattr(obj, "__arrow_c_device_array__"):
            self.__arrow_c_device_array__ = obj.__arrow_c_device_array__
        if hasattr(obj, "__arrow_c_device_stream__"):
            self.__arrow_c_device_stream__ = obj.__arrow_c_device_stream__
