/* dfbuffer: the interface of convert_extension.c: Arrow's canonical extension
 * types (the "ARROW:extension:name" field metadata on a storage type).
 */
#ifndef DFBUFFER_CONVERT_EXTENSION_H
#define DFBUFFER_CONVERT_EXTENSION_H

#include "common.h"
#include "column.h"

/* applies the canonical extension type of schema `s`
   (identified by the type table, dfb_metadata_extension) to the described
   `col` (its `ext` when the table's row applies to its storage,
   dfb_extension_applies): arrow.bool8 (int8 storage) becomes a bool view,
   arrow.uuid (16-byte fixed-size binary) uuid.UUID objects (the table's
   result class, dfb_format_conv); other extensions keep their storage
   type's result.  Returns 0, or -1 with ValueError for
   malformed metadata (`name` names the column). */
int
dfb_arrow_apply_extension(const struct ArrowSchema *s, dfb_column *col,
                          const char *name);

#endif /* DFBUFFER_CONVERT_EXTENSION_H */
