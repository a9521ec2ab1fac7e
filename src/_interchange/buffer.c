/* dfbuffer.Buffer: the heap type, its construction and validation, GC,
 * repr and attributes.  The exports live in export_dlpack.c and
 * export_array.c, the imports in import.c.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow_device.h"
#include "dfbuffer/convert.h"
#include "format.h"
#include "layout.h"

#include <stddef.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_PYSSIZET T_PYSSIZET
#define Py_READONLY READONLY
#endif

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

/* Returns 1 if contiguous in the order dims are visited by `step`. */
static int
is_contiguous(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
              Py_ssize_t itemsize, int fortran)
{
    Py_ssize_t expected = itemsize;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] == 0) {
            return 1;
        }
    }
    for (int k = 0; k < ndim; k++) {
        int i = fortran ? k : ndim - 1 - k;
        if (shape[i] == 1) {
            continue;
        }
        if (strides[i] != expected) {
            return 0;
        }
        expected *= shape[i];
    }
    return 1;
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
    switch (b->device.device_type) {
        case kDLCPU:
        case kDLCUDAHost:
        case kDLROCMHost:
        case kDLCUDAManaged:
            return 0;
        default:
            PyErr_Format(PyExc_BufferError,
                         "%s needs host memory, but this Buffer is on "
                         "device (%d, %d)",
                         what, (int)b->device.device_type,
                         (int)b->device.device_id);
            return -1;
    }
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

/* Returns 0 if `d` is a dtype a Buffer may carry, else -1 with TypeError
   (reference-holding, structured, string or flexible dtypes). */
static int
check_dtype(PyArray_Descr *d)
{
    switch (d->kind) {
        case 'b':
        case 'i':
        case 'u':
        case 'f':
        case 'c':
        case 'm':
        case 'M':
            break;
        default:
            PyErr_Format(PyExc_TypeError,
                         "a Buffer holds plain numbers only (bool, integer, "
                         "float, complex, datetime64, timedelta64), not "
                         "dtype %R",
                         (PyObject *)d);
            return -1;
    }
    if (PyDataType_FLAGCHK(d, NPY_ITEM_REFCOUNT) || PyDataType_HASFIELDS(d) ||
        PyDataType_HASSUBARRAY(d) || PyDataType_ELSIZE(d) <= 0) {
        PyErr_Format(PyExc_TypeError, "unsupported dtype %R for a Buffer",
                     (PyObject *)d);
        return -1;
    }
    return 0;
}

/* Converts an interchange dtype tuple to a NumPy dtype.  Returns a new
   reference, or NULL with TypeError / ValueError set. */
static PyArray_Descr *
descr_from_interchange(PyObject *tup)
{
    if (PyTuple_GET_SIZE(tup) != 4) {
        PyErr_Format(PyExc_ValueError,
                     "an interchange dtype is a 4-tuple (kind, bit_width, "
                     "format, endianness), got %R",
                     tup);
        return NULL;
    }
    /* the same parser as the converters' (convert.c) */
    dfb_format pf;
    int r = dfb_interchange_dtype_parse(tup, &pf);
    if (r < 0) {
        return NULL;
    }
    if (r == 0) {
        PyErr_Format(PyExc_ValueError, "unsupported interchange dtype %R",
                     tup);
        return NULL;
    }
    char typestr[32];
    if (dfb_format_numpy_typestr(&pf, typestr, sizeof(typestr)) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "interchange dtype %R has no fixed-width NumPy "
                     "equivalent (bit-packed or variable-width data)",
                     tup);
        return NULL;
    }
    return dfb_descr_from_typestr(typestr);
}

/* The NumPy type number of a plain numeric typestr ("=i8", "|b1", "<f2",
   "=c16": byte order, kind b/i/u/f/c, size), or -1 for any other string. */
