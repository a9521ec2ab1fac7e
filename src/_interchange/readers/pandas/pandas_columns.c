/* dfbuffer: the pandas columns that are neither a NumPy block nor a masked
 * array, read from pandas' own arrays (no pyarrow):
 *
 * - Period and Interval columns become object arrays of pandas.Period /
 *   pandas.Interval objects (pandas' Arrow export would give bare int64
 *   ordinals or a struct of bounds, losing the frequency or the closed
 *   side); with period="ordinal" a Period column is its int64 ordinals (a
 *   read-only view of pandas' own array, NaT a null);
 * - Sparse columns are densified (a copy) and read as the dense column;
 * - when pyarrow cannot be imported, every other extension column
 *   (nullable Int/UInt/Float/boolean, strings, categoricals, tz-aware
 *   datetimes) is read here too, with the result pandas' Arrow export
 *   gives: numeric values and masks go through the converters as a column
 *   with a byte mask, so nulls= fills exactly as for any Arrow column;
 * - the Period objects of an Arrow column of pandas' "pandas.period" type.
 *
 * Every call into pandas can run arbitrary code: what it returns is held
 * by a reference of ours and checked (exact ndarray, dtype, length) before
 * its memory is read; pandas' memory is only read.
 */
#include "common.h"
#include "args.h"
#include "model.h"
#include "kernels.h"
#include "exchange.h"
#include "readers.h"
#include "pandas.h"
#include "checked.h"
#include "mem.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The state of one convert call. */
typedef struct {
    dfb_state *st;
    PyObject *pd;   /* strong: the pandas module */
    PyObject *name; /* borrowed: the column's name (str) */
    int64_t n;      /* the frame's length */
    int allow_copy; /* 0: copies are refused (CopyError) */
    dfb_pd_frame_reader read_frame;
} pdc_ctx;

/* A new reference to attribute path `path` ("arrays.IntegerArray") of
   `obj`, or NULL with an exception set. */
static PyObject *
attr_path(PyObject *obj, const char *path)
{
    PyObject *cur = Py_NewRef(obj);
    char part[64];
    while (cur != NULL && *path) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        if (len >= sizeof(part)) {
            Py_DECREF(cur);
            PyErr_SetString(PyExc_SystemError, "attribute path too long");
            return NULL;
        }
        dfb_memcpy(part, path, len);
        part[len] = '\0';
        Py_SETREF(cur, PyObject_GetAttrString(cur, part));
        path += len + (dot ? 1 : 0);
    }
    return cur;
}

/* Sets *c to a new reference to pandas' class `cls` (an attribute path of
   the pandas module): returns 1, 0 with *c NULL when pandas has no such
   class, -1 with an exception set. */
static int
pd_class(PyObject *pd, const char *cls, PyObject **c)
{
    *c = attr_path(pd, cls);
    if (*c != NULL) {
        return 1;
    }
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
}

/* 1 if `obj` is an instance of pandas' `cls` (an attribute path of the
   pandas module), 0 if not (or pandas has no such class), -1 with an
   exception set. */
static int
pd_isinstance(PyObject *pd, PyObject *obj, const char *cls)
{
    PyObject *c;
    int r = pd_class(pd, cls, &c);
    if (r <= 0) {
        return r;
    }
    r = PyObject_IsInstance(obj, c);
    Py_DECREF(c);
    return r;
}

/* 1 if type(obj) is exactly pandas' `cls` (an attribute path), 0 if not
   (or pandas has none), -1 with an exception set. */
static int
pd_is_exact(PyObject *pd, PyObject *obj, const char *cls)
{
    PyObject *c;
    int r = pd_class(pd, cls, &c);
    if (r <= 0) {
        return r;
    }
    r = (PyObject *)Py_TYPE(obj) == c;
    Py_DECREF(c);
    return r;
}

/* `o` (stolen) checked to be exactly a 1-D ndarray of `n` items (dtype
   kind `kind`, any when 0) that `what` gave: returns it, or NULL with
   TypeError (or the error that made `o` NULL). */
static PyArrayObject *
checked_array(PyObject *o, int64_t n, char kind, const char *what)
{
    if (o == NULL) {
        return NULL;
    }
    if (!PyArray_CheckExact(o) || PyArray_NDIM((PyArrayObject *)o) != 1 ||
        PyArray_DIM((PyArrayObject *)o, 0) != n ||
        (kind != 0 && PyArray_DESCR((PyArrayObject *)o)->kind != kind)) {
        PyErr_Format(PyExc_TypeError,
                     "pandas gave %s of type %.200s, not a 1-D array of %lld "
                     "values",
                     what, Py_TYPE(o)->tp_name, (long long)n);
        Py_DECREF(o);
        return NULL;
    }
    return (PyArrayObject *)o;
}

/* A new C-contiguous 1-D bool array of `n` items (zero), or NULL. */
static PyArrayObject *
new_bools(int64_t n)
{
    npy_intp dims[1] = {(npy_intp)n};
    return (PyArrayObject *)PyArray_ZEROS(1, dims, NPY_BOOL, 0);
}

/* ORs the bool array `src` (1-D, `n` items, any stride) into `dst` (our
   own C-contiguous bool array of `n`).  Cannot fail. */
static void
or_mask(PyArrayObject *dst, PyArrayObject *src)
{
    uint8_t *d = (uint8_t *)PyArray_DATA(dst);
    const char *s = PyArray_BYTES(src);
    const npy_intp stride = PyArray_STRIDE(src, 0);
    const npy_intp n = PyArray_DIM(dst, 0);
    if (stride == 1) { /* the common case, in a loop the compiler widens */
        const uint8_t *u = (const uint8_t *)s;
        for (npy_intp k = 0; k < n; k++) {
            d[k] |= u[k] != 0;
        }
        return;
    }
    for (npy_intp k = 0; k < n; k++) {
        d[k] |= s[k * stride] != 0;
    }
}

/* The number of true items of our own bool array `m`.  Cannot fail. */
static int64_t
count_true(PyArrayObject *m)
{
    const uint8_t *d = (const uint8_t *)PyArray_DATA(m);
    int64_t c = 0;
    for (npy_intp k = 0; k < PyArray_DIM(m, 0); k++) {
        c += d[k] != 0;
    }
    return c;
}

/* A new bool array of our own: `values.isna()` (exactly a bool ndarray of
   the frame's length) ORed with `extra` (our own, or NULL).  NULL with an
   exception set. */
