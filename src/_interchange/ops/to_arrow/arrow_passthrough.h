/* dfbuffer: the pass-through half of dfbuffer.to_arrow (arrow_passthrough.c):
 * an Arrow producer's columns handed out again node for node, zero-copy,
 * for every format (nested, views, run-end encoded, extension types).
 */
#ifndef DFBUFFER_ARROW_PASSTHROUGH_H
#define DFBUFFER_ARROW_PASSTHROUGH_H

#include "common.h"
#include "arrow.h"

/* _arrow_nodes(obj): imports Arrow producer `obj` once and returns
   (fields, batches) in _arrow_table_stream's form, each field carrying a
   schema capsule and each chunk an array node (see arrow_passthrough.c).
   Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_arrow_nodes_py(PyObject *module, PyObject *obj);

/* _arrow_column_nodes(obj): as _arrow_nodes, the producer read as one
   column (a struct array, or a record batch, is one struct column: a
   mapping's value).  Returns a new reference, or NULL with an exception
   set. */
PyObject *
dfb_arrow_column_nodes_py(PyObject *module, PyObject *obj);

/* Returns 1 if `o` is a field's schema capsule made by _arrow_nodes, else
   0.  Cannot fail. */
int
dfb_arrow_is_schema_node(PyObject *o);

/* The spec of dfbuffer._arrow_array_node, a chunk's GC-tracked array node
   (module.c makes the type into st->array_node_type). */
extern PyType_Spec dfb_array_node_spec;

/* Returns 1 if `o` is a chunk's array node made by _arrow_nodes, else 0.
   Cannot fail. */
int
dfb_arrow_is_array_node(dfb_state *st, PyObject *o);

/* Fills `dst` (uninitialised) with a deep copy of `src` (metadata
   included) named `name` (NULL: src's own), `depth` levels below the top
   (0 for a caller).  Returns 0, or -1 with *why the ValueError message
   (NULL: out of memory; `dst` released-marked).  Runs no Python. */
int
dfb_arrow_schema_copy(const struct ArrowSchema *src, const char *name,
                      struct ArrowSchema *dst, int depth, const char **why);

/* Fills `dst` (uninitialised) with a deep copy (metadata included) of the
   schema in capsule `cap` (dfb_arrow_is_schema_node), named `name`.
   Returns 0, or -1 with an exception set (`dst` released-marked). */
int
dfb_arrow_node_schema(PyObject *cap, const char *name,
                      struct ArrowSchema *dst);

/* Fills `a` (uninitialised) over the array in array node `node`
   (dfb_arrow_is_array_node) with the top level's length, null count and
   offset replaced by the arguments: every node a copy of the producer's
   node whose buffers are the producer's own pointers, each holding a
   strong reference to `owner` (which must keep `node` alive) that its
   release callback drops on any thread.  Returns 0, or -1 with an
   exception set (ValueError for rows outside the node; `a`
   released-marked). */
int
dfb_arrow_node_array(PyObject *node, int64_t length, int64_t null_count,
                     int64_t offset, PyObject *owner, struct ArrowArray *a);

/* Fills `dst` (uninitialised) with a copy of producer array `src` and
   every node below it (children, dictionaries): the buffer pointers are
   the producer's, each node holds a strong reference to `owner` (which
   must keep `src` alive) that its release drops on any thread.  Returns
   0, or -1 with an exception set (`dst` released-marked). */
int
dfb_arrow_array_copy(const struct ArrowArray *src, PyObject *owner,
                     struct ArrowArray *dst);

#endif /* DFBUFFER_ARROW_PASSTHROUGH_H */
