/* dfbuffer core: the one reader of the integers in a producer's memory that
 * say where other memory is: offsets of variable-length layouts (strings,
 * binary, and the lists, maps and list views to come) and categorical codes
 * (and union offsets, which index a child the same way).
 *
 * String views (the other variable-length layout: length, buffer index
 * and offset in each 16-byte element) are read here too.
 *
 * The producer may change its memory at any time (another thread, a
 * producer that lies), so validating it once proves nothing about the next
 * read.  Every read here copies one value into a local (memcpy: any
 * alignment; byte-swapped when asked) and checks that local against the
 * bounds where it is used.  A reader is described once by its init
 * function, which checks that every index it will accept lies inside the
 * buffer; the element functions are inline (the loops stay as fast as raw
 * loads) and return DFB_EINVAL without a message (the caller names the
 * element in its own error).  No other file indexes a producer's offsets
 * or codes: tests/source/test_reader_sources.py greps for it.
 */
#ifndef DFBUFFER_CORE_READER_H
#define DFBUFFER_CORE_READER_H

#include "core.h"

#include <stdint.h>
#include <string.h>

/* Offsets into a buffer of `limit` units (bytes of string or binary data,
   elements of a list's child): int32 or int64, native or byte-swapped. */
typedef struct {
    const char *base; /* offset 0 of the reader (the element offset applied) */
    int64_t count;    /* offsets 0 .. count - 1 may be read */
    int64_t limit;    /* every span must lie in [0, limit] */
    int width;        /* 4 or 8 bytes */
    int swapped;      /* 1: stored in the non-native byte order */
} dfb_offsets;

/* Describes `count` offsets of `width` (4 or 8) bytes from element `first`
   of the `bufsize`-byte buffer `buf` (swapped: non-native byte order), the
   spans they give to lie in [0, limit].  Reads nothing.  Returns DFB_OK;
   DFB_EINVAL (message in err) when the offsets do not fit in the buffer or
   a bound is negative; DFB_ENOTSUP for another width. */
dfb_code
dfb_offsets_init(dfb_offsets *o, const void *buf, int64_t bufsize, int width,
                 int swapped, int64_t first, int64_t count, int64_t limit,
                 dfb_error *err);

/* Offset `i` (0 <= i < count, unchecked), read once.  Cannot fail. */
static inline int64_t
dfb_offsets_load(const dfb_offsets *o, int64_t i)
{
    if (o->width == 4) {
        uint32_t v;
        memcpy(&v, o->base + 4 * i, 4);
        return (int32_t)(o->swapped ? __builtin_bswap32(v) : v);
    }
    uint64_t v;
    memcpy(&v, o->base + 8 * i, 8);
    return (int64_t)(o->swapped ? __builtin_bswap64(v) : v);
}

/* 1 if 0 <= start <= end <= limit, else 0 (two unsigned compares: a
   negative start or end is a huge unsigned number). */
static inline int
dfb_span_ok(int64_t start, int64_t end, int64_t limit)
{
    return (uint64_t)start <= (uint64_t)end &&
           (uint64_t)end <= (uint64_t)limit;
}

/* Reads offset `i` once into *v.  Returns DFB_OK, or DFB_EINVAL when i is
   not in [0, count) or the value not in [0, limit] (*v then holds it, or
   -1 for a bad i). */
static inline dfb_code
dfb_offsets_get(const dfb_offsets *o, int64_t i, int64_t *v)
{
    if ((uint64_t)i >= (uint64_t)o->count) {
        *v = -1;
        return DFB_EINVAL;
    }
    *v = dfb_offsets_load(o, i);
    return (uint64_t)*v <= (uint64_t)o->limit ? DFB_OK : DFB_EINVAL;
}

/* Element `i`'s span [*start, *end): offsets i and i + 1, each read once.
   Returns DFB_OK with 0 <= *start <= *end <= limit; DFB_EINVAL otherwise
   (the values read are in *start and *end, -1 where i was out of range). */
