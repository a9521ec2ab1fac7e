/* dfbuffer: the Arrow C device data interface through the PyCapsule
 * interface, both ways.
 *
 * Import.  obj.__arrow_c_device_array__() (or each chunk of
 * obj.__arrow_c_device_stream__()) gives an ArrowDeviceArray: an ordinary
 * ArrowArray whose buffers live on a device, plus the device and an
 * optional sync event.  Releasing the device array is releasing its
 * embedded ArrowArray, so the importer moves that embedded array into
 * arrow_import.c's holders (dfb_arrow_device_import): CPU data then takes
 * exactly the path of __arrow_c_array__, and data on any other device is
 * described here without reading a byte of it (dfb_arrow_device_buffer for
 * Buffer.from_object, dfb_arrow_device_describe for to_interchange).  Only
 * the structs (ArrowArray, its buffers list, children, dictionary) are read
 * on the host, as the specification says they are host memory.  A
 * non-NULL sync_event is refused: dfbuffer links no device runtime to wait
 * on it.
 *
 * Export.  Buffer.__arrow_c_device_array__ describes a 1-D contiguous
 * primitive Buffer on any device without copying; the embedded ArrowArray's
 * private data holds a strong reference to the Buffer, dropped by its
 * release callback.  sync_event is always NULL (the interface defines no
 * stream keyword yet, and a non-None value of any keyword other than
 * requested_schema raises NotImplementedError, as the PyCapsule interface
 * asks of producers).
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/arrow_internal.h"
#include "dfbuffer/arrow_device.h"
#include "format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

/* Saves and restores the pending exception around code that may run
   Python (release callbacks). */
#define SAVE_EXC PyObject *saved_exc_ = dfb_err_take()
#define RESTORE_EXC dfb_err_give(saved_exc_)

/* Returns a human name for DLPack / Arrow device type `t` (never NULL). */
static const char *
device_name(int t)
{
    switch (t) {
        case kDLCPU:
            return "CPU";
        case kDLCUDA:
            return "CUDA";
        case kDLCUDAHost:
            return "CUDA host (pinned)";
        case kDLOpenCL:
            return "OpenCL";
        case kDLVulkan:
            return "Vulkan";
        case kDLMetal:
            return "Metal";
        case kDLVPI:
            return "VPI";
        case kDLROCM:
            return "ROCm";
        case kDLROCMHost:
            return "ROCm host (pinned)";
        case kDLExtDev:
            return "ext_dev";
        case kDLCUDAManaged:
            return "CUDA managed";
        case kDLOneAPI:
            return "oneAPI";
        case kDLWebGPU:
            return "WebGPU";
        case kDLHexagon:
            return "Hexagon";
        case kDLMAIA:
            return "MAIA";
        case kDLTrn:
            return "Trainium";
        default:
            return NULL;
    }
}

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
    if (device_name(type) == NULL) {
        PyErr_Format(PyExc_ValueError, "unknown Arrow device type %d",
                     (int)type);
        return -1;
    }
    if (id < 0 || id > INT32_MAX) {
        PyErr_Format(PyExc_ValueError,
                     "Arrow device id %lld is outside [0, 2**31) for device "
                     "type %d (%s)",
                     (long long)id, (int)type, device_name(type));
        return -1;
    }
    out->device_type = (DLDeviceType)type;
    out->device_id = (int32_t)id;
    return 0;
}

int
dfb_arrow_device_refuse(DLDevice device, const char *what)
{
    const char *name = device_name(device.device_type);
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
/* Import                                                               */
/* ------------------------------------------------------------------ */

/* Checks the device fields of one device array and converts its device.
   Returns 0, or -1 with ValueError / BufferError set. */
static int
check_device_array(const struct ArrowDeviceArray *d, DLDevice *out)
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
                     device_name(out->device_type), (int)out->device_id);
        return -1;
    }
    return 0;
}

/* Moves the (schema, device array) capsules of
   obj.__arrow_c_device_array__ (`meth`) into `schema` and one slot.
   Returns 0, or -1 with an exception set. */
