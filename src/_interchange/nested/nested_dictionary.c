/* dfbuffer: dictionary-encoded columns whose values are nested (lists,
 * structs, maps, fixed-size lists, unions) for the nested converter
 * (dfbuffer/nested.h): the dictionary converted once by the walk, each row
 * the value its code names (codes read only through core's checked
 * reader, reader.h), or with categorical="codes" the codes and the
 * converted dictionary as a CategoricalCodes.
 */
#include "common.h"
#include "arrow.h"
#include "model.h"
#include "nested.h"
#include "reader.h"
#include "mem.h"
#include "types.h"
#include "kernels.h"

#include <string.h>

/* Checks the index node `nd` (its integer codes, validity and
   dictionary) and sets up the checked reader of its codes, each in
   [0, ncats).  Returns 0, or -1 with ValueError / BufferError. */
static int
index_reader(const dfb_nested_ctx *cx, const arrow_node *nd, int64_t ncats,
             dfb_codes *codes)
{
    const struct ArrowArray *a = nd->array;
    dfb_format f;
    int64_t end, bytes;
    dfb_error err;
    if (nd->device.device_type != kDLCPU) {
        PyErr_Format(PyExc_BufferError,
                     "column '%s': a dictionary of nested format '%s' is on "
                     "device type %d, and cannot be read on the host",
                     cx->name, nd->schema->dictionary->format,
                     (int)nd->device.device_type);
        return -1;
    }
    if (dfb_type_parse_arrow(nd->schema->format, &f) < 0 ||
        (f.type != DFB_T_INT && f.type != DFB_T_UINT) || a->release == NULL ||
        a->dictionary == NULL || a->n_buffers != 2 || a->buffers == NULL ||
        nd->offset < 0 || nd->length < 0 || a->null_count > a->length ||
        dfb_checked_add(nd->offset, nd->length, &end) < 0 ||
        dfb_checked_mul(end, f.bits / 8, &bytes) < 0 ||
        (nd->length > 0 && a->buffers[1] == NULL) ||
        dfb_arrow_wraps(a->buffers[1], bytes) ||
        dfb_arrow_wraps(a->buffers[0], end / 8 + 1) ||
        (a->buffers[0] == NULL && a->null_count > 0)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': malformed dictionary codes of format '%s' "
                     "(length %lld, offset %lld)",
                     cx->name, nd->schema->format, (long long)nd->length,
                     (long long)nd->offset);
        return -1;
    }
    if (nd->length > 0 &&
        dfb_codes_init(codes, a->buffers[1], bytes, f.bits / 8,
                       f.type == DFB_T_INT, 0, nd->offset, nd->length, ncats,
                       &err) != DFB_OK) {
        PyErr_Format(PyExc_ValueError, "column '%s': %s", cx->name,
                     err.message);
        return -1;
    }
    return 0;
}

/* The node of the dictionary of index node `nd` (its whole length).
   Cannot fail. */
static arrow_node
dictionary_node(const arrow_node *nd)
{
    const struct ArrowArray *d = nd->array->dictionary;
    arrow_node dn = {nd->schema->dictionary,
                     d,
                     d->offset,
                     d->length,
                     nd->holder,
                     nd->device};
    return dn;
}

/* Fills *out with the rows of index node `nd`: the value of `dict` (the
   converted dictionary) each code names; a null code, or a code naming a
   null value, is a null row.  Returns 0, or -1 with an exception. */
static int
decode_rows(const dfb_nested_ctx *cx, const arrow_node *nd,
            const dfb_codes *codes, const dfb_nested_out *dict,
            dfb_nested_out *out)
{
    const int64_t n = nd->length;
    if (dfb_nested_validity(nd, &out->rowmask) < 0 ||
        (out->values = dfb_nested_objects(n)) == NULL) {
        return -1;
    }
    if (out->rowmask == NULL) {
        npy_intp dims[1] = {(npy_intp)n};
        out->rowmask = (PyArrayObject *)PyArray_ZEROS(1, dims, NPY_BOOL, 0);
        if (out->rowmask == NULL) {
            return -1;
        }
    }
    PyObject **slots = PyArray_DATA(out->values);
    uint8_t *null = PyArray_DATA(out->rowmask);
    const uint8_t *dnull =
        dict->rowmask ? (const uint8_t *)PyArray_DATA(dict->rowmask) : NULL;
    int64_t nnull = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t code;
        if (null[i]) {
            nnull++;
            continue;
        }
        if (dfb_codes_get(codes, i, &code) != DFB_OK) {
            return dfb_nested_bad(cx->name, "dictionary codes", i);
        }
        if (dnull != NULL && dnull[code]) {
            null[i] = 1;
            nnull++;
            continue;
        }
        PyObject *v = dfb_nested_item(dict, code);
        if (v == NULL) {
            return -1;
        }
        Py_SETREF(slots[i], v);
    }
    if (nnull == 0) {
        Py_CLEAR(out->rowmask);
    }
    out->mask = (PyArrayObject *)Py_XNewRef(out->rowmask);
    return 0;
}

