/* C tests of src/core/run_fill.c: dfb_run_ends_fill writes every row of
 * every window its run's value (zero and bit 0 for a null value), for each
 * run-end width and value size, and refuses bad run ends and runs beyond
 * the values. */
#include "check.h"
#include "reader.h"
#include "run_ends_store.h"

#include <stdint.h>
#include <string.h>

/* dfb_run_ends_fill for every run-end width and value sizes 1, 2, 4, 8
   and 3: every window of rows gets its runs' values, null values' rows
   zero with bit 0, the others bit 1; a run beyond the values and bad ends
   are refused. */
static void
test_run_ends_fill(void)
{
    static const int64_t ends[4] = {2, 3, 7, 30};
    char buf[1 + 8 * 4];
    char vals[4 * 8];
    for (int i = 0; i < 4 * 8; i++) {
        vals[i] = (char)(i + 1);
    }
    const uint8_t valid = 0x0b; /* value 2 is null */
    dfb_run_ends r;
    dfb_error err;
    char out[30 * 8];
    uint8_t bits[4];
    int64_t nulls;
    static const int64_t sizes[5] = {1, 2, 3, 4, 8};
    for (int width = 2; width <= 8; width *= 2) {
        CHECK(run_ends(buf, ends, 4, width, &r) == DFB_OK);
        for (int s = 0; s < 5; s++) {
            const int64_t isz = sizes[s];
            const dfb_run_values v = {vals, &valid, 0, 4, isz};
            for (int64_t off = 0; off <= 30; off += 3) {
                for (int64_t len = 0; off + len <= 30; len += 5) {
                    memset(out, 0x55, sizeof(out));
                    memset(bits, 0, sizeof(bits));
                    CHECK(dfb_run_ends_fill(&r, off, len, &v, out, bits,
                                            &nulls, &err) == DFB_OK);
                    int64_t want_nulls = 0;
                    for (int64_t i = 0; i < len; i++) {
                        const int64_t row = off + i;
                        const int run = row < 2   ? 0
                                        : row < 3 ? 1
                                        : row < 7 ? 2
                                                  : 3;
                        const int bit = (bits[i >> 3] >> (i & 7)) & 1;
                        for (int64_t k = 0; k < isz; k++) {
                            const char want =
                                run == 2 ? 0 : vals[run * isz + k];
                            CHECK(out[i * isz + k] == want);
                        }
                        CHECK(bit == (run != 2));
                        want_nulls += run == 2;
                    }
                    CHECK(nulls == want_nulls);
                }
            }
            /* three values for four runs */
            const dfb_run_values few = {vals, NULL, 0, 3, isz};
            CHECK(dfb_run_ends_fill(&r, 0, 30, &few, out, NULL, &nulls,
                                    &err) == DFB_EINVAL);
            CHECK(dfb_run_ends_fill(&r, 0, 7, &few, out, NULL, &nulls, &err) ==
                  DFB_OK);
            CHECK(dfb_run_ends_fill(&r, 25, 6, &v, out, NULL, &nulls, &err) ==
                  DFB_EINVAL);
        }
        static const int64_t down[4] = {2, 5, 3, 30};
        CHECK(run_ends(buf, down, 4, width, &r) == DFB_OK);
        const dfb_run_values v8 = {vals, NULL, 0, 4, 8};
        CHECK(dfb_run_ends_fill(&r, 0, 30, &v8, out, NULL, &nulls, &err) ==
              DFB_EINVAL);
        static const int64_t neg[4] = {-2, 3, 7, 30};
        CHECK(run_ends(buf, neg, 4, width, &r) == DFB_OK);
        CHECK(dfb_run_ends_fill(&r, 0, 3, &v8, out, NULL, &nulls, &err) ==
              DFB_EINVAL);
    }
}

/* Long runs (a mean of 16 values or more, which takes the wide fill where
   the CPU has one): every window of rows gets its runs' values, null
   values' rows zero with bit 0, for each run-end width and value size. */
static void
test_run_ends_fill_long(void)
{
    static const int64_t ends[4] = {17, 18, 64, 200};
    char buf[1 + 8 * 4];
    char vals[4 * 8];
    for (int i = 0; i < 4 * 8; i++) {
        vals[i] = (char)(i + 1);
    }
    const uint8_t valid = 0x0b; /* value 2 is null */
    dfb_run_ends r;
    dfb_error err;
    static char out[200 * 8];
    uint8_t bits[25];
    int64_t nulls;
    static const int64_t sizes[5] = {1, 2, 3, 4, 8};
    for (int width = 2; width <= 8; width *= 2) {
        CHECK(run_ends(buf, ends, 4, width, &r) == DFB_OK);
        for (int s = 0; s < 5; s++) {
            const int64_t isz = sizes[s];
            const dfb_run_values v = {vals, &valid, 0, 4, isz};
            for (int64_t off = 0; off <= 200; off += 7) {
                for (int64_t len = 0; off + len <= 200; len += 23) {
                    memset(out, 0x55, sizeof(out));
                    memset(bits, 0, sizeof(bits));
                    CHECK(dfb_run_ends_fill(&r, off, len, &v, out, bits,
                                            &nulls, &err) == DFB_OK);
                    int64_t want_nulls = 0;
                    for (int64_t i = 0; i < len; i++) {
                        const int64_t row = off + i;
                        const int run = row < 17   ? 0
                                        : row < 18 ? 1
                                        : row < 64 ? 2
                                                   : 3;
                        const int bit = (bits[i >> 3] >> (i & 7)) & 1;
                        for (int64_t k = 0; k < isz; k++) {
                            const char want =
                                run == 2 ? 0 : vals[run * isz + k];
                            CHECK(out[i * isz + k] == want);
                        }
                        CHECK(bit == (run != 2));
                        want_nulls += run == 2;
                    }
                    CHECK(nulls == want_nulls);
                    /* nothing written past the window */
                    CHECK(len == 200 || out[len * isz] == 0x55);
                }
            }
            /* three values for four runs */
            const dfb_run_values few = {vals, NULL, 0, 3, isz};
            CHECK(dfb_run_ends_fill(&r, 0, 200, &few, out, NULL, &nulls,
                                    &err) == DFB_EINVAL);
            CHECK(dfb_run_ends_fill(&r, 150, 51, &v, out, NULL, &nulls,
                                    &err) == DFB_EINVAL);
        }
    }
}

int
main(void)
{
    test_run_ends_fill();
    test_run_ends_fill_long();
    return check_report("run_fill");
}
