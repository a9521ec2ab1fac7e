/* dfbuffer: __arrow_array__ and __array__, the two protocols whose producer
 * hands over a Python array (a pyarrow array, a NumPy ndarray) instead of
 * describing its memory.
 *
 * __arrow_array__ (pyarrow's protocol, so asked only when pyarrow imports)
 * returns a pyarrow Array or ChunkedArray, which is then read through the
 * Arrow PyCapsule interface like any Arrow producer: its release callback
 * keeps pyarrow's buffers alive for as long as dfbuffer needs them.
 *
 * __array__ is the last resort.  With allow_copy false it is called with
 * NumPy 2's copy=False, so a producer that would have to copy refuses
 * (BufferError here); otherwise with no arguments (copy=None: the producer
 * may copy).  The returned ndarray owns the memory.  Read-only rule: the
 * memory is writable through dfbuffer only when the producer promised not
 * to copy (copy=False) and the ndarray it returned is writable; after a
 * copy=None call a writable result may be a private copy, where writes
 * would be lost silently, so it is read-only.
 */
#include "common.h"
#include "args.h"
#include "model.h"
#include "exchange.h"
#include "probe.h"

/* ------------------------------------------------------------------ */
/* __arrow_array__                                                      */
/* ------------------------------------------------------------------ */

/* Returns pyarrow (new reference), or NULL without an exception when it
   cannot be imported (ImportError), or NULL with another exception set. */
static PyObject *
import_pyarrow(dfb_state *st)
{
    PyObject *pa = PyImport_Import(st->str.pyarrow);
    if (pa == NULL && PyErr_ExceptionMatches(PyExc_ImportError)) {
        PyErr_Clear();
    }
    return pa;
}

/* Returns 1 if `arr` is a pyarrow.Array or pyarrow.ChunkedArray of module
   `pa`, 0 if not, -1 with an exception set. */
static int
is_pyarrow_array(dfb_state *st, PyObject *pa, PyObject *arr)
{
    PyObject *const names[] = {st->str.Array, st->str.ChunkedArray};
    for (int i = 0; i < 2; i++) {
        PyObject *cls = PyObject_GetAttr(pa, names[i]);
        if (cls == NULL) {
            return -1;
        }
        int r = PyObject_IsInstance(arr, cls);
        Py_DECREF(cls);
        if (r != 0) {
            return r;
        }
    }
    return 0;
}

/* Calls obj.__arrow_array__() when pyarrow imports.  Returns the pyarrow
   Array or ChunkedArray (new reference); NULL without an exception when
   pyarrow cannot be imported (the protocol is then not spoken); NULL with
   TypeError when it returned anything else, or with the producer's
   error. */
PyObject *
dfb_arrow_array_method_call(dfb_state *st, PyObject *obj)
{
    PyObject *pa = import_pyarrow(st);
    if (pa == NULL) {
        return NULL;
    }
    PyObject *arr = dfb_probe_call(st, obj, DFB_PN_ARROW_ARRAY_METHOD);
    int r = arr == NULL ? -1 : is_pyarrow_array(st, pa, arr);
    Py_DECREF(pa);
    if (r == 0) {
        PyErr_Format(PyExc_TypeError,
                     "%.100s.__arrow_array__() returned %.100s, not a "
                     "pyarrow Array or ChunkedArray",
                     Py_TYPE(obj)->tp_name, Py_TYPE(arr)->tp_name);
    }
    if (r <= 0) {
        Py_XDECREF(arr);
        return NULL;
    }
    return arr;
}

/* Buffer.from_object's importer for __arrow_array__: a Buffer over the
   values of the pyarrow array returned (arrow_from_object.c's rules and
   owner).  Returns a new Buffer; NULL without an exception when pyarrow
   cannot be imported; NULL with an exception set on error. */
PyObject *
dfb_import_arrow_array_method(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    PyObject *arr = dfb_arrow_array_method_call(st, obj);
    if (arr == NULL) {
        return NULL; /* declined (no pyarrow) or failed */
    }
    PyObject *res = dfb_arrow_buffer_from_object(st, arr, dtype);
    Py_DECREF(arr);
    return res;
}

/* ------------------------------------------------------------------ */
/* __array__                                                            */
/* ------------------------------------------------------------------ */

/* Replaces the pending exception by BufferError(`fmt` % (type name of
   obj, the copy keyword the caller gave: dfb_copy_keyword)), the original
   as its cause.  Always returns NULL. */
static PyObject *
refuse_copy(PyObject *obj, const char *fmt)
{
    PyObject *cause = dfb_err_take();
    PyErr_Format(PyExc_BufferError, fmt, Py_TYPE(obj)->tp_name,
                 dfb_copy_keyword());
    dfb_err_raise_from(cause);
    return NULL;
}

