/* dfbuffer: the _IxChunk helpers of the to_interchange view: a chunk read
 * back from its struct sequence and made anew, the buffer layout of a
 * format, Buffers over new memory, bit copies and the re-basing of a
 * chunk's buffers to its first element (see outward.h).
 */
#include "common.h"
#include "model.h"
#include "probe.h"
#include "outward.h"
#include "bitmap.h"
#include "format.h"
#include "offsets.h"
#include "mem.h"
#include "reader.h"
#include "types.h"
#include "dlpack_types.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

int
dfb_ixv_on_host(const DfbBuffer *b)
{
    return b == NULL || dfb_dlpack_host_readable(b->device.device_type);
}

/* Fills `lay` for Arrow format `fmt`.  Returns 0, or -1 with ValueError
   for a format without a layout here (unsupported, string views). */
int
dfb_ixv_layout_of(const char *fmt, layout *lay)
{
    memset(lay, 0, sizeof(*lay));
    if (dfb_format_parse_arrow(fmt, &lay->f) < 0) {
        goto bad;
    }
    const dfb_type_row *r = dfb_type_row_of(lay->f.type);
    switch (r->layout) {
        case DFB_LAYOUT_NONE:
            lay->kind = L_NONE;
            return 0;
        case DFB_LAYOUT_BITS:
            lay->kind = L_BITS;
            return 0;
        case DFB_LAYOUT_OFFSETS:
            lay->kind = L_STRINGS;
            lay->width = r->offset_bytes;
            return 0;
        case DFB_LAYOUT_FIXED:
            lay->width = dfb_format_itemsize(&lay->f);
            if (lay->width <= 0) {
                goto bad;
            }
            lay->kind = L_FIXED;
            return 0;
        default:
            goto bad; /* views: copied to offsets first */
    }
bad:
    PyErr_Format(PyExc_ValueError,
                 "Arrow format '%s' has no buffer layout to-interchange "
                 "chunks can hold",
                 fmt);
    return -1;
}

/* Returns the int64 value of `o` >= 0 in *out.  Returns 0, or -1 with
   TypeError / ValueError naming field `what`. */
static int
read_count(PyObject *o, const char *what, int64_t *out)
{
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "_IxChunk.%s must be an int, got %.100s",
                     what, Py_TYPE(o)->tp_name);
        return -1;
    }
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "_IxChunk.%s must be >= 0, got %lld",
                     what, v);
        return -1;
    }
    *out = v;
    return 0;
}

/* Reads Buffer-or-None field `o` into *out.  Returns 0, or -1 with
   TypeError. */
