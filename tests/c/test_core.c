/* C unit tests of src/core (no Python): format round trips, layout
 * overflow edges, contiguity, bitmap kernels at every bit offset, offsets
 * validation, the checks of imported Arrow structs.  Run by `meson test`;
 * exits non-zero if any check fails.
 */
#include "core.h"
#include "arrow_check.h"
#include "bitmap.h"
#include "dlpack_types.h"
#include "format.h"
#include "layout.h"
#include "offsets.h"

#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 on a big-endian host. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DFB_TEST_BIG 1
#else
#define DFB_TEST_BIG 0
#endif

static int failures = 0;
static int checks = 0;

/* Counts one check; prints the failing expression and its line. */
#define CHECK(cond)                                                          \
    do {                                                                     \
        checks++;                                                            \
        if (!(cond)) {                                                       \
            failures++;                                                      \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
                    #cond);                                                  \
        }                                                                    \
    } while (0)

/* Checks that strings a and b are equal, printing both if not. */
#define CHECK_STR(a, b)                                                      \
    do {                                                                     \
        checks++;                                                            \
        if (strcmp((a), (b)) != 0) {                                         \
            failures++;                                                      \
            fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                    (a), (b));                                               \
        }                                                                    \
    } while (0)

/* ---- format ---------------------------------------------------------- */

/* An Arrow format string, what it parses to, and its NumPy typestr ("" if
   it has none). */
typedef struct {
    const char *arrow;
    dfb_type type;
    int bits;
    int itemsize;
    const char *typestr;
} format_case;

static const format_case format_cases[] = {
    {"n", DFB_T_NULL, 0, 0, ""},
    {"b", DFB_T_BOOL_BIT, 1, 0, ""},
    {"c", DFB_T_INT, 8, 1, "|i1"},
    {"C", DFB_T_UINT, 8, 1, "|u1"},
    {"s", DFB_T_INT, 16, 2, "=i2"},
    {"S", DFB_T_UINT, 16, 2, "=u2"},
    {"i", DFB_T_INT, 32, 4, "=i4"},
    {"I", DFB_T_UINT, 32, 4, "=u4"},
    {"l", DFB_T_INT, 64, 8, "=i8"},
    {"L", DFB_T_UINT, 64, 8, "=u8"},
    {"e", DFB_T_FLOAT, 16, 2, "=f2"},
    {"f", DFB_T_FLOAT, 32, 4, "=f4"},
    {"g", DFB_T_FLOAT, 64, 8, "=f8"},
    {"u", DFB_T_UTF8, 8, 0, ""},
    {"U", DFB_T_LARGE_UTF8, 8, 0, ""},
    {"vu", DFB_T_STRING_VIEW, 128, 0, ""},
    {"z", DFB_T_BINARY, 8, 0, ""},
    {"Z", DFB_T_LARGE_BINARY, 8, 0, ""},
    {"tdD", DFB_T_DATE32, 32, 4, "=i4"},
    {"tdm", DFB_T_DATE64, 64, 8, "=M8[ms]"},
    {"tss:", DFB_T_TIMESTAMP, 64, 8, "=M8[s]"},
    {"tsm:", DFB_T_TIMESTAMP, 64, 8, "=M8[ms]"},
    {"tsu:", DFB_T_TIMESTAMP, 64, 8, "=M8[us]"},
    {"tsn:", DFB_T_TIMESTAMP, 64, 8, "=M8[ns]"},
    {"tsu:UTC", DFB_T_TIMESTAMP, 64, 8, "=M8[us]"},
    {"tDs", DFB_T_DURATION, 64, 8, "=m8[s]"},
    {"tDm", DFB_T_DURATION, 64, 8, "=m8[ms]"},
    {"tDu", DFB_T_DURATION, 64, 8, "=m8[us]"},
    {"tDn", DFB_T_DURATION, 64, 8, "=m8[ns]"},
};

