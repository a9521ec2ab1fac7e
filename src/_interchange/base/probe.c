/* dfbuffer: cheap protocol probes.
 *
 * Special methods are looked up on the type, along its MRO, the way CPython
 * looks up dunders: an instance's __getattr__ (polars' Series has a Python
 * one, ~4.5 us per missing name) is never run for a probe.  Names are
 * interned once in the module state.
 *
 * The pandas DataFrame fast path is pandas_fast.c.
 */
#include "common.h"
#include "probe.h"

#include <stddef.h>
#include <string.h>

/* a probe mask is a non-negative int */
_Static_assert(DFB_PN_MAX_VERSION_KW <= 31, "probe ids fit an int mask");

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
    [DFB_PN_ARROW_ARRAY_METHOD] = offsetof(dfb_names, arrow_array_method),
    [DFB_PN_ARRAY_METHOD] = offsetof(dfb_names, array_method),
    [DFB_PN_DLPACK_EXCHANGE] = offsetof(dfb_names, dlpack_c_exchange_api),
};

PyObject *
dfb_probe_name(dfb_state *st, int which)
{
    return *(PyObject *const *)((const char *)&st->str + probe_field[which]);
}

/* One entry of the cache of protocol names found on static types. */
typedef struct {
    const PyTypeObject *tp; /* a static (never freed) type, or NULL */
    uint32_t known;         /* bit i: probe name i looked up */
    uint32_t present;       /* bit i: probe name i defined along the MRO */
} probe_entry;
#define PROBE_CACHE 64

/* The record of the probes made on one object during one conversion
   (dfb_probe_scope_open): each protocol is read once per conversion. */
typedef struct {
    uint64_t token;   /* of the scope that set it; 0: no scope open */
    uint64_t issued;  /* the last token issued */
    PyObject *obj;    /* borrowed: its scope's caller holds it */
    uint32_t known;   /* bit i: probe i answered */
    uint32_t present; /* bit i: probe i found */
} probe_memo;

/* Both are per thread (docs/design.md, rule 6): a conversion's scope is
   its own thread's, and no lock is taken on the hot path.  They hold no
   Python object (the memo's object is borrowed from the scope's caller and
   forgotten when the scope closes; a static type is never freed) and mean
   the same for every instance of the module: the probe ids, not the name
   objects, are recorded. */
typedef struct {
    probe_entry cache[PROBE_CACHE];
    probe_memo memo;
} probe_local;
static DFB_THREAD_LOCAL probe_local probe_tls;

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

static int
instance_has(PyObject *obj, PyObject *name);

/* dfb_type_lookup on type `tp`.  Same returns. */
static int
type_lookup(PyTypeObject *tp, PyObject *name, PyObject **out)
{
    *out = NULL;
    PyObject *mro = tp->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        /* a type not yet readied: ask the type object itself */
        return dfb_getattr_optional((PyObject *)tp, name, out);
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
        /* a new reference: another thread may delete the name from a
           heap type's dict meanwhile */
        PyObject *v;
        int g = dfb_dict_get_ref(d, name, &v);
        Py_DECREF(d);
        if (g != 0) {
            *out = v;
            r = g;
            break;
        }
    }
    Py_DECREF(mro);
    return r;
}

/* type_lookup for each probe id set in `want`: the bits of the names
   defined along the MRO of `tp` (>= 0), or -1 with an exception set. */
static int
type_lookup_mask(dfb_state *st, PyTypeObject *tp, uint32_t want)
{
    uint32_t found = 0;
    for (uint32_t todo = want; todo != 0; todo &= todo - 1) {
        const int which = __builtin_ctz(todo);
        PyObject *v;
        int r = type_lookup(tp, dfb_probe_name(st, which), &v);
        if (r < 0) {
            return -1;
        }
        Py_XDECREF(v);
        if (r) {
            found |= DFB_PB(which);
        }
    }
    return (int)found;
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

int
dfb_probe_has(PyObject *obj, PyObject *name)
{
    int r = dfb_type_has(obj, name);
    if (r != 0) {
        return r;
    }
    return instance_has(obj, name);
}

/* The instance __dict__ of `obj` (new reference) when its type has the
   generic attribute hook (no __getattr__ can run); NULL without an
   exception when there is none to read, NULL with an exception set on
   error. */
static PyObject *
instance_dict(PyObject *obj)
{
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp->tp_getattro != PyObject_GenericGetAttr || tp->tp_dictoffset == 0) {
        return NULL;
    }
    PyObject *d = PyObject_GenericGetDict(obj, NULL);
    if (d == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
    }
    return d;
}

/* The instance half of dfb_probe_has: 1 if `obj`'s instance dict holds
   `name` (types with the generic attribute hook only), 0 if not, -1 with
   an exception set. */
