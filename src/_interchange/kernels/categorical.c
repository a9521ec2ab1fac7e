/* dfbuffer: categorical columns without decoding (categorical="codes"),
 * the converters' entry dfb_columns_to_ndarray that routes them here (every
 * other column goes to the kernel, convert.c), and the parser of the
 * converters' categorical= / strings= options.
 *
 * The result is dfbuffer.CategoricalCodes, a struct sequence (a final heap
 * type with GC, made by PyStructSequence_NewType) with the fields codes,
 * categories and ordered.  The codes are the producer's integer buffer,
 * viewed without a copy; the categories are converted like any column.
 */
#include "common.h"
#include "model.h"
#include "kernels.h"
#include "args.h"

#include <string.h>

static PyStructSequence_Field codes_fields[] = {
    {"codes",
     "the integer codes: a zero-copy view of the producer's buffer "
     "(a numpy.ma.MaskedArray where nulls='mask' and a code is "
     "null; a copy with -1 in the null slots where nulls='fill')"},
    {"categories", "the categories, converted like any column"},
    {"ordered", "True if the order of the categories is meaningful"},
    {NULL, NULL},
};

static PyStructSequence_Desc codes_desc = {
    "dfbuffer.CategoricalCodes",
    "CategoricalCodes(codes, categories, ordered)\n\n"
    "A categorical column as column_to_ndarray(..., categorical='codes')\n"
    "and from_dataframe(..., categorical='codes') return it: the codes\n"
    "without decoding, the categories, and whether they are ordered.\n"
    "pandas: Categorical.from_codes(codes.filled(-1), categories, "
    "ordered).\n\n"
    "Parameters\n"
    "----------\n"
    "codes : numpy.ndarray or numpy.ma.MaskedArray\n"
    "    The integer codes (masked where null, in nulls='mask').\n"
    "categories : numpy.ndarray\n"
    "    The categories, converted like any column.\n"
    "ordered : bool\n"
    "    Whether the order of the categories is meaningful.\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import pandas as pd\n"
    ">>> import dfbuffer\n"
    ">>> df = pd.DataFrame({\"c\": pd.Categorical([\"b\", \"a\", \"b\"], "
    "ordered=True)})\n"
    ">>> res = dfbuffer.from_dataframe(df, categorical=\"codes\")[\"c\"]\n"
    ">>> res.codes.tolist(), res.categories.tolist(), res.ordered\n"
    "([1, 0, 1], ['a', 'b'], True)\n"
    ">>> codes, categories, ordered = res",
    codes_fields,
    3,
};

int
dfb_categorical_state_init(PyObject *m, dfb_state *st)
{
    PyTypeObject *tp = PyStructSequence_NewType(&codes_desc);
    if (tp == NULL) {
        return -1;
    }
    st->categorical_codes = (PyObject *)tp;
    return PyModule_AddObjectRef(m, "CategoricalCodes", (PyObject *)tp);
}

/* Returns 1 if the categories of chunks `a` and `b` are the same memory
   (the same dictionary), else 0. */
static int
same_categories(const dfb_column *a, const dfb_column *b)
{
    return a->length == b->length && a->offset == b->offset &&
           a->fmt.type == b->fmt.type && a->fmt.bits == b->fmt.bits &&
           a->data.ptr == b->data.ptr && a->offsets.ptr == b->offsets.ptr &&
           a->validity.ptr == b->validity.ptr;
}

/* Returns 1 if arrays `a` and `b` hold equal values, 0 if not, -1 with an
   exception set. */
static int
arrays_equal(PyObject *a, PyObject *b)
{
    if (PyArray_Check(a) && PyArray_Check(b) &&
        PyArray_SIZE((PyArrayObject *)a) != PyArray_SIZE((PyArrayObject *)b)) {
        return 0;
    }
    PyObject *eq = PyObject_RichCompare(a, b, Py_EQ);
    if (eq == NULL) {
        return -1;
    }
    PyObject *all = PyObject_CallMethod(eq, "all", NULL);
    Py_DECREF(eq);
    if (all == NULL) {
        return -1;
    }
    int r = PyObject_IsTrue(all);
    Py_DECREF(all);
    return r;
}

