/* dfbuffer: DLPack 1.x, both directions: the import of Buffer.from_object
 * (a capsule, or a producer's __dlpack__) and the export of
 * dfbuffer.Buffer.__dlpack__ / __dlpack_device__ (its keywords are parsed
 * in dlpack_args.c).
 *
 * Import: a capsule is validated, renamed "used_..." and its managed tensor
 * handed to a GC-tracked owner, dfbuffer.dlpack_owner, whose dealloc calls
 * the producer's deleter exactly once.
 *
 * Export:  * One malloc holds the managed tensor, its shape and strides (and,
 * for copy=True, the copied elements).  Without a copy, manager_ctx is a
 * strong reference to the Buffer; the deleter drops it with the GIL held, or
 * leaks it when the interpreter is gone.
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
#include "common.h"
#include "state.h"
#include "model.h"
#include "exchange.h"
#include "dlpack_types.h"
#include "checked.h"
#include "mem.h"
#include "sizes.h"

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

/* Drops the strong reference `ctx` (a Buffer, or NULL for copies): see
   dfb_decref_any_thread.  Never fails. */
static void
release_ctx(void *ctx)
{
    dfb_decref_any_thread((PyObject *)ctx);
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

/* Defines, for managed tensor type T exported in capsules named `name`
   (`used` once a consumer took ownership):
   - delete_fn(m): the deleter: releases the Buffer, frees the block;
   - destroy_fn(cap): the capsule destructor, which calls the deleter
     unless a consumer renamed the capsule, and keeps any pending
     exception.
   Neither fails. */
#define TENSOR_CALLBACKS(delete_fn, destroy_fn, T, name, used) \
    static void delete_fn(T *m)                                \
    {                                                          \
        if (m == NULL) {                                       \
            return;                                            \
        }                                                      \
        release_ctx(m->manager_ctx);                           \
        free(m);                                               \
    }                                                          \
    static void destroy_fn(PyObject *cap)                      \
    {                                                          \
        if (PyCapsule_IsValid(cap, (used))) {                  \
            return;                                            \
        }                                                      \
        saved_error saved;                                     \
        save_error(&saved);                                    \
        T *m = (T *)PyCapsule_GetPointer(cap, (name));         \
        if (m == NULL) {                                       \
            PyErr_WriteUnraisable(cap);                        \
        }                                                      \
        else if (m->deleter != NULL) {                         \
            m->deleter(m);                                     \
        }                                                      \
        restore_error(&saved);                                 \
    }

TENSOR_CALLBACKS(deleter_versioned, capsule_destructor_versioned,
                 DLManagedTensorVersioned, CAPSULE_VERSIONED,
                 CAPSULE_VERSIONED_USED)
TENSOR_CALLBACKS(deleter_legacy, capsule_destructor_legacy, DLManagedTensor,
                 CAPSULE_LEGACY, CAPSULE_LEGACY_USED)
#undef TENSOR_CALLBACKS

/* ------------------------------------------------------------------ */
/* Import                                                               */
/* ------------------------------------------------------------------ */

/* dfbuffer.dlpack_owner: the owner of the Buffers made over an imported
   tensor, a GC-tracked holder of the managed tensor whose dealloc calls
   the producer's deleter (which may be NULL) exactly once.  GC rule
   (docs/design.md, "Safety rules"): tp_traverse visits the manager_ctx of
   dfbuffer's own exports only (Buffer.__dlpack__ without a copy: the
   Buffer, whose clearing cannot break the deleter, which only drops it),
   so a cycle through a Buffer's DLPack export read back by dfbuffer is
   collected; a producer's context is never looked into.  No tp_clear:
   the deleter stays with the dealloc. */
typedef struct {
    PyObject_HEAD void *managed; /* NULL until the tensor is taken over */
    int versioned;               /* DLManagedTensorVersioned, else legacy */
} dlpack_owner;

/* tp_traverse: the type, and the Buffer of dfbuffer's own export. */
static int
dlpack_owner_traverse(PyObject *op, visitproc visit, void *arg)
{
    const dlpack_owner *o = (const dlpack_owner *)op;
    Py_VISIT(Py_TYPE(op));
    if (o->managed == NULL) {
        return 0;
    }
    if (o->versioned) {
        const DLManagedTensorVersioned *m = o->managed;
        if (m->deleter == deleter_versioned) {
            Py_VISIT((PyObject *)m->manager_ctx);
        }
    }
    else {
        const DLManagedTensor *m = o->managed;
        if (m->deleter == deleter_legacy) {
            Py_VISIT((PyObject *)m->manager_ctx);
        }
    }
    return 0;
}

/* tp_dealloc: calls the producer's deleter once, preserving any pending
   exception. */
static void
dlpack_owner_dealloc(PyObject *op)
{
    dlpack_owner *o = (dlpack_owner *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    if (o->managed != NULL) {
        PyObject *exc = dfb_err_take();
        if (o->versioned) {
            DLManagedTensorVersioned *m = o->managed;
            if (m->deleter != NULL) {
                m->deleter(m);
            }
        }
        else {
            DLManagedTensor *m = o->managed;
            if (m->deleter != NULL) {
                m->deleter(m);
            }
        }
        o->managed = NULL;
        dfb_err_give(exc);
    }
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyType_Slot dlpack_owner_slots[] = {
    {Py_tp_doc, (void *)"A held DLPack tensor import (private)."},
    {Py_tp_traverse, dlpack_owner_traverse},
    {Py_tp_dealloc, dlpack_owner_dealloc},
    {0, NULL},
};

PyType_Spec dfb_dlpack_owner_spec = {
    .name = "dfbuffer.dlpack_owner",
    .basicsize = sizeof(dlpack_owner),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = dlpack_owner_slots,
};

/* Maps a DLDataType to a new NumPy descr, or NULL with BufferError. */
static PyArray_Descr *
descr_from_dldtype(DLDataType t)
{
    char ts[8];
    if (dfb_dlpack_typestr(t.code, t.bits, t.lanes, ts, sizeof(ts)) < 0) {
        /* The float8/float6/float4 codes (DLPack 1.1+) name their width;
           the others take the bit count as a suffix. */
        static const char *const narrow[] = {
            "float8_e3m4",     "float8_e4m3",     "float8_e4m3b11fnuz",
            "float8_e4m3fn",   "float8_e4m3fnuz", "float8_e5m2",
            "float8_e5m2fnuz", "float8_e8m0fnu",  "float6_e2m3fn",
            "float6_e3m2fn",   "float4_e2m1fn"};
        const char *name = NULL;
        switch (t.code) {
            case kDLInt:
                name = "int";
                break;
            case kDLUInt:
                name = "uint";
                break;
            case kDLFloat:
                name = "float";
                break;
            case kDLOpaqueHandle:
                name = "opaque handle";
                break;
            case kDLBfloat:
                name = "bfloat";
                break;
            case kDLComplex:
                name = "complex";
                break;
            case kDLBool:
                name = "bool";
                break;
            default:
                break;
        }
        if (name != NULL) {
            PyErr_Format(PyExc_BufferError,
                         "DLPack dtype %s%d (code=%d, bits=%d, lanes=%d) has "
                         "no NumPy equivalent dfbuffer supports",
                         name, (int)t.bits, (int)t.code, (int)t.bits,
                         (int)t.lanes);
        }
        else {
            unsigned idx = (unsigned)t.code - 7u;
            PyErr_Format(PyExc_BufferError,
                         "DLPack dtype %s (code=%d, bits=%d, lanes=%d) has "
                         "no NumPy equivalent dfbuffer supports",
                         idx < sizeof(narrow) / sizeof(narrow[0])
                             ? narrow[idx]
                             : "of unknown type code",
                         (int)t.code, (int)t.bits, (int)t.lanes);
        }
        return NULL;
    }
    return dfb_descr_from_typestr(ts); /* core's mapping */
}

static PyObject *
import_managed(dfb_state *st, void *mp, const DLTensor *t, int versioned,
               int readonly, PyObject *cap, PyObject *dtype, int *taken);

/* Refuses versioned tensor `m` of another major version: calls only its
   deleter (the layout is unknown) and sets BufferError.  Returns NULL. */
static PyObject *
refuse_version(DLManagedTensorVersioned *m)
{
    unsigned major = m->version.major, minor = m->version.minor;
    if (m->deleter != NULL) {
        m->deleter(m);
    }
    PyErr_Format(PyExc_BufferError,
                 "DLPack version %u.%u is not supported (dfbuffer "
                 "speaks %d.x)",
                 major, minor, DLPACK_MAJOR_VERSION);
    return NULL;
}

/* Consumes a DLPack capsule ("dltensor_versioned" or legacy "dltensor"):
   validates the tensor, renames the capsule "used_..." and hands the
   managed tensor to a new dfbuffer.dlpack_owner whose dealloc calls the
   deleter.  Borrows `cap`.  Returns a new Buffer, or NULL with an
   exception set (BufferError for a refused tensor; the capsule is then
   left unconsumed, except on a major-version mismatch, where the deleter
   is called as the DLPack ABI requires). */
PyObject *
dfb_dlpack_import_capsule(dfb_state *st, PyObject *cap, PyObject *dtype)
{
    int versioned;
    void *mp;
    DLTensor *t;
    int readonly = 0;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        versioned = 1;
        DLManagedTensorVersioned *m =
            PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m == NULL) {
            return NULL;
        }
        if (m->version.major != DLPACK_MAJOR_VERSION) {
            if (PyCapsule_SetName(cap, "used_dltensor_versioned") < 0) {
                return NULL;
            }
            return refuse_version(m);
        }
        readonly = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
        mp = m;
        t = &m->dl_tensor;
    }
    else if (PyCapsule_IsValid(cap, "dltensor")) {
        versioned = 0;
        DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
        if (m == NULL) {
            return NULL;
        }
        mp = m;
        t = &m->dl_tensor;
    }
    else {
        const char *name = PyCapsule_GetName(cap);
        PyErr_Clear();
        PyErr_Format(PyExc_BufferError,
                     "expected a 'dltensor_versioned' or 'dltensor' capsule, "
                     "got one named %s%s%s (a used capsule cannot be consumed "
                     "twice)",
                     name ? "'" : "", name ? name : "NULL", name ? "'" : "");
        return NULL;
    }

    int taken;
    return import_managed(st, mp, t, versioned, readonly, cap, dtype, &taken);
}

/* Validates tensor `t` of managed tensor `mp` (versioned or legacy) and,
   when it is valid, takes `mp` over: renames `cap` "used_..." when `cap`
   is not NULL and hands `mp` to a new dfbuffer.dlpack_owner whose dealloc
   calls the deleter.  Sets *taken to 1 once the owner holds `mp` (its
   deleter then runs when the owner dies, also on a later failure), else
   0 (the caller still owns `mp`).  Returns a new Buffer, or NULL with an
   exception set. */
static PyObject *
import_managed(dfb_state *st, void *mp, const DLTensor *t, int versioned,
               int readonly, PyObject *cap, PyObject *dtype, int *taken)
{
    *taken = 0;
    /* Validate everything before taking ownership. */
    if (t->ndim < 0 || t->ndim > DFB_MAXDIM) {
        PyErr_Format(PyExc_BufferError,
                     "DLPack tensor has ndim %d; dfbuffer supports 0..%d",
                     (int)t->ndim, DFB_MAXDIM);
        return NULL;
    }
    int ndim = t->ndim;
    if (ndim > 0 && t->shape == NULL) {
        PyErr_SetString(PyExc_BufferError, "DLPack tensor has a NULL shape");
        return NULL;
    }
    PyArray_Descr *descr = descr_from_dldtype(t->dtype);
    if (descr == NULL) {
        return NULL;
    }
    Py_ssize_t itemsize = PyDataType_ELSIZE(descr);
    Py_ssize_t shape[DFB_MAXDIM], strides[DFB_MAXDIM];
    for (int i = 0; i < ndim; i++) {
        /* the producer's arrays are read with memcpy (a hand-made tensor
           may misalign them), each value once */
        int64_t dim, stride = 0;
        memcpy(&dim, (const char *)t->shape + i * sizeof(int64_t), 8);
        if (dim < 0 || dim > PY_SSIZE_T_MAX) {
            PyErr_Format(PyExc_BufferError,
                         "DLPack tensor has shape[%d] = %lld", i,
                         (long long)dim);
            goto fail;
        }
        shape[i] = (Py_ssize_t)dim;
        if (t->strides != NULL) {
            memcpy(&stride, (const char *)t->strides + i * sizeof(int64_t), 8);
            long long s;
            if (__builtin_mul_overflow((long long)stride, (long long)itemsize,
                                       &s) ||
                s > PY_SSIZE_T_MAX || s < PY_SSIZE_T_MIN) {
                PyErr_Format(PyExc_OverflowError,
                             "DLPack tensor stride[%d] = %lld elements "
                             "overflows in bytes",
                             i, (long long)stride);
                goto fail;
            }
            strides[i] = (Py_ssize_t)s;
        }
    }
    if (t->byte_offset > (uint64_t)PY_SSIZE_T_MAX ||
        (t->data != NULL &&
         (uintptr_t)t->data > UINTPTR_MAX - (uintptr_t)t->byte_offset)) {
        PyErr_Format(PyExc_OverflowError,
                     "DLPack tensor byte_offset %llu is out of range",
                     (unsigned long long)t->byte_offset);
        goto fail;
    }
    char *data = t->data == NULL ? NULL : (char *)t->data + t->byte_offset;
    DLDevice device = t->device;

    /* Take ownership: an owner made untracked (PyObject_GC_New), and
       tracked only over dfbuffer's own tensor; a producer's has nothing
       to visit, ever, so it (and the Buffers over it, buffer.c) cost the
       collector nothing. */
    dlpack_owner *owned = PyObject_GC_New(dlpack_owner, st->dlpack_owner_type);
    if (owned == NULL) {
        goto fail;
    }
    owned->managed = NULL;
    owned->versioned = versioned;
    PyObject *owner = (PyObject *)owned;
    if (cap != NULL &&
        PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned"
                                         : "used_dltensor") < 0) {
        Py_DECREF(owner);
        goto fail;
    }
    /* From here on, only the owner calls the deleter. */
    owned->managed = mp;
    *taken = 1;
    if (versioned
            ? ((DLManagedTensorVersioned *)mp)->deleter == deleter_versioned
            : ((DLManagedTensor *)mp)->deleter == deleter_legacy) {
        PyObject_GC_Track(owner);
    }
    PyObject *res =
        dfb_import_finish(st, data, owner, descr, ndim, shape,
                          t->strides != NULL ? strides : NULL, device,
                          readonly, DFB_NATIVE_DLPACK, dtype);
    Py_DECREF(owner); /* on failure, this runs the deleter */
    Py_DECREF(descr);
    return res;
fail:
    Py_DECREF(descr);
    return NULL;
}

