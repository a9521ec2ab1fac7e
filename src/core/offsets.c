/* dfbuffer core: validation of string / binary offsets (see offsets.h). */
#include "offsets.h"

#include <string.h>

/* The loop of dfb_offsets_validate for one width and byte order: the
   switch on them stays outside the loop. */
#define DFB_CHECK_LOOP(T, SWAP)                           \
    for (int64_t i = first; i <= last; i++) {             \
        T o;                                              \
        memcpy(&o, p + i * (int64_t)sizeof(T), sizeof o); \
        int64_t v = (int64_t)(SWAP(o));                   \
        if (v < prev) {                                   \
            bad_i = i;                                    \
            bad_v = v;                                    \
            goto bad;                                     \
        }                                                 \
        prev = v;                                         \
    }

#define DFB_NO_SWAP(x) (x)
#define DFB_SWAP32(x) ((int32_t)__builtin_bswap32((uint32_t)(x)))
#define DFB_SWAP64(x) ((int64_t)__builtin_bswap64((uint64_t)(x)))

dfb_code
dfb_offsets_validate(const void *buf, int width, int swapped, int64_t first,
                     int64_t last, int64_t *end, dfb_bad_offset *bad,
                     dfb_error *err)
{
    const char *p = buf;
    int64_t prev = 0; /* the first offset must be >= 0 too */
    int64_t bad_i, bad_v;
    if (width == 4 && !swapped) {
        DFB_CHECK_LOOP(int32_t, DFB_NO_SWAP)
    }
    else if (width == 4) {
        DFB_CHECK_LOOP(int32_t, DFB_SWAP32)
    }
    else if (width == 8 && !swapped) {
        DFB_CHECK_LOOP(int64_t, DFB_NO_SWAP)
    }
    else if (width == 8) {
        DFB_CHECK_LOOP(int64_t, DFB_SWAP64)
    }
    else {
        return dfb_error_set(err, DFB_ENOTSUP,
                             "offsets of %d bytes are not supported", width);
    }
    *end = prev;
    return DFB_OK;
bad:
    if (bad != NULL) {
        bad->index = bad_i;
        bad->value = bad_v;
    }
    return dfb_error_set(err, DFB_EINVAL,
                         "string offsets must be non-negative and "
                         "non-decreasing; offsets[%lld] = %lld",
                         (long long)bad_i, (long long)bad_v);
}
