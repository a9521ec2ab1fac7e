/* dfbuffer: module-level functions defined by the export files. */
#ifndef DFBUFFER_EXPORT_H
#define DFBUFFER_EXPORT_H

#include "dfbuffer/common.h"

/* export_array.c: `_rebuild`, the pickle reconstructor of Buffer.  Added to
   the module with PyModule_AddFunctions in module.c. */
extern PyMethodDef dfb_export_methods[];

/* capi.c: adds the capsule `_C_API` (the public C API table of
   dfbuffer/dfbuffer.h) to module `m`.  Returns 0, or -1 with an exception
   set.  Called at the end of module exec. */
int
dfb_capi_add(PyObject *m, dfb_state *st);

#endif /* DFBUFFER_EXPORT_H */
