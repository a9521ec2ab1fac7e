# Typing-only protocols of dfbuffer's inputs.  There is no module behind this stub: import
# these names from `dfbuffer` under `if typing.TYPE_CHECKING:` (or in quoted annotations).
# Each protocol asks for the one method dfbuffer calls, with the signature the Arrow
# PyCapsule interface and the DataFrame interchange protocol give it.
from collections.abc import Iterable
from typing import Any, Protocol, TypeAlias

class ArrowSchemaExportable(Protocol):
    # An Arrow PyCapsule producer of a schema (`__arrow_c_schema__`).
    def __arrow_c_schema__(self) -> object: ...

class ArrowArrayExportable(Protocol):
    # An Arrow PyCapsule producer of one array or record batch (`__arrow_c_array__`).
    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[object, object]: ...

class ArrowStreamExportable(Protocol):
    # An Arrow PyCapsule producer of a stream (`__arrow_c_stream__`): a table, a series.
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

class ArrowDeviceArrayExportable(Protocol):
    # An Arrow device array producer (`__arrow_c_device_array__`).
    def __arrow_c_device_array__(
        self, requested_schema: object | None = None, **kwargs: Any
    ) -> tuple[object, object]: ...

class ArrowDeviceStreamExportable(Protocol):
    # An Arrow device stream producer (`__arrow_c_device_stream__`).
    def __arrow_c_device_stream__(
        self, requested_schema: object | None = None, **kwargs: Any
    ) -> object: ...

class SupportsInterchange(Protocol):
    # A library dataframe with the interchange protocol's `__dataframe__` method.
    def __dataframe__(self, nan_as_null: bool = False, allow_copy: bool = True) -> Any: ...

class InterchangeDataFrame(Protocol):
    # An interchange DataFrame object, what `__dataframe__()` returns.
    def column_names(self) -> Iterable[Any]: ...
    def get_column(self, i: int, /) -> Any: ...

# Anything dfbuffer reads through the Arrow PyCapsule interface.
ArrowExportable: TypeAlias = (
    ArrowStreamExportable
    | ArrowArrayExportable
    | ArrowDeviceStreamExportable
    | ArrowDeviceArrayExportable
)
# What from_dataframe, to_matrix and schema accept.
DataFrameLike: TypeAlias = ArrowExportable | SupportsInterchange | InterchangeDataFrame
