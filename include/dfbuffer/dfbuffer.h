/* dfbuffer's public C API.
 *
 * Needs Python.h and <stdint.h>, nothing else (no NumPy, no DLPack header),
 * and dfbuffer/arrow_c_interface.h, installed beside it.
 * Use it from C, C++ or Cython (dfbuffer/capi.pxd); docs/c-api.md has the
 * build snippets, every function's contract and the versioning policy.
 *
 *     #include <Python.h>
 *     #include "dfbuffer/dfbuffer.h"
 *     ...in the module's init or exec function:
 *     if (DfBuffer_ImportAPI() < 0) return NULL;   // ImportError set
 *
 * Every function needs an attached thread state (the GIL) and the API
 * imported in the calling translation unit.  Functions returning PyObject *
 * return a new reference, or NULL with an exception set; functions
 * returning int return 0, or -1 with an exception set.  Arguments are
 * borrowed unless a contract says "moved in".
 */
#ifndef DFBUFFER_DFBUFFER_H
#define DFBUFFER_DFBUFFER_H

#include <Python.h>
#include <stdint.h>

/* The Arrow C data and C stream interface structs (installed beside this
   header). */
#include "arrow_c_interface.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The capsule the API table lives in (PyCapsule_Import name). */
#define DFBUFFER_CAPI_NAME "dfbuffer._interchange._C_API"

/* The ABI number: bumped only on an incompatible change of the table or
   of a contract.  A consumer and the runtime must agree exactly.  (Defining
   it yourself is for the test suite only.) */
#ifndef DFBUFFER_ABI_VERSION
#define DFBUFFER_ABI_VERSION 1
#endif

/* The API version this header describes: grows by one each time fields
   are appended to the table.  Version 1: the Buffer type, construction,
   field access, from_object and the ndarray view.  Version 2: the
   converters (buffer_to_ndarray, column_to_ndarray, from_dataframe) and
   the Arrow C data / C stream interface converters. */
#define DFBUFFER_API_VERSION 2

/* The oldest runtime version this consumer accepts: define it (before the
   include) to a lower number to run on older dfbuffer releases; the macros
   of newer fields are then not defined.  Default: this header's version. */
#ifndef DFBUFFER_TARGET_VERSION
#define DFBUFFER_TARGET_VERSION DFBUFFER_API_VERSION
#endif

/* The nulls= modes of the converters. */
#define DFBUFFER_NULLS_MASK                                                  \
    0                          /* numpy.ma.MaskedArray where a value is null \
                                */
#define DFBUFFER_NULLS_FILL 1  /* NaN / NaT / None / producer's value */
#define DFBUFFER_NULLS_RAISE 2 /* ValueError if any value is null */

/* DLPack device types (DLDeviceType values) dfbuffer names most often. */
#define DFBUFFER_DEVICE_CPU 1
#define DFBUFFER_DEVICE_CUDA 2
#define DFBUFFER_DEVICE_CUDA_HOST 3
#define DFBUFFER_DEVICE_ROCM 10
#define DFBUFFER_DEVICE_ROCM_HOST 11
#define DFBUFFER_DEVICE_CUDA_MANAGED 13

/* Values of dfbuffer.NativeFormat (DfBuffer_Info.native). */
#define DFBUFFER_NATIVE_RAW 0
#define DFBUFFER_NATIVE_NUMPY 1
#define DFBUFFER_NATIVE_ARROW 2
#define DFBUFFER_NATIVE_DLPACK 3
#define DFBUFFER_NATIVE_CUDA_ARRAY_INTERFACE 4
#define DFBUFFER_NATIVE_BUFFER_PROTOCOL 5
#define DFBUFFER_NATIVE_ARRAY_INTERFACE 6
#define DFBUFFER_NATIVE_INTERCHANGE 7

/* A read-only view of a Buffer's fields (DfBuffer_GetInfo).  Every pointer
   is borrowed from the Buffer and valid while the caller holds a reference
   to it (Buffers are immutable).  Fields may be appended in later API
   versions; the runtime fills only the part the consumer knows. */
