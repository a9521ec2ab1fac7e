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

/* The deepest struct nesting that structs="flatten" opens. */
#define DFB_NESTED_MAX_DEPTH 64

#endif /* DFBUFFER_NESTED_H */
