/* dfbuffer: the one-block Arrow reader of dfbuffer.pandas (pandas_fast.c)
 * and the two helpers it borrows from the Arrow converters.
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
                      dfb_nulls_mode nulls, int allow_copy);

/* pandas_fast.c: THE test "is this a pandas frame": 1 if `obj` is exactly
   a pandas.DataFrame (pandas already imported; nothing is imported), 0 if
   not, -1 with an exception set. */
int
dfb_pandas_is_frame(PyObject *obj);

/* pandas_fast.c: a new reference to the pandas DataFrame behind `obj`:
   `obj` itself when dfb_pandas_is_frame says so, or the frame an exact
   pandas interchange DataFrame object wraps (its `_df`), clearing
   *allow_copy when that object forbids copies.  NULL without an exception
   for anything else, NULL with one on error. */
PyObject *
dfb_pandas_frame_behind(PyObject *obj, int *allow_copy);

/* pandas_fast.c: for an exact pandas interchange Column object, a new
   one-column DataFrame of the Series behind it (Series.to_frame(), no
   copy), clearing *allow_copy when the column forbids copies.  NULL without
   an exception for anything else, NULL with one on error. */
PyObject *
dfb_pandas_column_frame(PyObject *obj, int *allow_copy);

/* pandas_block.c: the private _pandas_arrow_block, _rows_block and
   _stringdtype_arrow, added by module init. */
extern PyMethodDef dfb_pandas_methods[];

/* pandas_fast.c: the private _pandas_frame, added by module init. */
extern PyMethodDef dfb_pandas_frame_methods[];

#endif /* DFBUFFER_PANDAS_BLOCK_H */
