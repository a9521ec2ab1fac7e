/* dfbuffer: the nodes of a nested Arrow tree for the nested converter
 * (dfbuffer/nested.h): their children, validity, rows and items, shared by
 * the list and struct kernels and the walk (convert_nested.c).
 */
#include "common.h"
#include "sizes.h"
#include "arrow.h"
#include "model.h"
#include "nested.h"
#include "kernels.h"
#include "bitmap.h"
#include "mem.h"
#include "types.h"
#include "bits.h"

#include <string.h>

/* Returns 1 if `s` is of a nested type other than run-end encoded, or a
   dictionary of one.  Cannot fail. */
static int
nested_values(const struct ArrowSchema *s)
{
    return s != NULL &&
           (dfb_type_is_nested(dfb_arrow_format_type(s->format)) ||
            (s->dictionary != NULL &&
             dfb_arrow_format_type(s->format) != DFB_T_RUN_END &&
             dfb_type_is_nested(
                 dfb_arrow_format_type(s->dictionary->format))));
}

int
dfb_nested_run_end_is(const struct ArrowSchema *s)
{
    return s != NULL && dfb_arrow_format_type(s->format) == DFB_T_RUN_END &&
           s->n_children == 2 && s->children != NULL &&
           nested_values(s->children[1]);
}

int
dfb_nested_is(const struct ArrowSchema *s)
{
    /* run-end encoded flat values have their own decoder
       (convert_run_end.c) */
    return s != NULL &&
           (dfb_type_is_nested(dfb_arrow_format_type(s->format)) ||
            dfb_nested_run_end_is(s));
}

int
dfb_nested_dict_is(const struct ArrowSchema *s)
{
    return s != NULL && s->dictionary != NULL && dfb_nested_is(s->dictionary);
}

void
dfb_nested_out_clear(dfb_nested_out *o)
{
    Py_CLEAR(o->values);
    Py_CLEAR(o->mask);
    Py_CLEAR(o->rowmask);
}

dfb_nested_ctx
dfb_nested_below(const dfb_nested_ctx *cx, dfb_nested_level level)
{
    dfb_nested_ctx sub = *cx;
    sub.level = (int)level;
    return sub;
}

int
dfb_nested_settle(const dfb_nested_ctx *cx, dfb_nested_out *out)
{
    PyArrayObject *v = out->values;
    const int nd = PyArray_NDIM(v);
    if (out->mask == NULL || cx->level == DFB_NESTED_TOP ||
        (cx->level == DFB_NESTED_IN_ITEM && nd == 1) ||
        (nd == 1 && PyArray_DESCR(v)->type_num == NPY_OBJECT)) {
        /* the nulls= mode decides at the top; a 1-D item is None through
           its rowmask; 1-D objects hold None where null already (every
           converter and kernel leaves None there) */
        return 0;
    }
    npy_intp dims[NPY_MAXDIMS];
    dfb_memcpy(dims, PyArray_DIMS(v), (size_t)nd * sizeof(npy_intp));
    PyObject *fv = PyArray_Ravel(v, NPY_CORDER);
    PyObject *fm = fv ? PyArray_Ravel(out->mask, NPY_CORDER) : NULL;
    if (fm == NULL) {
        Py_XDECREF(fv);
        return -1;
    }
    /* steals fv and fm; a new array (ints and bools as float64) */
    PyObject *f = dfb_nulls_finish(cx->st, fv, (PyArrayObject *)fm, 1, 0,
                                   DFB_NULLS_FILL, 1);
    if (f == NULL) {
        return -1;
    }
    PyArray_Dims d = {dims, nd};
    PyObject *r = PyArray_Newshape((PyArrayObject *)f, &d, NPY_CORDER);
    Py_DECREF(f);
    if (r == NULL) {
        return -1;
    }
    Py_SETREF(out->values, (PyArrayObject *)r);
    return 0;
}

int
dfb_nested_bad(const char *name, const char *what, int64_t i)
{
    PyErr_Format(PyExc_ValueError,
                 "column '%s': the %s of element %lld are out of range "
                 "(corrupt, or changed while the column was converted)",
                 name, what, (long long)i);
    return -1;
}

