/* C tests of src/core/checked.c: checked sums, products and shapes refuse
 * negative operands and overflow, and the allocation limit is positive. */
#include "check.h"
#include "checked.h"

#include <stdint.h>

int
main(void)
{
    int64_t r = -7;
    CHECK(dfb_checked_add(1, 2, &r) == 0 && r == 3);
    CHECK(dfb_checked_add(INT64_MAX, 0, &r) == 0 && r == INT64_MAX);
    CHECK(dfb_checked_add(INT64_MAX, 1, &r) < 0);
    CHECK(dfb_checked_add(-1, 1, &r) < 0);
    CHECK(dfb_checked_add(1, -1, &r) < 0);

    CHECK(dfb_checked_mul(6, 7, &r) == 0 && r == 42);
    CHECK(dfb_checked_mul(0, INT64_MAX, &r) == 0 && r == 0);
    CHECK(dfb_checked_mul(INT64_MAX, 0, &r) == 0 && r == 0);
    /* the run-end array of 2**61 rows of int64 values */
    CHECK(dfb_checked_mul(INT64_C(1) << 61, 8, &r) < 0);
    CHECK(dfb_checked_mul(INT64_C(1) << 61, 2, &r) == 0 && r == INT64_C(1)
                                                                    << 62);
    CHECK(dfb_checked_mul(INT64_C(1) << 32, INT64_C(1) << 31, &r) < 0);
    CHECK(dfb_checked_mul(-1, 8, &r) < 0);
    CHECK(dfb_checked_mul(8, -1, &r) < 0);
    CHECK(dfb_checked_mul(INT64_MIN, -1, &r) < 0);

    const int64_t ok[3] = {2, 3, 4};
    CHECK(dfb_checked_shape(ok, 3, &r) == 0 && r == 24);
    CHECK(dfb_checked_shape(ok, 0, &r) == 0 && r == 1);
    const int64_t zero[3] = {0, INT64_MAX, 5};
    CHECK(dfb_checked_shape(zero, 3, &r) == 0 && r == 0);
    /* an empty extent anywhere empties the shape */
    const int64_t empty[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
    CHECK(dfb_checked_shape(empty, 3, &r) == 0 && r == 0);
    /* overflows at the second extent */
    const int64_t big[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 2};
    CHECK(dfb_checked_shape(big, 3, &r) < 0);
    const int64_t neg[2] = {4, -1};
    CHECK(dfb_checked_shape(neg, 2, &r) < 0);

    CHECK(dfb_alloc_limit() > 0);
    return check_report("checked");
}
