/* dfbuffer: the private module function _arrow_type, the type table of
 * src/core/types.c read from Python (dfbuffer.schema and dfbuffer.pandas
 * use it instead of parsing Arrow format strings themselves).
 *
 * Nothing but module.c depends on this file.
 */
#include "common.h"
#include "model.h"
#include "format.h"
#include "types.h"
#include "api.h"

#include <string.h>

PyDoc_STRVAR(
    arrow_type_doc,
    "_arrow_type(format, /)\n--\n\n"
    "Private: what the type table says about Arrow C format string `format`\n"
    "(a dict: type, logical, layout, buffers, children, item_bits, bits,\n"
    "numpy, result, interchange, interchange_format, validity, unit, tz,\n"
    "precision, scale, size, type_ids, converts, readable), or None for a\n"
    "string outside the Arrow C data interface.");

/* Sets d[key] = v, stealing v (NULL: an error already set).  Returns 0, or
   -1 with an exception set. */
static int
put(PyObject *d, const char *key, PyObject *v)
{
    if (v == NULL) {
        return -1;
    }
    int r = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return r;
}

/* Returns a new str of `n` bytes at `s`, or None when `s` is NULL. */
static PyObject *
str_or_none(const char *s, size_t n)
{
    if (s == NULL) {
        return Py_NewRef(Py_None);
    }
    return PyUnicode_FromStringAndSize(s, (Py_ssize_t)n);
}

/* Returns a new int of `v`, or None when `has` is 0. */
static PyObject *
int_or_none(int has, long long v)
{
    return has ? PyLong_FromLongLong(v) : Py_NewRef(Py_None);
}

/* Returns a new tuple of the union type ids of `f` ("0,1,5"), or None for
   a type without them. */
static PyObject *
type_ids(const dfb_format *f)
{
    if (f->ids == NULL) {
        return Py_NewRef(Py_None);
    }
    PyObject *ids = PyList_New(0);
    for (size_t i = 0; ids != NULL && i < f->ids_len;) {
        long v = 0;
        for (; i < f->ids_len && f->ids[i] != ','; i++) {
            v = v * 10 + (f->ids[i] - '0'); /* 0 to 127: checked */
        }
        i++; /* the comma */
        PyObject *o = PyLong_FromLong(v);
        if (o == NULL || PyList_Append(ids, o) < 0) {
            Py_XDECREF(o);
            Py_CLEAR(ids);
            break;
        }
        Py_DECREF(o);
    }
    if (ids == NULL) {
        return NULL;
    }
    Py_SETREF(ids, PyList_AsTuple(ids));
    return ids;
}

