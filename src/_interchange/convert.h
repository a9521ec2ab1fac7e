/* dfbuffer: the column description shared by the interchange and the Arrow
 * paths, and the converters that turn it into NumPy arrays.
 */
#ifndef DFBUFFER_CONVERT_H
#define DFBUFFER_CONVERT_H

#include "common.h"
#include "format.h"
#include "reader.h"
#include "dtype.h" /* dfb_interchange_dtype_parse */

/* One buffer of a column: host memory plus the object keeping it alive. */
typedef struct {
    const char *ptr; /* may be NULL only if size == 0 or absent */
    int64_t size;    /* bytes available at ptr */
    PyObject *owner; /* borrowed: a dfbuffer.Buffer over this memory, or
                        NULL when absent; zero-copy results take it as
                        their base */
} dfb_span;

/* The interchange protocol's ColumnNullType values. */
typedef enum {
    DFB_NULL_NON_NULLABLE = 0,
    DFB_NULL_USE_NAN = 1,
    DFB_NULL_USE_SENTINEL = 2,
    DFB_NULL_USE_BITMASK = 3,
    DFB_NULL_USE_BYTEMASK = 4
} dfb_null_kind;

/* One chunk of a column, physically described.  Filled from an
   interchange Column (ixwalk.c) or an ArrowArray + ArrowSchema
   (arrow_describe.c).
   All pointers are borrowed; the owners in the spans keep memory alive for
   as long as the dfb_column is used. */
typedef struct dfb_column {
    dfb_format fmt;     /* type of the values (DICTIONARY: the codes'
                           integer type is in `index`) */
    dfb_format index;   /* DICTIONARY only: the codes' type */
    int64_t length;     /* number of elements */
    int64_t offset;     /* element offset applied to every buffer (bit
                           offset for bitmaps) */
    int64_t null_count; /* -1 when unknown */
    dfb_null_kind null_kind;
    int64_t null_value; /* SENTINEL: the sentinel; masks: the value (0 or
                           1) that marks a null */
    dfb_span data;      /* values (strings: the UTF-8 bytes) */
    dfb_span validity;  /* bitmap or bytemask, or ptr NULL */
    dfb_span offsets;   /* strings: int32/int64 offsets */
    const struct dfb_column *categories; /* DICTIONARY: the values */
    int is_ordered;                      /* DICTIONARY: ordered categories */
    int from_runs; /* DICTIONARY made of a run-end encoded chunk (codes: the
                      run of each row): always decoded */
    int uuid;      /* FIXED_BINARY of 16 bytes marked arrow.uuid: converted
                      to uuid.UUID objects */
    int offsets_swapped; /* strings: 1 if the offsets are stored in the
                            non-native byte order (0 = native) */
    /* STRING_VIEW only (`data` holds the 16-byte views, any alignment):
       the variadic data buffers and their sizes, n_variadic of each, in
       memory made for them (the sizes were read once and checked >= 0,
       a buffer of size > 0 is not NULL) */
    int64_t n_variadic;
    const char *const *variadic;
    const int64_t *variadic_sizes;
} dfb_column;

/* Reads string view `j` of the STRING_VIEW chunk `c` (core's
   dfb_string_view_read: once, any alignment) into *s and *n: inline strings
   (length <= 12) point into the view, others into variadic buffer `index` at
   `offset`, checked against that buffer's size.  Each call reads the view
   once, so views that change meanwhile cannot send a reader outside the
   buffers.  Returns 0, or -1 with ValueError set. */
static inline int
dfb_view_at(const dfb_column *c, int64_t j, const char **s, int64_t *n)
{
    int32_t len, idx = -1, off = 4;
    if (dfb_string_view_read(c->data.ptr + 16 * j, c->n_variadic, c->variadic,
                             c->variadic_sizes, s, &len, &idx,
                             &off) != DFB_OK) {
        PyErr_Format(PyExc_ValueError,
                     "string view %lld (length %d, buffer %d, offset %d) "
                     "points outside its %lld data buffers",
                     (long long)j, (int)len, (int)idx, (int)off,
                     (long long)c->n_variadic);
        return -1;
    }
    *n = len;
    return 0;
}

/* Returns 1 if byte order `bo` ('<', '>', '=', '|') is not the host's. */
static inline int
dfb_is_swapped(char bo)
{
#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
    return bo == '>';
#else
    return bo == '<';
#endif
}

/* The `nulls=` argument of the converters. */
typedef enum {
    DFB_NULLS_MASK = 0,
    DFB_NULLS_FILL = 1,
    DFB_NULLS_RAISE = 2
} dfb_nulls_mode;

/* The conversion options of one call, parsed once by the argument parser
   (dfb_parse_opts, args.c) and passed by pointer.  A converter never
   changes the caller's struct: one that needs other options for a part
   (the categories of codes) converts it with a copy. */
