/* dfbuffer.Buffer.__dlpack__ / __dlpack_device__: DLPack 1.x export.
 *
 * One malloc holds the managed tensor, its shape and strides (and, for
 * copy=True, the copied elements).  Without a copy, manager_ctx is a strong
 * reference to the Buffer; the deleter drops it with the GIL held, or leaks
 * it when the interpreter is gone.
 *
 * Semantics (docs/design.md, "DLPack export"):
 *   - max_version None or major < 1: legacy "dltensor" capsule
 *     (BufferError for read-only memory unless copy=True); else
 *     "dltensor_versioned" with READ_ONLY / IS_COPIED flags.
 *   - strides in elements, always filled; byte_offset 0; data = address of
 *     element 0 (never NULL, also for zero-size buffers).
 *   - bool -> kDLBool 8; int/uint 8..64; float 16/32/64; complex 64/128.
 *     datetime64 / timedelta64, long double and non-native byte order:
 *     BufferError (DLPack has no such types).
 *   - stream: only None on devices without streams (BufferError); CUDA /
 *     ROCm accept the array API's integers, but no synchronisation is done
 *     (dfbuffer links no GPU runtime).
 *   - dl_device: None, the Buffer's own device, or (kDLCPU, 0) for
 *     host-accessible memory (CUDA host / managed, ROCm host); anything
 *     else BufferError.
 *   - copy=True: a C-contiguous host copy (IS_COPIED, writable); needs host
 *     memory and a CPU target.  copy=False: never copies.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/export.h"
#include "dlpack_types.h"
#include "mem.h"

#include <stdlib.h>
#include <string.h>

#define CAPSULE_LEGACY "dltensor"
#define CAPSULE_LEGACY_USED "used_dltensor"
#define CAPSULE_VERSIONED "dltensor_versioned"
#define CAPSULE_VERSIONED_USED "used_dltensor_versioned"

/* Alignment of copied data (a cache line; what NumPy's allocator gives). */
#define COPY_ALIGN 64

/* A non-NULL address for zero-size exports (never read or written). */
static _Alignas(COPY_ALIGN) char zero_size_data[COPY_ALIGN];

/* ------------------------------------------------------------------ */
/* Deleters (may run on any thread, without the GIL, after finalization) */
/* ------------------------------------------------------------------ */

#if PY_VERSION_HEX < 0x030D0000
/* 3.11 and 3.12 have no public Py_IsFinalizing: an atexit callback (run by
   Py_FinalizeEx before it marks the runtime finalizing) sets this flag, so
   the flag is set a little *earlier* than the real state, never later.  A
   plain C int, not a Python object. */
#ifndef __STDC_NO_ATOMICS__
#include <stdatomic.h>
static atomic_int exiting;
#define EXITING_GET() atomic_load(&exiting)
#define EXITING_SET() atomic_store(&exiting, 1)
#else
static volatile int exiting;
#define EXITING_GET() (exiting)
#define EXITING_SET() (exiting = 1)
#endif

/* The atexit callback: marks the interpreter as shutting down. */
static PyObject *
at_exit(PyObject *self, PyObject *unused)
{
    EXITING_SET();
    Py_RETURN_NONE;
}

static PyMethodDef at_exit_def = {"_dfbuffer_at_exit", at_exit, METH_NOARGS,
                                  NULL};
#endif

int
dfb_exit_watch_init(PyObject *module)
{
#if PY_VERSION_HEX < 0x030D0000
    PyObject *fn = PyCFunction_NewEx(&at_exit_def, NULL, NULL);
    if (fn == NULL) {
        return -1;
    }
    PyObject *atexit = PyImport_ImportModule("atexit");
    if (atexit == NULL) {
        Py_DECREF(fn);
        return -1;
    }
    PyObject *r = PyObject_CallMethod(atexit, "register", "O", fn);
    Py_DECREF(atexit);
    Py_DECREF(fn);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
#endif
    (void)module;
    return 0;
}

/* Returns 1 once the interpreter is finalizing (3.11/3.12: once its atexit
   callbacks ran, which is a little earlier).  Safe without the GIL. */
static int
interpreter_finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return EXITING_GET();
#endif
}

