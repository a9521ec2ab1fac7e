/* dfbuffer: the interface of convert_nulls.c: the null side of the conversion
 * kernel: a chunk's null mask from its validity bitmap or bytes, sentinel or
 * NaN values, the rows whose categorical code names a null category, the
 * nulls= modes applied to converted values, and the two helpers every kernel
 * file shares (new 1-D arrays, the allow_copy check; see convert_nulls.h).
 */
#ifndef DFBUFFER_CONVERT_NULLS_H
#define DFBUFFER_CONVERT_NULLS_H

#include "common.h"
#include "column.h"

/* returns 0, or -1 with st's CopyError naming `why` when a
   copy is needed and allow_copy is 0. */
int
dfb_need_copy(dfb_state *st, int allow_copy, const char *why);

/* computes the null mask of validated chunk `c`: *out a
   new bool array (1 = null) and *nnull the count, or *out NULL and *nnull
   0 when no value is null.  Returns 0, or -1 with an exception set. */
int
dfb_chunk_mask(const dfb_column *c, PyArrayObject **out, int64_t *nnull);

/* adds to *mask (allocated when NULL) the rows of the
   categorical chunk `c` whose code names a null category, counting them in
   *nnull.  Returns 0, or -1 with an exception set (*mask still the
   caller's). */
int
dfb_mask_null_categories(const dfb_column *c, PyArrayObject **mask,
                         int64_t *nnull);

/* returns a new reference to numpy.ma.MaskedArray(values,
   mask) (both borrowed), the class imported once into the module state
   (st->ma_masked_array, the one place that fills it), or NULL with an
   exception set. */
PyObject *
dfb_masked_array(dfb_state *st, PyObject *values, PyObject *mask);

/* applies the `nulls` mode to `values` (stolen) and
   `mask` (stolen, NULL when no value is null); `filled`: the null slots of
   values already hold None / NaN / NaT.  Returns a new reference, or NULL
   with an exception set. */
PyObject *
dfb_nulls_finish(dfb_state *st, PyObject *values, PyArrayObject *mask,
                 int64_t nnull, int filled, dfb_nulls_mode nulls,
                 int allow_copy);

/* The last step of the converting functions: with opts->always_mask
   every ndarray of `res` (stolen; one array, a CategoricalCodes' codes, or
   the values of our own dict) without a mask becomes a MaskedArray with an
   all-False mask (its data zero-copy); with opts->copy == 1 every array
   not already fresh writable memory of its own is copied.  Returns a new
   reference, or NULL with an exception set (NULL `res`: NULL, the
   exception kept). */
PyObject *
dfb_result_finish(dfb_state *st, PyObject *res, const dfb_opts *opts);

#endif /* DFBUFFER_CONVERT_NULLS_H */
