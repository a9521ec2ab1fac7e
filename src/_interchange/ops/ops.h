/* dfbuffer: the interface of ops/: the module functions over the model:
 * buffer_to_ndarray, column_to_ndarray and from_dataframe, and the batches of
 * a stream.
 */
#ifndef DFBUFFER_OPS_H
#define DFBUFFER_OPS_H

#include "common.h"

/* ---- arrow_batches.c ---- */

/* Makes the types _ArrowBatch and _ArrowBatchReader (into the module
   state and module `m`) and adds _arrow_batch_stream.  Returns 0, or -1
   with an exception set. */
int
dfb_arrow_batches_state_init(PyObject *m, dfb_state *st);

/* ---- convert_functions.c ---- */

/* Module-level functions of convert_functions.c (buffer_to_ndarray,
   column_to_ndarray, from_dataframe), added by module init. */
extern PyMethodDef dfb_convert_methods[];

#endif /* DFBUFFER_OPS_H */
