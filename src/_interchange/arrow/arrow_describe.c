/* dfbuffer: one imported Arrow column chunk described as a dfb_column
 * (describe_node), with Buffers over its memory owned by its holder, on
 * the CPU or on a device (whose memory it never reads).
 */
#include "common.h"
#include "sizes.h"
#include "model.h"
#include "arrow.h"
#include "format.h"
#include "offsets.h"
#include "reader.h"
#include "types.h"
#include "mem.h"
#include "args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Describing one column chunk as a dfb_column                          */
/* ------------------------------------------------------------------ */

PyArray_Descr *
dfb_arrow_stored_descr(const dfb_format *f)
{
    /* the plain numbers directly: the dtypes "=<kind><size>" gives */
    static const int ints[4] = {NPY_INT8, NPY_INT16, NPY_INT32, NPY_INT64};
    static const int uints[4] = {NPY_UINT8, NPY_UINT16, NPY_UINT32,
                                 NPY_UINT64};
    static const int floats[4] = {-1, NPY_HALF, NPY_FLOAT, NPY_DOUBLE};
    const int k = f->bits == 8    ? 0
                  : f->bits == 16 ? 1
                  : f->bits == 32 ? 2
                  : f->bits == 64 ? 3
                                  : -1;
    if (k >= 0 && f->type == DFB_T_INT) {
        return PyArray_DescrFromType(ints[k]);
    }
    if (k >= 0 && f->type == DFB_T_UINT) {
        return PyArray_DescrFromType(uints[k]);
    }
    if (k > 0 && f->type == DFB_T_FLOAT) {
        return PyArray_DescrFromType(floats[k]);
    }
    char ts[32];
    dfb_format g = *f;
    g.byteorder = '=';
    if (dfb_format_numpy_typestr(&g, ts, sizeof(ts)) < 0) {
        return PyArray_DescrFromType(NPY_UINT8); /* bits, bytes */
    }
    return dfb_descr_from_typestr(ts);
}

/* Makes a read-only 1-D Buffer of `descr` (stolen; NULL means an error is
   set) over [ptr, ptr + size) on `device` (an empty one off the CPU at
   NULL) owned by `owner`, keeps it in `refs` and fills `span`.  Returns 0,
   or -1 with an exception set. */
static int
make_span(dfb_state *st, dfb_span *span, const void *ptr, int64_t size,
          PyArray_Descr *descr, PyObject *owner, int native, DLDevice device,
          ref_list *refs)
{
    if (descr == NULL) {
        return -1;
    }
    if (size == 0 && device.device_type != kDLCPU) {
        ptr = NULL;
    }
    PyObject *b = dfb_buffer_new(st, (char *)ptr, (Py_ssize_t)size, owner,
                                 descr, 1, NULL, NULL, device, 1, native);
    Py_DECREF(descr);
    if (b == NULL || dfb_arrow_refs_add(refs, b) < 0) {
        return -1;
    }
    span->ptr = ptr;
    span->size = size;
    span->owner = b;
    return 0;
}

/* Returns a new 1-D NumPy array of `n` elements of type `typenum`, kept in
   `refs` (borrowed result), or NULL with an exception. */
static PyArrayObject *
new_array(int typenum, int64_t n, ref_list *refs)
{
    PyObject *arr =
        (PyObject *)dfb_new_array(PyArray_DescrFromType(typenum), n);
    if (arr == NULL || dfb_arrow_refs_add(refs, arr) < 0) {
        return NULL;
    }
    return (PyArrayObject *)arr;
}

/* Reads the variadic buffer sizes of string-view chunk `a` once (any
   alignment) into a new int64 array kept in `refs`, followed by the
   buffer pointers (as int64, same array), and checks them: >= 0, a
   non-empty buffer not NULL, the views present when `length` > 0.  Sets
   *n_var, *sizes and *bufs (NULL when there are no variadic buffers).
   Returns 0, or -1 with ValueError / MemoryError set. */
