/* C unit tests of src/core/reader.[ch], the checked readers of offsets and
 * codes: the init checks (buffer bounds, overflow, widths), every span
 * rule at its edges, both byte orders, unaligned buffers, list views,
 * codes of every width and sign with and without a sentinel, string
 * views.  Run by `meson test`; exits non-zero if any check fails.
 */
#include "check.h"
#include "core.h"
#include "reader.h"
#include "run_ends_store.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Stores `n` offsets `v` of `width` bytes at `buf` + 1 (unaligned), in the
   host order or swapped.  Returns buf + 1. */
static const char *
put(char *buf, const int64_t *v, int n, int width, int swapped)
{
    for (int i = 0; i < n; i++) {
        if (width == 4) {
            uint32_t x = (uint32_t)(int32_t)v[i];
            x = swapped ? __builtin_bswap32(x) : x;
            memcpy(buf + 1 + 4 * i, &x, 4);
        }
        else {
            uint64_t x = (uint64_t)v[i];
            x = swapped ? __builtin_bswap64(x) : x;
            memcpy(buf + 1 + 8 * i, &x, 8);
        }
    }
    return buf + 1;
}

static void
test_offsets_init(void)
{
    char buf[64] = {0};
    dfb_offsets o;
    dfb_error err;
    CHECK(dfb_offsets_init(&o, buf, 16, 4, 0, 0, 4, 10, &err) == DFB_OK);
    CHECK(o.count == 4 && o.limit == 10 && o.base == buf);
    CHECK(dfb_offsets_init(&o, buf, 16, 4, 0, 1, 3, 10, &err) == DFB_OK);
    CHECK(o.base == buf + 4);
    /* one offset past the buffer */
    CHECK(dfb_offsets_init(&o, buf, 16, 4, 0, 1, 4, 10, &err) == DFB_EINVAL);
    CHECK(strstr(err.message, "do not fit") != NULL);
    CHECK(o.count == 0); /* a failed init reads nothing afterwards */
    CHECK(dfb_offsets_init(&o, buf, 16, 8, 0, 0, 3, 10, &err) == DFB_EINVAL);
    /* overflow of (first + count) * width */
    CHECK(dfb_offsets_init(&o, buf, INT64_MAX, 8, 0, INT64_MAX / 8, 2, 10,
                           &err) == DFB_EINVAL);
    CHECK(dfb_offsets_init(&o, buf, 16, 4, 0, -1, 1, 10, &err) == DFB_EINVAL);
    CHECK(dfb_offsets_init(&o, buf, 16, 4, 0, 0, -1, 10, &err) == DFB_EINVAL);
    CHECK(dfb_offsets_init(&o, buf, 16, 4, 0, 0, 1, -1, &err) == DFB_EINVAL);
    CHECK(dfb_offsets_init(&o, buf, 16, 2, 0, 0, 1, 1, &err) == DFB_ENOTSUP);
    /* no buffer: only for no offsets */
    CHECK(dfb_offsets_init(&o, NULL, 0, 4, 0, 0, 0, 0, &err) == DFB_OK);
    CHECK(dfb_offsets_init(&o, NULL, 0, 4, 0, 0, 1, 0, &err) == DFB_EINVAL);
    CHECK(dfb_offsets_init(&o, NULL, 8, 4, 0, 0, 1, 0, NULL) == DFB_EINVAL);
}

