/* dfbuffer: DLPack both ways (dlpack.c): Buffer.__dlpack__ and
 * __dlpack_device__, the import of a capsule or a producer, and the
 * reference drop any thread may make.
 */
#ifndef DFBUFFER_DLPACK_H
#define DFBUFFER_DLPACK_H

#include "common.h"

/* Buffer.__dlpack__ and __dlpack_device__, wired into the type by
   buffer_type.c (CPython calling conventions). */
PyObject *
dfb_buffer_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames);
PyObject *
dfb_buffer_dlpack_device(PyObject *self, PyObject *unused);

/* drops a strong reference from any thread, with or
   without the GIL (the DLPack deleters and the Arrow export's release
   callback share it): takes the GIL with PyGILState_Ensure in normal
   operation; while the interpreter is finalizing, decrefs only if the
   calling thread holds the GIL and leaks otherwise (taking the GIL then can
   hang or end the thread); after finalization, leaks.  Never fails. */
void
dfb_decref_any_thread(PyObject *obj);

/* on 3.11/3.12 registers the atexit callback that tells
   dfb_decref_any_thread the interpreter is shutting down (3.13+ asks
   Py_IsFinalizing; nothing to do).  Called by module exec.  Returns 0, or
   -1 with an exception set. */
int
dfb_exit_watch_init(PyObject *module);

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

#endif /* DFBUFFER_DLPACK_H */