static inline dfb_code
dfb_offsets_span(const dfb_offsets *o, int64_t i, int64_t *start, int64_t *end)
{
    if (i < 0 || i >= o->count - 1) {
        *start = *end = -1;
        return DFB_EINVAL;
    }
    *start = dfb_offsets_load(o, i);
    *end = dfb_offsets_load(o, i + 1);
    return dfb_span_ok(*start, *end, o->limit) ? DFB_OK : DFB_EINVAL;
}

/* The same for a loop over the elements in order: `start` is offset i as
   the previous call returned it in *end (or dfb_offsets_load(o, 0)), read
   once; only offset i + 1 is read.  Returns DFB_OK when
   0 <= start <= *end <= limit, else DFB_EINVAL (*end holds what was read,
   -1 for an i out of range).  A caller that skips an element (a null)
   still carries *end forward: the next call checks it. */
static inline dfb_code
dfb_offsets_next(const dfb_offsets *o, int64_t i, int64_t start, int64_t *end)
{
    if (i < 0 || i >= o->count - 1) {
        *end = -1;
        return DFB_EINVAL;
    }
    *end = dfb_offsets_load(o, i + 1);
    return dfb_span_ok(start, *end, o->limit) ? DFB_OK : DFB_EINVAL;
}

/* dfb_offsets_next for readers of native int32 offsets (width 4, not
   swapped: the common Arrow layout; the caller checked), without the tests
   of width and byte order.  Same returns. */
static inline dfb_code
dfb_offsets_next_i32(const dfb_offsets *o, int64_t i, int64_t start,
                     int64_t *end)
{
    if (i < 0 || i >= o->count - 1) {
        *end = -1;
        return DFB_EINVAL;
    }
    int32_t v;
    memcpy(&v, o->base + 4 * (i + 1), 4);
    *end = v;
    return dfb_span_ok(start, *end, o->limit) ? DFB_OK : DFB_EINVAL;
}

/* A list view's element `i`: [offsets[i], offsets[i] + sizes[i]), each
   read once (`sizes` has the width of `offsets`; its limit is unused).
   Returns DFB_OK with 0 <= *start <= *end <= offsets->limit, else
   DFB_EINVAL (-1 in both for an i out of either reader's range). */
static inline dfb_code
dfb_list_view_span(const dfb_offsets *offsets, const dfb_offsets *sizes,
                   int64_t i, int64_t *start, int64_t *end)
{
    if ((uint64_t)i >= (uint64_t)offsets->count ||
        (uint64_t)i >= (uint64_t)sizes->count) {
        *start = *end = -1;
        return DFB_EINVAL;
    }
    const int64_t s = dfb_offsets_load(offsets, i);
    const int64_t n = dfb_offsets_load(sizes, i);
    *start = s;
    if (n < 0 || s < 0 || n > INT64_MAX - s) {
        *end = -1;
        return DFB_EINVAL;
    }
    *end = s + n;
    return *end <= offsets->limit ? DFB_OK : DFB_EINVAL;
}

/* Reads the string view at `view` (Arrow's 16-byte "vu" / "vz" element,
   any alignment) once: its length into *len and its bytes into *bytes
   (inside the view for up to 12 bytes; else at the view's offset *off in
   data buffer *buf, both read and stored only then).  `bufs` and `sizes`:
   the `n_buffers` data buffers and their sizes, in memory the caller owns.
   Returns DFB_OK when the length is >= 0 and an out-of-line view lies
   inside its buffer, else DFB_EINVAL (*bytes unset; the values read in
   *len, *buf and *off). */
static inline dfb_code
dfb_string_view_read(const char *view, int64_t n_buffers,
                     const char *const *bufs, const int64_t *sizes,
                     const char **bytes, int32_t *len, int32_t *buf,
                     int32_t *off)
{
    int32_t n, b, o;
    memcpy(&n, view, 4);
    *len = n;
    if (n >= 0 && n <= 12) {
        *bytes = view + 4;
        return DFB_OK;
    }
    memcpy(&b, view + 8, 4);
    memcpy(&o, view + 12, 4);
    *buf = b;
    *off = o;
    if (n < 0 || b < 0 || b >= n_buffers || o < 0 ||
        (int64_t)o + n > sizes[b]) {
        return DFB_EINVAL;
    }
    *bytes = bufs[b] + o;
    return DFB_OK;
}

