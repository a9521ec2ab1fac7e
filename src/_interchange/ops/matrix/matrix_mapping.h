/* dfbuffer: the interface of matrix_mapping.c: the mapping side of
 * to_matrix: a mapping of column names to arrays, read once
 * (dfb_mapping_snapshot) and described value by value as dfb_column chunks,
 * each value read as column_to_ndarray reads it alone (see matrix_plan.h).
 */
#ifndef DFBUFFER_MATRIX_MAPPING_H
#define DFBUFFER_MATRIX_MAPPING_H

#include "common.h"
#include "model.h"
#include "matrix_plan.h"

/* Describes the selected values (`select`, NULL or None: all) of mapping
   `obj` into `out` (zeroed; clear it always), its items taken once: a
   pandas Series, ExtensionArray or interchange Column as the column of a
   one-column pandas frame (dfb_matrix_pandas_describe; `flatten` gives a
   struct's leaves), an Arrow array (one chunk), an ndarray (a masked
   array's mask its nulls) or anything Buffer.from_object reads, in place;
   *strides: a PyMem array of one per column.  With `skip` a value of a type
   to_matrix does not take is left out.  Returns 0, or -1 with an exception
   set naming the column (ValueError for columns of different lengths, a
   value not 1-D; TypeError for a list or no column). */
int
dfb_matrix_mapping_describe(dfb_state *st, PyObject *obj, PyObject *select,
                            int flatten, int ordinal, int skip, dfb_frame *out,
                            mstrides **strides);

#endif /* DFBUFFER_MATRIX_MAPPING_H */
