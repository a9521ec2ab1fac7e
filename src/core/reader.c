/* dfbuffer core: the checked readers of offsets and codes (see reader.h). */
#include "reader.h"

/* Checks that `count` items of `width` bytes from item `first` fit in the
   `bufsize`-byte buffer `buf` (NULL only when nothing is read) and stores
   their first byte in *base.  `what` names them in the message.  Returns
   DFB_OK or DFB_EINVAL. */
static dfb_code
items_in_buffer(const void *buf, int64_t bufsize, int width, int64_t first,
                int64_t count, const char *what, const char **base,
                dfb_error *err)
{
    if (first < 0 || count < 0 || bufsize < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "%s: negative position (%lld), count (%lld) or "
                             "buffer size (%lld)",
                             what, (long long)first, (long long)count,
                             (long long)bufsize);
    }
    /* first + count items, in bytes, without overflow */
    if (first > INT64_MAX / width - count ||
        (first + count) * width > bufsize) {
        return dfb_error_set(err, DFB_EINVAL,
                             "%s: %lld of %d bytes from %lld do not fit in a "
                             "%lld-byte buffer",
                             what, (long long)count, width, (long long)first,
                             (long long)bufsize);
    }
    if (buf == NULL && count > 0) {
        return dfb_error_set(err, DFB_EINVAL, "%s: no buffer", what);
    }
    *base = buf == NULL ? NULL : (const char *)buf + first * width;
    return DFB_OK;
}

dfb_code
dfb_offsets_init(dfb_offsets *o, const void *buf, int64_t bufsize, int width,
                 int swapped, int64_t first, int64_t count, int64_t limit,
                 dfb_error *err)
{
    o->base = NULL;
    o->count = 0;
    o->limit = 0;
    o->width = 4;
    o->swapped = 0;
    if (width != 4 && width != 8) {
        return dfb_error_set(err, DFB_ENOTSUP,
                             "offsets of %d bytes are not supported", width);
    }
    if (limit < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "offsets into a buffer of negative size %lld",
                             (long long)limit);
    }
    DFB_RETURN_NOT_OK(items_in_buffer(buf, bufsize, width, first, count,
                                      "offsets", &o->base, err));
    o->count = count;
    o->limit = limit;
    o->width = width;
    o->swapped = swapped != 0;
    return DFB_OK;
}

dfb_code
dfb_codes_init(dfb_codes *c, const void *buf, int64_t bufsize, int width,
               int is_signed, int swapped, int64_t first, int64_t count,
               int64_t ncats, dfb_error *err)
{
    c->base = NULL;
    c->count = 0;
    c->ncats = 0;
    c->sentinel = 0;
    c->width = 1;
    c->is_signed = 0;
    c->swapped = 0;
    c->has_sentinel = 0;
    if (width != 1 && width != 2 && width != 4 && width != 8) {
        return dfb_error_set(err, DFB_ENOTSUP,
                             "codes of %d bytes are not supported", width);
    }
    if (ncats < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "codes into a negative number (%lld) of "
                             "categories",
                             (long long)ncats);
    }
    DFB_RETURN_NOT_OK(items_in_buffer(buf, bufsize, width, first, count,
                                      "codes", &c->base, err));
    c->count = count;
    c->ncats = ncats;
    c->width = width;
    c->is_signed = is_signed != 0;
    c->swapped = swapped != 0;
    return DFB_OK;
}

dfb_code
dfb_run_ends_init(dfb_run_ends *r, const void *buf, int64_t bufsize, int width,
                  int64_t first, int64_t count, dfb_error *err)
{
    r->base = NULL;
    r->count = 0;
    r->width = 2;
    if (width != 2 && width != 4 && width != 8) {
        return dfb_error_set(err, DFB_ENOTSUP,
                             "run ends of %d bytes are not supported", width);
    }
    DFB_RETURN_NOT_OK(items_in_buffer(buf, bufsize, width, first, count,
                                      "run ends", &r->base, err));
    r->count = count;
    r->width = width;
    return DFB_OK;
}

int64_t
dfb_run_ends_first_after(const dfb_run_ends *r, int64_t row)
{
    if (row <= 0) {
        /* row 0 is run 0's, whatever the ends after it say: a search
           could step over ends that do not increase and start the walk
           past them, which then never reads them */
        return 0;
    }
    int64_t lo = 0, hi = r->count;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (dfb_run_ends_load(r, mid) > row) {
            hi = mid;
        }
        else {
            lo = mid + 1;
        }
    }
    return lo;
}

/* dfb_run_ends_decode's callback: writes the run into the int64 rows. */
static void
put_run(void *ctx, int64_t run, int64_t row_start, int64_t row_end)
{
    int64_t *out = ctx;
    for (int64_t i = row_start; i < row_end; i++) {
        out[i] = run;
    }
}

dfb_code
dfb_run_ends_decode(const dfb_run_ends *r, int64_t offset, int64_t length,
                    int64_t *out, dfb_error *err)
{
    return dfb_run_ends_walk(r, offset, length, put_run, out, err);
}

dfb_code
dfb_run_ends_walk(const dfb_run_ends *r, int64_t offset, int64_t length,
                  dfb_run_fn fn, void *ctx, dfb_error *err)
{
    if (offset < 0 || length < 0 || offset > INT64_MAX - length) {
        return dfb_error_set(err, DFB_EINVAL,
                             "run-end encoded rows: bad offset %lld or length "
                             "%lld",
                             (long long)offset, (long long)length);
    }
    if (length == 0) {
        return DFB_OK;
    }
    int64_t j = dfb_run_ends_first_after(r, offset);
    /* the end before run j, read once: at most `offset` (0 for run 0) */
    int64_t prev = j > 0 && j < r->count ? dfb_run_ends_load(r, j - 1) : 0;
    if (prev > offset || prev < 0) {
        goto bad;
    }
    const int64_t stop = offset + length;
    int64_t row = offset;
    for (; j < r->count && row < stop; j++) {
        const int64_t end = dfb_run_ends_load(r, j);
        if (end <= prev || end <= row) {
            goto bad;
        }
        const int64_t upto = end < stop ? end : stop;
        fn(ctx, j, row - offset, upto - offset);
        row = upto;
        prev = end;
    }
    if (row < stop) {
        return dfb_error_set(err, DFB_EINVAL,
                             "run-end encoded array: its %lld runs end before "
                             "row %lld",
                             (long long)r->count, (long long)stop);
    }
    return DFB_OK;
bad:
    return dfb_error_set(err, DFB_EINVAL,
                         "run-end encoded array: the run ends are not "
                         "positive and strictly increasing (near run %lld)",
                         (long long)j);
}
