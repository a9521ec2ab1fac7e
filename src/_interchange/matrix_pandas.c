/* dfbuffer: the pandas frame reader of to_matrix: a pandas DataFrame's
 * NumPy-backed and masked columns described from its blocks, read in place
 * (see matrix.h).
 */
#include "common.h"
#include "pandas_block.h"
#include "convert.h"
#include "frame.h"
#include "matrix.h"

#include <string.h>

/* For a pandas DataFrame, whose Arrow stream carries a non-default index
   as extra columns: returns a new list of its own column names (str), so
   the index stays out of the matrix.  Returns NULL without an exception
   for other objects, NULL with one on error. */
PyObject *
dfb_matrix_pandas_columns(PyObject *obj)
{
    PyObject *mod =
        PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__module__");
    if (mod == NULL) {
        PyErr_Clear();
        return NULL;
    }
    const char *m = PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    int is_pandas = m != NULL && strncmp(m, "pandas", 6) == 0 &&
                    (m[6] == 0 || m[6] == '.');
    Py_DECREF(mod);
    if (!is_pandas) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *cols = PyObject_GetAttrString(obj, "columns");
    if (cols == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *seq = PySequence_List(cols);
    Py_DECREF(cols);
    if (seq == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(seq); i++) {
        PyObject *it = PyList_GET_ITEM(seq, i);
        if (!PyUnicode_Check(it)) {
            PyObject *str = PyObject_Str(it);
            if (str == NULL) {
                Py_DECREF(seq);
                return NULL;
            }
            PyList_SetItem(seq, i, str);
        }
    }
    return seq;
}

/* ------------------------------------------------------------------ */
/* pandas DataFrame source: its blocks, read in place                   */
/* ------------------------------------------------------------------ */

/* Where one column of a pandas frame is (borrowed from `arr`, which the
   frame's keep list holds). */
typedef struct {
    PyObject *arr;       /* borrowed: the values array (NULL: not seen) */
    const char *data;    /* first value */
    int64_t stride;      /* bytes between values */
    const uint8_t *mask; /* masked arrays: True = missing; or NULL */
    int64_t vstride;
    PyArray_Descr *descr; /* borrowed: the values' dtype */
    int masked;
} pd_src;

/* Returns a new reference to attribute `name` of `obj` when it is exactly
   a 1-D ndarray of `n` elements, NULL with no exception otherwise (any
   exception the lookup raised is cleared: the caller falls back). */
static PyObject *
vector_attr(PyObject *obj, const char *name, npy_intp n)
{
    PyObject *a = PyObject_GetAttrString(obj, name);
    if (a == NULL || !PyArray_CheckExact(a) ||
        PyArray_NDIM((PyArrayObject *)a) != 1 ||
        PyArray_DIM((PyArrayObject *)a, 0) != n) {
        PyErr_Clear();
        Py_XDECREF(a);
        return NULL;
    }
    return a;
}

/* Reads block `blk` of a pandas BlockManager into `src` (ncols entries,
   by column position) and appends what holds its memory to `keep`.
   Returns 0, 1 when the block is not one read here (no exception: the
   caller takes the Arrow path), or -1 with an exception set. */
static int
pandas_block(PyObject *blk, PyObject *masked_types, npy_intp nrows,
             pd_src *src, Py_ssize_t ncols, PyObject *keep)
{
    int r = 1;
    PyObject *locs = NULL, *values = NULL, *data = NULL, *mask = NULL;
    PyObject *pl = PyObject_GetAttrString(blk, "mgr_locs");
    if (pl != NULL) {
        locs = PyObject_GetAttrString(pl, "as_array");
        Py_DECREF(pl);
    }
    values = locs != NULL ? PyObject_GetAttrString(blk, "values") : NULL;
    if (values == NULL || !PyArray_CheckExact(locs) ||
        PyArray_NDIM((PyArrayObject *)locs) != 1 ||
        PyArray_TYPE((PyArrayObject *)locs) != NPY_INTP) {
        PyErr_Clear();
        goto done;
    }
    PyArrayObject *la = (PyArrayObject *)locs;
    npy_intp nloc = PyArray_DIM(la, 0);
    PyArrayObject *va = NULL, *ma = NULL;
    if (PyArray_CheckExact(values)) {
        va = (PyArrayObject *)values;
        if (PyArray_NDIM(va) != 2 || PyArray_DIM(va, 0) != nloc ||
            PyArray_DIM(va, 1) != nrows) {
            goto done;
        }
    }
    else {
        int is_masked = 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(masked_types); i++) {
            is_masked |= (PyObject *)Py_TYPE(values) ==
                         PyTuple_GET_ITEM(masked_types, i);
        }
        if (!is_masked || nloc != 1 ||
            (data = vector_attr(values, "_data", nrows)) == NULL ||
            (mask = vector_attr(values, "_mask", nrows)) == NULL ||
            PyArray_TYPE((PyArrayObject *)mask) != NPY_BOOL) {
            goto done;
        }
        va = (PyArrayObject *)data;
        ma = (PyArrayObject *)mask;
    }
    if (PyList_Append(keep, (PyObject *)va) < 0 ||
        (ma != NULL && PyList_Append(keep, (PyObject *)ma) < 0)) {
        r = -1;
        goto done;
    }
    int nd = PyArray_NDIM(va);
    for (npy_intp i = 0; i < nloc; i++) {
        npy_intp pos;
        memcpy(&pos, PyArray_BYTES(la) + i * PyArray_STRIDE(la, 0),
               sizeof(pos));
        if (pos < 0 || pos >= ncols || src[pos].arr != NULL) {
            goto done; /* not a placement we understand */
        }
        pd_src *s = &src[pos];
        s->arr = (PyObject *)va;
        s->descr = PyArray_DESCR(va);
        s->data =
            PyArray_BYTES(va) + (nd == 2 ? i * PyArray_STRIDE(va, 0) : 0);
        s->stride = PyArray_STRIDE(va, nd - 1);
        s->masked = ma != NULL;
        s->mask = ma != NULL ? (const uint8_t *)PyArray_BYTES(ma) : NULL;
        s->vstride = ma != NULL ? PyArray_STRIDE(ma, 0) : 0;
    }
    r = 0;
done:
    Py_XDECREF(mask);
    Py_XDECREF(data);
    Py_XDECREF(values);
    Py_XDECREF(locs);
    return r;
}