static PyArrayObject *
isna_mask(const pdc_ctx *c, PyObject *values, PyArrayObject *extra)
{
    PyArrayObject *na = checked_array(
        PyObject_CallMethod(values, "isna", NULL), c->n, 'b', "isna()");
    PyArrayObject *m = na == NULL ? NULL : new_bools(c->n);
    if (m != NULL) {
        or_mask(m, na);
        if (extra != NULL) {
            or_mask(m, extra);
        }
    }
    Py_XDECREF(na);
    return m;
}

/* ValueError for `nnull` nulls of the column in "raise" mode.  Returns
   NULL. */
static PyObject *
raise_nulls(const pdc_ctx *c, int64_t nnull)
{
    PyErr_Format(PyExc_ValueError,
                 "column %R has %lld null value%s (nulls='raise')", c->name,
                 (long long)nnull, nnull == 1 ? "" : "s");
    return NULL;
}

/* An object array of our own of `data` (a copy, any array-like of the
   frame's length) with None at the nulls of `mask` (our own, or NULL):
   a MaskedArray in "mask" mode when there are any, the array in "fill"
   mode, ValueError in "raise" mode.  New reference or NULL. */
static PyObject *
objects(const pdc_ctx *c, PyObject *data, PyArrayObject *mask,
        dfb_nulls_mode mode)
{
    PyArrayObject *arr = checked_array(
        PyArray_FromAny(data, PyArray_DescrFromType(NPY_OBJECT), 1, 1,
                        NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY, NULL),
        c->n, 'O', "the column's objects");
    if (arr == NULL) {
        return NULL;
    }
    int64_t nnull = mask == NULL ? 0 : count_true(mask);
    if (nnull == 0) {
        return (PyObject *)arr;
    }
    if (mode == DFB_NULLS_RAISE) {
        Py_DECREF(arr);
        return raise_nulls(c, nnull);
    }
    const uint8_t *m = (const uint8_t *)PyArray_DATA(mask);
    PyObject **items = (PyObject **)PyArray_DATA(arr);
    for (int64_t k = 0; k < c->n; k++) {
        if (m[k]) {
            Py_XSETREF(items[k], Py_NewRef(Py_None));
        }
    }
    if (mode == DFB_NULLS_FILL) {
        return (PyObject *)arr;
    }
    PyObject *res = dfb_masked_array(c->st, (PyObject *)arr, (PyObject *)mask);
    Py_DECREF(arr);
    return res;
}

/* The options of a conversion the Python reader ran as
   from_dataframe(src, nulls=mode[, copy=False]): the defaults, nulls
   `mode`, copies forbidden when the call forbids them (c->allow_copy). */
static dfb_opts
sub_opts(const pdc_ctx *c, dfb_nulls_mode mode)
{
    dfb_opts o = dfb_opts_default;
    o.nulls = mode;
    o.copy = c->allow_copy ? -1 : 0;
    return o;
}

/* The converters' format of numeric dtype `d` (native bool, int, uint,
   float16/32/64, datetime64 / timedelta64 in s, ms, us or ns).  Returns 0,
   or -1 with NotImplementedError naming the column. */
static int
numeric_format(const pdc_ctx *c, PyArray_Descr *d, dfb_format *f)
{
    const Py_ssize_t isz = PyDataType_ELSIZE(d);
    memset(f, 0, sizeof(*f));
    f->byteorder = '=';
    f->bits = (int)(8 * isz);
    if (PyArray_ISNBO(d->byteorder) && !PyDataType_HASFIELDS(d)) {
        switch (d->kind) {
            case 'b':
                if (isz == 1) {
                    f->type = DFB_T_BOOL8;
                    return 0;
                }
                break;
            case 'i':
            case 'u':
                if (isz == 1 || isz == 2 || isz == 4 || isz == 8) {
                    f->type = d->kind == 'i' ? DFB_T_INT : DFB_T_UINT;
                    return 0;
                }
                break;
            case 'f':
                if (isz == 2 || isz == 4 || isz == 8) {
                    f->type = DFB_T_FLOAT;
                    return 0;
                }
                break;
            case 'M':
            case 'm': {
                PyArray_DatetimeMetaData *md =
                    isz == 8 ? &(((PyArray_DatetimeDTypeMetaData *)
                                      PyDataType_C_METADATA(d))
                                     ->meta)
                             : NULL;
                static const char units[] = {[NPY_FR_s] = 's',
                                             [NPY_FR_ms] = 'm',
                                             [NPY_FR_us] = 'u',
                                             [NPY_FR_ns] = 'n'};
                if (md != NULL && md->num == 1 && md->base >= 0 &&
                    (size_t)md->base < sizeof(units) && units[md->base]) {
                    char fmt[8] = {'t', d->kind == 'M' ? 's' : 'D',
                                   units[md->base], d->kind == 'M' ? ':' : 0,
                                   0};
                    if (dfb_format_parse_arrow(fmt, f) == 0) {
                        return 0;
                    }
                }
                break;
            }
            default:
                break;
        }
    }
    PyErr_Format(PyExc_NotImplementedError,
                 "column %R: dfbuffer cannot read values of dtype %S", c->name,
                 (PyObject *)d);
    return -1;
}

/* A numeric column of pandas' values `data` (exactly a 1-D ndarray of the
   frame's length) with the nulls of `mask` (our own bool array, or NULL:
   none; `nnull` true items), converted as the converters convert the same
   values and validity (a column with a byte mask), with options `o`.  New
   reference or NULL. */
