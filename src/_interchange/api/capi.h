/* dfbuffer: the interface of capi.c: dfbuffer's public C API
 * (include/dfbuffer/dfbuffer.h): the table in the capsule
 * dfbuffer._interchange._C_API and the functions behind it.
 */
#ifndef DFBUFFER_CAPI_H
#define DFBUFFER_CAPI_H

#include "common.h"

/* adds the capsule `_C_API` (the public C API table of
   dfbuffer/dfbuffer.h) to module `m`.  Returns 0, or -1 with an exception
   set.  Called at the end of module exec. */
int
dfb_capi_add(PyObject *m, dfb_state *st);

#endif /* DFBUFFER_CAPI_H */
