/* dfbuffer: the pandas columns that are neither a NumPy block nor a masked
 * array, read from pandas' own arrays (pandas_columns.c): Period, Interval,
 * Sparse, every extension column when pyarrow cannot be imported, and the
 * Period objects of an Arrow column of pandas' "pandas.period" type, the
 * Interval objects of one of pandas' "pandas.interval" type.
 */
#ifndef DFBUFFER_PANDAS_COLUMNS_H
#define DFBUFFER_PANDAS_COLUMNS_H

#include "common.h"
#include "args.h"

#include <stdint.h>

/* Reads one-column pandas frame `df` as from_dataframe reads a pandas
   frame (its block reader): a new dict name -> array, or NULL with an
   exception set (NULL without one: not a frame read there). */
typedef PyObject *(*dfb_pd_frame_reader)(dfb_state *st, PyObject *df,
                                         const dfb_opts *opts, int allow_copy);

/* pandas Period objects of the int64 ordinals `values` (a converted Arrow
   column of pandas' "pandas.period" type, masked or, with nulls="fill",
   float64 with NaN; borrowed) of column `name`, its frequency in `meta`
   (the extension metadata, {"freq": ...}; NULL: none, meta_len bytes):
   nulls become None (masked when `values` was).  CopyError under
   !allow_copy, NotImplementedError naming the column without pandas or a
   frequency.  Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_pd_periods_from_ordinals(dfb_state *st, const char *name, PyObject *values,
                             const char *meta, int32_t meta_len,
                             int allow_copy);

/* pandas Interval objects of the bounds `left` and `right` (the converted
   children of an Arrow column `name` of pandas' "pandas.interval" type, 1-D
   arrays of one length with NaN / NaT / None where null; borrowed), closed
   on the side its extension metadata `meta` (JSON {"closed": ...}, NULL:
   none, meta_len bytes) names ("right" when it names none), as pandas'
   IntervalArray.from_arrays makes them: an object array, None where both
   bounds are null, masked, filled or refused by `mode` as any object
   column.  CopyError under !allow_copy, NotImplementedError naming the
   column without pandas or for bounds pandas refuses.  Returns a new
   reference, or NULL with an exception set. */
PyObject *
dfb_pd_intervals_from_bounds(dfb_state *st, const char *name, PyObject *left,
                             PyObject *right, const char *meta,
                             int32_t meta_len, dfb_nulls_mode mode,
                             int allow_copy);

/* For each column position in `positions` (a list of ints) of pandas
   frame `frame`: its array read from pandas' own arrays, Py_None for the
   caller's Arrow export, or Py_Ellipsis when on_unsupported="skip" drops
   it.  Read here: Period, Interval and Sparse columns always, every other
   extension column when pyarrow cannot be imported; `read_frame` reads a
   one-column frame of a NumPy array.  Under !allow_copy a column whose
   values must be made anew raises CopyError naming it.  Returns a new
   list as long as `positions`, or NULL with an exception set. */
PyObject *
dfb_pd_columns_convert(dfb_state *st, PyObject *frame, PyObject *positions,
                       const dfb_opts *opts, int allow_copy,
                       dfb_pd_frame_reader read_frame);

#endif /* DFBUFFER_PANDAS_COLUMNS_H */
