/* dfbuffer: the interface of exchange/: the one-buffer protocols both ways
 * (DLPack and its C exchange API, the array interfaces, the buffer protocol,
 * interchange buffers) and Buffer.from_object's protocol registry and
 * importers.
 */
#ifndef DFBUFFER_EXCHANGE_H
#define DFBUFFER_EXCHANGE_H

#include "common.h"
#include "model.h"

/* ---- array_dunders.c ---- */

PyObject *
dfb_arrow_array_method_call(dfb_state *st, PyObject *obj);
PyObject *
dfb_import_arrow_array_method(dfb_state *st, PyObject *obj, PyObject *dtype);
PyObject *
dfb_array_method_call(dfb_state *st, PyObject *obj, int allow_copy,
                      int *shared);
PyObject *
dfb_import_array_method(dfb_state *st, PyObject *obj, PyObject *dtype,
                        int allow_copy);
PyObject *
dfb_array_method_column(dfb_state *st, PyObject *obj, int allow_copy,
                        const char *func);

/* Sets the ValueError of public function `func` for column `arr`, which
   is not 1-D: it names arr's shape.  Cannot fail. */
void
dfb_not_1d_error(const char *func, PyArrayObject *arr);

/* ---- arrow_from_object.c ---- */

/* Buffer.from_object fallback for objects with __arrow_c_array__ (or a
   one-chunk __arrow_c_stream__): returns a new read-only Buffer over the
   values of a 1-D fixed-width primitive Arrow array (elements [offset,
   offset + length); nulls, if any, are not masked), whose owner is the
   holder of the imported ArrowArray ("dfbuffer.arrow_array" capsule).
   `dtype` (NULL/None: the Arrow type's) may override the element type at
   equal itemsize.  NULL with NotImplementedError for other layouts
   (strings, bit-packed bools, dictionaries, nested), TypeError /
   ValueError for bad producers. */
PyObject *
dfb_arrow_buffer_from_object(dfb_state *st, PyObject *obj, PyObject *dtype);

/* ---- dlpack.c ---- */

/* Buffer.__dlpack__ and __dlpack_device__, wired into the type by
   buffer_type.c (CPython calling conventions). */
PyObject *
dfb_buffer_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames);
PyObject *
dfb_buffer_dlpack_device(PyObject *self, PyObject *unused);

/* The spec of dfbuffer.dlpack_owner, the GC-tracked owner of an imported
   DLPack tensor (module.c makes the type into st->dlpack_owner_type). */
extern PyType_Spec dfb_dlpack_owner_spec;

/* The DLPack importers of Buffer.from_object: a capsule, or a producer's
   __dlpack__.  Each returns a new Buffer, or NULL with an exception set. */
PyObject *
dfb_dlpack_import_capsule(dfb_state *st, PyObject *cap, PyObject *dtype);
PyObject *
dfb_dlpack_import_producer(dfb_state *st, PyObject *obj, PyObject *dtype);

/* Imports managed tensor `m`, whose ownership it takes in every case (on
   a failure the deleter has run): the version check and validation of a
   "dltensor_versioned" capsule's import.  Returns a new Buffer, or NULL
   with an exception set. */
PyObject *
dfb_dlpack_import_versioned(dfb_state *st, DLManagedTensorVersioned *m,
                            PyObject *dtype);

/* The versioned managed tensor of Buffer `self` as __dlpack__(max_version=
   (1, x)) makes it (own device, no copy, READ_ONLY as the Buffer;
   manager_ctx a new reference to `self`).  Returns it, or NULL with an
   exception set (BufferError for a dtype or layout DLPack cannot
   describe, or a Buffer cleared by the collector). */
DLManagedTensorVersioned *
dfb_dlpack_export_versioned(PyObject *self);

/* The DLPack type of NumPy dtype `d` in *out.  Returns 0, or -1 with
   BufferError. */
int
dfb_dlpack_dtype(PyArray_Descr *d, DLDataType *out);

/* ---- dlpack_args.c ---- */

/* The keywords of one __dlpack__ call. */
typedef struct {
    PyObject *stream;      /* borrowed; NULL or None = not given */
    PyObject *max_version; /* borrowed */
    PyObject *dl_device;   /* borrowed */
    PyObject *copy;        /* borrowed */
} dfb_dlpack_args;

int
dfb_dlpack_parse_args(PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, dfb_dlpack_args *a);
int
dfb_dlpack_parse_max_version(PyObject *obj, int *versioned);
int
dfb_dlpack_parse_dl_device(PyObject *obj, DLDevice *out);
int
dfb_dlpack_parse_copy(PyObject *obj, int *out);
int
dfb_dlpack_check_stream(PyObject *stream, DLDeviceType t);

/* ---- dlpack_exchange.c ---- */

/* Puts __dlpack_c_exchange_api__, a capsule "dlpack_exchange_api" over
   dfbuffer's static table, into the dict of `buffer_type` (module exec,
   before the type is used).  Returns 0, or -1 with an exception set. */
int
dfb_dlpack_exchange_attach(PyTypeObject *buffer_type);

