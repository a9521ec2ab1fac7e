/* dfbuffer core: the type table (pure C, no Python).
 *
 * One row per dfb_type (format.h) says everything the readers and
 * converters need to know about the type without switching on it: its
 * Arrow buffer layout (which buffers, in which order, the width of its
 * offsets, its children), the width of one value, the NumPy kinds of the
 * stored and of the converted values, its interchange protocol dtype kind,
 * the name schema() reports and how it converts, its Arrow format string
 * (letters and parameters: the one parser, dfb_type_parse_arrow, and the one
 * writer, dfb_format_to_arrow, read it) and its NumPy type strings.  The
 * parameters of one
 * column's type (unit, time zone, precision and scale, fixed sizes, union
 * type ids) live in its parsed dfb_format.
 *
 * Types that dfbuffer does not read yet are rows too, with their layout and
 * DFB_CONV_REFUSED: reading one means giving it a kernel and its row a
 * conversion.
 */
#ifndef DFBUFFER_CORE_TYPES_H
#define DFBUFFER_CORE_TYPES_H

#include "format.h"

#include <stdint.h>

/* How the buffers of a type are laid out (one Arrow array node). */
typedef enum {
    DFB_LAYOUT_NONE = 0,     /* no buffers (null) */
    DFB_LAYOUT_BITS,         /* validity, bit-packed values */
    DFB_LAYOUT_FIXED,        /* validity, fixed-width values */
    DFB_LAYOUT_OFFSETS,      /* validity, offsets, bytes */
    DFB_LAYOUT_VIEWS,        /* validity, 16-byte views, variadic data
                                buffers, their sizes */
    DFB_LAYOUT_CODES,        /* validity, integer codes; a dictionary */
    DFB_LAYOUT_LIST,         /* validity, offsets; one child */
    DFB_LAYOUT_LIST_VIEW,    /* validity, offsets, sizes; one child */
    DFB_LAYOUT_FIXED_LIST,   /* validity; one child of size values each */
    DFB_LAYOUT_STRUCT,       /* validity; one child per field */
    DFB_LAYOUT_SPARSE_UNION, /* type ids; one child per member */
    DFB_LAYOUT_DENSE_UNION,  /* type ids, offsets; one child per member */
    DFB_LAYOUT_RUN_END,      /* no buffers; children run ends, values */
    DFB_LAYOUT_STORAGE,      /* an extension: its storage type's */
    DFB_LAYOUT_COUNT
} dfb_layout_kind;

/* What one buffer of a layout holds. */
typedef enum {
    DFB_BUF_NONE = 0,
    DFB_BUF_VALIDITY,     /* one bit per value, 1 = valid */
    DFB_BUF_DATA,         /* the values (or codes, or bytes) */
    DFB_BUF_OFFSETS,      /* offset_bytes-wide offsets */
    DFB_BUF_SIZES,        /* offset_bytes-wide sizes (list views) */
    DFB_BUF_VIEWS,        /* 16-byte views */
    DFB_BUF_VARIADIC,     /* variadic data buffers, then their sizes */
    DFB_BUF_TYPE_IDS,     /* int8 union type ids */
    DFB_BUF_UNION_OFFSETS /* int32 offsets into the members */
} dfb_buffer_role;