void
dfb_decref_any_thread(PyObject *obj)
{
    if (obj == NULL || !Py_IsInitialized()) {
        return;
    }
    if (interpreter_finalizing()) {
        if (PyGILState_Check()) {
            Py_DECREF(obj);
        }
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(obj);
    PyGILState_Release(g);
}

/* Drops the strong reference `ctx` (a Buffer, or NULL for copies): see
   dfb_decref_any_thread.  Never fails. */
static void
release_ctx(void *ctx)
{
    dfb_decref_any_thread((PyObject *)ctx);
}

/* DLManagedTensorVersioned deleter: releases the Buffer, frees the block. */
static void
deleter_versioned(DLManagedTensorVersioned *m)
{
    if (m == NULL) {
        return;
    }
    release_ctx(m->manager_ctx);
    free(m);
}

/* DLManagedTensor (legacy) deleter: releases the Buffer, frees the block. */
static void
deleter_legacy(DLManagedTensor *m)
{
    if (m == NULL) {
        return;
    }
    release_ctx(m->manager_ctx);
    free(m);
}

/* The pending exception, saved around a capsule destructor. */
typedef struct {
    PyObject *exc;
} saved_error;

/* Moves the pending exception (if any) into `s`.  Never fails. */
static void
save_error(saved_error *s)
{
    s->exc = dfb_err_take();
}

/* Restores the exception saved in `s` (dropping any newer one). */
static void
restore_error(saved_error *s)
{
    dfb_err_give(s->exc);
}

/* Capsule destructor for "dltensor_versioned": calls the deleter unless a
   consumer renamed the capsule (took ownership).  Keeps any pending
   exception. */
static void
capsule_destructor_versioned(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, CAPSULE_VERSIONED_USED)) {
        return;
    }
    saved_error saved;
    save_error(&saved);
    DLManagedTensorVersioned *m =
        (DLManagedTensorVersioned *)PyCapsule_GetPointer(cap,
                                                         CAPSULE_VERSIONED);
    if (m == NULL) {
        PyErr_WriteUnraisable(cap);
    }
    else if (m->deleter != NULL) {
        m->deleter(m);
    }
    restore_error(&saved);
}

/* Capsule destructor for legacy "dltensor" (same contract). */
static void
capsule_destructor_legacy(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, CAPSULE_LEGACY_USED)) {
        return;
    }
    saved_error saved;
    save_error(&saved);
    DLManagedTensor *m =
        (DLManagedTensor *)PyCapsule_GetPointer(cap, CAPSULE_LEGACY);
    if (m == NULL) {
        PyErr_WriteUnraisable(cap);
    }
    else if (m->deleter != NULL) {
        m->deleter(m);
    }
    restore_error(&saved);
}

/* ------------------------------------------------------------------ */
/* Argument parsing                                                     */
/* ------------------------------------------------------------------ */

typedef struct {
    PyObject *stream;      /* borrowed; NULL or None = not given */
    PyObject *max_version; /* borrowed */
    PyObject *dl_device;   /* borrowed */
    PyObject *copy;        /* borrowed */
} dlpack_args;

/* Returns the slot of keyword `name` in `a`, or NULL if unknown. */
static PyObject **
keyword_slot(dlpack_args *a, PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        return NULL;
    }
    switch (PyUnicode_GET_LENGTH(name)) {
        case 4:
            return PyUnicode_CompareWithASCIIString(name, "copy") == 0
                       ? &a->copy
                       : NULL;
        case 6:
            return PyUnicode_CompareWithASCIIString(name, "stream") == 0
                       ? &a->stream
                       : NULL;
        case 9:
            return PyUnicode_CompareWithASCIIString(name, "dl_device") == 0
                       ? &a->dl_device
                       : NULL;
        case 11:
            return PyUnicode_CompareWithASCIIString(name, "max_version") == 0
                       ? &a->max_version
                       : NULL;
        default:
            return NULL;
    }
}

/* Fills `a` from fastcall keyword arguments.  Returns 0, or -1 with
   TypeError (positional arguments, unknown or repeated keywords). */