static PyObject *
numeric(const pdc_ctx *c, PyObject *data, PyArrayObject *mask, int64_t nnull,
        const dfb_opts *o)
{
    PyArrayObject *a = checked_array(Py_NewRef(data), c->n, 0, "the values");
    if (a == NULL) {
        return NULL;
    }
    dfb_column col;
    memset(&col, 0, sizeof(col));
    PyObject *res = NULL, *buf = NULL, *cont = NULL;
    if (numeric_format(c, PyArray_DESCR(a), &col.fmt) < 0) {
        goto done;
    }
    /* the values contiguous (a copy of a strided view), read-only */
    if (col.fmt.type == DFB_T_BOOL8) {
        /* as Arrow carries them: bit-packed, so a copy of our own */
        if (!dfb_opts_allow_copy(o)) {
            dfb_copy_error(c->st,
                           "converting bit-packed booleans needs a copy");
            dfb_add_column_context(c->st, c->name);
            goto done;
        }
        cont = PyArray_FromAny((PyObject *)a, NULL, 1, 1,
                               NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY, NULL);
    }
    else {
        cont = PyArray_FromAny((PyObject *)a, NULL, 1, 1, NPY_ARRAY_CARRAY_RO,
                               NULL);
        /* pandas' memory is read-only through dfbuffer */
        Py_XSETREF(cont, cont == NULL ? NULL
                                      : PyArray_View((PyArrayObject *)cont,
                                                     NULL, NULL));
        if (cont != NULL) {
            PyArray_CLEARFLAGS((PyArrayObject *)cont, NPY_ARRAY_WRITEABLE);
        }
    }
    buf = cont == NULL ? NULL : dfb_buffer_from_object_impl(c->st, cont, NULL);
    if (buf == NULL) {
        goto done;
    }
    int64_t nbytes;
    if (dfb_checked_mul(c->n, (int64_t)PyArray_ITEMSIZE(a), &nbytes) < 0) {
        PyErr_SetString(PyExc_OverflowError, "column too large");
        goto done;
    }
    col.length = c->n;
    col.data.ptr = PyArray_BYTES((PyArrayObject *)cont);
    col.data.size = nbytes;
    col.data.owner = buf;
    if (mask != NULL) {
        col.null_kind = DFB_NULL_USE_BYTEMASK;
        col.null_value = 1;
        col.null_count = nnull;
        col.validity.ptr = PyArray_BYTES(mask);
        col.validity.size = c->n;
        col.validity.owner = (PyObject *)mask;
    }
    else {
        col.null_kind = DFB_NULL_NON_NULLABLE;
        col.null_count = 0;
    }
    res = dfb_columns_to_ndarray(c->st, &col, 1, o, dfb_opts_allow_copy(o));
    if (res == NULL) {
        dfb_add_column_context(c->st, c->name); /* as a table's column */
    }
done:
    Py_XDECREF(buf);
    Py_XDECREF(cont);
    Py_DECREF(a);
    return res;
}

/* A numeric column `data` with `mask` (our own; passed on only when any
   value is null). */
static PyObject *
numeric_masked(const pdc_ctx *c, PyObject *data, PyArrayObject *mask,
               const dfb_opts *o)
{
    int64_t nnull = mask == NULL ? 0 : count_true(mask);
    return numeric(c, data, nnull > 0 ? mask : NULL, nnull, o);
}

/* The NaT of datetime64 / timedelta64 array `a` (exactly a 1-D ndarray of
   the frame's length, 8-byte values) ORed into `m` (our own).  Cannot
   fail. */
static void
or_nat(PyArrayObject *m, PyArrayObject *a)
{
    uint8_t *d = (uint8_t *)PyArray_DATA(m);
    const char *p = PyArray_BYTES(a);
    const npy_intp stride = PyArray_STRIDE(a, 0);
    for (npy_intp k = 0; k < PyArray_DIM(m, 0); k++) {
        int64_t v;
        dfb_memcpy(&v, p + k * stride, sizeof(v));
        d[k] |= v == INT64_MIN;
    }
}

static PyObject *
column(const pdc_ctx *c, PyObject *values, const dfb_opts *opts,
       PyArrayObject *extra);

/* A Period array's int64 ordinals (period="ordinal"): a read-only view of
   pandas' own values when there is no NaT, else converted as an int64
   column with those nulls.  New reference or NULL. */
