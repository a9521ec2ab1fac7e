/* dfbuffer: the types every Arrow file shares: an import (arrow_import),
 * its nodes (arrow_node), reference lists and the describer's callbacks
 * (the validation of the imported structs is core's, arrow_check.h).
 */
#ifndef DFBUFFER_ARROW_INTERNAL_H
#define DFBUFFER_ARROW_INTERNAL_H

#include "common.h"
#include "arrow.h"
#include "column.h"
#include "bitmap.h"
#include "arrow_check.h"

/* A growable array of strong references (the Buffers and arrays a
   conversion made). */
typedef struct {
    PyObject **items;
    Py_ssize_t n, cap;
} ref_list;

struct arrow_import;

/* Called by a stream walk after each chunk is moved into `imp` (imp->n >=
   1; a table's chunk checked against the schema's structure, its buffers
   not yet): returns 0 to read on, or -1 with an exception set (the walk
   stops and releases the stream).  It may take the chunks read so far
   (dfb_arrow_import_drop_chunks). */
typedef int (*dfb_arrow_chunk_fn)(struct arrow_import *imp, void *ctx);

/* One import: its schema and the holders of its chunks.  The
   first chunk's slots are inline (`holders` and `arrays` then point into
   the struct itself): an import is never copied or moved once a chunk is
   added. */
typedef struct arrow_import {
    struct ArrowSchema schema;   /* moved in; released by
                                    dfb_arrow_import_clear */
    Py_ssize_t n, cap;           /* number of chunks (top-level arrays) */
    PyObject **holders;          /* strong: holders (arrow_import.c) */
    struct ArrowArray **arrays;  /* arrays[i] lives in holders[i] */
    DLDevice device;             /* of the chunks (device producers; the
                                    zeroed {0, 0} of an import filled by
                                    hand is the CPU too) */
    int accept_device;           /* set by callers that handle non-CPU data
                                    (else dfb_arrow_import_producer
                                    refuses it) */
    dfb_state *st;               /* set by the caller: the module state
                                    whose holder type holds the chunks */
    PyObject *holder1;           /* the inline slots of the first chunk */
    struct ArrowArray *array1;   /* (see above) */
    dfb_arrow_chunk_fn on_chunk; /* set by the caller, or NULL: asked after
                                    each chunk of a stream */
    void *chunk_ctx;             /* on_chunk's */
    Py_ssize_t nread;            /* chunks of a stream moved in so far,
                                    dropped ones too */
} arrow_import;

/* One column chunk: a schema + array, with the element range it covers. */
typedef struct {
    const struct ArrowSchema *schema;
    const struct ArrowArray *array;
    int64_t offset; /* elements, into every buffer of `array` */
    int64_t length;
    PyObject *holder; /* borrowed: the capsule owning the top array */
    DLDevice device;  /* of its memory: read only when kDLCPU */
} arrow_node;

/* Returns 1 if the chunks of `imp` are host memory dfbuffer may read. */
static inline int
dfb_arrow_import_on_cpu(const arrow_import *imp)
{
    return imp->device.device_type == kDLCPU || imp->device.device_type == 0;
}

/* The `decode_views` modes of dfb_arrow_describe_node. */
#define DFB_VIEWS_COPY 1
#define DFB_VIEWS_KEEP 2

/* Returns bit `i` (LSB first) of `bits`. */
static inline int
dfb_arrow_get_bit(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

/* Asked with a stream's schema before its chunks are read: returns 1 to
   read them, 0 to stop (nothing read), or -1 with an exception set. */
typedef int (*dfb_arrow_accept_fn)(const struct ArrowSchema *schema,
                                   void *ctx);

/* The signature of dfb_arrow_describe_node, for the describers of nodes
   with children that it calls back (no file cycle). */
typedef int (*dfb_arrow_describe_fn)(dfb_state *st, const arrow_node *nd,
                                     dfb_column *col, dfb_column *dict,
                                     PyObject **dict_error, ref_list *refs,
                                     int decode_views, const char *name);

#endif /* DFBUFFER_ARROW_INTERNAL_H */
