/* dfbuffer: the interface of nested_run_end.c: run-end encoded arrays of
 * nested values for the nested converter.
 */
#ifndef DFBUFFER_NESTED_RUN_END_H
#define DFBUFFER_NESTED_RUN_END_H

#include "common.h"
#include "nested.h"

/* The node kernel of a run-end encoded array of nested values: each row
   the value of the converted values its run names (run ends read through
   core's checked reader); a null value is a null row.  Same returns as the
   other kernels. */
int
dfb_nested_run_end(const dfb_nested_ctx *cx, const arrow_node *nd,
                   dfb_nested_out *out);

#endif /* DFBUFFER_NESTED_RUN_END_H */