static int
read_view_buffers(const struct ArrowArray *a, int64_t length, ref_list *refs,
                  int64_t *n_var_out, const int64_t **sizes_out,
                  const char *const **bufs_out)
{
    int64_t n_var = a->n_buffers - 3;
    const uint8_t *views = a->buffers[1];
    const char *sizes_p = a->buffers[a->n_buffers - 1];
    int64_t *sizes = NULL;
    const char **bufs = NULL;
    if (length > 0 && views == NULL) {
        PyErr_SetString(PyExc_ValueError, "string view array without views");
        return -1;
    }
    if (n_var > 0 && sizes_p == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "string view array without its buffer sizes");
        return -1;
    }
    if (n_var > 0) {
        if ((size_t)n_var > PY_SSIZE_T_MAX / (2 * sizeof(int64_t))) {
            PyErr_NoMemory();
            return -1;
        }
        PyArrayObject *sz = new_array(NPY_INT64, 2 * n_var, refs);
        if (sz == NULL) {
            return -1;
        }
        sizes = PyArray_DATA(sz);
        dfb_memcpy(sizes, sizes_p, (size_t)n_var * sizeof(int64_t));
        bufs = (const char **)(sizes + n_var);
        for (int64_t k = 0; k < n_var; k++) {
            bufs[k] = a->buffers[2 + k];
        }
    }
    for (int64_t k = 0; k < n_var; k++) {
        if (sizes[k] < 0 || (sizes[k] > 0 && bufs[k] == NULL)) {
            PyErr_Format(PyExc_ValueError,
                         "string view data buffer %lld: bad size %lld or "
                         "NULL pointer",
                         (long long)k, (long long)sizes[k]);
            return -1;
        }
    }
    *n_var_out = n_var;
    *sizes_out = sizes;
    *bufs_out = bufs;
    return 0;
}

/* Decodes a string-view ("vu") chunk into large-utf8 (int64 offsets +
   bytes) in new memory, with a realigned validity copy: col->offset
   becomes 0 (the chunk dicts of to_interchange need offsets).
   `validity` is the Arrow bitmap (NULL when no nulls).  Validates every
   view against its data buffer.  Returns 0, or -1 with ValueError /
   MemoryError set. */
static int
views_to_large_utf8(dfb_state *st, const struct ArrowArray *a, int64_t offset,
                    int64_t length, const uint8_t *validity, dfb_column *col,
                    ref_list *refs)
{
    const uint8_t *views = a->buffers[1];
    int64_t n_var;
    const int64_t *sizes;
    const char *const *bufs;
    if (read_view_buffers(a, length, refs, &n_var, &sizes, &bufs) < 0) {
        return -1;
    }
    int64_t total = 0;
    for (int64_t i = 0; i < length; i++) {
        int64_t j = offset + i;
        if (validity != NULL && !dfb_arrow_get_bit(validity, j)) {
            continue;
        }
        const char *bytes;
        int32_t len, idx = -1, off = 4;
        if (dfb_string_view_read((const char *)views + 16 * j, n_var, bufs,
                                 sizes, &bytes, &len, &idx, &off) != DFB_OK) {
            if (len < 0) {
                PyErr_Format(PyExc_ValueError,
                             "string view %lld has negative length %d",
                             (long long)j, (int)len);
            }
            else {
                PyErr_Format(PyExc_ValueError,
                             "string view %lld points outside its data "
                             "buffers (buffer %d, offset %d, length %d)",
                             (long long)j, (int)idx, (int)off, (int)len);
            }
            return -1;
        }
        if (total > PY_SSIZE_T_MAX - len) {
            PyErr_SetString(PyExc_ValueError,
                            "string views: the total length overflows");
            return -1;
        }
        total += len;
    }
    PyArrayObject *offs = new_array(NPY_INT64, length + 1, refs);
    if (offs == NULL) {
        return -1;
    }
    PyArrayObject *data = new_array(NPY_UINT8, total, refs);
    if (data == NULL) {
        return -1;
    }
    int64_t *o = PyArray_DATA(offs);
    uint8_t *d = PyArray_DATA(data);
    int64_t pos = 0;
    o[0] = 0;
    for (int64_t i = 0; i < length; i++) {
        int64_t j = offset + i;
        if (validity == NULL || dfb_arrow_get_bit(validity, j)) {
            /* read again: check again (the memory may have changed since
               the first pass; never write past `total` or read outside a
               data buffer) */
            const char *bytes;
            int32_t len, idx, off;
            if (dfb_string_view_read((const char *)views + 16 * j, n_var, bufs,
                                     sizes, &bytes, &len, &idx,
                                     &off) != DFB_OK ||
                len > total - pos) {
                goto changed;
            }
            dfb_memcpy(d + pos, bytes, (size_t)len);
            pos += len;
        }
        o[i + 1] = pos;
    }
    col->fmt.type = col->fmt.type == DFB_T_BINARY_VIEW ? DFB_T_LARGE_BINARY
                                                       : DFB_T_LARGE_UTF8;
    col->fmt.bits = 8;
    col->offset = 0;
    PyArray_Descr *i8 = PyArray_DescrFromType(NPY_INT64);
    const DLDevice cpu = {kDLCPU, 0};
    /* bounded: the length + 1 offsets were allocated above */
    if (make_span(st, &col->offsets, o, 8 * (length + 1), i8, (PyObject *)offs,
                  DFB_NATIVE_NUMPY, cpu, refs) < 0 ||
        make_span(st, &col->data, d, total, PyArray_DescrFromType(NPY_UINT8),
                  (PyObject *)data, DFB_NATIVE_NUMPY, cpu, refs) < 0) {
        return -1;
    }
    if (validity != NULL) {
        int64_t nbytes = length / 8 + (length % 8 != 0);
        PyArrayObject *bm = new_array(NPY_UINT8, nbytes, refs);
        if (bm == NULL) {
            return -1;
        }
        uint8_t *out = PyArray_DATA(bm);
        dfb_memset(out, 0, nbytes);
        for (int64_t i = 0; i < length; i++) {
            out[i >> 3] |=
                (uint8_t)(dfb_arrow_get_bit(validity, offset + i) << (i & 7));
        }
        if (make_span(st, &col->validity, out, nbytes,
                      PyArray_DescrFromType(NPY_UINT8), (PyObject *)bm,
                      DFB_NATIVE_NUMPY, cpu, refs) < 0) {
            return -1;
        }
    }
    return 0;
changed:
    PyErr_SetString(PyExc_ValueError,
                    "string views changed while they were converted");
    return -1;
}

