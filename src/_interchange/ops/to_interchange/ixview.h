/* dfbuffer: the typed view of an Arrow import that dfbuffer.to_interchange
 * presents (ixview.c): struct sequences with re-based Buffers.
 */
#ifndef DFBUFFER_IXVIEW_H
#define DFBUFFER_IXVIEW_H

#include "common.h"

/* Creates the IxField / IxChunk struct sequence types in `st` (added to
   module `m` as _IxField / _IxChunk) and adds ixview.c's module functions
   (_ixview_import, _ixview_slice, _ixview_concat, _ixview_values).
   Returns 0, or -1 with an exception set.  Called once by module init. */
int
dfb_ixview_state_init(PyObject *m, dfb_state *st);

#endif /* DFBUFFER_IXVIEW_H */