static int
import_device_array(PyObject *meth, struct ArrowSchema *schema,
                    dfb_arrow_slot_fn slot, void *ctx, DLDevice *device)
{
    PyObject *res = PyObject_CallNoArgs(meth);
    if (res == NULL) {
        return -1;
    }
    int ret = -1;
    if (dfb_arrow_check_pair(res, "__arrow_c_device_array__",
                             "device array capsule") < 0) {
        goto done;
    }
    PyObject *sc = PyTuple_GET_ITEM(res, 0), *ac = PyTuple_GET_ITEM(res, 1);
    struct ArrowSchema *s = dfb_arrow_capsule_pointer(
        sc, "arrow_schema", "__arrow_c_device_array__()[0]");
    if (s == NULL) {
        goto done;
    }
    struct ArrowDeviceArray *d = dfb_arrow_capsule_pointer(
        ac, "arrow_device_array", "__arrow_c_device_array__()[1]");
    if (d == NULL) {
        goto done;
    }
    if (s->release == NULL || d->array.release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the capsules of __arrow_c_device_array__ hold a "
                        "released schema or array (already consumed)");
        goto done;
    }
    struct ArrowArray *dst = slot(ctx);
    if (dst == NULL) {
        goto done;
    }
    *schema = *s;
    s->release = NULL;
    *dst = d->array;
    d->array.release = NULL;
    /* moved: from here on the caller releases both */
    ret = check_device_array(d, device);
done:
    Py_DECREF(res);
    return ret;
}

/* Sets the exception for a failed device stream callback with errno `rc`
   (EINVAL -> ValueError, ENOMEM -> MemoryError, ENOSYS ->
   NotImplementedError, else OSError).  Always returns -1. */
static int
stream_error(struct ArrowDeviceArrayStream *stream, int rc, const char *what)
{
    const char *msg = NULL;
    if (stream->get_last_error != NULL) {
        msg = stream->get_last_error(stream);
    }
    return dfb_arrow_stream_failed("Arrow device stream", what, rc, msg);
}

/* Moves the stream of obj.__arrow_c_device_stream__ (`meth`): its schema
   and every chunk.  Returns 0, or -1 with an exception set. */
static int
import_device_stream(PyObject *meth, struct ArrowSchema *schema,
                     dfb_arrow_slot_fn slot, void *ctx, DLDevice *device)
{
    PyObject *cap = PyObject_CallNoArgs(meth);
    if (cap == NULL) {
        return -1;
    }
    struct ArrowDeviceArrayStream *src = dfb_arrow_capsule_pointer(
        cap, "arrow_device_array_stream", "__arrow_c_device_stream__()");
    if (src == NULL) {
        Py_DECREF(cap);
        return -1;
    }
    if (src->release == NULL) {
        Py_DECREF(cap);
        PyErr_SetString(PyExc_ValueError,
                        "the 'arrow_device_array_stream' capsule holds a "
                        "released stream (already consumed)");
        return -1;
    }
    struct ArrowDeviceArrayStream stream = *src;
    src->release = NULL;
    Py_DECREF(cap);
    int ret = -1, first = 1;
    if (stream.get_schema == NULL || stream.get_next == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the Arrow device stream has no get_schema/get_next");
        goto done;
    }
    if (to_dldevice(stream.device_type, 0, device) < 0) {
        goto done;
    }
    int rc = stream.get_schema(&stream, schema);
    if (rc != 0) {
        stream_error(&stream, rc, "get_schema");
        goto done;
    }
    if (schema->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the Arrow device stream gave a released schema");
        goto done;
    }
    for (;;) {
        struct ArrowDeviceArray d;
        memset(&d, 0, sizeof(d));
        rc = stream.get_next(&stream, &d);
        if (rc != 0) {
            stream_error(&stream, rc, "get_next");
            goto done;
        }
        if (d.array.release == NULL) {
            break; /* end of stream */
        }
        struct ArrowArray *dst = slot(ctx);
        if (dst == NULL) {
            SAVE_EXC;
            d.array.release(&d.array);
            RESTORE_EXC;
            goto done;
        }
        *dst = d.array; /* moved: the caller releases it */
        DLDevice dev;
        if (d.device_type != stream.device_type) {
            PyErr_Format(PyExc_ValueError,
                         "the Arrow device stream is on device type %d but "
                         "gave a chunk on device type %d",
                         (int)stream.device_type, (int)d.device_type);
            goto done;
        }
        if (check_device_array(&d, &dev) < 0) {
            goto done;
        }
        if (first) {
            *device = dev;
            first = 0;
        }
        else if (dev.device_id != device->device_id) {
            PyErr_Format(PyExc_NotImplementedError,
                         "the Arrow device stream's chunks are on different "
                         "devices (%s:%d and %s:%d)",
                         device_name(device->device_type),
                         (int)device->device_id, device_name(dev.device_type),
                         (int)dev.device_id);
            goto done;
        }
    }
    ret = 0;
done:
    {
        SAVE_EXC;
        stream.release(&stream);
        RESTORE_EXC;
    }
    return ret;
}

