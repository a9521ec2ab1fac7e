/* dfbuffer core: the type table and the one parser of Arrow format
 * strings, which reads the table's Arrow columns (see types.h).
 */
#include "types.h"
#include "mem.h"
#include "checked.h"

#include <string.h>

/* Short names of the buffer roles, for the table below. */
#define V DFB_BUF_VALIDITY
#define D DFB_BUF_DATA
#define O DFB_BUF_OFFSETS
#define Z DFB_BUF_SIZES
#define W DFB_BUF_VIEWS
#define X DFB_BUF_VARIADIC
#define T DFB_BUF_TYPE_IDS
#define U DFB_BUF_UNION_OFFSETS

// clang-format off
/* One row: type, name, logical, layout, then n_buffers, its three buffers
   (0: none), offset_bytes, n_children, item_bits, storage, result,
   ix_kind, conv, readable, then arrow, arrow_param, units, order, numpy,
   numpy_result, ix_as, fields (the fields of dfb_type_row, in order). */
#define ROW(t, name, logical, layout, nbuf, b0, b1, b2, ob, nch, bits, st, \
            res, ix, conv, rd, arrow, ap, units, order, np, npr, ixas,     \
            fields)                                                        \
    [DFB_T_##t] = {DFB_T_##t, name, logical, DFB_LAYOUT_##layout, nbuf,    \
                   {b0, b1, b2}, ob, nch, bits, st, res, ix,               \
                   DFB_CONV_##conv, rd, arrow, DFB_ARROW_##ap, units,      \
                   order, np, npr, DFB_T_##ixas, fields}

/* The NumPy record fields of the intervals (DFB_CONV_RECORDS). */
static const dfb_record_field months[] = {{"months", "=i4"}, {NULL, NULL}};
static const dfb_record_field days_ms[] = {
    {"days", "=i4"}, {"milliseconds", "=i4"}, {NULL, NULL}};
static const dfb_record_field months_days_ns[] = {
    {"months", "=i4"}, {"days", "=i4"}, {"nanoseconds", "=i8"}, {NULL, NULL}};

/* The table, indexed by dfb_type. */
static const dfb_type_row rows[DFB_T_COUNT] = {
    ROW(INVALID,         "invalid",                     "other",       NONE,
        0, 0, 0, 0, 0,  0,  -1,  0,   0,   -1, REFUSED,      0,
        NULL,   NONE,    NULL,   0,  0,  0,  INVALID, NULL),
    ROW(NULL,            "null",                        "null",        NONE,
        0, 0, 0, 0, 0,  0,  0,   0,   'O', -1, NONES,        1,
        "n",    PLAIN,   NULL,   '|', 0,  0,  NULL, NULL),
    ROW(BOOL_BIT,        "bit-packed bool",             "bool",        BITS,
        2, V, D, 0, 0,  0,  1,   'b', 'b', 20, UNPACK,       1,
        "b",    PLAIN,   NULL,   '|', 0,  0,  BOOL_BIT, NULL),
    ROW(BOOL8,           "bool",                        "bool",        FIXED,
        2, V, D, 0, 0,  0,  8,   'b', 'b', 20, VIEW,         1,
        NULL,   NONE,    NULL,   '|', 'b', 'b', BOOL8, NULL),
    ROW(INT,             "int",                         "int",         FIXED,
        2, V, D, 0, 0,  0,  0,   'i', 'i', 0,  VIEW,         1,
        "csil", WIDTH,   NULL,   '=', 'i', 'i', INT, NULL),
    ROW(UINT,            "uint",                        "uint",        FIXED,
        2, V, D, 0, 0,  0,  0,   'u', 'u', 1,  VIEW,         1,
        "CSIL", WIDTH,   NULL,   '=', 'u', 'u', UINT, NULL),
    ROW(FLOAT,           "float",                       "float",       FIXED,
        2, V, D, 0, 0,  0,  0,   'f', 'f', 2,  VIEW,         1,
        ".efg", WIDTH,   NULL,   '=', 'f', 'f', FLOAT, NULL),
    ROW(UTF8,            "utf8 string",                 "string",      OFFSETS,
        3, V, O, D, 4,  0,  -1,  0,   'O', 21, STRINGS,      1,
        "u",    PLAIN,   NULL,   '=', 0,  0,  UTF8, NULL),
    ROW(LARGE_UTF8,      "large utf8 string",           "string",      OFFSETS,
        3, V, O, D, 8,  0,  -1,  0,   'O', 21, STRINGS,      1,
        "U",    PLAIN,   NULL,   '=', 0,  0,  LARGE_UTF8, NULL),
    ROW(STRING_VIEW,     "string view",                 "string",      VIEWS,
        3, V, W, X, 16, 0,  128, 0,   'O', 21, STRING_VIEWS, 1,
        "vu",   PLAIN,   NULL,   '=', 0,  0,  LARGE_UTF8, NULL),
    ROW(BINARY,          "binary",                      "binary",      OFFSETS,
        3, V, O, D, 4,  0,  -1,  0,   'O', -1, BYTES,        1,
        "z",    PLAIN,   NULL,   '=', 0,  0,  BINARY, NULL),
    ROW(LARGE_BINARY,    "large binary",                "binary",      OFFSETS,
        3, V, O, D, 8,  0,  -1,  0,   'O', -1, BYTES,        1,
        "Z",    PLAIN,   NULL,   '=', 0,  0,  LARGE_BINARY, NULL),
    ROW(DATE32,          "date32",                      "date",        FIXED,
        2, V, D, 0, 0,  0,  32,  'i', 'M', 22, WIDEN,        1,
        "tdD",  PLAIN,   "D",    '=', 'i', 'M', DATE32, NULL),
    ROW(DATE64,          "date64",                      "date",        FIXED,
        2, V, D, 0, 0,  0,  64,  'i', 'M', 22, VIEW,         1,
        "tdm",  PLAIN,   "m",    '=', 'M', 'M', DATE64, NULL),
    ROW(TIMESTAMP,       "timestamp",                   "datetime",    FIXED,
        2, V, D, 0, 0,  0,  64,  'i', 'M', 22, VIEW,         1,
        "ts",   UNIT_TZ, "smun", '=', 'M', 'M', TIMESTAMP, NULL),
    ROW(DURATION,        "duration",                    "duration",    FIXED,
        2, V, D, 0, 0,  0,  64,  'i', 'm', 22, VIEW,         1,
        "tD",   UNIT,    "smun", '=', 'm', 'm', DURATION, NULL),
    ROW(DICTIONARY,      "categorical",                 "categorical", CODES,
        2, V, D, 0, 0,  0,  0,   'i', 0,   23, DECODE,       1,
        NULL,   NONE,    NULL,   '=', 'i', 'i', DICTIONARY, NULL),
    ROW(DECIMAL,         "decimal",                     "decimal",     FIXED,
        2, V, D, 0, 0,  0,  0,   'V', 'O', -1, DECIMAL,      1,
        "d:",   DECIMAL, NULL,   '=', 0,  0,  DECIMAL, NULL),
    ROW(FIXED_BINARY,    "fixed-size binary",           "binary",      FIXED,
        2, V, D, 0, 0,  0,  0,   'V', 'O', -1, BYTES,        1,
        "w:",   SIZE,    NULL,   '|', 0,  0,  FIXED_BINARY, NULL),
    ROW(BINARY_VIEW,     "binary view",                 "binary",      VIEWS,
        3, V, W, X, 16, 0,  128, 0,   'O', -1, BYTES,        1,
        "vz",   PLAIN,   NULL,   '=', 0,  0,  BINARY_VIEW, NULL),
    ROW(TIME32,          "time32",                      "time",        FIXED,
        2, V, D, 0, 0,  0,  32,  'i', 'O', 22, TIME,         1,
        "tt",   UNIT,    "sm",   '=', 0,  0,  TIME32, NULL),
    ROW(TIME64,          "time64",                      "time",        FIXED,
        2, V, D, 0, 0,  0,  64,  'i', 'O', 22, TIME,         1,
        "tt",   UNIT,    "un",   '=', 0,  0,  TIME64, NULL),
    ROW(INTERVAL_MONTHS, "interval (months)",           "interval",    FIXED,
        2, V, D, 0, 0,  0,  32,  'i', 'V', -1, RECORDS,      1,
        "tiM",  PLAIN,   NULL,   '=', 0,  0,  INTERVAL_MONTHS, months),
    ROW(INTERVAL_DT,     "interval (days, ms)",         "interval",    FIXED,
        2, V, D, 0, 0,  0,  64,  'V', 'V', -1, RECORDS,      1,
        "tiD",  PLAIN,   NULL,   '=', 0,  0,  INTERVAL_DT, days_ms),
    ROW(INTERVAL_MDN,    "interval (months, days, ns)", "interval",    FIXED,
        2, V, D, 0, 0,  0,  128, 'V', 'V', -1, RECORDS,      1,
        "tin",  PLAIN,   NULL,   '=', 0,  0,  INTERVAL_MDN, months_days_ns),
    ROW(LIST,            "list",                        "list",        LIST,
        2, V, O, 0, 4,  1,  -1,  0,   'O', -1, NESTED,       0,
        "+l",   PLAIN,   NULL,   '|', 0,  0,  LIST, NULL),
    ROW(LARGE_LIST,      "large list",                  "list",        LIST,
        2, V, O, 0, 8,  1,  -1,  0,   'O', -1, NESTED,       0,
        "+L",   PLAIN,   NULL,   '|', 0,  0,  LARGE_LIST, NULL),
    ROW(LIST_VIEW,       "list view",                   "list",        LIST_VIEW,
        3, V, O, Z, 4,  1,  -1,  0,   'O', -1, NESTED,       0,
        "+vl",  PLAIN,   NULL,   '|', 0,  0,  LIST_VIEW, NULL),
    ROW(LARGE_LIST_VIEW, "large list view",             "list",        LIST_VIEW,
        3, V, O, Z, 8,  1,  -1,  0,   'O', -1, NESTED,       0,
        "+vL",  PLAIN,   NULL,   '|', 0,  0,  LARGE_LIST_VIEW, NULL),
    ROW(FIXED_LIST,      "fixed-size list",             "list",        FIXED_LIST,
        1, V, 0, 0, 0,  1,  -1,  0,   'O', -1, NESTED_VIEW,  0,
        "+w:",  SIZE,    NULL,   '|', 0,  0,  FIXED_LIST, NULL),
    ROW(STRUCT,          "struct",                      "struct",      STRUCT,
        1, V, 0, 0, 0,  -1, -1,  0,   'O', -1, NESTED,       0,
        "+s",   PLAIN,   NULL,   '|', 0,  0,  STRUCT, NULL),
    ROW(MAP,             "map",                         "map",         LIST,
        2, V, O, 0, 4,  1,  -1,  0,   'O', -1, NESTED,       0,
        "+m",   PLAIN,   NULL,   '|', 0,  0,  MAP, NULL),
    ROW(DENSE_UNION,     "dense union",                 "union",       DENSE_UNION,
        2, T, U, 0, 4,  -1, -1,  0,   'O', -1, NESTED,       0,
        "+ud:", IDS,     NULL,   '|', 0,  0,  DENSE_UNION, NULL),
    ROW(SPARSE_UNION,    "sparse union",                "union",       SPARSE_UNION,
        1, T, 0, 0, 0,  -1, -1,  0,   'O', -1, NESTED,       0,
        "+us:", IDS,     NULL,   '|', 0,  0,  SPARSE_UNION, NULL),
    ROW(RUN_END,         "run-end encoded",             "run_end",     RUN_END,
        0, 0, 0, 0, 0,  2,  -1,  0,   0,   -1, RUNS,         1,
        "+r",   PLAIN,   NULL,   '|', 0,  0,  RUN_END, NULL),
    ROW(EXTENSION,       "extension",                   "other",       STORAGE,
        0, 0, 0, 0, 0,  0,  -1,  0,   0,   -1, REFUSED,      0,
        NULL,   NONE,    NULL,   0,  0,  0,  EXTENSION, NULL),
};
// clang-format on

#undef ROW
#undef V
#undef D
#undef O
#undef Z
#undef W
#undef X
#undef T
#undef U

const dfb_type_row *
dfb_type_row_of(dfb_type t)
{
    if ((int)t < 0 || (int)t >= DFB_T_COUNT) {
        return &rows[DFB_T_INVALID];
    }
    return &rows[t];
}

/* Reads a decimal integer in [lo, hi] at *p (an optional '-'), advancing
 *p past it.  Returns 0, or -1 (no digits, out of range). */
static int
parse_int(const char **p, int64_t lo, int64_t hi, int64_t *out)
{
    const char *s = *p;
    int neg = *s == '-';
    int64_t v = 0;
    s += neg;
    if (*s < '0' || *s > '9') {
        return -1;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (INT64_MAX - 9) / 10) {
            return -1;
        }
        v = v * 10 + (*s - '0');
    }
    v = neg ? -v : v;
    if (v < lo || v > hi) {
        return -1;
    }
    *out = v;
    *p = s;
    return 0;
}

