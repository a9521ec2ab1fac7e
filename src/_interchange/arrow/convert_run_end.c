/* dfbuffer: run-end encoded ("+r") Arrow columns.
 *
 * Fixed-width values in native order (numbers, temporals, bools as bytes)
 * are decoded at fill speed by core's dfb_run_ends_fill (run_fill.c): each
 * run's value stored run by run straight into a new array, the validity
 * bitmap set per run; the column is then a plain column of the values'
 * type.  Any other chunk (strings, nested values) stays a RUN_END column
 * whose `categories` are its values child and whose codes are the run of
 * each row: core's run-ends reader (reader.h) decodes the run ends, each
 * read once and checked where it is used, into new int64 codes, and the
 * type table's result class for it (DFB_CONV_RUNS) gathers the values as
 * the categorical decoder of convert.c does (any value type, nulls from the
 * values' own validity), always, also under categorical="codes".
 */
#include "common.h"
#include "model.h"
#include "arrow.h"
#include "probe.h"
#include "mem.h"
#include "reader.h"
#include "sizes.h"
#include "types.h"

#include <string.h>

/* The width in bytes of run-ends format `fmt` (int16, int32, int64), or
   0. */
static int
run_end_width(const char *fmt)
{
    dfb_format f;
    if (dfb_format_parse_arrow(fmt, &f) < 0 || f.type != DFB_T_INT ||
        f.bits < 16) {
        return 0;
    }
    return f.bits / 8;
}

/* Describes the run ends child `ra` of schema `rs` into *r.  Returns 0, or
   -1 with ValueError. */
static int
run_ends_reader(const struct ArrowSchema *rs, const struct ArrowArray *ra,
                const char *name, dfb_run_ends *r)
{
    const int w = run_end_width(rs->format);
    int64_t end, bytes;
    dfb_error err;
    if (w == 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': run ends of Arrow format '%s' (int16, "
                     "int32 or int64 expected)",
                     name, rs->format ? rs->format : "(null)");
        return -1;
    }
    if (ra->release == NULL || ra->n_buffers != 2 || ra->buffers == NULL ||
        ra->null_count > 0 || ra->offset < 0 || ra->length < 0 ||
        dfb_checked_add(ra->offset, ra->length, &end) < 0 ||
        dfb_checked_mul(end, w, &bytes) < 0 ||
        dfb_arrow_wraps(ra->buffers[1], bytes)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a malformed run ends child (released, "
                     "nulls, bad buffers, offset or length)",
                     name);
        return -1;
    }
    if (dfb_run_ends_init(r, ra->buffers[1], bytes, w, ra->offset, ra->length,
                          &err) != DFB_OK) {
        PyErr_Format(PyExc_ValueError, "column '%s': %s", name, err.message);
        return -1;
    }
    return 0;
}

/* Returns a new array of `n` bytes (zeroed when `zero`) kept in `refs`
   (borrowed), or NULL with an exception set. */
static PyArrayObject *
new_bytes(int64_t n, int zero, ref_list *refs)
{
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *a = zero ? PyArray_ZEROS(1, dims, NPY_UINT8, 0)
                       : PyArray_EMPTY(1, dims, NPY_UINT8, 0);
    if (a == NULL || dfb_arrow_refs_add(refs, a) < 0) {
        return NULL;
    }
    return (PyArrayObject *)a;
}

/* Makes `span` a read-only uint8 Buffer over all of `arr`.  Returns 0, or
   -1 with an exception set. */
static int
span_over(dfb_state *st, dfb_span *span, PyArrayObject *arr, ref_list *refs)
{
    const DLDevice cpu = {kDLCPU, 0};
    PyArray_Descr *u8 = PyArray_DescrFromType(NPY_UINT8);
    PyObject *b = dfb_buffer_new(st, PyArray_DATA(arr), PyArray_NBYTES(arr),
                                 (PyObject *)arr, u8, 1, NULL, NULL, cpu, 1,
                                 DFB_NATIVE_NUMPY);
    Py_DECREF(u8);
    if (b == NULL || dfb_arrow_refs_add(refs, b) < 0) {
        return -1;
    }
    span->ptr = PyArray_DATA(arr);
    span->size = PyArray_NBYTES(arr);
    span->owner = b;
    return 0;
}

/* The fast path for fixed-width values in native order that convert as a
   view: decodes the runs of `nd` straight into new values (and a new
   bitmap when a value is null), making `col` a plain column of the values'
   type.  Returns 1 when done, 0 when the values do not qualify, -1 with an
   exception set. */
