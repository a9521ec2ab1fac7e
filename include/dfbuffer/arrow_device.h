/* dfbuffer: the Arrow C device data interface through the PyCapsule
 * interface (__arrow_c_device_array__ / __arrow_c_device_stream__), both
 * ways.  The structs are declared in dfbuffer/arrow.h.
 */
#ifndef DFBUFFER_ARROW_DEVICE_H
#define DFBUFFER_ARROW_DEVICE_H

#include "dfbuffer/common.h"
#include "dfbuffer/arrow.h"

/* arrow_common.c helpers shared with arrow_device.c */

/* Returns the pointer of capsule `cap` named `name`, or NULL with
   TypeError (not a capsule, or another name).  `what` names the source. */
void *
dfb_arrow_capsule_pointer(PyObject *cap, const char *name, const char *what);

/* Sets the exception for a failed stream callback (`kind` "Arrow stream"
   or "Arrow device stream", `what` the callback) with errno `rc`: EINVAL
   -> ValueError, ENOMEM -> MemoryError, ENOSYS -> NotImplementedError,
   else OSError; `msg` is the stream's last error (NULL: none).  Always
   returns -1. */
int
dfb_arrow_stream_failed(const char *kind, const char *what, int rc,
                        const char *msg);

/* Returns 1 if `obj` has __arrow_c_device_array__ or
   __arrow_c_device_stream__, 0 if not, -1 on error. */
int
dfb_arrow_device_is_producer(PyObject *obj);

/* Gives the importer's next empty (released) ArrowArray slot, owned by the
   importer, or NULL with MemoryError set. */
typedef struct ArrowArray *(*dfb_arrow_slot_fn)(void *ctx);

/* Moves obj.__arrow_c_device_array__() (else the chunks of
   obj.__arrow_c_device_stream__()) into `schema` (released on entry) and
   slots got from `slot(ctx)`: each chunk's embedded ArrowArray, whose
   release releases the device array.  Stores the device of the chunks in
   *device (CPU is {kDLCPU, 0} whatever id the producer gave).  Returns 0,
   or -1 with TypeError (capsules), ValueError (released or malformed
   structs, unknown device), BufferError (a sync_event dfbuffer cannot wait
   on) or NotImplementedError (chunks on different devices).  Whatever was
   moved stays with the caller, who releases it on failure too. */
int
dfb_arrow_device_import(PyObject *obj, struct ArrowSchema *schema,
                        dfb_arrow_slot_fn slot, void *ctx, DLDevice *device);

/* Sets BufferError: the Arrow data is on `device`, which the NumPy
   converters (`what`) cannot read.  Always returns -1. */
int
dfb_arrow_device_refuse(DLDevice device, const char *what);

/* Buffer.from_object over a non-CPU import: a new read-only Buffer on
   `device` over the values of a 1-D fixed-width primitive array `a` of
   schema `s` (elements [offset, offset + length)), owned by `holder`;
   nothing is read.  `dtype` (NULL/None: the Arrow type's) may override
   the element type at equal itemsize.  NULL with NotImplementedError for
   other layouts, ValueError for malformed arrays. */
PyObject *
dfb_arrow_device_buffer(dfb_state *st, const struct ArrowSchema *s,
                        const struct ArrowArray *a, PyObject *holder,
                        DLDevice device, PyObject *dtype);

/* _arrow_import over a non-CPU import of `n` chunks (`arrays[i]` owned by
   capsule `holders[i]`): the same (is_table, columns, chunks) tuple, whose
   Buffers are on `device` and were never read.  Columns that cannot be
   described without reading device memory (strings: their data size is
   in the device's offsets; struct tables with null rows) get an `error`.
   Returns a new tuple or NULL with an exception set. */
PyObject *
dfb_arrow_device_describe(dfb_state *st, const struct ArrowSchema *s,
                          struct ArrowArray *const *arrays,
                          PyObject *const *holders, Py_ssize_t n,
                          DLDevice device);

/* Buffer.__arrow_c_device_array__(requested_schema=None, **kwargs)
   (METH_FASTCALL | METH_KEYWORDS).  Returns (schema, device array)
   capsules for a 1-D contiguous primitive Buffer on any device, or NULL
   with BufferError / TypeError (not exportable), NotImplementedError (a
   non-None keyword argument, or a requested schema it cannot give). */
PyObject *
dfb_buffer_arrow_c_device_array(PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames);

#endif /* DFBUFFER_ARROW_DEVICE_H */
