/* dfbuffer core: a copy with non-temporal stores, for to_matrix's column
 * copies into an output block larger than the caches.
 *
 * Header-only (static inline, pure C): benchmarks/matrix_stores.c includes
 * it too, so that it times the very loop to_matrix runs.
 */
#ifndef DFBUFFER_CORE_STREAM_COPY_H
#define DFBUFFER_CORE_STREAM_COPY_H

#include "mem.h"

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Copies `n` bytes to `d` with non-temporal stores where the CPU has
   them (no read of the destination lines; the caller fences).  Cannot
   fail. */
static inline void
dfb_stream_copy(char *d, const char *s, int64_t n)
{
#if defined(__SSE2__)
    while (n > 0 && ((uintptr_t)d & 15) != 0) {
        *d++ = *s++;
        n--;
    }
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    }
#endif
    if (n > 0) {
        dfb_memcpy(d, s, (size_t)n);
    }
}

#endif /* DFBUFFER_CORE_STREAM_COPY_H */
