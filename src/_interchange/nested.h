/* dfbuffer: the nested Arrow types (lists, list views, fixed-size lists
 * and tensors, structs, maps, unions) converted to NumPy straight from the
 * imported tree of ArrowArray nodes.  convert_nested.c walks the tree and
 * converts the leaves with the flat converters; convert_list.c and
 * convert_struct.c build each nested level.  Internal to those files and
 * to arrow_convert.c.
 */
#ifndef DFBUFFER_NESTED_H
#define DFBUFFER_NESTED_H

#include "common.h"
#include "arrow_internal.h"
#include "types.h"

/* One node converted: `values` has one entry per row along its first
   axis (fixed-size lists: more axes); null rows of object results hold
   None.  `mask` (element-wise, values' shape) and `rowmask` (one per row)
   are bool arrays, NULL when nothing is null. */
typedef struct dfb_nested_out_ {
    PyArrayObject *values;
    PyArrayObject *mask;
    PyArrayObject *rowmask;
} dfb_nested_out;

/* What one conversion of a tree shares. */
typedef struct dfb_nested_ctx_ {
    dfb_state *st;
    ref_list *refs;   /* the Buffers and arrays the leaves' descriptions
                         made */
    int fill;         /* 1: nulls='fill' */
    int in_list;      /* 1: below a list, whose rows are views of filled
                         values (NaN, NaT, None where null) */
    int allow_copy;   /* passed to the leaves of fixed-size lists */
    const char *name; /* the column, in messages */
    /* converts a child node: dfb_nested_node (the kernels call it through
       this pointer, so that the walk's file depends on theirs and not the
       other way round) */
    int (*node)(const struct dfb_nested_ctx_ *cx, const arrow_node *nd,
                struct dfb_nested_out_ *out);
} dfb_nested_ctx;

/* Returns 1 if schema `s` is of a nested type this file family converts
   (its format starts with '+'; a dictionary of one is refused later). */
int
dfb_nested_is(const struct ArrowSchema *s);

/* Converts every chunk of column `c` of the import and joins them,
   applying `nulls` (its DFB_OPT_* bits ignored).  Returns a new
   reference, or NULL with ValueError (malformed or changing memory),
   NotImplementedError (a type not read), RuntimeError (allow_copy=0 and
   a copy is needed) or MemoryError. */
PyObject *
dfb_nested_convert_column(dfb_state *st, const arrow_import *imp, int is_table,
                          int64_t c, dfb_nulls_mode nulls, int allow_copy,
                          const char *name);

/* structs="flatten": adds one entry per leaf of struct column `c` to dict
   `out`, keyed `key.field` (`key.field.subfield` ...); a struct's null
   rows are nulls of every leaf below it.  Returns 0, or -1 with an
   exception (ValueError for a duplicate key). */
int
dfb_nested_flatten_column(dfb_state *st, const arrow_import *imp, int is_table,
                          int64_t c, PyObject *key, dfb_nulls_mode nulls,
                          int allow_copy, PyObject *out);

/* Converts node `nd` (any type) into *out (zeroed by the caller; its
   references are the caller's, also on failure: dfb_nested_out_clear).
   Returns 0, or -1 with an exception set. */
int
dfb_nested_node(const dfb_nested_ctx *cx, const arrow_node *nd,
                dfb_nested_out *out);

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

/* convert_list.c: the list, large list, map (rows of (key, value)
   tuples), list view and fixed-size list (and fixed_shape_tensor) nodes.
   `f` is nd's parsed format.  Returns 0 with *out filled, or -1 with an
   exception (*out then cleared by the caller). */
int
dfb_nested_list(const dfb_nested_ctx *cx, const arrow_node *nd,
                const dfb_format *f, dfb_nested_out *out);
int
dfb_nested_fixed_list(const dfb_nested_ctx *cx, const arrow_node *nd,
                      const dfb_format *f, dfb_nested_out *out);

/* convert_struct.c: struct (dicts) and union (the members' values)
   nodes.  Same returns. */
int
dfb_nested_struct(const dfb_nested_ctx *cx, const arrow_node *nd,
                  dfb_nested_out *out);
int
dfb_nested_union(const dfb_nested_ctx *cx, const arrow_node *nd,
                 const dfb_format *f, dfb_nested_out *out);

#endif /* DFBUFFER_NESTED_H */
