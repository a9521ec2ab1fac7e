/* dfbuffer: the interface of column_readers.c: core's checked readers of
 * offsets and codes (src/core/reader.h) set up over a chunk's memory, and the
 * errors the converters raise when a value read through them is out of range.
 */
#ifndef DFBUFFER_COLUMN_READERS_H
#define DFBUFFER_COLUMN_READERS_H

#include "common.h"
#include "column.h"

/* core's checked readers (reader.h) over a chunk's
   memory, the only way the converters read producer offsets and codes. */

/* Describes the offsets of validated UTF8 / LARGE_UTF8 chunk `c` (length
   + 1 of them from c->offset, spans within its data buffer) into *o.
   Returns 0, or -1 with ValueError. */
int
dfb_column_offsets(const dfb_column *c, dfb_offsets *o);

/* Describes the codes of validated DICTIONARY chunk `c` (its `index`
   format, c->length of them from c->offset, each valid in [0, ncats); no
   sentinel) into *r.  Returns 0, or -1 with ValueError /
   NotImplementedError. */
int
dfb_column_codes(const dfb_column *c, int64_t ncats, dfb_codes *r);

/* Sets ValueError for element `i` whose span [start, end) read from the
   offsets does not lie in [0, limit] (changed after validation, or
   corrupt).  Returns NULL. */
PyObject *
dfb_bad_span_error(int64_t i, int64_t start, int64_t end, int64_t limit);

/* Sets ValueError for the out-of-range code `code` of row `i` (of
   `ncats` categories).  Returns NULL. */
PyObject *
dfb_bad_code_error(int64_t i, int64_t code, int64_t ncats);

#endif /* DFBUFFER_COLUMN_READERS_H */
