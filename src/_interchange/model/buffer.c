/* dfbuffer.Buffer: construction and validation (dfb_buffer_new,
 * dfb_buffer_from_data), the layout and device checks, and the NumPy view.
 *
 * The type itself (its slots, attributes, method table) is buffer_type.c;
 * the exports live in dlpack.c, export_array.c and arrow_export.c,
 * the imports in import.c, dlpack.c and array_dunders.c.
 */
#include "common.h"
#include "model.h"
#include "dtype.h"
#include "layout.h"
#include "mem.h"
#include "checked.h"
#include "dlpack_types.h"

#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Arithmetic and layout helpers                                        */
/* ------------------------------------------------------------------ */

/* Returns a*b in *out and 0, or -1 (no exception) on overflow. */
static int
mul_ssize(Py_ssize_t a, Py_ssize_t b, Py_ssize_t *out)
{
    long long r;
    if (__builtin_mul_overflow((long long)a, (long long)b, &r) ||
        r > PY_SSIZE_T_MAX || r < PY_SSIZE_T_MIN) {
        return -1;
    }
    *out = (Py_ssize_t)r;
    return 0;
}

/* The pure computation is core's dfb_extent (layout.c); this converts
   the Py_ssize_t arrays and turns its DFB_EOVERFLOW into OverflowError. */
