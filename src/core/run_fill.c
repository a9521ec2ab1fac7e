/* dfbuffer core: run-end decoding of fixed-width values at fill speed (pure
 * C, no Python).
 *
 * Each run's value is read once and stored run by run straight into the
 * output (a store loop per run, bits set per run), with the run ends read
 * once each through reader.h and checked where they are used: positive,
 * strictly increasing, every run inside the values.  Values of 1, 2, 4 or
 * 8 bytes are stored in whole 32-byte chunks, without a tail loop (the
 * runs after a run write again what its last chunk wrote past it); without
 * nulls, short runs take a loop of their own and runs of one row are
 * copied a block at a time.  One loop body is written once and specialised
 * on the run ends' width, the value size and the presence of nulls; on
 * x86-64 Linux it is compiled a second time for AVX2, for long runs.
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

/* The width of store_chunks' stores, in bytes. */
#define SPLAT 32

/* The `isz`-byte value at `val` (isz 1, 2, 4 or 8) repeated over 8
   bytes.  Cannot fail. */
static inline __attribute__((always_inline)) uint64_t
splat8(const char *val, const int64_t isz)
{
    if (isz == 1) {
        return (uint64_t)(uint8_t)*val * 0x0101010101010101u;
    }
    if (isz == 2) {
        uint16_t x;
        memcpy(&x, val, 2);
        return (uint64_t)x * 0x0001000100010001u;
    }
    if (isz == 4) {
        uint32_t x;
        memcpy(&x, val, 4);
        return (uint64_t)x | (uint64_t)x << 32;
    }
    uint64_t x;
    memcpy(&x, val, 8);
    return x;
}

/* Stores copies of the `isz`-byte value at `val` (isz 1, 2, 4 or 8) from
   `d` in SPLAT-byte steps, enough of them for `n` values: up to
   SPLAT / isz - 1 values more.  Cannot fail. */
static inline __attribute__((always_inline)) void
store_chunks(char *d, const char *val, int64_t n, const int64_t isz)
{
    const uint64_t x = splat8(val, isz);
    /* the first chunk outside the loop: a run of up to SPLAT bytes, the
       most common, then costs no loop set-up (the loop alone measured
       about a quarter slower on runs of 2 and 4 int64 values) */
    for (int k = 0; k < SPLAT; k += 8) {
        memcpy(d + k, &x, 8);
    }
    if (n * isz <= SPLAT) {
        return;
    }
    char *const e = d + n * isz;
    d += SPLAT;
    do {
        for (int k = 0; k < SPLAT; k += 8) {
            memcpy(d + k, &x, 8);
        }
        d += SPLAT;
    } while (d < e);
}

/* Run end `j` of the run ends at `base`, of the constant width `w`.  Cannot
   fail. */
