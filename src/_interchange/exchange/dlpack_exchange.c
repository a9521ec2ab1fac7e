/* dfbuffer: DLPack 1.3's C exchange API, both ways: the function table
 * dfbuffer.Buffer publishes as __dlpack_c_exchange_api__, and the import
 * of Buffer.from_object through a producer's table.
 *
 * Producer: one static const DLPackExchangeAPI, initialised at compile
 * time and never written (safety rule 7): every module instance (multi-
 * phase init) puts a capsule "dlpack_exchange_api" pointing at it in its
 * own Buffer type's dict, and it lives as long as the process.
 *   - managed_tensor_from_py_object_no_sync: what __dlpack__(max_version=
 *     (1, 3)) makes (no copy, own device, READ_ONLY as the Buffer).
 *   - managed_tensor_to_py_object_no_sync: a Buffer owning the tensor
 *     (the validation of a "dltensor_versioned" capsule's import).
 *   - dltensor_from_py_object_no_sync: a view borrowing the Buffer's shape
 *     and element strides (64-bit Py_ssize_t); read-only Buffers are
 *     refused (a DLTensor carries no read-only flag).
 *   - current_work_stream: NULL for every device (dfbuffer has no streams).
 *   - managed_tensor_allocator: C-contiguous zeroed host memory (kDLCPU
 *     only), one calloc; needs no GIL.
 *
 * Consumer: a producer's table is used when its type has the capsule, the
 * table (or one on its prev_api chain) is version 1.x with x >= 3, its
 * managed_tensor_from_py_object_no_sync is not NULL, the object has no
 * true requires_grad, the call succeeds and the tensor it gives is on the
 * CPU; else __dlpack__ is used (dlpack.c), whose refusals (and device
 * synchronisation) are the producer's reference behaviour.
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "exchange.h"
#include "dlpack_types.h"
#include "checked.h"
#include "probe.h"

#include <stdlib.h>

#define API_CAPSULE "dlpack_exchange_api"
#define OWN_MODULE "dfbuffer._interchange"

/* The oldest table version dfbuffer's consumer reads (the first with the
   exchange API), and how many prev_api links it follows at most. */
#define MIN_MINOR 3
#define MAX_CHAIN 16

/* Alignment of the allocator's data (a cache line). */
#define ALLOC_ALIGN 64

/* A non-NULL address for zero-size views (never read or written). */
static _Alignas(ALLOC_ALIGN) char empty_view[ALLOC_ALIGN];

/* ------------------------------------------------------------------ */
/* Producer                                                             */
/* ------------------------------------------------------------------ */

/* Returns `py_object` as a dfbuffer Buffer (borrowed), or NULL with
   TypeError when it is NULL or of another type. */
static DfbBuffer *
as_buffer(void *py_object)
{
    if (py_object == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "DLPack exchange API: py_object is NULL");
        return NULL;
    }
    PyObject *obj = (PyObject *)py_object;
    PyObject *mod = PyType_GetModuleByDef(Py_TYPE(obj), &dfb_module_def);
    if (mod == NULL ||
        !Py_IS_TYPE(obj, dfb_state_from_module(mod)->buffer_type)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "DLPack exchange API of dfbuffer.Buffer: expected a "
                     "dfbuffer.Buffer, got %.100s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return (DfbBuffer *)obj;
}

/* managed_tensor_from_py_object_no_sync: *out = the versioned managed
   tensor of Buffer `py_object`.  Returns 0, or -1 with *out = NULL (when
   out is not NULL) and an exception set.  Needs the GIL. */
static int
api_managed_from_py(void *py_object, DLManagedTensorVersioned **out)
{
    if (out == NULL) {
        PyErr_SetString(PyExc_ValueError, "DLPack exchange API: out is NULL");
        return -1;
    }
    *out = NULL;
    if (as_buffer(py_object) == NULL) {
        return -1;
    }
    DLManagedTensorVersioned *m =
        dfb_dlpack_export_versioned((PyObject *)py_object);
    if (m == NULL) {
        return -1;
    }
    *out = m;
    return 0;
}

