/* C unit tests of the type table (src/core/types.c): every row is filled
 * and consistent with its layout, every Arrow format string of the
 * specification parses to the row and parameters it names, malformed ones
 * are refused, the types not read yet stay refused by the readers'
 * parser, and the table's item size, NumPy type string and Arrow format
 * columns give what format.c's switches gave.  Run by `meson test`; exits
 * non-zero if any check fails.
 */
#include "check.h"
#include "format.h"
#include "types.h"

#include <stdio.h>
#include <string.h>

/* Every row names its own type, has a name and a logical type, and its
   buffers agree with its layout. */
static void
test_rows(void)
{
    CHECK(dfb_type_row_of((dfb_type)-1)->type == DFB_T_INVALID);
    CHECK(dfb_type_row_of(DFB_T_COUNT)->type == DFB_T_INVALID);
    for (int t = 0; t < DFB_T_COUNT; t++) {
        const dfb_type_row *r = dfb_type_row_of((dfb_type)t);
        CHECK((int)r->type == t);
        CHECK(r->name != NULL && r->name[0] != '\0');
        CHECK(r->logical != NULL && r->logical[0] != '\0');
        CHECK(r->n_buffers >= 0 && r->n_buffers <= 3);
        for (int b = 0; b < 3; b++) {
            /* exactly the first n_buffers buffers are named */
            CHECK((b < r->n_buffers) == (r->buffers[b] != DFB_BUF_NONE));
        }
        int has_offsets = 0;
        for (int b = 0; b < r->n_buffers; b++) {
            has_offsets |= r->buffers[b] == DFB_BUF_OFFSETS ||
                           r->buffers[b] == DFB_BUF_VIEWS ||
                           r->buffers[b] == DFB_BUF_UNION_OFFSETS;
        }
        CHECK(has_offsets == (r->offset_bytes > 0));
        CHECK(r->offset_bytes == 0 || r->offset_bytes == 4 ||
              r->offset_bytes == 8 || r->offset_bytes == 16);
        /* nested layouts have children, flat ones none */
        int nested =
            r->layout >= DFB_LAYOUT_LIST && r->layout <= DFB_LAYOUT_RUN_END;
        CHECK(nested == (r->n_children != 0));
        /* a fixed-width layout knows its width (or takes the format's) */
        if (r->layout == DFB_LAYOUT_FIXED || r->layout == DFB_LAYOUT_CODES) {
            CHECK(r->item_bits >= 0);
            CHECK(r->storage != 0);
        }
        if (r->layout == DFB_LAYOUT_OFFSETS || nested) {
            CHECK(r->item_bits == -1);
        }
        /* what converts is read; what is not read is refused, but for the
           nested types, which the nested converter reads from the tree */
        CHECK(r->readable || r->conv == DFB_CONV_REFUSED ||
              r->conv == DFB_CONV_NESTED || r->conv == DFB_CONV_NESTED_VIEW);
        CHECK(strcmp(dfb_layout_name(r->layout), "none") != 0 ||
              r->layout == DFB_LAYOUT_NONE);
    }
    CHECK(strcmp(dfb_conv_class(DFB_CONV_VIEW), "view") == 0);
    CHECK(strcmp(dfb_conv_class(DFB_CONV_WIDEN), "kernel") == 0);
    CHECK(strcmp(dfb_conv_class(DFB_CONV_STRINGS), "objects") == 0);
    CHECK(strcmp(dfb_conv_class(DFB_CONV_REFUSED), "refused") == 0);
    CHECK(strcmp(dfb_conv_class(DFB_CONV_NESTED), "objects") == 0);
    CHECK(strcmp(dfb_conv_class(DFB_CONV_NESTED_VIEW), "view") == 0);
    CHECK(dfb_type_row_of(DFB_T_LIST)->conv == DFB_CONV_NESTED);
    CHECK(dfb_type_row_of(DFB_T_FIXED_LIST)->conv == DFB_CONV_NESTED_VIEW);
    CHECK(strcmp(dfb_buffer_role_name(DFB_BUF_VALIDITY), "validity") == 0);
    CHECK(strcmp(dfb_buffer_role_name((dfb_buffer_role)99), "none") == 0);
}

/* A format string, the type it parses to and whether the readers'
   parser (dfb_format_parse_arrow) accepts it. */
typedef struct {
    const char *fmt;
    dfb_type type;
    int bits;
    int readable;
} fmt_case;

