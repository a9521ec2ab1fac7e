/* dfbuffer: type descriptions from Python values (dtype.c): the parser of
 * interchange dtype tuples, typestrs and dtype arguments to NumPy dtypes.
 */
#ifndef DFBUFFER_DTYPE_H
#define DFBUFFER_DTYPE_H

#include "common.h"
#include "format.h"

/* An interchange dtype tuple as C values. */
typedef struct {
    long kind;
    long bits;
    const char *fmt; /* points into the tuple's format str */
    char endian;     /* its one character, or '?' when longer */
} dfb_ix_dtype;

/* Reads interchange dtype tuple `t` (kind, bit_width, format, endianness;
   borrowed, and out->fmt points into it).  Returns 0, or -1 with
   TypeError / ValueError set. */
int
dfb_ix_dtype_read(PyObject *t, dfb_ix_dtype *out);

/* Maps `d` through core's format table.  Returns 0, or -1 (no exception)
   when dfbuffer does not support the dtype. */
int
dfb_ix_dtype_format(const dfb_ix_dtype *d, dfb_format *out);

/* Parses interchange dtype tuple `t` (kind, bit_width, format, endianness;
   borrowed, and out->tz points into it) through core's format table.
   Returns 1, 0 (no exception) when dfbuffer does not support the dtype, or
   -1 with TypeError for a malformed tuple. */
int
dfb_interchange_dtype_parse(PyObject *t, dfb_format *out);

/* The fast path of dfb_ix_dtype_read + dfb_ix_dtype_format for a plain
   interchange dtype: an exact tuple (int kind INT, UINT, FLOAT or BOOL, int
   bit width, exact ASCII str format, exact one-character ASCII str
   endianness).  Returns 1 with `out` filled as the general pair fills it,
   0 (no exception) when `t` is anything else (the caller then takes the
   general pair, which gives the same answer or error), or -1 with an
   exception set (cannot happen for ints). */
int
dfb_ix_dtype_plain(PyObject *t, dfb_format *out);

/* dfb_ix_dtype_plain through st->ix_dtype_memo: the very tuple read last
   time (held, so its items, immutable, are the ones read) is answered from
   the memo; a new plain tuple replaces it.  Same returns. */
int
dfb_ix_dtype_plain_memo(dfb_state *st, PyObject *t, dfb_format *out);

/* The NumPy type number of numeric kind `kind` ('b', 'i', 'u', 'f', 'c')
   with `nbytes`-byte items, or -1 for a kind or size NumPy has no plain
   type for.  Cannot fail. */
int
dfb_numeric_typenum(char kind, int nbytes);

/* Returns a new reference to the NumPy dtype named by `typestr` ("<i8",
   "M8[us]", ...), or NULL with TypeError / ValueError / MemoryError set
   (NumPy's SyntaxError for "i4,," becomes TypeError). */
PyArray_Descr *
dfb_descr_from_typestr(const char *typestr);

/* Parses a dtype argument: None -> `dflt` (a new reference), an
   interchange dtype tuple (kind, bits, format, endianness), or anything
   numpy.dtype() accepts.  Returns a new reference, or NULL with TypeError /
   ValueError set (object and other reference-holding dtypes refused). */
PyArray_Descr *
dfb_parse_dtype(PyObject *obj, PyArray_Descr *dflt);

/* Returns 0 if `d` is a dtype a Buffer may carry, else -1 with TypeError
   (reference-holding, structured, string or flexible dtypes). */
int
dfb_buffer_check_dtype(PyArray_Descr *d);

/* 1 if `kind` (a dtype's kind character) is one a Buffer may carry: bool,
   int, uint, float, complex, timedelta64, datetime64; else 0. */
static inline int
dfb_buffer_kind_ok(char kind)
{
    switch (kind) {
        case 'b':
        case 'i':
        case 'u':
        case 'f':
        case 'c':
        case 'm':
        case 'M':
            return 1;
        default:
            return 0;
    }
}

/* 1 if `d` holds no references, no fields, no subarray and has a positive
   itemsize; else 0.  No exception. */
static inline int
dfb_buffer_layout_ok(PyArray_Descr *d)
{
    return !(PyDataType_FLAGCHK(d, NPY_ITEM_REFCOUNT) ||
             PyDataType_HASFIELDS(d) || PyDataType_HASSUBARRAY(d) ||
             PyDataType_ELSIZE(d) <= 0);
}

/* 1 if `d` is a dtype a Buffer may carry (dfb_buffer_check_dtype would
   return 0), else 0.  No exception. */
static inline int
dfb_buffer_dtype_ok(PyArray_Descr *d)
{
    return dfb_buffer_kind_ok(d->kind) && dfb_buffer_layout_ok(d);
}

#endif /* DFBUFFER_DTYPE_H */
