/* dfbuffer's public C API (include/dfbuffer/dfbuffer.h): the table in the
 * capsule dfbuffer._interchange._C_API and the functions behind it.
 *
 * Each module instance gets its own table (PyMem, freed by the capsule's
 * destructor).  The functions take the table as their first argument and
 * reach the module state through its Buffer type, so they hold no C
 * global.  The converters call the same C functions as the Python-level
 * ones (one code path, one set of checks).
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "exchange.h"
#include "readers.h"
#include "dfbuffer/dfbuffer.h"
#include "mem.h"
#include "ops.h"
#include "api.h"

#include <string.h>

_Static_assert(DFBUFFER_NATIVE_RAW == DFB_NATIVE_RAW &&
                   DFBUFFER_NATIVE_INTERCHANGE == DFB_NATIVE_INTERCHANGE,
               "NativeFormat values");
_Static_assert(DFBUFFER_NULLS_MASK == DFB_NULLS_MASK &&
                   DFBUFFER_NULLS_FILL == DFB_NULLS_FILL &&
                   DFBUFFER_NULLS_RAISE == DFB_NULLS_RAISE,
               "nulls modes");
_Static_assert(DFBUFFER_DEVICE_CPU == kDLCPU &&
                   DFBUFFER_DEVICE_CUDA_HOST == kDLCUDAHost &&
                   DFBUFFER_DEVICE_CUDA_MANAGED == kDLCUDAManaged,
               "DLPack device types");

/* The METH_FASTCALL | METH_KEYWORDS signature (named here: the public
   typedef exists only from CPython 3.13). */
typedef PyObject *(*capi_fastcall)(PyObject *, PyObject *const *, Py_ssize_t,
                                   PyObject *);

/* The table plus what only this file sees. */
typedef struct {
    DfBuffer_CAPI api;
    capi_fastcall buffer_to_ndarray;
    capi_fastcall column_to_ndarray;
    capi_fastcall from_dataframe;
    PyObject *nulls_names[3];   /* "mask", "fill", "raise" */
    PyObject *kw_nulls;         /* ("nulls",) */
    PyObject *kw_nulls_copy;    /* ("nulls", "allow_copy") */
    PyObject *kw_offset_length; /* ("offset", "length") */
} capi_impl;

/* Returns the module of the table's Buffer type (borrowed) and its state in
 *st, or NULL with SystemError when the module is gone or `api` is NULL. */
static PyObject *
capi_module(const DfBuffer_CAPI *api, dfb_state **st)
{
    if (api == NULL) {
        PyErr_SetString(PyExc_SystemError,
                        "dfbuffer C API: the table argument is NULL (call "
                        "through the DfBuffer_* macros)");
        return NULL;
    }
    PyObject *m = PyType_GetModuleByDef(api->BufferType, &dfb_module_def);
    if (m == NULL) {
        return NULL;
    }
    *st = dfb_state_from_module(m);
    return m;
}

/* Returns a new reference to the dtype for `typestr` (NULL: "|u1"), or
   NULL with TypeError / ValueError set. */
static PyArray_Descr *
capi_descr(const char *typestr)
{
    if (typestr == NULL) {
        return PyArray_DescrFromType(NPY_UINT8);
    }
    return dfb_descr_from_typestr(typestr);
}

/* Returns 0 if `owner` is usable, or -1 with TypeError set for NULL. */
static int
capi_check_owner(PyObject *owner)
{
    if (owner == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "DfBuffer_New: owner is NULL (pass the object "
                        "keeping the memory alive, or Py_None)");
        return -1;
    }
    return 0;
}

/* DfBuffer_New (from_data 0: over [ptr, ptr + bufsize)) and
   DfBuffer_FromData (from_data 1: bufsize unused): checks the table, `owner`,
   then the shape arguments (`bad_shape`: the ValueError message when they do
   not fit, else NULL) and the dtype, and makes the Buffer over `ptr`.  New
   Buffer or NULL with an exception. */