static int
simple_typenum(const char *ts)
{
    if ((ts[0] != '=' && ts[0] != '<' && ts[0] != '>' && ts[0] != '|') ||
        ts[1] == '\0' || ts[2] == '\0') {
        return -1;
    }
    if (ts[1] == 'c' && strcmp(ts + 2, "16") == 0) {
        return NPY_COMPLEX128;
    }
    if (ts[3] != '\0') {
        return -1;
    }
    switch (ts[1]) {
        case 'b':
            return ts[2] == '1' ? NPY_BOOL : -1;
        case 'i':
            return ts[2] == '1'   ? NPY_INT8
                   : ts[2] == '2' ? NPY_INT16
                   : ts[2] == '4' ? NPY_INT32
                   : ts[2] == '8' ? NPY_INT64
                                  : -1;
        case 'u':
            return ts[2] == '1'   ? NPY_UINT8
                   : ts[2] == '2' ? NPY_UINT16
                   : ts[2] == '4' ? NPY_UINT32
                   : ts[2] == '8' ? NPY_UINT64
                                  : -1;
        case 'f':
            return ts[2] == '2'   ? NPY_HALF
                   : ts[2] == '4' ? NPY_FLOAT32
                   : ts[2] == '8' ? NPY_FLOAT64
                                  : -1;
        case 'c':
            return ts[2] == '8' ? NPY_COMPLEX64 : -1;
        default:
            return -1;
    }
}

/* Plain numeric typestrs (what core's format table mostly gives) skip
   NumPy's string parser; anything else goes through it. */
PyArray_Descr *
dfb_descr_from_typestr(const char *typestr)
{
    int typenum = simple_typenum(typestr);
    if (typenum >= 0) {
        PyArray_Descr *d = PyArray_DescrFromType(typenum);
#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
        const char foreign = '>';
#else
        const char foreign = '<';
#endif
        if (d != NULL && typestr[0] == foreign && PyDataType_ELSIZE(d) > 1) {
            PyArray_Descr *sw = PyArray_DescrNewByteorder(d, NPY_SWAP);
            Py_DECREF(d);
            return sw;
        }
        return d;
    }
    PyObject *s = PyUnicode_FromString(typestr);
    if (s == NULL) {
        return NULL;
    }
    PyArray_Descr *d = NULL;
    int ok = PyArray_DescrConverter(s, &d);
    Py_DECREF(s);
    return ok ? d : NULL;
}

PyArray_Descr *
dfb_parse_dtype(PyObject *obj, PyArray_Descr *dflt)
{
    PyArray_Descr *d = NULL;
    if (obj == NULL || obj == Py_None) {
        if (dflt == NULL) {
            PyErr_SetString(PyExc_TypeError, "a dtype is required");
            return NULL;
        }
        Py_INCREF(dflt);
        return dflt;
    }
    if (PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == 4 &&
        PyLong_Check(PyTuple_GET_ITEM(obj, 0))) {
        d = descr_from_interchange(obj);
    }
    else if (!PyArray_DescrConverter(obj, &d)) {
        d = NULL;
        /* NumPy's parser raises SyntaxError, KeyError, ... for some strings
           ("_,,,"): report TypeError naming the dtype, the cause kept */
        if (PyErr_ExceptionMatches(PyExc_Exception) &&
            !PyErr_ExceptionMatches(PyExc_TypeError) &&
            !PyErr_ExceptionMatches(PyExc_ValueError) &&
            !PyErr_ExceptionMatches(PyExc_MemoryError)) {
            PyObject *exc = dfb_err_take();
            PyErr_Format(PyExc_TypeError, "invalid dtype %R", obj);
            PyObject *now = dfb_err_take();
            PyException_SetCause(now, exc);
            dfb_err_give(now);
        }
    }
    if (d == NULL) {
        return NULL;
    }
    if (check_dtype(d) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* Converts a non-negative Python int to Py_ssize_t.  Returns 0, or -1 with
   TypeError (not an int), ValueError (negative) or OverflowError. */
static int
parse_size(PyObject *obj, const char *what, Py_ssize_t *out)
{
    /* Integers of any kind (numpy.int64 too), as shape items; not bool. */
    if (!PyIndex_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *n = PyNumber_Index(obj);
    if (n == NULL) {
        return -1;
    }
    int ret = -1;
    if (dfb_long_sign(n) < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %R", what, n);
        goto done;
    }
    Py_ssize_t v = PyLong_AsSsize_t(n);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "%s %R is too large", what, n);
        goto done;
    }
    *out = v;
    ret = 0;
done:
    Py_DECREF(n);
    return ret;
}

/* Parses a shape or strides argument (a sequence of ints, or one int) into
   out[0..*n).  Returns 0, or -1 with an exception set. */
static int
parse_dims(PyObject *obj, const char *what, int allow_negative,
           Py_ssize_t *out, int *n)
{
    PyObject *seq;
    if (PyLong_Check(obj) || (PyIndex_Check(obj) && !PySequence_Check(obj))) {
        seq = PyTuple_Pack(1, obj);
    }
    else {
        if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a sequence of ints, not %.100s", what,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        /* A tuple copy: an item's __index__ may mutate a list. */
        seq = PySequence_Tuple(obj);
        if (seq == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a sequence of ints, not %.100s", what,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
    }
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > DFB_MAXDIM) {
        PyErr_Format(PyExc_ValueError,
                     "%s has %zd dimensions; at most %d are supported", what,
                     len, DFB_MAXDIM);
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyIndex_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be an int, not %.100s",
                         what, i, Py_TYPE(item)->tp_name);
            Py_DECREF(seq);
            return -1;
        }
        Py_ssize_t v = PyNumber_AsSsize_t(item, PyExc_OverflowError);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (v < 0 && !allow_negative) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] must be >= 0, got %zd",
                         what, i, v);
            Py_DECREF(seq);
            return -1;
        }
        out[i] = v;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Construction                                                         */
