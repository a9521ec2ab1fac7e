/* C tests of src/core/run_fill.c: dfb_run_ends_fill writes every row of
 * every window its run's value (zero and bit 0 for a null value), for each
 * run-end width and value size, with and without nulls, and refuses bad
 * run ends and runs beyond the values. */
#include "check.h"
#include "reader.h"
#include "run_ends_store.h"

#include <stdint.h>
#include <string.h>

/* Checks dfb_run_ends_fill over every window [off, off + len) of the 4 runs
   ending at `ends` (the last one `total`; off in steps of `off_step`, len
   of `len_step`), for every run-end width and value sizes 1, 2, 3, 4, 8:
   each row gets its run's value, the rows of run 2 (a null value) zero
   with bit 0, the others bit 1, nothing is written past the window; a run
   beyond the values (3 values for 4 runs) is refused. */
static void
check_windows(const int64_t ends[4], int64_t total, int64_t off_step,
              int64_t len_step)
{
    char buf[1 + 8 * 4];
    char vals[4 * 8];
    for (int i = 0; i < 4 * 8; i++) {
        vals[i] = (char)(i + 1);
    }
    const uint8_t valid = 0x0b; /* value 2 is null */
    dfb_run_ends r;
    dfb_error err;
    static char out[201 * 8];
    uint8_t bits[26];
    int64_t nulls;
    static const int64_t sizes[5] = {1, 2, 3, 4, 8};
    CHECK(total <= 200);
    for (int width = 2; width <= 8; width *= 2) {
        CHECK(run_ends(buf, ends, 4, width, &r) == DFB_OK);
        for (int s = 0; s < 5; s++) {
            const int64_t isz = sizes[s];
            const dfb_run_values v = {vals, &valid, 0, 4, isz};
            for (int64_t off = 0; off <= total; off += off_step) {
                for (int64_t len = 0; off + len <= total; len += len_step) {
                    memset(out, 0x55, sizeof(out));
                    memset(bits, 0, sizeof(bits));
                    CHECK(dfb_run_ends_fill(&r, off, len, &v, out, bits,
                                            &nulls, &err) == DFB_OK);
                    int64_t want_nulls = 0;
                    for (int64_t i = 0; i < len; i++) {
                        int run = 0;
                        while (off + i >= ends[run]) {
                            run++;
                        }
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
                    CHECK(out[len * isz] == 0x55);
                }
            }
            const dfb_run_values few = {vals, NULL, 0, 3, isz};
            CHECK(dfb_run_ends_fill(&r, 0, total, &few, out, NULL, &nulls,
                                    &err) == DFB_EINVAL);
            CHECK(dfb_run_ends_fill(&r, 0, ends[2], &few, out, NULL, &nulls,
                                    &err) == DFB_OK);
            CHECK(dfb_run_ends_fill(&r, total - 5, 6, &v, out, NULL, &nulls,
                                    &err) == DFB_EINVAL);
        }
    }
}

/* Checks dfb_run_ends_fill without nulls over every window of runs of the
   lengths `lens` (`n` of them, at most 64, in all at most 200 rows), for
   every run-end width and value sizes 1, 2, 3, 4, 8, 16: each row gets its
   run's value and nothing is written past the window, and one value fewer
   than runs is refused only when the last run is asked for.  Runs of one
   row in a row take the fill's block copy, the others its short-run loop
   or (long on average) its wide one, both of whole-chunk stores (whose
   writes past a run are overwritten by the runs after it). */
static void
check_plain(const int64_t *lens, int n)
{
    int64_t ends[64];
    int64_t total = 0;
    CHECK(n <= 64);
    for (int i = 0; i < n; i++) {
        total += lens[i];
        ends[i] = total;
    }
    CHECK(total <= 200);
    char buf[1 + 8 * 64];
    static char vals[64 * 16];
    for (int i = 0; i < 64 * 16; i++) {
        vals[i] = (char)(i % 251 + 1);
    }
    static char out[201 * 16];
    static const int64_t sizes[6] = {1, 2, 3, 4, 8, 16};
    dfb_run_ends r;
    dfb_error err;
    int64_t nulls;
    for (int width = 2; width <= 8; width *= 2) {
        CHECK(run_ends(buf, ends, n, width, &r) == DFB_OK);
        for (int s = 0; s < 6; s++) {
            const int64_t isz = sizes[s];
            const dfb_run_values v = {vals, NULL, 0, n, isz};
            for (int64_t off = 0; off <= total; off++) {
                for (int64_t len = 0; off + len <= total; len += 1 + len / 8) {
                    memset(out, 0x55, sizeof(out));
                    CHECK(dfb_run_ends_fill(&r, off, len, &v, out, NULL,
                                            &nulls, &err) == DFB_OK);
                    CHECK(nulls == 0);
                    int run = 0;
                    int bad = 0;
                    for (int64_t i = 0; i < len; i++) {
                        while (off + i >= ends[run]) {
                            run++;
                        }
                        bad |= memcmp(out + i * isz, vals + run * isz,
                                      (size_t)isz) != 0;
                    }
                    CHECK(!bad);
                    CHECK(out[len * isz] == 0x55);
                }
            }
            /* one value fewer than runs: the last run is refused, the rows
               before it are not */
            const dfb_run_values few = {vals, NULL, 0, n - 1, isz};
            CHECK(dfb_run_ends_fill(&r, 0, total, &few, out, NULL, &nulls,
                                    &err) == DFB_EINVAL);
            CHECK(dfb_run_ends_fill(&r, 0, ends[n - 2], &few, out, NULL,
                                    &nulls, &err) == DFB_OK);
        }
    }
}

/* Runs of one row and short runs mixed, without nulls; ends that stop
   increasing inside a block of runs of one row are refused. */
static void
test_plain_fill(void)
{
    static const int64_t mixed[] = {
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1, 1, 1, 2,
        1, 1, 1, 1, 1, 1, 1, 1, 1, 5, 1, 33, 1, 1, 1, 1, 1, 1, 1, 1, 3,
        4, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1, 1, 1, 1, 1, 1, 1, 17};
    check_plain(mixed, (int)(sizeof(mixed) / sizeof(mixed[0])));
    static const int64_t shorts[] = {2,  3, 4, 5, 1, 6, 7, 8,  9,  31, 32,
                                     33, 1, 1, 2, 2, 4, 4, 16, 15, 3};
    check_plain(shorts, (int)(sizeof(shorts) / sizeof(shorts[0])));
    static const int64_t longs[] = {50, 61, 1, 1, 69};
    check_plain(longs, (int)(sizeof(longs) / sizeof(longs[0])));
    char buf[1 + 8 * 24];
    char vals[24 * 8] = {0};
    char out[24 * 8];
    dfb_run_ends r;
    dfb_error err;
    int64_t nulls;
    const dfb_run_values v8 = {vals, NULL, 0, 24, 8};
    for (int width = 2; width <= 8; width *= 2) {
        for (int at = 1; at < 20; at++) {
            int64_t ends[24];
            for (int i = 0; i < 24; i++) {
                ends[i] = i + 1;
            }
            ends[at] = ends[at - 1]; /* not increasing */
            CHECK(run_ends(buf, ends, 24, width, &r) == DFB_OK);
            CHECK(dfb_run_ends_fill(&r, 0, 24, &v8, out, NULL, &nulls, &err) ==
                  DFB_EINVAL);
            ends[at] = 0; /* below the row */
            CHECK(run_ends(buf, ends, 24, width, &r) == DFB_OK);
            CHECK(dfb_run_ends_fill(&r, 0, 24, &v8, out, NULL, &nulls, &err) ==
                  DFB_EINVAL);
        }
    }
}

/* Short runs (the baseline fill) and long ones (a mean of 16 values or
   more, which takes the wide fill where the CPU has one); bad run ends
   are refused. */
static void
test_run_ends_fill(void)
{
    static const int64_t short_runs[4] = {2, 3, 7, 30};
    check_windows(short_runs, 30, 3, 5);
    static const int64_t long_runs[4] = {17, 18, 64, 200};
    check_windows(long_runs, 200, 7, 23);
    char buf[1 + 8 * 4];
    char vals[4 * 8] = {0};
    dfb_run_ends r;
    dfb_error err;
    char out[30 * 8];
    int64_t nulls;
    const dfb_run_values v8 = {vals, NULL, 0, 4, 8};
    for (int width = 2; width <= 8; width *= 2) {
        static const int64_t down[4] = {2, 5, 3, 30};
        CHECK(run_ends(buf, down, 4, width, &r) == DFB_OK);
        CHECK(dfb_run_ends_fill(&r, 0, 30, &v8, out, NULL, &nulls, &err) ==
              DFB_EINVAL);
        static const int64_t neg[4] = {-2, 3, 7, 30};
        CHECK(run_ends(buf, neg, 4, width, &r) == DFB_OK);
        CHECK(dfb_run_ends_fill(&r, 0, 3, &v8, out, NULL, &nulls, &err) ==
              DFB_EINVAL);
    }
}

int
main(void)
{
    test_run_ends_fill();
    test_plain_fill();
    return check_report("run_fill");
}