/* Checks that every unmasked code of `codes` (an ndarray or MaskedArray)
   lies in [0, ncats).  Returns 0, or -1 with ValueError. */
static int
check_code_range(PyObject *codes, int64_t ncats)
{
    if (PyObject_Size(codes) == 0) {
        return PyErr_Occurred() ? -1 : 0;
    }
    const char *which[2] = {"min", "max"};
    for (int k = 0; k < 2; k++) {
        PyObject *v = PyObject_CallMethod(codes, which[k], NULL);
        if (v == NULL) {
            return -1;
        }
        if (!PyArray_IsScalar(v, Integer) && !PyLong_Check(v)) {
            Py_DECREF(v); /* every code is null: numpy.ma.masked */
            return 0;
        }
        long long x = PyLong_AsLongLong(v);
        int overflow = x == -1 && PyErr_Occurred();
        Py_DECREF(v);
        if (overflow) {
            PyErr_Clear();
            x = k == 0 ? -1 : ncats; /* beyond int64: out of range */
        }
        if (x < 0 || x >= ncats) {
            PyErr_Format(PyExc_ValueError,
                         "categorical code %lld is out of range for %lld "
                         "categories",
                         x, (long long)ncats);
            return -1;
        }
    }
    return 0;
}

/* Applies nulls mode `mode` to `codes` (stolen): MASK keeps it, FILL
   returns a copy with -1 in the null slots (signed codes; unsigned ones
   become int64), RAISE refuses nulls, a needed copy under !allow_copy is
   st's CopyError.  Returns a new reference or NULL. */
static PyObject *
codes_nulls(dfb_state *st, PyObject *codes, int mode, int allow_copy)
{
    if (PyArray_CheckExact(codes) || mode == DFB_NULLS_MASK) {
        return codes; /* no nulls, or masked */
    }
    PyObject *data = PyObject_GetAttrString(codes, "data");
    PyObject *mask = PyObject_GetAttrString(codes, "mask");
    Py_DECREF(codes);
    PyObject *res = NULL;
    if (data == NULL || mask == NULL || !PyArray_Check(data) ||
        !PyArray_Check(mask)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "codes are not a MaskedArray");
        }
        goto done;
    }
    if (mode == DFB_NULLS_RAISE) {
        npy_intp nnull = PyArray_CountNonzero((PyArrayObject *)mask);
        PyErr_Format(PyExc_ValueError,
                     "the column has %lld null value%s (nulls='raise')",
                     (long long)nnull, nnull == 1 ? "" : "s");
        goto done;
    }
    if (!allow_copy) {
        dfb_copy_error(st,
                       "filling the nulls of categorical codes with -1 "
                       "needs a copy");
        goto done;
    }
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)data);
    PyArray_Descr *target = d->kind == 'u'
                                ? PyArray_DescrFromType(NPY_INT64)
                                : PyArray_DescrNewByteorder(d, NPY_NATIVE);
    if (target == NULL) {
        goto done;
    }
    res = PyArray_CastToType((PyArrayObject *)data, target, 0);
    if (res == NULL) {
        goto done;
    }
    PyObject *minus1 = PyLong_FromLong(-1);
    PyObject *r = minus1 == NULL
                      ? NULL
                      : PyArray_PutMask((PyArrayObject *)res, minus1, mask);
    Py_XDECREF(minus1);
    if (r == NULL) {
        Py_CLEAR(res);
        goto done;
    }
    Py_DECREF(r);
done:
    Py_XDECREF(data);
    Py_XDECREF(mask);
    return res;
}

/* The categories of several chunks unified: `dicts` (a list of the
   distinct converted category arrays, none masked) concatenated, the
   values kept in order of first appearance.  On success returns the
   unified categories (a new reference) and sets *map (PyMem: for the
   category at position k of the concatenation, its unified code) and
   *ncats; returns NULL with an exception set otherwise. */
