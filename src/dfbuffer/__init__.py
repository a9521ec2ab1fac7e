"""dfbuffer: the buffer layer of Python data interchange.

One owning :class:`Buffer` type (pointer, size, shape, strides, dtype, device
and a strong reference to the memory's owner) that speaks DLPack 1.x, the
NumPy array interface, the buffer protocol, the CUDA array interface and the
Arrow PyCapsule interface; and C converters from DataFrame-interchange
columns and Arrow arrays to NumPy arrays whose ``base`` keeps the owner alive.
"""

from __future__ import annotations

import os

from dfbuffer._interchange import (
    Buffer,
    ColumnNullType,
    DeviceType,
    DtypeKind,
    NativeFormat,
)

__version__ = "0.1.0"

__all__ = [
    "Buffer",
    "ColumnNullType",
    "DeviceType",
    "DtypeKind",
    "NativeFormat",
    "buffer_to_ndarray",
    "column_to_ndarray",
    "from_dataframe",
    "get_include",
    "to_interchange",
    "__version__",
]


def get_include() -> str:
    """Return the directory holding dfbuffer's C headers (``dfbuffer/*.h``).

    Use it as an include path when compiling against dfbuffer's Arrow C data
    interface declarations or its format tables.
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def __getattr__(name: str):  # pragma: no cover - filled in by later issues
    from dfbuffer import _interchange

    if hasattr(_interchange, name):
        return getattr(_interchange, name)
    if name == "to_interchange":
        from dfbuffer._arrow_interchange import to_interchange

        return to_interchange
    raise AttributeError(f"module 'dfbuffer' has no attribute {name!r}")
