/* dfbuffer: data type descriptions and their mappings (pure C, no Python).
 *
 * One parsed form, dfb_format, stands between the interchange protocol's
 * dtype tuples, Arrow C data interface format strings, DLPack's DLDataType
 * and NumPy type strings.
 */
#ifndef DFBUFFER_FORMAT_H
#define DFBUFFER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* The physical types dfbuffer understands. */
typedef enum {
    DFB_T_INVALID = 0,
    DFB_T_NULL,         /* Arrow "n" */
    DFB_T_BOOL_BIT,     /* bit-packed, LSB first ("b", width 1) */
    DFB_T_BOOL8,        /* one byte per value (width 8) */
    DFB_T_INT,          /* signed, bits 8..64 */
    DFB_T_UINT,         /* unsigned, bits 8..64 */
    DFB_T_FLOAT,        /* bits 16, 32, 64 */
    DFB_T_UTF8,         /* "u": int32 offsets + bytes */
    DFB_T_LARGE_UTF8,   /* "U": int64 offsets + bytes */
    DFB_T_STRING_VIEW,  /* "vu" */
    DFB_T_BINARY,       /* "z" */
    DFB_T_LARGE_BINARY, /* "Z" */
    DFB_T_DATE32,       /* "tdD": int32 days */
    DFB_T_DATE64,       /* "tdm": int64 milliseconds */
    DFB_T_TIMESTAMP,    /* "ts{s,m,u,n}:tz": int64 */
    DFB_T_DURATION,     /* "tD{s,m,u,n}": int64 */
    DFB_T_DICTIONARY,   /* interchange CATEGORICAL; index type in `index` */
    /* Rows of the type table (types.h) like the ones above; the nested
       ones are read from the Arrow tree: dfb_format_parse_arrow refuses
       the rows not marked readable, dfb_type_parse_arrow parses them. */
    DFB_T_DECIMAL,         /* "d:P,S[,B]" */
    DFB_T_FIXED_BINARY,    /* "w:N" */
    DFB_T_BINARY_VIEW,     /* "vz" */
    DFB_T_TIME32,          /* "tts", "ttm" */
    DFB_T_TIME64,          /* "ttu", "ttn" */
    DFB_T_INTERVAL_MONTHS, /* "tiM" */
    DFB_T_INTERVAL_DT,     /* "tiD": days, milliseconds */
    DFB_T_INTERVAL_MDN,    /* "tin": months, days, nanoseconds */
    DFB_T_LIST,            /* "+l" */
    DFB_T_LARGE_LIST,      /* "+L" */
    DFB_T_LIST_VIEW,       /* "+vl" */
    DFB_T_LARGE_LIST_VIEW, /* "+vL" */
    DFB_T_FIXED_LIST,      /* "+w:N" */
    DFB_T_STRUCT,          /* "+s" */
    DFB_T_MAP,             /* "+m" */
    DFB_T_DENSE_UNION,     /* "+ud:I,J,..." */
    DFB_T_SPARSE_UNION,    /* "+us:I,J,..." */
    DFB_T_RUN_END,         /* "+r" */
    DFB_T_EXTENSION,       /* ARROW:extension:name metadata on a storage
                              type (no format string of its own) */
    DFB_T_COUNT            /* the number of types: the table's size */
} dfb_type;

typedef struct {
    dfb_type type;
    int bits;       /* width of one value in bits (1 for BOOL_BIT) */
    char unit;      /* 's', 'm', 'u', 'n' for TIMESTAMP / DURATION; 'D'
                       or 'm' for dates; 0 otherwise */
    char byteorder; /* '=', '<', '>' or '|' */
    const char *tz; /* timezone (points into the parsed string), or NULL */
    size_t tz_len;
    int precision;   /* DECIMAL: digits; 0 otherwise */
    int scale;       /* DECIMAL: digits after the point (may be < 0) */
    int64_t size;    /* FIXED_BINARY: bytes; FIXED_LIST: values per list */
    const char *ids; /* unions: the type ids after "+ud:" / "+us:" (points
                        into the parsed string), or NULL */
    size_t ids_len;
} dfb_format;

/* Parses an Arrow C data interface format string of a type the readers
   read (dfb_type_parse_arrow, then the row's `readable`).  Returns 0 and
   fills `out`, or -1 when the string is not one dfbuffer supports
   (out->type is then DFB_T_INVALID).  `out->tz` points into `fmt`, which
   must outlive it. */