/* Returns a new tuple of the buffer role names of row `r`. */
static PyObject *
buffer_roles(const dfb_type_row *r)
{
    PyObject *t = PyTuple_New(r->n_buffers);
    for (int i = 0; t != NULL && i < r->n_buffers; i++) {
        PyObject *s =
            PyUnicode_FromString(dfb_buffer_role_name(r->buffers[i]));
        if (s == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

/* Returns a new str of a NumPy type string of `f` (`result`: of the
   converted values, else of the stored ones), or None when it has none. */
static PyObject *
typestr(const dfb_format *f, int result)
{
    char buf[32];
    int r = result ? dfb_format_result_typestr(f, buf, sizeof(buf))
                   : dfb_format_numpy_typestr(f, buf, sizeof(buf));
    return r == 0 ? PyUnicode_FromString(buf) : Py_NewRef(Py_None);
}

/* Returns a new (kind, bits, format) tuple, or None without one. */
static PyObject *
interchange(const dfb_format *f, const char *fmt)
{
    int kind, bits;
    if (dfb_type_interchange(f, &kind, &bits) < 0) {
        return Py_NewRef(Py_None);
    }
    return Py_BuildValue("(iis)", kind, bits, fmt);
}

/* _arrow_type(format): the table's description of `format`.  Returns a new
   dict, None, or NULL with TypeError for a non-str argument. */
static PyObject *
arrow_type_py(PyObject *module, PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError,
                     "_arrow_type() expects a str, got %.200s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t len;
    const char *fmt = PyUnicode_AsUTF8AndSize(arg, &len);
    dfb_format f;
    if (fmt == NULL) {
        return NULL;
    }
    if ((size_t)len != strlen(fmt) || dfb_type_parse_arrow(fmt, &f) < 0) {
        Py_RETURN_NONE; /* embedded NUL or outside the specification */
    }
    const dfb_type_row *r = dfb_type_row_of(f.type);
    const int bits = dfb_type_item_bits(&f);
    const char *unit = dfb_unit_name(f.unit);
    /* the format the interchange protocol reports (string views: decoded) */
    const char *ix_fmt = dfb_type_arrow_format(r->ix_as);
    PyObject *d = PyDict_New();
    if (d == NULL || put(d, "type", PyUnicode_FromString(r->name)) < 0 ||
        put(d, "logical", PyUnicode_FromString(r->logical)) < 0 ||
        put(d, "layout", PyUnicode_FromString(dfb_layout_name(r->layout))) <
            0 ||
        put(d, "buffers", buffer_roles(r)) < 0 ||
        put(d, "children", int_or_none(r->n_children >= 0, r->n_children)) <
            0 ||
        put(d, "item_bits", int_or_none(bits >= 0, bits)) < 0 ||
        put(d, "bits", PyLong_FromLong(f.bits)) < 0 ||
        put(d, "numpy", typestr(&f, 0)) < 0 ||
        put(d, "result", typestr(&f, 1)) < 0 ||
        put(d, "interchange", interchange(&f, fmt)) < 0 ||
        put(d, "interchange_format",
            PyUnicode_FromString(ix_fmt != NULL ? ix_fmt : fmt)) < 0 ||
        put(d, "validity", PyBool_FromLong(dfb_type_has_validity(f.type))) <
            0 ||
        put(d, "unit",
            unit != NULL ? PyUnicode_FromString(unit) : Py_NewRef(Py_None)) <
            0 ||
        put(d, "tz", str_or_none(f.tz, f.tz_len)) < 0 ||
        put(d, "precision",
            int_or_none(f.type == DFB_T_DECIMAL, f.precision)) < 0 ||
        put(d, "scale", int_or_none(f.type == DFB_T_DECIMAL, f.scale)) < 0 ||
        put(d, "size", int_or_none(f.size > 0, f.size)) < 0 ||
        put(d, "type_ids", type_ids(&f)) < 0 ||
        put(d, "converts", PyUnicode_FromString(dfb_conv_class(r->conv))) <
            0 ||
        put(d, "readable", PyBool_FromLong(r->readable)) < 0) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

PyDoc_STRVAR(
    arrow_types_doc,
    "_arrow_types()\n--\n\n"
    "Private: one (type, logical, layout, converts, readable) tuple per "
    "row\nof the type table, in its order (the invalid row left out).");

/* _arrow_types(): the rows of the type table.  Returns a new list, or NULL
   with MemoryError. */
static PyObject *
arrow_types_py(PyObject *module, PyObject *unused)
{
    PyObject *out = PyList_New(0);
    for (int t = DFB_T_INVALID + 1; out != NULL && t < DFB_T_COUNT; t++) {
        const dfb_type_row *r = dfb_type_row_of((dfb_type)t);
        PyObject *row = Py_BuildValue(
            "(ssssN)", r->name, r->logical, dfb_layout_name(r->layout),
            dfb_conv_class(r->conv), PyBool_FromLong(r->readable));
        if (row == NULL || PyList_Append(out, row) < 0) {
            Py_XDECREF(row);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(row);
    }
    return out;
}

PyDoc_STRVAR(
    arrow_format_doc,
    "_arrow_format(type, tz=None, /)\n--\n\n"
    "Private: the Arrow C format string the type table gives `type`: a\n"
    "NumPy dtype (native byte order; datetimes and timedeltas of s, ms, us\n"
    "or ns; a bool dtype gives the bit-packed type its values are packed\n"
    "into), an interchange (kind, bit_width) pair (INT, UINT, FLOAT), or\n"
    "the name of a row of the table that takes no parameters ('utf8\n"
    "string', 'null', ...); `tz` (a str) is a datetime's time zone.  None\n"
    "for a type Arrow has no format for here.");

/* Fills *f from NumPy dtype `d`: core's format by kind, item size and
   unit.  Returns 0, or -1 (no exception) for a dtype without one. */
static int
numpy_format(PyArray_Descr *d, dfb_format *f)
{
    Py_ssize_t itemsize = PyDataType_ELSIZE(d);
    char unit = 0;
    if (d->type_num == NPY_DATETIME || d->type_num == NPY_TIMEDELTA) {
        PyArray_DatetimeMetaData *m =
            &((PyArray_DatetimeDTypeMetaData *)PyDataType_C_METADATA(d))->meta;
        if (m->num != 1) {
            return -1;
        }
        unit = m->base == NPY_FR_s    ? 's'
               : m->base == NPY_FR_ms ? 'm'
               : m->base == NPY_FR_us ? 'u'
               : m->base == NPY_FR_ns ? 'n'
                                      : 0;
        if (unit == 0) {
            return -1;
        }
    }
    if (!PyArray_ISNBO(d->byteorder) || itemsize > 8 ||
        PyDataType_HASFIELDS(d) || PyDataType_HASSUBARRAY(d)) {
        return -1;
    }
    if (dfb_format_from_numpy(d->kind, (int)itemsize, unit, f) < 0) {
        return -1;
    }
    if (f->type == DFB_T_BOOL8) {
        /* a bool column exports bit-packed (the caller packs it) */
        f->type = DFB_T_BOOL_BIT;
        f->bits = 1;
    }
    return 0;
}

/* Fills *f from the row of the type table named `name` (one without
   parameters).  Returns 0, or -1 (no exception) for no such row. */
static int
named_format(const char *name, dfb_format *f)
{
    for (int t = DFB_T_INVALID + 1; t < DFB_T_COUNT; t++) {
        const char *fmt = dfb_type_arrow_format((dfb_type)t);
        if (strcmp(dfb_type_row_of((dfb_type)t)->name, name) == 0 &&
            fmt != NULL) {
            return dfb_type_parse_arrow(fmt, f);
        }
    }
    return -1;
}

/* _arrow_format(type, tz=None, /): the table's Arrow format of a NumPy
   dtype, an interchange (kind, bits) pair or a row name, with time zone
   `tz` for a datetime.  Returns a new str, None, or NULL with TypeError
   for any other argument. */
static PyObject *
arrow_format_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    PyObject *tz = nargs == 2 ? args[1] : Py_None;
    if (nargs < 1 || nargs > 2 || (tz != Py_None && !PyUnicode_Check(tz))) {
        PyErr_SetString(PyExc_TypeError,
                        "_arrow_format() takes a type and an optional str");
        return NULL;
    }
    PyObject *arg = args[0];
    dfb_format f;
    int r;
    if (PyArray_DescrCheck(arg)) {
        r = numpy_format((PyArray_Descr *)arg, &f);
    }
    else if (PyUnicode_Check(arg)) {
        const char *name = PyUnicode_AsUTF8(arg);
        if (name == NULL) {
            return NULL;
        }
        r = named_format(name, &f);
    }
    else if (PyTuple_Check(arg) && PyTuple_GET_SIZE(arg) == 2 &&
             PyLong_Check(PyTuple_GET_ITEM(arg, 0)) &&
             PyLong_Check(PyTuple_GET_ITEM(arg, 1))) {
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(arg, 0));
        long bits = PyLong_AsLong(PyTuple_GET_ITEM(arg, 1));
        if ((kind == -1 || bits == -1) && PyErr_Occurred()) {
            return NULL;
        }
        /* numbers only: their Arrow format is their kind and width */
        r = kind < 0 || kind > 2 || bits < 8 || bits > 64
                ? -1
                : dfb_format_parse_interchange((int)kind, (int)bits, "", '=',
                                               &f);
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "_arrow_format() expects a NumPy dtype, a (kind, bits) "
                     "pair or a type name, got %.200s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (r == 0 && tz != Py_None) {
        Py_ssize_t n;
        f.tz = PyUnicode_AsUTF8AndSize(tz, &n);
        if (f.tz == NULL) {
            return NULL;
        }
        f.tz_len = (size_t)n;
        r = f.type == DFB_T_TIMESTAMP ? 0 : -1; /* only datetimes have one */
    }
    char buf[256];
    if (r < 0 || dfb_format_to_arrow(&f, buf, sizeof(buf)) < 0) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(buf);
}

PyMethodDef dfb_type_info_methods[] = {
    {"_arrow_type", arrow_type_py, METH_O, arrow_type_doc},
    {"_arrow_types", arrow_types_py, METH_NOARGS, arrow_types_doc},
    {"_arrow_format", (PyCFunction)(void (*)(void))arrow_format_py,
     METH_FASTCALL, arrow_format_doc},
    {NULL},
};
