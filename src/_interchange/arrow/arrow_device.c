/* dfbuffer: the Arrow C device data interface through the PyCapsule
 * interface, both ways.
 *
 * Import.  obj.__arrow_c_device_array__() (or each chunk of
 * obj.__arrow_c_device_stream__()) gives an ArrowDeviceArray: an ordinary
 * ArrowArray whose buffers live on a device, plus the device and an
 * optional sync event.  Releasing the device array is releasing its
 * embedded ArrowArray, so arrow_import.c moves that embedded array into its
 * holders with the capsule moves and the stream walk of the CPU import,
 * and arrow_describe.c describes it with the CPU describer, which reads no
 * byte of memory that is not on the CPU.  What only device arrays have
 * lives here: their device (type, id) and its name, the sync_event (a
 * non-NULL one is refused: dfbuffer links no device runtime to wait on
 * it), the stream's device checks, and the messages for device memory
 * dfbuffer will not read.  Only the structs (ArrowArray, its buffers list,
 * children, dictionary) are read on the host, as the specification says
 * they are host memory.
 *
 * Export.  Buffer.__arrow_c_device_array__ describes a 1-D contiguous
 * primitive Buffer on any device without copying; the embedded ArrowArray's
 * private data holds a strong reference to the Buffer, dropped by its
 * release callback.  sync_event is always NULL (the interface defines no
 * stream keyword yet, and a non-None value of any keyword other than
 * requested_schema raises NotImplementedError, as the PyCapsule interface
 * asks of producers).
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "arrow.h"
#include "dlpack_types.h"
#include "format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

/* Converts an Arrow device (type, id) into *out: CPU is {kDLCPU, 0} for
   any id (pyarrow and nanoarrow give -1).  Returns 0, or -1 with
   ValueError for an unknown type or an id outside [0, 2**31). */
static int
to_dldevice(ArrowDeviceType type, int64_t id, DLDevice *out)
{
    if (type == ARROW_DEVICE_CPU) {
        out->device_type = kDLCPU;
        out->device_id = 0;
        return 0;
    }
    if (dfb_dlpack_device_name(type, 1) == NULL) {
        PyErr_Format(PyExc_ValueError, "unknown Arrow device type %d",
                     (int)type);
        return -1;
    }
    if (id < 0 || id > INT32_MAX) {
        PyErr_Format(PyExc_ValueError,
                     "Arrow device id %lld is outside [0, 2**31) for device "
                     "type %d (%s)",
                     (long long)id, (int)type,
                     dfb_dlpack_device_name(type, 1));
        return -1;
    }
    out->device_type = (DLDeviceType)type;
    out->device_id = (int32_t)id;
    return 0;
}

int
dfb_arrow_device_refuse(DLDevice device, const char *what)
{
    const char *name = dfb_dlpack_device_name(device.device_type, 1);
    PyErr_Format(PyExc_BufferError,
                 "%s: the Arrow data is on device %s:%d (device type %d), "
                 "and dfbuffer's NumPy converters read CPU memory only; "
                 "Buffer.from_object wraps it as a device Buffer and "
                 "dfbuffer.to_interchange as device buffers, or copy it to "
                 "the CPU with the device's library first",
                 what, name ? name : "?", (int)device.device_id,
                 (int)device.device_type);
    return -1;
}

int
dfb_arrow_device_is_producer(PyObject *obj)
{
    /* look-ups that report a producer's errors (hasattr would hide them) */
    PyObject *attr;
    int r = dfb_getattr_optional_str(obj, "__arrow_c_device_array__", &attr);
    Py_XDECREF(attr);
    if (r != 0) {
        return r;
    }
    r = dfb_getattr_optional_str(obj, "__arrow_c_device_stream__", &attr);
    Py_XDECREF(attr);
    return r;
}

/* ------------------------------------------------------------------ */
/* Import: what only device arrays have                                 */
/* ------------------------------------------------------------------ */

int
dfb_arrow_device_check(const struct ArrowDeviceArray *d, DLDevice *out)
{
    if (to_dldevice(d->device_type, d->device_id, out) < 0) {
        return -1;
    }
    if (d->sync_event != NULL) {
        PyErr_Format(PyExc_BufferError,
                     "the Arrow device array on %s:%d has a sync_event "
                     "(work still pending on the device); dfbuffer links no "
                     "device runtime to wait on it: synchronise in the "
                     "producer and export without an event",
                     dfb_dlpack_device_name(out->device_type, 1),
                     (int)out->device_id);
        return -1;
    }
    return 0;
}

int
dfb_arrow_device_of_stream(ArrowDeviceType type, DLDevice *out)
{
    return to_dldevice(type, 0, out);
}

int
dfb_arrow_device_next(ArrowDeviceType stream_type,
                      const struct ArrowDeviceArray *d, DLDevice *device,
                      int first)
{
    DLDevice dev;
    if (d->device_type != stream_type) {
        PyErr_Format(PyExc_ValueError,
                     "the Arrow device stream is on device type %d but gave "
                     "a chunk on device type %d",
                     (int)stream_type, (int)d->device_type);
        return -1;
    }
    if (dfb_arrow_device_check(d, &dev) < 0) {
        return -1;
    }
    if (first) {
        *device = dev;
    }
    else if (dev.device_id != device->device_id) {
        PyErr_Format(PyExc_NotImplementedError,
                     "the Arrow device stream's chunks are on different "
                     "devices (%s:%d and %s:%d)",
                     dfb_dlpack_device_name(device->device_type, 1),
                     (int)device->device_id,
                     dfb_dlpack_device_name(dev.device_type, 1),
                     (int)dev.device_id);
        return -1;
    }
    return 0;
}

