/* dfbuffer: interchange columns (and any dfb_column) to NumPy arrays.
 *
 * Two halves: the interchange walk (Python calls on the producer's column
 * objects) fills one dfb_column per chunk, with spans owned by dfbuffer
 * Buffers wrapping the producer's buffer objects; then the kernel
 * (dfb_columns_to_ndarray) validates every span and converts in C.  The
 * Arrow path (arrow.c) fills dfb_column itself and shares the kernel.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/convert.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/frame.h"
#include "dfbuffer/probe.h"
#include "layout.h"
#include "offsets.h"

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------------ */
/* Module state: interned names and cached datetime dtypes              */
/* ------------------------------------------------------------------ */

/* The datetime dtypes cached in module state (st->descr.datetime[i]). */
static const char *const datetime_descrs[DFB_N_DATETIME] = {
    "M8[s]",  "M8[ms]", "M8[us]", "M8[ns]", "m8[s]",
    "m8[ms]", "m8[us]", "m8[ns]", "M8[D]"};

int
dfb_convert_state_init(dfb_state *st)
{
    /* The datetime dtypes are made here, once, not lazily: no conversion
       ever fills module state (safe for concurrent first use). */
    for (int i = 0; i < DFB_N_DATETIME; i++) {
        st->descr.datetime[i] = dfb_descr_from_typestr(datetime_descrs[i]);
        if (st->descr.datetime[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

void
dfb_convert_state_clear(dfb_state *st)
{
    for (int i = 0; i < DFB_N_DATETIME; i++) {
        Py_CLEAR(st->descr.datetime[i]);
    }
}

/* Returns a new reference to the datetime/timedelta descr `i` (made by
   dfb_convert_state_init at module exec; never filled here, so
   concurrent first use is safe).  Cannot fail. */
static PyArray_Descr *
cached_descr(dfb_state *st, int i)
{
    return (PyArray_Descr *)Py_NewRef(st->descr.datetime[i]);
}

/* Returns 1 if byte order `bo` ('<', '>', '=', '|') is not the host's. */
static int
is_swapped(char bo)
{
#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
    return bo == '>';
#else
    return bo == '<';
#endif
}

/* Returns a new reference to the NumPy dtype a conversion of `f` produces
   (core's dfb_format_result_typestr; datetime64[D] for DATE32), the
   datetime ones from the module state's cache, or NULL with
   NotImplementedError for bit-packed and variable-width types. */
static PyArray_Descr *
format_to_descr(dfb_state *st, const dfb_format *f)
{
    char ts[32];
    if (dfb_format_result_typestr(f, ts, sizeof(ts)) < 0) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "no fixed-width NumPy dtype for this type "
                        "(bit-packed or variable-width)");
        return NULL;
    }
    if (ts[1] != 'M' && ts[1] != 'm') {
        return dfb_descr_from_typestr(ts);
    }
    for (int i = 0; i < DFB_N_DATETIME; i++) {
        if (strcmp(ts + 1, datetime_descrs[i]) == 0) {
            PyArray_Descr *d = cached_descr(st, i);
            if (is_swapped(ts[0])) {
                PyArray_Descr *s = PyArray_DescrNewByteorder(d, NPY_SWAP);
                Py_DECREF(d);
                return s;
            }
            return d;
        }
    }
    return dfb_descr_from_typestr(ts);
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

/* Human name of a dfb_type for messages. */
static const char *
type_name(dfb_type t)
{
    switch (t) {
        case DFB_T_NULL:
            return "null";
        case DFB_T_BOOL_BIT:
            return "bit-packed bool";
        case DFB_T_BOOL8:
            return "bool";
        case DFB_T_INT:
            return "int";
        case DFB_T_UINT:
            return "uint";
        case DFB_T_FLOAT:
            return "float";
        case DFB_T_UTF8:
            return "utf8 string";
        case DFB_T_LARGE_UTF8:
            return "large utf8 string";
        case DFB_T_STRING_VIEW:
            return "string view";
        case DFB_T_BINARY:
            return "binary";
        case DFB_T_LARGE_BINARY:
            return "large binary";
        case DFB_T_DATE32:
            return "date32";
        case DFB_T_DATE64:
            return "date64";
        case DFB_T_TIMESTAMP:
            return "timestamp";
        case DFB_T_DURATION:
            return "duration";
        case DFB_T_DICTIONARY:
            return "categorical";
        default:
            return "invalid";
    }
}

/* Reads the integer at `p` (bits 8..64, signed or not, byte-swapped if
   `swap`), sign- or zero-extended to int64.  Cannot fail. */
static inline int64_t
read_int(const char *p, int bits, int is_signed, int swap)
{
    switch (bits) {
        case 8:
            return is_signed ? (int64_t)(int8_t)*p : (int64_t)(uint8_t)*p;
        case 16: {
            uint16_t v;
            memcpy(&v, p, 2);
            if (swap) {
                v = (uint16_t)__builtin_bswap16(v);
            }
            return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
        }
        case 32: {
            uint32_t v;
            memcpy(&v, p, 4);
            if (swap) {
                v = __builtin_bswap32(v);
            }
            return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
        }
        default: {
            uint64_t v;
            memcpy(&v, p, 8);
            if (swap) {
                v = __builtin_bswap64(v);
            }
            return (int64_t)v;
        }
    }
}

/* Returns 1 if the float of `bits` at `p` (maybe byte-swapped) is NaN. */
static inline int
is_nan_at(const char *p, int bits, int swap)
{
    switch (bits) {
        case 16: {
            uint16_t v;
            memcpy(&v, p, 2);
            if (swap) {
                v = (uint16_t)__builtin_bswap16(v);
            }
            return (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0;
        }
        case 32: {
            uint32_t v;
            memcpy(&v, p, 4);
            if (swap) {
                v = __builtin_bswap32(v);
            }
            return (v & 0x7f800000u) == 0x7f800000u && (v & 0x007fffffu);
        }
        default: {
            uint64_t v;
            memcpy(&v, p, 8);
            if (swap) {
                v = __builtin_bswap64(v);
            }
            return (v & UINT64_C(0x7ff0000000000000)) ==
                       UINT64_C(0x7ff0000000000000) &&
                   (v & UINT64_C(0x000fffffffffffff));
        }
    }
}

/* Returns a new 1-D array of `n` elements of `descr` (stolen), or NULL. */
static PyArrayObject *
new_array(PyArray_Descr *descr, int64_t n)
{
    npy_intp dims[1] = {(npy_intp)n};
    return (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, 1, dims,
                                                 NULL, NULL, 0, NULL);
}

/* Returns 0, or -1 with RuntimeError when a copy is needed and not
   allowed. */
static int
need_copy(int allow_copy, const char *why)
{
    if (!allow_copy) {
        PyErr_Format(PyExc_RuntimeError,
                     "converting %s needs a copy, but allow_copy=False", why);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Validation                                                           */
/* ------------------------------------------------------------------ */

/* Checks that span `s` holds `need` bytes.  Returns 0, or -1 with
   ValueError naming `what`. */
static int
check_span(const dfb_span *s, int64_t need, const char *what)
{
    if (need <= 0) {
        return 0;
    }
    if (s->ptr == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "the %s buffer is missing (NULL) but %lld bytes are "
                     "needed",
                     what, (long long)need);
        return -1;
    }
    if (s->size < need) {
        PyErr_Format(PyExc_ValueError,
                     "the %s buffer is too small: %lld bytes needed for the "
                     "column's offset and length, it has %lld",
                     what, (long long)need, (long long)s->size);
        return -1;
    }
    return 0;
}

/* Returns the bytes `count` items of `itemsize` take (core's
   dfb_mul_bytes), or -1 with ValueError on overflow. */
static int64_t
mul_bytes(int64_t count, int64_t itemsize)
{
    int64_t r;
    dfb_error err;
    if (dfb_mul_bytes(count, itemsize, &r, &err) != DFB_OK) {
        PyErr_SetString(PyExc_ValueError, err.message);
        return -1;
    }
    return r;
}

/* Returns 1 if validity memory is consulted for `col`. */
static int
uses_validity(const dfb_column *col)
{
    return (col->null_kind == DFB_NULL_USE_BITMASK ||
            col->null_kind == DFB_NULL_USE_BYTEMASK) &&
           col->null_count != 0 && col->validity.ptr != NULL;
}

/* dfb_column_validate at nesting depth `depth`. */
static int
validate(const dfb_column *col, int depth)
{
    if (col->length < 0 || col->offset < 0) {
        PyErr_Format(PyExc_ValueError, "negative column %s (%lld)",
                     col->length < 0 ? "size" : "offset",
                     (long long)(col->length < 0 ? col->length : col->offset));
        return -1;
    }
    if (col->offset > INT64_MAX - col->length - 8) {
        PyErr_SetString(PyExc_ValueError,
                        "the column's offset + length overflows");
        return -1;
    }
    int64_t end = col->offset + col->length;
    int64_t need;
    if (col->length == 0) {
        end = 0; /* nothing is read */
    }
    switch (col->fmt.type) {
        case DFB_T_NULL:
            break;
        case DFB_T_BOOL_BIT:
            if (check_span(&col->data, (end + 7) / 8, "data") < 0) {
                return -1;
            }
            break;
        case DFB_T_UTF8:
        case DFB_T_LARGE_UTF8: {
            if (col->length == 0) {
                break;
            }
            int osize = col->fmt.type == DFB_T_UTF8 ? 4 : 8;
            if ((need = mul_bytes(end + 1, osize)) < 0 ||
                check_span(&col->offsets, need, "offsets") < 0) {
                return -1;
            }
            int64_t prev;
            dfb_bad_offset bad;
            if (dfb_offsets_validate(col->offsets.ptr, osize,
                                     col->offsets_swapped, col->offset, end,
                                     &prev, &bad, NULL) != DFB_OK) {
                PyErr_Format(PyExc_ValueError,
                             "string offsets are %s at element %lld",
                             bad.value < 0 ? "negative" : "decreasing",
                             (long long)(bad.index - col->offset));
                return -1;
            }
            if (prev > 0 && check_span(&col->data, prev, "data") < 0) {
                return -1;
            }
            if (prev > col->data.size) {
                PyErr_Format(PyExc_ValueError,
                             "string offsets point beyond the data buffer "
                             "(%lld > %lld bytes)",
                             (long long)prev, (long long)col->data.size);
                return -1;
            }
            break;
        }
        case DFB_T_STRING_VIEW:
            /* the views; each is checked against its buffers where it is
               read (dfb_view_at) */
            if ((need = mul_bytes(end, 16)) < 0 ||
                check_span(&col->data, need, "data (views)") < 0) {
                return -1;
            }
            if (col->variadic_sizes == NULL) {
                /* only the Arrow importer describes views (the
                   interchange protocol has no variadic buffers) */
                PyErr_Format(PyExc_NotImplementedError,
                             "dfbuffer cannot convert %s columns",
                             type_name(col->fmt.type));
                return -1;
            }
            if (col->n_variadic < 0 ||
                (col->n_variadic > 0 && col->variadic == NULL)) {
                PyErr_SetString(PyExc_ValueError,
                                "string views without their data buffers");
                return -1;
            }
            break;
        case DFB_T_DICTIONARY:
            if ((need = mul_bytes(end, col->index.bits / 8)) < 0 ||
                check_span(&col->data, need, "data (codes)") < 0) {
                return -1;
            }
            if (col->categories == NULL) {
                PyErr_SetString(PyExc_ValueError,
                                "a categorical column has no categories");
                return -1;
            }
            if (depth > 0 || col->categories->fmt.type == DFB_T_DICTIONARY) {
                PyErr_SetString(PyExc_NotImplementedError,
                                "nested categoricals are not supported");
                return -1;
            }
            if (validate(col->categories, depth + 1) < 0) {
                return -1;
            }
            break;
        default: {
            int isz = dfb_format_itemsize(&col->fmt);
            if (isz <= 0) {
                PyErr_Format(PyExc_NotImplementedError,
                             "dfbuffer cannot convert %s columns",
                             type_name(col->fmt.type));
                return -1;
            }
            if ((need = mul_bytes(end, isz)) < 0 ||
                check_span(&col->data, need, "data") < 0) {
                return -1;
            }
        }
    }
    if (uses_validity(col)) {
        need = col->null_kind == DFB_NULL_USE_BITMASK ? (end + 7) / 8 : end;
        if (col->validity.size < need) {
            PyErr_Format(PyExc_ValueError,
                         "the validity buffer is too short: %lld bytes "
                         "needed for the column's offset and length, it has "
                         "%lld",
                         (long long)need, (long long)col->validity.size);
            return -1;
        }
    }
    else if ((col->null_kind == DFB_NULL_USE_BITMASK ||
              col->null_kind == DFB_NULL_USE_BYTEMASK) &&
             col->null_count > 0 && col->validity.ptr == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "the column reports %lld nulls but has no validity "
                     "buffer",
                     (long long)col->null_count);
        return -1;
    }
    return 0;
}

int
dfb_column_validate(const dfb_column *col)
{
    return validate(col, 0);
}

/* ------------------------------------------------------------------ */
/* Null masks                                                           */
/* ------------------------------------------------------------------ */

/* Physical integer layout read for sentinels: fills bits/signedness.
   Returns 0, or -1 if the type has no integer storage. */
static int
int_layout(const dfb_column *c, int *bits, int *is_signed, char *bo)
{
    const dfb_format *f =
        c->fmt.type == DFB_T_DICTIONARY ? &c->index : &c->fmt;
    *bo = f->byteorder;
    switch (f->type) {
        case DFB_T_INT:
        case DFB_T_TIMESTAMP:
        case DFB_T_DURATION:
        case DFB_T_DATE32:
        case DFB_T_DATE64:
        case DFB_T_DICTIONARY:
            *bits = f->bits;
            *is_signed = 1;
            return 0;
        case DFB_T_UINT:
        case DFB_T_BOOL8:
            *bits = f->bits;
            *is_signed = 0;
            return 0;
        default:
            return -1;
    }
}

/* Counts the NaNs among `n` native doubles at `p` (any alignment). */
static int64_t
count_nan_f64(const char *p, int64_t n)
{
    int64_t count = 0, i = 0;
#if defined(__SSE2__)
    for (; i + 8 <= n; i += 8) {
        __m128d a = _mm_loadu_pd((const double *)(const void *)(p + i * 8));
        __m128d b =
            _mm_loadu_pd((const double *)(const void *)(p + i * 8 + 16));
        __m128d c =
            _mm_loadu_pd((const double *)(const void *)(p + i * 8 + 32));
        __m128d d =
            _mm_loadu_pd((const double *)(const void *)(p + i * 8 + 48));
        int m = _mm_movemask_pd(_mm_cmpunord_pd(a, a)) |
                (_mm_movemask_pd(_mm_cmpunord_pd(b, b)) << 2) |
                (_mm_movemask_pd(_mm_cmpunord_pd(c, c)) << 4) |
                (_mm_movemask_pd(_mm_cmpunord_pd(d, d)) << 6);
        if (m) {
            count += __builtin_popcount((unsigned)m);
        }
    }
#endif
    for (; i < n; i++) {
        double v;
        memcpy(&v, p + i * 8, 8);
        count += v != v;
    }
    return count;
}

/* Counts the NaNs among `n` native floats at `p` (any alignment). */
static int64_t
count_nan_f32(const char *p, int64_t n)
{
    int64_t count = 0, i = 0;
#if defined(__SSE2__)
    for (; i + 8 <= n; i += 8) {
        __m128 a = _mm_loadu_ps((const float *)(const void *)(p + i * 4));
        __m128 b = _mm_loadu_ps((const float *)(const void *)(p + i * 4 + 16));
        int m = _mm_movemask_ps(_mm_cmpunord_ps(a, a)) |
                (_mm_movemask_ps(_mm_cmpunord_ps(b, b)) << 4);
        if (m) {
            count += __builtin_popcount((unsigned)m);
        }
    }
#endif
    for (; i < n; i++) {
        float v;
        memcpy(&v, p + i * 4, 4);
        count += v != v;
    }
    return count;
}

/* Computes the null mask of chunk `c` (validated).  Sets *out to a new
   bool array (1 = null) and *nnull to the count, or *out = NULL and
   *nnull = 0 when no value is null.  Returns 0, or -1 with an exception
   set. */
static int
chunk_mask(const dfb_column *c, PyArrayObject **out, int64_t *nnull)
{
    const int64_t n = c->length;
    int64_t count = 0;
    *out = NULL;
    *nnull = 0;
    if (n == 0 || c->null_count == 0) {
        return 0;
    }
    if (c->fmt.type == DFB_T_NULL) {
        PyArrayObject *m = new_array(PyArray_DescrFromType(NPY_BOOL), n);
        if (m == NULL) {
            return -1;
        }
        memset(PyArray_DATA(m), 1, (size_t)n);
        *out = m;
        *nnull = n;
        return 0;
    }
    switch (c->null_kind) {
        case DFB_NULL_NON_NULLABLE:
            return 0;
        case DFB_NULL_USE_NAN: {
            if (c->fmt.type != DFB_T_FLOAT) {
                return 0;
            }
            const int bits = c->fmt.bits, sz = bits / 8;
            const int swap = is_swapped(c->fmt.byteorder);
            const char *p = c->data.ptr + c->offset * sz;
            if (bits == 64 && !swap) {
                DFB_NOGIL_IF(n, count = count_nan_f64(p, n));
            }
            else if (bits == 32 && !swap) {
                DFB_NOGIL_IF(n, count = count_nan_f32(p, n));
            }
            else {
                for (int64_t i = 0; i < n; i++) {
                    count += is_nan_at(p + i * sz, bits, swap);
                }
            }
            if (count == 0) {
                return 0;
            }
            PyArrayObject *m = new_array(PyArray_DescrFromType(NPY_BOOL), n);
            if (m == NULL) {
                return -1;
            }
            uint8_t *o = PyArray_DATA(m);
            for (int64_t i = 0; i < n; i++) {
                o[i] = (uint8_t)is_nan_at(p + i * sz, bits, swap);
            }
            *out = m;
            *nnull = count;
            return 0;
        }
        case DFB_NULL_USE_SENTINEL: {
            int bits, is_signed;
            char bo;
            if (int_layout(c, &bits, &is_signed, &bo) < 0) {
                PyErr_Format(PyExc_NotImplementedError,
                             "sentinel nulls are not supported for %s "
                             "columns",
                             type_name(c->fmt.type));
                return -1;
            }
            const int sz = bits / 8, swap = is_swapped(bo);
            const char *p = c->data.ptr + c->offset * sz;
            const int64_t sentinel = c->null_value;
            if (bits == 64 && !swap) {
                /* any alignment: interchange pointers promise none */
                for (int64_t i = 0; i < n; i++) {
                    int64_t v;
                    memcpy(&v, p + i * 8, 8);
                    count += v == sentinel;
                }
            }
            else {
                for (int64_t i = 0; i < n; i++) {
                    count += read_int(p + i * sz, bits, is_signed, swap) ==
                             sentinel;
                }
            }
            if (count == 0) {
                return 0;
            }
            PyArrayObject *m = new_array(PyArray_DescrFromType(NPY_BOOL), n);
            if (m == NULL) {
                return -1;
            }
            uint8_t *o = PyArray_DATA(m);
            for (int64_t i = 0; i < n; i++) {
                o[i] = read_int(p + i * sz, bits, is_signed, swap) == sentinel;
            }
            *out = m;
            *nnull = count;
            return 0;
        }
        case DFB_NULL_USE_BITMASK: {
            if (c->validity.ptr == NULL) {
                return 0;
            }
            const uint8_t *bitsp = (const uint8_t *)c->validity.ptr;
            int64_t zeros = dfb_count_zero_bits(bitsp, c->offset, n);
            count = c->null_value == 0 ? zeros : n - zeros;
            if (count == 0) {
                return 0;
            }
            PyArrayObject *m = new_array(PyArray_DescrFromType(NPY_BOOL), n);
            if (m == NULL) {
                return -1;
            }
            dfb_unpack_bits(bitsp, c->offset, n, PyArray_DATA(m),
                            c->null_value == 0);
            *out = m;
            *nnull = count;
            return 0;
        }
        case DFB_NULL_USE_BYTEMASK: {
            if (c->validity.ptr == NULL) {
                return 0;
            }
            const uint8_t *v = (const uint8_t *)c->validity.ptr + c->offset;
            int64_t nonzero = 0;
            for (int64_t i = 0; i < n; i++) {
                nonzero += v[i] != 0;
            }
            count = c->null_value == 0 ? n - nonzero : nonzero;
            if (count == 0) {
                return 0;
            }
            PyArrayObject *m = new_array(PyArray_DescrFromType(NPY_BOOL), n);
            if (m == NULL) {
                return -1;
            }
            uint8_t *o = PyArray_DATA(m);
            if (c->null_value == 0) {
                for (int64_t i = 0; i < n; i++) {
                    o[i] = v[i] == 0;
                }
            }
            else {
                for (int64_t i = 0; i < n; i++) {
                    o[i] = v[i] != 0;
                }
            }
            *out = m;
            *nnull = count;
            return 0;
        }
        default:
            PyErr_Format(PyExc_ValueError, "unknown null kind %d",
                         (int)c->null_kind);
            return -1;
    }
}

/* ------------------------------------------------------------------ */
/* Values                                                               */
/* ------------------------------------------------------------------ */

/* Returns a new zero-copy view of the fixed-width values of `c`, base =
   the data span's owner, or NULL with an exception set. */
static PyObject *
view_values(dfb_state *st, const dfb_column *c)
{
    PyArray_Descr *d = format_to_descr(st, &c->fmt);
    if (d == NULL) {
        return NULL;
    }
    npy_intp dims[1] = {(npy_intp)c->length};
    if (c->length == 0 || c->data.ptr == NULL) {
        return PyArray_NewFromDescr(&PyArray_Type, d, 1, dims, NULL, NULL, 0,
                                    NULL);
    }
    int flags = NPY_ARRAY_WRITEABLE;
    PyObject *owner = c->data.owner;
    if (owner != NULL && DfbBuffer_Check(st, owner) &&
        ((DfbBuffer *)owner)->readonly) {
        flags = 0;
    }
    char *p = (char *)c->data.ptr + c->offset * PyDataType_ELSIZE(d);
    PyObject *arr =
        PyArray_NewFromDescr(&PyArray_Type, d, 1, dims, NULL, p, flags, NULL);
    if (arr == NULL || owner == NULL) {
        return arr;
    }
    Py_INCREF(owner);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, owner) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

static PyObject *
chunk_values(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
             int allow_copy, int opts);

/* Writes the "missing" value of dtype `d` at `p`: NaN for floats, NaT for
   datetimes and timedeltas, zero bytes otherwise.  Cannot fail. */
static void
null_value_at(char *p, PyArray_Descr *d)
{
    const npy_intp sz = PyDataType_ELSIZE(d);
    const int swap = PyDataType_ISBYTESWAPPED(d);
    if (d->kind == 'M' || d->kind == 'm') {
        int64_t nat = NPY_DATETIME_NAT; /* byte-swap symmetric? no: swap */
        if (swap) {
            nat = (int64_t)__builtin_bswap64((uint64_t)nat);
        }
        memcpy(p, &nat, 8);
    }
    else if (d->kind == 'f' && (sz == 2 || sz == 4 || sz == 8)) {
        uint64_t v = sz == 8   ? UINT64_C(0x7ff8000000000000)
                     : sz == 4 ? UINT64_C(0x7fc00000)
                               : UINT64_C(0x7e00);
        if (swap) {
            v = __builtin_bswap64(v) >> (64 - 8 * sz);
        }
        /* little-endian host: the low bytes of v hold the value */
        union {
            uint64_t u;
            uint16_t h;
            uint32_t w;
        } b;
        if (sz == 8) {
            memcpy(p, &v, 8);
        }
        else if (sz == 4) {
            b.w = (uint32_t)v;
            memcpy(p, &b.w, 4);
        }
        else {
            b.h = (uint16_t)v;
            memcpy(p, &b.h, 2);
        }
    }
    else {
        memset(p, 0, (size_t)sz);
    }
}

/* Returns 1 if the null slots of `values` (converted from chunk `c`)
   already hold the fill value (None, NaN or NaT), else 0. */
static int
nulls_in_values(const dfb_column *c, PyObject *values)
{
    const char kind = PyArray_DESCR((PyArrayObject *)values)->kind;
    if (kind == 'O' || kind == 'T') {
        return 1;
    }
    switch (c->fmt.type) {
        case DFB_T_DICTIONARY:
            return kind == 'f' || kind == 'M' || kind == 'm';
        case DFB_T_DATE32:
            return 1;
        case DFB_T_FLOAT:
            return c->null_kind == DFB_NULL_USE_NAN;
        case DFB_T_TIMESTAMP:
        case DFB_T_DURATION:
        case DFB_T_DATE64:
            return c->null_kind == DFB_NULL_USE_SENTINEL &&
                   c->null_value == NPY_DATETIME_NAT;
        default:
            return 0;
    }
}

/* Decodes the categorical chunk `c` through its categories.  Null rows
   (isnull) hold None for object categories, zero bytes otherwise.
   Returns a new array or NULL (ValueError for codes out of range). */
/* Decodes `n` codes (bits/sign/swap as read_int) into fixed-width
   categories `src` (ncats items of isz bytes) at `dst`, writing the null
   value of `d` where isnull[i].  Returns -1 when every code was in range,
   else the row of the first out-of-range code (dst is then incomplete).
   Touches no Python object (runs without the GIL). */
static int64_t
decode_fixed(const char *codes, int bits, int is_signed, int swap,
             const uint8_t *isnull, int64_t n, const char *src, int64_t ncats,
             npy_intp isz, char *dst, PyArray_Descr *d)
{
    for (int64_t i = 0; i < n; i++) {
        if (isnull != NULL && isnull[i]) {
            null_value_at(dst + i * isz, d);
            continue;
        }
        int64_t code = read_int(codes + i * (bits / 8), bits, is_signed, swap);
        if (code < 0 || code >= ncats) {
            return i;
        }
        memcpy(dst + i * isz, src + code * isz, (size_t)isz);
    }
    return -1;
}

static PyObject *
take_categories(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
                int opts)
{
    if ((opts & DFB_OPT_STRINGDTYPE) &&
        (c->categories->fmt.type == DFB_T_UTF8 ||
         c->categories->fmt.type == DFB_T_LARGE_UTF8)) {
        return dfb_stringdtype_take(c, isnull);
    }
    PyObject *cats0 = chunk_values(st, c->categories, NULL, 1, opts);
    if (cats0 == NULL) {
        return NULL;
    }
    PyArrayObject *cats =
        (PyArrayObject *)PyArray_GETCONTIGUOUS((PyArrayObject *)cats0);
    Py_DECREF(cats0);
    if (cats == NULL) {
        return NULL;
    }
    const int64_t ncats = PyArray_DIM(cats, 0);
    PyArray_Descr *d = PyArray_DESCR(cats);
    const npy_intp isz = PyDataType_ELSIZE(d);
    const int isobj = PyDataType_REFCHK(d);
    Py_INCREF(d);
    PyArrayObject *out = new_array(d, c->length);
    if (out == NULL) {
        Py_DECREF(cats);
        return NULL;
    }
    const int bits = c->index.bits, sz = bits / 8;
    const int is_signed = c->index.type != DFB_T_UINT;
    const int swap = is_swapped(c->index.byteorder);
    const char *codes = c->data.ptr + c->offset * sz;
    const char *src = PyArray_DATA(cats);
    char *dst = PyArray_DATA(out);
    int64_t bad = -1;
    if (!isobj) {
        /* fixed-width categories: decode without the GIL, then report the
           first out-of-range code (below) */
        DFB_NOGIL_IF(c->length,
                     bad = decode_fixed(codes, bits, is_signed, swap, isnull,
                                        c->length, src, ncats, isz, dst, d));
        if (bad < 0) {
            Py_DECREF(cats);
            return (PyObject *)out;
        }
    }
    for (int64_t i = bad < 0 ? 0 : bad; i < c->length; i++) {
        if (isnull != NULL && isnull[i]) {
            if (isobj) {
                Py_XSETREF(((PyObject **)dst)[i], Py_NewRef(Py_None));
            }
            else {
                null_value_at(dst + i * isz, d);
            }
            continue;
        }
        int64_t code = read_int(codes + i * sz, bits, is_signed, swap);
        if (code < 0 || code >= ncats) {
            PyErr_Format(PyExc_ValueError,
                         "categorical code %lld at row %lld is out of range "
                         "for %lld categories",
                         (long long)code, (long long)i, (long long)ncats);
            Py_DECREF(out);
            Py_DECREF(cats);
            return NULL;
        }
        if (isobj) {
            PyObject *item = ((PyObject *const *)src)[code];
            Py_XSETREF(((PyObject **)dst)[i],
                       Py_NewRef(item ? item : Py_None));
        }
        else {
            memcpy(dst + i * isz, src + code * isz, (size_t)isz);
        }
    }
    Py_DECREF(cats);
    return (PyObject *)out;
}

/* Returns a new array of the values of validated chunk `c` (zero-copy for
   fixed-width types; null slots of copies hold None / NaT where the type
   has one), or NULL with an exception set. */
static PyObject *
chunk_values(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
             int allow_copy, int opts)
{
    const int64_t n = c->length;
    switch (c->fmt.type) {
        case DFB_T_BOOL8:
        case DFB_T_INT:
        case DFB_T_UINT:
        case DFB_T_FLOAT:
        case DFB_T_DATE64:
        case DFB_T_TIMESTAMP:
        case DFB_T_DURATION:
            return view_values(st, c);
        case DFB_T_DATE32: {
            if (need_copy(allow_copy, "date32 days to datetime64[D]") < 0) {
                return NULL;
            }
            PyArray_Descr *d = format_to_descr(st, &c->fmt);
            if (d == NULL) {
                return NULL;
            }
            PyArrayObject *out = new_array(d, n);
            if (out == NULL) {
                return NULL;
            }
            int64_t *o = PyArray_DATA(out);
            const int swap = is_swapped(c->fmt.byteorder);
            const char *p = c->data.ptr + c->offset * 4;
            for (int64_t i = 0; i < n; i++) {
                o[i] = (isnull != NULL && isnull[i])
                           ? NPY_DATETIME_NAT
                           : read_int(p + i * 4, 32, 1, swap);
            }
            return (PyObject *)out;
        }
        case DFB_T_BOOL_BIT: {
            if (need_copy(allow_copy, "bit-packed booleans") < 0) {
                return NULL;
            }
            PyArrayObject *out = new_array(PyArray_DescrFromType(NPY_BOOL), n);
            if (out == NULL) {
                return NULL;
            }
            if (n > 0) {
                dfb_unpack_bits((const uint8_t *)c->data.ptr, c->offset, n,
                                PyArray_DATA(out), 0);
            }
            return (PyObject *)out;
        }
        case DFB_T_UTF8:
        case DFB_T_LARGE_UTF8:
            if (need_copy(allow_copy, "strings to Python str objects") < 0) {
                return NULL;
            }
            if (opts & DFB_OPT_STRINGDTYPE) {
                return dfb_strings_to_stringdtype(
                    c->data.ptr, c->offsets.ptr,
                    c->fmt.type == DFB_T_UTF8 ? 32 : 64, c->offsets_swapped,
                    c->offset, n, isnull);
            }
            if (n == 0) {
                return (PyObject *)new_array(PyArray_DescrFromType(NPY_OBJECT),
                                             0);
            }
            return dfb_strings_to_object_array(
                c->data.ptr, c->data.size, c->offsets.ptr,
                c->fmt.type == DFB_T_UTF8 ? 32 : 64, c->offsets_swapped,
                c->offset, n, isnull);
        case DFB_T_STRING_VIEW:
            if (need_copy(allow_copy, "string views to Python str objects") <
                0) {
                return NULL;
            }
            if (opts & DFB_OPT_STRINGDTYPE) {
                return dfb_views_to_stringdtype(c, isnull);
            }
            return dfb_views_to_object_array(c, isnull);
        case DFB_T_DICTIONARY:
            if (need_copy(allow_copy, "categorical codes to values") < 0) {
                return NULL;
            }
            return take_categories(st, c, isnull, opts);
        case DFB_T_NULL: {
            PyArrayObject *out =
                new_array(PyArray_DescrFromType(NPY_OBJECT), n);
            if (out == NULL) {
                return NULL;
            }
            PyObject **o = PyArray_DATA(out);
            for (int64_t i = 0; i < n; i++) {
                Py_XSETREF(o[i], Py_NewRef(Py_None));
            }
            return (PyObject *)out;
        }
        default:
            PyErr_Format(PyExc_NotImplementedError,
                         "dfbuffer cannot convert %s columns yet",
                         type_name(c->fmt.type));
            return NULL;
    }
}

/* ------------------------------------------------------------------ */
/* Null handling modes                                                  */
/* ------------------------------------------------------------------ */

/* Returns a new plain array from `values` with NaN / NaT / None in the
   slots where mask is set (ints and bools upcast to float64), or NULL. */
static PyObject *
fill_nulls(PyArrayObject *values, PyArrayObject *mask)
{
    const uint8_t *m = PyArray_DATA(mask);
    const npy_intp n = PyArray_DIM(values, 0);
    PyArray_Descr *vd = PyArray_DESCR(values);
    PyArray_Descr *target;
    switch (vd->kind) {
        case 'O': {
            PyArrayObject *out =
                (PyArrayObject *)PyArray_NewCopy(values, NPY_CORDER);
            if (out == NULL) {
                return NULL;
            }
            PyObject **o = PyArray_DATA(out);
            for (npy_intp i = 0; i < n; i++) {
                if (m[i]) {
                    Py_XSETREF(o[i], Py_NewRef(Py_None));
                }
            }
            return (PyObject *)out;
        }
        case 'b':
        case 'i':
        case 'u':
            target = PyArray_DescrFromType(NPY_DOUBLE);
            break;
        case 'f':
        case 'M':
        case 'm':
            target = PyArray_DescrNewByteorder(vd, NPY_NATIVE);
            break;
        default:
            PyErr_Format(PyExc_NotImplementedError,
                         "cannot fill nulls of dtype %R", (PyObject *)vd);
            return NULL;
    }
    if (target == NULL) {
        return NULL;
    }
    PyArrayObject *out =
        (PyArrayObject *)PyArray_CastToType(values, target, 0);
    if (out == NULL) {
        return NULL;
    }
    char *o = PyArray_DATA(out);
    const int kind = PyArray_DESCR(out)->kind;
    const npy_intp sz = PyArray_ITEMSIZE(out);
    for (npy_intp i = 0; i < n; i++) {
        if (!m[i]) {
            continue;
        }
        if (kind == 'M' || kind == 'm') {
            int64_t nat = NPY_DATETIME_NAT;
            memcpy(o + i * 8, &nat, 8);
        }
        else if (sz == 8) {
            double v = NAN;
            memcpy(o + i * 8, &v, 8);
        }
        else if (sz == 4) {
            float v = NAN;
            memcpy(o + i * 4, &v, 4);
        }
        else {
            uint16_t v = 0x7e00;
            memcpy(o + i * 2, &v, 2);
        }
    }
    return (PyObject *)out;
}

/* Applies the `nulls` mode to values (stolen) and mask (stolen, may be
   NULL when no value is null); `filled` says the null slots of values
   already hold None / NaN / NaT.  Returns a new reference or NULL. */
static PyObject *
finish(dfb_state *st, PyObject *values, PyArrayObject *mask, int64_t nnull,
       int filled, dfb_nulls_mode nulls, int allow_copy)
{
    if (mask == NULL) {
        return values;
    }
    if (nulls == DFB_NULLS_FILL && filled) {
        Py_DECREF(mask);
        return values;
    }
    PyObject *res = NULL;
    switch (nulls) {
        case DFB_NULLS_RAISE:
            PyErr_Format(PyExc_ValueError,
                         "the column has %lld null values (nulls='raise')",
                         (long long)nnull);
            break;
        case DFB_NULLS_FILL:
            if (need_copy(allow_copy, "a column with nulls in fill mode") ==
                0) {
                res = fill_nulls((PyArrayObject *)values, mask);
            }
            break;
        default: {
            /* numpy.ma is imported on first use (it costs ~20 ms).  The
               import runs Python code and may let another thread fill the
               slot meanwhile: the slot is set only if still empty, with no
               Python code between the test and the store (the GIL makes
               that atomic), and the call uses our own reference. */
            PyObject *cls = st->ma_masked_array;
            if (cls != NULL) {
                Py_INCREF(cls);
            }
            else {
                PyObject *ma = PyImport_ImportModule("numpy.ma");
                if (ma == NULL) {
                    break;
                }
                cls = PyObject_GetAttrString(ma, "MaskedArray");
                Py_DECREF(ma);
                if (cls == NULL) {
                    break;
                }
                if (st->ma_masked_array == NULL) {
                    st->ma_masked_array = Py_NewRef(cls);
                }
            }
            PyObject *args[2] = {values, (PyObject *)mask};
            res = PyObject_Vectorcall(cls, args, 2, NULL);
            Py_DECREF(cls);
        }
    }
    Py_DECREF(values);
    Py_DECREF(mask);
    return res;
}

/* Converts one validated chunk to (values, mask).  Returns 0, or -1. */
static int
chunk_convert(dfb_state *st, const dfb_column *c, int allow_copy, int opts,
              PyObject **values, PyArrayObject **mask, int64_t *nnull,
              int *filled)
{
    if (chunk_mask(c, mask, nnull) < 0) {
        return -1;
    }
    *values = chunk_values(st, c, *mask ? PyArray_DATA(*mask) : NULL,
                           allow_copy, opts);
    if (*values == NULL) {
        Py_CLEAR(*mask);
        return -1;
    }
    *filled = *mask == NULL || nulls_in_values(c, *values);
    return 0;
}

/* Returns 1 if chunks `a` and `b` convert to the same NumPy type. */
static int
same_output_type(const dfb_column *a, const dfb_column *b)
{
    dfb_type ta = a->fmt.type, tb = b->fmt.type;
    if (ta == DFB_T_LARGE_UTF8 || ta == DFB_T_STRING_VIEW) {
        ta = DFB_T_UTF8;
    }
    if (tb == DFB_T_LARGE_UTF8 || tb == DFB_T_STRING_VIEW) {
        tb = DFB_T_UTF8;
    }
    if (ta != tb) {
        return 0;
    }
    if (ta == DFB_T_DICTIONARY) {
        return same_output_type(a->categories, b->categories);
    }
    if (ta == DFB_T_UTF8) {
        return 1;
    }
    return a->fmt.bits == b->fmt.bits && a->fmt.unit == b->fmt.unit;
}

PyObject *
dfb_columns_to_ndarray(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                       dfb_nulls_mode nulls, int allow_copy)
{
    PyObject *values;
    PyArrayObject *mask;
    int64_t nnull;
    int filled, all_filled = 1;
    if (n <= 0) {
        PyErr_SetString(PyExc_ValueError, "a column needs at least one chunk");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (dfb_column_validate(&chunks[i]) < 0) {
            return NULL;
        }
        if (i > 0 && !same_output_type(&chunks[0], &chunks[i])) {
            PyErr_Format(PyExc_ValueError,
                         "chunk %zd of the column is %s (%d bits), chunk 0 "
                         "is %s (%d bits): chunks must share one type",
                         i, type_name(chunks[i].fmt.type), chunks[i].fmt.bits,
                         type_name(chunks[0].fmt.type), chunks[0].fmt.bits);
            return NULL;
        }
    }
    const int opts = (int)nulls & ~DFB_NULLS_MODE_BITS;
    if ((opts & DFB_OPT_CATEGORICAL_CODES) &&
        chunks[0].fmt.type == DFB_T_DICTIONARY) {
        return dfb_categorical_codes(st, chunks, n, (int)nulls, allow_copy);
    }
    nulls = (dfb_nulls_mode)((int)nulls & DFB_NULLS_MODE_BITS);
    if (n == 1) {
        if (chunk_convert(st, &chunks[0], allow_copy, opts, &values, &mask,
                          &nnull, &filled) < 0) {
            return NULL;
        }
        return finish(st, values, mask, nnull, filled, nulls, allow_copy);
    }
    if (need_copy(allow_copy, "a column of several chunks") < 0) {
        return NULL;
    }
    PyObject *vals = PyList_New(n);
    PyObject *masks = PyList_New(n);
    PyObject *res = NULL;
    int64_t total_nulls = 0;
    if (vals == NULL || masks == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (chunk_convert(st, &chunks[i], allow_copy, opts, &values, &mask,
                          &nnull, &filled) < 0) {
            goto done;
        }
        all_filled &= filled;
        PyList_SET_ITEM(vals, i, values);
        PyList_SET_ITEM(masks, i,
                        mask ? (PyObject *)mask : Py_NewRef(Py_None));
        total_nulls += nnull;
    }
    values = PyArray_Concatenate(vals, 0);
    if (values == NULL) {
        goto done;
    }
    mask = NULL;
    if (total_nulls > 0) {
        mask = new_array(PyArray_DescrFromType(NPY_BOOL),
                         PyArray_DIM((PyArrayObject *)values, 0));
        if (mask == NULL) {
            Py_DECREF(values);
            goto done;
        }
        char *o = PyArray_DATA(mask);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *m = PyList_GET_ITEM(masks, i);
            const size_t len = (size_t)chunks[i].length;
            if (m == Py_None) {
                DFB_NOGIL_IF(len, memset(o, 0, len));
            }
            else {
                const void *src = PyArray_DATA((PyArrayObject *)m);
                DFB_NOGIL_IF(len, memcpy(o, src, len));
            }
            o += chunks[i].length;
        }
    }
    res = finish(st, values, mask, total_nulls, all_filled, nulls, allow_copy);
done:
    Py_XDECREF(vals);
    Py_XDECREF(masks);
    return res;
}

/* ------------------------------------------------------------------ */
/* Interchange buffers                                                  */
/* ------------------------------------------------------------------ */

/* Returns 1 if `t` is a device type whose memory the host can read. */
static int
host_device(int t)
{
    return t == kDLCPU || t == kDLCUDAHost || t == kDLROCMHost ||
           t == kDLCUDAManaged;
}

/* Reads interchange buffer `obj` once (dfb_read_interchange_buffer, the
   reader Buffer.from_object uses too) and refuses device memory.  Returns
   0, or -1 with an exception set (BufferError for device memory). */
static int
read_block(dfb_state *st, PyObject *obj, dfb_block *blk)
{
    if (dfb_read_interchange_buffer(st, obj, NULL, NULL, blk) < 0) {
        return -1;
    }
    if (!host_device(blk->device.device_type)) {
        PyErr_Format(PyExc_BufferError,
                     "the buffer is on device (%d, %d), not in CPU memory; "
                     "dfbuffer converts host memory only",
                     (int)blk->device.device_type, (int)blk->device.device_id);
        return -1;
    }
    return 0;
}

/* Wraps interchange buffer `obj` in a new dfbuffer Buffer (owner = obj,
   u1, native INTERCHANGE, read-only unless obj is a writable
   dfbuffer.Buffer) and fills `span`.  Returns the new Buffer, or
   NULL with an exception set. */
static PyObject *
wrap_buffer(dfb_state *st, PyObject *obj, dfb_span *span)
{
    dfb_block blk;
    if (read_block(st, obj, &blk) < 0) {
        return NULL;
    }
    PyArray_Descr *u1 = PyArray_DescrFromType(NPY_UINT8);
    /* Read-only unless the producer says the memory is writable: only a
       writable dfbuffer.Buffer does (the interchange protocol grants read
       access only; pyarrow's memory is immutable, pandas' copy-on-write). */
    PyObject *b =
        dfb_buffer_new(st, blk.ptr, blk.size, obj, u1, 1, NULL, NULL,
                       blk.device, blk.readonly, DFB_NATIVE_INTERCHANGE);
    Py_DECREF(u1);
    if (b == NULL) {
        return NULL;
    }
    span->ptr = blk.ptr;
    span->size = blk.size;
    span->owner = b;
    return b;
}

/* ------------------------------------------------------------------ */
/* Interchange walk                                                     */
/* ------------------------------------------------------------------ */

/* What keeps a walked chunk's memory alive, plus its categories. */
typedef struct {
    dfb_column cats;
    PyObject *keep[8];
    int nkeep;
} walked;

/* Releases the references `w` holds. */
static void
walked_clear(walked *w)
{
    for (int i = 0; i < w->nkeep; i++) {
        Py_CLEAR(w->keep[i]);
    }
    w->nkeep = 0;
}

/* The interchange dtype reader of dtype.c, under the names this file's
   code uses. */
typedef dfb_ix_dtype ix_dtype;

static inline int
parse_ix_dtype(PyObject *t, ix_dtype *out)
{
    return dfb_ix_dtype_read(t, out);
}

static inline int
ix_to_format(const ix_dtype *d, dfb_format *out)
{
    return dfb_ix_dtype_format(d, out);
}

/* Returns a NEW reference to item `key` of dict or Mapping `d`, or NULL
   (no exception) when absent or None; sets *err = 1 (exception set) on
   error.  The caller owns the item: a Mapping may build it afresh on each
   access, and any later producer call may remove it from a dict. */
static PyObject *
dict_item(PyObject *d, PyObject *key, int *err)
{
    PyObject *v;
    if (PyDict_CheckExact(d)) {
        if (dfb_dict_get_ref(d, key, &v) < 0) {
            *err = 1;
            return NULL;
        }
    }
    else {
        v = PyObject_GetItem(d, key);
        if (v == NULL) {
            if (PyErr_ExceptionMatches(PyExc_KeyError)) {
                PyErr_Clear();
            }
            else {
                *err = 1;
            }
            return NULL;
        }
    }
    if (v == Py_None) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* Splits a (buffer, dtype) pair (the caller owns `pair`, a tuple: *buf
   and the dtype stay alive as long as it does).  When the pair's dtype is
   the very object
   `known` (held alive by the caller, already parsed to `*known_dt`), copies
   that result instead of parsing it again: a tuple's items are immutable
   ints and strs, so the parse would give the same values.  Sets *reused.
   Returns 0, or -1 with TypeError. */
static int
split_pair(PyObject *pair, const char *what, PyObject **buf, ix_dtype *dt,
           PyObject *known, const ix_dtype *known_dt, int *reused)
{
    *reused = 0;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "get_buffers()[%s] must be a (buffer, dtype) pair, got "
                     "%.100s",
                     what, Py_TYPE(pair)->tp_name);
        return -1;
    }
    *buf = PyTuple_GET_ITEM(pair, 0);
    PyObject *t = PyTuple_GET_ITEM(pair, 1);
    if (known != NULL && t == known) {
        *dt = *known_dt;
        *reused = 1;
        return 0;
    }
    return parse_ix_dtype(t, dt);
}

/* Reads an int64 from a Python int (TypeError otherwise).  Returns 0/-1. */
static int
as_int64(PyObject *o, const char *what, int64_t *out)
{
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow) {
        /* a uint64 sentinel: keep its bit pattern */
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_OverflowError, "%s %R is out of range", what,
                         o);
            return -1;
        }
        v = (long long)u;
    }
    *out = v;
    return 0;
}