static PyObject *
capi_make(const DfBuffer_CAPI *api, int from_data, void *ptr,
          Py_ssize_t bufsize, PyObject *owner, const char *bad_shape,
          const char *typestr, int ndim, const Py_ssize_t *shape,
          const Py_ssize_t *strides, int32_t device_type, int32_t device_id,
          int readonly)
{
    dfb_state *st;
    if (capi_module(api, &st) == NULL || capi_check_owner(owner) < 0) {
        return NULL;
    }
    if (bad_shape != NULL) {
        PyErr_SetString(PyExc_ValueError, bad_shape);
        return NULL;
    }
    PyArray_Descr *descr = capi_descr(typestr);
    if (descr == NULL) {
        return NULL;
    }
    DLDevice dev = {(DLDeviceType)device_type, device_id};
    PyObject *b =
        from_data
            ? dfb_buffer_from_data(st, (char *)ptr, owner, descr, ndim, shape,
                                   strides, dev, readonly, DFB_NATIVE_RAW)
            : dfb_buffer_new(st, (char *)ptr, bufsize, owner, descr, ndim,
                             shape, strides, dev, readonly, DFB_NATIVE_RAW);
    Py_DECREF(descr);
    return b;
}

/* DfBuffer_New: see dfbuffer.h.  New Buffer or NULL with an exception. */
static PyObject *
capi_buffer_new(const DfBuffer_CAPI *api, void *ptr, Py_ssize_t bufsize,
                PyObject *owner, const char *typestr, int ndim,
                const Py_ssize_t *shape, const Py_ssize_t *strides,
                int32_t device_type, int32_t device_id, int readonly)
{
    const char *bad_shape = shape == NULL && strides != NULL
                                ? "DfBuffer_New: strides without a shape "
                                  "(pass both, or a shape alone)"
                                : NULL;
    return capi_make(api, 0, ptr, bufsize, owner, bad_shape, typestr, ndim,
                     shape, strides, device_type, device_id, readonly);
}

/* DfBuffer_FromData: see dfbuffer.h.  New Buffer or NULL with an
   exception. */
static PyObject *
capi_buffer_from_data(const DfBuffer_CAPI *api, void *data, PyObject *owner,
                      const char *typestr, int ndim, const Py_ssize_t *shape,
                      const Py_ssize_t *strides, int32_t device_type,
                      int32_t device_id, int readonly)
{
    const char *bad_shape = ndim > 0 && shape == NULL
                                ? "DfBuffer_FromData: shape is NULL with "
                                  "ndim > 0"
                                : NULL;
    return capi_make(api, 1, data, 0, owner, bad_shape, typestr, ndim, shape,
                     strides, device_type, device_id, readonly);
}

/* Returns `op` as a Buffer of the table's module, or NULL with TypeError
   (`what` names the caller; SystemError for a NULL table). */
static DfbBuffer *
capi_as_buffer(const DfBuffer_CAPI *api, PyObject *op, const char *what)
{
    dfb_state *st;
    if (capi_module(api, &st) == NULL) {
        return NULL;
    }
    if (op == NULL || !PyObject_TypeCheck(op, api->BufferType)) {
        PyErr_Format(PyExc_TypeError,
                     "%s expects a dfbuffer.Buffer, got %.100s", what,
                     op == NULL ? "NULL" : Py_TYPE(op)->tp_name);
        return NULL;
    }
    return (DfbBuffer *)op;
}

/* DfBuffer_GetInfo: fills the first `size` bytes of *out (the consumer's
   sizeof(DfBuffer_Info); size 0 fills nothing, and out may then be NULL).
   Returns 0, or -1 with TypeError (not a Buffer, or out NULL with size >
   0). */
static int
capi_buffer_get_info(const DfBuffer_CAPI *api, PyObject *op,
                     DfBuffer_Info *out, size_t size)
{
    DfbBuffer *b = capi_as_buffer(api, op, "DfBuffer_GetInfo");
    if (b == NULL) {
        return -1;
    }
    if (out == NULL && size != 0) {
        PyErr_Format(PyExc_TypeError,
                     "DfBuffer_GetInfo: info is NULL (with info_size %zu)",
                     size);
        return -1;
    }
    DfBuffer_Info info;
    info.ptr = b->ptr;
    info.data = b->data;
    info.bufsize = b->bufsize;
    info.itemsize = PyDataType_ELSIZE(b->dtype);
    info.ndim = b->ndim;
    info.shape = b->shape;
    info.strides = b->strides;
    info.device_type = (int32_t)b->device.device_type;
    info.device_id = b->device.device_id;
    info.readonly = b->readonly;
    info.native = b->native;
    info.kind = b->dtype->kind;
    info.byteorder = b->dtype->byteorder;
    info.dtype = (PyObject *)b->dtype;
    info.owner = b->owner;
    dfb_memcpy(out, &info, size < sizeof(info) ? size : sizeof(info));
    return 0;
}