/* ------------------------------------------------------------------ */

/* Allocates and fills a Buffer after every check passed.  Returns a new
   reference or NULL (MemoryError). */
static PyObject *
buffer_alloc(dfb_state *st, char *ptr, char *data, Py_ssize_t bufsize,
             PyObject *owner, PyArray_Descr *dtype, int ndim,
             const Py_ssize_t *shape, const Py_ssize_t *strides,
             DLDevice device, int readonly, int native)
{
    PyTypeObject *tp = st->buffer_type;
    DfbBuffer *self = (DfbBuffer *)tp->tp_alloc(tp, 2 * (Py_ssize_t)ndim);
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
    self->weakreflist = NULL;
    self->device = device;
    self->ndim = ndim;
    self->readonly = readonly ? 1 : 0;
    self->native = native;
    self->shape = self->dims;
    self->strides = self->dims + ndim;
    if (ndim > 0) {
        memcpy(self->shape, shape, ndim * sizeof(Py_ssize_t));
        memcpy(self->strides, strides, ndim * sizeof(Py_ssize_t));
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
    if (check_dtype(dtype) < 0) {
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
    if (check_dtype(dtype) < 0) {
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

/* Buffer.__new__(ptr, bufsize, *, owner, dtype="u1", shape=None,
   strides=None, device=(CPU, 0), readonly=False, native=RAW).  Returns a
   new Buffer or NULL with an exception set. */
static PyObject *
buffer_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ptr",    "bufsize", "owner",  "dtype",
                             "shape",  "strides", "device", "readonly",
                             "native", NULL};
    PyObject *ptr_o, *bufsize_o, *owner = NULL, *dtype_o = NULL;
    PyObject *shape_o = Py_None, *strides_o = Py_None, *device_o = NULL;
    int readonly = 0;
    PyObject *native_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|$OOOOOpO:Buffer", kwlist,
                                     &ptr_o, &bufsize_o, &owner, &dtype_o,
                                     &shape_o, &strides_o, &device_o,
                                     &readonly, &native_o)) {
        return NULL;
    }
    if (owner == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "Buffer() needs the keyword argument 'owner': the "
                        "object that keeps the memory alive");
        return NULL;
    }
    dfb_state *st = dfb_state_from_type(type);
    if (st == NULL) {
        return NULL;
    }
    if (!PyIndex_Check(ptr_o) || PyBool_Check(ptr_o)) {
        PyErr_Format(PyExc_TypeError, "ptr must be an int, not %.100s",
                     Py_TYPE(ptr_o)->tp_name);
        return NULL;
    }
    ptr_o = PyNumber_Index(ptr_o); /* a new reference from here on */
    if (ptr_o == NULL) {
        return NULL;
    }
    if (dfb_long_sign(ptr_o) < 0) {
        PyErr_Format(PyExc_ValueError, "ptr must be >= 0, got %R", ptr_o);
        Py_DECREF(ptr_o);
        return NULL;
    }
    void *ptr = PyLong_AsVoidPtr(ptr_o);
    if (ptr == NULL && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "ptr %R does not fit in a pointer",
                     ptr_o);
        Py_DECREF(ptr_o);
        return NULL;
    }
    Py_DECREF(ptr_o);
    Py_ssize_t bufsize;
    if (parse_size(bufsize_o, "bufsize", &bufsize) < 0) {
        return NULL;
    }
    PyArray_Descr *u1 = PyArray_DescrFromType(NPY_UINT8);
    PyArray_Descr *dtype = dfb_parse_dtype(dtype_o, u1);
    Py_DECREF(u1);
    if (dtype == NULL) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t shape[DFB_MAXDIM], strides[DFB_MAXDIM];
    int ndim = 0, nstrides = 0;
    int have_shape = shape_o != Py_None, have_strides = strides_o != Py_None;
    if (have_shape && parse_dims(shape_o, "shape", 0, shape, &ndim) < 0) {
        goto done;
    }
    if (have_strides &&
        parse_dims(strides_o, "strides", 1, strides, &nstrides) < 0) {
        goto done;
    }
    if (have_strides && !have_shape) {
        Py_ssize_t itemsize = PyDataType_ELSIZE(dtype);
        if (bufsize % itemsize != 0) {
            PyErr_Format(PyExc_ValueError,
                         "bufsize %zd is not a multiple of the itemsize %zd; "
                         "pass a shape",
                         bufsize, itemsize);
            goto done;
        }
        shape[0] = bufsize / itemsize;
        ndim = 1;
        have_shape = 1;
    }
    if (have_strides && nstrides != ndim) {
        PyErr_Format(PyExc_ValueError,
                     "strides has %d entries but shape has %d", nstrides,
                     ndim);
        goto done;
    }
    DLDevice device = {kDLCPU, 0};
    if (device_o != NULL && dfb_parse_device(device_o, &device) < 0) {
        goto done;
    }
    long native = DFB_NATIVE_RAW;
    if (native_o != NULL) {
        if (!PyLong_Check(native_o) || PyBool_Check(native_o)) {
            PyErr_Format(PyExc_TypeError,
                         "native must be a NativeFormat, not %.100s",
                         Py_TYPE(native_o)->tp_name);
            goto done;
        }
        native = PyLong_AsLong(native_o);
        if (native == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            native = -1;
        }
        if (native < 0 || native >= DFB_NATIVE_COUNT) {
            PyErr_Format(PyExc_ValueError, "unknown NativeFormat %R",
                         native_o);
            goto done;
        }
    }
    result = dfb_buffer_new(st, (char *)ptr, bufsize, owner, dtype, ndim,
                            have_shape ? shape : NULL,
                            have_strides ? strides : NULL, device, readonly,
                            (int)native);