static int
walk_chunk(dfb_state *st, PyObject *col, dfb_column *out, walked *w,
           int depth);

/* Adds a new reference to w->keep (stolen). */
static void
keep(walked *w, PyObject *o)
{
    w->keep[w->nkeep++] = o;
}

/* Fills `out` from interchange column `col` (one chunk) and stores the
   Buffers it creates in `w`.  Returns 0, or -1 with an exception set. */
static int
walk_chunk(dfb_state *st, PyObject *col, dfb_column *out, walked *w, int depth)
{
    PyObject *o;
    ix_dtype cdt, ddt, vdt, odt;
    int err = 0;
    memset(out, 0, sizeof(*out));
    out->null_count = -1;

    /* size() and offset */
    if ((o = PyObject_CallMethodNoArgs(col, st->str.size)) == NULL) {
        return -1;
    }
    err = as_int64(o, "Column.size()", &out->length);
    Py_DECREF(o);
    if (err < 0) {
        return -1;
    }
    if ((o = PyObject_GetAttr(col, st->str.offset)) == NULL) {
        return -1;
    }
    err = o == Py_None ? 0 : as_int64(o, "Column.offset", &out->offset);
    Py_DECREF(o);
    if (err < 0) {
        return -1;
    }

    /* describe_null */
    if ((o = PyObject_GetAttr(col, st->str.describe_null)) == NULL) {
        return -1;
    }
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2 ||
        !PyLong_Check(PyTuple_GET_ITEM(o, 0))) {
        PyErr_Format(PyExc_TypeError,
                     "Column.describe_null must be a (kind, value) tuple, "
                     "got %R",
                     o);
        Py_DECREF(o);
        return -1;
    }
    long nk = PyLong_AsLong(PyTuple_GET_ITEM(o, 0));
    PyObject *nv = PyTuple_GET_ITEM(o, 1);
    if (nk < 0 || nk > 4) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "unknown ColumnNullType %R",
                         PyTuple_GET_ITEM(o, 0));
        }
        Py_DECREF(o);
        return -1;
    }
    out->null_kind = (dfb_null_kind)nk;
    if (nv != Py_None &&
        (nk == DFB_NULL_USE_SENTINEL || nk == DFB_NULL_USE_BITMASK ||
         nk == DFB_NULL_USE_BYTEMASK)) {
        if (as_int64(nv, "the describe_null value", &out->null_value) < 0) {
            Py_DECREF(o);
            return -1;
        }
        if (nk != DFB_NULL_USE_SENTINEL && out->null_value != 0 &&
            out->null_value != 1) {
            PyErr_Format(PyExc_ValueError,
                         "a mask's null value must be 0 or 1, got %R", nv);
            Py_DECREF(o);
            return -1;
        }
    }
    else if (nk == DFB_NULL_USE_SENTINEL) {
        PyErr_SetString(PyExc_ValueError,
                        "USE_SENTINEL without a sentinel value");
        Py_DECREF(o);
        return -1;
    }
    Py_DECREF(o);

    /* dtype: the column's logical type */
    PyObject *dtobj = PyObject_GetAttr(col, st->str.dtype);
    if (dtobj == NULL) {
        return -1;
    }
    if (parse_ix_dtype(dtobj, &cdt) < 0) {
        Py_DECREF(dtobj);
        return -1;
    }

    /* buffers */
    PyObject *bufs = PyObject_CallMethodNoArgs(col, st->str.get_buffers);
    if (bufs == NULL) {
        Py_DECREF(dtobj);
        return -1;
    }
    PyObject *dpair = dict_item(bufs, st->str.data, &err);
    PyObject *vpair = err ? NULL : dict_item(bufs, st->str.validity, &err);
    PyObject *opair = err ? NULL : dict_item(bufs, st->str.offsets, &err);
    PyObject *dbuf = NULL, *vbuf = NULL, *obuf = NULL;
    /* dpair, vpair, opair are owned (new references) from here on: the
       buffers and dtypes in them survive whatever the producer's ptr,
       bufsize, __dlpack_device__ or null_count do to `bufs`. */
    if (err) {
        goto fail;
    }
    if (dpair == NULL) {
        PyErr_SetString(PyExc_ValueError, "get_buffers() has no data buffer");
        goto fail;
    }
    int same_d, unused;
    if (split_pair(dpair, "'data'", &dbuf, &ddt, dtobj, &cdt, &same_d) < 0 ||
        (vpair != NULL && split_pair(vpair, "'validity'", &vbuf, &vdt, NULL,
                                     NULL, &unused) < 0) ||
        (opair != NULL && split_pair(opair, "'offsets'", &obuf, &odt, NULL,
                                     NULL, &unused) < 0)) {
        goto fail;
    }

    /* the physical format (parsed once when the data buffer's dtype is the
       column's dtype object) */
    dfb_format cf, df;
    int have_c = ix_to_format(&cdt, &cf) == 0;
    int have_d;
    if (same_d) {
        have_d = have_c;
        df = cf;
    }
    else {
        have_d = ix_to_format(&ddt, &df) == 0;
    }
    switch (cdt.kind) {
        case 21: /* STRING */
            if (!have_c) {
                goto bad_dtype;
            }
            out->fmt = cf;
            if (obuf != NULL && (out->fmt.type == DFB_T_UTF8 ||
                                 out->fmt.type == DFB_T_LARGE_UTF8)) {
                /* the offsets' own width decides (pandas says 'u' with
                   int64 offsets) */
                out->offsets_swapped = is_swapped(odt.endian);
                if (odt.bits == 64) {
                    out->fmt.type = DFB_T_LARGE_UTF8;
                }
                else if (odt.bits == 32) {
                    out->fmt.type = DFB_T_UTF8;
                }
                else {
                    PyErr_Format(PyExc_ValueError,
                                 "string offsets must be 32 or 64 bits, got "
                                 "%ld",
                                 odt.bits);
                    goto fail;
                }
            }
            break;
        case 22: /* DATETIME */
            if (!have_c) {
                goto bad_dtype;
            }
            out->fmt = cf;
            if (have_d && (ddt.endian == '<' || ddt.endian == '>')) {
                out->fmt.byteorder = ddt.endian;
            }
            if (have_d && df.bits != cf.bits) {
                PyErr_Format(PyExc_ValueError,
                             "datetime column %R has a %d-bit data buffer",
                             dtobj, df.bits);
                goto fail;
            }
            break;
        case 23: /* CATEGORICAL */
            out->fmt.type = DFB_T_DICTIONARY;
            out->fmt.byteorder = '=';
            if (have_d && (df.type == DFB_T_INT || df.type == DFB_T_UINT ||
                           df.type == DFB_T_DICTIONARY)) {
                out->index = df;
                if (df.type == DFB_T_DICTIONARY) {
                    out->index.type = DFB_T_INT;
                }
            }
            else if (have_c) {
                out->index = cf;
                out->index.type = DFB_T_INT;
            }
            else {
                goto bad_dtype;
            }
            out->fmt.bits = out->index.bits;
            break;
        default:
            if (have_d && df.type != DFB_T_DICTIONARY &&
                df.type != DFB_T_UTF8 && df.type != DFB_T_LARGE_UTF8) {
                out->fmt = df;
            }
            else if (have_c) {
                out->fmt = cf;
            }
            else {
                goto bad_dtype;
            }
    }

    /* wrap the buffers that will be read */
    if ((o = wrap_buffer(st, dbuf, &out->data)) == NULL) {
        goto fail;
    }
    keep(w, o);
    if (vbuf != NULL && (out->null_kind == DFB_NULL_USE_BITMASK ||
                         out->null_kind == DFB_NULL_USE_BYTEMASK)) {
        if ((o = wrap_buffer(st, vbuf, &out->validity)) == NULL) {
            goto fail;
        }
        keep(w, o);
    }
    else if (vbuf == NULL && (out->null_kind == DFB_NULL_USE_BITMASK ||
                              out->null_kind == DFB_NULL_USE_BYTEMASK)) {
        /* no validity buffer: fine only when nothing is null; ask */
        if ((o = PyObject_GetAttr(col, st->str.null_count)) == NULL) {
            goto fail;
        }
        int r = o == Py_None
                    ? 0
                    : as_int64(o, "Column.null_count", &out->null_count);
        Py_DECREF(o);
        if (r < 0) {
            goto fail;
        }
    }
    if (out->fmt.type == DFB_T_UTF8 || out->fmt.type == DFB_T_LARGE_UTF8) {
        if (obuf == NULL) {
            PyErr_SetString(PyExc_ValueError,
                            "a string column has no offsets buffer");
            goto fail;
        }
        if ((o = wrap_buffer(st, obuf, &out->offsets)) == NULL) {
            goto fail;
        }
        keep(w, o);
    }
    Py_XDECREF(dpair);
    Py_XDECREF(vpair);
    Py_XDECREF(opair);
    Py_DECREF(bufs);
    Py_DECREF(dtobj);

    /* categories */
    if (out->fmt.type == DFB_T_DICTIONARY) {
        if (depth > 0) {
            PyErr_SetString(PyExc_NotImplementedError,
                            "nested categoricals are not supported");
            return -1;
        }
        PyObject *dc = PyObject_GetAttr(col, st->str.describe_categorical);
        if (dc == NULL) {
            return -1;
        }
        PyObject *cats = NULL;
        if (PyDict_Check(dc)) {
            (void)dfb_dict_get_ref(dc, st->str.categories, &cats);
        }
        else {
            cats = PyObject_GetItem(dc, st->str.categories);
        }
        if (cats != NULL && cats != Py_None) {
            /* is_ordered (read once; absent or unreadable: unordered) */
            PyObject *ord = PyMapping_Check(dc)
                                ? PyMapping_GetItemString(dc, "is_ordered")
                                : NULL;
            out->is_ordered = ord != NULL ? PyObject_IsTrue(ord) : 0;
            Py_XDECREF(ord);
            if (out->is_ordered < 0 || ord == NULL) {
                if (PyErr_Occurred() &&
                    !PyErr_ExceptionMatches(PyExc_KeyError)) {
                    Py_DECREF(cats);
                    Py_DECREF(dc);
                    return -1;
                }
                PyErr_Clear();
                out->is_ordered = 0;
            }
        }
        Py_DECREF(dc);
        if (cats == NULL || cats == Py_None) {
            if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_KeyError)) {
                PyErr_Clear();
                PyErr_SetString(PyExc_NotImplementedError,
                                "categorical columns without a categories "
                                "column (is_dictionary=False) are not "
                                "supported");
            }
            Py_XDECREF(cats);
            return -1;
        }
        int r = walk_chunk(st, cats, &w->cats, w, depth + 1);
        Py_DECREF(cats);
        if (r < 0) {
            return -1;
        }
        out->categories = &w->cats;
    }
    return 0;