static int
decode_fixed(dfb_state *st, const arrow_node *nd, const dfb_run_ends *r,
             const dfb_column *vals, dfb_column *col, ref_list *refs,
             const char *name)
{
    const dfb_type_row *row = dfb_type_row_of(vals->fmt.type);
    const int64_t isz = dfb_format_itemsize(&vals->fmt);
    if (row->conv != DFB_CONV_VIEW || row->layout != DFB_LAYOUT_FIXED ||
        isz <= 0 || dfb_is_swapped(vals->fmt.byteorder) ||
        (vals->null_count != 0 && vals->validity.ptr == NULL) ||
        (vals->length > 0 && vals->data.ptr == NULL)) {
        return 0;
    }
    const int64_t n = nd->length;
    int64_t nbytes, first, vend;
    if (dfb_checked_mul(vals->offset, isz, &first) < 0 ||
        dfb_checked_add(vals->offset, vals->length, &vend) < 0 ||
        dfb_checked_mul(vend, isz, &vend) < 0 ||
        (vals->length > 0 && vend > vals->data.size)) {
        return 0; /* the general path names what is wrong */
    }
    if (dfb_alloc_bytes(name, n, isz, &nbytes) < 0) {
        return -1;
    }
    PyArrayObject *out = new_bytes(nbytes, 0, refs);
    PyArrayObject *bm = vals->null_count != 0
                            ? new_bytes(n / 8 + (n % 8 != 0), 1, refs)
                            : NULL;
    if (out == NULL || (vals->null_count != 0 && bm == NULL)) {
        return -1;
    }
    const dfb_run_values v = {
        vals->length > 0 ? vals->data.ptr + first : NULL,
        vals->null_count != 0 ? (const uint8_t *)vals->validity.ptr : NULL,
        vals->offset,
        vals->length,
        isz,
    };
    uint8_t *bits = bm != NULL ? PyArray_DATA(bm) : NULL;
    int64_t nulls = 0;
    dfb_error err;
    dfb_code rc = DFB_OK;
    DFB_NOGIL_IF(
        n, rc = dfb_run_ends_fill(r, nd->offset, n, &v, PyArray_DATA(out),
                                  bits, &nulls, &err));
    if (rc != DFB_OK) {
        PyErr_Format(PyExc_ValueError, "column '%s': %s", name, err.message);
        return -1;
    }
    col->fmt = vals->fmt;
    col->offset = 0;
    col->null_count = nulls;
    col->null_kind = nulls > 0 ? DFB_NULL_USE_BITMASK : DFB_NULL_NON_NULLABLE;
    if (span_over(st, &col->data, out, refs) < 0 ||
        (nulls > 0 && span_over(st, &col->validity, bm, refs) < 0)) {
        return -1;
    }
    return 1;
}

int
dfb_arrow_describe_run_end(dfb_state *st, const arrow_node *nd,
                           dfb_column *col, dfb_column *dict, ref_list *refs,
                           int decode_views, const char *name,
                           dfb_arrow_describe_fn describe)
{
    const struct ArrowSchema *s = nd->schema;
    const struct ArrowArray *a = nd->array;
    if (nd->device.device_type != kDLCPU) {
        return dfb_arrow_device_unread(
            name, "run-end encoded data: its runs are read to decode it",
            nd->device);
    }
    if (dict == NULL) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%s': Arrow format '+r' (run-end encoded) is "
                     "not supported here (as a dictionary's values)",
                     name);
        return -1;
    }
    if (s->children == NULL || a->children == NULL || s->children[0] == NULL ||
        s->children[1] == NULL || a->children[0] == NULL ||
        a->children[1] == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a run-end encoded array without its run "
                     "ends and values",
                     name);
        return -1;
    }
    dfb_run_ends r;
    if (run_ends_reader(s->children[0], a->children[0], name, &r) < 0) {
        return -1;
    }
    const struct ArrowArray *va = a->children[1];
    arrow_node vn = {s->children[1], va,         va->offset,
                     va->length,     nd->holder, nd->device};
    if (va->offset < 0 || va->length < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': run-end values with a negative offset or "
                     "length",
                     name);
        return -1;
    }
    if (describe(st, &vn, dict, NULL, NULL, refs, decode_views, name) < 0) {
        return -1;
    }
    int fast = decode_fixed(st, nd, &r, dict, col, refs, name);
    if (fast != 0) {
        return fast < 0 ? -1 : 0;
    }
    int64_t nbytes;
    if (dfb_alloc_bytes(name, nd->length, 8, &nbytes) < 0) {
        return -1;
    }
    npy_intp dims[1] = {(npy_intp)nd->length};
    PyObject *codes = PyArray_SimpleNew(1, dims, NPY_INT64);
    if (codes == NULL || dfb_arrow_refs_add(refs, codes) < 0) {
        return -1;
    }
    int64_t *out = PyArray_DATA((PyArrayObject *)codes);
    dfb_error err;
    dfb_code rc = DFB_OK;
    DFB_NOGIL_IF(nd->length, rc = dfb_run_ends_decode(&r, nd->offset,
                                                      nd->length, out, &err));
    if (rc != DFB_OK) {
        PyErr_Format(PyExc_ValueError, "column '%s': %s", name, err.message);
        return -1;
    }
    const DLDevice cpu = {kDLCPU, 0};
    PyArray_Descr *i8 = PyArray_DescrFromType(NPY_INT64);
    PyObject *b = dfb_buffer_new(st, (char *)out, (Py_ssize_t)nbytes, codes,
                                 i8, 1, NULL, NULL, cpu, 1, DFB_NATIVE_NUMPY);
    Py_DECREF(i8);
    if (b == NULL || dfb_arrow_refs_add(refs, b) < 0) {
        return -1;
    }
    col->data.ptr = (const char *)out;
    col->data.size = nbytes;
    col->data.owner = b;
    col->index.type = DFB_T_INT;
    col->index.bits = 64;
    col->index.byteorder = '=';
    col->fmt.type = DFB_T_RUN_END;
    col->fmt.bits = 64;
    col->offset = 0;
    col->null_count = 0;
    col->null_kind = DFB_NULL_NON_NULLABLE;
    col->categories = dict;
    return 0;
}