static const fmt_case fmt_cases[] = {
    {"n", DFB_T_NULL, 0, 1},
    {"b", DFB_T_BOOL_BIT, 1, 1},
    {"c", DFB_T_INT, 8, 1},
    {"L", DFB_T_UINT, 64, 1},
    {"e", DFB_T_FLOAT, 16, 1},
    {"u", DFB_T_UTF8, 8, 1},
    {"U", DFB_T_LARGE_UTF8, 8, 1},
    {"vu", DFB_T_STRING_VIEW, 128, 1},
    {"z", DFB_T_BINARY, 8, 1},
    {"Z", DFB_T_LARGE_BINARY, 8, 1},
    {"tdD", DFB_T_DATE32, 32, 1},
    {"tdm", DFB_T_DATE64, 64, 1},
    {"tsn:UTC", DFB_T_TIMESTAMP, 64, 1},
    {"tDs", DFB_T_DURATION, 64, 1},
    {"d:10,2", DFB_T_DECIMAL, 128, 1},
    {"d:9,-3,32", DFB_T_DECIMAL, 32, 1},
    {"d:76,10,256", DFB_T_DECIMAL, 256, 1},
    {"w:16", DFB_T_FIXED_BINARY, 128, 1},
    {"vz", DFB_T_BINARY_VIEW, 128, 1},
    {"tts", DFB_T_TIME32, 32, 1},
    {"ttm", DFB_T_TIME32, 32, 1},
    {"ttu", DFB_T_TIME64, 64, 1},
    {"ttn", DFB_T_TIME64, 64, 1},
    {"tiM", DFB_T_INTERVAL_MONTHS, 32, 1},
    {"tiD", DFB_T_INTERVAL_DT, 64, 1},
    {"tin", DFB_T_INTERVAL_MDN, 128, 1},
    {"+l", DFB_T_LIST, 0, 0},
    {"+L", DFB_T_LARGE_LIST, 0, 0},
    {"+vl", DFB_T_LIST_VIEW, 0, 0},
    {"+vL", DFB_T_LARGE_LIST_VIEW, 0, 0},
    {"+w:3", DFB_T_FIXED_LIST, 0, 0},
    {"+s", DFB_T_STRUCT, 0, 0},
    {"+m", DFB_T_MAP, 0, 0},
    {"+ud:0,1,5", DFB_T_DENSE_UNION, 0, 0},
    {"+us:", DFB_T_SPARSE_UNION, 0, 0},
    {"+r", DFB_T_RUN_END, 0, 1},
};

/* Every format parses to its row; the readable ones (and only those) pass
   the readers' parser too; the item width follows the row. */
static void
test_parse(void)
{
    for (size_t i = 0; i < sizeof(fmt_cases) / sizeof(fmt_cases[0]); i++) {
        const fmt_case *c = &fmt_cases[i];
        dfb_format f, g;
        CHECK(dfb_type_parse_arrow(c->fmt, &f) == 0);
        CHECK(f.type == c->type);
        CHECK(f.bits == c->bits);
        CHECK((dfb_format_parse_arrow(c->fmt, &g) == 0) == c->readable);
        CHECK(dfb_type_row_of(f.type)->readable == c->readable);
        const dfb_type_row *r = dfb_type_row_of(f.type);
        if (r->layout == DFB_LAYOUT_FIXED) {
            CHECK(dfb_type_item_bits(&f) == c->bits);
        }
        if (r->item_bits < 0) {
            CHECK(dfb_type_item_bits(&f) == -1);
        }
    }
}

/* The parameters of parameterised formats. */
static void
test_parameters(void)
{
    dfb_format f;
    CHECK(dfb_type_parse_arrow("d:38,-4", &f) == 0);
    CHECK(f.precision == 38 && f.scale == -4 && f.bits == 128);
    CHECK(dfb_type_parse_arrow("w:7", &f) == 0);
    CHECK(f.size == 7 && f.bits == 56 && dfb_type_item_bits(&f) == 56);
    CHECK(dfb_type_parse_arrow("+w:1000", &f) == 0);
    CHECK(f.size == 1000);
    CHECK(dfb_type_parse_arrow("+ud:3,7", &f) == 0);
    CHECK(f.ids_len == 3 && strncmp(f.ids, "3,7", f.ids_len) == 0);
    CHECK(dfb_type_parse_arrow("tsu:Europe/Paris", &f) == 0);
    CHECK(f.unit == 'u' && f.tz_len == 12 &&
          strncmp(f.tz, "Europe/Paris", f.tz_len) == 0);
    CHECK(dfb_type_parse_arrow("ttm", &f) == 0 && f.unit == 'm');
    CHECK(strcmp(dfb_unit_name('u'), "us") == 0);
    CHECK(strcmp(dfb_unit_name('D'), "D") == 0);
    CHECK(dfb_unit_name(0) == NULL);
}

/* Malformed strings are refused, leaving an INVALID format. */
static void
test_malformed(void)
{
    static const char *const bad[] = {
        NULL,      "",          "x",
        "d:",      "d:0,0",     "d:10",
        "d:10,2,", "d:10,2,48", "d:77,0",
        "d:10,2x", "w:",        "w:0",
        "w:-1",    "w:3x",      "+w:",
        "+w:0",    "+ud",       "+ud:1,",
        "+ud:128", "+us:a",     "tt",
        "ttx",     "ti",        "+x",
        "+l2",     "tsx:",      "w:99999999999999999999",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        dfb_format f;
        f.type = DFB_T_INT;
        CHECK(dfb_type_parse_arrow(bad[i], &f) == -1);
        CHECK(f.type == DFB_T_INVALID || bad[i] == NULL);
    }
}