bad_dtype:
    PyErr_Format(PyExc_NotImplementedError,
                 "unsupported interchange dtype %R (data buffer dtype "
                 "(%ld, %ld, '%s', '%c'))",
                 dtobj, ddt.kind, ddt.bits, ddt.fmt ? ddt.fmt : "",
                 ddt.endian);
fail:
    Py_XDECREF(dpair);
    Py_XDECREF(vpair);
    Py_XDECREF(opair);
    Py_DECREF(bufs);
    Py_DECREF(dtobj);
    return -1;
}

/* Converts interchange column `col` (all its chunks).  Returns a new
   reference or NULL with an exception set. */
static PyObject *
ix_column_to_ndarray(dfb_state *st, PyObject *col, dfb_nulls_mode nulls,
                     int allow_copy)
{
    PyObject *o = PyObject_CallMethodNoArgs(col, st->str.num_chunks);
    if (o == NULL) {
        return NULL;
    }
    int64_t nchunks;
    int r = as_int64(o, "Column.num_chunks()", &nchunks);
    Py_DECREF(o);
    if (r < 0) {
        return NULL;
    }
    if (nchunks <= 1) {
        dfb_column c;
        walked w;
        w.nkeep = 0;
        PyObject *res = NULL;
        if (walk_chunk(st, col, &c, &w, 0) == 0) {
            res = dfb_columns_to_ndarray(st, &c, 1, nulls, allow_copy);
        }
        walked_clear(&w);
        return res;
    }
    if (need_copy(allow_copy, "a column of several chunks") < 0) {
        return NULL;
    }
    PyObject *it = PyObject_CallMethodNoArgs(col, st->str.get_chunks);
    if (it == NULL) {
        return NULL;
    }
    PyObject *list = PySequence_List(it);
    Py_DECREF(it);
    if (list == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n == 0) {
        Py_DECREF(list);
        PyErr_SetString(PyExc_ValueError,
                        "Column.get_chunks() yielded no chunks");
        return NULL;
    }
    dfb_column *cols = PyMem_Calloc((size_t)n, sizeof(dfb_column));
    walked *ws = PyMem_Calloc((size_t)n, sizeof(walked));
    PyObject *res = NULL;
    Py_ssize_t done = 0;
    if (cols == NULL || ws == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    for (; done < n; done++) {
        if (walk_chunk(st, PyList_GET_ITEM(list, done), &cols[done], &ws[done],
                       0) < 0) {
            done++;
            goto out;
        }
    }
    res = dfb_columns_to_ndarray(st, cols, n, nulls, allow_copy);
out:
    if (ws != NULL) {
        for (Py_ssize_t i = 0; i < done; i++) {
            walked_clear(&ws[i]);
        }
    }
    PyMem_Free(ws);
    PyMem_Free(cols);
    Py_DECREF(list);
    return res;
}

/* ------------------------------------------------------------------ */
/* Python entry points                                                  */
/* ------------------------------------------------------------------ */

/* Parses nulls= ("mask", "fill", "raise").  Returns 0, or -1 with
   ValueError / TypeError. */
static int
parse_nulls(PyObject *o, dfb_nulls_mode *out)
{
    if (o == NULL) {
        *out = DFB_NULLS_MASK;
        return 0;
    }
    if (PyUnicode_Check(o)) {
        if (PyUnicode_CompareWithASCIIString(o, "mask") == 0) {
            *out = DFB_NULLS_MASK;
            return 0;
        }
        if (PyUnicode_CompareWithASCIIString(o, "fill") == 0) {
            *out = DFB_NULLS_FILL;
            return 0;
        }
        if (PyUnicode_CompareWithASCIIString(o, "raise") == 0) {
            *out = DFB_NULLS_RAISE;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "nulls must be 'mask', 'fill' or 'raise', not %R", o);
    return -1;
}

/* Matches keyword arguments against `names` (NULL-terminated; `fast`
   holds the same names interned, or NULL, for an identity check first) and
   stores borrowed values in `out`.  Returns 0, or -1 with TypeError. */
static int
parse_kwargs(const char *func, PyObject *const *args, Py_ssize_t nargs,
             PyObject *kwnames, const char *const *names,
             PyObject *const *fast, PyObject **out)
{
    if (kwnames == NULL) {
        return 0;
    }
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        int j = 0;
        for (; names[j] != NULL; j++) {
            if (fast[j] == k) {
                break;
            }
        }
        if (names[j] == NULL) {
            for (j = 0; names[j] != NULL; j++) {
                if (PyUnicode_CompareWithASCIIString(k, names[j]) == 0) {
                    break;
                }
            }
        }
        if (names[j] == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got an unexpected keyword argument %R", func,
                         k);
            return -1;
        }
        if (out[j] != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got multiple values for argument %R", func, k);
            return -1;
        }
        out[j] = args[nargs + i];
    }
    return 0;
}

