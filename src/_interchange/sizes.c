/* dfbuffer: checked sizes as Python errors (see sizes.h). */
#include "sizes.h"

int
dfb_size_mul(const char *name, int64_t n, int64_t isz, int64_t *out)
{
    if (dfb_checked_mul(n, isz, out) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': %lld items of %lld bytes: the size "
                     "overflows",
                     name, (long long)n, (long long)isz);
        return -1;
    }
    return 0;
}

int
dfb_size_add(const char *name, int64_t a, int64_t b, int64_t *out)
{
    if (dfb_checked_add(a, b, out) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': offset or length %lld + %lld is negative "
                     "or overflows",
                     name, (long long)a, (long long)b);
        return -1;
    }
    return 0;
}

int
dfb_alloc_bytes(const char *name, int64_t n, int64_t isz, int64_t *out)
{
    if (dfb_size_mul(name, n, isz, out) < 0) {
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