int
dfb_arrow_device_import(PyObject *obj, struct ArrowSchema *schema,
                        dfb_arrow_slot_fn slot, void *ctx, DLDevice *device)
{
    PyObject *meth;
    int r = dfb_getattr_optional_str(obj, "__arrow_c_device_array__", &meth);
    if (r < 0) {
        return -1;
    }
    if (r > 0) {
        r = import_device_array(meth, schema, slot, ctx, device);
        Py_DECREF(meth);
        return r;
    }
    r = dfb_getattr_optional_str(obj, "__arrow_c_device_stream__", &meth);
    if (r < 0) {
        return -1;
    }
    if (r == 0) {
        PyErr_Format(PyExc_TypeError,
                     "%.100s object has no __arrow_c_device_array__ or "
                     "__arrow_c_device_stream__",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    r = import_device_stream(meth, schema, slot, ctx, device);
    Py_DECREF(meth);
    return r;
}

/* ------------------------------------------------------------------ */
/* Describing device arrays without reading them                        */
/* ------------------------------------------------------------------ */

/* Returns a new reference to the NumPy dtype of the stored values of a
   fixed-width format (uint8 for bit-packed data), or NULL with an
   exception. */
static PyArray_Descr *
stored_descr(const dfb_format *f)
{
    char ts[32];
    if (f->type == DFB_T_BOOL_BIT) {
        return PyArray_DescrFromType(NPY_UINT8);
    }
    if (dfb_format_numpy_typestr(f, ts, sizeof(ts)) < 0) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "no fixed-width NumPy type for this Arrow format");
        return NULL;
    }
    return dfb_descr_from_typestr(ts);
}

/* Checks the fields of device array `a` for the element range [offset,
   offset + length) with `nbuf` buffers; stores offset + length in *end.
   Returns 0, or -1 with ValueError naming column `name`. */
static int
check_array(const struct ArrowArray *a, int64_t offset, int64_t length,
            int64_t nbuf, const char *name, int64_t *end)
{
    if (a->release == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': the Arrow array was released", name);
        return -1;
    }
    if (a->length < 0 || a->offset < 0 || offset < 0 || length < 0 ||
        __builtin_add_overflow(offset, length, end)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': negative or overflowing length %lld / "
                     "offset %lld",
                     name, (long long)length, (long long)offset);
        return -1;
    }
    if (a->null_count < -1 || a->null_count > a->length) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': null_count %lld is outside [-1, length "
                     "%lld]",
                     name, (long long)a->null_count, (long long)a->length);
        return -1;
    }
    if (a->n_buffers != nbuf || (nbuf > 0 && a->buffers == NULL)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': expected %lld buffers, got %lld%s", name,
                     (long long)nbuf, (long long)a->n_buffers,
                     a->buffers == NULL ? " (NULL list)" : "");
        return -1;
    }
    return 0;
}

/* Makes a read-only 1-D device Buffer of `descr` (stolen; NULL: an error
   is set) over `size` bytes from byte `start` of `ptr`, owned by `holder`.
   Returns a new reference or NULL with ValueError (NULL pointer with data)
   or the constructor's error. */
