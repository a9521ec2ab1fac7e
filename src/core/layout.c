/* dfbuffer core: overflow-checked layout arithmetic (see layout.h). */
#include "layout.h"

dfb_code
dfb_mul_bytes(int64_t count, int64_t itemsize, int64_t *out, dfb_error *err)
{
    if (itemsize != 0 && count > INT64_MAX / itemsize) {
        return dfb_error_set(err, DFB_EOVERFLOW,
                             "the column's offset + length overflows");
    }
    *out = count * itemsize;
    return DFB_OK;
}

/* Stores a + b in *r and returns 1 if it stays within [-max, max], else
   returns 0. */
static int
add_in(int64_t a, int64_t b, int64_t max, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r) && *r <= max && *r >= -max - 1;
}

dfb_code
dfb_core_extent(int ndim, const int64_t *shape, const int64_t *strides,
                int64_t itemsize, int64_t max, int64_t *lo, int64_t *hi,
                dfb_error *err)
{
    int64_t l = 0, h = 0, reach, span;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            *lo = 0;
            *hi = 0;
            return DFB_OK;
        }
    }
    for (int i = 0; i < ndim; i++) {
        if (__builtin_mul_overflow(shape[i] - 1, strides[i], &reach) ||
            reach > max || reach < -max - 1) {
            goto overflow;
        }
        if (reach < 0 ? !add_in(l, reach, max, &l)
                      : !add_in(h, reach, max, &h)) {
            goto overflow;
        }
    }
    if (!add_in(h, itemsize, max, &h)) {
        goto overflow;
    }
    /* The span hi - lo (a buffer size) must fit too. */
    if (__builtin_sub_overflow(h, l, &span) || span > max) {
        goto overflow;
    }
    *lo = l;
    *hi = h;
    return DFB_OK;
overflow:
    return dfb_error_set(err, DFB_EOVERFLOW,
                         "shape and strides address more memory than fits in "
                         "Py_ssize_t");
}

dfb_code
dfb_buffer_extent(int64_t offset, int64_t length, int64_t itemsize,
                  int64_t stride, int64_t *lo, int64_t *hi, dfb_error *err)
{
    int64_t end, first, last, top, span;
    if (offset < 0 || length < 0 || itemsize < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "a buffer's offset, length and item size must "
                             "be >= 0");
    }
    if (length == 0) {
        *lo = 0;
        *hi = 0;
        return DFB_OK;
    }
    if (__builtin_add_overflow(offset, length, &end)) {
        goto overflow;
    }
    if (itemsize == 0) { /* a bitmap: bits [offset, end) */
        *lo = offset / 8;
        *hi = end / 8 + (end % 8 != 0);
        return DFB_OK;
    }
    if (__builtin_mul_overflow(offset, stride, &first) ||
        __builtin_mul_overflow(end - 1, stride, &last)) {
        goto overflow;
    }
    if (first > last) { /* a negative stride */
        int64_t t = first;
        first = last;
        last = t;
    }
    if (__builtin_add_overflow(last, itemsize, &top) ||
        __builtin_sub_overflow(top, first, &span)) {
        goto overflow;
    }
    *lo = first;
    *hi = top;
    return DFB_OK;
overflow:
    return dfb_error_set(err, DFB_EOVERFLOW,
                         "a buffer's offset, length and stride address more "
                         "memory than fits in int64");
}

int
dfb_layout_is_contiguous(int ndim, const int64_t *shape,
                         const int64_t *strides, int64_t itemsize, int fortran)
{
    int64_t expected = itemsize;
    int over = 0; /* the expected stride left int64 */
    for (int k = 0; k < ndim; k++) {
        if (shape[k] == 0) {
            return 1;
        }
    }
    for (int k = 0; k < ndim; k++) {
        int i = fortran ? k : ndim - 1 - k;
        if (shape[i] == 1) {
            continue;
        }
        if (over || strides[i] != expected) {
            return 0;
        }
        over = __builtin_mul_overflow(expected, shape[i], &expected);
    }
    return 1;
}