/* Every supported Arrow format parses to its type, width and typestr. */
static void
test_format_table(void)
{
    size_t n = sizeof(format_cases) / sizeof(format_cases[0]);
    for (size_t i = 0; i < n; i++) {
        const format_case *c = &format_cases[i];
        dfb_format f;
        char ts[32] = "";
        CHECK(dfb_format_parse_arrow(c->arrow, &f) == 0);
        CHECK(f.type == c->type);
        CHECK(f.bits == c->bits);
        CHECK(dfb_format_itemsize(&f) == c->itemsize);
        if (c->typestr[0] != '\0') {
            CHECK(dfb_format_numpy_typestr(&f, ts, sizeof(ts)) == 0);
            CHECK_STR(ts, c->typestr);
        }
        else {
            CHECK(dfb_format_numpy_typestr(&f, ts, sizeof(ts)) < 0);
        }
    }
    dfb_format f;
    CHECK(dfb_format_parse_arrow("tsu:Europe/Paris", &f) == 0);
    CHECK(f.tz_len == strlen("Europe/Paris"));
    CHECK(f.tz != NULL && memcmp(f.tz, "Europe/Paris", f.tz_len) == 0);
    CHECK(dfb_format_parse_arrow("tsn:", &f) == 0 && f.tz == NULL);
    /* the result dtype widens DATE32 days to datetime64[D]; the others
       are their storage */
    for (size_t i = 0; i < n; i++) {
        const format_case *c = &format_cases[i];
        char ts[32] = "", rs[32] = "";
        CHECK(dfb_format_parse_arrow(c->arrow, &f) == 0);
        int r = dfb_format_result_typestr(&f, rs, sizeof(rs));
        if (f.type == DFB_T_DATE32) {
            CHECK(r == 0);
            CHECK_STR(rs, "=M8[D]");
        }
        else if (dfb_format_numpy_typestr(&f, ts, sizeof(ts)) == 0) {
            CHECK(r == 0);
            CHECK_STR(rs, ts);
        }
        else {
            CHECK(r < 0);
        }
    }
    /* Arrow string -> dfb_format -> Arrow string is the identity */
    for (size_t i = 0; i < n; i++) {
        char back[32] = "";
        CHECK(dfb_format_parse_arrow(format_cases[i].arrow, &f) == 0);
        CHECK(dfb_format_to_arrow(&f, back, sizeof(back)) == 0);
        CHECK_STR(back, format_cases[i].arrow);
    }
    CHECK(dfb_format_parse_arrow("tsn:America/New_York", &f) == 0);
    {
        char back[32], small[6];
        CHECK(dfb_format_to_arrow(&f, back, sizeof(back)) == 0);
        CHECK_STR(back, "tsn:America/New_York");
        CHECK(dfb_format_to_arrow(&f, small, sizeof(small)) < 0);
        dfb_format g = {DFB_T_BOOL8, 8, 0, '|', NULL, 0};
        CHECK(dfb_format_to_arrow(&g, back, sizeof(back)) < 0);
        g.type = DFB_T_DICTIONARY;
        CHECK(dfb_format_to_arrow(&g, back, sizeof(back)) < 0);
        g.type = DFB_T_INT;
        g.bits = 24;
        CHECK(dfb_format_to_arrow(&g, back, sizeof(back)) < 0);
        g.type = DFB_T_FLOAT;
        g.bits = 128;
        CHECK(dfb_format_to_arrow(&g, back, sizeof(back)) < 0);
        CHECK(dfb_format_to_arrow(&f, back, 1) < 0);
    }
    /* a too-small buffer fails rather than truncating */
    char tiny[4];
    CHECK(dfb_format_parse_arrow("tsn:", &f) == 0);
    CHECK(dfb_format_numpy_typestr(&f, tiny, sizeof(tiny)) < 0);
}

/* Unsupported or malformed strings are rejected as DFB_T_INVALID. */
static void
test_format_invalid(void)
{
    static const char *const bad[] = {
        "",     "x",  "tdX", "tsx:",   "ts",  "tsu", "tDx", "tD",
        "tDuu", "+l", "+s",  "d:10,2", "w:4", "vz",  "ii",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dfb_format f;
        CHECK(dfb_format_parse_arrow(bad[i], &f) < 0);
        CHECK(f.type == DFB_T_INVALID);
    }
    dfb_format f;
    CHECK(dfb_format_parse_arrow(NULL, &f) < 0);
}

/* Interchange dtype tuples map to the same parsed form as the Arrow
   strings, and endianness is carried into the typestr. */