static PyObject *
ordinals(const pdc_ctx *c, PyObject *values, const dfb_opts *opts,
         PyArrayObject *extra)
{
    PyArrayObject *data = checked_array(PyObject_GetAttrString(values, "asi8"),
                                        c->n, 'i', "asi8");
    if (data == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    PyArrayObject *mask = isna_mask(c, values, extra);
    if (mask != NULL && count_true(mask) == 0) {
        res = PyArray_View(data, NULL, NULL);
        if (res != NULL) {
            PyArray_CLEARFLAGS((PyArrayObject *)res, NPY_ARRAY_WRITEABLE);
        }
    }
    else if (mask != NULL) {
        dfb_opts o = sub_opts(c, opts->nulls);
        res = numeric(c, (PyObject *)data, mask, count_true(mask), &o);
    }
    Py_XDECREF(mask);
    Py_DECREF(data);
    return res;
}

/* A string column (pandas.StringDtype): objects with None at the nulls,
   or StringDType(na_object=None) with strings="stringdtype".  New
   reference or NULL. */
static PyObject *
strings(const pdc_ctx *c, PyObject *values, const dfb_opts *opts,
        PyArrayObject *extra)
{
    PyObject *vals = Py_NewRef(values), *res = NULL, *objs = NULL;
    PyArrayObject *mask = NULL;
    if (extra != NULL) {
        Py_SETREF(vals, PyObject_CallMethod(vals, "copy", NULL));
        if (vals == NULL ||
            PyObject_SetItem(vals, (PyObject *)extra, Py_None) < 0) {
            goto done;
        }
    }
    mask = isna_mask(c, vals, NULL);
    if (mask == NULL) {
        goto done;
    }
    PyObject *meth = PyObject_GetAttrString(vals, "to_numpy");
    PyObject *args = meth == NULL ? NULL : PyTuple_New(0);
    PyObject *kw = args == NULL ? NULL
                                : Py_BuildValue("{s:O,s:O}", "dtype",
                                                (PyObject *)&PyBaseObject_Type,
                                                "na_value", Py_None);
    objs = kw == NULL ? NULL : PyObject_Call(meth, args, kw);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(meth);
    if (objs == NULL) {
        goto done;
    }
    if (!opts->stringdtype ||
        (opts->nulls == DFB_NULLS_RAISE && count_true(mask) > 0)) {
        res = objects(c, objs, mask, opts->nulls);
        goto done;
    }
    PyObject *cls = PyImport_ImportModule("numpy.dtypes");
    Py_XSETREF(
        cls, cls == NULL ? NULL : PyObject_GetAttrString(cls, "StringDType"));
    PyObject *empty = cls == NULL ? NULL : PyTuple_New(0);
    kw = empty == NULL ? NULL : Py_BuildValue("{s:O}", "na_object", Py_None);
    PyObject *d = kw == NULL ? NULL : PyObject_Call(cls, empty, kw);
    Py_XDECREF(kw);
    Py_XDECREF(empty);
    Py_XDECREF(cls);
    if (d != NULL && !PyArray_DescrCheck(d)) {
        Py_DECREF(d);
        d = NULL;
        PyErr_SetString(PyExc_TypeError, "StringDType() is not a dtype");
    }
    if (d != NULL) {
        res = PyArray_FromAny(
            objs, (PyArray_Descr *)d, 0, 0,
            NPY_ARRAY_DEFAULT | NPY_ARRAY_ENSURECOPY | NPY_ARRAY_FORCECAST,
            NULL);
    }
done:
    Py_XDECREF(objs);
    Py_XDECREF(mask);
    Py_XDECREF(vals);
    return res;
}

/* A categorical column: its categories taken at its codes (read as a
   column of the categories' type, the codes' -1 the nulls), or with
   categorical="codes" a dfbuffer.CategoricalCodes.  New reference or
   NULL. */
static PyObject *
categorical(const pdc_ctx *c, PyObject *values, const dfb_opts *opts)
{
    PyObject *res = NULL, *cats = NULL, *taken = NULL, *arr = NULL;
    PyArrayObject *mask = NULL, *safe = NULL;
    PyObject *got = PyObject_GetAttrString(values, "codes");
    PyArrayObject *codes = checked_array(
        got == NULL ? NULL : PyArray_FromAny(got, NULL, 0, 0, 0, NULL), c->n,
        0, "codes");
    Py_XDECREF(got);
    if (codes == NULL) {
        return NULL;
    }
    if (!PyArray_ISINTEGER(codes) ||
        !PyArray_ISNBO(PyArray_DESCR(codes)->byteorder)) {
        PyErr_SetString(PyExc_TypeError,
                        "pandas gave codes that are not ints");
        goto done;
    }
    /* our own int64 copy of the codes: read once */
    safe = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)codes, PyArray_DescrFromType(NPY_INT64), 1, 1,
        NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY | NPY_ARRAY_FORCECAST, NULL);
    mask = safe == NULL ? NULL : new_bools(c->n);
    if (mask == NULL) {
        goto done;
    }
    int64_t *cd = (int64_t *)PyArray_DATA(safe);
    uint8_t *md = (uint8_t *)PyArray_DATA(mask);
    for (int64_t k = 0; k < c->n; k++) {
        md[k] = cd[k] < 0;
    }
    int64_t nnull = count_true(mask);
    cats = PyObject_GetAttrString(values, "categories");
    if (cats == NULL) {
        goto done;
    }
    if (opts->categorical_codes) {
        if (opts->nulls == DFB_NULLS_RAISE && nnull > 0) {
            res = objects(c, (PyObject *)codes, mask, opts->nulls);
            goto done;
        }
        PyObject *cv = nnull > 0 ? dfb_masked_array(c->st, (PyObject *)codes,
                                                    (PyObject *)mask)
                                 : Py_NewRef(codes);
        arr = cv == NULL ? NULL : PyObject_GetAttrString(cats, "array");
        Py_ssize_t ncats = arr == NULL ? -1 : PyObject_Length(arr);
        dfb_opts d = dfb_opts_default;
        pdc_ctx cc = *c; /* the categories: their own length, copies */
        cc.n = ncats;
        cc.allow_copy = 1;
        PyObject *cat_vals = ncats < 0 ? NULL : column(&cc, arr, &d, NULL);
        int ordered = -1;
        if (cat_vals != NULL) {
            PyObject *o = PyObject_GetAttrString(values, "ordered");
            ordered = o == NULL ? -1 : PyObject_IsTrue(o);
            Py_XDECREF(o);
        }
        if (ordered >= 0) {
            res =
                PyObject_CallFunction(c->st->categorical_codes, "((OOO))", cv,
                                      cat_vals, ordered ? Py_True : Py_False);
        }
        Py_XDECREF(cat_vals);
        Py_XDECREF(cv);
        goto done;
    }
    Py_ssize_t ncats = PyObject_Length(cats);
    if (ncats < 0) {
        goto done;
    }
    if (ncats > 0) {
        for (int64_t k = 0; k < c->n; k++) {
            cd[k] = md[k] ? 0 : cd[k];
        }
        taken = PyObject_CallMethod(cats, "take", "(O)", (PyObject *)safe);
    }
    else {
        taken = PyObject_CallMethod(cats, "take", "([])");
    }
    arr = taken == NULL ? NULL : PyObject_GetAttrString(taken, "array");
    if (arr != NULL) {
        res = column(c, arr, opts, mask);
    }
done:
    Py_XDECREF(arr);
    Py_XDECREF(taken);
    Py_XDECREF(cats);
    Py_XDECREF(mask);
    Py_XDECREF(safe);
    Py_DECREF(codes);
    return res;
}

/* A NumPy array of pandas' (exactly an ndarray) as a column: without
   `extra`, read as the block reader reads a one-column frame of it; with
   it, objects with None at those nulls, or a numeric column with them
   (and NaT).  New reference or NULL. */
