/* dfbuffer: the interchange walk (ixwalk.c): Python interchange objects to
 * dfb_column chunks, for the module functions (convert_functions.c).
 * dfb_ix_describe_frame, for to_matrix, is declared in frame.h.
 */
#ifndef DFBUFFER_IXWALK_H
#define DFBUFFER_IXWALK_H

#include "common.h"
#include "column.h"
#include "frame.h"

/* Wraps interchange buffer `obj` in a new dfbuffer Buffer (owner = obj,
   u1, native INTERCHANGE, read-only unless obj is a writable
   dfbuffer.Buffer) and fills `span`; host memory only.  Returns the new
   Buffer, or NULL with an exception set (BufferError for device
   memory). */
PyObject *
dfb_ix_wrap_buffer(dfb_state *st, PyObject *obj, dfb_span *span);

/* Converts interchange column `col` (all its chunks).  Returns a new
   reference or NULL with an exception set. */
PyObject *
dfb_ix_column_to_ndarray(dfb_state *st, PyObject *col, const dfb_opts *opts,
                         int allow_copy);

/* Returns the interchange DataFrame of `obj` (new reference): obj itself
   when it has column_names and get_column, else obj.__dataframe__(
   allow_copy=...); NULL with an exception set, or NULL without one when
   `obj` is neither. */
PyObject *
dfb_ix_frame(dfb_state *st, PyObject *obj, int allow_copy);

/* Returns 1 if `obj` has attribute `name` (getattr, AttributeError -> 0),
   0 if not, -1 with an exception set. */
int
dfb_has_attr(PyObject *obj, PyObject *name);

/* Prefixes the message of the pending exception with column name `key`
   when its type is a plain ValueError / TypeError / RuntimeError /
   NotImplementedError / BufferError or st->copy_error (others are left
   alone); the original (a NotImplementedError's own cause when it has
   one) becomes the new one's __cause__.  Cannot fail. */
void
dfb_add_column_context(dfb_state *st, PyObject *key);

/* get_column() of an interchange DataFrame raised for column `key`: a
   ValueError, TypeError or NotImplementedError (how producers refuse a
   column the protocol cannot describe: pyarrow's ValueError for a list
   column) becomes NotImplementedError naming the column, the original as
   its __cause__, so on_unsupported="skip" drops that column; other
   exceptions are left alone.  Call with the exception set.  Cannot fail. */
void
dfb_column_refused(PyObject *key);

/* Describes the selected columns of interchange DataFrame (or __dataframe__
   producer) `obj` into `out` (zeroed by the caller; clear it always).
   With `skip` (on_unsupported="skip") a column of a type no reader takes
   (the NotImplementedError that names it) is left out.  Returns 0, 1 when
   `obj` is neither (no exception set), or -1 with an exception set whose
   message names the column. */
int
dfb_ix_describe_frame(dfb_state *st, PyObject *obj, PyObject *select, int skip,
                      dfb_frame *out);

#endif /* DFBUFFER_IXWALK_H */
