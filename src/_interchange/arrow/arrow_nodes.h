/* dfbuffer: the Arrow nodes dfbuffer.to_arrow hands out (arrow_nodes.c):
 * schema nodes owning copies of their strings, array nodes owning their
 * list of buffer pointers and a strong reference to an owner, and the
 * release callbacks of both, which release and free the children and the
 * dictionary with their parent.
 */
#ifndef DFBUFFER_ARROW_NODES_H
#define DFBUFFER_ARROW_NODES_H

#include "common.h"
#include "arrow.h"

#include <stddef.h>

/* Fills `s` (uninitialised) as a node of format `fmt`, name `name`, the
   `metadata_size` bytes of Arrow metadata at `metadata` (NULL: none),
   `flags` and `nchildren` NULL children slots, all owned by the node.
   Returns 0, or -1 (out of memory; `s` released-marked).  Runs no
   Python. */
int
dfb_arrow_schema_init(struct ArrowSchema *s, const char *fmt, const char *name,
                      const char *metadata, size_t metadata_size,
                      int64_t flags, int64_t nchildren);

/* Fills `a` (uninitialised) as a node of `nbuf` NULL buffer pointers
   (a->buffers, writable by the caller) and `nchildren` NULL children
   slots, holding a new reference to `owner` that its release callback
   drops on any thread.  Returns 0, or -1 with MemoryError (`a`
   released-marked). */
int
dfb_arrow_array_init(struct ArrowArray *a, PyObject *owner, int64_t nbuf,
                     int64_t nchildren);

/* Releases schema `s` with its own callback unless it is released or moved
   out already.  Cannot fail. */
void
dfb_arrow_schema_release(struct ArrowSchema *s);

/* Releases array `a` with its own callback unless it is released or moved
   out already.  Cannot fail. */
void
dfb_arrow_array_release(struct ArrowArray *a);

/* Visits, for the tp_traverse of a holder that owns `a` (moved in), every
   reference dfbuffer's own Arrow exports keep in it: each node made by
   dfb_arrow_array_init (its owner; children and dictionary the same way)
   and an array of Buffer.__arrow_c_array__ (dfb_arrow_export_visit).  A
   producer's node, or a released one, visits nothing: its references are
   not ours to report.  Returns what `visit` returned. */
int
dfb_arrow_array_visit(const struct ArrowArray *a, visitproc visit, void *arg);

#endif /* DFBUFFER_ARROW_NODES_H */
