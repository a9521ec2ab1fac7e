/* C unit tests of byte-size multiplication at the overflow edge, the extent of
 * strided arrays and contiguity (src/core/layout.c). Run by `meson test`;
 * exits non-zero if any check fails.
 */
#include "layout.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Multiplication is exact up to INT64_MAX and refuses one past it. */
static void
test_mul_bytes(void)
{
    int64_t r = -1;
    dfb_error err = {{0}};
    CHECK(dfb_mul_bytes(0, 8, &r, &err) == DFB_OK && r == 0);
    CHECK(dfb_mul_bytes(INT64_MAX, 0, &r, &err) == DFB_OK && r == 0);
    CHECK(dfb_mul_bytes(INT64_MAX, 1, &r, &err) == DFB_OK && r == INT64_MAX);
    CHECK(dfb_mul_bytes(INT64_MAX / 8, 8, &r, &err) == DFB_OK &&
          r == INT64_MAX / 8 * 8);
    r = 7;
    CHECK(dfb_mul_bytes(INT64_MAX / 8 + 1, 8, &r, &err) == DFB_EOVERFLOW);
    CHECK(r == 7); /* untouched on failure */
    CHECK(strstr(err.message, "overflows") != NULL);
    CHECK(dfb_mul_bytes(INT64_MAX / 2 + 1, 2, &r, NULL) == DFB_EOVERFLOW);
}

/* Extent of strided arrays: empty, contiguous, negative strides, and
   overflow of every intermediate and of hi - lo. */