typedef struct {
    void *ptr;                 /* lowest address of the block (NULL only if
                                  bufsize == 0) */
    void *data;                /* address of element (0, ..., 0) */
    Py_ssize_t bufsize;        /* bytes in [ptr, ptr + bufsize) */
    Py_ssize_t itemsize;       /* bytes per element */
    int ndim;                  /* 0 .. 64 */
    const Py_ssize_t *shape;   /* ndim entries */
    const Py_ssize_t *strides; /* ndim entries, in bytes (may be < 0) */
    int32_t device_type;       /* a DLPack device type (DFBUFFER_DEVICE_*) */
    int32_t device_id;
    int readonly;    /* 1: the memory must not be written through this */
    int native;      /* a DFBUFFER_NATIVE_* value */
    char kind;       /* the dtype's kind character: 'i','u','f','c','b',
                        'M','m','V','S','U' */
    char byteorder;  /* '<', '>', '=' or '|' */
    PyObject *dtype; /* the numpy.dtype (borrowed) */
    PyObject *owner; /* what keeps the memory alive (borrowed; NULL only
                        while the garbage collector clears a cycle) */
} DfBuffer_Info;

typedef struct DfBuffer_CAPI DfBuffer_CAPI;

/* The table in the capsule.  Call the functions through the macros below,
   which pass the table itself as the hidden first argument. */
struct DfBuffer_CAPI {
    /* ---- version 1 ---- */
    unsigned int abi_version; /* the runtime's DFBUFFER_ABI_VERSION */
    unsigned int api_version; /* the runtime's DFBUFFER_API_VERSION */
    PyTypeObject *BufferType; /* dfbuffer.Buffer (borrowed; valid for the
                                 life of the module) */
    PyObject *(*Buffer_New)(const DfBuffer_CAPI *, void *ptr,
                            Py_ssize_t bufsize, PyObject *owner,
                            const char *typestr, int ndim,
                            const Py_ssize_t *shape, const Py_ssize_t *strides,
                            int32_t device_type, int32_t device_id,
                            int readonly);
    PyObject *(*Buffer_FromData)(const DfBuffer_CAPI *, void *data,
                                 PyObject *owner, const char *typestr,
                                 int ndim, const Py_ssize_t *shape,
                                 const Py_ssize_t *strides,
                                 int32_t device_type, int32_t device_id,
                                 int readonly);
    int (*Buffer_GetInfo)(const DfBuffer_CAPI *, PyObject *buffer,
                          DfBuffer_Info *info, size_t info_size);
    PyObject *(*Buffer_FromObject)(const DfBuffer_CAPI *, PyObject *obj,
                                   PyObject *dtype);
    PyObject *(*Buffer_AsNdarray)(const DfBuffer_CAPI *, PyObject *buffer);
    /* ---- version 2 ---- */
    PyObject *(*BufferToNdarray)(const DfBuffer_CAPI *, PyObject *buffer,
                                 PyObject *dtype, int64_t offset,
                                 int64_t length);
    PyObject *(*ColumnToNdarray)(const DfBuffer_CAPI *, PyObject *column,
                                 int nulls);
    PyObject *(*FromDataFrame)(const DfBuffer_CAPI *, PyObject *obj, int nulls,
                               int allow_copy);
    PyObject *(*ArrowToNdarray)(const DfBuffer_CAPI *,
                                struct ArrowArray *array,
                                struct ArrowSchema *schema, int nulls,
                                int allow_copy);
    PyObject *(*ArrowToDict)(const DfBuffer_CAPI *, struct ArrowArray *array,
                             struct ArrowSchema *schema, int nulls,
                             int allow_copy);
    PyObject *(*ArrowStreamToDict)(const DfBuffer_CAPI *,
                                   struct ArrowArrayStream *stream, int nulls,
                                   int allow_copy);
    /* new fields go here, with a new version */
};

/* The table pointer of this translation unit, set by DfBuffer_ImportAPI.
   To share one pointer across the files of an extension, define
   DFBUFFER_API_SYMBOL to a name in every file, and DFBUFFER_NO_IMPORT in
   all but the one that calls DfBuffer_ImportAPI. */
