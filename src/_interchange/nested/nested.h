/* dfbuffer: the interface of nested/: nested Arrow values (lists, list views,
 * fixed-size lists, maps, structs, unions, dictionaries of them) to NumPy
 * object arrays, and structs="flatten".
 */
#ifndef DFBUFFER_NESTED_H
#define DFBUFFER_NESTED_H

#include "common.h"
#include "arrow.h"
#include "types.h"

/* ---- the nested Arrow types (lists, list views, fixed-size lists and
 * tensors, structs, maps, unions) converted to NumPy straight from the
 * imported tree of ArrowArray nodes: the types the nested files share.
 * convert_nested.c walks the tree and converts the leaves with the flat
 * converters; convert_list.c and convert_struct.c build each nested level.
 * ---- */

/* One node converted: `values` has one entry per row along its first
   axis (fixed-size lists: more axes); null rows of object results hold
   None.  `mask` (element-wise, values' shape) and `rowmask` (one per row)
   are bool arrays, NULL when nothing is null. */
typedef struct dfb_nested_out_ {
    PyArrayObject *values;
    PyArrayObject *mask;
    PyArrayObject *rowmask;
} dfb_nested_out;

/* Where a node's converted values end up, which decides what its null
   elements become (the one nested null rule, dfb_nested_settle). */
typedef enum {
    /* the column itself, or the child of a fixed-size list (one array
       with it): values and element mask, `nulls=` applied at the top */
    DFB_NESTED_TOP = 0,
    /* below a list, large list, list view or map's offsets: rows are
       views of these values, so null elements hold NaN, NaT or None
       (ints and bools upcast to float64 where one is null) */
    DFB_NESTED_IN_ARRAY,
    /* below a struct, map entry, union or dictionary: each element is
       handed out as a Python item, None where null; an N-D element (a
       fixed-size list row) is an array whose null elements are filled
       as in DFB_NESTED_IN_ARRAY */
    DFB_NESTED_IN_ITEM,
} dfb_nested_level;

/* What one conversion of a tree shares. */
typedef struct dfb_nested_ctx_ {
    dfb_state *st;
    ref_list *refs;   /* the Buffers and arrays the leaves' descriptions
                         made */
    int level;        /* where this node's values go: a dfb_nested_level,
                         which decides what its null elements become
                         (dfb_nested_settle) */
    int allow_copy;   /* passed to the leaves of fixed-size lists */
    const char *name; /* the column, in messages */
    /* converts a child node: dfb_nested_node (the kernels call it through
       this pointer, so that the walk's file depends on theirs and not the
       other way round) */
    int (*node)(const struct dfb_nested_ctx_ *cx, const arrow_node *nd,
                struct dfb_nested_out_ *out);
} dfb_nested_ctx;

/* The deepest struct nesting that structs="flatten" opens. */
#define DFB_NESTED_MAX_DEPTH 64

/* ---- convert_list.c ---- */

/* the list, large list, map (rows of (key, value)
   tuples), list view and fixed-size list (and fixed_shape_tensor) nodes.
   `f` is nd's parsed format.  Returns 0 with *out filled, or -1 with an
   exception (*out then cleared by the caller). */
int
dfb_nested_list(const dfb_nested_ctx *cx, const arrow_node *nd,
                const dfb_format *f, dfb_nested_out *out);
int
dfb_nested_fixed_list(const dfb_nested_ctx *cx, const arrow_node *nd,
                      const dfb_format *f, dfb_nested_out *out);

/* ---- convert_nested.c ---- */

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

/* ---- convert_struct.c ---- */

/* struct (dicts) and union (the members' values)
   nodes.  Same returns. */
int
dfb_nested_struct(const dfb_nested_ctx *cx, const arrow_node *nd,
                  dfb_nested_out *out);
int
dfb_nested_union(const dfb_nested_ctx *cx, const arrow_node *nd,
                 const dfb_format *f, dfb_nested_out *out);

/* ---- nested_dictionary.c ---- */

/* the node kernel of a dictionary of nested values:
   each row the value of the converted dictionary its code names (codes
   read through core's checked reader); a null code or a null value is a
   null row.  Same returns as the other kernels. */
int
dfb_nested_dictionary(const dfb_nested_ctx *cx, const arrow_node *nd,
                      dfb_nested_out *out);

/* categorical="codes" of column `c` (dfb_nested_dict_is) in context
   `cx` (its refs hold what the descriptions make): a CategoricalCodes of
   its codes (zero-copy for one chunk; `nulls` applied to them) and its
   converted dictionary (one for every chunk; NotImplementedError when the
   chunks' dictionaries differ).  Returns a new reference, or NULL with an
   exception. */
PyObject *
dfb_nested_dictionary_codes(const dfb_nested_ctx *cx, const arrow_import *imp,
                            int is_table, int64_t c, const dfb_opts *opts);

/* ---- nested_flat.c ---- */

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

/* ---- nested_nodes.c ---- */

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

/* ---- nested_run_end.c ---- */

/* The node kernel of a run-end encoded array of nested values: each row
   the value of the converted values its run names (run ends read through
   core's checked reader); a null value is a null row.  Same returns as the
   other kernels. */
int
dfb_nested_run_end(const dfb_nested_ctx *cx, const arrow_node *nd,
                   dfb_nested_out *out);

#endif /* DFBUFFER_NESTED_H */