typedef struct {
    dfb_nulls_mode nulls;  /* nulls= */
    int always_mask;       /* nulls="always_mask": a MaskedArray even
                              without nulls (nulls is then MASK) */
    int categorical_codes; /* categorical="codes" */
    int stringdtype;       /* strings="stringdtype" */
    int structs_flatten;   /* structs="flatten" (Arrow) */
    int decimal_float;     /* decimals="float64" */
    int skip_unsupported;  /* on_unsupported="skip" */
    int copy;              /* copy=: -1 None (copy where needed), 0 False
                              (raise where a copy is needed), 1 True
                              (always fresh writable memory) */
} dfb_opts;

/* The options of a call that gives none: nulls="mask", the defaults. */
#define DFB_OPTS_INIT {DFB_NULLS_MASK, 0, 0, 0, 0, 0, 0, -1}

/* args.c: DFB_OPTS_INIT, for the internal conversions that take the
   defaults (a dictionary's codes, a nested node's values). */
extern const dfb_opts dfb_opts_default;

/* categorical.c: converts `n` chunks of one column to a NumPy array
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

/* convert.c: the kernel of dfb_columns_to_ndarray, for every column but
   categorical="codes" ones (opts->categorical_codes is ignored here).
   Same returns. */
PyObject *
dfb_columns_convert(dfb_state *st, const dfb_column *chunks, Py_ssize_t n,
                    const dfb_opts *opts, int allow_copy);

/* convert.c: validates the `n` chunks of one column (dfb_column_validate)
   and that they share one output type.  Returns 0, or -1 with ValueError
   (no chunk, a bad chunk, chunks of different types). */
int
dfb_columns_check(const dfb_column *chunks, Py_ssize_t n);

/* convert.c: the values of validated chunk `c` as a new array (zero-copy
   for fixed-width types; null slots of copies hold None / NaT where the
   type has one; as `opts` ask), or NULL with an exception set. */
PyObject *
dfb_chunk_values(dfb_state *st, const dfb_column *c, const uint8_t *isnull,
                 int allow_copy, const dfb_opts *opts);

/* convert_nulls.c: returns 0, or -1 with RuntimeError naming `why` when a
   copy is needed and allow_copy is 0. */
int
dfb_need_copy(int allow_copy, const char *why);

/* Validates that every buffer of `col` is large enough for its offset and
   length (and that string offsets are in range and non-decreasing).
   Returns 0, or -1 with ValueError naming the buffer. */
int
dfb_column_validate(const dfb_column *col);

/* Creates the converters' cached datetime dtypes in `st->descr`.
   Returns 0, or -1 with an exception set.  Called once by module init. */
int
dfb_convert_state_init(dfb_state *st);

/* Releases what dfb_convert_state_init created (idempotent). */
void
dfb_convert_state_clear(dfb_state *st);

/* convert_nulls.c: returns a new 1-D array of `n` elements of `descr`
   (stolen), or NULL with an exception set. */
PyArrayObject *
dfb_new_array(PyArray_Descr *descr, int64_t n);

/* convert_nulls.c: computes the null mask of validated chunk `c`: *out a
   new bool array (1 = null) and *nnull the count, or *out NULL and *nnull
   0 when no value is null.  Returns 0, or -1 with an exception set. */
int
dfb_chunk_mask(const dfb_column *c, PyArrayObject **out, int64_t *nnull);

/* convert_nulls.c: adds to *mask (allocated when NULL) the rows of the
   categorical chunk `c` whose code names a null category, counting them in
   *nnull.  Returns 0, or -1 with an exception set (*mask still the
   caller's). */
int
dfb_mask_null_categories(const dfb_column *c, PyArrayObject **mask,
                         int64_t *nnull);

/* convert_nulls.c: returns a new reference to numpy.ma.MaskedArray(values,
   mask) (both borrowed), the class imported once into the module state
   (st->ma_masked_array, the one place that fills it), or NULL with an
   exception set. */
PyObject *
dfb_masked_array(dfb_state *st, PyObject *values, PyObject *mask);

/* convert_nulls.c: applies the `nulls` mode to `values` (stolen) and
   `mask` (stolen, NULL when no value is null); `filled`: the null slots of
   values already hold None / NaN / NaT.  Returns a new reference, or NULL
   with an exception set. */
PyObject *
dfb_nulls_finish(dfb_state *st, PyObject *values, PyArrayObject *mask,
                 int64_t nnull, int filled, dfb_nulls_mode nulls,
                 int allow_copy);

