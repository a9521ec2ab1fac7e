/* dfbuffer: the interface of ixview_join.c: _ixview_slice and _ixview_concat
 * of the to_interchange view: one chunk re-based to a slice, and chunks joined
 * into new memory (string offsets through core's checked reader; dictionary
 * codes mapped to a joined dictionary).
 */
#ifndef DFBUFFER_IXVIEW_JOIN_H
#define DFBUFFER_IXVIEW_JOIN_H

#include "common.h"

/* _ixview_slice and _ixview_concat, added by
   dfb_ixview_state_init. */
extern PyMethodDef dfb_ixview_join_methods[];

#endif /* DFBUFFER_IXVIEW_JOIN_H */