/* The span rules for one width and byte order. */
static void
test_offsets_spans(int width, int swapped)
{
    char buf[8 * 8 + 8];
    /* spans: [0,2) [2,2) [2,5) then 3 (backwards) then 11 (past 10) */
    const int64_t v[] = {0, 2, 2, 5, 3, 11, -1};
    const char *p = put(buf, v, 7, width, swapped);
    dfb_offsets o;
    dfb_error err;
    CHECK(dfb_offsets_init(&o, p, 7 * width, width, swapped, 0, 7, 10, &err) ==
          DFB_OK);
    int64_t s, e, x;
    for (int i = 0; i < 7; i++) {
        CHECK(dfb_offsets_load(&o, i) == v[i]);
    }
    CHECK(dfb_offsets_span(&o, 0, &s, &e) == DFB_OK && s == 0 && e == 2);
    CHECK(dfb_offsets_span(&o, 1, &s, &e) == DFB_OK && s == 2 && e == 2);
    CHECK(dfb_offsets_span(&o, 2, &s, &e) == DFB_OK && s == 2 && e == 5);
    CHECK(dfb_offsets_span(&o, 3, &s, &e) == DFB_EINVAL && s == 5 && e == 3);
    CHECK(dfb_offsets_span(&o, 4, &s, &e) == DFB_EINVAL && e == 11);
    CHECK(dfb_offsets_span(&o, 5, &s, &e) == DFB_EINVAL && e == -1);
    /* the last offset has no end; negative and huge i */
    CHECK(dfb_offsets_span(&o, 6, &s, &e) == DFB_EINVAL && s == -1);
    CHECK(dfb_offsets_span(&o, -1, &s, &e) == DFB_EINVAL);
    CHECK(dfb_offsets_span(&o, INT64_MAX, &s, &e) == DFB_EINVAL);
    /* streaming: the start carried from the previous end */
    CHECK(dfb_offsets_next(&o, 0, 0, &e) == DFB_OK && e == 2);
    CHECK(dfb_offsets_next(&o, 2, 2, &e) == DFB_OK && e == 5);
    CHECK(dfb_offsets_next(&o, 3, 5, &e) == DFB_EINVAL && e == 3);
    CHECK(dfb_offsets_next(&o, 4, 3, &e) == DFB_EINVAL && e == 11);
    CHECK(dfb_offsets_next(&o, 0, -1, &e) == DFB_EINVAL); /* bad start */
    CHECK(dfb_offsets_next(&o, 6, 0, &e) == DFB_EINVAL && e == -1);
    CHECK(dfb_offsets_next(&o, -1, 0, &e) == DFB_EINVAL);
    if (width == 4 && !swapped) {
        CHECK(dfb_offsets_next_i32(&o, 2, 2, &e) == DFB_OK && e == 5);
        CHECK(dfb_offsets_next_i32(&o, 3, 5, &e) == DFB_EINVAL && e == 3);
        CHECK(dfb_offsets_next_i32(&o, 6, 0, &e) == DFB_EINVAL);
        CHECK(dfb_offsets_next_i32(&o, -1, 0, &e) == DFB_EINVAL);
    }
    /* single values: in [0, limit] */
    CHECK(dfb_offsets_get(&o, 3, &x) == DFB_OK && x == 5);
    CHECK(dfb_offsets_get(&o, 5, &x) == DFB_EINVAL && x == 11);
    CHECK(dfb_offsets_get(&o, 6, &x) == DFB_EINVAL && x == -1);
    CHECK(dfb_offsets_get(&o, 7, &x) == DFB_EINVAL);
    /* a reader with no offsets accepts no index */
    CHECK(dfb_offsets_init(&o, p, 0, width, swapped, 0, 0, 10, &err) ==
          DFB_OK);
    CHECK(dfb_offsets_span(&o, 0, &s, &e) == DFB_EINVAL);
    CHECK(dfb_offsets_next(&o, 0, 0, &e) == DFB_EINVAL);
}

static void
test_offsets_extremes(void)
{
    char buf[3 * 8 + 8];
    const int64_t v[] = {INT64_MAX - 1, INT64_MAX, INT64_MIN};
    const char *p = put(buf, v, 3, 8, 0);
    dfb_offsets o;
    int64_t s, e;
    CHECK(dfb_offsets_init(&o, p, 24, 8, 0, 0, 3, INT64_MAX, NULL) == DFB_OK);
    CHECK(dfb_offsets_span(&o, 0, &s, &e) == DFB_OK && e == INT64_MAX);
    CHECK(dfb_offsets_span(&o, 1, &s, &e) == DFB_EINVAL);
    const int64_t w[] = {INT32_MAX, INT32_MIN};
    p = put(buf, w, 2, 4, 0);
    CHECK(dfb_offsets_init(&o, p, 8, 4, 0, 0, 2, INT64_MAX, NULL) == DFB_OK);
    CHECK(dfb_offsets_span(&o, 0, &s, &e) == DFB_EINVAL && s == INT32_MAX &&
          e == INT32_MIN);
}

