/* dfbuffer: cheap protocol probes.
 *
 * Special methods are looked up on the type, along its MRO, the way CPython
 * looks up dunders: an instance's __getattr__ (polars' Series has a Python
 * one, ~4.5 us per missing name) is never run for a probe.  Names are
 * interned once in the module state.
 *
 * The pandas DataFrame fast path is pandas_fast.c.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/convert.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/probe.h"

#include <stddef.h>
#include <string.h>

/* The field of st->str each probe id (DFB_PN_*) names. */
static const size_t probe_field[DFB_PN_MAX_VERSION_KW] = {
    [DFB_PN_ITEMS] = offsetof(dfb_names, items),
    [DFB_PN_DTYPE] = offsetof(dfb_names, dtype),
    [DFB_PN_TO_NUMPY] = offsetof(dfb_names, to_numpy),
    [DFB_PN_ILOC] = offsetof(dfb_names, iloc),
    [DFB_PN_INDEX] = offsetof(dfb_names, index),
    [DFB_PN_ARROW_ARRAY] = offsetof(dfb_names, arrow_c_array),
    [DFB_PN_ARROW_STREAM] = offsetof(dfb_names, arrow_c_stream),
    [DFB_PN_ARROW_DEVICE_ARRAY] = offsetof(dfb_names, arrow_c_device_array),
    [DFB_PN_ARROW_DEVICE_STREAM] = offsetof(dfb_names, arrow_c_device_stream),
    [DFB_PN_GET_BUFFERS] = offsetof(dfb_names, get_buffers),
    [DFB_PN_CAI] = offsetof(dfb_names, cuda_array_interface),
    [DFB_PN_DLPACK] = offsetof(dfb_names, dlpack),
    [DFB_PN_DLPACK_DEVICE] = offsetof(dfb_names, dlpack_device),
    [DFB_PN_IS_CONJ] = offsetof(dfb_names, is_conj),
    [DFB_PN_IS_NEG] = offsetof(dfb_names, is_neg),
    [DFB_PN_PANDAS] = offsetof(dfb_names, pandas),
    [DFB_PN_DATAFRAME] = offsetof(dfb_names, DataFrame),
    [DFB_PN_RANGE_INDEX] = offsetof(dfb_names, RangeIndex),
    [DFB_PN_PTR] = offsetof(dfb_names, ptr),
    [DFB_PN_BUFSIZE] = offsetof(dfb_names, bufsize),
    [DFB_PN_ARRAY_INTERFACE] = offsetof(dfb_names, array_interface),
};

PyObject *
dfb_probe_name(dfb_state *st, int which)
{
    return *(PyObject *const *)((const char *)&st->str + probe_field[which]);
}

void
dfb_probe_state_clear(dfb_state *st)
{
    memset(st->probe_cache, 0, sizeof(st->probe_cache));
}

/* Stores obj.<name> (new reference) in *out: returns 1, 0 with *out
   unchanged when the get raises AttributeError, -1 with the exception set
   otherwise. */
static int
get_present(PyObject *obj, PyObject *name, PyObject **out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    *out = v;
    return 1;
}

/* Returns the dict of type `tp` (new reference), NULL without an
   exception when it has none, NULL with an exception set on error. */
static PyObject *
type_dict(PyTypeObject *tp)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyType_GetDict(tp);
#else
    return Py_XNewRef(tp->tp_dict);
#endif
}

/* 1 if the own dict of type `tp` holds `name`, 0 if not, -1 with an
   exception set. */
