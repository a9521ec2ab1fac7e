/* dfbuffer: the interface of convert_list.c: the list kernels of the nested
 * converter (dfbuffer/nested.h): lists, large lists and maps (offsets), list
 * views (offsets and sizes), both read only through core's checked reader
 * (reader.h), and fixed-size lists, which are a reshaped view of their child
 * (the canonical fixed_shape_tensor extension: its shape and permutation).
 */
#ifndef DFBUFFER_CONVERT_LIST_H
#define DFBUFFER_CONVERT_LIST_H

#include "common.h"
#include "nested.h"

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

#endif /* DFBUFFER_CONVERT_LIST_H */
