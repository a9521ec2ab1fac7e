/* dfbuffer: UTF-8 + offsets to NumPy StringDType arrays, through NumPy's
 * string C API (NpyString_acquire_allocator / NpyString_pack /
 * NpyString_pack_null, NumPy >= 2.0): no Python str per element.
 *
 * The dtype is always StringDType(na_object=None), so that every chunk and
 * every column share one dtype and nulls have a representation.  The bytes
 * are checked to be UTF-8 (StringDType requires it) before they are packed.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/convert.h"

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

/* Reads offset `i` (32 or 64 bits, byte-swapped if `swap`).  Cannot
   fail. */
static inline int64_t
offset_at(const void *offsets, int bits, int swap, int64_t i)
{
    if (bits == 32) {
        uint32_t v;
        memcpy(&v, (const char *)offsets + i * 4, 4);
        if (swap) {
            v = __builtin_bswap32(v);
        }
        return (int64_t)(int32_t)v;
    }
    uint64_t v;
    memcpy(&v, (const char *)offsets + i * 8, 8);
    if (swap) {
        v = __builtin_bswap64(v);
    }
    return (int64_t)v;
}

/* Returns a new 1-D StringDType(na_object=None) array of `n` empty
   strings, or NULL with an exception set. */
static PyArrayObject *
new_string_array(int64_t n)
{
    PyObject *dtypes = PyImport_ImportModule("numpy.dtypes");
    if (dtypes == NULL) {
        return NULL;
    }
    PyObject *cls = PyObject_GetAttrString(dtypes, "StringDType");
    Py_DECREF(dtypes);
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

PyObject *
dfb_strings_to_stringdtype(const char *data, const void *offsets,
                           int offset_bits, int offsets_swapped,
                           int64_t offset, int64_t length,
                           const uint8_t *isnull)
{
    PyArrayObject *arr = new_string_array(length);
    if (arr == NULL || length == 0) {
        return (PyObject *)arr;
    }
    const npy_intp stride = PyArray_ITEMSIZE(arr);
    char *out = PyArray_DATA(arr);
    npy_string_allocator *alloc = NpyString_acquire_allocator(
        (PyArray_StringDTypeObject *)PyArray_DESCR(arr));
    int64_t bad = -1,
            start = offset_at(offsets, offset_bits, offsets_swapped, offset);
    int nomem = 0;
    /* all the bytes of the column ASCII: no string needs checking */
    const int64_t last =
        offset_at(offsets, offset_bits, offsets_swapped, offset + length);
    const int ascii = all_ascii(data + start, last - start);
    for (int64_t i = 0; i < length; i++) {
        int64_t end =
            offset_at(offsets, offset_bits, offsets_swapped, offset + i + 1);
        npy_packed_static_string *ps =
            (npy_packed_static_string *)(out + i * stride);
        if (isnull != NULL && isnull[i]) {
            if (NpyString_pack_null(alloc, ps) < 0) {
                nomem = 1;
                break;
            }
        }
        else {
            const char *s = data + start;
            const int64_t n = end - start;
            if (!ascii && !utf8_valid(s, n)) {
                bad = i;
                break;
            }
            if (NpyString_pack(alloc, ps, s, (size_t)n) < 0) {
                nomem = 1;
                break;
            }
        }
        start = end;
    }
    if (release_allocator(alloc, nomem, &arr) < 0) {
        return NULL;
    }
    if (bad >= 0) {
        Py_DECREF(arr);
        return set_decode_error(
            data + start, offset_at(offsets, offset_bits, offsets_swapped,
                                    offset + bad + 1) -
                              start);
    }
    return (PyObject *)arr;
}

/* Reads code `i` of categorical chunk `c` (its `index` format).  Cannot
   fail. */
static inline int64_t
code_at(const dfb_column *c, int64_t i)
{
    const int bits = c->index.bits;
    const int is_signed = c->index.type != DFB_T_UINT;
#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
    const int swap = c->index.byteorder == '>';
#else
    const int swap = c->index.byteorder == '<';
#endif
    const char *p = c->data.ptr + (c->offset + i) * (bits / 8);
    uint64_t u = 0;
    switch (bits) {
        case 8: {
            uint8_t v;
            memcpy(&v, p, 1);
            return is_signed ? (int64_t)(int8_t)v : (int64_t)v;
        }
        case 16: {
            uint16_t v;
            memcpy(&v, p, 2);
            v = swap ? __builtin_bswap16(v) : v;
            return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
        }
        case 32: {
            uint32_t v;
            memcpy(&v, p, 4);
            v = swap ? __builtin_bswap32(v) : v;
            return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
        }
        default:
            memcpy(&u, p, 8);
            u = swap ? __builtin_bswap64(u) : u;
            /* an unsigned code above INT64_MAX is out of range either way */
            return (!is_signed && u > (uint64_t)INT64_MAX) ? -1 : (int64_t)u;
    }
}

PyObject *
dfb_stringdtype_take(const dfb_column *c, const uint8_t *isnull)
{
    const dfb_column *cats = c->categories;
    const int bits = cats->fmt.type == DFB_T_UTF8 ? 32 : 64;
    const int swap = cats->offsets_swapped;
    const int64_t ncats = cats->length;
    /* every category is checked once, not once per row */
    for (int64_t k = 0; k < ncats; k++) {
        int64_t s = offset_at(cats->offsets.ptr, bits, swap, cats->offset + k);
        int64_t e =
            offset_at(cats->offsets.ptr, bits, swap, cats->offset + k + 1);
        if (!utf8_valid(cats->data.ptr + s, e - s)) {
            return set_decode_error(cats->data.ptr + s, e - s);
        }
    }
    PyArrayObject *arr = new_string_array(c->length);
    if (arr == NULL || c->length == 0) {
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
        int64_t code = code_at(c, i);
        if (code < 0 || code >= ncats) {
            bad = i;
            badcode = code;
            break;
        }
        int64_t s =
            offset_at(cats->offsets.ptr, bits, swap, cats->offset + code);
        int64_t e =
            offset_at(cats->offsets.ptr, bits, swap, cats->offset + code + 1);
        if (NpyString_pack(alloc, ps, cats->data.ptr + s, (size_t)(e - s)) <
            0) {
            nomem = 1;
            break;
        }
    }
    if (release_allocator(alloc, nomem, &arr) < 0) {
        return NULL;
    }
    if (bad >= 0) {
        Py_DECREF(arr);
        PyErr_Format(PyExc_ValueError,
                     "categorical code %lld at row %lld is out of range for "
                     "%lld categories",
                     (long long)badcode, (long long)bad, (long long)ncats);
        return NULL;
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