/* Integer codes into a table of `ncats` entries (categorical codes,
   dense-union offsets): 1, 2, 4 or 8 bytes, signed or not, native or
   byte-swapped; optionally one sentinel value that marks a null. */
typedef struct {
    const char *base; /* code 0 of the reader (the element offset applied) */
    int64_t count;    /* codes 0 .. count - 1 may be read */
    int64_t ncats;    /* a valid code is in [0, ncats) */
    int64_t sentinel; /* the null code, when has_sentinel */
    int width;        /* 1, 2, 4 or 8 bytes */
    int is_signed;    /* 1: two's complement */
    int swapped;      /* 1: stored in the non-native byte order */
    int has_sentinel; /* 1: `sentinel` marks a null */
} dfb_codes;

/* dfb_codes_get's code for a null (the sentinel). */
#define DFB_CODE_NULL (-1)

/* Describes `count` codes of `width` bytes (signed or not; swapped:
   non-native byte order) from element `first` of the `bufsize`-byte
   buffer `buf`, each valid in [0, ncats); no sentinel (dfb_codes_sentinel
   adds one).  Reads nothing.  Returns DFB_OK; DFB_EINVAL (message in err)
   when the codes do not fit in the buffer or a bound is negative;
   DFB_ENOTSUP for another width. */
dfb_code
dfb_codes_init(dfb_codes *c, const void *buf, int64_t bufsize, int width,
               int is_signed, int swapped, int64_t first, int64_t count,
               int64_t ncats, dfb_error *err);

/* Makes value `sentinel` (as the codes' integer type reads it) a null
   code.  Cannot fail. */
static inline void
dfb_codes_sentinel(dfb_codes *c, int64_t sentinel)
{
    c->sentinel = sentinel;
    c->has_sentinel = 1;
}

/* Code `i` (0 <= i < count, unchecked), read once and widened to int64 (an
   unsigned 64-bit code above INT64_MAX gives INT64_MIN: out of range
   either way).  Cannot fail. */
static inline int64_t
dfb_codes_load(const dfb_codes *c, int64_t i)
{
    const char *p = c->base + (int64_t)c->width * i;
    switch (c->width) {
        case 1: {
            uint8_t v;
            memcpy(&v, p, 1);
            return c->is_signed ? (int64_t)(int8_t)v : (int64_t)v;
        }
        case 2: {
            uint16_t v;
            memcpy(&v, p, 2);
            v = c->swapped ? (uint16_t)__builtin_bswap16(v) : v;
            return c->is_signed ? (int64_t)(int16_t)v : (int64_t)v;
        }
        case 4: {
            uint32_t v;
            memcpy(&v, p, 4);
            v = c->swapped ? __builtin_bswap32(v) : v;
            return c->is_signed ? (int64_t)(int32_t)v : (int64_t)v;
        }
        default: {
            uint64_t v;
            memcpy(&v, p, 8);
            v = c->swapped ? __builtin_bswap64(v) : v;
            return (!c->is_signed && v > (uint64_t)INT64_MAX) ? INT64_MIN
                                                              : (int64_t)v;
        }
    }
}

/* Reads code `i` once into *code.  Returns DFB_OK with *code in
   [0, ncats), or DFB_CODE_NULL when it is the sentinel; DFB_EINVAL
   otherwise (*code then holds the value read, or -1 for an i not in
   [0, count)). */
static inline dfb_code
dfb_codes_get(const dfb_codes *c, int64_t i, int64_t *code)
{
    if ((uint64_t)i >= (uint64_t)c->count) {
        *code = -1;
        return DFB_EINVAL;
    }
    const int64_t v = dfb_codes_load(c, i);
    if (c->has_sentinel && v == c->sentinel) {
        *code = DFB_CODE_NULL;
        return DFB_OK;
    }
    *code = v;
    return (uint64_t)v < (uint64_t)c->ncats ? DFB_OK : DFB_EINVAL;
}

/* The run ends of a run-end encoded array: `count` signed integers of 2,
   4 or 8 bytes (native order), run j covering logical rows
   [end[j - 1], end[j]) (end[-1] = 0); they must be positive and strictly
   increasing. */
