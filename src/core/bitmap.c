/* dfbuffer core: bit-packed validity and bool kernels, LSB first, with bit
 * offsets (see bitmap.h).
 */
#include "bitmap.h"
#include "mem.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DFB_LITTLE_ENDIAN 1
#else
#define DFB_LITTLE_ENDIAN 0
#endif

/* spread[b]: the 8 bits of b as 8 bytes 0/1, bit i in byte i of the
   little-endian word (generated). */
static const uint64_t spread[256] = {
    UINT64_C(0x0000000000000000), UINT64_C(0x0000000000000001),
    UINT64_C(0x0000000000000100), UINT64_C(0x0000000000000101),
    UINT64_C(0x0000000000010000), UINT64_C(0x0000000000010001),
    UINT64_C(0x0000000000010100), UINT64_C(0x0000000000010101),
    UINT64_C(0x0000000001000000), UINT64_C(0x0000000001000001),
    UINT64_C(0x0000000001000100), UINT64_C(0x0000000001000101),
    UINT64_C(0x0000000001010000), UINT64_C(0x0000000001010001),
    UINT64_C(0x0000000001010100), UINT64_C(0x0000000001010101),
    UINT64_C(0x0000000100000000), UINT64_C(0x0000000100000001),
    UINT64_C(0x0000000100000100), UINT64_C(0x0000000100000101),
    UINT64_C(0x0000000100010000), UINT64_C(0x0000000100010001),
    UINT64_C(0x0000000100010100), UINT64_C(0x0000000100010101),
    UINT64_C(0x0000000101000000), UINT64_C(0x0000000101000001),
    UINT64_C(0x0000000101000100), UINT64_C(0x0000000101000101),
    UINT64_C(0x0000000101010000), UINT64_C(0x0000000101010001),
    UINT64_C(0x0000000101010100), UINT64_C(0x0000000101010101),
    UINT64_C(0x0000010000000000), UINT64_C(0x0000010000000001),
    UINT64_C(0x0000010000000100), UINT64_C(0x0000010000000101),
    UINT64_C(0x0000010000010000), UINT64_C(0x0000010000010001),
    UINT64_C(0x0000010000010100), UINT64_C(0x0000010000010101),
    UINT64_C(0x0000010001000000), UINT64_C(0x0000010001000001),
    UINT64_C(0x0000010001000100), UINT64_C(0x0000010001000101),
    UINT64_C(0x0000010001010000), UINT64_C(0x0000010001010001),
    UINT64_C(0x0000010001010100), UINT64_C(0x0000010001010101),
    UINT64_C(0x0000010100000000), UINT64_C(0x0000010100000001),
    UINT64_C(0x0000010100000100), UINT64_C(0x0000010100000101),
    UINT64_C(0x0000010100010000), UINT64_C(0x0000010100010001),
    UINT64_C(0x0000010100010100), UINT64_C(0x0000010100010101),
    UINT64_C(0x0000010101000000), UINT64_C(0x0000010101000001),
    UINT64_C(0x0000010101000100), UINT64_C(0x0000010101000101),
    UINT64_C(0x0000010101010000), UINT64_C(0x0000010101010001),
    UINT64_C(0x0000010101010100), UINT64_C(0x0000010101010101),
    UINT64_C(0x0001000000000000), UINT64_C(0x0001000000000001),
    UINT64_C(0x0001000000000100), UINT64_C(0x0001000000000101),
    UINT64_C(0x0001000000010000), UINT64_C(0x0001000000010001),
    UINT64_C(0x0001000000010100), UINT64_C(0x0001000000010101),
    UINT64_C(0x0001000001000000), UINT64_C(0x0001000001000001),
    UINT64_C(0x0001000001000100), UINT64_C(0x0001000001000101),
    UINT64_C(0x0001000001010000), UINT64_C(0x0001000001010001),
    UINT64_C(0x0001000001010100), UINT64_C(0x0001000001010101),
    UINT64_C(0x0001000100000000), UINT64_C(0x0001000100000001),
    UINT64_C(0x0001000100000100), UINT64_C(0x0001000100000101),
    UINT64_C(0x0001000100010000), UINT64_C(0x0001000100010001),
    UINT64_C(0x0001000100010100), UINT64_C(0x0001000100010101),
    UINT64_C(0x0001000101000000), UINT64_C(0x0001000101000001),
    UINT64_C(0x0001000101000100), UINT64_C(0x0001000101000101),
    UINT64_C(0x0001000101010000), UINT64_C(0x0001000101010001),
    UINT64_C(0x0001000101010100), UINT64_C(0x0001000101010101),
    UINT64_C(0x0001010000000000), UINT64_C(0x0001010000000001),
    UINT64_C(0x0001010000000100), UINT64_C(0x0001010000000101),
    UINT64_C(0x0001010000010000), UINT64_C(0x0001010000010001),
    UINT64_C(0x0001010000010100), UINT64_C(0x0001010000010101),
    UINT64_C(0x0001010001000000), UINT64_C(0x0001010001000001),
    UINT64_C(0x0001010001000100), UINT64_C(0x0001010001000101),
    UINT64_C(0x0001010001010000), UINT64_C(0x0001010001010001),
    UINT64_C(0x0001010001010100), UINT64_C(0x0001010001010101),
    UINT64_C(0x0001010100000000), UINT64_C(0x0001010100000001),
    UINT64_C(0x0001010100000100), UINT64_C(0x0001010100000101),
    UINT64_C(0x0001010100010000), UINT64_C(0x0001010100010001),
    UINT64_C(0x0001010100010100), UINT64_C(0x0001010100010101),
    UINT64_C(0x0001010101000000), UINT64_C(0x0001010101000001),
    UINT64_C(0x0001010101000100), UINT64_C(0x0001010101000101),
    UINT64_C(0x0001010101010000), UINT64_C(0x0001010101010001),
    UINT64_C(0x0001010101010100), UINT64_C(0x0001010101010101),
    UINT64_C(0x0100000000000000), UINT64_C(0x0100000000000001),
    UINT64_C(0x0100000000000100), UINT64_C(0x0100000000000101),
    UINT64_C(0x0100000000010000), UINT64_C(0x0100000000010001),
    UINT64_C(0x0100000000010100), UINT64_C(0x0100000000010101),
    UINT64_C(0x0100000001000000), UINT64_C(0x0100000001000001),
    UINT64_C(0x0100000001000100), UINT64_C(0x0100000001000101),
    UINT64_C(0x0100000001010000), UINT64_C(0x0100000001010001),
    UINT64_C(0x0100000001010100), UINT64_C(0x0100000001010101),
    UINT64_C(0x0100000100000000), UINT64_C(0x0100000100000001),
    UINT64_C(0x0100000100000100), UINT64_C(0x0100000100000101),
    UINT64_C(0x0100000100010000), UINT64_C(0x0100000100010001),
    UINT64_C(0x0100000100010100), UINT64_C(0x0100000100010101),
    UINT64_C(0x0100000101000000), UINT64_C(0x0100000101000001),
    UINT64_C(0x0100000101000100), UINT64_C(0x0100000101000101),
    UINT64_C(0x0100000101010000), UINT64_C(0x0100000101010001),
    UINT64_C(0x0100000101010100), UINT64_C(0x0100000101010101),
    UINT64_C(0x0100010000000000), UINT64_C(0x0100010000000001),
    UINT64_C(0x0100010000000100), UINT64_C(0x0100010000000101),
    UINT64_C(0x0100010000010000), UINT64_C(0x0100010000010001),
    UINT64_C(0x0100010000010100), UINT64_C(0x0100010000010101),
    UINT64_C(0x0100010001000000), UINT64_C(0x0100010001000001),
    UINT64_C(0x0100010001000100), UINT64_C(0x0100010001000101),
    UINT64_C(0x0100010001010000), UINT64_C(0x0100010001010001),
    UINT64_C(0x0100010001010100), UINT64_C(0x0100010001010101),
    UINT64_C(0x0100010100000000), UINT64_C(0x0100010100000001),
    UINT64_C(0x0100010100000100), UINT64_C(0x0100010100000101),
    UINT64_C(0x0100010100010000), UINT64_C(0x0100010100010001),
    UINT64_C(0x0100010100010100), UINT64_C(0x0100010100010101),
    UINT64_C(0x0100010101000000), UINT64_C(0x0100010101000001),
    UINT64_C(0x0100010101000100), UINT64_C(0x0100010101000101),
    UINT64_C(0x0100010101010000), UINT64_C(0x0100010101010001),
    UINT64_C(0x0100010101010100), UINT64_C(0x0100010101010101),
    UINT64_C(0x0101000000000000), UINT64_C(0x0101000000000001),
    UINT64_C(0x0101000000000100), UINT64_C(0x0101000000000101),
    UINT64_C(0x0101000000010000), UINT64_C(0x0101000000010001),
    UINT64_C(0x0101000000010100), UINT64_C(0x0101000000010101),
    UINT64_C(0x0101000001000000), UINT64_C(0x0101000001000001),
    UINT64_C(0x0101000001000100), UINT64_C(0x0101000001000101),
    UINT64_C(0x0101000001010000), UINT64_C(0x0101000001010001),
    UINT64_C(0x0101000001010100), UINT64_C(0x0101000001010101),
    UINT64_C(0x0101000100000000), UINT64_C(0x0101000100000001),
    UINT64_C(0x0101000100000100), UINT64_C(0x0101000100000101),
    UINT64_C(0x0101000100010000), UINT64_C(0x0101000100010001),
    UINT64_C(0x0101000100010100), UINT64_C(0x0101000100010101),
    UINT64_C(0x0101000101000000), UINT64_C(0x0101000101000001),
    UINT64_C(0x0101000101000100), UINT64_C(0x0101000101000101),
    UINT64_C(0x0101000101010000), UINT64_C(0x0101000101010001),
    UINT64_C(0x0101000101010100), UINT64_C(0x0101000101010101),
    UINT64_C(0x0101010000000000), UINT64_C(0x0101010000000001),
    UINT64_C(0x0101010000000100), UINT64_C(0x0101010000000101),
    UINT64_C(0x0101010000010000), UINT64_C(0x0101010000010001),
    UINT64_C(0x0101010000010100), UINT64_C(0x0101010000010101),
    UINT64_C(0x0101010001000000), UINT64_C(0x0101010001000001),
    UINT64_C(0x0101010001000100), UINT64_C(0x0101010001000101),
    UINT64_C(0x0101010001010000), UINT64_C(0x0101010001010001),
    UINT64_C(0x0101010001010100), UINT64_C(0x0101010001010101),
    UINT64_C(0x0101010100000000), UINT64_C(0x0101010100000001),
    UINT64_C(0x0101010100000100), UINT64_C(0x0101010100000101),
    UINT64_C(0x0101010100010000), UINT64_C(0x0101010100010001),
    UINT64_C(0x0101010100010100), UINT64_C(0x0101010100010101),
    UINT64_C(0x0101010101000000), UINT64_C(0x0101010101000001),
    UINT64_C(0x0101010101000100), UINT64_C(0x0101010101000101),
    UINT64_C(0x0101010101010000), UINT64_C(0x0101010101010001),
    UINT64_C(0x0101010101010100), UINT64_C(0x0101010101010101),
};

