/* dfbuffer: the interface of model/: the data model every later layer speaks:
 * Buffer construction and validation, the column model (dfb_column), the
 * frame model (dfb_frame) and the columns= selection.
 */
#ifndef DFBUFFER_MODEL_H
#define DFBUFFER_MODEL_H

#include "common.h"
#include "dtype.h" /* dfb_descr_from_typestr, dfb_parse_dtype */
#include "args.h"
#include "format.h"
#include "types.h"
#include "reader.h"
#include "dtype.h" /* dfb_interchange_dtype_parse */

/* ---- buffer.c ---- */

typedef struct {
    PyObject_VAR_HEAD     /* ob_size = 3 * ndim: the slots of dims[] */
        char *ptr;        /* lowest address of the block (may be NULL iff
                             bufsize == 0) */
    char *data;           /* address of element (0, ..., 0) */
    Py_ssize_t bufsize;   /* bytes in the block */
    PyArray_Descr *dtype; /* strong; never holds references (no objects) */
    PyObject *owner;      /* strong; keeps the memory alive */
    PyObject *weakreflist;
    DLDevice device;
    int ndim;
    int readonly;
    int native;          /* a dfb_native value */
    Py_ssize_t *shape;   /* points to dims[0 .. ndim) */
    Py_ssize_t *strides; /* bytes; points to dims[ndim .. 2*ndim) */
    Py_ssize_t dims[1];  /* 3*ndim slots (tp_itemsize): shape, strides,
                            then the strides in elements (DfbBuffer_ELEM) */
} DfbBuffer;

/* The strides of Buffer `b` in elements, dims[2*ndim .. 3*ndim): for each
   dimension, its byte stride divided by the itemsize where the itemsize
   divides it, else the C-order stride (which serves where the stride does
   not matter: size-1 dimensions, zero-size buffers); the DLTensor view of
   the DLPack exchange API borrows them. */
#define DfbBuffer_ELEM(b) ((b)->dims + 2 * (b)->ndim)

#define DfbBuffer_Check(st, op) PyObject_TypeCheck((op), (st)->buffer_type)

/* Returns a new Buffer, or NULL with an exception set (ValueError,
   TypeError or OverflowError naming the problem).  `ptr` is the lowest
   address of the block (see above).  Takes new references to `owner` and
   `dtype`; borrows shape/strides.  shape == NULL means 1-D of
   bufsize / itemsize elements (ValueError if not a multiple); strides ==
   NULL means C-contiguous.  Validates the dtype, the device and that every
   addressed byte lies within the block. */
PyObject *
dfb_buffer_new(dfb_state *st, char *ptr, Py_ssize_t bufsize, PyObject *owner,
               PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
               const Py_ssize_t *strides, DLDevice device, int readonly,
               int native);

/* Like dfb_buffer_new, but from the address of element (0, ..., 0), as
   NumPy, the array interface and DLPack describe memory: computes ptr and
   bufsize (the extent the elements span).  shape must not be NULL when
   ndim > 0; strides == NULL means C-contiguous.  Returns a new Buffer or
   NULL with an exception set. */
PyObject *
dfb_buffer_from_data(dfb_state *st, char *data, PyObject *owner,
                     PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
                     const Py_ssize_t *strides, DLDevice device, int readonly,
                     int native);

/* Computes the lowest and one-past-highest byte offsets, relative to element
   (0, ..., 0), that a strided array touches.  Returns 0, or -1 with
   OverflowError set.  A zero-size array touches nothing: lo = hi = 0. */
int
dfb_extent(int ndim, const Py_ssize_t *shape, const Py_ssize_t *strides,
           Py_ssize_t itemsize, Py_ssize_t *lo, Py_ssize_t *hi);

/* Returns 1 if the strides are C-contiguous for shape and itemsize (size-1
   and zero-size dimensions ignore their strides), else 0. */
int
dfb_is_c_contiguous(int ndim, const Py_ssize_t *shape,
                    const Py_ssize_t *strides, Py_ssize_t itemsize);

/* Returns 1 if Fortran-contiguous (same rules), else 0. */
int
dfb_is_f_contiguous(int ndim, const Py_ssize_t *shape,
                    const Py_ssize_t *strides, Py_ssize_t itemsize);

/* Number of elements (product of shape); the constructor guarantees it
   fits in Py_ssize_t. */
Py_ssize_t
dfb_buffer_size(const DfbBuffer *b);

/* Returns a new tuple of the `n` ints at `d`, or NULL with an exception
   set. */
PyObject *
dfb_dims_tuple(const Py_ssize_t *d, int n);