/* Parses the "P,S[,B]" of a decimal into `out`.  Returns 0, or -1. */
static int
parse_decimal(const char *s, dfb_format *out)
{
    int64_t p, sc, bits = 128;
    if (parse_int(&s, 1, 76, &p) < 0 || *s++ != ',' ||
        parse_int(&s, -76, 76, &sc) < 0) {
        return -1;
    }
    if (*s == ',') {
        s++;
        if (parse_int(&s, 32, 256, &bits) < 0 ||
            (bits != 32 && bits != 64 && bits != 128 && bits != 256)) {
            return -1;
        }
    }
    if (*s != '\0') {
        return -1;
    }
    out->precision = (int)p;
    out->scale = (int)sc;
    out->bits = (int)bits;
    return 0;
}

/* Parses the union type ids of a union's format (comma-separated, 0 to
   127; none for a union without members) into `out`.  Returns 0, or
   -1. */
static int
parse_union(const char *s, dfb_format *out)
{
    const char *ids = s;
    while (*s != '\0') {
        int64_t id;
        if (parse_int(&s, 0, 127, &id) < 0 || (*s != ',' && *s != '\0') ||
            (*s == ',' && s[1] == '\0')) {
            return -1;
        }
        s += *s == ',';
    }
    out->ids = ids;
    out->ids_len = (size_t)(s - ids);
    return 0;
}

