/* dfbuffer: the interface of api/: what Python and C callers see: the Buffer
 * type, the C API capsule, the type table read from Python, the test-only
 * Arrow functions.
 */
#ifndef DFBUFFER_API_H
#define DFBUFFER_API_H

#include "common.h"

/* ---- arrow_functions.c ---- */

/* Module-level functions of arrow_functions.c (the test-only
   _arrow_to_ndarray, _arrow_from_dataframe, _arrow_buffer), added by module
   init. */
extern PyMethodDef dfb_arrow_methods[];

/* ---- buffer_type.c ---- */

/* The spec of the Buffer type, for module init. */
extern PyType_Spec dfb_buffer_spec;

/* ---- capi.c ---- */

/* adds the capsule `_C_API` (the public C API table of
   dfbuffer/dfbuffer.h) to module `m`.  Returns 0, or -1 with an exception
   set.  Called at the end of module exec. */
int
dfb_capi_add(PyObject *m, dfb_state *st);

/* ---- type_info.c ---- */

/* The private _arrow_type of type_info.c (the type table from Python),
   added by module init. */
extern PyMethodDef dfb_type_info_methods[];

#endif /* DFBUFFER_API_H */
