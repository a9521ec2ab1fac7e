/* dfbuffer: from_dataframe's fast path for pandas DataFrames.
 *
 * The frame is read once by the one pandas frame reader (pandas_frame.c):
 * each NumPy-backed numeric column (a row of a NumPy block) is wrapped
 * without a copy and, for the common case, without reading a value; every
 * other column goes through pandas' own Arrow export of the sub-frame, so
 * pandas' __dataframe__ (and its sliced-Arrow-column bug, requirement
 * P-26) is never used.
 */
#include "common.h"
#include "buffer.h"
#include "convert.h"
#include "arrow.h"
#include "probe.h"
#include "arrow_device.h"
#include "pandas_frame.h"
#include "ixwalk.h"
#include "bitmap.h"
#include "mem.h"
#include "nan.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* pandas DataFrame fast path                                           */
/* ------------------------------------------------------------------ */

/* The null scan of one column view: counts NaN (kind 'f') or NaT ('M',
   'm'), filling `mask` when given.  Releases the GIL on large inputs (the
   caller holds a strong reference to `view`, whose base keeps the memory
   alive).  Cannot fail. */
static int64_t
scan_nulls(PyArrayObject *view, char kind, uint8_t *mask)
{
    const char *p = PyArray_BYTES(view);
    const npy_intp n = PyArray_DIM(view, 0);
    const npy_intp stride = PyArray_STRIDE(view, 0);
    const int isz = (int)PyArray_ITEMSIZE(view);
    int64_t c;
    DFB_NOGIL_IF(n, c = kind == 'f' ? dfb_count_nan(p, n, stride, isz, 0, NULL)
                                    : dfb_count_nat(p, n, stride, 0, mask));
    return c;
}

/* Converts column `i` of read frame `f` if it is a NumPy-backed numeric
   column (bool, int, uint, float16/32/64, datetime64, timedelta64 in
   native order): *out = a new zero-copy array whose base chain ends in a
   dfbuffer.Buffer owning a view of the column's row of its block.  Sets
   *out = NULL (and returns 0) for any other column, which the caller sends
   through Arrow.  Returns 0, or -1 with an exception set (ValueError for
   nulls in "raise" mode). */
static int
pandas_column(dfb_state *st, const dfb_pd_frame *f, Py_ssize_t i,
              dfb_nulls_mode nulls, PyObject **out)
{
    *out = NULL;
    if (f->cols[i].kind != DFB_PD_NUMPY) {
        return 0; /* masked and extension arrays: pandas' Arrow export */
    }
    const PyArray_Descr *d = f->cols[i].descr;
    const char kind = d->kind;
    const Py_ssize_t isz = PyDataType_ELSIZE(d);
    int ok = PyArray_ISNBO(d->byteorder) && !PyDataType_HASFIELDS(d) &&
             (kind == 'b' || kind == 'i' || kind == 'u' ||
              (kind == 'f' && (isz == 2 || isz == 4 || isz == 8)) ||
              ((kind == 'M' || kind == 'm') && isz == 8));
    if (!ok) {
        return 0;
    }
    PyObject *arr = dfb_pd_column_view(f, i);
    if (arr == NULL) {
        return -1;
    }
    PyObject *buf = dfb_buffer_from_object_impl(st, arr, NULL);
    Py_DECREF(arr);
    if (buf == NULL) {
        return -1;
    }
    PyObject *view = dfb_buffer_as_ndarray((DfbBuffer *)buf);
    Py_DECREF(buf);
    if (view == NULL) {
        return -1;
    }
    /* pandas' memory is read-only through dfbuffer (pandas 2 without
       copy-on-write has writable blocks) */
    PyArray_CLEARFLAGS((PyArrayObject *)view, NPY_ARRAY_WRITEABLE);
    if (kind != 'f' && kind != 'M' && kind != 'm') {
        *out = view; /* no null representation: nothing to look at */
        return 0;
    }
    /* Float NaN is the value pandas (and NumPy) use for a missing float:
       in "mask" and "fill" mode the array is returned as it is, NaN
       included, without reading it.  "raise" asks for the check. */
    if (kind == 'f' && nulls != DFB_NULLS_RAISE) {
        *out = view;
        return 0;
    }
    /* datetimes in "fill" mode: NaT is already in the null slots */
    if (kind != 'f' && nulls == DFB_NULLS_FILL) {
        *out = view;
        return 0;
    }
    PyArrayObject *v = (PyArrayObject *)view;
    int64_t nnull = scan_nulls(v, kind, NULL);
    if (nnull == 0) {
        *out = view;
        return 0;
    }
    if (nulls == DFB_NULLS_RAISE) {
        PyErr_Format(PyExc_ValueError,
                     "the column has %lld null value%s (nulls='raise')",
                     (long long)nnull, nnull == 1 ? "" : "s");
        Py_DECREF(view);
        return -1;
    }
    /* datetimes in "mask" mode: NaT masked, as the Arrow path did */
    npy_intp dims[1] = {PyArray_DIM(v, 0)};
    PyObject *mask = PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (mask == NULL) {
        Py_DECREF(view);
        return -1;
    }
    (void)scan_nulls(v, kind, (uint8_t *)PyArray_DATA((PyArrayObject *)mask));
    *out = dfb_masked_array(st, view, mask);
    Py_DECREF(view);
    Py_DECREF(mask);
    return *out == NULL ? -1 : 0;
}