/* Returns 1 for a letter c (not 0) of `letters`. */
static int
one_of(char c, const char *letters)
{
    return c != '\0' && letters != NULL && strchr(letters, c) != NULL;
}

/* Parses `fmt` as a format of row `r` (its `arrow` letters, then its
   parameters), filling `out` (zeroed by the caller).  Returns 0, or -1
   when `fmt` is not one of the row's (`out` then possibly written to). */
static int
parse_row(const dfb_type_row *r, const char *fmt, dfb_format *out)
{
    int64_t size;
    const char *rest;
    switch (r->arrow_param) {
        case DFB_ARROW_PLAIN:
            if (strcmp(fmt, r->arrow) != 0) {
                return -1;
            }
            /* offsets and bytes: the width of one byte of text */
            out->bits = r->layout == DFB_LAYOUT_OFFSETS ? 8
                        : r->item_bits > 0              ? r->item_bits
                                                        : 0;
            out->unit = r->units != NULL ? r->units[0] : 0;
            return 0;
        case DFB_ARROW_WIDTH:
            if (fmt[0] == '.' || !one_of(fmt[0], r->arrow)) {
                return -1;
            }
            out->bits = 8 << (int)(strchr(r->arrow, fmt[0]) - r->arrow);
            return 0;
        default:
            break;
    }
    const size_t n = strlen(r->arrow);
    if (strncmp(fmt, r->arrow, n) != 0) {
        return -1;
    }
    rest = fmt + n;
    out->bits = r->item_bits > 0 ? r->item_bits : 0;
    switch (r->arrow_param) {
        case DFB_ARROW_UNIT:
            out->unit = rest[0];
            return one_of(rest[0], r->units) && rest[1] == '\0' ? 0 : -1;
        case DFB_ARROW_UNIT_TZ:
            if (!one_of(rest[0], r->units) || rest[1] != ':') {
                return -1;
            }
            out->unit = rest[0];
            if (rest[2] != '\0') {
                out->tz = rest + 2;
                out->tz_len = strlen(rest + 2);
            }
            return 0;
        case DFB_ARROW_DECIMAL:
            return parse_decimal(rest, out);
        case DFB_ARROW_SIZE:
            /* a fixed-size binary's size is its width (bits), a fixed-size
               list's a count */
            if (parse_int(&rest, 1,
                          r->item_bits == 0 ? INT32_MAX / 8 : INT32_MAX,
                          &size) < 0 ||
                *rest != '\0') {
                return -1;
            }
            out->size = size;
            out->bits = r->item_bits == 0 ? (int)(size * 8) : 0;
            return 0;
        case DFB_ARROW_IDS:
            return parse_union(rest, out);
        default:
            return -1;
    }
}

