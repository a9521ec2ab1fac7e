/* dfbuffer: nested Arrow columns to NumPy (see dfbuffer/nested.h): the
 * walk over the tree of ArrowArray nodes (each node checked, then handed to
 * its kernel in convert_list.c or convert_struct.c), the leaves (converted
 * by the flat converters), the joining of chunks and structs="flatten".
 */
#include "common.h"
#include "arrow.h"
#include "model.h"
#include "nested.h"
#include "bitmap.h"
#include "mem.h"
#include "types.h"
#include "kernels.h"

#include <string.h>

/* Splits a flat converter's result `r` (stolen) into values and a
   C-contiguous element mask (NULL when no value is null).  Returns 0, or
   -1 with an exception. */
static int
split_masked(PyObject *r, dfb_nested_out *out)
{
    if (PyArray_CheckExact(r)) {
        out->values = (PyArrayObject *)r;
        return 0;
    }
    PyObject *data = PyObject_GetAttrString(r, "data");
    PyObject *mask = data ? PyObject_GetAttrString(r, "mask") : NULL;
    Py_DECREF(r);
    if (mask == NULL || !PyArray_Check(data)) {
        Py_XDECREF(data);
        Py_XDECREF(mask);
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError,
                            "a nested column's values are not an array");
        }
        return -1;
    }
    out->values = (PyArrayObject *)data;
    if (PyArray_Check(mask) && PyArray_NDIM((PyArrayObject *)mask) > 0) {
        out->mask = (PyArrayObject *)PyArray_FROMANY(mask, NPY_BOOL, 0, 0,
                                                     NPY_ARRAY_C_CONTIGUOUS);
        Py_DECREF(mask);
        return out->mask != NULL ? 0 : -1;
    }
    Py_DECREF(mask);
    return 0;
}

/* Converts a node of a flat type with the flat converters (one chunk,
   nulls masked).  Returns 0, or -1 with an exception. */
static int
leaf(const dfb_nested_ctx *cx, const arrow_node *nd, dfb_nested_out *out)
{
    dfb_column col, dict;
    if (dfb_arrow_describe_node(cx->st, nd, &col, &dict, NULL, cx->refs,
                                DFB_VIEWS_KEEP, cx->name) < 0) {
        return -1;
    }
    PyObject *r = dfb_columns_to_ndarray(cx->st, &col, 1, &dfb_opts_default,
                                         cx->allow_copy);
    if (r == NULL || split_masked(r, out) < 0) {
        return -1;
    }
    out->rowmask = (PyArrayObject *)Py_XNewRef(out->mask);
    return 0;
}

/* Checks what every nested node must satisfy before its buffers or
   children are used.  Returns 0, or -1 with ValueError /
   NotImplementedError. */