/* Describes column `s` (named `name`) as one chunk `c` (zeroed) with the
   strides in st2[0] (data) and st2[1] (mask).  Returns 0, 1 for a dtype
   the Arrow path should judge (no exception), or -1 with TypeError for
   object, datetime, timedelta and complex columns (naming the column). */
static int
pandas_chunk(const pd_src *s, PyObject *name, int64_t nrows, dfb_column *c,
             int64_t *st2)
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
    if (s->masked) {
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
    st2[0] = s->stride == isz ? 0 : s->stride;
    st2[1] = s->vstride == 1 ? 0 : s->vstride;
    return 0;
}

/* Describes the selected columns of pandas DataFrame `obj` (exactly
   pandas.DataFrame with a block manager) into `out` (zeroed), reading the
   arrays of its numpy blocks and of its masked arrays (Int*, UInt*,
   Float*, boolean) in place; sets *strides to a PyMem array of 2 per
   selected column (data and mask byte strides, 0 when contiguous).
   Returns 0; 1 when `obj` is not such a frame or a selected column is of
   another kind (no exception; `out` and *strides are cleared: the caller
   takes pandas' Arrow export); or -1 with an exception set (TypeError
   naming an object, datetime, timedelta or complex column; the
   selection's). */
int
dfb_matrix_pandas_describe(PyObject *obj, PyObject *select, dfb_frame *out,
                           int64_t **strides)
{
    static const char *const masked_names[] = {"IntegerArray", "FloatingArray",
                                               "BooleanArray"};
    *strides = NULL;
    int r = 1;
    PyObject *pd = NULL, *names = NULL, *mgr = NULL, *blocks = NULL;
    PyObject *types = NULL, *keep = NULL, *arrays = NULL;
    pd_src *src = NULL;
    Py_ssize_t *idx = NULL, n = 0;
    PyObject *pdname = PyUnicode_FromString("pandas");
    if (pdname == NULL) {
        return -1;
    }
    pd = PyImport_GetModule(pdname);
    Py_DECREF(pdname);
    if (pd == NULL) {
        return PyErr_Occurred() ? -1 : 1;
    }
    int exact = dfb_pandas_is_frame(obj);
    if (exact <= 0) {
        r = exact < 0 ? -1 : 1;
        goto done;
    }
    arrays = PyObject_GetAttrString(pd, "arrays");
    types = arrays != NULL ? PyTuple_New(3) : NULL;
    for (int i = 0; types != NULL && i < 3; i++) {
        PyObject *t = PyObject_GetAttrString(arrays, masked_names[i]);
        if (t == NULL) {
            Py_CLEAR(types);
            break;
        }
        PyTuple_SET_ITEM(types, i, t);
    }
    if (types == NULL) {
        PyErr_Clear();
        goto done;
    }
    names = dfb_matrix_pandas_columns(obj);
    if (names == NULL) {
        r = PyErr_Occurred() ? -1 : 1;
        goto done;
    }
    Py_ssize_t ncols = PyList_GET_SIZE(names);
    Py_ssize_t len = PyObject_Size(obj);
    if (len < 0) {
        r = -1;
        goto done;
    }
    mgr = PyObject_GetAttrString(obj, "_mgr");
    blocks = mgr != NULL ? PyObject_GetAttrString(mgr, "blocks") : NULL;
    if (blocks == NULL || !PyTuple_Check(blocks)) {
        PyErr_Clear();
        goto done;
    }
    src = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, sizeof(pd_src));
    keep = PyList_New(0);
    if (src == NULL || keep == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        r = -1;
        goto done;
    }
    for (Py_ssize_t b = 0; b < PyTuple_GET_SIZE(blocks); b++) {
        int rb = pandas_block(PyTuple_GET_ITEM(blocks, b), types, len, src,
                              ncols, keep);
        if (rb != 0) {
            r = rb;
            goto done;
        }
    }
    if (dfb_frame_select(names, select, &idx, &n) < 0) {
        r = -1;
        goto done;
    }
    /* refusals first (they name the column), then anything unread */
    for (Py_ssize_t k = 0; k < n; k++) {
        const pd_src *s = &src[idx[k]];
        char kind = s->arr != NULL ? s->descr->kind : 0;
        if (kind == 'O' || kind == 'M' || kind == 'm' || kind == 'c') {
            dfb_column scratch;
            int64_t st2[2];
            memset(&scratch, 0, sizeof(scratch));
            r = pandas_chunk(s, PyList_GET_ITEM(names, idx[k]), len, &scratch,
                             st2);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (src[idx[k]].arr == NULL) {
            goto done;
        }
    }
    if (dfb_frame_init(out, n) < 0) {
        r = -1;
        goto done;
    }
    Py_DECREF(out->keep);
    out->keep = keep; /* takes the reference */
    keep = NULL;
    out->nrows = len;
    *strides = PyMem_Calloc(n > 0 ? 2 * (size_t)n : 1, sizeof(int64_t));
    if (*strides == NULL) {
        PyErr_NoMemory();
        r = -1;
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        dfb_frame_column *fc = &out->cols[k];
        fc->name = Py_NewRef(PyList_GET_ITEM(names, idx[k]));
        fc->chunks = PyMem_Calloc(2, sizeof(dfb_column));
        if (fc->chunks == NULL) {
            PyErr_NoMemory();
            r = -1;
            goto done;
        }
        fc->nchunks = 1;
        int rc = pandas_chunk(&src[idx[k]], fc->name, len, fc->chunks,
                              *strides + 2 * k);
        if (rc != 0) {
            r = rc;
            goto done;
        }
    }
    r = 0;
done:
    if (r != 0) {
        dfb_frame_clear(out);
        PyMem_Free(*strides);
        *strides = NULL;
    }
    PyMem_Free(idx);
    PyMem_Free(src);
    Py_XDECREF(keep);
    Py_XDECREF(blocks);
    Py_XDECREF(mgr);
    Py_XDECREF(names);
    Py_XDECREF(types);
    Py_XDECREF(arrays);
    Py_DECREF(pd);
    return r;
}
