/* dfbuffer core: the NaN / NaT counting kernels (see nan.h).
 */
#include "nan.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Returns 1 if the float of `itemsize` bytes at `p` (byte-swapped first
   when `swap`) is NaN.  Cannot fail. */
static inline int
nan_at(const char *p, int itemsize, int swap)
{
    if (itemsize == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        v = swap ? __builtin_bswap64(v) : v;
        return (v & UINT64_C(0x7ff0000000000000)) ==
                   UINT64_C(0x7ff0000000000000) &&
               (v & UINT64_C(0x000fffffffffffff)) != 0;
    }
    if (itemsize == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        v = swap ? __builtin_bswap32(v) : v;
        return (v & 0x7f800000u) == 0x7f800000u && (v & 0x007fffffu) != 0;
    }
    uint16_t v;
    memcpy(&v, p, 2);
    v = swap ? (uint16_t)__builtin_bswap16(v) : v;
    return (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0;
}

/* Counts the NaNs among `n` contiguous native doubles at `p`. */
static int64_t
count_f64(const char *p, int64_t n)
{
    int64_t count = 0, i = 0;
#if defined(__SSE2__)
    for (; i + 8 <= n; i += 8) {
        const double *q = (const double *)(const void *)(p + i * 8);
        __m128d a = _mm_loadu_pd(q), b = _mm_loadu_pd(q + 2);
        __m128d c = _mm_loadu_pd(q + 4), d = _mm_loadu_pd(q + 6);
        int m = _mm_movemask_pd(_mm_cmpunord_pd(a, a)) |
                (_mm_movemask_pd(_mm_cmpunord_pd(b, b)) << 2) |
                (_mm_movemask_pd(_mm_cmpunord_pd(c, c)) << 4) |
                (_mm_movemask_pd(_mm_cmpunord_pd(d, d)) << 6);
        if (m) {
            count += __builtin_popcount((unsigned)m);
        }
    }
#endif
    for (; i < n; i++) {
        double v;
        memcpy(&v, p + i * 8, 8);
        count += v != v;
    }
    return count;
}

/* Counts the NaNs among `n` contiguous native floats at `p`. */
static int64_t
count_f32(const char *p, int64_t n)
{
    int64_t count = 0, i = 0;
#if defined(__SSE2__)
    for (; i + 8 <= n; i += 8) {
        const float *q = (const float *)(const void *)(p + i * 4);
        __m128 a = _mm_loadu_ps(q), b = _mm_loadu_ps(q + 4);
        int m = _mm_movemask_ps(_mm_cmpunord_ps(a, a)) |
                (_mm_movemask_ps(_mm_cmpunord_ps(b, b)) << 4);
        if (m) {
            count += __builtin_popcount((unsigned)m);
        }
    }
#endif
    for (; i < n; i++) {
        float v;
        memcpy(&v, p + i * 4, 4);
        count += v != v;
    }
    return count;
}

int64_t
dfb_count_nan(const void *p, int64_t n, int64_t stride, int itemsize, int swap,
              uint8_t *mask)
{
    const char *s = p;
    int64_t count = 0;
    if (mask == NULL && !swap && stride == itemsize) {
        if (itemsize == 8) {
            return count_f64(s, n);
        }
        if (itemsize == 4) {
            return count_f32(s, n);
        }
    }
    if (mask == NULL) {
        for (int64_t i = 0; i < n; i++) {
            count += nan_at(s + i * stride, itemsize, swap);
        }
        return count;
    }
    for (int64_t i = 0; i < n; i++) {
        const int isnan_ = nan_at(s + i * stride, itemsize, swap);
        mask[i] = (uint8_t)isnan_;
        count += isnan_;
    }
    return count;
}

int64_t
dfb_count_nat(const void *p, int64_t n, int64_t stride, int swap,
              uint8_t *mask)
{
    const char *s = p;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, s + i * stride, 8);
        v = swap ? __builtin_bswap64(v) : v;
        const int isnat = v == (uint64_t)INT64_MIN;
        count += isnat;
        if (mask != NULL) {
            mask[i] = (uint8_t)isnat;
        }
    }
    return count;
}
