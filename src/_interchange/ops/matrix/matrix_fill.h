/* dfbuffer: the interface of matrix_fill.c: the fill of to_matrix: the element
 * conversion loops, the blocked fill of each column into the output, and the
 * thread pool that splits the rows (see matrix_plan.h).
 */
#ifndef DFBUFFER_MATRIX_FILL_H
#define DFBUFFER_MATRIX_FILL_H

#include "common.h"
#include "matrix_plan.h"

/* Counts the nulls of chunk `c` (the whole chunk).  Cannot fail; touches
   no Python object (runs without the GIL). */
int64_t
dfb_matrix_count_nulls(const mchunk *c);

/* Sets the cache blocking of plan `p` (its other fields filled; `reused`:
   the output is a reused block, see dfb_matrix_new_output) and returns the
   number of threads to fill it with (`nthreads`, or one per MiB of output
   when 0; at most the CPUs and MAX_THREADS).  Cannot fail. */
int
dfb_matrix_prepare(mplan *p, int nthreads, int reused);

/* Fills the whole output of plan `p` with `nt` threads.  Call without the
   GIL.  Cannot fail. */
void
dfb_matrix_run(const mplan *p, int nt);

#endif /* DFBUFFER_MATRIX_FILL_H */
