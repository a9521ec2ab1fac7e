/* The check macros of the C unit tests (tests/c): each test file includes
 * this once and reports `checks` and `failures` at its end.
 */
#ifndef DFBUFFER_TEST_CHECK_H
#define DFBUFFER_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int failures = 0;
static int checks = 0;

/* Counts one check; prints the failing expression and its line. */
#define CHECK(cond)                                                          \
    do {                                                                     \
        checks++;                                                            \
        if (!(cond)) {                                                       \
            failures++;                                                      \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
                    #cond);                                                  \
        }                                                                    \
    } while (0)

/* Checks that strings a and b are equal, printing both if not. */
#define CHECK_STR(a, b)                                                      \
    do {                                                                     \
        checks++;                                                            \
        if (strcmp((a), (b)) != 0) {                                         \
            failures++;                                                      \
            fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                    (a), (b));                                               \
        }                                                                    \
    } while (0)

#endif /* DFBUFFER_TEST_CHECK_H */
