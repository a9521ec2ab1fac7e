/* dfbuffer.Buffer: __array_interface__, __cuda_array_interface__, the
 * buffer protocol, __array__ and pickling.
 *
 * Semantics (docs/design.md, "Host exports"):
 *   - __array_interface__ (v3): host-accessible memory only (CPU, CUDA
 *     host / managed, ROCm host), else AttributeError so hasattr() is
 *     False.  Every dtype, datetime64 and non-native byte order included.
 *   - __cuda_array_interface__ (v3): kDLCUDA and kDLCUDAManaged only, else
 *     AttributeError; stream None (no synchronisation needed or possible).
 *   - buffer protocol: host memory only; with PyBUF_FORMAT the struct codes
 *     ? b B h H i I l L q Q e f d g Zf Zd Zg ('<'/'>' and standard-size
 *     codes for non-native order); datetime64 / timedelta64 refuse
 *     PyBUF_FORMAT (BufferError, as NumPy does) and export as raw bytes
 *     (format NULL) without it.
 *   - __array__(dtype=None, copy=None): the zero-copy ndarray view;
 *     TypeError for device memory.
 *   - pickle: protocol 5 sends the bytes out of band (PickleBuffer), older
 *     protocols in band; the reconstructor `_rebuild` restores dtype,
 *     shape, C-order strides, readonly and native.  Device memory:
 *     TypeError.
 */
#include "common.h"
#include "state.h"
#include "args.h"
#include "model.h"
#include "exchange.h"
#include "format.h"
#include "sizes.h"

#include <limits.h>
#include <string.h>

/* A non-NULL address for zero-size exports (never read or written). */
static _Alignas(16) char zero_size_data[16];

/* Returns 0 if `b` still owns its memory, else -1 with BufferError (the
   garbage collector cleared it while breaking a cycle). */
static int
check_alive(const DfbBuffer *b)
{
    if (b->owner == NULL) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer was cleared by the garbage collector");
        return -1;
    }
    return 0;
}

/* Returns a new reference to the strides tuple, or None when C-contiguous,
   or NULL. */
static PyObject *
strides_or_none(const DfbBuffer *b)
{
    if (dfb_is_c_contiguous(b->ndim, b->shape, b->strides,
                            PyDataType_ELSIZE(b->dtype))) {
        Py_RETURN_NONE;
    }
    return dfb_dims_tuple(b->strides, b->ndim);
}

/* Builds the keys shared by both array interfaces.  Returns a new dict or
   NULL.  `data` is the exported address. */
static PyObject *
interface_dict(const DfbBuffer *b, void *data)
{
    PyObject *typestr = NULL, *descr = NULL, *shape = NULL, *strides = NULL;
    PyObject *dict = NULL;
    typestr = PyObject_GetAttrString((PyObject *)b->dtype, "str");
    if (typestr == NULL) {
        goto done;
    }
    descr = Py_BuildValue("[(sO)]", "", typestr);
    shape = dfb_dims_tuple(b->shape, b->ndim);
    strides = strides_or_none(b);
    if (descr == NULL || shape == NULL || strides == NULL) {
        goto done;
    }
    dict = Py_BuildValue(
        "{sOsOsOs(NO)sOsi}", "shape", shape, "typestr", typestr, "descr",
        descr, "data", PyLong_FromVoidPtr(data),
        b->readonly ? Py_True : Py_False, "strides", strides, "version", 3);
done:
    Py_XDECREF(typestr);
    Py_XDECREF(descr);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return dict;
}

PyObject *
dfb_buffer_array_interface(PyObject *self, void *closure)
{
    DfbBuffer *b = (DfbBuffer *)self;
    if (dfb_buffer_require_host(b, "__array_interface__") < 0) {
        /* AttributeError, so that hasattr() is False for device memory. */
        PyErr_Format(PyExc_AttributeError,
                     "__array_interface__ is only available for host "
                     "memory; this Buffer is on device (%d, %d)",
                     (int)b->device.device_type, (int)b->device.device_id);
        return NULL;
    }
    if (check_alive(b) < 0) {
        return NULL;
    }
    void *data =
        b->data != NULL && dfb_buffer_size(b) != 0 ? b->data : zero_size_data;
    return interface_dict(b, data);
}

