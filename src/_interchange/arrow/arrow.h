/* dfbuffer: the interface of arrow/: the Arrow C data, device and stream
 * interfaces (structs declared from the specification) and the PyCapsule
 * interface: import, describe, devices, schemas, Buffer's own export, nodes,
 * run-end and extension types.
 */
#ifndef DFBUFFER_ARROW_H
#define DFBUFFER_ARROW_H

#include "common.h"
#include "dfbuffer/dfbuffer.h"
#include "model.h"
#include "bitmap.h"
#include "arrow_check.h"

#include <stddef.h>

/* ---- the Arrow C data interface (structs declared from the spec) and the
 * PyCapsule interface, both ways. ---- */

/* The Arrow C data and C stream interface structs: declared once, in the
   public C API header (under the spec's standard guards). */

/* The Arrow C device data interface (declared from its specification): an
   ArrowArray whose buffers live on a device, and a stream of them.  The
   device type values are DLPack's DLDeviceType values. */
#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16

struct ArrowDeviceArray {
    struct ArrowArray array; /* its release releases everything, the
                                sync_event included */
    int64_t device_id;
    ArrowDeviceType device_type;
    void *sync_event;    /* NULL, or an event to wait on before any access */
    int64_t reserved[3]; /* zero */
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

#ifndef ARROW_C_DEVICE_STREAM_INTERFACE
#define ARROW_C_DEVICE_STREAM_INTERFACE

struct ArrowDeviceArrayStream {
    ArrowDeviceType device_type; /* of every array it gives */
    int (*get_schema)(struct ArrowDeviceArrayStream *,
                      struct ArrowSchema *out);
    int (*get_next)(struct ArrowDeviceArrayStream *,
                    struct ArrowDeviceArray *out);
    const char *(*get_last_error)(struct ArrowDeviceArrayStream *);
    void (*release)(struct ArrowDeviceArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_DEVICE_STREAM_INTERFACE */

/* ---- the types every Arrow file shares: an import (arrow_import), its nodes
 * (arrow_node), reference lists and the describer's callbacks (the validation
 * of the imported structs is core's, arrow_check.h). ---- */

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

/* ---- arrow_common.c ---- */

/* Appends `o` (stolen, may not be NULL).  Returns 0, or -1 with MemoryError
   (`o` is released). */
int
dfb_arrow_refs_add(ref_list *r, PyObject *o);

/* Drops every reference and frees the storage.  Cannot fail. */
void
dfb_arrow_refs_clear(ref_list *r);

/* returns the pointer of capsule `cap` named `name`, or
   NULL with TypeError (not a capsule, or another name).  `what` names the
   source in the message. */
void *
dfb_arrow_capsule_pointer(PyObject *cap, const char *name, const char *what);

/* Raises core's error `rc` (not DFB_OK) with the message in `err`:
   NotImplementedError for DFB_ENOTSUP, else ValueError.  Always returns
   -1. */
int
dfb_arrow_raise(dfb_code rc, const dfb_error *err);

/* ---- arrow_describe.c ---- */

/* Fills `col` (and `dict` for dictionary-encoded chunks; may be NULL only
   where dictionaries are not allowed) from one chunk, after checking it
   (dfb_arrow_check_node).  Buffers made over Arrow memory are on the
   node's device and owned by its holder.  String views are kept as views
   when `decode_views` is DFB_VIEWS_KEEP (the converters read them), copied
   to large-utf8 in new NumPy arrays when it is DFB_VIEWS_COPY, refused
   with CopyError (st->copy_error) when 0.  Memory not on the CPU is never
   read: its null count is the producer's for a whole array, else -1 (unknown,
   the validity kept), and variable-width data raises NotImplementedError;
   there, when `dict_error` is non-NULL, a dictionary that cannot be
   described does not fail the codes: *dict_error gets its exception (a
   new reference; else NULL) and `dict` only its length.  Everything made
   is kept in `refs`.  Returns 0, or -1 with ValueError (malformed),
   NotImplementedError (unsupported format) or CopyError set.  `name`
   names the column in messages. */
int
dfb_arrow_describe_node(dfb_state *st, const arrow_node *nd, dfb_column *col,
                        dfb_column *dict, PyObject **dict_error,
                        ref_list *refs, int decode_views, const char *name);

/* returns a new reference to the NumPy dtype of a
   fixed-width format's stored values (bitmaps and bytes: uint8), or NULL
   with an exception. */
PyArray_Descr *
dfb_arrow_stored_descr(const dfb_format *f);

/* Returns the name of column `c` of the import (UTF-8, never NULL). */
const char *
dfb_arrow_column_name(const arrow_import *imp, int is_table, int64_t c);

/* ---- arrow_device.c ---- */

/* Returns 1 if `obj` has __arrow_c_device_array__ or
   __arrow_c_device_stream__, 0 if not, -1 on error. */
int
dfb_arrow_device_is_producer(PyObject *obj);

/* Converts the device of device array `d` (CPU is {kDLCPU, 0} whatever
   id the producer gave) into *out and refuses a sync_event.  Returns 0, or
   -1 with ValueError (unknown device type, id outside [0, 2**31)) or
   BufferError (a sync_event dfbuffer cannot wait on). */
int
dfb_arrow_device_check(const struct ArrowDeviceArray *d, DLDevice *out);

/* Converts a device stream's device type into *out (id 0 until a chunk
   says otherwise).  Returns 0, or -1 with ValueError (unknown type). */
int
dfb_arrow_device_of_stream(ArrowDeviceType type, DLDevice *out);

/* Checks chunk `d` of a device stream on `stream_type`: the same type,
   dfb_arrow_device_check, and the device of the first chunk (`first`:
   stored in *device) for every later one.  Returns 0, or -1 with
   ValueError / BufferError or NotImplementedError (chunks on different
   devices). */
int
dfb_arrow_device_next(ArrowDeviceType stream_type,
                      const struct ArrowDeviceArray *d, DLDevice *device,
                      int first);

/* Sets BufferError: the Arrow data is on `device`, which the NumPy
   converters (`what`) cannot read.  Always returns -1. */
int
dfb_arrow_device_refuse(DLDevice device, const char *what);

/* Sets NotImplementedError: column `name` cannot be described without
   reading `device` memory (`what` says why).  Always returns -1. */
int
dfb_arrow_device_unread(const char *name, const char *what, DLDevice device);

/* Buffer.__arrow_c_device_array__(requested_schema=None, **kwargs)
   (METH_FASTCALL | METH_KEYWORDS).  Returns (schema, device array)
   capsules for a 1-D contiguous primitive Buffer on any device, or NULL
   with BufferError / TypeError (not exportable), NotImplementedError (a
   non-None keyword argument, or a requested schema it cannot give). */
PyObject *
dfb_buffer_arrow_c_device_array(PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames);

/* ---- arrow_export.c ---- */

/* Arrow PyCapsule export of 1-D primitive buffers. */
PyObject *
dfb_buffer_arrow_c_schema(PyObject *self, PyObject *unused);
PyObject *
dfb_buffer_arrow_c_array(PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames);

/* checks a consumer's `requested_schema` (Py_None: none
   asked) against the format `fmt` a Buffer exports as.  Returns 0, or -1
   with TypeError / ValueError (not a live "arrow_schema" capsule) or
   NotImplementedError (another type) set. */
int
dfb_arrow_check_requested(PyObject *requested, const char *fmt);

/* capsule destructor of the "arrow_schema" capsules we
   make (the struct malloc'd): releases the schema unless a consumer moved
   it out, then frees the struct.  Cannot fail. */
void
dfb_arrow_schema_capsule_free(PyObject *cap);

/* the same for our "arrow_array" capsules. */
void
dfb_arrow_array_capsule_free(PyObject *cap);

/* the same for our "arrow_array_stream" capsules. */
void
dfb_arrow_stream_capsule_free(PyObject *cap);

/* fills `a` as the export of 1-D contiguous primitive
   Buffer `self` (no validity, its data as the values buffer), holding a
   strong reference to `self` that a->release drops on any thread
   (dfb_decref_any_thread).  Returns 0, or -1 with MemoryError (`a`
   untouched). */
int
dfb_arrow_export_fill(PyObject *self, struct ArrowArray *a);

/* Visits the Buffer an array filled by dfb_arrow_export_fill keeps (for
   the tp_traverse of a holder that owns `a`); any other array, or one
   released, visits nothing.  Returns what `visit` returned. */
int
dfb_arrow_export_visit(const struct ArrowArray *a, visitproc visit, void *arg);

/* ---- arrow_import.c ---- */

/* The spec of dfbuffer.arrow_array, the GC-tracked holder of one imported
   ArrowArray (module.c makes the type into st->arrow_holder_type). */
extern PyType_Spec dfb_arrow_holder_spec;

/* Appends a new holder (of imp->st's holder type).  Returns its (released)
   array to be filled, or NULL with MemoryError. */
struct ArrowArray *
dfb_arrow_import_add(arrow_import *imp);

/* Returns 1 if `obj` speaks the Arrow PyCapsule interface
   (__arrow_c_array__ or __arrow_c_stream__), 0 if not, -1 on error. */
int
dfb_arrow_is_producer(PyObject *obj);

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

/* Returns 1 when the chunks `imp` holds make a group of a stream read
   group by group (to_matrix and from_dataframe of a stream): the rows of
   those before the newest times the columns times 8 bytes reach the
   group size (so a group holds at most the group size and one chunk, and
   a stream of one chunk is never grouped); else 0.  Cannot fail. */
int
dfb_arrow_import_is_group(const arrow_import *imp);

/* Sets the group size (bytes) to `n` when n > 0 (the tests' small groups)
   and returns the size before.  Cannot fail. */
long long
dfb_arrow_group_bytes_swap(long long n);

/* Drops the chunks `imp` holds (their holders: each array is released
   when nothing else holds it), keeping the schema: imp->n becomes 0 and
   later chunks go in from the start.  May run the producer's release
   code; keeps any pending exception.  Cannot fail. */
void
dfb_arrow_import_drop_chunks(arrow_import *imp);

/* Releases everything `imp` holds (arrays live on in any Buffer made over
   them).  Cannot fail. */
void
dfb_arrow_import_clear(arrow_import *imp);

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

/* Validates the top-level struct schema and arrays of a table import
   (dfb_arrow_check_table; the struct's bitmap is counted only on the
   CPU).  Returns 0, or -1 with ValueError / NotImplementedError set. */
int
dfb_arrow_validate_table(const arrow_import *imp);

/* ---- arrow_nodes.c ---- */

/* Fills `s` (uninitialised) as a node of format `fmt`, name `name`, the
   `metadata_size` bytes of Arrow metadata at `metadata` (NULL: none),
   `flags` and `nchildren` NULL children slots, all owned by the node.
   Returns 0, or -1 (out of memory; `s` released-marked).  Runs no
   Python. */
int
dfb_arrow_schema_init(struct ArrowSchema *s, const char *fmt, const char *name,
                      const char *metadata, size_t metadata_size,
                      int64_t flags, int64_t nchildren);

/* Fills `a` (uninitialised) as a node of `nbuf` NULL buffer pointers
   (a->buffers, writable by the caller) and `nchildren` NULL children
   slots, holding a new reference to `owner` that its release callback
   drops on any thread.  Returns 0, or -1 with MemoryError (`a`
   released-marked). */
int
dfb_arrow_array_init(struct ArrowArray *a, PyObject *owner, int64_t nbuf,
                     int64_t nchildren);

/* Releases schema `s` with its own callback unless it is released or moved
   out already.  Cannot fail. */
void
dfb_arrow_schema_release(struct ArrowSchema *s);

/* Releases array `a` with its own callback unless it is released or moved
   out already.  Cannot fail. */
void
dfb_arrow_array_release(struct ArrowArray *a);

/* Visits, for the tp_traverse of a holder that owns `a` (moved in), every
   reference dfbuffer's own Arrow exports keep in it: each node made by
   dfb_arrow_array_init (its owner; children and dictionary the same way)
   and an array of Buffer.__arrow_c_array__ (dfb_arrow_export_visit).  A
   producer's node, or a released one, visits nothing: its references are
   not ours to report.  Returns what `visit` returned. */
int
dfb_arrow_array_visit(const struct ArrowArray *a, visitproc visit, void *arg);

/* ---- convert_extension.c ---- */

/* applies the canonical extension type of schema `s`
   (identified by the type table, dfb_metadata_extension) to the described
   `col` (its `ext` when the table's row applies to its storage,
   dfb_extension_applies): arrow.bool8 (int8 storage) becomes a bool view,
   arrow.uuid (16-byte fixed-size binary) uuid.UUID objects (the table's
   result class, dfb_format_conv); other extensions keep their storage
   type's result.  Returns 0, or -1 with ValueError for
   malformed metadata (`name` names the column). */
int
dfb_arrow_apply_extension(const struct ArrowSchema *s, dfb_column *col,
                          const char *name);

/* ---- convert_run_end.c ---- */

/* describes the run-end encoded ("+r") node `nd` into
   `col`: fixed-width values in native order as a plain column of their
   type (decoded at fill speed), any other values as a RUN_END column of
   new int64 codes (the run of each row, decoded by core's run-ends reader)
   into its values child, described into `dict` by `describe`
   (dfb_arrow_describe_node).  Returns 0, or -1 with
   ValueError (bad run ends or children), NotImplementedError (`dict` NULL)
   or the values' description error. */
int
dfb_arrow_describe_run_end(dfb_state *st, const arrow_node *nd,
                           dfb_column *col, dfb_column *dict, ref_list *refs,
                           int decode_views, const char *name,
                           dfb_arrow_describe_fn describe);

/* ---- schema.c ---- */

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

/* the parsed "index_columns" of the "pandas" metadata of schema
   `s` (new reference; Py_None when there is none or it is unreadable), or
   NULL with MemoryError. */
PyObject *
dfb_arrow_pandas_index(const struct ArrowSchema *s);

#endif /* DFBUFFER_ARROW_H */
