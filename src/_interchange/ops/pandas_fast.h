/* dfbuffer: the interface of pandas_fast.c: from_dataframe's fast path for
 * pandas DataFrames.
 */
#ifndef DFBUFFER_PANDAS_FAST_H
#define DFBUFFER_PANDAS_FAST_H

#include "common.h"

/* from_dataframe for a pandas.DataFrame (exact type, any index):
   numpy-backed numeric and object columns, as the pandas frame reader
   (pandas_frame.c) reads them from the blocks, are wrapped without a copy
   (float NaN stays in the values in "mask" and "fill" modes); the other
   columns are read from pandas' own arrays (pandas_columns.c) or go through
   pandas' Arrow export of the sub-frame.  Returns a new dict, NULL with an
   exception set, or NULL *without* an exception when `obj` is not such a frame
   (the caller then takes its usual path). */
PyObject *
dfb_pandas_from_dataframe(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                          int allow_copy);

/* The fast path of a pandas.Series (exact type) whose values are a 1-D
   NumPy array (`Series._values`: every NumPy dtype but datetime64 and
   timedelta64, which pandas wraps) or pandas' nullable Int / UInt / Float
   array: *out = the array from_dataframe gives for the column of its
   one-column frame, read as that frame's block is (a read-only zero-copy
   view; NaN kept in a float column; an object column's missing items
   masked; a nullable array's values viewed, its mask copied), without
   building the frame.  "raise"
   mode and other values take the frame's path (the caller's).  Returns 1
   with *out set (a new reference), 2 with *out NULL for a pandas Series
   not read here, 0 with *out NULL for anything but a pandas Series, -1
   with an exception set. */
int
dfb_pandas_series_fast(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                       PyObject **out);

#endif /* DFBUFFER_PANDAS_FAST_H */