/* Validates string offsets [offset, offset + length] (int32 or int64):
   non-negative and non-decreasing.  Stores the last one in *end.  Returns
   0, or -1 with ValueError. */
static int
check_offsets(const void *buf, int width, int64_t offset, int64_t length,
              int64_t *end)
{
    /* any alignment: Arrow only recommends it */
    dfb_error err;
    if (dfb_offsets_validate(buf, width, 0, offset, offset + length, end, NULL,
                             &err) != DFB_OK) {
        PyErr_SetString(PyExc_ValueError, err.message);
        return -1;
    }
    return 0;
}

/* Makes a span of Arrow memory: a uint8 Buffer of `nd`'s device over
   [ptr, ptr + size), owned by its holder.  Returns 0, or -1 with an
   exception set. */
static int
arrow_span(dfb_state *st, const arrow_node *nd, dfb_span *span,
           const void *ptr, int64_t size, PyArray_Descr *descr, ref_list *refs)
{
    return make_span(st, span, ptr, size,
                     descr ? descr : PyArray_DescrFromType(NPY_UINT8),
                     nd->holder, DFB_NATIVE_ARROW, nd->device, refs);
}

/* Raises ValueError: the buffer size of column `name` for offset +
   length `end` overflows.  Returns -1. */
static int
overflow_error(const char *name, int64_t end)
{
    PyErr_Format(PyExc_ValueError,
                 "column '%s': the buffer size for offset + length %lld "
                 "overflows",
                 name, (long long)end);
    return -1;
}

/* Describes the offsets (`w` bytes each) and data of the offsets layout of
   node `nd` (offset + length `end`) into `col`.  Returns 0, or -1 with an
   exception set (off the CPU, `readable` 0: nothing can be read). */
static int
describe_offsets(dfb_state *st, const arrow_node *nd, dfb_column *col, int w,
                 int64_t end, ref_list *refs, int readable, const char *name)
{
    const struct ArrowArray *a = nd->array;
    static const int64_t zero_offsets[1] = {0};
    const void *obuf = a->buffers[1];
    int64_t last = 0, osize;
    if (!readable) {
        return dfb_arrow_device_unread(
            name,
            "variable-width data: its size is stored in its "
            "offsets",
            nd->device);
    }
    if (obuf == NULL) {
        if (nd->length > 0) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': string array without offsets", name);
            return -1;
        }
        obuf = zero_offsets;
        col->offset = 0;
        osize = w;
    }
    else {
        if (dfb_checked_mul(end + 1, w, &osize) < 0) {
            return overflow_error(name, end);
        }
        if (check_offsets(obuf, w, nd->offset, nd->length, &last) < 0) {
            return -1;
        }
    }
    if (last > 0 && a->buffers[2] == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a data buffer of format '%s' is NULL but "
                     "length + offset is %lld",
                     name, nd->schema->format, (long long)end);
        return -1;
    }
    if (arrow_span(st, nd, &col->offsets, obuf, osize,
                   PyArray_DescrFromType(w == 4 ? NPY_INT32 : NPY_INT64),
                   refs) < 0 ||
        arrow_span(st, nd, &col->data, a->buffers[2], last, NULL, refs) < 0) {
        return -1;
    }
    return 0;
}

