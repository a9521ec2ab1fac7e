/* dfbuffer: what the Arrow files (arrow_*.c) share: the import's types and
 * the functions of arrow_common.c, arrow_import.c and arrow_describe.c
 * (the validation of the imported structs is core's, arrow_check.h).
 * Internal to the Arrow files.
 */
#ifndef DFBUFFER_ARROW_INTERNAL_H
#define DFBUFFER_ARROW_INTERNAL_H

#include "common.h"
#include "args.h"
#include "arrow.h"
#include "convert.h"
#include "bitmap.h"
#include "arrow_check.h"

/* A growable array of strong references (the Buffers and arrays a
   conversion made). */
typedef struct {
    PyObject **items;
    Py_ssize_t n, cap;
} ref_list;

/* One import: its schema and the holder capsules of its chunks.  The
   first chunk's slots are inline (`holders` and `arrays` then point into
   the struct itself): an import is never copied or moved once a chunk is
   added. */
typedef struct {
    struct ArrowSchema schema;  /* moved in; released by
                                   dfb_arrow_import_clear */
    Py_ssize_t n, cap;          /* number of chunks (top-level arrays) */
    PyObject **holders;         /* strong: holder capsules */
    struct ArrowArray **arrays; /* arrays[i] lives in holders[i] */
    DLDevice device;            /* of the chunks (device producers; the
                                   zeroed {0, 0} of an import filled by
                                   hand is the CPU too) */
    int accept_device;          /* set by callers that handle non-CPU data
                                   (else dfb_arrow_import_producer
                                   refuses it) */
    PyObject *holder1;          /* the inline slots of the first chunk */
    struct ArrowArray *array1;  /* (see above) */
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

/* Appends `o` (stolen, may not be NULL).  Returns 0, or -1 with MemoryError
   (`o` is released). */
int
dfb_arrow_refs_add(ref_list *r, PyObject *o);

/* Drops every reference and frees the storage.  Cannot fail. */
void
dfb_arrow_refs_clear(ref_list *r);

/* arrow_common.c: returns the pointer of capsule `cap` named `name`, or
   NULL with TypeError (not a capsule, or another name).  `what` names the
   source in the message. */
void *
dfb_arrow_capsule_pointer(PyObject *cap, const char *name, const char *what);

/* Imports `obj` (preferring __arrow_c_array__, else __arrow_c_stream__)
   into `imp` (zeroed by the caller; clear it with import_clear even on
   failure).  Returns 0 with a schema that has a format, or -1 with
   TypeError when obj is no producer, ValueError when the schema has no
   format, or the import's own error. */
int
dfb_arrow_import_producer(dfb_state *st, PyObject *obj, arrow_import *imp);

/* Returns 1 if the import's top level is a struct ("+s"): a table whose
   children are the columns. */
int
dfb_arrow_import_is_table(const arrow_import *imp);

/* Fills `nd` for column `c` of chunk `b` (the top array itself when not a
   table).  Returns 0, or -1 with ValueError (overflowing offsets). */
int
dfb_arrow_import_node(const arrow_import *imp, int is_table, Py_ssize_t b,
                      int64_t c, arrow_node *nd);

/* Releases everything `imp` holds (arrays live on in any Buffer made over
   them).  Cannot fail. */
void
dfb_arrow_import_clear(arrow_import *imp);

/* Appends a new holder.  Returns its (released) array to be filled, or
   NULL with MemoryError. */
struct ArrowArray *
dfb_arrow_import_add(arrow_import *imp);

/* Asked with a stream's schema before its chunks are read: returns 1 to
   read them, 0 to stop (nothing read), or -1 with an exception set. */
typedef int (*dfb_arrow_accept_fn)(const struct ArrowSchema *schema,
                                   void *ctx);

/* Moves the stream out of capsule `cap` (a new reference, released here;
   NULL: the __arrow_c_stream__ call failed) into `imp` (zeroed by the
   caller; clear it either way): its schema and, unless `accept` (NULL:
   always read) declines the schema, every chunk; the stream is released.
   Returns 0, 1 (declined), or -1 with an exception set. */
int
dfb_arrow_import_stream_capsule(PyObject *cap, arrow_import *imp,
                                dfb_arrow_accept_fn accept, void *ctx);

/* Moves every chunk of `stream` (a live stream moved in by the caller; the
   schema and chunks go into `imp`, zeroed by the caller) and releases the
   stream.  Returns 0, or -1 with an exception set (clear `imp` either
   way). */
int
dfb_arrow_import_stream_struct(struct ArrowArrayStream *stream,
                               arrow_import *imp);

/* Fills `col` (and `dict` for dictionary-encoded chunks; may be NULL only
   where dictionaries are not allowed) from one chunk, after checking it
   (dfb_arrow_check_node).  Buffers made over Arrow memory are on the
   node's device and owned by its holder.  String views are kept as views
   when `decode_views` is DFB_VIEWS_KEEP (the converters read them), copied
   to large-utf8 in new NumPy arrays when it is DFB_VIEWS_COPY, refused
   with RuntimeError when 0.  Memory not on the CPU is never read: its
   null count is the producer's for a whole array, else -1 (unknown, the
   validity kept), and variable-width data raises NotImplementedError;
   there, when `dict_error` is non-NULL, a dictionary that cannot be
   described does not fail the codes: *dict_error gets its exception (a
   new reference; else NULL) and `dict` only its length.  Everything made
   is kept in `refs`.  Returns 0, or -1 with ValueError (malformed),
   NotImplementedError (unsupported format) or RuntimeError set.  `name`
   names the column in messages. */
int
dfb_arrow_describe_node(dfb_state *st, const arrow_node *nd, dfb_column *col,
                        dfb_column *dict, PyObject **dict_error,
                        ref_list *refs, int decode_views, const char *name);

/* convert_extension.c: applies the canonical extension type of schema `s`
   (identified by the type table, dfb_metadata_extension) to the described
   `col`: arrow.bool8 (int8 storage) becomes a bool view, arrow.uuid
   (16-byte fixed-size binary) uuid.UUID objects; other extensions keep
   their storage type's result.  Returns 0, or -1 with ValueError for
   malformed metadata (`name` names the column). */
int
dfb_arrow_apply_extension(const struct ArrowSchema *s, dfb_column *col,
                          const char *name);

/* The signature of dfb_arrow_describe_node, for the describers of nodes
   with children that it calls back (no file cycle). */
typedef int (*dfb_arrow_describe_fn)(dfb_state *st, const arrow_node *nd,
                                     dfb_column *col, dfb_column *dict,
                                     PyObject **dict_error, ref_list *refs,
                                     int decode_views, const char *name);

/* convert_run_end.c: describes the run-end encoded ("+r") node `nd` into
   `col` as a categorical of new int64 codes (the run of each row, decoded
   by core's run-ends reader) into its values child, described into `dict`
   by `describe` (dfb_arrow_describe_node).  Returns 0, or -1 with
   ValueError (bad run ends or children), NotImplementedError (`dict` NULL)
   or the values' description error. */
int
dfb_arrow_describe_run_end(dfb_state *st, const arrow_node *nd,
                           dfb_column *col, dfb_column *dict, ref_list *refs,
                           int decode_views, const char *name,
                           dfb_arrow_describe_fn describe);

/* arrow_describe.c: returns a new reference to the NumPy dtype of a
   fixed-width format's stored values (bitmaps and bytes: uint8), or NULL
   with an exception. */
PyArray_Descr *
dfb_arrow_stored_descr(const dfb_format *f);

/* Validates the top-level struct schema and arrays of a table import
   (dfb_arrow_check_table; the struct's bitmap is counted only on the
   CPU).  Returns 0, or -1 with ValueError / NotImplementedError set. */
int
dfb_arrow_validate_table(const arrow_import *imp);

/* Raises core's error `rc` (not DFB_OK) with the message in `err`:
   NotImplementedError for DFB_ENOTSUP, else ValueError.  Always returns
   -1. */
int
dfb_arrow_raise(dfb_code rc, const dfb_error *err);

/* Returns the name of column `c` of the import (UTF-8, never NULL). */
const char *
dfb_arrow_column_name(const arrow_import *imp, int is_table, int64_t c);

/* arrow_export.c: checks a consumer's `requested_schema` (Py_None: none
   asked) against the format `fmt` a Buffer exports as.  Returns 0, or -1
   with TypeError / ValueError (not a live "arrow_schema" capsule) or
   NotImplementedError (another type) set. */
int
dfb_arrow_check_requested(PyObject *requested, const char *fmt);

/* arrow_export.c: capsule destructor of the "arrow_schema" capsules we
   make (the struct malloc'd): releases the schema unless a consumer moved
   it out, then frees the struct.  Cannot fail. */
void
dfb_arrow_schema_capsule_free(PyObject *cap);

/* arrow_export.c: the same for our "arrow_array" capsules. */
void
dfb_arrow_array_capsule_free(PyObject *cap);

/* arrow_export.c: the same for our "arrow_array_stream" capsules. */
void
dfb_arrow_stream_capsule_free(PyObject *cap);

/* arrow_export.c: fills `a` as the export of 1-D contiguous primitive
   Buffer `self` (no validity, its data as the values buffer), holding a
   strong reference to `self` that a->release drops on any thread
   (dfb_decref_any_thread).  Returns 0, or -1 with MemoryError (`a`
   untouched). */
int
dfb_arrow_export_fill(PyObject *self, struct ArrowArray *a);

/* arrow_interchange.c: one Arrow import described for to_interchange,
   what _arrow_import and ixview.c's _ixview_import both build from. */
typedef struct {
    arrow_import imp;
    ref_list refs;  /* everything the descriptions made */
    uint8_t *skip;  /* skip[c]: column c is pandas' index, left out */
    int is_table;   /* top level "+s": the children are the columns */
    int64_t ncols;  /* columns of the schema */
    int64_t nkept;  /* of them not skipped */
    int allow_copy; /* string views decoded (else refused) */
} dfb_arrow_ix;

/* One chunk of one column of a dfb_arrow_ix. */
typedef struct {
    int64_t length;
    dfb_column col, dict; /* when error is NULL; dict for dictionaries */
    PyObject *error;      /* strong: the exception to raise on use */
    PyObject *dict_error; /* strong: the same for the dictionary only */
} dfb_arrow_ix_chunk;

/* arrow_interchange.c: imports `obj` into `x` (accepting device data),
   validates a table and finds pandas' index columns.  Returns 0, or -1
   with an exception set; close `x` either way. */
int
dfb_arrow_ix_open(dfb_state *st, PyObject *obj, int allow_copy,
                  dfb_arrow_ix *x);

/* arrow_interchange.c: the arguments (obj, allow_copy=True) of module
   function `module`.<spec's name> parsed (spec: its dfb_argspec, from
   args.h) and `obj` opened into `x` as dfb_arrow_ix_open does (allow_copy
   in x->allow_copy; *st set).  Returns 0, or -1 with an exception set;
   close `x` either way. */
int
dfb_arrow_ix_open_args(PyObject *module, const dfb_argspec *spec,
                       PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, dfb_state **st, dfb_arrow_ix *x);

/* arrow_interchange.c: returns the schema of column `c` (borrowed). */
const struct ArrowSchema *
dfb_arrow_ix_schema(const dfb_arrow_ix *x, int64_t c);

/* arrow_interchange.c: returns the format string (new reference) a column
   of schema `s` is presented under: "U" for string views when `decode`,
   else its own; NULL with an exception set. */
PyObject *
dfb_arrow_ix_format(const struct ArrowSchema *s, int decode);

/* Makes one item of dfb_arrow_ix_rows from chunk `ch` (borrowed; its
   dict_error too) of kept column `k`: a new reference, or NULL with an
   exception set. */
typedef PyObject *(*dfb_arrow_ix_make_fn)(void *ctx,
                                          const dfb_arrow_ix_chunk *ch,
                                          Py_ssize_t k);

/* arrow_interchange.c: describes every chunk of every kept column of `x`
   (a column that cannot be described here, NotImplementedError or
   RuntimeError, gets ch->error instead) and returns a new list (one per
   chunk) of lists (one per kept column) of what `make(ctx, ...)` made
   of them, or NULL with an exception set. */
PyObject *
dfb_arrow_ix_rows(dfb_state *st, dfb_arrow_ix *x, dfb_arrow_ix_make_fn make,
                  void *ctx);

/* arrow_interchange.c: releases everything `x` holds (Buffers made over
   its memory keep it alive).  Cannot fail. */
void
dfb_arrow_ix_close(dfb_arrow_ix *x);

#endif /* DFBUFFER_ARROW_INTERNAL_H */