static void
test_list_view(void)
{
    char ob[5 * 8 + 8], sb[5 * 8 + 8];
    /* [1,3) [0,0) [4,10) [9, 9+2) past 10, [-1, 0) */
    const int64_t offs[] = {1, 0, 4, 9, -1};
    const int64_t sizes[] = {2, 0, 6, 2, 1};
    for (int width = 4; width <= 8; width += 4) {
        for (int sw = 0; sw < 2; sw++) {
            const char *po = put(ob, offs, 5, width, sw);
            const char *ps = put(sb, sizes, 5, width, sw);
            dfb_offsets o, z;
            int64_t s, e;
            CHECK(dfb_offsets_init(&o, po, 5 * width, width, sw, 0, 5, 10,
                                   NULL) == DFB_OK);
            CHECK(dfb_offsets_init(&z, ps, 5 * width, width, sw, 0, 4, 0,
                                   NULL) == DFB_OK);
            CHECK(dfb_list_view_span(&o, &z, 0, &s, &e) == DFB_OK && s == 1 &&
                  e == 3);
            CHECK(dfb_list_view_span(&o, &z, 1, &s, &e) == DFB_OK && s == 0 &&
                  e == 0);
            CHECK(dfb_list_view_span(&o, &z, 2, &s, &e) == DFB_OK && e == 10);
            CHECK(dfb_list_view_span(&o, &z, 3, &s, &e) == DFB_EINVAL &&
                  e == 11);
            /* sizes hold 4: element 4 is out of their range */
            CHECK(dfb_list_view_span(&o, &z, 4, &s, &e) == DFB_EINVAL);
            CHECK(dfb_list_view_span(&o, &z, -1, &s, &e) == DFB_EINVAL);
        }
    }
    /* a negative size, and offset + size overflowing */
    const int64_t bo[] = {2, INT64_MAX - 1}, bs[] = {-1, 5};
    const char *po = put(ob, bo, 2, 8, 0);
    const char *ps = put(sb, bs, 2, 8, 0);
    dfb_offsets o, z;
    int64_t s, e;
    CHECK(dfb_offsets_init(&o, po, 16, 8, 0, 0, 2, INT64_MAX, NULL) == DFB_OK);
    CHECK(dfb_offsets_init(&z, ps, 16, 8, 0, 0, 2, 0, NULL) == DFB_OK);
    CHECK(dfb_list_view_span(&o, &z, 0, &s, &e) == DFB_EINVAL);
    CHECK(dfb_list_view_span(&o, &z, 1, &s, &e) == DFB_EINVAL && e == -1);
}

/* Stores code `v` of `width` bytes at buf + 1 + i * width (host order or
   swapped). */
static void
put_code(char *buf, int i, uint64_t v, int width, int swapped)
{
    char *p = buf + 1 + i * width;
    switch (width) {
        case 1: {
            uint8_t x = (uint8_t)v;
            memcpy(p, &x, 1);
            break;
        }
        case 2: {
            uint16_t x = (uint16_t)v;
            x = swapped ? (uint16_t)__builtin_bswap16(x) : x;
            memcpy(p, &x, 2);
            break;
        }
        case 4: {
            uint32_t x = (uint32_t)v;
            x = swapped ? __builtin_bswap32(x) : x;
            memcpy(p, &x, 4);
            break;
        }
        default: {
            uint64_t x = swapped ? __builtin_bswap64(v) : v;
            memcpy(p, &x, 8);
        }
    }
}

