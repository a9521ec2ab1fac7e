/* dfbuffer.Buffer: the heap type: __new__, GC, dealloc, repr, attributes,
 * and its method and slot tables, which wire in the exports (dlpack.c,
 * export_array.c, arrow_export.c, arrow_device.c) and Buffer.from_object
 * (protocols.c).
 *
 * Only module.c uses this file (dfb_buffer_spec); the constructors every
 * other file calls live in buffer.c.
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "arrow.h"
#include "exchange.h"
#include "api.h"
#include "dlpack_types.h"

#include <stddef.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_PYSSIZET T_PYSSIZET
#define Py_READONLY READONLY
#endif

/* ------------------------------------------------------------------ */
/* Argument parsing of Buffer.__new__                                   */
/* ------------------------------------------------------------------ */

/* Converts a non-negative Python int to Py_ssize_t.  Returns 0, or -1 with
   TypeError (not an int), ValueError (negative) or OverflowError. */
static int
parse_size(PyObject *obj, const char *what, Py_ssize_t *out)
{
    /* Integers of any kind (numpy.int64 too), as shape items; not bool. */
    if (!PyIndex_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *n = PyNumber_Index(obj);
    if (n == NULL) {
        return -1;
    }
    int ret = -1;
    if (dfb_long_sign(n) < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %R", what, n);
        goto done;
    }
    Py_ssize_t v = PyLong_AsSsize_t(n);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "%s %R is too large", what, n);
        goto done;
    }
    *out = v;
    ret = 0;
done:
    Py_DECREF(n);
    return ret;
}

/* Parses a shape or strides argument (a sequence of ints, or one int) into
   out[0..*n).  Returns 0, or -1 with an exception set. */
static int
parse_dims(PyObject *obj, const char *what, int allow_negative,
           Py_ssize_t *out, int *n)
{
    PyObject *seq;
    if (PyLong_Check(obj) || (PyIndex_Check(obj) && !PySequence_Check(obj))) {
        seq = PyTuple_Pack(1, obj);
    }
    else {
        if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a sequence of ints, not %.100s", what,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        /* A tuple copy: an item's __index__ may mutate a list. */
        seq = PySequence_Tuple(obj);
        if (seq == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s must be a sequence of ints, not %.100s", what,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
    }
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > DFB_MAXDIM) {
        PyErr_Format(PyExc_ValueError,
                     "%s has %zd dimensions; at most %d are supported", what,
                     len, DFB_MAXDIM);
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyIndex_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be an int, not %.100s",
                         what, i, Py_TYPE(item)->tp_name);
            Py_DECREF(seq);
            return -1;
        }
        Py_ssize_t v = PyNumber_AsSsize_t(item, PyExc_OverflowError);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (v < 0 && !allow_negative) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] must be >= 0, got %zd",
                         what, i, v);
            Py_DECREF(seq);
            return -1;
        }
        out[i] = v;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

/* Buffer.__new__(ptr, bufsize, *, owner, dtype="u1", shape=None,
   strides=None, device=(CPU, 0), readonly=False, native=RAW).  Returns a
   new Buffer or NULL with an exception set. */
