/* dfbuffer: the interface of matrix_pandas.c: the pandas side of to_matrix: a
 * pandas DataFrame's NumPy-backed and masked columns, as the one pandas frame
 * reader (pandas_frame.c) read them, described in place as dfb_column chunks
 * (see matrix_plan.h).
 */
#ifndef DFBUFFER_MATRIX_PANDAS_H
#define DFBUFFER_MATRIX_PANDAS_H

#include "common.h"
#include "matrix_plan.h"

/* For a pandas DataFrame, whose Arrow stream carries a non-default index
   as extra columns: a new list of its own column names (str); NULL
   without an exception for other objects, NULL with one on error. */
PyObject *
dfb_matrix_pandas_columns(PyObject *obj);

/* Describes a pandas DataFrame's selected columns straight from its blocks
   (matrix_pandas.c).  Returns 0, 1 when `obj` is not such a frame (the
   caller takes another reader: *rest, when not NULL, a new reference to a
   frame over the block manager read, for that reader), or -1 with an
   exception set. */
int
dfb_matrix_pandas_describe(PyObject *obj, PyObject *select, dfb_frame *out,
                           int64_t **strides, PyObject **rest);

#endif /* DFBUFFER_MATRIX_PANDAS_H */
