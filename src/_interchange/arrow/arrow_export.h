/* dfbuffer: the interface of arrow_export.c: Arrow export:
 * Buffer.__arrow_c_schema__ / __arrow_c_array__.
 */
#ifndef DFBUFFER_ARROW_EXPORT_H
#define DFBUFFER_ARROW_EXPORT_H

#include "common.h"
#include "arrow_internal.h"

/* Arrow PyCapsule export of 1-D primitive buffers. */
PyObject *
dfb_buffer_arrow_c_schema(PyObject *self, PyObject *unused);
PyObject *
dfb_buffer_arrow_c_array(PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames);

/* checks a consumer's `requested_schema` (Py_None: none
   asked) against the format `fmt` a Buffer exports as.  Returns 0, or -1
   with TypeError / ValueError (not a live "arrow_schema" capsule) or
   NotImplementedError (another type) set. */
int
dfb_arrow_check_requested(PyObject *requested, const char *fmt);

/* capsule destructor of the "arrow_schema" capsules we
   make (the struct malloc'd): releases the schema unless a consumer moved
   it out, then frees the struct.  Cannot fail. */
void
dfb_arrow_schema_capsule_free(PyObject *cap);

/* the same for our "arrow_array" capsules. */
void
dfb_arrow_array_capsule_free(PyObject *cap);

/* the same for our "arrow_array_stream" capsules. */
void
dfb_arrow_stream_capsule_free(PyObject *cap);

/* fills `a` as the export of 1-D contiguous primitive
   Buffer `self` (no validity, its data as the values buffer), holding a
   strong reference to `self` that a->release drops on any thread
   (dfb_decref_any_thread).  Returns 0, or -1 with MemoryError (`a`
   untouched). */
int
dfb_arrow_export_fill(PyObject *self, struct ArrowArray *a);

/* Visits the Buffer an array filled by dfb_arrow_export_fill keeps (for
   the tp_traverse of a holder that owns `a`); any other array, or one
   released, visits nothing.  Returns what `visit` returned. */
int
dfb_arrow_export_visit(const struct ArrowArray *a, visitproc visit, void *arg);

#endif /* DFBUFFER_ARROW_EXPORT_H */
