/* dfbuffer: the few CPython C-API differences between 3.11 and 3.13, in
 * one place, with public non-deprecated API only.
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
