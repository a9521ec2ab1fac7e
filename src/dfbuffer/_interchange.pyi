# Type stubs for dfbuffer._interchange, the C core of dfbuffer.
import enum
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import (
    Any,
    ClassVar,
    Literal,
    Protocol,
    Self,
    SupportsIndex,
    TypeAlias,
    TypeVar,
    final,
    overload,
)

import numpy as np
import numpy.typing as npt
from typing_extensions import CapsuleType

from dfbuffer._typing import DataFrameLike

MAXDIM: int
DLPACK_MAJOR_VERSION: int
DLPACK_MINOR_VERSION: int

class NativeFormat(enum.IntEnum):
    RAW = 0
    NUMPY = 1
    ARROW = 2
    DLPACK = 3
    CUDA_ARRAY_INTERFACE = 4
    BUFFER_PROTOCOL = 5
    ARRAY_INTERFACE = 6
    INTERCHANGE = 7

class DeviceType(enum.IntEnum):
    CPU = 1
    CUDA = 2
    CUDA_HOST = 3
    CPU_PINNED = 3
    OPENCL = 4
    VULKAN = 7
    METAL = 8
    VPI = 9
    ROCM = 10
    ROCM_HOST = 11
    EXT_DEV = 12
    CUDA_MANAGED = 13
    ONE_API = 14
    WEBGPU = 15
    HEXAGON = 16
    MAIA = 17
    TRN = 18

class DtypeKind(enum.IntEnum):
    INT = 0
    UINT = 1
    FLOAT = 2
    BOOL = 20
    STRING = 21
    DATETIME = 22
    CATEGORICAL = 23

class ColumnNullType(enum.IntEnum):
    NON_NULLABLE = 0
    USE_NAN = 1
    USE_SENTINEL = 2
    USE_BITMASK = 3
    USE_BYTEMASK = 4

class CopyError(ValueError, RuntimeError):
    ...

_InterchangeDtype: TypeAlias = tuple[int, int, str, str]
_DtypeLike: TypeAlias = npt.DTypeLike | _InterchangeDtype
_Device: TypeAlias = tuple[int, int | None]

class _InterchangeBuffer(Protocol):
    # What the interchange protocol calls a Buffer: a pointer, a size, a device.
    @property
    def ptr(self) -> int: ...
    @property
    def bufsize(self) -> int: ...
    def __dlpack_device__(self) -> tuple[int, int | None]: ...