static PyObject *
device_span(dfb_state *st, const void *ptr, int64_t start, int64_t size,
            PyArray_Descr *descr, PyObject *holder, DLDevice device,
            const char *name, const char *what)
{
    if (descr == NULL) {
        return NULL;
    }
    if (size > PY_SSIZE_T_MAX || start > PY_SSIZE_T_MAX) {
        Py_DECREF(descr);
        PyErr_Format(PyExc_ValueError, "column '%s': %s buffer too large",
                     name, what);
        return NULL;
    }
    if (size > 0 && ptr == NULL) {
        Py_DECREF(descr);
        PyErr_Format(PyExc_ValueError,
                     "column '%s': the %s buffer is NULL but holds %lld "
                     "bytes",
                     name, what, (long long)size);
        return NULL;
    }
    char *p = size == 0 ? NULL : (char *)((uintptr_t)ptr + (uintptr_t)start);
    PyObject *b = dfb_buffer_new(st, p, (Py_ssize_t)size, holder, descr, 1,
                                 NULL, NULL, device, 1, DFB_NATIVE_ARROW);
    Py_DECREF(descr);
    return b;
}

/* Returns a new chunk dict {length, error} whose error is a new `exc`
   with message `msg` about column `name`, or NULL with an exception. */
static PyObject *
error_chunk(int64_t length, PyObject *exc, const char *name, const char *msg,
            DLDevice device)
{
    PyObject *e = PyObject_CallFunction(
        exc, "N",
        PyUnicode_FromFormat("column '%s': %s (the data is on device %s:%d, "
                             "which dfbuffer does not read)",
                             name, msg, device_name(device.device_type),
                             (int)device.device_id));
    if (e == NULL) {
        return NULL;
    }
    return Py_BuildValue("{sLsN}", "length", (long long)length, "error", e);
}

/* Returns a new chunk dict (see _arrow_import) for elements [offset,
   offset + length) of device array `a` of schema `s`, or an error chunk
   for what cannot be described without reading device memory, or NULL
   with ValueError for malformed arrays. */
static PyObject *
device_chunk(dfb_state *st, const struct ArrowSchema *s,
             const struct ArrowArray *a, int64_t offset, int64_t length,
             PyObject *holder, DLDevice device, const char *name)
{
    dfb_format f;
    if (s->format == NULL) {
        PyErr_Format(PyExc_ValueError, "column '%s': schema has no format",
                     name);
        return NULL;
    }
    if (dfb_format_parse_arrow(s->format, &f) < 0) {
        return error_chunk(length, PyExc_NotImplementedError, name,
                           "this Arrow format is not supported", device);
    }
    if ((s->dictionary != NULL) != (a->dictionary != NULL) ||
        s->n_children != 0 || a->n_children != 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': schema and array disagree about the "
                     "dictionary, or a primitive array has children",
                     name);
        return NULL;
    }
    int64_t nbuf = f.type == DFB_T_NULL ? 0 : 2;
    switch (f.type) {
        case DFB_T_UTF8:
        case DFB_T_LARGE_UTF8:
        case DFB_T_BINARY:
        case DFB_T_LARGE_BINARY:
        case DFB_T_STRING_VIEW:
            return error_chunk(length, PyExc_NotImplementedError, name,
                               "variable-width data: its size is stored in "
                               "its offsets",
                               device);
        default:
            break;
    }
    int64_t end;
    if (check_array(a, offset, length, nbuf, name, &end) < 0) {
        return NULL;
    }
    PyObject *validity = Py_None, *data = Py_None, *dict = Py_None;
    PyObject *null_count;
    Py_INCREF(validity);
    Py_INCREF(data);
    Py_INCREF(dict);
    int whole = offset == a->offset && length == a->length;
    if (f.type == DFB_T_NULL) {
        null_count = PyLong_FromLongLong(length);
    }
    else if (a->buffers[0] == NULL || a->null_count == 0) {
        if (a->buffers[0] == NULL && a->null_count > 0) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': null_count %lld but no validity "
                         "bitmap",
                         name, (long long)a->null_count);
            goto fail_early;
        }
        null_count = PyLong_FromLong(0);
    }
    else {
        /* nulls we cannot count on the host unless the producer did */
        null_count = whole && a->null_count > 0
                         ? PyLong_FromLongLong(a->null_count)
                         : Py_NewRef(Py_None);
        Py_SETREF(validity, device_span(st, a->buffers[0], 0, (end + 7) / 8,
                                        PyArray_DescrFromType(NPY_UINT8),
                                        holder, device, name, "validity"));
        if (validity == NULL) {
            goto fail;
        }
    }
    if (null_count == NULL) {
        goto fail;
    }
    if (f.type != DFB_T_NULL) {
        int64_t size;
        if (f.type == DFB_T_BOOL_BIT) {
            size = (end + 7) / 8;
        }
        else {
            int itemsize = dfb_format_itemsize(&f);
            if (itemsize <= 0) {
                Py_DECREF(validity);
                Py_DECREF(data);
                Py_DECREF(dict);
                Py_DECREF(null_count);
                return error_chunk(length, PyExc_NotImplementedError, name,
                                   "this Arrow format is not supported",
                                   device);
            }
            if (__builtin_mul_overflow(end, (int64_t)itemsize, &size)) {
                PyErr_Format(PyExc_ValueError,
                             "column '%s': the buffer size overflows", name);
                goto fail;
            }
        }
        Py_SETREF(data,
                  device_span(st, a->buffers[1], 0, size, stored_descr(&f),
                              holder, device, name, "data"));
        if (data == NULL) {
            goto fail;
        }
    }
    if (s->dictionary != NULL) {
        const struct ArrowArray *da = a->dictionary;
        if (f.type != DFB_T_INT && f.type != DFB_T_UINT) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': dictionary index format '%s' is not "
                         "an integer type",
                         name, s->format);
            goto fail;
        }
        if (s->dictionary->dictionary != NULL) {
            Py_SETREF(dict, error_chunk(da->length, PyExc_NotImplementedError,
                                        name, "nested dictionaries", device));
        }
        else {
            Py_SETREF(dict, device_chunk(st, s->dictionary, da, da->offset,
                                         da->length, holder, device, name));
        }
        if (dict == NULL) {
            goto fail;
        }
    }
    return Py_BuildValue("{sLsLsNsNsOsNsN}", "length", (long long)length,
                         "offset", (long long)offset, "null_count", null_count,
                         "validity", validity, "offsets", Py_None, "data",
                         data, "dictionary", dict);
