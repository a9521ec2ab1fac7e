/* dfbuffer: the null side of the conversion kernel: a chunk's null mask
 * from its validity bitmap or bytes, sentinel or NaN values, the rows whose
 * categorical code names a null category, the nulls= modes applied to
 * converted values, and the two helpers every kernel file shares (new 1-D
 * arrays, the allow_copy check; see kernels.h).
 */
#include "common.h"
#include "sizes.h"
#include "model.h"
#include "probe.h"
#include "mem.h"
#include "nan.h"
#include "types.h"
#include "kernels.h"
#include "bitmap.h"
#include "bits.h"
#include "checked.h"
#include "args.h"

#include <string.h>

int
dfb_need_copy(dfb_state *st, int allow_copy, const char *why)
{
    if (!allow_copy) {
        return dfb_copy_error(st, "converting %s needs a copy", why);
    }
    return 0;
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

/* ------------------------------------------------------------------ */
/* Null masks                                                           */
/* ------------------------------------------------------------------ */

/* Physical integer layout read for sentinels: fills bits/signedness.
   Returns 0, or -1 if the type has no integer storage. */
static int
int_layout(const dfb_column *c, int *bits, int *is_signed, char *bo)
{
    const dfb_format *f =
        dfb_type_has_codes(c->fmt.type) ? &c->index : &c->fmt;
    const dfb_type_row *r = dfb_type_row_of(f->type);
    *bo = f->byteorder;
    if ((r->layout != DFB_LAYOUT_FIXED && r->layout != DFB_LAYOUT_CODES) ||
        (r->storage != 'i' && r->storage != 'u' && r->storage != 'b')) {
        return -1;
    }
    *bits = f->bits;
    *is_signed = r->storage == 'i';
    return 0;
}

/* Where chunk `c`'s sentinel-coded integers start, and how to read them:
   fills bits, signedness and swap.  Returns the first value's address, or
   NULL with NotImplementedError set if the type has no integer storage. */
static const char *
sentinel_layout(const dfb_column *c, int *bits, int *is_signed, int *swap)
{
    char bo;
    if (int_layout(c, bits, is_signed, &bo) < 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "sentinel nulls are not supported for %s columns",
                     dfb_type_row_of(c->fmt.type)->name);
        return NULL;
    }
    *swap = dfb_is_swapped(bo);
    return c->data.ptr + c->offset * (*bits / 8);
}

/* Counts the null rows of chunk `c` (validated, n > 0, null_count != 0)
   into *count (0 when no mask is needed).  Returns 0, or -1 with an
   exception set. */
static int
count_nulls(const dfb_column *c, int64_t *count)
{
    const int64_t n = c->length;
    int64_t k = 0;
    *count = 0;
    if (c->fmt.type == DFB_T_NULL) {
        *count = n;
        return 0;
    }
    switch (c->null_kind) {
        case DFB_NULL_NON_NULLABLE:
            return 0;
        case DFB_NULL_USE_NAN: {
            if (c->fmt.type != DFB_T_FLOAT) {
                return 0;
            }
            const int sz = c->fmt.bits / 8;
            const int swap = dfb_is_swapped(c->fmt.byteorder);
            const char *p = c->data.ptr + c->offset * sz;
            DFB_NOGIL_IF(n, k = dfb_count_nan(p, n, sz, sz, swap, NULL));
            break;
        }
        case DFB_NULL_USE_SENTINEL: {
            int bits, is_signed, swap;
            const char *p = sentinel_layout(c, &bits, &is_signed, &swap);
            if (p == NULL) {
                return -1;
            }
            const int sz = bits / 8;
            const int64_t sentinel = c->null_value;
            if (bits == 64 && !swap) {
                /* any alignment: interchange pointers promise none */
                for (int64_t i = 0; i < n; i++) {
                    int64_t v;
                    memcpy(&v, p + i * 8, 8);
                    k += v == sentinel;
                }
            }
            else {
                for (int64_t i = 0; i < n; i++) {
                    k += read_int(p + i * sz, bits, is_signed, swap) ==
                         sentinel;
                }
            }
            break;
        }
        case DFB_NULL_USE_BITMASK: {
            if (c->validity.ptr == NULL) {
                return 0;
            }
            int64_t zeros = dfb_count_zero_bits(
                (const uint8_t *)c->validity.ptr, c->offset, n);
            k = c->null_value == 0 ? zeros : n - zeros;
            break;
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
            k = c->null_value == 0 ? n - nonzero : nonzero;
            break;
        }
        default:
            PyErr_Format(PyExc_ValueError, "unknown null kind %d",
                         (int)c->null_kind);
            return -1;
    }
    *count = k;
    return 0;
}

/* Writes the null mask of chunk `c` (1 = null) into its n bytes at `o`,
   for a chunk count_nulls found nulls in.  Cannot fail. */
