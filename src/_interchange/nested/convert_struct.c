/* dfbuffer: the struct and union kernels of the nested converter
 * (dfbuffer/nested.h): structs to dicts of their fields' values, dense and
 * sparse unions to the values of the member each row names (type ids and
 * dense offsets read only through core's checked reader, reader.h).
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

/* Converts children [0, nch) of `nd`, each over child elements
   [first, first + count) (count < 0: the child's whole length), into
   outs.  Returns 0, or -1 with an exception. */
static int
convert_children(const dfb_nested_ctx *cx, const arrow_node *nd, int64_t nch,
                 int64_t first, int64_t count, dfb_nested_out *outs)
{
    /* a struct's fields and a union's members are handed out as items */
    const dfb_nested_ctx sub = dfb_nested_below(cx, DFB_NESTED_IN_ITEM);
    for (int64_t k = 0; k < nch; k++) {
        arrow_node cn;
        int64_t len = count;
        if (len < 0) {
            const struct ArrowArray *a = nd->array;
            len = a->children != NULL && a->children[k] != NULL
                      ? a->children[k]->length
                      : 0;
        }
        if (dfb_nested_child(cx, nd, k, first, len, &cn) < 0 ||
            sub.node(&sub, &cn, &outs[k]) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Checks that Python objects may be made (allow_copy) and allocates the
   zeroed results of `n` children.  Returns them (free_children frees
   them), or NULL with RuntimeError / MemoryError. */
static dfb_nested_out *
alloc_children(const dfb_nested_ctx *cx, int64_t n)
{
    if (dfb_need_copy(cx->st, cx->allow_copy,
                      "lists, maps, structs and unions (Python objects)") <
        0) {
        return NULL;
    }
    dfb_nested_out *outs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(*outs));
    if (outs == NULL) {
        PyErr_NoMemory();
    }
    return outs;
}

/* Frees outs[0 .. n) (may be NULL).  Cannot fail. */
static void
free_children(dfb_nested_out *outs, int64_t n)
{
    for (int64_t k = 0; outs != NULL && k < n; k++) {
        dfb_nested_out_clear(&outs[k]);
    }
    PyMem_Free(outs);
}

/* A tuple of the field names of `s`'s children (UTF-8; "" for none).
   Returns a new reference, or NULL with an exception. */
static PyObject *
field_names(const struct ArrowSchema *s)
{
    PyObject *t = PyTuple_New((Py_ssize_t)s->n_children);
    for (int64_t k = 0; t != NULL && k < s->n_children; k++) {
        const char *nm = s->children[k]->name;
        PyObject *u = PyUnicode_FromString(nm ? nm : "");
        if (u == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)k, u);
    }
    return t;
}

int
dfb_nested_struct(const dfb_nested_ctx *cx, const arrow_node *nd,
                  dfb_nested_out *out)
{
    const int64_t nf = nd->array->n_children, n = nd->length;
    dfb_nested_out *outs = alloc_children(cx, nf);
    PyObject *names = NULL;
    int rc = -1;
    if (outs == NULL) {
        return -1;
    }
    if (dfb_nested_validity(nd, &out->rowmask) < 0 ||
        convert_children(cx, nd, nf, nd->offset, n, outs) < 0 ||
        (names = field_names(nd->schema)) == NULL ||
        (out->values = dfb_nested_objects(n)) == NULL) {
        goto done;
    }
    PyObject **slots = PyArray_DATA(out->values);
    const uint8_t *null =
        out->rowmask ? (const uint8_t *)PyArray_DATA(out->rowmask) : NULL;
    for (int64_t i = 0; i < n; i++) {
        if (null != NULL && null[i]) {
            continue;
        }
        PyObject *d = PyDict_New();
        if (d == NULL) {
            goto done;
        }
        Py_SETREF(slots[i], d);
        for (int64_t k = 0; k < nf; k++) {
            PyObject *v = dfb_nested_item(&outs[k], i);
            if (v == NULL ||
                PyDict_SetItem(d, PyTuple_GET_ITEM(names, k), v) < 0) {
                Py_XDECREF(v);
                goto done;
            }
            Py_DECREF(v);
        }
    }
    out->mask = (PyArrayObject *)Py_XNewRef(out->rowmask);
    rc = 0;
done:
    Py_XDECREF(names);
    free_children(outs, nf);
    return rc;
}

/* Fills member[id] with the child index of each union type id of `f` (-1
   elsewhere): the ids after "+ud:" / "+us:", else 0 .. nch - 1.  Returns
   0, or -1 with ValueError. */
static int
member_table(const dfb_nested_ctx *cx, const dfb_format *f, int64_t nch,
             int8_t member[128])
{
    dfb_memset(member, -1, 128);
    const char *p = f->ids, *end = f->ids ? f->ids + f->ids_len : NULL;
    for (int64_t k = 0; k < nch; k++) {
        long id = k;
        if (p != NULL && p < end) {
            char *stop;
            id = strtol(p, &stop, 10);
            p = stop < end && *stop == ',' ? stop + 1 : stop;
        }
        if (id < 0 || id > 127 || member[id] >= 0) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': a bad union type id list", cx->name);
            return -1;
        }
        member[id] = (int8_t)k;
    }
    return 0;
}