/* How a column of the type converts to NumPy. */
typedef enum {
    DFB_CONV_REFUSED = 0,  /* not yet: NotImplementedError */
    DFB_CONV_VIEW,         /* zero-copy view of the values */
    DFB_CONV_WIDEN,        /* C kernel: int32 days to datetime64[D] */
    DFB_CONV_UNPACK,       /* C kernel: bits to one bool byte each */
    DFB_CONV_DECODE,       /* C kernel (objects for object categories):
                              codes through their categories */
    DFB_CONV_STRINGS,      /* objects: str from offsets + bytes */
    DFB_CONV_STRING_VIEWS, /* objects: str from views */
    DFB_CONV_NONES,        /* objects: None for every value */
    DFB_CONV_NESTED,       /* objects: the nested converter (lists, structs,
                              maps, unions), from the Arrow tree */
    DFB_CONV_NESTED_VIEW,  /* zero-copy: a fixed-size list reshaped */
    DFB_CONV_BYTES,        /* objects: bytes from offsets, views or fixed
                              widths (convert_binary.c) */
    DFB_CONV_DECIMAL,      /* objects: decimal.Decimal; float64 by option
                              (convert_decimal.c) */
    DFB_CONV_TIME,         /* objects: datetime.time (convert_temporal.c) */
    DFB_CONV_RECORDS,      /* zero-copy view as NumPy records (intervals,
                              convert_temporal.c) */
    DFB_CONV_RUNS,         /* C kernel (objects for object values): run-end
                              encoded, described as the run of each row
                              (int64 codes in `index`) into its values
                              child, gathered as DECODE's codes are; always
                              decoded, also under categorical="codes" */
    DFB_CONV_UUID          /* objects: uuid.UUID from 16-byte values
                              (convert_uuid.c); an extension's result class
                              (arrow.uuid), see dfb_format_conv */
} dfb_conv;

/* What follows a row's `arrow` letters in its Arrow format string. */
typedef enum {
    DFB_ARROW_NONE = 0, /* no format string of its own (arrow is NULL) */
    DFB_ARROW_PLAIN,    /* arrow is the whole format string */
    DFB_ARROW_WIDTH,    /* one letter: arrow[k] for 1 << k bytes ('.': none) */
    DFB_ARROW_UNIT,     /* arrow, then a unit letter of `units` */
    DFB_ARROW_UNIT_TZ,  /* arrow, a unit letter of `units`, ':', a time zone
                           (may be empty) */
    DFB_ARROW_DECIMAL,  /* arrow, then "P,S" or "P,S,B" */
    DFB_ARROW_SIZE,     /* arrow, then a size N >= 1 */
    DFB_ARROW_IDS       /* arrow, then union type ids "I,J,..." (maybe none) */
} dfb_arrow_param;

/* One field of a NumPy record result (DFB_CONV_RECORDS). */
typedef struct {
    const char *name;    /* NULL ends a row's list */
    const char *typestr; /* "=i4", "=i8" */
} dfb_record_field;

/* One row of the table. */
typedef struct {
    dfb_type type;
    const char *name;    /* in messages ("utf8 string", "timestamp") */
    const char *logical; /* schema()'s type ("string", "datetime") */
    dfb_layout_kind layout;
    int8_t n_buffers; /* Arrow buffers, validity included (views: at
                         least this many) */
    dfb_buffer_role buffers[3];
    int8_t offset_bytes; /* width of one offset, size or view; 0 */
    int8_t n_children;   /* -1: one per field or member */
    int16_t item_bits;   /* bits of one value; 0: the format's bits (its
                            parameters); -1: variable width */
    char storage;        /* NumPy kind of the stored values ('b', 'i', 'u',
                            'f', 'V'), 0 when they are not one array */
    char result;         /* NumPy kind of the converted values ('b', 'i',
                            'u', 'f', 'M', 'm', 'O', 'V'); 0: the
                            categories' (dictionary) */
    int8_t ix_kind;      /* interchange DtypeKind (0 INT ... 23
                            CATEGORICAL), -1 when the protocol has none */
    dfb_conv conv;
    uint8_t readable;  /* 1: dfb_format_parse_arrow accepts it and the
                          importers check its buffers */
    const char *arrow; /* Arrow format letters (see arrow_param), or NULL */
    dfb_arrow_param arrow_param;
    const char *units; /* time units: a plain format's one (dates: "D",
                          "m"), or the letters a unit parameter takes;
                          NULL */
    char order;        /* byte order of a parsed format ('=', '|') */
    char numpy;        /* NumPy kind of the storage typestr ('b', 'i', 'u',
                          'f', 'M', 'm'; "M8[unit]"), 0: none */
    char numpy_result; /* NumPy kind of the conversion result's typestr
                          (DATE32: 'M', its int32 days widened), 0: none */
    dfb_type ix_as;    /* the type whose Arrow format the interchange
                          protocol reports (string views: large utf8,
                          decoded) */
    const dfb_record_field *fields; /* RECORDS: the NumPy record's fields;
                                       NULL otherwise */
} dfb_type_row;

