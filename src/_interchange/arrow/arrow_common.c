/* dfbuffer: what the Arrow files share: reference lists, capsule pointers
 * and core's errors as exceptions.
 *
 * Depends on no other Arrow file.
 */
#include "common.h"
#include "arrow.h"
#include "model.h"
#include "format.h"
#include "offsets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

int
dfb_arrow_refs_add(ref_list *r, PyObject *o)
{
    if (r->n == r->cap) {
        Py_ssize_t cap = r->cap ? 2 * r->cap : 16;
        PyObject **items = PyMem_Realloc(r->items, cap * sizeof(PyObject *));
        if (items == NULL) {
            Py_DECREF(o);
            PyErr_NoMemory();
            return -1;
        }
        r->items = items;
        r->cap = cap;
    }
    r->items[r->n++] = o;
    return 0;
}

void
dfb_arrow_refs_clear(ref_list *r)
{
    for (Py_ssize_t i = 0; i < r->n; i++) {
        Py_DECREF(r->items[i]);
    }
    PyMem_Free(r->items);
    r->items = NULL;
    r->n = r->cap = 0;
}

void *
dfb_arrow_capsule_pointer(PyObject *cap, const char *name, const char *what)
{
    if (PyCapsule_IsValid(cap, name)) {
        return PyCapsule_GetPointer(cap, name); /* the common case */
    }
    if (!PyCapsule_CheckExact(cap)) {
        PyErr_Format(PyExc_TypeError,
                     "%s must give a PyCapsule named '%s', got %.100s", what,
                     name, Py_TYPE(cap)->tp_name);
        return NULL;
    }
    const char *got = PyCapsule_GetName(cap);
    if (got == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (got == NULL || strcmp(got, name) != 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s must give a PyCapsule named '%s', got one named "
                     "'%s'",
                     what, name, got ? got : "(null)");
        return NULL;
    }
    return PyCapsule_GetPointer(cap, name);
}

int
dfb_arrow_raise(dfb_code rc, const dfb_error *err)
{
    PyErr_SetString(
        rc == DFB_ENOTSUP ? PyExc_NotImplementedError : PyExc_ValueError,
        err->message);
    return -1;
}