/* Calls obj.__array__(copy=False) when `allow_copy` is 0, else
   obj.__array__().  Returns the ndarray (new reference) with *shared = 1
   when the producer promised not to copy (copy=False), else 0; NULL with
   BufferError when copy=False was refused (ValueError) or not understood
   (exactly TypeError), TypeError when the result is not an ndarray, or
   the producer's error. */
PyObject *
dfb_array_method_call(dfb_state *st, PyObject *obj, int allow_copy,
                      int *shared)
{
    PyObject *res;
    *shared = 0;
    if (allow_copy) {
        res = dfb_probe_call(st, obj, DFB_PN_ARRAY_METHOD);
    }
    else {
        PyObject *name = Py_NewRef(st->str.array_method);
        PyObject *kwnames = Py_NewRef(st->tup.copy_kw);
        PyObject *args[2] = {obj, Py_False};
        res = PyObject_VectorcallMethod(
            name, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
        Py_DECREF(name);
        Py_DECREF(kwnames);
        /* NumPy 2's protocol: ValueError when copy=False cannot be
           honoured; exactly TypeError from a producer without the copy
           keyword (it cannot promise anything) */
        if (res == NULL && PyErr_ExceptionMatches(PyExc_ValueError)) {
            return refuse_copy(obj,
                               "%.100s.__array__(copy=False) refused: the "
                               "producer cannot hand out its memory without "
                               "a copy, and no copy was allowed "
                               "(%s=False)");
        }
        if (res == NULL && PyErr_Occurred() == PyExc_TypeError) {
            return refuse_copy(obj,
                               "%.100s.__array__ does not take NumPy 2's "
                               "copy=False, so it cannot promise not to "
                               "copy, and no copy was allowed "
                               "(%s=False)");
        }
        *shared = 1;
    }
    if (res == NULL) {
        return NULL;
    }
    if (!PyArray_Check(res)) {
        PyErr_Format(PyExc_TypeError,
                     "%.100s.__array__() returned %.100s, not a NumPy array",
                     Py_TYPE(obj)->tp_name, Py_TYPE(res)->tp_name);
        Py_DECREF(res);
        *shared = 0;
        return NULL;
    }
    return res;
}

/* Buffer.from_object's importer for __array__ (dfb_array_method_call):
   a Buffer over the returned ndarray, which is its owner, read-only unless
   *shared and the ndarray is writable (the rule at the top).  Returns a
   new Buffer, or NULL with an exception set. */
PyObject *
dfb_import_array_method(dfb_state *st, PyObject *obj, PyObject *dtype,
                        int allow_copy)
{
    int shared;
    PyObject *res = dfb_array_method_call(st, obj, allow_copy, &shared);
    if (res == NULL) {
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)res;
    DLDevice cpu = {kDLCPU, 0};
    int readonly = !(shared && PyArray_ISWRITEABLE(a));
    PyObject *buf =
        dfb_import_finish(st, PyArray_BYTES(a), res, PyArray_DESCR(a),
                          PyArray_NDIM(a), PyArray_DIMS(a), PyArray_STRIDES(a),
                          cpu, readonly, DFB_NATIVE_NUMPY, dtype);
    Py_DECREF(res);
    return buf;
}

/* The ValueError of public function `func` for column `arr`, not 1-D,
   naming its shape.  Cannot fail. */
void
dfb_not_1d_error(const char *func, PyArrayObject *arr)
{
    PyObject *shape =
        PyArray_IntTupleFromIntp(PyArray_NDIM(arr), PyArray_DIMS(arr));
    if (shape != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "%s() takes 1-D columns, got an array of shape %R", func,
                     shape);
        Py_DECREF(shape);
    }
}

/* column_to_ndarray's reading of __array__ (for public function
   `func`): an ndarray over the Buffer of dfb_import_array_method (its
   base), which must be 1-D and not structured.  Returns a new array, or
   NULL with an exception set (ValueError naming the shape for another
   ndim, TypeError for a structured array). */
PyObject *
dfb_array_method_column(dfb_state *st, PyObject *obj, int allow_copy,
                        const char *func)
{
    if (PyArray_Check(obj) &&
        PyDataType_HASFIELDS(PyArray_DESCR((PyArrayObject *)obj))) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes columns of plain values, got a structured "
                     "array: pass one field of it, a[name]",
                     func);
        return NULL;
    }
    PyObject *b = dfb_import_array_method(st, obj, NULL, allow_copy);
    if (b == NULL) {
        return NULL;
    }
    PyObject *res = dfb_buffer_as_ndarray((DfbBuffer *)b);
    Py_DECREF(b);
    if (res != NULL && PyArray_NDIM((PyArrayObject *)res) != 1) {
        dfb_not_1d_error(func, (PyArrayObject *)res);
        Py_CLEAR(res);
    }
    return res;
}
