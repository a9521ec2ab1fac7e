/* The checks shared by the C unit tests of src/core (tests/c/test_*.c, one
 * executable per core source file, each a meson test): CHECK and CHECK_STR
 * count every check and print the failing ones; check_report prints the
 * totals and gives main's exit status.
 */
#ifndef DFB_TESTS_C_CHECK_H
#define DFB_TESTS_C_CHECK_H

#include <stdio.h>
#include <string.h>

/* 1 on a big-endian host. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DFB_TEST_BIG 1
#else
#define DFB_TEST_BIG 0
#endif

/* The counts of this test executable (one translation unit each). */
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

/* Prints "name: N checks, M failed"; returns 0 if none failed, else 1 (the
   exit status of main). */
static inline int
check_report(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, checks, failures);
    return failures == 0 ? 0 : 1;
}

#endif