static int
parse_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
           dlpack_args *a)
{
    memset(a, 0, sizeof(*a));
    if (nargs != 0) {
        PyErr_Format(PyExc_TypeError,
                     "__dlpack__() takes keyword arguments only (%zd "
                     "positional given)",
                     nargs);
        return -1;
    }
    if (kwnames == NULL) {
        return 0;
    }
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        PyObject **slot = keyword_slot(a, name);
        if (slot == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "__dlpack__() got an unexpected keyword argument "
                         "%R",
                         name);
            return -1;
        }
        if (*slot != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "__dlpack__() got multiple values for argument %R",
                         name);
            return -1;
        }
        *slot = args[i];
    }
    return 0;
}

/* Converts an int item of a max_version / dl_device tuple.  Returns 0, or
   -1 with TypeError / OverflowError set. */
static int
tuple_int(PyObject *item, const char *what, long *out)
{
    if (!PyLong_Check(item) || PyBool_Check(item)) {
        PyErr_Format(PyExc_TypeError, "%s must hold ints, not %.100s", what,
                     Py_TYPE(item)->tp_name);
        return -1;
    }
    *out = PyLong_AsLong(item);
    if (*out == -1 && PyErr_Occurred()) {
        return -1;
    }
    return 0;
}

/* Parses max_version: None -> *versioned = 0; (major, minor) ints ->
 *versioned = major >= 1.  Returns 0, or -1 with TypeError / ValueError. */
static int
parse_max_version(PyObject *obj, int *versioned)
{
    *versioned = 0;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "max_version must be None or a (major, minor) tuple, "
                     "not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyTuple_GET_SIZE(obj) != 2) {
        PyErr_Format(PyExc_ValueError,
                     "max_version must be a (major, minor) tuple, got %R",
                     obj);
        return -1;
    }
    long major, minor;
    if (tuple_int(PyTuple_GET_ITEM(obj, 0), "max_version", &major) < 0 ||
        tuple_int(PyTuple_GET_ITEM(obj, 1), "max_version", &minor) < 0) {
        return -1;
    }
    if (major < 0 || minor < 0) {
        PyErr_Format(PyExc_ValueError,
                     "max_version must not be negative, got %R", obj);
        return -1;
    }
    *versioned = major >= 1;
    return 0;
}

/* Parses dl_device: a (device_type, device_id) tuple of ints.  Returns 0,
   or -1 with TypeError / ValueError set. */
static int
parse_dl_device(PyObject *obj, DLDevice *out)
{
    if (!PyTuple_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "dl_device must be None or a (device_type, device_id) "
                     "tuple, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyTuple_GET_SIZE(obj) != 2) {
        PyErr_Format(PyExc_ValueError,
                     "dl_device must be a (device_type, device_id) tuple, "
                     "got %R",
                     obj);
        return -1;
    }
    long t, id;
    if (tuple_int(PyTuple_GET_ITEM(obj, 0), "dl_device", &t) < 0 ||
        tuple_int(PyTuple_GET_ITEM(obj, 1), "dl_device", &id) < 0) {
        return -1;
    }
    if (t < 0 || t > INT32_MAX || id < 0 || id > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "dl_device %R is out of range", obj);
        return -1;
    }
    out->device_type = (DLDeviceType)t;
    out->device_id = (int32_t)id;
    return 0;
}

/* Parses copy: None -> -1, True -> 1, False -> 0 in *out.  Returns 0, or
   -1 with TypeError set. */