int
dfb_type_parse_arrow(const char *fmt, dfb_format *out)
{
    memset(out, 0, sizeof(*out));
    out->type = DFB_T_INVALID;
    if (fmt == NULL || fmt[0] == '\0') {
        return -1;
    }
    for (int t = DFB_T_INVALID + 1; t < DFB_T_COUNT; t++) {
        const dfb_type_row *r = &rows[t];
        /* only the rows whose letters could start `fmt` */
        if (r->arrow == NULL ||
            (r->arrow_param == DFB_ARROW_WIDTH ? fmt[1] != '\0'
                                               : r->arrow[0] != fmt[0])) {
            continue;
        }
        if (parse_row(r, fmt, out) == 0) {
            out->type = r->type;
            out->byteorder = r->order;
            return 0;
        }
        if (r->arrow_param != DFB_ARROW_PLAIN &&
            r->arrow_param != DFB_ARROW_WIDTH) {
            memset(out, 0, sizeof(*out)); /* a partial parse */
            out->type = DFB_T_INVALID;
        }
    }
    return -1;
}

dfb_type
dfb_arrow_format_type(const char *fmt)
{
    dfb_format f;
    return dfb_type_parse_arrow(fmt, &f) == 0 ? f.type : DFB_T_INVALID;
}

const char *
dfb_type_arrow_format(dfb_type t)
{
    const dfb_type_row *r = dfb_type_row_of(t);
    return r->arrow_param == DFB_ARROW_PLAIN ? r->arrow : NULL;
}

