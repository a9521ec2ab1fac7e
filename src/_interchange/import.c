/* dfbuffer.Buffer.from_object: wrap any producer (stub: issue 2). */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"

PyObject *
dfb_buffer_from_object_impl(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    PyErr_SetString(PyExc_NotImplementedError, "from_object not yet");
    return NULL;
}

PyObject *
dfb_buffer_from_object(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyErr_SetString(PyExc_NotImplementedError, "from_object not yet");
    return NULL;
}
