/* C unit tests of the Arrow format parser and the NumPy, interchange and
 * struct-module type strings of src/core/format.c: round trips, refusals, both
 * byte orders. Run by `meson test`; exits non-zero if any check fails.
 */
#include "format.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
        dfb_format g = {.type = DFB_T_BOOL8, .bits = 8, .byteorder = '|'};
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
        "",     "x",  "tdX", "tsx:", "ts",  "tsu", "tDx", "tD",
        "tDuu", "+l", "+s",  "d:10", "w:0", "vx",  "ii",
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

int
main(void)
{
    test_format_table();
    test_format_invalid();
    test_format_interchange();
    test_format_from_numpy();
    test_struct_codes();
    test_struct_format();
    return check_report("test_format");
}
