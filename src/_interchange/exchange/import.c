/* dfbuffer: the importers of Buffer.from_object for a Buffer, an ndarray,
 * the array interfaces (host and CUDA), the buffer protocol and
 * interchange-protocol buffers, and the tail every importer ends in.
 *
 * The order in which Buffer.from_object tries them is protocols.c's; the
 * DLPack importers are dlpack.c's.  Every path ends in dfb_import_finish,
 * then dfb_buffer_from_data / dfb_buffer_new, which validate the dtype, the
 * device and the layout.
 */
#include "common.h"
#include "model.h"
#include "exchange.h"
#include "probe.h"
#include "dlpack_types.h"
#include "format.h"

#include <string.h>

static PyObject *
export_owner(dfb_state *st, PyObject *obj, int flags, Py_buffer **view_out);

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

/* Looks up attribute `name`.  Returns 1 with a new reference in *out, 0
   with *out = NULL when the attribute is missing (AttributeError
   swallowed), or -1 with an exception set. */
static int
lookup_attr(PyObject *obj, const char *name, PyObject **out)
{
    return dfb_getattr_optional_str(obj, name, out);
}

/* Parses a tuple of ints (shape or strides) into out[0..*n).  Returns 0,
   or -1 with TypeError / ValueError / OverflowError set. */