PyObject *
dfb_dlpack_import_versioned(dfb_state *st, DLManagedTensorVersioned *m,
                            PyObject *dtype)
{
    if (m->version.major != DLPACK_MAJOR_VERSION) {
        return refuse_version(m);
    }
    int taken;
    PyObject *res = import_managed(
        st, m, &m->dl_tensor, 1,
        (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, NULL, dtype, &taken);
    if (res == NULL && !taken && m->deleter != NULL) {
        PyObject *exc = dfb_err_take();
        m->deleter(m);
        dfb_err_give(exc);
    }
    return res;
}

/* Calls obj.__dlpack__(max_version=(1, minor)), falling back to
   obj.__dlpack__() when the producer raises exactly TypeError (a producer
   older than DLPack 1.0 takes no keywords), and consumes the capsule.  No
   stream is passed (None: the producer assumes the legacy default stream).
   A tensor with torch's conjugate or negative bit set is refused
   (BufferError).
   Returns a new Buffer or NULL with an exception set. */
PyObject *
dfb_dlpack_import_producer(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    if (dfb_import_refuse_lazy_views(st, obj) < 0) {
        return NULL;
    }
    /* interned once in the module state (probe.c) */
    PyObject *name = Py_NewRef(st->str.dlpack);
    PyObject *version = Py_NewRef(st->tup.dlpack_version);
    PyObject *kwnames = Py_NewRef(st->tup.max_version_kw);
    PyObject *cap = NULL;
    {
        PyObject *args[2] = {obj, version};
        cap = PyObject_VectorcallMethod(
            name, args, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
        /* Exactly TypeError (a subclass, like pyarrow's ArrowTypeError,
           is the producer refusing the data, not the keyword). */
        if (cap == NULL && PyErr_Occurred() == PyExc_TypeError) {
            PyErr_Clear();
            PyObject *args0[1] = {obj};
            cap = PyObject_VectorcallMethod(
                name, args0, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        }
    }
    Py_DECREF(name);
    Py_DECREF(version);
    Py_DECREF(kwnames);
    if (cap == NULL) {
        return NULL;
    }
    if (!PyCapsule_CheckExact(cap)) {
        PyErr_Format(PyExc_TypeError,
                     "%.100s.__dlpack__() returned %.100s, not a capsule",
                     Py_TYPE(obj)->tp_name, Py_TYPE(cap)->tp_name);
        Py_DECREF(cap);
        return NULL;
    }
    PyObject *res = dfb_dlpack_import_capsule(st, cap, dtype);
    Py_DECREF(cap);
    return res;
}

/* ------------------------------------------------------------------ */
/* Export: tensor description                                           */
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
        /* only a zero-size tensor's dims can take the product (in bytes)
           past the address space (a Buffer with elements spans memory); its
           strides never address memory, so 0 stands for those, and every
           importer can compute them in bytes */
        if (dfb_checked_mul(cs, b->shape[i] > 1 ? b->shape[i] : 1, &cs) < 0 ||
            cs > PTRDIFF_MAX / itemsize) {
            cs = 0;
        }
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

/* Makes the versioned managed tensor of Buffer `self` in one malloc of
   layout `l`: dtype `dt`, device `dev`, copied (IS_COPIED, writable) or
   not (READ_ONLY as the Buffer; manager_ctx a new reference to `self`).
   Returns it, or NULL with an exception set. */
static DLManagedTensorVersioned *
new_versioned(PyObject *self, const block_layout *l, DLDataType dt,
              DLDevice dev, int copy)
{
    DfbBuffer *b = (DfbBuffer *)self;
    char *base = malloc(l->total);
    if (base == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    DLManagedTensorVersioned *m = (DLManagedTensorVersioned *)base;
    m->version.major = DLPACK_MAJOR_VERSION;
    m->version.minor = DLPACK_MINOR_VERSION;
    m->manager_ctx = NULL;
    m->deleter = deleter_versioned;
    m->flags = 0;
    if (copy) {
        m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    }
    else if (b->readonly) {
        m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    }
    if (fill_tensor(b, &m->dl_tensor, base, l, dt, dev, copy) < 0) {
        free(base);
        return NULL;
    }
    if (!copy) {
        m->manager_ctx = Py_NewRef(self);
    }
    return m;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                         */
/* ------------------------------------------------------------------ */

PyObject *
dfb_buffer_dlpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    DfbBuffer *b = (DfbBuffer *)self;
    dfb_dlpack_args a;
    int versioned, copy;
    if (dfb_dlpack_parse_args(args, nargs, kwnames, &a) < 0 ||
        dfb_dlpack_parse_max_version(a.max_version, &versioned) < 0 ||
        dfb_dlpack_parse_copy(a.copy, &copy) < 0) {
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
        if (dfb_dlpack_parse_dl_device(a.dl_device, &want) < 0) {
            return NULL;
        }
        if (want.device_type == dev.device_type &&
            want.device_id == dev.device_id) {
            /* own device */
        }
        else if (want.device_type == kDLCPU && want.device_id == 0 &&
                 dfb_dlpack_host_readable(dev.device_type)) {
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
    if (dfb_dlpack_check_stream(a.stream, dev.device_type) < 0) {
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
        /* the size a producer claimed (an array interface's raw address
           carries no length to check it against): refused before malloc
           when no machine could hold the copy */
        if (dfb_check_alloc(dfb_buffer_size(b), PyDataType_ELSIZE(b->dtype)) <
            0) {
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
    /* bounded: a Buffer's size in bytes fits Py_ssize_t (check_common) */
    Py_ssize_t nbytes = copy == 1 ? dfb_buffer_size(b) * itemsize : 0;
    block_layout l;
    if (layout_block(versioned ? sizeof(DLManagedTensorVersioned)
                               : sizeof(DLManagedTensor),
                     b->ndim, nbytes, copy == 1, &l) < 0) {
        return NULL;
    }
    if (versioned) {
        DLManagedTensorVersioned *m =
            new_versioned(self, &l, dt, dev, copy == 1);
        if (m == NULL) {
            return NULL;
        }
        PyObject *cap =
            PyCapsule_New(m, CAPSULE_VERSIONED, capsule_destructor_versioned);
        if (cap == NULL) {
            deleter_versioned(m);
        }
        return cap;
    }
    char *base = malloc(l.total);
    if (base == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *cap;
    {
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

DLManagedTensorVersioned *
dfb_dlpack_export_versioned(PyObject *self)
{
    DfbBuffer *b = (DfbBuffer *)self;
    if (b->owner == NULL) {
        PyErr_SetString(PyExc_BufferError,
                        "the Buffer was cleared by the garbage collector");
        return NULL;
    }
    DLDataType dt;
    if (dlpack_dtype(b->dtype, &dt) < 0) {
        return NULL;
    }
    block_layout l;
    if (layout_block(sizeof(DLManagedTensorVersioned), b->ndim, 0, 0, &l) <
        0) {
        return NULL;
    }
    return new_versioned(self, &l, dt, b->device, 0);
}

int
dfb_dlpack_dtype(PyArray_Descr *d, DLDataType *out)
{
    return dlpack_dtype(d, out);
}