/* Returns the row of type `t` (the DFB_T_INVALID row for a value out of
   range).  Cannot fail. */
const dfb_type_row *
dfb_type_row_of(dfb_type t);

/* The type of Arrow format string `fmt` (dfb_type_parse_arrow's), or
   DFB_T_INVALID for NULL or a string outside the specification.  Cannot
   fail. */
dfb_type
dfb_arrow_format_type(const char *fmt);

/* The Arrow format string of type `t` when it takes no parameters ("+s",
   "U", "vu"), or NULL.  Cannot fail. */
const char *
dfb_type_arrow_format(dfb_type t);

/* 1 if columns of type `t` are read by the nested converter from the Arrow
   tree (lists, list views, fixed-size lists, structs, maps, unions; not
   run-end encoded), else 0.  Cannot fail. */
int
dfb_type_is_nested(dfb_type t);

/* 1 if a described column of type `t` holds integer codes (their type in
   its `index`) into a column of values (its `categories`): dictionaries,
   and run-end encoded columns (codes: the run of each row), else 0.
   Cannot fail. */
int
dfb_type_has_codes(dfb_type t);

/* 1 if columns of type `t` are run-end encoded values decoded through the
   run of each row (DFB_CONV_RUNS): their codes are no categorical's, they
   are always decoded, else 0.  Cannot fail. */
int
dfb_type_decodes_runs(dfb_type t);

/* 1 if the Arrow layout of type `t` begins with a validity bitmap (not the
   null type, unions, run-end encoded or extension arrays), else 0.  Cannot
   fail. */
int
dfb_type_has_validity(dfb_type t);

/* Bits of one stored value of `f` (the row's item_bits, or the format's
   when the row leaves it to the parameters); -1 for variable-width types.
   Cannot fail. */
int
dfb_type_item_bits(const dfb_format *f);

/* Fills the interchange protocol's logical (kind, bit_width) of `f`.
   Returns 0, or -1 when the protocol has no dtype for the type. */
int
dfb_type_interchange(const dfb_format *f, int *kind, int *bits);

/* The NumPy name of time unit letter `unit` ("s", "ms", "us", "ns", "D"),
   or NULL for 0 / another letter.  Cannot fail. */
const char *
dfb_unit_name(char unit);

/* "view", "kernel", "objects" or "refused": the class of conversion `c`.
   Cannot fail. */
const char *
dfb_conv_class(dfb_conv c);

/* Short names of a layout ("fixed", "offsets", ...) and of a buffer role
   ("validity", "data", ...), for descriptions.  Cannot fail. */
const char *
dfb_layout_name(dfb_layout_kind k);
const char *
dfb_buffer_role_name(dfb_buffer_role r);

/* Arrow's canonical extension types, pandas' Period ordinals and Intervals,
   identified by their exact ARROW:extension:name (length included: a name with
   an embedded NUL is another name).  The table in types.c is the only place
   that compares extension names; its rows also say which storage an extension
   applies to and the result class it gives those values (dfb_format_conv). */
