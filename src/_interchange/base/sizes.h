/* dfbuffer: checked sizes of producer-given lengths, as Python errors.
 *
 * The CPython face of core's checked arithmetic (src/core/checked.h): a
 * size made from a producer's length, offset, width or shape that
 * overflows is a ValueError naming the column; a size to allocate beyond
 * what the machine holds is a MemoryError, raised before the allocation is
 * tried (so a valid array of 2**61 rows is refused, never allocated).
 */
#ifndef DFBUFFER_SIZES_H
#define DFBUFFER_SIZES_H

#include "common.h"
#include "checked.h"

#include <stdint.h>

/* The bytes of an allocation of n items of isz bytes in *out.  Returns 0,
   or -1 with ValueError naming column `name` (either is negative, or the
   product overflows) or MemoryError (more than
   dfb_alloc_limit() bytes). */
int
dfb_alloc_bytes(const char *name, int64_t n, int64_t isz, int64_t *out);

/* Returns a new 1-D array of `n` elements of `descr`
   (stolen), or NULL with an exception set: MemoryError, before anything
   is allocated, when n elements need more than dfb_alloc_limit() bytes (a
   valid array of 2**61 rows that no buffer backs is refused, never
   handed to malloc). */
PyArrayObject *
dfb_new_array(PyArray_Descr *descr, int64_t n);

/* Returns 0 when `n` items of `itemsize` bytes fit in
   dfb_alloc_limit(), or -1 with MemoryError (checked before asking NumPy
   for an array whose length comes from a producer). */
int
dfb_check_alloc(int64_t n, int64_t itemsize);

#endif /* DFBUFFER_SIZES_H */