void
dfb_bitmap_unpack(const uint8_t *bits, int64_t bit_offset, int64_t length,
                  uint8_t *out, int invert)
{
    if (length <= 0) {
        return;
    }
    const uint8_t flip = invert ? 1 : 0;
    const uint8_t *p = bits + bit_offset / 8;
    int shift = (int)(bit_offset % 8);
    int64_t i = 0;
    /* leading bits up to a byte boundary of the input */
    if (shift != 0) {
        uint8_t b = *p++;
        for (; shift < 8 && i < length; shift++, i++) {
            out[i] = (uint8_t)(((b >> shift) & 1) ^ flip);
        }
    }
#if DFB_LITTLE_ENDIAN
    const uint64_t mask = invert ? UINT64_C(0x0101010101010101) : 0;
#if defined(__SSE2__)
    {
        /* 8 input bytes -> 64 output bytes: replicate each byte 8 times,
           keep bit k in lane k, compare, turn 0xff into 1. */
        const __m128i bitsel =
            _mm_set_epi8((char)0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01,
                         (char)0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01);
        const __m128i one = _mm_set1_epi8(1);
#define DFB_UNPACK_LOOP(FINISH)                                              \
    for (; i + 64 <= length; i += 64) {                                      \
        __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)p);       \
        p += 8;                                                              \
        __m128i x1 = _mm_unpacklo_epi8(x, x);                                \
        __m128i lo = _mm_unpacklo_epi16(x1, x1);                             \
        __m128i hi = _mm_unpackhi_epi16(x1, x1);                             \
        __m128i v0 = _mm_unpacklo_epi32(lo, lo);                             \
        __m128i v1 = _mm_unpackhi_epi32(lo, lo);                             \
        __m128i v2 = _mm_unpacklo_epi32(hi, hi);                             \
        __m128i v3 = _mm_unpackhi_epi32(hi, hi);                             \
        v0 = FINISH(_mm_cmpeq_epi8(_mm_and_si128(v0, bitsel), bitsel), one); \
        v1 = FINISH(_mm_cmpeq_epi8(_mm_and_si128(v1, bitsel), bitsel), one); \
        v2 = FINISH(_mm_cmpeq_epi8(_mm_and_si128(v2, bitsel), bitsel), one); \
        v3 = FINISH(_mm_cmpeq_epi8(_mm_and_si128(v3, bitsel), bitsel), one); \
        _mm_storeu_si128((__m128i *)(void *)(out + i), v0);                  \
        _mm_storeu_si128((__m128i *)(void *)(out + i + 16), v1);             \
        _mm_storeu_si128((__m128i *)(void *)(out + i + 32), v2);             \
        _mm_storeu_si128((__m128i *)(void *)(out + i + 48), v3);             \
    }
        if (invert) {
            DFB_UNPACK_LOOP(_mm_andnot_si128)
        }
        else {
            DFB_UNPACK_LOOP(_mm_and_si128)
        }