static void
fill_mask(const dfb_column *c, uint8_t *o)
{
    const int64_t n = c->length;
    if (c->fmt.type == DFB_T_NULL) {
        dfb_memset(o, 1, (size_t)n);
        return;
    }
    switch (c->null_kind) {
        case DFB_NULL_USE_NAN: {
            const int sz = c->fmt.bits / 8;
            dfb_count_nan(c->data.ptr + c->offset * sz, n, sz, sz,
                          dfb_is_swapped(c->fmt.byteorder), o);
            return;
        }
        case DFB_NULL_USE_SENTINEL: {
            int bits, is_signed, swap;
            /* count_nulls checked the layout: this cannot fail */
            const char *p = sentinel_layout(c, &bits, &is_signed, &swap);
            const int sz = bits / 8;
            const int64_t sentinel = c->null_value;
            for (int64_t i = 0; i < n; i++) {
                o[i] = read_int(p + i * sz, bits, is_signed, swap) == sentinel;
            }
            return;
        }
        case DFB_NULL_USE_BITMASK:
            dfb_unpack_bits((const uint8_t *)c->validity.ptr, c->offset, n, o,
                            c->null_value == 0);
            return;
        case DFB_NULL_USE_BYTEMASK: {
            const uint8_t *v = (const uint8_t *)c->validity.ptr + c->offset;
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
            return;
        }
        default:
            return;
    }
}

/* Computes the null mask of chunk `c` (validated).  Sets *out to a new
   bool array (1 = null) and *nnull to the count, or *out = NULL and
   *nnull = 0 when no value is null.  Returns 0, or -1 with an exception
   set. */
int
dfb_chunk_mask(const dfb_column *c, PyArrayObject **out, int64_t *nnull)
{
    int64_t count = 0;
    *out = NULL;
    *nnull = 0;
    if (c->length == 0 || c->null_count == 0) {
        return 0;
    }
    if (count_nulls(c, &count) < 0) {
        return -1;
    }
    if (count == 0) {
        return 0;
    }
    PyArrayObject *m =
        dfb_new_array(PyArray_DescrFromType(NPY_BOOL), c->length);
    if (m == NULL) {
        return -1;
    }
    fill_mask(c, PyArray_DATA(m));
    *out = m;
    *nnull = count;
    return 0;
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

PyObject *
dfb_masked_array(dfb_state *st, PyObject *values, PyObject *mask)
{
    /* numpy.ma is imported on first use (it costs ~20 ms).  The import
       runs Python code and may let another thread fill the slot
       meanwhile: the slot is read, and set only if still empty, under
       st->lazy_lock (the GIL on 3.11/3.12), with no Python code inside,
       and the call uses our own reference. */
    dfb_mutex_lock(&st->lazy_lock);
    PyObject *cls = Py_XNewRef(st->ma_masked_array);
    dfb_mutex_unlock(&st->lazy_lock);
    if (cls == NULL) {
        cls = dfb_import_attr("numpy.ma", "MaskedArray");
        if (cls == NULL) {
            return NULL;
        }
        dfb_mutex_lock(&st->lazy_lock);
        if (st->ma_masked_array == NULL) {
            st->ma_masked_array = Py_NewRef(cls);
        }
        dfb_mutex_unlock(&st->lazy_lock);
    }
    PyObject *args[2] = {values, mask};
    PyObject *res = PyObject_Vectorcall(cls, args, 2, NULL);
    Py_DECREF(cls);
    return res;
}

/* Applies the `nulls` mode to values (stolen) and mask (stolen, may be
   NULL when no value is null); `filled` says the null slots of values
   already hold None / NaN / NaT.  Returns a new reference or NULL. */
PyObject *
dfb_nulls_finish(dfb_state *st, PyObject *values, PyArrayObject *mask,
                 int64_t nnull, int filled, dfb_nulls_mode nulls,
                 int allow_copy)
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
                         "the column has %lld null value%s (nulls='raise')",
                         (long long)nnull, nnull == 1 ? "" : "s");
            break;
        case DFB_NULLS_FILL:
            if (dfb_need_copy(st, allow_copy,
                              "a column with nulls in fill mode") == 0) {
                res = fill_nulls((PyArrayObject *)values, mask);
            }
            break;
        default:
            res = dfb_masked_array(st, values, (PyObject *)mask);
    }
    Py_DECREF(values);
    Py_DECREF(mask);
    return res;
}

/* Adds to *mask (allocated here when NULL) the rows of the categorical
   chunk `c` whose code names a null category, counting them in *nnull
   (codes out of range are left for the decoder to report).  Returns 0, or
   -1 with an exception set (*mask is then still the caller's). */
