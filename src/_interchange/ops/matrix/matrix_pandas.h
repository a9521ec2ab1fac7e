/* dfbuffer: the interface of matrix_pandas.c: the pandas side of to_matrix: a
 * pandas DataFrame's columns described as dfb_column chunks, its NumPy-backed
 * and masked ones in place as the one pandas frame reader (pandas_frame.c)
 * read them, the others from pandas' own arrays or its Arrow export of the
 * column (see matrix_plan.h).
 */
#ifndef DFBUFFER_MATRIX_PANDAS_H
#define DFBUFFER_MATRIX_PANDAS_H

#include "common.h"
#include "matrix_plan.h"
#include "pandas.h"
#include "model.h"

/* For a pandas DataFrame, whose Arrow stream carries a non-default index
   as extra columns: a new list of its own column names (str); NULL
   without an exception for other objects, NULL with one on error. */
PyObject *
dfb_matrix_pandas_columns(PyObject *obj);

/* Describes NumPy-stored column `s` (named `name`, `nrows` values) as one
   chunk `c` (zeroed) with its real byte strides (any sign, 0 too) in *ms.
   Returns 0, 1 for a dtype no plan reads in place (no exception: a
   non-native byte order, fields, an odd size), or -1 with TypeError naming
   the column for object, datetime, timedelta and complex values. */
int
dfb_matrix_numpy_chunk(const dfb_pd_column *s, PyObject *name, int64_t nrows,
                       dfb_column *c, mstrides *ms);

/* Appends the columns of `sub` to `out` (their chunks moved; `sub`'s keep
   list kept by `out`'s), with their strides `sst` (NULL: contiguous) in
   *strides; *room is the columns allocated in `out` and *strides, grown as
   needed.  Returns 0, or -1 with an exception set. */
int
dfb_matrix_frame_append(dfb_frame *out, mstrides **strides, Py_ssize_t *room,
                        dfb_frame *sub, const mstrides *sst);

/* Describes 1-D ndarray `arr` (with `mask`, a 1-D bool array of its
   length, 1 a null, or NULL) as the one column `name` of `sub` (zeroed;
   clear it always), both arrays kept, its strides in *strides (PyMem, one).
   Returns 0, or -1 with an exception set: TypeError naming the column and
   its `what` ("NumPy", "pandas") dtype for one to_matrix does not take,
   ValueError when the arrays are not so. */
int
dfb_matrix_array_frame(PyObject *arr, PyObject *mask, PyObject *name,
                       const char *what, dfb_frame *sub, mstrides **strides);

/* Describes the selected columns (`select`, NULL or None: all) of pandas
   DataFrame `obj` (exactly pandas.DataFrame) into `out` (zeroed; clear it
   always), never its index: NumPy and masked columns in place from the
   manager read once (*strides: a PyMem array of one per described column,
   or NULL), the others as the reader of the rest of the frame gives them;
   `flatten`, `ordinal`, `skip` as dfb_arrow_describe_frame takes them.
   Returns 0, or -1 with an exception set (TypeError naming a refused
   column). */
int
dfb_matrix_pandas_describe(dfb_state *st, PyObject *obj, PyObject *o_cols,
                           int flatten, int ordinal, int skip, dfb_frame *out,
                           mstrides **strides);

#endif /* DFBUFFER_MATRIX_PANDAS_H */
