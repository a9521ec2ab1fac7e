/* dfbuffer: the conversion kernel: validated dfb_column chunks to NumPy
 * arrays.
 *
 * The interchange walk (ixwalk.c) and the Arrow describe (arrow_describe.c)
 * fill dfb_column chunks, with spans owned by dfbuffer Buffers; this file
 * validates every span and converts in C (dfb_columns_convert).  The
 * categorical="codes" route is categorical.c.
 */
#include "common.h"
#include "sizes.h"
#include "model.h"
#include "kernels.h"
#include "probe.h"
#include "layout.h"
#include "offsets.h"
#include "reader.h"
#include "mem.h"
#include "nan.h"
#include "types.h"
#include "bitmap.h"
#include "bits.h"

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
            if (dfb_is_swapped(ts[0])) {
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

/* Human name of a dfb_type for messages (the type table's). */
static const char *
type_name(dfb_type t)
{
    return dfb_type_row_of(t)->name;
}

/* Reads the int32 at `p` (any alignment, byte-swapped if `swap`).  Cannot
   fail. */
static inline int64_t
load_i32(const char *p, int swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (int32_t)(swap ? __builtin_bswap32(v) : v);
}

/* The widening loop of widen_days, for a constant `swap` and `isnull`
   NULL or not.  Cannot fail. */
static inline __attribute__((always_inline)) void
widen_days_loop(int64_t *o, const char *p, int64_t n, const uint8_t *isnull,
                const int swap)
{
    for (int64_t i = 0; i < n; i++) {
        const int64_t v = load_i32(p + i * 4, swap);
        o[i] = isnull != NULL && isnull[i] ? NPY_DATETIME_NAT : v;
    }
}

/* Writes the `n` int32 day counts at `p` (byte-swapped when `swap`) to
   `o` as int64, NaT where `isnull` (may be NULL) is set.  The loop is
   compiled for each case, so the common one (native order) vectorizes.
   Cannot fail. */
static void
widen_days(int64_t *o, const char *p, int64_t n, const uint8_t *isnull,
           int swap)
{
    if (swap) {
        widen_days_loop(o, p, n, isnull, 1);
    }
    else if (isnull == NULL) {
        widen_days_loop(o, p, n, NULL, 0);
    }
    else {
        widen_days_loop(o, p, n, isnull, 0);
    }
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

/* The offsets check of validate for the OFFSETS chunk `col` (length > 0,
   offsets [offset, end] of `osize` bytes inside their buffer): each read
   once, non-negative and non-decreasing, the last inside the data.
   Returns 0, or -1 with ValueError naming the first bad one. */
static int
offsets_check(const dfb_column *col, int osize, int64_t end)
{
    int64_t prev;
    dfb_bad_offset bad;
    if (dfb_offsets_validate(col->offsets.ptr, osize, col->offsets_swapped,
                             col->offset, end, &prev, &bad, NULL) != DFB_OK) {
        PyErr_Format(PyExc_ValueError, "string offsets are %s at element %lld",
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
    return 0;
}

/* Returns 1 if the last offset of the OFFSETS chunk `col` (length > 0,
   offsets inside their buffer), read once, lies inside its data, else 0
   (offsets_check then names what is wrong).  Cannot fail. */
static int
last_offset_ok(const dfb_column *col)
{
    dfb_offsets off;
    int64_t last;
    if (dfb_column_offsets(col, &off) < 0) {
        PyErr_Clear(); /* offsets_check raises instead */
        return 0;
    }
    return dfb_offsets_get(&off, col->length, &last) == DFB_OK;
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
    const dfb_type_row *row = dfb_type_row_of(col->fmt.type);
    if (row->conv == DFB_CONV_REFUSED) {
        PyErr_Format(PyExc_NotImplementedError,
                     "dfbuffer cannot convert %s columns",
                     type_name(col->fmt.type));
        return -1;
    }
    switch (row->layout) {
        case DFB_LAYOUT_NONE:
            break;
        case DFB_LAYOUT_BITS:
            if (check_span(&col->data, (end + 7) / 8, "data") < 0) {
                return -1;
            }
            break;
        case DFB_LAYOUT_OFFSETS: {
            if (col->length == 0) {
                break;
            }
            int osize = row->offset_bytes;
            if ((need = mul_bytes(end + 1, osize)) < 0 ||
                check_span(&col->offsets, need, "offsets") < 0) {
                return -1;
            }
            if (dfb_format_conv(&col->fmt, col->ext) == DFB_CONV_BYTES &&
                last_offset_ok(col)) {
                /* binary (chunk_values' own test of the result class):
                   the kernel checks every span in its one pass over the
                   offsets (bytes_values) */
                break;
            }
            if (offsets_check(col, osize, end) < 0) {
                return -1;
            }
            break;
        }
        case DFB_LAYOUT_VIEWS:
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
        case DFB_LAYOUT_CODES:
        case DFB_LAYOUT_RUN_END: /* described as the run of each row */
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
/* Values                                                               */
/* ------------------------------------------------------------------ */

/* Returns a new zero-copy view of the fixed-width values of `c`, base =
   the data span's owner, or NULL with an exception set. */
static PyObject *
view_values(dfb_state *st, const dfb_column *c)
{
    PyArray_Descr *d = dfb_type_row_of(c->fmt.type)->conv == DFB_CONV_RECORDS
                           ? dfb_interval_descr(&c->fmt)
                           : format_to_descr(st, &c->fmt);
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
             int allow_copy, const dfb_opts *opts);

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
        dfb_memset(p, 0, (size_t)sz);
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
    const dfb_type_row *r = dfb_type_row_of(c->fmt.type);
    switch (r->conv) {
        case DFB_CONV_DECODE:
        case DFB_CONV_RUNS:
            return kind == 'f' || kind == 'M' || kind == 'm';
        case DFB_CONV_WIDEN:
            return 1; /* the kernel writes NaT */
        case DFB_CONV_DECIMAL:
            return 1; /* the float64 kernel writes NaN */
        case DFB_CONV_VIEW:
            if (r->result == 'f') {
                return c->null_kind == DFB_NULL_USE_NAN;
            }
            return (r->result == 'M' || r->result == 'm') &&
                   c->null_kind == DFB_NULL_USE_SENTINEL &&
                   c->null_value == NPY_DATETIME_NAT;
        default:
            return 0;
    }
}

/* Decodes the categorical chunk `c` through its categories.  Null rows
   (isnull) hold None for object categories, zero bytes otherwise.
   Returns a new array or NULL (ValueError for codes out of range). */
/* Decodes the `n` codes `codes` reads into fixed-width categories `src`
   (codes->ncats items of isz bytes) at `dst`, writing the null value of
   `d` where isnull[i].  Returns -1 when every code was in range, else the
   row of the first out-of-range code (dst is then incomplete).  Touches
   no Python object (runs without the GIL). */
static int64_t
decode_fixed(const dfb_codes *codes, const uint8_t *isnull, int64_t n,
             const char *src, npy_intp isz, char *dst, PyArray_Descr *d)
{
    for (int64_t i = 0; i < n; i++) {
        if (isnull != NULL && isnull[i]) {
            null_value_at(dst + i * isz, d);
            continue;
        }
        int64_t code;
        if (dfb_codes_get(codes, i, &code) != DFB_OK) {
            return i;
        }
        dfb_memcpy(dst + i * isz, src + code * isz, (size_t)isz);
    }
    return -1;
}

static PyObject *
take_categories(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
                const dfb_opts *opts)
{
    if (opts->stringdtype && (c->categories->fmt.type == DFB_T_UTF8 ||
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
    PyArrayObject *out = dfb_new_array(d, c->length);
    if (out == NULL) {
        Py_DECREF(cats);
        return NULL;
    }
    /* each code read once through core's checked reader, in [0, ncats) */
    dfb_codes codes;
    if (dfb_column_codes(c, ncats, &codes) < 0) {
        Py_DECREF(out);
        Py_DECREF(cats);
        return NULL;
    }
    const char *src = PyArray_DATA(cats);
    char *dst = PyArray_DATA(out);
    int64_t bad = -1;
    if (!isobj) {
        /* fixed-width categories: decode without the GIL, then report the
           first out-of-range code (below) */
        DFB_NOGIL_IF(c->length, bad = decode_fixed(&codes, isnull, c->length,
                                                   src, isz, dst, d));
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
        int64_t code;
        if (dfb_codes_get(&codes, i, &code) != DFB_OK) {
            Py_DECREF(out);
            Py_DECREF(cats);
            return dfb_bad_code_error(i, code, ncats);
        }
        if (isobj) {
            PyObject *item = ((PyObject *const *)src)[code];
            Py_XSETREF(((PyObject **)dst)[i],
                       Py_NewRef(item ? item : Py_None));
        }
        else {
            dfb_memcpy(dst + i * isz, src + code * isz, (size_t)isz);
        }
    }
    Py_DECREF(cats);
    return (PyObject *)out;
}

/* dfb_bytes_to_object_array for validated chunk `c`.  Its one pass over
   binary offsets is their check (validate reads only the last): a span it
   refuses is named as validation names bad offsets, unless they read as
   good again (they changed meanwhile: the kernel's error stands).  Same
   returns. */
static PyObject *
bytes_values(const dfb_column *c, const uint8_t *isnull)
{
    PyObject *res = dfb_bytes_to_object_array(c, isnull);
    if (res != NULL || c->length == 0 ||
        dfb_type_row_of(c->fmt.type)->layout != DFB_LAYOUT_OFFSETS ||
        !PyErr_ExceptionMatches(PyExc_ValueError)) {
        return res;
    }
    PyObject *exc = dfb_err_take();
    if (offsets_check(c, dfb_type_row_of(c->fmt.type)->offset_bytes,
                      c->offset + c->length) < 0) {
        Py_DECREF(exc); /* validation's error replaces it */
        return NULL;
    }
    dfb_err_give(exc);
    return NULL;
}

/* Returns a new array of the values of validated chunk `c` (zero-copy for
   fixed-width types; null slots of copies hold None / NaT where the type
   has one), or NULL with an exception set. */
static PyObject *
chunk_values(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
             int allow_copy, const dfb_opts *opts)
{
    const int64_t n = c->length;
    /* the result class: the type's, or its extension's (uuid) */
    const dfb_conv conv = dfb_format_conv(&c->fmt, c->ext);
    switch (conv) {
        case DFB_CONV_VIEW:
        case DFB_CONV_RECORDS:
            return view_values(st, c);
        case DFB_CONV_BYTES:
        case DFB_CONV_TIME:
        case DFB_CONV_UUID:
            if (dfb_need_copy(st, allow_copy, "values to Python objects") <
                0) {
                return NULL;
            }
            return conv == DFB_CONV_BYTES ? bytes_values(c, isnull)
                   : conv == DFB_CONV_UUID
                       ? dfb_uuids_to_object_array(c, isnull)
                       : dfb_times_to_object_array(c, isnull);
        case DFB_CONV_DECIMAL:
            if (dfb_need_copy(st, allow_copy,
                              "decimals to Decimal or float64") < 0) {
                return NULL;
            }
            return dfb_decimals_convert(c, isnull, opts);
        case DFB_CONV_WIDEN: {
            if (dfb_need_copy(st, allow_copy, "date32 days to datetime64[D]") <
                0) {
                return NULL;
            }
            /* the days are widened into native int64, whatever their
               order */
            dfb_format native = c->fmt;
            native.byteorder = '=';
            PyArray_Descr *d = format_to_descr(st, &native);
            if (d == NULL) {
                return NULL;
            }
            PyArrayObject *out = dfb_new_array(d, n);
            if (out == NULL) {
                return NULL;
            }
            widen_days(PyArray_DATA(out), c->data.ptr + c->offset * 4, n,
                       isnull, dfb_is_swapped(c->fmt.byteorder));
            return (PyObject *)out;
        }
        case DFB_CONV_UNPACK: {
            if (dfb_need_copy(st, allow_copy, "bit-packed booleans") < 0) {
                return NULL;
            }
            PyArrayObject *out =
                dfb_new_array(PyArray_DescrFromType(NPY_BOOL), n);
            if (out == NULL) {
                return NULL;
            }
            if (n > 0) {
                dfb_unpack_bits((const uint8_t *)c->data.ptr, c->offset, n,
                                PyArray_DATA(out), 0);
            }
            return (PyObject *)out;
        }
        case DFB_CONV_STRINGS:
            if (dfb_need_copy(st, allow_copy,
                              "strings to Python str objects") < 0) {
                return NULL;
            }
            if (opts->stringdtype) {
                return dfb_strings_to_stringdtype(c, isnull);
            }
            if (n == 0) {
                return (PyObject *)dfb_new_array(
                    PyArray_DescrFromType(NPY_OBJECT), 0);
            }
            return dfb_strings_to_object_array(c, isnull);
        case DFB_CONV_STRING_VIEWS:
            if (dfb_need_copy(st, allow_copy,
                              "string views to Python str objects") < 0) {
                return NULL;
            }
            if (opts->stringdtype) {
                return dfb_views_to_stringdtype(c, isnull);
            }
            return dfb_views_to_object_array(c, isnull);
        case DFB_CONV_DECODE:
        case DFB_CONV_RUNS: /* the values through the run of each row */
            if (dfb_need_copy(st, allow_copy, "categorical codes to values") <
                0) {
                return NULL;
            }
            return take_categories(st, c, isnull, opts);
        case DFB_CONV_NONES: {
            PyArrayObject *out =
                dfb_new_array(PyArray_DescrFromType(NPY_OBJECT), n);
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

/* Converts one validated chunk to (values, mask).  Returns 0, or -1. */
static int
chunk_convert(dfb_state *st, const dfb_column *c, int allow_copy,
              const dfb_opts *opts, PyObject **values, PyArrayObject **mask,
              int64_t *nnull, int *filled)
{
    if (dfb_chunk_mask(c, mask, nnull) < 0) {
        return -1;
    }
    if (dfb_type_has_codes(c->fmt.type) && c->categories != NULL &&
        c->categories->null_count != 0 &&
        dfb_mask_null_categories(c, mask, nnull) < 0) {
        Py_CLEAR(*mask);
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
    if (dfb_type_has_codes(ta)) {
        return same_output_type(a->categories, b->categories);
    }
    if (ta == DFB_T_UTF8) {
        return 1;
    }
    return a->fmt.bits == b->fmt.bits && a->fmt.unit == b->fmt.unit;
}

int
dfb_columns_check(const dfb_column *chunks, Py_ssize_t n)
{
    if (n <= 0) {
        PyErr_SetString(PyExc_ValueError, "a column needs at least one chunk");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (dfb_column_validate(&chunks[i]) < 0) {
            return -1;
        }
        if (i > 0 && !same_output_type(&chunks[0], &chunks[i])) {
            PyErr_Format(PyExc_ValueError,
                         "chunk %zd of the column is %s (%d bits), chunk 0 "
                         "is %s (%d bits): chunks must share one type",
                         i, type_name(chunks[i].fmt.type), chunks[i].fmt.bits,
                         type_name(chunks[0].fmt.type), chunks[0].fmt.bits);
            return -1;
        }
    }
    return 0;
}

PyObject *
dfb_columns_convert(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                    const dfb_opts *opts, int allow_copy)
{
    PyObject *values;
    PyArrayObject *mask;
    int64_t nnull;
    int filled, all_filled = 1;
    if (dfb_columns_check(chunks, n) < 0) {
        return NULL;
    }
    if (n == 1) {
        if (chunk_convert(st, &chunks[0], allow_copy, opts, &values, &mask,
                          &nnull, &filled) < 0) {
            return NULL;
        }
        return dfb_nulls_finish(st, values, mask, nnull, filled, opts->nulls,
                                allow_copy);
    }
    if (dfb_need_copy(st, allow_copy, "a column of several chunks") < 0) {
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
        mask = dfb_new_array(PyArray_DescrFromType(NPY_BOOL),
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
                DFB_NOGIL_IF(len, dfb_memset(o, 0, len));
            }
            else {
                const void *src = PyArray_DATA((PyArrayObject *)m);
                DFB_NOGIL_IF(len, dfb_memcpy(o, src, len));
            }
            o += chunks[i].length;
        }
    }
    res = dfb_nulls_finish(st, values, mask, total_nulls, all_filled,
                           opts->nulls, allow_copy);
done:
    Py_XDECREF(vals);
    Py_XDECREF(masks);
    return res;
}

/* ------------------------------------------------------------------ */
/* Kernel entries for the other files                                   */
/* ------------------------------------------------------------------ */

PyObject *
dfb_chunk_values(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
                 int allow_copy, const dfb_opts *opts)
{
    return chunk_values(st, c, isnull, allow_copy, opts);
}
