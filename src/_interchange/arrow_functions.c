/* dfbuffer: the test-only module functions _arrow_to_ndarray,
 * _arrow_from_dataframe and _arrow_buffer (the Arrow converters and the
 * from_object fallback, callable from Python).
 *
 * Nothing but module.c depends on this file.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/arrow_device.h"
#include "dfbuffer/arrow_internal.h"
#include "dfbuffer/probe.h"
#include "dfbuffer/convert.h"
#include "format.h"
#include "offsets.h"
#include "dfbuffer/frame.h"
#include "dfbuffer/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

PyDoc_STRVAR(
    arrow_buffer_doc,
    "_arrow_buffer(obj, dtype=None)\n--\n\n"
    "Private: the Arrow fallback of Buffer.from_object (a read-only Buffer\n"
    "over the values of a 1-D fixed-width primitive Arrow array).");

/* _arrow_buffer(obj, dtype=None): dfb_arrow_buffer_from_object from
   Python.  Returns a new Buffer or NULL with an exception set. */
static PyObject *
arrow_buffer_py(PyObject *module, PyObject *args)
{
    PyObject *obj, *dtype = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:_arrow_buffer", &obj, &dtype)) {
        return NULL;
    }
    return dfb_arrow_buffer_from_object(dfb_state_from_module(module), obj,
                                        dtype);
}

/* Parses the nulls= argument ("mask", "fill", "raise").  Returns 0, or -1
   with TypeError / ValueError set. */
static int
parse_nulls_arg(PyObject *o, dfb_nulls_mode *out)
{
    if (o == NULL) {
        *out = DFB_NULLS_MASK;
        return 0;
    }
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError,
                            "nulls must be 'mask', 'fill' or 'raise'");
        }
        return -1;
    }
    if (strcmp(s, "mask") == 0) {
        *out = DFB_NULLS_MASK;
    }
    else if (strcmp(s, "fill") == 0) {
        *out = DFB_NULLS_FILL;
    }
    else if (strcmp(s, "raise") == 0) {
        *out = DFB_NULLS_RAISE;
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "nulls must be 'mask', 'fill' or 'raise', not %R", o);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(
    arrow_to_ndarray_doc,
    "_arrow_to_ndarray(obj, nulls='mask', allow_copy=True)\n--\n\n"
    "Private: column_to_ndarray's Arrow path (dfb_arrow_column_to_ndarray).");

/* _arrow_to_ndarray(obj, nulls, allow_copy).  Returns a new array or NULL
   with an exception set. */
static PyObject *
arrow_to_ndarray_py(PyObject *module, PyObject *args)
{
    PyObject *obj, *nulls_o = NULL;
    int allow_copy = 1;
    dfb_nulls_mode nulls;
    if (!PyArg_ParseTuple(args, "O|Op:_arrow_to_ndarray", &obj, &nulls_o,
                          &allow_copy) ||
        parse_nulls_arg(nulls_o, &nulls) < 0) {
        return NULL;
    }
    return dfb_arrow_column_to_ndarray(dfb_state_from_module(module), obj,
                                       nulls, allow_copy);
}

PyDoc_STRVAR(
    arrow_from_dataframe_doc,
    "_arrow_from_dataframe(obj, nulls='mask', allow_copy=True)\n--\n\n"
    "Private: from_dataframe's Arrow path (dfb_arrow_from_dataframe).");

/* _arrow_from_dataframe(obj, nulls, allow_copy).  Returns a new dict or
   NULL with an exception set. */
static PyObject *
arrow_from_dataframe_py(PyObject *module, PyObject *args)
{
    PyObject *obj, *nulls_o = NULL;
    int allow_copy = 1;
    dfb_nulls_mode nulls;
    if (!PyArg_ParseTuple(args, "O|Op:_arrow_from_dataframe", &obj, &nulls_o,
                          &allow_copy) ||
        parse_nulls_arg(nulls_o, &nulls) < 0) {
        return NULL;
    }
    return dfb_arrow_from_dataframe(dfb_state_from_module(module), obj, nulls,
                                    allow_copy);
}

PyMethodDef dfb_arrow_methods[] = {
    {"_arrow_to_ndarray", arrow_to_ndarray_py, METH_VARARGS,
     arrow_to_ndarray_doc},
    {"_arrow_from_dataframe", arrow_from_dataframe_py, METH_VARARGS,
     arrow_from_dataframe_doc},
    {"_arrow_buffer", arrow_buffer_py, METH_VARARGS, arrow_buffer_doc},
    {NULL},
};