/* Returns 1 if `obj` has attribute `name`, 0 if not, -1 on error. */
static int
has_attr(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    Py_DECREF(v);
    return 1;
}

/* Parses an element count argument (None -> -1).  Returns 0/-1. */
static int
parse_count(PyObject *o, const char *what, int64_t *out)
{
    if (o == NULL || o == Py_None) {
        *out = -1;
        return 0;
    }
    if (!PyIndex_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t v = PyNumber_AsSsize_t(o, PyExc_OverflowError);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %zd", what, v);
        return -1;
    }
    *out = v;
    return 0;
}

PyDoc_STRVAR(
    buffer_to_ndarray_doc,
    "buffer_to_ndarray(buffer, dtype, *, offset=0, length=None)\n--\n\n"
    "View an interchange-protocol buffer (anything with ptr, bufsize and\n"
    "__dlpack_device__) as a 1-D NumPy array without copying.\n\n"
    "dtype is an interchange dtype tuple (kind, bit_width, format,\n"
    "endianness) or anything numpy.dtype accepts; non-native byte order "
    "gives\n"
    "a byte-swapped dtype.  offset and length count elements (bits for a\n"
    "bit-packed bool dtype, which is unpacked to a new bool array; int32\n"
    "dates become a new datetime64[D] array).  The result's base is a\n"
    "dfbuffer.Buffer whose owner is `buffer`.  CPU memory only (BufferError\n"
    "otherwise); ValueError when offset/length exceed bufsize.");