static inline __attribute__((always_inline)) int64_t
load_end(const char *base, int64_t j, const int w)
{
    const char *p = base + (int64_t)w * j;
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

/* Writes the rows of run `j`, from logical row *row up to its end `end`
   (read once by the caller) or `stop`, into `out` (row `offset` at out[0])
   and `bits`, and counts a null value's rows in *nnull.  Returns -1 for an
   end not above *row, 1 when the rows are done (*row == stop), 0 to go on.
   In bounds: j is below the values' count, and the rows written lie in
   [*row, stop).  The row a run starts at is never below the end before it
   (it is that end, or `offset` for the first run, which is at least that
   end), so one comparison, end > row, checks that the ends increase. */
static inline __attribute__((always_inline)) int
fill_run(int64_t end, int64_t j, int64_t *row, int64_t *nnull, int64_t offset,
         int64_t stop, char *out, uint8_t *bits, const char *values,
         const uint8_t *valid, int64_t valid_offset, const int64_t isz)
{
    if (end <= *row) {
        return -1;
    }
    const int64_t upto = end < stop ? end : stop;
    const int64_t a = *row - offset, n = upto - *row;
    char *d = out + a * isz; /* bounded */
    const int64_t bit = valid_offset + j;
    if (valid != NULL && !((valid[bit >> 3] >> (bit & 7)) & 1)) {
        *nnull += n;
        dfb_memset(d, 0, (size_t)(n * isz)); /* bounded */
    }
    else {
        const int64_t head =
            isz == 1 || isz == 2 || isz == 4 || isz == 8 ? SPLAT / isz : 0;
        if (head > 0 && stop - *row >= n + head) {
            /* whole SPLAT-byte stores, without a tail: rows past this
               run's (fewer than `head`, before `stop`) are written again
               by the runs after it */
            store_chunks(d, values + j * isz, n, isz); /* bounded */
        }
        else {
            store_run(d, values + j * isz, n, isz); /* bounded */
        }
        if (bits != NULL) {
            set_bits(bits, a, a + n);
        }
    }
    *row = upto;
    return upto >= stop;
}

/* The short-run loop of a fill without nulls (values of isz 1, 2, 4 or 8
   bytes, run ends of width `w`): writes runs *j, *j + 1, ... below `count`
   as fill_run does, each with whole SPLAT-byte stores, while each run's end
   is above *row and at most `lim` (stop - SPLAT / isz, so that its stores
   stay before `stop`) and it is not the second run of one row in a row
   (those go to fill_impl's block copy); `out` holds row `offset`.  Returns
   1 with *end the end of run *j it read and left to the caller (each end
   is read once), or 0 when *j reached `count`.  *j and *row advance past
   the runs written.  Cannot fail. */
static inline __attribute__((always_inline)) int
short_runs(const char *base, const char *values, char *out, int64_t offset,
           int64_t lim, int64_t count, int64_t *j, int64_t *row, int64_t *end,
           const int w, const int64_t isz)
{
    int64_t k = *j, at = *row;
    char *d = out + (at - offset) * isz; /* bounded */
    int unit = 0;
    for (; k < count; k++) {
        const int64_t e = load_end(base, k, w);
        const int one = e == at + 1;
        if (e <= at || e > lim || (one & unit)) {
            *j = k;
            *row = at;
            *end = e;
            return 1;
        }
        unit = one;
        store_chunks(d, values + k * isz, e - at, isz); /* bounded */
        d += (e - at) * isz;
        at = e;
    }
    *j = k;
    *row = at;
    return 0;
}

/* short_runs compiled once for each run-end width W and value size I, out
   of line: inside fill_impl the loop's values spill to the stack and cost
   about a third more a run (runs of 2 to 16 rows).  Same contract. */
#define SHORT_RUNS(W, I)                                                      \
    static __attribute__((noinline)) int short_runs_##W##_##I(                \
        const char *base, const char *values, char *out, int64_t offset,      \
        int64_t lim, int64_t count, int64_t *j, int64_t *row, int64_t *end)   \
    {                                                                         \
        return short_runs(base, values, out, offset, lim, count, j, row, end, \
                          W, I);                                              \
    }
SHORT_RUNS(2, 1)
SHORT_RUNS(2, 2)
SHORT_RUNS(2, 4)
SHORT_RUNS(2, 8)
SHORT_RUNS(4, 1)
SHORT_RUNS(4, 2)
SHORT_RUNS(4, 4)
SHORT_RUNS(4, 8)
SHORT_RUNS(8, 1)
SHORT_RUNS(8, 2)
SHORT_RUNS(8, 4)
SHORT_RUNS(8, 8)
#undef SHORT_RUNS

/* The short_runs_W_I for the constants `w` (2, 4 or 8) and `isz` (1, 2, 4
   or 8), called with the rest.  Returns its result. */
static inline __attribute__((always_inline)) int
short_runs_for(const char *base, const char *values, char *out, int64_t offset,
               int64_t lim, int64_t count, int64_t *j, int64_t *row,
               int64_t *end, const int w, const int64_t isz)
{
#define SHORT_ISZ(W)                                                         \
    switch (isz) {                                                           \
        case 1:                                                              \
            return short_runs_##W##_1(base, values, out, offset, lim, count, \
                                      j, row, end);                          \
        case 2:                                                              \
            return short_runs_##W##_2(base, values, out, offset, lim, count, \
                                      j, row, end);                          \
        case 4:                                                              \
            return short_runs_##W##_4(base, values, out, offset, lim, count, \
                                      j, row, end);                          \
        default:                                                             \
            return short_runs_##W##_8(base, values, out, offset, lim, count, \
                                      j, row, end);                          \
    }
    if (w == 2) {
        SHORT_ISZ(2)
    }
    if (w == 4) {
        SHORT_ISZ(4)
    }
    SHORT_ISZ(8)
#undef SHORT_ISZ
}

/* Runs read and tested at a time for runs of one row each (see fill_impl). */
#define UNIT_BLOCK 8