done:
    Py_DECREF(dtype);
    return result;
}

/* ------------------------------------------------------------------ */
/* GC, dealloc, repr                                                    */
/* ------------------------------------------------------------------ */

static int
buffer_traverse(PyObject *op, visitproc visit, void *arg)
{
    DfbBuffer *self = (DfbBuffer *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->owner);
    Py_VISIT((PyObject *)self->dtype);
    return 0;
}

static int
buffer_clear(PyObject *op)
{
    DfbBuffer *self = (DfbBuffer *)op;
    Py_CLEAR(self->owner);
    /* dtype holds no references back to us; keep it for repr safety. */
    return 0;
}

static void
buffer_dealloc(PyObject *op)
{
    DfbBuffer *self = (DfbBuffer *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    /* Deep owner chains (Buffers owning Buffers) must not overflow the C
       stack. */
    Py_TRASHCAN_BEGIN(op, buffer_dealloc)
        if (self->weakreflist != NULL) {
            PyObject_ClearWeakRefs(op);
        }
        Py_CLEAR(self->owner);
        Py_CLEAR(self->dtype);
        tp->tp_free(op);
        Py_DECREF(tp);
    Py_TRASHCAN_END
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

static const char *
native_name(int native)
{
    static const char *names[DFB_NATIVE_COUNT] = {"RAW",
                                                  "NUMPY",
                                                  "ARROW",
                                                  "DLPACK",
                                                  "CUDA_ARRAY_INTERFACE",
                                                  "BUFFER_PROTOCOL",
                                                  "ARRAY_INTERFACE",
                                                  "INTERCHANGE"};
    return (native >= 0 && native < DFB_NATIVE_COUNT) ? names[native] : "?";
}

static const char *
device_name(int t)
{
    switch (t) {
        case kDLCPU:
            return "CPU";
        case kDLCUDA:
            return "CUDA";
        case kDLCUDAHost:
            return "CUDA_HOST";
        case kDLOpenCL:
            return "OPENCL";
        case kDLVulkan:
            return "VULKAN";
        case kDLMetal:
            return "METAL";
        case kDLVPI:
            return "VPI";
        case kDLROCM:
            return "ROCM";
        case kDLROCMHost:
            return "ROCM_HOST";
        case kDLExtDev:
            return "EXT_DEV";
        case kDLCUDAManaged:
            return "CUDA_MANAGED";
        case kDLOneAPI:
            return "ONE_API";
        case kDLWebGPU:
            return "WEBGPU";
        case kDLHexagon:
            return "HEXAGON";
        case kDLMAIA:
            return "MAIA";
        case kDLTrn:
            return "TRN";
        default:
            return "?";
    }
}

static PyObject *
buffer_repr(PyObject *op)
{
    DfbBuffer *self = (DfbBuffer *)op;
    PyObject *shape = dfb_dims_tuple(self->shape, self->ndim);
    if (shape == NULL) {
        return NULL;
    }
    PyObject *strides = dfb_dims_tuple(self->strides, self->ndim);
    if (strides == NULL) {
        Py_DECREF(shape);
        return NULL;
    }
    PyObject *owner_type =
        self->owner ? PyType_GetQualName(Py_TYPE(self->owner)) : NULL;
    if (self->owner && owner_type == NULL) {
        Py_DECREF(shape);
        Py_DECREF(strides);
        return NULL;
    }
    PyObject *r = PyUnicode_FromFormat(
        "<dfbuffer.Buffer dtype=%S shape=%S strides=%S device=%s:%d "
        "native=%s readonly=%s owner=%s%S ptr=%p bufsize=%zd>",
        (PyObject *)self->dtype, shape, strides,
        device_name(self->device.device_type), (int)self->device.device_id,
        native_name(self->native), self->readonly ? "True" : "False",
        self->owner ? "" : "<cleared>", owner_type ? owner_type : Py_None,
        (void *)self->ptr, self->bufsize);
    Py_DECREF(shape);
    Py_DECREF(strides);
    Py_XDECREF(owner_type);
    return r;
}

/* ------------------------------------------------------------------ */
/* Attributes                                                           */
/* ------------------------------------------------------------------ */

static PyObject *
get_ptr(PyObject *op, void *c)
{
    return PyLong_FromVoidPtr(((DfbBuffer *)op)->ptr);
}

static PyObject *
get_bufsize(PyObject *op, void *c)
{
    return PyLong_FromSsize_t(((DfbBuffer *)op)->bufsize);
}

static PyObject *
get_shape(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return dfb_dims_tuple(self->shape, self->ndim);
}

static PyObject *
get_strides(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return dfb_dims_tuple(self->strides, self->ndim);
}

static PyObject *
get_dtype(PyObject *op, void *c)
{
    return Py_NewRef((PyObject *)((DfbBuffer *)op)->dtype);
}

static PyObject *
get_itemsize(PyObject *op, void *c)
{
    return PyLong_FromSsize_t(PyDataType_ELSIZE(((DfbBuffer *)op)->dtype));
}

static PyObject *
get_ndim(PyObject *op, void *c)
{
    return PyLong_FromLong(((DfbBuffer *)op)->ndim);
}

static PyObject *
get_size(PyObject *op, void *c)
{
    return PyLong_FromSsize_t(dfb_buffer_size((DfbBuffer *)op));
}

static PyObject *
get_nbytes(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return PyLong_FromSsize_t(dfb_buffer_size(self) *
                              PyDataType_ELSIZE(self->dtype));
}

static PyObject *
get_device(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    dfb_state *st = dfb_state_from_type(Py_TYPE(op));
    if (st == NULL) {
        return NULL;
    }
    PyObject *t = dfb_enum_member(st->device_type, self->device.device_type);
    if (t == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Ni)", t, (int)self->device.device_id);
}

static PyObject *
get_owner(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return Py_NewRef(self->owner ? self->owner : Py_None);
}

static PyObject *
get_readonly(PyObject *op, void *c)
{
    return PyBool_FromLong(((DfbBuffer *)op)->readonly);
}

static PyObject *
get_native(PyObject *op, void *c)
{
    dfb_state *st = dfb_state_from_type(Py_TYPE(op));
    if (st == NULL) {
        return NULL;
    }
    return dfb_enum_member(st->native_format, ((DfbBuffer *)op)->native);
}

static PyObject *
get_c_contiguous(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return PyBool_FromLong(
        dfb_is_c_contiguous(self->ndim, self->shape, self->strides,
                            PyDataType_ELSIZE(self->dtype)));
}

static PyObject *
get_f_contiguous(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return PyBool_FromLong(
        dfb_is_f_contiguous(self->ndim, self->shape, self->strides,
                            PyDataType_ELSIZE(self->dtype)));
}

static PyGetSetDef buffer_getset[] = {
    {"ptr", get_ptr, NULL, "Lowest address of the memory block (int).", NULL},
    {"bufsize", get_bufsize, NULL,
     "Length of the memory block in bytes; every element lies in "
     "[ptr, ptr + bufsize).",
     NULL},
    {"shape", get_shape, NULL, "Shape (tuple of int).", NULL},
    {"strides", get_strides, NULL,
     "Strides in bytes (tuple of int; may be negative or zero).", NULL},
    {"dtype", get_dtype, NULL, "Element type (numpy.dtype).", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"ndim", get_ndim, NULL, "Number of dimensions.", NULL},
    {"size", get_size, NULL, "Number of elements.", NULL},
    {"nbytes", get_nbytes, NULL, "size * itemsize.", NULL},
    {"device", get_device, NULL, "(DeviceType, device_id) of the memory.",
     NULL},
    {"owner", get_owner, NULL,
     "The object that keeps the memory alive (held strongly).", NULL},
    {"readonly", get_readonly, NULL, "True if the memory must not be written.",
     NULL},
    {"native", get_native, NULL,
     "The NativeFormat: the protocol the memory came through.", NULL},
    {"c_contiguous", get_c_contiguous, NULL,
     "True if the elements are C-contiguous.", NULL},
    {"f_contiguous", get_f_contiguous, NULL,
     "True if the elements are Fortran-contiguous.", NULL},
    {"__array_interface__", dfb_buffer_array_interface, NULL,
     "NumPy array interface (version 3); host memory only.", NULL},
    {"__cuda_array_interface__", dfb_buffer_cuda_array_interface, NULL,
     "CUDA array interface (version 3); CUDA memory only.", NULL},
    {NULL},
};

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

/* ------------------------------------------------------------------ */
/* The type                                                             */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(
    from_object_doc,
    "from_object(obj, *, dtype=None)\n--\n\n"
    "Wrap any producer's memory without copying; the returned Buffer's owner\n"
    "keeps the memory alive and `native` names the protocol used.  The first\n"
    "protocol obj speaks wins (its errors propagate, no fallback):\n"
    "  1. a dfbuffer.Buffer: itself (a re-typed Buffer owned by it if "
    "dtype);\n"
    "  2. a NumPy ndarray (owner = the array);\n"
    "  3. a DLPack capsule ('dltensor_versioned' or 'dltensor'), consumed;\n"
    "  4. __cuda_array_interface__ (device memory wins over host protocols;\n"
    "     device id from __dlpack_device__() if present, else 0);\n"
    "  5. the buffer protocol (owner = a capsule holding the export);\n"
    "  6. an interchange-protocol buffer (ptr, bufsize, __dlpack_device__):\n"
    "     1-D read-only bytes, or 1-D of `dtype`;\n"
    "  7. __array_interface__ (version 3);\n"
    "  8. __dlpack__ / __dlpack_device__ (max_version=(1, minor), falling\n"
    "     back to no keywords on TypeError); the producer's deleter runs "
    "when\n"
    "     the last Buffer or view dies.\n"
    "Anything else raises TypeError.  `dtype` (anything numpy.dtype accepts "
    "or\n"
    "an interchange dtype tuple) reinterprets the memory: same itemsize "
    "keeps\n"
    "the layout, another itemsize needs 1-D contiguous memory (ValueError).");

PyDoc_STRVAR(
    dlpack_doc,
    "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, "
    "copy=None)\n--\n\n"
    "Export as a DLPack capsule (versioned when max_version >= (1, 0)).");

PyDoc_STRVAR(dlpack_device_doc,
             "__dlpack_device__($self, /)\n--\n\nReturn (device_type, "
             "device_id) as ints.");

static PyMethodDef buffer_methods[] = {
    {"from_object", (PyCFunction)(void (*)(void))dfb_buffer_from_object,
     METH_CLASS | METH_FASTCALL | METH_KEYWORDS, from_object_doc},
    {"__dlpack__", (PyCFunction)(void (*)(void))dfb_buffer_dlpack,
     METH_FASTCALL | METH_KEYWORDS, dlpack_doc},
    {"__dlpack_device__", dfb_buffer_dlpack_device, METH_NOARGS,
     dlpack_device_doc},
    {"__array__", (PyCFunction)(void (*)(void))dfb_buffer_array,
     METH_VARARGS | METH_KEYWORDS,
     "__array__($self, /, dtype=None, copy=None)\n--\n\nA NumPy view (host "
     "memory "
     "only; TypeError for device memory)."},
    {"__reduce_ex__", dfb_buffer_reduce_ex, METH_O,
     "Pickle support; protocol 5 sends the memory out of band."},
    {"__arrow_c_schema__", dfb_buffer_arrow_c_schema, METH_NOARGS,
     "__arrow_c_schema__($self, /)\n--\n\nArrow schema capsule (1-D primitive "
     "buffers)."},
    {"__arrow_c_array__",
     (PyCFunction)(void (*)(void))dfb_buffer_arrow_c_array,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_array__($self, /, requested_schema=None)\n--\n\n(schema, "
     "array) "
     "capsules for a 1-D contiguous primitive buffer, without copying."},
    {"__arrow_c_device_array__",
     (PyCFunction)(void (*)(void))dfb_buffer_arrow_c_device_array,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_device_array__($self, /, requested_schema=None, **kwargs)\n"
     "--\n\n(schema, device array) capsules for a 1-D contiguous primitive "
     "buffer on any device, without copying; non-None keyword arguments "
     "other than requested_schema raise NotImplementedError."},
    {NULL},
};

static PyMemberDef buffer_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(DfbBuffer, weakreflist),
     Py_READONLY, NULL},
    {NULL},
};

PyDoc_STRVAR(
    buffer_doc,
    "Buffer(ptr, bufsize, *, owner, dtype='u1', shape=None, strides=None,\n"
    "       device=(DeviceType.CPU, 0), readonly=False, "
    "native=NativeFormat.RAW)\n"
    "--\n\n"
    "A block of memory with its layout, its device and a strong reference to\n"
    "the object that owns it.\n\n"
    "ptr is the lowest address of the block and bufsize its length in bytes;\n"
    "every byte any element touches lies in [ptr, ptr + bufsize).  shape\n"
    "defaults to bufsize // itemsize (1-D), strides (bytes) to C order.\n"
    "Immutable; exports DLPack, the array interface, the buffer protocol,\n"
    "the CUDA array interface (device memory) and the Arrow PyCapsule\n"
    "interface.");

static PyType_Slot buffer_slots[] = {
    {Py_tp_doc, (void *)buffer_doc},
    {Py_tp_new, buffer_tp_new},
    {Py_tp_dealloc, buffer_dealloc},
    {Py_tp_traverse, buffer_traverse},
    {Py_tp_clear, buffer_clear},
    {Py_tp_repr, buffer_repr},
    {Py_tp_getset, buffer_getset},
    {Py_tp_methods, buffer_methods},
    {Py_tp_members, buffer_members},
    {Py_bf_getbuffer, dfb_buffer_getbuffer},
    {Py_bf_releasebuffer, dfb_buffer_releasebuffer},
    {0, NULL},
};

PyType_Spec dfb_buffer_spec = {
    .name = "dfbuffer.Buffer",
    .basicsize = offsetof(DfbBuffer, dims),
    .itemsize = sizeof(Py_ssize_t),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = buffer_slots,
};
