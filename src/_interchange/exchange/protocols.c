/* dfbuffer: the protocol registry: the one table of the protocols
 * Buffer.from_object reads, in its order, which drives from_object (and
 * through it the C API's DfBuffer_FromObject), the report's protocol list
 * (dfbuffer._interchange._protocols) and the lists in the docs (checked
 * against it by tests/exchange/test_protocol_registry.py).
 *
 * The first protocol the object speaks wins; once a protocol is chosen its
 * errors propagate, there is no silent fallback to the next one (two
 * exceptions: an importer may decline, as when a property raises
 * AttributeError or pyarrow cannot be imported for __arrow_array__; and a
 * producer refusing DLPack falls back to its Arrow values buffer, see
 * from_dlpack_or_arrow).  An entry is recognised either by a check of the
 * object's type (no attribute look-up) or by the protocol names it needs,
 * probed on the type (probe.c) in the batches the table states: the names
 * of `batch` are asked together, in one walk of the MRO, when the entry is
 * reached, the rest of `needs` only when none of it is known to be missing.
 * The importers are import.c's, dlpack.c's, arrow_from_object.c's and
 * array_dunders.c's.
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "exchange.h"
#include "args.h"
#include "probe.h"
#include "dlpack_types.h"

#include <limits.h>

/* ------------------------------------------------------------------ */
/* The importers as the table calls them                                */
/* ------------------------------------------------------------------ */

/* What one from_object call asks for. */
typedef struct {
    PyObject *dtype; /* borrowed: NULL, None or a dtype-like */
    int allow_copy;  /* 0: __array__ is called with copy=False */
} request;

/* An importer: a new Buffer; NULL with an exception set; or NULL without
   one when the producer declines (the next entry is then tried). */
typedef PyObject *(*importer)(dfb_state *st, PyObject *obj, const request *rq);

/* A check of the object's type alone (no attribute look-up, no code run);
   NEEDS_NAMES: the entry is recognised by its probe names instead. */
typedef enum {
    NEEDS_NAMES = 0,
    IS_BUFFER,
    IS_NDARRAY,
    IS_CAPSULE,
    IS_BYTES_LIKE,
    HAS_BUFFER_SLOT,
} type_check;

/* DLPack (the C exchange API, else __dlpack__), and when the producer refuses
   it (TypeError, including pyarrow's ArrowTypeError for arrays with nulls;
   BufferError; NotImplementedError) and also speaks the Arrow PyCapsule
   interface, the Arrow values buffer. If Arrow refuses too, the DLPack error
   is raised.  Returns a new Buffer or NULL with an exception set. */
