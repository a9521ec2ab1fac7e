/* dfbuffer: the block builder of dfbuffer.pandas (pandas_block.c) and the
 * two helpers it borrows from the Arrow converters.  The pandas frame
 * reader is pandas_frame.h.
 */
#ifndef DFBUFFER_PANDAS_BLOCK_H
#define DFBUFFER_PANDAS_BLOCK_H

#include "common.h"
#include "arrow_internal.h"

/* schema.c: the parsed "index_columns" of the "pandas" metadata of schema
   `s` (new reference; Py_None when there is none or it is unreadable), or
   NULL with MemoryError. */
PyObject *
dfb_arrow_pandas_index(const struct ArrowSchema *s);

/* arrow_convert.c: from_dataframe's dict name -> array for an import that
   is already made (pandas' index columns left out).  Returns a new
   reference or NULL with an exception set. */
PyObject *
dfb_arrow_import_dict(dfb_state *st, const arrow_import *imp,
                      const dfb_opts *opts, int allow_copy);

/* pandas_block.c: the private _pandas_arrow_block, _rows_block and
   _stringdtype_arrow, added by module init. */
extern PyMethodDef dfb_pandas_methods[];

#endif /* DFBUFFER_PANDAS_BLOCK_H */