PyArrayObject *
dfb_nested_objects(int64_t n)
{
    if (dfb_check_alloc(n, (int64_t)sizeof(PyObject *)) < 0) {
        return NULL;
    }
    npy_intp dims[1] = {(npy_intp)n};
    /* PyArray_EMPTY of objects holds None in every slot */
    return (PyArrayObject *)PyArray_EMPTY(1, dims, NPY_OBJECT, 0);
}

int
dfb_nested_validity(const arrow_node *nd, PyArrayObject **rowmask)
{
    const struct ArrowArray *a = nd->array;
    const uint8_t *bits = a->n_buffers > 0 ? a->buffers[0] : NULL;
    *rowmask = NULL;
    if (bits == NULL || a->null_count == 0 || nd->length == 0) {
        return 0;
    }
    if (dfb_bitmap_count_zeros(bits, nd->offset, nd->length) == 0) {
        return 0;
    }
    npy_intp dims[1] = {(npy_intp)nd->length};
    PyArrayObject *m = (PyArrayObject *)PyArray_EMPTY(1, dims, NPY_BOOL, 0);
    if (m == NULL) {
        return -1;
    }
    dfb_unpack_bits(bits, nd->offset, nd->length, PyArray_DATA(m), 1);
    *rowmask = m;
    return 0;
}

int
dfb_nested_child(const dfb_nested_ctx *cx, const arrow_node *nd, int64_t k,
                 int64_t first, int64_t count, arrow_node *child)
{
    const struct ArrowSchema *s = nd->schema;
    const struct ArrowArray *a = nd->array;
    int64_t end;
    if (k < 0 || k >= a->n_children || k >= s->n_children ||
        a->children == NULL || s->children == NULL || a->children[k] == NULL ||
        s->children[k] == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': format '%s' lacks child %lld", cx->name,
                     s->format, (long long)k);
        return -1;
    }
    const struct ArrowArray *ca = a->children[k];
    child->schema = s->children[k];
    child->array = ca;
    child->length = count;
    child->holder = nd->holder;
    child->device = nd->device;
    if (ca->offset < 0 || ca->length < 0 ||
        dfb_checked_add(first, count, &end) < 0 || end > ca->length ||
        dfb_checked_add(ca->offset, first, &child->offset) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': child %lld (length %lld, offset %lld) of "
                     "format '%s' does not hold elements [%lld, %lld)",
                     cx->name, (long long)k, (long long)ca->length,
                     (long long)ca->offset, s->format, (long long)first,
                     (long long)(first + count));
        return -1;
    }
    return 0;
}

/* A new read-only view of rows [start, end) of `v`, based on it.
   Returns NULL with an exception. */
static PyObject *
rows_view(PyArrayObject *v, int64_t start, int64_t end)
{
    npy_intp dims[NPY_MAXDIMS];
    const int nd = PyArray_NDIM(v);
    dfb_memcpy(dims, PyArray_DIMS(v), (size_t)nd * sizeof(npy_intp));
    dims[0] = (npy_intp)(end - start);
    PyArray_Descr *d = PyArray_DESCR(v);
    Py_INCREF(d);
    PyObject *r = PyArray_NewFromDescr(
        &PyArray_Type, d, nd, dims, PyArray_STRIDES(v),
        PyArray_BYTES(v) + (npy_intp)start * PyArray_STRIDE(v, 0), 0, NULL);
    if (r == NULL ||
        PyArray_SetBaseObject((PyArrayObject *)r, Py_NewRef(v)) < 0) {
        Py_XDECREF(r);
        return NULL;
    }
    return r;
}

PyObject *
dfb_nested_rows(PyArrayObject *values, int64_t start, int64_t end)
{
    return rows_view(values, start, end);
}

PyObject *
dfb_nested_item(const dfb_nested_out *o, int64_t i)
{
    if (o->rowmask != NULL && ((const uint8_t *)PyArray_DATA(o->rowmask))[i]) {
        Py_RETURN_NONE;
    }
    PyArrayObject *v = o->values;
    if (PyArray_NDIM(v) == 1) {
        return PyArray_GETITEM(v, PyArray_GETPTR1(v, (npy_intp)i));
    }
    PyObject *r = rows_view(v, i, i + 1);
    if (r == NULL) {
        return NULL;
    }
    PyObject *row = PySequence_GetItem(r, 0);
    Py_DECREF(r);
    return row;
}
