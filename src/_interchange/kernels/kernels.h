/* dfbuffer: the interface of kernels/: described chunks to NumPy arrays, one
 * file per result kind, with the null side and the checked readers of a
 * chunk's offsets and codes.
 */
#ifndef DFBUFFER_KERNELS_H
#define DFBUFFER_KERNELS_H

#include "common.h"
#include "model.h"

/* ---- categorical.c ---- */

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

/* ---- column_readers.c ---- */

/* core's checked readers (reader.h) over a chunk's
   memory, the only way the converters read producer offsets and codes. */

/* Describes the offsets of validated UTF8 / LARGE_UTF8 chunk `c` (length
   + 1 of them from c->offset, spans within its data buffer) into *o.
   Returns 0, or -1 with ValueError. */
int
dfb_column_offsets(const dfb_column *c, dfb_offsets *o);

/* Describes the codes of validated DICTIONARY chunk `c` (its `index`
   format, c->length of them from c->offset, each valid in [0, ncats); no
   sentinel) into *r.  Returns 0, or -1 with ValueError /
   NotImplementedError. */
int
dfb_column_codes(const dfb_column *c, int64_t ncats, dfb_codes *r);

/* Sets ValueError for element `i` whose span [start, end) read from the
   offsets does not lie in [0, limit] (changed after validation, or
   corrupt).  Returns NULL. */
PyObject *
dfb_bad_span_error(int64_t i, int64_t start, int64_t end, int64_t limit);

/* Sets ValueError for the out-of-range code `code` of row `i` (of
   `ncats` categories).  Returns NULL. */
PyObject *
dfb_bad_code_error(int64_t i, int64_t code, int64_t ncats);

/* ---- convert.c ---- */

/* the kernel of dfb_columns_to_ndarray, for every column but
   categorical="codes" ones (opts->categorical_codes is ignored here).
   Same returns. */
PyObject *
dfb_columns_convert(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                    const dfb_opts *opts, int allow_copy);

/* validates the `n` chunks of one column (dfb_column_validate)
   and that they share one output type.  Returns 0, or -1 with ValueError
   (no chunk, a bad chunk, chunks of different types). */
int
dfb_columns_check(const dfb_column *chunks, Py_ssize_t n);

/* the values of validated chunk `c` as a new array (zero-copy
   for fixed-width types; null slots of copies hold None / NaT where the
   type has one; as `opts` ask), or NULL with an exception set. */
PyObject *
dfb_chunk_values(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
                 int allow_copy, const dfb_opts *opts);

/* Validates that every buffer of `col` is large enough for its offset and
   length (and that string offsets are in range and non-decreasing; of
   binary offsets only the last: the binary kernel's one pass over them
   checks each span as it reads it, and the kernel names a bad one as this
   would).  Returns 0, or -1 with ValueError naming the buffer. */
int
dfb_column_validate(const dfb_column *col);

/* Creates the converters' cached datetime dtypes in `st->descr`.
   Returns 0, or -1 with an exception set.  Called once by module init. */
int
dfb_convert_state_init(dfb_state *st);

/* Releases what dfb_convert_state_init created (idempotent). */
void
dfb_convert_state_clear(dfb_state *st);

/* ---- convert_binary.c ---- */

/* binary (offsets, views or fixed widths) of validated
   chunk `c` to a 1-D object array of bytes (None where isnull[i]).
   Offsets go through core's checked reader, views through dfb_view_at.
   Returns a new reference, or NULL with ValueError (a span outside its
   buffer) / MemoryError set. */
PyObject *
dfb_bytes_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* ---- convert_decimal.c ---- */

/* decimal chunk `c` to a 1-D object array of exact
   decimal.Decimal (None where isnull[i]), or with opts->decimal_float
   to float64 (NaN where isnull[i]).  Returns a new reference, or
   NULL with an exception set. */
PyObject *
dfb_decimals_convert(const dfb_column *c, const uint8_t *isnull,
                     const dfb_opts *opts);

