/* dfbuffer: the interface of convert_nested.c: nested Arrow columns to NumPy
 * (see dfbuffer/nested.h): the walk over the tree of ArrowArray nodes (each
 * node checked, then handed to its kernel in convert_list.c or
 * convert_struct.c), the leaves (converted by the flat converters), the
 * joining of chunks and structs="flatten".
 */
#ifndef DFBUFFER_CONVERT_NESTED_H
#define DFBUFFER_CONVERT_NESTED_H

#include "common.h"
#include "nested.h"

/* Converts every chunk of column `c` of the import and joins them,
   applying `opts` (its categorical_codes ignored).  Returns a new
   reference, or NULL with ValueError (malformed or changing memory),
   NotImplementedError (a type not read), RuntimeError (allow_copy=0 and
   a copy is needed) or MemoryError. */
PyObject *
dfb_nested_convert_column(dfb_state *st, const arrow_import *imp, int is_table,
                          int64_t c, const dfb_opts *opts, int allow_copy,
                          const char *name);

/* Converts the node at `path` (depth steps through structs; 0: the
   column itself) of every chunk of column `c` and joins them; a
   flattened struct's null rows are nulls of the leaf.  Same returns as
   dfb_nested_convert_column. */
PyObject *
dfb_nested_convert_path(dfb_state *st, const arrow_import *imp, int is_table,
                        int64_t c, const int64_t *path, int depth,
                        const dfb_opts *opts, int allow_copy,
                        const char *name);

/* Walks `path` (depth child indices through structs) down from node
   `nd`, ORing each struct's null rows into *pm (a new bool array, made
   when a struct has one), and leaves the leaf in *nd.  Returns 0, or -1
   with an exception. */
int
dfb_nested_walk_path(const dfb_nested_ctx *cx, arrow_node *nd,
                     const int64_t *path, int depth, PyArrayObject **pm);

/* Converts node `nd` (any type) into *out (zeroed by the caller; its
   references are the caller's, also on failure: dfb_nested_out_clear).
   Returns 0, or -1 with an exception set. */
int
dfb_nested_node(const dfb_nested_ctx *cx, const arrow_node *nd,
                dfb_nested_out *out);

#endif /* DFBUFFER_CONVERT_NESTED_H */
