/* dfbuffer: the interface of export_array.c: dfbuffer.Buffer:
 * __array_interface__, __cuda_array_interface__, the buffer protocol,
 * __array__ and pickling.
 */
#ifndef DFBUFFER_EXPORT_ARRAY_H
#define DFBUFFER_EXPORT_ARRAY_H

#include "common.h"

PyObject *
dfb_buffer_array_interface(PyObject *self, void *closure);
PyObject *
dfb_buffer_cuda_array_interface(PyObject *self, void *closure);
int
dfb_buffer_getbuffer(PyObject *self, Py_buffer *view, int flags);
void
dfb_buffer_releasebuffer(PyObject *self, Py_buffer *view);
PyObject *
dfb_buffer_reduce_ex(PyObject *self, PyObject *protocol);
PyObject *
dfb_buffer_array(PyObject *self, PyObject *args, PyObject *kwds);

/* `_rebuild`, the pickle reconstructor of Buffer.  Added to
   the module with PyModule_AddFunctions in module.c. */
extern PyMethodDef dfb_export_methods[];

#endif /* DFBUFFER_EXPORT_ARRAY_H */
