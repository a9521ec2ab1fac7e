/* dfbuffer core: the NaN / NaT counting kernels (pure C, no Python).
 *
 * Every path that finds the missing values of a float or datetime column
 * (the converters' null masks, the pandas frame reader, to_matrix) counts
 * them here: contiguous values take vectorised loops, strided or
 * byte-swapped ones a plain loop.  Loads go through memcpy (any
 * alignment).  None touches Python: callers may release the GIL.
 */
#ifndef DFBUFFER_CORE_NAN_H
#define DFBUFFER_CORE_NAN_H

#include <stdint.h>

/* Counts the NaNs among `n` floats of `itemsize` bytes (2, 4 or 8) at `p`,
   `stride` bytes apart (stride == itemsize: contiguous), byte-swapped
   first when `swap`.  When `mask` is not NULL also writes mask[i] = 1 for
   a NaN, 0 otherwise.  Returns the count; cannot fail. */
int64_t
dfb_count_nan(const void *p, int64_t n, int64_t stride, int itemsize, int swap,
              uint8_t *mask);

/* Counts the NaT values (INT64_MIN) among `n` int64 at `p`, `stride` bytes
   apart, byte-swapped first when `swap`; fills `mask` like dfb_count_nan
   when not NULL.  Returns the count; cannot fail. */
int64_t
dfb_count_nat(const void *p, int64_t n, int64_t stride, int swap,
              uint8_t *mask);

#endif /* DFBUFFER_CORE_NAN_H */
