/* dfbuffer: the _IxChunk helpers of ixview_chunk.c, shared by ixview.c and
 * ixview_join.c: the chunk's fields, its layouts and its re-based buffers.
 */
#ifndef DFBUFFER_IXVIEW_CHUNK_H
#define DFBUFFER_IXVIEW_CHUNK_H

#include "common.h"
#include "buffer.h"
#include "format.h"

/* The fields of an _IxChunk, in order. */
enum {
    C_LENGTH,
    C_OFFSET,
    C_NULL_COUNT,
    C_VALIDITY,
    C_OFFSETS,
    C_DATA,
    C_DICTIONARY,
    C_ERROR,
    C_FORMAT,
    C_N
};

/* How the buffers of a format are laid out. */
typedef enum {
    L_NONE = 0, /* no re-based buffers (null type) */
    L_BITS,     /* bit-packed data (bool) */
    L_STRINGS,  /* offsets (width 4 or 8) + bytes */
    L_FIXED     /* `width` bytes per element */
} layout_kind;

typedef struct {
    layout_kind kind;
    int width;
    dfb_format f;
} layout;

/* One _IxChunk read back (borrowed references). */
typedef struct {
    int64_t length, offset, null_count;   /* null_count -1: unknown */
    DfbBuffer *validity, *offsets, *data; /* NULL when None */
    PyObject *dictionary;                 /* _IxChunk or NULL */
    PyObject *error;                      /* exception or NULL */
    PyObject *format;                     /* str */
    const char *fmt;                      /* its UTF-8 */
} ixchunk;

/* The re-based buffers of one chunk (new references; Py_None when
   absent). */
typedef struct {
    int64_t offset;
    PyObject *validity, *offsets, *data;
} rebased;

/* Returns 1 when there is no Buffer `b` or the host can read its memory
   (core's predicate), else 0. */
int
dfb_ixv_on_host(const DfbBuffer *b);

/* Fills `lay` for Arrow format `fmt` from the type table.  Returns 0, or
   -1 with ValueError for a format without a layout here. */
int
dfb_ixv_layout_of(const char *fmt, layout *lay);

/* Reads _IxChunk `o` back into `c` (borrowed references).  Returns 0, or
   -1 with TypeError / ValueError set. */
int
dfb_ixv_read_chunk(dfb_state *st, PyObject *o, ixchunk *c);

/* Raises a fresh copy of a chunk's recorded exception `err` (borrowed).
   Always returns -1. */
int
dfb_ixv_raise_error(PyObject *err);

/* Returns a new uint8 NumPy array of max(nbytes, 1) zeroed bytes (its data
   in *out), or NULL with MemoryError. */
PyObject *
dfb_ixv_new_bytes(int64_t nbytes, uint8_t **out);

/* Returns a new read-only host Buffer of `descr` (borrowed; NULL: uint8)
   over the first `size` bytes of NumPy array `arr` (stolen), or NULL with
   an exception set. */
PyObject *
dfb_ixv_buffer_over(dfb_state *st, PyObject *arr, int64_t size,
                    PyArray_Descr *descr);

/* Copies `length` bits from bit `src_offset` of `src` to bit `dst_offset`
   of `dst`, without the GIL when there are many.  Cannot fail. */
void
dfb_ixv_copy_bits(const uint8_t *src, int64_t src_offset, int64_t length,
                  uint8_t *dst, int64_t dst_offset);

/* Checks that bitmap Buffer `b` holds bits [0, end).  Returns 0, or -1
   with ValueError. */
int
dfb_ixv_check_bits(const DfbBuffer *b, int64_t end);

/* Releases the references of `r`.  Cannot fail. */
void
dfb_ixv_rebased_clear(rebased *r);

/* Re-bases the buffers of chunk `c` for elements [off, off + n) into `r`
   (see ixview_chunk.c).  Returns 0, or -1 with an exception set (`r`
   cleared). */
int
dfb_ixv_rebase(dfb_state *st, const ixchunk *c, const DfbBuffer *validity,
               int64_t off, int64_t n, int allow_copy, rebased *r);

/* Returns a new _IxChunk of the given fields (every PyObject stolen; NULL
   means an error is set), or NULL with an exception set. */
PyObject *
dfb_ixv_make_chunk(dfb_state *st, int64_t length, int64_t offset,
                   PyObject *nulls, PyObject *validity, PyObject *offsets,
                   PyObject *data, PyObject *dictionary, PyObject *error,
                   PyObject *format);

/* Returns a new _IxChunk of `length` elements that raises `error`
   (borrowed) when used, of format `format` (borrowed), or NULL. */
PyObject *
dfb_ixv_error_chunk(dfb_state *st, int64_t length, PyObject *error,
                    PyObject *format);

#endif /* DFBUFFER_IXVIEW_CHUNK_H */
