/* dfbuffer: Buffer.from_object: which protocol of a producer is read.
 *
 * Order of attempts (the first protocol the object speaks wins; once a
 * protocol is chosen its errors propagate, there is no silent fallback to
 * the next one):
 *
 *   1. a dfbuffer.Buffer: itself (or a re-typed Buffer owning the original);
 *   2. a NumPy ndarray (PyArray_Check): read the array's fields directly,
 *      the cheapest and exact path;
 *   3. a DLPack capsule given directly ("dltensor_versioned" / "dltensor");
 *      bytes, bytearray and memoryview go straight to the buffer protocol
 *      (5.): host memory by construction, no attribute lookups;
 *   4. __cuda_array_interface__: device memory must win over every host
 *      protocol, so it is asked first, and nothing on the host is touched;
 *   5. the buffer protocol: a slot check, no attribute lookup, and a real
 *      export that pins the memory (a bytearray cannot resize under us);
 *   6. an interchange-protocol Buffer (ptr, bufsize, __dlpack_device__):
 *      asked before __dlpack__ because the producers' __dlpack__ is often
 *      missing, raises, or takes no keywords, while ptr/bufsize is what the
 *      interchange protocol defines;
 *   7. __array_interface__: host memory, no capsule or deleter to manage;
 *   8. __dlpack__ + __dlpack_device__: anything else, any device;
 *   9. __arrow_c_array__: an Arrow array's values buffer (fixed width);
 *  10. __arrow_c_device_array__: the same on any device (arrow_device.c);
 *  11. TypeError.
 *
 * The importers are import.c's and dlpack.c's.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/probe.h"
#include "dfbuffer/import.h"

/* ------------------------------------------------------------------ */
/* Entry points                                                         */
/* ------------------------------------------------------------------ */

/* DLPack, and when the producer refuses it (TypeError, including pyarrow's
   ArrowTypeError for arrays with nulls; BufferError; NotImplementedError)
   and also speaks the Arrow PyCapsule interface, the Arrow values buffer.
   If Arrow refuses too, the DLPack error is raised.  Returns a new Buffer
   or NULL with an exception set. */
static PyObject *
from_dlpack_or_arrow(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    PyObject *res = dfb_dlpack_import_producer(st, obj, dtype);
    if (res != NULL || !(PyErr_ExceptionMatches(PyExc_TypeError) ||
                         PyErr_ExceptionMatches(PyExc_BufferError) ||
                         PyErr_ExceptionMatches(PyExc_NotImplementedError))) {
        return res;
    }
    PyObject *first = dfb_err_take();
    int r = dfb_type_is_arrow_producer(st, obj);
    if (r > 0) {
        res = dfb_arrow_buffer_from_object(st, obj, dtype);
    }
    if (res != NULL) {
        Py_XDECREF(first);
        return res;
    }
    /* Arrow refused too (or is not spoken): the first refusal stands */
    PyErr_Clear();
    dfb_err_give(first);
    return NULL;
}

static PyObject *
from_object_probed(dfb_state *st, PyObject *obj, PyObject *dtype);

PyObject *
dfb_buffer_from_object_impl(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    if (DfbBuffer_Check(st, obj)) {
        return dfb_import_buffer(st, (DfbBuffer *)obj, dtype);
    }
    if (PyArray_Check(obj)) {
        return dfb_import_ndarray(st, (PyArrayObject *)obj, dtype);
    }
    /* each protocol probed once per call (the Arrow import answers its own
       probes from this scope's record) */
    uint64_t scope = dfb_probe_scope_open(st, obj);
    PyObject *res = from_object_probed(st, obj, dtype);
    dfb_probe_scope_close(st, scope);
    return res;
}

/* dfb_buffer_from_object_impl after the Buffer and ndarray checks, inside
   the probe scope of `obj`.  Same returns. */
