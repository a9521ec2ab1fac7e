/* dfbuffer: the pandas side of to_matrix: a pandas DataFrame's columns
 * described as dfb_column chunks, its NumPy-backed and masked ones in place
 * as the one pandas frame reader (pandas_frame.c) read them, the others
 * from pandas' own arrays or its Arrow export of the column (see
 * matrix_plan.h).
 */
#include "common.h"
#include "pandas_frame.h"
#include "column.h"
#include "frame.h"
#include "arrow_convert.h"
#include "matrix_pandas.h"
#include "mem.h"

#include <string.h>

/* For a pandas DataFrame, whose Arrow stream carries a non-default index
   as extra columns: returns a new list of its own column names (str), so
   the index stays out of the matrix.  Returns NULL without an exception
   for other objects, NULL with one on error. */
PyObject *
dfb_matrix_pandas_columns(PyObject *obj)
{
    int r = dfb_pandas_is_frame(obj);
    if (r <= 0) {
        return NULL;
    }
    return dfb_pandas_frame_names(obj);
}

int
dfb_matrix_numpy_chunk(const dfb_pd_column *s, PyObject *name, int64_t nrows,
                       dfb_column *c, mstrides *ms)
{
    const PyArray_Descr *d = s->descr;
    const int isz = (int)PyDataType_ELSIZE(d);
    const char *what = d->kind == 'O'   ? "an object"
                       : d->kind == 'M' ? "a timestamp"
                       : d->kind == 'm' ? "a duration"
                       : d->kind == 'c' ? "a complex"
                                        : NULL;
    if (what != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "column %R has %s type; to_matrix takes bool, integer "
                     "and float columns",
                     name, what);
        return -1;
    }
    if (!PyArray_ISNBO(d->byteorder) || PyDataType_HASFIELDS(d)) {
        return 1;
    }
    switch (d->kind) {
        case 'b':
            c->fmt.type = DFB_T_BOOL8;
            break;
        case 'i':
            c->fmt.type = DFB_T_INT;
            break;
        case 'u':
            c->fmt.type = DFB_T_UINT;
            break;
        case 'f':
            c->fmt.type = DFB_T_FLOAT;
            break;
        default:
            return 1;
    }
    if (isz != 1 && isz != 2 && isz != 4 && isz != 8) {
        return 1;
    }
    if (d->kind == 'f' && isz == 1) {
        return 1;
    }
    c->fmt.bits = 8 * isz;
    c->fmt.byteorder = '=';
    c->length = nrows;
    c->data.ptr = s->data;
    c->data.size = nrows * (int64_t)isz; /* not checked: see st2 */
    if (s->kind == DFB_PD_MASKED) {
        c->null_kind = DFB_NULL_USE_BYTEMASK;
        c->null_value = 1;
        c->null_count = -1;
        c->validity.ptr = (const char *)s->mask;
    }
    else if (d->kind == 'f') {
        /* NaN is pandas' missing float, as its Arrow export says */
        c->null_kind = DFB_NULL_USE_NAN;
        c->null_count = -1;
    }
    else {
        c->null_kind = DFB_NULL_NON_NULLABLE;
        c->null_count = 0;
    }
    /* the real byte strides, whatever they are: 0 is a broadcast view */
    ms->data = s->stride;
    ms->mask = s->kind == DFB_PD_MASKED ? s->mstride : 1;
    ms->given = 1;
    return 0;
}

/* Makes room in `out` (and *strides) for `extra` more columns past its
   ncols, *room the columns allocated.  Returns 0, or -1 with
   MemoryError. */