static void
test_format_interchange(void)
{
    dfb_format f;
    char ts[32];
    static const struct {
        int kind, bits;
        const char *typestr;
    } num[] = {{0, 8, "|i1"},  {0, 16, "<i2"}, {0, 32, "<i4"}, {0, 64, "<i8"},
               {1, 8, "|u1"},  {1, 16, "<u2"}, {1, 32, "<u4"}, {1, 64, "<u8"},
               {2, 16, "<f2"}, {2, 32, "<f4"}, {2, 64, "<f8"}, {20, 8, "|b1"}};
    for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++) {
        CHECK(dfb_format_parse_interchange(num[i].kind, num[i].bits, "", '<',
                                           &f) == 0);
        CHECK(dfb_format_numpy_typestr(&f, ts, sizeof(ts)) == 0);
        CHECK_STR(ts, num[i].typestr);
    }
    CHECK(dfb_format_parse_interchange(0, 64, "l", '>', &f) == 0);
    CHECK(dfb_format_numpy_typestr(&f, ts, sizeof(ts)) == 0);
    CHECK_STR(ts, ">i8");
    CHECK(dfb_format_parse_interchange(20, 1, "b", '=', &f) == 0);
    CHECK(f.type == DFB_T_BOOL_BIT);
    CHECK(dfb_format_parse_interchange(21, 8, "u", '=', &f) == 0);
    CHECK(f.type == DFB_T_UTF8);
    CHECK(dfb_format_parse_interchange(21, 8, "U", '=', &f) == 0);
    CHECK(f.type == DFB_T_LARGE_UTF8);
    CHECK(dfb_format_parse_interchange(21, 8, "C", '=', &f) == 0);
    CHECK(f.type == DFB_T_UTF8);
    CHECK(dfb_format_parse_interchange(21, 8, "z", '=', &f) < 0);
    CHECK(dfb_format_parse_interchange(22, 64, "tsn:UTC", '=', &f) == 0);
    CHECK(f.type == DFB_T_TIMESTAMP && f.unit == 'n' && f.tz_len == 3);
    CHECK(dfb_format_parse_interchange(22, 32, "tdD", '=', &f) == 0);
    CHECK(f.type == DFB_T_DATE32);
    CHECK(dfb_format_parse_interchange(22, 64, "l", '=', &f) < 0);
    CHECK(dfb_format_parse_interchange(23, 8, "c", '=', &f) == 0);
    CHECK(f.type == DFB_T_DICTIONARY && f.bits == 8);
    CHECK(dfb_format_parse_interchange(0, 12, "", '=', &f) < 0);
    CHECK(dfb_format_parse_interchange(2, 8, "", '=', &f) < 0);
    CHECK(dfb_format_parse_interchange(20, 16, "", '=', &f) < 0);
    CHECK(dfb_format_parse_interchange(0, 64, "", 'x', &f) < 0);
    CHECK(dfb_format_parse_interchange(99, 64, "", '=', &f) < 0);
    CHECK(f.type == DFB_T_INVALID);
}