fail:
    Py_XDECREF(null_count);
fail_early:
    Py_XDECREF(validity);
    Py_XDECREF(data);
    Py_XDECREF(dict);
    return NULL;
}

/* Validates the top-level struct of a device table import (without
   reading its validity bitmap).  Returns 0, or -1 with ValueError /
   NotImplementedError set. */
static int
check_table(const struct ArrowSchema *s, struct ArrowArray *const *arrays,
            Py_ssize_t n)
{
    if (dfb_arrow_check_struct_schema(s) < 0) {
        return -1;
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        const struct ArrowArray *a = arrays[b];
        int64_t end;
        if (check_array(a, a->offset, a->length, 1, "(struct)", &end) < 0) {
            return -1;
        }
        if (dfb_arrow_check_struct_children(s, a) < 0) {
            return -1;
        }
        if (a->buffers[0] != NULL && a->null_count != 0) {
            PyErr_SetString(PyExc_NotImplementedError,
                            "a device struct array with a validity bitmap "
                            "(null rows, or an unknown null count) cannot be "
                            "presented as a table");
            return -1;
        }
        for (int64_t c = 0; c < a->n_children; c++) {
            const struct ArrowArray *ch = a->children[c];
            if (ch == NULL || ch->length < end) {
                PyErr_Format(PyExc_ValueError,
                             "struct child %lld is NULL or shorter than the "
                             "struct's offset + length %lld",
                             (long long)c, (long long)end);
                return -1;
            }
        }
    }
    return 0;
}