static PyObject *
buffer_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ptr",    "bufsize", "owner",  "dtype",
                             "shape",  "strides", "device", "readonly",
                             "native", NULL};
    PyObject *ptr_o, *bufsize_o, *owner = NULL, *dtype_o = NULL;
    PyObject *shape_o = Py_None, *strides_o = Py_None, *device_o = NULL;
    int readonly = 0;
    PyObject *native_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|$OOOOOpO:Buffer", kwlist,
                                     &ptr_o, &bufsize_o, &owner, &dtype_o,
                                     &shape_o, &strides_o, &device_o,
                                     &readonly, &native_o)) {
        return NULL;
    }
    if (owner == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "Buffer() needs the keyword argument 'owner': the "
                        "object that keeps the memory alive");
        return NULL;
    }
    dfb_state *st = dfb_state_from_type(type);
    if (st == NULL) {
        return NULL;
    }
    if (!PyIndex_Check(ptr_o) || PyBool_Check(ptr_o)) {
        PyErr_Format(PyExc_TypeError, "ptr must be an int, not %.100s",
                     Py_TYPE(ptr_o)->tp_name);
        return NULL;
    }
    ptr_o = PyNumber_Index(ptr_o); /* a new reference from here on */
    if (ptr_o == NULL) {
        return NULL;
    }
    if (dfb_long_sign(ptr_o) < 0) {
        PyErr_Format(PyExc_ValueError, "ptr must be >= 0, got %R", ptr_o);
        Py_DECREF(ptr_o);
        return NULL;
    }
    void *ptr = PyLong_AsVoidPtr(ptr_o);
    if (ptr == NULL && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "ptr %R does not fit in a pointer",
                     ptr_o);
        Py_DECREF(ptr_o);
        return NULL;
    }
    Py_DECREF(ptr_o);
    Py_ssize_t bufsize;
    if (parse_size(bufsize_o, "bufsize", &bufsize) < 0) {
        return NULL;
    }
    PyArray_Descr *u1 = PyArray_DescrFromType(NPY_UINT8);
    PyArray_Descr *dtype = dfb_parse_dtype(dtype_o, u1);
    Py_DECREF(u1);
    if (dtype == NULL) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t shape[DFB_MAXDIM], strides[DFB_MAXDIM];
    int ndim = 0, nstrides = 0;
    int have_shape = shape_o != Py_None, have_strides = strides_o != Py_None;
    if (have_shape && parse_dims(shape_o, "shape", 0, shape, &ndim) < 0) {
        goto done;
    }
    if (have_strides &&
        parse_dims(strides_o, "strides", 1, strides, &nstrides) < 0) {
        goto done;
    }
    if (have_strides && !have_shape) {
        Py_ssize_t itemsize = PyDataType_ELSIZE(dtype);
        if (bufsize % itemsize != 0) {
            PyErr_Format(PyExc_ValueError,
                         "bufsize %zd is not a multiple of the itemsize %zd; "
                         "pass a shape",
                         bufsize, itemsize);
            goto done;
        }
        shape[0] = bufsize / itemsize;
        ndim = 1;
        have_shape = 1;
    }
    if (have_strides && nstrides != ndim) {
        PyErr_Format(PyExc_ValueError,
                     "strides has %d entries but shape has %d", nstrides,
                     ndim);
        goto done;
    }
    DLDevice device = {kDLCPU, 0};
    if (device_o != NULL && dfb_parse_device(device_o, &device) < 0) {
        goto done;
    }
    long native = DFB_NATIVE_RAW;
    if (native_o != NULL) {
        if (!PyLong_Check(native_o) || PyBool_Check(native_o)) {
            PyErr_Format(PyExc_TypeError,
                         "native must be a NativeFormat, not %.100s",
                         Py_TYPE(native_o)->tp_name);
            goto done;
        }
        native = PyLong_AsLong(native_o);
        if (native == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            native = -1;
        }
        if (native < 0 || native >= DFB_NATIVE_COUNT) {
            PyErr_Format(PyExc_ValueError, "unknown NativeFormat %R",
                         native_o);
            goto done;
        }
    }
    result = dfb_buffer_new(st, (char *)ptr, bufsize, owner, dtype, ndim,
                            have_shape ? shape : NULL,
                            have_strides ? strides : NULL, device, readonly,
                            (int)native);
done:
    Py_DECREF(dtype);
    return result;
}

/* ------------------------------------------------------------------ */
/* GC, dealloc, repr                                                    */
/* ------------------------------------------------------------------ */

static int
buffer_traverse(PyObject *op, visitproc visit, void *arg)
{
    DfbBuffer *self = (DfbBuffer *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->owner);
    Py_VISIT((PyObject *)self->dtype);
    return 0;
}

static int
buffer_clear(PyObject *op)
{
    DfbBuffer *self = (DfbBuffer *)op;
    Py_CLEAR(self->owner);
    /* dtype holds no references back to us; keep it for repr safety. */
    return 0;
}