/* Returns the state of the dfbuffer module sys.modules holds, importing it
   if need be, with a new reference to the module in *mod; or NULL with an
   exception set. */
static dfb_state *
current_state(PyObject **mod)
{
    PyObject *name = PyUnicode_FromString(OWN_MODULE);
    if (name == NULL) {
        return NULL;
    }
    PyObject *m = PyImport_GetModule(name);
    Py_DECREF(name);
    if (m == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        m = PyImport_ImportModule(OWN_MODULE);
        if (m == NULL) {
            return NULL;
        }
    }
    if (PyModule_GetDef(m) != &dfb_module_def) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ImportError, "sys.modules['" OWN_MODULE
                                           "'] is not dfbuffer's "
                                           "extension module");
        Py_DECREF(m);
        return NULL;
    }
    *mod = m;
    return dfb_state_from_module(m);
}

/* managed_tensor_to_py_object_no_sync: *out_py_object = a new Buffer
   owning `tensor` (stolen in every case: on a failure its deleter has
   run).  Returns 0, or -1 with an exception set.  Needs the GIL. */
static int
api_managed_to_py(DLManagedTensorVersioned *tensor, void **out_py_object)
{
    if (out_py_object != NULL) {
        *out_py_object = NULL;
    }
    if (tensor == NULL || out_py_object == NULL) {
        if (tensor != NULL && tensor->deleter != NULL) {
            tensor->deleter(tensor);
        }
        PyErr_Format(PyExc_ValueError, "DLPack exchange API: %s is NULL",
                     tensor == NULL ? "tensor" : "out_py_object");
        return -1;
    }
    PyObject *mod;
    dfb_state *st = current_state(&mod);
    if (st == NULL) {
        PyObject *exc = dfb_err_take();
        if (tensor->deleter != NULL) {
            tensor->deleter(tensor);
        }
        dfb_err_give(exc);
        return -1;
    }
    PyObject *res = dfb_dlpack_import_versioned(st, tensor, NULL);
    Py_DECREF(mod);
    if (res == NULL) {
        return -1;
    }
    *out_py_object = res;
    return 0;
}

/* dltensor_from_py_object_no_sync: fills *out with a view of Buffer
   `py_object` that borrows its shape and element strides (valid while the
   Buffer lives).  Returns 0, or -1 with an exception set: BufferError for
   a read-only Buffer, a dtype or stride DLPack cannot describe, a Buffer
   cleared by the collector, or a 32-bit Py_ssize_t.  Needs the GIL. */
static int
api_dltensor_from_py(void *py_object, DLTensor *out)
{
    if (out == NULL) {
        PyErr_SetString(PyExc_ValueError, "DLPack exchange API: out is NULL");
        return -1;
    }
    DfbBuffer *b = as_buffer(py_object);
    if (b == NULL) {
        return -1;
    }
#if SIZEOF_SIZE_T != 8
    PyErr_SetString(PyExc_BufferError,
                    "dfbuffer lends no DLTensor view where Py_ssize_t is "
                    "not 64 bits wide; use "
                    "managed_tensor_from_py_object_no_sync");
    return -1;
#else
    if (b->owner == NULL) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer was cleared by the garbage collector");
        return -1;
    }
    if (b->readonly) {
        PyErr_SetString(PyExc_BufferError,
                        "a DLTensor view has no read-only flag: dfbuffer "
                        "lends none of a read-only Buffer; use "
                        "managed_tensor_from_py_object_no_sync");
        return -1;
    }
    DLDataType dt;
    if (dfb_dlpack_dtype(b->dtype, &dt) < 0) {
        return -1;
    }
    const Py_ssize_t itemsize = PyDataType_ELSIZE(b->dtype);
    const Py_ssize_t size = dfb_buffer_size(b);
    const Py_ssize_t *elem = DfbBuffer_ELEM(b);
    for (int i = 0; i < b->ndim; i++) {
        if (b->shape[i] > 1 && size != 0 &&
            elem[i] * itemsize != b->strides[i]) {
            PyErr_Format(PyExc_BufferError,
                         "DLPack strides count elements, but stride %zd of "
                         "dimension %d is not a multiple of the itemsize "
                         "%zd",
                         b->strides[i], i, itemsize);
            return -1;
        }
    }
    out->data =
        (size == 0 || b->data == NULL) ? (void *)empty_view : (void *)b->data;
    out->device = b->device;
    out->ndim = b->ndim;
    out->dtype = dt;
    out->shape = b->ndim > 0 ? (int64_t *)b->shape : NULL;
    out->strides = b->ndim > 0 ? (int64_t *)elem : NULL;
    out->byte_offset = 0;
    return 0;