/* buffer_to_ndarray(buffer, dtype, *, offset=0, length=None). */
static PyObject *
buffer_to_ndarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    static const char *const kw[] = {"buffer", "dtype", "offset", "length",
                                     NULL};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError,
                     "buffer_to_ndarray() takes 2 positional arguments but "
                     "%zd were given",
                     nargs);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        a[i] = args[i];
    }
    PyObject *const fast[] = {NULL, st->str.dtype, st->str.offset,
                              st->str.length};
    if (parse_kwargs("buffer_to_ndarray", args, nargs, kwnames, kw, fast, a) <
        0) {
        return NULL;
    }
    if (a[0] == NULL || a[1] == NULL) {
        PyErr_Format(PyExc_TypeError,
                     "buffer_to_ndarray() missing required argument '%s'",
                     a[0] == NULL ? "buffer" : "dtype");
        return NULL;
    }
    int64_t offset, length;
    if (parse_count(a[2], "offset", &offset) < 0 ||
        parse_count(a[3], "length", &length) < 0) {
        return NULL;
    }
    if (offset < 0) {
        offset = 0;
    }

    /* the type: an interchange tuple or a NumPy dtype-like */
    dfb_format fmt;
    PyArray_Descr *descr = NULL;
    int64_t isz;
    if (PyTuple_Check(a[1]) && PyTuple_GET_SIZE(a[1]) == 4 &&
        PyLong_Check(PyTuple_GET_ITEM(a[1], 0))) {
        ix_dtype dt;
        if (parse_ix_dtype(a[1], &dt) < 0) {
            return NULL;
        }
        if (ix_to_format(&dt, &fmt) < 0) {
            PyErr_Format(PyExc_ValueError, "unsupported interchange dtype %R",
                         a[1]);
            return NULL;
        }
        if (fmt.type == DFB_T_UTF8 || fmt.type == DFB_T_LARGE_UTF8) {
            /* a string column's dtype on its data buffer: the bytes */
            fmt.type = DFB_T_UINT;
            fmt.bits = 8;
        }
        else if (fmt.type == DFB_T_DICTIONARY) {
            fmt.type = DFB_T_INT; /* the codes */
        }
        else if (fmt.type == DFB_T_STRING_VIEW) {
            PyErr_Format(PyExc_NotImplementedError,
                         "cannot view a buffer as %R", a[1]);
            return NULL;
        }
        isz = fmt.type == DFB_T_BOOL_BIT ? 0 : dfb_format_itemsize(&fmt);
    }
    else {
        descr = dfb_parse_dtype(a[1], NULL);
        if (descr == NULL) {
            return NULL;
        }
        memset(&fmt, 0, sizeof(fmt));
        isz = PyDataType_ELSIZE(descr);
    }

    dfb_span span;
    PyObject *wrapper = wrap_buffer(st, a[0], &span);
    if (wrapper == NULL) {
        Py_XDECREF(descr);
        return NULL;
    }
    /* element capacity of the block */
    int64_t cap = isz == 0
                      ? (span.size > INT64_MAX / 8 ? INT64_MAX : span.size * 8)
                      : span.size / isz;
    if (offset > cap || (length >= 0 && length > cap - offset)) {
        PyErr_Format(PyExc_ValueError,
                     "offset %lld + length %lld exceed the buffer's %lld "
                     "elements (bufsize %lld bytes)",
                     (long long)offset, (long long)(length < 0 ? 0 : length),
                     (long long)cap, (long long)span.size);
        Py_DECREF(wrapper);
        Py_XDECREF(descr);
        return NULL;
    }
    if (length < 0) {
        length = cap - offset;
    }
    PyObject *res;
    if (descr != NULL) {
        npy_intp dims[1] = {(npy_intp)length};
        static char dummy;
        char *p = span.ptr != NULL ? (char *)span.ptr + offset * isz : &dummy;
        res = PyArray_NewFromDescr(
            &PyArray_Type, descr, 1, dims, NULL, p,
            ((DfbBuffer *)wrapper)->readonly ? 0 : NPY_ARRAY_WRITEABLE, NULL);
        if (res != NULL) {
            if (PyArray_SetBaseObject((PyArrayObject *)res, wrapper) < 0) {
                Py_DECREF(res);
                return NULL;
            }
            return res;
        }
        Py_DECREF(wrapper);
        return NULL;
    }
    dfb_column c;
    memset(&c, 0, sizeof(c));
    c.fmt = fmt;
    c.length = length;
    c.offset = offset;
    c.null_count = 0;
    c.null_kind = DFB_NULL_NON_NULLABLE;
    c.data = span;
    res = NULL;
    if (dfb_column_validate(&c) == 0) {
        res = chunk_values(st, &c, NULL, 1, 0);
    }
    Py_DECREF(wrapper);
    return res;
}

