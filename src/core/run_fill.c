/* dfbuffer core: run-end decoding of fixed-width values at fill speed (pure
 * C, no Python).
 *
 * Each run's value is read once and stored run by run straight into the
 * output (a store loop per run, bits set per run), with the run ends read
 * once each through reader.h and checked where they are used: positive,
 * strictly increasing, every run inside the values.  One loop body is
 * written once and specialised on the run ends' width and the value size.
 */
#include "reader.h"

#include "mem.h"

#include <string.h>

/* Sets bits [a, b) of `bits`.  Cannot fail. */
static inline void
set_bits(uint8_t *bits, int64_t a, int64_t b)
{
    if (b - a < 16) {
        for (; a < b; a++) {
            bits[a >> 3] |= (uint8_t)(1u << (a & 7));
        }
        return;
    }
    for (; (a & 7) != 0; a++) {
        bits[a >> 3] |= (uint8_t)(1u << (a & 7));
    }
    dfb_memset(bits + (a >> 3), 0xff, (size_t)((b - a) >> 3));
    a += (b - a) & ~(int64_t)7;
    for (; a < b; a++) {
        bits[a >> 3] |= (uint8_t)(1u << (a & 7));
    }
}

/* Stores the `isz`-byte value at `val` into the `n` slots from `d`.
   Cannot fail. */
static inline __attribute__((always_inline)) void
store_run(char *d, const char *val, int64_t n, const int64_t isz)
{
    switch (isz) {
        case 1:
            dfb_memset(d, *val, (size_t)n);
            return;
        case 2: {
            uint16_t x;
            memcpy(&x, val, 2);
            for (int64_t i = 0; i < n; i++) {
                memcpy(d + 2 * i, &x, 2);
            }
            return;
        }
        case 4: {
            uint32_t x;
            memcpy(&x, val, 4);
            for (int64_t i = 0; i < n; i++) {
                memcpy(d + 4 * i, &x, 4);
            }
            return;
        }
        case 8: {
            uint64_t x;
            memcpy(&x, val, 8);
            for (int64_t i = 0; i < n; i++) {
                memcpy(d + 8 * i, &x, 8);
            }
            return;
        }
        default:
            for (int64_t i = 0; i < n; i++) {
                dfb_memcpy(d + isz * i, val, (size_t)isz); /* bounded */
            }
    }
}

/* Run end `j` of a reader whose width is the constant `w`.  Cannot
   fail. */
static inline __attribute__((always_inline)) int64_t
load_end(const dfb_run_ends *r, int64_t j, const int w)
{
    const char *p = r->base + (int64_t)w * j;
    if (w == 2) {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    if (w == 4) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The fill for run ends of width `w` and values of `isz` bytes, runs
   [j, count) from logical row `row` (prev: the end before run j).  Returns
   DFB_OK, or DFB_EINVAL (with *at the run) for ends that are not
   increasing or a run beyond the values, DFB_EOVERFLOW when the runs
   end before the rows do. */
static inline __attribute__((always_inline)) dfb_code
fill_impl(const dfb_run_ends *r, const dfb_run_values *v, int64_t offset,
          int64_t stop, int64_t j, int64_t prev, char *out, uint8_t *bits,
          int64_t *nulls, int64_t *at, const int w, const int64_t isz)
{
    const int64_t count = r->count;
    const int64_t vcount = v->count;
    int64_t row = offset;
    int64_t nnull = 0;
    for (; j < count && row < stop; j++) {
        const int64_t end = load_end(r, j, w);
        if (end <= prev || end <= row || j >= vcount) {
            *at = j;
            *nulls = nnull;
            return DFB_EINVAL;
        }
        const int64_t upto = end < stop ? end : stop;
        const int64_t a = row - offset, n = upto - row;
        const int64_t bit = v->valid_offset + j;
        /* in bounds: j < vcount values, rows [a, a + n) inside `length` */
        char *d = out + a * isz; /* bounded */
        if (v->valid != NULL && !((v->valid[bit >> 3] >> (bit & 7)) & 1)) {
            nnull += n;
            dfb_memset(d, 0, (size_t)(n * isz)); /* bounded */
        }
        else {
            store_run(d, v->values + j * isz, n, isz); /* bounded */
            if (bits != NULL) {
                set_bits(bits, a, a + n);
            }
        }
        row = upto;
        prev = end;
    }
    *nulls = nnull;
    *at = j;
    return row < stop ? DFB_EOVERFLOW : DFB_OK;
}

#define FILL_ISZ(w)                                                       \
    switch (v->itemsize) {                                                \
        case 1:                                                           \
            rc = fill_impl(r, v, offset, stop, j, prev, out, bits, nulls, \
                           &at, w, 1);                                    \
            break;                                                        \
        case 2:                                                           \
            rc = fill_impl(r, v, offset, stop, j, prev, out, bits, nulls, \
                           &at, w, 2);                                    \
            break;                                                        \
        case 4:                                                           \
            rc = fill_impl(r, v, offset, stop, j, prev, out, bits, nulls, \
                           &at, w, 4);                                    \
            break;                                                        \
        case 8:                                                           \
            rc = fill_impl(r, v, offset, stop, j, prev, out, bits, nulls, \
                           &at, w, 8);                                    \
            break;                                                        \
        default:                                                          \
            rc = fill_impl(r, v, offset, stop, j, prev, out, bits, nulls, \
                           &at, w, v->itemsize);                          \
    }

dfb_code
dfb_run_ends_fill(const dfb_run_ends *r, int64_t offset, int64_t length,
                  const dfb_run_values *v, char *out, uint8_t *bits,
                  int64_t *nulls, dfb_error *err)
{
    *nulls = 0;
    if (offset < 0 || length < 0 || offset > INT64_MAX - length ||
        v->itemsize <= 0 || v->count < 0 || v->valid_offset < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "run-end encoded rows: bad offset %lld or length "
                             "%lld",
                             (long long)offset, (long long)length);
    }
    if (length == 0) {
        return DFB_OK;
    }
    const int64_t j = dfb_run_ends_first_after(r, offset);
    /* the end before run j, read once: at most `offset` (0 for run 0) */
    const int64_t prev =
        j > 0 && j < r->count ? dfb_run_ends_load(r, j - 1) : 0;
    if (prev > offset || prev < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "run-end encoded array: the run ends are not "
                             "positive and strictly increasing (near run "
                             "%lld)",
                             (long long)j);
    }
    const int64_t stop = offset + length;
    int64_t at = j;
    dfb_code rc;
    if (r->width == 2) {
        FILL_ISZ(2)
    }
    else if (r->width == 4) {
        FILL_ISZ(4)
    }
    else {
        FILL_ISZ(8)
    }
    if (rc == DFB_EOVERFLOW) {
        return dfb_error_set(err, DFB_EINVAL,
                             "run-end encoded array: its %lld runs end before "
                             "row %lld",
                             (long long)r->count, (long long)stop);
    }
    if (rc != DFB_OK) {
        if (at >= v->count) {
            return dfb_error_set(err, DFB_EINVAL,
                                 "a run beyond the run-end encoded array's "
                                 "values (run %lld of %lld values)",
                                 (long long)at, (long long)v->count);
        }
        return dfb_error_set(err, DFB_EINVAL,
                             "run-end encoded array: the run ends are not "
                             "positive and strictly increasing (near run "
                             "%lld)",
                             (long long)at);
    }
    return DFB_OK;
}
