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
