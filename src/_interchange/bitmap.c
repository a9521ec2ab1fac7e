/* dfbuffer: bit-packed validity and bool unpacking (LSB first), with bit
 * offsets.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/convert.h"

#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DFB_LITTLE_ENDIAN 1
#else
#define DFB_LITTLE_ENDIAN 0
#endif

/* Spreads the 8 bits of `b` into 8 bytes (bit i -> byte i in memory order
   on a little-endian host), each 0 or 1.  Cannot fail. */
static inline uint64_t
spread_byte(uint64_t b)
{
    b = (b | (b << 28)) & UINT64_C(0x0000000F0000000F);
    b = (b | (b << 14)) & UINT64_C(0x0003000300030003);
    b = (b | (b << 7)) & UINT64_C(0x0101010101010101);
    return b;
}

void
dfb_unpack_bits(const uint8_t *bits, int64_t bit_offset, int64_t length,
                uint8_t *out, int invert)
{
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
    for (; i + 8 <= length; i += 8) {
        uint64_t v = spread_byte(*p++) ^ mask;
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
dfb_count_zero_bits(const uint8_t *bits, int64_t bit_offset, int64_t length)
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