PyDoc_STRVAR(
    column_to_ndarray_doc,
    "column_to_ndarray(column, *, nulls='mask', categorical='decode',\n"
    "                  strings='object')\n--\n\n"
    "Convert one DataFrame-interchange column (or an Arrow producer of one\n"
    "column) to a NumPy array.\n\n"
    "nulls='mask' gives a numpy.ma.MaskedArray where the column has nulls and "
    "a\n"
    "plain (zero-copy where the layout allows) ndarray otherwise; 'fill' "
    "gives\n"
    "a plain ndarray with NaN / NaT / None in the null slots (ints and bools\n"
    "upcast to float64); 'raise' raises ValueError if any value is null.\n"
    "Strings become object arrays of str (strings='object') or NumPy\n"
    "StringDType(na_object=None) arrays built without Python str objects\n"
    "(strings='stringdtype'; null slots hold None).  Categoricals are "
    "decoded\n"
    "through their categories (categorical='decode') or returned as\n"
    "dfbuffer.CategoricalCodes(codes, categories, ordered) without decoding\n"
    "(categorical='codes'; codes zero-copy, masked where null).  Several\n"
    "chunks are concatenated.");

/* column_to_ndarray(column, *, nulls="mask"). */
static PyObject *
column_to_ndarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    static const char *const kw[] = {"column", "nulls", "categorical",
                                     "strings", NULL};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError,
                     "column_to_ndarray() takes 1 positional argument but "
                     "%zd were given",
                     nargs);
        return NULL;
    }
    if (nargs == 1) {
        a[0] = args[0];
    }
    PyObject *const fast[] = {NULL, st->str.nulls, NULL, NULL};
    if (parse_kwargs("column_to_ndarray", args, nargs, kwnames, kw, fast, a) <
        0) {
        return NULL;
    }
    if (a[0] == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "column_to_ndarray() missing required argument "
                        "'column'");
        return NULL;
    }
    dfb_nulls_mode nulls;
    int opts;
    if (parse_nulls(a[1], &nulls) < 0 ||
        dfb_parse_conv_opts(a[2], a[3], &opts) < 0) {
        return NULL;
    }
    nulls = (dfb_nulls_mode)((int)nulls | opts);
    /* each protocol probed once, on the type (probe.c); the instance is
       asked (has_attr) only when the type names neither */
    int r = dfb_probe(st, a[0], DFB_PN_GET_BUFFERS);
    if (r < 0) {
        return NULL;
    }
    if (r == 1) {
        return ix_column_to_ndarray(st, a[0], nulls, 1);
    }
    if ((r = dfb_type_is_arrow_producer(st, a[0])) < 0) {
        return NULL;
    }
    if (r == 1) {
        return dfb_arrow_column_to_ndarray(st, a[0], nulls, 1);
    }
    if ((r = has_attr(a[0], st->str.get_buffers)) < 0) {
        return NULL;
    }
    if (r == 1) {
        return ix_column_to_ndarray(st, a[0], nulls, 1);
    }
    PyErr_Format(PyExc_TypeError,
                 "column_to_ndarray() expects a DataFrame-interchange column "
                 "(with get_buffers, describe_null, ...), got %.200s",
                 Py_TYPE(a[0])->tp_name);
    return NULL;
}