/* convert_nulls.c: the last step of the converting functions: with
   opts->always_mask every ndarray of `res` (stolen; one array, a
   CategoricalCodes' codes, or the values of our own dict) without a mask
   becomes a MaskedArray with an all-False mask (its data zero-copy); with
   opts->copy == 1 every array not already fresh writable memory of its
   own is copied.  Returns a new reference, or NULL with an exception set
   (NULL `res`: NULL, the exception kept). */
PyObject *
dfb_result_finish(dfb_state *st, PyObject *res, const dfb_opts *opts);

/* Module-level functions of convert_functions.c (buffer_to_ndarray,
   column_to_ndarray, from_dataframe), added by module init. */
extern PyMethodDef dfb_convert_methods[];

/* The private _arrow_type of type_info.c (the type table from Python),
   added by module init. */
extern PyMethodDef dfb_type_info_methods[];

/* bitmap.c */

/* Unpacks `length` LSB-first bits starting at bit `bit_offset` of `bits`
   into one byte (0 or 1) each at `out`.  If `invert`, writes 1 - bit.
   Cannot fail. */
void
dfb_unpack_bits(const uint8_t *bits, int64_t bit_offset, int64_t length,
                uint8_t *out, int invert);

/* Counts the zero bits among `length` bits from `bit_offset`. */
int64_t
dfb_count_zero_bits(const uint8_t *bits, int64_t bit_offset, int64_t length);

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

/* column_select.c: from_dataframe's columns= (names, in order). */
typedef struct {
    PyObject *names;  /* strong: a tuple of str, or NULL: every column */
    PyObject *wanted; /* strong: a set of the names, or NULL */
} dfb_colsel;

/* Fills `s` from columns= (NULL or None: every column).  Returns 0, or -1
   with TypeError (a str, not a sequence, a name not a str). */
int
dfb_colsel_init(dfb_colsel *s, PyObject *columns);

/* Returns 1 if column `key` is selected (`s` NULL: all are), 0 if not, -1
   with an exception set. */
int
dfb_colsel_wants(const dfb_colsel *s, PyObject *key);

/* Returns the dict `result` (stolen) in the order of the names asked for
   (KeyError naming a name no column has), `result` itself without a
   selection, or NULL with an exception set (NULL in: NULL out). */
PyObject *
dfb_colsel_finish(const dfb_colsel *s, PyObject *result);

/* Drops the references of `s`.  Cannot fail. */
void
dfb_colsel_clear(dfb_colsel *s);

/* strings.c: the prefaulting arena allocator of the str converters for
   any large run of new small objects: installs it when `bytes` (their
   estimated size) is large, returning 1 (undo with
   dfb_objects_prefault_end(1)), else 0.  Cannot fail. */
int
dfb_objects_prefault_begin(int64_t bytes);
void
dfb_objects_prefault_end(int on);

/* convert_binary.c: binary (offsets, views or fixed widths) of validated
   chunk `c` to a 1-D object array of bytes (None where isnull[i]).
   Offsets go through core's checked reader, views through dfb_view_at.
   Returns a new reference, or NULL with ValueError (a span outside its
   buffer) / MemoryError set. */
PyObject *
dfb_bytes_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* convert_extension.c: fills `o` (n slots, all NULL) with uuid.UUID
   objects (as UUID(bytes=...) makes them) of the n 16-byte values at `p`,
   None where isnull[i].  Returns 0, or -1 with an exception set (the
   slots filled so far hold new references, the rest NULL). */
int
dfb_uuids_fill(const char *p, int64_t n, const uint8_t *isnull, PyObject **o);

/* convert_decimal.c: decimal chunk `c` to a 1-D object array of exact
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

/* convert_temporal.c: time32 / time64 chunk `c` to a 1-D object array of
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

/* column_readers.c: core's checked readers (reader.h) over a chunk's
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

/* With opts->skip_unsupported and a NotImplementedError set (a column of a
   type dfbuffer cannot convert), clears it and returns 1; otherwise
   returns 0 and leaves any error set. */
static inline int
dfb_skip_unsupported(const dfb_opts *opts)
{
    if (opts->skip_unsupported &&
        PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

/* stringdtype.c */

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

/* categorical.c */

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

/* schema.c */

struct ArrowSchema;

/* Marks in `skip` (n_children bytes, zeroed by the caller) the children of
   struct schema `s` that its "pandas" metadata lists in "index_columns"
   (pandas' index stored as columns).  Returns the number marked (0 when
   there is no such metadata or it cannot be read), or -1 with an
   exception set (MemoryError only). */
int
dfb_arrow_index_columns(const struct ArrowSchema *s, uint8_t *skip);

/* Module-level functions of schema.c (the private helper _arrow_schema),
   added by module init. */
extern PyMethodDef dfb_schema_methods[];

#endif /* DFBUFFER_CONVERT_H */