/* Converts the columns at `positions` (a list of ints) of frame `df`
   through pandas' Arrow export of df.iloc[:, positions].  Returns a new
   list of arrays in that order, NULL with an exception set, or NULL
   without one when the export's columns do not match (the caller then
   reads the whole frame through Arrow). */
static PyObject *
arrow_columns(dfb_state *st, PyObject *df, PyObject *positions,
              const dfb_opts *opts, int allow_copy)
{
    PyObject *iloc = PyObject_GetAttr(df, st->str.iloc);
    if (iloc == NULL) {
        return NULL;
    }
    PyObject *all = PySlice_New(NULL, NULL, NULL);
    PyObject *key = all == NULL ? NULL : PyTuple_Pack(2, all, positions);
    Py_XDECREF(all);
    PyObject *sub = key == NULL ? NULL : PyObject_GetItem(iloc, key);
    Py_XDECREF(key);
    Py_DECREF(iloc);
    if (sub == NULL) {
        return NULL;
    }
    PyObject *d = dfb_arrow_from_dataframe(st, sub, opts, allow_copy);
    Py_DECREF(sub);
    if (d == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    if (!PyDict_CheckExact(d) ||
        PyDict_GET_SIZE(d) != PyList_GET_SIZE(positions)) {
        Py_DECREF(d);
        return NULL;
    }
    /* our own fresh dict, in column order: its values in order */
    res = PyDict_Values(d);
    Py_DECREF(d);
    return res;
}

/* Adds keys[i] -> vals[i] to a new dict, in order.  Returns it or NULL. */
static PyObject *
build_result(PyObject *keys, PyObject *vals)
{
    PyObject *res = PyDict_New();
    if (res == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        if (PyDict_SetItem(res, PyList_GET_ITEM(keys, i),
                           PyList_GET_ITEM(vals, i)) < 0) {
            Py_DECREF(res);
            return NULL;
        }
    }
    return res;
}

PyObject *
dfb_pandas_from_dataframe(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                          int allow_copy)
{
    int r = dfb_pandas_is_frame(obj);
    if (r > 0) {
        r = dfb_pandas_has_range_index(obj);
    }
    if (r <= 0) {
        return NULL;
    }
    Py_INCREF(obj); /* the frame stays alive across every call below */
    PyObject *res = NULL, *keys = NULL, *vals = NULL, *pending = NULL,
             *seen = NULL;
    dfb_pd_frame f = {0};
    keys = PyList_New(0);
    vals = PyList_New(0);
    pending = PyList_New(0);
    seen = PySet_New(NULL);
    if (keys == NULL || vals == NULL || pending == NULL || seen == NULL ||
        dfb_pd_frame_read(obj, &f) != 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < f.ncols; i++) {
        /* the frame's names list holds the key */
        PyObject *key = PyList_GET_ITEM(f.names, i);
        int dup = PySet_Contains(seen, key);
        if (dup != 0) {
            if (dup > 0) {
                PyErr_Format(PyExc_ValueError, "duplicate column name %R",
                             key);
            }
            goto done;
        }
        PyObject *arr;
        if (PySet_Add(seen, key) < 0 ||
            pandas_column(st, &f, i, opts->nulls, &arr) < 0) {
            dfb_add_column_context(key); /* the error names the column */
            goto done;
        }
        if (arr == NULL) {
            PyObject *pos = PyLong_FromSsize_t(i);
            int e = pos == NULL || PyList_Append(pending, pos) < 0;
            Py_XDECREF(pos);
            if (e) {
                goto done;
            }
            arr = Py_NewRef(Py_None);
        }
        int e = PyList_Append(keys, key) < 0 || PyList_Append(vals, arr) < 0;
        Py_DECREF(arr);
        if (e) {
            goto done;
        }
    }
    Py_ssize_t npend = PyList_GET_SIZE(pending);
    if (npend > 0 && npend == PyList_GET_SIZE(keys)) {
        /* nothing numpy-backed: pandas' Arrow export of the whole frame */
        res = dfb_arrow_from_dataframe(st, obj, opts, allow_copy);
        goto done;
    }
    if (npend > 0) {
        PyObject *got = arrow_columns(st, obj, pending, opts, allow_copy);
        if (got == NULL) {
            if (!PyErr_Occurred()) {
                res = dfb_arrow_from_dataframe(st, obj, opts, allow_copy);
            }
            goto done;
        }
        for (Py_ssize_t j = 0; j < npend; j++) {
            Py_ssize_t pos = PyLong_AsSsize_t(PyList_GET_ITEM(pending, j));
            if (pos < 0 || pos >= PyList_GET_SIZE(vals)) {
                Py_DECREF(got);
                if (!PyErr_Occurred()) {
                    PyErr_SetString(PyExc_SystemError, "bad column position");
                }
                goto done;
            }
            if (PyList_SetItem(vals, pos, Py_NewRef(PyList_GET_ITEM(got, j))) <
                0) {
                Py_DECREF(got);
                goto done;
            }
        }
        Py_DECREF(got);
    }
    res = build_result(keys, vals);
done:
    dfb_pd_frame_clear(&f);
    Py_XDECREF(seen);
    Py_XDECREF(pending);
    Py_XDECREF(vals);
    Py_XDECREF(keys);
    Py_DECREF(obj);
    return res;
}