static void
buffer_dealloc(PyObject *op)
{
    DfbBuffer *self = (DfbBuffer *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    if (self->weakreflist == NULL && self->owner != NULL &&
        Py_REFCNT(self->owner) > 1 && self->dtype != NULL &&
        Py_REFCNT(self->dtype) > 1) {
        /* Releasing owner and dtype frees nothing (others hold them): no
           chain to guard, no trashcan. */
        Py_DECREF(self->owner);
        Py_DECREF(self->dtype);
        tp->tp_free(op);
        Py_DECREF(tp);
        return;
    }
    /* Deep owner chains (Buffers owning Buffers) must not overflow the C
       stack. */
    Py_TRASHCAN_BEGIN(op, buffer_dealloc)
        if (self->weakreflist != NULL) {
            PyObject_ClearWeakRefs(op);
        }
        Py_CLEAR(self->owner);
        Py_CLEAR(self->dtype);
        tp->tp_free(op);
        Py_DECREF(tp);
    Py_TRASHCAN_END
}

/* The DeviceType member name of device type `t` ("?" outside the table). */
static const char *
repr_device_name(int t)
{
    const char *name = dfb_dlpack_device_name(t, 0);
    return name != NULL ? name : "?";
}

static const char *
native_name(int native)
{
    static const char *names[DFB_NATIVE_COUNT] = {"RAW",
                                                  "NUMPY",
                                                  "ARROW",
                                                  "DLPACK",
                                                  "CUDA_ARRAY_INTERFACE",
                                                  "BUFFER_PROTOCOL",
                                                  "ARRAY_INTERFACE",
                                                  "INTERCHANGE"};
    return (native >= 0 && native < DFB_NATIVE_COUNT) ? names[native] : "?";
}

static PyObject *
buffer_repr(PyObject *op)
{
    DfbBuffer *self = (DfbBuffer *)op;
    PyObject *shape = dfb_dims_tuple(self->shape, self->ndim);
    if (shape == NULL) {
        return NULL;
    }
    PyObject *strides = dfb_dims_tuple(self->strides, self->ndim);
    if (strides == NULL) {
        Py_DECREF(shape);
        return NULL;
    }
    PyObject *owner_type =
        self->owner ? PyType_GetQualName(Py_TYPE(self->owner)) : NULL;
    if (self->owner && owner_type == NULL) {
        Py_DECREF(shape);
        Py_DECREF(strides);
        return NULL;
    }
    PyObject *r = PyUnicode_FromFormat(
        "<dfbuffer.Buffer dtype=%S shape=%S strides=%S device=%s:%d "
        "native=%s readonly=%s owner=%s%S ptr=%p bufsize=%zd>",
        (PyObject *)self->dtype, shape, strides,
        repr_device_name(self->device.device_type),
        (int)self->device.device_id, native_name(self->native),
        self->readonly ? "True" : "False", self->owner ? "" : "<cleared>",
        owner_type ? owner_type : Py_None, (void *)self->ptr, self->bufsize);
    Py_DECREF(shape);
    Py_DECREF(strides);
    Py_XDECREF(owner_type);
    return r;
}

/* ------------------------------------------------------------------ */
/* Attributes                                                           */
/* ------------------------------------------------------------------ */

static PyObject *
get_ptr(PyObject *op, void *c)
{
    return PyLong_FromVoidPtr(((DfbBuffer *)op)->ptr);
}

static PyObject *
get_bufsize(PyObject *op, void *c)
{
    return PyLong_FromSsize_t(((DfbBuffer *)op)->bufsize);
}

static PyObject *
get_shape(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return dfb_dims_tuple(self->shape, self->ndim);
}

static PyObject *
get_strides(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return dfb_dims_tuple(self->strides, self->ndim);
}

static PyObject *
get_dtype(PyObject *op, void *c)
{
    return Py_NewRef((PyObject *)((DfbBuffer *)op)->dtype);
}

static PyObject *
get_itemsize(PyObject *op, void *c)
{
    return PyLong_FromSsize_t(PyDataType_ELSIZE(((DfbBuffer *)op)->dtype));
}

static PyObject *
get_ndim(PyObject *op, void *c)
{
    return PyLong_FromLong(((DfbBuffer *)op)->ndim);
}

static PyObject *
get_size(PyObject *op, void *c)
{
    return PyLong_FromSsize_t(dfb_buffer_size((DfbBuffer *)op));
}

static PyObject *
get_nbytes(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return PyLong_FromSsize_t(dfb_buffer_size(self) *
                              PyDataType_ELSIZE(self->dtype));
}

static PyObject *
get_device(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    dfb_state *st = dfb_state_from_type(Py_TYPE(op));
    if (st == NULL) {
        return NULL;
    }
    PyObject *t = dfb_enum_member(st->device_type, self->device.device_type);
    if (t == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Ni)", t, (int)self->device.device_id);
}

static PyObject *
get_owner(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return Py_NewRef(self->owner ? self->owner : Py_None);
}

static PyObject *
get_readonly(PyObject *op, void *c)
{
    return PyBool_FromLong(((DfbBuffer *)op)->readonly);
}

static PyObject *
get_native(PyObject *op, void *c)
{
    dfb_state *st = dfb_state_from_type(Py_TYPE(op));
    if (st == NULL) {
        return NULL;
    }
    return dfb_enum_member(st->native_format, ((DfbBuffer *)op)->native);
}

static PyObject *
get_c_contiguous(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return PyBool_FromLong(
        dfb_is_c_contiguous(self->ndim, self->shape, self->strides,
                            PyDataType_ELSIZE(self->dtype)));
}

static PyObject *
get_f_contiguous(PyObject *op, void *c)
{
    DfbBuffer *self = (DfbBuffer *)op;
    return PyBool_FromLong(
        dfb_is_f_contiguous(self->ndim, self->shape, self->strides,
                            PyDataType_ELSIZE(self->dtype)));
}

static PyGetSetDef buffer_getset[] = {
    {"ptr", get_ptr, NULL, "Lowest address of the memory block (int).", NULL},
    {"bufsize", get_bufsize, NULL,
     "Length of the memory block in bytes; every element lies in "
     "[ptr, ptr + bufsize).",
     NULL},
    {"shape", get_shape, NULL, "Shape (tuple of int).", NULL},
    {"strides", get_strides, NULL,
     "Strides in bytes (tuple of int; may be negative or zero).", NULL},
    {"dtype", get_dtype, NULL, "Element type (numpy.dtype).", NULL},
    {"itemsize", get_itemsize, NULL, "Bytes per element.", NULL},
    {"ndim", get_ndim, NULL, "Number of dimensions.", NULL},
    {"size", get_size, NULL, "Number of elements.", NULL},
    {"nbytes", get_nbytes, NULL, "size * itemsize.", NULL},
    {"device", get_device, NULL, "(DeviceType, device_id) of the memory.",
     NULL},
    {"owner", get_owner, NULL,
     "The object that keeps the memory alive (held strongly).", NULL},
    {"readonly", get_readonly, NULL, "True if the memory must not be written.",
     NULL},
    {"native", get_native, NULL,
     "The NativeFormat: the protocol the memory came through.", NULL},
    {"c_contiguous", get_c_contiguous, NULL,
     "True if the elements are C-contiguous.", NULL},
    {"f_contiguous", get_f_contiguous, NULL,
     "True if the elements are Fortran-contiguous.", NULL},
    {"__array_interface__", dfb_buffer_array_interface, NULL,
     "NumPy array interface (version 3); host memory only.", NULL},
    {"__cuda_array_interface__", dfb_buffer_cuda_array_interface, NULL,
     "CUDA array interface (version 3); CUDA memory only.", NULL},
    {NULL},
};

/* ------------------------------------------------------------------ */
/* The type                                                             */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(
    from_object_doc,
    "from_object(obj, *, dtype=None, allow_copy=True)\n--\n\n"
    "Wrap any producer's memory without copying; the returned Buffer's owner\n"
    "keeps the memory alive and `native` names the protocol used.  The\n"
    "protocols are tried in a fixed order (`python -m dfbuffer` lists it):\n"
    "the first one obj speaks wins and its errors propagate.  The last\n"
    "resort, __array__, is called with copy=False when allow_copy is false\n"
    "(a producer that would copy raises BufferError) and may hand over a\n"
    "copy otherwise (the Buffer is then read-only).  Anything else raises\n"
    "TypeError.  `dtype` (anything numpy.dtype accepts or an interchange\n"
    "dtype tuple) reinterprets the memory: same itemsize keeps the layout,\n"
    "another itemsize needs 1-D contiguous memory (ValueError).\n\n"
    "Parameters\n"
    "----------\n"
    "obj : object\n"
    "    Any producer of memory (see above).\n"
    "dtype : dtype-like or interchange dtype tuple, optional\n"
    "    Reinterpret the elements.\n"
    "allow_copy : bool, optional\n"
    "    False: __array__ is called with copy=False, so a producer that\n"
    "    would copy refuses (BufferError).\n"
    "\n"
    "Returns\n"
    "-------\n"
    "Buffer\n"
    "    A Buffer over obj's memory; its owner keeps the memory alive.\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError\n"
    "    obj exports memory through no protocol dfbuffer knows.\n"
    "ValueError\n"
    "    dtype does not fit the memory's layout.\n"
    "BufferError\n"
    "    The producer refuses the export.\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import numpy as np\n"
    ">>> import dfbuffer\n"
    ">>> a = np.arange(3.0)\n"
    ">>> b = dfbuffer.Buffer.from_object(a)\n"
    ">>> b.shape, b.dtype, b.native, b.owner is a\n"
    "((3,), dtype('float64'), <NativeFormat.NUMPY: 1>, True)\n"
    ">>> np.from_dlpack(b)\n"
    "array([0., 1., 2.])");

PyDoc_STRVAR(
    dlpack_doc,
    "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, "
    "copy=None)\n--\n\n"
    "Export as a DLPack capsule (versioned when max_version >= (1, 0)).");

PyDoc_STRVAR(dlpack_device_doc,
             "__dlpack_device__($self, /)\n--\n\nReturn (device_type, "
             "device_id) as ints.");

static PyMethodDef buffer_methods[] = {
    {"from_object", (PyCFunction)(void (*)(void))dfb_buffer_from_object,
     METH_CLASS | METH_FASTCALL | METH_KEYWORDS, from_object_doc},
    {"__dlpack__", (PyCFunction)(void (*)(void))dfb_buffer_dlpack,
     METH_FASTCALL | METH_KEYWORDS, dlpack_doc},
    {"__dlpack_device__", dfb_buffer_dlpack_device, METH_NOARGS,
     dlpack_device_doc},
    {"__array__", (PyCFunction)(void (*)(void))dfb_buffer_array,
     METH_VARARGS | METH_KEYWORDS,
     "__array__($self, /, dtype=None, copy=None)\n--\n\nA NumPy view (host "
     "memory "
     "only; TypeError for device memory)."},
    {"__reduce_ex__", dfb_buffer_reduce_ex, METH_O,
     "Pickle support; protocol 5 sends the memory out of band."},
    {"__arrow_c_schema__", dfb_buffer_arrow_c_schema, METH_NOARGS,
     "__arrow_c_schema__($self, /)\n--\n\nArrow schema capsule (1-D primitive "
     "buffers)."},
    {"__arrow_c_array__",
     (PyCFunction)(void (*)(void))dfb_buffer_arrow_c_array,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_array__($self, /, requested_schema=None)\n--\n\n(schema, "
     "array) "
     "capsules for a 1-D contiguous primitive buffer, without copying."},
    {"__arrow_c_device_array__",
     (PyCFunction)(void (*)(void))dfb_buffer_arrow_c_device_array,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_device_array__($self, /, requested_schema=None, **kwargs)\n"
     "--\n\n(schema, device array) capsules for a 1-D contiguous primitive "
     "buffer on any device, without copying; non-None keyword arguments "
     "other than requested_schema raise NotImplementedError."},
    {NULL},
};

static PyMemberDef buffer_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(DfbBuffer, weakreflist),
     Py_READONLY, NULL},
    {NULL},
};