static int
instance_has(PyObject *obj, PyObject *name)
{
    PyObject *d = instance_dict(obj);
    if (d == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int r = PyDict_Contains(d, name);
    Py_DECREF(d);
    return r;
}

/* The bits of the probe ids set in `want` whose names dict `d` (held by
   the caller: a colliding key's __eq__ may run) holds: >= 0, or -1 with
   an exception set. */
static int
dict_mask(dfb_state *st, PyObject *d, uint32_t want)
{
    uint32_t found = 0;
    for (uint32_t todo = want; todo != 0; todo &= todo - 1) {
        const int which = __builtin_ctz(todo);
        int r = PyDict_Contains(d, dfb_probe_name(st, which));
        if (r < 0) {
            return -1;
        }
        if (r) {
            found |= DFB_PB(which);
        }
    }
    return (int)found;
}

/* instance_has for each probe id set in `want`, the instance dict read
   once: the bits found (>= 0), or -1 with an exception set. */
static int
instance_mask(dfb_state *st, PyObject *obj, uint32_t want)
{
    PyObject *d = instance_dict(obj);
    if (d == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int r = dict_mask(st, d, want);
    Py_DECREF(d);
    return r;
}

/* The bits of `want` whose names are defined along the MRO of static type
   `tp`, from its cache entry (filled on first use; a static type is never
   freed and its dict and MRO cannot change from Python): >= 0, or -1 with
   an exception set. */
static inline int
static_type_mask(dfb_state *st, PyTypeObject *tp, uint32_t want)
{
    probe_entry *e = &probe_tls.cache[((uintptr_t)tp >> 4) % PROBE_CACHE];
    if (e->tp == tp && (want & ~e->known) == 0) {
        return (int)(e->present & want); /* the hot path: answered before */
    }
    if (e->tp != tp) {
        e->tp = tp;
        e->known = e->present = 0;
    }
    const uint32_t todo = want & ~e->known;
    int r = type_lookup_mask(st, tp, todo);
    if (r < 0) {
        return -1;
    }
    /* the look-ups ran no Python code (a static type's dict holds str keys
       only), so the entry is still ours */
    e->known |= todo;
    e->present |= (uint32_t)r;
    return (int)(e->present & want);
}

/* The bits of `want` whose names are defined along the MRO of heap type
   `tp`, the MRO walked once: a heap type's own dict is read for the names
   not found yet, a static base answered from its cache entry
   (static_type_mask: its MRO is part of tp's, so a name it has is tp's
   too, and a name it lacks is absent from its own dict).  Returns the bits
   (>= 0) or -1 with an exception set. */
static int
heap_type_mask(dfb_state *st, PyTypeObject *tp, uint32_t want)
{
    PyObject *mro = tp->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        return type_lookup_mask(st, tp, want);
    }
    Py_INCREF(mro);
    uint32_t found = 0, todo = want;
    int r = 0;
    for (Py_ssize_t i = 0; todo != 0 && i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *base_o = PyTuple_GET_ITEM(mro, i);
        if (!PyType_Check(base_o)) {
            continue;
        }
        PyTypeObject *base = (PyTypeObject *)base_o;
        if (!PyType_HasFeature(base, Py_TPFLAGS_HEAPTYPE)) {
            if ((r = static_type_mask(st, base, todo)) < 0) {
                break;
            }
            found |= (uint32_t)r;
            todo &= ~(uint32_t)r;
            continue;
        }
        PyObject *d = type_dict(base);
        if (d == NULL) {
            if (PyErr_Occurred()) {
                r = -1;
                break;
            }
            continue;
        }
        r = dict_mask(st, d, todo); /* d and mro are held */
        Py_DECREF(d);
        if (r < 0) {
            break;
        }
        found |= (uint32_t)r;
        todo &= ~(uint32_t)r;
    }
    Py_DECREF(mro);
    return r < 0 ? -1 : (int)found;
}

int
dfb_probe_mask(dfb_state *st, PyObject *obj, uint32_t want)
{
    PyTypeObject *tp = Py_TYPE(obj);
    if (!PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE)) {
        /* a static type: its cache entry is as cheap as the scope's */
        int r = static_type_mask(st, tp, want);
        if (r < 0 || (uint32_t)r == want) {
            return r;
        }
        int ri = instance_mask(st, obj, want & ~(uint32_t)r);
        return ri < 0 ? -1 : (r | ri);
    }
    probe_memo *m = &probe_tls.memo;
    uint32_t found = 0, todo = want;
    if (m->token != 0 && m->obj == obj) {
        found = m->present & want;
        todo &= ~m->known;
        if (todo == 0) {
            return (int)found; /* the hot path: answered in this scope */
        }
    }
    int r = heap_type_mask(st, tp, todo);
    if (r < 0) {
        return -1;
    }
    const uint32_t miss = todo & ~(uint32_t)r;
    int ri = miss != 0 ? instance_mask(st, obj, miss) : 0;
    if (ri < 0) {
        return -1;
    }
    const uint32_t got = (uint32_t)r | (uint32_t)ri;
    /* the probes may have run code (a colliding key's __eq__) that opened
       or closed a scope: record only in the scope of this object */
    if (m->token != 0 && m->obj == obj) {
        m->known |= todo;
        m->present |= got;
    }
    return (int)(found | got);
}

int
dfb_probe(dfb_state *st, PyObject *obj, int which)
{
    int r = dfb_probe_mask(st, obj, DFB_PB(which));
    return r < 0 ? -1 : r != 0;
}

uint64_t
dfb_probe_scope_open(dfb_state *st, PyObject *obj)
{
    (void)st;
    probe_memo *m = &probe_tls.memo;
    m->token = ++m->issued;
    m->obj = obj;
    m->known = m->present = 0;
    return m->token;
}

void
dfb_probe_scope_close(dfb_state *st, uint64_t token)
{
    (void)st;
    probe_memo *m = &probe_tls.memo;
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
    return dfb_getattr_optional(obj, dfb_probe_name(st, which), out);
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
    /* the host names first, and the device names only if both are absent */
    int r = dfb_probe_mask(st, obj, DFB_PB_ARROW_HOST);
    if (r == 0) {
        r = dfb_probe_mask(st, obj,
                           DFB_PB(DFB_PN_ARROW_DEVICE_ARRAY) |
                               DFB_PB(DFB_PN_ARROW_DEVICE_STREAM));
    }
    return r < 0 ? -1 : r != 0;
}
