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
#include "dfbuffer/common.h"
#include "dfbuffer/convert.h"
#include "dfbuffer/args.h"

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
    "pandas: Categorical.from_codes(codes.filled(-1), categories, ordered).",
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

int
dfb_parse_conv_opts(PyObject *categorical, PyObject *strings, int *opts)
{
    static const char *const cat[] = {"decode", "codes", NULL};
    static const char *const str[] = {"object", "stringdtype", NULL};
    int c = 0, t = 0;
    *opts = 0;
    if (dfb_parse_choice(categorical, "categorical", cat, &c) < 0 ||
        dfb_parse_choice(strings, "strings", str, &t) < 0) {
        return -1;
    }
    *opts =
        (c ? DFB_OPT_CATEGORICAL_CODES : 0) | (t ? DFB_OPT_STRINGDTYPE : 0);
    return 0;
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
   become int64), RAISE refuses nulls.  Returns a new reference or NULL. */
static PyObject *
codes_nulls(PyObject *codes, int mode, int allow_copy)
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
        PyErr_Format(PyExc_ValueError,
                     "the column has %lld null values (nulls='raise')",
                     (long long)PyArray_CountNonzero((PyArrayObject *)mask));
        goto done;
    }
    if (!allow_copy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "a copy is needed (categorical codes with nulls in "
                        "fill mode) but allow_copy is False");
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

PyObject *
dfb_categorical_codes(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                      int nulls, int allow_copy)
{
    const int mode = nulls & DFB_NULLS_MODE_BITS;
    const int cat_opts =
        (nulls & ~DFB_NULLS_MODE_BITS) & ~DFB_OPT_CATEGORICAL_CODES;
    PyObject *codes = NULL, *cats = NULL, *res = NULL;
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
    cats =
        dfb_columns_to_ndarray(st, chunks[0].categories, 1,
                               (dfb_nulls_mode)(mode | cat_opts), allow_copy);
    if (cats == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        if (same_categories(chunks[0].categories, chunks[i].categories)) {
            continue;
        }
        PyObject *other = dfb_columns_to_ndarray(
            st, chunks[i].categories, 1, (dfb_nulls_mode)(mode | cat_opts),
            allow_copy);
        if (other == NULL) {
            goto done;
        }
        int eq = arrays_equal(cats, other);
        Py_DECREF(other);
        if (eq < 0) {
            goto done;
        }
        if (eq == 0) {
            PyErr_Format(PyExc_NotImplementedError,
                         "chunk %zd of the categorical column has other "
                         "categories than chunk 0; use categorical='decode'",
                         i);
            goto done;
        }
    }
    codes = dfb_columns_to_ndarray(st, cc, n, DFB_NULLS_MASK, allow_copy);
    if (codes == NULL) {
        goto done;
    }
    if (check_code_range(codes, chunks[0].categories->length) < 0) {
        goto done;
    }
    codes = codes_nulls(codes, mode, allow_copy);
    if (codes == NULL) {
        goto done;
    }
    res = PyStructSequence_New((PyTypeObject *)st->categorical_codes);
    if (res == NULL) {
        goto done;
    }
    PyStructSequence_SetItem(res, 0, codes);
    PyStructSequence_SetItem(res, 1, cats);
    PyStructSequence_SetItem(
        res, 2, Py_NewRef(chunks[0].is_ordered ? Py_True : Py_False));
    codes = cats = NULL;
done:
    Py_XDECREF(codes);
    Py_XDECREF(cats);
    PyMem_Free(cc);
    return res;
}

PyObject *
dfb_columns_to_ndarray(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                       dfb_nulls_mode nulls, int allow_copy)
{
    if (((int)nulls & DFB_OPT_CATEGORICAL_CODES) && n > 0 &&
        chunks[0].fmt.type == DFB_T_DICTIONARY) {
        if (dfb_columns_check(chunks, n) < 0) {
            return NULL;
        }
        return dfb_categorical_codes(st, chunks, n, (int)nulls, allow_copy);
    }
    return dfb_columns_convert(st, chunks, n, nulls, allow_copy);
}