#if defined(DFBUFFER_API_SYMBOL)
#define DfBuffer_API DFBUFFER_API_SYMBOL
#if defined(DFBUFFER_NO_IMPORT)
extern const DfBuffer_CAPI *DfBuffer_API;
#else
const DfBuffer_CAPI *DfBuffer_API = NULL;
#endif
#else
static const DfBuffer_CAPI *DfBuffer_API = NULL;
#endif

/* Imports the table from DFBUFFER_CAPI_NAME (importing dfbuffer).  Returns
   0, or -1 with an exception set: ImportError naming both ABI and version
   numbers when the runtime's ABI differs or its version is older than
   DFBUFFER_TARGET_VERSION. */
static inline int
DfBuffer_ImportAPI(void)
{
    const DfBuffer_CAPI *api =
        (const DfBuffer_CAPI *)PyCapsule_Import(DFBUFFER_CAPI_NAME, 0);
    if (api == NULL) {
        return -1;
    }
    if (api->abi_version != (unsigned int)DFBUFFER_ABI_VERSION ||
        api->api_version < (unsigned int)DFBUFFER_TARGET_VERSION) {
        PyErr_Format(PyExc_ImportError,
                     "dfbuffer C API mismatch: this extension was compiled "
                     "for ABI %d, API version %d or later, but the installed "
                     "dfbuffer provides ABI %u, API version %u (%s)",
                     (int)DFBUFFER_ABI_VERSION, (int)DFBUFFER_TARGET_VERSION,
                     api->abi_version, api->api_version,
                     api->abi_version != (unsigned int)DFBUFFER_ABI_VERSION
                         ? "rebuild the extension against the installed "
                           "dfbuffer"
                         : "upgrade dfbuffer");
        return -1;
    }
    DfBuffer_API = api;
    return 0;
}

/* NumPy-style spelling of DfBuffer_ImportAPI. */
#define import_dfbuffer() DfBuffer_ImportAPI()

/* ---- version 1 ---- */

/* The dfbuffer.Buffer type object (borrowed). */
#define DfBuffer_Type (DfBuffer_API->BufferType)

/* 1 if op is a Buffer (or a subclass instance), else 0.  Cannot fail. */
#define DfBuffer_Check(op) PyObject_TypeCheck((op), DfBuffer_API->BufferType)

/* 1 if op's type is exactly Buffer, else 0.  Cannot fail. */
#define DfBuffer_CheckExact(op) Py_IS_TYPE((op), DfBuffer_API->BufferType)

/* New Buffer over the block [ptr, ptr + bufsize) of memory that `owner`
   keeps alive (a new reference to owner is taken; Py_None for static
   memory; NULL is a TypeError).  typestr: an array-interface type string
   ("<f8", "|b1", "<M8[ns]"; NULL = "|u1"), no object dtypes.  shape ==
   NULL: 1-D of bufsize / itemsize elements (strides must then be NULL
   too); strides == NULL: C-contiguous.  ValueError/TypeError/OverflowError
   when the layout leaves the block or an argument is bad. */
#define DfBuffer_New(ptr, bufsize, owner, typestr, ndim, shape, strides, \
                     device_type, device_id, readonly)                   \
    (DfBuffer_API->Buffer_New(DfBuffer_API, (ptr), (bufsize), (owner),   \
                              (typestr), (ndim), (shape), (strides),     \
                              (device_type), (device_id), (readonly)))

/* Like DfBuffer_New, from the address of element (0, ..., 0) and the
   layout (as NumPy, DLPack and the array interface describe memory):
   ptr and bufsize become the extent the elements span.  shape must not be
   NULL when ndim > 0. */
#define DfBuffer_FromData(data, owner, typestr, ndim, shape, strides,         \
                          device_type, device_id, readonly)                   \
    (DfBuffer_API->Buffer_FromData(DfBuffer_API, (data), (owner), (typestr),  \
                                   (ndim), (shape), (strides), (device_type), \
                                   (device_id), (readonly)))

/* Fills *info with borrowed views of Buffer `buffer`'s fields.  Returns 0,
   or -1 with TypeError when buffer is not a Buffer or info is NULL. */