int
dfb_nested_dictionary(const dfb_nested_ctx *cx, const arrow_node *nd,
                      dfb_nested_out *out)
{
    dfb_nested_out dict = {0};
    dfb_codes codes;
    int rc = -1;
    if (dfb_need_copy(cx->st, cx->allow_copy,
                      "dictionaries of nested values (Python objects)") < 0 ||
        nd->array->dictionary == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': a dictionary-encoded array without "
                         "its dictionary",
                         cx->name);
        }
        return -1;
    }
    arrow_node dn = dictionary_node(nd);
    if (dn.array->release == NULL || dn.offset < 0 || dn.length < 0) {
        PyErr_Format(PyExc_ValueError, "column '%s': a malformed dictionary",
                     cx->name);
        return -1;
    }
    /* each row is an item of the dictionary */
    const dfb_nested_ctx dcx = dfb_nested_below(cx, DFB_NESTED_IN_ITEM);
    if (cx->node(&dcx, &dn, &dict) == 0 &&
        index_reader(cx, nd, PyArray_DIM(dict.values, 0), &codes) == 0) {
        rc = decode_rows(cx, nd, &codes, &dict, out);
    }
    dfb_nested_out_clear(&dict);
    return rc;
}

/* Returns 1 if ArrowArrays `a` and `b` are the same memory (the same
   lengths, offsets and buffers, their children and dictionaries too),
   else 0.  Cannot fail. */
static int
same_tree(const struct ArrowArray *a, const struct ArrowArray *b, int depth)
{
    if (a == b) {
        return 1;
    }
    if (a == NULL || b == NULL || depth > DFB_NESTED_MAX_DEPTH ||
        a->length != b->length || a->offset != b->offset ||
        a->n_buffers != b->n_buffers || a->n_children != b->n_children ||
        (a->n_buffers > 0 && (a->buffers == NULL || b->buffers == NULL)) ||
        (a->n_children > 0 && (a->children == NULL || b->children == NULL)) ||
        !same_tree(a->dictionary, b->dictionary, depth + 1)) {
        return 0;
    }
    for (int64_t k = 0; k < a->n_buffers; k++) {
        if (a->buffers[k] != b->buffers[k]) {
            return 0;
        }
    }
    for (int64_t k = 0; k < a->n_children; k++) {
        if (!same_tree(a->children[k], b->children[k], depth + 1)) {
            return 0;
        }
    }
    return 1;
}

/* The converted dictionary of index node `nd` as the categories of a
   CategoricalCodes (masked where a value is null).  Returns a new
   reference, or NULL with an exception. */
static PyObject *
categories_of(const dfb_nested_ctx *cx, const arrow_node *nd)
{
    dfb_nested_out dict = {0};
    PyObject *res = NULL;
    if (nd->array->dictionary == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a dictionary-encoded array without its "
                     "dictionary",
                     cx->name);
        return NULL;
    }
    arrow_node dn = dictionary_node(nd);
    if (cx->node(cx, &dn, &dict) == 0) {
        /* the element mask: values' shape (fixed-size lists: N-D) */
        PyArrayObject *m = (PyArrayObject *)Py_XNewRef(dict.mask);
        int64_t nnull = m != NULL ? PyArray_CountNonzero(m) : 0;
        if (nnull < 0) {
            Py_DECREF(m);
            dfb_nested_out_clear(&dict);
            return NULL;
        }
        if (nnull == 0) {
            Py_CLEAR(m);
        }
        res = dfb_nulls_finish(cx->st, Py_NewRef(dict.values), m, nnull, 1,
                               DFB_NULLS_MASK, cx->allow_copy);
    }
    dfb_nested_out_clear(&dict);
    return res;
}

