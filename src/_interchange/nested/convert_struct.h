/* dfbuffer: the interface of convert_struct.c: the struct and union kernels of
 * the nested converter (dfbuffer/nested.h): structs to dicts of their fields'
 * values, dense and sparse unions to the values of the member each row names
 * (type ids and dense offsets read only through core's checked reader,
 * reader.h).
 */
#ifndef DFBUFFER_CONVERT_STRUCT_H
#define DFBUFFER_CONVERT_STRUCT_H

#include "common.h"
#include "nested.h"

/* struct (dicts) and union (the members' values)
   nodes.  Same returns. */
int
dfb_nested_struct(const dfb_nested_ctx *cx, const arrow_node *nd,
                  dfb_nested_out *out);
int
dfb_nested_union(const dfb_nested_ctx *cx, const arrow_node *nd,
                 const dfb_format *f, dfb_nested_out *out);

#endif /* DFBUFFER_CONVERT_STRUCT_H */
