/* dfbuffer: the interface of matrix_alloc.c: the output allocator of
 * to_matrix: a NumPy memory handler that keeps the last large block freed for
 * the next output of about its size, with the reaper thread that lets the
 * kernel reclaim it after a while and the fork handlers that keep it sound
 * (see matrix_plan.h).
 */
#ifndef DFBUFFER_MATRIX_ALLOC_H
#define DFBUFFER_MATRIX_ALLOC_H

#include "common.h"
#include "matrix_plan.h"

/* Returns a new uninitialised array of `descr` (stolen) and `dims`
   (C order, or Fortran when `fortran`), from the kept-memory allocator
   when it is large; *reused is 1 when its memory was kept from an earlier
   output.  NULL with an exception set on failure. */
PyObject *
dfb_matrix_new_output(PyArray_Descr *descr, npy_intp *dims, int fortran,
                      int *reused);

/* The bytes of the block kept for the next large output (its pages in
   place), 0 when none is kept: a stream of unknown length sizes its first
   output to take it.  Cannot fail. */
size_t
dfb_matrix_kept_bytes(void);

#endif /* DFBUFFER_MATRIX_ALLOC_H */
