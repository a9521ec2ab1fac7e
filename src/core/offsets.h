/* dfbuffer core: validation of string / binary offsets (pure C, no Python).
 */
#ifndef DFBUFFER_CORE_OFFSETS_H
#define DFBUFFER_CORE_OFFSETS_H

#include "core.h"

#include <stdint.h>

/* What dfb_offsets_validate found wrong (filled on DFB_EINVAL). */
typedef struct {
    int64_t index; /* absolute index of the first bad offset */
    int64_t value; /* its value */
} dfb_bad_offset;

/* Checks offsets[first .. last] (inclusive; int32 when width is 4, int64
   when 8; byte-swapped when `swapped`) of `buf`, which must hold at least
   (last + 1) * width bytes, any alignment: each one read once, all
   non-negative and non-decreasing.  Stores the last offset in *end.
   Returns DFB_OK; DFB_EINVAL with the first bad one in *bad (if non-NULL)
   and a message in err; or DFB_ENOTSUP for another width. */
dfb_code
dfb_offsets_validate(const void *buf, int width, int swapped, int64_t first,
                     int64_t last, int64_t *end, dfb_bad_offset *bad,
                     dfb_error *err);

#endif /* DFBUFFER_CORE_OFFSETS_H */
