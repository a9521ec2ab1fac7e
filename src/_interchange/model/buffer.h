/* dfbuffer.Buffer: the C object and the internal API to make one.
 *
 * Meaning of the fields (see docs/design.md, "ptr and bufsize"):
 *   ptr      the lowest address of the described block;
 *   bufsize  the block's length in bytes;
 *   data     the address of element (0, ..., 0):
 *            data = ptr + sum over dims with stride < 0 of (shape-1)*(-stride)
 *            (data == ptr for every buffer with no negative stride, and for
 *            every zero-size buffer);
 *   every byte any element touches lies in [ptr, ptr + bufsize).
 */
#ifndef DFBUFFER_BUFFER_H
#define DFBUFFER_BUFFER_H

#include "common.h"
#include "dtype.h" /* dfb_descr_from_typestr, dfb_parse_dtype */

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

#endif /* DFBUFFER_BUFFER_H */
