/* dfbuffer: the typed view of an Arrow import behind
 * dfbuffer.to_interchange (dfbuffer._arrow_interchange).
 *
 * _ixview_import imports a producer once (arrow_interchange.c's
 * dfb_arrow_ix_*: the Arrow import, validation and describer, called
 * directly; string views are copied to large strings there) and returns
 * struct sequences: an _IxField per column (name, formats, the interchange
 * dtypes of the column and its buffers) and an _IxChunk per column chunk
 * whose Buffers are already re-based to the chunk's first element: the
 * validity bitmap (and bool data) is copied to bit 0 when allow_copy and
 * the memory is on the host, else moved by whole bytes with the remaining
 * 0..7 bits in `offset`; string offsets and fixed-width data are moved to
 * the first element.  _ixview_slice re-bases a slice of a chunk the same
 * way (null count recounted), _ixview_concat joins chunks into new memory
 * and _ixview_values converts one chunk with the NumPy converters.  The
 * bit work is core's (bitmap.h) behind the GIL-releasing wrappers.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/arrow_internal.h"
#include "dfbuffer/convert.h"
#include "dfbuffer/probe.h"
#include "dfbuffer/ixview.h"
#include "dfbuffer/args.h"
#include "bitmap.h"
#include "format.h"
#include "offsets.h"
#include "mem.h"
#include "reader.h"
#include "types.h"
#include "dlpack_types.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* The struct sequence types                                            */
/* ------------------------------------------------------------------ */

enum {
    F_NAME,
    F_FORMAT,
    F_DICTIONARY,
    F_ORDERED,
    F_NULLABLE,
    F_DTYPE,
    F_DATA_DTYPE,
    F_OFFSETS_DTYPE,
    F_N
};

static PyStructSequence_Field field_fields[] = {
    {"name", "column name (str)"},
    {"format",
     "Arrow format of the column's buffers ('U' for string views copied to "
     "large strings; the codes' format for dictionaries)"},
    {"dictionary", "an _IxField for the dictionary's values, or None"},
    {"ordered", "dictionary-encoded with ordered categories (bool)"},
    {"nullable", "the Arrow field is nullable (bool)"},
    {"dtype",
     "interchange dtype (kind, bit_width, format, '=') of the column, or "
     "None when the protocol has none for the format"},
    {"data_dtype", "interchange dtype of the data buffer, or None"},
    {"offsets_dtype", "interchange dtype of the offsets buffer, or None"},
    {NULL, NULL},
};

static PyStructSequence_Desc field_desc = {
    "dfbuffer._interchange._IxField",
    "One column of an Arrow import as dfbuffer.to_interchange presents it.",
    field_fields,
    F_N,
};

enum {
    C_LENGTH,
    C_OFFSET,
    C_NULL_COUNT,
    C_VALIDITY,
    C_OFFSETS,
    C_DATA,
    C_DICTIONARY,
    C_ERROR,
    C_FORMAT,
    C_N
};

static PyStructSequence_Field chunk_fields[] = {
    {"length", "number of elements"},
    {"offset",
     "element offset into the buffers: 0, or the 0..7 bits a bitmap keeps "
     "when re-basing it would need a copy"},
    {"null_count", "number of nulls, or None when unknown (device data)"},
    {"validity", "the validity bitmap Buffer (None when no nulls)"},
    {"offsets", "the string offsets Buffer, or None"},
    {"data", "the data Buffer (values, bits, codes or UTF-8 bytes), or None"},
    {"dictionary", "an _IxChunk of the dictionary's values, or None"},
    {"error",
     "None, or the exception to raise when the chunk is used (a format the "
     "interchange protocol cannot serve)"},
    {"format", "Arrow format of the buffers"},
    {NULL, NULL},
};

static PyStructSequence_Desc chunk_desc = {
    "dfbuffer._interchange._IxChunk",
    "One column chunk of an Arrow import, with re-based Buffers.",
    chunk_fields,
    C_N,
};

/* ------------------------------------------------------------------ */
/* Helpers                                                              */
/* ------------------------------------------------------------------ */

/* Returns 1 when there is no Buffer `b` or the host can read its memory
   (core's predicate), else 0. */
static int
on_host(const DfbBuffer *b)
{
    return b == NULL || dfb_dlpack_host_readable(b->device.device_type);
}

/* How the buffers of a format are laid out. */
typedef enum {
    L_NONE = 0, /* no re-based buffers (null type) */
    L_BITS,     /* bit-packed data (bool) */
    L_STRINGS,  /* offsets (width 4 or 8) + bytes */
    L_FIXED     /* `width` bytes per element */
} layout_kind;

typedef struct {
    layout_kind kind;
    int width;
    dfb_format f;
} layout;

/* Fills `lay` for Arrow format `fmt`.  Returns 0, or -1 with ValueError
   for a format without a layout here (unsupported, string views). */
static int
layout_of(const char *fmt, layout *lay)
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

/* One _IxChunk read back (borrowed references). */
typedef struct {
    int64_t length, offset, null_count;   /* null_count -1: unknown */
    DfbBuffer *validity, *offsets, *data; /* NULL when None */
    PyObject *dictionary;                 /* _IxChunk or NULL */
    PyObject *error;                      /* exception or NULL */
    PyObject *format;                     /* str */
    const char *fmt;                      /* its UTF-8 */
} ixchunk;

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
static int
read_chunk(dfb_state *st, PyObject *o, ixchunk *c)
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
static int
raise_error(PyObject *err)
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
static PyObject *
new_bytes(int64_t nbytes, uint8_t **out)
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
static PyObject *
buffer_over(dfb_state *st, PyObject *arr, int64_t size, PyArray_Descr *descr)
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
static void
copy_bits(const uint8_t *src, int64_t src_offset, int64_t length, uint8_t *dst,
          int64_t dst_offset)
{
    DFB_NOGIL_IF(length / 8,
                 dfb_bitmap_copy(src, src_offset, length, dst, dst_offset));
}

