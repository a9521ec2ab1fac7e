/* dfbuffer: THE reader of interchange-protocol buffers (ptr, bufsize,
 * __dlpack_device__), shared by Buffer.from_object and the interchange
 * walk, and the protocol int readers every importer uses.
 *
 * Moved from import.c so that the converters do not depend on
 * from_object; depends on buffer.c (the device parser) and state.c only.
 */
#include "common.h"
#include "model.h"
#include "exchange.h"

#include <string.h>

/* The common case of dfb_as_pointer, inline: 1 with *out set when `o` is
   an exact int in [0, LLONG_MAX] (the same pointer dfb_as_pointer gives),
   else 0 (no exception). */
static inline int
exact_pointer(PyObject *o, void **out)
{
    if (!PyLong_CheckExact(o)) {
        return 0;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || v < 0 || (unsigned long long)v > UINTPTR_MAX) {
        return 0; /* -1 here is the value, not an error: exact ints */
    }
    *out = (void *)(uintptr_t)v;
    return 1;
}

/* The common case of dfb_as_ssize, inline: 1 with *out set when `o` is an
   exact int that fits Py_ssize_t, else 0 (no exception). */
static inline int
exact_ssize(PyObject *o, Py_ssize_t *out)
{
    if (!PyLong_CheckExact(o)) {
        return 0;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || v < PY_SSIZE_T_MIN || v > PY_SSIZE_T_MAX) {
        return 0;
    }
    *out = (Py_ssize_t)v;
    return 1;
}

int
dfb_as_ssize(PyObject *o, const char *proto, const char *what, Py_ssize_t *out)
{
    if (exact_ssize(o, out)) {
        return 0; /* what PyLong_AsSsize_t below gives */
    }
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be an int, not %.100s",
                     proto, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t v = PyLong_AsSsize_t(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError,
                     "%s: %s %R does not fit in "
                     "Py_ssize_t",
                     proto, what, o);
        return -1;
    }
    *out = v;
    return 0;
}

int
dfb_as_pointer(PyObject *o, const char *proto, void **out)
{
    if (exact_pointer(o, out)) {
        return 0; /* what PyLong_AsVoidPtr below gives */
    }
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: the data pointer must be an int, not %.100s", proto,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (dfb_long_sign(o) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: the data pointer must be >= 0, got %R", proto, o);
        return -1;
    }
    void *p = PyLong_AsVoidPtr(o);
    if (p == NULL && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError,
                     "%s: the data pointer %R does not fit in a pointer",
                     proto, o);
        return -1;
    }
    *out = p;
    return 0;
}

int
dfb_read_interchange_buffer(dfb_state *st, PyObject *obj, PyObject *ptr_o,
                            PyObject *size_o, dfb_block *out)
{
    const char *proto = "interchange Buffer";
    /* DfbBuffer_Check: the type has no subclasses (no BASETYPE flag) */
    if (Py_IS_TYPE(obj, st->buffer_type)) {
        DfbBuffer *b = (DfbBuffer *)obj;
        out->ptr = b->ptr;
        out->size = b->bufsize;
        out->device = b->device;
        out->readonly = b->readonly;
        return 0;
    }
    /* each value is read exactly once, and owned while it is parsed */
    PyObject *p = ptr_o != NULL ? Py_NewRef(ptr_o) : NULL;
    PyObject *n = size_o != NULL ? Py_NewRef(size_o) : NULL;
    PyObject *d = NULL;
    int ret = -1;
    /* the names are interned once in the module state (state.c) */
    if (p == NULL && (p = PyObject_GetAttr(obj, st->str.ptr)) == NULL) {
        goto missing;
    }
    void *ptr;
    if (dfb_as_pointer(p, proto, &ptr) < 0) {
        goto done;
    }
    if (n == NULL && (n = PyObject_GetAttr(obj, st->str.bufsize)) == NULL) {
        goto missing;
    }
    Py_ssize_t size;
    if (dfb_as_ssize(n, proto, "bufsize", &size) < 0) {
        goto done;
    }
    if (size < 0) {
        PyErr_Format(PyExc_ValueError, "%s: bufsize must be >= 0, got %zd",
                     proto, size);
        goto done;
    }
    if (ptr == NULL && size != 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s: ptr 0 (NULL) cannot hold bufsize %zd bytes", proto,
                     size);
        goto done;
    }
    if ((uintptr_t)ptr > UINTPTR_MAX - (uintptr_t)size) {
        PyErr_Format(PyExc_OverflowError,
                     "%s: ptr + bufsize overflows the address space", proto);
        goto done;
    }
    d = PyObject_CallMethodNoArgs(obj, st->str.dlpack_device);
    if (d == NULL) {
        goto missing;
    }
    if (dfb_parse_device(d, &out->device) < 0) {
        goto done;
    }
    out->ptr = ptr;
    out->size = size;
    out->readonly = 1; /* the protocol grants read access only */
    ret = 0;
    goto done;
missing:
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyObject *exc = dfb_err_take();
        PyErr_Format(PyExc_TypeError,
                     "expected an interchange-protocol buffer (with ptr, "
                     "bufsize, __dlpack_device__), got %.200s",
                     Py_TYPE(obj)->tp_name);
        dfb_err_raise_from(exc);
    }
done:
    Py_XDECREF(p);
    Py_XDECREF(n);
    Py_XDECREF(d);
    return ret;
}

int
dfb_as_int64(PyObject *o, const char *what, int64_t *out)
{
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow) {
        /* a uint64 sentinel: keep its bit pattern */
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_OverflowError, "%s %R is out of range", what,
                         o);
            return -1;
        }
        v = (long long)u;
    }
    *out = v;
    return 0;
}