int
dfb_type_is_nested(dfb_type t)
{
    const dfb_conv c = dfb_type_row_of(t)->conv;
    return c == DFB_CONV_NESTED || c == DFB_CONV_NESTED_VIEW;
}

int
dfb_type_has_codes(dfb_type t)
{
    const dfb_conv c = dfb_type_row_of(t)->conv;
    return c == DFB_CONV_DECODE || c == DFB_CONV_RUNS;
}

int
dfb_type_decodes_runs(dfb_type t)
{
    return dfb_type_row_of(t)->conv == DFB_CONV_RUNS;
}

int
dfb_type_has_validity(dfb_type t)
{
    return dfb_type_row_of(t)->buffers[0] == DFB_BUF_VALIDITY;
}

int
dfb_type_item_bits(const dfb_format *f)
{
    const dfb_type_row *r = dfb_type_row_of(f->type);
    return r->item_bits == 0 ? f->bits : r->item_bits;
}

int
dfb_type_interchange(const dfb_format *f, int *kind, int *bits)
{
    const dfb_type_row *r = dfb_type_row_of(f->type);
    if (r->ix_kind < 0) {
        return -1;
    }
    *kind = r->ix_kind;
    /* strings: the protocol's width of one byte of text */
    *bits = r->ix_kind == 21 ? 8 : f->bits;
    return 0;
}

