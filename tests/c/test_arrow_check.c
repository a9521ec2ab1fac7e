/* C unit tests of the checks of imported Arrow structs
 * (src/core/arrow_check.c): every refusal before a buffer is read, and the
 * struct bitmap read only when allowed. Run by `meson test`; exits non-zero if
 * any check fails.
 */
#include "arrow_check.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A release callback that does nothing (the structs live on the stack). */
static void
noop_array_release(struct ArrowArray *a)
{
    a->release = NULL;
}

/* Fills `a` as a live array of `length` elements over `buffers`. */
static void
fill_array(struct ArrowArray *a, int64_t length, int64_t n_buffers,
           const void **buffers)
{
    memset(a, 0, sizeof(*a));
    a->length = length;
    a->n_buffers = n_buffers;
    a->buffers = buffers;
    a->release = noop_array_release;
}

/* dfb_arrow_check_node and dfb_arrow_check_table: every refusal before a
   buffer is read, and the struct bitmap read only when allowed. */
static void
test_arrow_check(void)
{
    static int64_t data[8];
    static uint8_t bits[1] = {0x0F}; /* rows 0..3 valid, 4..7 null */
    const void *bufs[2] = {NULL, data};
    struct ArrowSchema s = {.format = "l", .name = "x"};
    struct ArrowArray a;
    dfb_format f;
    dfb_error err;
    int64_t end;

    fill_array(&a, 4, 2, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 1, 3, "x", &f, &end, &err) == DFB_OK);
    CHECK(f.type == DFB_T_INT && f.bits == 64 && end == 4);
    a.release = NULL;
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "released") != NULL);
    fill_array(&a, -1, 2, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    fill_array(&a, 4, 2, bufs);
    a.null_count = 5;
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "null_count 5") != NULL);
    fill_array(&a, 4, 1, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "buffers") != NULL);
    fill_array(&a, 4, 2, bufs);
    struct ArrowSchema list = {.format = "+l", .name = "x"};
    CHECK(dfb_arrow_check_node(&list, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_ENOTSUP);
    /* sizes: overflowing and address-wrapping buffers */
    fill_array(&a, INT64_MAX / 4, 2, bufs);
    CHECK(dfb_arrow_check_node(&s, &a, 0, INT64_MAX / 4, "x", &f, &end,
                               &err) == DFB_EOVERFLOW);
    const void *high[2] = {NULL, (const void *)(UINTPTR_MAX - 15)};
    fill_array(&a, 4, 2, high);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "address space") != NULL);
    fill_array(&a, 1, 2, high);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 1, "x", &f, &end, &err) == DFB_OK);
    /* nulls without a bitmap; values without a buffer */
    fill_array(&a, 4, 2, bufs);
    a.null_count = 1;
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "no validity") != NULL);
    const void *nodata[2] = {NULL, NULL};
    fill_array(&a, 4, 2, nodata);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 4, "x", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "is NULL") != NULL);
    fill_array(&a, 0, 2, nodata);
    CHECK(dfb_arrow_check_node(&s, &a, 0, 0, "x", &f, &end, &err) == DFB_OK);
    struct ArrowSchema str = {.format = "u"};
    const void *nostr[3] = {NULL, data, NULL};
    fill_array(&a, 4, 3, nostr); /* its data size is in its offsets */
    CHECK(dfb_arrow_check_node(&str, &a, 0, 4, "x", &f, &end, &err) == DFB_OK);
    /* dictionaries: both sides or neither, integer indices */
    struct ArrowSchema values = {.format = "u"};
    struct ArrowArray dict;
    const void *sbufs[3] = {NULL, data, data};
    fill_array(&dict, 2, 3, sbufs);
    fill_array(&a, 4, 2, bufs);
    struct ArrowSchema codes = {.format = "i", .dictionary = &values};
    CHECK(dfb_arrow_check_node(&codes, &a, 0, 4, "c", &f, &end, &err) ==
          DFB_EINVAL);
    a.dictionary = &dict;
    CHECK(dfb_arrow_check_node(&codes, &a, 0, 4, "c", &f, &end, &err) ==
          DFB_OK);
    struct ArrowSchema fcodes = {.format = "g", .dictionary = &values};
    CHECK(dfb_arrow_check_node(&fcodes, &a, 0, 4, "c", &f, &end, &err) ==
          DFB_EINVAL);
    CHECK(strstr(err.message, "integer") != NULL);

    /* a table: "+s" with one int64 child */
    struct ArrowSchema *kids[1] = {&s};
    struct ArrowSchema table = {
        .format = "+s", .n_children = 1, .children = kids};
    struct ArrowArray child, top;
    struct ArrowArray *achildren[1] = {&child};
    const void *tbufs[1] = {NULL};
    fill_array(&child, 8, 2, bufs);
    fill_array(&top, 8, 1, tbufs);
    top.n_children = 1;
    top.children = achildren;
    struct ArrowArray *tops[1] = {&top};
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_OK);
    CHECK(dfb_arrow_check_table(&table, tops, 1, 0, &err) == DFB_OK);
    top.null_count = 9;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    top.null_count = 1; /* nulls but no bitmap */
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    tbufs[0] = bits;
    top.null_count = -1;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_ENOTSUP);
    CHECK(strstr(err.message, "null rows") != NULL);
    top.length = 4; /* rows 0..3: all valid, counted */
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_OK);
    CHECK(dfb_arrow_check_table(&table, tops, 1, 0, &err) == DFB_ENOTSUP);
    CHECK(strstr(err.message, "device") != NULL);
    top.null_count = 0; /* trusted, never read */
    CHECK(dfb_arrow_check_table(&table, tops, 1, 0, &err) == DFB_OK);
    child.length = 3;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    CHECK(strstr(err.message, "fewer") != NULL);
    child.length = 8;
    top.n_children = 0;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
    kids[0] = NULL;
    CHECK(dfb_arrow_check_table(&table, tops, 1, 1, &err) == DFB_EINVAL);
}

int
main(void)
{
    test_arrow_check();
    return check_report("test_arrow_check");
}
