/* dfbuffer: parsing and mapping of type descriptions (pure C: no Python).
 */
#include "format.h"
#include "types.h"

#include <stdio.h>
#include <string.h>

/* Returns 1 for a time unit letter s, m, u, n. */
static int
is_unit(char c)
{
    return c == 's' || c == 'm' || c == 'u' || c == 'n';
}

int
dfb_format_parse_arrow(const char *fmt, dfb_format *out)
{
    if (dfb_type_parse_arrow(fmt, out) == 0 &&
        dfb_type_row_of(out->type)->readable) {
        return 0;
    }
    memset(out, 0, sizeof(*out));
    out->type = DFB_T_INVALID;
    return -1;
}

int
dfb_format_parse_interchange(int kind, int bits, const char *fmt,
                             char endianness, dfb_format *out)
{
    dfb_format parsed;
    int have_fmt = fmt != NULL && dfb_format_parse_arrow(fmt, &parsed) == 0;
    memset(out, 0, sizeof(*out));
    if (endianness != '=' && endianness != '<' && endianness != '>' &&
        endianness != '|') {
        goto invalid;
    }
    switch (kind) {
        case 0: /* INT */
        case 1: /* UINT */
            if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
                goto invalid;
            }
            out->type = kind == 0 ? DFB_T_INT : DFB_T_UINT;
            out->bits = bits;
            break;
        case 2: /* FLOAT */
            if (bits != 16 && bits != 32 && bits != 64) {
                goto invalid;
            }
            out->type = DFB_T_FLOAT;
            out->bits = bits;
            break;
        case 20: /* BOOL: the width decides (pandas says 8 with "b" for
                    byte bools); a bitmask claiming 8 is the caller's
                    call, from describe_null */
            if (bits == 1) {
                out->type = DFB_T_BOOL_BIT;
                out->bits = 1;
            }
            else if (bits == 8) {
                out->type = DFB_T_BOOL8;
                out->bits = 8;
            }
            else {
                goto invalid;
            }
            break;
        case 21: /* STRING */
            if (have_fmt && (parsed.type == DFB_T_UTF8 ||
                             parsed.type == DFB_T_LARGE_UTF8 ||
                             parsed.type == DFB_T_STRING_VIEW)) {
                *out = parsed;
            }
            else if (have_fmt && parsed.type != DFB_T_UINT) {
                /* binary ('z', 'Z') or another type: not text */
                goto invalid;
            }
            else {
                /* no format, or the bytes' 'C' (a data buffer's dtype
                   reported for the column) */
                out->type = DFB_T_UTF8;
                out->bits = 8;
            }
            break;
        case 22: /* DATETIME */
            /* the types the table gives this kind: dates, timestamps,
               durations, times of day */
            if (!have_fmt || dfb_type_row_of(parsed.type)->ix_kind != 22) {
                goto invalid;
            }
            *out = parsed;
            break;
        case 23: /* CATEGORICAL: the codes' integer type */
            if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
                goto invalid;
            }
            out->type = DFB_T_DICTIONARY;
            out->bits = bits;
            break;
        default:
            goto invalid;
    }
    out->byteorder = endianness;
    return 0;
invalid:
    memset(out, 0, sizeof(*out));
    out->type = DFB_T_INVALID;
    return -1;
}

int
dfb_format_itemsize(const dfb_format *f)
{
    const dfb_type_row *r = dfb_type_row_of(f->type);
    if (r->layout != DFB_LAYOUT_FIXED && r->layout != DFB_LAYOUT_CODES) {
        return 0;
    }
    const int bits = dfb_type_item_bits(f);
    return bits > 0 ? bits / 8 : 0;
}

int
dfb_typestr_put(char *buf, size_t size, char order, char kind, int nbytes)
{
    if (nbytes < 1 || nbytes > 99 || size < (nbytes < 10 ? 4u : 5u)) {
        return -1;
    }
    int n = 0;
    buf[n++] = order;
    buf[n++] = kind;
    if (nbytes >= 10) {
        buf[n++] = (char)('0' + nbytes / 10);
    }
    buf[n++] = (char)('0' + nbytes % 10);
    buf[n] = '\0';
    return n;
}

/* Writes the NumPy type string of kind `kind` (a row's numpy or
   numpy_result column) of the values of `f` into buf: <order><kind><size>,
   "[unit]" after datetime64 / timedelta64 (8 bytes whatever the stored
   width).  Returns 0, or -1 for kind 0, a unit NumPy has no name for or a
   buffer too small. */
