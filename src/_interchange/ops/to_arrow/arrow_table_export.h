/* dfbuffer: the interface of arrow_table_export.c: Arrow export of a table
 * (dfbuffer.to_arrow).
 */
#ifndef DFBUFFER_ARROW_TABLE_EXPORT_H
#define DFBUFFER_ARROW_TABLE_EXPORT_H

#include "common.h"

/* _arrow_table_schema and _arrow_table_stream, the
   Arrow structs of dfbuffer.to_arrow. */
extern PyMethodDef dfb_arrow_table_export_methods[];

#endif /* DFBUFFER_ARROW_TABLE_EXPORT_H */
