/* dfbuffer: the test-only module functions _arrow_to_ndarray,
 * _arrow_from_dataframe and _arrow_buffer (the Arrow converters and the
 * from_object fallback, callable from Python).
 *
 * Nothing but module.c depends on this file.
 */
#include "common.h"
#include "state.h"
#include "args.h"
#include "api.h"
#include "exchange.h"
#include "readers.h"
#include "format.h"
#include "offsets.h"

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
arrow_buffer_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    static const char *const kw[] = {"obj", "dtype", NULL};
    static const dfb_argspec spec = {"_arrow_buffer", kw, 2, 1};
    PyObject *a[2] = {NULL, NULL};
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    return dfb_arrow_buffer_from_object(dfb_state_from_module(module), a[0],
                                        a[1] != NULL ? a[1] : Py_None);
}

/* Parses the (obj, nulls='mask', allow_copy=True) arguments of the two
   converters below for function `func`.  Returns 0, or -1 with TypeError /
   ValueError set. */
static int
parse_converter_args(const char *func, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames, PyObject **obj, dfb_opts *opts,
                     int *allow_copy)
{
    static const char *const kw[] = {"obj", "nulls", "allow_copy", NULL};
    const dfb_argspec spec = {func, kw, 3, 1};
    PyObject *a[3] = {NULL, NULL, NULL};
    const dfb_opts init = DFB_OPTS_INIT;
    *opts = init;
    *allow_copy = 1;
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0 ||
        dfb_parse_nulls(func, a[1], opts) < 0 ||
        dfb_parse_bool(func, a[2], "allow_copy", allow_copy) < 0) {
        return -1;
    }
    *obj = a[0];
    return 0;
}

PyDoc_STRVAR(
    arrow_to_ndarray_doc,
    "_arrow_to_ndarray(obj, nulls='mask', allow_copy=True)\n--\n\n"
    "Private: column_to_ndarray's Arrow path (dfb_arrow_column_to_ndarray).");

/* _arrow_to_ndarray(obj, nulls, allow_copy).  Returns a new array or NULL
   with an exception set. */
static PyObject *
arrow_to_ndarray_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    PyObject *obj;
    int allow_copy;
    dfb_opts opts;
    if (parse_converter_args("_arrow_to_ndarray", args, nargs, kwnames, &obj,
                             &opts, &allow_copy) < 0) {
        return NULL;
    }
    return dfb_arrow_column_to_ndarray(dfb_state_from_module(module), obj,
                                       &opts, allow_copy);
}

PyDoc_STRVAR(
    arrow_from_dataframe_doc,
    "_arrow_from_dataframe(obj, nulls='mask', allow_copy=True)\n--\n\n"
    "Private: from_dataframe's Arrow path (dfb_arrow_from_dataframe).");

/* _arrow_from_dataframe(obj, nulls, allow_copy).  Returns a new dict or
   NULL with an exception set. */
static PyObject *
arrow_from_dataframe_py(PyObject *module, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *obj;
    int allow_copy;
    dfb_opts opts;
    if (parse_converter_args("_arrow_from_dataframe", args, nargs, kwnames,
                             &obj, &opts, &allow_copy) < 0) {
        return NULL;
    }
    return dfb_arrow_from_dataframe(dfb_state_from_module(module), obj, &opts,
                                    allow_copy);
}

PyMethodDef dfb_arrow_methods[] = {
    {"_arrow_to_ndarray", (PyCFunction)(void (*)(void))arrow_to_ndarray_py,
     METH_FASTCALL | METH_KEYWORDS, arrow_to_ndarray_doc},
    {"_arrow_from_dataframe",
     (PyCFunction)(void (*)(void))arrow_from_dataframe_py,
     METH_FASTCALL | METH_KEYWORDS, arrow_from_dataframe_doc},
    {"_arrow_buffer", (PyCFunction)(void (*)(void))arrow_buffer_py,
     METH_FASTCALL | METH_KEYWORDS, arrow_buffer_doc},
    {NULL},
};