static int
check_node(const dfb_nested_ctx *cx, const arrow_node *nd, dfb_format *f)
{
    const struct ArrowSchema *s = nd->schema;
    const struct ArrowArray *a = nd->array;
    int64_t end;
    if (dfb_type_parse_arrow(s->format, f) < 0 ||
        dfb_type_row_of(f->type)->layout == DFB_LAYOUT_RUN_END) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%s': Arrow format '%s' is not supported",
                     cx->name, s->format);
        return -1;
    }
    if (nd->device.device_type != kDLCPU) {
        PyErr_Format(PyExc_BufferError,
                     "column '%s': nested Arrow format '%s' is on device "
                     "type %d, and cannot be read on the host",
                     cx->name, s->format, (int)nd->device.device_type);
        return -1;
    }
    if (s->dictionary != NULL || a->dictionary != NULL) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%s': a dictionary of nested format '%s' is "
                     "not supported",
                     cx->name, s->format);
        return -1;
    }
    const dfb_type_row *row = dfb_type_row_of(f->type);
    const int64_t nch = row->n_children >= 0 ? row->n_children : s->n_children;
    if (a->release == NULL || a->length < 0 || a->offset < 0 ||
        nd->offset < 0 || nd->length < 0 ||
        dfb_checked_add(nd->offset, nd->length, &end) < 0 ||
        a->null_count < -1 || a->null_count > a->length ||
        a->n_buffers != row->n_buffers ||
        (a->n_buffers > 0 && a->buffers == NULL) || nch < 0 ||
        s->n_children != nch || a->n_children != nch ||
        (nch > 0 && (s->children == NULL || a->children == NULL))) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a malformed Arrow array of format '%s' "
                     "(length %lld, offset %lld, %lld buffers, %lld "
                     "children; its schema %lld children)",
                     cx->name, s->format, (long long)nd->length,
                     (long long)nd->offset, (long long)a->n_buffers,
                     (long long)a->n_children, (long long)s->n_children);
        return -1;
    }
    for (int k = 0; k < row->n_buffers; k++) {
        /* the bytes each buffer must hold for offset + length */
        const dfb_buffer_role role = row->buffers[k];
        const int64_t w = role == DFB_BUF_VALIDITY        ? 0
                          : role == DFB_BUF_TYPE_IDS      ? 1
                          : role == DFB_BUF_UNION_OFFSETS ? 4
                                                          : row->offset_bytes;
        const int64_t items = role == DFB_BUF_OFFSETS &&
                                      f->type != DFB_T_LIST_VIEW &&
                                      f->type != DFB_T_LARGE_LIST_VIEW
                                  ? end + 1
                                  : end;
        int64_t bytes = end / 8 + 1;
        if ((w > 0 && dfb_checked_mul(items, w, &bytes) < 0) ||
            dfb_arrow_wraps(a->buffers[k], bytes)) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': buffer %d of format '%s' for offset + "
                         "length %lld reaches beyond the address space",
                         cx->name, k, s->format, (long long)end);
            return -1;
        }
    }
    if (row->buffers[0] == DFB_BUF_VALIDITY && a->buffers[0] == NULL &&
        a->null_count > 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': null_count %lld but no validity bitmap",
                     cx->name, (long long)a->null_count);
        return -1;
    }
    return 0;
}

int
dfb_nested_node(const dfb_nested_ctx *cx, const arrow_node *nd,
                dfb_nested_out *out)
{
    if (nd->schema == NULL || nd->array == NULL ||
        nd->schema->format == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a nested child without a format", cx->name);
        return -1;
    }
    if (dfb_nested_dict_is(nd->schema)) {
        if (Py_EnterRecursiveCall(" converting a nested Arrow column")) {
            return -1;
        }
        int rc = dfb_nested_dictionary(cx, nd, out);
        Py_LeaveRecursiveCall();
        return rc < 0 ? -1 : dfb_nested_settle(cx, out);
    }
    if (!dfb_nested_is(nd->schema)) {
        return leaf(cx, nd, out) < 0 ? -1 : dfb_nested_settle(cx, out);
    }
    if (dfb_nested_run_end_is(nd->schema)) {
        if (nd->device.device_type != kDLCPU) {
            PyErr_Format(PyExc_BufferError,
                         "column '%s': nested Arrow format '+r' is on device "
                         "type %d, and cannot be read on the host",
                         cx->name, (int)nd->device.device_type);
            return -1;
        }
        if (Py_EnterRecursiveCall(" converting a nested Arrow column")) {
            return -1;
        }
        int rc = dfb_nested_run_end(cx, nd, out);
        Py_LeaveRecursiveCall();
        return rc < 0 ? -1 : dfb_nested_settle(cx, out);
    }
    dfb_format f;
    if (check_node(cx, nd, &f) < 0 ||
        Py_EnterRecursiveCall(" converting a nested Arrow column")) {
        return -1;
    }
    int rc;
    switch (dfb_type_row_of(f.type)->layout) {
        case DFB_LAYOUT_FIXED_LIST:
            rc = dfb_nested_fixed_list(cx, nd, &f, out);
            break;
        case DFB_LAYOUT_STRUCT:
            rc = dfb_nested_struct(cx, nd, out);
            break;
        case DFB_LAYOUT_DENSE_UNION:
        case DFB_LAYOUT_SPARSE_UNION:
            rc = dfb_nested_union(cx, nd, &f, out);
            break;
        default:
            rc = dfb_nested_list(cx, nd, &f, out);
    }
    Py_LeaveRecursiveCall();
    return rc < 0 ? -1 : dfb_nested_settle(cx, out);
}

/* Joins the converted chunks outs[0 .. n) into *res (values and element
   mask).  Returns 0, or -1 with an exception. */
