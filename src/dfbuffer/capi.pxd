# cython: language_level=3
# Cython declarations of dfbuffer's public C API (dfbuffer/dfbuffer.h).
#
#     from dfbuffer cimport capi
#     capi.import_dfbuffer()        # once, at module import
#
# Compile with include_dirs=[dfbuffer.get_include()].  Contracts: docs/c-api.md
# and the comments in dfbuffer.h.  Functions returning `object` give a new
# reference (Cython manages it) and raise on error.

from cpython.object cimport PyObject, PyTypeObject
from libc.stdint cimport int32_t, int64_t

cdef extern from "dfbuffer/dfbuffer.h":
    const char *DFBUFFER_CAPI_NAME
    enum:
        DFBUFFER_ABI_VERSION
        DFBUFFER_API_VERSION
        DFBUFFER_TARGET_VERSION
        DFBUFFER_NULLS_MASK
        DFBUFFER_NULLS_FILL
        DFBUFFER_NULLS_RAISE
        DFBUFFER_DEVICE_CPU
        DFBUFFER_DEVICE_CUDA
        DFBUFFER_DEVICE_CUDA_HOST
        DFBUFFER_DEVICE_ROCM
        DFBUFFER_DEVICE_ROCM_HOST
        DFBUFFER_DEVICE_CUDA_MANAGED
        DFBUFFER_NATIVE_RAW
        DFBUFFER_NATIVE_NUMPY
        DFBUFFER_NATIVE_ARROW
        DFBUFFER_NATIVE_DLPACK
        DFBUFFER_NATIVE_CUDA_ARRAY_INTERFACE
        DFBUFFER_NATIVE_BUFFER_PROTOCOL
        DFBUFFER_NATIVE_ARRAY_INTERFACE
        DFBUFFER_NATIVE_INTERCHANGE
        ARROW_FLAG_DICTIONARY_ORDERED
        ARROW_FLAG_NULLABLE
        ARROW_FLAG_MAP_KEYS_SORTED

    struct ArrowSchema:
        const char *format
        const char *name
        const char *metadata
        int64_t flags
        int64_t n_children
        ArrowSchema **children
        ArrowSchema *dictionary
        void (*release)(ArrowSchema *) noexcept
        void *private_data

    struct ArrowArray:
        int64_t length
        int64_t null_count
        int64_t offset
        int64_t n_buffers
        int64_t n_children
        const void **buffers
        ArrowArray **children
        ArrowArray *dictionary
        void (*release)(ArrowArray *) noexcept
        void *private_data

    struct ArrowArrayStream:
        int (*get_schema)(ArrowArrayStream *, ArrowSchema *out) noexcept
        int (*get_next)(ArrowArrayStream *, ArrowArray *out) noexcept
        const char *(*get_last_error)(ArrowArrayStream *) noexcept
        void (*release)(ArrowArrayStream *) noexcept
        void *private_data

    ctypedef struct DfBuffer_Info:
        void *ptr
        void *data
        Py_ssize_t bufsize
        Py_ssize_t itemsize
        int ndim
        const Py_ssize_t *shape
        const Py_ssize_t *strides
        int32_t device_type
        int32_t device_id
        int readonly
        int native
        char kind
        char byteorder
        PyObject *dtype
        PyObject *owner

    ctypedef struct DfBuffer_CAPI:
        unsigned int abi_version
        unsigned int api_version
        PyTypeObject *BufferType

    const DfBuffer_CAPI *DfBuffer_API

    int DfBuffer_ImportAPI() except -1
    int import_dfbuffer() except -1

    # version 1
    PyTypeObject *DfBuffer_Type
    bint DfBuffer_Check(object op)
    bint DfBuffer_CheckExact(object op)
    object DfBuffer_New(void *ptr, Py_ssize_t bufsize, object owner,
                        const char *typestr, int ndim, const Py_ssize_t *shape,
                        const Py_ssize_t *strides, int32_t device_type,
                        int32_t device_id, int readonly)
    object DfBuffer_FromData(void *data, object owner, const char *typestr,
                             int ndim, const Py_ssize_t *shape,
                             const Py_ssize_t *strides, int32_t device_type,
                             int32_t device_id, int readonly)
    int DfBuffer_GetInfo(object buffer, DfBuffer_Info *info) except -1
    object DfBuffer_FromObject(object obj, PyObject *dtype)
    object DfBuffer_AsNdarray(object buffer)

    # version 2
    object DfBuffer_BufferToNdarray(object buffer, object dtype, int64_t offset,
                                    int64_t length)
    object DfBuffer_ColumnToNdarray(object column, int nulls)
    object DfBuffer_FromDataFrame(object obj, int nulls, int allow_copy)
    object DfBuffer_ArrowToNdarray(ArrowArray *array, ArrowSchema *schema,
                                   int nulls, int allow_copy)
    object DfBuffer_ArrowToDict(ArrowArray *array, ArrowSchema *schema,
                                int nulls, int allow_copy)
    object DfBuffer_ArrowStreamToDict(ArrowArrayStream *stream, int nulls,
                                      int allow_copy)
