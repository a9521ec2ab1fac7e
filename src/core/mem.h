/* dfbuffer core: memcpy / memmove / memset / memcmp that accept a NULL
 * pointer when the size is 0.
 *
 * C makes passing NULL to these functions undefined even for size 0, and
 * producers legitimately hand over NULL for empty buffers (Arrow, DLPack,
 * the interchange protocol).  Every call whose size is computed at run
 * time goes through these helpers; a raw call is kept only for a constant
 * size (sizeof, a literal), where both pointers are known valid.  A source
 * test (tests/source/test_null_safe_mem.py) enforces this.
 */
#ifndef DFBUFFER_CORE_MEM_H
#define DFBUFFER_CORE_MEM_H

#include <stddef.h>
#include <string.h>

/* memcpy(dst, src, n), doing nothing when n == 0 (either may be NULL
   then).  Returns dst. */
static inline void *
dfb_memcpy(void *dst, const void *src, size_t n)
{
    if (n != 0) {
        memcpy(dst, src, n);
    }
    return dst;
}

/* memmove(dst, src, n), doing nothing when n == 0.  Returns dst. */
static inline void *
dfb_memmove(void *dst, const void *src, size_t n)
{
    if (n != 0) {
        memmove(dst, src, n);
    }
    return dst;
}

/* memset(dst, c, n), doing nothing when n == 0.  Returns dst. */
static inline void *
dfb_memset(void *dst, int c, size_t n)
{
    if (n != 0) {
        memset(dst, c, n);
    }
    return dst;
}

/* memcmp(a, b, n); 0 when n == 0 (either may be NULL then). */
static inline int
dfb_memcmp(const void *a, const void *b, size_t n)
{
    return n == 0 ? 0 : memcmp(a, b, n);
}

#endif /* DFBUFFER_CORE_MEM_H */