/* NumPy (kind, itemsize, unit) -> dfb_format -> typestr and Arrow. */
static void
test_format_from_numpy(void)
{
    static const struct {
        char kind;
        int itemsize;
        char unit;
        const char *typestr, *arrow;
    } ok[] = {
        {'b', 1, 0, "|b1", NULL},        {'i', 1, 0, "|i1", "c"},
        {'i', 2, 0, "=i2", "s"},         {'i', 4, 0, "=i4", "i"},
        {'i', 8, 0, "=i8", "l"},         {'u', 1, 0, "|u1", "C"},
        {'u', 2, 0, "=u2", "S"},         {'u', 4, 0, "=u4", "I"},
        {'u', 8, 0, "=u8", "L"},         {'f', 2, 0, "=f2", "e"},
        {'f', 4, 0, "=f4", "f"},         {'f', 8, 0, "=f8", "g"},
        {'M', 8, 's', "=M8[s]", "tss:"}, {'M', 8, 'n', "=M8[ns]", "tsn:"},
        {'m', 8, 'm', "=m8[ms]", "tDm"}, {'m', 8, 'u', "=m8[us]", "tDu"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        dfb_format f;
        char ts[32], arrow[32];
        CHECK(dfb_format_from_numpy(ok[i].kind, ok[i].itemsize, ok[i].unit,
                                    &f) == 0);
        CHECK(dfb_format_numpy_typestr(&f, ts, sizeof(ts)) == 0);
        CHECK_STR(ts, ok[i].typestr);
        CHECK(dfb_format_itemsize(&f) == ok[i].itemsize);
        if (ok[i].arrow != NULL) {
            CHECK(dfb_format_to_arrow(&f, arrow, sizeof(arrow)) == 0);
            CHECK_STR(arrow, ok[i].arrow);
        }
        else {
            CHECK(dfb_format_to_arrow(&f, arrow, sizeof(arrow)) < 0);
        }
    }
    static const struct {
        char kind;
        int itemsize;
        char unit;
    } bad[] = {{'b', 2, 0}, {'i', 3, 0},   {'i', 16, 0},  {'u', 0, 0},
               {'f', 1, 0}, {'f', 16, 0},  {'c', 8, 0},   {'O', 8, 0},
               {'M', 8, 0}, {'M', 8, 'D'}, {'m', 4, 's'}, {'S', 1, 0}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dfb_format f;
        CHECK(dfb_format_from_numpy(bad[i].kind, bad[i].itemsize, bad[i].unit,
                                    &f) < 0);
        CHECK(f.type == DFB_T_INVALID);
    }
}

/* DLPack (code, bits, lanes) <-> NumPy typestr, both directions. */
static void
test_dlpack_types(void)
{
    static const struct {
        uint8_t code, bits;
        char kind;
        const char *typestr;
    } ok[] = {{kDLInt, 8, 'i', "|i1"},        {kDLInt, 16, 'i', "=i2"},
              {kDLInt, 32, 'i', "=i4"},       {kDLInt, 64, 'i', "=i8"},
              {kDLUInt, 8, 'u', "|u1"},       {kDLUInt, 16, 'u', "=u2"},
              {kDLUInt, 32, 'u', "=u4"},      {kDLUInt, 64, 'u', "=u8"},
              {kDLFloat, 16, 'f', "=f2"},     {kDLFloat, 32, 'f', "=f4"},
              {kDLFloat, 64, 'f', "=f8"},     {kDLComplex, 64, 'c', "=c8"},
              {kDLComplex, 128, 'c', "=c16"}, {kDLBool, 8, 'b', "|b1"}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char ts[8];
        uint8_t code = 99, bits = 0;
        CHECK(dfb_dlpack_typestr(ok[i].code, ok[i].bits, 1, ts, sizeof(ts)) ==
              0);
        CHECK_STR(ts, ok[i].typestr);
        CHECK(dfb_dlpack_from_numpy(ok[i].kind, ok[i].bits / 8, &code,
                                    &bits) == 0);
        CHECK(code == ok[i].code && bits == ok[i].bits);
    }
    char ts[8];
    CHECK(dfb_dlpack_typestr(kDLInt, 32, 4, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLInt, 24, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLFloat, 8, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLBfloat, 16, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLComplex, 32, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLBool, 1, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLOpaqueHandle, 64, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLComplex, 128, 1, ts, 4) < 0);
    uint8_t code, bits;
    CHECK(dfb_dlpack_from_numpy('M', 8, &code, &bits) < 0);
    /* device names: DeviceType member names and message names */
    CHECK_STR(dfb_dlpack_device_name(kDLCPU, 0), "CPU");
    CHECK_STR(dfb_dlpack_device_name(kDLCUDAHost, 0), "CUDA_HOST");
    CHECK_STR(dfb_dlpack_device_name(kDLCUDAHost, 1), "CUDA host (pinned)");
    CHECK_STR(dfb_dlpack_device_name(kDLTrn, 0), "TRN");
    CHECK_STR(dfb_dlpack_device_name(kDLTrn, 1), "Trainium");
    CHECK(dfb_dlpack_device_name(12345, 0) == NULL);
    CHECK(dfb_dlpack_device_name(-1, 1) == NULL);
    /* the one host-readable-device predicate */
    CHECK(dfb_dlpack_host_readable(kDLCPU) &&
          dfb_dlpack_host_readable(kDLCUDAHost));
    CHECK(dfb_dlpack_host_readable(kDLROCMHost) &&
          dfb_dlpack_host_readable(kDLCUDAManaged));
    CHECK(!dfb_dlpack_host_readable(kDLCUDA) &&
          !dfb_dlpack_host_readable(kDLROCM));
    CHECK(!dfb_dlpack_host_readable(kDLOneAPI) &&
          !dfb_dlpack_host_readable(0));
    CHECK(!dfb_dlpack_host_readable(-1) && !dfb_dlpack_host_readable(12345));
    CHECK(dfb_dlpack_from_numpy('f', 16, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('c', 32, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('O', 8, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('i', 0, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('V', 16, &code, &bits) < 0);
}

/* struct-module codes -> NumPy typestr and item size. */
static void
test_struct_codes(void)
{
    static const struct {
        const char *fmt, *typestr;
        int size;
    } ok[] = {
        {"?", "|b1", 1},     {"b", "|i1", 1},  {"B", "|u1", 1},
        {"<h", "<i2", 2},    {">H", ">u2", 2}, {"=i", "=i4", 4},
        {"!I", ">u4", 4},    {"<l", "<i4", 4}, {"=L", "=u4", 4},
        {"q", "=i8", 8},     {">Q", ">u8", 8}, {"e", "=f2", 2},
        {"<f", "<f4", 4},    {"d", "=f8", 8},  {"Zf", "=c8", 8},
        {">Zd", ">c16", 16}, {"@B", "|u1", 1},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char ts[8] = "";
        CHECK(dfb_struct_typestr(ok[i].fmt, ts, sizeof(ts)) == ok[i].size);
        CHECK_STR(ts, ok[i].typestr);
    }
    char ts[8];
    /* native C sizes without a prefix */
    CHECK(dfb_struct_typestr("l", ts, sizeof(ts)) == (int)sizeof(long));
    CHECK(dfb_struct_typestr("n", ts, sizeof(ts)) == (int)sizeof(size_t));
    CHECK(dfb_struct_typestr("N", ts, sizeof(ts)) == (int)sizeof(size_t));
    static const char *const bad[] = {"",   "x", "<n", "=N", "ii",
                                      "2i", "Z", "Zg", "g",  "s",
                                      "P",  "<", "O",  "?x", "w"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(dfb_struct_typestr(bad[i], ts, sizeof(ts)) < 0);
    }
    CHECK(dfb_struct_typestr(">Zd", ts, 4) < 0);
    /* the hand-written writer behind these typestrs (no stdio) */
    char w[8] = "unset";
    CHECK(dfb_typestr_put(w, sizeof(w), '=', 'i', 8) == 3);
    CHECK_STR(w, "=i8");
    CHECK(dfb_typestr_put(w, sizeof(w), '>', 'c', 16) == 4);
    CHECK_STR(w, ">c16");
    CHECK(dfb_typestr_put(w, 4, '<', 'c', 16) < 0); /* no room for 4 + NUL */
    CHECK_STR(w, ">c16");                           /* nothing written */
    CHECK(dfb_typestr_put(w, sizeof(w), '|', 'u', 0) < 0);
    CHECK(dfb_typestr_put(w, sizeof(w), '|', 'u', 100) < 0);
    CHECK(dfb_typestr_put(w, 4, '|', 'u', 1) == 3);
    CHECK_STR(w, "|u1");
}

/* The reverse direction (dfb_numpy_struct_format) for every NumPy type,
   native and byte-swapped, round-tripped through dfb_struct_typestr. */
static void
test_struct_format(void)
{
    const char native = '=', swapped = DFB_TEST_BIG ? '<' : '>',
               host = DFB_TEST_BIG ? '>' : '<';
    static const struct {
        char kind, type;
        int size;
        const char *code;    /* native order */
        const char *typestr; /* what dfb_struct_typestr gives back */
    } cases[] = {
        {'b', '?', 1, "?", "|b1"},
        {'i', 'b', 1, "b", "|i1"},
        {'u', 'B', 1, "B", "|u1"},
        {'i', 'h', 2, "h", "=i2"},
        {'u', 'H', 2, "H", "=u2"},
        {'i', 'i', 4, "i", "=i4"},
        {'u', 'I', 4, "I", "=u4"},
        {'i', 'l', (int)sizeof(long), "l", NULL},
        {'u', 'L', (int)sizeof(long), "L", NULL},
        {'i', 'q', 8, "q", "=i8"},
        {'u', 'Q', 8, "Q", "=u8"},
        {'f', 'e', 2, "e", "=f2"},
        {'f', 'f', 4, "f", "=f4"},
        {'f', 'd', 8, "d", "=f8"},
        {'c', 'F', 8, "Zf", "=c8"},
        {'c', 'D', 16, "Zd", "=c16"},
        {'f', 'g', (int)sizeof(long double), "g", NULL},
        {'c', 'G', 2 * (int)sizeof(long double), "Zg", NULL},
    };
    char ts[16];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *n = cases[i].code;
        /* '=', '|' and the host's own order character are native */
        const char orders[3] = {native, '|', host};
        for (int o = 0; o < 3; o++) {
            const char *got = dfb_numpy_struct_format(
                cases[i].kind, cases[i].type, cases[i].size, orders[o]);
            CHECK(got != NULL && strcmp(got, n) == 0);
        }
        if (cases[i].typestr != NULL) {
            CHECK(dfb_struct_typestr(n, ts, sizeof(ts)) == cases[i].size);
            CHECK_STR(ts, cases[i].typestr);
        }
        else if (cases[i].type == 'l' || cases[i].type == 'L') {
            CHECK(dfb_struct_typestr(n, ts, sizeof(ts)) == cases[i].size);
        }
        else { /* long double: no struct-module code dfbuffer imports */
            CHECK(dfb_struct_typestr(n, ts, sizeof(ts)) < 0);
        }
        /* the other byte order: an explicit prefix and standard sizes,
           read back as the same kind and size in that order */
        const char *sw = dfb_numpy_struct_format(cases[i].kind, cases[i].type,
                                                 cases[i].size, swapped);
        if (cases[i].type == 'g' || cases[i].type == 'G') {
            CHECK(sw == NULL || cases[i].size == 8 || cases[i].size == 16);
            continue;
        }
        CHECK(sw != NULL);
        if (sw == NULL) {
            continue;
        }
        CHECK(dfb_struct_typestr(sw, ts, sizeof(ts)) == cases[i].size);
        if (cases[i].size == 1) {
            CHECK(ts[0] == '|');
        }
        else {
            CHECK(sw[0] == swapped && ts[0] == swapped);
        }
        CHECK(ts[1] == cases[i].kind);
    }
    /* no format: datetimes, unknown kinds and sizes */
    CHECK(dfb_numpy_struct_format('M', 'M', 8, native) == NULL);
    CHECK(dfb_numpy_struct_format('m', 'm', 8, swapped) == NULL);
    CHECK(dfb_numpy_struct_format('O', 'O', 8, '|') == NULL);
    CHECK(dfb_numpy_struct_format('V', 'V', 4, '|') == NULL);
    CHECK(dfb_numpy_struct_format('i', 'x', 16, native) == NULL);
    CHECK(dfb_numpy_struct_format('f', 'x', 1, swapped) == NULL);
    CHECK(dfb_numpy_struct_format('c', 'x', 4, swapped) == NULL);
    /* an unusual type char in native order: standard sizes, host order */
    const char *q = dfb_numpy_struct_format('i', 'x', 8, native);
    CHECK(q != NULL && q[0] == host && strcmp(q + 1, "q") == 0);
}

/* ---- layout ---------------------------------------------------------- */

/* Multiplication is exact up to INT64_MAX and refuses one past it. */
static void
test_mul_bytes(void)
{
    int64_t r = -1;
    dfb_error err = {{0}};
    CHECK(dfb_mul_bytes(0, 8, &r, &err) == DFB_OK && r == 0);
    CHECK(dfb_mul_bytes(INT64_MAX, 0, &r, &err) == DFB_OK && r == 0);
    CHECK(dfb_mul_bytes(INT64_MAX, 1, &r, &err) == DFB_OK && r == INT64_MAX);
    CHECK(dfb_mul_bytes(INT64_MAX / 8, 8, &r, &err) == DFB_OK &&
          r == INT64_MAX / 8 * 8);
    r = 7;
    CHECK(dfb_mul_bytes(INT64_MAX / 8 + 1, 8, &r, &err) == DFB_EOVERFLOW);
    CHECK(r == 7); /* untouched on failure */
    CHECK(strstr(err.message, "overflows") != NULL);
    CHECK(dfb_mul_bytes(INT64_MAX / 2 + 1, 2, &r, NULL) == DFB_EOVERFLOW);
}

/* Extent of strided arrays: empty, contiguous, negative strides, and
   overflow of every intermediate and of hi - lo. */
static void
test_extent(void)
{
    int64_t lo = -1, hi = -1;
    dfb_error err = {{0}};
    const int64_t max = INT64_MAX;
    {
        int64_t shape[] = {3, 0}, strides[] = {INT64_MAX, 8};
        CHECK(dfb_core_extent(2, shape, strides, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 0);
    }
    {
        CHECK(dfb_core_extent(0, NULL, NULL, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 8);
    }
    {
        int64_t shape[] = {2, 3}, strides[] = {24, 8};
        CHECK(dfb_core_extent(2, shape, strides, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 48);
    }
    {
        int64_t shape[] = {4}, strides[] = {-8};
        CHECK(dfb_core_extent(1, shape, strides, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == -24 && hi == 8);
    }
    {
        /* size-1 dimensions ignore huge strides */
        int64_t shape[] = {1, 5}, strides[] = {INT64_MAX, 1};
        CHECK(dfb_core_extent(2, shape, strides, 1, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 5);
    }
    {
        /* (shape - 1) * stride overflows */
        int64_t shape[] = {3}, strides[] = {INT64_MAX / 2 + 1};
        lo = hi = 99;
        CHECK(dfb_core_extent(1, shape, strides, 1, max, &lo, &hi, &err) ==
              DFB_EOVERFLOW);
        CHECK(lo == 99 && hi == 99);
        CHECK(strstr(err.message, "Py_ssize_t") != NULL);
    }
    {
        /* hi + itemsize overflows */
        int64_t shape[] = {2}, strides[] = {INT64_MAX - 4};
        CHECK(dfb_core_extent(1, shape, strides, 4, max, &lo, &hi, &err) ==
              DFB_OK);
        CHECK(dfb_core_extent(1, shape, strides, 5, max, &lo, &hi, &err) ==
              DFB_EOVERFLOW);
    }
    {
        /* each reach fits, hi - lo does not */
        int64_t shape[] = {2, 2},
                strides[] = {INT64_MAX / 2 + 1, INT64_MIN / 2};
        CHECK(dfb_core_extent(2, shape, strides, 1, max, &lo, &hi, &err) ==
              DFB_EOVERFLOW);
    }
    {
        /* a smaller address type (32-bit Py_ssize_t) */
        int64_t shape[] = {2}, strides[] = {INT32_MAX - 1};
        CHECK(dfb_core_extent(1, shape, strides, 1, INT32_MAX, &lo, &hi,
                              &err) == DFB_OK &&
              hi == INT32_MAX);
        CHECK(dfb_core_extent(1, shape, strides, 2, INT32_MAX, &lo, &hi,
                              &err) == DFB_EOVERFLOW);
    }
}

/* Contiguity: both orders, size-1 and zero-size dimensions, 0-d arrays,
   and expected strides beyond INT64_MAX. */
static void
test_contiguous(void)
{
    /* 0-d: contiguous in both orders */
    CHECK(dfb_layout_is_contiguous(0, NULL, NULL, 8, 0) == 1);
    CHECK(dfb_layout_is_contiguous(0, NULL, NULL, 8, 1) == 1);
    {
        int64_t shape[] = {3, 4}, c[] = {32, 8}, f[] = {8, 24};
        CHECK(dfb_layout_is_contiguous(2, shape, c, 8, 0) == 1);
        CHECK(dfb_layout_is_contiguous(2, shape, c, 8, 1) == 0);
        CHECK(dfb_layout_is_contiguous(2, shape, f, 8, 1) == 1);
        CHECK(dfb_layout_is_contiguous(2, shape, f, 8, 0) == 0);
        int64_t gap[] = {64, 8}, neg[] = {-32, 8};
        CHECK(dfb_layout_is_contiguous(2, shape, gap, 8, 0) == 0);
        CHECK(dfb_layout_is_contiguous(2, shape, neg, 8, 0) == 0);
    }
    {
        /* size-1 dimensions ignore their strides: both orders */
        int64_t shape[] = {1, 5, 1}, strides[] = {-7, 4, INT64_MIN};
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 4, 0) == 1);
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 4, 1) == 1);
        int64_t ones[] = {1, 1, 1};
        CHECK(dfb_layout_is_contiguous(3, ones, strides, 4, 0) == 1);
    }
    {
        /* zero-size: contiguous whatever the strides */
        int64_t shape[] = {3, 0, 2}, strides[] = {5, INT64_MAX, -3};
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 8, 0) == 1);
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 8, 1) == 1);
    }
    {
        /* the expected stride of the outer dimension overflows int64: no
           stride matches it, and nothing overflows silently */
        int64_t shape[] = {2, INT64_MAX / 4 + 1};
        int64_t strides[] = {INT64_MIN, 8};
        CHECK(dfb_layout_is_contiguous(2, shape, strides, 8, 0) == 0);
        strides[0] = INT64_MAX;
        CHECK(dfb_layout_is_contiguous(2, shape, strides, 8, 0) == 0);
        /* the overflow after the last dimension that matters is harmless */
        int64_t one[] = {1, INT64_MAX / 4 + 1};
        CHECK(dfb_layout_is_contiguous(2, one, strides, 8, 0) == 1);
        int64_t big[] = {INT64_MAX};
        int64_t s1[] = {1};
        CHECK(dfb_layout_is_contiguous(1, big, s1, 1, 0) == 1);
        CHECK(dfb_layout_is_contiguous(1, big, s1, 1, 1) == 1);
    }
    {
        /* 64 dimensions of size 2, itemsize 1: expected strides 2^0..2^63,
           the last beyond INT64_MAX */
        int64_t shape[64], strides[64];
        for (int i = 0; i < 64; i++) {
            shape[i] = 2;
            strides[63 - i] = i < 63 ? (int64_t)1 << i : INT64_MAX;
        }
        CHECK(dfb_layout_is_contiguous(64, shape, strides, 1, 0) == 0);
        CHECK(dfb_layout_is_contiguous(63, shape + 1, strides + 1, 1, 0) == 1);
    }
}

/* ---- bitmap ---------------------------------------------------------- */

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

/* ---- offsets --------------------------------------------------------- */

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

/* ---- error convention ------------------------------------------------ */

/* Returns DFB_OK if x >= 0, else DFB_EINVAL. */
static dfb_code
nonneg(int x)
{
    return x >= 0 ? DFB_OK : DFB_EINVAL;
}

/* Uses DFB_RETURN_NOT_OK twice; *reached says whether it got past them. */
static dfb_code
two_steps(int a, int b, int *reached)
{
    DFB_RETURN_NOT_OK(nonneg(a));
    DFB_RETURN_NOT_OK(nonneg(b));
    *reached = 1;
    return DFB_OK;
}

/* The macro propagates the first failure; messages are truncated. */
static void
test_error(void)
{
    int reached = 0;
    CHECK(two_steps(1, -1, &reached) == DFB_EINVAL && reached == 0);
    CHECK(two_steps(1, 1, &reached) == DFB_OK && reached == 1);
    dfb_error err;
    char big[600];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CHECK(dfb_error_set(&err, DFB_EOVERFLOW, "%s", big) == DFB_EOVERFLOW);
    CHECK(strlen(err.message) == sizeof(err.message) - 1);
    CHECK(dfb_error_set(NULL, DFB_ENOTSUP, "x") == DFB_ENOTSUP);
}

/* A release callback that does nothing (the structs live on the stack). */
static void
noop_array_release(struct ArrowArray *a)
{
    a->release = NULL;
}

/* Fills `a` as a live array of `length` elements over `buffers`. */
static void
fill_array(struct ArrowArray *a, int64_t length, int64_t n_buffers,
           const void **buffers)
{
    memset(a, 0, sizeof(*a));
    a->length = length;
    a->n_buffers = n_buffers;
    a->buffers = buffers;
    a->release = noop_array_release;
}

/* dfb_arrow_check_node and dfb_arrow_check_table: every refusal before a
   buffer is read, and the struct bitmap read only when allowed. */
static void
test_arrow_check(void)
{
    static int64_t data[8];
    static uint8_t bits[1] = {0x0F}; /* rows 0..3 valid, 4..7 null */
    const void *bufs[2] = {NULL, data};
    struct ArrowSchema s = {.format = "l", .name = "x"};
    struct ArrowArray a;
    dfb_format f;
    dfb_error err;
    int64_t end;

    fill_array(&a, 4, 2, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 1, 3, "x", &f, &end, &err) == DFB_OK);
    CHECK(f.type == DFB_T_INT && f.bits == 64 && end == 4);
    a.release = NULL;
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "released") != NULL);
    fill_array(&a, -1, 2, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    fill_array(&a, 4, 2, bufs);
    a.null_count = 5;
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "null_count 5") != NULL);
    fill_array(&a, 4, 1, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "buffers") != NULL);
    fill_array(&a, 4, 2, bufs);
    struct ArrowSchema list = {.format = "+l", .name = "x"};
    CHECK(dfb_arrow_check_node(&list, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_ENOTSUP);
    /* sizes: overflowing and address-wrapping buffers */
    fill_array(&a, INT64_MAX / 4, 2, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 0, INT64_MAX / 4, "x", &f, &end,
                               &err) == DFB_EOVERFLOW);
    const void *high[2] = {NULL, (const void *)(UINTPTR_MAX - 15)};
    fill_array(&a, 4, 2, high);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "address space") != NULL);
    fill_array(&a, 1, 2, high);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 1, "x", &f, &end, &err) == DFB_OK);
    /* nulls without a bitmap; values without a buffer */
    fill_array(&a, 4, 2, bufs);
    a.null_count = 1;
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "no validity") != NULL);
    const void *nodata[2] = {NULL, NULL};
    fill_array(&a, 4, 2, nodata);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "is NULL") != NULL);
    fill_array(&a, 0, 2, nodata);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 0, "x", &f, &end, &err) == DFB_OK);
    struct ArrowSchema str = {.format = "u"};
    const void *nostr[3] = {NULL, data, NULL};
    fill_array(&a, 4, 3, nostr); /* its data size is in its offsets */
    CHECK(dfb_arrow_check_node(&str, &a, 0, 4, "x", &f, &end, &err) == DFB_OK);
    /* dictionaries: both sides or neither, integer indices */
    struct ArrowSchema values = {.format = "u"};
    struct ArrowArray dict;
    const void *sbufs[3] = {NULL, data, data};
    fill_array(&dict, 2, 3, sbufs);
    fill_array(&a, 4, 2, bufs);
    struct ArrowSchema codes = {.format = "i", .dictionary = &values};
    CHECK(dfb_arrow_check_node(&codes, &a, 0, 4, "c", &f, &end, &err) ==
          DFB_EINVAL);
    a.dictionary = &dict;
    CHECK(dfb_arrow_check_node(&codes, &a, 0, 4, "c", &f, &end, &err) ==
          DFB_OK);
    struct ArrowSchema fcodes = {.format = "g", .dictionary = &values};
    CHECK(dfb_arrow_check_node(&fcodes, &a, 0, 4, "c", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "integer") != NULL);

    /* a table: "+s" with one int64 child */
    struct ArrowSchema *kids[1] = {&s};
    struct ArrowSchema table = {
        .format = "+s", .n_children = 1, .children = kids};
    struct ArrowArray child, top;
    struct ArrowArray *achildren[1] = {&child};
    const void *tbufs[1] = {NULL};
    fill_array(&child, 8, 2, bufs);
    fill_array(&top, 8, 1, tbufs);
    top.n_children = 1;
    top.children = achildren;
    struct ArrowArray *tops[1] = {&top};
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_OK);
    CHECK(dfb_arrow_check_table(&table, tops, 1, 0, &err) == DFB_OK);
    top.null_count = 9;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    top.null_count = 1; /* nulls but no bitmap */
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    tbufs[0] = bits;
    top.null_count = -1;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_ENOTSUP);
    CHECK(strstr(err.message, "null rows") != NULL);
    top.length = 4; /* rows 0..3: all valid, counted */
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_OK);
    CHECK(dfb_arrow_check_table(&table, tops, 1, 0, &err) == DFB_ENOTSUP);
    CHECK(strstr(err.message, "device") != NULL);
    top.null_count = 0; /* trusted, never read */
    CHECK(dfb_arrow_check_table(&table, tops, 1, 0, &err) == DFB_OK);
    child.length = 3;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    CHECK(strstr(err.message, "fewer") != NULL);
    child.length = 8;
    top.n_children = 0;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    kids[0] = NULL;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
}

int
main(void)
{
    test_format_table();
    test_format_invalid();
    test_format_interchange();
    test_format_from_numpy();
    test_dlpack_types();
    test_struct_codes();
    test_struct_format();
    test_mul_bytes();
    test_extent();
    test_contiguous();
    test_bitmap();
    test_bitmap_copy();
    test_offsets();
    test_error();
    test_arrow_check();
    printf("test_core: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
