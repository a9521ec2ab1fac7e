/* dfbuffer: UTF-8 + offsets to NumPy StringDType arrays, through NumPy's
 * string C API (NpyString_acquire_allocator / NpyString_pack /
 * NpyString_pack_null, NumPy >= 2.0): no Python str per element.
 *
 * The dtype is always StringDType(na_object=None), so that every chunk and
 * every column share one dtype and nulls have a representation.  The bytes
 * are checked to be UTF-8 (StringDType requires it) before they are packed.
 */
#include "common.h"
#include "model.h"
#include "kernels.h"

#include <string.h>

/* Returns 1 if the `n` bytes at `s` are valid UTF-8 (no overlong forms, no
   surrogates, nothing beyond U+10FFFF), else 0.  ASCII runs are skipped
   eight bytes at a time.  Cannot fail. */
static int
utf8_valid(const char *s, int64_t n)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    while (p < end) {
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if ((w & UINT64_C(0x8080808080808080)) == 0) {
                p += 8;
                continue;
            }
        }
        uint8_t c = *p;
        if (c < 0x80) {
            p += 1;
        }
        else if (c >= 0xC2 && c <= 0xDF) {
            if (end - p < 2 || (p[1] & 0xC0) != 0x80) {
                return 0;
            }
            p += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            if (end - p < 3 || (p[1] & 0xC0) != 0x80 ||
                (p[2] & 0xC0) != 0x80 || (c == 0xE0 && p[1] < 0xA0) ||
                (c == 0xED && p[1] > 0x9F)) {
                return 0;
            }
            p += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            if (end - p < 4 || (p[1] & 0xC0) != 0x80 ||
                (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80 ||
                (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F)) {
                return 0;
            }
            p += 4;
        }
        else {
            return 0;
        }
    }
    return 1;
}

/* Returns 1 if the `n` bytes at `s` are all ASCII, else 0.  Cannot
   fail. */
static int
all_ascii(const char *s, int64_t n)
{
    uint64_t acc = 0, w;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t a, b, c, d;
        memcpy(&a, s + i, 8);
        memcpy(&b, s + i + 8, 8);
        memcpy(&c, s + i + 16, 8);
        memcpy(&d, s + i + 24, 8);
        acc |= a | b | c | d;
        if (acc & UINT64_C(0x8080808080808080)) {
            return 0;
        }
    }
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < n; i++) {
        acc |= (uint8_t)s[i];
    }
    return (acc & UINT64_C(0x8080808080808080)) == 0;
}

/* Sets UnicodeDecodeError for the `n` invalid bytes at `s` (CPython's own
   message, through its decoder).  Always returns NULL. */
static PyObject *
set_decode_error(const char *s, int64_t n)
{
    PyObject *u = PyUnicode_DecodeUTF8(
        s, (Py_ssize_t)(n > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : n), "strict");
    if (u != NULL) { /* cannot happen: utf8_valid and CPython agree */
        Py_DECREF(u);
        PyErr_SetString(PyExc_ValueError, "invalid UTF-8 in a string column");
    }
    return NULL;
}

/* Returns a new 1-D StringDType(na_object=None) array of `n` empty
   strings, or NULL with an exception set. */
static PyArrayObject *
new_string_array(int64_t n)
{
    PyObject *cls = dfb_import_attr("numpy.dtypes", "StringDType");
    if (cls == NULL) {
        return NULL;
    }
    PyObject *kw = Py_BuildValue("{sO}", "na_object", Py_None);
    PyObject *empty = PyTuple_New(0);
    PyObject *d = NULL;
    if (kw != NULL && empty != NULL) {
        d = PyObject_Call(cls, empty, kw);
    }
    Py_XDECREF(kw);
    Py_XDECREF(empty);
    Py_DECREF(cls);
    if (d == NULL) {
        return NULL;
    }
    if (!PyArray_DescrCheck(d)) {
        Py_DECREF(d);
        PyErr_SetString(PyExc_TypeError,
                        "numpy.dtypes.StringDType() is not a dtype");
        return NULL;
    }
    npy_intp dims[1] = {(npy_intp)n};
    /* steals d; NumPy gives the array its own descr (and allocator) */
    return (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, (PyArray_Descr *)d, 1, dims, NULL, NULL, 0, NULL);
}

/* Releases the allocator of *arr (acquired by the caller); when `nomem`
   (an NpyString_pack* call failed), also drops *arr and sets MemoryError.
   Returns 0, or -1 with *arr NULL. */
