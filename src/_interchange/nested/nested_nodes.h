/* dfbuffer: the interface of nested_nodes.c: the nodes of a nested Arrow tree
 * for the nested converter (dfbuffer/nested.h): their children, validity, rows
 * and items, shared by the list and struct kernels and the walk
 * (convert_nested.c).
 */
#ifndef DFBUFFER_NESTED_NODES_H
#define DFBUFFER_NESTED_NODES_H

#include "common.h"
#include "nested.h"

/* returns 1 if schema `s` is of a nested type this file
   family converts (its format starts with '+'; run-end encoded only with
   nested values, dfb_nested_run_end_is). */
int
dfb_nested_is(const struct ArrowSchema *s);

/* Returns 1 if schema `s` is dictionary-encoded with nested values
   (dfb_nested_is of its dictionary). */
int
dfb_nested_dict_is(const struct ArrowSchema *s);

/* Returns 1 if schema `s` is run-end encoded with values of a nested
   type (or a dictionary of one).  Cannot fail. */
int
dfb_nested_run_end_is(const struct ArrowSchema *s);

/* The nested null rule, applied by the walk to every converted node:
   *out's values as its level (cx->level) hands them out: unchanged at
   the top (the nulls= mode decides there), null elements filled (NaN,
   NaT, None; a new array, the mask kept) in an array handed out whole
   (DFB_NESTED_IN_ARRAY, or an N-D node DFB_NESTED_IN_ITEM); a 1-D item
   is None through its rowmask (dfb_nested_item).  Returns 0, or -1 with
   an exception. */
int
dfb_nested_settle(const dfb_nested_ctx *cx, dfb_nested_out *out);

/* A copy of context `cx` for the children of a node, whose values go to
   `level`.  Cannot fail. */
dfb_nested_ctx
dfb_nested_below(const dfb_nested_ctx *cx, dfb_nested_level level);

/* Drops the references of *o.  Cannot fail. */
void
dfb_nested_out_clear(dfb_nested_out *o);

/* Makes the child node `k` of `nd` covering child elements
   [first, first + count) (relative to the child's own offset), after
   checking that the child exists, that schema and array agree and that
   the range lies within the child's length.  Returns 0, or -1 with
   ValueError. */
int
dfb_nested_child(const dfb_nested_ctx *cx, const arrow_node *nd, int64_t k,
                 int64_t first, int64_t count, arrow_node *child);

/* A new read-only view of rows [start, end) of `values` (0 <= start <=
   end <= rows, checked by the caller).  Returns a new reference, or NULL
   with an exception. */
PyObject *
dfb_nested_rows(PyArrayObject *values, int64_t start, int64_t end);

/* The Python value of element `i` of a converted node: None where its
   rowmask says null, the object of an object array, a Python scalar of a
   1-D array, a read-only view of row i of an N-D one.  Returns a new
   reference, or NULL with an exception. */
PyObject *
dfb_nested_item(const dfb_nested_out *o, int64_t i);

/* A new 1-D object array of `n` Nones.  Returns NULL with MemoryError. */
PyArrayObject *
dfb_nested_objects(int64_t n);

/* Reads the validity bitmap of `nd` (buffer 0) into a new bool rowmask
   (NULL when no row is null).  Returns 0, or -1 with an exception. */
int
dfb_nested_validity(const arrow_node *nd, PyArrayObject **rowmask);

/* Raises ValueError for element `i` of column `name` whose offsets,
   sizes, type ids or union offsets are out of range (changed after they
   were read, or corrupt).  Returns -1. */
int
dfb_nested_bad(const char *name, const char *what, int64_t i);

#endif /* DFBUFFER_NESTED_NODES_H */