#define DfBuffer_GetInfo(buffer, info)                            \
    (DfBuffer_API->Buffer_GetInfo(DfBuffer_API, (buffer), (info), \
                                  sizeof(DfBuffer_Info)))

/* dfbuffer.Buffer.from_object(obj, dtype=dtype): a new Buffer over any
   producer's memory without copying (dtype NULL or Py_None: the
   producer's).  TypeError when obj speaks no known protocol, BufferError
   when the producer refuses. */
#define DfBuffer_FromObject(obj, dtype) \
    (DfBuffer_API->Buffer_FromObject(DfBuffer_API, (obj), (dtype)))

/* numpy.asarray(buffer): a new ndarray viewing the Buffer's memory (base =
   the Buffer; writeable unless the Buffer is read-only).  TypeError for a
   non-Buffer, BufferError for device memory. */
#define DfBuffer_AsNdarray(buffer) \
    (DfBuffer_API->Buffer_AsNdarray(DfBuffer_API, (buffer)))

#if DFBUFFER_TARGET_VERSION >= 2
/* ---- version 2 ---- */

/* dfbuffer.buffer_to_ndarray(buffer, dtype, offset=offset, length=length):
   an interchange buffer (any object with ptr/bufsize/__dlpack_device__)
   and its dtype (interchange 4-tuple or NumPy dtype-like) to an ndarray;
   length < 0 means "to the end". */
#define DfBuffer_BufferToNdarray(buffer, dtype, offset, length)               \
    (DfBuffer_API->BufferToNdarray(DfBuffer_API, (buffer), (dtype), (offset), \
                                   (length)))

/* dfbuffer.column_to_ndarray(column, nulls=...): an interchange column or
   an Arrow PyCapsule producer of one column to an ndarray (nulls: a
   DFBUFFER_NULLS_* value; ValueError for another). */
#define DfBuffer_ColumnToNdarray(column, nulls) \
    (DfBuffer_API->ColumnToNdarray(DfBuffer_API, (column), (nulls)))

/* dfbuffer.from_dataframe(obj, nulls=..., allow_copy=...): a new dict
   name -> ndarray. */
#define DfBuffer_FromDataFrame(obj, nulls, allow_copy) \
    (DfBuffer_API->FromDataFrame(DfBuffer_API, (obj), (nulls), (allow_copy)))

/* Converts one Arrow column (any format column_to_ndarray reads; a struct
   array, or a record batch, is an object array of dicts, as there) to an
   ndarray, with no Python object in between.  *array and
   *schema are moved in: on return, success or error, both are marked
   released in the caller's structs, and dfbuffer calls each release
   callback exactly once (at once, or when the last array viewing the
   memory goes).  ValueError if either was already released or is
   malformed, NotImplementedError for unsupported formats, RuntimeError
   when a copy is needed and allow_copy is 0. */
#define DfBuffer_ArrowToNdarray(array, schema, nulls, allow_copy)           \
    (DfBuffer_API->ArrowToNdarray(DfBuffer_API, (array), (schema), (nulls), \
                                  (allow_copy)))

/* Like DfBuffer_ArrowToNdarray for a record batch (a struct array "+s":
   one entry per child) or a single column: a new dict name -> ndarray, as
   from_dataframe.  Same move-in and release rules. */
#define DfBuffer_ArrowToDict(array, schema, nulls, allow_copy)           \
    (DfBuffer_API->ArrowToDict(DfBuffer_API, (array), (schema), (nulls), \
                               (allow_copy)))
/* from_dataframe on an Arrow C stream: reads every record batch of
   *stream (moved in: marked released in the caller's struct on return,
   success or error; dfbuffer releases it exactly once, after the last
   batch) and returns a new dict name -> ndarray, each column's chunks
   concatenated.  The stream's own errors become ValueError /
   MemoryError / NotImplementedError / OSError with its message. */
#define DfBuffer_ArrowStreamToDict(stream, nulls, allow_copy)         \
    (DfBuffer_API->ArrowStreamToDict(DfBuffer_API, (stream), (nulls), \
                                     (allow_copy)))
#endif /* DFBUFFER_TARGET_VERSION >= 2 */

#ifdef __cplusplus
}
#endif

#endif /* DFBUFFER_DFBUFFER_H */