static int
release_allocator(npy_string_allocator *alloc, int nomem, PyArrayObject **arr)
{
    NpyString_release_allocator(alloc);
    if (nomem) {
        Py_CLEAR(*arr);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The bytes of empty strings when a column has no data buffer. */
static const char no_data = 0;

/* Packs the `o->count - 1` strings whose offsets `o` reads (spans within
   `data`) into the StringDType array data `out` (`stride` bytes apart)
   with `alloc`; `ascii`: the bytes of [first, last) are all ASCII (a
   string inside needs no UTF-8 check).  `native32`: o reads native int32
   offsets (a constant where this is inlined, so each layout gets its own
   loop).  Returns -1 when all were packed, else the row that failed, its
   span in *bad_start, *bad_end and in *why 1 (MemoryError), 2 (span out of
   range) or 3 (not UTF-8). */
static inline __attribute__((always_inline)) int64_t
pack_strings(const dfb_offsets *op, const char *data, const uint8_t *isnull,
             npy_string_allocator *alloc, char *out, npy_intp stride,
             int ascii, int64_t first, int64_t last, const int native32,
             int64_t *bad_start, int64_t *bad_end, int *why)
{
    const dfb_offsets o = *op;
    const int64_t n =
        o.count - 1; /* the reader's own count: no index checks */
    int64_t start = dfb_offsets_load(&o, 0);
    for (int64_t i = 0; i < n; i++) {
        int64_t end;
        const dfb_code rc = native32 ? dfb_offsets_next_i32(&o, i, start, &end)
                                     : dfb_offsets_next(&o, i, start, &end);
        npy_packed_static_string *ps =
            (npy_packed_static_string *)(out + i * stride);
        if (isnull != NULL && isnull[i]) {
            if (NpyString_pack_null(alloc, ps) < 0) {
                *why = 1;
                return i;
            }
        }
        else {
            if (rc != DFB_OK || (!(ascii && start >= first && end <= last) &&
                                 !utf8_valid(data + start, end - start))) {
                *bad_start = start;
                *bad_end = end;
                *why = rc != DFB_OK ? 2 : 3;
                return i;
            }
            if (NpyString_pack(alloc, ps, data + start,
                               (size_t)(end - start)) < 0) {
                *why = 1;
                return i;
            }
        }
        start = end;
    }
    return -1;
}

PyObject *
dfb_strings_to_stringdtype(const dfb_column *c, const uint8_t *isnull)
{
    const int64_t length = c->length;
    dfb_offsets o;
    if (dfb_column_offsets(c, &o) < 0) {
        return NULL;
    }
    PyArrayObject *arr = new_string_array(length);
    if (arr == NULL || length == 0) {
        return (PyObject *)arr;
    }
    /* offsets read once each through core's checked reader: every string
       is checked where it is packed (the memory may have changed since it
       was validated) */
    const char *data = c->data.ptr != NULL ? c->data.ptr : &no_data;
    const npy_intp stride = PyArray_ITEMSIZE(arr);
    char *out = PyArray_DATA(arr);
    /* all the bytes of the column's window [first, last) ASCII: a string
       inside it needs no UTF-8 check */
    int64_t first = 0, last = 0;
    const int ascii = dfb_offsets_get(&o, 0, &first) == DFB_OK &&
                      dfb_offsets_get(&o, length, &last) == DFB_OK &&
                      first <= last && all_ascii(data + first, last - first);
    npy_string_allocator *alloc = NpyString_acquire_allocator(
        (PyArray_StringDTypeObject *)PyArray_DESCR(arr));
    int64_t bad_start = 0, bad_end = 0;
    int why = 0;
    const int64_t bad =
        o.width == 4 && !o.swapped
            ? pack_strings(&o, data, isnull, alloc, out, stride, ascii, first,
                           last, 1, &bad_start, &bad_end, &why)
            : pack_strings(&o, data, isnull, alloc, out, stride, ascii, first,
                           last, 0, &bad_start, &bad_end, &why);
    if (release_allocator(alloc, why == 1, &arr) < 0) {
        return NULL;
    }
    if (bad >= 0) {
        Py_DECREF(arr);
        return why == 2
                   ? dfb_bad_span_error(bad, bad_start, bad_end, o.limit)
                   : set_decode_error(data + bad_start, bad_end - bad_start);
    }
    return (PyObject *)arr;
}

/* One category of dfb_stringdtype_take: its bytes, read once. */
typedef struct {
    const char *s;
    int64_t n;
} category_span;

/* Reads the spans of the `ncats` categories of `cats` (a validated string
   chunk) once, each checked inside its data and for UTF-8.  Returns a
   PyMem table (free with PyMem_Free), or NULL with ValueError /
   UnicodeDecodeError / MemoryError set. */
static category_span *
category_spans(const dfb_column *cats)
{
    const int64_t ncats = cats->length;
    dfb_offsets o;
    if (dfb_column_offsets(cats, &o) < 0) {
        return NULL;
    }
    category_span *t =
        PyMem_Malloc((size_t)(ncats > 0 ? ncats : 1) * sizeof(category_span));
    if (t == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    const char *data = cats->data.ptr != NULL ? cats->data.ptr : &no_data;
    for (int64_t k = 0; k < ncats; k++) {
        int64_t s, e;
        if (dfb_offsets_span(&o, k, &s, &e) != DFB_OK) {
            PyMem_Free(t);
            (void)dfb_bad_span_error(k, s, e, o.limit);
            return NULL;
        }
        if (!utf8_valid(data + s, e - s)) {
            PyMem_Free(t);
            (void)set_decode_error(data + s, e - s);
            return NULL;
        }
        t[k].s = data + s;
        t[k].n = e - s;
    }
    return t;
}

PyObject *
dfb_stringdtype_take(const dfb_column *c, const uint8_t *isnull)
{
    /* every category is read and checked once, not once per row */
    dfb_codes codes;
    if (dfb_column_codes(c, c->categories->length, &codes) < 0) {
        return NULL;
    }
    category_span *cats = category_spans(c->categories);
    if (cats == NULL) {
        return NULL;
    }
    PyArrayObject *arr = new_string_array(c->length);
    if (arr == NULL || c->length == 0) {
        PyMem_Free(cats);
        return (PyObject *)arr;
    }
    const npy_intp stride = PyArray_ITEMSIZE(arr);
    char *out = PyArray_DATA(arr);
    npy_string_allocator *alloc = NpyString_acquire_allocator(
        (PyArray_StringDTypeObject *)PyArray_DESCR(arr));
    int64_t bad = -1, badcode = 0;
    int nomem = 0;
    for (int64_t i = 0; i < c->length; i++) {
        npy_packed_static_string *ps =
            (npy_packed_static_string *)(out + i * stride);
        if (isnull != NULL && isnull[i]) {
            if (NpyString_pack_null(alloc, ps) < 0) {
                nomem = 1;
                break;
            }
            continue;
        }
        int64_t code;
        if (dfb_codes_get(&codes, i, &code) != DFB_OK) {
            bad = i;
            badcode = code;
            break;
        }
        if (NpyString_pack(alloc, ps, cats[code].s, (size_t)cats[code].n) <
            0) {
            nomem = 1;
            break;
        }
    }
    PyMem_Free(cats);
    if (release_allocator(alloc, nomem, &arr) < 0) {
        return NULL;
    }
    if (bad >= 0) {
        Py_DECREF(arr);
        return dfb_bad_code_error(bad, badcode, codes.ncats);
    }
    return (PyObject *)arr;
}

PyObject *
dfb_views_to_stringdtype(const dfb_column *c, const uint8_t *isnull)
{
    const int64_t length = c->length;
    PyArrayObject *arr = new_string_array(length);
    if (arr == NULL || length == 0) {
        return (PyObject *)arr;
    }
    const npy_intp stride = PyArray_ITEMSIZE(arr);
    char *out = PyArray_DATA(arr);
    npy_string_allocator *alloc = NpyString_acquire_allocator(
        (PyArray_StringDTypeObject *)PyArray_DESCR(arr));
    const char *bad = NULL;
    int64_t badn = 0;
    int failed = 0; /* 1: MemoryError to set, -1: ValueError set */
    for (int64_t i = 0; i < length; i++) {
        npy_packed_static_string *ps =
            (npy_packed_static_string *)(out + i * stride);
        if (isnull != NULL && isnull[i]) {
            if (NpyString_pack_null(alloc, ps) < 0) {
                failed = 1;
                break;
            }
            continue;
        }
        const char *s;
        int64_t n;
        if (dfb_view_at(c, c->offset + i, &s, &n) < 0) {
            failed = -1;
            break;
        }
        if (!utf8_valid(s, n)) {
            bad = s;
            badn = n;
            break;
        }
        if (NpyString_pack(alloc, ps, s, (size_t)n) < 0) {
            failed = 1;
            break;
        }
    }
    if (release_allocator(alloc, failed == 1, &arr) < 0) {
        return NULL;
    }
    if (failed || bad != NULL) {
        Py_DECREF(arr);
        return failed ? NULL : set_decode_error(bad, badn);
    }
    return (PyObject *)arr;
}
