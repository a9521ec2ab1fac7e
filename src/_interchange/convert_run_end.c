/* dfbuffer: run-end encoded ("+r") Arrow columns.
 *
 * A run-end encoded chunk is described as a categorical whose categories
 * are its values child and whose codes are the run of each row: core's
 * run-ends reader (reader.h) decodes the run ends, each read once and
 * checked where it is used, into new int64 codes, and the categorical
 * decoder of convert.c gathers the values (any value type, nulls from the
 * values' own validity).  The column is marked so that it is always
 * decoded, also under categorical="codes".
 */
#include "dfbuffer/common.h"
#include "dfbuffer/arrow_device.h"
#include "dfbuffer/arrow_internal.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/probe.h"
#include "reader.h"
#include "types.h"

#include <string.h>

/* The width in bytes of run-ends format `fmt` ("s", "i", "l"), or 0. */
static int
run_end_width(const char *fmt)
{
    if (fmt == NULL || fmt[0] == '\0' || fmt[1] != '\0') {
        return 0;
    }
    return fmt[0] == 's' ? 2 : fmt[0] == 'i' ? 4 : fmt[0] == 'l' ? 8 : 0;
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
        dfb_arrow_add_nonneg(ra->offset, ra->length, &end) < 0 ||
        dfb_arrow_mul_nonneg(end, w, &bytes) < 0 ||
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

int
dfb_arrow_describe_run_end(dfb_state *st, const arrow_node *nd,
                           dfb_column *col, dfb_column *dict, ref_list *refs,
                           int decode_views, const char *name)
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
                     "column '%s': run-end encoded columns are not supported "
                     "here",
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
    if (dfb_arrow_describe_node(st, &vn, dict, NULL, NULL, refs, decode_views,
                                name) < 0) {
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
    PyObject *b =
        dfb_buffer_new(st, (char *)out, (Py_ssize_t)(8 * nd->length), codes,
                       i8, 1, NULL, NULL, cpu, 1, DFB_NATIVE_NUMPY);
    Py_DECREF(i8);
    if (b == NULL || dfb_arrow_refs_add(refs, b) < 0) {
        return -1;
    }
    col->data.ptr = (const char *)out;
    col->data.size = 8 * nd->length;
    col->data.owner = b;
    col->index.type = DFB_T_INT;
    col->index.bits = 64;
    col->index.byteorder = '=';
    col->fmt.type = DFB_T_DICTIONARY;
    col->fmt.bits = 64;
    col->offset = 0;
    col->null_count = 0;
    col->null_kind = DFB_NULL_NON_NULLABLE;
    col->categories = dict;
    col->from_runs = 1;
    return 0;
}