/* Replaces the values of decimal chunk `c` by float64 in new memory (kept
   alive by list `keep`), at the same element offset so its validity still
   applies; `c` becomes a FLOAT 64 chunk.  Returns 0, or -1 with
   MemoryError. */
int
dfb_decimals_as_f64(dfb_column *c, PyObject *keep);

/* ---- convert_nulls.c ---- */

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

/* ---- convert_temporal.c ---- */

/* time32 / time64 chunk `c` to a 1-D object array of
   datetime.time (None where isnull[i]).  Returns a new reference, or NULL
   with ValueError for a value outside [0, 24 h) or with nanoseconds
   datetime.time cannot hold. */
PyObject *
dfb_times_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* The NumPy record dtype of interval format `f` (months; days,
   milliseconds; months, days, nanoseconds).  Returns a new reference, or
   NULL with an exception set. */
PyArray_Descr *
dfb_interval_descr(const dfb_format *f);

/* ---- convert_uuid.c ---- */

/* The 16-byte fixed-size binary values of validated chunk `c` to a 1-D
   object array of uuid.UUID (as UUID(bytes=...) makes them; None where
   isnull[i]).  Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_uuids_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* ---- str_objects.c ---- */

/* strings.c */

/* Builds a 1-D object array of Python str (None where `isnull` is given
   and isnull[i] != 0) from the validated UTF8 / LARGE_UTF8 chunk `c`
   (Arrow-style offsets, any alignment, maybe byte-swapped).  The offsets
   are read through core's checked reader (reader.h): each once, and every
   non-null string checked where it is used (0 <= start <= end <= the data
   size), so offsets that change after validation cannot send it outside
   the data.  Returns a new reference, or NULL with ValueError (offsets out
   of range) / UnicodeDecodeError / MemoryError set. */
PyObject *
dfb_strings_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* Builds a 1-D object array of Python str (None where isnull[i]) from the
   validated STRING_VIEW chunk `c` (element offset c->offset, c->length
   elements), straight from the views, with the de-duplication of
   dfb_strings_to_object_array.  Returns a new reference, or NULL with
   ValueError (a view outside its buffers) / UnicodeDecodeError /
   MemoryError set. */
PyObject *
dfb_views_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* strings.c: the prefaulting arena allocator of the str converters for
   any large run of new small objects: installs it when `bytes` (their
   estimated size) is large, returning 1 (undo with
   dfb_objects_prefault_end(1)), else 0.  Cannot fail. */
int
dfb_objects_prefault_begin(int64_t bytes);
void
dfb_objects_prefault_end(int on);

/* ---- stringdtype.c ---- */

/* Builds a 1-D numpy StringDType(na_object=None) array from the validated
   UTF8 / LARGE_UTF8 chunk `c`, its offsets read and checked as
   dfb_strings_to_object_array reads them; null rows hold the dtype's
   na_object.  No Python str is made.  Returns a new reference, or NULL
   with ValueError (offsets out of range) / UnicodeDecodeError /
   MemoryError set. */
PyObject *
dfb_strings_to_stringdtype(const dfb_column *c, const uint8_t *isnull);

/* Builds a 1-D StringDType(na_object=None) array from the validated
   STRING_VIEW chunk `c`, straight from the views (null rows: na_object).
   Returns a new reference, or NULL with ValueError (a view outside its
   buffers) / UnicodeDecodeError / MemoryError set. */
PyObject *
dfb_views_to_stringdtype(const dfb_column *c, const uint8_t *isnull);

/* Decodes the validated categorical chunk `c`, whose categories are
   strings, into a StringDType(na_object=None) array (null rows: na_object).
   The categories' spans are read once (checked) into a table; each code is
   read once (checked).  Returns a new reference, or NULL with ValueError
   (code or category offsets out of range), UnicodeDecodeError or
   MemoryError set. */
PyObject *
dfb_stringdtype_take(const dfb_column *c, const uint8_t *isnull);

#endif /* DFBUFFER_KERNELS_H */
