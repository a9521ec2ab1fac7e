/* dfbuffer: the mapping side of to_matrix: a mapping of column names to
 * arrays, read once (dfb_mapping_snapshot) and described value by value as
 * dfb_column chunks, each value read as column_to_ndarray reads it alone
 * (see matrix.h).
 */
#include "common.h"
#include "readers.h"
#include "arrow.h"
#include "model.h"
#include "pandas.h"
#include "exchange.h"
#include "matrix.h"

#include <string.h>

/* describe_value's answer for a value left out (on_unsupported="skip") */
#define LEFT_OUT 1

/* For a pandas value (pandas' interchange Column, a Series, an
   ExtensionArray), a new reference to the one-column pandas DataFrame it
   is read as, its column labelled `key`; NULL without an exception for any
   other value, NULL with one on error. */
static PyObject *
pandas_value_frame(PyObject *v, PyObject *key)
{
    int allow_copy = 1; /* to_matrix always copies */
    PyObject *frame = dfb_pandas_column_frame(v, &allow_copy);
    if (frame == NULL && !PyErr_Occurred()) {
        frame = dfb_pandas_series_frame(v);
    }
    if (frame == NULL && !PyErr_Occurred()) {
        frame = dfb_pandas_array_frame(v);
    }
    if (frame == NULL) {
        return NULL;
    }
    /* our own new frame: its one label becomes the mapping's key, so that
       every error of its reading names the key */
    PyObject *labels = PyList_New(1);
    if (labels == NULL) {
        Py_DECREF(frame);
        return NULL;
    }
    PyList_SET_ITEM(labels, 0, Py_NewRef(key));
    int r = PyObject_SetAttrString(frame, "columns", labels);
    Py_DECREF(labels);
    if (r < 0) {
        Py_CLEAR(frame);
    }
    return frame;
}

/* 1 if `v` is a numpy.ma.MaskedArray, 0 if not, -1 with an exception
   set. */
static int
is_masked(PyObject *v)
{
    if (PyArray_CheckExact(v)) {
        return 0;
    }
    PyObject *cls = dfb_import_attr("numpy.ma", "MaskedArray");
    if (cls == NULL) {
        return -1;
    }
    int r = PyObject_IsInstance(v, cls);
    Py_DECREF(cls);
    return r;
}

/* Describes array value `v` of column `key` (an ndarray, a masked array
   giving its mask as nulls, or anything Buffer.from_object reads, as its
   NumPy view) into `sub` (one column of one chunk, the arrays kept) with
   its strides in *strides.  Returns 0, or -1 with an exception set naming
   the column. */
static int
describe_array(dfb_state *st, PyObject *v, PyObject *key, dfb_frame *sub,
               mstrides **strides)
{
    if (PyList_Check(v) || PyTuple_Check(v)) {
        PyErr_Format(PyExc_TypeError,
                     "column %R: to_matrix() takes arrays as a mapping's "
                     "values, got %.200s: pass np.asarray(...) of it",
                     key, Py_TYPE(v)->tp_name);
        return -1;
    }
    PyObject *arr = NULL, *mask = NULL;
    int r = -1;
    if (PyArray_Check(v)) {
        arr = Py_NewRef(v);
    }
    else {
        /* any other producer, as Buffer.from_object reads it (a Buffer
           itself too), as the NumPy view of that Buffer */
        PyObject *b = DfbBuffer_Check(st, v)
                          ? Py_NewRef(v)
                          : dfb_buffer_from_object_impl(st, v, NULL);
        arr = b == NULL ? NULL : dfb_buffer_as_ndarray((DfbBuffer *)b);
        Py_XDECREF(b);
        if (arr == NULL) {
            dfb_add_column_context(st, key);
            return -1;
        }
    }
    PyArrayObject *a = (PyArrayObject *)arr;
    if (PyArray_NDIM(a) != 1) {
        PyObject *shape = dfb_dims_tuple((const Py_ssize_t *)PyArray_DIMS(a),
                                         PyArray_NDIM(a));
        if (shape != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "column %R: to_matrix() takes 1-D columns, got an "
                         "array of shape %R",
                         key, shape);
            Py_DECREF(shape);
        }
        goto done;
    }
    int m = is_masked(v);
    if (m < 0) {
        goto done;
    }
    if (m) {
        /* the mask read once (numpy.ma.getmaskarray: a full bool array) */
        PyObject *ma = dfb_import_attr("numpy.ma", "getmaskarray");
        mask = ma == NULL ? NULL : PyObject_CallOneArg(ma, v);
        Py_XDECREF(ma);
        if (mask == NULL) {
            goto done;
        }
    }
    r = dfb_matrix_array_frame(arr, mask, key, "NumPy", sub, strides);
done:
    Py_XDECREF(mask);
    Py_XDECREF(arr);
    return r;
}