/* DfBuffer_FromObject: Buffer.from_object(obj, dtype).  New Buffer or NULL
   with an exception. */
static PyObject *
capi_buffer_from_object(const DfBuffer_CAPI *api, PyObject *obj,
                        PyObject *dtype)
{
    dfb_state *st;
    if (capi_module(api, &st) == NULL) {
        return NULL;
    }
    if (obj == NULL) {
        PyErr_SetString(PyExc_TypeError, "DfBuffer_FromObject: obj is NULL");
        return NULL;
    }
    return dfb_buffer_from_object_impl(st, obj,
                                       dtype == Py_None ? NULL : dtype);
}

/* DfBuffer_AsNdarray: an ndarray over the Buffer.  New reference or NULL
   with TypeError / BufferError. */
static PyObject *
capi_buffer_as_ndarray(const DfBuffer_CAPI *api, PyObject *op)
{
    DfbBuffer *b = capi_as_buffer(api, op, "DfBuffer_AsNdarray");
    if (b == NULL) {
        return NULL;
    }
    return dfb_buffer_as_ndarray(b);
}

/* Returns the borrowed "mask"/"fill"/"raise" string for `nulls`, or NULL
   with ValueError. */
static PyObject *
capi_nulls(const capi_impl *impl, int nulls)
{
    if (nulls < 0 || nulls > 2) {
        PyErr_Format(PyExc_ValueError,
                     "nulls must be DFBUFFER_NULLS_MASK, _FILL or _RAISE (0, "
                     "1 or 2), got %d",
                     nulls);
        return NULL;
    }
    return impl->nulls_names[nulls];
}

/* The start of the calls taking (object, nulls): stores the module in *m
   and returns the borrowed nulls= string, or NULL with an exception (the
   module gone, a bad `nulls`, TypeError "<what> is NULL" for a NULL
   `obj`). */
static PyObject *
capi_obj_nulls(const DfBuffer_CAPI *api, PyObject *obj, int nulls,
               const char *what, PyObject **m)
{
    dfb_state *st;
    *m = capi_module(api, &st);
    PyObject *n =
        *m == NULL ? NULL : capi_nulls((const capi_impl *)api, nulls);
    if (n == NULL) {
        return NULL;
    }
    if (obj == NULL) {
        PyErr_Format(PyExc_TypeError, "%s is NULL", what);
        return NULL;
    }
    return n;
}

/* DfBuffer_BufferToNdarray: buffer_to_ndarray(buffer, dtype, offset=,
   length=).  New reference or NULL with an exception. */
static PyObject *
capi_buffer_to_ndarray(const DfBuffer_CAPI *api, PyObject *buffer,
                       PyObject *dtype, int64_t offset, int64_t length)
{
    const capi_impl *impl = (const capi_impl *)api;
    dfb_state *st;
    PyObject *m = capi_module(api, &st);
    if (m == NULL) {
        return NULL;
    }
    if (buffer == NULL || dtype == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "DfBuffer_BufferToNdarray: buffer or dtype is NULL");
        return NULL;
    }
    PyObject *off = PyLong_FromLongLong(offset);
    if (off == NULL) {
        return NULL;
    }
    PyObject *len =
        length < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(length);
    if (len == NULL) {
        Py_DECREF(off);
        return NULL;
    }
    PyObject *args[4] = {buffer, dtype, off, len};
    PyObject *res =
        impl->buffer_to_ndarray(m, args, 2, impl->kw_offset_length);
    Py_DECREF(off);
    Py_DECREF(len);
    return res;
}

/* DfBuffer_ColumnToNdarray: column_to_ndarray(column, nulls=).  New
   reference or NULL with an exception. */
static PyObject *
capi_column_to_ndarray(const DfBuffer_CAPI *api, PyObject *column, int nulls)
{
    const capi_impl *impl = (const capi_impl *)api;
    PyObject *m;
    PyObject *n = capi_obj_nulls(api, column, nulls,
                                 "DfBuffer_ColumnToNdarray: column", &m);
    if (n == NULL) {
        return NULL;
    }
    PyObject *args[2] = {column, n};
    if (nulls == DFBUFFER_NULLS_MASK) {
        return impl->column_to_ndarray(m, args, 1, NULL);
    }
    return impl->column_to_ndarray(m, args, 1, impl->kw_nulls);
}