/* Describes the views of node `nd` (validity `vbuf` of `vbytes`, offset +
   length `end`) into `col`: kept as views (DFB_VIEWS_KEEP) or copied to
   large UTF-8.  Returns 0, or -1 with an exception set. */
static int
describe_views(dfb_state *st, const arrow_node *nd, dfb_column *col,
               const uint8_t *vbuf, int64_t vbytes, int64_t end,
               ref_list *refs, int readable, int decode_views,
               const char *name)
{
    const struct ArrowArray *a = nd->array;
    if (!readable) {
        return dfb_arrow_device_unread(
            name,
            "variable-width data: its size is stored in its "
            "views",
            nd->device);
    }
    if (!decode_views) {
        return dfb_copy_error(st,
                              "column '%s': string view ('vu') data must "
                              "be copied to offsets + bytes",
                              name);
    }
    if (decode_views != DFB_VIEWS_KEEP) {
        return views_to_large_utf8(st, a, nd->offset, nd->length, vbuf, col,
                                   refs);
    }
    /* read straight from the views by the converters; variadic_sizes is
       never NULL here (it marks views the importer checked) */
    static const int64_t no_sizes[1] = {0};
    int64_t vsize;
    if (dfb_checked_mul(end, 16, &vsize) < 0) {
        return overflow_error(name, end);
    }
    if (read_view_buffers(a, nd->length, refs, &col->n_variadic,
                          &col->variadic_sizes, &col->variadic) < 0 ||
        arrow_span(st, nd, &col->data, a->buffers[1], vsize, NULL, refs) < 0 ||
        (vbuf != NULL &&
         arrow_span(st, nd, &col->validity, vbuf, vbytes, NULL, refs) < 0)) {
        return -1;
    }
    if (col->variadic_sizes == NULL) {
        col->variadic_sizes = no_sizes;
    }
    return 0;
}

/* Describes dictionary `da` of schema `ds` into `dict` for the column of
   node `nd`.  Off the CPU with `dict_error` non-NULL, a dictionary that
   cannot be described (NotImplementedError / RuntimeError) leaves `dict`
   with its length only and its exception in *dict_error.  Returns 0, or
   -1 with an exception set. */
static int
describe_dictionary(dfb_state *st, const arrow_node *nd,
                    const struct ArrowSchema *ds, const struct ArrowArray *da,
                    dfb_column *dict, PyObject **dict_error, ref_list *refs,
                    int decode_views, const char *name)
{
    arrow_node dn = {ds, da, da->offset, da->length, nd->holder, nd->device};
    if (dfb_arrow_describe_node(st, &dn, dict, NULL, NULL, refs,
                                decode_views ? DFB_VIEWS_COPY : 0,
                                name) == 0) {
        return 0;
    }
    if (dict_error == NULL || nd->device.device_type == kDLCPU ||
        (!PyErr_ExceptionMatches(PyExc_NotImplementedError) &&
         !PyErr_ExceptionMatches(PyExc_RuntimeError))) {
        return -1;
    }
    *dict_error = dfb_err_take();
    memset(dict, 0, sizeof(*dict));
    dict->length = da->length;
    return 0;
}

