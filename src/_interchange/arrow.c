/* dfbuffer: the Arrow C data interface and PyCapsule interface (stub:
 * issue 4). */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"

PyObject *
dfb_buffer_arrow_c_schema(PyObject *self, PyObject *unused)
{
    PyErr_SetString(PyExc_NotImplementedError, "__arrow_c_schema__ not yet");
    return NULL;
}

PyObject *
dfb_buffer_arrow_c_array(PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames)
{
    PyErr_SetString(PyExc_NotImplementedError, "__arrow_c_array__ not yet");
    return NULL;
}

PyMethodDef dfb_arrow_methods[] = {
    {NULL},
};