int
dfb_extent(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
           Py_ssize_t itemsize, Py_ssize_t *lo, Py_ssize_t *hi)
{
    /* the common case, 1-D contiguous (core's general rule gives the
       same): no copy into int64 arrays */
    if (ndim == 1 && strides[0] == itemsize && itemsize > 0 && shape[0] >= 0 &&
        shape[0] <= PY_SSIZE_T_MAX / itemsize) {
        *lo = 0;
        *hi = shape[0] * itemsize;
        return 0;
    }
    int64_t small[2 * 16] = {0}, *dims = small;
    int64_t l, h;
    dfb_error err;
    if (ndim > 16) {
        dims = PyMem_Malloc(2 * (size_t)ndim * sizeof(int64_t));
        if (dims == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    for (int i = 0; i < ndim; i++) {
        dims[i] = shape[i];
        dims[ndim + i] = strides[i];
    }
    dfb_code rc = dfb_core_extent(ndim, dims, dims + (ndim > 0 ? ndim : 0),
                                  itemsize, PY_SSIZE_T_MAX, &l, &h, &err);
    if (dims != small) {
        PyMem_Free(dims);
    }
    if (rc != DFB_OK) {
        PyErr_SetString(PyExc_OverflowError, err.message);
        return -1;
    }
    *lo = (Py_ssize_t)l;
    *hi = (Py_ssize_t)h;
    return 0;
}

/* Core's dfb_layout_is_contiguous (layout.c) over the Py_ssize_t arrays
   (copied: at most DFB_MAXDIM dimensions). */
static int
is_contiguous(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
              Py_ssize_t itemsize, int fortran)
{
    int64_t sh[DFB_MAXDIM], st[DFB_MAXDIM];
    if (ndim < 0 || ndim > DFB_MAXDIM) {
        return 0; /* no Buffer has such a shape */
    }
    for (int i = 0; i < ndim; i++) {
        sh[i] = shape[i];
        st[i] = strides[i];
    }
    return dfb_layout_is_contiguous(ndim, sh, st, itemsize, fortran);
}

int
dfb_is_c_contiguous(int ndim, const Py_ssize_t *shape,
                    const Py_ssize_t *strides, Py_ssize_t itemsize)
{
    return is_contiguous(ndim, shape, strides, itemsize, 0);
}

int
dfb_is_f_contiguous(int ndim, const Py_ssize_t *shape,
                    const Py_ssize_t *strides, Py_ssize_t itemsize)
{
    return is_contiguous(ndim, shape, strides, itemsize, 1);
}

Py_ssize_t
dfb_buffer_size(const DfbBuffer *b)
{
    Py_ssize_t n = 1;
    for (int i = 0; i < b->ndim; i++) {
        n *= b->shape[i];
    }
    return n;
}

int
dfb_buffer_require_host(const DfbBuffer *b, const char *what)
{
    if (dfb_dlpack_host_readable(b->device.device_type)) {
        return 0;
    }
    PyErr_Format(PyExc_BufferError,
                 "%s needs host memory, but this Buffer is on device (%d, %d)",
                 what, (int)b->device.device_type, (int)b->device.device_id);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Argument parsing                                                     */
/* ------------------------------------------------------------------ */

/* Returns 1 for a DLPack device type dfbuffer knows, else 0. */
static int
known_device_type(long t)
{
    switch (t) {
        case kDLCPU:
        case kDLCUDA:
        case kDLCUDAHost:
        case kDLOpenCL:
        case kDLVulkan:
        case kDLMetal:
        case kDLVPI:
        case kDLROCM:
        case kDLROCMHost:
        case kDLExtDev:
        case kDLCUDAManaged:
        case kDLOneAPI:
        case kDLWebGPU:
        case kDLHexagon:
        case kDLMAIA:
        case kDLTrn:
            return 1;
        default:
            return 0;
    }
}

int
dfb_parse_device(PyObject *obj, DLDevice *out)
{
    if (PyTuple_CheckExact(obj) && PyTuple_GET_SIZE(obj) == 2) {
        /* the common (int, int-or-None) tuple, read as below reads it (an
           exact tuple's items need no Python code); anything unusual
           takes the general path for its error */
        PyObject *t = PyTuple_GET_ITEM(obj, 0), *id = PyTuple_GET_ITEM(obj, 1);
        int ovt = 1, ovi = 0;
        long tv = PyLong_Check(t) && !PyBool_Check(t)
                      ? PyLong_AsLongAndOverflow(t, &ovt)
                      : -1;
        long iv = 0;
        if (id != Py_None) {
            iv = PyLong_Check(id) && !PyBool_Check(id)
                     ? PyLong_AsLongAndOverflow(id, &ovi)
                     : -1;
        }
        if ((tv == -1 || iv == -1) && PyErr_Occurred()) {
            return -1; /* cannot happen for ints */
        }
        if (!ovt && !ovi && known_device_type(tv) && iv >= 0 &&
            iv <= INT32_MAX) {
            out->device_type = (DLDeviceType)tv;
            out->device_id = (int32_t)iv;
            return 0;
        }
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj)) {
        PyErr_Format(
            PyExc_TypeError,
            "device must be a (device_type, device_id) tuple, not %.100s",
            Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PySequence_Size(obj) != 2) {
        PyErr_SetString(PyExc_ValueError,
                        "device must have exactly two items: "
                        "(device_type, device_id)");
        return -1;
    }
    PyObject *t = PySequence_GetItem(obj, 0);
    if (t == NULL) {
        return -1;
    }
    PyObject *id = PySequence_GetItem(obj, 1);
    if (id == NULL) {
        Py_DECREF(t);
        return -1;
    }
    int ret = -1;
    if (!PyLong_Check(t) || PyBool_Check(t)) {
        PyErr_Format(PyExc_TypeError, "device type must be an int, not %.100s",
                     Py_TYPE(t)->tp_name);
        goto done;
    }
    int overflow = 0;
    long tv = PyLong_AsLongAndOverflow(t, &overflow);
    if (tv == -1 && PyErr_Occurred()) {
        goto done;
    }
    if (overflow || !known_device_type(tv)) {
        PyErr_Format(PyExc_ValueError, "unknown DLPack device type %R", t);
        goto done;
    }
    long iv = 0;
    if (id != Py_None) {
        if (!PyLong_Check(id) || PyBool_Check(id)) {
            PyErr_Format(PyExc_TypeError,
                         "device id must be an int or None, not %.100s",
                         Py_TYPE(id)->tp_name);
            goto done;
        }
        iv = PyLong_AsLongAndOverflow(id, &overflow);
        if (iv == -1 && PyErr_Occurred()) {
            goto done;
        }
        if (overflow || iv < 0 || iv > INT32_MAX) {
            PyErr_Format(PyExc_ValueError,
                         "device id must be in [0, 2**31), got %R", id);
            goto done;
        }
    }
    out->device_type = (DLDeviceType)tv;
    out->device_id = (int32_t)iv;
    ret = 0;
done:
    Py_DECREF(t);
    Py_DECREF(id);
    return ret;
}
/* ------------------------------------------------------------------ */
/* Construction                                                         */
/* ------------------------------------------------------------------ */

/* Allocates and fills a Buffer after every check passed.  Returns a new
   reference or NULL (MemoryError). */
static inline PyObject *
buffer_alloc(dfb_state *st, char *ptr, char *data, Py_ssize_t bufsize,
             PyObject *owner, PyArray_Descr *dtype, int ndim,
             const Py_ssize_t *shape, const Py_ssize_t *strides,
             DLDevice device, int readonly, int native)
{
    PyTypeObject *tp = st->buffer_type;
    /* Every field is set below (no zeroing), and the Buffer is tracked
       only once complete, and only when it can be part of a cycle.  The
       type's tp_alloc is PyType_GenericAlloc (it sets none). */
    DfbBuffer *self = PyObject_GC_NewVar(DfbBuffer, tp, 3 * (Py_ssize_t)ndim);
    if (self == NULL) {
        return NULL;
    }
    self->ptr = ptr;
    self->data = data;
    self->bufsize = bufsize;
    Py_INCREF(dtype);
    self->dtype = dtype;
    Py_INCREF(owner);
    self->owner = owner;
    /* Neither owner nor dtype a GC object (a capsule; an Arrow holder or
       DLPack owner over a producer's memory, which their makers untrack
       for good): the Buffer cannot be part of a reference cycle (its type
       is immutable, without subclasses, and the two never change), so it
       is untracked, as CPython untracks tuples of atoms: no collections.
       From 3.13 capsules are of a GC type, tracked only when given a
       traverse function: an untracked one counts as no GC object. */
    const int owner_gc = PyObject_IS_GC(owner) &&
                         !((PyCapsule_CheckExact(owner) ||
                            Py_IS_TYPE(owner, st->arrow_holder_type) ||
                            Py_IS_TYPE(owner, st->dlpack_owner_type)) &&
                           !PyObject_GC_IsTracked(owner));
    self->weakreflist = NULL;
    self->device = device;
    self->ndim = ndim;
    self->readonly = readonly ? 1 : 0;
    self->native = native;
    self->shape = self->dims;
    self->strides = self->dims + ndim;
    if (ndim == 1) {
        self->dims[0] = shape[0];
        self->dims[1] = strides[0];
    }
    else if (ndim > 0) {
        dfb_memcpy(self->shape, shape, ndim * sizeof(Py_ssize_t));
        dfb_memcpy(self->strides, strides, ndim * sizeof(Py_ssize_t));
    }
    /* the strides in elements (DfbBuffer_ELEM) */
    const Py_ssize_t itemsize = PyDataType_ELSIZE(dtype);
    Py_ssize_t c_stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        Py_ssize_t bs = strides[i];
        self->dims[2 * ndim + i] =
            itemsize > 0 && bs % itemsize == 0 ? bs / itemsize : c_stride;
        /* saturates: with a zero-size dimension the others are unbounded
           (the value then serves only as a placeholder) */
        int64_t next;
        c_stride = dfb_checked_mul(c_stride, shape[i] > 1 ? shape[i] : 1,
                                   &next) == 0 &&
                           next <= PY_SSIZE_T_MAX
                       ? (Py_ssize_t)next
                       : PY_SSIZE_T_MAX;
    }
    if (owner_gc || PyObject_IS_GC((PyObject *)dtype)) {
        PyObject_GC_Track(self);
    }
    return (PyObject *)self;
}

/* Checks the common arguments and fills default strides.  Returns 0, or -1
   with an exception set. */
static int
check_common(PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
             const Py_ssize_t *strides, Py_ssize_t *cstrides, DLDevice device,
             int native, const Py_ssize_t **strides_out)
{
    if (dfb_buffer_check_dtype(dtype) < 0) {
        return -1;
    }
    if (ndim < 0 || ndim > DFB_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "ndim must be in [0, %d], got %d",
                     DFB_MAXDIM, ndim);
        return -1;
    }
    if (!known_device_type(device.device_type) || device.device_id < 0) {
        PyErr_Format(PyExc_ValueError, "unknown device (%d, %d)",
                     (int)device.device_type, (int)device.device_id);
        return -1;
    }
    if (native < 0 || native >= DFB_NATIVE_COUNT) {
        PyErr_Format(PyExc_ValueError, "unknown NativeFormat value %d",
                     native);
        return -1;
    }
    Py_ssize_t itemsize = PyDataType_ELSIZE(dtype);
    Py_ssize_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            PyErr_Format(PyExc_ValueError, "shape[%d] must be >= 0, got %zd",
                         i, shape[i]);
            return -1;
        }
        if (mul_ssize(n, shape[i], &n) < 0) {
            PyErr_SetString(PyExc_OverflowError,
                            "the number of elements overflows Py_ssize_t");
            return -1;
        }
    }
    Py_ssize_t nbytes;
    if (mul_ssize(n, itemsize, &nbytes) < 0) {
        PyErr_SetString(PyExc_OverflowError,
                        "the size in bytes overflows Py_ssize_t");
        return -1;
    }
    if (strides == NULL) {
        Py_ssize_t s = itemsize;
        for (int i = ndim - 1; i >= 0; i--) {
            cstrides[i] = s;
            /* Overflow only happens for zero-size arrays (nbytes fits
               otherwise), whose strides address nothing: saturate. */
            if (shape[i] > 0 && mul_ssize(s, shape[i], &s) < 0) {
                s = PY_SSIZE_T_MAX;
            }
        }
        *strides_out = cstrides;
    }
    else {
        *strides_out = strides;
    }
    return 0;
}