/* Describes value `v` of column `key` into `sub` (zeroed; cleared by the
   caller) and *strides (a PyMem array of one per column of `sub`, or
   NULL), as column_to_ndarray reads it alone: a pandas value as the column
   of a one-column frame, an Arrow array (one chunk), an array.  Returns 0,
   LEFT_OUT, or -1 with an exception set naming the column. */
static int
describe_value(dfb_state *st, PyObject *v, PyObject *key, int flatten,
               int ordinal, int skip, dfb_frame *sub, mstrides **strides)
{
    PyObject *frame = pandas_value_frame(v, key);
    if (frame != NULL) {
        int r = dfb_matrix_pandas_describe(st, frame, NULL, flatten, ordinal,
                                           skip, sub, strides);
        Py_DECREF(frame);
        return r < 0 ? -1 : sub->ncols == 0 ? LEFT_OUT : 0;
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    int arrow = DfbBuffer_Check(st, v) ? 0 : dfb_arrow_is_producer(v);
    if (arrow < 0) {
        return -1;
    }
    if (arrow) {
        if (dfb_arrow_describe_frame(st, v, NULL, 0, ordinal, skip, sub) < 0) {
            dfb_add_column_context(st, key);
            return -1;
        }
        if (sub->ncols == 0 && skip) {
            return LEFT_OUT;
        }
        if (sub->ncols != 1 || sub->cols[0].nchunks != 1) {
            PyErr_Format(PyExc_ValueError,
                         "column %R: pass one Arrow array (one chunk)", key);
            return -1;
        }
        Py_SETREF(sub->cols[0].name, Py_NewRef(key));
        return 0;
    }
    int r = describe_array(st, v, key, sub, strides);
    if (r < 0 && skip && PyErr_ExceptionMatches(PyExc_TypeError) &&
        sub->ncols == 1) {
        PyErr_Clear(); /* described, refused by its type: left out */
        return LEFT_OUT;
    }
    return r;
}

int
dfb_matrix_mapping_describe(dfb_state *st, PyObject *obj, PyObject *select,
                            int flatten, int ordinal, int skip, dfb_frame *out,
                            mstrides **strides)
{
    *strides = NULL;
    /* the items taken in one pass: reading a value runs code that may
       change the caller's mapping */
    PyObject *snap = dfb_mapping_snapshot(obj);
    PyObject *items = snap != NULL ? PyDict_Items(snap) : NULL;
    Py_XDECREF(snap);
    if (items == NULL) {
        return -1;
    }
    const Py_ssize_t nitems = PyList_GET_SIZE(items);
    Py_ssize_t *idx = NULL, n = 0, room = 0;
    int r = -1;
    PyObject *names = PyList_New(nitems);
    if (names == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < nitems; i++) {
        PyObject *k = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0);
        PyObject *key =
            PyUnicode_CheckExact(k) ? Py_NewRef(k) : PyObject_Str(k);
        if (key == NULL) {
            goto done;
        }
        PyList_SET_ITEM(names, i, key);
    }
    if (dfb_frame_select(names, select, &idx, &n) < 0 ||
        dfb_frame_init(out, n) < 0) {
        goto done;
    }
    room = n;
    *strides = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(mstrides));
    if (*strides == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    out->ncols = 0;      /* the columns described so far */
    int64_t length = -1; /* of the columns so far */
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *key = PyList_GET_ITEM(names, idx[k]);
        PyObject *v = PyTuple_GET_ITEM(PyList_GET_ITEM(items, idx[k]), 1);
        dfb_frame sub;
        memset(&sub, 0, sizeof(sub));
        mstrides *sst = NULL;
        /* the native object of a narwhals Series, held to the end */
        PyObject *native = dfb_narwhals_native(v);
        int rv = native == NULL && PyErr_Occurred()
                     ? -1
                     : describe_value(st, native != NULL ? native : v, key,
                                      flatten, ordinal, skip, &sub, &sst);
        Py_XDECREF(native);
        if (rv == 0) {
            int64_t len = 0;
            for (Py_ssize_t c = 0; c < sub.cols[0].nchunks; c++) {
                len += sub.cols[0].chunks[c].length;
            }
            if (length >= 0 && len != length) {
                PyErr_Format(PyExc_ValueError,
                             "column %R: to_matrix() takes columns of one "
                             "length: this one has %lld values, the others "
                             "%lld",
                             key, (long long)len, (long long)length);
                rv = -1;
            }
            length = len;
        }
        else if (rv == LEFT_OUT) {
            if (length < 0 && sub.nrows >= 0) {
                length = sub.nrows; /* the rows, should none be taken */
            }
            rv = 0;
            dfb_frame_clear(&sub);
        }
        if (rv == 0 && sub.ncols > 0) {
            rv = dfb_matrix_frame_append(out, strides, &room, &sub, sst);
        }
        dfb_frame_clear(&sub);
        PyMem_Free(sst);
        if (rv < 0) {
            goto done;
        }
    }
    out->nrows = length >= 0 ? length : 0;
    r = 0;
done:
    PyMem_Free(idx);
    Py_XDECREF(names);
    Py_DECREF(items);
    return r;
}