static void
test_extent(void)
{
    int64_t lo = -1, hi = -1;
    dfb_error err = {{0}};
    const int64_t max = INT64_MAX;
    {
        int64_t shape[] = {3, 0}, strides[] = {INT64_MAX, 8};
        CHECK(dfb_core_extent(2, shape, strides, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 0);
    }
    {
        CHECK(dfb_core_extent(0, NULL, NULL, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 8);
    }
    {
        int64_t shape[] = {2, 3}, strides[] = {24, 8};
        CHECK(dfb_core_extent(2, shape, strides, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 48);
    }
    {
        int64_t shape[] = {4}, strides[] = {-8};
        CHECK(dfb_core_extent(1, shape, strides, 8, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == -24 && hi == 8);
    }
    {
        /* size-1 dimensions ignore huge strides */
        int64_t shape[] = {1, 5}, strides[] = {INT64_MAX, 1};
        CHECK(dfb_core_extent(2, shape, strides, 1, max, &lo, &hi, &err) ==
                  DFB_OK &&
              lo == 0 && hi == 5);
    }
    {
        /* (shape - 1) * stride overflows */
        int64_t shape[] = {3}, strides[] = {INT64_MAX / 2 + 1};
        lo = hi = 99;
        CHECK(dfb_core_extent(1, shape, strides, 1, max, &lo, &hi, &err) ==
              DFB_EOVERFLOW);
        CHECK(lo == 99 && hi == 99);
        CHECK(strstr(err.message, "Py_ssize_t") != NULL);
    }
    {
        /* hi + itemsize overflows */
        int64_t shape[] = {2}, strides[] = {INT64_MAX - 4};
        CHECK(dfb_core_extent(1, shape, strides, 4, max, &lo, &hi, &err) ==
              DFB_OK);
        CHECK(dfb_core_extent(1, shape, strides, 5, max, &lo, &hi, &err) ==
              DFB_EOVERFLOW);
    }
    {
        /* each reach fits, hi - lo does not */
        int64_t shape[] = {2, 2},
                strides[] = {INT64_MAX / 2 + 1, INT64_MIN / 2};
        CHECK(dfb_core_extent(2, shape, strides, 1, max, &lo, &hi, &err) ==
              DFB_EOVERFLOW);
    }
    {
        /* a smaller address type (32-bit Py_ssize_t) */
        int64_t shape[] = {2}, strides[] = {INT32_MAX - 1};
        CHECK(dfb_core_extent(1, shape, strides, 1, INT32_MAX, &lo, &hi,
                              &err) == DFB_OK &&
              hi == INT32_MAX);
        CHECK(dfb_core_extent(1, shape, strides, 2, INT32_MAX, &lo, &hi,
                              &err) == DFB_EOVERFLOW);
    }
}

/* The byte extent of one buffer: bitmaps with bit offsets, byte masks and
   values of every stride sign (0 too), element offsets, refusals and
   overflow. */
static void
test_buffer_extent(void)
{
    int64_t lo = -1, hi = -1;
    dfb_error err = {{0}};
    /* nothing: no byte, whatever the offset, stride or kind */
    CHECK(dfb_buffer_extent(5, 0, 8, -8, &lo, &hi, &err) == DFB_OK &&
          lo == 0 && hi == 0);
    CHECK(dfb_buffer_extent(13, 0, 0, 0, &lo, &hi, &err) == DFB_OK &&
          lo == 0 && hi == 0);
    /* bitmaps: bit offsets round down, ends round up */
    CHECK(dfb_buffer_extent(0, 8, 0, 99, &lo, &hi, &err) == DFB_OK &&
          lo == 0 && hi == 1);
    CHECK(dfb_buffer_extent(0, 9, 0, 0, &lo, &hi, &err) == DFB_OK && lo == 0 &&
          hi == 2);
    CHECK(dfb_buffer_extent(7, 1, 0, 0, &lo, &hi, &err) == DFB_OK && lo == 0 &&
          hi == 1);
    CHECK(dfb_buffer_extent(8, 1, 0, 0, &lo, &hi, &err) == DFB_OK && lo == 1 &&
          hi == 2);
    CHECK(dfb_buffer_extent(13, 20, 0, 0, &lo, &hi, &err) == DFB_OK &&
          lo == 1 && hi == 5);
    CHECK(dfb_buffer_extent(INT64_MAX - 8, 8, 0, 0, &lo, &hi, &err) ==
              DFB_OK &&
          lo == (INT64_MAX - 8) / 8 && hi == INT64_MAX / 8 + 1);
    /* byte masks and values, contiguous, with element offsets */
    CHECK(dfb_buffer_extent(0, 10, 1, 1, &lo, &hi, &err) == DFB_OK &&
          lo == 0 && hi == 10);
    CHECK(dfb_buffer_extent(3, 10, 1, 1, &lo, &hi, &err) == DFB_OK &&
          lo == 3 && hi == 13);
    CHECK(dfb_buffer_extent(2, 3, 8, 8, &lo, &hi, &err) == DFB_OK &&
          lo == 16 && hi == 40);
    /* strided: the last element's item ends it, not the stride */
    CHECK(dfb_buffer_extent(0, 3, 8, 24, &lo, &hi, &err) == DFB_OK &&
          lo == 0 && hi == 56);
    /* reversed: below the address, up to the first element's end */
    CHECK(dfb_buffer_extent(0, 4, 8, -8, &lo, &hi, &err) == DFB_OK &&
          lo == -24 && hi == 8);
    CHECK(dfb_buffer_extent(0, 5, 1, -1, &lo, &hi, &err) == DFB_OK &&
          lo == -4 && hi == 1);
    CHECK(dfb_buffer_extent(1, 2, 4, -16, &lo, &hi, &err) == DFB_OK &&
          lo == -32 && hi == -12);
    /* broadcast: every element is the first one */
    CHECK(dfb_buffer_extent(0, 1000000, 8, 0, &lo, &hi, &err) == DFB_OK &&
          lo == 0 && hi == 8);
    CHECK(dfb_buffer_extent(0, INT64_MAX, 1, 0, &lo, &hi, &err) == DFB_OK &&
          lo == 0 && hi == 1);
    /* refusals and overflow leave lo and hi untouched */
    lo = hi = 77;
    CHECK(dfb_buffer_extent(-1, 2, 8, 8, &lo, &hi, &err) == DFB_EINVAL);
    CHECK(dfb_buffer_extent(0, -2, 8, 8, &lo, &hi, &err) == DFB_EINVAL);
    CHECK(dfb_buffer_extent(0, 2, -8, 8, &lo, &hi, NULL) == DFB_EINVAL);
    CHECK(dfb_buffer_extent(INT64_MAX, 1, 0, 0, &lo, &hi, &err) ==
          DFB_EOVERFLOW);
    CHECK(dfb_buffer_extent(1, INT64_MAX, 1, 1, &lo, &hi, &err) ==
          DFB_EOVERFLOW);
    CHECK(dfb_buffer_extent(0, 3, 8, INT64_MAX / 2 + 1, &lo, &hi, &err) ==
          DFB_EOVERFLOW);
    CHECK(dfb_buffer_extent(0, 3, 8, INT64_MIN / 4, &lo, &hi, &err) ==
              DFB_OK &&
          lo == INT64_MIN / 2 && hi == 8);
    CHECK(dfb_buffer_extent(0, 3, 8, INT64_MIN / 2 - 1, &lo, &hi, &err) ==
          DFB_EOVERFLOW);
    CHECK(dfb_buffer_extent(0, 2, 8, INT64_MAX - 8, &lo, &hi, &err) ==
              DFB_OK &&
          lo == 0 && hi == INT64_MAX);
    lo = hi = 77;
    CHECK(dfb_buffer_extent(0, 2, 9, INT64_MAX - 8, &lo, &hi, &err) ==
          DFB_EOVERFLOW);
    /* each end fits, the span between them does not */
    CHECK(dfb_buffer_extent(0, 2, 8, INT64_MIN / 2 - 1, &lo, &hi, &err) ==
              DFB_OK &&
          lo == INT64_MIN / 2 - 1 && hi == 8);
    CHECK(dfb_buffer_extent(0, 2, INT64_MAX, INT64_MIN + 1, &lo, &hi, &err) ==
          DFB_EOVERFLOW);
    CHECK(lo == INT64_MIN / 2 - 1 && hi == 8);
    CHECK(strstr(err.message, "int64") != NULL);
}

/* Contiguity: both orders, size-1 and zero-size dimensions, 0-d arrays,
   and expected strides beyond INT64_MAX. */
static void
test_contiguous(void)
{
    /* 0-d: contiguous in both orders */
    CHECK(dfb_layout_is_contiguous(0, NULL, NULL, 8, 0) == 1);
    CHECK(dfb_layout_is_contiguous(0, NULL, NULL, 8, 1) == 1);
    {
        int64_t shape[] = {3, 4}, c[] = {32, 8}, f[] = {8, 24};
        CHECK(dfb_layout_is_contiguous(2, shape, c, 8, 0) == 1);
        CHECK(dfb_layout_is_contiguous(2, shape, c, 8, 1) == 0);
        CHECK(dfb_layout_is_contiguous(2, shape, f, 8, 1) == 1);
        CHECK(dfb_layout_is_contiguous(2, shape, f, 8, 0) == 0);
        int64_t gap[] = {64, 8}, neg[] = {-32, 8};
        CHECK(dfb_layout_is_contiguous(2, shape, gap, 8, 0) == 0);
        CHECK(dfb_layout_is_contiguous(2, shape, neg, 8, 0) == 0);
    }
    {
        /* size-1 dimensions ignore their strides: both orders */
        int64_t shape[] = {1, 5, 1}, strides[] = {-7, 4, INT64_MIN};
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 4, 0) == 1);
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 4, 1) == 1);
        int64_t ones[] = {1, 1, 1};
        CHECK(dfb_layout_is_contiguous(3, ones, strides, 4, 0) == 1);
    }
    {
        /* zero-size: contiguous whatever the strides */
        int64_t shape[] = {3, 0, 2}, strides[] = {5, INT64_MAX, -3};
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 8, 0) == 1);
        CHECK(dfb_layout_is_contiguous(3, shape, strides, 8, 1) == 1);
    }
    {
        /* the expected stride of the outer dimension overflows int64: no
           stride matches it, and nothing overflows silently */
        int64_t shape[] = {2, INT64_MAX / 4 + 1};
        int64_t strides[] = {INT64_MIN, 8};
        CHECK(dfb_layout_is_contiguous(2, shape, strides, 8, 0) == 0);
        strides[0] = INT64_MAX;
        CHECK(dfb_layout_is_contiguous(2, shape, strides, 8, 0) == 0);
        /* the overflow after the last dimension that matters is harmless */
        int64_t one[] = {1, INT64_MAX / 4 + 1};
        CHECK(dfb_layout_is_contiguous(2, one, strides, 8, 0) == 1);
        int64_t big[] = {INT64_MAX};
        int64_t s1[] = {1};
        CHECK(dfb_layout_is_contiguous(1, big, s1, 1, 0) == 1);
        CHECK(dfb_layout_is_contiguous(1, big, s1, 1, 1) == 1);
    }
    {
        /* 64 dimensions of size 2, itemsize 1: expected strides 2^0..2^63,
           the last beyond INT64_MAX */
        int64_t shape[64], strides[64];
        for (int i = 0; i < 64; i++) {
            shape[i] = 2;
            strides[63 - i] = i < 63 ? (int64_t)1 << i : INT64_MAX;
        }
        CHECK(dfb_layout_is_contiguous(64, shape, strides, 1, 0) == 0);
        CHECK(dfb_layout_is_contiguous(63, shape + 1, strides + 1, 1, 0) == 1);
    }
}

int
main(void)
{
    test_mul_bytes();
    test_extent();
    test_buffer_extent();
    test_contiguous();
    return check_report("test_layout");
}