static int
dict_has(PyTypeObject *tp, PyObject *name)
{
    PyObject *d = type_dict(tp);
    if (d == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *v = PyDict_GetItemWithError(d, name);
    int r = v != NULL ? 1 : (PyErr_Occurred() ? -1 : 0);
    Py_DECREF(d);
    return r;
}

/* dfb_type_lookup on type `tp`.  Same returns. */
static int
type_lookup(PyTypeObject *tp, PyObject *name, PyObject **out)
{
    *out = NULL;
    PyObject *mro = tp->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        /* a type not yet readied: ask the type object itself */
        return get_present((PyObject *)tp, name, out);
    }
    Py_INCREF(mro);
    int r = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *base = PyTuple_GET_ITEM(mro, i);
        if (!PyType_Check(base)) {
            continue;
        }
        PyObject *d = type_dict((PyTypeObject *)base);
        if (d == NULL) {
            if (PyErr_Occurred()) {
                r = -1;
                break;
            }
            continue;
        }
        PyObject *v = PyDict_GetItemWithError(d, name);
        Py_XINCREF(v);
        Py_DECREF(d);
        if (v != NULL) {
            *out = v;
            r = 1;
            break;
        }
        if (PyErr_Occurred()) {
            r = -1;
            break;
        }
    }
    Py_DECREF(mro);
    return r;
}

int
dfb_type_lookup(PyObject *obj, PyObject *name, PyObject **out)
{
    return type_lookup(Py_TYPE(obj), name, out);
}

int
dfb_type_has(PyObject *obj, PyObject *name)
{
    PyObject *v;
    int r = dfb_type_lookup(obj, name, &v);
    Py_XDECREF(v);
    return r;
}

static int
instance_has(PyObject *obj, PyObject *name);

int
dfb_probe_has(PyObject *obj, PyObject *name)
{
    int r = dfb_type_has(obj, name);
    if (r != 0) {
        return r;
    }
    return instance_has(obj, name);
}

/* The instance half of dfb_probe_has: 1 if `obj`'s instance dict holds
   `name` (types with the generic attribute hook only), 0 if not, -1 with
   an exception set. */
static int
instance_has(PyObject *obj, PyObject *name)
{
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp->tp_getattro != PyObject_GenericGetAttr || tp->tp_dictoffset == 0) {
        return 0;
    }
    PyObject *d = PyObject_GenericGetDict(obj, NULL);
    if (d == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    PyObject *v = PyDict_GetItemWithError(d, name);
    int r = v != NULL ? 1 : (PyErr_Occurred() ? -1 : 0);
    Py_DECREF(d);
    return r;
}

/* The cached answer for static type `tp` (never freed; its dict and MRO
   cannot change from Python): 1 if probe `which` is defined along its MRO,
   0 if not, -1 with an exception set. */
static inline int
static_type_has(dfb_state *st, PyTypeObject *tp, int which)
{
    dfb_probe_entry *e =
        &st->probe_cache[((uintptr_t)tp >> 4) % DFB_PROBE_CACHE];
    const uint32_t bit = (uint32_t)1 << which;
    if (e->tp == tp && (e->known & bit)) {
        return (e->present & bit) != 0; /* the hot path: answered before */
    }
    if (e->tp != tp) {
        e->tp = tp;
        e->known = e->present = 0;
    }
    if (!(e->known & bit)) {
        PyObject *v;
        int r = type_lookup(tp, dfb_probe_name(st, which), &v);
        if (r < 0) {
            return -1;
        }
        Py_XDECREF(v);
        /* the look-up ran no Python code (a static type's dict holds str
           keys only), so the entry is still ours */
        e->known |= bit;
        if (r) {
            e->present |= bit;
        }
    }
    return (e->present & bit) != 0;
}

/* dfb_type_has for probe `which` on a heap type: its MRO walked, except
   that the dict of a static base is skipped when the cache says the name
   is absent along that base's MRO (static_type_has; then it is absent
   from the base's own dict).  Same returns. */
static int
heap_type_has(dfb_state *st, PyTypeObject *tp, int which)
{
    PyObject *name = dfb_probe_name(st, which);
    PyObject *mro = tp->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        PyObject *v;
        int r = type_lookup(tp, name, &v);
        Py_XDECREF(v);
        return r;
    }
    Py_INCREF(mro);
    int r = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro) && r == 0; i++) {
        PyObject *base = PyTuple_GET_ITEM(mro, i);
        if (!PyType_Check(base)) {
            continue;
        }
        if (!PyType_HasFeature((PyTypeObject *)base, Py_TPFLAGS_HEAPTYPE) &&
            (r = static_type_has(st, (PyTypeObject *)base, which)) <= 0) {
            continue; /* absent from the base's dict too (or -1) */
        }
        r = dict_has((PyTypeObject *)base, name);
    }
    Py_DECREF(mro);
    return r;
}

