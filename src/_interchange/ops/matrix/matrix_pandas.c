/* dfbuffer: the pandas side of to_matrix: a pandas DataFrame's NumPy-backed
 * and masked columns, as the one pandas frame reader (pandas_frame.c) read
 * them, described in place as dfb_column chunks (see matrix_plan.h).
 */
#include "common.h"
#include "pandas_frame.h"
#include "column.h"
#include "frame.h"
#include "matrix_pandas.h"

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

/* Describes column `s` (named `name`) as one chunk `c` (zeroed) with the
   real byte strides (any sign, 0 too) in st2[0] (data) and st2[1] (mask).
   Returns 0, 1 for a dtype the Arrow path should judge (no exception), or -1
   with TypeError for object, datetime, timedelta and complex columns (naming
   the column). */
static int
pandas_chunk(const dfb_pd_column *s, PyObject *name, int64_t nrows,
             dfb_column *c, int64_t *st2)
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
    st2[0] = s->stride;
    st2[1] = s->kind == DFB_PD_MASKED ? s->mstride : 1;
    return 0;
}

/* The selected columns (`idx`, `n`) of read frame `pf` described into
   `out` (zeroed), the frame's keep list shared.  Returns 0, 1 (a column
   the Arrow path judges), or -1 with an exception set. */
static int
describe_columns(const dfb_pd_frame *pf, const Py_ssize_t *idx, Py_ssize_t n,
                 dfb_frame *out, int64_t *strides)
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
        int rc = pandas_chunk(&pf->cols[idx[k]], fc->name, pf->nrows,
                              fc->chunks, strides + 2 * k);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* Describes the selected columns of pandas DataFrame `obj` (exactly
   pandas.DataFrame, read by dfb_pd_frame_read) into `out` (zeroed): its
   NumPy blocks and its masked arrays (Int*, UInt*, Float*, boolean) read
   in place; sets *strides to a PyMem array of 2 per selected column (data
   and mask byte strides as they are: any sign, 0 for a broadcast view).
   Returns 0; 1 when `obj` is not such a frame, a block is of another kind or a
   selected column is (no exception; `out` and *strides are cleared: the caller
   takes pandas' Arrow export, of *rest when not NULL: a new reference to a
   frame over the block manager read here); or -1 with an exception set
   (TypeError naming an object, datetime, timedelta or complex column; the
   selection's). */
int
dfb_matrix_pandas_describe(PyObject *obj, PyObject *select, dfb_frame *out,
                           int64_t **strides, PyObject **rest)
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
            int64_t st2[2];
            memset(&scratch, 0, sizeof(scratch));
            r = pandas_chunk(s, PyList_GET_ITEM(pf.names, idx[k]), pf.nrows,
                             &scratch, st2);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (pf.cols[idx[k]].kind == DFB_PD_OTHER) {
            goto done;
        }
    }
    *strides = PyMem_Calloc(n > 0 ? 2 * (size_t)n : 1, sizeof(int64_t));
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
