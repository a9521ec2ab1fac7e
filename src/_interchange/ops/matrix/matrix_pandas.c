/* dfbuffer: the pandas side of to_matrix: a pandas DataFrame's columns
 * described as dfb_column chunks, its NumPy-backed and masked ones in place
 * as the one pandas frame reader (pandas_frame.c) read them, the others
 * from pandas' own arrays or its Arrow export of the column (see
 * matrix.h).
 */
#include "common.h"
#include "pandas.h"
#include "model.h"
#include "readers.h"
#include "matrix.h"
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

/* Describes datetime64 / timedelta64 column `s` (s, ms, us or ns) as one
   timestamp / duration chunk `c` (zeroed), for the plan to refuse by its
   type.  Returns 0, or 1 (no exception) for any other column. */
static int
temporal_chunk(const dfb_pd_column *s, int64_t nrows, dfb_column *c,
               mstrides *ms)
{
    const PyArray_Descr *d = s->descr;
    if (s->kind != DFB_PD_NUMPY || (d->kind != 'M' && d->kind != 'm')) {
        return 1;
    }
    PyArray_DatetimeMetaData *meta =
        &(((PyArray_DatetimeDTypeMetaData *)PyDataType_C_METADATA(d))->meta);
    const char unit = meta->num != 1            ? 0
                      : meta->base == NPY_FR_s  ? 's'
                      : meta->base == NPY_FR_ms ? 'm'
                      : meta->base == NPY_FR_us ? 'u'
                      : meta->base == NPY_FR_ns ? 'n'
                                                : 0;
    if (unit == 0) {
        return 1;
    }
    c->fmt.type = d->kind == 'M' ? DFB_T_TIMESTAMP : DFB_T_DURATION;
    c->fmt.bits = 64;
    c->fmt.unit = unit;
    c->fmt.byteorder = '=';
    c->length = nrows;
    c->data.ptr = s->data;
    c->null_kind = DFB_NULL_NON_NULLABLE;
    ms->data = s->stride;
    ms->mask = 1;
    ms->given = 1;
    return 0;
}

/* The pandas classes the columns the blocks do not serve are told apart
   by (strong references; pandas is imported: the frame is one). */
typedef struct {
    PyObject *period, *interval, *sparse, *categorical;
} pd_dtypes;

/* Fills `t` from pandas' namespace.  Returns 0, or -1 with an exception
   set. */
static int
pd_dtypes_get(pd_dtypes *t)
{
    t->period = dfb_import_attr("pandas", "PeriodDtype");
    t->interval =
        t->period ? dfb_import_attr("pandas", "IntervalDtype") : NULL;
    t->sparse = t->interval ? dfb_import_attr("pandas", "SparseDtype") : NULL;
    t->categorical =
        t->sparse ? dfb_import_attr("pandas", "CategoricalDtype") : NULL;
    return t->categorical != NULL ? 0 : -1;
}

/* Releases `t`.  Cannot fail. */
static void
pd_dtypes_clear(pd_dtypes *t)
{
    Py_CLEAR(t->period);
    Py_CLEAR(t->interval);
    Py_CLEAR(t->sparse);
    Py_CLEAR(t->categorical);
}

/* Sets the TypeError for column `name` of pandas dtype `dtype`, which has
   no number to put in a matrix (`hint`: what takes it instead, or "").
   Returns -1. */
static int
refuse(PyObject *name, PyObject *dtype, const char *hint)
{
    PyObject *dt = PyObject_Str(dtype);
    if (dt != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "column %R has a pandas %U type; to_matrix takes bool, "
                     "integer and float columns%s",
                     name, dt, hint);
        Py_DECREF(dt);
    }
    return -1;
}

/* Describes the codes of Categorical `cat` (pandas' own array; -1 a null)
   as one dictionary chunk of column `name` into `sub`, the codes kept.
   Returns 0, or -1 with an exception set. */
