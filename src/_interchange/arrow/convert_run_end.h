/* dfbuffer: the interface of convert_run_end.c: run-end encoded ("+r") Arrow
 * columns.
 */
#ifndef DFBUFFER_CONVERT_RUN_END_H
#define DFBUFFER_CONVERT_RUN_END_H

#include "common.h"
#include "arrow_internal.h"

/* describes the run-end encoded ("+r") node `nd` into
   `col`: fixed-width values in native order as a plain column of their
   type (decoded at fill speed), any other values as a RUN_END column of
   new int64 codes (the run of each row, decoded by core's run-ends reader)
   into its values child, described into `dict` by `describe`
   (dfb_arrow_describe_node).  Returns 0, or -1 with
   ValueError (bad run ends or children), NotImplementedError (`dict` NULL)
   or the values' description error. */
int
dfb_arrow_describe_run_end(dfb_state *st, const arrow_node *nd,
                           dfb_column *col, dfb_column *dict, ref_list *refs,
                           int decode_views, const char *name,
                           dfb_arrow_describe_fn describe);

#endif /* DFBUFFER_CONVERT_RUN_END_H */