static PyObject *
ndarray_column(const pdc_ctx *c, PyObject *values, const dfb_opts *opts,
               PyArrayObject *extra)
{
    dfb_opts o = sub_opts(c, opts->nulls);
    if (extra == NULL) {
        PyObject *cls = PyObject_GetAttrString(c->pd, "DataFrame");
        PyObject *d = cls == NULL ? NULL : PyDict_New();
        PyObject *args = NULL, *kw = NULL, *df = NULL, *got = NULL;
        PyObject *res = NULL;
        if (d != NULL && PyDict_SetItem(d, c->name, values) == 0) {
            args = PyTuple_Pack(1, d);
            kw =
                args == NULL ? NULL : Py_BuildValue("{s:O}", "copy", Py_False);
            df = kw == NULL ? NULL : PyObject_Call(cls, args, kw);
        }
        got = df == NULL
                  ? NULL
                  : c->read_frame(c->st, df, &o, dfb_opts_allow_copy(&o));
        if (got != NULL && PyDict_CheckExact(got)) {
            res = Py_XNewRef(PyDict_GetItemWithError(got, c->name));
        }
        if (res == NULL && !PyErr_Occurred()) {
            PyErr_Format(PyExc_SystemError, "column %R: not read", c->name);
        }
        Py_XDECREF(got);
        Py_XDECREF(df);
        Py_XDECREF(kw);
        Py_XDECREF(args);
        Py_XDECREF(d);
        Py_XDECREF(cls);
        return res;
    }
    PyArrayObject *a = checked_array(Py_NewRef(values), c->n, 0, "the values");
    if (a == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    char kind = PyArray_DESCR(a)->kind;
    PyArrayObject *mask = new_bools(c->n);
    if (mask != NULL) {
        or_mask(mask, extra);
        if ((kind == 'M' || kind == 'm') && PyArray_ITEMSIZE(a) == 8) {
            or_nat(mask, a);
        }
        res = kind == 'O' ? objects(c, values, mask, opts->nulls)
                          : numeric_masked(c, values, mask, &o);
    }
    Py_XDECREF(mask);
    Py_DECREF(a);
    return res;
}

/* The masked arrays' `_data` with `_mask` (ORed with `extra`) as a
   numeric column.  New reference or NULL. */
static PyObject *
masked_column(const pdc_ctx *c, PyObject *values, const dfb_opts *opts,
              PyArrayObject *extra)
{
    PyObject *res = NULL;
    PyArrayObject *data = checked_array(
        PyObject_GetAttrString(values, "_data"), c->n, 0, "_data");
    PyArrayObject *m =
        data == NULL ? NULL
                     : checked_array(PyObject_GetAttrString(values, "_mask"),
                                     c->n, 'b', "_mask");
    PyArrayObject *mask = m == NULL ? NULL : new_bools(c->n);
    if (mask != NULL) {
        or_mask(mask, m);
        if (extra != NULL) {
            or_mask(mask, extra);
        }
        dfb_opts o = sub_opts(c, opts->nulls);
        res = numeric_masked(c, (PyObject *)data, mask, &o);
    }
    Py_XDECREF(mask);
    Py_XDECREF(m);
    Py_XDECREF(data);
    return res;
}

/* One pandas array `values` of column c->name read here, `extra` (our
   own bool array, or NULL) nulls added to its own.  New reference, or
   NULL with an exception set (NotImplementedError for an array dfbuffer
   cannot read without pyarrow). */
static PyObject *
column(const pdc_ctx *c, PyObject *values, const dfb_opts *opts,
       PyArrayObject *extra)
{
    if (Py_EnterRecursiveCall(" reading a pandas column")) {
        return NULL;
    }
    PyObject *res = NULL, *dt = NULL, *tmp = NULL;
    if (PyArray_Check(values)) {
        res = ndarray_column(c, values, opts, extra);
        goto done;
    }
    dt = PyObject_GetAttrString(values, "dtype");
    if (dt == NULL) {
        goto done;
    }
    int r = pd_isinstance(c->pd, dt, "PeriodDtype");
    if (r > 0 && opts->period_ordinal) {
        res = ordinals(c, values, opts, extra);
        goto done;
    }
    if (r == 0) {
        r = pd_isinstance(c->pd, dt, "IntervalDtype");
    }
    if (r > 0) {
        PyArrayObject *mask = isna_mask(c, values, extra);
        res = mask == NULL ? NULL : objects(c, values, mask, opts->nulls);
        Py_XDECREF(mask);
        goto done;
    }
    if (r < 0 || (r = pd_isinstance(c->pd, dt, "SparseDtype")) < 0) {
        goto done;
    }
    if (r > 0) {
        PyObject *dense = PyObject_CallMethod(values, "to_dense", NULL);
        tmp = dense == NULL
                  ? NULL
                  : PyObject_CallMethod(c->pd, "array", "(O)", dense);
        Py_XDECREF(dense);
        res = tmp == NULL ? NULL : column(c, tmp, opts, extra);
        goto done;
    }
    if ((r = pd_isinstance(c->pd, dt, "CategoricalDtype")) != 0) {
        res = r < 0 ? NULL : categorical(c, values, opts);
        goto done;
    }
    if ((r = pd_isinstance(c->pd, dt, "StringDtype")) != 0) {
        res = r < 0 ? NULL : strings(c, values, opts, extra);
        goto done;
    }
    if ((r = pd_isinstance(c->pd, dt, "DatetimeTZDtype")) != 0) {
        if (r < 0) {
            goto done;
        }
        /* the UTC instants, as Arrow holds them */
        PyArrayObject *data = checked_array(
            PyObject_GetAttrString(values, "_ndarray"), c->n, 'M', "_ndarray");
        PyArrayObject *mask = data == NULL ? NULL : new_bools(c->n);
        if (mask != NULL && PyArray_ITEMSIZE(data) == 8) {
            or_nat(mask, data);
        }
        if (mask != NULL && extra != NULL) {
            or_mask(mask, extra);
        }
        dfb_opts o = sub_opts(c, opts->nulls);
        res = mask == NULL ? NULL
                           : numeric_masked(c, (PyObject *)data, mask, &o);
        Py_XDECREF(mask);
        Py_XDECREF(data);
        goto done;
    }
    static const char *const masked[] = {
        "arrays.IntegerArray", "arrays.FloatingArray", "arrays.BooleanArray"};
    for (size_t k = 0; k < sizeof(masked) / sizeof(masked[0]); k++) {
        if ((r = pd_is_exact(c->pd, values, masked[k])) != 0) {
            res = r < 0 ? NULL : masked_column(c, values, opts, extra);
            goto done;
        }
    }
    if ((r = pd_isinstance(c->pd, values, "arrays.NumpyExtensionArray")) !=
        0) {
        tmp = r < 0 ? NULL : PyObject_CallMethod(values, "to_numpy", NULL);
        res = tmp == NULL ? NULL : column(c, tmp, opts, extra);
        goto done;
    }
    PyErr_Format(PyExc_NotImplementedError,
                 "column %R: dfbuffer cannot read a pandas %S column without "
                 "pyarrow",
                 c->name, dt);
done:
    Py_XDECREF(tmp);
    Py_XDECREF(dt);
    Py_LeaveRecursiveCall();
    return res;
}

/* 1 when pyarrow can be imported (a blocked one, None in sys.modules, or
   a missing one: 0), -1 with an exception set. */
static int
have_pyarrow(void)
{
    PyObject *name = PyUnicode_FromString("pyarrow");
    if (name == NULL) {
        return -1;
    }
    PyObject *mods = PySys_GetObject("modules"); /* borrowed */
    PyObject *got = mods == NULL ? NULL : PyObject_GetItem(mods, name);
    if (got != NULL) {
        Py_DECREF(name);
        int r = got != Py_None;
        Py_DECREF(got);
        return r;
    }
    if (mods != NULL && !PyErr_ExceptionMatches(PyExc_KeyError)) {
        Py_DECREF(name);
        return -1;
    }
    PyErr_Clear();
    got = PyImport_Import(name);
    Py_DECREF(name);
    if (got == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ImportError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    Py_DECREF(got);
    return 1;
}

/* 1 if `dt` is a dtype read here whatever pyarrow says (Period, Interval,
   Sparse), 0 if not, -1 with an exception set. */
static int
special(PyObject *pd, PyObject *dt)
{
    static const char *const names[] = {"PeriodDtype", "IntervalDtype",
                                        "SparseDtype"};
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        int r = pd_isinstance(pd, dt, names[k]);
        if (r != 0) {
            return r;
        }
    }
    return 0;
}

/* 1 if reading `values` here makes new values (objects, decoded
   categories, densified or re-encoded strings) rather than viewing them,
   0 if not, -1 with an exception set. */
static int
needs_copy(PyObject *pd, PyObject *values, int ordinal)
{
    if (PyArray_Check(values)) {
        return 0;
    }
    PyObject *dt = PyObject_GetAttrString(values, "dtype");
    if (dt == NULL) {
        return -1;
    }
    int r = pd_isinstance(pd, dt, "PeriodDtype");
    if (r > 0 && ordinal) {
        Py_DECREF(dt);
        return 0; /* the ordinals are pandas' own array */
    }
    if (r >= 0) {
        r = pd_isinstance(pd, dt, "DatetimeTZDtype");
    }
    Py_DECREF(dt);
    static const char *const masked[] = {
        "arrays.IntegerArray", "arrays.FloatingArray", "arrays.BooleanArray"};
    for (size_t k = 0; r == 0 && k < sizeof(masked) / sizeof(masked[0]); k++) {
        r = pd_is_exact(pd, values, masked[k]);
    }
    return r < 0 ? -1 : !r;
}

/* Column `pos` of `frame` (frame.iloc[:, pos].array) read here into *out;
   with opts->skip_unsupported a column that cannot be read becomes
   Py_Ellipsis.  Returns 0, or -1 with an exception set. */
static int
convert_one(pdc_ctx *c, PyObject *frame, Py_ssize_t pos, const dfb_opts *opts,
            int allow_copy, PyObject **out)
{
    *out = NULL;
    PyObject *iloc = PyObject_GetAttrString(frame, "iloc");
    PyObject *all = iloc == NULL ? NULL : PySlice_New(NULL, NULL, NULL);
    PyObject *p = all == NULL ? NULL : PyLong_FromSsize_t(pos);
    PyObject *key = p == NULL ? NULL : PyTuple_Pack(2, all, p); /* [:, pos] */
    Py_XDECREF(p);
    Py_XDECREF(all);
    PyObject *ser = key == NULL ? NULL : PyObject_GetItem(iloc, key);
    PyObject *values =
        ser == NULL ? NULL : PyObject_GetAttrString(ser, "array");
    Py_XDECREF(ser);
    Py_XDECREF(key);
    Py_XDECREF(iloc);
    if (values == NULL) {
        return -1;
    }
    if (!allow_copy) {
        int r = needs_copy(c->pd, values, opts->period_ordinal);
        if (r != 0) {
            if (r > 0) {
                PyObject *dt = PyObject_GetAttrString(values, "dtype");
                if (dt != NULL) {
                    dfb_copy_error(c->st,
                                   "column %R: converting a pandas %S column "
                                   "needs a copy",
                                   c->name, dt);
                    Py_DECREF(dt);
                }
            }
            Py_DECREF(values);
            return -1;
        }
    }
    *out = column(c, values, opts, NULL);
    Py_DECREF(values);
    if (*out != NULL) {
        return 0;
    }
    if (PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
        if (!opts->skip_unsupported) {
            return -1;
        }
        PyErr_Clear();
        *out = Py_NewRef(Py_Ellipsis); /* on_unsupported="skip" */
        return 0;
    }
    if (PyErr_ExceptionMatches(PyExc_ValueError) ||
        PyErr_ExceptionMatches(PyExc_MemoryError) ||
        !PyErr_ExceptionMatches(PyExc_Exception)) {
        return -1;
    }
    if (opts->skip_unsupported) {
        PyErr_Clear();
        *out = Py_NewRef(Py_Ellipsis);
        return 0;
    }
    /* pandas' own errors, named */
    PyObject *exc = dfb_err_take();
    PyErr_Format(PyExc_NotImplementedError,
                 "column %R: pandas could not give its values: %s: %S",
                 c->name, Py_TYPE(exc)->tp_name, exc);
    PyObject *mine = dfb_err_take();
    if (mine == NULL) {
        dfb_err_give(exc);
        return -1;
    }
    PyException_SetContext(mine, Py_NewRef(exc));
    PyException_SetCause(mine, exc); /* steals */
    dfb_err_give(mine);
    return -1;
}

PyObject *
dfb_pd_columns_convert(dfb_state *st, PyObject *frame, PyObject *positions,
                       const dfb_opts *opts, int allow_copy,
                       dfb_pd_frame_reader read_frame)
{
    pdc_ctx c = {.st = st, .allow_copy = allow_copy, .read_frame = read_frame};
    PyObject *res = NULL, *names = NULL, *dtypes = NULL;
    Py_INCREF(frame);
    Py_INCREF(positions);
    c.pd = PyImport_GetModule(st->str.pandas);
    if (c.pd == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_SystemError, "pandas is not imported");
        }
        goto done;
    }
    int arrow = have_pyarrow();
    if (arrow < 0) {
        goto done;
    }
    names = dfb_pandas_frame_names(frame);
    PyObject *dts =
        names == NULL ? NULL : PyObject_GetAttrString(frame, "dtypes");
    dtypes = dts == NULL ? NULL : PySequence_List(dts);
    Py_XDECREF(dts);
    if (dtypes == NULL) {
        goto done;
    }
    if (PyList_GET_SIZE(dtypes) != PyList_GET_SIZE(names)) {
        PyErr_SetString(PyExc_ValueError,
                        "the pandas frame's dtypes and columns differ in "
                        "number");
        goto done;
    }
    c.n = PyObject_Length(frame);
    if (c.n < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "negative frame length");
        }
        goto done;
    }
    Py_ssize_t npos = PyList_GET_SIZE(positions);
    res = PyList_New(npos);
    for (Py_ssize_t j = 0; res != NULL && j < npos; j++) {
        Py_ssize_t pos = PyLong_AsSsize_t(PyList_GET_ITEM(positions, j));
        if (pos < 0 || pos >= PyList_GET_SIZE(names)) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_SystemError, "bad column position");
            }
            Py_CLEAR(res);
            break;
        }
        PyObject *out = NULL;
        int sp = arrow ? special(c.pd, PyList_GET_ITEM(dtypes, pos)) : 1;
        if (sp == 0) {
            out = Py_NewRef(Py_None);
        }
        else if (sp > 0) {
            c.name = PyList_GET_ITEM(names, pos); /* names holds it */
            (void)convert_one(&c, frame, pos, opts, allow_copy, &out);
        }
        if (out == NULL) {
            Py_CLEAR(res);
            break;
        }
        PyList_SET_ITEM(res, j, out);
    }