#endif
}

/* current_work_stream: *out_current_stream = NULL for any device (dfbuffer
   runs no kernels and knows no streams).  Returns 0, or -1 with
   ValueError for a NULL out or a negative device id (needs the GIL then
   only). */
static int
api_current_work_stream(DLDeviceType device_type, int32_t device_id,
                        void **out_current_stream)
{
    if (out_current_stream == NULL || device_id < 0) {
        PyGILState_STATE g = PyGILState_Ensure();
        PyErr_Format(PyExc_ValueError,
                     "DLPack exchange API current_work_stream: %s",
                     out_current_stream == NULL ? "out_current_stream is NULL"
                                                : "negative device id");
        PyGILState_Release(g);
        return -1;
    }
    (void)device_type;
    *out_current_stream = NULL;
    return 0;
}

/* The allocator's deleter: frees the block.  Pure C; never fails. */
static void
free_block(DLManagedTensorVersioned *m)
{
    free(m);
}

/* Reports `message` through `set_error` (kind `kind`) and returns -1. */
static int
alloc_fail(void *ctx,
           void (*set_error)(void *ctx, const char *kind, const char *message),
           const char *kind, const char *message)
{
    set_error(ctx, kind, message);
    return -1;
}

/* managed_tensor_allocator: *out = a new C-contiguous zeroed host tensor
   of the prototype's dtype, ndim and shape (device kDLCPU only), one
   calloc freed by its deleter.  Returns 0, or -1 with *out = NULL after
   calling SetError once (-1 alone when SetError is NULL).  Pure C: needs
   no GIL. */
