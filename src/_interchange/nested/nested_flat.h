/* dfbuffer: the interface of nested_flat.c: structs="flatten" (see
 * dfbuffer/nested.h): the leaves of a table's struct columns as entries named
 * `parent.child`, the columns= selection over them (a leaf, or a struct and
 * every leaf below it), and a leaf chunk described for to_matrix with its
 * structs' null rows added to its validity.
 */
#ifndef DFBUFFER_NESTED_FLAT_H
#define DFBUFFER_NESTED_FLAT_H

#include "common.h"
#include "nested.h"

/* 1 if schema `s` is of pandas' "pandas.interval" extension type over its
   storage, a struct of two children named "left" and "right" (the
   bounds), with *meta (NULL when absent) and *meta_len set to its
   extension metadata (when `meta` is not NULL); 0 if not.  The readers
   make pandas.Interval objects of such a column, and flattening leaves it
   whole, as a pandas Interval column.  Cannot fail. */
int
dfb_nested_is_pandas_interval(const struct ArrowSchema *s, const char **meta,
                              int32_t *meta_len);

/* nested_flat.c, structs="flatten": a new list of one entry per column of
   the import (a table's struct columns opened when `open`: one per leaf,
   named `parent.child`), each a tuple (name, column index, path of child
   indices, names of the structs above it); columns with skip[c] set are
   left out (`skip` may be NULL).  Returns NULL with an exception
   (ValueError for structs nested too deep). */
PyObject *
dfb_nested_flat_entries(const arrow_import *imp, int is_table, int open,
                        const uint8_t *skip);

/* The entries `select` (None or NULL: all of them, ValueError when two
   share a name) names, in its order: a name gives its entry, or every
   leaf below the struct of that name.  Items that are not str are
   compared as str().  Returns a new list, or NULL with TypeError (a bare
   str), KeyError (no entry or struct of that name) or ValueError (a name
   that several entries have, or an entry and a struct). */
PyObject *
dfb_nested_flat_select(PyObject *entries, PyObject *select);

/* Reads entry `entry` of dfb_nested_flat_entries into its column *c,
   path[0 .. *depth) (path holds DFB_NESTED_MAX_DEPTH).  Returns 0, or -1
   with an exception. */
int
dfb_nested_flat_path(PyObject *entry, int64_t *c, int64_t *path, int *depth);

/* Describes chunk `b` of the leaf at `path` of column `c` into col / dict
   (as dfb_arrow_describe_node, its Buffers in `refs`), with the null rows
   of the structs above it added to its validity (a new bitmap, kept by
   list `keep`).  Returns 0, or -1 with an exception naming `name`. */
int
dfb_nested_describe_leaf(dfb_state *st, const arrow_import *imp, int is_table,
                         Py_ssize_t b, int64_t c, const int64_t *path,
                         int depth, dfb_column *col, dfb_column *dict,
                         ref_list *refs, PyObject *keep, const char *name);

#endif /* DFBUFFER_NESTED_FLAT_H */
