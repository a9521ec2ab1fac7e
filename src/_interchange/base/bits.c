/* dfbuffer: bit-packed validity and bool unpacking (LSB first), with bit
 * offsets: the GIL-releasing wrappers of core's kernels (src/core/bitmap.c).
 */
#include "common.h"
#include "probe.h"
#include "bitmap.h"
#include "bits.h"

/* Large inputs run without the GIL (the caller holds references to the
   objects owning `bits` and `out`; nothing here touches Python). */
void
dfb_unpack_bits(const uint8_t *bits, int64_t bit_offset, int64_t length,
                uint8_t *out, int invert)
{
    DFB_NOGIL_IF(length / 8,
                 dfb_bitmap_unpack(bits, bit_offset, length, out, invert));
}

int64_t
dfb_count_zero_bits(const uint8_t *bits, int64_t bit_offset, int64_t length)
{
    int64_t r;
    DFB_NOGIL_IF(length / 8,
                 r = dfb_bitmap_count_zeros(bits, bit_offset, length));
    return r;
}