typedef enum {
    DFB_EXT_NONE = 0,              /* no ARROW:extension:name */
    DFB_EXT_OTHER,                 /* a name not in the table: its storage */
    DFB_EXT_BOOL8,                 /* arrow.bool8: int8 storage, bool values */
    DFB_EXT_UUID,                  /* arrow.uuid: 16-byte fixed binary */
    DFB_EXT_JSON,                  /* arrow.json: its string storage */
    DFB_EXT_OPAQUE,                /* arrow.opaque: its storage */
    DFB_EXT_FIXED_SHAPE_TENSOR,    /* arrow.fixed_shape_tensor: +w:N */
    DFB_EXT_VARIABLE_SHAPE_TENSOR, /* arrow.variable_shape_tensor: its
                                      storage (a struct) */
    DFB_EXT_PANDAS_PERIOD,         /* pandas.period: int64 Period ordinals,
                                      the frequency in its metadata (the
                                      readers make pandas.Period objects
                                      of them unless period="ordinal") */
    DFB_EXT_PANDAS_INTERVAL,       /* pandas.interval: a struct of the
                                      bounds (left, right), the closed
                                      side in its metadata (the readers
                                      make pandas.Interval objects) */
    DFB_EXT_COUNT
} dfb_extension;

/* One key / value entry of Arrow schema metadata. */
typedef struct {
    const char *key, *value;
    int32_t key_len, value_len;
} dfb_metadata_entry;

/* The most bytes Arrow schema metadata may take: its lengths are int32,
   and the C data interface carries no size of the whole, so a count or a
   length beyond what fits is refused before anything is read past it
   (an entry takes at least 8 bytes, so at most (max - 4) / 8 entries). */
#define DFB_METADATA_MAX_BYTES INT32_MAX

/* The one parser of Arrow schema metadata (the C data interface's
   encoding: a native int32 count, then per entry an int32 length and the
   bytes of the key, an int32 length and the bytes of the value).
   dfb_metadata_first reads the count of `md` (NULL: no entries) into
   *count and sets *pos to the first entry; dfb_metadata_next reads the
   entry of `md` at *pos into *e and moves *pos past it.  Both return 0, or
   -1 for malformed metadata: a negative count or length, or one that
   takes the metadata past DFB_METADATA_MAX_BYTES (checked before the
   bytes it claims are read).  A count larger than the entries held cannot
   be told from the bytes that follow: nothing gives the metadata's
   size. */
int
dfb_metadata_first(const char *md, int32_t *count, const char **pos);
int
dfb_metadata_next(const char *md, const char **pos, dfb_metadata_entry *e);

/* Finds the entry whose key is the `key_len` bytes at `key` (exact
   length) in metadata `md`.  Returns 1 with *e set, 0 when absent, or -1
   for malformed metadata. */
int
dfb_metadata_find(const char *md, const char *key, size_t key_len,
                  dfb_metadata_entry *e);

/* The extension type named by the `len` bytes at `name` (exact length):
   a table row's, or DFB_EXT_OTHER.  Cannot fail. */
dfb_extension
dfb_extension_named(const char *name, int32_t len);

/* The canonical name of extension `x` ("arrow.bool8", ...), or NULL for
   DFB_EXT_NONE / DFB_EXT_OTHER.  Cannot fail. */
const char *
dfb_extension_name(dfb_extension x);

/* 1 if extension `x` applies to values of format `f`: its table row names
   a storage type and width and `f` has them (arrow.bool8: 8-bit int;
   arrow.uuid: 16-byte fixed-size binary), else 0 (the other extensions:
   their values convert as their storage type).  Cannot fail. */
int
dfb_extension_applies(dfb_extension x, const dfb_format *f);

/* How values of format `f` marked with extension `x` convert: the result
   class the extension's table row gives when it applies to `f`
   (arrow.uuid: DFB_CONV_UUID), else the type row's conv.  Cannot fail. */
dfb_conv
dfb_format_conv(const dfb_format *f, dfb_extension x);

/* The extension type of a schema with metadata `md`: DFB_EXT_NONE without
   ARROW:extension:name.  Sets *meta / *meta_len to its
   ARROW:extension:metadata (NULL / 0 when absent) when `meta` is not
   NULL.  Returns -1 for malformed metadata.  Cannot fail otherwise. */
int
dfb_metadata_extension(const char *md, const char **meta, int32_t *meta_len);

#endif /* DFBUFFER_CORE_TYPES_H */
