/* dfbuffer: type descriptions from Python values: interchange dtype tuples
 * to core formats, typestrs and dtype arguments to NumPy dtypes.
 *
 * The one parser of interchange dtype tuples (the Buffer constructor, the
 * interchange walk and buffer_to_ndarray all use it) and the one place a
 * typestr becomes a PyArray_Descr.  Depends only on state.c and core.
 */
#include "common.h"
#include "dtype.h"
#include "format.h"

#include <string.h>

int
dfb_ix_dtype_read(PyObject *t, dfb_ix_dtype *out)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4) {
        PyErr_Format(PyExc_TypeError,
                     "an interchange dtype is a 4-tuple (kind, bit_width, "
                     "format, endianness), got %R",
                     t);
        return -1;
    }
    PyObject *k = PyTuple_GET_ITEM(t, 0), *b = PyTuple_GET_ITEM(t, 1);
    PyObject *f = PyTuple_GET_ITEM(t, 2), *e = PyTuple_GET_ITEM(t, 3);
    if (!PyLong_Check(k) || !PyLong_Check(b) || !PyUnicode_Check(f) ||
        !PyUnicode_Check(e)) {
        PyErr_Format(PyExc_TypeError,
                     "an interchange dtype is (int, int, str, str), got %R",
                     t);
        return -1;
    }
    out->kind = PyLong_AsLong(k);
    out->bits = PyLong_AsLong(b);
    if ((out->kind == -1 || out->bits == -1) && PyErr_Occurred()) {
        return -1;
    }
    out->fmt = PyUnicode_AsUTF8(f);
    if (out->fmt == NULL) {
        return -1;
    }
    Py_ssize_t elen;
    const char *en = PyUnicode_AsUTF8AndSize(e, &elen);
    if (en == NULL) {
        return -1;
    }
    out->endian = elen == 1 ? en[0] : '?';
    return 0;
}

int
dfb_ix_dtype_format(const dfb_ix_dtype *d, dfb_format *out)
{
    if (d->kind < 0 || d->kind > 100 || d->bits < 0 || d->bits > 1024) {
        return -1;
    }
    return dfb_format_parse_interchange((int)d->kind, (int)d->bits, d->fmt,
                                        d->endian, out);
}

int
dfb_ix_dtype_plain(PyObject *t, dfb_format *out)
{
    /* An exact tuple: a subclass may override item access for others */
    if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != 4) {
        return 0;
    }
    PyObject *k = PyTuple_GET_ITEM(t, 0), *b = PyTuple_GET_ITEM(t, 1);
    PyObject *f = PyTuple_GET_ITEM(t, 2), *e = PyTuple_GET_ITEM(t, 3);
    /* ints (an IntEnum kind too: no Python code reads an int's value);
       exact ASCII strs, for which PyUnicode_AsUTF8 cannot fail */
    if (!PyLong_Check(k) || !PyLong_Check(b) || !PyUnicode_CheckExact(f) ||
        !PyUnicode_IS_ASCII(f) || !PyUnicode_CheckExact(e) ||
        !PyUnicode_IS_ASCII(e) || PyUnicode_GET_LENGTH(e) != 1) {
        return 0;
    }
    int ovk, ovb;
    long kind = PyLong_AsLongAndOverflow(k, &ovk);
    long bits = PyLong_AsLongAndOverflow(b, &ovb);
    if ((kind == -1 || bits == -1) && PyErr_Occurred()) {
        return -1;
    }
    /* the kinds whose format core's parser ignores (so NULL gives the
       same answer), with the widths dfb_ix_dtype_format lets through */
    if (ovk || ovb || !(kind == 0 || kind == 1 || kind == 2 || kind == 20) ||
        bits < 0 || bits > 1024) {
        return 0;
    }
    char en = (char)PyUnicode_READ_CHAR(e, 0);
    return dfb_format_parse_interchange((int)kind, (int)bits, NULL, en, out) ==
                   0
               ? 1
               : 0;
}

int
dfb_ix_dtype_plain_memo(dfb_state *st, PyObject *t, dfb_format *out)
{
    /* several threads read and replace the memo: each reads or writes it
       whole under its lock; no Python code runs inside (the old tuple is
       dropped after the unlock) */
    dfb_ix_dtype_memo *m = &st->ix_dtype_memo;
    dfb_mutex_lock(&m->lock);
    if (t == m->tuple) {
        /* the fields dfb_format_parse_interchange sets for these kinds */
        memset(out, 0, sizeof(*out));
        out->type = (dfb_type)m->type;
        out->bits = m->bits;
        out->byteorder = m->byteorder;
        dfb_mutex_unlock(&m->lock);
        return 1;
    }
    dfb_mutex_unlock(&m->lock);
    int r = dfb_ix_dtype_plain(t, out);
    if (r == 1) {
        Py_INCREF(t);
        dfb_mutex_lock(&m->lock);
        PyObject *old = m->tuple;
        m->type = (int)out->type;
        m->bits = out->bits;
        m->byteorder = out->byteorder;
        m->tuple = t;
        dfb_mutex_unlock(&m->lock);
        /* the old tuple's release may run code: the memo is whole first */
        Py_XDECREF(old);
    }
    return r;
}

int
dfb_interchange_dtype_parse(PyObject *t, dfb_format *out)
{
    dfb_ix_dtype d;
    if (dfb_ix_dtype_read(t, &d) < 0) {
        return -1;
    }
    return dfb_ix_dtype_format(&d, out) == 0 ? 1 : 0;
}

