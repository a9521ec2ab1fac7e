/* dfbuffer: the Arrow C device data interface through the PyCapsule
 * interface (__arrow_c_device_array__ / __arrow_c_device_stream__), both
 * ways.  The structs are declared in dfbuffer/arrow.h.
 */
#ifndef DFBUFFER_ARROW_DEVICE_H
#define DFBUFFER_ARROW_DEVICE_H

#include "common.h"
#include "arrow.h"

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

#endif /* DFBUFFER_ARROW_DEVICE_H */