/* The fill for run ends of width `w` and values of `isz` bytes, runs
   [j, count) from logical row `offset` (the end before run j, which the
   caller checked, is at most `offset`); `plain`: the values have no
   validity bitmap and no bits are wanted (r, v and bits say the same);
   `shorts`: a plain fill of 1, 2, 4 or 8-byte values writes its runs by
   short_runs, this loop taking the runs short_runs leaves.
   Returns DFB_OK, or DFB_EINVAL (with *at the run) for ends that are not
   increasing or a run beyond the values, DFB_EOVERFLOW when the runs
   end before the rows do.
   Everything the loop reads of `r` and `v` is copied to locals first: the
   stores go through a char pointer, which may alias anything, so fields
   read through the structs would be loaded again after every store.
   Without nulls, after a run of one row (as in data that seldom repeats)
   the next ends are read UNIT_BLOCK at a time: when they are the next
   UNIT_BLOCK rows, their values are copied at once; otherwise each run of
   the block is written from the end read there, so that every end is
   still read once. */
static inline __attribute__((always_inline)) dfb_code
fill_impl(const dfb_run_ends *r, const dfb_run_values *v, int64_t offset,
          int64_t stop, int64_t j, char *out, uint8_t *bits, int64_t *nulls,
          int64_t *at, const int w, const int64_t isz, const int plain,
          const int shorts)
{
    const char *const base = r->base;
    const char *const values = v->values;
    const uint8_t *const valid = plain ? NULL : v->valid;
    uint8_t *const want = plain ? NULL : bits;
    const int64_t valid_offset = v->valid_offset;
    /* runs past the values' count are refused after the loop */
    const int64_t count = r->count < v->count ? r->count : v->count;
    int64_t row = offset;
    int64_t nnull = 0;
    int step = 0;
    const int64_t head =
        isz == 1 || isz == 2 || isz == 4 || isz == 8 ? SPLAT / isz : 0;
    while (j < count) {
        int64_t end;
        if (shorts && plain && head > 0) {
            if (!short_runs_for(base, values, out, offset, stop - head, count,
                                &j, &row, &end, w, isz)) {
                break;
            }
        }
        else {
            end = load_end(base, j, w);
        }
        const int64_t before = row;
        step = fill_run(end, j, &row, &nnull, offset, stop, out, want, values,
                        valid, valid_offset, isz);
        if (step != 0) {
            break;
        }
        j++;
        /* after a run of one row (maybe data that seldom repeats), the
           next runs a block at a time while the blocks are of such runs */
        const int unit = plain && row - before == 1;
        while (unit && count - j >= UNIT_BLOCK) {
            int64_t e[UNIT_BLOCK];
            uint64_t diff = 0;
            for (int k = 0; k < UNIT_BLOCK; k++) {
                e[k] = load_end(base, j + k, w);
                diff |= (uint64_t)e[k] ^ ((uint64_t)row + 1 + (uint64_t)k);
            }
            if (diff == 0 && stop - row > UNIT_BLOCK) {
                /* rows [row, row + UNIT_BLOCK) inside `length`, values
                   [j, j + UNIT_BLOCK) below their count */
                dfb_memcpy(out + (row - offset) * isz, values + j * isz,
                           (size_t)(UNIT_BLOCK * isz)); /* bounded */
                row += UNIT_BLOCK;
                j += UNIT_BLOCK;
                continue;
            }
            for (int k = 0; k < UNIT_BLOCK; k++, j++) {
                step = fill_run(e[k], j, &row, &nnull, offset, stop, out, want,
                                values, valid, valid_offset, isz);
                if (step != 0) {
                    break;
                }
            }
            break;
        }
        if (step != 0) {
            break;
        }
    }
    if (step != 0) {
        *nulls = nnull;
        *at = step > 0 ? j + 1 : j;
        return step > 0 ? DFB_OK : DFB_EINVAL;
    }
    *nulls = nnull;
    *at = j;
    if (j < r->count) { /* a run beyond the values */
        return DFB_EINVAL;
    }
    return DFB_EOVERFLOW;
}

/* The fill of runs [j, ...) for the run ends' width and the values' size
   of `r` and `v`, each pair a specialised fill_impl; `plain` and `shorts`
   as there.
   Returns fill_impl's result. */
