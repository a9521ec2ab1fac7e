/* dfbuffer: the few CPython C-API differences between 3.11 and 3.15, in
 * one place, with public non-deprecated API only, and the shims of
 * free-threaded CPython's tools (docs/design.md, "Safety rules", rule 6).
 *
 * Included by common.h.  Everything here is static inline; nothing holds a
 * Python object in a C global.
 */
#ifndef DFBUFFER_COMPAT_H
#define DFBUFFER_COMPAT_H

#include <Python.h>

/* Takes the pending exception (NULL if none) and clears it: a new
   reference to the normalized exception object, with its traceback set.
   PyErr_GetRaisedException on 3.12+; PyErr_Fetch + Normalize on 3.11 (where
   those are not deprecated).  Never fails. */
static inline PyObject *
dfb_err_take(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    if (t == NULL) {
        return NULL;
    }
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb != NULL && v != NULL) {
        PyException_SetTraceback(v, tb);
    }
    Py_XDECREF(t);
    Py_XDECREF(tb);
    return v;
#endif
}

/* Makes `exc` (stolen; NULL clears any pending exception) the pending
   exception.  Never fails. */
static inline void
dfb_err_give(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    if (exc == NULL) {
        PyErr_Clear();
        return;
    }
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc,
                  PyException_GetTraceback(exc));
#endif
}

/* Python's `raise NEW from cause`: the exception just raised (NEW) becomes
   the pending one with `cause` (stolen) as its __cause__; when none is
   pending, `cause` is raised again.  Never fails. */
static inline void
dfb_err_raise_from(PyObject *cause)
{
    PyObject *now = dfb_err_take();
    if (now == NULL) {
        dfb_err_give(cause);
        return;
    }
    PyException_SetCause(now, cause); /* steals cause */
    dfb_err_give(now);
}

/* Looks up attribute `name` of `obj`.  Returns 1 with a new reference in
   *out, 0 with *out = NULL when the attribute is missing (AttributeError
   cleared), or -1 with *out = NULL and the error set (any other exception
   of the lookup is reported, never swallowed). */
static inline int
dfb_getattr_optional(PyObject *obj, PyObject *name, PyObject **out)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyObject_GetOptionalAttr(obj, name, out);
#else
    *out = PyObject_GetAttr(obj, name);
    if (*out != NULL) {
        return 1;
    }
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
#endif
}

/* Like dfb_getattr_optional with a C string name. */
static inline int
dfb_getattr_optional_str(PyObject *obj, const char *name, PyObject **out)
{
    PyObject *s = PyUnicode_InternFromString(name);
    if (s == NULL) {
        *out = NULL;
        return -1;
    }
    int r = dfb_getattr_optional(obj, s, out);
    Py_DECREF(s);
    return r;
}

/* Looks up `key` in dict `d` (exact dict semantics; a colliding key's
   __eq__ may run).  Returns 1 with a new reference in *out, 0 with *out =
   NULL when absent, -1 with the error set.  PyDict_GetItemRef on 3.13+. */
static inline int
dfb_dict_get_ref(PyObject *d, PyObject *key, PyObject **out)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyDict_GetItemRef(d, key, out);
#else
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v == NULL) {
        *out = NULL;
        return PyErr_Occurred() ? -1 : 0;
    }
    *out = Py_NewRef(v);
    return 1;
#endif
}

/* Returns a new reference to item `i` of list `list`, or NULL with
   IndexError (out of range) or TypeError (not a list) set.  The item is
   read with the list's own lock on free-threaded builds (another thread
   may shrink the list or replace the item meanwhile): PyList_GetItemRef
   on 3.13+; on 3.11/3.12 the GIL makes the borrowed read and the new
   reference one step. */
static inline PyObject *
dfb_list_get_ref(PyObject *list, Py_ssize_t i)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyList_GetItemRef(list, i);
#else
    return Py_XNewRef(PyList_GetItem(list, i));
#endif
}

/* dfb_dict_get_ref with a C string key.  Same returns. */
static inline int
dfb_dict_get_ref_str(PyObject *d, const char *key, PyObject **out)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyDict_GetItemStringRef(d, key, out);
#else
    PyObject *k = PyUnicode_FromString(key);
    if (k == NULL) {
        *out = NULL;
        return -1;
    }
    int r = dfb_dict_get_ref(d, k, out);
    Py_DECREF(k);
    return r;
#endif
}

/* A lock for the few pieces of module state that several threads write
   (docs/design.md, rule 6): PyMutex on 3.13+ (one byte, no allocation,
   the waiting thread detached so it never blocks a stop-the-world); on
   3.11/3.12 the GIL is the lock and these do nothing.  A region holding it
   runs no Python code (no call, no DECREF that may free an object). */
#if PY_VERSION_HEX >= 0x030D0000
typedef PyMutex dfb_mutex;
#define dfb_mutex_lock(m) PyMutex_Lock(m)
#define dfb_mutex_unlock(m) PyMutex_Unlock(m)
#else
typedef struct {
    char unused;
} dfb_mutex;
#define dfb_mutex_lock(m) ((void)(m))
#define dfb_mutex_unlock(m) ((void)(m))
#endif

/* Storage class of per-thread C state (plain C values, never a Python
   object: a thread's copy is not cleared when the thread ends). */
#if defined(_MSC_VER) && !defined(__clang__)
#define DFB_THREAD_LOCAL __declspec(thread)
#else
#define DFB_THREAD_LOCAL _Thread_local
#endif

/* Returns -1, 0 or 1: the sign of int `o` (PyLong_Check(o) must hold; no
   Python code runs, also for int subclasses).  Cannot fail. */
static inline int
dfb_long_sign(PyObject *o)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) {
        return overflow;
    }
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear(); /* not an int: cannot happen for PyLong_Check */
        return 0;
    }
    return (v > 0) - (v < 0);
}

/* Imports module `module` and returns a new reference to its attribute
   `name`, or NULL with the error set.  PyImport_ImportModuleAttrString on
   3.14+. */
static inline PyObject *
dfb_import_attr(const char *module, const char *name)
{
#if PY_VERSION_HEX >= 0x030E0000
    return PyImport_ImportModuleAttrString(module, name);
#else
    PyObject *mod = PyImport_ImportModule(module);
    if (mod == NULL) {
        return NULL;
    }
    PyObject *attr = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    return attr;
#endif
}

#endif /* DFBUFFER_COMPAT_H */