/* DfBuffer_FromDataFrame: from_dataframe(obj, nulls=, allow_copy=).  New
   dict or NULL with an exception. */
static PyObject *
capi_from_dataframe(const DfBuffer_CAPI *api, PyObject *obj, int nulls,
                    int allow_copy)
{
    const capi_impl *impl = (const capi_impl *)api;
    PyObject *m;
    PyObject *n =
        capi_obj_nulls(api, obj, nulls, "DfBuffer_FromDataFrame: obj", &m);
    if (n == NULL) {
        return NULL;
    }
    PyObject *args[3] = {obj, n, allow_copy ? Py_True : Py_False};
    return impl->from_dataframe(m, args, 1, impl->kw_nulls_copy);
}

/* Shared body of DfBuffer_ArrowToNdarray / _ArrowToDict: moves the structs
   in even when an argument is bad, so that each is released exactly
   once.  New reference or NULL with an exception. */
static PyObject *
capi_arrow(const DfBuffer_CAPI *api, struct ArrowArray *array,
           struct ArrowSchema *schema, int nulls, int allow_copy, int as_dict)
{
    const capi_impl *impl = (const capi_impl *)api;
    dfb_state *st;
    PyObject *m = capi_module(api, &st);
    if (m == NULL || capi_nulls(impl, nulls) == NULL) {
        /* still consume the structs: the caller gave them up */
        PyObject *saved = dfb_err_take();
        if (array != NULL && array->release != NULL) {
            array->release(array);
            array->release = NULL;
        }
        if (schema != NULL && schema->release != NULL) {
            schema->release(schema);
            schema->release = NULL;
        }
        dfb_err_give(saved);
        return NULL;
    }
    dfb_opts opts = DFB_OPTS_INIT;
    opts.nulls = (dfb_nulls_mode)nulls; /* checked by capi_nulls */
    return dfb_arrow_from_c(st, array, schema, as_dict, &opts,
                            allow_copy ? 1 : 0);
}

/* DfBuffer_ArrowToNdarray: see dfbuffer.h. */
static PyObject *
capi_arrow_to_ndarray(const DfBuffer_CAPI *api, struct ArrowArray *array,
                      struct ArrowSchema *schema, int nulls, int allow_copy)
{
    return capi_arrow(api, array, schema, nulls, allow_copy, 0);
}

/* DfBuffer_ArrowToDict: see dfbuffer.h. */
static PyObject *
capi_arrow_to_dict(const DfBuffer_CAPI *api, struct ArrowArray *array,
                   struct ArrowSchema *schema, int nulls, int allow_copy)
{
    return capi_arrow(api, array, schema, nulls, allow_copy, 1);
}

/* DfBuffer_ArrowStreamToDict: see dfbuffer.h. */
static PyObject *
capi_arrow_stream_to_dict(const DfBuffer_CAPI *api,
                          struct ArrowArrayStream *stream, int nulls,
                          int allow_copy)
{
    const capi_impl *impl = (const capi_impl *)api;
    dfb_state *st;
    PyObject *m = capi_module(api, &st);
    if (m == NULL || capi_nulls(impl, nulls) == NULL) {
        /* still consume the stream: the caller gave it up */
        if (stream != NULL && stream->release != NULL) {
            PyObject *saved = dfb_err_take();
            stream->release(stream);
            stream->release = NULL;
            dfb_err_give(saved);
        }
        return NULL;
    }
    dfb_opts opts = DFB_OPTS_INIT;
    opts.nulls = (dfb_nulls_mode)nulls; /* checked by capi_nulls */
    return dfb_arrow_stream_from_c(st, stream, &opts, allow_copy ? 1 : 0);
}

/* Drops the table's references and frees it.  Cannot fail. */
static void
capi_free(capi_impl *impl)
{
    for (int i = 0; i < 3; i++) {
        Py_XDECREF(impl->nulls_names[i]);
    }
    Py_XDECREF(impl->kw_nulls);
    Py_XDECREF(impl->kw_nulls_copy);
    Py_XDECREF(impl->kw_offset_length);
    PyMem_Free(impl);
}