const char *
dfb_unit_name(char unit)
{
    switch (unit) {
        case 's':
            return "s";
        case 'm':
            return "ms";
        case 'u':
            return "us";
        case 'n':
            return "ns";
        case 'D':
            return "D";
        default:
            return NULL;
    }
}

const char *
dfb_conv_class(dfb_conv c)
{
    switch (c) {
        case DFB_CONV_VIEW:
            return "view";
        case DFB_CONV_WIDEN:
        case DFB_CONV_UNPACK:
        case DFB_CONV_DECODE:
        case DFB_CONV_RUNS:
            return "kernel";
        case DFB_CONV_RECORDS:
            return "view";
        case DFB_CONV_STRINGS:
        case DFB_CONV_STRING_VIEWS:
        case DFB_CONV_NONES:
        case DFB_CONV_BYTES:
        case DFB_CONV_DECIMAL:
        case DFB_CONV_TIME:
        case DFB_CONV_NESTED:
        case DFB_CONV_UUID:
            return "objects";
        case DFB_CONV_NESTED_VIEW:
            return "view";
        default:
            return "refused";
    }
}

const char *
dfb_layout_name(dfb_layout_kind k)
{
    static const char *const names[DFB_LAYOUT_COUNT] = {
        "none",         "bits",        "fixed",     "offsets",    "views",
        "codes",        "list",        "list_view", "fixed_list", "struct",
        "sparse_union", "dense_union", "run_end",   "storage",
    };
    return (int)k >= 0 && k < DFB_LAYOUT_COUNT ? names[k] : "none";
}

const char *
dfb_buffer_role_name(dfb_buffer_role r)
{
    static const char *const names[] = {
        "none",  "validity", "data",     "offsets",       "sizes",
        "views", "variadic", "type_ids", "union_offsets",
    };
    return (int)r >= 0 && (size_t)r < sizeof(names) / sizeof(names[0])
               ? names[r]
               : "none";
}

/* The extension types by exact name (Arrow's canonical ones, pandas'
   Period and Interval), indexed by dfb_extension:
   the storage type and width (bits) an extension applies to (DFB_T_INVALID:
   none, its values convert as their storage) and the result class it gives
   them (DFB_CONV_REFUSED: none of its own; arrow.bool8's values become the
   BOOL8 type instead, convert_extension.c). */