/* Sets up the checked readers of union node `nd`: its type ids and, for
   a dense union, its offsets (each < `maxlen`).  Returns 0, or -1 with
   ValueError. */
static int
union_readers(const dfb_nested_ctx *cx, const arrow_node *nd, int dense,
              int64_t maxlen, dfb_codes *ids, dfb_codes *uoffs)
{
    const struct ArrowArray *a = nd->array;
    int64_t end, bytes;
    dfb_error err;
    if (nd->length == 0) {
        return 0;
    }
    if (a->buffers[0] == NULL || (dense && a->buffers[1] == NULL) ||
        dfb_checked_add(nd->offset, nd->length, &end) < 0 ||
        dfb_checked_mul(end, 4, &bytes) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a union without its type ids or offsets, "
                     "or an overflowing length",
                     cx->name);
        return -1;
    }
    if (dfb_codes_init(ids, a->buffers[0], end, 1, 1, 0, nd->offset,
                       nd->length, 128, &err) != DFB_OK ||
        (dense &&
         dfb_codes_init(uoffs, a->buffers[1], bytes, 4, 1, 0, nd->offset,
                        nd->length, maxlen, &err) != DFB_OK)) {
        PyErr_Format(PyExc_ValueError, "column '%s': %s", cx->name,
                     err.message);
        return -1;
    }
    return 0;
}

/* Fills the values and mask of union node `nd` from its converted members
   `outs` (over the union's rows when sparse, whole when dense).  Returns
   0, or -1 with an exception. */
static int
union_rows(const dfb_nested_ctx *cx, const arrow_node *nd, int dense,
           const int8_t member[128], const dfb_codes *ids,
           const dfb_codes *uoffs, const dfb_nested_out *outs,
           dfb_nested_out *out)
{
    const int64_t n = nd->length;
    npy_intp dims[1] = {(npy_intp)n};
    out->values = dfb_nested_objects(n); /* checks n against memory */
    out->mask = out->values == NULL
                    ? NULL
                    : (PyArrayObject *)PyArray_ZEROS(1, dims, NPY_BOOL, 0);
    if (out->values == NULL || out->mask == NULL) {
        return -1;
    }
    PyObject **slots = PyArray_DATA(out->values);
    uint8_t *m = PyArray_DATA(out->mask);
    int64_t nnull = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t id, j = i;
        if (dfb_codes_get(ids, i, &id) != DFB_OK || member[id] < 0 ||
            (dense && dfb_codes_get(uoffs, i, &j) != DFB_OK)) {
            return dfb_nested_bad(cx->name, "type ids or offsets", i);
        }
        const dfb_nested_out *o = &outs[member[id]];
        if (j >= PyArray_DIM(o->values, 0)) {
            return dfb_nested_bad(cx->name, "offsets", i);
        }
        if (o->rowmask != NULL &&
            ((const uint8_t *)PyArray_DATA(o->rowmask))[j]) {
            m[i] = 1;
            nnull++;
            continue;
        }
        PyObject *v = dfb_nested_item(o, j);
        if (v == NULL) {
            return -1;
        }
        Py_SETREF(slots[i], v);
    }
    if (nnull == 0) {
        Py_CLEAR(out->mask);
    }
    out->rowmask = (PyArrayObject *)Py_XNewRef(out->mask);
    return 0;
}

int
dfb_nested_union(const dfb_nested_ctx *cx, const arrow_node *nd,
                 const dfb_format *f, dfb_nested_out *out)
{
    const int dense = f->type == DFB_T_DENSE_UNION;
    const int64_t nch = nd->array->n_children;
    int8_t member[128];
    dfb_codes ids, uoffs;
    int64_t maxlen = 0;
    int rc = -1;
    dfb_nested_out *outs = alloc_children(cx, nch);
    if (outs == NULL) {
        return -1;
    }
    if (member_table(cx, f, nch, member) < 0 ||
        convert_children(cx, nd, nch, dense ? 0 : nd->offset,
                         dense ? -1 : nd->length, outs) < 0) {
        goto done;
    }
    for (int64_t k = 0; k < nch; k++) {
        int64_t len = PyArray_DIM(outs[k].values, 0);
        maxlen = len > maxlen ? len : maxlen;
    }
    if (union_readers(cx, nd, dense, maxlen, &ids, &uoffs) < 0 ||
        union_rows(cx, nd, dense, member, &ids, &uoffs, outs, out) < 0) {
        goto done;
    }
    rc = 0;
done:
    free_children(outs, nch);
    return rc;
}
