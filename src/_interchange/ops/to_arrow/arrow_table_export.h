/* dfbuffer: the interface of arrow_table_export.c: Arrow export of a table
 * (dfbuffer.to_arrow).
 */
#ifndef DFBUFFER_ARROW_TABLE_EXPORT_H
#define DFBUFFER_ARROW_TABLE_EXPORT_H

#include "common.h"
#include "arrow.h"

/* _arrow_table_schema and _arrow_table_stream, the
   Arrow structs of dfbuffer.to_arrow. */
extern PyMethodDef dfb_arrow_table_export_methods[];

/* Returns a new "arrow_array_stream" capsule over `schema` (moved in, also
   on failure) and `n` arrays built now by fill(ctx, i, out) (0, or -1 with
   an exception set), or NULL with an exception set. */
PyObject *
dfb_arrow_built_stream(struct ArrowSchema *schema, Py_ssize_t n,
                       int (*fill)(void *ctx, Py_ssize_t i,
                                   struct ArrowArray *out),
                       void *ctx);

#endif /* DFBUFFER_ARROW_TABLE_EXPORT_H */