PyObject *
dfb_buffer_new(dfb_state *st, char *ptr, Py_ssize_t bufsize, PyObject *owner,
               PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
               const Py_ssize_t *strides, DLDevice device, int readonly,
               int native)
{
    Py_ssize_t dflt_shape[1];
    Py_ssize_t cstrides[DFB_MAXDIM];
    const Py_ssize_t *st_use;

    if (shape == NULL && strides == NULL) {
        /* The readers' common case, 1-D contiguous over the whole block,
           checked in one pass: what the checks below find valid (then
           check_common and dfb_extent add nothing).  Anything else takes
           them, for its error. */
        Py_ssize_t isz = PyDataType_ELSIZE(dtype);
        if (bufsize >= 0 && (ptr != NULL || bufsize == 0) &&
            (uintptr_t)ptr <= UINTPTR_MAX - (uintptr_t)bufsize &&
            dfb_buffer_dtype_ok(dtype) && isz > 0 &&
            (isz == 1 || bufsize % isz == 0) &&
            known_device_type(device.device_type) && device.device_id >= 0 &&
            native >= 0 && native < DFB_NATIVE_COUNT) {
            dflt_shape[0] = isz == 1 ? bufsize : bufsize / isz;
            return buffer_alloc(st, ptr, ptr, bufsize, owner, dtype, 1,
                                dflt_shape, &isz, device, readonly, native);
        }
    }
    if (bufsize < 0) {
        PyErr_Format(PyExc_ValueError, "bufsize must be >= 0, got %zd",
                     bufsize);
        return NULL;
    }
    if (ptr == NULL && bufsize != 0) {
        PyErr_Format(PyExc_ValueError,
                     "a NULL pointer cannot describe %zd bytes", bufsize);
        return NULL;
    }
    if ((uintptr_t)ptr > UINTPTR_MAX - (uintptr_t)bufsize) {
        PyErr_SetString(PyExc_OverflowError,
                        "ptr + bufsize overflows the address space");
        return NULL;
    }
    if (dfb_buffer_check_dtype(dtype) < 0) {
        return NULL;
    }
    Py_ssize_t itemsize = PyDataType_ELSIZE(dtype);
    if (shape == NULL) {
        if (bufsize % itemsize != 0) {
            PyErr_Format(PyExc_ValueError,
                         "bufsize %zd is not a multiple of the itemsize %zd "
                         "of dtype %R; pass a shape",
                         bufsize, itemsize, (PyObject *)dtype);
            return NULL;
        }
        dflt_shape[0] = bufsize / itemsize;
        shape = dflt_shape;
        ndim = 1;
    }
    if (check_common(dtype, ndim, shape, strides, cstrides, device, native,
                     &st_use) < 0) {
        return NULL;
    }
    Py_ssize_t lo, hi;
    if (dfb_extent(ndim, shape, st_use, itemsize, &lo, &hi) < 0) {
        return NULL;
    }
    if (hi - lo > bufsize) {
        PyErr_Format(PyExc_ValueError,
                     "shape and strides address %zd bytes, more than "
                     "bufsize %zd",
                     hi - lo, bufsize);
        return NULL;
    }
    /* ptr is the lowest address; element 0 lies -lo bytes above it. */
    return buffer_alloc(st, ptr, ptr == NULL ? NULL : ptr - lo, bufsize, owner,
                        dtype, ndim, shape, st_use, device, readonly, native);
}