/* Checks that bitmap Buffer `b` holds bits [0, end).  Returns 0, or -1
   with ValueError. */
static int
check_bits(const DfbBuffer *b, int64_t end)
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
    if (check_bits(b, bit_offset + length) < 0) {
        return NULL;
    }
    int64_t nbytes = length / 8 + (length % 8 != 0);
    uint8_t *out;
    PyObject *arr = new_bytes(nbytes, &out);
    if (arr == NULL) {
        return NULL;
    }
    copy_bits((const uint8_t *)b->ptr, bit_offset, length, out, 0);
    return buffer_over(st, arr, nbytes, NULL);
}

/* The re-based buffers of one chunk (new references; Py_None when
   absent). */
typedef struct {
    int64_t offset;
    PyObject *validity, *offsets, *data;
} rebased;

static void
rebased_clear(rebased *r)
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
static int
rebase(dfb_state *st, const ixchunk *c, const DfbBuffer *validity, int64_t off,
       int64_t n, int allow_copy, rebased *r)
{
    layout lay;
    memset(r, 0, sizeof(*r));
    if (layout_of(c->fmt, &lay) < 0) {
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
    int copy = rest != 0 && allow_copy && on_host(validity) && on_host(data);
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
    rebased_clear(r);
    return -1;
}

/* Returns a new _IxChunk of the given fields (every PyObject stolen; NULL
   means an error is set and makes the result NULL), or NULL with an
   exception set. */
static PyObject *
make_chunk(dfb_state *st, int64_t length, int64_t offset, PyObject *nulls,
           PyObject *validity, PyObject *offsets, PyObject *data,
           PyObject *dictionary, PyObject *error, PyObject *format)
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
static PyObject *
error_chunk(dfb_state *st, int64_t length, PyObject *error, PyObject *format)
{
    return make_chunk(st, length, 0, PyLong_FromLong(0), Py_NewRef(Py_None),
                      Py_NewRef(Py_None), Py_NewRef(Py_None),
                      Py_NewRef(Py_None), Py_NewRef(error), Py_NewRef(format));
}

/* Returns a new interchange dtype tuple (DtypeKind(kind), bits, fmt, "="),
   or NULL with an exception set. */
static PyObject *
dtype_tuple(dfb_state *st, int kind, int bits, const char *fmt)
{
    PyObject *k = dfb_enum_member(st->dtype_kind, kind);
    if (k == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Niss)", k, bits, fmt, "=");
}

/* ------------------------------------------------------------------ */
/* _IxField                                                             */
/* ------------------------------------------------------------------ */

/* The interchange protocol's DtypeKind values. */
enum {
    K_INT = 0,
    K_UINT = 1,
    K_FLOAT = 2,
    K_BOOL = 20,
    K_STRING = 21,
    K_DATETIME = 22,
    K_CATEGORICAL = 23
};

/* Stores new references to the column dtype, data-buffer dtype and
   offsets dtype (Py_None where there is none) of a column of Arrow format
   `fmt`, dictionary-encoded if `is_dict`.  Returns 0, or -1 with an
   exception set (nothing stored). */
static int
field_dtypes(dfb_state *st, const char *fmt, int is_dict, PyObject **dtype,
             PyObject **data_dtype, PyObject **offsets_dtype)
{
    dfb_format f;
    int kind, bits;
    PyObject *dt = NULL, *ddt = NULL, *odt = NULL;
    int known = dfb_format_parse_arrow(fmt, &f) == 0 &&
                dfb_type_interchange(&f, &kind, &bits) == 0;
    if (!known) {
        *dtype = Py_NewRef(Py_None);
        *data_dtype = Py_NewRef(Py_None);
        *offsets_dtype = Py_NewRef(Py_None);
        return 0;
    }
    int codes = is_dict && (f.type == DFB_T_INT || f.type == DFB_T_UINT);
    dt = dtype_tuple(st, codes ? K_CATEGORICAL : kind, bits, fmt);
    const dfb_type_row *r = dfb_type_row_of(f.type);
    if (r->layout == DFB_LAYOUT_OFFSETS) {
        ddt = dtype_tuple(st, K_UINT, 8, "C");
        odt = r->offset_bytes == 4 ? dtype_tuple(st, K_INT, 32, "i")
                                   : dtype_tuple(st, K_INT, 64, "l");
    }
    else if (r->layout == DFB_LAYOUT_VIEWS) {
        /* its chunks are copied to large strings (or raise) */
        ddt = dtype_tuple(st, kind, bits, fmt);
        odt = dtype_tuple(st, K_INT, 64, "l");
    }
    else if (r->storage == 'i' && r->result != 'i') {
        /* dates, timestamps, durations: stored as plain integers */
        ddt = bits == 32 ? dtype_tuple(st, K_INT, 32, "i")
                         : dtype_tuple(st, K_INT, 64, "l");
    }
    else {
        ddt = dtype_tuple(st, kind, bits, fmt);
    }
    if (odt == NULL && ddt != NULL && dt != NULL &&
        r->layout != DFB_LAYOUT_OFFSETS && r->layout != DFB_LAYOUT_VIEWS) {
        odt = Py_NewRef(Py_None);
    }
    if (dt == NULL || ddt == NULL || odt == NULL) {
        Py_XDECREF(dt);
        Py_XDECREF(ddt);
        Py_XDECREF(odt);
        return -1;
    }
    *dtype = dt;
    *data_dtype = ddt;
    *offsets_dtype = odt;
    return 0;
}

/* Returns a new _IxField (name, fmt, dictionary field for `dict_fmt` or
   None, ordered, nullable, the dtypes), or NULL with an exception set.
   `name` and `fmt` are borrowed str objects; `dict_fmt` a str or None. */
static PyObject *
make_field(dfb_state *st, PyObject *name, PyObject *fmt, PyObject *dict_fmt,
           int ordered, int nullable)
{
    if (!PyUnicode_Check(name) || !PyUnicode_Check(fmt) ||
        (dict_fmt != Py_None && !PyUnicode_Check(dict_fmt))) {
        PyErr_SetString(PyExc_TypeError,
                        "a column description has no str "
                        "name / format");
        return NULL;
    }
    const char *f = PyUnicode_AsUTF8(fmt);
    if (f == NULL) {
        return NULL;
    }
    PyObject *dict = Py_None;
    if (dict_fmt != Py_None) {
        PyObject *empty = PyUnicode_FromString("");
        if (empty == NULL) {
            return NULL;
        }
        dict = make_field(st, empty, dict_fmt, Py_None, 0, 0);
        Py_DECREF(empty);
        if (dict == NULL) {
            return NULL;
        }
    }
    else {
        Py_INCREF(dict);
    }
    PyObject *dt, *ddt, *odt;
    if (field_dtypes(st, f, dict_fmt != Py_None, &dt, &ddt, &odt) < 0) {
        Py_DECREF(dict);
        return NULL;
    }
    PyObject *field = PyStructSequence_New(st->ixview_field_type);
    if (field == NULL) {
        Py_DECREF(dict);
        Py_DECREF(dt);
        Py_DECREF(ddt);
        Py_DECREF(odt);
        return NULL;
    }
    PyStructSequence_SetItem(field, F_NAME, Py_NewRef(name));
    PyStructSequence_SetItem(field, F_FORMAT, Py_NewRef(fmt));
    PyStructSequence_SetItem(field, F_DICTIONARY, dict);
    PyStructSequence_SetItem(field, F_ORDERED, PyBool_FromLong(ordered));
    PyStructSequence_SetItem(field, F_NULLABLE, PyBool_FromLong(nullable));
    PyStructSequence_SetItem(field, F_DTYPE, dt);
    PyStructSequence_SetItem(field, F_DATA_DTYPE, ddt);
    PyStructSequence_SetItem(field, F_OFFSETS_DTYPE, odt);
    return field;
}

/* ------------------------------------------------------------------ */
/* _ixview_import                                                       */
/* ------------------------------------------------------------------ */

/* Returns a new _IxChunk of described chunk `col` (the Arrow format
   `fmt`, borrowed; its dictionary's `dict_fmt`, and `dict_error` when only
   the dictionary could not be described), re-based, or NULL with an
   exception set. */
static PyObject *
chunk_from_column(dfb_state *st, const dfb_column *col, PyObject *dict_error,
                  PyObject *fmt, PyObject *dict_fmt, int allow_copy)
{
    if (col->from_runs || PyUnicode_CompareWithASCIIString(fmt, "+r") == 0) {
        /* run-end encoded: no interchange dtype, raised when used */
        PyErr_Format(PyExc_NotImplementedError,
                     "Arrow format '%U' (run-end encoded) has no "
                     "interchange-protocol dtype",
                     fmt);
        PyObject *err = dfb_err_take();
        PyObject *chunk = error_chunk(st, col->length, err, fmt);
        Py_DECREF(err);
        return chunk;
    }
    ixchunk c;
    memset(&c, 0, sizeof(c));
    c.length = col->length;
    c.offset = col->offset;
    c.format = fmt;
    c.fmt = PyUnicode_AsUTF8(fmt);
    if (c.fmt == NULL) {
        return NULL;
    }
    /* the describer's spans: 1-D Buffers, or no owner when absent */
    c.validity = (DfbBuffer *)col->validity.owner;
    c.offsets = (DfbBuffer *)col->offsets.owner;
    c.data = (DfbBuffer *)col->data.owner;
    PyObject *dchunk = NULL;
    if (col->fmt.type != DFB_T_DICTIONARY) {
        dchunk = Py_NewRef(Py_None);
    }
    else if (dict_error != NULL) {
        dchunk =
            error_chunk(st, col->categories->length, dict_error, dict_fmt);
    }
    else {
        dchunk = chunk_from_column(st, col->categories, NULL, dict_fmt,
                                   Py_None, allow_copy);
    }
    if (dchunk == NULL) {
        return NULL;
    }
    rebased r;
    if (rebase(st, &c, c.validity, c.offset, c.length, allow_copy, &r) < 0) {
        Py_DECREF(dchunk);
        return NULL;
    }
    PyObject *nulls = col->null_count < 0
                          ? Py_NewRef(Py_None)
                          : PyLong_FromLongLong(col->null_count);
    return make_chunk(st, c.length, r.offset, nulls, r.validity, r.offsets,
                      r.data, dchunk, Py_NewRef(Py_None), Py_NewRef(fmt));
}

PyDoc_STRVAR(
    ixview_import_doc,
    "_ixview_import(obj, allow_copy=True, /)\n--\n\n"
    "Private helper of dfbuffer.to_interchange: import an Arrow PyCapsule\n"
    "producer once.  Returns (fields, chunks): a tuple of _IxField (one per\n"
    "column) and a list (one per record batch) of lists (one per column) of\n"
    "_IxChunk whose Buffers are re-based to the chunk's first element (see\n"
    "_IxChunk.offset).  Columns the protocol cannot serve get a chunk with\n"
    "an `error` to raise when used.");

/* Fills fields[k] and the format strings fmts[k] / dfmts[k] (new
   references) of kept column `c` of `x`.  Returns 0, or -1 with an
   exception set. */
static int
field_of(dfb_state *st, const dfb_arrow_ix *x, int64_t c, PyObject **field,
         PyObject **fmt, PyObject **dfmt)
{
    const struct ArrowSchema *s = dfb_arrow_ix_schema(x, c);
    *field = *dfmt = NULL;
    *fmt = dfb_arrow_ix_format(s, x->allow_copy);
    if (*fmt == NULL) {
        return -1;
    }
    *dfmt = s->dictionary != NULL && s->dictionary->format != NULL
                ? dfb_arrow_ix_format(s->dictionary, x->allow_copy)
                : Py_NewRef(Py_None);
    if (*dfmt == NULL) {
        return -1;
    }
    PyObject *name =
        PyUnicode_FromString(dfb_arrow_column_name(&x->imp, x->is_table, c));
    if (name == NULL) {
        return -1;
    }
    *field = make_field(st, name, *fmt, *dfmt,
                        (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0,
                        (s->flags & ARROW_FLAG_NULLABLE) != 0);
    Py_DECREF(name);
    return *field == NULL ? -1 : 0;
}

/* What chunk_of needs: the kept columns' formats and dictionary formats
   (tuples, borrowed). */
typedef struct {
    dfb_state *st;
    PyObject *fmts, *dfmts;
    int allow_copy;
} ix_ctx;

/* A dfb_arrow_ix_make_fn: the _IxChunk of `ch` of kept column `k`.
   Returns a new reference or NULL with an exception set. */
static PyObject *
chunk_of(void *ctx, const dfb_arrow_ix_chunk *ch, Py_ssize_t k)
{
    const ix_ctx *c = ctx;
    PyObject *fmt = PyTuple_GET_ITEM(c->fmts, k);
    if (ch->error != NULL) {
        return error_chunk(c->st, ch->length, ch->error, fmt);
    }
    return chunk_from_column(c->st, &ch->col, ch->dict_error, fmt,
                             PyTuple_GET_ITEM(c->dfmts, k), c->allow_copy);
}

/* _ixview_import(obj, allow_copy=True): see the docstring.  Returns a new
   tuple or NULL with an exception set. */
static PyObject *
ixview_import(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    static const char *const kw[] = {"obj", "allow_copy", NULL};
    static const dfb_argspec spec = {"_ixview_import", kw, 2, 1};
    dfb_state *st;
    dfb_arrow_ix x;
    PyObject *fields = NULL, *chunks = NULL, *fmts = NULL, *dfmts = NULL;
    PyObject *result = NULL;
    if (dfb_arrow_ix_open_args(module, &spec, args, nargs, kwnames, &st, &x) <
        0) {
        goto done;
    }
    fields = PyTuple_New(x.nkept);
    fmts = PyTuple_New(x.nkept);
    dfmts = PyTuple_New(x.nkept);
    if (fields == NULL || fmts == NULL || dfmts == NULL) {
        goto done;
    }
    for (int64_t c = 0, k = 0; c < x.ncols; c++) {
        if (x.skip[c]) {
            continue;
        }
        PyObject *f, *fmt, *dfmt;
        int r = field_of(st, &x, c, &f, &fmt, &dfmt);
        /* the tuples own what was made, even on failure */
        PyTuple_SET_ITEM(fmts, k, fmt ? fmt : Py_NewRef(Py_None));
        PyTuple_SET_ITEM(dfmts, k, dfmt ? dfmt : Py_NewRef(Py_None));
        PyTuple_SET_ITEM(fields, k, f ? f : Py_NewRef(Py_None));
        k++;
        if (r < 0) {
            goto done;
        }
    }
    ix_ctx ctx = {st, fmts, dfmts, x.allow_copy};
    chunks = dfb_arrow_ix_rows(st, &x, chunk_of, &ctx);
    if (chunks == NULL) {
        goto done;
    }
    result = PyTuple_Pack(2, fields, chunks);
done:
    Py_XDECREF(fields);
    Py_XDECREF(chunks);
    Py_XDECREF(fmts);
    Py_XDECREF(dfmts);
    dfb_arrow_ix_close(&x);
    return result;
}

/* ------------------------------------------------------------------ */
/* _ixview_slice                                                        */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(ixview_slice_doc,
             "_ixview_slice(chunk, start, length, allow_copy=True, /)\n--\n\n"
             "A new _IxChunk viewing elements [start, start + length) of\n"
             "`chunk`, re-based like _ixview_import's (no copy but of a\n"
             "bitmap at an odd bit offset when allow_copy); the null count\n"
             "is recounted (None for device memory), and a chunk without\n"
             "nulls drops its validity.");

/* _ixview_slice(chunk, start, length, allow_copy=True): see the
   docstring.  Returns a new _IxChunk or NULL with TypeError / ValueError
   set. */
static PyObject *
ixview_slice(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
             PyObject *kwnames)
{
    static const char *const kw[] = {"chunk", "start", "length", "allow_copy",
                                     NULL};
    static const dfb_argspec spec = {"_ixview_slice", kw, 4, 3};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    int allow_copy = 1;
    int64_t start, length;
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0 ||
        dfb_parse_flag(a[3], &allow_copy) < 0) {
        return NULL;
    }
    long long v[2];
    for (int i = 0; i < 2; i++) {
        if (PyBool_Check(a[i + 1])) {
            PyErr_SetString(PyExc_TypeError,
                            "_ixview_slice: start and length must be ints");
            return NULL;
        }
        PyObject *idx = PyNumber_Index(a[i + 1]);
        if (idx == NULL) {
            return NULL;
        }
        v[i] = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (v[i] == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    start = v[0];
    length = v[1];
    PyObject *obj = a[0];
    dfb_state *st = dfb_state_from_module(module);
    ixchunk c;
    if (read_chunk(st, obj, &c) < 0) {
        return NULL;
    }
    if (start < 0 || length < 0 || start > c.length ||
        length > c.length - start) {
        PyErr_Format(PyExc_ValueError,
                     "slice [%lld, %lld + %lld) is outside the chunk's %lld "
                     "elements",
                     (long long)start, (long long)start, (long long)length,
                     (long long)c.length);
        return NULL;
    }
    if (c.error != NULL) {
        return make_chunk(st, length, 0, PyLong_FromLong(0),
                          Py_NewRef(Py_None), Py_NewRef(Py_None),
                          Py_NewRef(Py_None), Py_NewRef(Py_None),
                          Py_NewRef(c.error), Py_NewRef(c.format));
    }
    int64_t off = c.offset + start;
    PyObject *nulls;
    const DfbBuffer *validity = c.validity;
    if (validity != NULL && !on_host(validity)) {
        nulls = Py_NewRef(Py_None); /* not counted on the host */
    }
    else if (validity != NULL) {
        if (check_bits(validity, off + length) < 0) {
            return NULL;
        }
        int64_t zeros =
            dfb_count_zero_bits((const uint8_t *)validity->ptr, off, length);
        nulls = PyLong_FromLongLong(zeros);
        if (zeros == 0) {
            validity = NULL;
        }
    }
    else {
        nulls = PyLong_FromLong(0);
    }
    if (nulls == NULL) {
        return NULL;
    }
    rebased r;
    if (rebase(st, &c, validity, off, length, allow_copy, &r) < 0) {
        Py_DECREF(nulls);
        return NULL;
    }
    return make_chunk(st, length, r.offset, nulls, r.validity, r.offsets,
                      r.data, Py_NewRef(c.dictionary ? c.dictionary : Py_None),
                      Py_NewRef(Py_None), Py_NewRef(c.format));
}

/* ------------------------------------------------------------------ */
/* _ixview_concat                                                       */
/* ------------------------------------------------------------------ */

/* Sets bits [pos, pos + n) of `bits` to 1.  Cannot fail. */
static void
set_ones(uint8_t *bits, int64_t pos, int64_t n)
{
    int64_t i = pos, end = pos + n;
    for (; i < end && (i & 7); i++) {
        bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
    if (end - i >= 8) {
        dfb_memset(bits + (i >> 3), 0xff, (size_t)((end - i) / 8));
        i += 8 * ((end - i) / 8);
    }
    for (; i < end; i++) {
        bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
}

/* Stores code `v` (checked to fit by the caller) as element `i`.  Cannot
   fail. */
static void
store_code(char *p, int width, int64_t i, int64_t v)
{
    switch (width) {
        case 1: {
            uint8_t x = (uint8_t)v;
            memcpy(p + i, &x, 1);
            break;
        }
        case 2: {
            uint16_t x = (uint16_t)v;
            memcpy(p + 2 * i, &x, 2);
            break;
        }
        case 4: {
            uint32_t x = (uint32_t)v;
            memcpy(p + 4 * i, &x, 4);
            break;
        }
        default: {
            uint64_t x = (uint64_t)v;
            memcpy(p + 8 * i, &x, 8);
        }
    }
}

PyDoc_STRVAR(
    ixview_concat_doc,
    "_ixview_concat(format, chunks, dictionary=None, maps=None)\n--\n\n"
    "A new _IxChunk joining `chunks` (host memory, all of Arrow format\n"
    "`format`) into new memory at offset 0; no chunks give an empty one.\n"
    "For dictionary codes, `maps` (one int64 array per chunk) maps each\n"
    "chunk's codes to the joined `dictionary` (an _IxChunk), null slots\n"
    "get code 0; a code outside its map raises ValueError.");

/* _ixview_concat(format, chunks, dictionary=None, maps=None): see the
   docstring.  Returns a new _IxChunk, or NULL with TypeError, ValueError,
   OverflowError, BufferError (device memory) or MemoryError set. */
static PyObject *
ixview_concat(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    static const char *const kw[] = {"format", "chunks", "dictionary", "maps",
                                     NULL};
    static const dfb_argspec spec = {"_ixview_concat", kw, 4, 2};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    PyObject *format = a[0], *seq = a[1];
    PyObject *dictionary = a[2] ? a[2] : Py_None;
    PyObject *maps_obj = a[3] ? a[3] : Py_None;
    if (!PyUnicode_Check(format)) {
        PyErr_SetString(PyExc_TypeError,
                        "_ixview_concat: format must be a str");
        return NULL;
    }
    dfb_state *st = dfb_state_from_module(module);
    const char *fmt = PyUnicode_AsUTF8(format);
    layout lay;
    if (fmt == NULL || layout_of(fmt, &lay) < 0) {
        return NULL;
    }
    if (dictionary != Py_None &&
        !Py_IS_TYPE(dictionary, st->ixview_chunk_type)) {
        PyErr_SetString(PyExc_TypeError,
                        "dictionary must be an _IxChunk or None");
        return NULL;
    }
    PyObject *list = PySequence_Fast(seq, "chunks must be a sequence");
    if (list == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
    ixchunk *cs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(ixchunk));
    PyObject **maps = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(PyObject *));
    PyObject *validity = NULL, *offsets = NULL, *data = NULL, *out = NULL;
    PyObject *dict_ref = NULL;
    if (cs == NULL || maps == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int is_codes = maps_obj != Py_None;
    if (is_codes) {
        if (lay.kind != L_FIXED ||
            (lay.f.type != DFB_T_INT && lay.f.type != DFB_T_UINT)) {
            PyErr_Format(PyExc_ValueError,
                         "maps need integer codes, not format '%s'", fmt);
            goto done;
        }
        PyObject *mlist = PySequence_Fast(maps_obj, "maps must be a sequence");
        if (mlist == NULL) {
            goto done;
        }
        if (PySequence_Fast_GET_SIZE(mlist) != n) {
            Py_DECREF(mlist);
            PyErr_Format(PyExc_ValueError, "%zd maps for %zd chunks",
                         PySequence_Fast_GET_SIZE(mlist), n);
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            maps[i] = PyArray_FROM_OTF(PySequence_Fast_GET_ITEM(mlist, i),
                                       NPY_INT64, NPY_ARRAY_IN_ARRAY);
            if (maps[i] == NULL ||
                PyArray_NDIM((PyArrayObject *)maps[i]) != 1) {
                if (maps[i] != NULL) {
                    PyErr_SetString(PyExc_ValueError, "each map must be 1-D");
                }
                Py_DECREF(mlist);
                goto done;
            }
        }
        Py_DECREF(mlist);
    }
    /* read and check every chunk before anything is copied */
    int64_t total = 0, nulls = 0, nbytes_str = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        ixchunk *c = &cs[i];
        if (read_chunk(st, PySequence_Fast_GET_ITEM(list, i), c) < 0) {
            goto done;
        }
        if (c->length > INT64_MAX / 16 - total) {
            /* sizes below are (total + 1) * 8 at most */
            PyErr_SetString(PyExc_ValueError,
                            "the joined chunks are too long");
            goto done;
        }
        if (c->error != NULL) {
            raise_error(c->error);
            goto done;
        }
        if (strcmp(c->fmt, fmt) != 0) {
            PyErr_Format(PyExc_ValueError,
                         "chunk %zd has format '%s', not '%s'", i, c->fmt,
                         fmt);
            goto done;
        }
        const DfbBuffer *bufs[3] = {c->validity, c->offsets, c->data};
        for (int k = 0; k < 3; k++) {
            if (bufs[k] != NULL &&
                dfb_buffer_require_host(bufs[k], "joining chunks") < 0) {
                goto done;
            }
        }
        int64_t end = c->offset + c->length;
        if (c->validity != NULL) {
            if (check_bits(c->validity, end) < 0) {
                goto done;
            }
            nulls += dfb_count_zero_bits((const uint8_t *)c->validity->ptr,
                                         c->offset, c->length);
        }
        if (c->length > 0 && c->data == NULL && lay.kind != L_NONE &&
            !(lay.kind == L_STRINGS)) {
            PyErr_Format(PyExc_ValueError, "chunk %zd has no data buffer", i);
            goto done;
        }
        if (lay.kind == L_BITS && c->data != NULL &&
            check_bits(c->data, end) < 0) {
            goto done;
        }
        if (lay.kind == L_FIXED && c->data != NULL &&
            (int64_t)c->data->bufsize / lay.width < end) {
            PyErr_Format(PyExc_ValueError,
                         "chunk %zd: a data Buffer of %zd bytes is too small "
                         "for %lld elements",
                         i, c->data->bufsize, (long long)end);
            goto done;
        }
        if (lay.kind == L_STRINGS) {
            int64_t first = 0, last = 0;
            dfb_error err;
            if (c->offsets == NULL ||
                (int64_t)c->offsets->bufsize / lay.width < end + 1) {
                PyErr_Format(PyExc_ValueError,
                             "chunk %zd: the offsets Buffer is missing or "
                             "too small",
                             i);
                goto done;
            }
            if (dfb_offsets_validate(c->offsets->ptr, lay.width, 0, c->offset,
                                     c->offset, &first, NULL,
                                     &err) != DFB_OK ||
                dfb_offsets_validate(c->offsets->ptr, lay.width, 0, c->offset,
                                     end, &last, NULL, &err) != DFB_OK) {
                PyErr_Format(PyExc_ValueError, "chunk %zd: %s", i,
                             err.message);
                goto done;
            }
            if (last > 0 &&
                (c->data == NULL || last > (int64_t)c->data->bufsize)) {
                PyErr_Format(PyExc_ValueError,
                             "chunk %zd: string offsets reach byte %lld of a "
                             "shorter data buffer",
                             i, (long long)last);
                goto done;
            }
            if (last - first > PY_SSIZE_T_MAX - nbytes_str) {
                PyErr_SetString(PyExc_ValueError,
                                "the joined string data is too large");
                goto done;
            }
            nbytes_str += last - first;
        }
        total += c->length;
    }
    /* validity */
    if (nulls > 0) {
        uint8_t *bits;
        int64_t nb = total / 8 + (total % 8 != 0);
        PyObject *arr = new_bytes(nb, &bits);
        if (arr == NULL) {
            goto done;
        }
        for (Py_ssize_t i = 0, pos = 0; i < n; pos += cs[i].length, i++) {
            if (cs[i].validity != NULL) {
                copy_bits((const uint8_t *)cs[i].validity->ptr, cs[i].offset,
                          cs[i].length, bits, pos);
            }
            else {
                set_ones(bits, pos, cs[i].length);
            }
        }
        validity = buffer_over(st, arr, nb, NULL);
    }
    else {
        validity = Py_NewRef(Py_None);
    }
    if (validity == NULL) {
        goto done;
    }
    offsets = Py_NewRef(Py_None);
    switch (lay.kind) {
        case L_NONE:
            data = Py_NewRef(Py_None);
            break;
        case L_BITS: {
            uint8_t *bits;
            int64_t nb = total / 8 + (total % 8 != 0);
            PyObject *arr = new_bytes(nb, &bits);
            if (arr == NULL) {
                goto done;
            }
            for (Py_ssize_t i = 0, pos = 0; i < n; pos += cs[i].length, i++) {
                copy_bits((const uint8_t *)cs[i].data->ptr, cs[i].offset,
                          cs[i].length, bits, pos);
            }
            data = buffer_over(st, arr, nb, NULL);
            break;
        }
        case L_STRINGS: {
            int w = lay.width;
            if (w == 4 && nbytes_str > INT32_MAX) {
                PyErr_SetString(PyExc_OverflowError,
                                "joined string data exceeds int32 offsets");
                goto done;
            }
            uint8_t *o, *d;
            PyObject *oarr = new_bytes((total + 1) * w, &o);
            if (oarr == NULL) {
                goto done;
            }
            PyObject *darr = new_bytes(nbytes_str, &d);
            if (darr == NULL) {
                Py_DECREF(oarr);
                goto done;
            }
            int64_t pos = 0, k = 0;
            for (Py_ssize_t i = 0; i < n; i++) {
                /* the offsets read again, through core's checked reader:
                   each once, every span inside the chunk's data and the
                   data made */
                const DfbBuffer *db = cs[i].data;
                dfb_offsets ro;
                dfb_error err;
                if (dfb_offsets_init(&ro, cs[i].offsets->ptr,
                                     (int64_t)cs[i].offsets->bufsize, w, 0,
                                     cs[i].offset, cs[i].length + 1,
                                     db != NULL ? (int64_t)db->bufsize : 0,
                                     &err) != DFB_OK) {
                    Py_DECREF(oarr);
                    Py_DECREF(darr);
                    PyErr_SetString(PyExc_ValueError, err.message);
                    goto done;
                }
                int64_t prev = dfb_offsets_load(&ro, 0);
                for (int64_t j = 0; j < cs[i].length; j++) {
                    int64_t v;
                    if (dfb_offsets_next(&ro, j, prev, &v) != DFB_OK ||
                        v - prev > nbytes_str - pos) {
                        Py_DECREF(oarr);
                        Py_DECREF(darr);
                        PyErr_SetString(PyExc_ValueError,
                                        "string offsets changed while they "
                                        "were joined");
                        goto done;
                    }
                    dfb_memcpy(d + pos, db->ptr + prev, (size_t)(v - prev));
                    pos += v - prev;
                    prev = v;
                    k++;
                    if (w == 4) {
                        int32_t x = (int32_t)pos;
                        memcpy(o + 4 * k, &x, 4);
                    }
                    else {
                        memcpy(o + 8 * k, &pos, 8);
                    }
                }
            }
            PyArray_Descr *od =
                PyArray_DescrFromType(w == 4 ? NPY_INT32 : NPY_INT64);
            Py_SETREF(offsets, buffer_over(st, oarr, (total + 1) * w, od));
            Py_DECREF(od);
            data = buffer_over(st, darr, nbytes_str, NULL);
            if (offsets == NULL) {
                goto done;
            }
            break;
        }
        case L_FIXED: {
            int w = lay.width;
            char *d;
            PyObject *arr = new_bytes(total * w, (uint8_t **)&d);
            if (arr == NULL) {
                goto done;
            }
            int is_signed = lay.f.type == DFB_T_INT;
            int64_t pos = 0;
            for (Py_ssize_t i = 0; i < n; i++) {
                const ixchunk *c = &cs[i];
                if (c->length == 0) {
                    continue;
                }
                dfb_memcpy(d + pos * w, c->data->ptr + c->offset * w,
                           (size_t)(c->length * w));
                if (is_codes) {
                    /* the codes copied, read back through core's checked
                       reader */
                    dfb_codes rd;
                    PyArrayObject *m = (PyArrayObject *)maps[i];
                    const int64_t *mp = PyArray_DATA(m);
                    int64_t msize = PyArray_DIM(m, 0);
                    int64_t limit =
                        is_signed
                            ? (int64_t)((UINT64_C(1) << (8 * w - 1)) - 1)
                            : (w == 8
                                   ? INT64_MAX
                                   : (int64_t)((UINT64_C(1) << (8 * w)) - 1));
                    if (dfb_codes_init(&rd, d + pos * w, c->length * w, w,
                                       is_signed, 0, 0, c->length, msize,
                                       NULL) != DFB_OK) {
                        Py_DECREF(arr);
                        PyErr_SetString(PyExc_ValueError,
                                        "dictionary codes of an unsupported "
                                        "width");
                        goto done;
                    }
                    for (int64_t j = 0; j < c->length; j++) {
                        int64_t v = 0;
                        int valid =
                            c->validity == NULL ||
                            ((((const uint8_t *)
                                   c->validity->ptr)[(c->offset + j) >> 3] >>
                              ((c->offset + j) & 7)) &
                             1);
                        if (valid && msize > 0) {
                            int64_t code;
                            if (dfb_codes_get(&rd, j, &code) != DFB_OK) {
                                Py_DECREF(arr);
                                PyErr_Format(PyExc_ValueError,
                                             "dictionary code %lld out of "
                                             "range [0, %lld)",
                                             (long long)code,
                                             (long long)msize);
                                goto done;
                            }
                            v = mp[code];
                            if (v < 0 || v > limit) {
                                Py_DECREF(arr);
                                PyErr_Format(
                                    PyExc_ValueError,
                                    "joined dictionary code %lld does not "
                                    "fit format '%s'",
                                    (long long)v, fmt);
                                goto done;
                            }
                        }
                        store_code(d, w, pos + j, v);
                    }
                }
                pos += c->length;
            }
            PyArray_Descr *descr = NULL;
            for (Py_ssize_t i = 0; i < n && descr == NULL; i++) {
                if (cs[i].data != NULL) {
                    descr = cs[i].data->dtype;
                    Py_INCREF(descr);
                }
            }
            if (descr == NULL &&
                (descr = dfb_arrow_stored_descr(&lay.f)) == NULL) {
                Py_DECREF(arr);
                goto done;
            }
            data = buffer_over(st, arr, total * w, descr);
            Py_DECREF(descr);
            break;
        }
    }
    if (data == NULL) {
        goto done;
    }
    dict_ref = Py_NewRef(dictionary);
    out =
        make_chunk(st, total, 0, PyLong_FromLongLong(nulls), validity, offsets,
                   data, dict_ref, Py_NewRef(Py_None), Py_NewRef(format));
    validity = offsets = data = NULL; /* stolen */
done:
    Py_XDECREF(validity);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    for (Py_ssize_t i = 0; maps != NULL && i < n; i++) {
        Py_XDECREF(maps[i]);
    }
    PyMem_Free(maps);
    PyMem_Free(cs);
    Py_DECREF(list);
    return out;
}

/* ------------------------------------------------------------------ */
/* _ixview_values                                                       */
/* ------------------------------------------------------------------ */

/* Fills span `s` from Buffer `b` (NULL: absent).  Cannot fail. */
static void
span_of(dfb_span *s, const DfbBuffer *b)
{
    if (b == NULL) {
        memset(s, 0, sizeof(*s));
        return;
    }
    s->ptr = b->ptr;
    s->size = b->bufsize;
    s->owner = (PyObject *)b;
}

PyDoc_STRVAR(ixview_values_doc,
             "_ixview_values(chunk, /)\n--\n\n"
             "The values of one host _IxChunk as a NumPy array, through\n"
             "dfbuffer's converters (a MaskedArray where it has nulls;\n"
             "strings as objects, dates as datetime64[D]; dictionary codes\n"
             "as integers).");

/* _ixview_values(chunk): see the docstring.  Returns a new array or NULL
   with TypeError, ValueError, BufferError (device memory) or the
   converter's error. */
static PyObject *
ixview_values(PyObject *module, PyObject *obj)
{
    dfb_state *st = dfb_state_from_module(module);
    ixchunk c;
    if (read_chunk(st, obj, &c) < 0) {
        return NULL;
    }
    if (c.error != NULL) {
        return raise_error(c.error), NULL;
    }
    const DfbBuffer *bufs[3] = {c.validity, c.offsets, c.data};
    for (int k = 0; k < 3; k++) {
        if (bufs[k] != NULL &&
            dfb_buffer_require_host(bufs[k], "reading values") < 0) {
            return NULL;
        }
    }
    dfb_column col;
    memset(&col, 0, sizeof(col));
    if (dfb_format_parse_arrow(c.fmt, &col.fmt) < 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Arrow format '%s' is not supported", c.fmt);
        return NULL;
    }
    col.length = c.length;
    col.offset = c.offset;
    col.null_count = -1; /* counted by the converter: a hand-made chunk's
                            field is not trusted */
    col.null_kind =
        c.validity != NULL ? DFB_NULL_USE_BITMASK : DFB_NULL_NON_NULLABLE;
    span_of(&col.data, c.data);
    span_of(&col.validity, c.validity);
    span_of(&col.offsets, c.offsets);
    if (dfb_column_validate(&col) < 0) {
        return NULL;
    }
    return dfb_columns_to_ndarray(st, &col, 1, DFB_NULLS_MASK, 1);
}

/* ------------------------------------------------------------------ */
/* Module                                                               */
/* ------------------------------------------------------------------ */

static PyMethodDef ixview_methods[] = {
    {"_ixview_import", (PyCFunction)(void (*)(void))ixview_import,
     METH_FASTCALL | METH_KEYWORDS, ixview_import_doc},
    {"_ixview_slice", (PyCFunction)(void (*)(void))ixview_slice,
     METH_FASTCALL | METH_KEYWORDS, ixview_slice_doc},
    {"_ixview_concat", (PyCFunction)(void (*)(void))ixview_concat,
     METH_FASTCALL | METH_KEYWORDS, ixview_concat_doc},
    {"_ixview_values", ixview_values, METH_O, ixview_values_doc},
    {NULL, NULL, 0, NULL},
};

int
dfb_ixview_state_init(PyObject *m, dfb_state *st)
{
    st->ixview_field_type = PyStructSequence_NewType(&field_desc);
    if (st->ixview_field_type == NULL) {
        return -1;
    }
    st->ixview_chunk_type = PyStructSequence_NewType(&chunk_desc);
    if (st->ixview_chunk_type == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(m, "_IxField",
                              (PyObject *)st->ixview_field_type) < 0 ||
        PyModule_AddObjectRef(m, "_IxChunk",
                              (PyObject *)st->ixview_chunk_type) < 0) {
        return -1;
    }
    return PyModule_AddFunctions(m, ixview_methods);
}