int
dfb_buffer_check_dtype(PyArray_Descr *d)
{
    if (!dfb_buffer_kind_ok(d->kind)) {
        PyErr_Format(PyExc_TypeError,
                     "a Buffer holds plain numbers only (bool, integer, "
                     "float, complex, datetime64, timedelta64), not "
                     "dtype %R",
                     (PyObject *)d);
        return -1;
    }
    if (!dfb_buffer_layout_ok(d)) {
        PyErr_Format(PyExc_TypeError, "unsupported dtype %R for a Buffer",
                     (PyObject *)d);
        return -1;
    }
    return 0;
}

/* Converts an interchange dtype tuple to a NumPy dtype.  Returns a new
   reference, or NULL with TypeError / ValueError set. */
static PyArray_Descr *
descr_from_interchange(PyObject *tup)
{
    if (PyTuple_GET_SIZE(tup) != 4) {
        PyErr_Format(PyExc_ValueError,
                     "an interchange dtype is a 4-tuple (kind, bit_width, "
                     "format, endianness), got %R",
                     tup);
        return NULL;
    }
    /* the same parser as the converters' (the interchange walk) */
    dfb_format pf;
    int r = dfb_interchange_dtype_parse(tup, &pf);
    if (r < 0) {
        return NULL;
    }
    if (r == 0) {
        PyErr_Format(PyExc_ValueError, "unsupported interchange dtype %R",
                     tup);
        return NULL;
    }
    char typestr[32];
    if (dfb_format_numpy_typestr(&pf, typestr, sizeof(typestr)) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "interchange dtype %R has no fixed-width NumPy "
                     "equivalent (bit-packed or variable-width data)",
                     tup);
        return NULL;
    }
    return dfb_descr_from_typestr(typestr);
}

int
dfb_numeric_typenum(char kind, int nbytes)
{
    /* by kind (b, i, u, f, c) and size (1, 2, 4, 8, 16 bytes) */
    static const int nums[5][5] = {
        {NPY_BOOL, -1, -1, -1, -1},
        {NPY_INT8, NPY_INT16, NPY_INT32, NPY_INT64, -1},
        {NPY_UINT8, NPY_UINT16, NPY_UINT32, NPY_UINT64, -1},
        {-1, NPY_HALF, NPY_FLOAT32, NPY_FLOAT64, -1},
        {-1, -1, -1, NPY_COMPLEX64, NPY_COMPLEX128},
    };
    static const char kinds[] = "biufc";
    const char *k = kind != 0 ? strchr(kinds, kind) : NULL;
    const int col = nbytes == 1    ? 0
                    : nbytes == 2  ? 1
                    : nbytes == 4  ? 2
                    : nbytes == 8  ? 3
                    : nbytes == 16 ? 4
                                   : -1;
    return k == NULL || col < 0 ? -1 : nums[k - kinds][col];
}

/* The NumPy type number of a plain numeric typestr ("=i8", "|b1", "<f2",
   "=c16": byte order, kind b/i/u/f/c, size), or -1 for any other string. */
static int
simple_typenum(const char *ts)
{
    if ((ts[0] != '=' && ts[0] != '<' && ts[0] != '>' && ts[0] != '|') ||
        ts[1] == '\0' || ts[2] < '1' || ts[2] > '9') {
        return -1;
    }
    if (ts[3] == '\0') {
        return dfb_numeric_typenum(ts[1], ts[2] - '0');
    }
    return strcmp(ts + 2, "16") == 0 ? dfb_numeric_typenum(ts[1], 16) : -1;
}

/* Plain numeric typestrs (what core's format table mostly gives) skip
   NumPy's string parser; anything else goes through it. */
/* PyArray_DescrConverter(obj): a new descr, or NULL with TypeError /
   ValueError / MemoryError (NumPy's parser raises SyntaxError, KeyError,
   ... for some strings, "_,,,": those become TypeError naming the dtype,
   the cause kept). */
static PyArray_Descr *
descr_convert(PyObject *obj)
{
    PyArray_Descr *d = NULL;
    if (PyArray_DescrConverter(obj, &d)) {
        return d;
    }
    if (PyErr_ExceptionMatches(PyExc_Exception) &&
        !PyErr_ExceptionMatches(PyExc_TypeError) &&
        !PyErr_ExceptionMatches(PyExc_ValueError) &&
        !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyObject *exc = dfb_err_take();
        PyErr_Format(PyExc_TypeError, "invalid dtype %R", obj);
        dfb_err_raise_from(exc);
    }
    return NULL;
}

PyArray_Descr *
dfb_descr_from_typestr(const char *typestr)
{
    int typenum = simple_typenum(typestr);
    if (typenum >= 0) {
        PyArray_Descr *d = PyArray_DescrFromType(typenum);
#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
        const char foreign = '>';
#else
        const char foreign = '<';
#endif
        if (d != NULL && typestr[0] == foreign && PyDataType_ELSIZE(d) > 1) {
            PyArray_Descr *sw = PyArray_DescrNewByteorder(d, NPY_SWAP);
            Py_DECREF(d);
            return sw;
        }
        return d;
    }
    PyObject *s = PyUnicode_FromString(typestr);
    if (s == NULL) {
        return NULL;
    }
    PyArray_Descr *d = descr_convert(s);
    Py_DECREF(s);
    return d;
}

PyArray_Descr *
dfb_parse_dtype(PyObject *obj, PyArray_Descr *dflt)
{
    PyArray_Descr *d = NULL;
    if (obj == NULL || obj == Py_None) {
        if (dflt == NULL) {
            PyErr_SetString(PyExc_TypeError, "a dtype is required");
            return NULL;
        }
        Py_INCREF(dflt);
        return dflt;
    }
    if (PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == 4 &&
        PyLong_Check(PyTuple_GET_ITEM(obj, 0))) {
        d = descr_from_interchange(obj);
    }
    else {
        d = descr_convert(obj);
    }
    if (d == NULL) {
        return NULL;
    }
    if (dfb_buffer_check_dtype(d) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}