PyObject *
dfb_buffer_cuda_array_interface(PyObject *self, void *closure)
{
    DfbBuffer *b = (DfbBuffer *)self;
    if (b->device.device_type != kDLCUDA &&
        b->device.device_type != kDLCUDAManaged) {
        PyErr_Format(PyExc_AttributeError,
                     "__cuda_array_interface__ is only available for CUDA "
                     "memory; this Buffer is on device (%d, %d)",
                     (int)b->device.device_type, (int)b->device.device_id);
        return NULL;
    }
    if (check_alive(b) < 0) {
        return NULL;
    }
    /* The CUDA array interface wants 0 for zero-size arrays. */
    void *data = dfb_buffer_size(b) != 0 ? b->data : NULL;
    PyObject *d = interface_dict(b, data);
    if (d == NULL) {
        return NULL;
    }
    if (PyDict_SetItemString(d, "stream", Py_None) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* ------------------------------------------------------------------ */
/* Buffer protocol                                                      */
/* ------------------------------------------------------------------ */

/* Returns the struct-module format of `d` (a string literal), or NULL with
   BufferError set. */
static const char *
struct_format(PyArray_Descr *d)
{
    const char *f = dfb_numpy_struct_format(
        d->kind, d->type, PyDataType_ELSIZE(d), d->byteorder);
    if (f != NULL) {
        return f;
    }
    if (d->kind == 'M' || d->kind == 'm') {
        PyErr_Format(PyExc_BufferError,
                     "the buffer protocol has no format for dtype %R; "
                     "request no format (raw bytes) or use "
                     "__array_interface__",
                     (PyObject *)d);
        return NULL;
    }
    PyErr_Format(PyExc_BufferError,
                 "the buffer protocol has no format for dtype %R",
                 (PyObject *)d);
    return NULL;
}

int
dfb_buffer_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    DfbBuffer *b = (DfbBuffer *)self;
    view->obj = NULL;
    if (dfb_buffer_require_host(b, "the buffer protocol") < 0 ||
        check_alive(b) < 0) {
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && b->readonly) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer is read-only; a writable buffer was "
                        "requested");
        return -1;
    }
    const char *format = NULL;
    if (flags & PyBUF_FORMAT) {
        format = struct_format(b->dtype);
        if (format == NULL) {
            return -1;
        }
    }
    Py_ssize_t itemsize = PyDataType_ELSIZE(b->dtype);
    int c = dfb_is_c_contiguous(b->ndim, b->shape, b->strides, itemsize);
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c) {
        PyErr_SetString(PyExc_BufferError, "the Buffer is not C-contiguous");
        return -1;
    }
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS &&
        !dfb_is_f_contiguous(b->ndim, b->shape, b->strides, itemsize)) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer is not Fortran-contiguous");
        return -1;
    }
    if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c &&
        !dfb_is_f_contiguous(b->ndim, b->shape, b->strides, itemsize)) {
        PyErr_SetString(PyExc_BufferError, "the Buffer is not contiguous");
        return -1;
    }
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer is not C-contiguous; the consumer must "
                        "accept strides (PyBUF_STRIDES)");
        return -1;
    }
    Py_ssize_t size = dfb_buffer_size(b);
    view->buf = (size != 0 && b->data != NULL) ? b->data : zero_size_data;
    view->len = size * itemsize;
    view->itemsize = itemsize;
    view->readonly = b->readonly;
    view->format = (char *)format;
    if (flags & PyBUF_ND) {
        view->ndim = b->ndim;
        view->shape = b->shape;
    }
    else {
        view->ndim = 1;
        view->shape = NULL;
    }
    view->strides =
        (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? b->strides : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    view->obj = Py_NewRef(self);
    return 0;
}