static int
categorical_frame(PyObject *cat, PyObject *name, int64_t nrows, dfb_frame *sub,
                  mstrides **strides)
{
    PyObject *codes = PyObject_GetAttrString(cat, "codes");
    if (codes == NULL) {
        return -1;
    }
    int r = -1;
    PyArrayObject *a = (PyArrayObject *)codes;
    if (!PyArray_CheckExact(codes) || PyArray_NDIM(a) != 1 ||
        PyArray_DIM(a, 0) != nrows || PyArray_DESCR(a)->kind != 'i' ||
        !PyArray_ISNBO(PyArray_DESCR(a)->byteorder)) {
        PyErr_Format(PyExc_ValueError,
                     "column %R: pandas gave no 1-D integer codes", name);
        goto done;
    }
    *strides = PyMem_Calloc(1, sizeof(mstrides));
    if (*strides == NULL || dfb_frame_init(sub, 1) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    sub->nrows = nrows;
    dfb_frame_column *fc = &sub->cols[0];
    fc->name = Py_NewRef(name);
    fc->chunks = PyMem_Calloc(2, sizeof(dfb_column));
    if (fc->chunks == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    fc->nchunks = 1;
    if (PyList_Append(sub->keep, codes) < 0) {
        goto done;
    }
    dfb_column *c = fc->chunks;
    c->fmt.type = DFB_T_DICTIONARY;
    c->index.type = DFB_T_INT;
    c->index.bits = (int)PyArray_ITEMSIZE(a) * 8;
    c->index.byteorder = c->index.bits > 8 ? '=' : '|';
    c->length = nrows;
    c->data.ptr = PyArray_DATA(a);
    c->data.size = nrows * (int64_t)PyArray_ITEMSIZE(a);
    c->null_kind = DFB_NULL_USE_SENTINEL;
    c->null_value = -1;
    c->null_count = -1;
    (*strides)->data = (int64_t)PyArray_STRIDE(a, 0);
    (*strides)->mask = 1;
    (*strides)->given = 1;
    r = 0;
done:
    Py_DECREF(codes);
    return r;
}

/* Replaces a pending exception of pandas' Arrow export of column `name`
   that is not one of dfbuffer's own kinds (exactly ValueError, TypeError,
   NotImplementedError, KeyError, MemoryError: pyarrow's errors, a missing
   pyarrow) by NotImplementedError naming the column, the original its
   __cause__, so that on_unsupported="skip" leaves the column out.  Cannot
   fail. */
static void
export_failed(PyObject *name)
{
    PyObject *exc = dfb_err_take();
    if (exc == NULL) {
        return;
    }
    PyObject *t = (PyObject *)Py_TYPE(exc);
    if (t == PyExc_ValueError || t == PyExc_TypeError ||
        t == PyExc_NotImplementedError || t == PyExc_KeyError ||
        t == PyExc_MemoryError) {
        dfb_err_give(exc);
        return;
    }
    PyErr_Format(PyExc_NotImplementedError,
                 "column %R: pandas' Arrow export failed: %.200s: %S", name,
                 Py_TYPE(exc)->tp_name, exc);
    dfb_err_raise_from(exc);
}

/* describe_other's answer for a column left to one Arrow export */
#define BATCHED 2

/* Column `i` of `frame` (a frame over the manager read) as pandas' own
   arrays give it, for a column the blocks do not serve, named `name`
   (`leaf`: a struct leaf selected by name, or NULL) into `sub` (zeroed;
   cleared by the caller) and *strides (or NULL: contiguous): a Period
   column's ordinals (`ordinal`) with NaT a null, a Sparse column densified,
   a Categorical's codes, a NumPy column's values, anything else through
   pandas' own Arrow export of the column as a one-column frame with a
   RangeIndex (no index column).  Period without `ordinal`, Interval,
   object and complex columns are refused by name.  `dtype` is the
   column's, read with the frame's; with `batch`, a column for pandas'
   Arrow export (no leaf, no `flatten`) is left to the caller's one export
   of all such columns (BATCHED).  Returns 0, BATCHED, or -1 with an
   exception set. */
static int
describe_other(dfb_state *st, const pd_dtypes *t, PyObject *frame,
               Py_ssize_t i, PyObject *dtype, PyObject *name, PyObject *leaf,
               int64_t nrows, int flatten, int ordinal, int skip, int batch,
               dfb_frame *sub, mstrides **strides)
{
    PyObject *series = NULL, *arr = NULL, *vals = NULL, *mask = NULL,
             *one = NULL;
    int r = -1;
    if (batch && leaf == NULL && !flatten && !PyArray_DescrCheck(dtype) &&
        !PyObject_TypeCheck(dtype, (PyTypeObject *)t->period) &&
        !PyObject_TypeCheck(dtype, (PyTypeObject *)t->interval) &&
        !PyObject_TypeCheck(dtype, (PyTypeObject *)t->sparse) &&
        !PyObject_TypeCheck(dtype, (PyTypeObject *)t->categorical)) {
        return BATCHED;
    }
    PyObject *iloc = PyObject_GetAttrString(frame, "iloc");
    PyObject *all = iloc == NULL ? NULL : PySlice_New(NULL, NULL, NULL);
    PyObject *key = all == NULL ? NULL : Py_BuildValue("(On)", all, i);
    series = key == NULL ? NULL : PyObject_GetItem(iloc, key);
    Py_XDECREF(key);
    Py_XDECREF(all);
    Py_XDECREF(iloc);
    if (series == NULL) {
        goto done;
    }
    int is_arrow = 0;
    if (leaf != NULL) {
        is_arrow = 1; /* a struct's leaf: only Arrow has structs */
    }
    else if (PyArray_DescrCheck(dtype)) {
        vals = PyObject_CallMethod(series, "to_numpy", NULL);
        r = vals == NULL ? -1
                         : dfb_matrix_array_frame(vals, NULL, name, "pandas",
                                                  sub, strides);
    }
    else if (PyObject_TypeCheck(dtype, (PyTypeObject *)t->period)) {
        if (!ordinal) {
            r = refuse(name, dtype,
                       " (period='ordinal' takes a Period column's "
                       "ordinals)");
            goto done;
        }
        /* the ordinals (int64) and NaT as nulls, pandas' own arrays */
        arr = PyObject_GetAttrString(series, "array");
        vals = arr == NULL ? NULL : PyObject_GetAttrString(arr, "asi8");
        mask = vals == NULL ? NULL : PyObject_CallMethod(arr, "isna", NULL);
        r = mask == NULL ? -1
                         : dfb_matrix_array_frame(vals, mask, name, "pandas",
                                                  sub, strides);
    }
    else if (PyObject_TypeCheck(dtype, (PyTypeObject *)t->interval)) {
        r = refuse(name, dtype, "");
    }
    else if (PyObject_TypeCheck(dtype, (PyTypeObject *)t->sparse)) {
        PyObject *sub_t = PyObject_GetAttrString(dtype, "subtype");
        if (sub_t == NULL) {
            goto done;
        }
        const char k =
            PyArray_DescrCheck(sub_t) ? ((PyArray_Descr *)sub_t)->kind : 0;
        if (k == 'O' || k == 'c') {
            r = refuse(name, sub_t, "");
            Py_DECREF(sub_t);
            goto done;
        }
        Py_DECREF(sub_t);
        /* densified by pandas (SparseArray.__array__): a new array */
        arr = PyObject_GetAttrString(series, "array");
        vals = arr == NULL ? NULL : PyArray_FromAny(arr, NULL, 1, 1, 0, NULL);
        r = vals == NULL ? -1
                         : dfb_matrix_array_frame(vals, NULL, name, "pandas",
                                                  sub, strides);
    }
    else if (PyObject_TypeCheck(dtype, (PyTypeObject *)t->categorical)) {
        arr = PyObject_GetAttrString(series, "array");
        r = arr == NULL ? -1
                        : categorical_frame(arr, name, nrows, sub, strides);
    }
    else {
        is_arrow = 1;
    }
    if (is_arrow) {
        /* pandas' own Arrow export of the column alone, named `name`,
           without an index column */
        PyObject *kw = Py_BuildValue("{sO}", "name", name);
        PyObject *meth =
            kw == NULL ? NULL : PyObject_GetAttrString(series, "to_frame");
        PyObject *args = meth == NULL ? NULL : PyTuple_New(0);
        one = args == NULL ? NULL : PyObject_Call(meth, args, kw);
        Py_XDECREF(args);
        Py_XDECREF(meth);
        Py_XDECREF(kw);
        one = dfb_pandas_frame_result(one, "Series.to_frame()");
        int ri = one == NULL ? -1 : dfb_pandas_has_range_index(one);
        if (ri == 0) {
            PyObject *cls = dfb_import_attr("pandas", "RangeIndex");
            PyObject *idx = cls == NULL ? NULL
                                        : PyObject_CallFunction(
                                              cls, "L", (long long)nrows);
            Py_XDECREF(cls);
            ri = idx == NULL ? -1 : PyObject_SetAttrString(one, "index", idx);
            Py_XDECREF(idx);
        }
        PyObject *sel = ri < 0 ? NULL : PyList_New(1);
        if (sel == NULL) {
            goto done;
        }
        PyList_SET_ITEM(sel, 0, Py_NewRef(leaf != NULL ? leaf : name));
        r = dfb_arrow_describe_frame(st, one, sel, flatten, ordinal, skip,
                                     sub);
        Py_DECREF(sel);
        if (r < 0) {
            export_failed(name);
        }
    }
done:
    if (r < 0 && skip &&
        (PyErr_ExceptionMatches(PyExc_TypeError) ||
         PyErr_ExceptionMatches(PyExc_NotImplementedError))) {
        /* refused by its type (on_unsupported="skip"): left out */
        PyErr_Clear();
        dfb_frame_clear(sub);
        r = 0;
    }
    Py_XDECREF(one);
    Py_XDECREF(mask);
    Py_XDECREF(vals);
    Py_XDECREF(arr);
    Py_XDECREF(series);
    return r;
}

/* Resolves the selection `o_cols` against the names of `pf`: *idx (PyMem,
   *n entries) the column of each selected name and, with `flatten`,
   *leaves (a new list, or NULL when every name is a column's) the name of
   a struct leaf ("s.a") selected in column *idx's place, None elsewhere.
   Returns 0, or -1 with the selection's exception set. */
static int
select_columns(const dfb_pd_frame *pf, PyObject *o_cols, int flatten,
               Py_ssize_t **idx, Py_ssize_t *n, PyObject **leaves)
{
    *leaves = NULL;
    if (dfb_frame_select(pf->names, o_cols, idx, n) == 0) {
        return 0;
    }
    if (!flatten || !PyErr_ExceptionMatches(PyExc_KeyError)) {
        return -1;
    }
    /* a leaf of a struct column, named "parent.child": that column */
    PyObject *exc = dfb_err_take();
    PyObject *seq = PySequence_List(o_cols);
    *n = seq == NULL ? 0 : PyList_GET_SIZE(seq);
    *idx = seq == NULL
               ? NULL
               : PyMem_Calloc(*n > 0 ? (size_t)*n : 1, sizeof(Py_ssize_t));
    *leaves = *idx == NULL ? NULL : PyList_New(*n);
    int r = *leaves == NULL ? -1 : 0;
    for (Py_ssize_t k = 0; r == 0 && k < *n; k++) {
        PyObject *it = PyList_GET_ITEM(seq, k);
        PyObject *s =
            PyUnicode_CheckExact(it) ? Py_NewRef(it) : PyObject_Str(it);
        if (s == NULL) {
            r = -1;
            break;
        }
        Py_ssize_t found = -1, leaf = 0;
        for (Py_ssize_t j = 0; found < 0 && j < pf->ncols; j++) {
            PyObject *nm = PyList_GET_ITEM(pf->names, j);
            int eq = PyUnicode_Compare(s, nm) == 0;
            if (!eq && PyUnicode_GET_LENGTH(s) > PyUnicode_GET_LENGTH(nm) &&
                PyUnicode_Tailmatch(s, nm, 0, PyUnicode_GET_LENGTH(nm), -1) ==
                    1 &&
                PyUnicode_ReadChar(s, PyUnicode_GET_LENGTH(nm)) == '.') {
                leaf = 1;
                eq = 1;
            }
            if (eq) {
                found = j;
            }
        }
        if (found < 0) {
            Py_DECREF(s);
            r = -1; /* the selection's own KeyError */
            break;
        }
        (*idx)[k] = found;
        PyList_SET_ITEM(*leaves, k, leaf ? s : Py_NewRef(Py_None));
        if (!leaf) {
            Py_DECREF(s);
        }
    }
    Py_XDECREF(seq);
    if (r < 0) {
        if (PyErr_Occurred()) {
            Py_XDECREF(exc);
        }
        else {
            dfb_err_give(exc);
        }
        PyMem_Free(*idx);
        *idx = NULL;
        Py_CLEAR(*leaves);
        return -1;
    }
    Py_XDECREF(exc);
    return 0;
}

/* A new list of the dtypes of the `ncols` columns of pandas frame `frame`
   (`frame.dtypes`, read once), or NULL with an exception set (ValueError
   when pandas gives another count). */
static PyObject *
frame_dtypes(PyObject *frame, Py_ssize_t ncols)
{
    PyObject *d = PyObject_GetAttrString(frame, "dtypes");
    PyObject *list = d == NULL ? NULL : PySequence_List(d);
    Py_XDECREF(d);
    if (list != NULL && PyList_GET_SIZE(list) != ncols) {
        Py_CLEAR(list);
        PyErr_SetString(PyExc_ValueError,
                        "pandas gave the frame's dtypes for another number "
                        "of columns than its manager holds");
    }
    return list;
}

/* Describes the columns at positions `pos` (`nb` of them) of `frame` (a
   frame over the manager read) into `bsub` (zeroed; cleared by the
   caller) through one pandas Arrow export of them, as a frame whose
   columns are named "0", "1", ... (their place in `pos`) with a
   RangeIndex (no index column).  Returns 0, or -1 with an exception set
   (whatever the export raised). */
static int
describe_batch(dfb_state *st, PyObject *frame, const Py_ssize_t *pos,
               Py_ssize_t nb, int64_t nrows, int ordinal, int skip,
               dfb_frame *bsub)
{
    PyObject *cols = PyList_New(nb), *labels = PyList_New(nb);
    for (Py_ssize_t j = 0; cols != NULL && labels != NULL && j < nb; j++) {
        PyObject *p = PyLong_FromSsize_t(pos[j]);
        PyObject *l = PyUnicode_FromFormat("%zd", j);
        if (p == NULL || l == NULL) {
            Py_XDECREF(p);
            Py_XDECREF(l);
            Py_CLEAR(cols);
            break;
        }
        PyList_SET_ITEM(cols, j, p);
        PyList_SET_ITEM(labels, j, l);
    }
    PyObject *iloc = cols == NULL || labels == NULL
                         ? NULL
                         : PyObject_GetAttrString(frame, "iloc");
    PyObject *all = iloc == NULL ? NULL : PySlice_New(NULL, NULL, NULL);
    PyObject *key = all == NULL ? NULL : PyTuple_Pack(2, all, cols);
    PyObject *one = key == NULL ? NULL : PyObject_GetItem(iloc, key);
    Py_XDECREF(key);
    Py_XDECREF(all);
    Py_XDECREF(iloc);
    Py_XDECREF(cols);
    one = dfb_pandas_frame_result(one, "DataFrame.iloc");
    /* our own new frame: its labels and index are ours to set */
    int r = one == NULL ? -1 : PyObject_SetAttrString(one, "columns", labels);
    Py_XDECREF(labels);
    int ri = r < 0 ? -1 : dfb_pandas_has_range_index(one);
    if (ri == 0) {
        PyObject *cls = dfb_import_attr("pandas", "RangeIndex");
        PyObject *idx =
            cls == NULL ? NULL
                        : PyObject_CallFunction(cls, "L", (long long)nrows);
        Py_XDECREF(cls);
        ri = idx == NULL ? -1 : PyObject_SetAttrString(one, "index", idx);
        Py_XDECREF(idx);
    }
    r = ri < 0
            ? -1
            : dfb_arrow_describe_frame(st, one, NULL, 0, ordinal, skip, bsub);
    Py_XDECREF(one);
    return r;
}

/* Moves the columns of `bsub`, named "j" for the j-th column of one
   Arrow export, into the placeholder columns `slot[j]` of `out` (named
   for column `pos[j]` of `pf`, contiguous strides), `bsub`'s keep list kept
   by `out`'s.  Returns 0, or -1 with an exception set. */
static int
take_batch(dfb_frame *out, mstrides *strides, const dfb_pd_frame *pf,
           const Py_ssize_t *slot, const Py_ssize_t *pos, Py_ssize_t nb,
           dfb_frame *bsub)
{
    if (PyList_Append(out->keep, bsub->keep) < 0) {
        return -1;
    }
    for (Py_ssize_t c = 0; c < bsub->ncols; c++) {
        PyObject *num = PyLong_FromUnicodeObject(bsub->cols[c].name, 10);
        Py_ssize_t j = num == NULL ? -1 : PyLong_AsSsize_t(num);
        Py_XDECREF(num);
        if (j < 0 || j >= nb || out->cols[slot[j]].chunks != NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_RuntimeError,
                                "pandas' Arrow export gave a column it was "
                                "not asked for");
            }
            return -1;
        }
        dfb_frame_column *fc = &out->cols[slot[j]];
        *fc = bsub->cols[c];
        memset(&bsub->cols[c], 0, sizeof(bsub->cols[c]));
        Py_SETREF(fc->name, Py_NewRef(PyList_GET_ITEM(pf->names, pos[j])));
        memset(&strides[slot[j]], 0, sizeof(mstrides));
    }
    return 0;
}