int
dfb_arrow_describe_node(dfb_state *st, const arrow_node *nd, dfb_column *col,
                        dfb_column *dict, PyObject **dict_error,
                        ref_list *refs, int decode_views, const char *name)
{
    const struct ArrowSchema *s = nd->schema;
    const struct ArrowArray *a = nd->array;
    memset(col, 0, sizeof(*col));
    if (dict_error != NULL) {
        *dict_error = NULL;
    }
    dfb_format f;
    int64_t end;
    dfb_error err;
    dfb_code rc = dfb_arrow_check_node(s, a, nd->offset, nd->length, name, &f,
                                       &end, &err);
    if (rc != DFB_OK) {
        return dfb_arrow_raise(rc, &err);
    }
    /* memory off the CPU is described, never read */
    const int readable = nd->device.device_type == kDLCPU;
    const int whole = nd->offset == a->offset && nd->length == a->length;
    const int64_t vbytes = end / 8 + (end % 8 != 0);
    col->fmt = f;
    col->length = nd->length;
    col->offset = nd->offset;
    col->null_kind = DFB_NULL_NON_NULLABLE;

    /* validity */
    const dfb_type_row *row = dfb_type_row_of(f.type);
    const uint8_t *vbuf = NULL;
    if (f.type == DFB_T_NULL) {
        col->null_count = nd->length;
    }
    else if (row->n_buffers == 0) {
        /* run-end encoded: no buffers, its values hold the nulls */
    }
    else {
        vbuf = a->buffers[0];
        int64_t nulls = 0;
        if (vbuf == NULL) {
            nulls = 0; /* null_count <= 0: checked */
        }
        else if (a->null_count == 0 && (whole || !readable)) {
            nulls = 0;
        }
        else if (a->null_count > 0 && whole) {
            nulls = a->null_count;
        }
        else if (!readable) {
            nulls = -1; /* uncounted: the bitmap is on the device */
        }
        else {
            nulls = dfb_bitmap_count_zeros(vbuf, nd->offset, nd->length);
        }
        col->null_count = nulls;
        if (nulls == 0) {
            vbuf = NULL;
        }
        else {
            col->null_kind = DFB_NULL_USE_BITMASK;
            col->null_value = 0;
            if (row->layout != DFB_LAYOUT_VIEWS &&
                arrow_span(st, nd, &col->validity, vbuf, vbytes, NULL, refs) <
                    0) {
                return -1;
            }
        }
    }

    /* values */
    switch (row->layout) {
        case DFB_LAYOUT_NONE:
            break;
        case DFB_LAYOUT_RUN_END:
            return dfb_arrow_describe_run_end(st, nd, col, dict, refs,
                                              decode_views, name,
                                              dfb_arrow_describe_node);
        case DFB_LAYOUT_BITS:
            if (arrow_span(st, nd, &col->data, a->buffers[1], vbytes, NULL,
                           refs) < 0) {
                return -1;
            }
            break;
        case DFB_LAYOUT_OFFSETS:
            if (describe_offsets(st, nd, col, row->offset_bytes, end, refs,
                                 readable, name) < 0) {
                return -1;
            }
            break;
        case DFB_LAYOUT_VIEWS:
            if (describe_views(st, nd, col, vbuf, vbytes, end, refs, readable,
                               decode_views, name) < 0) {
                return -1;
            }
            break;
        default: {
            /* fixed width: ints, floats, dates, timestamps, durations,
               dictionary codes */
            int64_t size;
            int itemsize = dfb_format_itemsize(&f);
            if (itemsize <= 0) {
                PyErr_Format(PyExc_NotImplementedError,
                             "column '%s': Arrow format '%s' is not "
                             "supported",
                             name, s->format);
                return -1;
            }
            if (dfb_checked_mul(end, itemsize, &size) < 0) {
                return overflow_error(name, end);
            }
            if (arrow_span(st, nd, &col->data, a->buffers[1], size,
                           dfb_arrow_stored_descr(&f), refs) < 0) {
                return -1;
            }
            break;
        }
    }

    if (s->metadata != NULL && dfb_arrow_apply_extension(s, col, name) < 0) {
        return -1;
    }
    if (s->dictionary != NULL) {
        if (dict == NULL || (readable && s->dictionary->dictionary != NULL)) {
            PyErr_Format(PyExc_NotImplementedError,
                         "column '%s': nested dictionaries are not "
                         "supported",
                         name);
            return -1;
        }
        if (describe_dictionary(st, nd, s->dictionary, a->dictionary, dict,
                                dict_error, refs, decode_views, name) < 0) {
            return -1;
        }
        col->index = f;
        col->fmt.type = DFB_T_DICTIONARY;
        col->categories = dict;
        col->is_ordered = (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0;
    }
    return 0;
}

const char *
dfb_arrow_column_name(const arrow_import *imp, int is_table, int64_t c)
{
    const char *n =
        is_table ? imp->schema.children[c]->name : imp->schema.name;
    return n ? n : "";
}