PyObject *
dfb_arrow_device_describe(dfb_state *st, const struct ArrowSchema *s,
                          struct ArrowArray *const *arrays,
                          PyObject *const *holders, Py_ssize_t n,
                          DLDevice device)
{
    int is_table = s->format != NULL && strcmp(s->format, "+s") == 0;
    if (is_table && check_table(s, arrays, n) < 0) {
        return NULL;
    }
    int64_t ncols = is_table ? s->n_children : 1;
    PyObject *columns = PyList_New(0), *chunks = PyList_New(0);
    PyObject *result = NULL;
    if (columns == NULL || chunks == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < ncols; c++) {
        const struct ArrowSchema *cs = is_table ? s->children[c] : s;
        if (cs->format == NULL) {
            PyErr_SetString(PyExc_ValueError,
                            "the Arrow schema has no format");
            goto done;
        }
        const char *dfmt = cs->dictionary ? cs->dictionary->format : NULL;
        PyObject *item = Py_BuildValue(
            "(ssNOO)", cs->name ? cs->name : "", cs->format,
            dfmt ? PyUnicode_FromString(dfmt) : Py_NewRef(Py_None),
            (cs->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? Py_True : Py_False,
            (cs->flags & ARROW_FLAG_NULLABLE) ? Py_True : Py_False);
        if (item == NULL || PyList_Append(columns, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        PyObject *row = PyList_New(ncols);
        if (row == NULL || PyList_Append(chunks, row) < 0) {
            Py_XDECREF(row);
            goto done;
        }
        Py_DECREF(row);
        const struct ArrowArray *top = arrays[b];
        for (int64_t c = 0; c < ncols; c++) {
            const struct ArrowSchema *cs = is_table ? s->children[c] : s;
            const struct ArrowArray *a = is_table ? top->children[c] : top;
            int64_t off = a->offset;
            if (is_table &&
                __builtin_add_overflow(a->offset, top->offset, &off)) {
                PyErr_Format(PyExc_ValueError,
                             "column %lld has an overflowing offset",
                             (long long)c);
                goto done;
            }
            PyObject *d = device_chunk(st, cs, a, off, top->length, holders[b],
                                       device, cs->name ? cs->name : "");
            if (d == NULL) {
                goto done;
            }
            PyList_SET_ITEM(row, c, d);
        }
    }
    result =
        Py_BuildValue("(OOO)", is_table ? Py_True : Py_False, columns, chunks);
done:
    Py_XDECREF(columns);
    Py_XDECREF(chunks);
    return result;
}

PyObject *
dfb_arrow_device_buffer(dfb_state *st, const struct ArrowSchema *s,
                        const struct ArrowArray *a, PyObject *holder,
                        DLDevice device, PyObject *dtype)
{
    dfb_format f;
    if (s->format == NULL || dfb_format_parse_arrow(s->format, &f) < 0 ||
        s->dictionary != NULL || f.type == DFB_T_BOOL_BIT ||
        dfb_format_itemsize(&f) <= 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Buffer.from_object wraps fixed-width primitive Arrow "
                     "arrays only, not format '%s'",
                     s->format ? s->format : "(null)");
        return NULL;
    }
    int64_t end, size, start;
    int itemsize = dfb_format_itemsize(&f);
    if (check_array(a, a->offset, a->length, 2, "", &end) < 0) {
        return NULL;
    }
    if (a->n_children != 0 || a->dictionary != NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "a primitive Arrow array has children or a "
                        "dictionary");
        return NULL;
    }
    if (__builtin_mul_overflow(a->length, (int64_t)itemsize, &size) ||
        __builtin_mul_overflow(a->offset, (int64_t)itemsize, &start) ||
        size > PY_SSIZE_T_MAX || start > PY_SSIZE_T_MAX - size) {
        PyErr_SetString(PyExc_ValueError,
                        "the Arrow array's buffer size overflows");
        return NULL;
    }
    PyArray_Descr *stored = stored_descr(&f);
    if (stored == NULL) {
        return NULL;
    }
    PyArray_Descr *d = dfb_parse_dtype(dtype, stored);
    Py_DECREF(stored);
    if (d == NULL) {
        return NULL;
    }
    if (PyDataType_ELSIZE(d) != itemsize) {
        PyErr_Format(
            PyExc_ValueError, "dtype %R has itemsize %zd, the Arrow values %d",
            (PyObject *)d, (Py_ssize_t)PyDataType_ELSIZE(d), itemsize);
        Py_DECREF(d);
        return NULL;
    }
    /* device_span steals d */
    return device_span(st, a->buffers[1], start, size, d, holder, device, "",
                       "values");
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
    SAVE_EXC;
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
    RESTORE_EXC;
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