static int
api_allocator(DLTensor *prototype, DLManagedTensorVersioned **out,
              void *error_ctx,
              void (*SetError)(void *error_ctx, const char *kind,
                               const char *message))
{
    if (out != NULL) {
        *out = NULL;
    }
    if (SetError == NULL) {
        return -1;
    }
    if (prototype == NULL || out == NULL) {
        return alloc_fail(error_ctx, SetError, "ValueError",
                          "DLPack exchange API allocator: prototype or out "
                          "is NULL");
    }
    if (prototype->device.device_type != kDLCPU ||
        prototype->device.device_id != 0) {
        return alloc_fail(error_ctx, SetError, "BufferError",
                          "dfbuffer allocates on the CPU (device (1, 0)) "
                          "only");
    }
    char ts[8];
    DLDataType dt = prototype->dtype;
    if (dfb_dlpack_typestr(dt.code, dt.bits, dt.lanes, ts, sizeof(ts)) < 0) {
        return alloc_fail(error_ctx, SetError, "BufferError",
                          "dfbuffer cannot allocate this DLPack dtype");
    }
    const int ndim = prototype->ndim;
    if (ndim < 0 || ndim > DFB_MAXDIM ||
        (ndim > 0 && prototype->shape == NULL)) {
        return alloc_fail(error_ctx, SetError, "ValueError",
                          "DLPack exchange API allocator: ndim out of range "
                          "or a NULL shape");
    }
    int64_t shape[DFB_MAXDIM];
    for (int i = 0; i < ndim; i++) {
        /* read once, with memcpy (a hand-made prototype may misalign) */
        memcpy(&shape[i], (const char *)prototype->shape + i * sizeof(int64_t),
               sizeof(int64_t));
    }
    int64_t count, nbytes, total;
    const int64_t head =
        ((int64_t)sizeof(DLManagedTensorVersioned) + 7) & ~(int64_t)7;
    const int64_t dims_bytes = 2 * (int64_t)ndim * (int64_t)sizeof(int64_t);
    if (dfb_checked_shape(shape, ndim, &count) < 0 ||
        dfb_checked_mul(count, (dt.bits + 7) / 8, &nbytes) < 0 ||
        dfb_checked_add(nbytes, head + dims_bytes + ALLOC_ALIGN, &total) < 0 ||
        (uint64_t)total > (uint64_t)SIZE_MAX) {
        return alloc_fail(error_ctx, SetError, "ValueError",
                          "DLPack exchange API allocator: a negative or "
                          "too large shape");
    }
    /* beyond physical memory: refused before the request is made */
    char *base = total > dfb_alloc_limit() ? NULL : calloc(1, (size_t)total);
    if (base == NULL) {
        return alloc_fail(error_ctx, SetError, "MemoryError",
                          "DLPack exchange API allocator: out of memory");
    }
    DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)base;
    int64_t *tshape = (int64_t *)(base + head);
    int64_t *tstrides = tshape + ndim;
    int64_t c_stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        tshape[i] = shape[i];
        tstrides[i] = c_stride;
        /* bounded: the product of all dims (count) fits, or one is 0 and
           the strides only place-hold */
        if (dfb_checked_mul(c_stride, shape[i] > 1 ? shape[i] : 1, &c_stride) <
            0) {
            c_stride = 0;
        }
    }
    uintptr_t data = (uintptr_t)(base + head + dims_bytes);
    data = (data + ALLOC_ALIGN - 1) & ~(uintptr_t)(ALLOC_ALIGN - 1);
    m->version.major = DLPACK_MAJOR_VERSION;
    m->version.minor = DLPACK_MINOR_VERSION;
    m->manager_ctx = NULL;
    m->deleter = free_block;
    m->flags = 0;
    m->dl_tensor.data = (void *)data;
    m->dl_tensor.device = prototype->device;
    m->dl_tensor.ndim = ndim;
    m->dl_tensor.dtype = dt;
    m->dl_tensor.shape = ndim > 0 ? tshape : NULL;
    m->dl_tensor.strides = ndim > 0 ? tstrides : NULL;
    m->dl_tensor.byte_offset = 0;
    *out = m;
    return 0;
}

/* The table: made by the compiler, never written. */
static const DLPackExchangeAPI exchange_api = {
    .header = {.version = {.major = DLPACK_MAJOR_VERSION,
                           .minor = DLPACK_MINOR_VERSION},
               .prev_api = NULL},
    .managed_tensor_allocator = api_allocator,
    .managed_tensor_from_py_object_no_sync = api_managed_from_py,
    .managed_tensor_to_py_object_no_sync = api_managed_to_py,
    .dltensor_from_py_object_no_sync = api_dltensor_from_py,
    .current_work_stream = api_current_work_stream,
};

int
dfb_dlpack_exchange_attach(PyTypeObject *buffer_type)
{
    /* consumers only read the table: the const is cast away for the
       capsule alone */
    PyObject *cap = PyCapsule_New((void *)&exchange_api, API_CAPSULE, NULL);
    if (cap == NULL) {
        return -1;
    }
    /* a heap type's own dict (immutable to Python code, not to its
       module's init) */
    int r = PyDict_SetItemString(buffer_type->tp_dict,
                                 "__dlpack_c_exchange_api__", cap);
    Py_DECREF(cap);
    if (r == 0) {
        PyType_Modified(buffer_type);
    }
    return r;
}