/* The answer of probe `which` on `obj`, uncached by the memo: the type
   (static: cached; heap: walked), then the instance dict.  Same returns
   as dfb_probe. */
static inline int
probe_uncached(dfb_state *st, PyObject *obj, int which)
{
    PyTypeObject *tp = Py_TYPE(obj);
    int r = PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE)
                ? heap_type_has(st, tp, which)
                : static_type_has(st, tp, which);
    if (r != 0) {
        return r;
    }
    return instance_has(obj, dfb_probe_name(st, which));
}

int
dfb_probe(dfb_state *st, PyObject *obj, int which)
{
    if (!PyType_HasFeature(Py_TYPE(obj), Py_TPFLAGS_HEAPTYPE)) {
        /* a static type: its cache entry is as cheap as the scope's */
        return probe_uncached(st, obj, which);
    }
    dfb_probe_memo *m = &st->probe_memo;
    const uint32_t bit = (uint32_t)1 << which;
    if (m->token != 0 && m->obj == obj && (m->known & bit)) {
        return (m->present & bit) != 0;
    }
    int r = probe_uncached(st, obj, which);
    if (r < 0) {
        return -1;
    }
    /* the probe may have run code (a colliding key's __eq__) that opened
       or closed a scope: record only in the scope of this object */
    if (m->token != 0 && m->obj == obj) {
        m->known |= bit;
        if (r) {
            m->present |= bit;
        }
    }
    return r;
}

uint64_t
dfb_probe_scope_open(dfb_state *st, PyObject *obj)
{
    dfb_probe_memo *m = &st->probe_memo;
    m->token = ++m->issued;
    m->obj = obj;
    m->known = m->present = 0;
    return m->token;
}

void
dfb_probe_scope_close(dfb_state *st, uint64_t token)
{
    dfb_probe_memo *m = &st->probe_memo;
    if (m->token == token) {
        m->token = 0;
        m->obj = NULL;
        m->known = m->present = 0;
    }
}

int
dfb_probe_get(dfb_state *st, PyObject *obj, int which, PyObject **out)
{
    *out = NULL;
    int r = dfb_probe(st, obj, which);
    if (r <= 0) {
        return r;
    }
    return get_present(obj, dfb_probe_name(st, which), out);
}

PyObject *
dfb_probe_call(dfb_state *st, PyObject *obj, int which)
{
    PyObject *name = dfb_probe_name(st, which);
    PyTypeObject *tp = Py_TYPE(obj);
    if (PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE)) {
        PyObject *f;
        int r = type_lookup(tp, name, &f);
        if (r < 0) {
            return NULL;
        }
        if (r > 0 && PyFunction_Check(f)) {
            PyObject *res = PyObject_CallOneArg(f, obj);
            Py_DECREF(f);
            return res;
        }
        Py_XDECREF(f);
    }
    return PyObject_CallMethodNoArgs(obj, name);
}

int
dfb_probe_attr(PyObject *obj, PyObject *name, PyObject **out)
{
    *out = NULL;
    int r = dfb_probe_has(obj, name);
    if (r <= 0) {
        return r;
    }
    return get_present(obj, name, out);
}

int
dfb_probe_has_str(PyObject *obj, const char *name)
{
    PyObject *s = PyUnicode_InternFromString(name);
    if (s == NULL) {
        return -1;
    }
    int r = dfb_probe_has(obj, s);
    Py_DECREF(s);
    return r;
}

int
dfb_type_is_arrow_producer(dfb_state *st, PyObject *obj)
{
    static const int names[] = {DFB_PN_ARROW_ARRAY, DFB_PN_ARROW_STREAM,
                                DFB_PN_ARROW_DEVICE_ARRAY,
                                DFB_PN_ARROW_DEVICE_STREAM};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int r = dfb_probe(st, obj, names[i]);
        if (r != 0) {
            return r;
        }
    }
    return 0;
}
