/* dfbuffer: what the Arrow files (arrow_*.c) share: the import's types and
 * the functions of arrow_common.c, arrow_import.c and arrow_describe.c.
 * Internal to the Arrow files.
 */
#ifndef DFBUFFER_ARROW_INTERNAL_H
#define DFBUFFER_ARROW_INTERNAL_H

#include "dfbuffer/common.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/convert.h"
#include "bitmap.h"

/* A growable array of strong references (the Buffers and arrays a
   conversion made). */
typedef struct {
    PyObject **items;
    Py_ssize_t n, cap;
} ref_list;

/* One import: its schema and the holder capsules of its chunks. */
typedef struct {
    struct ArrowSchema schema;  /* moved in; released by
                                   dfb_arrow_import_clear */
    Py_ssize_t n, cap;          /* number of chunks (top-level arrays) */
    PyObject **holders;         /* strong: holder capsules */
    struct ArrowArray **arrays; /* arrays[i] lives in holders[i] */
    DLDevice device;            /* of the chunks (device producers) */
    int accept_device;          /* set by callers that handle non-CPU data
                                   (else dfb_arrow_import_producer
                                   refuses it) */
} arrow_import;

/* One column chunk: a schema + array, with the element range it covers. */
typedef struct {
    const struct ArrowSchema *schema;
    const struct ArrowArray *array;
    int64_t offset; /* elements, into every buffer of `array` */
    int64_t length;
    PyObject *holder; /* borrowed: the capsule owning the top array */
} arrow_node;

/* The `decode_views` modes of dfb_arrow_describe_node. */
#define DFB_VIEWS_COPY 1
#define DFB_VIEWS_KEEP 2

/* Returns bit `i` (LSB first) of `bits`. */
static inline int
dfb_arrow_get_bit(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

/* Returns a+b in *out and 0, or -1 (no exception) on overflow or when
   either is negative. */
int
dfb_arrow_add_nonneg(int64_t a, int64_t b, int64_t *out);

/* Returns a*b in *out and 0, or -1 (no exception) on overflow. */
int
dfb_arrow_mul_nonneg(int64_t a, int64_t b, int64_t *out);

/* Appends `o` (stolen, may not be NULL).  Returns 0, or -1 with MemoryError
   (`o` is released). */
int
dfb_arrow_refs_add(ref_list *r, PyObject *o);

/* Drops every reference and frees the storage.  Cannot fail. */
void
dfb_arrow_refs_clear(ref_list *r);

/* Number of buffers a format has (string view: at least this many), or -1
   for formats without a fixed count here. */
int64_t
dfb_arrow_expected_buffers(const dfb_format *f);

/* Checks, before any buffer of the node is read, that every buffer size the
   node implies (validity bitmap, values, offsets, views, and those of its
   dictionary) is computable without overflow and that no buffer would wrap
   the address space.  Only that: other malformations are left to
   dfb_arrow_describe_node, which reports them before it reads anything.
   Returns 1 when the sizes were verified, 0 when the node has no buffers or
   cannot be checked here (unsupported format, bad buffer list), or -1 with
   ValueError set. */
int
dfb_arrow_check_node_sizes(const struct ArrowSchema *s,
                           const struct ArrowArray *a, int64_t offset,
                           int64_t length, const char *name, int depth);

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

/* Validates the top-level struct schema and arrays of a table import.
   Returns 0, or -1 with ValueError / NotImplementedError set. */
int
dfb_arrow_validate_table(const arrow_import *imp);

/* Fills `nd` for column `c` of chunk `b` (the top array itself when not a
   table).  Returns 0, or -1 with ValueError (overflowing offsets). */
int
dfb_arrow_import_node(const arrow_import *imp, int is_table, Py_ssize_t b,
                      int64_t c, arrow_node *nd);

/* Releases everything `imp` holds (arrays live on in any Buffer made over
   them).  Cannot fail. */
void
dfb_arrow_import_clear(arrow_import *imp);

/* Returns 1 if `bytes` bytes from `p` would wrap the address space. */
int
dfb_arrow_wraps(const void *p, int64_t bytes);

/* Appends a new holder.  Returns its (released) array to be filled, or
   NULL with MemoryError. */
struct ArrowArray *
dfb_arrow_import_add(arrow_import *imp);

/* Moves every chunk of `stream` (a live stream moved in by the caller; the
   schema and chunks go into `imp`, zeroed by the caller) and releases the
   stream.  Returns 0, or -1 with an exception set (clear `imp` either
   way). */
int
dfb_arrow_import_stream_struct(struct ArrowArrayStream *stream,
                               arrow_import *imp);

/* Fills `col` (and `dict` for dictionary-encoded chunks; may be NULL only
   where dictionaries are not allowed) from one validated chunk.  Buffers
   made over Arrow memory are owned by the node's holder.  String views
   are kept as views when `decode_views` is DFB_VIEWS_KEEP (the converters
   read them), copied to large-utf8 in new NumPy arrays when it is
   DFB_VIEWS_COPY, refused with RuntimeError when 0.
   Everything made is kept in `refs`.  Returns 0, or -1 with ValueError
   (malformed), NotImplementedError (unsupported format) or RuntimeError
   set.  `name` names the column in messages. */
int
dfb_arrow_describe_node(dfb_state *st, const arrow_node *nd, dfb_column *col,
                        dfb_column *dict, ref_list *refs, int decode_views,
                        const char *name);

/* Returns the name of column `c` of the import (UTF-8, never NULL). */
const char *
dfb_arrow_column_name(const arrow_import *imp, int is_table, int64_t c);

/* arrow_common.c: checks the children list of struct schema `s` (a table's
   top level) as both imports (CPU and device) need it: n_children >= 0, a
   list when > 0, every child with a format.  Returns 0, or -1 with
   ValueError. */
int
dfb_arrow_check_struct_schema(const struct ArrowSchema *s);

/* arrow_common.c: checks that struct array `a` has the children of its
   schema `s` (same count, a list when > 0).  Returns 0, or -1 with
   ValueError. */
int
dfb_arrow_check_struct_children(const struct ArrowSchema *s,
                                const struct ArrowArray *a);

/* arrow_common.c: checks that `res`, the result of `method`
   (__arrow_c_array__ or __arrow_c_device_array__), is a 2-tuple (schema
   capsule, `second`).  Returns 0, or -1 with TypeError. */
int
dfb_arrow_check_pair(PyObject *res, const char *method, const char *second);

/* arrow_export.c: checks a consumer's `requested_schema` (Py_None: none
   asked) against the format `fmt` a Buffer exports as.  Returns 0, or -1
   with TypeError / ValueError (not a live "arrow_schema" capsule) or
   NotImplementedError (another type) set. */
int
dfb_arrow_check_requested(PyObject *requested, const char *fmt);

/* arrow_export.c: fills `a` as the export of 1-D contiguous primitive
   Buffer `self` (no validity, its data as the values buffer), holding a
   strong reference to `self` that a->release drops on any thread
   (dfb_decref_any_thread).  Returns 0, or -1 with MemoryError (`a`
   untouched). */
int
dfb_arrow_export_fill(PyObject *self, struct ArrowArray *a);

#endif /* DFBUFFER_ARROW_INTERNAL_H */
