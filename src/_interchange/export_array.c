/* dfbuffer.Buffer: __array_interface__, __cuda_array_interface__, the
 * buffer protocol, __array__ and pickling (stub: issue 2). */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"

PyObject *
dfb_buffer_array_interface(PyObject *self, void *closure)
{
    PyErr_SetString(PyExc_AttributeError, "__array_interface__ not yet");
    return NULL;
}

PyObject *
dfb_buffer_cuda_array_interface(PyObject *self, void *closure)
{
    PyErr_SetString(PyExc_AttributeError, "__cuda_array_interface__ not yet");
    return NULL;
}

int
dfb_buffer_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    PyErr_SetString(PyExc_BufferError, "buffer protocol not yet");
    view->obj = NULL;
    return -1;
}

void
dfb_buffer_releasebuffer(PyObject *self, Py_buffer *view)
{
}

PyObject *
dfb_buffer_reduce_ex(PyObject *self, PyObject *protocol)
{
    PyErr_SetString(PyExc_NotImplementedError, "pickle not yet");
    return NULL;
}

PyObject *
dfb_buffer_array(PyObject *self, PyObject *args, PyObject *kwds)
{
    return dfb_buffer_as_ndarray((DfbBuffer *)self);
}