static PyObject *
unify_categories(PyObject *dicts, int64_t **map, int64_t *ncats)
{
    PyObject *all = NULL, *vals = NULL, *seen = NULL, *take = NULL;
    PyObject *res = NULL;
    *map = NULL;
    all = PyArray_Concatenate(dicts, 0);
    if (all == NULL) {
        goto done;
    }
    vals = PyObject_CallMethod(all, "tolist", NULL);
    if (vals == NULL || !PyList_Check(vals)) {
        if (vals != NULL) {
            PyErr_SetString(PyExc_TypeError, "tolist() did not give a list");
        }
        goto done;
    }
    Py_ssize_t total = PyList_GET_SIZE(vals);
    npy_intp dim = total;
    take = PyArray_SimpleNew(1, &dim, NPY_INTP);
    seen = PyDict_New();
    *map = PyMem_Malloc((size_t)(total > 0 ? total : 1) * sizeof(int64_t));
    if (take == NULL || seen == NULL || *map == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    npy_intp *tk = PyArray_DATA((PyArrayObject *)take);
    npy_intp nnew = 0;
    for (Py_ssize_t k = 0; k < total; k++) {
        PyObject *v = PyList_GET_ITEM(vals, k); /* the list is ours */
        PyObject *code;
        int got = dfb_dict_get_ref(seen, v, &code);
        if (got > 0) {
            (*map)[k] = (int64_t)PyLong_AsSsize_t(code);
            Py_DECREF(code);
            continue;
        }
        if (got < 0) {
            goto done; /* an unhashable category */
        }
        code = PyLong_FromSsize_t(nnew);
        int r = code == NULL ? -1 : PyDict_SetItem(seen, v, code);
        Py_XDECREF(code);
        if (r < 0) {
            goto done;
        }
        tk[nnew] = k;
        (*map)[k] = nnew++;
    }
    PyArray_Dims keep = {&nnew, 1};
    PyObject *r = PyArray_Resize((PyArrayObject *)take, &keep, 0, NPY_CORDER);
    if (r == NULL) {
        goto done;
    }
    Py_DECREF(r);
    res = PyArray_TakeFrom((PyArrayObject *)all, take, 0, NULL, NPY_RAISE);
    *ncats = nnew;
done:
    if (res == NULL) {
        PyMem_Free(*map);
        *map = NULL;
    }
    Py_XDECREF(all);
    Py_XDECREF(vals);
    Py_XDECREF(seen);
    Py_XDECREF(take);
    return res;
}

/* The smallest signed integer type that holds codes 0..ncats-1 and -1. */
static int
codes_typenum(int64_t ncats)
{
    return ncats <= INT8_MAX    ? NPY_INT8
           : ncats <= INT16_MAX ? NPY_INT16
           : ncats <= INT32_MAX ? NPY_INT32
                                : NPY_INT64;
}

/* Stores code `v` as element `j` of the array data `out` of type `tn`. */
static void
store_code(void *out, int tn, int64_t j, int64_t v)
{
    switch (tn) {
        case NPY_INT8:
            ((int8_t *)out)[j] = (int8_t)v;
            break;
        case NPY_INT16:
            ((int16_t *)out)[j] = (int16_t)v;
            break;
        case NPY_INT32:
            ((int32_t *)out)[j] = (int32_t)v;
            break;
        default:
            ((int64_t *)out)[j] = v;
    }
}

/* Remaps `codes` (the chunks' codes concatenated: an ndarray, or a
   MaskedArray where null; stolen) to the unified categories: chunk i
   (`lens[i]` codes) uses dictionary `dict_of[i]`, whose code c becomes
   map[base[dict_of[i]] + c]; `dlen` gives each dictionary's length.  Null
   slots hold -1.  Returns a new array of codes_typenum(ncats) (a
   MaskedArray with the same mask where null), or NULL with ValueError for
   a code out of its dictionary's range. */
static PyObject *
remap_codes(PyObject *codes, Py_ssize_t n, const int64_t *lens,
            const Py_ssize_t *dict_of, const int64_t *base,
            const int64_t *dlen, const int64_t *map, int64_t ncats)
{
    PyObject *data = NULL, *mask = NULL, *src = NULL, *msk = NULL;
    PyObject *out = NULL, *res = NULL;
    int masked = !PyArray_CheckExact(codes);
    if (masked) {
        data = PyObject_GetAttrString(codes, "data");
        mask = PyObject_GetAttrString(codes, "mask");
        if (data == NULL || mask == NULL) {
            goto done;
        }
    }
    else {
        data = Py_NewRef(codes);
    }
    src = PyArray_FROMANY(data, NPY_INT64, 1, 1,
                          NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
    if (src == NULL) {
        goto done;
    }
    npy_intp len = PyArray_SIZE((PyArrayObject *)src);
    if (masked) {
        msk = PyArray_FROMANY(mask, NPY_BOOL, 0, 1, NPY_ARRAY_CARRAY_RO);
        if (msk == NULL) {
            goto done;
        }
        if (PyArray_NDIM((PyArrayObject *)msk) != 1 ||
            PyArray_SIZE((PyArrayObject *)msk) != len) {
            Py_CLEAR(msk); /* numpy.ma.nomask: no nulls */
        }
    }
    int64_t sum = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        sum += lens[i];
    }
    if (sum != (int64_t)len) {
        PyErr_SetString(PyExc_ValueError,
                        "categorical codes do not match the chunk lengths");
        goto done;
    }
    int tn = codes_typenum(ncats);
    out = PyArray_SimpleNew(1, &len, tn);
    if (out == NULL) {
        goto done;
    }
    /* the codes may be the producer's memory (a view when they were int64
       already): each read once through core's checked reader */
    const char *sv = PyArray_DATA((PyArrayObject *)src);
    const npy_bool *mv = msk ? PyArray_DATA((PyArrayObject *)msk) : NULL;
    void *ov = PyArray_DATA((PyArrayObject *)out);
    int64_t pos = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t *m = map + base[dict_of[i]];
        const int64_t nc = dlen[dict_of[i]];
        dfb_codes rd;
        dfb_error err;
        /* bounded: len int64 codes of an array of our own */
        if (dfb_codes_init(&rd, sv, 8 * (int64_t)len, 8, 1, 0, pos, lens[i],
                           nc, &err) != DFB_OK) {
            PyErr_SetString(PyExc_ValueError, err.message);
            goto done;
        }
        for (int64_t j = 0; j < lens[i]; j++, pos++) {
            if (mv != NULL && mv[pos]) {
                store_code(ov, tn, pos, -1);
                continue;
            }
            int64_t v;
            if (dfb_codes_get(&rd, j, &v) != DFB_OK) {
                PyErr_Format(PyExc_ValueError,
                             "categorical code %lld is out of range for "
                             "%lld categories",
                             (long long)v, (long long)nc);
                goto done;
            }
            store_code(ov, tn, pos, m[v]);
        }
    }
    if (masked) {
        res = PyObject_CallFunctionObjArgs((PyObject *)Py_TYPE(codes), out,
                                           mask, NULL);
    }
    else {
        res = Py_NewRef(out);
    }
done:
    Py_DECREF(codes);
    Py_XDECREF(data);
    Py_XDECREF(mask);
    Py_XDECREF(src);
    Py_XDECREF(msk);
    Py_XDECREF(out);
    return res;
}