done:
    Py_XDECREF(dtypes);
    Py_XDECREF(names);
    Py_XDECREF(c.pd);
    Py_DECREF(positions);
    Py_DECREF(frame);
    return res;
}

/* ------------------------------------------------------------------ */
/* Arrow's pandas.period columns                                        */
/* ------------------------------------------------------------------ */

/* pandas, imported for column `key`'s `what` to become `objects`: a new
   reference, or NULL with an exception set (NotImplementedError naming the
   column when pandas does not import, the ImportError as its cause). */
static PyObject *
import_pandas_for(PyObject *key, const char *what, const char *objects)
{
    PyObject *pd = PyImport_ImportModule("pandas");
    if (pd == NULL && PyErr_ExceptionMatches(PyExc_ImportError)) {
        PyObject *cause = dfb_err_take();
        PyErr_Format(PyExc_NotImplementedError,
                     "column %R: pandas %s need pandas to become %s", key,
                     what, objects);
        dfb_err_raise_from(cause);
    }
    return pd;
}

/* The value under `key` of extension metadata `meta` (a str, or None):
   a new reference to it, Py_None when the JSON does not give one (or is
   not JSON), or NULL with another exception set. */
static PyObject *
meta_value(PyObject *meta, const char *key)
{
    if (meta == Py_None) {
        return Py_NewRef(Py_None);
    }
    PyObject *json = PyImport_ImportModule("json");
    PyObject *got =
        json == NULL ? NULL : PyObject_CallMethod(json, "loads", "(O)", meta);
    Py_XDECREF(json);
    PyObject *value = NULL;
    if (got != NULL) {
        PyObject *k = PyUnicode_FromString(key);
        value = k == NULL ? NULL : PyObject_GetItem(got, k);
        Py_XDECREF(k);
        Py_DECREF(got);
    }
    if (value == NULL && (PyErr_ExceptionMatches(PyExc_ValueError) ||
                          PyErr_ExceptionMatches(PyExc_TypeError) ||
                          PyErr_ExceptionMatches(PyExc_KeyError))) {
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    return value;
}

PyObject *
dfb_pd_periods_from_ordinals(dfb_state *st, const char *name, PyObject *values,
                             const char *meta, int32_t meta_len,
                             int allow_copy)
{
    PyObject *res = NULL, *key = NULL, *m = NULL, *freq = NULL, *pd = NULL;
    PyObject *data = NULL, *periods = NULL;
    PyArrayObject *mask = NULL, *ords = NULL, *out = NULL;
    key = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
    m = key == NULL    ? NULL
        : meta != NULL ? PyUnicode_DecodeUTF8(meta, meta_len, "replace")
                       : Py_NewRef(Py_None);
    freq = m == NULL ? NULL : meta_value(m, "freq");
    if (freq == NULL) {
        goto done;
    }
    if (!PyUnicode_Check(freq)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column %R: a pandas.period column without a frequency "
                     "(%R); period='ordinal' gives its ordinals",
                     key, m);
        goto done;
    }
    pd = import_pandas_for(key, "Period ordinals",
                           "Period objects; "
                           "period='ordinal' gives the "
                           "ordinals");
    if (pd == NULL) {
        goto done;
    }
    if (!allow_copy) {
        dfb_copy_error(st,
                       "column %R: converting pandas Period ordinals to "
                       "Period objects needs a copy",
                       key);
        goto done;
    }
    /* the values and their mask (ours), from the converter's result */
    int masked = !PyArray_CheckExact(values);
    data = masked ? PyObject_GetAttrString(values, "data") : Py_NewRef(values);
    if (data == NULL) {
        goto done;
    }
    if (!PyArray_CheckExact(data) ||
        PyArray_NDIM((PyArrayObject *)data) != 1) {
        PyErr_SetString(PyExc_TypeError, "Period ordinals: not a 1-D array");
        goto done;
    }
    int64_t n = PyArray_DIM((PyArrayObject *)data, 0);
    mask = new_bools(n);
    if (mask == NULL) {
        goto done;
    }
    if (masked) {
        PyArrayObject *vm = checked_array(
            PyObject_GetAttrString(values, "mask"), n, 'b', "the mask");
        if (vm == NULL) {
            goto done;
        }
        or_mask(mask, vm);
        Py_DECREF(vm);
    }
    uint8_t *md = (uint8_t *)PyArray_DATA(mask);
    char kind = PyArray_DESCR((PyArrayObject *)data)->kind;
    if (kind == 'f') { /* nulls="fill": ints with nulls came as NaN */
        PyArrayObject *f = (PyArrayObject *)PyArray_FromAny(
            data, PyArray_DescrFromType(NPY_FLOAT64), 1, 1,
            NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY | NPY_ARRAY_FORCECAST,
            NULL);
        if (f == NULL) {
            goto done;
        }
        double *fd = (double *)PyArray_DATA(f); /* our own copy */
        for (int64_t k = 0; k < n; k++) {
            md[k] |= isnan(fd[k]) != 0;
            fd[k] = md[k] ? 0.0 : fd[k]; /* no NaN cast to int */
        }
        ords = (PyArrayObject *)PyArray_FromAny(
            (PyObject *)f, PyArray_DescrFromType(NPY_INT64), 1, 1,
            NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY | NPY_ARRAY_FORCECAST,
            NULL);
        Py_DECREF(f);
    }
    else {
        ords = (PyArrayObject *)PyArray_FromAny(
            data, PyArray_DescrFromType(NPY_INT64), 1, 1,
            NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY | NPY_ARRAY_FORCECAST,
            NULL);
    }
    if (ords == NULL) {
        goto done;
    }
    int64_t *od = (int64_t *)PyArray_DATA(ords);
    int64_t nnull = 0;
    for (int64_t k = 0; k < n; k++) {
        if (md[k]) {
            od[k] = INT64_MIN;
            nnull++;
        }
    }
    PyObject *dtype = PyObject_CallMethod(pd, "PeriodDtype", "(O)", freq);
    PyObject *cls = dtype == NULL ? NULL : attr_path(pd, "arrays.PeriodArray");
    PyObject *args = cls == NULL ? NULL : PyTuple_Pack(1, (PyObject *)ords);
    PyObject *kw =
        args == NULL ? NULL : Py_BuildValue("{s:O}", "dtype", dtype);
    periods = kw == NULL ? NULL : PyObject_Call(cls, args, kw);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(cls);
    Py_XDECREF(dtype);
    if (periods == NULL) {
        if (PyErr_ExceptionMatches(PyExc_Exception)) {
            PyObject *exc = dfb_err_take();
            PyErr_Format(PyExc_NotImplementedError,
                         "column %R: pandas could not make Periods of "
                         "frequency %R: %s: %S",
                         key, freq, Py_TYPE(exc)->tp_name, exc);
            dfb_err_raise_from(exc);
        }
        goto done;
    }
    out = checked_array(
        PyArray_FromAny(periods, PyArray_DescrFromType(NPY_OBJECT), 1, 1,
                        NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY, NULL),
        n, 'O', "the Period objects");
    if (out == NULL) {
        goto done;
    }
    if (nnull == 0) {
        res = Py_NewRef(out);
        goto done;
    }
    PyObject **items = (PyObject **)PyArray_DATA(out);
    for (int64_t k = 0; k < n; k++) {
        if (md[k]) {
            Py_XSETREF(items[k], Py_NewRef(Py_None));
        }
    }
    res = masked ? dfb_masked_array(st, (PyObject *)out, (PyObject *)mask)
                 : Py_NewRef(out);
done:
    Py_XDECREF(out);
    Py_XDECREF(periods);
    Py_XDECREF(ords);
    Py_XDECREF(mask);
    Py_XDECREF(data);
    Py_XDECREF(pd);
    Py_XDECREF(freq);
    Py_XDECREF(m);
    Py_XDECREF(key);
    return res;
}

