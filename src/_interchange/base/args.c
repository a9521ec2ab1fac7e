/* dfbuffer: the one argument parser of the module functions and the
 * parsers of their shared options (nulls=, flags, counts, str choices).
 *
 * Depends on no other file of the extension.
 */
#include "common.h"
#include "args.h"

#include <stdarg.h>
#include <string.h>

/* Returns the index of keyword `k` in spec->names, or -1. */
static int
find_name(const dfb_argspec *spec, PyObject *const *fast, PyObject *k)
{
    if (fast != NULL) {
        for (int j = 0; spec->names[j] != NULL; j++) {
            if (fast[j] != NULL && fast[j] == k) {
                return j;
            }
        }
    }
    for (int j = 0; spec->names[j] != NULL; j++) {
        if (PyUnicode_CompareWithASCIIString(k, spec->names[j]) == 0) {
            return j;
        }
    }
    return -1;
}

int
dfb_parse_args(const dfb_argspec *spec, PyObject *const *fast,
               PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               PyObject **out)
{
    if (nargs > spec->npos) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes %d positional argument%s but %zd were given",
                     spec->func, spec->npos, spec->npos == 1 ? "" : "s",
                     nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        out[i] = args[i];
    }
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        int j = find_name(spec, fast, k);
        if (j < 0) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got an unexpected keyword argument %R",
                         spec->func, k);
            return -1;
        }
        if (out[j] != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got multiple values for argument %R",
                         spec->func, k);
            return -1;
        }
        out[j] = args[nargs + i];
    }
    for (int j = 0; j < spec->nreq; j++) {
        if (out[j] == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s() missing required argument '%s'", spec->func,
                         spec->names[j]);
            return -1;
        }
    }
    return 0;
}

/* Writes "'a', 'b' or 'c'" for `choices` into buf.  Cannot fail. */
static void
list_choices(const char *const *choices, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; choices[i] != NULL && n < size; i++) {
        const char *sep = i == 0 ? "" : choices[i + 1] == NULL ? " or " : ", ";
        int w = snprintf(buf + n, size - n, "%s'%s'", sep, choices[i]);
        if (w < 0) {
            break;
        }
        n += (size_t)w;
    }
}