PyObject *
dfb_categorical_make(dfb_state *st, PyObject *codes, PyObject *cats,
                     int ordered, int mode, int allow_copy)
{
    codes = codes_nulls(st, codes, mode, allow_copy);
    PyObject *res =
        codes != NULL
            ? PyStructSequence_New((PyTypeObject *)st->categorical_codes)
            : NULL;
    if (res == NULL) {
        Py_XDECREF(codes);
        Py_DECREF(cats);
        return NULL;
    }
    PyStructSequence_SetItem(res, 0, codes);
    PyStructSequence_SetItem(res, 1, cats);
    PyStructSequence_SetItem(res, 2, Py_NewRef(ordered ? Py_True : Py_False));
    return res;
}

PyObject *
dfb_categorical_codes(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                      const dfb_opts *opts, int allow_copy)
{
    const int mode = opts->nulls;
    /* the categories: the call's options, never as codes themselves */
    dfb_opts cat_opts = *opts;
    cat_opts.categorical_codes = 0;
    PyObject *codes = NULL, *cats = NULL, *res = NULL, *dicts = NULL;
    Py_ssize_t *dict_of = NULL, *rep = NULL;
    int64_t *lens = NULL, *base = NULL, *dlen = NULL;
    dfb_column *cc = PyMem_Calloc((size_t)n, sizeof(dfb_column));
    if (cc == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        cc[i] = chunks[i];
        cc[i].fmt = chunks[i].index;
        cc[i].categories = NULL;
        cc[i].is_ordered = 0;
        if (cc[i].fmt.type != DFB_T_INT && cc[i].fmt.type != DFB_T_UINT) {
            PyErr_SetString(PyExc_ValueError,
                            "categorical codes must be integers");
            goto done;
        }
    }
    /* the distinct dictionaries (by memory, then by value) */
    dict_of = PyMem_Calloc((size_t)n, sizeof(Py_ssize_t));
    lens = PyMem_Calloc((size_t)n, sizeof(int64_t));
    base = PyMem_Calloc((size_t)n + 1, sizeof(int64_t));
    dlen = PyMem_Calloc((size_t)n, sizeof(int64_t));
    rep = PyMem_Calloc((size_t)n, sizeof(Py_ssize_t));
    dicts = PyList_New(0);
    if (dict_of == NULL || lens == NULL || base == NULL || dlen == NULL ||
        rep == NULL || dicts == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    Py_ssize_t ndicts = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        lens[i] = chunks[i].length;
        Py_ssize_t d = 0;
        while (d < ndicts && !same_categories(chunks[rep[d]].categories,
                                              chunks[i].categories)) {
            d++;
        }
        if (d < ndicts) {
            dict_of[i] = d;
            continue;
        }
        PyObject *other = dfb_columns_to_ndarray(st, chunks[i].categories, 1,
                                                 &cat_opts, allow_copy);
        if (other == NULL) {
            goto done;
        }
        for (d = 0; d < ndicts; d++) {
            int eq = arrays_equal(PyList_GET_ITEM(dicts, d), other);
            if (eq < 0) {
                Py_DECREF(other);
                goto done;
            }
            if (eq == 1) {
                break;
            }
        }
        if (d == ndicts) {
            int r = PyList_Append(dicts, other);
            if (r < 0) {
                Py_DECREF(other);
                goto done;
            }
            rep[d] = i;
            dlen[d] = chunks[i].categories->length;
            base[d + 1] = base[d] + dlen[d];
            ndicts++;
        }
        Py_DECREF(other);
        dict_of[i] = d;
    }
    codes = dfb_columns_to_ndarray(st, cc, n, &dfb_opts_default, allow_copy);
    if (codes == NULL) {
        goto done;
    }
    if (ndicts == 1) {
        cats = Py_NewRef(PyList_GET_ITEM(dicts, 0));
        if (check_code_range(codes, chunks[0].categories->length) < 0) {
            goto done;
        }
    }
    else {
        /* other categories in later chunks: unified in order of first
           appearance, the codes remapped (a copy: several chunks are) */
        for (Py_ssize_t d = 0; d < ndicts; d++) {
            if (!PyArray_CheckExact(PyList_GET_ITEM(dicts, d))) {
                PyErr_SetString(PyExc_NotImplementedError,
                                "the chunks of the categorical column have "
                                "different categories, some of them null; "
                                "use categorical='decode'");
                goto done;
            }
        }
        int64_t *map = NULL, ncats = 0;
        cats = unify_categories(dicts, &map, &ncats);
        if (cats == NULL) {
            goto done;
        }
        PyObject *tmp = codes;
        codes = NULL;
        codes = remap_codes(tmp, n, lens, dict_of, base, dlen, map, ncats);
        PyMem_Free(map);
        if (codes == NULL) {
            goto done;
        }
    }
    res = dfb_categorical_make(st, codes, cats, chunks[0].is_ordered, mode,
                               allow_copy);
    codes = cats = NULL;
done:
    Py_XDECREF(codes);
    Py_XDECREF(cats);
    Py_XDECREF(dicts);
    PyMem_Free(dict_of);
    PyMem_Free(rep);
    PyMem_Free(lens);
    PyMem_Free(base);
    PyMem_Free(dlen);
    PyMem_Free(cc);
    return res;
}

PyObject *
dfb_columns_to_ndarray(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                       const dfb_opts *opts, int allow_copy)
{
    if (opts->categorical_codes && n > 0 &&
        chunks[0].fmt.type == DFB_T_DICTIONARY) {
        if (dfb_columns_check(chunks, n) < 0) {
            return NULL;
        }
        return dfb_categorical_codes(st, chunks, n, opts, allow_copy);
    }
    return dfb_columns_convert(st, chunks, n, opts, allow_copy);
}