/* The interchange dtypes the table gives. */
static void
test_interchange(void)
{
    dfb_format f;
    int kind = -1, bits = -1;
    CHECK(dfb_type_parse_arrow("vu", &f) == 0);
    CHECK(dfb_type_interchange(&f, &kind, &bits) == 0);
    CHECK(kind == 21 && bits == 8);
    CHECK(dfb_type_parse_arrow("tdD", &f) == 0);
    CHECK(dfb_type_interchange(&f, &kind, &bits) == 0);
    CHECK(kind == 22 && bits == 32);
    CHECK(dfb_type_parse_arrow("s", &f) == 0);
    CHECK(dfb_type_interchange(&f, &kind, &bits) == 0);
    CHECK(kind == 0 && bits == 16);
    CHECK(dfb_type_parse_arrow("b", &f) == 0);
    CHECK(dfb_type_interchange(&f, &kind, &bits) == 0);
    CHECK(kind == 20 && bits == 1);
    CHECK(dfb_type_parse_arrow("n", &f) == 0);
    CHECK(dfb_type_interchange(&f, &kind, &bits) == -1);
    CHECK(dfb_type_parse_arrow("+s", &f) == 0);
    CHECK(dfb_type_interchange(&f, &kind, &bits) == -1);
}

/* What the switches of format.c gave, before item size, the NumPy type
   strings and the Arrow format became columns of the table, for every
   format of the specification, malformed ones, and the formats made from
   interchange dtypes and NumPy dtypes.  The one difference: the Arrow
   writer now writes every row's format (it refused the parameterised,
   view, time, interval and nested ones), so `arrow` is the format read
   back, the canonical one ("d:38,4,128" is "d:38,4"). */
typedef struct {
    const char *fmt;
    int parsed;   /* dfb_type_parse_arrow */
    int readable; /* dfb_format_parse_arrow */
    dfb_type type;
    int bits;
    char unit, order;
    int precision, scale;
    int64_t size;
    size_t params_len; /* tz_len + ids_len */
    int itemsize;
    const char *typestr, *result, *arrow; /* "": -1 */
} column_case;

