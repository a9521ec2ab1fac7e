/* dfbuffer: module-level functions defined by the export files. */
#ifndef DFBUFFER_EXPORT_H
#define DFBUFFER_EXPORT_H

#include "dfbuffer/common.h"

/* export_array.c: `_rebuild`, the pickle reconstructor of Buffer.  Added to
   the module with PyModule_AddFunctions in module.c. */
extern PyMethodDef dfb_export_methods[];

#endif /* DFBUFFER_EXPORT_H */
