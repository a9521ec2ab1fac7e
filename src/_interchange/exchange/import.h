/* dfbuffer: the importers of Buffer.from_object in import.c, one per
 * protocol, which protocols.c's registry calls in its order.  Each borrows
 * its arguments and returns a new Buffer, or NULL with an exception set
 * (the protocols.c importers also NULL without one: declined);
 * `dtype` is NULL, None or a dtype-like overriding the producer's.  The
 * contract of each is at its definition.
 */
#ifndef DFBUFFER_IMPORT_H
#define DFBUFFER_IMPORT_H

#include "common.h"
#include "buffer.h"

PyObject *
dfb_import_finish(dfb_state *st, char *data, PyObject *owner,
                  PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
                  const Py_ssize_t *strides, DLDevice device, int readonly,
                  int native, PyObject *override);
int
dfb_import_refuse_lazy_views(dfb_state *st, PyObject *obj);
PyObject *
dfb_import_buffer(dfb_state *st, DfbBuffer *b, PyObject *dtype);
PyObject *
dfb_import_ndarray(dfb_state *st, PyArrayObject *a, PyObject *dtype);
PyObject *
dfb_import_cai(dfb_state *st, PyObject *obj, PyObject *cai, PyObject *dtype);
PyObject *
dfb_import_array_interface(dfb_state *st, PyObject *obj, PyObject *ai,
                           PyObject *dtype);
PyObject *
dfb_import_buffer_protocol(dfb_state *st, PyObject *obj, PyObject *dtype);
PyObject *
dfb_import_interchange(dfb_state *st, PyObject *obj, PyObject *ptr_o,
                       PyObject *size_o, PyObject *dtype);

/* the spec of the private GC-tracked holder of a buffer-protocol
   export (the owner of buffer-protocol Buffers); module init makes
   st->export_type from it. */
extern PyType_Spec dfb_export_holder_spec;

#endif /* DFBUFFER_IMPORT_H */
