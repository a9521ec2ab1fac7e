/* dfbuffer core: checked size arithmetic on producer-given numbers (pure
 * C, no Python).
 *
 * Every product or sum of a length, offset, width or shape that a producer
 * hands us (an Arrow length, a run end, a tensor's shape, a list width)
 * goes through these helpers before it sizes an allocation, a buffer or a
 * loop: plain C operators on such numbers overflow (undefined for signed
 * integers) and turn a valid but huge array into a heap overflow.  Each
 * helper refuses negative operands, so a lying producer's count is caught
 * where the size is made.  The CPython layer turns a refusal into
 * ValueError naming the column, and a size beyond dfb_alloc_limit() into
 * MemoryError (src/_interchange/base/sizes.h).  A source test
 * (tests/source/test_checked_sizes.py) fails on a raw product of a length and
 * a size in the extension.
 */
#ifndef DFBUFFER_CORE_CHECKED_H
#define DFBUFFER_CORE_CHECKED_H

#include <stddef.h>
#include <stdint.h>

/* a + b in *out: returns 0, or -1 (*out unspecified) when either is
   negative or the sum exceeds INT64_MAX. */
static inline int
dfb_checked_add(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0) {
        return -1;
    }
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_add_overflow(a, b, out) ? -1 : 0;
#else
    if (a > INT64_MAX - b) {
        return -1;
    }
    *out = a + b;
    return 0;
#endif
}

/* a * b in *out: returns 0, or -1 (*out unspecified) when either is
   negative or the product exceeds PTRDIFF_MAX (a size no object of this
   address space can have). */
static inline int
dfb_checked_mul(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0) {
        return -1;
    }
#if defined(__GNUC__) || defined(__clang__)
    if (__builtin_mul_overflow(a, b, out)) {
        return -1;
    }
#else
    if (a != 0 && b > INT64_MAX / a) {
        return -1;
    }
    *out = a * b;
#endif
    return (uint64_t)*out > (uint64_t)PTRDIFF_MAX ? -1 : 0;
}

/* The product of the `n` extents `dims` in *out (0 when an extent is 0,
   1 when n == 0), stopping at the first extent that makes it overflow:
   returns 0, or -1 when an extent is negative or the product exceeds
   PTRDIFF_MAX. */
int
dfb_checked_shape(const int64_t *dims, int64_t n, int64_t *out);

/* The largest allocation this machine can satisfy, in bytes: its physical
   memory where the platform says (sysconf, GlobalMemoryStatusEx), else
   PTRDIFF_MAX.  A larger request is refused before it is made.  Cannot
   fail. */
int64_t
dfb_alloc_limit(void);

#endif /* DFBUFFER_CORE_CHECKED_H */