/* Capsule destructor: frees the table.  Keeps any pending exception. */
static void
capi_capsule_destructor(PyObject *cap)
{
    PyObject *saved = dfb_err_take();
    capi_impl *impl = PyCapsule_GetPointer(cap, DFBUFFER_CAPI_NAME);
    if (impl != NULL) {
        capi_free(impl);
    }
    PyErr_Clear();
    dfb_err_give(saved);
}

/* Returns the C function of convert.c's method `name`, or NULL with
   SystemError. */
static capi_fastcall
capi_method(const char *name)
{
    for (PyMethodDef *d = dfb_convert_methods; d->ml_name != NULL; d++) {
        if (strcmp(d->ml_name, name) == 0 &&
            d->ml_flags == (METH_FASTCALL | METH_KEYWORDS)) {
            return (capi_fastcall)(void (*)(void))d->ml_meth;
        }
    }
    PyErr_Format(PyExc_SystemError, "dfbuffer: no fastcall method %s", name);
    return NULL;
}

/* Returns a new tuple of the interned names `a` and `b` (b may be NULL),
   for the converters' identity check of keyword names, or NULL with an
   exception set. */
static PyObject *
capi_kwnames(const char *a, const char *b)
{
    PyObject *sa = PyUnicode_InternFromString(a);
    PyObject *sb =
        b == NULL || sa == NULL ? NULL : PyUnicode_InternFromString(b);
    PyObject *t = NULL;
    if (sa != NULL && (b == NULL || sb != NULL)) {
        t = b == NULL ? PyTuple_Pack(1, sa) : PyTuple_Pack(2, sa, sb);
    }
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    return t;
}

/* Adds the capsule _C_API to module `m` (whose Buffer type is in `st`).
   Returns 0, or -1 with an exception set.  Called by module exec. */
int
dfb_capi_add(PyObject *m, dfb_state *st)
{
    capi_impl *impl = PyMem_Calloc(1, sizeof(*impl));
    if (impl == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    DfBuffer_CAPI *api = &impl->api;
    api->abi_version = DFBUFFER_ABI_VERSION;
    api->api_version = DFBUFFER_API_VERSION;
    api->BufferType = st->buffer_type;
    api->Buffer_New = capi_buffer_new;
    api->Buffer_FromData = capi_buffer_from_data;
    api->Buffer_GetInfo = capi_buffer_get_info;
    api->Buffer_FromObject = capi_buffer_from_object;
    api->Buffer_AsNdarray = capi_buffer_as_ndarray;
    api->BufferToNdarray = capi_buffer_to_ndarray;
    api->ColumnToNdarray = capi_column_to_ndarray;
    api->FromDataFrame = capi_from_dataframe;
    api->ArrowToNdarray = capi_arrow_to_ndarray;
    api->ArrowToDict = capi_arrow_to_dict;
    api->ArrowStreamToDict = capi_arrow_stream_to_dict;
    static const char *const nulls[3] = {"mask", "fill", "raise"};
    for (int i = 0; i < 3; i++) {
        impl->nulls_names[i] = PyUnicode_InternFromString(nulls[i]);
        if (impl->nulls_names[i] == NULL) {
            goto error;
        }
    }
    impl->kw_nulls = capi_kwnames("nulls", NULL);
    impl->kw_nulls_copy = capi_kwnames("nulls", "allow_copy");
    impl->kw_offset_length = capi_kwnames("offset", "length");
    if (impl->kw_nulls == NULL || impl->kw_nulls_copy == NULL ||
        impl->kw_offset_length == NULL) {
        goto error;
    }
    impl->buffer_to_ndarray = capi_method("buffer_to_ndarray");
    impl->column_to_ndarray = capi_method("column_to_ndarray");
    impl->from_dataframe = capi_method("from_dataframe");
    if (impl->buffer_to_ndarray == NULL || impl->column_to_ndarray == NULL ||
        impl->from_dataframe == NULL) {
        goto error;
    }
    PyObject *cap =
        PyCapsule_New(impl, DFBUFFER_CAPI_NAME, capi_capsule_destructor);
    if (cap == NULL) {
        goto error;
    }
    if (PyModule_AddObject(m, "_C_API", cap) < 0) {
        Py_DECREF(cap); /* the destructor frees the table */
        return -1;
    }
    return 0;
error:
    capi_free(impl);
    return -1;
}