static void
test_codes(void)
{
    char buf[4 * 8 + 8];
    dfb_codes c;
    dfb_error err;
    for (int width = 1; width <= 8; width *= 2) {
        for (int sgn = 0; sgn < 2; sgn++) {
            for (int sw = 0; sw < 2; sw++) {
                /* 2, 0, all ones (-1 signed, max unsigned), 3 (= ncats) */
                put_code(buf, 0, 2, width, sw);
                put_code(buf, 1, 0, width, sw);
                put_code(buf, 2, UINT64_MAX, width, sw);
                put_code(buf, 3, 3, width, sw);
                CHECK(dfb_codes_init(&c, buf + 1, 4 * width, width, sgn, sw, 0,
                                     4, 3, &err) == DFB_OK);
                int64_t k;
                CHECK(dfb_codes_get(&c, 0, &k) == DFB_OK && k == 2);
                CHECK(dfb_codes_get(&c, 1, &k) == DFB_OK && k == 0);
                CHECK(dfb_codes_get(&c, 2, &k) == DFB_EINVAL);
                CHECK(dfb_codes_get(&c, 3, &k) == DFB_EINVAL && k == 3);
                CHECK(dfb_codes_get(&c, 4, &k) == DFB_EINVAL && k == -1);
                CHECK(dfb_codes_get(&c, -1, &k) == DFB_EINVAL);
                if (sgn) {
                    CHECK(dfb_codes_load(&c, 2) == -1);
                    dfb_codes_sentinel(&c, -1);
                    CHECK(dfb_codes_get(&c, 2, &k) == DFB_OK &&
                          k == DFB_CODE_NULL);
                }
                else if (width == 8) {
                    /* above INT64_MAX: out of range, never negative-valid */
                    CHECK(dfb_codes_load(&c, 2) == INT64_MIN);
                }
                else {
                    CHECK(dfb_codes_load(&c, 2) ==
                          (int64_t)((UINT64_C(1) << (8 * width)) - 1));
                }
                /* a sentinel inside the range still marks a null */
                dfb_codes_sentinel(&c, 0);
                CHECK(dfb_codes_get(&c, 1, &k) == DFB_OK &&
                      k == DFB_CODE_NULL);
                /* a window: element 1 of the buffer first */
                CHECK(dfb_codes_init(&c, buf + 1, 4 * width, width, sgn, sw, 1,
                                     3, 3, &err) == DFB_OK);
                CHECK(dfb_codes_get(&c, 0, &k) == DFB_OK && k == 0);
                CHECK(dfb_codes_get(&c, 3, &k) == DFB_EINVAL && k == -1);
            }
        }
    }
    CHECK(dfb_codes_init(&c, buf, 8, 4, 1, 0, 1, 2, 3, &err) == DFB_EINVAL);
    CHECK(dfb_codes_init(&c, buf, 8, 3, 1, 0, 0, 1, 3, &err) == DFB_ENOTSUP);
    CHECK(dfb_codes_init(&c, buf, 8, 4, 1, 0, 0, 1, -1, &err) == DFB_EINVAL);
    CHECK(dfb_codes_init(&c, NULL, 0, 4, 1, 0, 0, 0, 0, &err) == DFB_OK);
    CHECK(dfb_codes_init(&c, NULL, 0, 4, 1, 0, 0, 1, 0, NULL) == DFB_EINVAL);
    /* no categories: no code is valid */
    CHECK(dfb_codes_init(&c, buf + 1, 4, 4, 1, 0, 0, 1, 0, &err) == DFB_OK);
    put_code(buf, 0, 0, 4, 0);
    int64_t k;
    CHECK(dfb_codes_get(&c, 0, &k) == DFB_EINVAL);
}

/* Run ends of every width: every window of rows decodes to its runs; bad
   ends (not increasing, not positive, too short) are refused. */
static void
test_run_ends(void)
{
    static const int64_t ends[4] = {2, 3, 7, 10};
    /* row -> run of the ends above */
    static const int64_t want[10] = {0, 0, 1, 2, 2, 2, 2, 3, 3, 3};
    char buf[1 + 8 * 4];
    dfb_run_ends r;
    dfb_error err;
    int64_t out[10];
    for (int width = 2; width <= 8; width *= 2) {
        CHECK(run_ends(buf, ends, 4, width, &r) == DFB_OK);
        for (int64_t off = 0; off <= 10; off++) {
            for (int64_t len = 0; off + len <= 10; len++) {
                memset(out, 0xff, sizeof(out));
                CHECK(dfb_run_ends_decode(&r, off, len, out, &err) == DFB_OK);
                for (int64_t i = 0; i < len; i++) {
                    CHECK(out[i] == want[off + i]);
                }
            }
        }
        /* rows beyond the last run */
        CHECK(dfb_run_ends_decode(&r, 9, 2, out, &err) == DFB_EINVAL);
        CHECK(dfb_run_ends_decode(&r, -1, 1, out, &err) == DFB_EINVAL);
        CHECK(dfb_run_ends_decode(&r, INT64_MAX, 1, out, &err) == DFB_EINVAL);
        static const int64_t flat[4] = {2, 2, 7, 10};
        CHECK(run_ends(buf, flat, 4, width, &r) == DFB_OK);
        CHECK(dfb_run_ends_decode(&r, 0, 10, out, &err) == DFB_EINVAL);
        static const int64_t down[4] = {2, 5, 3, 10};
        CHECK(run_ends(buf, down, 4, width, &r) == DFB_OK);
        CHECK(dfb_run_ends_decode(&r, 0, 10, out, &err) == DFB_EINVAL);
        static const int64_t neg[4] = {-2, 3, 7, 10};
        CHECK(run_ends(buf, neg, 4, width, &r) == DFB_OK);
        CHECK(dfb_run_ends_decode(&r, 0, 3, out, &err) == DFB_EINVAL);
        /* every index written lies in [0, count) whatever the ends */
        static const int64_t wild[4] = {30000, 1, 2, 3};
        CHECK(run_ends(buf, wild, 4, width, &r) == DFB_OK);
        memset(out, 0, sizeof(out));
        dfb_run_ends_decode(&r, 0, 10, out, &err);
        for (int i = 0; i < 10; i++) {
            CHECK(out[i] >= 0 && out[i] < 4);
        }
    }
    CHECK(dfb_run_ends_init(&r, buf, 8, 3, 0, 1, &err) == DFB_ENOTSUP);
    CHECK(dfb_run_ends_init(&r, buf, 8, 4, 1, 2, &err) == DFB_EINVAL);
    CHECK(dfb_run_ends_init(&r, NULL, 0, 4, 0, 0, &err) == DFB_OK);
    CHECK(dfb_run_ends_decode(&r, 0, 0, out, &err) == DFB_OK);
    CHECK(dfb_run_ends_decode(&r, 0, 1, out, &err) == DFB_EINVAL);
}