static inline __attribute__((always_inline)) dfb_code
fill_width(const dfb_run_ends *r, const dfb_run_values *v, int64_t offset,
           int64_t stop, int64_t j, char *out, uint8_t *bits, int64_t *nulls,
           int64_t *at, const int plain, const int shorts)
{
#define FILL_ISZ(w)                                                          \
    switch (v->itemsize) {                                                   \
        case 1:                                                              \
            return fill_impl(r, v, offset, stop, j, out, bits, nulls, at, w, \
                             1, plain, shorts);                              \
        case 2:                                                              \
            return fill_impl(r, v, offset, stop, j, out, bits, nulls, at, w, \
                             2, plain, shorts);                              \
        case 4:                                                              \
            return fill_impl(r, v, offset, stop, j, out, bits, nulls, at, w, \
                             4, plain, shorts);                              \
        case 8:                                                              \
            return fill_impl(r, v, offset, stop, j, out, bits, nulls, at, w, \
                             8, plain, shorts);                              \
        default:                                                             \
            return fill_impl(r, v, offset, stop, j, out, bits, nulls, at, w, \
                             v->itemsize, plain, shorts);                    \
    }
    if (r->width == 2) {
        FILL_ISZ(2)
    }
    if (r->width == 4) {
        FILL_ISZ(4)
    }
    FILL_ISZ(8)
#undef FILL_ISZ
}

/* fill_width with or without nulls, as `v` and `bits` say; `shorts` as in
   fill_impl.  Returns its result. */
static inline __attribute__((always_inline)) dfb_code
fill_any(const dfb_run_ends *r, const dfb_run_values *v, int64_t offset,
         int64_t stop, int64_t j, char *out, uint8_t *bits, int64_t *nulls,
         int64_t *at, const int shorts)
{
    if (v->valid == NULL && bits == NULL) {
        return fill_width(r, v, offset, stop, j, out, bits, nulls, at, 1,
                          shorts);
    }
    return fill_width(r, v, offset, stop, j, out, bits, nulls, at, 0, shorts);
}

/* fill_any compiled for the baseline CPU, with short_runs.  Returns its
   result. */
static dfb_code
fill_base(const dfb_run_ends *r, const dfb_run_values *v, int64_t offset,
          int64_t stop, int64_t j, char *out, uint8_t *bits, int64_t *nulls,
          int64_t *at)
{
    return fill_any(r, v, offset, stop, j, out, bits, nulls, at, 1);
}

/* x86-64 Linux with GCC or Clang: fill_any compiled for AVX2 too, whose stores
   of a run are 32 bytes wide, without short_runs (compiled for the baseline
   only).  It pays on long runs and costs on runs of a few values (the wide
   loop's set-up; docs/performance.md), so dfb_run_ends_fill takes it, on a
   CPU that has AVX2, for runs of WIDE_RUN values or more on average, or of
   WIDE_SHORT_RUN for a fill that short_runs would write (below that, the
   baseline loop with short_runs measured faster). */
#if defined(__x86_64__) && defined(__linux__) && \
    (defined(__GNUC__) || defined(__clang__))
/* (Linux only: elsewhere __builtin_cpu_supports may need a runtime library
   the link does not bring) */
#define DFB_FILL_WIDE 1
#define WIDE_RUN 16
#define WIDE_SHORT_RUN 48
static __attribute__((target("avx2"))) dfb_code
fill_wide(const dfb_run_ends *r, const dfb_run_values *v, int64_t offset,
          int64_t stop, int64_t j, char *out, uint8_t *bits, int64_t *nulls,
          int64_t *at)
{
    return fill_any(r, v, offset, stop, j, out, bits, nulls, at, 0);
}
#endif

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
#ifdef DFB_FILL_WIDE
    /* the runs from j on, at most: their mean length is at least this */
    const int64_t runs = r->count - j > 1 ? r->count - j : 1;
    const int64_t isz = v->itemsize;
    const int shorts = v->valid == NULL && bits == NULL &&
                       (isz == 1 || isz == 2 || isz == 4 || isz == 8);
    if (length / runs >= (shorts ? WIDE_SHORT_RUN : WIDE_RUN) &&
        __builtin_cpu_supports("avx2")) {
        rc = fill_wide(r, v, offset, stop, j, out, bits, nulls, &at);
    }
    else
#endif
    {
        rc = fill_base(r, v, offset, stop, j, out, bits, nulls, &at);
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
