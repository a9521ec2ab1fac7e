/* dfbuffer core: overflow-checked layout arithmetic (pure C, no Python).
 */
#ifndef DFBUFFER_CORE_LAYOUT_H
#define DFBUFFER_CORE_LAYOUT_H

#include "core.h"

#include <stdint.h>

/* Stores count * itemsize (both >= 0) in *out.  Returns DFB_OK, or
   DFB_EOVERFLOW (with a message in err) if it exceeds INT64_MAX; *out is
   then untouched. */
dfb_code
dfb_mul_bytes(int64_t count, int64_t itemsize, int64_t *out, dfb_error *err);

/* Computes the lowest and one-past-highest byte offsets, relative to element
   (0, ..., 0), that a strided array of `ndim` dimensions touches, with every
   intermediate value and hi - lo within [-max, max] (max: the caller's
   address type, e.g. PY_SSIZE_T_MAX).  A zero-size array touches nothing:
   lo = hi = 0.  Returns DFB_OK, or DFB_EOVERFLOW with a message (lo, hi
   untouched). */
dfb_code
dfb_core_extent(int ndim, const int64_t *shape, const int64_t *strides,
                int64_t itemsize, int64_t max, int64_t *lo, int64_t *hi,
                dfb_error *err);

/* Stores in [*lo, *hi) the bytes, relative to a buffer's address, that
   its elements [offset, offset + length) occupy: bits of an upward bitmap
   when `itemsize` is 0 (`offset` in bits, bit i in byte i / 8; `stride`
   ignored), else values of `itemsize` bytes `stride` bytes apart (any
   sign, 0 too: element i at byte i * stride; lo < 0 below the address).
   No elements occupy nothing: lo = hi = 0.  hi - lo fits in int64.
   Returns DFB_OK, DFB_EINVAL for a negative offset, length or itemsize,
   or DFB_EOVERFLOW when a byte position leaves int64 (a message in err;
   lo, hi untouched on failure). */
dfb_code
dfb_buffer_extent(int64_t offset, int64_t length, int64_t itemsize,
                  int64_t stride, int64_t *lo, int64_t *hi, dfb_error *err);

/* Returns 1 if a strided array of `ndim` dimensions is contiguous for
   `itemsize` in C order (fortran 0: the last dimension varies fastest) or
   Fortran order (fortran 1), else 0.  Size-1 dimensions ignore their
   strides, a zero-size array (any dimension 0) and a 0-d array are
   contiguous; an expected stride beyond INT64_MAX matches no stride.
   Cannot fail. */
int
dfb_layout_is_contiguous(int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t itemsize,
                         int fortran);

#endif /* DFBUFFER_CORE_LAYOUT_H */