/* Writes a string view (length, prefix or inline bytes, buffer, offset)
   at buf + 1 (unaligned).  Returns buf + 1. */
static const char *
put_view(char *buf, int32_t len, int32_t idx, int32_t off)
{
    memset(buf, 'x', 17);
    memcpy(buf + 1, &len, 4);
    if (len < 0 || len > 12) {
        memcpy(buf + 1 + 8, &idx, 4);
        memcpy(buf + 1 + 12, &off, 4);
    }
    return buf + 1;
}

/* dfb_string_view_read of the view `len`, `idx`, `off` (see put_view)
   over two buffers of 100 and 20 bytes (or those of `sizes` when given);
   *bytes: NULL unless read. */
static dfb_code
read_view(int32_t len, int32_t idx, int32_t off, int64_t n_buffers,
          const int64_t *sizes, const char **bytes, int32_t *n)
{
    static char b0[100], b1[20];
    static const char *const bufs[2] = {b0, b1};
    static const int64_t two[2] = {100, 20};
    static char view[17];
    int32_t b = -2, o = -2;
    const char *v = put_view(view, len, idx, off);
    *bytes = NULL;
    dfb_code rc = dfb_string_view_read(
        v, n_buffers, bufs, sizes != NULL ? sizes : two, bytes, n, &b, &o);
    if (rc == DFB_OK) {
        CHECK(*bytes == (len <= 12 ? v + 4 : bufs[idx] + off));
    }
    else {
        CHECK(*bytes == NULL && b == idx && o == off);
    }
    return rc;
}

static void
test_string_views(void)
{
    const char *p;
    int32_t n;
    /* inline: up to 12 bytes, in the view */
    CHECK(read_view(0, 0, 0, 2, NULL, &p, &n) == DFB_OK && n == 0);
    CHECK(read_view(12, 0, 0, 0, NULL, &p, &n) == DFB_OK && n == 12);
    /* out of line: inside its buffer, to the last byte */
    CHECK(read_view(13, 1, 7, 2, NULL, &p, &n) == DFB_OK && n == 13);
    CHECK(read_view(20, 1, 0, 2, NULL, &p, &n) == DFB_OK);
    CHECK(read_view(21, 1, 0, 2, NULL, &p, &n) == DFB_EINVAL);
    CHECK(read_view(13, 1, 8, 2, NULL, &p, &n) == DFB_EINVAL);
    /* a buffer that does not exist, a negative offset or length */
    CHECK(read_view(13, 2, 0, 2, NULL, &p, &n) == DFB_EINVAL);
    CHECK(read_view(13, -1, 0, 2, NULL, &p, &n) == DFB_EINVAL);
    CHECK(read_view(13, 0, -1, 2, NULL, &p, &n) == DFB_EINVAL);
    CHECK(read_view(-1, 0, 0, 2, NULL, &p, &n) == DFB_EINVAL && n == -1);
    CHECK(read_view(13, 0, 0, 0, NULL, &p, &n) == DFB_EINVAL);
    /* offset + length past INT32_MAX does not wrap */
    const int64_t lim[2] = {(int64_t)INT32_MAX + 5, 0};
    CHECK(read_view(13, 0, INT32_MAX - 7, 1, lim, &p, &n) == DFB_EINVAL);
}

int
main(void)
{
    test_offsets_init();
    for (int width = 4; width <= 8; width += 4) {
        test_offsets_spans(width, 0);
        test_offsets_spans(width, 1);
    }
    test_offsets_extremes();
    test_list_view();
    test_codes();
    test_run_ends();
    test_string_views();
    return check_report("test_reader");
}
