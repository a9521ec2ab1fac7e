/* dfbuffer: the interface of type_info.c: the private module function
 * _arrow_type, the type table of src/core/types.c read from Python
 * (dfbuffer.schema and dfbuffer.pandas use it instead of parsing Arrow format
 * strings themselves).
 */
#ifndef DFBUFFER_TYPE_INFO_H
#define DFBUFFER_TYPE_INFO_H

#include "common.h"

/* The private _arrow_type of type_info.c (the type table from Python),
   added by module init. */
extern PyMethodDef dfb_type_info_methods[];

#endif /* DFBUFFER_TYPE_INFO_H */