/* Buffer.from_object's import through the DLPack exchange API of the type
   of `obj`.  Returns a new Buffer; NULL with an exception set; or NULL
   without one when the type offers no table dfbuffer reads (no capsule, a
   wrong name or version, a NULL managed_tensor_from_py_object_no_sync),
   the object has a true requires_grad, the table's call fails with an
   Exception or the tensor is not on the CPU: the caller then uses
   __dlpack__. */
PyObject *
dfb_dlpack_import_exchange(dfb_state *st, PyObject *obj, PyObject *dtype);

/* ---- export_array.c ---- */

PyObject *
dfb_buffer_array_interface(PyObject *self, void *closure);
PyObject *
dfb_buffer_cuda_array_interface(PyObject *self, void *closure);
int
dfb_buffer_getbuffer(PyObject *self, Py_buffer *view, int flags);
void
dfb_buffer_releasebuffer(PyObject *self, Py_buffer *view);
PyObject *
dfb_buffer_reduce_ex(PyObject *self, PyObject *protocol);
PyObject *
dfb_buffer_array(PyObject *self, PyObject *args, PyObject *kwds);

/* `_rebuild`, the pickle reconstructor of Buffer.  Added to
   the module with PyModule_AddFunctions in module.c. */
extern PyMethodDef dfb_export_methods[];

/* ---- import.c ---- */

PyObject *
dfb_import_finish(dfb_state *st, char *data, PyObject *owner,
                  PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
                  const Py_ssize_t *strides, DLDevice device, int readonly,
                  int native, PyObject *override);
int
dfb_import_refuse_lazy_views(dfb_state *st, PyObject *obj);
PyObject *
dfb_import_buffer(dfb_state *st, DfbBuffer *b, PyObject *dtype);
PyObject *
dfb_import_ndarray(dfb_state *st, PyArrayObject *a, PyObject *dtype);
PyObject *
dfb_import_cai(dfb_state *st, PyObject *obj, PyObject *cai, PyObject *dtype);
PyObject *
dfb_import_array_interface(dfb_state *st, PyObject *obj, PyObject *ai,
                           PyObject *dtype);
PyObject *
dfb_import_buffer_protocol(dfb_state *st, PyObject *obj, PyObject *dtype);
PyObject *
dfb_import_interchange(dfb_state *st, PyObject *obj, PyObject *ptr_o,
                       PyObject *size_o, PyObject *dtype);

/* the spec of the private GC-tracked holder of a buffer-protocol
   export (the owner of buffer-protocol Buffers); module init makes
   st->export_type from it. */
extern PyType_Spec dfb_export_holder_spec;

/* ---- ixbuffer.c ---- */

/* converts a Python int to Py_ssize_t for field `what` of
   protocol `proto`.  Returns 0, or -1 with TypeError (not an int) or
   OverflowError set.  Negative values are allowed (strides); callers
   check signs. */
int
dfb_as_ssize(PyObject *o, const char *proto, const char *what,
             Py_ssize_t *out);

/* converts a non-negative Python int to a pointer.  Returns 0,
   or -1 with TypeError, ValueError (negative) or OverflowError set. */
int
dfb_as_pointer(PyObject *o, const char *proto, void **out);

/* converts a Python int to int64 for `what` (a uint64 beyond
   INT64_MAX keeps its bit pattern: a sentinel).  Returns 0, or -1 with
   TypeError (not an int) or OverflowError set. */
int
dfb_as_int64(PyObject *o, const char *what, int64_t *out);

/* THE reader of interchange-protocol buffers, shared by
   Buffer.from_object and the converters.  Reads ptr, bufsize and
   __dlpack_device__() of `obj` exactly once each (a dfbuffer.Buffer: from
   its struct, no Python code); `ptr_o` / `size_o` are values the caller
   already read (borrowed), or NULL to read them here.  ptr must be an int
   (not bool) >= 0 fitting a pointer, bufsize an int (not bool) >= 0, ptr 0
   only with bufsize 0, ptr + bufsize within the address space.  Any device
   is accepted (the caller decides).  Returns 0, or -1 with TypeError (not
   an interchange buffer, wrong types), ValueError or OverflowError set. */
int
dfb_read_interchange_buffer(dfb_state *st, PyObject *obj, PyObject *ptr_o,
                            PyObject *size_o, dfb_block *out);

/* ---- protocols.c ---- */

/* Buffer.from_object (METH_CLASS | METH_FASTCALL |
   METH_KEYWORDS; cls is the Buffer type). */
PyObject *
dfb_buffer_from_object(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames);

/* the C entry of from_object.  Returns a new Buffer wrapping
   `obj` without copying (dtype: NULL or a dtype-like overriding the
   producer's), or NULL with an exception set (TypeError when obj speaks
   no protocol dfbuffer knows, BufferError when the producer refuses). */
PyObject *
dfb_buffer_from_object_impl(dfb_state *st, PyObject *obj, PyObject *dtype);

/* Buffer.from_object with its allow_copy (False: __array__
   is called with copy=False); the C API's entry passes 1.  A new Buffer,
   or NULL with an exception set. */
PyObject *
dfb_protocols_import(dfb_state *st, PyObject *obj, PyObject *dtype,
                     int allow_copy);

/* `_protocols`, the registry for Python (module.c adds it). */
extern PyMethodDef dfb_protocol_methods[];

#endif /* DFBUFFER_EXCHANGE_H */