PyDoc_STRVAR(
    buffer_doc,
    "Buffer(ptr, bufsize, *, owner, dtype='u1', shape=None, strides=None,\n"
    "       device=(DeviceType.CPU, 0), readonly=False, "
    "native=NativeFormat.RAW)\n"
    "--\n\n"
    "A block of memory with its layout, its device and a strong reference to\n"
    "the object that owns it.\n\n"
    "ptr is the lowest address of the block and bufsize its length in bytes;\n"
    "every byte any element touches lies in [ptr, ptr + bufsize).  shape\n"
    "defaults to bufsize // itemsize (1-D), strides (bytes) to C order.\n"
    "Immutable; exports DLPack, the array interface, the buffer protocol,\n"
    "the CUDA array interface (device memory) and the Arrow PyCapsule\n"
    "interface.\n\n"
    "Parameters\n"
    "----------\n"
    "ptr : int\n"
    "    The lowest address of the block (0 only with bufsize 0).\n"
    "bufsize : int\n"
    "    The block's length in bytes.\n"
    "owner : object\n"
    "    The object that keeps the memory alive; the Buffer holds it.\n"
    "dtype : dtype-like or interchange dtype tuple, optional\n"
    "    The element type: plain numbers only (default 'u1').\n"
    "shape, strides : int or sequence of int, optional\n"
    "    The layout; strides in bytes (default: 1-D, C order).\n"
    "device : (DeviceType, int), optional\n"
    "    Where the memory lives (default the CPU).\n"
    "readonly : bool, optional\n"
    "    Whether consumers may write (default False).\n"
    "native : NativeFormat, optional\n"
    "    The protocol the memory came through (default RAW).\n"
    "\n"
    "Raises\n"
    "------\n"
    "ValueError\n"
    "    A layout that leaves [ptr, ptr + bufsize), negative sizes, NULL "
    "with\n"
    "    a non-zero size, more than 64 dimensions, an unknown device.\n"
    "TypeError\n"
    "    Non-int arguments, a missing owner, an unsupported dtype.\n"
    "OverflowError\n"
    "    Sizes or pointers that do not fit.\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import numpy as np\n"
    ">>> import dfbuffer\n"
    ">>> a = np.arange(6, dtype=np.int32)\n"
    ">>> b = dfbuffer.Buffer(a.ctypes.data, a.nbytes, owner=a, dtype=\"i4\",\n"
    "...                     shape=(2, 3), readonly=True)\n"
    ">>> b.shape, b.strides, b.c_contiguous\n"
    "((2, 3), (12, 4), True)\n"
    ">>> np.asarray(b).tolist()\n"
    "[[0, 1, 2], [3, 4, 5]]\n"
    ">>> memoryview(b).readonly\n"
    "True");

static PyType_Slot buffer_slots[] = {
    {Py_tp_doc, (void *)buffer_doc},
    {Py_tp_new, buffer_tp_new},
    {Py_tp_dealloc, buffer_dealloc},
    {Py_tp_traverse, buffer_traverse},
    {Py_tp_clear, buffer_clear},
    {Py_tp_repr, buffer_repr},
    {Py_tp_getset, buffer_getset},
    {Py_tp_methods, buffer_methods},
    {Py_tp_members, buffer_members},
    {Py_bf_getbuffer, dfb_buffer_getbuffer},
    {Py_bf_releasebuffer, dfb_buffer_releasebuffer},
    {0, NULL},
};

PyType_Spec dfb_buffer_spec = {
    .name = "dfbuffer.Buffer",
    .basicsize = offsetof(DfbBuffer, dims),
    .itemsize = sizeof(Py_ssize_t),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = buffer_slots,
};