@final
class Buffer:
    # DLPack 1.3's C exchange API: a capsule "dlpack_exchange_api" over a static table
    __dlpack_c_exchange_api__: ClassVar[CapsuleType]
    def __new__(
        cls,
        ptr: int,
        bufsize: int,
        *,
        owner: object,
        dtype: _DtypeLike = "u1",
        shape: Sequence[SupportsIndex] | SupportsIndex | None = None,
        strides: Sequence[SupportsIndex] | SupportsIndex | None = None,
        device: _Device = ...,
        readonly: bool = False,
        native: NativeFormat | int = ...,
    ) -> Self: ...
    @classmethod
    def from_object(
        cls, obj: object, *, dtype: _DtypeLike | None = None, allow_copy: bool = True
    ) -> Buffer: ...
    @property
    def ptr(self) -> int: ...
    @property
    def bufsize(self) -> int: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def device(self) -> tuple[DeviceType, int]: ...
    @property
    def owner(self) -> object: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def native(self) -> NativeFormat: ...
    @property
    def c_contiguous(self) -> bool: ...
    @property
    def f_contiguous(self) -> bool: ...
    @property
    def __array_interface__(self) -> dict[str, Any]: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    def __dlpack__(
        self,
        *,
        stream: int | Any | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> CapsuleType: ...
    def __dlpack_device__(self) -> tuple[DeviceType, int]: ...
    def __array__(
        self, dtype: npt.DTypeLike | None = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]: ...
    if sys.version_info >= (3, 12):
        def __buffer__(self, flags: int, /) -> memoryview: ...
        def __release_buffer__(self, buffer: memoryview, /) -> None: ...

    def __reduce_ex__(self, protocol: SupportsIndex, /) -> tuple[Any, ...]: ...
    def __arrow_c_schema__(self) -> CapsuleType: ...
    def __arrow_c_array__(
        self, requested_schema: CapsuleType | None = None
    ) -> tuple[CapsuleType, CapsuleType]: ...
    def __arrow_c_device_array__(
        self, requested_schema: CapsuleType | None = None, **kwargs: None
    ) -> tuple[CapsuleType, CapsuleType]: ...

# "nan" is the deprecated spelling of "fill" (DeprecationWarning)
_NullsMode: TypeAlias = Literal["mask", "fill", "raise", "always_mask", "nan"]
_FrameLike: TypeAlias = DataFrameLike | Mapping[str, object]
_ScalarT = TypeVar("_ScalarT", bound=np.generic)
# an array from the converters: a plain ndarray, or a numpy.ma.MaskedArray (a subclass)
_Array: TypeAlias = np.ndarray[Any, np.dtype[Any]]
_Masked: TypeAlias = np.ma.MaskedArray[Any, np.dtype[Any]]

def buffer_to_ndarray(
    buffer: _InterchangeBuffer,
    dtype: _DtypeLike,
    *,
    offset: int = 0,
    length: int | None = None,
) -> np.ndarray[Any, Any]: ...
# The return types follow categorical=: "codes" may give CategoricalCodes; strings= changes
# only the dtype of string columns.  nulls="mask" may give numpy.ma.MaskedArray (an ndarray).
@overload
def column_to_ndarray(
    column: object,
    *,
    nulls: Literal["always_mask"],
    categorical: Literal["decode"] = "decode",
    strings: _StringsMode = "object",
    decimals: _DecimalsMode = "decimal",
    copy: bool | None = None,
    allow_copy: bool = True,
    period: Literal["object", "ordinal"] = "object",
) -> _Masked: ...
@overload
def column_to_ndarray(
    column: object,
    *,
    nulls: _NullsMode = "mask",
    categorical: Literal["decode"] = "decode",
    strings: _StringsMode = "object",
    decimals: _DecimalsMode = "decimal",
    copy: bool | None = None,
    allow_copy: bool = True,
    period: Literal["object", "ordinal"] = "object",
) -> _Array: ...
@overload
def column_to_ndarray(
    column: object,
    *,
    nulls: _NullsMode = "mask",
    categorical: _CategoricalMode,
    strings: _StringsMode = "object",
    decimals: _DecimalsMode = "decimal",
    copy: bool | None = None,
    allow_copy: bool = True,
    period: Literal["object", "ordinal"] = "object",
) -> _Array | CategoricalCodes: ...
@overload
def from_dataframe(
    obj: _FrameLike,
    *,
    nulls: Literal["always_mask"],
    allow_copy: bool = True,
    categorical: Literal["decode"] = "decode",
    strings: _StringsMode = "object",
    structs: Literal["object", "flatten"] = "object",
    decimals: _DecimalsMode = "decimal",
    on_unsupported: Literal["raise", "skip"] = "raise",
    columns: Sequence[str] | None = None,
    copy: bool | None = None,
    period: Literal["object", "ordinal"] = "object",
) -> dict[str, _Masked]: ...
@overload
def from_dataframe(
    obj: _FrameLike,
    *,
    nulls: _NullsMode = "mask",
    allow_copy: bool = True,
    categorical: Literal["decode"] = "decode",
    strings: _StringsMode = "object",
    structs: Literal["object", "flatten"] = "object",
    decimals: _DecimalsMode = "decimal",
    on_unsupported: Literal["raise", "skip"] = "raise",
    columns: Sequence[str] | None = None,
    copy: bool | None = None,
    period: Literal["object", "ordinal"] = "object",
) -> dict[str, _Array]: ...
@overload
def from_dataframe(
    obj: _FrameLike,
    *,
    nulls: _NullsMode = "mask",
    allow_copy: bool = True,
    categorical: _CategoricalMode,
    strings: _StringsMode = "object",
    structs: Literal["object", "flatten"] = "object",
    decimals: _DecimalsMode = "decimal",
    on_unsupported: Literal["raise", "skip"] = "raise",
    columns: Sequence[str] | None = None,
    copy: bool | None = None,
    period: Literal["object", "ordinal"] = "object",
) -> dict[str, _Array | CategoricalCodes]: ...

# the public C API table (dfbuffer/dfbuffer.h); see docs/c-api.md
_C_API: CapsuleType
@overload
def to_matrix(
    obj: _FrameLike,
    *,
    dtype: type[_ScalarT] | np.dtype[_ScalarT],
    order: Literal["C", "F"] = "C",
    nulls: Literal["mask", "always_mask"],
    columns: Sequence[object] | None = None,
    threads: int | None = None,
    decimals: _DecimalsMode = "decimal",
    structs: Literal["object", "flatten"] = "object",
    copy: Literal[True] | None = None,
    on_unsupported: Literal["raise", "skip"] = "raise",
    out: np.ndarray[tuple[int, int], np.dtype[Any]] | None = None,
    period: Literal["object", "ordinal"] = "object",
    allow_copy: Literal[True] = True,
) -> np.ma.MaskedArray[tuple[int, int], np.dtype[_ScalarT]]: ...
@overload
def to_matrix(
    obj: _FrameLike,
    *,
    dtype: _DtypeLike | None = None,
    order: Literal["C", "F"] = "C",
    nulls: Literal["mask", "always_mask"],
    columns: Sequence[object] | None = None,
    threads: int | None = None,
    decimals: _DecimalsMode = "decimal",
    structs: Literal["object", "flatten"] = "object",
    copy: Literal[True] | None = None,
    on_unsupported: Literal["raise", "skip"] = "raise",
    out: np.ndarray[tuple[int, int], np.dtype[Any]] | None = None,
    period: Literal["object", "ordinal"] = "object",
    allow_copy: Literal[True] = True,
) -> np.ma.MaskedArray[tuple[int, int], np.dtype[Any]]: ...
@overload
def to_matrix(
    obj: _FrameLike,
    *,
    dtype: type[_ScalarT] | np.dtype[_ScalarT],
    order: Literal["C", "F"] = "C",
    nulls: Literal["fill", "raise", "nan"] = "fill",
    columns: Sequence[object] | None = None,
    threads: int | None = None,
    decimals: _DecimalsMode = "decimal",
    structs: Literal["object", "flatten"] = "object",
    copy: Literal[True] | None = None,
    on_unsupported: Literal["raise", "skip"] = "raise",
    out: np.ndarray[tuple[int, int], np.dtype[Any]] | None = None,
    period: Literal["object", "ordinal"] = "object",
    allow_copy: Literal[True] = True,
) -> np.ndarray[tuple[int, int], np.dtype[_ScalarT]]: ...
@overload
def to_matrix(
    obj: _FrameLike,
    *,
    dtype: _DtypeLike | None = None,
    order: Literal["C", "F"] = "C",
    nulls: Literal["fill", "raise", "nan"] = "fill",
    columns: Sequence[object] | None = None,
    threads: int | None = None,
    decimals: _DecimalsMode = "decimal",
    structs: Literal["object", "flatten"] = "object",
    copy: Literal[True] | None = None,
    on_unsupported: Literal["raise", "skip"] = "raise",
    out: np.ndarray[tuple[int, int], np.dtype[Any]] | None = None,
    period: Literal["object", "ordinal"] = "object",
    allow_copy: Literal[True] = True,
) -> np.ndarray[tuple[int, int], np.dtype[Any]]: ...
@overload
def to_matrix(
    obj: _FrameLike,
    *,
    dtype: _DtypeLike | None = None,
    order: Literal["C", "F"] = "C",
    nulls: _NullsMode,
    columns: Sequence[object] | None = None,
    threads: int | None = None,
    decimals: _DecimalsMode = "decimal",
    structs: Literal["object", "flatten"] = "object",
    copy: Literal[True] | None = None,
    on_unsupported: Literal["raise", "skip"] = "raise",
    out: np.ndarray[tuple[int, int], np.dtype[Any]] | None = None,
    period: Literal["object", "ordinal"] = "object",
    allow_copy: Literal[True] = True,
) -> np.ndarray[tuple[int, int], np.dtype[Any]]: ...

# Private: the frame-source table's answer (src/_interchange/readers/frame_source.c): (kind, frame,
# allow_copy), kind one of "pandas", "arrow", "interchange", "mapping", "schema", "none".
def _frame_source(obj: object, allow_copy: bool = True, /) -> tuple[str, Any, bool]: ...
def _frame_kinds() -> tuple[str, ...]: ...

@final
class _FrameOperation:
    @property
    def name(self) -> str: ...
    @property
    def rows(self) -> tuple[Callable[..., Any], ...]: ...
    def __new__(
        cls, name: str, rows: tuple[Callable[..., Any], ...], source: type[tuple[Any, ...]], /
    ) -> Self: ...
    def __call__(self, obj: object, func: str, /, *args: Any) -> Any: ...

def _ix_frame(obj: object, /) -> Any: ...
def _not_a_frame_error(func: str, obj: object, /) -> BaseException: ...
def _select_columns(names: list[str], columns: object, /) -> list[int]: ...

# Private helper of dfbuffer.to_interchange (dfbuffer._arrow_interchange): (is_table, columns,
# chunks), columns as (name, format, dictionary format, ordered, nullable), chunks one list of
# per-column dicts per record batch.
def _arrow_import(
    obj: object, allow_copy: bool = True
) -> tuple[bool, list[tuple[str, str, str | None, bool, bool]], list[list[dict[str, Any]]]]: ...

_CategoricalMode: TypeAlias = Literal["decode", "codes"]
_StringsMode: TypeAlias = Literal["object", "stringdtype"]
_DecimalsMode: TypeAlias = Literal["decimal", "float64"]

@final
class CategoricalCodes(tuple[Any, ...]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    __match_args__ = ("codes", "categories", "ordered")
    @property
    def codes(self) -> np.ndarray[Any, Any]: ...
    @property
    def categories(self) -> np.ndarray[Any, Any]: ...
    @property
    def ordered(self) -> bool: ...
    def __new__(cls, sequence: Sequence[Any], dict: dict[str, Any] = ...) -> Self: ...

# Test-only (tests and benchmarks call them; no public name uses them): the Arrow paths of
# column_to_ndarray and from_dataframe, and the Arrow fallback of Buffer.from_object, callable
# on their own.  They ship in the release module so that the installed wheel's test run
# exercises the module users get.
def _arrow_to_ndarray(
    obj: object, nulls: _NullsMode = "mask", allow_copy: bool = True
) -> np.ndarray[Any, Any]: ...
def _arrow_from_dataframe(
    obj: object, nulls: _NullsMode = "mask", allow_copy: bool = True
) -> dict[str, np.ndarray[Any, Any]]: ...
def _arrow_buffer(obj: object, dtype: _DtypeLike | None = None) -> Buffer: ...

def _arrow_schema(obj: object) -> dict[str, Any] | None: ...
def _arrow_type(format: str, /) -> dict[str, Any] | None: ...
def _arrow_types() -> list[tuple[str, str, str, str, bool]]: ...
def _arrow_format(
    type: np.dtype[Any] | tuple[int, int] | str, tz: str | None = None, /
) -> str | None: ...

# The protocol registry of Buffer.from_object, in its order: (name, priority, importer,
# yields) for each protocol.
def _protocols() -> tuple[tuple[str, int, str, str], ...]: ...

# Whether the host can read the memory of a DLPack device type (the one predicate, in C).
def _host_readable(device_type: int, /) -> bool: ...

# Private helpers of dfbuffer.to_interchange (ixview.c): the typed view of an Arrow import.
_IxDtype: TypeAlias = tuple[DtypeKind, int, str, str]

@final
class _IxField(tuple[Any, ...]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    __match_args__ = (
        "name", "format", "dictionary", "ordered", "nullable", "dtype", "data_dtype",
        "offsets_dtype", "copy_error",
    )
    @property
    def name(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def dictionary(self) -> _IxField | None: ...
    @property
    def ordered(self) -> bool: ...
    @property
    def nullable(self) -> bool: ...
    @property
    def dtype(self) -> _IxDtype | None: ...
    @property
    def data_dtype(self) -> _IxDtype | None: ...
    @property
    def offsets_dtype(self) -> _IxDtype | None: ...
    @property
    def copy_error(self) -> str | None: ...
    def __new__(cls, sequence: Sequence[Any], dict: dict[str, Any] = ...) -> Self: ...

@final
class _IxChunk(tuple[Any, ...]):
    n_fields: int
    n_sequence_fields: int
    n_unnamed_fields: int
    __match_args__ = (
        "length", "offset", "null_count", "validity", "offsets", "data", "dictionary", "error",
        "format",
    )
    @property
    def length(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def null_count(self) -> int | None: ...
    @property
    def validity(self) -> Buffer | None: ...
    @property
    def offsets(self) -> Buffer | None: ...
    @property
    def data(self) -> Buffer | None: ...
    @property
    def dictionary(self) -> _IxChunk | None: ...
    @property
    def error(self) -> BaseException | None: ...
    @property
    def format(self) -> str: ...
    def __new__(cls, sequence: Sequence[Any], dict: dict[str, Any] = ...) -> Self: ...

def _ixview_import(
    obj: object, allow_copy: bool = True, /
) -> tuple[tuple[_IxField, ...], list[list[_IxChunk]]]: ...
def _ixview_slice(
    chunk: _IxChunk, start: int, length: int, allow_copy: bool = True, /
) -> _IxChunk: ...
def _ixview_concat(
    format: str,
    chunks: Sequence[_IxChunk],
    dictionary: _IxChunk | None = None,
    maps: Sequence[npt.ArrayLike] | None = None,
) -> _IxChunk: ...
def _ixview_values(chunk: _IxChunk, /) -> np.ndarray[Any, Any]: ...

# Private helper of the pandas paths (pandas_fast.c): the pandas frame behind obj (a pandas
# DataFrame or pandas' interchange object over one) and whether copies are allowed, or None.
def _pandas_frame(obj: object, /) -> tuple[Any, bool] | None: ...

# Private helpers of dfbuffer.to_arrow (arrow_table_export.c): the Arrow structs over Buffers.
# A field is (name, format, dictionary format, ordered[, schema node]); _arrow_nodes gives
# an Arrow producer's columns as such fields and batches (node capsules, handed out as is).
_ArrowField: TypeAlias = tuple[Any, ...]
def _arrow_nodes(
    obj: object, /
) -> tuple[tuple[_ArrowField, ...], tuple[tuple[int, tuple[Any, ...]], ...]]: ...
def _arrow_column_nodes(
    obj: object, /
) -> tuple[tuple[_ArrowField, ...], tuple[tuple[int, tuple[Any, ...]], ...]]: ...
def _arrow_table_schema(fields: tuple[_ArrowField, ...], /) -> CapsuleType: ...
def _arrow_table_stream(
    fields: tuple[_ArrowField, ...], batches: tuple[tuple[int, tuple[Any, ...]], ...], /
) -> CapsuleType: ...

# Private helper of dfbuffer.pandas (pandas_block.c): one block for a same-dtype Arrow table.
def _pandas_arrow_block(
    obj: object, min_columns: int, max_bytes: int, /
) -> (
    tuple[list[str], np.ndarray[Any, Any] | None, dict[Any, np.ndarray[Any, Any]] | None, Any]
    | None
): ...
def _rows_block(arrays: list[Any], /) -> np.ndarray[Any, Any] | None: ...
def _stringdtype_arrow(
    values: np.ndarray[Any, Any], mask: np.ndarray[Any, Any] | None, /
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any] | None, int]: ...

# arrow_batches.c: the stream reader behind dfbuffer.iter_matrices / iter_batches
@final
class _ArrowBatch:
    @property
    def num_rows(self) -> int: ...
    def __len__(self) -> int: ...
    def slice(self, start: int, length: int, /) -> _ArrowBatch: ...
    def __arrow_c_schema__(self) -> CapsuleType: ...
    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[CapsuleType, CapsuleType]: ...

@final
class _ArrowBatchReader:
    def __new__(cls, capsule: CapsuleType, /) -> Self: ...
    def __iter__(self) -> Self: ...
    def __next__(self) -> _ArrowBatch: ...
    def close(self) -> None: ...
    def __arrow_c_schema__(self) -> CapsuleType: ...
    @property
    def fields(self) -> tuple[tuple[str, str, bool], ...]: ...

def _arrow_batch_stream(pieces: tuple[_ArrowBatch, ...], /) -> CapsuleType: ...
def _stream_group_bytes(n: int = 0, /) -> int: ...
