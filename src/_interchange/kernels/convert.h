/* dfbuffer: the interface of convert.c: the conversion kernel: validated
 * dfb_column chunks to NumPy arrays.
 */
#ifndef DFBUFFER_CONVERT_H
#define DFBUFFER_CONVERT_H

#include "common.h"
#include "column.h"

/* the kernel of dfb_columns_to_ndarray, for every column but
   categorical="codes" ones (opts->categorical_codes is ignored here).
   Same returns. */
PyObject *
dfb_columns_convert(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                    const dfb_opts *opts, int allow_copy);

/* validates the `n` chunks of one column (dfb_column_validate)
   and that they share one output type.  Returns 0, or -1 with ValueError
   (no chunk, a bad chunk, chunks of different types). */
int
dfb_columns_check(const dfb_column *chunks, Py_ssize_t n);

/* the values of validated chunk `c` as a new array (zero-copy
   for fixed-width types; null slots of copies hold None / NaT where the
   type has one; as `opts` ask), or NULL with an exception set. */
PyObject *
dfb_chunk_values(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
                 int allow_copy, const dfb_opts *opts);

/* Validates that every buffer of `col` is large enough for its offset and
   length (and that string offsets are in range and non-decreasing; of
   binary offsets only the last: the binary kernel's one pass over them
   checks each span as it reads it, and the kernel names a bad one as this
   would).  Returns 0, or -1 with ValueError naming the buffer. */
int
dfb_column_validate(const dfb_column *col);

/* Creates the converters' cached datetime dtypes in `st->descr`.
   Returns 0, or -1 with an exception set.  Called once by module init. */
int
dfb_convert_state_init(dfb_state *st);

/* Releases what dfb_convert_state_init created (idempotent). */
void
dfb_convert_state_clear(dfb_state *st);

#endif /* DFBUFFER_CONVERT_H */