#undef DFB_UNPACK_LOOP
    }
#endif
    for (; i + 8 <= length; i += 8) {
        uint64_t v = spread[*p++] ^ mask;
        memcpy(out + i, &v, 8);
    }
#else
    for (; i + 8 <= length; i += 8) {
        uint8_t b = *p++;
        for (int k = 0; k < 8; k++) {
            out[i + k] = (uint8_t)(((b >> k) & 1) ^ flip);
        }
    }
#endif
    if (i < length) {
        uint8_t b = *p;
        for (int k = 0; i < length; k++, i++) {
            out[i] = (uint8_t)(((b >> k) & 1) ^ flip);
        }
    }
}

int64_t
dfb_bitmap_count_zeros(const uint8_t *bits, int64_t bit_offset, int64_t length)
{
    const uint8_t *p = bits + bit_offset / 8;
    int shift = (int)(bit_offset % 8);
    int64_t ones = 0, i = 0;
    if (length <= 0) {
        return 0;
    }
    if (shift != 0) {
        uint8_t b = *p++;
        for (; shift < 8 && i < length; shift++, i++) {
            ones += (b >> shift) & 1;
        }
    }
    for (; i + 64 <= length; i += 64) {
        uint64_t w;
        memcpy(&w, p, 8);
        p += 8;
        ones += __builtin_popcountll(w);
    }
    for (; i + 8 <= length; i += 8) {
        ones += __builtin_popcount(*p++);
    }
    if (i < length) {
        uint8_t b = *p;
        for (int k = 0; i < length; k++, i++) {
            ones += (b >> k) & 1;
        }
    }
    return length - ones;
}

