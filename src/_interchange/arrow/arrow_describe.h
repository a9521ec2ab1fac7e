/* dfbuffer: the interface of arrow_describe.c: one imported Arrow column chunk
 * described as a dfb_column (describe_node), with Buffers over its memory
 * owned by its holder, on the CPU or on a device (whose memory it never
 * reads).
 */
#ifndef DFBUFFER_ARROW_DESCRIBE_H
#define DFBUFFER_ARROW_DESCRIBE_H

#include "common.h"
#include "arrow_internal.h"

/* Fills `col` (and `dict` for dictionary-encoded chunks; may be NULL only
   where dictionaries are not allowed) from one chunk, after checking it
   (dfb_arrow_check_node).  Buffers made over Arrow memory are on the
   node's device and owned by its holder.  String views are kept as views
   when `decode_views` is DFB_VIEWS_KEEP (the converters read them), copied
   to large-utf8 in new NumPy arrays when it is DFB_VIEWS_COPY, refused
   with CopyError (st->copy_error) when 0.  Memory not on the CPU is never
   read: its null count is the producer's for a whole array, else -1 (unknown,
   the validity kept), and variable-width data raises NotImplementedError;
   there, when `dict_error` is non-NULL, a dictionary that cannot be
   described does not fail the codes: *dict_error gets its exception (a
   new reference; else NULL) and `dict` only its length.  Everything made
   is kept in `refs`.  Returns 0, or -1 with ValueError (malformed),
   NotImplementedError (unsupported format) or CopyError set.  `name`
   names the column in messages. */
int
dfb_arrow_describe_node(dfb_state *st, const arrow_node *nd, dfb_column *col,
                        dfb_column *dict, PyObject **dict_error,
                        ref_list *refs, int decode_views, const char *name);

/* returns a new reference to the NumPy dtype of a
   fixed-width format's stored values (bitmaps and bytes: uint8), or NULL
   with an exception. */
PyArray_Descr *
dfb_arrow_stored_descr(const dfb_format *f);

/* Returns the name of column `c` of the import (UTF-8, never NULL). */
const char *
dfb_arrow_column_name(const arrow_import *imp, int is_table, int64_t c);

#endif /* DFBUFFER_ARROW_DESCRIBE_H */
