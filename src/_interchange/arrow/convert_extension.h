/* dfbuffer: the interface of convert_extension.c: Arrow's canonical extension
 * types (the "ARROW:extension:name" field metadata on a storage type).
 */
#ifndef DFBUFFER_CONVERT_EXTENSION_H
#define DFBUFFER_CONVERT_EXTENSION_H

#include "common.h"
#include "column.h"

/* fills `o` (n slots, all NULL) with uuid.UUID
   objects (as UUID(bytes=...) makes them) of the n 16-byte values at `p`,
   None where isnull[i].  Returns 0, or -1 with an exception set (the
   slots filled so far hold new references, the rest NULL). */
int
dfb_uuids_fill(const char *p, int64_t n, const uint8_t *isnull, PyObject **o);

/* applies the canonical extension type of schema `s`
   (identified by the type table, dfb_metadata_extension) to the described
   `col`: arrow.bool8 (int8 storage) becomes a bool view, arrow.uuid
   (16-byte fixed-size binary) uuid.UUID objects; other extensions keep
   their storage type's result.  Returns 0, or -1 with ValueError for
   malformed metadata (`name` names the column). */
int
dfb_arrow_apply_extension(const struct ArrowSchema *s, dfb_column *col,
                          const char *name);

#endif /* DFBUFFER_CONVERT_EXTENSION_H */
