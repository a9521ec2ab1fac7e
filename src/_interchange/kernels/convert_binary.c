/* dfbuffer: the binary kernel: binary, large binary, binary view and
 * fixed-size binary chunks to object arrays of Python bytes.
 *
 * Offsets are read through core's checked reader (each once, every span
 * checked where it is used) and views through dfb_view_at, so memory the
 * producer changes after validation cannot send the loop outside its
 * buffers.
 */
#include "common.h"
#include "sizes.h"
#include "model.h"
#include "reader.h"
#include "types.h"
#include "kernels.h"

/* Returns a new object array of `n` slots (all NULL), or NULL. */
static PyArrayObject *
new_objects(int64_t n)
{
    return dfb_new_array(PyArray_DescrFromType(NPY_OBJECT), n);
}

/* The loop of fill_from_offsets over the elements reader `r` covers (at
   least one), each offset read once and each span checked before use: the
   one pass over a binary chunk's offsets (validation reads only the last).
   plain32: its offsets are native int32 (a constant from the caller: the
   width and byte-order tests drop out).  Same returns. */
static inline int
offsets_loop(const dfb_offsets *r, const char *data, const uint8_t *isnull,
             PyObject **o, const int plain32)
{
    /* a local copy: the calls below cannot make the compiler reload it */
    const dfb_offsets off = *r;
    const int64_t n = off.count - 1;
    int64_t start = dfb_offsets_load(&off, 0), end;
    for (int64_t i = 0; i < n; i++, start = end) {
        const dfb_code rc = plain32
                                ? dfb_offsets_next_i32(&off, i, start, &end)
                                : dfb_offsets_next(&off, i, start, &end);
        if (rc != DFB_OK) {
            dfb_bad_span_error(i, start, end, off.limit);
            return -1;
        }
        if (isnull != NULL && isnull[i]) {
            o[i] = Py_NewRef(Py_None);
            continue;
        }
        o[i] =
            PyBytes_FromStringAndSize(data + start, (Py_ssize_t)(end - start));
        if (o[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Fills `o` (n slots) with bytes from the offsets + data of `c`.  Returns
   0, or -1 with ValueError (a span outside the data) / MemoryError. */
static int
fill_from_offsets(const dfb_column *c, const uint8_t *isnull, PyObject **o)
{
    dfb_offsets off;
    if (dfb_column_offsets(c, &off) < 0) {
        return -1;
    }
    /* no data: the limit is 0, only empty spans are valid */
    const char *data = c->data.ptr != NULL ? c->data.ptr : "";
    if (off.count < 2) {
        return 0;
    }
    return off.width == 4 && !off.swapped
               ? offsets_loop(&off, data, isnull, o, 1)
               : offsets_loop(&off, data, isnull, o, 0);
}

/* Fills `o` from the 16-byte views of `c`.  Returns 0, or -1. */
static int
fill_from_views(const dfb_column *c, const uint8_t *isnull, PyObject **o)
{
    for (int64_t i = 0; i < c->length; i++) {
        const char *s;
        int64_t len;
        if (isnull != NULL && isnull[i]) {
            o[i] = Py_NewRef(Py_None);
            continue;
        }
        if (dfb_view_at(c, c->offset + i, &s, &len) < 0) {
            return -1;
        }
        o[i] = PyBytes_FromStringAndSize(len > 0 ? s : "", (Py_ssize_t)len);
        if (o[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Fills `o` from the fixed-size values of `c` (fmt.size bytes each).
   Returns 0, or -1 with an exception set. */
static int
fill_from_fixed(const dfb_column *c, const uint8_t *isnull, PyObject **o)
{
    const int64_t w = c->fmt.size;
    const char *p = c->data.ptr + c->offset * w;
    for (int64_t i = 0; i < c->length; i++) {
        if (isnull != NULL && isnull[i]) {
            o[i] = Py_NewRef(Py_None);
            continue;
        }
        o[i] = PyBytes_FromStringAndSize(p + i * w, (Py_ssize_t)w);
        if (o[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

PyObject *
dfb_bytes_to_object_array(const dfb_column *c, const uint8_t *isnull)
{
    /* fixed-size values: length * width bytes of objects, a product of
       two producer-given sizes the data buffer cannot be checked against
       (Arrow gives no buffer sizes), refused before any is made when no
       machine holds them (w:268435455 over 2**20 rows: 256 TiB) */
    if (dfb_type_row_of(c->fmt.type)->layout != DFB_LAYOUT_OFFSETS &&
        dfb_type_row_of(c->fmt.type)->layout != DFB_LAYOUT_VIEWS &&
        dfb_check_alloc(c->length, c->fmt.size) < 0) {
        return NULL;
    }
    PyArrayObject *out = new_objects(c->length);
    if (out == NULL || c->length == 0) {
        return (PyObject *)out;
    }
    PyObject **o = PyArray_DATA(out);
    int rc;
    /* the objects' heads (data bytes come on top; at least this) */
    int64_t est;
    const int on = dfb_objects_prefault_begin(
        dfb_checked_mul(c->length, 48, &est) < 0 ? INT64_MAX : est);
    switch (dfb_type_row_of(c->fmt.type)->layout) {
        case DFB_LAYOUT_OFFSETS:
            rc = fill_from_offsets(c, isnull, o);
            break;
        case DFB_LAYOUT_VIEWS:
            rc = fill_from_views(c, isnull, o);
            break;
        default:
            rc = fill_from_fixed(c, isnull, o);
    }
    dfb_objects_prefault_end(on);
    if (rc < 0) {
        Py_DECREF(out); /* NULL slots are skipped by the dealloc */
        return NULL;
    }
    return (PyObject *)out;
}
