/* C unit tests of the validation of offsets buffers (src/core/offsets.c):
 * accepted when non-negative and non-decreasing, else the first bad index. Run
 * by `meson test`; exits non-zero if any check fails.
 */
#include "offsets.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Offsets: accepted when non-negative and non-decreasing, else the first
   bad one is reported; int32/int64, swapped, at a misaligned address. */
static void
test_offsets(void)
{
    int64_t end = -1;
    dfb_bad_offset bad = {-1, -1};
    dfb_error err = {{0}};
    int32_t o32[] = {0, 3, 3, 7, 10};
    CHECK(dfb_offsets_validate(o32, 4, 0, 0, 4, &end, &bad, &err) == DFB_OK);
    CHECK(end == 10);
    CHECK(dfb_offsets_validate(o32, 4, 0, 1, 3, &end, &bad, &err) == DFB_OK);
    CHECK(end == 7);
    int32_t dec[] = {0, 5, 4, 9};
    CHECK(dfb_offsets_validate(dec, 4, 0, 0, 3, &end, &bad, &err) ==
          DFB_EINVAL);
    CHECK(bad.index == 2 && bad.value == 4);
    CHECK(strstr(err.message, "offsets[2] = 4") != NULL);
    /* the window starts after the decrease: fine */
    CHECK(dfb_offsets_validate(dec, 4, 0, 2, 3, &end, &bad, &err) == DFB_OK);
    int32_t neg[] = {-1, 2};
    CHECK(dfb_offsets_validate(neg, 4, 0, 0, 1, &end, &bad, &err) ==
          DFB_EINVAL);
    CHECK(bad.index == 0 && bad.value == -1);
    int64_t o64[] = {0, 1, INT64_MAX, 2};
    CHECK(dfb_offsets_validate(o64, 8, 0, 0, 2, &end, &bad, &err) == DFB_OK);
    CHECK(end == INT64_MAX);
    CHECK(dfb_offsets_validate(o64, 8, 0, 0, 3, &end, &bad, NULL) ==
          DFB_EINVAL);
    CHECK(bad.index == 3 && bad.value == 2);
    int64_t neg64[] = {0, INT64_MIN};
    CHECK(dfb_offsets_validate(neg64, 8, 0, 0, 1, &end, &bad, &err) ==
          DFB_EINVAL);
    CHECK(bad.value == INT64_MIN);
    /* byte-swapped: big-endian 0, 1, 256 */
    uint8_t be32[] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0};
    CHECK(dfb_offsets_validate(be32, 4, 1, 0, 2, &end, &bad, &err) == DFB_OK);
    CHECK(end == 256);
    uint8_t be64[16] = {0};
    be64[7] = 5;  /* 5 */
    be64[15] = 4; /* 4: decreasing */
    CHECK(dfb_offsets_validate(be64, 8, 1, 0, 1, &end, &bad, &err) ==
          DFB_EINVAL);
    CHECK(bad.index == 1 && bad.value == 4);
    /* misaligned: offsets at an odd address, buffer exactly as long */
    for (int shift = 1; shift < 8; shift++) {
        uint8_t *raw = malloc((size_t)shift + 3 * 8);
        if (raw == NULL) {
            abort();
        }
        int64_t v[] = {2, 4, 8};
        memcpy(raw + shift, v, sizeof(v));
        CHECK(dfb_offsets_validate(raw + shift, 8, 0, 0, 2, &end, &bad,
                                   &err) == DFB_OK);
        CHECK(end == 8);
        int32_t w[] = {0, 9, 1};
        memcpy(raw + shift, w, sizeof(w));
        CHECK(dfb_offsets_validate(raw + shift, 4, 0, 0, 2, &end, &bad,
                                   &err) == DFB_EINVAL);
        CHECK(bad.index == 2 && bad.value == 1);
        free(raw);
    }
    /* past the end: the caller compares *end with the data size */
    int32_t past[] = {0, 2, 50};
    CHECK(dfb_offsets_validate(past, 4, 0, 0, 2, &end, &bad, &err) == DFB_OK);
    CHECK(end == 50); /* > a 10-byte data buffer: the caller rejects it */
    CHECK(dfb_offsets_validate(past, 2, 0, 0, 2, &end, &bad, &err) ==
          DFB_ENOTSUP);
}

/* Stores v as offset i of `buf` (width 4 or 8, byte-swapped or not). */
static void
put(uint8_t *buf, int width, int swapped, int64_t i, int64_t v)
{
    if (width == 4) {
        uint32_t x = (uint32_t)(int32_t)v;
        x = swapped ? __builtin_bswap32(x) : x;
        memcpy(buf + 4 * i, &x, 4);
    }
    else {
        uint64_t x = (uint64_t)v;
        x = swapped ? __builtin_bswap64(x) : x;
        memcpy(buf + 8 * i, &x, 8);
    }
}

/* Long runs (checked in blocks): every window length around the block
   size, and one bad offset at every place of a window (first of a block,
   last of a block, the tail), for each width and byte order; at an odd
   address. */
static void
test_offsets_long(void)
{
    enum { N = 300 };
    uint8_t *raw = malloc(8 * N + 1);
    if (raw == NULL) {
        abort();
    }
    uint8_t *buf = raw + 1;
    for (int width = 4; width <= 8; width += 4) {
        for (int swapped = 0; swapped < 2; swapped++) {
            for (int64_t i = 0; i < N; i++) {
                put(buf, width, swapped, i, 3 * i);
            }
            for (int64_t first = 0; first < 3; first++) {
                for (int64_t last = first; last < N; last++) {
                    int64_t end = -1;
                    CHECK(dfb_offsets_validate(buf, width, swapped, first,
                                               last, &end, NULL,
                                               NULL) == DFB_OK);
                    CHECK(end == 3 * last);
                }
            }
            for (int64_t at = 0; at < N; at++) {
                dfb_bad_offset bad = {-1, -1};
                int64_t end = -1;
                /* a decrease (or a negative first offset) at `at` */
                put(buf, width, swapped, at, at > 0 ? 3 * at - 4 : -1);
                CHECK(dfb_offsets_validate(buf, width, swapped, 0, N - 1, &end,
                                           &bad, NULL) == DFB_EINVAL);
                CHECK(bad.index == at);
                CHECK(bad.value == (at > 0 ? 3 * at - 4 : -1));
                /* a window after it is fine */
                if (at + 1 < N) {
                    CHECK(dfb_offsets_validate(buf, width, swapped, at + 1,
                                               N - 1, &end, NULL,
                                               NULL) == DFB_OK);
                }
                put(buf, width, swapped, at, 3 * at);
            }
        }
    }
    free(raw);
}

int
main(void)
{
    test_offsets();
    test_offsets_long();
    return check_report("test_offsets");
}