static int
join_chunks(dfb_nested_out *outs, Py_ssize_t n, dfb_nested_out *res)
{
    int any_mask = 0;
    for (Py_ssize_t b = 0; b < n; b++) {
        any_mask |= outs[b].mask != NULL;
    }
    PyObject *vals = PyList_New(n);
    PyObject *masks = any_mask ? PyList_New(n) : NULL;
    int rc = -1;
    if (vals == NULL || (any_mask && masks == NULL)) {
        goto done;
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        PyArrayObject *v = outs[b].values;
        PyList_SET_ITEM(vals, b, Py_NewRef(v));
        if (any_mask) {
            PyObject *m = outs[b].mask
                              ? Py_NewRef(outs[b].mask)
                              : PyArray_ZEROS(PyArray_NDIM(v), PyArray_DIMS(v),
                                              NPY_BOOL, 0);
            if (m == NULL) {
                goto done;
            }
            PyList_SET_ITEM(masks, b, m);
        }
    }
    res->values = (PyArrayObject *)PyArray_Concatenate(vals, 0);
    if (res->values == NULL) {
        goto done;
    }
    if (any_mask) {
        res->mask = (PyArrayObject *)PyArray_Concatenate(masks, 0);
        if (res->mask == NULL) {
            goto done;
        }
    }
    rc = 0;
done:
    Py_XDECREF(vals);
    Py_XDECREF(masks);
    return rc;
}

/* Applies the nulls mode to the joined column *r (its references are
   taken).  N-D values go through the 1-D finish raveled, then take their
   shape back.  Returns a new reference, or NULL with an exception. */
static PyObject *
finish_column(dfb_state *st, dfb_nested_out *r, dfb_nulls_mode nulls,
              int allow_copy, int parent_nulls)
{
    PyArrayObject *v = r->values, *m = r->mask;
    r->values = r->mask = NULL;
    int64_t nnull = 0;
    if (m != NULL) {
        const char *p = PyArray_DATA(m);
        for (npy_intp i = 0, k = PyArray_SIZE(m); i < k; i++) {
            nnull += p[i] != 0;
        }
        if (nnull == 0) {
            Py_CLEAR(m);
        }
    }
    /* 1-D objects hold None where they are null (dfb_nested_settle), but
       not where a flattened struct above them is; a fixed-size list's
       null row holds its child's objects */
    const int filled = PyArray_DESCR(v)->type_num == NPY_OBJECT &&
                       PyArray_NDIM(v) == 1 && !parent_nulls;
    if (PyArray_NDIM(v) == 1 || m == NULL) {
        if (m == NULL) {
            return (PyObject *)v;
        }
        return dfb_nulls_finish(st, (PyObject *)v, m, nnull, filled, nulls,
                                allow_copy);
    }
    PyObject *shape = PyObject_GetAttrString((PyObject *)v, "shape");
    PyObject *fv = shape ? PyArray_Ravel(v, NPY_CORDER) : NULL;
    PyObject *fm = fv ? PyArray_Ravel(m, NPY_CORDER) : NULL;
    Py_DECREF(v);
    Py_DECREF(m);
    if (fm == NULL) {
        Py_XDECREF(fv);
        Py_XDECREF(shape);
        return NULL;
    }
    PyObject *res = dfb_nulls_finish(st, fv, (PyArrayObject *)fm, nnull,
                                     filled, nulls, allow_copy);
    PyObject *out =
        res ? PyObject_CallMethod(res, "reshape", "O", shape) : NULL;
    Py_XDECREF(res);
    Py_DECREF(shape);
    return out;
}

/* ORs the rows of `pm` (n bools) into out's rowmask and element mask
   (made when NULL).  Returns 0, or -1 with an exception. */
static int
add_parent_nulls(PyArrayObject *pm, dfb_nested_out *out)
{
    PyArrayObject *v = out->values;
    PyArrayObject *m =
        out->mask ? (PyArrayObject *)PyArray_NewCopy(out->mask, NPY_CORDER)
                  : (PyArrayObject *)PyArray_ZEROS(
                        PyArray_NDIM(v), PyArray_DIMS(v), NPY_BOOL, 0);
    if (m == NULL) {
        return -1;
    }
    const npy_intp n = PyArray_DIM(m, 0);
    const npy_intp inner = n > 0 ? PyArray_SIZE(m) / n : 0;
    char *p = PyArray_DATA(m);
    const char *q = PyArray_DATA(pm);
    for (npy_intp i = 0; i < n; i++) {
        if (q[i]) {
            dfb_memset(p + i * inner, 1, (size_t)inner);
        }
    }
    Py_XSETREF(out->mask, m);
    return 0;
}