static PyObject *
from_object_probed(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    if (PyCapsule_CheckExact(obj)) {
        return dfb_dlpack_import_capsule(st, obj, dtype);
    }

    if (PyBytes_CheckExact(obj) || PyByteArray_CheckExact(obj) ||
        PyMemoryView_Check(obj)) {
        /* Host memory by construction: skip the attribute lookups. */
        return dfb_import_buffer_protocol(st, obj, dtype);
    }

    /* Every protocol is probed once, on the type (probe.c): a missing name
       costs no __getattr__ call and no exception.  The names are probed in
       batches, each in one walk of the MRO (dfb_probe_mask): the first
       three together, then the rest of the interchange Buffer's names if
       it has `ptr`, else the array interface and Arrow names. */
    PyObject *attr, *attr2;
    int has = dfb_probe_mask(
        st, obj,
        DFB_PB(DFB_PN_DLPACK) | DFB_PB(DFB_PN_CAI) | DFB_PB(DFB_PN_PTR));
    if (has < 0) {
        return NULL;
    }
    const int has_ptr = (has & DFB_PB(DFB_PN_PTR)) != 0;
    int has_dlpack = (has & DFB_PB(DFB_PN_DLPACK)) != 0;
    if (has_dlpack &&
        (has_dlpack = dfb_probe(st, obj, DFB_PN_DLPACK_DEVICE)) < 0) {
        return NULL;
    }
    int r;
    if ((has & DFB_PB(DFB_PN_CAI)) && has_dlpack) {
        /* Both DLPack and the CUDA array interface (torch, CuPy): DLPack
           first.  It states the device and carries its own lifetime and
           read-only flag, and a CPU tensor's __cuda_array_interface__
           property only raises. */
        return from_dlpack_or_arrow(st, obj, dtype);
    }
    if (has & DFB_PB(DFB_PN_CAI)) {
        if ((r = dfb_probe_get(st, obj, DFB_PN_CAI, &attr)) < 0) {
            return NULL;
        }
        if (r > 0) {
            PyObject *res = dfb_import_cai(st, obj, attr, dtype);
            Py_DECREF(attr);
            return res;
        }
    }

    if (PyObject_CheckBuffer(obj)) {
        return dfb_import_buffer_protocol(st, obj, dtype);
    }

    /* Interchange Buffer: ptr, bufsize and __dlpack_device__. */
    has = !has_ptr ? 0
                   : dfb_probe_mask(st, obj,
                                    DFB_PB(DFB_PN_BUFSIZE) |
                                        DFB_PB(DFB_PN_DLPACK_DEVICE));
    if (has < 0) {
        return NULL;
    }
    const int ix = DFB_PB(DFB_PN_BUFSIZE) | DFB_PB(DFB_PN_DLPACK_DEVICE);
    if ((has & ix) == ix &&
        (r = dfb_probe_get(st, obj, DFB_PN_PTR, &attr)) != 0) {
        if (r < 0) {
            return NULL;
        }
        if ((r = dfb_probe_get(st, obj, DFB_PN_BUFSIZE, &attr2)) < 0) {
            Py_DECREF(attr);
            return NULL;
        }
        if (r > 0) {
            PyObject *res =
                dfb_import_interchange(st, obj, attr, attr2, dtype);
            Py_DECREF(attr);
            Py_DECREF(attr2);
            return res;
        }
        Py_DECREF(attr);
    }

    has = dfb_probe_mask(st, obj,
                         DFB_PB(DFB_PN_ARRAY_INTERFACE) | DFB_PB_ARROW_HOST);
    if (has < 0) {
        return NULL;
    }
    if ((has & DFB_PB(DFB_PN_ARRAY_INTERFACE)) &&
        (r = dfb_probe_get(st, obj, DFB_PN_ARRAY_INTERFACE, &attr)) != 0) {
        if (r < 0) {
            return NULL;
        }
        PyObject *res = dfb_import_array_interface(st, obj, attr, dtype);
        Py_DECREF(attr);
        return res;
    }

    if (has_dlpack > 0) {
        return from_dlpack_or_arrow(st, obj, dtype);
    }

    /* An Arrow array (or a one-chunk stream): its values buffer
       (fixed-width types). */
    r = (has & DFB_PB_ARROW_HOST) ? 1 : dfb_type_is_arrow_producer(st, obj);
    if (r < 0) {
        return NULL;
    }
    if (r > 0) {
        return dfb_arrow_buffer_from_object(st, obj, dtype);
    }
    /* An Arrow device array (any device): its values buffer, never read. */
    if ((r = dfb_getattr_optional_str(obj, "__arrow_c_device_array__",
                                      &attr)) < 0) {
        return NULL;
    }
    Py_XDECREF(attr);
    if (r > 0) {
        return dfb_arrow_buffer_from_object(st, obj, dtype);
    }

    PyErr_Format(PyExc_TypeError,
                 "%.200s does not export memory through any protocol "
                 "dfbuffer knows (buffer protocol, __array_interface__, "
                 "__cuda_array_interface__, __dlpack__, interchange Buffer, "
                 "Arrow PyCapsule)",
                 Py_TYPE(obj)->tp_name);
    return NULL;
}

PyObject *
dfb_buffer_from_object(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyObject *dtype = NULL;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError,
                     "from_object() takes exactly one positional argument "
                     "(%zd given)",
                     nargs);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(k, "dtype") != 0) {
            PyErr_Format(PyExc_TypeError,
                         "from_object() got an unexpected keyword argument "
                         "'%S'",
                         k);
            return NULL;
        }
        dtype = args[nargs + i];
    }
    dfb_state *st = dfb_state_from_type((PyTypeObject *)cls);
    if (st == NULL) {
        return NULL;
    }
    return dfb_buffer_from_object_impl(st, args[0], dtype);
}
