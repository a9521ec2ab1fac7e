/* dfbuffer: DLPack 1.3's C exchange API (dlpack_exchange.c): the table
 * dfbuffer.Buffer publishes and the import through a producer's table.
 */
#ifndef DFBUFFER_DLPACK_EXCHANGE_H
#define DFBUFFER_DLPACK_EXCHANGE_H

#include "common.h"

/* Puts __dlpack_c_exchange_api__, a capsule "dlpack_exchange_api" over
   dfbuffer's static table, into the dict of `buffer_type` (module exec,
   before the type is used).  Returns 0, or -1 with an exception set. */
int
dfb_dlpack_exchange_attach(PyTypeObject *buffer_type);

/* Buffer.from_object's import through the DLPack exchange API of the type
   of `obj`.  Returns a new Buffer; NULL with an exception set; or NULL
   without one when the type offers no table dfbuffer reads (no capsule, a
   wrong name or version, a NULL managed_tensor_from_py_object_no_sync),
   the object has a true requires_grad, the table's call fails with an
   Exception or the tensor is not on the CPU: the caller then uses
   __dlpack__. */
PyObject *
dfb_dlpack_import_exchange(dfb_state *st, PyObject *obj, PyObject *dtype);

#endif /* DFBUFFER_DLPACK_EXCHANGE_H */
