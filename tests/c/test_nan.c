/* C unit tests of the NaN / NaT kernels (src/core/nan.c): every width,
 * contiguous and strided, native and byte-swapped, at every length around
 * the vector widths and at unaligned addresses, with and without a mask,
 * against a plain per-value oracle.  Run by `meson test`.
 */
#include "check.h"
#include "nan.h"

#include <stdint.h>

/* Stores the float of `isz` bytes (2, 4, 8): a NaN when `nan`, else one
   (with a varied payload and sign for NaN), byte-swapped when `swap`. */
static void
put(unsigned char *p, int isz, int nan, int i, int swap)
{
    if (isz == 8) {
        uint64_t v = nan ? UINT64_C(0x7ff8000000000000) | (uint64_t)(i + 1)
                         : UINT64_C(0x3ff0000000000000);
        v |= (uint64_t)(i & 1) << 63;
        v = swap ? __builtin_bswap64(v) : v;
        memcpy(p, &v, 8);
    }
    else if (isz == 4) {
        uint32_t v = nan ? 0x7fc00000u | (uint32_t)(i + 1) : 0x3f800000u;
        v |= (uint32_t)(i & 1) << 31;
        v = swap ? __builtin_bswap32(v) : v;
        memcpy(p, &v, 4);
    }
    else {
        uint16_t v = nan ? (uint16_t)(0x7e00 | (i & 0xff)) : 0x3c00;
        v = swap ? (uint16_t)__builtin_bswap16(v) : v;
        memcpy(p, &v, 2);
    }
}

/* Infinities are not NaN. */
static void
test_infinity(void)
{
    double d[3] = {1.0 / 0.0, -1.0 / 0.0, 0.0};
    float f[3] = {1.0f / 0.0f, -1.0f / 0.0f, 0.0f};
    uint16_t h[2] = {0x7c00, 0xfc00};
    CHECK(dfb_count_nan(d, 3, 8, 8, 0, NULL) == 0);
    CHECK(dfb_count_nan(f, 3, 4, 4, 0, NULL) == 0);
    CHECK(dfb_count_nan(h, 2, 2, 2, 0, NULL) == 0);
}

/* Every width, layout, length and misalignment against the oracle. */
static void
test_nan_cases(void)
{
    static unsigned char buf[8 * 3 * 40 + 8];
    uint8_t mask[40];
    static const int sizes[3] = {2, 4, 8};
    for (int k = 0; k < 3; k++) {
        const int isz = sizes[k];
        for (int swap = 0; swap < 2; swap++) {
            for (int gap = 1; gap <= 3; gap++) { /* stride = gap * isz */
                for (int n = 0; n <= 37; n++) {
                    unsigned char *p = buf + 1; /* unaligned */
                    int64_t want = 0;
                    for (int i = 0; i < n; i++) {
                        const int nan = (i * 7 + n) % 5 == 0;
                        put(p + i * gap * isz, isz, nan, i, swap);
                        want += nan;
                    }
                    CHECK(dfb_count_nan(p, n, gap * isz, isz, swap, NULL) ==
                          want);
                    memset(mask, 9, sizeof(mask));
                    CHECK(dfb_count_nan(p, n, gap * isz, isz, swap, mask) ==
                          want);
                    int ok = 1;
                    for (int i = 0; i < n; i++) {
                        ok &= mask[i] == ((i * 7 + n) % 5 == 0);
                    }
                    CHECK(ok);
                    CHECK(n == 40 || mask[n] == 9); /* nothing past n */
                }
            }
        }
    }
}

/* NaT: INT64_MIN only, strided and swapped, with a mask. */
static void
test_nat(void)
{
    int64_t v[6] = {INT64_MIN, 0, INT64_MIN + 1, INT64_MIN, -1, INT64_MAX};
    uint8_t mask[6];
    CHECK(dfb_count_nat(v, 6, 8, 0, NULL) == 2);
    CHECK(dfb_count_nat(v, 3, 16, 0, mask) == 1); /* v[0], v[2], v[4] */
    CHECK(mask[0] == 1 && mask[1] == 0 && mask[2] == 0);
    uint64_t s[2];
    s[0] = __builtin_bswap64((uint64_t)INT64_MIN);
    s[1] = __builtin_bswap64(1);
    CHECK(dfb_count_nat(s, 2, 8, 1, mask) == 1);
    CHECK(mask[0] == 1 && mask[1] == 0);
    CHECK(dfb_count_nat(v, 0, 8, 0, NULL) == 0);
}

int
main(void)
{
    test_infinity();
    test_nan_cases();
    test_nat();
    printf("test_nan: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