int
dfb_parse_choice(const char *func, PyObject *o, const char *what,
                 const char *const *choices, int *out)
{
    if (o == NULL) {
        return 0;
    }
    char names[128];
    if (!PyUnicode_Check(o)) {
        list_choices(choices, names, sizeof(names));
        PyErr_Format(PyExc_TypeError, "%s() %s must be a str (%s), not %.100s",
                     func, what, names, Py_TYPE(o)->tp_name);
        return -1;
    }
    for (int i = 0; choices[i] != NULL; i++) {
        if (PyUnicode_CompareWithASCIIString(o, choices[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    list_choices(choices, names, sizeof(names));
    PyErr_Format(PyExc_ValueError, "%s() %s must be %s, not %R", func, what,
                 names, o);
    return -1;
}

int
dfb_parse_nulls(const char *func, PyObject *o, dfb_opts *out)
{
    /* index i < 3 of the choices is the dfb_nulls_mode value i */
    static const char *const modes[] = {"mask", "fill", "raise", "always_mask",
                                        NULL};
    _Static_assert(
        DFB_NULLS_MASK == 0 && DFB_NULLS_FILL == 1 && DFB_NULLS_RAISE == 2,
        "nulls= choices in dfb_nulls_mode order");
    int m = DFB_NULLS_MASK;
    if (o != NULL && PyUnicode_Check(o) &&
        PyUnicode_CompareWithASCIIString(o, "nan") == 0) {
        /* to_matrix's former word, kept for one release */
        if (PyErr_WarnEx(PyExc_DeprecationWarning,
                         "nulls='nan' is deprecated, use nulls='fill' (the "
                         "same: NaN, NaT or None in the null slots)",
                         1) < 0) {
            return -1;
        }
        m = DFB_NULLS_FILL;
    }
    else if (dfb_parse_choice(func, o, "nulls", modes, &m) < 0) {
        return -1;
    }
    out->always_mask = m == 3;
    out->nulls = m == 3 ? DFB_NULLS_MASK : (dfb_nulls_mode)m;
    return 0;
}

const dfb_opts dfb_opts_default = DFB_OPTS_INIT;

/* Returns 1 if `o` is True, False or a NumPy bool scalar, else 0.  Cannot
   fail. */
static int
is_bool(PyObject *o)
{
    return PyBool_Check(o) || PyArray_IsScalar(o, Bool);
}

int
dfb_parse_bool(const char *func, PyObject *o, const char *what, int *out)
{
    if (o == NULL) {
        return 0;
    }
    if (!is_bool(o)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() %s must be True or False, not %.100s", func, what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = PyObject_IsTrue(o);
    return 0;
}

int
dfb_parse_opts(const dfb_opt_args *a, dfb_opts *out)
{
    static const char *const cat[] = {"decode", "codes", NULL};
    static const char *const str[] = {"object", "stringdtype", NULL};
    static const char *const structs[] = {"object", "flatten", NULL};
    static const char *const decimals[] = {"decimal", "float64", NULL};
    static const char *const unsupported[] = {"raise", "skip", NULL};
    static const char *const period[] = {"object", "ordinal", NULL};
    const char *f = a->func;
    *out = dfb_opts_default;
    if (dfb_parse_nulls(f, a->nulls, out) < 0 ||
        dfb_parse_choice(f, a->categorical, "categorical", cat,
                         &out->categorical_codes) < 0 ||
        dfb_parse_choice(f, a->strings, "strings", str, &out->stringdtype) <
            0 ||
        dfb_parse_choice(f, a->structs, "structs", structs,
                         &out->structs_flatten) < 0 ||
        dfb_parse_choice(f, a->decimals, "decimals", decimals,
                         &out->decimal_float) < 0 ||
        dfb_parse_choice(f, a->on_unsupported, "on_unsupported", unsupported,
                         &out->skip_unsupported) < 0 ||
        dfb_parse_choice(f, a->period, "period", period,
                         &out->period_ordinal) < 0) {
        return -1;
    }
    if (a->copy != NULL && a->allow_copy != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes copy= or its alias allow_copy=, not both", f);
        return -1;
    }
    if (a->copy != NULL && a->copy != Py_None) {
        if (!is_bool(a->copy)) {
            PyErr_Format(PyExc_TypeError,
                         "%s() copy must be None, True or False, not %.100s",
                         f, Py_TYPE(a->copy)->tp_name);
            return -1;
        }
        out->copy = PyObject_IsTrue(a->copy);
    }
    int allow = 1;
    if (a->allow_copy != NULL) {
        if (dfb_parse_bool(f, a->allow_copy, "allow_copy", &allow) < 0) {
            return -1;
        }
        out->copy = allow ? -1 : 0;
    }
    return 0;
}

/* the keyword the copy errors of this thread's current conversion name
   (per thread: docs/design.md, "Safety rules", rule 7) */
static DFB_THREAD_LOCAL const char *copy_keyword;

const char *
dfb_copy_keyword_enter(const char *kw)
{
    const char *prev = copy_keyword;
    copy_keyword = kw;
    return prev;
}

void
dfb_copy_keyword_leave(const char *prev)
{
    copy_keyword = prev;
}

const char *
dfb_copy_keyword(void)
{
    return copy_keyword != NULL ? copy_keyword : "allow_copy";
}

int
dfb_copy_error(dfb_state *st, const char *format, ...)
{
    va_list va;
    va_start(va, format);
    PyObject *what = PyUnicode_FromFormatV(format, va);
    va_end(va);
    if (what == NULL) {
        return -1;
    }
    PyErr_Format(st->copy_error, "%U, which %s=False forbids", what,
                 dfb_copy_keyword());
    Py_DECREF(what);
    return -1;
}

int
dfb_parse_flag(PyObject *o, int *out)
{
    if (o == NULL) {
        return 0;
    }
    int r = PyObject_IsTrue(o);
    if (r < 0) {
        return -1;
    }
    *out = r;
    return 0;
}

int
dfb_parse_count(PyObject *o, const char *what, int64_t *out)
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

PyObject *
dfb_parse_items(PyObject *o, const char *msg)
{
    PyObject *seq = PySequence_Fast(o, msg);
    if (seq != NULL && PyList_Check(seq)) {
        PyObject *t = PyList_AsTuple(seq);
        Py_DECREF(seq);
        seq = t;
    }
    return seq;
}