static const struct {
    const char *name;
    int32_t len;
    dfb_type storage;
    int bits;
    dfb_conv conv;
} extensions[DFB_EXT_COUNT] = {
#define EXT(x, name, storage, bits, conv)                                \
    [DFB_EXT_##x] = {name, (int32_t)(sizeof(name) - 1), DFB_T_##storage, \
                     bits, DFB_CONV_##conv}
    EXT(BOOL8, "arrow.bool8", INT, 8, REFUSED),
    EXT(UUID, "arrow.uuid", FIXED_BINARY, 128, UUID),
    EXT(JSON, "arrow.json", INVALID, 0, REFUSED),
    EXT(OPAQUE, "arrow.opaque", INVALID, 0, REFUSED),
    EXT(FIXED_SHAPE_TENSOR, "arrow.fixed_shape_tensor", INVALID, 0, REFUSED),
    EXT(VARIABLE_SHAPE_TENSOR, "arrow.variable_shape_tensor", INVALID, 0,
        REFUSED),
    EXT(PANDAS_PERIOD, "pandas.period", INVALID, 0, REFUSED),
    EXT(PANDAS_INTERVAL, "pandas.interval", INVALID, 0, REFUSED),
#undef EXT
};

/* Reads a native int32 at `p` (any alignment).  Cannot fail. */
static int32_t
read_i32(const char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

int
dfb_metadata_first(const char *md, int32_t *count, const char **pos)
{
    *count = 0;
    *pos = NULL;
    if (md == NULL) {
        return 0;
    }
    const int32_t n = read_i32(md);
    /* bounded: n <= INT32_MAX, so 8 * n fits int64 */
    if (n < 0 || 8 * (int64_t)n > DFB_METADATA_MAX_BYTES - 4) {
        return -1;
    }
    *count = n;
    *pos = md + 4;
    return 0;
}

/* Reads the int32 length at offset *at of `md` and moves *at past it and
   the bytes it counts.  Returns the length, or -1 when it is negative or
   ends past DFB_METADATA_MAX_BYTES (nothing past *at + 4 read). */
static int32_t
metadata_len(const char *md, int64_t *at)
{
    int64_t end;
    if (dfb_checked_add(*at, 4, &end) < 0 || end > DFB_METADATA_MAX_BYTES) {
        return -1;
    }
    const int32_t len = read_i32(md + *at);
    if (len < 0 || dfb_checked_add(end, len, &end) < 0 ||
        end > DFB_METADATA_MAX_BYTES) {
        return -1;
    }
    *at = end;
    return len;
}

int
dfb_metadata_next(const char *md, const char **pos, dfb_metadata_entry *e)
{
    int64_t at = *pos - md;
    e->key_len = metadata_len(md, &at);
    if (e->key_len < 0) {
        return -1;
    }
    e->key = md + at - e->key_len;
    e->value_len = metadata_len(md, &at);
    if (e->value_len < 0) {
        return -1;
    }
    e->value = md + at - e->value_len;
    *pos = md + at;
    return 0;
}

int
dfb_metadata_find(const char *md, const char *key, size_t key_len,
                  dfb_metadata_entry *e)
{
    int32_t n;
    const char *p;
    if (dfb_metadata_first(md, &n, &p) < 0) {
        return -1;
    }
    for (int32_t i = 0; i < n; i++) {
        if (dfb_metadata_next(md, &p, e) < 0) {
            return -1;
        }
        if ((size_t)e->key_len == key_len &&
            dfb_memcmp(e->key, key, key_len) == 0) {
            return 1;
        }
    }
    return 0;
}

dfb_extension
dfb_extension_named(const char *name, int32_t len)
{
    for (int x = DFB_EXT_OTHER + 1; x < DFB_EXT_COUNT; x++) {
        if (len == extensions[x].len &&
            dfb_memcmp(name, extensions[x].name, (size_t)len) == 0) {
            return (dfb_extension)x;
        }
    }
    return DFB_EXT_OTHER;
}

const char *
dfb_extension_name(dfb_extension x)
{
    if ((int)x <= DFB_EXT_OTHER || (int)x >= DFB_EXT_COUNT) {
        return NULL;
    }
    return extensions[x].name;
}

int
dfb_extension_applies(dfb_extension x, const dfb_format *f)
{
    if ((int)x <= DFB_EXT_OTHER || (int)x >= DFB_EXT_COUNT) {
        return 0;
    }
    return extensions[x].storage != DFB_T_INVALID &&
           f->type == extensions[x].storage && f->bits == extensions[x].bits;
}

dfb_conv
dfb_format_conv(const dfb_format *f, dfb_extension x)
{
    if (dfb_extension_applies(x, f) &&
        extensions[x].conv != DFB_CONV_REFUSED) {
        return extensions[x].conv;
    }
    return dfb_type_row_of(f->type)->conv;
}

#define EXT_NAME_KEY "ARROW:extension:name"
#define EXT_META_KEY "ARROW:extension:metadata"

int
dfb_metadata_extension(const char *md, const char **meta, int32_t *meta_len)
{
    dfb_metadata_entry e;
    if (meta != NULL) {
        *meta = NULL;
        *meta_len = 0;
    }
    int rc = dfb_metadata_find(md, EXT_NAME_KEY, sizeof(EXT_NAME_KEY) - 1, &e);
    if (rc <= 0) {
        return rc < 0 ? -1 : DFB_EXT_NONE;
    }
    const dfb_extension x = dfb_extension_named(e.value, e.value_len);
    if (meta != NULL) {
        rc = dfb_metadata_find(md, EXT_META_KEY, sizeof(EXT_META_KEY) - 1, &e);
        if (rc < 0) {
            return -1;
        }
        if (rc == 1) {
            *meta = e.value;
            *meta_len = e.value_len;
        }
    }
    return (int)x;
}