static PyObject *
from_dlpack_or_arrow(dfb_state *st, PyObject *obj, const request *rq)
{
    /* the type's DLPack 1.3 C exchange API first, when it has one dfbuffer
       reads (its name probed with __dlpack__'s, in the same walk); else
       (NULL without an exception) __dlpack__ */
    PyObject *res = NULL;
    int has = dfb_probe(st, obj, DFB_PN_DLPACK_EXCHANGE);
    if (has < 0) {
        return NULL;
    }
    if (has) {
        res = dfb_dlpack_import_exchange(st, obj, rq->dtype);
    }
    if (res == NULL && !PyErr_Occurred()) {
        res = dfb_dlpack_import_producer(st, obj, rq->dtype);
    }
    if (res != NULL || !(PyErr_ExceptionMatches(PyExc_TypeError) ||
                         PyErr_ExceptionMatches(PyExc_BufferError) ||
                         PyErr_ExceptionMatches(PyExc_NotImplementedError))) {
        return res;
    }
    PyObject *first = dfb_err_take();
    int r = dfb_type_is_arrow_producer(st, obj);
    if (r > 0) {
        res = dfb_arrow_buffer_from_object(st, obj, rq->dtype);
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

/* Importers of the table: see the entries' `yields`.  Same returns as
   `importer`. */
static PyObject *
imp_buffer(dfb_state *st, PyObject *obj, const request *rq)
{
    return dfb_import_buffer(st, (DfbBuffer *)obj, rq->dtype);
}

static PyObject *
imp_ndarray(dfb_state *st, PyObject *obj, const request *rq)
{
    return dfb_import_ndarray(st, (PyArrayObject *)obj, rq->dtype);
}

/* An importer `name` over `fn(st, obj, dtype)`. */
#define PLAIN_IMPORTER(name, fn)                                           \
    static PyObject *name(dfb_state *st, PyObject *obj, const request *rq) \
    {                                                                      \
        return fn(st, obj, rq->dtype);                                     \
    }

PLAIN_IMPORTER(imp_capsule, dfb_dlpack_import_capsule)
PLAIN_IMPORTER(imp_buffer_protocol, dfb_import_buffer_protocol)
PLAIN_IMPORTER(imp_arrow, dfb_arrow_buffer_from_object)
PLAIN_IMPORTER(imp_arrow_array_method, dfb_import_arrow_array_method)

/* The attribute of probe id `which`, given to `fn`; declines when the
   attribute raises AttributeError (torch's __cuda_array_interface__ on a
   CPU tensor).  Same returns as `importer`. */
static PyObject *
imp_attr(dfb_state *st, PyObject *obj, int which,
         PyObject *(*fn)(dfb_state *, PyObject *, PyObject *, PyObject *),
         PyObject *dtype)
{
    PyObject *attr;
    int r = dfb_probe_get(st, obj, which, &attr);
    if (r <= 0) {
        return NULL;
    }
    PyObject *res = fn(st, obj, attr, dtype);
    Py_DECREF(attr);
    return res;
}

static PyObject *
imp_cai(dfb_state *st, PyObject *obj, const request *rq)
{
    return imp_attr(st, obj, DFB_PN_CAI, dfb_import_cai, rq->dtype);
}

static PyObject *
imp_array_interface(dfb_state *st, PyObject *obj, const request *rq)
{
    return imp_attr(st, obj, DFB_PN_ARRAY_INTERFACE,
                    dfb_import_array_interface, rq->dtype);
}

static PyObject *
imp_interchange(dfb_state *st, PyObject *obj, const request *rq)
{
    PyObject *ptr, *size;
    int r = dfb_probe_get(st, obj, DFB_PN_PTR, &ptr);
    if (r <= 0) {
        return NULL;
    }
    if ((r = dfb_probe_get(st, obj, DFB_PN_BUFSIZE, &size)) <= 0) {
        Py_DECREF(ptr);
        return NULL;
    }
    PyObject *res = dfb_import_interchange(st, obj, ptr, size, rq->dtype);
    Py_DECREF(ptr);
    Py_DECREF(size);
    return res;
}

static PyObject *
imp_array_method(dfb_state *st, PyObject *obj, const request *rq)
{
    return dfb_import_array_method(st, obj, rq->dtype, rq->allow_copy);
}

/* Returns 1 if check `c` (not NEEDS_NAMES) accepts `obj`, else 0.  Cannot
   fail. */
static inline int
passes(type_check c, dfb_state *st, PyObject *obj)
{
    switch (c) {
        case IS_BUFFER:
            return DfbBuffer_Check(st, obj);
        case IS_NDARRAY:
            return PyArray_Check(obj);
        case IS_CAPSULE:
            return PyCapsule_CheckExact(obj);
        case IS_BYTES_LIKE:
            return PyBytes_CheckExact(obj) || PyByteArray_CheckExact(obj) ||
                   PyMemoryView_Check(obj);
        case HAS_BUFFER_SLOT:
            return PyObject_CheckBuffer(obj);
        default:
            return 0;
    }
}

/* ------------------------------------------------------------------ */
/* The registry                                                         */
/* ------------------------------------------------------------------ */

#define PB(x) DFB_PB(DFB_PN_##x)

/* One protocol of Buffer.from_object.  Its priority is its place in
   `registry` (1 first). */
typedef struct {
    const char *name;      /* as the docs and the report name it */
    const char *importer;  /* the C function that reads it */
    const char *yields;    /* what the Buffer is over, its owner */
    type_check check;      /* or NEEDS_NAMES: recognised by `needs` */
    uint32_t batch, needs; /* probe bits (see the top) */
    importer import;
} protocol;

static const protocol registry[] = {
    {"dfbuffer.Buffer", "dfb_import_buffer",
     "itself, or with `dtype` a re-typed Buffer owned by it", IS_BUFFER, 0, 0,
     imp_buffer},
    {"numpy.ndarray", "dfb_import_ndarray",
     "the array's memory, read from its fields; owner the array; read-only "
     "as the array",
     IS_NDARRAY, 0, 0, imp_ndarray},
    {"DLPack capsule", "dfb_dlpack_import_capsule",
     "the tensor ('dltensor_versioned' or 'dltensor'), consumed; the "
     "producer's deleter runs when the last Buffer dies",
     IS_CAPSULE, 0, 0, imp_capsule},
    {"bytes, bytearray, memoryview", "dfb_import_buffer_protocol",
     "the buffer protocol at once (host memory by construction, no "
     "attribute look-up)",
     IS_BYTES_LIKE, 0, 0, imp_buffer_protocol},
    {"__dlpack__ with __cuda_array_interface__", "dfb_dlpack_import_producer",
     "DLPack first when both are spoken (torch, CuPy): it states the device "
     "and carries a deleter and a read-only flag; the type's C exchange API "
     "(DLPack 1.3+) before __dlpack__, as for __dlpack__ below",
     NEEDS_NAMES, PB(DLPACK) | PB(CAI) | PB(PTR) | PB(DLPACK_EXCHANGE),
     PB(DLPACK) | PB(DLPACK_DEVICE) | PB(CAI), from_dlpack_or_arrow},
    {"__cuda_array_interface__", "dfb_import_cai",
     "device memory before any host protocol, never touched; owner the "
     "object",
     NEEDS_NAMES, 0, PB(CAI), imp_cai},
    {"buffer protocol", "dfb_import_buffer_protocol",
     "the export, held (pinned) by a GC-tracked holder until the last "
     "Buffer dies",
     HAS_BUFFER_SLOT, 0, 0, imp_buffer_protocol},
    {"interchange buffer (ptr, bufsize, __dlpack_device__)",
     "dfb_import_interchange",
     "read-only bytes on the stated device; owner the object; asked before "
     "its often missing or keyword-less __dlpack__",
     NEEDS_NAMES, PB(PTR), PB(PTR) | PB(BUFSIZE) | PB(DLPACK_DEVICE),
     imp_interchange},
    {"__array_interface__", "dfb_import_array_interface",
     "host memory (version 3); owner the object, or the held export of its "
     "buffer object",
     NEEDS_NAMES, PB(ARRAY_INTERFACE) | PB(ARROW_ARRAY) | PB(ARROW_STREAM),
     PB(ARRAY_INTERFACE), imp_array_interface},
    {"__dlpack__", "dfb_dlpack_import_producer",
     "the tensor of the type's __dlpack_c_exchange_api__ (version 1.3+, "
     "CPU tensors) or else the capsule of __dlpack__(max_version=...), "
     "consumed; a refusal falls back to the Arrow values buffer when Arrow is "
     "spoken too",
     NEEDS_NAMES, 0, PB(DLPACK) | PB(DLPACK_DEVICE), from_dlpack_or_arrow},
    {"__arrow_c_array__", "dfb_arrow_buffer_from_object",
     "the values buffer of a fixed-width Arrow array (read-only); owner the "
     "moved array's holder",
     NEEDS_NAMES, 0, PB(ARROW_ARRAY), imp_arrow},
    {"__arrow_c_stream__", "dfb_arrow_buffer_from_object",
     "the same for a stream of exactly one chunk (a polars Series)",
     NEEDS_NAMES, 0, PB(ARROW_STREAM), imp_arrow},
    {"__arrow_c_device_array__", "dfb_arrow_buffer_from_object",
     "the same on any device (the memory is never read)", NEEDS_NAMES,
     PB(ARROW_DEVICE_ARRAY) | PB(ARROW_DEVICE_STREAM) |
         PB(ARROW_ARRAY_METHOD) | PB(ARRAY_METHOD),
     PB(ARROW_DEVICE_ARRAY), imp_arrow},
    {"__arrow_c_device_stream__", "dfb_arrow_buffer_from_object",
     "the same for a one-chunk device stream", NEEDS_NAMES, 0,
     PB(ARROW_DEVICE_STREAM), imp_arrow},
    {"__arrow_array__", "dfb_import_arrow_array_method",
     "when pyarrow imports: the returned pyarrow array read as "
     "__arrow_c_array__ (pandas' extension arrays)",
     NEEDS_NAMES, 0, PB(ARROW_ARRAY_METHOD), imp_arrow_array_method},
    {"__array__", "dfb_import_array_method",
     "the last resort: the returned ndarray (copy=False when "
     "allow_copy=False), its owner; writable only if not copied and "
     "writable",
     NEEDS_NAMES, 0, PB(ARRAY_METHOD), imp_array_method},
};

#define N_PROTOCOLS ((int)(sizeof(registry) / sizeof(registry[0])))

/* Before a loop over the registry: unrolled whole, each entry's check,
   names and importer are constants the compiler folds (the walk then
   costs what hand-written tests would). */
#if defined(__GNUC__)
#define OVER_THE_REGISTRY _Pragma("GCC unroll 32")
#else
#define OVER_THE_REGISTRY
#endif

/* The registry's leading entries recognised by a type check alone (a
   Buffer, an ndarray, a DLPack capsule, bytes-likes): asked before the
   probe scope opens, which they do not need. */
#define FIRST_IN_SCOPE 4

/* Probes the names of `ask` on `obj`, adding them to *known and the ones
   found to *have.  Returns 0, or -1 with an exception set. */
static inline int
probe_into(dfb_state *st, PyObject *obj, uint32_t ask, uint32_t *known,
           uint32_t *have)
{
    int r = dfb_probe_mask(st, obj, ask);
    if (r < 0) {
        return -1;
    }
    *known |= ask;
    *have |= (uint32_t)r;
    return 0;
}

/* Tries the registry's entries in order on `obj` (inside its probe scope):
   the first whose check passes or whose names are all spoken imports it.
   Returns a new Buffer, or NULL with an exception set (TypeError when no
   entry applies or all declined). */
static PyObject *
from_registry(dfb_state *st, PyObject *obj, const request *rq)
{
    uint32_t known = 0, have = 0;
    /* the first FIRST_IN_SCOPE entries were asked by the caller */
    OVER_THE_REGISTRY
    for (int i = FIRST_IN_SCOPE; i < N_PROTOCOLS; i++) {
        const protocol *p = &registry[i];
        if (p->check != NEEDS_NAMES) {
            if (!passes(p->check, st, obj)) {
                continue;
            }
        }
        else {
            /* the batch, then the rest of the needs unless one of them is
               known to be missing */
            uint32_t ask = p->batch & ~known;
            if (ask != 0 && probe_into(st, obj, ask, &known, &have) < 0) {
                return NULL;
            }
            if ((p->needs & known & ~have) != 0) {
                continue;
            }
            ask = p->needs & ~known;
            if (ask != 0 && probe_into(st, obj, ask, &known, &have) < 0) {
                return NULL;
            }
            if ((have & p->needs) != p->needs) {
                continue;
            }
        }
        PyObject *res = p->import(st, obj, rq);
        if (res != NULL || PyErr_Occurred()) {
            return res;
        }
    }
    PyObject *names = PyUnicode_FromString("");
    for (int i = 0; names != NULL && i < N_PROTOCOLS; i++) {
        PyObject *more = PyUnicode_FromFormat("%U%s%s", names, i ? ", " : "",
                                              registry[i].name);
        Py_SETREF(names, more);
    }
    if (names != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "%.200s does not export memory through any protocol "
                     "dfbuffer knows (%U)",
                     Py_TYPE(obj)->tp_name, names);
        Py_DECREF(names);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                         */
/* ------------------------------------------------------------------ */

/* Buffer.from_object(obj, dtype=dtype, allow_copy=allow_copy): a Buffer
   (the registry's first entry that obj speaks), or NULL with an exception
   set. */
PyObject *
dfb_protocols_import(dfb_state *st, PyObject *obj, PyObject *dtype,
                     int allow_copy)
{
    request rq = {dtype, allow_copy};
    OVER_THE_REGISTRY
    for (int i = 0; i < FIRST_IN_SCOPE; i++) {
        if (passes(registry[i].check, st, obj)) {
            return registry[i].import(st, obj, &rq);
        }
    }
    /* each protocol probed once per call (the Arrow import answers its own
       probes from this scope's record) */
    uint64_t scope = dfb_probe_scope_open(st, obj);
    PyObject *res = from_registry(st, obj, &rq);
    dfb_probe_scope_close(st, scope);
    return res;
}

/* dfb_protocols_import with allow_copy (declared in exchange.h). */
PyObject *
dfb_buffer_from_object_impl(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    return dfb_protocols_import(st, obj, dtype, 1);
}

PyObject *
dfb_buffer_from_object(PyObject *cls, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyObject *dtype = NULL, *allow_copy = NULL;
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
        if (PyUnicode_CompareWithASCIIString(k, "dtype") == 0) {
            dtype = args[nargs + i];
        }
        else if (PyUnicode_CompareWithASCIIString(k, "allow_copy") == 0) {
            allow_copy = args[nargs + i];
        }
        else {
            PyErr_Format(PyExc_TypeError,
                         "from_object() got an unexpected keyword argument "
                         "'%S'",
                         k);
            return NULL;
        }
    }
    int copy_ok = 1;
    if (dfb_parse_bool("from_object", allow_copy, "allow_copy", &copy_ok) <
        0) {
        return NULL;
    }
    dfb_state *st = dfb_state_from_type((PyTypeObject *)cls);
    if (st == NULL) {
        return NULL;
    }
    return dfb_protocols_import(st, args[0], dtype, copy_ok);
}

/* _protocols(): the registry as a tuple of (name, priority, importer,
   yields) tuples, in order.  New tuple, or NULL with an exception set. */
static PyObject *
protocols_py(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    PyObject *out = PyTuple_New(N_PROTOCOLS);
    for (int i = 0; out != NULL && i < N_PROTOCOLS; i++) {
        const protocol *p = &registry[i];
        PyObject *row =
            Py_BuildValue("(siss)", p->name, i + 1, p->importer, p->yields);
        if (row == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, row);
    }
    return out;
}

/* _host_readable(device_type): core's host-readable-device predicate for
   Python (dfbuffer.testing).  A new bool, or NULL with TypeError /
   OverflowError for a non-int. */
static PyObject *
host_readable_py(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "device type must be an int, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    int overflow;
    long t = PyLong_AsLongAndOverflow(arg, &overflow);
    if (t == -1 && PyErr_Occurred()) {
        return NULL;
    }
    return PyBool_FromLong(overflow == 0 && t >= INT_MIN && t <= INT_MAX &&
                           dfb_dlpack_host_readable((int)t));
}

PyMethodDef dfb_protocol_methods[] = {
    {"_host_readable", host_readable_py, METH_O,
     "_host_readable(device_type, /)\n--\n\nWhether the host can read the "
     "memory of a DLPack device type (private)."},
    {"_protocols", protocols_py, METH_NOARGS,
     "_protocols()\n--\n\nThe protocols Buffer.from_object reads, in its "
     "order: (name, priority, importer, yields) tuples (private)."},
    {NULL},
};
