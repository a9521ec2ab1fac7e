/* dfbuffer: the interface of protocols.c: the protocol registry: the one table
 * of the protocols Buffer.from_object reads, in its order, which drives
 * from_object (and through it the C API's DfBuffer_FromObject), the report's
 * protocol list (dfbuffer._interchange._protocols) and the lists in the docs
 * (checked against it by tests/exchange/test_protocol_registry.py).
 */
#ifndef DFBUFFER_PROTOCOLS_H
#define DFBUFFER_PROTOCOLS_H

#include "common.h"

/* Buffer.from_object (METH_CLASS | METH_FASTCALL |
   METH_KEYWORDS; cls is the Buffer type). */
PyObject *
dfb_buffer_from_object(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames);

/* the C entry of from_object.  Returns a new Buffer wrapping
   `obj` without copying (dtype: NULL or a dtype-like overriding the
   producer's), or NULL with an exception set (TypeError when obj speaks
   no protocol dfbuffer knows, BufferError when the producer refuses). */
PyObject *
dfb_buffer_from_object_impl(dfb_state *st, PyObject *obj, PyObject *dtype);

/* Buffer.from_object with its allow_copy (False: __array__
   is called with copy=False); the C API's entry passes 1.  A new Buffer,
   or NULL with an exception set. */
PyObject *
dfb_protocols_import(dfb_state *st, PyObject *obj, PyObject *dtype,
                     int allow_copy);

/* `_protocols`, the registry for Python (module.c adds it). */
extern PyMethodDef dfb_protocol_methods[];

#endif /* DFBUFFER_PROTOCOLS_H */