/* Describes chunk `b` of index column `c` without its dictionary into
   `col` (the stand-in structs `s2` / `a2` are the caller's, live while
   col is used) and checks every code of it in [0, ncats) through the
   checked reader.  Returns 0, or -1 with an exception. */
static int
describe_codes(const dfb_nested_ctx *cx, const arrow_import *imp, int is_table,
               Py_ssize_t b, int64_t c, int64_t ncats, struct ArrowSchema *s2,
               struct ArrowArray *a2, dfb_column *col)
{
    arrow_node nd;
    dfb_column unused;
    dfb_codes codes;
    if (dfb_arrow_import_node(imp, is_table, b, c, &nd) < 0 ||
        index_reader(cx, &nd, ncats, &codes) < 0) {
        return -1;
    }
    PyArrayObject *rowmask;
    if (dfb_nested_validity(&nd, &rowmask) < 0) {
        return -1;
    }
    const uint8_t *null = rowmask ? PyArray_DATA(rowmask) : NULL;
    for (int64_t i = 0; i < nd.length; i++) {
        int64_t code;
        if ((null == NULL || !null[i]) &&
            dfb_codes_get(&codes, i, &code) != DFB_OK) {
            Py_XDECREF(rowmask);
            return dfb_nested_bad(cx->name, "dictionary codes", i);
        }
    }
    Py_XDECREF(rowmask);
    *s2 = *nd.schema;
    s2->dictionary = NULL;
    *a2 = *nd.array;
    a2->dictionary = NULL;
    nd.schema = s2;
    nd.array = a2;
    return dfb_arrow_describe_node(cx->st, &nd, col, &unused, NULL, cx->refs,
                                   DFB_VIEWS_KEEP, cx->name);
}

PyObject *
dfb_nested_dictionary_codes(const dfb_nested_ctx *cx, const arrow_import *imp,
                            int is_table, int64_t c, const dfb_opts *opts)
{
    const Py_ssize_t n = imp->n;
    PyObject *codes = NULL, *cats = NULL, *res = NULL;
    arrow_node first;
    if (n == 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%s': categorical='codes' of a dictionary of "
                     "nested values needs at least one chunk; use "
                     "categorical='decode'",
                     cx->name);
        return NULL;
    }
    dfb_column *cols = PyMem_Calloc((size_t)n, sizeof(dfb_column));
    struct ArrowSchema *s2 = PyMem_Calloc((size_t)n, sizeof(*s2));
    struct ArrowArray *a2 = PyMem_Calloc((size_t)n, sizeof(*a2));
    if (cols == NULL || s2 == NULL || a2 == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (dfb_arrow_import_node(imp, is_table, 0, c, &first) < 0 ||
        (cats = categories_of(cx, &first)) == NULL) {
        goto done;
    }
    const Py_ssize_t ncats = PyObject_Length(cats);
    for (Py_ssize_t b = 0; ncats >= 0 && b < n; b++) {
        arrow_node nd;
        if (dfb_arrow_import_node(imp, is_table, b, c, &nd) < 0) {
            goto done;
        }
        if (!same_tree(nd.array->dictionary, first.array->dictionary, 0)) {
            PyErr_Format(PyExc_NotImplementedError,
                         "column '%s': the chunks have different "
                         "dictionaries of nested values; use "
                         "categorical='decode'",
                         cx->name);
            goto done;
        }
        if (describe_codes(cx, imp, is_table, b, c, ncats, &s2[b], &a2[b],
                           &cols[b]) < 0) {
            goto done;
        }
    }
    if (ncats >= 0) {
        codes = dfb_columns_to_ndarray(cx->st, cols, n, &dfb_opts_default,
                                       cx->allow_copy);
    }
    if (codes != NULL) {
        const int ordered = (first.schema->flags & 1) != 0;
        res = dfb_categorical_make(cx->st, codes, cats, ordered, opts->nulls,
                                   cx->allow_copy);
        codes = cats = NULL;
    }
done:
    Py_XDECREF(codes);
    Py_XDECREF(cats);
    PyMem_Free(cols);
    PyMem_Free(s2);
    PyMem_Free(a2);
    return res;
}