static int
reserve(dfb_frame *out, mstrides **strides, Py_ssize_t *room, Py_ssize_t extra)
{
    if (out->ncols + extra <= *room) {
        return 0;
    }
    const Py_ssize_t cap = out->ncols + extra + *room;
    dfb_frame_column *cols =
        PyMem_Realloc(out->cols, (size_t)cap * sizeof(dfb_frame_column));
    if (cols == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    out->cols = cols;
    mstrides *ns = PyMem_Realloc(*strides, (size_t)cap * sizeof(mstrides));
    if (ns == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *strides = ns;
    dfb_memset(out->cols + *room, 0,
               (size_t)(cap - *room) * sizeof(dfb_frame_column));
    dfb_memset(*strides + *room, 0, (size_t)(cap - *room) * sizeof(mstrides));
    *room = cap;
    return 0;
}

int
dfb_matrix_frame_append(dfb_frame *out, mstrides **strides, Py_ssize_t *room,
                        dfb_frame *sub, const mstrides *sst)
{
    if (reserve(out, strides, room, sub->ncols) < 0) {
        return -1;
    }
    if (sub->keep != NULL && sub->keep != out->keep &&
        PyList_Append(out->keep, sub->keep) < 0) {
        return -1;
    }
    for (Py_ssize_t j = 0; j < sub->ncols; j++) {
        out->cols[out->ncols] = sub->cols[j];
        memset(&sub->cols[j], 0, sizeof(sub->cols[j]));
        if (sst != NULL) {
            (*strides)[out->ncols] = sst[j];
        }
        else {
            memset(&(*strides)[out->ncols], 0, sizeof(mstrides));
        }
        out->ncols++;
    }
    return 0;
}

int
dfb_matrix_array_frame(PyObject *arr, PyObject *mask, PyObject *name,
                       const char *what, dfb_frame *sub, mstrides **strides)
{
    if (!PyArray_Check(arr) || PyArray_NDIM((PyArrayObject *)arr) != 1 ||
        (mask != NULL &&
         (!PyArray_Check(mask) || PyArray_NDIM((PyArrayObject *)mask) != 1 ||
          PyArray_DIM((PyArrayObject *)mask, 0) !=
              PyArray_DIM((PyArrayObject *)arr, 0) ||
          PyArray_DESCR((PyArrayObject *)mask)->type_num != NPY_BOOL))) {
        PyErr_Format(PyExc_ValueError,
                     "column %R: pandas gave no 1-D array of its values "
                     "(and bool mask)",
                     name);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)arr;
    const int64_t n = (int64_t)PyArray_DIM(a, 0);
    dfb_pd_column s;
    memset(&s, 0, sizeof(s));
    s.kind = mask != NULL ? DFB_PD_MASKED : DFB_PD_NUMPY;
    s.array = arr;
    s.descr = PyArray_DESCR(a);
    s.data = PyArray_DATA(a);
    s.stride = (int64_t)PyArray_STRIDE(a, 0);
    if (mask != NULL) {
        s.mask = PyArray_DATA((PyArrayObject *)mask);
        s.mstride = (int64_t)PyArray_STRIDE((PyArrayObject *)mask, 0);
    }
    *strides = PyMem_Calloc(1, sizeof(mstrides));
    if (*strides == NULL || dfb_frame_init(sub, 1) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        return -1;
    }
    sub->nrows = n;
    dfb_frame_column *fc = &sub->cols[0];
    fc->name = Py_NewRef(name);
    fc->chunks = PyMem_Calloc(2, sizeof(dfb_column));
    if (fc->chunks == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    fc->nchunks = 1;
    if (PyList_Append(sub->keep, arr) < 0 ||
        (mask != NULL && PyList_Append(sub->keep, mask) < 0)) {
        return -1;
    }
    int r = dfb_matrix_numpy_chunk(&s, name, n, fc->chunks, *strides);
    if (r == 1) {
        PyObject *dt = PyObject_Str((PyObject *)s.descr);
        if (dt != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "column %R has a %s %U type; to_matrix takes bool, "
                         "integer and float columns",
                         name, what, dt);
            Py_DECREF(dt);
        }
        r = -1;
    }
    return r;
}

/* The selected columns (`idx`, `n`) of read frame `pf` described into
   `out` (zeroed), the frame's keep list shared.  Returns 0, 1 (a column
   the Arrow path judges), or -1 with an exception set. */
static int
describe_columns(const dfb_pd_frame *pf, const Py_ssize_t *idx, Py_ssize_t n,
                 dfb_frame *out, mstrides *strides)
{
    if (dfb_frame_init(out, n) < 0) {
        return -1;
    }
    Py_SETREF(out->keep, Py_NewRef(pf->keep));
    out->nrows = pf->nrows;
    for (Py_ssize_t k = 0; k < n; k++) {
        dfb_frame_column *fc = &out->cols[k];
        fc->name = Py_NewRef(PyList_GET_ITEM(pf->names, idx[k]));
        fc->chunks = PyMem_Calloc(2, sizeof(dfb_column));
        if (fc->chunks == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        fc->nchunks = 1;
        int rc = dfb_matrix_numpy_chunk(&pf->cols[idx[k]], fc->name, pf->nrows,
                                        fc->chunks, strides + k);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Describes the selected columns of pandas DataFrame `obj` (exactly
   pandas.DataFrame, read by dfb_pd_frame_read) into `out` (zeroed): its
   NumPy blocks and its masked arrays (Int*, UInt*, Float*, boolean) read
   in place; sets *strides to a PyMem array of one per selected column (data
   and mask byte strides as they are: any sign, 0 for a broadcast view).
   Returns 0; 1 when `obj` is not such a frame, a block is of another kind or a
   selected column is (no exception; `out` and *strides are cleared: the caller
   takes pandas' Arrow export, of *rest when not NULL: a new reference to a
   frame over the block manager read here); or -1 with an exception set
   (TypeError naming an object, datetime, timedelta or complex column; the
   selection's). */
static int
describe_blocks(PyObject *obj, PyObject *select, dfb_frame *out,
                mstrides **strides, PyObject **rest)
{
    *strides = NULL;
    *rest = NULL;
    dfb_pd_frame pf = {0};
    Py_ssize_t *idx = NULL, n = 0;
    int r = dfb_pd_frame_read(obj, &pf);
    if (r != 0) {
        goto done;
    }
    r = 1;
    if (!pf.all_read) {
        goto done; /* a block of another kind: pandas' Arrow export */
    }
    if (dfb_frame_select(pf.names, select, &idx, &n) < 0) {
        r = -1;
        goto done;
    }
    /* refusals first (they name the column), then anything unread */
    for (Py_ssize_t k = 0; k < n; k++) {
        const dfb_pd_column *s = &pf.cols[idx[k]];
        char kind = s->kind != DFB_PD_OTHER ? s->descr->kind : 0;
        if (kind == 'O' || kind == 'M' || kind == 'm' || kind == 'c') {
            dfb_column scratch;
            mstrides ms;
            memset(&scratch, 0, sizeof(scratch));
            r = dfb_matrix_numpy_chunk(s, PyList_GET_ITEM(pf.names, idx[k]),
                                       pf.nrows, &scratch, &ms);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (pf.cols[idx[k]].kind == DFB_PD_OTHER) {
            goto done;
        }
    }
    *strides = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(mstrides));
    if (*strides == NULL) {
        PyErr_NoMemory();
        r = -1;
        goto done;
    }
    r = describe_columns(&pf, idx, n, out, *strides);
done:
    if (r == 1 && pf.mgr != NULL) {
        /* the other reader reads the manager read here, not `obj`'s,
           which another thread may have swapped since */
        *rest = dfb_pd_frame_snapshot(&pf, obj);
        r = *rest == NULL ? -1 : 1;
    }
    if (r != 0) {
        dfb_frame_clear(out);
        PyMem_Free(*strides);
        *strides = NULL;
    }
    PyMem_Free(idx);
    dfb_pd_frame_clear(&pf);
    return r;
}

/* The Arrow producer to_matrix reads the columns `o_cols` (NULL or None:
   all) of pandas frame `obj` through when its blocks are not all read in
   place: dfbuffer._to_arrow._matrix_source (to_arrow's reading, refusing
   a selected Period, Interval, object or complex column by name; with
   `ordinal`, period="ordinal", a Period column gives its ordinals; with
   `skip`, on_unsupported="skip", leaving those and the columns Arrow
   cannot hold out).  Returns a new reference or NULL with an exception;
   *sel is a new reference to the selection to read it with (o_cols less
   the columns left out, or None). */
static PyObject *
pandas_matrix_source(PyObject *obj, PyObject *o_cols, int ordinal, int skip,
                     PyObject **sel)
{
    *sel = NULL;
    PyObject *mod = PyImport_ImportModule("dfbuffer._to_arrow");
    if (mod == NULL) {
        return NULL;
    }
    PyObject *res = PyObject_CallMethod(mod, "_matrix_source", "(OOOO)", obj,
                                        o_cols != NULL ? o_cols : Py_None,
                                        ordinal ? Py_True : Py_False,
                                        skip ? Py_True : Py_False);
    Py_DECREF(mod);
    if (res == NULL) {
        return NULL;
    }
    if (!PyTuple_CheckExact(res) || PyTuple_GET_SIZE(res) != 2) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_SystemError,
                        "_matrix_source did not return (source, columns)");
        return NULL;
    }
    PyObject *src = Py_NewRef(PyTuple_GET_ITEM(res, 0));
    *sel = Py_NewRef(PyTuple_GET_ITEM(res, 1));
    Py_DECREF(res);
    return src;
}

int
dfb_matrix_pandas_describe(dfb_state *st, PyObject *obj, PyObject *o_cols,
                           int flatten, int ordinal, int skip, dfb_frame *out,
                           mstrides **strides)
{
    PyObject *rest = NULL, *sel = NULL;
    int r = describe_blocks(obj, o_cols, out, strides, &rest);
    if (r < 0 && skip && PyErr_ExceptionMatches(PyExc_TypeError)) {
        /* a block column refused by name (object, datetime,
           timedelta, complex): the reading below leaves it out */
        PyErr_Clear();
        r = 1;
    }
    if (r != 1) {
        return r;
    }
    /* columns the blocks do not serve: to_arrow's reading of the
       frame (no index column, no pyarrow needed, errors named),
       of a frame over the manager read when there is one */
    PyObject *src = pandas_matrix_source(rest != NULL ? rest : obj, o_cols,
                                         ordinal, skip, &sel);
    Py_XDECREF(rest);
    if (src == NULL) {
        return -1;
    }
    r = dfb_arrow_describe_frame(st, src, sel, flatten, ordinal, skip, out);
    Py_DECREF(src);
    Py_DECREF(sel);
    return r;
}
