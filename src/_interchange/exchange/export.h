/* dfbuffer: module-level functions defined by the export files. */
#ifndef DFBUFFER_EXPORT_H
#define DFBUFFER_EXPORT_H

#include "common.h"

/* export_array.c: `_rebuild`, the pickle reconstructor of Buffer.  Added to
   the module with PyModule_AddFunctions in module.c. */
extern PyMethodDef dfb_export_methods[];

/* capi.c: adds the capsule `_C_API` (the public C API table of
   dfbuffer/dfbuffer.h) to module `m`.  Returns 0, or -1 with an exception
   set.  Called at the end of module exec. */
int
dfb_capi_add(PyObject *m, dfb_state *st);
/* dlpack.c: drops a strong reference from any thread, with or
   without the GIL (the DLPack deleters and the Arrow export's release
   callback share it): takes the GIL with PyGILState_Ensure in normal
   operation; while the interpreter is finalizing, decrefs only if the
   calling thread holds the GIL and leaks otherwise (taking the GIL then can
   hang or end the thread); after finalization, leaks.  Never fails. */
void
dfb_decref_any_thread(PyObject *obj);

/* dlpack.c: on 3.11/3.12 registers the atexit callback that tells
   dfb_decref_any_thread the interpreter is shutting down (3.13+ asks
   Py_IsFinalizing; nothing to do).  Called by module exec.  Returns 0, or
   -1 with an exception set. */
int
dfb_exit_watch_init(PyObject *module);

#endif /* DFBUFFER_EXPORT_H */