PyObject *
dfb_buffer_from_data(dfb_state *st, char *data, PyObject *owner,
                     PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
                     const Py_ssize_t *strides, DLDevice device, int readonly,
                     int native)
{
    Py_ssize_t cstrides[DFB_MAXDIM];
    const Py_ssize_t *st_use;
    if (ndim > 0 && shape == NULL) {
        PyErr_SetString(PyExc_SystemError, "dfb_buffer_from_data: no shape");
        return NULL;
    }
    if (check_common(dtype, ndim, shape, strides, cstrides, device, native,
                     &st_use) < 0) {
        return NULL;
    }
    Py_ssize_t lo, hi;
    if (dfb_extent(ndim, shape, st_use, PyDataType_ELSIZE(dtype), &lo, &hi) <
        0) {
        return NULL;
    }
    if (data == NULL && hi - lo != 0) {
        PyErr_SetString(PyExc_ValueError,
                        "a NULL data pointer cannot describe a non-empty "
                        "array");
        return NULL;
    }
    uintptr_t addr = (uintptr_t)data;
    if ((lo < 0 && addr < (uintptr_t)(-lo)) ||
        (hi > 0 && addr > UINTPTR_MAX - (uintptr_t)hi)) {
        PyErr_SetString(PyExc_OverflowError,
                        "the strides reach outside the address space");
        return NULL;
    }
    char *ptr = data == NULL ? NULL : data + lo;
    return buffer_alloc(st, ptr, data, hi - lo, owner, dtype, ndim, shape,
                        st_use, device, readonly, native);
}

PyObject *
dfb_dims_tuple(const Py_ssize_t *d, int n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        PyObject *v = PyLong_FromSsize_t(d[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* ------------------------------------------------------------------ */
/* ndarray view                                                         */
/* ------------------------------------------------------------------ */

PyObject *
dfb_buffer_as_ndarray(DfbBuffer *b)
{
    if (dfb_buffer_require_host(b, "a NumPy view") < 0) {
        return NULL;
    }
    static char dummy;
    char *data = b->data != NULL ? b->data : &dummy;
    Py_INCREF(b->dtype);
    PyObject *arr = PyArray_NewFromDescr(
        &PyArray_Type, b->dtype, b->ndim, b->shape, b->strides, data,
        b->readonly ? 0 : NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) {
        return NULL;
    }
    Py_INCREF(b);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)b) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

PyObject *
dfb_buffer_view_1d(DfbBuffer *b, PyArray_Descr *d, char *p, npy_intp length)
{
    npy_intp dims[1] = {length};
    PyObject *arr =
        PyArray_NewFromDescr(&PyArray_Type, d, 1, dims, NULL, p,
                             b->readonly ? 0 : NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) {
        Py_DECREF(b);
        return NULL;
    }
    /* steals b, also when it fails */
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)b) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}