/* Sets bit `d` of `dst` to bit `s` of `src` (LSB first), leaving the
   other bits of its byte as they are. */
static inline void
copy_bit(const uint8_t *src, int64_t s, uint8_t *dst, int64_t d)
{
    uint8_t bit = (uint8_t)(1u << (d & 7));
    if ((src[s >> 3] >> (s & 7)) & 1) {
        dst[d >> 3] |= bit;
    }
    else {
        dst[d >> 3] &= (uint8_t)~bit;
    }
}

void
dfb_bitmap_copy(const uint8_t *src, int64_t src_offset, int64_t length,
                uint8_t *dst, int64_t dst_offset)
{
    int64_t i = 0;
    if (length <= 0) {
        return;
    }
    /* bit by bit up to a byte boundary of the output */
    for (; i < length && ((dst_offset + i) & 7) != 0; i++) {
        copy_bit(src, src_offset + i, dst, dst_offset + i);
    }
    /* whole output bytes */
    int64_t nbytes = (length - i) / 8;
    if (nbytes > 0) {
        const uint8_t *p = src + ((src_offset + i) >> 3);
        uint8_t *q = dst + ((dst_offset + i) >> 3);
        int shift = (int)((src_offset + i) & 7);
        if (shift == 0) {
            dfb_memcpy(q, p, (size_t)nbytes);
        }
        else {
            /* output byte k takes bits shift..7 of p[k] and 0..shift-1 of
               p[k + 1]: p[k + 1] holds copied bits too (p[0 .. nbytes]
               are all read) */
            int64_t k = 0;
#if DFB_LITTLE_ENDIAN
            for (; k + 8 <= nbytes; k += 8) {
                uint64_t w;
                memcpy(&w, p + k, 8);
                w = (w >> shift) | ((uint64_t)p[k + 8] << (64 - shift));
                memcpy(q + k, &w, 8);
            }
#endif
            for (; k < nbytes; k++) {
                q[k] = (uint8_t)((p[k] >> shift) | (p[k + 1] << (8 - shift)));
            }
        }
        i += 8 * nbytes;
    }
    /* the rest, bit by bit */
    for (; i < length; i++) {
        copy_bit(src, src_offset + i, dst, dst_offset + i);
    }
}