static int
read_buffer(dfb_state *st, PyObject *o, const char *what, DfbBuffer **out)
{
    if (o == Py_None) {
        *out = NULL;
        return 0;
    }
    if (!DfbBuffer_Check(st, o) || ((DfbBuffer *)o)->ndim != 1) {
        PyErr_Format(PyExc_TypeError,
                     "_IxChunk.%s must be a 1-D dfbuffer.Buffer or None, got "
                     "%.100s",
                     what, Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = (DfbBuffer *)o;
    return 0;
}

/* Reads and checks the fields of _IxChunk `o` into `c` (borrowed; `o`
   must stay alive while `c` is used).  Returns 0, or -1 with TypeError
   (not an _IxChunk, a field of the wrong type) or ValueError. */
int
dfb_ixv_read_chunk(dfb_state *st, PyObject *o, ixchunk *c)
{
    memset(c, 0, sizeof(*c));
    if (!Py_IS_TYPE(o, st->ixview_chunk_type)) {
        PyErr_Format(PyExc_TypeError, "expected an _IxChunk, got %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *nc = PyStructSequence_GetItem(o, C_NULL_COUNT);
    PyObject *d = PyStructSequence_GetItem(o, C_DICTIONARY);
    PyObject *e = PyStructSequence_GetItem(o, C_ERROR);
    c->format = PyStructSequence_GetItem(o, C_FORMAT);
    if (read_count(PyStructSequence_GetItem(o, C_LENGTH), "length",
                   &c->length) < 0 ||
        read_count(PyStructSequence_GetItem(o, C_OFFSET), "offset",
                   &c->offset) < 0) {
        return -1;
    }
    c->null_count = -1;
    if (nc != Py_None && read_count(nc, "null_count", &c->null_count) < 0) {
        return -1;
    }
    if (read_buffer(st, PyStructSequence_GetItem(o, C_VALIDITY), "validity",
                    &c->validity) < 0 ||
        read_buffer(st, PyStructSequence_GetItem(o, C_OFFSETS), "offsets",
                    &c->offsets) < 0 ||
        read_buffer(st, PyStructSequence_GetItem(o, C_DATA), "data",
                    &c->data) < 0) {
        return -1;
    }
    if (d != Py_None && !Py_IS_TYPE(d, st->ixview_chunk_type)) {
        PyErr_SetString(PyExc_TypeError,
                        "_IxChunk.dictionary must be an _IxChunk or None");
        return -1;
    }
    c->dictionary = d == Py_None ? NULL : d;
    c->error = e == Py_None ? NULL : e;
    if (!PyUnicode_Check(c->format)) {
        PyErr_SetString(PyExc_TypeError, "_IxChunk.format must be a str");
        return -1;
    }
    c->fmt = PyUnicode_AsUTF8(c->format);
    if (c->fmt == NULL) {
        return -1;
    }
    if (c->offset > INT64_MAX - c->length) {
        PyErr_SetString(PyExc_ValueError,
                        "_IxChunk offset + length overflows");
        return -1;
    }
    return 0;
}

/* Raises a fresh copy of a chunk's recorded exception (type(err)(*args)),
   so that each use raises a new one.  Always returns -1. */
int
dfb_ixv_raise_error(PyObject *err)
{
    PyObject *args = PyObject_GetAttrString(err, "args");
    if (args == NULL) {
        return -1;
    }
    PyObject *fresh = PyObject_CallObject((PyObject *)Py_TYPE(err), args);
    Py_DECREF(args);
    if (fresh == NULL) {
        return -1;
    }
    PyErr_SetObject((PyObject *)Py_TYPE(fresh), fresh);
    Py_DECREF(fresh);
    return -1;
}

/* Returns a new Buffer over `size` bytes of `b` from byte `start` (same
   owner, dtype, device and native format; read-only), or NULL with
   ValueError when that range is not inside `b`. */
static PyObject *
buffer_view(dfb_state *st, const DfbBuffer *b, int64_t start, int64_t size)
{
    if (start < 0 || size < 0 || start > (int64_t)b->bufsize ||
        size > (int64_t)b->bufsize - start) {
        PyErr_Format(PyExc_ValueError,
                     "a chunk buffer of %zd bytes is too small for bytes "
                     "[%lld, %lld)",
                     b->bufsize, (long long)start, (long long)(start + size));
        return NULL;
    }
    char *p = b->ptr == NULL ? NULL : b->ptr + start;
    return dfb_buffer_new(st, p, (Py_ssize_t)size, b->owner, b->dtype, 1, NULL,
                          NULL, b->device, 1, b->native);
}

/* Returns a new uint8 NumPy array of max(nbytes, 1) zeroed bytes (its data
   in *out), or NULL with MemoryError. */
PyObject *
dfb_ixv_new_bytes(int64_t nbytes, uint8_t **out)
{
    npy_intp dims[1] = {(npy_intp)(nbytes > 0 ? nbytes : 1)};
    PyObject *arr = PyArray_ZEROS(1, dims, NPY_UINT8, 0);
    if (arr != NULL) {
        *out = PyArray_DATA((PyArrayObject *)arr);
    }
    return arr;
}

/* Returns a new read-only host Buffer of `descr` (borrowed; NULL: uint8)
   over the first `size` bytes of NumPy array `arr` (stolen), or NULL with
   an exception set. */
PyObject *
dfb_ixv_buffer_over(dfb_state *st, PyObject *arr, int64_t size,
                    PyArray_Descr *descr)
{
    if (arr == NULL) {
        return NULL;
    }
    PyArray_Descr *u8 = NULL;
    if (descr == NULL) {
        descr = u8 = PyArray_DescrFromType(NPY_UINT8);
    }
    DLDevice cpu = {kDLCPU, 0};
    PyObject *b = dfb_buffer_new(st, PyArray_DATA((PyArrayObject *)arr),
                                 (Py_ssize_t)size, arr, descr, 1, NULL, NULL,
                                 cpu, 1, DFB_NATIVE_NUMPY);
    Py_XDECREF(u8);
    Py_DECREF(arr);
    return b;
}

/* Copies bits without the GIL when there are many (the caller holds the
   owners of both). */
void
dfb_ixv_copy_bits(const uint8_t *src, int64_t src_offset, int64_t length,
                  uint8_t *dst, int64_t dst_offset)
{
    DFB_NOGIL_IF(length / 8,
                 dfb_bitmap_copy(src, src_offset, length, dst, dst_offset));
}

/* Checks that bitmap Buffer `b` holds bits [0, end).  Returns 0, or -1
   with ValueError. */
int
dfb_ixv_check_bits(const DfbBuffer *b, int64_t end)
{
    if (end / 8 + (end % 8 != 0) > (int64_t)b->bufsize) {
        PyErr_Format(PyExc_ValueError,
                     "a bitmap Buffer of %zd bytes is too small for %lld bits",
                     b->bufsize, (long long)end);
        return -1;
    }
    return 0;
}

/* Returns a new Buffer holding bits [bit_offset, bit_offset + length) of
   bitmap `b` (host memory) from bit 0, or NULL with an exception set. */
static PyObject *
bits_at_zero(dfb_state *st, const DfbBuffer *b, int64_t bit_offset,
             int64_t length)
{
    if (dfb_ixv_check_bits(b, bit_offset + length) < 0) {
        return NULL;
    }
    int64_t nbytes = length / 8 + (length % 8 != 0);
    uint8_t *out;
    PyObject *arr = dfb_ixv_new_bytes(nbytes, &out);
    if (arr == NULL) {
        return NULL;
    }
    dfb_ixv_copy_bits((const uint8_t *)b->ptr, bit_offset, length, out, 0);
    return dfb_ixv_buffer_over(st, arr, nbytes, NULL);
}

void
dfb_ixv_rebased_clear(rebased *r)
{
    Py_CLEAR(r->validity);
    Py_CLEAR(r->offsets);
    Py_CLEAR(r->data);
}

/* Re-bases the buffers of chunk `c` (validity, offsets, data; `validity`
   may be NULL to drop it) for elements [off, off + n) into `r`: the exposed
   offset is 0, or off % 8 when a bit-packed buffer cannot be copied (not
   `allow_copy`, or device memory).  Returns 0, or -1 with an exception
   set (`r` cleared). */
int
dfb_ixv_rebase(dfb_state *st, const ixchunk *c, const DfbBuffer *validity,
               int64_t off, int64_t n, int allow_copy, rebased *r)
{
    layout lay;
    memset(r, 0, sizeof(*r));
    if (dfb_ixv_layout_of(c->fmt, &lay) < 0) {
        return -1;
    }
    const DfbBuffer *data = c->data, *offsets = c->offsets;
    if (n > INT64_MAX / 16 || off > INT64_MAX / 16 - n) {
        /* byte positions below are (off + n + 1) * 8 at most */
        PyErr_Format(PyExc_ValueError,
                     "chunk offset %lld + length %lld is too large",
                     (long long)off, (long long)n);
        return -1;
    }
    if (off == 0) {
        /* already at the first element: the same Buffers */
        r->validity = Py_NewRef(validity ? (PyObject *)validity : Py_None);
        r->offsets = Py_NewRef(offsets ? (PyObject *)offsets : Py_None);
        r->data = Py_NewRef(data ? (PyObject *)data : Py_None);
        return 0;
    }
    int bitpacked = validity != NULL || lay.kind == L_BITS;
    int64_t rest = bitpacked ? off % 8 : 0;
    int copy = rest != 0 && allow_copy && dfb_ixv_on_host(validity) &&
               dfb_ixv_on_host(data);
    int64_t shift = (copy || rest == 0) ? off : off - rest;
    int64_t exposed = off - shift;
    int64_t bits_end = exposed + n; /* exposed bits of a kept bitmap */
    r->offset = exposed;
    if (validity == NULL) {
        r->validity = Py_NewRef(Py_None);
    }
    else if (copy) {
        r->validity = bits_at_zero(st, validity, off, n);
    }
    else {
        r->validity = buffer_view(st, validity, shift / 8,
                                  bits_end / 8 + (bits_end % 8 != 0));
    }
    if (r->validity == NULL) {
        goto fail;
    }
    r->offsets = Py_NewRef(Py_None);
    if (data == NULL) {
        r->data = Py_NewRef(Py_None);
    }
    else if (lay.kind == L_BITS) {
        r->data = copy ? bits_at_zero(st, data, off, n)
                       : buffer_view(st, data, shift / 8,
                                     bits_end / 8 + (bits_end % 8 != 0));
    }
    else if (lay.kind == L_FIXED) {
        /* bounded: off + n < INT64_MAX / 16, checked above */
        r->data = buffer_view(st, data, shift * lay.width,
                              (exposed + n) * lay.width);
    }
    else {
        r->data = Py_NewRef((PyObject *)data);
    }
    if (r->data == NULL) {
        goto fail;
    }
    if (offsets != NULL && lay.kind == L_STRINGS) {
        Py_SETREF(r->offsets, buffer_view(st, offsets, shift * lay.width,
                                          (exposed + n + 1) * lay.width));
        if (r->offsets == NULL) {
            goto fail;
        }
    }
    else if (offsets != NULL) {
        Py_SETREF(r->offsets, Py_NewRef((PyObject *)offsets));
    }
    return 0;
fail:
    dfb_ixv_rebased_clear(r);
    return -1;
}

/* Returns a new _IxChunk of the given fields (every PyObject stolen; NULL
   means an error is set and makes the result NULL), or NULL with an
   exception set. */
PyObject *
dfb_ixv_make_chunk(dfb_state *st, int64_t length, int64_t offset,
                   PyObject *nulls, PyObject *validity, PyObject *offsets,
                   PyObject *data, PyObject *dictionary, PyObject *error,
                   PyObject *format)
{
    PyObject *items[C_N] = {
        PyLong_FromLongLong(length),
        PyLong_FromLongLong(offset),
        nulls,
        validity,
        offsets,
        data,
        dictionary,
        error,
        format,
    };
    PyObject *chunk = NULL;
    for (int i = 0; i < C_N; i++) {
        if (items[i] == NULL) {
            goto fail;
        }
    }
    chunk = PyStructSequence_New(st->ixview_chunk_type);
    if (chunk == NULL) {
        goto fail;
    }
    for (int i = 0; i < C_N; i++) {
        PyStructSequence_SetItem(chunk, i, items[i]);
    }
    /* CPython 3.11's PyStructSequence_New leaves it untracked: the
       collector would count its Buffers as outside references and never
       collect a cycle through them */
    if (!PyObject_GC_IsTracked(chunk)) {
        PyObject_GC_Track(chunk);
    }
    return chunk;
fail:
    for (int i = 0; i < C_N; i++) {
        Py_XDECREF(items[i]);
    }
    return NULL;
}

/* Returns a new _IxChunk of `length` elements that raises `error`
   (borrowed) when used, of format `format` (borrowed), or NULL with an
   exception set. */
PyObject *
dfb_ixv_error_chunk(dfb_state *st, int64_t length, PyObject *error,
                    PyObject *format)
{
    return dfb_ixv_make_chunk(st, length, 0, PyLong_FromLong(0),
                              Py_NewRef(Py_None), Py_NewRef(Py_None),
                              Py_NewRef(Py_None), Py_NewRef(Py_None),
                              Py_NewRef(error), Py_NewRef(format));
}