static int
put_typestr(const dfb_format *f, char kind, char *buf, size_t size)
{
    if (kind == 0) {
        return -1;
    }
    const int nbytes = dfb_format_itemsize(f);
    const char order = nbytes == 1           ? '|'
                       : f->byteorder == '>' ? '>'
                       : f->byteorder == '<' ? '<'
                                             : '=';
    if (kind != 'M' && kind != 'm') {
        return dfb_typestr_put(buf, size, order, kind, nbytes) > 0 ? 0 : -1;
    }
    const char *unit = dfb_unit_name(f->unit);
    if (unit == NULL) {
        return -1;
    }
    int n = snprintf(buf, size, "%c%c8[%s]", order, kind, unit);
    return (n > 0 && (size_t)n < size) ? 0 : -1;
}

int
dfb_format_numpy_typestr(const dfb_format *f, char *buf, size_t size)
{
    return put_typestr(f, dfb_type_row_of(f->type)->numpy, buf, size);
}

int
dfb_format_result_typestr(const dfb_format *f, char *buf, size_t size)
{
    return put_typestr(f, dfb_type_row_of(f->type)->numpy_result, buf, size);
}

int
dfb_format_from_numpy(char kind, int itemsize, char unit, dfb_format *out)
{
    memset(out, 0, sizeof(*out));
    out->byteorder = itemsize == 1 ? '|' : '=';
    out->bits = itemsize * 8;
    switch (kind) {
        case 'b':
            out->type = DFB_T_BOOL8;
            if (itemsize != 1) {
                goto invalid;
            }
            return 0;
        case 'i':
        case 'u':
            out->type = kind == 'i' ? DFB_T_INT : DFB_T_UINT;
            if (itemsize != 1 && itemsize != 2 && itemsize != 4 &&
                itemsize != 8) {
                goto invalid;
            }
            return 0;
        case 'f':
            out->type = DFB_T_FLOAT;
            if (itemsize != 2 && itemsize != 4 && itemsize != 8) {
                goto invalid;
            }
            return 0;
        case 'M':
        case 'm':
            out->type = kind == 'M' ? DFB_T_TIMESTAMP : DFB_T_DURATION;
            out->unit = unit;
            if (itemsize != 8 || !is_unit(unit)) {
                goto invalid;
            }
            return 0;
        default:
            break;
    }
invalid:
    memset(out, 0, sizeof(*out));
    out->type = DFB_T_INVALID;
    return -1;
}

int
dfb_format_to_arrow(const dfb_format *f, char *buf, size_t size)
{
    const dfb_type_row *r = dfb_type_row_of(f->type);
    const char *a = r->arrow;
    int n = -1;
    switch (r->arrow_param) {
        case DFB_ARROW_PLAIN:
            n = snprintf(buf, size, "%s", a);
            break;
        case DFB_ARROW_WIDTH: {
            /* the letter of 1 << k bytes */
            const int nbytes = f->bits / 8;
            int k = 0;
            while (k < 4 && (1 << k) != nbytes) {
                k++;
            }
            if (k == 4 || f->bits % 8 != 0 || a[k] == '.') {
                return -1;
            }
            n = snprintf(buf, size, "%c", a[k]);
            break;
        }
        case DFB_ARROW_UNIT:
        case DFB_ARROW_UNIT_TZ:
            if (!is_unit(f->unit) || strchr(r->units, f->unit) == NULL ||
                f->tz_len > (size_t)INT32_MAX) {
                return -1;
            }
            n = r->arrow_param == DFB_ARROW_UNIT
                    ? snprintf(buf, size, "%s%c", a, f->unit)
                    : snprintf(buf, size, "%s%c:%.*s", a, f->unit,
                               (int)f->tz_len, f->tz != NULL ? f->tz : "");
            break;
        case DFB_ARROW_DECIMAL:
            /* the bit width only when not the default 128 */
            n = f->bits == 128
                    ? snprintf(buf, size, "%s%d,%d", a, f->precision, f->scale)
                    : snprintf(buf, size, "%s%d,%d,%d", a, f->precision,
                               f->scale, f->bits);
            break;
        case DFB_ARROW_SIZE:
            if (f->size < 1) {
                return -1;
            }
            n = snprintf(buf, size, "%s%lld", a, (long long)f->size);
            break;
        case DFB_ARROW_IDS:
            if (f->ids_len > (size_t)INT32_MAX) {
                return -1;
            }
            n = snprintf(buf, size, "%s%.*s", a, (int)f->ids_len,
                         f->ids != NULL ? f->ids : "");
            break;
        default:
            return -1;
    }
    return (n > 0 && (size_t)n < size) ? 0 : -1;
}

/* The struct module's one-letter codes, indexed by letter: the kind and
   the size in native ('@') and in standard order (0: none). */