PyDoc_STRVAR(
    from_dataframe_doc,
    "from_dataframe(obj, *, nulls='mask', allow_copy=True, "
    "categorical='decode',\n"
    "               strings='object')\n--\n\n"
    "Convert every column of a dataframe to NumPy: a dict name -> array.\n\n"
    "obj is anything with __dataframe__, an interchange DataFrame object, or "
    "an\n"
    "Arrow producer of a table.  Non-string column names become str; "
    "duplicate\n"
    "names raise ValueError.  nulls as in column_to_ndarray.  "
    "allow_copy=False\n"
    "raises RuntimeError wherever a copy is unavoidable (several chunks,\n"
    "filled nulls, strings, bit-packed bools, decoded categoricals, "
    "date32).\n"
    "categorical and strings as in column_to_ndarray.  Columns that pandas'\n"
    "Arrow metadata marks as its index are left out, as the interchange "
    "path\n"
    "leaves them out.  Timestamps with a time zone come back as UTC\n"
    "datetime64 (the zone is not a NumPy dtype): dfbuffer.schema(obj) gives\n"
    "each column's zone, unit, categorical ordering and null "
    "representation.");

/* Returns the interchange DataFrame of `obj` (new reference), NULL with
   an exception set, or NULL without one when `obj` is none. */
static PyObject *
get_ix_frame(dfb_state *st, PyObject *obj, int allow_copy)
{
    /* an interchange DataFrame already: use it as it is (calling its
       __dataframe__ again may copy, as pandas' does) */
    int a = has_attr(obj, st->str.column_names);
    int b = a == 1 ? has_attr(obj, st->str.get_column) : a;
    if (b < 0) {
        return NULL;
    }
    if (b == 1) {
        return Py_NewRef(obj);
    }
    PyObject *meth = PyObject_GetAttr(obj, st->str.dataframe);
    if (meth == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
        }
        return NULL;
    }
    PyObject *kwargs[1] = {allow_copy ? Py_True : Py_False};
    PyObject *df = PyObject_Vectorcall(meth, kwargs, 0, st->tup.allow_copy_kw);
    if (df == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        df = PyObject_CallNoArgs(meth);
    }
    Py_DECREF(meth);
    return df;
}

/* Prefixes the message of the pending exception with the column name when
   its type is a plain ValueError / TypeError / RuntimeError /
   NotImplementedError / BufferError (others are left alone).  The original
   exception becomes the new one's __cause__. */
static void
add_column_context(PyObject *key)
{
    PyObject *exc = dfb_err_take();
    if (exc == NULL) {
        return;
    }
    PyObject *t = (PyObject *)Py_TYPE(exc);
    if (t != PyExc_ValueError && t != PyExc_TypeError &&
        t != PyExc_RuntimeError && t != PyExc_NotImplementedError &&
        t != PyExc_BufferError) {
        dfb_err_give(exc);
        return;
    }
    PyObject *msg = PyObject_Str(exc);
    if (msg == NULL) {
        PyErr_Clear();
        dfb_err_give(exc);
        return;
    }
    /* a message that names the column already keeps its text */
    PyObject *prefix = PyUnicode_FromFormat("column %R: ", key);
    int named = prefix == NULL ? -1
                               : (int)PyUnicode_Tailmatch(msg, prefix, 0,
                                                          PY_SSIZE_T_MAX, -1);
    Py_XDECREF(prefix);
    if (named != 0) {
        if (named < 0) {
            PyErr_Clear();
        }
        Py_DECREF(msg);
        dfb_err_give(exc);
        return;
    }
    PyErr_Format(t, "column %R: %U", key, msg);
    Py_DECREF(msg);
    PyObject *now = dfb_err_take();
    if (now == NULL) {
        dfb_err_give(exc);
        return;
    }
    PyException_SetCause(now, exc); /* steals exc */
    dfb_err_give(now);
}

