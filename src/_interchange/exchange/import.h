/* dfbuffer: the importers of Buffer.from_object, one per protocol (import.c,
 * dlpack.c), which protocols.c's registry calls in its order.  Each borrows
 * its arguments and returns a new Buffer, or NULL with an exception set
 * (the protocols.c importers also NULL without one: declined);
 * `dtype` is NULL, None or a dtype-like overriding the producer's.  The
 * contract of each is at its definition.
 */
#ifndef DFBUFFER_IMPORT_H
#define DFBUFFER_IMPORT_H

#include "common.h"
#include "buffer.h"

/* import.c */
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

/* dlpack.c */
PyObject *
dfb_dlpack_import_capsule(dfb_state *st, PyObject *cap, PyObject *dtype);
PyObject *
dfb_dlpack_import_producer(dfb_state *st, PyObject *obj, PyObject *dtype);

/* array_dunders.c */
PyObject *
dfb_arrow_array_method_call(dfb_state *st, PyObject *obj);
PyObject *
dfb_import_arrow_array_method(dfb_state *st, PyObject *obj, PyObject *dtype);
PyObject *
dfb_array_method_call(dfb_state *st, PyObject *obj, int allow_copy,
                      int *shared);
PyObject *
dfb_import_array_method(dfb_state *st, PyObject *obj, PyObject *dtype,
                        int allow_copy);
PyObject *
dfb_array_method_column(dfb_state *st, PyObject *obj, int allow_copy);

/* protocols.c: Buffer.from_object with its allow_copy (False: __array__
   is called with copy=False); the C API's entry passes 1.  A new Buffer,
   or NULL with an exception set. */
PyObject *
dfb_protocols_import(dfb_state *st, PyObject *obj, PyObject *dtype,
                     int allow_copy);

/* protocols.c: `_protocols`, the registry for Python (module.c adds it). */
extern PyMethodDef dfb_protocol_methods[];

#endif /* DFBUFFER_IMPORT_H */
