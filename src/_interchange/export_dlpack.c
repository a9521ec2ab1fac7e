/* dfbuffer.Buffer.__dlpack__ / __dlpack_device__ (stub: issue 2). */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"

PyObject *
dfb_buffer_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    PyErr_SetString(PyExc_NotImplementedError, "__dlpack__ not yet");
    return NULL;
}

PyObject *
dfb_buffer_dlpack_device(PyObject *self, PyObject *unused)
{
    DfbBuffer *b = (DfbBuffer *)self;
    return Py_BuildValue("(ii)", (int)b->device.device_type,
                         (int)b->device.device_id);
}
