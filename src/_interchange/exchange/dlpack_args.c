/* dfbuffer: the keywords of dfbuffer.Buffer.__dlpack__ (stream, max_version,
 * dl_device, copy), parsed and checked for dlpack.c's export.
 */
#include "common.h"
#include "exchange.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Argument parsing                                                     */
/* ------------------------------------------------------------------ */

/* Returns the slot of keyword `name` in `a`, or NULL if unknown. */
static PyObject **
keyword_slot(dfb_dlpack_args *a, PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        return NULL;
    }
    switch (PyUnicode_GET_LENGTH(name)) {
        case 4:
            return PyUnicode_CompareWithASCIIString(name, "copy") == 0
                       ? &a->copy
                       : NULL;
        case 6:
            return PyUnicode_CompareWithASCIIString(name, "stream") == 0
                       ? &a->stream
                       : NULL;
        case 9:
            return PyUnicode_CompareWithASCIIString(name, "dl_device") == 0
                       ? &a->dl_device
                       : NULL;
        case 11:
            return PyUnicode_CompareWithASCIIString(name, "max_version") == 0
                       ? &a->max_version
                       : NULL;
        default:
            return NULL;
    }
}

/* Fills `a` from fastcall keyword arguments.  Returns 0, or -1 with
   TypeError (positional arguments, unknown or repeated keywords). */
int
dfb_dlpack_parse_args(PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, dfb_dlpack_args *a)
{
    memset(a, 0, sizeof(*a));
    if (nargs != 0) {
        PyErr_Format(PyExc_TypeError,
                     "__dlpack__() takes keyword arguments only (%zd "
                     "positional given)",
                     nargs);
        return -1;
    }
    if (kwnames == NULL) {
        return 0;
    }
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        PyObject **slot = keyword_slot(a, name);
        if (slot == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "__dlpack__() got an unexpected keyword argument "
                         "%R",
                         name);
            return -1;
        }
        if (*slot != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "__dlpack__() got multiple values for argument %R",
                         name);
            return -1;
        }
        *slot = args[i];
    }
    return 0;
}

/* Converts an int item of a max_version / dl_device tuple.  Returns 0, or
   -1 with TypeError / OverflowError set. */
static int
tuple_int(PyObject *item, const char *what, long *out)
{
    if (!PyLong_Check(item) || PyBool_Check(item)) {
        PyErr_Format(PyExc_TypeError, "%s must hold ints, not %.100s", what,
                     Py_TYPE(item)->tp_name);
        return -1;
    }
    *out = PyLong_AsLong(item);
    if (*out == -1 && PyErr_Occurred()) {
        return -1;
    }
    return 0;
}

/* Reads `obj`, the `what` argument, as a 2-tuple of ints described as
   `pair` ("(major, minor)") into *x, *y.  Returns 0, or -1 with TypeError
   (not a tuple, not ints), ValueError (another length) or OverflowError
   set. */
static int
int_pair(PyObject *obj, const char *what, const char *pair, long *x, long *y)
{
    if (!PyTuple_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s must be None or a %s tuple, not %.100s", what, pair,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyTuple_GET_SIZE(obj) != 2) {
        PyErr_Format(PyExc_ValueError, "%s must be a %s tuple, got %R", what,
                     pair, obj);
        return -1;
    }
    if (tuple_int(PyTuple_GET_ITEM(obj, 0), what, x) < 0 ||
        tuple_int(PyTuple_GET_ITEM(obj, 1), what, y) < 0) {
        return -1;
    }
    return 0;
}

/* Parses max_version: None -> *versioned = 0; (major, minor) ints ->
 *versioned = major >= 1.  Returns 0, or -1 with TypeError / ValueError. */
int
dfb_dlpack_parse_max_version(PyObject *obj, int *versioned)
{
    *versioned = 0;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    long major, minor;
    if (int_pair(obj, "max_version", "(major, minor)", &major, &minor) < 0) {
        return -1;
    }
    if (major < 0 || minor < 0) {
        PyErr_Format(PyExc_ValueError,
                     "max_version must not be negative, got %R", obj);
        return -1;
    }
    *versioned = major >= 1;
    return 0;
}

/* Parses dl_device: a (device_type, device_id) tuple of ints.  Returns 0,
   or -1 with TypeError / ValueError set. */
int
dfb_dlpack_parse_dl_device(PyObject *obj, DLDevice *out)
{
    long t, id;
    if (int_pair(obj, "dl_device", "(device_type, device_id)", &t, &id) < 0) {
        return -1;
    }
    if (t < 0 || t > INT32_MAX || id < 0 || id > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "dl_device %R is out of range", obj);
        return -1;
    }
    out->device_type = (DLDeviceType)t;
    out->device_id = (int32_t)id;
    return 0;
}

/* Parses copy: None -> -1, True -> 1, False -> 0 in *out.  Returns 0, or
   -1 with TypeError set. */
int
dfb_dlpack_parse_copy(PyObject *obj, int *out)
{
    if (obj == NULL || obj == Py_None) {
        *out = -1;
    }
    else if (obj == Py_True) {
        *out = 1;
    }
    else if (obj == Py_False) {
        *out = 0;
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "copy must be None, True or False, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    return 0;
}

/* Checks `stream` for export to device type `t`.  Returns 0, or -1 with
   BufferError (stream on a device without streams), TypeError or
   ValueError (a value the array API does not allow). */
int
dfb_dlpack_check_stream(PyObject *stream, DLDeviceType t)
{
    if (stream == NULL || stream == Py_None) {
        return 0;
    }
    int cuda = t == kDLCUDA || t == kDLCUDAManaged;
    int rocm = t == kDLROCM;
    if (!cuda && !rocm) {
        PyErr_Format(PyExc_BufferError,
                     "stream must be None for device type %d (it has no "
                     "streams), got %R",
                     (int)t, stream);
        return -1;
    }
    if (!PyLong_Check(stream) || PyBool_Check(stream)) {
        PyErr_Format(PyExc_TypeError, "stream must be an int, not %.100s",
                     Py_TYPE(stream)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(stream, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    /* Stream handles are pointers: any positive value is allowed. */
    if (overflow > 0) {
        return 0;
    }
    if (overflow < 0 || v < -1 || (cuda && v == 0) ||
        (rocm && (v == 1 || v == 2))) {
        PyErr_Format(PyExc_ValueError,
                     "stream %R is not allowed for %s (see the array API's "
                     "__dlpack__)",
                     stream, cuda ? "CUDA" : "ROCm");
        return -1;
    }
    return 0;
}
