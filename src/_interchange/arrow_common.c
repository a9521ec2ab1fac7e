/* dfbuffer: what the Arrow files share: checked arithmetic, reference
 * lists, capsule pointers and stream error reporting.
 *
 * Depends on no other Arrow file (arrow_device.c uses it too).
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/arrow_device.h"
#include "dfbuffer/arrow_internal.h"
#include "dfbuffer/probe.h"
#include "dfbuffer/convert.h"
#include "format.h"
#include "offsets.h"
#include "dfbuffer/frame.h"
#include "dfbuffer/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

/* Returns a+b in *out and 0, or -1 (no exception) on overflow or when
   either is negative. */
int
dfb_arrow_add_nonneg(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || __builtin_add_overflow(a, b, out)) {
        return -1;
    }
    return 0;
}

/* Returns a*b in *out and 0, or -1 (no exception) on overflow. */
int
dfb_arrow_mul_nonneg(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, out) ||
        *out > PY_SSIZE_T_MAX) {
        return -1;
    }
    return 0;
}

/* Appends `o` (stolen, may not be NULL).  Returns 0, or -1 with MemoryError
   (`o` is released). */
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

/* Drops every reference and frees the storage.  Cannot fail. */
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

/* Returns the pointer of capsule `cap` named `name`, or NULL with
   TypeError (not a capsule, or another name).  `what` names the source in
   the message. */
void *
dfb_arrow_capsule_pointer(PyObject *cap, const char *name, const char *what)
{
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

/* Sets the exception for a failed stream callback with errno `rc`
   (EINVAL -> ValueError, ENOMEM -> MemoryError, ENOSYS ->
   NotImplementedError, else OSError).  Always returns -1. */
int
dfb_arrow_stream_failed(const char *kind, const char *what, int rc,
                        const char *msg)
{
    PyObject *exc = rc == EINVAL   ? PyExc_ValueError
                    : rc == ENOMEM ? PyExc_MemoryError
                    : rc == ENOSYS ? PyExc_NotImplementedError
                                   : PyExc_OSError;
    PyErr_Format(exc, "%s %s failed (error %d): %s", kind, what, rc,
                 msg ? msg : "no message");
    return -1;
}

int
dfb_arrow_check_struct_schema(const struct ArrowSchema *s)
{
    if (s->n_children < 0 || (s->n_children > 0 && s->children == NULL)) {
        PyErr_SetString(PyExc_ValueError,
                        "struct schema with a bad children list");
        return -1;
    }
    for (int64_t c = 0; c < s->n_children; c++) {
        if (s->children[c] == NULL || s->children[c]->format == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "struct schema child %lld is NULL or has no format",
                         (long long)c);
            return -1;
        }
    }
    return 0;
}

int
dfb_arrow_check_struct_children(const struct ArrowSchema *s,
                                const struct ArrowArray *a)
{
    if (a->n_children != s->n_children ||
        (a->n_children > 0 && a->children == NULL)) {
        PyErr_Format(PyExc_ValueError,
                     "struct array has %lld children, its schema %lld",
                     (long long)a->n_children, (long long)s->n_children);
        return -1;
    }
    return 0;
}

int
dfb_arrow_check_pair(PyObject *res, const char *method, const char *second)
{
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "%s must return a tuple (schema capsule, %s), got %.100s",
                     method, second, Py_TYPE(res)->tp_name);
        return -1;
    }
    return 0;
}
