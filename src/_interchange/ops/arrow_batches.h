/* dfbuffer: the interface of arrow_batches.c: an Arrow stream read one
 * record batch at a time (_ArrowBatchReader), its batches with zero-copy
 * row slices (_ArrowBatch), and a stream over several slices
 * (_arrow_batch_stream), for dfbuffer.iter_matrices / iter_batches.
 */
#ifndef DFBUFFER_ARROW_BATCHES_H
#define DFBUFFER_ARROW_BATCHES_H

#include "common.h"

/* Makes the types _ArrowBatch and _ArrowBatchReader (into the module
   state and module `m`) and adds _arrow_batch_stream.  Returns 0, or -1
   with an exception set. */
int
dfb_arrow_batches_state_init(PyObject *m, dfb_state *st);

#endif /* DFBUFFER_ARROW_BATCHES_H */
