/* C unit tests of the error convention of src/core/core.c: DFB_RETURN_NOT_OK
 * propagates the first failure, dfb_error_set truncates long messages. Run by
 * `meson test`; exits non-zero if any check fails.
 */
#include "core.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Returns DFB_OK if x >= 0, else DFB_EINVAL. */
static dfb_code
nonneg(int x)
{
    return x >= 0 ? DFB_OK : DFB_EINVAL;
}

/* Uses DFB_RETURN_NOT_OK twice; *reached says whether it got past them. */
static dfb_code
two_steps(int a, int b, int *reached)
{
    DFB_RETURN_NOT_OK(nonneg(a));
    DFB_RETURN_NOT_OK(nonneg(b));
    *reached = 1;
    return DFB_OK;
}

/* The macro propagates the first failure; messages are truncated. */
static void
test_error(void)
{
    int reached = 0;
    CHECK(two_steps(1, -1, &reached) == DFB_EINVAL && reached == 0);
    CHECK(two_steps(1, 1, &reached) == DFB_OK && reached == 1);
    dfb_error err;
    char big[600];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CHECK(dfb_error_set(&err, DFB_EOVERFLOW, "%s", big) == DFB_EOVERFLOW);
    CHECK(strlen(err.message) == sizeof(err.message) - 1);
    CHECK(dfb_error_set(NULL, DFB_ENOTSUP, "x") == DFB_ENOTSUP);
}

int
main(void)
{
    test_error();
    return check_report("test_core");
}