static const struct {
    char kind; /* 'b', 'i', 'u', 'f'; 0 for another letter */
    signed char native, standard;
} struct_codes[128] = {
    ['?'] = {'b', sizeof(_Bool), 1},
    ['b'] = {'i', 1, 1},
    ['B'] = {'u', 1, 1},
    ['h'] = {'i', sizeof(short), 2},
    ['H'] = {'u', sizeof(short), 2},
    ['i'] = {'i', sizeof(int), 4},
    ['I'] = {'u', sizeof(int), 4},
    ['l'] = {'i', sizeof(long), 4},
    ['L'] = {'u', sizeof(long), 4},
    ['q'] = {'i', 8, 8},
    ['Q'] = {'u', 8, 8},
    ['n'] = {'i', sizeof(size_t), 0},
    ['N'] = {'u', sizeof(size_t), 0},
    ['e'] = {'f', 2, 2},
    ['f'] = {'f', 4, 4},
    ['d'] = {'f', 8, 8},
};

int
dfb_struct_typestr(const char *fmt, char *buf, size_t bufsize)
{
    const char *f = fmt;
    char order = '@';
    if (*f == '@' || *f == '=' || *f == '<' || *f == '>' || *f == '!') {
        order = *f++;
    }
    const unsigned char c = (unsigned char)f[0];
    char kind = 0; /* 'b', 'i', 'u', 'f', 'c' */
    int size = 0;
    if (c == 'Z' && (f[1] == 'f' || f[1] == 'd')) {
        kind = 'c';
        size = f[1] == 'f' ? 8 : 16;
        f++;
    }
    else if (c < 128) {
        size =
            order == '@' ? struct_codes[c].native : struct_codes[c].standard;
        kind = size > 0 ? struct_codes[c].kind : 0;
    }
    if (kind == 0 || f[1] != '\0') {
        return -1;
    }
    char to = size == 1                        ? '|'
              : (order == '@' || order == '=') ? '='
              : order == '<'                   ? '<'
                                               : '>';
    return dfb_typestr_put(buf, bufsize, to, kind, size) > 0 ? size : -1;
}

/* 1 on a big-endian host. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DFB_HOST_BIG 1
#else
#define DFB_HOST_BIG 0
#endif

const char *
dfb_numpy_struct_format(char kind, char type, int64_t itemsize, char byteorder)
{
    /* NumPy's rule (PyArray_ISNBO): everything but the host's opposite
       order is native */
    const int native = byteorder != (DFB_HOST_BIG ? '<' : '>');
    if (kind == 'M' || kind == 'm') {
        return NULL;
    }
    if (kind == 'b') {
        return "?";
    }
    /* NumPy's type characters are the struct module's native codes. */
    static const char *const native_codes[128] = {
        ['b'] = "b",  ['B'] = "B",  ['h'] = "h", ['H'] = "H", ['i'] = "i",
        ['I'] = "I",  ['l'] = "l",  ['L'] = "L", ['q'] = "q", ['Q'] = "Q",
        ['e'] = "e",  ['f'] = "f",  ['d'] = "d", ['g'] = "g", ['F'] = "Zf",
        ['D'] = "Zd", ['G'] = "Zg",
    };
    const unsigned char t = (unsigned char)type;
    if (native && t < 128 && native_codes[t] != NULL) {
        return native_codes[t];
    }
    /* Non-native order (or an unusual type char): explicit byte order and
       standard sizes, by kind (i, u, f, c) and size (1, 2, 4, 8, 16). */
    static const char *const little[4][5] = {
        {"b", "<h", "<i", "<q", NULL},
        {"B", "<H", "<I", "<Q", NULL},
        {NULL, "<e", "<f", "<d", NULL},
        {NULL, NULL, NULL, "<Zf", "<Zd"},
    };
    static const char *const big[4][5] = {
        {"b", ">h", ">i", ">q", NULL},
        {"B", ">H", ">I", ">Q", NULL},
        {NULL, ">e", ">f", ">d", NULL},
        {NULL, NULL, NULL, ">Zf", ">Zd"},
    };
    const int row = kind == 'i'   ? 0
                    : kind == 'u' ? 1
                    : kind == 'f' ? 2
                    : kind == 'c' ? 3
                                  : -1;
    const int col = itemsize == 1    ? 0
                    : itemsize == 2  ? 1
                    : itemsize == 4  ? 2
                    : itemsize == 8  ? 3
                    : itemsize == 16 ? 4
                                     : -1;
    if (row < 0 || col < 0) {
        return NULL;
    }
    const int is_big = byteorder == '>' || (native && DFB_HOST_BIG);
    return is_big ? big[row][col] : little[row][col];
}