int
dfb_nested_walk_path(const dfb_nested_ctx *cx, arrow_node *nd,
                     const int64_t *path, int depth, PyArrayObject **pm)
{
    for (int k = 0; k < depth; k++) {
        dfb_format f;
        PyArrayObject *vm;
        arrow_node child;
        if (check_node(cx, nd, &f) < 0 || dfb_nested_validity(nd, &vm) < 0) {
            return -1;
        }
        if (vm != NULL && *pm == NULL) {
            *pm = vm;
        }
        else if (vm != NULL) {
            char *p = PyArray_DATA(*pm);
            const char *q = PyArray_DATA(vm);
            for (npy_intp i = 0; i < PyArray_DIM(vm, 0); i++) {
                p[i] |= q[i];
            }
            Py_DECREF(vm);
        }
        if (dfb_nested_child(cx, nd, path[k], nd->offset, nd->length, &child) <
            0) {
            return -1;
        }
        *nd = child;
    }
    return 0;
}

PyObject *
dfb_nested_convert_path(dfb_state *st, const arrow_import *imp, int is_table,
                        int64_t c, const int64_t *path, int depth,
                        const dfb_opts *opts, int allow_copy, const char *name)
{
    ref_list refs = {0};
    dfb_nested_ctx cx = {0};
    cx.st = st;
    cx.refs = &refs;
    cx.allow_copy = allow_copy;
    cx.name = name;
    cx.node = dfb_nested_node;
    const Py_ssize_t n = imp->n;
    dfb_nested_out *outs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(*outs));
    dfb_nested_out joined = {0};
    PyObject *res = NULL;
    int parent_nulls = 0;
    if (outs == NULL) {
        return PyErr_NoMemory();
    }
    if (n == 0) {
        res = (PyObject *)dfb_nested_objects(0);
        goto done;
    }
    if (n > 1 &&
        dfb_need_copy(st, allow_copy, "a column of several chunks") < 0) {
        goto done;
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        arrow_node nd;
        PyArrayObject *pm = NULL;
        int rc = dfb_arrow_import_node(imp, is_table, b, c, &nd) < 0 ||
                 dfb_nested_walk_path(&cx, &nd, path, depth, &pm) < 0 ||
                 dfb_nested_node(&cx, &nd, &outs[b]) < 0 ||
                 (pm != NULL && add_parent_nulls(pm, &outs[b]) < 0);
        parent_nulls |= pm != NULL;
        Py_XDECREF(pm);
        if (rc) {
            goto done;
        }
    }
    if (n == 1) {
        joined = outs[0];
        memset(&outs[0], 0, sizeof(outs[0]));
    }
    else if (join_chunks(outs, n, &joined) < 0) {
        goto done;
    }
    res = finish_column(st, &joined, opts->nulls, allow_copy, parent_nulls);
done:
    for (Py_ssize_t b = 0; b < n; b++) {
        dfb_nested_out_clear(&outs[b]);
    }
    dfb_nested_out_clear(&joined);
    PyMem_Free(outs);
    dfb_arrow_refs_clear(&refs);
    return res;
}

PyObject *
dfb_nested_convert_column(dfb_state *st, const arrow_import *imp, int is_table,
                          int64_t c, const dfb_opts *opts, int allow_copy,
                          const char *name)
{
    const struct ArrowSchema *s =
        is_table ? imp->schema.children[c] : &imp->schema;
    if (opts->categorical_codes && dfb_nested_dict_is(s)) {
        ref_list refs = {0};
        dfb_nested_ctx cx = {0};
        cx.st = st;
        cx.refs = &refs;
        cx.allow_copy = allow_copy;
        cx.name = name;
        cx.node = dfb_nested_node;
        PyObject *res =
            dfb_nested_dictionary_codes(&cx, imp, is_table, c, opts);
        dfb_arrow_refs_clear(&refs);
        return res;
    }
    return dfb_nested_convert_path(st, imp, is_table, c, NULL, 0, opts,
                                   allow_copy, name);
}
