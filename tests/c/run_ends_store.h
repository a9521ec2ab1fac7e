/* A helper shared by the C tests of the run-end readers (test_reader.c) and
 * the run-end fill (test_run_fill.c): run ends stored unaligned in a buffer
 * and described by dfb_run_ends_init.
 */
#ifndef DFB_TESTS_C_RUN_ENDS_STORE_H
#define DFB_TESTS_C_RUN_ENDS_STORE_H

#include "reader.h"

#include <stdint.h>
#include <string.h>

/* Stores run ends `v` (n of them, `width` bytes) unaligned at buf + 1 and
   describes them into *r.  Returns the init's code. */
static dfb_code
run_ends(char *buf, const int64_t *v, int n, int width, dfb_run_ends *r)
{
    for (int i = 0; i < n; i++) {
        if (width == 2) {
            int16_t x = (int16_t)v[i];
            memcpy(buf + 1 + 2 * i, &x, 2);
        }
        else if (width == 4) {
            int32_t x = (int32_t)v[i];
            memcpy(buf + 1 + 4 * i, &x, 4);
        }
        else {
            memcpy(buf + 1 + 8 * i, &v[i], 8);
        }
    }
    return dfb_run_ends_init(r, buf + 1, (int64_t)n * width, width, 0, n,
                             NULL);
}

#endif /* DFB_TESTS_C_RUN_ENDS_STORE_H */