int
dfb_matrix_pandas_describe(dfb_state *st, PyObject *obj, PyObject *o_cols,
                           int flatten, int ordinal, int skip, dfb_frame *out,
                           mstrides **strides)
{
    *strides = NULL;
    dfb_pd_frame pf = {0};
    pd_dtypes t = {0};
    Py_ssize_t *idx = NULL, n = 0, room = 0, nb = 0;
    Py_ssize_t *slot = NULL, *pos = NULL; /* of the columns batched */
    PyObject *leaves = NULL, *rest = NULL, *dtypes = NULL;
    int r = dfb_pd_frame_read(obj, &pf);
    if (r == 1) {
        dfb_not_a_frame_error("to_matrix", obj);
        r = -1;
    }
    if (r < 0 || select_columns(&pf, o_cols, flatten, &idx, &n, &leaves) < 0) {
        r = -1;
        goto done;
    }
    r = -1;
    room = n;
    *strides = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(mstrides));
    slot = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(Py_ssize_t));
    pos = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(Py_ssize_t));
    if (*strides == NULL || slot == NULL || pos == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (dfb_frame_init(out, n) < 0) {
        goto done;
    }
    out->ncols = 0; /* the columns described so far */
    Py_SETREF(out->keep, Py_NewRef(pf.keep));
    out->nrows = pf.nrows;
    /* with a column the blocks do not serve, a block's datetime64 or
       timedelta64 column is refused by the plan, in the columns' order,
       as that column's type is */
    int mixed = leaves != NULL;
    for (Py_ssize_t k = 0; k < n && !mixed; k++) {
        mixed = pf.cols[idx[k]].kind == DFB_PD_OTHER;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        const dfb_pd_column *s = &pf.cols[idx[k]];
        PyObject *name = PyList_GET_ITEM(pf.names, idx[k]);
        PyObject *leaf = leaves != NULL ? PyList_GET_ITEM(leaves, k) : NULL;
        leaf = leaf == Py_None ? NULL : leaf;
        int rc = 1;
        if (s->kind != DFB_PD_OTHER && leaf == NULL) {
            /* a NumPy or masked column: in place */
            if (reserve(out, strides, &room, 1) < 0) {
                goto done;
            }
            dfb_frame_column *fc = &out->cols[out->ncols];
            fc->chunks = PyMem_Calloc(2, sizeof(dfb_column));
            if (fc->chunks == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            fc->name = Py_NewRef(name);
            fc->nchunks = 1;
            out->ncols++;
            rc = mixed ? temporal_chunk(s, pf.nrows, fc->chunks,
                                        *strides + out->ncols - 1)
                       : 1;
            if (rc == 1) {
                rc = dfb_matrix_numpy_chunk(s, name, pf.nrows, fc->chunks,
                                            *strides + out->ncols - 1);
            }
            if (rc != 0) {
                dfb_frame_drop(out, out->ncols - 1);
            }
            if (rc < 0 && skip) {
                PyErr_Clear(); /* refused by its type: left out */
                continue;
            }
            if (rc < 0) {
                goto done;
            }
        }
        if (rc == 1) {
            /* the rest of the frame: pandas' own arrays, of a frame over
               the manager read here (another thread may swap `obj`'s) */
            if (rest == NULL &&
                ((rest = dfb_pd_frame_snapshot(&pf, obj)) == NULL ||
                 pd_dtypes_get(&t) < 0 ||
                 (dtypes = frame_dtypes(rest, pf.ncols)) == NULL)) {
                goto done;
            }
            dfb_frame sub;
            memset(&sub, 0, sizeof(sub));
            mstrides *sst = NULL;
            int rs = describe_other(
                st, &t, rest, idx[k], PyList_GET_ITEM(dtypes, idx[k]), name,
                leaf, pf.nrows, flatten, ordinal, skip, 1, &sub, &sst);
            if (rs == BATCHED) {
                /* a placeholder, filled by the one export below */
                if (reserve(out, strides, &room, 1) < 0) {
                    goto done;
                }
                slot[nb] = out->ncols++;
                pos[nb++] = idx[k];
                continue;
            }
            if (rs == 0 && sub.ncols > 0 &&
                dfb_matrix_frame_append(out, strides, &room, &sub, sst) < 0) {
                rs = -1;
            }
            dfb_frame_clear(&sub);
            PyMem_Free(sst);
            if (rs < 0) {
                goto done;
            }
        }
    }
    if (nb > 0) {
        dfb_frame bsub;
        memset(&bsub, 0, sizeof(bsub));
        int rb =
            describe_batch(st, rest, pos, nb, pf.nrows, ordinal, skip, &bsub);
        if (rb == 0) {
            rb = take_batch(out, *strides, &pf, slot, pos, nb, &bsub);
        }
        dfb_frame_clear(&bsub);
        if (rb < 0 && (PyErr_ExceptionMatches(PyExc_MemoryError) ||
                       !PyErr_ExceptionMatches(PyExc_Exception))) {
            goto done;
        }
        if (rb < 0) {
            /* the columns alone, so that the error names its column */
            PyErr_Clear();
            for (Py_ssize_t j = 0; j < nb; j++) {
                dfb_column *kept = out->cols[slot[j]].chunks;
                if (kept != NULL) {
                    continue; /* taken before the failure */
                }
                dfb_frame sub;
                memset(&sub, 0, sizeof(sub));
                mstrides *sst = NULL;
                PyObject *name = PyList_GET_ITEM(pf.names, pos[j]);
                int rs = describe_other(
                    st, &t, rest, pos[j], PyList_GET_ITEM(dtypes, pos[j]),
                    name, NULL, pf.nrows, 0, ordinal, skip, 0, &sub, &sst);
                if (rs == 0 && sub.ncols == 1) {
                    out->cols[slot[j]] = sub.cols[0];
                    memset(&sub.cols[0], 0, sizeof(sub.cols[0]));
                    if (sst != NULL) {
                        (*strides)[slot[j]] = sst[0];
                    }
                    rs = PyList_Append(out->keep, sub.keep);
                }
                dfb_frame_clear(&sub);
                PyMem_Free(sst);
                if (rs < 0) {
                    goto done;
                }
            }
        }
        /* the placeholders of columns left out go */
        Py_ssize_t w = 0;
        for (Py_ssize_t c = 0; c < out->ncols; c++) {
            if (out->cols[c].chunks == NULL) {
                Py_CLEAR(out->cols[c].name);
                continue;
            }
            out->cols[w] = out->cols[c];
            (*strides)[w] = (*strides)[c];
            w++;
        }
        for (Py_ssize_t c = w; c < out->ncols; c++) {
            memset(&out->cols[c], 0, sizeof(out->cols[c]));
        }
        out->ncols = w;
    }
    r = 0;
done:
    PyMem_Free(slot);
    PyMem_Free(pos);
    Py_XDECREF(dtypes);
    pd_dtypes_clear(&t);
    Py_XDECREF(rest);
    Py_XDECREF(leaves);
    PyMem_Free(idx);
    dfb_pd_frame_clear(&pf);
    return r;
}
