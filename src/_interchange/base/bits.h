/* dfbuffer: the GIL-releasing bit kernels of bits.c (see that file). */
#ifndef DFBUFFER_BITS_H
#define DFBUFFER_BITS_H

#include "common.h"

/* Unpacks `length` LSB-first bits starting at bit `bit_offset` of `bits`
   into one byte (0 or 1) each at `out`.  If `invert`, writes 1 - bit.
   Cannot fail. */
void
dfb_unpack_bits(const uint8_t *bits, int64_t bit_offset, int64_t length,
                uint8_t *out, int invert);

/* Counts the zero bits among `length` bits from `bit_offset`. */
int64_t
dfb_count_zero_bits(const uint8_t *bits, int64_t bit_offset, int64_t length);

#endif /* DFBUFFER_BITS_H */