/* from_dataframe(obj, *, nulls="mask", allow_copy=True). */
static PyObject *
from_dataframe(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames)
{
    static const char *const kw[] = {"obj",         "nulls",   "allow_copy",
                                     "categorical", "strings", NULL};
    PyObject *a[5] = {NULL, NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError,
                     "from_dataframe() takes 1 positional argument but %zd "
                     "were given",
                     nargs);
        return NULL;
    }
    if (nargs == 1) {
        a[0] = args[0];
    }
    PyObject *const fast[] = {NULL, st->str.nulls, st->str.allow_copy, NULL,
                              NULL};
    if (parse_kwargs("from_dataframe", args, nargs, kwnames, kw, fast, a) <
        0) {
        return NULL;
    }
    if (a[0] == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "from_dataframe() missing required argument 'obj'");
        return NULL;
    }
    dfb_nulls_mode nulls;
    int opts;
    if (parse_nulls(a[1], &nulls) < 0 ||
        dfb_parse_conv_opts(a[3], a[4], &opts) < 0) {
        return NULL;
    }
    nulls = (dfb_nulls_mode)((int)nulls | opts);
    int allow_copy = 1;
    if (a[2] != NULL && (allow_copy = PyObject_IsTrue(a[2])) < 0) {
        return NULL;
    }
    /* A pandas DataFrame: numpy-backed columns directly (probe.c). */
    PyObject *pdres = dfb_pandas_from_dataframe(st, a[0], nulls, allow_copy);
    if (pdres != NULL || PyErr_Occurred()) {
        return pdres;
    }
    /* A library object that speaks the Arrow PyCapsule interface is read
       through it (as pandas 3's own from_dataframe does): Arrow states its
       offsets and buffers exactly, where producers' __dataframe__ have known
       bugs.  Interchange DataFrame objects have no __arrow_c_* methods and
       take the protocol. */
    int r = dfb_arrow_is_producer(a[0]);
    if (r < 0) {
        return NULL;
    }
    if (r == 1) {
        return dfb_arrow_from_dataframe(st, a[0], nulls, allow_copy);
    }
    PyObject *df = get_ix_frame(st, a[0], allow_copy);
    if (df == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        PyErr_Format(PyExc_TypeError,
                     "from_dataframe() expects an object with __dataframe__ "
                     "or an interchange DataFrame, got %.200s",
                     Py_TYPE(a[0])->tp_name);
        return NULL;
    }
    PyObject *result = NULL, *names = NULL, *seq = NULL;
    names = PyObject_CallMethodNoArgs(df, st->str.column_names);
    if (names == NULL) {
        goto done;
    }
    /* A private tuple, never the producer's own list: get_column() runs
       producer code that may change that list while we index it. */
    seq = PySequence_Tuple(names);
    if (seq == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyObject *exc = dfb_err_take();
            PyErr_SetString(PyExc_TypeError,
                            "column_names() must return an iterable");
            PyObject *now = dfb_err_take();
            PyException_SetCause(now, exc);
            dfb_err_give(now);
        }
        goto done;
    }
    result = PyDict_New();
    if (result == NULL) {
        goto done;
    }
    PyObject *getcol = PyObject_GetAttr(df, st->str.get_column);
    if (getcol == NULL) {
        Py_CLEAR(result);
        goto done;
    }
    Py_ssize_t ncols = PyTuple_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < ncols; i++) {
        PyObject *name = PyTuple_GET_ITEM(seq, i);
        PyObject *key =
            PyUnicode_CheckExact(name) ? Py_NewRef(name) : PyObject_Str(name);
        if (key == NULL) {
            goto fail;
        }
        int has = PyDict_Contains(result, key);
        if (has != 0) {
            if (has > 0) {
                PyErr_Format(PyExc_ValueError, "duplicate column name %R",
                             key);
            }
            Py_DECREF(key);
            goto fail;
        }
        PyObject *idx = PyLong_FromSsize_t(i);
        if (idx == NULL) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *col = PyObject_CallOneArg(getcol, idx);
        Py_DECREF(idx);
        if (col == NULL) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *arr = ix_column_to_ndarray(st, col, nulls, allow_copy);
        Py_DECREF(col);
        if (arr == NULL) {
            add_column_context(key);
            Py_DECREF(key);
            goto fail;
        }
        int r = PyDict_SetItem(result, key, arr);
        Py_DECREF(key);
        Py_DECREF(arr);
        if (r < 0) {
            goto fail;
        }
    }
    Py_DECREF(getcol);
    goto done;
fail:
    Py_DECREF(getcol);
    Py_CLEAR(result);
done:
    Py_XDECREF(seq);
    Py_XDECREF(names);
    Py_DECREF(df);
    return result;
}

PyMethodDef dfb_convert_methods[] = {
    {"buffer_to_ndarray", (PyCFunction)(void (*)(void))buffer_to_ndarray,
     METH_FASTCALL | METH_KEYWORDS, buffer_to_ndarray_doc},
    {"column_to_ndarray", (PyCFunction)(void (*)(void))column_to_ndarray,
     METH_FASTCALL | METH_KEYWORDS, column_to_ndarray_doc},
    {"from_dataframe", (PyCFunction)(void (*)(void))from_dataframe,
     METH_FASTCALL | METH_KEYWORDS, from_dataframe_doc},
    {NULL},
};

/* ------------------------------------------------------------------ */
/* Whole frames, described for to_matrix (matrix.c)                     */
/* ------------------------------------------------------------------ */

/* Moves the references `w` holds into list `keep`.  Returns 0, or -1 with
   MemoryError (the references are released either way). */
static int
walked_keep(walked *w, PyObject *keep)
{
    int r = 0;
    for (int i = 0; i < w->nkeep; i++) {
        if (r == 0 && PyList_Append(keep, w->keep[i]) < 0) {
            r = -1;
        }
    }
    walked_clear(w);
    return r;
}

/* Describes every chunk of interchange column `col` into `fc` (chunks
   PyMem-allocated, categories copied next to them), keeping the Buffers in
   `keep`.  Returns 0, or -1 with an exception set. */
static int
describe_ix_column(dfb_state *st, PyObject *col, dfb_frame_column *fc,
                   PyObject *keep)
{
    PyObject *o = PyObject_CallMethodNoArgs(col, st->str.num_chunks);
    if (o == NULL) {
        return -1;
    }
    int64_t nchunks;
    int r = as_int64(o, "Column.num_chunks()", &nchunks);
    Py_DECREF(o);
    if (r < 0) {
        return -1;
    }
    PyObject *list;
    if (nchunks <= 1) {
        list = PyList_New(1);
        if (list == NULL) {
            return -1;
        }
        PyList_SET_ITEM(list, 0, Py_NewRef(col));
    }
    else {
        PyObject *it = PyObject_CallMethodNoArgs(col, st->str.get_chunks);
        if (it == NULL) {
            return -1;
        }
        list = PySequence_List(it);
        Py_DECREF(it);
        if (list == NULL) {
            return -1;
        }
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n == 0) {
        Py_DECREF(list);
        PyErr_SetString(PyExc_ValueError,
                        "Column.get_chunks() yielded no chunks");
        return -1;
    }
    fc->chunks = PyMem_Calloc(2 * (size_t)n, sizeof(dfb_column));
    if (fc->chunks == NULL) {
        Py_DECREF(list);
        PyErr_NoMemory();
        return -1;
    }
    fc->nchunks = n;
    r = 0;
    for (Py_ssize_t i = 0; i < n && r == 0; i++) {
        walked w;
        w.nkeep = 0;
        /* the list holds the chunk: get_chunks() cannot drop it */
        r = walk_chunk(st, PyList_GET_ITEM(list, i), &fc->chunks[i], &w, 0);
        if (r == 0 && fc->chunks[i].categories == &w.cats) {
            fc->chunks[n + i] = w.cats;
            fc->chunks[i].categories = &fc->chunks[n + i];
        }
        if (walked_keep(&w, keep) < 0) {
            r = -1;
        }
        fc->chunks[i].fmt.tz = NULL;
        fc->chunks[i].fmt.tz_len = 0;
    }
    Py_DECREF(list);
    return r;
}

int
dfb_ix_describe_frame(dfb_state *st, PyObject *obj, PyObject *select,
                      dfb_frame *out)
{
    PyObject *df = get_ix_frame(st, obj, 1);
    if (df == NULL) {
        return PyErr_Occurred() ? -1 : 1;
    }
    int ret = -1;
    Py_ssize_t *idx = NULL, n = 0;
    PyObject *keys = NULL, *getcol = NULL, *seq = NULL;
    PyObject *names = PyObject_CallMethodNoArgs(df, st->str.column_names);
    if (names == NULL) {
        goto done;
    }
    seq = PySequence_Fast(names, "column_names() must return an iterable");
    if (seq == NULL) {
        goto done;
    }
    Py_ssize_t ncols = PySequence_Fast_GET_SIZE(seq);
    keys = PyList_New(ncols);
    if (keys == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < ncols; i++) {
        PyObject *name = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *key =
            PyUnicode_CheckExact(name) ? Py_NewRef(name) : PyObject_Str(name);
        if (key == NULL) {
            goto done;
        }
        PyList_SET_ITEM(keys, i, key);
    }
    if (dfb_frame_select(keys, select, &idx, &n) < 0 ||
        dfb_frame_init(out, n) < 0) {
        goto done;
    }
    if (n == 0) {
        /* no columns selected: the row count gives the shape */
        PyObject *nr = PyObject_CallMethod(df, "num_rows", NULL);
        if (nr == NULL) {
            goto done;
        }
        int r = nr == Py_None
                    ? 0
                    : as_int64(nr, "DataFrame.num_rows()", &out->nrows);
        Py_DECREF(nr);
        if (r < 0) {
            goto done;
        }
    }
    getcol = PyObject_GetAttr(df, st->str.get_column);
    if (getcol == NULL) {
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *key = PyList_GET_ITEM(keys, idx[k]);
        out->cols[k].name = Py_NewRef(key);
        PyObject *pos = PyLong_FromSsize_t(idx[k]);
        if (pos == NULL) {
            goto done;
        }
        PyObject *col = PyObject_CallOneArg(getcol, pos);
        Py_DECREF(pos);
        if (col == NULL) {
            add_column_context(key);
            goto done;
        }
        int r = PyList_Append(out->keep, col);
        if (r == 0) {
            r = describe_ix_column(st, col, &out->cols[k], out->keep);
        }
        Py_DECREF(col);
        if (r < 0) {
            add_column_context(key);
            goto done;
        }
    }
    ret = 0;
done:
    PyMem_Free(idx);
    Py_XDECREF(getcol);
    Py_XDECREF(keys);
    Py_XDECREF(seq);
    Py_XDECREF(names);
    Py_DECREF(df);
    return ret;
}