int
dfb_arrow_device_unread(const char *name, const char *what, DLDevice device)
{
    PyErr_Format(PyExc_NotImplementedError,
                 "column '%s': %s (the data is on device %s:%d, which "
                 "dfbuffer does not read)",
                 name, what, dfb_dlpack_device_name(device.device_type, 1),
                 (int)device.device_id);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Export: Buffer.__arrow_c_device_array__                              */
/* ------------------------------------------------------------------ */

/* Capsule destructor of "arrow_device_array" capsules we made: releases
   the array unless a consumer moved it out, then frees the struct.  Keeps
   any pending exception. */
static void
device_capsule_destructor(PyObject *cap)
{
    PyObject *exc = dfb_err_take();
    struct ArrowDeviceArray *d =
        PyCapsule_GetPointer(cap, "arrow_device_array");
    if (d == NULL) {
        PyErr_Clear();
    }
    else {
        if (d->array.release != NULL) {
            d->array.release(&d->array);
        }
        free(d);
    }
    dfb_err_give(exc);
}

/* Parses (requested_schema=None, **kwargs): stores the requested schema
   (borrowed; Py_None when absent).  Returns 0, or -1 with TypeError (bad
   arguments) or NotImplementedError (a non-None keyword argument other
   than requested_schema). */
static int
parse_export_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  PyObject **requested)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    *requested = Py_None;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError,
                        "__arrow_c_device_array__() takes at most 1 "
                        "positional argument");
        return -1;
    }
    if (nargs == 1) {
        *requested = args[0];
    }
    PyObject *unsupported = NULL;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(k, "requested_schema") == 0) {
            if (nargs == 1) {
                PyErr_SetString(PyExc_TypeError,
                                "__arrow_c_device_array__() got multiple "
                                "values for 'requested_schema'");
                Py_XDECREF(unsupported);
                return -1;
            }
            *requested = args[nargs + i];
            continue;
        }
        if (args[nargs + i] == Py_None) {
            continue; /* future keywords default to None: accepted */
        }
        if (unsupported == NULL && (unsupported = PyList_New(0)) == NULL) {
            return -1;
        }
        if (PyList_Append(unsupported, k) < 0) {
            Py_DECREF(unsupported);
            return -1;
        }
    }
    if (unsupported != NULL) {
        PyErr_Format(PyExc_NotImplementedError,
                     "__arrow_c_device_array__: unsupported keyword "
                     "argument(s) with a non-None value: %R",
                     unsupported);
        Py_DECREF(unsupported);
        return -1;
    }
    return 0;
}

/* Returns a new "arrow_schema" capsule for Buffer `b`'s dtype (that of an
   empty CPU Buffer of the same dtype, so the host-only schema export
   serves every device), or NULL with BufferError / TypeError set. */
static PyObject *
export_schema(dfb_state *st, DfbBuffer *b)
{
    Py_ssize_t zero = 0;
    DLDevice cpu = {kDLCPU, 0};
    PyObject *empty = dfb_buffer_new(st, NULL, 0, Py_None, b->dtype, 1, &zero,
                                     NULL, cpu, 1, b->native);
    if (empty == NULL) {
        return NULL;
    }
    PyObject *cap = dfb_buffer_arrow_c_schema(empty, NULL);
    Py_DECREF(empty);
    return cap;
}

PyObject *
dfb_buffer_arrow_c_device_array(PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *requested;
    if (parse_export_args(args, nargs, kwnames, &requested) < 0) {
        return NULL;
    }
    DfbBuffer *b = (DfbBuffer *)self;
    dfb_state *st = dfb_state_from_type(Py_TYPE(self));
    if (st == NULL) {
        return NULL;
    }
    if (b->owner == NULL) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer was cleared by the garbage collector");
        return NULL;
    }
    if (b->ndim != 1) {
        PyErr_Format(PyExc_BufferError,
                     "only 1-D Buffers export as Arrow arrays, this one has "
                     "%d dimensions",
                     b->ndim);
        return NULL;
    }
    Py_ssize_t itemsize = PyDataType_ELSIZE(b->dtype);
    if (b->shape[0] > 1 && b->strides[0] != itemsize) {
        PyErr_Format(PyExc_BufferError,
                     "only contiguous Buffers export as Arrow arrays (stride "
                     "%zd, itemsize %zd)",
                     b->strides[0], itemsize);
        return NULL;
    }
    PyObject *scap = export_schema(st, b);
    if (scap == NULL) {
        return NULL;
    }
    const struct ArrowSchema *ours =
        PyCapsule_GetPointer(scap, "arrow_schema");
    if (ours == NULL) {
        Py_DECREF(scap);
        return NULL;
    }
    if (dfb_arrow_check_requested(requested, ours->format) < 0) {
        Py_DECREF(scap);
        return NULL;
    }
    struct ArrowDeviceArray *d = calloc(1, sizeof(*d)); /* reserved zeroed */
    if (d == NULL) {
        Py_DECREF(scap);
        return PyErr_NoMemory();
    }
    if (dfb_arrow_export_fill(self, &d->array) < 0) {
        free(d);
        Py_DECREF(scap);
        return NULL;
    }
    /* Arrow's CPU producers (pyarrow, nanoarrow) give CPU the id -1 */
    d->device_type = (ArrowDeviceType)b->device.device_type;
    d->device_id =
        b->device.device_type == kDLCPU ? -1 : (int64_t)b->device.device_id;
    d->sync_event = NULL;
    PyObject *acap =
        PyCapsule_New(d, "arrow_device_array", device_capsule_destructor);
    if (acap == NULL) {
        d->array.release(&d->array);
        free(d);
        Py_DECREF(scap);
        return NULL;
    }
    return Py_BuildValue("(NN)", scap, acap);
}
