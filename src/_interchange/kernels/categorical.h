/* dfbuffer: the interface of categorical.c: categorical columns without
 * decoding (categorical="codes"), the converters' entry dfb_columns_to_ndarray
 * that routes them here (every other column goes to the kernel, convert.c),
 * and the parser of the converters' categorical= / strings= options.
 */
#ifndef DFBUFFER_CATEGORICAL_H
#define DFBUFFER_CATEGORICAL_H

#include "common.h"
#include "column.h"

/* converts `n` chunks of one column to a NumPy array
   (MaskedArray in MASK mode where any value is null), or, for DICTIONARY
   chunks with opts->categorical_codes, to a
   dfbuffer.CategoricalCodes (dfb_categorical_codes); every other column
   goes to the kernel, dfb_columns_convert.  Zero-copy where n == 1 and the
   layout allows.  Returns a new reference, or NULL with an exception set:
   ValueError for bad lengths/offsets/buffers or nulls in RAISE mode,
   RuntimeError when a copy is needed and allow_copy is 0,
   NotImplementedError for unsupported types. */
PyObject *
dfb_columns_to_ndarray(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                       const dfb_opts *opts, int allow_copy);

/* Converts the `n` validated DICTIONARY chunks to a
   dfbuffer.CategoricalCodes(codes, categories, ordered) without decoding:
   codes a zero-copy integer array (one chunk; masked where null in MASK
   mode, -1 in FILL mode), categories converted with the options of
   `nulls`.  Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_categorical_codes(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                      const dfb_opts *opts, int allow_copy);

/* dfbuffer.CategoricalCodes(codes, categories, ordered) of `codes` and
   `cats` (both stolen), the nulls mode `mode` applied to the codes (MASK:
   kept; FILL: -1 in the null slots, a copy; RAISE: ValueError for a
   null).  Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_categorical_make(dfb_state *st, PyObject *codes, PyObject *cats,
                     int ordered, int mode, int allow_copy);

/* Creates the CategoricalCodes type in `st` and adds it to module `m`.
   Returns 0, or -1 with an exception set. */
int
dfb_categorical_state_init(PyObject *m, dfb_state *st);

#endif /* DFBUFFER_CATEGORICAL_H */
