/* dfbuffer: the interface of arrow_common.c: what the Arrow files share:
 * reference lists, capsule pointers and core's errors as exceptions.
 */
#ifndef DFBUFFER_ARROW_COMMON_H
#define DFBUFFER_ARROW_COMMON_H

#include "common.h"
#include "arrow_internal.h"

/* Appends `o` (stolen, may not be NULL).  Returns 0, or -1 with MemoryError
   (`o` is released). */
int
dfb_arrow_refs_add(ref_list *r, PyObject *o);

/* Drops every reference and frees the storage.  Cannot fail. */
void
dfb_arrow_refs_clear(ref_list *r);

/* returns the pointer of capsule `cap` named `name`, or
   NULL with TypeError (not a capsule, or another name).  `what` names the
   source in the message. */
void *
dfb_arrow_capsule_pointer(PyObject *cap, const char *name, const char *what);

/* Raises core's error `rc` (not DFB_OK) with the message in `err`:
   NotImplementedError for DFB_ENOTSUP, else ValueError.  Always returns
   -1. */
int
dfb_arrow_raise(dfb_code rc, const dfb_error *err);

#endif /* DFBUFFER_ARROW_COMMON_H */
