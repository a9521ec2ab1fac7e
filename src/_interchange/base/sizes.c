/* dfbuffer: checked sizes as Python errors (see sizes.h). */
#include "sizes.h"

int
dfb_alloc_bytes(const char *name, int64_t n, int64_t isz, int64_t *out)
{
    if (dfb_checked_mul(n, isz, out) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': %lld items of %lld bytes: the size "
                     "overflows",
                     name, (long long)n, (long long)isz);
        return -1;
    }
    const int64_t limit = dfb_alloc_limit();
    if (*out > limit) {
        PyErr_Format(PyExc_MemoryError,
                     "column '%s': %lld items of %lld bytes need %lld bytes, "
                     "more than this machine's %lld",
                     name, (long long)n, (long long)isz, (long long)*out,
                     (long long)limit);
        return -1;
    }
    return 0;
}
