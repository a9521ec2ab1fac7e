/* dfbuffer: run-end encoded columns whose values are nested (lists,
 * structs, maps, fixed-size lists, unions, dictionaries of these) for the
 * nested converter (dfbuffer/nested.h): the values converted once by the
 * walk, each row the value its run names, run ends read only through
 * core's checked reader (reader.h).  Run-end encoded flat values are
 * decoded by convert_run_end.c.
 */
#include "common.h"
#include "arrow.h"
#include "model.h"
#include "nested.h"
#include "kernels.h"
#include "reader.h"
#include "mem.h"
#include "types.h"

/* Sets up the checked reader of the run ends child of run-end node `nd`.
   Returns 0, or -1 with ValueError. */
static int
run_ends(const dfb_nested_ctx *cx, const arrow_node *nd, dfb_run_ends *r)
{
    const struct ArrowSchema *rs = nd->schema->children[0];
    const struct ArrowArray *ra = nd->array->children[0];
    const char *fmt = rs != NULL ? rs->format : NULL;
    /* int16, int32 or int64 run ends */
    dfb_format rf;
    const int w = dfb_format_parse_arrow(fmt, &rf) == 0 &&
                          rf.type == DFB_T_INT && rf.bits >= 16
                      ? rf.bits / 8
                      : 0;
    int64_t end, bytes;
    dfb_error err;
    if (w == 0 || ra == NULL || ra->release == NULL || ra->n_buffers != 2 ||
        ra->buffers == NULL || ra->null_count > 0 || ra->offset < 0 ||
        ra->length < 0 || dfb_checked_add(ra->offset, ra->length, &end) < 0 ||
        dfb_checked_mul(end, w, &bytes) < 0 ||
        dfb_arrow_wraps(ra->buffers[1], bytes)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a malformed run ends child (int16, int32 "
                     "or int64 without nulls expected)",
                     cx->name);
        return -1;
    }
    if (dfb_run_ends_init(r, ra->buffers[1], bytes, w, ra->offset, ra->length,
                          &err) != DFB_OK) {
        PyErr_Format(PyExc_ValueError, "column '%s': %s", cx->name,
                     err.message);
        return -1;
    }
    return 0;
}

/* What fill_rows needs: the converted values and the rows to fill. */
typedef struct {
    const dfb_nested_out *vals;
    int64_t nvals;    /* rows of vals */
    PyObject **slots; /* the result's objects */
    uint8_t *null;    /* its rowmask */
    int64_t nnull;    /* null rows written */
    int failed;       /* 1: an exception is set, or `bad` */
    int bad;          /* a run beyond the values */
} run_rows;

/* dfb_run_fn: rows [a, b) take value `run` (the same object), or are null
   where that value is.  After a failure it does nothing. */
static void
fill_rows(void *ctx, int64_t run, int64_t a, int64_t b)
{
    run_rows *f = ctx;
    if (f->failed) {
        return;
    }
    if (run >= f->nvals) {
        f->failed = f->bad = 1;
        return;
    }
    const dfb_nested_out *v = f->vals;
    if (v->rowmask != NULL &&
        ((const uint8_t *)PyArray_DATA(v->rowmask))[run]) {
        dfb_memset(f->null + a, 1, (size_t)(b - a));
        f->nnull += b - a;
        return;
    }
    PyObject *item = dfb_nested_item(v, run);
    if (item == NULL) {
        f->failed = 1;
        return;
    }
    for (int64_t i = a; i < b; i++) {
        Py_SETREF(f->slots[i], Py_NewRef(item));
    }
    Py_DECREF(item);
}

int
dfb_nested_run_end(const dfb_nested_ctx *cx, const arrow_node *nd,
                   dfb_nested_out *out)
{
    const struct ArrowArray *a = nd->array;
    const int64_t n = nd->length;
    dfb_nested_out vals = {0};
    dfb_run_ends r;
    arrow_node vn;
    dfb_error err;
    int rc = -1;
    if (dfb_need_copy(cx->st, cx->allow_copy,
                      "run-end encoded nested values (Python objects)") < 0) {
        return -1;
    }
    if (a->release == NULL || a->n_children != 2 || a->children == NULL ||
        nd->schema->n_children != 2 || nd->schema->children == NULL ||
        a->children[1] == NULL || nd->offset < 0 || n < 0 ||
        a->null_count > 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a malformed run-end encoded array",
                     cx->name);
        return -1;
    }
    /* each row is an item of the values */
    const dfb_nested_ctx sub = dfb_nested_below(cx, DFB_NESTED_IN_ITEM);
    if (run_ends(cx, nd, &r) < 0 ||
        dfb_nested_child(cx, nd, 1, 0, a->children[1]->length, &vn) < 0 ||
        sub.node(&sub, &vn, &vals) < 0 ||
        (out->values = dfb_nested_objects(n)) == NULL) {
        goto done;
    }
    npy_intp dims[1] = {(npy_intp)n};
    out->rowmask = (PyArrayObject *)PyArray_ZEROS(1, dims, NPY_BOOL, 0);
    if (out->rowmask == NULL) {
        goto done;
    }
    run_rows f = {&vals,
                  PyArray_DIM(vals.values, 0),
                  PyArray_DATA(out->values),
                  PyArray_DATA(out->rowmask),
                  0,
                  0,
                  0};
    if (dfb_run_ends_walk(&r, nd->offset, n, fill_rows, &f, &err) != DFB_OK) {
        if (!f.failed || f.bad) {
            PyErr_Format(PyExc_ValueError, "column '%s': %s", cx->name,
                         err.message);
        }
        goto done;
    }
    if (f.failed) {
        if (f.bad) {
            dfb_nested_bad(cx->name, "run ends", 0);
        }
        goto done;
    }
    if (f.nnull == 0) {
        Py_CLEAR(out->rowmask);
    }
    out->mask = (PyArrayObject *)Py_XNewRef(out->rowmask);
    rc = 0;
done:
    dfb_nested_out_clear(&vals);
    return rc;
}