/* ------------------------------------------------------------------ */
/* Consumer                                                             */
/* ------------------------------------------------------------------ */

/* Returns the table of capsule `cap` dfbuffer can read (version 1.x with
   x >= MIN_MINOR, found on the prev_api chain when the first is newer),
   or NULL (no exception) when there is none. */
static const DLPackExchangeAPI *
readable_table(PyObject *cap)
{
    if (!PyCapsule_CheckExact(cap) || !PyCapsule_IsValid(cap, API_CAPSULE)) {
        return NULL;
    }
    const DLPackExchangeAPIHeader *h = PyCapsule_GetPointer(cap, API_CAPSULE);
    for (int i = 0; h != NULL && i < MAX_CHAIN; i++, h = h->prev_api) {
        if (h->version.major == DLPACK_MAJOR_VERSION &&
            h->version.minor >= MIN_MINOR) {
            return (const DLPackExchangeAPI *)h;
        }
        if (h->version.major < DLPACK_MAJOR_VERSION) {
            return NULL; /* older still down the chain */
        }
    }
    return NULL;
}

/* Returns 1 when `obj` has a true `requires_grad` (a torch tensor that
   autograd tracks: torch's __dlpack__ refuses it, its exchange API does
   not), 0 if not or when its type has no such attribute, or -1 with an
   exception set. */
static int
requires_grad(dfb_state *st, PyObject *obj)
{
    PyObject *v;
    int r = dfb_type_lookup(obj, st->str.requires_grad, &v);
    if (r <= 0) {
        return r;
    }
    Py_DECREF(v);
    v = PyObject_GetAttr(obj, st->str.requires_grad);
    if (v == NULL) {
        return -1;
    }
    r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

PyObject *
dfb_dlpack_import_exchange(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    PyObject *cap;
    int r = dfb_type_lookup(obj, st->str.dlpack_c_exchange_api, &cap);
    if (r <= 0) {
        return NULL;
    }
    /* `cap` is held until the call returns: a class replacing the
       attribute meanwhile cannot free a table in use */
    const DLPackExchangeAPI *api = readable_table(cap);
    if (api == NULL || api->managed_tensor_from_py_object_no_sync == NULL) {
        Py_DECREF(cap);
        return NULL;
    }
    if (dfb_import_refuse_lazy_views(st, obj) < 0 ||
        (r = requires_grad(st, obj)) != 0) {
        Py_DECREF(cap);
        return NULL; /* an error, or __dlpack__ gives torch's refusal */
    }
    DLManagedTensorVersioned *m = NULL;
    int rc = api->managed_tensor_from_py_object_no_sync(obj, &m);
    Py_DECREF(cap);
    if (rc != 0) {
        /* `m` is not looked at: a failed call gives no tensor.  The
           producer's __dlpack__ is asked instead (its Python-level checks
           give the refusal users know: torch's BufferError for a sparse
           tensor, where its exchange API raises RuntimeError), unless
           the error is no Exception (KeyboardInterrupt, ...). */
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) {
            return NULL;
        }
        PyErr_Clear();
        return NULL;
    }
    if (m == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_BufferError,
                         "%.100s's DLPack exchange API gave no tensor",
                         Py_TYPE(obj)->tp_name);
        }
        return NULL;
    }
    if (PyErr_Occurred()) {
        /* success with an exception set: the exception stands, the tensor
           (given to us) is released */
        PyObject *exc = dfb_err_take();
        if (m->deleter != NULL) {
            m->deleter(m);
        }
        dfb_err_give(exc);
        return NULL;
    }
    if (m->version.major == DLPACK_MAJOR_VERSION &&
        m->dl_tensor.device.device_type != kDLCPU) {
        /* no synchronisation was done: device memory goes through
           __dlpack__, whose producer orders it */
        if (m->deleter != NULL) {
            m->deleter(m);
        }
        return NULL;
    }
    return dfb_dlpack_import_versioned(st, m, dtype);
}
