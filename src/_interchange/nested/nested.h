/* dfbuffer: the nested Arrow types (lists, list views, fixed-size lists
 * and tensors, structs, maps, unions) converted to NumPy straight from the
 * imported tree of ArrowArray nodes: the types the nested files share.
 * convert_nested.c walks the tree and converts the leaves with the flat
 * converters; convert_list.c and convert_struct.c build each nested level.
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

#endif /* DFBUFFER_NESTED_H */