void
dfb_buffer_releasebuffer(PyObject *self, Py_buffer *view)
{
    /* Nothing to do: views point into the immutable Buffer. */
}

/* ------------------------------------------------------------------ */
/* __array__                                                            */
/* ------------------------------------------------------------------ */

PyObject *
dfb_buffer_array(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    DfbBuffer *b = (DfbBuffer *)self;
    PyObject *dtype_o = Py_None, *copy_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:__array__", kwlist,
                                     &dtype_o, &copy_o)) {
        return NULL;
    }
    int copy = -1;
    if (copy_o != Py_None) {
        copy = PyObject_IsTrue(copy_o);
        if (copy < 0) {
            return NULL;
        }
    }
    if (dfb_buffer_require_host(b, "__array__") < 0) {
        PyErr_Format(PyExc_TypeError,
                     "cannot convert a Buffer on device (%d, %d) to a NumPy "
                     "array (host memory only); use DLPack or the CUDA "
                     "array interface",
                     (int)b->device.device_type, (int)b->device.device_id);
        return NULL;
    }
    if (check_alive(b) < 0) {
        return NULL;
    }
    PyArray_Descr *want = NULL;
    if (dtype_o != Py_None) {
        if (!PyArray_DescrConverter(dtype_o, &want)) {
            return NULL;
        }
        if (PyArray_EquivTypes(want, b->dtype)) {
            Py_CLEAR(want);
        }
        else if (copy == 0) {
            Py_DECREF(want);
            dfb_state *st = dfb_state_from_type(Py_TYPE(self));
            if (st != NULL) {
                const char *prev = dfb_copy_keyword_enter("copy");
                dfb_copy_error(st, "converting dtype %R to %R needs a copy",
                               (PyObject *)b->dtype, dtype_o);
                dfb_copy_keyword_leave(prev);
            }
            return NULL;
        }
    }
    /* a copy or a cast allocates for the size a producer claimed (an
       array interface's raw address carries no length to check it
       against): refused before NumPy's malloc when no machine holds it */
    if ((want != NULL || copy == 1) &&
        dfb_check_alloc(dfb_buffer_size(b),
                        PyDataType_ELSIZE(want != NULL ? want : b->dtype)) <
            0) {
        Py_XDECREF(want);
        return NULL;
    }
    PyObject *view = dfb_buffer_as_ndarray(b);
    if (view == NULL) {
        Py_XDECREF(want);
        return NULL;
    }
    if (want != NULL) {
        /* Steals `want`. */
        PyObject *r = PyArray_CastToType((PyArrayObject *)view, want, 0);
        Py_DECREF(view);
        return r;
    }
    if (copy == 1) {
        PyObject *r = PyArray_NewCopy((PyArrayObject *)view, NPY_KEEPORDER);
        Py_DECREF(view);
        return r;
    }
    return view;
}

/* ------------------------------------------------------------------ */
/* Pickle                                                               */
/* ------------------------------------------------------------------ */

/* Returns a new 1-D uint8 Buffer over `nbytes` bytes at `data` kept alive
   by `owner`, or NULL with an exception set. */
static PyObject *
byte_buffer(dfb_state *st, char *data, Py_ssize_t nbytes, PyObject *owner,
            int readonly)
{
    PyArray_Descr *u1 = PyArray_DescrFromType(NPY_UINT8);
    if (u1 == NULL) {
        return NULL;
    }
    DLDevice cpu = {kDLCPU, 0};
    PyObject *r =
        dfb_buffer_new(st, nbytes ? data : NULL, nbytes, owner, u1, 1, &nbytes,
                       NULL, cpu, readonly, DFB_NATIVE_RAW);
    Py_DECREF(u1);
    return r;
}

