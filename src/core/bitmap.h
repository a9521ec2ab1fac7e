/* dfbuffer core: bit-packed validity and bool kernels (pure C, no Python).
 * Bits are LSB first: bit i of the bitmap is (bits[i / 8] >> (i % 8)) & 1.
 */
#ifndef DFBUFFER_CORE_BITMAP_H
#define DFBUFFER_CORE_BITMAP_H

#include <stdint.h>

/* Writes bits [bit_offset, bit_offset + length) of `bits` as one byte each
   (0 or 1; 1 - bit if `invert`) to out[0 .. length).  Reads only the bytes
   holding those bits; any alignment.  Cannot fail. */
void
dfb_bitmap_unpack(const uint8_t *bits, int64_t bit_offset, int64_t length,
                  uint8_t *out, int invert);

/* Returns how many of bits [bit_offset, bit_offset + length) are 0 (0 for
   length <= 0).  Reads only the bytes holding them.  Cannot fail. */
int64_t
dfb_bitmap_count_zeros(const uint8_t *bits, int64_t bit_offset,
                       int64_t length);

/* Copies bits [src_offset, src_offset + length) of `src` to bits
   [dst_offset, dst_offset + length) of `dst`; the other bits of dst's
   bytes are kept.  Reads only the source bytes holding those bits; any
   alignment; src and dst must not overlap.  Cannot fail. */
void
dfb_bitmap_copy(const uint8_t *src, int64_t src_offset, int64_t length,
                uint8_t *dst, int64_t dst_offset);

#endif /* DFBUFFER_CORE_BITMAP_H */