/* ------------------------------------------------------------------ */
/* Arrow's pandas.interval columns                                      */
/* ------------------------------------------------------------------ */

/* Sets a NotImplementedError naming column `key` for the error set now
   (its __cause__), which pandas raised making Intervals.  Returns NULL. */
static PyObject *
intervals_refused(PyObject *key)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception) ||
        PyErr_ExceptionMatches(PyExc_MemoryError)) {
        return NULL;
    }
    PyObject *exc = dfb_err_take();
    PyErr_Format(PyExc_NotImplementedError,
                 "column %R: pandas could not make Intervals of its bounds: "
                 "%s: %S",
                 key, Py_TYPE(exc)->tp_name, exc);
    dfb_err_raise_from(exc);
    return NULL;
}

PyObject *
dfb_pd_intervals_from_bounds(dfb_state *st, const char *name, PyObject *left,
                             PyObject *right, const char *meta,
                             int32_t meta_len, dfb_nulls_mode mode,
                             int allow_copy)
{
    PyObject *res = NULL, *key = NULL, *m = NULL, *closed = NULL, *pd = NULL;
    PyObject *ivs = NULL;
    PyArrayObject *na = NULL, *mask = NULL;
    Py_INCREF(left);
    Py_INCREF(right);
    key = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
    m = key == NULL    ? NULL
        : meta != NULL ? PyUnicode_DecodeUTF8(meta, meta_len, "replace")
                       : Py_NewRef(Py_None);
    closed = m == NULL ? NULL : meta_value(m, "closed");
    if (closed == NULL) {
        goto done;
    }
    if (closed == Py_None) {
        Py_SETREF(closed, PyUnicode_FromString("right")); /* pandas' default */
        if (closed == NULL) {
            goto done;
        }
    }
    if (!allow_copy) {
        dfb_copy_error(st,
                       "column %R: converting pandas Interval bounds to "
                       "Interval objects needs a copy",
                       key);
        goto done;
    }
    if (!PyArray_CheckExact(left) ||
        PyArray_NDIM((PyArrayObject *)left) != 1 ||
        !PyArray_CheckExact(right) ||
        PyArray_NDIM((PyArrayObject *)right) != 1 ||
        PyArray_DIM((PyArrayObject *)left, 0) !=
            PyArray_DIM((PyArrayObject *)right, 0)) {
        PyErr_SetString(PyExc_TypeError,
                        "Interval bounds: not two 1-D arrays of one length");
        goto done;
    }
    int64_t n = PyArray_DIM((PyArrayObject *)left, 0);
    if (n == 0) { /* no bounds to type: an empty object column */
        npy_intp zero = 0;
        res = PyArray_SimpleNew(1, &zero, NPY_OBJECT);
        goto done;
    }
    pd = import_pandas_for(key, "Interval bounds", "Interval objects");
    if (pd == NULL) {
        goto done;
    }
    /* the bounds copied first (a view of producer memory can change while
       pandas checks left <= right and then reads them again); then
       IntervalArray.from_arrays types them as pandas' frame column holds
       them (Timestamps of datetime64 bounds); NaN / NaT on both sides is a
       null Interval */
    Py_SETREF(left, PyArray_NewCopy((PyArrayObject *)left, NPY_CORDER));
    if (left == NULL) {
        goto done;
    }
    Py_SETREF(right, PyArray_NewCopy((PyArrayObject *)right, NPY_CORDER));
    if (right == NULL) {
        goto done;
    }
    PyObject *cls = attr_path(pd, "arrays.IntervalArray");
    PyObject *make =
        cls == NULL ? NULL : PyObject_GetAttrString(cls, "from_arrays");
    Py_XDECREF(cls);
    PyObject *args = make == NULL ? NULL : PyTuple_Pack(2, left, right);
    PyObject *kw =
        args == NULL ? NULL : Py_BuildValue("{s:O}", "closed", closed);
    ivs = kw == NULL ? NULL : PyObject_Call(make, args, kw);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(make);
    if (ivs == NULL) {
        (void)intervals_refused(key);
        goto done;
    }
    na = checked_array(PyObject_CallMethod(ivs, "isna", NULL), n, 'b',
                       "isna()");
    mask = na == NULL ? NULL : new_bools(n);
    if (mask == NULL) {
        goto done;
    }
    or_mask(mask, na);
    pdc_ctx c = {
        .st = st, .pd = pd, .name = key, .n = n, .allow_copy = allow_copy};
    res = objects(&c, ivs, mask, mode);
done:
    Py_XDECREF(mask);
    Py_XDECREF(na);
    Py_XDECREF(ivs);
    Py_XDECREF(pd);
    Py_XDECREF(closed);
    Py_XDECREF(m);
    Py_XDECREF(key);
    Py_XDECREF(right);
    Py_XDECREF(left);
    return res;
}
