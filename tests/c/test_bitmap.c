/* C unit tests of the bitmap kernels of src/core/bitmap.c (unpack, count,
 * copy) against a bit-by-bit reference at every bit offset. Run by `meson
 * test`; exits non-zero if any check fails.
 */
#include "bitmap.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Reference value of bit i (LSB first). */
static int
ref_bit(const uint8_t *bits, int64_t i)
{
    return (bits[i / 8] >> (i % 8)) & 1;
}

/* Unpack and count agree with the bit-by-bit reference at every bit offset
   0..7 (and a few more) and lengths around the 8- and 64-bit steps; the
   input is exactly as long as the bits need (ASan sees over-reads) and
   the output is not written past `length`. */
static void
test_bitmap(void)
{
    static const int64_t lengths[] = {0,  1,  7,  8,   9,   15,  16,  17,
                                      63, 64, 65, 127, 128, 129, 200, 1000};
    uint32_t seed = 12345;
    for (int64_t off = 0; off < 20; off++) {
        for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
            int64_t len = lengths[li];
            int64_t nbytes = (off + len + 7) / 8;
            uint8_t *bits = malloc(nbytes > 0 ? (size_t)nbytes : 1);
            uint8_t *out = malloc((size_t)len + 1);
            if (bits == NULL || out == NULL) {
                abort();
            }
            for (int64_t b = 0; b < nbytes; b++) {
                seed = seed * 1103515245u + 12345u;
                bits[b] = (uint8_t)(seed >> 16);
            }
            for (int invert = 0; invert <= 1; invert++) {
                out[len] = 0xAB;
                dfb_bitmap_unpack(bits, off, len, out, invert);
                int ok = 1;
                for (int64_t i = 0; i < len; i++) {
                    ok &= out[i] == (ref_bit(bits, off + i) ^ invert);
                }
                CHECK(ok);
                CHECK(out[len] == 0xAB);
            }
            int64_t zeros = 0;
            for (int64_t i = 0; i < len; i++) {
                zeros += !ref_bit(bits, off + i);
            }
            CHECK(dfb_bitmap_count_zeros(bits, off, len) == zeros);
            free(bits);
            free(out);
        }
    }
    /* all-ones and all-zeros words */
    uint8_t ones[17], zeros[17], out[129];
    memset(ones, 0xff, sizeof(ones));
    memset(zeros, 0, sizeof(zeros));
    for (int64_t off = 0; off < 8; off++) {
        CHECK(dfb_bitmap_count_zeros(ones, off, 129) == 0);
        CHECK(dfb_bitmap_count_zeros(zeros, off, 129) == 129);
        dfb_bitmap_unpack(zeros, off, 129, out, 1);
        int ok = 1;
        for (int i = 0; i < 129; i++) {
            ok &= out[i] == 1;
        }
        CHECK(ok);
    }
    CHECK(dfb_bitmap_count_zeros(ones, 3, -1) == 0);
}

/* Copy agrees with the bit-by-bit reference for every source and
   destination bit offset 0..7 (and beyond) and lengths around the byte
   steps; it reads exactly the source bytes it needs (ASan) and keeps the
   destination's other bits. */
static void
test_bitmap_copy(void)
{
    static const int64_t lengths[] = {0,  1,  7,  8,  9,   15,  16,
                                      17, 63, 64, 65, 127, 200, 1000};
    uint32_t seed = 777;
    for (int64_t so = 0; so < 12; so++) {
        for (int64_t d = 0; d < 12; d++) {
            for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]);
                 li++) {
                int64_t len = lengths[li];
                int64_t sbytes = (so + len + 7) / 8;
                int64_t dbytes = (d + len + 7) / 8 + 1;
                uint8_t *src = malloc(sbytes > 0 ? (size_t)sbytes : 1);
                uint8_t *dst = malloc((size_t)dbytes);
                uint8_t *before = malloc((size_t)dbytes);
                if (src == NULL || dst == NULL || before == NULL) {
                    abort();
                }
                for (int64_t b = 0; b < sbytes; b++) {
                    seed = seed * 1103515245u + 12345u;
                    src[b] = (uint8_t)(seed >> 16);
                }
                for (int64_t b = 0; b < dbytes; b++) {
                    seed = seed * 1103515245u + 12345u;
                    dst[b] = before[b] = (uint8_t)(seed >> 16);
                }
                dfb_bitmap_copy(src, so, len, dst, d);
                int ok = 1;
                for (int64_t i = 0; i < 8 * dbytes; i++) {
                    int want = (i >= d && i < d + len)
                                   ? ref_bit(src, so + i - d)
                                   : ref_bit(before, i);
                    ok &= ref_bit(dst, i) == want;
                }
                CHECK(ok);
                free(src);
                free(dst);
                free(before);
            }
        }
    }
}

int
main(void)
{
    test_bitmap();
    test_bitmap_copy();
    return check_report("test_bitmap");
}