static int
parse_dim_tuple(PyObject *o, const char *proto, const char *what,
                Py_ssize_t *out, int *n)
{
    if (!PyTuple_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a tuple, not %.100s",
                     proto, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t len = PyTuple_GET_SIZE(o);
    if (len > DFB_MAXDIM) {
        PyErr_Format(PyExc_ValueError,
                     "%s: %s has %zd dimensions; at most %d are supported",
                     proto, what, len, DFB_MAXDIM);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        if (dfb_as_ssize(PyTuple_GET_ITEM(o, i), proto, what, &out[i]) < 0) {
            return -1;
        }
    }
    *n = (int)len;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The common tail: dtype override, then the Buffer                     */
/* ------------------------------------------------------------------ */

/* Builds the Buffer from the element-0 address and the producer's layout,
   applying the `override` dtype (NULL or None: keep `dtype`).  A different
   itemsize is allowed only on 1-D C-contiguous memory (the shape is
   recomputed; ValueError otherwise).  Borrows every argument; returns a
   new Buffer or NULL with an exception set. */
PyObject *
dfb_import_finish(dfb_state *st, char *data, PyObject *owner,
                  PyArray_Descr *dtype, int ndim, const Py_ssize_t *shape,
                  const Py_ssize_t *strides, DLDevice device, int readonly,
                  int native, PyObject *override)
{
    if (override == NULL || override == Py_None) {
        return dfb_buffer_from_data(st, data, owner, dtype, ndim, shape,
                                    strides, device, readonly, native);
    }
    /* The producer's own dtype must be one a Buffer may carry: never
       reinterpret object pointers (or strings, records) as numbers. */
    PyArray_Descr *od = dfb_parse_dtype((PyObject *)dtype, NULL);
    if (od == NULL) {
        return NULL;
    }
    Py_DECREF(od);
    PyArray_Descr *nd = dfb_parse_dtype(override, NULL);
    if (nd == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    Py_ssize_t old_is = PyDataType_ELSIZE(dtype);
    Py_ssize_t new_is = PyDataType_ELSIZE(nd);
    if (old_is == new_is) {
        res = dfb_buffer_from_data(st, data, owner, nd, ndim, shape, strides,
                                   device, readonly, native);
        goto done;
    }
    if (ndim != 1 ||
        (strides != NULL && shape[0] > 1 && strides[0] != old_is)) {
        PyErr_Format(PyExc_ValueError,
                     "dtype %R has itemsize %zd but the producer's %R has "
                     "%zd; a different itemsize needs 1-D contiguous memory",
                     (PyObject *)nd, new_is, (PyObject *)dtype, old_is);
        goto done;
    }
    Py_ssize_t nbytes;
    if (shape[0] < 0 || __builtin_mul_overflow(shape[0], old_is, &nbytes)) {
        PyErr_Format(PyExc_ValueError, "invalid length %zd", shape[0]);
        goto done;
    }
    if (nbytes % new_is != 0) {
        PyErr_Format(PyExc_ValueError,
                     "%zd elements of %R (%zd bytes) are not a whole number "
                     "of %R items",
                     shape[0], (PyObject *)dtype, nbytes, (PyObject *)nd);
        goto done;
    }
    Py_ssize_t n = nbytes / new_is;
    res = dfb_buffer_from_data(st, data, owner, nd, 1, &n, NULL, device,
                               readonly, native);
done:
    Py_DECREF(nd);
    return res;
}

/* ------------------------------------------------------------------ */
/* Lazy conjugate / negative views (torch)                           */
/* ------------------------------------------------------------------ */

/* Asks obj.<method>() when obj has such a callable.  Returns 1 if it
   answered true, 0 if false or absent (or not callable), -1 with the
   method's error set. */
static int
ask_flag(dfb_state *st, PyObject *obj, int method)
{
    PyObject *meth;
    int r = dfb_probe_get(st, obj, method, &meth);
    if (r <= 0) {
        return r;
    }
    if (!PyCallable_Check(meth)) {
        Py_DECREF(meth);
        return 0;
    }
    PyObject *res = PyObject_CallNoArgs(meth);
    Py_DECREF(meth);
    if (res == NULL) {
        return -1;
    }
    r = PyObject_IsTrue(res);
    Py_DECREF(res);
    return r;
}

/* Refuses a producer whose values are its memory conjugated or negated
   lazily: a torch tensor with the conjugate bit (`z.conj()`) or the
   negative bit (`z.conj().imag`) set.  torch 2.13 exports the negative
   bit's memory as is through __dlpack__, and both through
   __cuda_array_interface__, so reading it would give wrong values.
   Returns 0 when obj may be wrapped, or -1 with BufferError (or the
   error of obj.is_conj() / obj.is_neg()) set. */
int
dfb_import_refuse_lazy_views(dfb_state *st, PyObject *obj)
{
    static const int methods[] = {DFB_PN_IS_CONJ, DFB_PN_IS_NEG};
    static const char *const fixes[] = {"resolve_conj", "resolve_neg"};
    static const char *const bits[] = {"conjugate", "negative"};
    for (int i = 0; i < 2; i++) {
        int r = ask_flag(st, obj, methods[i]);
        if (r < 0) {
            return -1;
        }
        if (r > 0) {
            PyErr_Format(PyExc_BufferError,
                         "%.100s has its %s bit set: its memory does not "
                         "hold its values; call .%s() first",
                         Py_TYPE(obj)->tp_name, bits[i], fixes[i]);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* dfbuffer.Buffer                                                      */
/* ------------------------------------------------------------------ */

/* Returns `b` itself (dtype None) or a new Buffer over its memory with the
   dtype reinterpreted, owned by `b`; NULL with an exception set. */
PyObject *
dfb_import_buffer(dfb_state *st, DfbBuffer *b, PyObject *dtype)
{
    if (dtype == NULL || dtype == Py_None) {
        return Py_NewRef((PyObject *)b);
    }
    if (b->owner == NULL) {
        PyErr_SetString(PyExc_ValueError, "the Buffer has been cleared");
        return NULL;
    }
    return dfb_import_finish(st, b->data, (PyObject *)b, b->dtype, b->ndim,
                             b->shape, b->strides, b->device, b->readonly,
                             b->native, dtype);
}

/* ------------------------------------------------------------------ */
/* NumPy ndarray                                                        */
/* ------------------------------------------------------------------ */

/* Wraps an ndarray (owner = the array).  Returns a new Buffer or NULL. */
PyObject *
dfb_import_ndarray(dfb_state *st, PyArrayObject *a, PyObject *dtype)
{
    DLDevice cpu = {kDLCPU, 0};
    return dfb_import_finish(st, PyArray_BYTES(a), (PyObject *)a,
                             PyArray_DESCR(a), PyArray_NDIM(a),
                             PyArray_DIMS(a), PyArray_STRIDES(a), cpu,
                             !PyArray_ISWRITEABLE(a), DFB_NATIVE_NUMPY, dtype);
}

/* ------------------------------------------------------------------ */
/* __cuda_array_interface__ / __array_interface__                   */
/* ------------------------------------------------------------------ */

/* Returns a NEW reference to item `key` of dict `d` (NULL if absent, no
   exception), or NULL with an exception set (check PyErr_Occurred).  A
   new reference: a later look-up may run a colliding key's __eq__, which
   can remove any item. */
static PyObject *
dict_get(PyObject *d, const char *key)
{
    PyObject *k = PyUnicode_FromString(key);
    if (k == NULL) {
        return NULL;
    }
    PyObject *v;
    (void)dfb_dict_get_ref(d, k, &v);
    Py_DECREF(k);
    return v;
}

/* Returns 1 if `descr` describes a structured dtype (several fields or a
   named one), 0 if not, -1 with TypeError if it is not a list. */
static int
descr_is_structured(PyObject *descr, const char *proto)
{
    if (!PyList_Check(descr)) {
        PyErr_Format(PyExc_TypeError, "%s: descr must be a list, not %.100s",
                     proto, Py_TYPE(descr)->tp_name);
        return -1;
    }
    /* the producer's list: another thread may change it meanwhile, so
       its one item is read with a reference of our own */
    if (PyList_GET_SIZE(descr) != 1) {
        return 1;
    }
    PyObject *f = dfb_list_get_ref(descr, 0);
    if (f == NULL) {
        PyErr_Clear(); /* emptied meanwhile: not one unnamed field */
        return 1;
    }
    int r = 0;
    if (!PyTuple_Check(f) || PyTuple_GET_SIZE(f) < 2) {
        r = 1;
    }
    else {
        PyObject *fname = PyTuple_GET_ITEM(f, 0);
        r = !PyUnicode_Check(fname) || PyUnicode_GET_LENGTH(fname) != 0;
    }
    Py_DECREF(f);
    return r;
}

/* Parsed interface dict (owned references; release with iface_clear). */
typedef struct {
    PyArray_Descr *dtype; /* new reference */
    int ndim;
    Py_ssize_t shape[DFB_MAXDIM];
    Py_ssize_t strides[DFB_MAXDIM];
    int have_strides;
    PyObject *data; /* new reference; NULL if absent */
} iface;

/* Releases what parse_iface stored in `it`.  Cannot fail. */
static void
iface_clear(iface *it)
{
    Py_CLEAR(it->dtype);
    Py_CLEAR(it->data);
}

/* Converts the typestr of an interface to a new descr, or NULL with
   ValueError naming it (NumPy's parser raises SyntaxError, KeyError, ...
   for some strings: those become ValueError, the cause attached; TypeError
   and MemoryError stay). */
static PyArray_Descr *
typestr_descr(PyObject *typestr, const char *proto)
{
    PyArray_Descr *d = NULL;
    if (PyArray_DescrConverter(typestr, &d)) {
        return d;
    }
    if (PyErr_ExceptionMatches(PyExc_TypeError) ||
        PyErr_ExceptionMatches(PyExc_MemoryError) ||
        !PyErr_ExceptionMatches(PyExc_Exception)) {
        return NULL;
    }
    PyObject *exc = dfb_err_take();
    PyErr_Format(PyExc_ValueError, "%s: invalid typestr %R", proto, typestr);
    dfb_err_raise_from(exc);
    return NULL;
}

/* Parses the keys both interfaces share (version, shape, typestr, descr,
   strides, mask, data).  `cuda` selects the CUDA flavour.  Returns 0 with
   it->dtype a new reference, or -1 with an exception set. */
static int
parse_iface(PyObject *d, const char *proto, int cuda, iface *it)
{
    it->dtype = NULL;
    it->data = NULL;
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "%s must be a dict, not %.100s", proto,
                     Py_TYPE(d)->tp_name);
        return -1;
    }
    /* Every value is owned from its look-up on: a later look-up can run a
       colliding key's __eq__, which may delete anything from the dict. */
    PyObject *v = NULL, *mask = NULL, *shape = NULL, *typestr = NULL;
    PyObject *descr = NULL, *strides = NULL;
    int ret = -1;
    v = dict_get(d, "version");
    if (v == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "%s has no 'version'", proto);
        }
        goto done;
    }
    long ver = PyLong_Check(v) && !PyBool_Check(v) ? PyLong_AsLong(v) : -1;
    if (ver == -1 && PyErr_Occurred()) {
        PyErr_Clear();
    }
    if (cuda ? (ver < 2 || ver > 3) : ver != 3) {
        PyErr_Format(PyExc_ValueError,
                     "%s version %R is not supported (expected %s)", proto, v,
                     cuda ? "2 or 3" : "3");
        goto done;
    }
    mask = dict_get(d, "mask");
    if (mask == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (mask != NULL && mask != Py_None) {
        PyErr_Format(PyExc_BufferError,
                     "%s has a mask; dfbuffer does not import masked memory",
                     proto);
        goto done;
    }
    shape = dict_get(d, "shape");
    typestr = shape ? dict_get(d, "typestr") : NULL;
    if (shape == NULL || typestr == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "%s needs 'shape' and 'typestr'",
                         proto);
        }
        goto done;
    }
    if (parse_dim_tuple(shape, proto, "shape", it->shape, &it->ndim) < 0) {
        goto done;
    }
    if (!PyUnicode_Check(typestr)) {
        PyErr_Format(PyExc_TypeError, "%s: typestr must be a str, not %.100s",
                     proto, Py_TYPE(typestr)->tp_name);
        goto done;
    }
    descr = dict_get(d, "descr");
    if (descr == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (descr != NULL) {
        int s = descr_is_structured(descr, proto);
        if (s < 0) {
            goto done;
        }
        if (s) {
            PyErr_Format(PyExc_TypeError,
                         "%s describes a structured dtype %R; a Buffer holds "
                         "plain numbers only",
                         proto, descr);
            goto done;
        }
    }
    strides = dict_get(d, "strides");
    if (strides == NULL && PyErr_Occurred()) {
        goto done;
    }
    it->have_strides = strides != NULL && strides != Py_None;
    if (it->have_strides) {
        int n;
        if (parse_dim_tuple(strides, proto, "strides", it->strides, &n) < 0) {
            goto done;
        }
        if (n != it->ndim) {
            PyErr_Format(PyExc_ValueError,
                         "%s: strides has %d entries but shape has %d", proto,
                         n, it->ndim);
            goto done;
        }
    }
    it->data = dict_get(d, "data");
    if (it->data == NULL && PyErr_Occurred()) {
        goto done;
    }
    if ((it->dtype = typestr_descr(typestr, proto)) == NULL) {
        goto done;
    }
    ret = 0;
done:
    Py_XDECREF(v);
    Py_XDECREF(mask);
    Py_XDECREF(shape);
    Py_XDECREF(typestr);
    Py_XDECREF(descr);
    Py_XDECREF(strides);
    if (ret < 0) {
        iface_clear(it);
    }
    return ret;
}

/* Parses a (ptr, readonly) data tuple.  Returns 0, or -1 with an
   exception set. */
static int
parse_data_tuple(PyObject *data, const char *proto, char **ptr, int *readonly)
{
    if (PyTuple_GET_SIZE(data) != 2) {
        PyErr_Format(PyExc_ValueError,
                     "%s: data must be a (ptr, readonly) pair, got %R", proto,
                     data);
        return -1;
    }
    void *p;
    if (dfb_as_pointer(PyTuple_GET_ITEM(data, 0), proto, &p) < 0) {
        return -1;
    }
    int ro = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (ro < 0) {
        return -1;
    }
    *ptr = p;
    *readonly = ro;
    return 0;
}

/* Device of a CUDA-array-interface producer: (kDLCUDA, id) with the id from
   obj.__dlpack_device__() when the producer has one reporting a CUDA
   device, else 0 (the id is not knowable without the CUDA runtime).
   Returns 0 or -1 with an exception set. */
static int
cuda_device(PyObject *obj, DLDevice *out)
{
    out->device_type = kDLCUDA;
    out->device_id = 0;
    PyObject *meth;
    int r = lookup_attr(obj, "__dlpack_device__", &meth);
    if (r <= 0) {
        return r;
    }
    PyObject *dev = PyObject_CallNoArgs(meth);
    Py_DECREF(meth);
    if (dev == NULL) {
        return -1;
    }
    DLDevice d;
    r = dfb_parse_device(dev, &d);
    Py_DECREF(dev);
    if (r < 0) {
        return -1;
    }
    if (d.device_type == kDLCUDA || d.device_type == kDLCUDAManaged) {
        *out = d;
    }
    return 0;
}

/* Wraps a __cuda_array_interface__ dict `cai` of `obj` (owner = obj; the
   memory is never touched; the stream is not synchronised; a tensor with
   torch's conjugate or negative bit set is refused).  Returns a new
   Buffer or NULL. */
PyObject *
dfb_import_cai(dfb_state *st, PyObject *obj, PyObject *cai, PyObject *dtype)
{
    const char *proto = "__cuda_array_interface__";
    iface it;
    if (parse_iface(cai, proto, 1, &it) < 0) {
        return NULL;
    }
    PyObject *res = NULL;
    char *ptr;
    int readonly;
    DLDevice dev;
    if (it.data == NULL || !PyTuple_Check(it.data)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: data must be a (ptr, readonly) tuple", proto);
        goto done;
    }
    if (parse_data_tuple(it.data, proto, &ptr, &readonly) < 0 ||
        cuda_device(obj, &dev) < 0 ||
        dfb_import_refuse_lazy_views(st, obj) < 0) {
        goto done;
    }
    res = dfb_import_finish(st, ptr, obj, it.dtype, it.ndim, it.shape,
                            it.have_strides ? it.strides : NULL, dev, readonly,
                            DFB_NATIVE_CUDA_ARRAY_INTERFACE, dtype);
done:
    iface_clear(&it);
    return res;
}

/* Wraps an __array_interface__ dict `ai` of `obj`.  data = (ptr, readonly)
   gives owner = obj; data = a buffer object (or absent / None: obj's own
   buffer) is exported, `offset` applied and bounds-checked against the
   export, and owner = the holder of the export (export_owner).  Returns
   a new Buffer or NULL. */
PyObject *
dfb_import_array_interface(dfb_state *st, PyObject *obj, PyObject *ai,
                           PyObject *dtype)
{
    const char *proto = "__array_interface__";
    DLDevice cpu = {kDLCPU, 0};
    iface it;
    if (parse_iface(ai, proto, 0, &it) < 0) {
        return NULL;
    }
    PyObject *res = NULL, *mv = NULL;
    char *ptr;
    int readonly;
    if (it.data != NULL && PyTuple_Check(it.data)) {
        if (parse_data_tuple(it.data, proto, &ptr, &readonly) < 0) {
            goto done;
        }
        res = dfb_import_finish(st, ptr, obj, it.dtype, it.ndim, it.shape,
                                it.have_strides ? it.strides : NULL, cpu,
                                readonly, DFB_NATIVE_ARRAY_INTERFACE, dtype);
        goto done;
    }
    PyObject *src = (it.data == NULL || it.data == Py_None) ? obj : it.data;
    if (!PyObject_CheckBuffer(src)) {
        PyErr_Format(PyExc_TypeError,
                     "%s: data must be a (ptr, readonly) tuple or an object "
                     "with the buffer protocol, not %.100s",
                     proto, Py_TYPE(src)->tp_name);
        goto done;
    }
    Py_ssize_t offset = 0;
    PyObject *off = dict_get(ai, "offset");
    if (off == NULL && PyErr_Occurred()) {
        goto done;
    }
    int bad = off != NULL && off != Py_None &&
              dfb_as_ssize(off, proto, "offset", &offset) < 0;
    Py_XDECREF(off);
    if (bad) {
        goto done;
    }
    Py_buffer *view = NULL;
    mv = export_owner(st, src, PyBUF_SIMPLE, &view);
    if (mv == NULL) {
        goto done;
    }
    Py_ssize_t cstr[DFB_MAXDIM];
    const Py_ssize_t *strides = it.strides;
    Py_ssize_t is = PyDataType_ELSIZE(it.dtype), lo, hi;
    if (!it.have_strides) {
        Py_ssize_t s = is;
        for (int i = it.ndim - 1; i >= 0; i--) {
            cstr[i] = s;
            if (it.shape[i] > 0 && s > PY_SSIZE_T_MAX / it.shape[i]) {
                s = PY_SSIZE_T_MAX; /* extent check below reports it */
            }
            else {
                s *= it.shape[i] > 0 ? it.shape[i] : 1;
            }
        }
        strides = cstr;
    }
    for (int i = 0; i < it.ndim; i++) {
        if (it.shape[i] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: shape[%d] is negative", proto,
                         i);
            goto done;
        }
    }
    if (dfb_extent(it.ndim, it.shape, strides, is, &lo, &hi) < 0) {
        goto done;
    }
    if (hi > lo && (offset < 0 || offset + lo < 0 || offset > view->len ||
                    hi > view->len - offset)) {
        PyErr_Format(PyExc_ValueError,
                     "%s: offset %zd, shape and strides reach outside the "
                     "%zd-byte buffer",
                     proto, offset, view->len);
        goto done;
    }
    ptr = hi > lo ? (char *)view->buf + offset : (char *)view->buf;
    res = dfb_import_finish(st, ptr, mv, it.dtype, it.ndim, it.shape, strides,
                            cpu, view->readonly, DFB_NATIVE_ARRAY_INTERFACE,
                            dtype);
done:
    Py_XDECREF(mv);
    iface_clear(&it);
    return res;
}

/* ------------------------------------------------------------------ */
/* The buffer protocol                                                  */
/* ------------------------------------------------------------------ */

/* Maps a struct-module format (one item, optional byte-order prefix) to a
   new NumPy descr.  Returns NULL with TypeError naming the format when
   dfbuffer does not support it. */
static PyArray_Descr *
descr_from_format(const char *fmt, Py_ssize_t itemsize)
{
    fmt = fmt == NULL ? "B" : fmt;
    char ts[8];
    int size = dfb_struct_typestr(fmt, ts, sizeof(ts)); /* core's table */
    if (size < 0) {
        PyErr_Format(PyExc_TypeError,
                     "buffer format '%s' is not supported by dfbuffer "
                     "(one of ? b B h H i I l L q Q n N e f d Zf Zd, with an "
                     "optional @ = < > ! prefix)",
                     fmt);
        return NULL;
    }
    if (size != itemsize) {
        PyErr_Format(PyExc_BufferError,
                     "buffer format '%s' means %d bytes but the exporter "
                     "says itemsize %zd",
                     fmt, size, itemsize);
        return NULL;
    }
    return dfb_descr_from_typestr(ts);
}

/* The owner of Buffers made through the buffer protocol: a GC-tracked
   holder of one Py_buffer export.  Unlike a memoryview, it cannot be
   released from Python.  GC rule (docs/design.md, "Safety rules"): the
   collector sees the exporter only when clearing it, or anything it holds,
   cannot break the live export (see exporter_clear_safe); otherwise the
   export's reference stays invisible, so the exporter is a root for the
   collector while the export lives. */
typedef struct {
    PyObject_HEAD Py_buffer
        view;      /* view.obj == NULL until the export succeeded */
    int visit_obj; /* 1: tp_traverse visits view.obj */
} export_holder;

/* Returns 1 if the collector may clear `obj` (and what it holds) while a
   buffer export of it is live, else 0: its buffer slots are those of
   bytearray or array.array (or a subclass that does not override them),
   whose memory lives in the object itself and which have no tp_clear.  A
   memoryview, a Python __buffer__ or a Buffer is not: their tp_clear drops
   what the export still uses. */
static int
exporter_clear_safe(PyObject *obj)
{
    PyTypeObject *tp = Py_TYPE(obj);
    PyBufferProcs *bp = tp->tp_as_buffer;
    if (bp == NULL) {
        return 0;
    }
    /* the type that defines the buffer slots */
    PyTypeObject *base = tp;
    while (base->tp_base != NULL && base->tp_base->tp_as_buffer != NULL &&
           base->tp_base->tp_as_buffer->bf_getbuffer == bp->bf_getbuffer &&
           base->tp_base->tp_as_buffer->bf_releasebuffer ==
               bp->bf_releasebuffer) {
        base = base->tp_base;
    }
    if (base->tp_clear != NULL) {
        return 0;
    }
    return base == &PyByteArray_Type ||
           strcmp(base->tp_name, "array.array") == 0;
}

/* tp_traverse: the type, and the exporter when exporter_clear_safe. */
static int
export_holder_traverse(PyObject *op, visitproc visit, void *arg)
{
    export_holder *self = (export_holder *)op;
    Py_VISIT(Py_TYPE(op));
    if (self->visit_obj) {
        Py_VISIT(self->view.obj);
    }
    return 0;
}

/* tp_dealloc: releases the export exactly once, preserving any pending
   exception.  (No tp_clear: the Buffer's tp_clear breaks cycles.) */
static void
export_holder_dealloc(PyObject *op)
{
    export_holder *self = (export_holder *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    if (self->view.obj != NULL) {
        PyObject *exc = dfb_err_take();
        PyBuffer_Release(&self->view);
        dfb_err_give(exc);
    }
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyType_Slot export_holder_slots[] = {
    {Py_tp_doc, (void *)"A held buffer-protocol export (private)."},
    {Py_tp_traverse, export_holder_traverse},
    {Py_tp_dealloc, export_holder_dealloc},
    {0, NULL},
};

PyType_Spec dfb_export_holder_spec = {
    .name = "dfbuffer.buffer_export",
    .basicsize = sizeof(export_holder),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = export_holder_slots,
};

/* Takes a buffer export of `obj` with `flags` (retrying with PyBUF_SIMPLE
   when the exporter refuses with BufferError) into a new export holder
   (see above) that owns it; *view points at the export.  The export is
   released exactly when the holder dies.  Returns the holder, or NULL with
   an exception set. */
static PyObject *
export_owner(dfb_state *st, PyObject *obj, int flags, Py_buffer **view_out)
{
    PyTypeObject *tp = st->export_type;
    export_holder *h = (export_holder *)tp->tp_alloc(tp, 0);
    if (h == NULL) {
        return NULL;
    }
    if (PyObject_GetBuffer(obj, &h->view, flags) < 0) {
        h->view.obj = NULL;
        if (flags == PyBUF_SIMPLE ||
            !PyErr_ExceptionMatches(PyExc_BufferError)) {
            Py_DECREF(h);
            return NULL;
        }
        PyErr_Clear();
        if (PyObject_GetBuffer(obj, &h->view, PyBUF_SIMPLE) < 0) {
            h->view.obj = NULL;
            Py_DECREF(h);
            return NULL;
        }
    }
    h->visit_obj = h->view.obj != NULL && exporter_clear_safe(h->view.obj);
    *view_out = &h->view;
    return (PyObject *)h;
}

/* Wraps an exporter of the buffer protocol (owner = an export holder, see
   export_owner).  Returns a new Buffer or NULL. */
PyObject *
dfb_import_buffer_protocol(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    DLDevice cpu = {kDLCPU, 0};
    Py_buffer *view = NULL;
    PyObject *owner = export_owner(st, obj, PyBUF_RECORDS_RO, &view);
    if (owner == NULL) {
        return NULL;
    }
    /* From here on the holder releases the export. */
    PyObject *res = NULL;
    PyArray_Descr *d = NULL;
    Py_ssize_t n1;
    const Py_ssize_t *shape = view->shape;
    int ndim = view->ndim;
    if (view->suboffsets != NULL) {
        PyErr_SetString(PyExc_BufferError,
                        "buffers with suboffsets (PIL-style indirect "
                        "arrays) are not supported");
        goto done;
    }
    if (ndim < 0 || ndim > DFB_MAXDIM) {
        PyErr_Format(PyExc_BufferError, "buffer has ndim %d", ndim);
        goto done;
    }
    if (view->format == NULL || (shape == NULL && ndim != 0)) {
        /* Plain bytes: the exporter gave no format, or no shape. */
        if (view->format != NULL && view->itemsize > 0 &&
            view->len % view->itemsize == 0) {
            d = descr_from_format(view->format, view->itemsize);
            n1 = view->len / view->itemsize;
        }
        else {
            d = PyArray_DescrFromType(NPY_UINT8);
            n1 = view->len;
        }
        shape = &n1;
        ndim = 1;
    }
    else {
        d = descr_from_format(view->format, view->itemsize);
    }
    if (d == NULL) {
        goto done;
    }
    res = dfb_import_finish(st, view->buf, owner, d, ndim, shape,
                            shape == &n1 ? NULL : view->strides, cpu,
                            view->readonly, DFB_NATIVE_BUFFER_PROTOCOL, dtype);
    Py_DECREF(d);
done:
    Py_DECREF(owner);
    return res;
}

/* ------------------------------------------------------------------ */
/* Interchange-protocol Buffer                                          */
/* ------------------------------------------------------------------ */

/* Wraps an interchange-protocol Buffer given its `ptr` and `bufsize`
   values (read once, by the caller's detection): 1-D bytes (or 1-D of
   `dtype`), device from __dlpack_device__(), owner = obj, read-only (the
   protocol grants read access only; Arrow memory is immutable).  Returns a
   new Buffer or NULL. */
PyObject *
dfb_import_interchange(dfb_state *st, PyObject *obj, PyObject *ptr_o,
                       PyObject *size_o, PyObject *dtype)
{
    dfb_block blk;
    if (dfb_read_interchange_buffer(st, obj, ptr_o, size_o, &blk) < 0) {
        return NULL;
    }
    PyArray_Descr *u1 = PyArray_DescrFromType(NPY_UINT8);
    if (u1 == NULL) {
        return NULL;
    }
    PyArray_Descr *d = dfb_parse_dtype(dtype, u1);
    Py_DECREF(u1);
    if (d == NULL) {
        return NULL;
    }
    PyObject *res =
        dfb_buffer_new(st, blk.ptr, blk.size, obj, d, 1, NULL, NULL,
                       blk.device, 1, DFB_NATIVE_INTERCHANGE);
    Py_DECREF(d);
    return res;
}