// clang-format off
static const column_case column_cases[] = {
    {"n", 0, 0, DFB_T_NULL, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "n"},
    {"b", 0, 0, DFB_T_BOOL_BIT, 1, 0, '|', 0, 0, 0, 0, 0, "", "", "b"},
    {"c", 0, 0, DFB_T_INT, 8, 0, '=', 0, 0, 0, 0, 1, "|i1", "|i1", "c"},
    {"C", 0, 0, DFB_T_UINT, 8, 0, '=', 0, 0, 0, 0, 1, "|u1", "|u1", "C"},
    {"s", 0, 0, DFB_T_INT, 16, 0, '=', 0, 0, 0, 0, 2, "=i2", "=i2", "s"},
    {"S", 0, 0, DFB_T_UINT, 16, 0, '=', 0, 0, 0, 0, 2, "=u2", "=u2", "S"},
    {"i", 0, 0, DFB_T_INT, 32, 0, '=', 0, 0, 0, 0, 4, "=i4", "=i4", "i"},
    {"I", 0, 0, DFB_T_UINT, 32, 0, '=', 0, 0, 0, 0, 4, "=u4", "=u4", "I"},
    {"l", 0, 0, DFB_T_INT, 64, 0, '=', 0, 0, 0, 0, 8, "=i8", "=i8", "l"},
    {"L", 0, 0, DFB_T_UINT, 64, 0, '=', 0, 0, 0, 0, 8, "=u8", "=u8", "L"},
    {"e", 0, 0, DFB_T_FLOAT, 16, 0, '=', 0, 0, 0, 0, 2, "=f2", "=f2", "e"},
    {"f", 0, 0, DFB_T_FLOAT, 32, 0, '=', 0, 0, 0, 0, 4, "=f4", "=f4", "f"},
    {"g", 0, 0, DFB_T_FLOAT, 64, 0, '=', 0, 0, 0, 0, 8, "=f8", "=f8", "g"},
    {"u", 0, 0, DFB_T_UTF8, 8, 0, '=', 0, 0, 0, 0, 0, "", "", "u"},
    {"U", 0, 0, DFB_T_LARGE_UTF8, 8, 0, '=', 0, 0, 0, 0, 0, "", "", "U"},
    {"vu", 0, 0, DFB_T_STRING_VIEW, 128, 0, '=', 0, 0, 0, 0, 0, "", "", "vu"},
    {"z", 0, 0, DFB_T_BINARY, 8, 0, '=', 0, 0, 0, 0, 0, "", "", "z"},
    {"Z", 0, 0, DFB_T_LARGE_BINARY, 8, 0, '=', 0, 0, 0, 0, 0, "", "", "Z"},
    {"tdD", 0, 0, DFB_T_DATE32, 32, 'D', '=', 0, 0, 0, 0, 4, "=i4", "=M8[D]", "tdD"},
    {"tdm", 0, 0, DFB_T_DATE64, 64, 'm', '=', 0, 0, 0, 0, 8, "=M8[ms]", "=M8[ms]", "tdm"},
    {"tss:", 0, 0, DFB_T_TIMESTAMP, 64, 's', '=', 0, 0, 0, 0, 8, "=M8[s]", "=M8[s]", "tss:"},
    {"tsm:", 0, 0, DFB_T_TIMESTAMP, 64, 'm', '=', 0, 0, 0, 0, 8, "=M8[ms]", "=M8[ms]", "tsm:"},
    {"tsu:", 0, 0, DFB_T_TIMESTAMP, 64, 'u', '=', 0, 0, 0, 0, 8, "=M8[us]", "=M8[us]", "tsu:"},
    {"tsn:", 0, 0, DFB_T_TIMESTAMP, 64, 'n', '=', 0, 0, 0, 0, 8, "=M8[ns]", "=M8[ns]", "tsn:"},
    {"tsu:UTC", 0, 0, DFB_T_TIMESTAMP, 64, 'u', '=', 0, 0, 0, 3, 8, "=M8[us]", "=M8[us]", "tsu:UTC"},
    {"tsn:Europe/Paris", 0, 0, DFB_T_TIMESTAMP, 64, 'n', '=', 0, 0, 0, 12, 8, "=M8[ns]", "=M8[ns]", "tsn:Europe/Paris"},
    {"tDs", 0, 0, DFB_T_DURATION, 64, 's', '=', 0, 0, 0, 0, 8, "=m8[s]", "=m8[s]", "tDs"},
    {"tDm", 0, 0, DFB_T_DURATION, 64, 'm', '=', 0, 0, 0, 0, 8, "=m8[ms]", "=m8[ms]", "tDm"},
    {"tDu", 0, 0, DFB_T_DURATION, 64, 'u', '=', 0, 0, 0, 0, 8, "=m8[us]", "=m8[us]", "tDu"},
    {"tDn", 0, 0, DFB_T_DURATION, 64, 'n', '=', 0, 0, 0, 0, 8, "=m8[ns]", "=m8[ns]", "tDn"},
    {"d:10,2", 0, 0, DFB_T_DECIMAL, 128, 0, '=', 10, 2, 0, 0, 16, "", "", "d:10,2"},
    {"d:9,-3,32", 0, 0, DFB_T_DECIMAL, 32, 0, '=', 9, -3, 0, 0, 4, "", "", "d:9,-3,32"},
    {"d:76,10,256", 0, 0, DFB_T_DECIMAL, 256, 0, '=', 76, 10, 0, 0, 32, "", "", "d:76,10,256"},
    {"d:38,4,128", 0, 0, DFB_T_DECIMAL, 128, 0, '=', 38, 4, 0, 0, 16, "", "", "d:38,4"},
    {"d:18,0,64", 0, 0, DFB_T_DECIMAL, 64, 0, '=', 18, 0, 0, 0, 8, "", "", "d:18,0,64"},
    {"w:16", 0, 0, DFB_T_FIXED_BINARY, 128, 0, '|', 0, 0, 16, 0, 16, "", "", "w:16"},
    {"w:1", 0, 0, DFB_T_FIXED_BINARY, 8, 0, '|', 0, 0, 1, 0, 1, "", "", "w:1"},
    {"vz", 0, 0, DFB_T_BINARY_VIEW, 128, 0, '=', 0, 0, 0, 0, 0, "", "", "vz"},
    {"tts", 0, 0, DFB_T_TIME32, 32, 's', '=', 0, 0, 0, 0, 4, "", "", "tts"},
    {"ttm", 0, 0, DFB_T_TIME32, 32, 'm', '=', 0, 0, 0, 0, 4, "", "", "ttm"},
    {"ttu", 0, 0, DFB_T_TIME64, 64, 'u', '=', 0, 0, 0, 0, 8, "", "", "ttu"},
    {"ttn", 0, 0, DFB_T_TIME64, 64, 'n', '=', 0, 0, 0, 0, 8, "", "", "ttn"},
    {"tiM", 0, 0, DFB_T_INTERVAL_MONTHS, 32, 0, '=', 0, 0, 0, 0, 4, "", "", "tiM"},
    {"tiD", 0, 0, DFB_T_INTERVAL_DT, 64, 0, '=', 0, 0, 0, 0, 8, "", "", "tiD"},
    {"tin", 0, 0, DFB_T_INTERVAL_MDN, 128, 0, '=', 0, 0, 0, 0, 16, "", "", "tin"},
    {"+l", 0, -1, DFB_T_LIST, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+l"},
    {"+L", 0, -1, DFB_T_LARGE_LIST, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+L"},
    {"+vl", 0, -1, DFB_T_LIST_VIEW, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+vl"},
    {"+vL", 0, -1, DFB_T_LARGE_LIST_VIEW, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+vL"},
    {"+w:3", 0, -1, DFB_T_FIXED_LIST, 0, 0, '|', 0, 0, 3, 0, 0, "", "", "+w:3"},
    {"+s", 0, -1, DFB_T_STRUCT, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+s"},
    {"+m", 0, -1, DFB_T_MAP, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+m"},
    {"+ud:0,1,5", 0, -1, DFB_T_DENSE_UNION, 0, 0, '|', 0, 0, 0, 5, 0, "", "", "+ud:0,1,5"},
    {"+us:", 0, -1, DFB_T_SPARSE_UNION, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+us:"},
    {"+us:3", 0, -1, DFB_T_SPARSE_UNION, 0, 0, '|', 0, 0, 0, 1, 0, "", "", "+us:3"},
    {"+r", 0, 0, DFB_T_RUN_END, 0, 0, '|', 0, 0, 0, 0, 0, "", "", "+r"},
    {"", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"x", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"vx", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"ts", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"tsx:", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"tDx", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"ttu:", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"tt", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"ti", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"d:", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"d:0,1", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"d:10", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"w:0", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"w:", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"+w:", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"+w:0", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"+x", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"+ud", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"+ud:128", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"+ud:1,", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"+s:", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"uu", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"tdDx", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"ttx", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
    {"tsu", -1, -1, DFB_T_INVALID, 0, 0, 0, 0, 0, 0, 0, 0, "", "", ""},
};

static const struct {
    int kind, bits;
    const char *fmt;
    char endianness;
    dfb_type type;
    int itemsize;
    const char *typestr, *result, *arrow;
} ix_column_cases[] = {
    {20, 8, "b", '|', DFB_T_BOOL8, 1, "|b1", "|b1", ""},
    {20, 1, "b", '=', DFB_T_BOOL_BIT, 0, "", "", "b"},
    {23, 8, "c", '=', DFB_T_DICTIONARY, 1, "|i1", "|i1", ""},
    {23, 32, "i", '<', DFB_T_DICTIONARY, 4, "<i4", "<i4", ""},
    {23, 16, "s", '>', DFB_T_DICTIONARY, 2, ">i2", ">i2", ""},
    {0, 16, "s", '>', DFB_T_INT, 2, ">i2", ">i2", "s"},
    {2, 64, "g", '<', DFB_T_FLOAT, 8, "<f8", "<f8", "g"},
    {22, 64, "tdm", '=', DFB_T_DATE64, 8, "=M8[ms]", "=M8[ms]", "tdm"},
    {22, 32, "tdD", '>', DFB_T_DATE32, 4, ">i4", ">M8[D]", "tdD"},
    {21, 8, "vu", '=', DFB_T_STRING_VIEW, 0, "", "", "vu"},
    {21, 8, "u", '=', DFB_T_UTF8, 0, "", "", "u"},
};

static const struct {
    char kind;
    int itemsize;
    char unit;
    dfb_type type;
    int size;
    const char *typestr, *result, *arrow;
} numpy_column_cases[] = {
    {'b', 1, 0, DFB_T_BOOL8, 1, "|b1", "|b1", ""},
    {'i', 1, 0, DFB_T_INT, 1, "|i1", "|i1", "c"},
    {'u', 2, 0, DFB_T_UINT, 2, "=u2", "=u2", "S"},
    {'i', 8, 0, DFB_T_INT, 8, "=i8", "=i8", "l"},
    {'f', 2, 0, DFB_T_FLOAT, 2, "=f2", "=f2", "e"},
    {'f', 8, 0, DFB_T_FLOAT, 8, "=f8", "=f8", "g"},
    {'M', 8, 'n', DFB_T_TIMESTAMP, 8, "=M8[ns]", "=M8[ns]", "tsn:"},
    {'m', 8, 's', DFB_T_DURATION, 8, "=m8[s]", "=m8[s]", "tDs"},
    {'M', 8, 'u', DFB_T_TIMESTAMP, 8, "=M8[us]", "=M8[us]", "tsu:"},
    {'m', 8, 'm', DFB_T_DURATION, 8, "=m8[ms]", "=m8[ms]", "tDm"},
};
// clang-format on

/* Checks the table's lookups of `f` against the expected values. */
static void
check_columns(const dfb_format *f, int itemsize, const char *typestr,
              const char *result, const char *arrow)
{
    char buf[64];
    CHECK(dfb_format_itemsize(f) == itemsize);
    CHECK(dfb_format_numpy_typestr(f, buf, sizeof(buf)) ==
          (typestr[0] != '\0' ? 0 : -1));
    if (typestr[0] != '\0') {
        CHECK_STR(buf, typestr);
    }
    CHECK(dfb_format_result_typestr(f, buf, sizeof(buf)) ==
          (result[0] != '\0' ? 0 : -1));
    if (result[0] != '\0') {
        CHECK_STR(buf, result);
    }
    CHECK(dfb_format_to_arrow(f, buf, sizeof(buf)) ==
          (arrow[0] != '\0' ? 0 : -1));
    if (arrow[0] != '\0') {
        CHECK_STR(buf, arrow);
    }
}

/* Every row's columns give what the switches gave. */
static void
test_columns_as_switches(void)
{
    for (size_t i = 0; i < sizeof(column_cases) / sizeof(column_cases[0]);
         i++) {
        const column_case *c = &column_cases[i];
        dfb_format f, g;
        CHECK(dfb_type_parse_arrow(c->fmt, &f) == c->parsed);
        CHECK(dfb_format_parse_arrow(c->fmt, &g) == c->readable);
        CHECK(f.type == c->type && f.bits == c->bits);
        CHECK(f.unit == c->unit && f.byteorder == c->order);
        CHECK(f.precision == c->precision && f.scale == c->scale);
        CHECK(f.size == c->size && f.tz_len + f.ids_len == c->params_len);
        CHECK(dfb_arrow_format_type(c->fmt) == c->type);
        if (c->readable == 0) {
            CHECK(memcmp(&f, &g, sizeof(f)) == 0);
        }
        check_columns(&f, c->itemsize, c->typestr, c->result, c->arrow);
    }
    for (size_t i = 0;
         i < sizeof(ix_column_cases) / sizeof(ix_column_cases[0]); i++) {
        dfb_format f;
        CHECK(dfb_format_parse_interchange(
                  ix_column_cases[i].kind, ix_column_cases[i].bits,
                  ix_column_cases[i].fmt, ix_column_cases[i].endianness,
                  &f) == 0);
        CHECK(f.type == ix_column_cases[i].type);
        check_columns(&f, ix_column_cases[i].itemsize,
                      ix_column_cases[i].typestr, ix_column_cases[i].result,
                      ix_column_cases[i].arrow);
    }
    for (size_t i = 0;
         i < sizeof(numpy_column_cases) / sizeof(numpy_column_cases[0]); i++) {
        dfb_format f;
        CHECK(dfb_format_from_numpy(numpy_column_cases[i].kind,
                                    numpy_column_cases[i].itemsize,
                                    numpy_column_cases[i].unit, &f) == 0);
        CHECK(f.type == numpy_column_cases[i].type);
        check_columns(
            &f, numpy_column_cases[i].size, numpy_column_cases[i].typestr,
            numpy_column_cases[i].result, numpy_column_cases[i].arrow);
    }
}

/* The Arrow columns: every row with a format parses its own written
   format back; the predicates follow the rows. */
static void
test_arrow_columns(void)
{
    for (int t = DFB_T_INVALID + 1; t < DFB_T_COUNT; t++) {
        const dfb_type_row *r = dfb_type_row_of((dfb_type)t);
        CHECK((r->arrow == NULL) == (r->arrow_param == DFB_ARROW_NONE));
        CHECK((r->units != NULL) == (r->arrow_param == DFB_ARROW_UNIT ||
                                     r->arrow_param == DFB_ARROW_UNIT_TZ ||
                                     t == DFB_T_DATE32 || t == DFB_T_DATE64));
        CHECK(r->order == '=' || r->order == '|' || r->order == 0);
        CHECK((r->fields != NULL) == (r->conv == DFB_CONV_RECORDS));
        CHECK(dfb_type_row_of(r->ix_as)->arrow_param == DFB_ARROW_PLAIN ||
              r->ix_as == (dfb_type)t);
        CHECK(dfb_type_is_nested((dfb_type)t) ==
              (r->arrow != NULL && r->arrow[0] == '+' && t != DFB_T_RUN_END));
        if (r->arrow_param == DFB_ARROW_PLAIN) {
            dfb_format f;
            char back[16];
            CHECK(dfb_type_parse_arrow(r->arrow, &f) == 0 &&
                  f.type == (dfb_type)t);
            CHECK(dfb_format_to_arrow(&f, back, sizeof(back)) == 0);
            CHECK_STR(back, r->arrow);
            CHECK(dfb_type_arrow_format((dfb_type)t) == r->arrow);
        }
        else {
            CHECK(dfb_type_arrow_format((dfb_type)t) == NULL);
        }
    }
    CHECK(dfb_arrow_format_type(NULL) == DFB_T_INVALID);
    CHECK(strcmp(dfb_type_arrow_format(DFB_T_STRUCT), "+s") == 0);
    CHECK(strcmp(
              dfb_type_arrow_format(dfb_type_row_of(DFB_T_STRING_VIEW)->ix_as),
              "U") == 0);
    CHECK(dfb_type_has_validity(DFB_T_INT) &&
          dfb_type_has_validity(DFB_T_LIST));
    CHECK(!dfb_type_has_validity(DFB_T_NULL) &&
          !dfb_type_has_validity(DFB_T_DENSE_UNION) &&
          !dfb_type_has_validity(DFB_T_SPARSE_UNION) &&
          !dfb_type_has_validity(DFB_T_RUN_END));
    /* a unit NumPy has no name for, an impossible width */
    dfb_format g = {.type = DFB_T_TIMESTAMP, .bits = 64, .byteorder = '='};
    char buf[32];
    CHECK(dfb_format_numpy_typestr(&g, buf, sizeof(buf)) < 0);
    CHECK(dfb_format_to_arrow(&g, buf, sizeof(buf)) < 0);
    g = (dfb_format){.type = DFB_T_FIXED_LIST};
    CHECK(dfb_format_to_arrow(&g, buf, sizeof(buf)) < 0);
}

/* The result classes that are not a plain conversion of a type's values:
   run-end encoded columns decode through their runs, arrow.uuid's
   16-byte values are uuid.UUID objects, and which described columns hold
   codes. */
static void
test_result_classes(void)
{
    CHECK(dfb_type_row_of(DFB_T_RUN_END)->conv == DFB_CONV_RUNS);
    CHECK(strcmp(dfb_conv_class(DFB_CONV_RUNS), "kernel") == 0);
    CHECK(strcmp(dfb_conv_class(DFB_CONV_UUID), "objects") == 0);
    for (int t = 0; t < DFB_T_COUNT; t++) {
        /* only run-end encoded columns decode through runs; they and the
           dictionaries hold codes */
        CHECK(dfb_type_decodes_runs((dfb_type)t) == (t == DFB_T_RUN_END));
        CHECK(dfb_type_has_codes((dfb_type)t) ==
              (t == DFB_T_RUN_END || t == DFB_T_DICTIONARY));
        /* no type converts as uuid of its own: only an extension does */
        CHECK(dfb_type_row_of((dfb_type)t)->conv != DFB_CONV_UUID);
    }
    CHECK(!dfb_type_decodes_runs((dfb_type)-1));
    CHECK(!dfb_type_has_codes(DFB_T_COUNT));

    dfb_format f;
    CHECK(dfb_type_parse_arrow("w:16", &f) == 0);
    CHECK(dfb_extension_applies(DFB_EXT_UUID, &f));
    CHECK(dfb_format_conv(&f, DFB_EXT_UUID) == DFB_CONV_UUID);
    CHECK(dfb_format_conv(&f, DFB_EXT_NONE) == DFB_CONV_BYTES);
    CHECK(dfb_format_conv(&f, DFB_EXT_OTHER) == DFB_CONV_BYTES);
    CHECK(!dfb_extension_applies(DFB_EXT_BOOL8, &f));
    CHECK(!dfb_extension_applies(DFB_EXT_JSON, &f));
    /* arrow.uuid on another width or storage: its storage's bytes */
    CHECK(dfb_type_parse_arrow("w:8", &f) == 0);
    CHECK(!dfb_extension_applies(DFB_EXT_UUID, &f));
    CHECK(dfb_format_conv(&f, DFB_EXT_UUID) == DFB_CONV_BYTES);
    CHECK(dfb_type_parse_arrow("z", &f) == 0);
    CHECK(dfb_format_conv(&f, DFB_EXT_UUID) == DFB_CONV_BYTES);
    /* arrow.bool8 applies to int8 only, and gives no class of its own */
    CHECK(dfb_type_parse_arrow("c", &f) == 0);
    CHECK(dfb_extension_applies(DFB_EXT_BOOL8, &f));
    CHECK(dfb_format_conv(&f, DFB_EXT_BOOL8) == DFB_CONV_VIEW);
    CHECK(dfb_type_parse_arrow("s", &f) == 0);
    CHECK(!dfb_extension_applies(DFB_EXT_BOOL8, &f));
    /* names outside the table apply to nothing */
    CHECK(!dfb_extension_applies(DFB_EXT_NONE, &f));
    CHECK(!dfb_extension_applies(DFB_EXT_COUNT, &f));
    CHECK(dfb_type_parse_arrow("+r", &f) == 0);
    CHECK(dfb_format_conv(&f, DFB_EXT_NONE) == DFB_CONV_RUNS);
}

/* Appends one int32-length-prefixed string to metadata at `p`; returns the
   end. */
static char *
md_put(char *p, const char *s, int32_t len)
{
    memcpy(p, &len, 4);
    memcpy(p + 4, s, (size_t)len);
    return p + 4 + len;
}

/* Extension types by exact name, and the one metadata parser. */
static void
test_extensions(void)
{
    CHECK(dfb_extension_named("arrow.bool8", 11) == DFB_EXT_BOOL8);
    CHECK(dfb_extension_named("arrow.bool8\0", 12) == DFB_EXT_OTHER);
    CHECK(dfb_extension_named("arrow.bool", 10) == DFB_EXT_OTHER);
    CHECK(dfb_extension_named("arrow.fixed_shape_tensor\0x", 26) ==
          DFB_EXT_OTHER);
    CHECK(dfb_extension_named("arrow.fixed_shape_tensor", 24) ==
          DFB_EXT_FIXED_SHAPE_TENSOR);
    CHECK(dfb_extension_named("", 0) == DFB_EXT_OTHER);
    /* pandas' Period ordinals: named, converting as their int64 storage */
    CHECK(dfb_extension_named("pandas.period", 13) == DFB_EXT_PANDAS_PERIOD);
    const dfb_format i64 = {.type = DFB_T_INT, .bits = 64, .byteorder = '='};
    CHECK(!dfb_extension_applies(DFB_EXT_PANDAS_PERIOD, &i64));
    /* pandas' Intervals: named, a struct of the bounds as its storage */
    CHECK(dfb_extension_named("pandas.interval", 15) ==
          DFB_EXT_PANDAS_INTERVAL);
    CHECK(!dfb_extension_applies(DFB_EXT_PANDAS_INTERVAL, &i64));
    CHECK(dfb_format_conv(&i64, DFB_EXT_PANDAS_PERIOD) == DFB_CONV_VIEW);
    for (int x = DFB_EXT_OTHER + 1; x < DFB_EXT_COUNT; x++) {
        const char *n = dfb_extension_name((dfb_extension)x);
        CHECK(n != NULL &&
              dfb_extension_named(n, (int32_t)strlen(n)) == (dfb_extension)x);
    }
    CHECK(dfb_extension_name(DFB_EXT_NONE) == NULL);
    CHECK(dfb_extension_name(DFB_EXT_OTHER) == NULL);

    char md[256];
    int32_t n = 3;
    memcpy(md, &n, 4);
    char *p = md + 4;
    p = md_put(p, "pandas", 6);
    p = md_put(p, "{}", 2);
    p = md_put(p, "ARROW:extension:metadata", 24);
    p = md_put(p, "{\"shape\": [2]}", 14);
    p = md_put(p, "ARROW:extension:name", 20);
    md_put(p, "arrow.fixed_shape_tensor\0x", 26);
    const char *meta = NULL;
    int32_t meta_len = -1;
    CHECK(dfb_metadata_extension(md, &meta, &meta_len) == DFB_EXT_OTHER);
    CHECK(meta_len == 14 && meta != NULL && memcmp(meta, "{\"shape", 7) == 0);
    dfb_metadata_entry e;
    CHECK(dfb_metadata_find(md, "pandas", 6, &e) == 1 && e.value_len == 2);
    CHECK(dfb_metadata_find(md, "panda", 5, &e) == 0);
    CHECK(dfb_metadata_find(NULL, "pandas", 6, &e) == 0);
    CHECK(dfb_metadata_extension(NULL, &meta, &meta_len) == DFB_EXT_NONE);
    CHECK(meta == NULL && meta_len == 0);
    /* the name's entry with an exact length */
    p = md + 4 + 4 + 6 + 4 + 2 + 4 + 24 + 4 + 14 + 4 + 20;
    n = 24;
    memcpy(p, &n, 4);
    CHECK(dfb_metadata_extension(md, NULL, NULL) ==
          DFB_EXT_FIXED_SHAPE_TENSOR);
    /* malformed: a negative count, a negative length */
    n = -1;
    memcpy(md, &n, 4);
    CHECK(dfb_metadata_extension(md, NULL, NULL) == -1);
    CHECK(dfb_metadata_find(md, "pandas", 6, &e) == -1);
    n = 1;
    memcpy(md, &n, 4);
    n = -6;
    memcpy(md + 4, &n, 4);
    CHECK(dfb_metadata_find(md, "pandas", 6, &e) == -1);
    /* beyond the int32 bound: refused before reading past the first 8 bytes */
    n = INT32_MAX;
    memcpy(md + 4, &n, 4);
    CHECK(dfb_metadata_find(md, "pandas", 6, &e) == -1);
    memcpy(md, &n, 4);
    CHECK(dfb_metadata_find(md, "pandas", 6, &e) == -1);
    int32_t count;
    const char *pos;
    CHECK(dfb_metadata_first(md, &count, &pos) == -1);
    n = (DFB_METADATA_MAX_BYTES - 4) / 8;
    memcpy(md, &n, 4);
    CHECK(dfb_metadata_first(md, &count, &pos) == 0 && count == n);
}

int
main(void)
{
    test_rows();
    test_parse();
    test_parameters();
    test_malformed();
    test_interchange();
    test_columns_as_switches();
    test_arrow_columns();
    test_extensions();
    test_result_classes();
    printf("%d checks, %d failures\n", checks, failures);
    return failures != 0;
}
