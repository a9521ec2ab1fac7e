/* dfbuffer: the interface of outward/: dfbuffer's Arrow going out: to_arrow's
 * node-for-node pass-through and table export, and to_interchange's typed
 * interchange view of an Arrow import.
 */
#ifndef DFBUFFER_OUTWARD_H
#define DFBUFFER_OUTWARD_H

#include "common.h"
#include "args.h"
#include "arrow.h"
#include "model.h"
#include "format.h"

/* ---- arrow_interchange.c ---- */

/* One Arrow import described for to_interchange,
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

/* Makes one item of dfb_arrow_ix_rows from chunk `ch` (borrowed; its
   dict_error too) of kept column `k`: a new reference, or NULL with an
   exception set. */
typedef PyObject *(*dfb_arrow_ix_make_fn)(void *ctx,
                                          const dfb_arrow_ix_chunk *ch,
                                          Py_ssize_t k);

/* Module-level function of arrow_interchange.c (_arrow_import, the private
   helper of dfbuffer.to_interchange), added by module init. */
extern PyMethodDef dfb_arrow_interchange_methods[];

/* imports `obj` into `x` (accepting device data),
   validates a table and finds pandas' index columns.  Returns 0, or -1
   with an exception set; close `x` either way. */
int
dfb_arrow_ix_open(dfb_state *st, PyObject *obj, int allow_copy,
                  dfb_arrow_ix *x);

/* the arguments (obj, allow_copy=True) of module
   function `module`.<spec's name> parsed (spec: its dfb_argspec, from
   args.h) and `obj` opened into `x` as dfb_arrow_ix_open does (allow_copy
   in x->allow_copy; *st set).  Returns 0, or -1 with an exception set;
   close `x` either way. */
int
dfb_arrow_ix_open_args(PyObject *module, const dfb_argspec *spec,
                       PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, dfb_state **st, dfb_arrow_ix *x);

/* returns the schema of column `c` (borrowed). */
const struct ArrowSchema *
dfb_arrow_ix_schema(const dfb_arrow_ix *x, int64_t c);

/* returns the format string (new reference) a column
   of schema `s` is presented under: "U" for string views when `decode`,
   else its own; NULL with an exception set. */
PyObject *
dfb_arrow_ix_format(const struct ArrowSchema *s, int decode);

/* describes every chunk of every kept column of `x`
   (a column that cannot be described here, NotImplementedError or
   RuntimeError, gets ch->error instead) and returns a new list (one per
   chunk) of lists (one per kept column) of what `make(ctx, ...)` made
   of them, or NULL with an exception set. */
PyObject *
dfb_arrow_ix_rows(dfb_state *st, dfb_arrow_ix *x, dfb_arrow_ix_make_fn make,
                  void *ctx);

/* releases everything `x` holds (Buffers made over
   its memory keep it alive).  Cannot fail. */
void
dfb_arrow_ix_close(dfb_arrow_ix *x);

/* ---- arrow_passthrough.c ---- */

/* _arrow_nodes(obj): imports Arrow producer `obj` once and returns
   (fields, batches) in _arrow_table_stream's form, each field carrying a
   schema capsule and each chunk an array node (see arrow_passthrough.c).
   Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_arrow_nodes_py(PyObject *module, PyObject *obj);

/* _arrow_column_nodes(obj): as _arrow_nodes, the producer read as one
   column (a struct array, or a record batch, is one struct column: a
   mapping's value).  Returns a new reference, or NULL with an exception
   set. */
PyObject *
dfb_arrow_column_nodes_py(PyObject *module, PyObject *obj);

/* Returns 1 if `o` is a field's schema capsule made by _arrow_nodes, else
   0.  Cannot fail. */
int
dfb_arrow_is_schema_node(PyObject *o);

/* The spec of dfbuffer._arrow_array_node, a chunk's GC-tracked array node
   (module.c makes the type into st->array_node_type). */
extern PyType_Spec dfb_array_node_spec;

/* Returns 1 if `o` is a chunk's array node made by _arrow_nodes, else 0.
   Cannot fail. */
int
dfb_arrow_is_array_node(dfb_state *st, PyObject *o);

/* Fills `dst` (uninitialised) with a deep copy of `src` (metadata
   included) named `name` (NULL: src's own), `depth` levels below the top
   (0 for a caller).  Returns 0, or -1 with *why the ValueError message
   (NULL: out of memory; `dst` released-marked).  Runs no Python. */
int
dfb_arrow_schema_copy(const struct ArrowSchema *src, const char *name,
                      struct ArrowSchema *dst, int depth, const char **why);

/* Fills `dst` (uninitialised) with a deep copy (metadata included) of the
   schema in capsule `cap` (dfb_arrow_is_schema_node), named `name`.
   Returns 0, or -1 with an exception set (`dst` released-marked). */
int
dfb_arrow_node_schema(PyObject *cap, const char *name,
                      struct ArrowSchema *dst);

/* Fills `a` (uninitialised) over the array in array node `node`
   (dfb_arrow_is_array_node) with the top level's length, null count and
   offset replaced by the arguments: every node a copy of the producer's
   node whose buffers are the producer's own pointers, each holding a
   strong reference to `owner` (which must keep `node` alive) that its
   release callback drops on any thread.  Returns 0, or -1 with an
   exception set (ValueError for rows outside the node; `a`
   released-marked). */
int
dfb_arrow_node_array(PyObject *node, int64_t length, int64_t null_count,
                     int64_t offset, PyObject *owner, struct ArrowArray *a);

/* Fills `dst` (uninitialised) with a copy of producer array `src` and
   every node below it (children, dictionaries): the buffer pointers are
   the producer's, each node holds a strong reference to `owner` (which
   must keep `src` alive) that its release drops on any thread.  Returns
   0, or -1 with an exception set (`dst` released-marked). */
int
dfb_arrow_array_copy(const struct ArrowArray *src, PyObject *owner,
                     struct ArrowArray *dst);

/* ---- arrow_table_export.c ---- */

/* _arrow_table_schema and _arrow_table_stream, the
   Arrow structs of dfbuffer.to_arrow. */
extern PyMethodDef dfb_arrow_table_export_methods[];

/* Returns a new "arrow_array_stream" capsule over `schema` (moved in, also
   on failure) and `n` arrays built now by fill(ctx, i, out) (0, or -1 with
   an exception set), or NULL with an exception set. */
PyObject *
dfb_arrow_built_stream(struct ArrowSchema *schema, Py_ssize_t n,
                       int (*fill)(void *ctx, Py_ssize_t i,
                                   struct ArrowArray *out),
                       void *ctx);

/* ---- ixview.c ---- */

/* Creates the IxField / IxChunk struct sequence types in `st` (added to
   module `m` as _IxField / _IxChunk) and adds ixview.c's module functions
   (_ixview_import, _ixview_slice, _ixview_concat, _ixview_values).
   Returns 0, or -1 with an exception set.  Called once by module init. */
int
dfb_ixview_state_init(PyObject *m, dfb_state *st);

/* ---- ixview_chunk.c ---- */

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

/* ---- ixview_join.c ---- */

/* _ixview_slice and _ixview_concat, added by
   dfb_ixview_state_init. */
extern PyMethodDef dfb_ixview_join_methods[];

#endif /* DFBUFFER_OUTWARD_H */