int
dfb_mask_null_categories(const dfb_column *c, PyArrayObject **mask,
                         int64_t *nnull)
{
    PyArrayObject *catmask;
    int64_t catnull;
    if (dfb_chunk_mask(c->categories, &catmask, &catnull) < 0) {
        return -1;
    }
    if (catmask == NULL) {
        return 0;
    }
    const int64_t n = c->length, ncats = c->categories->length;
    if (*mask == NULL) {
        *mask = dfb_new_array(PyArray_DescrFromType(NPY_BOOL), n);
        if (*mask == NULL) {
            Py_DECREF(catmask);
            return -1;
        }
        dfb_memset(PyArray_DATA(*mask), 0, (size_t)n);
    }
    dfb_codes codes;
    if (dfb_column_codes(c,
                         ncats < PyArray_DIM(catmask, 0)
                             ? ncats
                             : (int64_t)PyArray_DIM(catmask, 0),
                         &codes) < 0) {
        Py_DECREF(catmask);
        return -1;
    }
    const uint8_t *cn = PyArray_DATA(catmask);
    uint8_t *o = PyArray_DATA(*mask);
    int64_t added = 0;
    for (int64_t i = 0; i < n; i++) {
        if (o[i]) {
            continue;
        }
        int64_t code;
        if (dfb_codes_get(&codes, i, &code) == DFB_OK && cn[code]) {
            o[i] = 1;
            added++;
        }
    }
    Py_DECREF(catmask);
    *nnull += added;
    if (*nnull == 0) {
        Py_CLEAR(*mask);
    }
    return 0;
}

/* One converted value `v` (borrowed) with nulls="always_mask"
   (`mask_it`) and copy=True (`fresh`) applied.  Returns a new reference,
   or NULL with an exception set. */
static PyObject *
finish_value(dfb_state *st, PyObject *v, int mask_it, int fresh)
{
    if (st->categorical_codes != NULL &&
        Py_IS_TYPE(v, (PyTypeObject *)st->categorical_codes)) {
        /* the codes take both; the categories (no nulls) only a copy */
        PyObject *codes =
            finish_value(st, PyTuple_GET_ITEM(v, 0), mask_it, fresh);
        PyObject *cats =
            codes == NULL ? NULL
                          : finish_value(st, PyTuple_GET_ITEM(v, 1), 0, fresh);
        PyObject *res =
            cats == NULL
                ? NULL
                : PyStructSequence_New((PyTypeObject *)st->categorical_codes);
        if (res == NULL) {
            Py_XDECREF(codes);
            Py_XDECREF(cats);
            return NULL;
        }
        PyStructSequence_SetItem(res, 0, codes);
        PyStructSequence_SetItem(res, 1, cats);
        PyStructSequence_SetItem(res, 2, Py_NewRef(PyTuple_GET_ITEM(v, 2)));
        return res;
    }
    if (!PyArray_Check(v)) {
        return Py_NewRef(v);
    }
    int is_masked = !PyArray_CheckExact(v);
    PyObject *res;
    if (fresh && is_masked) {
        res = PyObject_CallMethod(v, "copy", NULL); /* data and mask */
    }
    else if (fresh &&
             (!PyArray_CHKFLAGS((PyArrayObject *)v, NPY_ARRAY_OWNDATA) ||
              !PyArray_ISWRITEABLE((PyArrayObject *)v))) {
        res = PyArray_NewCopy((PyArrayObject *)v, NPY_KEEPORDER);
    }
    else {
        res = Py_NewRef(v);
    }
    if (res == NULL || !mask_it || is_masked) {
        return res;
    }
    PyObject *mask = PyArray_Zeros(PyArray_NDIM((PyArrayObject *)res),
                                   PyArray_DIMS((PyArrayObject *)res),
                                   PyArray_DescrFromType(NPY_BOOL), 0);
    if (mask == NULL) {
        Py_DECREF(res);
        return NULL;
    }
    PyObject *m = dfb_masked_array(st, res, mask);
    Py_DECREF(res);
    Py_DECREF(mask);
    return m;
}

PyObject *
dfb_result_finish(dfb_state *st, PyObject *res, const dfb_opts *opts)
{
    const int fresh = opts->copy == 1;
    if (res == NULL || (!opts->always_mask && !fresh)) {
        return res;
    }
    if (!PyDict_CheckExact(res)) {
        Py_SETREF(res, finish_value(st, res, opts->always_mask, fresh));
        return res;
    }
    /* our own fresh dict: its values replaced in place, keys unchanged */
    PyObject *items = PyDict_Items(res);
    if (items == NULL) {
        Py_DECREF(res);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        PyObject *v = finish_value(st, PyTuple_GET_ITEM(kv, 1),
                                   opts->always_mask, fresh);
        if (v == NULL || PyDict_SetItem(res, PyTuple_GET_ITEM(kv, 0), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(items);
            Py_DECREF(res);
            return NULL;
        }
        Py_DECREF(v);
    }
    Py_DECREF(items);
    return res;
}