int
dfb_format_parse_arrow(const char *fmt, dfb_format *out);

/* THE parser of Arrow C data interface format strings: any string the
   type table (types.h) has a row for, from the rows' `arrow` letters and
   parameters ("l", "tsu:UTC", "d:10,2", "+w:3", "+ud:0,1", ...).  Returns
   0 and fills `out`, or -1 for a string outside the specification
   (out->type DFB_T_INVALID).  Pointers in `out` point into `fmt`, which
   must outlive them. */
int
dfb_type_parse_arrow(const char *fmt, dfb_format *out);

/* Parses an interchange dtype (kind, bit_width, format, endianness) given
   as C values.  Tolerates the producers' quirks (a bitmask claiming width
   8 with format "b"; the column's logical format on a data buffer).
   Returns 0, or -1 when unsupported. */
int
dfb_format_parse_interchange(int kind, int bits, const char *fmt,
                             char endianness, dfb_format *out);

/* Writes the NumPy type string ("<i8", "|b1", "<M8[us]", ...) of the
   values' physical storage into buf (size >= 16).  Returns 0, or -1 if the
   type has no fixed-width NumPy equivalent (strings, bit-packed bools). */
int
dfb_format_numpy_typestr(const dfb_format *f, char *buf, size_t size);

/* Writes the NumPy type string of the values a conversion to NumPy
   produces: dfb_format_numpy_typestr's, except DATE32, whose int32 days
   the converters widen to "M8[D]".  Returns 0, or -1 like
   dfb_format_numpy_typestr. */
int
dfb_format_result_typestr(const dfb_format *f, char *buf, size_t size);

/* Fills `out` from a NumPy dtype's kind letter ('b', 'i', 'u', 'f', 'M',
   'm'), item size in bytes and, for 'M' / 'm', its time unit letter ('s',
   'm', 'u', 'n'; 0 for any other unit), native byte order.  Returns 0, or
   -1 (out->type DFB_T_INVALID) when dfbuffer has no format for it. */
int
dfb_format_from_numpy(char kind, int itemsize, char unit, dfb_format *out);

/* Writes the Arrow C data interface format string of `f` ("l", "tsu:",
   "tDn", "d:10,2", "+w:3", ... with f's parameters) into buf, from the
   type table's `arrow` letters: the inverse of dfb_type_parse_arrow.
   Returns 0, or -1 for a type without an Arrow format string of its own
   (byte bools, dictionary, extension, invalid), parameters it cannot
   write or a buffer too small. */
int
dfb_format_to_arrow(const dfb_format *f, char *buf, size_t size);

/* Writes the NumPy type string of a struct-module format of one item
   ("<q", "d", "Zf", "?"; optional @ = < > ! prefix; native sizes for the
   C types without a prefix or with @) into buf (size >= 8).  Returns the
   item size in bytes, or -1 for any other format or a buffer too small. */
int
dfb_struct_typestr(const char *fmt, char *buf, size_t bufsize);

/* The struct-module format of one item of a NumPy dtype, the reverse of
   dfb_struct_typestr: `kind` the dtype's kind ('b', 'i', 'u', 'f', 'c',
   ...), `type` its type character (NumPy's type characters of native
   dtypes are the struct module's native codes: 'l', 'q', 'g', 'F', ...),
   `itemsize` its size, `byteorder` its byte-order character ('=', '|',
   '<', '>').  Native order gives the native code ("l", "Zd", "?"), the
   other order an explicit prefix with standard sizes ("<q", ">Zf"); bool
   is "?" whatever its size.
   Returns a static string, or NULL when the buffer protocol has no format
   for the dtype (datetime64 / timedelta64, other kinds or sizes). */
const char *
dfb_numpy_struct_format(char kind, char type, int64_t itemsize,
                        char byteorder);

/* Width in bytes of one stored value: the type table's item_bits / 8 for
   a fixed-width layout (0 for bit-packed, variable-width or nested). */
int
dfb_format_itemsize(const dfb_format *f);

/* Writes the plain type string <order><kind><nbytes> ("=i8", "|u1",
   "<c16") into buf without stdio (these strings are made on every
   conversion, and snprintf cost more than the rest of one).  nbytes is 1
   to 99.  Returns the string's length, or -1 (nothing written) for an
   nbytes out of range or a buffer too small. */
int
dfb_typestr_put(char *buf, size_t size, char order, char kind, int nbytes);

#endif /* DFBUFFER_FORMAT_H */
