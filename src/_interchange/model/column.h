/* dfbuffer: the column model: one chunk of a column described (dfb_column),
 * shared by every reader (interchange, Arrow, pandas) and every kernel.
 */
#ifndef DFBUFFER_COLUMN_H
#define DFBUFFER_COLUMN_H

#include "common.h"
#include "args.h"
#include "format.h"
#include "types.h"
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
    dfb_format fmt;     /* type of the values (DICTIONARY, RUN_END: the
                           codes' integer type is in `index`) */
    dfb_format index;   /* DICTIONARY, RUN_END (dfb_type_has_codes) only:
                           the codes' type */
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
    const struct dfb_column *categories; /* DICTIONARY: the values;
                                            RUN_END: the values child, the
                                            codes the run of each row */
    int is_ordered;                      /* DICTIONARY: ordered categories */
    dfb_extension ext;   /* the canonical extension type that applies to the
                            values (dfb_extension_applies), or DFB_EXT_NONE:
                            the type table says how they convert
                            (dfb_format_conv; arrow.uuid: uuid.UUID) */
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

/* column_select.c: from_dataframe's columns= (names, in order). */
typedef struct {
    PyObject *names;  /* strong: a tuple of str, or NULL: every column */
    PyObject *wanted; /* strong: a set of the names, or NULL */
} dfb_colsel;

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

/* schema.c */

struct ArrowSchema;

#endif /* DFBUFFER_COLUMN_H */