typedef struct {
    const char *base; /* run end 0 (the child's offset applied) */
    int64_t count;    /* run ends 0 .. count - 1 may be read */
    int width;        /* 2, 4 or 8 bytes */
} dfb_run_ends;

/* Describes `count` run ends of `width` bytes from element `first` of the
   `bufsize`-byte buffer `buf`.  Reads nothing.  Returns DFB_OK; DFB_EINVAL
   (message in err) when they do not fit in the buffer; DFB_ENOTSUP for
   another width. */
dfb_code
dfb_run_ends_init(dfb_run_ends *r, const void *buf, int64_t bufsize, int width,
                  int64_t first, int64_t count, dfb_error *err);

/* Run end `j` (0 <= j < count, unchecked), read once.  Cannot fail. */
static inline int64_t
dfb_run_ends_load(const dfb_run_ends *r, int64_t j)
{
    const char *p = r->base + (int64_t)r->width * j;
    if (r->width == 2) {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    if (r->width == 4) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Writes to out[i] the run (physical index, in [0, count)) of logical row
   offset + i, for i in [0, length).  Each run end the walk uses is read
   once and checked where it is used (positive, increasing, and the runs
   reach row offset + length), so ends that change meanwhile cannot send
   an index out of [0, count).  Returns DFB_OK; DFB_EINVAL with a message
   for ends that break those rules or a negative offset / length. */
dfb_code
dfb_run_ends_decode(const dfb_run_ends *r, int64_t offset, int64_t length,
                    int64_t *out, dfb_error *err);

/* One run of rows [row_start, row_end) (relative to the first row asked
   for) that takes physical value `run`. */
typedef void (*dfb_run_fn)(void *ctx, int64_t run, int64_t row_start,
                           int64_t row_end);

/* dfb_run_ends_decode's walk, run by run: calls fn(ctx, j, a, b) for each
   run j (in [0, count)) covering rows [a, b) of [0, length), in order,
   the runs together covering every row.  Same reads, checks and returns as
   dfb_run_ends_decode (fn may have been called for the runs before an
   error). */
dfb_code
dfb_run_ends_walk(const dfb_run_ends *r, int64_t offset, int64_t length,
                  dfb_run_fn fn, void *ctx, dfb_error *err);

/* The first run whose end is above logical row `row`, by binary search
   over ends read once each (not trusted: a walk re-checks what it reads);
   0 for row 0 without a search, so that a walk from row 0 reads every
   end.  Returns it, or count when no end read is above `row`.  Cannot
   fail. */
int64_t
dfb_run_ends_first_after(const dfb_run_ends *r, int64_t row);

/* The values of a run-end encoded array for dfb_run_ends_fill: `count`
   fixed-width values of `itemsize` bytes in native order from `values`,
   and their validity bitmap (bit `valid_offset` for value 0) or NULL. */
typedef struct {
    const char *values;   /* value 0 (the values' offset applied) */
    const uint8_t *valid; /* validity bitmap, or NULL: all valid */
    int64_t valid_offset; /* the bit of value 0 */
    int64_t count;        /* values 0 .. count - 1 may be read */
    int64_t itemsize;     /* bytes of one value, > 0 */
} dfb_run_values;

/* Decodes logical rows [offset, offset + length) into out[0 .. length)
   (`length * itemsize` bytes, any contents): each row takes its run's
   value, a null value's rows are zero; when `bits` is not NULL (a zeroed
   bitmap of `length` bits) the rows of valid values get bit 1.  *nulls:
   the rows of null values.  The run ends are read once each, checked as in
   dfb_run_ends_walk, and every run must lie inside the values (src/core/
   run_fill.c).  Returns DFB_OK; DFB_EINVAL with a message otherwise (out
   then partly written). */
dfb_code
dfb_run_ends_fill(const dfb_run_ends *r, int64_t offset, int64_t length,
                  const dfb_run_values *v, char *out, uint8_t *bits,
                  int64_t *nulls, dfb_error *err);

#endif /* DFBUFFER_CORE_READER_H */