/* Returns 0 if `b` is host-readable memory (CPU, CUDA host/pinned, ROCm
   host, CUDA managed), else -1 with BufferError naming the device.  `what`
   names the requested access in the message. */
int
dfb_buffer_require_host(const DfbBuffer *b, const char *what);

/* Returns a new NumPy array viewing the Buffer (same memory, base = the
   Buffer), or NULL with an exception set (BufferError for device memory).
   Writeable unless the Buffer is read-only. */
PyObject *
dfb_buffer_as_ndarray(DfbBuffer *b);

/* Returns a new 1-D array of `length` elements of dtype `d` (stolen) at
   `p` inside Buffer `b` (a reference stolen: the array's base), writeable
   only when `b` is; NULL with an exception set (both references released).
   The caller has checked that the elements lie inside `b`. */
PyObject *
dfb_buffer_view_1d(DfbBuffer *b, PyArray_Descr *d, char *p, npy_intp length);

/* Parses a device argument: a 2-sequence (device_type, device_id) whose
   type is a known DLPack device type; device_id None counts as 0.  Returns
   0, or -1 with TypeError / ValueError set. */
int
dfb_parse_device(PyObject *obj, DLDevice *out);

/* The block an interchange-protocol buffer describes, as read once. */
typedef struct {
    char *ptr;       /* NULL only when size == 0 */
    Py_ssize_t size; /* bufsize, >= 0; ptr + size fits the address space */
    DLDevice device;
    int readonly; /* 1 unless obj is a writable dfbuffer.Buffer */
} dfb_block;

/* ---- the column model: one chunk of a column described (dfb_column), shared
 * by every reader (interchange, Arrow, pandas) and every kernel. ---- */

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

/* ---- column_select.c ---- */

/* Fills `s` from columns= (NULL or None: every column), each name as str()
   (the rule of dfb_frame_select).  Returns 0, or -1 with TypeError (a
   str, not a sequence) or an item's __str__ error. */
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

/* ---- frame.c ---- */

/* One selected column: its chunks in order. */
typedef struct {
    PyObject *name;     /* strong: the column name as str */
    dfb_column *chunks; /* PyMem, 2 * nchunks entries: the chunks, then the
                           categories each DICTIONARY chunk points to */
    Py_ssize_t nchunks; /* >= 1 (an empty column has one empty chunk) */
} dfb_frame_column;

/* The selected columns of a frame.  Every pointer in the chunks stays valid
   while `keep` lives (format tz pointers are cleared: not kept). */
typedef struct {
    Py_ssize_t ncols;
    int64_t nrows;          /* rows when the producer says, else -1 (the
                               shape of a frame without columns) */
    dfb_frame_column *cols; /* PyMem, ncols entries */
    PyObject *keep;         /* strong: a list of what keeps memory alive */
} dfb_frame;

/* Allocates `f` for `ncols` columns (zeroed chunks, an empty keep list).
   Returns 0, or -1 with MemoryError; clear `f` either way. */
int
dfb_frame_init(dfb_frame *f, Py_ssize_t ncols);

/* Releases everything `f` holds and zeroes it.  Cannot fail. */
void
dfb_frame_clear(dfb_frame *f);

/* Removes column `k` of `f` (its name and chunks released, the columns
   after it moved down one; the keep list stays).  Cannot fail. */
void
dfb_frame_drop(dfb_frame *f, Py_ssize_t k);

/* The texts of the columns= errors, the same in every function: a bare
   str (TypeError), not a sequence (TypeError), an unknown name (KeyError,
   a %R of the name), a name several columns share (ValueError, %R). */
#define DFB_COLUMNS_STR_ERROR \
    "columns must be a sequence of column names, not a single string"
#define DFB_COLUMNS_SEQ_ERROR "columns must be a sequence of column names"
#define DFB_COLUMNS_KEY_ERROR "column %R is not in the frame"
#define DFB_COLUMNS_AMBIGUOUS_ERROR \
    "column name %R is ambiguous: several columns have it"

/* Resolves the `columns=` selection `select` (NULL or None: all, in order;
   else a sequence of names, non-str items compared as str()) against
   `names` (a list of str).  Sets *idx to a PyMem array of *n indices into
   `names`.  Returns 0, or -1 with TypeError (not a sequence / a bare str),
   KeyError (unknown name) or ValueError (a name that is duplicated in the
   frame). */
int
dfb_frame_select(PyObject *names, PyObject *select, Py_ssize_t **idx,
                 Py_ssize_t *n);

#endif /* DFBUFFER_MODEL_H */