static int
parse_copy(PyObject *obj, int *out)
{
    if (obj == NULL || obj == Py_None) {
        *out = -1;
    }
    else if (obj == Py_True) {
        *out = 1;
    }
    else if (obj == Py_False) {
        *out = 0;
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "copy must be None, True or False, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    return 0;
}

/* Returns 1 for device types whose memory the CPU can read directly. */
static int
host_accessible(DLDeviceType t)
{
    return t == kDLCPU || t == kDLCUDAHost || t == kDLCUDAManaged ||
           t == kDLROCMHost;
}

/* Checks `stream` for export to device type `t`.  Returns 0, or -1 with
   BufferError (stream on a device without streams), TypeError or
   ValueError (a value the array API does not allow). */
static int
check_stream(PyObject *stream, DLDeviceType t)
{
    if (stream == NULL || stream == Py_None) {
        return 0;
    }
    int cuda = t == kDLCUDA || t == kDLCUDAManaged;
    int rocm = t == kDLROCM;
    if (!cuda && !rocm) {
        PyErr_Format(PyExc_BufferError,
                     "stream must be None for device type %d (it has no "
                     "streams), got %R",
                     (int)t, stream);
        return -1;
    }
    if (!PyLong_Check(stream) || PyBool_Check(stream)) {
        PyErr_Format(PyExc_TypeError, "stream must be an int, not %.100s",
                     Py_TYPE(stream)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(stream, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    /* Stream handles are pointers: any positive value is allowed. */
    if (overflow > 0) {
        return 0;
    }
    if (overflow < 0 || v < -1 || (cuda && v == 0) ||
        (rocm && (v == 1 || v == 2))) {
        PyErr_Format(PyExc_ValueError,
                     "stream %R is not allowed for %s (see the array API's "
                     "__dlpack__)",
                     stream, cuda ? "CUDA" : "ROCm");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Tensor description                                                   */
/* ------------------------------------------------------------------ */

/* Fills `out` with the DLPack type of `d`.  Returns 0, or -1 with
   BufferError for types DLPack cannot describe. */
static int
dlpack_dtype(PyArray_Descr *d, DLDataType *out)
{
    Py_ssize_t size = PyDataType_ELSIZE(d);
    if (!PyArray_ISNBO(d->byteorder)) {
        PyErr_Format(PyExc_BufferError,
                     "DLPack supports only native byte order, not dtype %R",
                     (PyObject *)d);
        return -1;
    }
    if (d->kind == 'M' || d->kind == 'm') {
        PyErr_Format(PyExc_BufferError,
                     "DLPack has no datetime or timedelta type (dtype "
                     "%R); view the Buffer as int64 first",
                     (PyObject *)d);
        return -1;
    }
    /* core's mapping, by kind and size */
    if (size <= INT32_MAX &&
        dfb_dlpack_from_numpy(d->kind, (int)size, &out->code, &out->bits) ==
            0) {
        out->lanes = 1;
        return 0;
    }
    PyErr_Format(PyExc_BufferError, "dtype %R has no DLPack equivalent",
                 (PyObject *)d);
    return -1;
}

/* Layout of the single allocation. */
typedef struct {
    size_t header;    /* sizeof the managed struct, rounded for int64 */
    size_t shape_off; /* offset of int64 shape[ndim] */
    size_t strides_off;
    size_t data_off; /* offset of copied data (0 if no copy) */
    size_t total;
} block_layout;

/* Computes the layout for a managed struct of `head` bytes with `ndim`
   dims and `copy_bytes` of copied data.  Returns 0, or -1 with
   MemoryError on overflow. */
static int
layout_block(size_t head, int ndim, Py_ssize_t copy_bytes, int copy,
             block_layout *l)
{
    l->header = (head + 7) & ~(size_t)7;
    l->shape_off = l->header;
    l->strides_off = l->shape_off + (size_t)ndim * sizeof(int64_t);
    l->total = l->strides_off + (size_t)ndim * sizeof(int64_t);
    l->data_off = 0;
    if (copy) {
        /* malloc aligns to at least 16; pad so data can be aligned to
           COPY_ALIGN inside the block. */
        if ((size_t)copy_bytes > SIZE_MAX - l->total - COPY_ALIGN) {
            PyErr_NoMemory();
            return -1;
        }
        l->data_off = l->total;
        l->total += COPY_ALIGN + (size_t)copy_bytes;
    }
    return 0;
}

/* Copies the elements of `b` into C-contiguous `dst` (nbytes bytes).  Pure
   C; safe without the GIL.  Never fails. */
static void
copy_to_c_order(const DfbBuffer *b, char *dst, Py_ssize_t itemsize,
                Py_ssize_t nbytes)
{
    int ndim = b->ndim;
    if (nbytes == 0) {
        return;
    }
    if (dfb_is_c_contiguous(ndim, b->shape, b->strides, itemsize)) {
        dfb_memcpy(dst, b->data, (size_t)nbytes);
        return;
    }
    /* ndim >= 1 here (0-d is always contiguous).  Iterate the outer dims
       with an index counter, copy the innermost dim in one go. */
    Py_ssize_t idx[DFB_MAXDIM] = {0};
    const Py_ssize_t inner_n = b->shape[ndim - 1];
    const Py_ssize_t inner_s = b->strides[ndim - 1];
    const char *src = b->data;
    for (;;) {
        if (inner_s == itemsize) {
            dfb_memcpy(dst, src, (size_t)(inner_n * itemsize));
            dst += inner_n * itemsize;
        }
        else {
            /* src + j * inner_s: no pointer past the block after the
               last element (UB for negative strides). */
            for (Py_ssize_t j = 0; j < inner_n; j++) {
                dfb_memcpy(dst, src + j * inner_s, (size_t)itemsize);
                dst += itemsize;
            }
        }
        int k = ndim - 2;
        for (; k >= 0; k--) {
            if (++idx[k] < b->shape[k]) {
                src += b->strides[k];
                break;
            }
            src -= (idx[k] - 1) * b->strides[k];
            idx[k] = 0;
        }
        if (k < 0) {
            return;
        }
    }
}

/* Fills dl_tensor `t` inside block `base` (layout `l`) from `b`.  With
   `copy`, copies the elements (C order) and describes the copy.  Returns
   0, or -1 with BufferError (a byte stride not a multiple of the
   itemsize). */
static int
fill_tensor(DfbBuffer *b, DLTensor *t, char *base, const block_layout *l,
            DLDataType dt, DLDevice dev, int copy)
{
    int ndim = b->ndim;
    Py_ssize_t itemsize = PyDataType_ELSIZE(b->dtype);
    int64_t *shape = (int64_t *)(base + l->shape_off);
    int64_t *strides = (int64_t *)(base + l->strides_off);
    Py_ssize_t size = 1;
    for (int i = 0; i < ndim; i++) {
        shape[i] = b->shape[i];
        size *= b->shape[i];
    }
    /* C-order element strides, used for copies and where the stride does
       not matter (size-1 dims, zero-size tensors). */
    int64_t cs = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        int64_t s;
        Py_ssize_t bs = b->strides[i];
        if (copy) {
            s = cs;
        }
        else if (bs % itemsize == 0) {
            s = bs / itemsize;
        }
        else if (b->shape[i] <= 1 || size == 0) {
            s = cs;
        }
        else {
            PyErr_Format(PyExc_BufferError,
                         "DLPack strides count elements, but stride %zd of "
                         "dimension %d is not a multiple of the itemsize "
                         "%zd",
                         bs, i, itemsize);
            return -1;
        }
        strides[i] = s;
        cs *= b->shape[i] > 1 ? b->shape[i] : 1;
    }
    char *data;
    if (copy) {
        uintptr_t p = (uintptr_t)(base + l->data_off);
        p = (p + COPY_ALIGN - 1) & ~(uintptr_t)(COPY_ALIGN - 1);
        data = (char *)p;
        Py_ssize_t nbytes = size * itemsize;
        if (nbytes >= (1 << 20)) {
            Py_BEGIN_ALLOW_THREADS copy_to_c_order(b, data, itemsize, nbytes);
            Py_END_ALLOW_THREADS
        }
        else {
            copy_to_c_order(b, data, itemsize, nbytes);
        }
    }
    else {
        data = (size == 0 || b->data == NULL) ? zero_size_data : b->data;
    }
    t->data = data;
    t->device = dev;
    t->ndim = ndim;
    t->dtype = dt;
    t->shape = shape;
    t->strides = strides;
    t->byte_offset = 0;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                         */
/* ------------------------------------------------------------------ */

PyObject *
dfb_buffer_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    DfbBuffer *b = (DfbBuffer *)self;
    dlpack_args a;
    int versioned, copy;
    if (parse_args(args, nargs, kwnames, &a) < 0 ||
        parse_max_version(a.max_version, &versioned) < 0 ||
        parse_copy(a.copy, &copy) < 0) {
        return NULL;
    }
    if (b->owner == NULL) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer was cleared by the garbage collector");
        return NULL;
    }
    /* The device of the export. */
    DLDevice dev = b->device;
    if (a.dl_device != NULL && a.dl_device != Py_None) {
        DLDevice want;
        if (parse_dl_device(a.dl_device, &want) < 0) {
            return NULL;
        }
        if (want.device_type == dev.device_type &&
            want.device_id == dev.device_id) {
            /* own device */
        }
        else if (want.device_type == kDLCPU && want.device_id == 0 &&
                 host_accessible(dev.device_type)) {
            dev = want; /* host-accessible memory, no copy needed */
        }
        else {
            PyErr_Format(PyExc_BufferError,
                         "cannot export a Buffer on device (%d, %d) to "
                         "dl_device %R%s",
                         (int)b->device.device_type, (int)b->device.device_id,
                         a.dl_device,
                         copy == 0 ? " without a copy (copy=False)"
                                   : ": dfbuffer copies only to the CPU "
                                     "from host-accessible memory");
            return NULL;
        }
    }
    if (check_stream(a.stream, dev.device_type) < 0) {
        return NULL;
    }
    DLDataType dt;
    if (dlpack_dtype(b->dtype, &dt) < 0) {
        return NULL;
    }
    if (copy == 1) {
        if (dev.device_type != kDLCPU) {
            PyErr_Format(PyExc_BufferError,
                         "copy=True: dfbuffer can copy only to the CPU; pass "
                         "dl_device=(1, 0) for memory on device (%d, %d)",
                         (int)b->device.device_type, (int)b->device.device_id);
            return NULL;
        }
    }
    else if (!versioned && b->readonly) {
        PyErr_SetString(PyExc_BufferError,
                        "cannot export read-only memory as a legacy DLPack "
                        "capsule (it has no read-only flag); pass "
                        "max_version=(1, 0) or copy=True");
        return NULL;
    }

    Py_ssize_t itemsize = PyDataType_ELSIZE(b->dtype);
    Py_ssize_t nbytes = copy == 1 ? dfb_buffer_size(b) * itemsize : 0;
    block_layout l;
    if (layout_block(versioned ? sizeof(DLManagedTensorVersioned)
                               : sizeof(DLManagedTensor),
                     b->ndim, nbytes, copy == 1, &l) < 0) {
        return NULL;
    }
    char *base = malloc(l.total);
    if (base == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *cap;
    if (versioned) {
        DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)base;
        m->version.major = DLPACK_MAJOR_VERSION;
        m->version.minor = DLPACK_MINOR_VERSION;
        m->manager_ctx = NULL;
        m->deleter = deleter_versioned;
        m->flags = 0;
        if (copy == 1) {
            m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
        }
        else if (b->readonly) {
            m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
        }
        if (fill_tensor(b, &m->dl_tensor, base, &l, dt, dev, copy == 1) < 0) {
            free(base);
            return NULL;
        }
        cap =
            PyCapsule_New(m, CAPSULE_VERSIONED, capsule_destructor_versioned);
        if (cap != NULL && copy != 1) {
            m->manager_ctx = Py_NewRef(self);
        }
    }
    else {
        DLManagedTensor *m = (DLManagedTensor *)base;
        m->manager_ctx = NULL;
        m->deleter = deleter_legacy;
        if (fill_tensor(b, &m->dl_tensor, base, &l, dt, dev, copy == 1) < 0) {
            free(base);
            return NULL;
        }
        cap = PyCapsule_New(m, CAPSULE_LEGACY, capsule_destructor_legacy);
        if (cap != NULL && copy != 1) {
            m->manager_ctx = Py_NewRef(self);
        }
    }
    if (cap == NULL) {
        free(base);
        return NULL;
    }
    return cap;
}

PyObject *
dfb_buffer_dlpack_device(PyObject *self, PyObject *unused)
{
    DfbBuffer *b = (DfbBuffer *)self;
    dfb_state *st = dfb_state_from_type(Py_TYPE(self));
    if (st == NULL) {
        return NULL;
    }
    /* (DeviceType member, int), as the interchange spec types it; the
       member still compares equal to the int */
    PyObject *t = dfb_enum_member(st->device_type, b->device.device_type);
    if (t == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Ni)", t, (int)b->device.device_id);
}