PyObject *
dfb_buffer_reduce_ex(PyObject *self, PyObject *protocol_o)
{
    DfbBuffer *b = (DfbBuffer *)self;
    long protocol = PyLong_AsLong(protocol_o);
    if (protocol == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (b->device.device_type != kDLCPU) {
        PyErr_Format(PyExc_TypeError,
                     "cannot pickle a Buffer on device (%d, %d): only CPU "
                     "memory can be pickled",
                     (int)b->device.device_type, (int)b->device.device_id);
        return NULL;
    }
    if (check_alive(b) < 0) {
        return NULL;
    }
    dfb_state *st = dfb_state_from_type(Py_TYPE(self));
    if (st == NULL) {
        return NULL;
    }
    PyObject *module = PyType_GetModuleByDef(Py_TYPE(self), &dfb_module_def);
    if (module == NULL) {
        return NULL;
    }
    PyObject *rebuild = PyObject_GetAttrString(module, "_rebuild");
    if (rebuild == NULL) {
        return NULL;
    }
    Py_ssize_t itemsize = PyDataType_ELSIZE(b->dtype);
    /* bounded: a Buffer's size in bytes fits Py_ssize_t (check_common) */
    Py_ssize_t nbytes = dfb_buffer_size(b) * itemsize;
    int contiguous =
        dfb_is_c_contiguous(b->ndim, b->shape, b->strides, itemsize);
    /* Fortran order travels as is (no copy) and comes back Fortran */
    int fortran = !contiguous &&
                  dfb_is_f_contiguous(b->ndim, b->shape, b->strides, itemsize);
    contiguous = contiguous || fortran;
    PyObject *payload = NULL, *copy = NULL, *result = NULL;
    char *src = b->data;
    /* a copy (strided, or a pickle protocol before 5) allocates for the
       size a producer claimed: refused before malloc when no machine
       holds it */
    if ((!contiguous || protocol < 5) && dfb_check_alloc(nbytes, 1) < 0) {
        Py_DECREF(rebuild);
        return NULL;
    }
    if (!contiguous) {
        /* One C-order copy through NumPy. */
        PyObject *view = dfb_buffer_as_ndarray(b);
        if (view == NULL) {
            goto done;
        }
        copy = PyArray_NewCopy((PyArrayObject *)view, NPY_CORDER);
        Py_DECREF(view);
        if (copy == NULL) {
            goto done;
        }
        src = PyArray_BYTES((PyArrayObject *)copy);
    }
    if (protocol >= 5) {
        PyObject *bytes = byte_buffer(st, src, nbytes,
                                      copy != NULL ? copy : self, b->readonly);
        if (bytes == NULL) {
            goto done;
        }
        payload = PyPickleBuffer_FromObject(bytes);
        Py_DECREF(bytes);
    }
    else if (b->readonly) {
        payload = PyBytes_FromStringAndSize(nbytes ? src : NULL, nbytes);
    }
    else {
        payload = PyByteArray_FromStringAndSize(nbytes ? src : NULL, nbytes);
    }
    if (payload == NULL) {
        goto done;
    }
    PyObject *shape = dfb_dims_tuple(b->shape, b->ndim);
    if (shape == NULL) {
        goto done;
    }
    if (fortran) {
        result = Py_BuildValue(
            "(O(OONOiO))", rebuild, payload, (PyObject *)b->dtype, shape,
            b->readonly ? Py_True : Py_False, b->native, Py_True);
    }
    else {
        result =
            Py_BuildValue("(O(OONOi))", rebuild, payload, (PyObject *)b->dtype,
                          shape, b->readonly ? Py_True : Py_False, b->native);
    }
done:
    Py_DECREF(rebuild);
    Py_XDECREF(payload);
    Py_XDECREF(copy);
    return result;
}

/* _rebuild(data, dtype, shape, readonly, native, fortran=False): the pickle
   reconstructor.  Returns a new C-contiguous (Fortran-contiguous when
   `fortran`) CPU Buffer over `data` (any buffer exporter;
   its memoryview is the owner), copying only when the memory is read-only
   but a writable Buffer is wanted, or not C-contiguous.  NULL with
   TypeError / ValueError on malformed arguments. */
static PyObject *
rebuild(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
        PyObject *kwnames)
{
    static const char *const kw[] = {"data",   "dtype",   "shape", "readonly",
                                     "native", "fortran", NULL};
    static const dfb_argspec spec = {"_rebuild", kw, 6, 5};
    PyObject *a[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int readonly = 0, fortran = 0;
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0 ||
        dfb_parse_flag(a[3], &readonly) < 0 ||
        dfb_parse_flag(a[5], &fortran) < 0) {
        return NULL;
    }
    PyObject *data = a[0], *dtype_o = a[1], *shape_o = a[2];
    if (!PyTuple_Check(shape_o)) {
        PyErr_Format(PyExc_TypeError,
                     "_rebuild() argument 'shape' must be tuple, not %.100s",
                     Py_TYPE(shape_o)->tp_name);
        return NULL;
    }
    long native_l = PyLong_AsLong(a[4]);
    if (native_l == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (native_l < INT_MIN || native_l > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "_rebuild: native out of range");
        return NULL;
    }
    int native = (int)native_l;
    dfb_state *st = dfb_state_from_module(module);
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape_o);
    if (ndim > DFB_MAXDIM) {
        PyErr_SetString(PyExc_ValueError, "_rebuild: too many dimensions");
        return NULL;
    }
    Py_ssize_t shape[DFB_MAXDIM];
    for (Py_ssize_t i = 0; i < ndim; i++) {
        shape[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape_o, i));
        if (shape[i] == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    PyArray_Descr *dtype = dfb_parse_dtype(dtype_o, NULL);
    if (dtype == NULL) {
        return NULL;
    }
    PyObject *result = NULL;
    PyObject *mv = PyMemoryView_FromObject(data);
    if (mv == NULL) {
        goto done;
    }
    Py_buffer *v = PyMemoryView_GET_BUFFER(mv);
    if ((v->readonly && !readonly) || !PyBuffer_IsContiguous(v, 'C')) {
        PyObject *ba = PyByteArray_FromObject(mv);
        Py_SETREF(mv, NULL);
        if (ba == NULL) {
            goto done;
        }
        mv = PyMemoryView_FromObject(ba);
        Py_DECREF(ba);
        if (mv == NULL) {
            goto done;
        }
        v = PyMemoryView_GET_BUFFER(mv);
    }
    DLDevice cpu = {kDLCPU, 0};
    char *ptr = v->len ? (char *)v->buf : NULL;
    Py_ssize_t fstrides[DFB_MAXDIM];
    if (fortran) {
        /* overflow: dfb_buffer_new checks the extent against v->len */
        Py_ssize_t step = PyDataType_ELSIZE(dtype);
        for (Py_ssize_t i = 0; i < ndim; i++) {
            fstrides[i] = step;
            if (shape[i] < 0 ||
                __builtin_mul_overflow(step, shape[i] ? shape[i] : 1, &step)) {
                PyErr_SetString(PyExc_ValueError,
                                "_rebuild: bad or overflowing shape");
                goto done;
            }
        }
    }
    result = dfb_buffer_new(st, ptr, v->len, mv, dtype, (int)ndim, shape,
                            fortran ? fstrides : NULL, cpu, readonly, native);
    if (result != NULL) {
        Py_ssize_t want = PyDataType_ELSIZE(dtype);
        for (Py_ssize_t i = 0; i < ndim; i++) {
            want *= shape[i];
        }
        if (want != v->len) {
            PyErr_Format(PyExc_ValueError,
                         "_rebuild: %zd bytes received, %zd expected", v->len,
                         want);
            Py_CLEAR(result);
        }
    }
done:
    Py_XDECREF(mv);
    Py_DECREF(dtype);
    return result;
}

PyMethodDef dfb_export_methods[] = {
    {"_rebuild", (PyCFunction)(void (*)(void))rebuild,
     METH_FASTCALL | METH_KEYWORDS,
     "_rebuild(data, dtype, shape, readonly, native, fortran=False)\n--\n\n"
     "Pickle reconstructor of Buffer (private): a C- (or Fortran-) contiguous "
     "CPU "
     "Buffer over `data`."},
    {NULL, NULL, 0, NULL},
};
