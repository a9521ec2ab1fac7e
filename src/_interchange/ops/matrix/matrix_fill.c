/* dfbuffer: the fill of to_matrix: the element conversion loops, the
 * blocked fill of each column into the output, and the thread pool that
 * splits the rows (see matrix.h).
 *
 * Nothing here touches a Python object: the fill runs without the GIL.
 */
#include "common.h"
#include "matrix.h"
#include "bitmap.h"
#include "nan.h"

#include "mem.h"
#include "stream_copy.h"
#include "bits.h"
#include "cpus.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#include <unistd.h>
#endif

/* ------------------------------------------------------------------ */
/* Element conversion loops                                             */
/* ------------------------------------------------------------------ */

typedef void (*loop_fn)(const char *s, int64_t n, char *d, int64_t ds);

/* Returns the IEEE half nearest `v` (round half to even; NaN stays NaN,
   overflow gives infinity).  Cannot fail. */
static inline uint16_t
d2h(double v)
{
    uint64_t x;
    memcpy(&x, &v, 8);
    uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
    uint64_t ax = x & UINT64_C(0x7fffffffffffffff);
    if (ax >= UINT64_C(0x7ff0000000000000)) {
        return ax == UINT64_C(0x7ff0000000000000) ? (uint16_t)(sign | 0x7c00u)
                                                  : (uint16_t)(sign | 0x7e00u);
    }
    int e = (int)(ax >> 52) - 1023;
    if (e >= 16) {
        return (uint16_t)(sign | 0x7c00u);
    }
    uint64_t m = ax & ((UINT64_C(1) << 52) - 1);
    if (e >= -14) {
        uint64_t h = ((uint64_t)(e + 15) << 10) | (m >> 42);
        uint64_t rem = m & ((UINT64_C(1) << 42) - 1);
        uint64_t half = UINT64_C(1) << 41;
        if (rem > half || (rem == half && (h & 1))) {
            h++; /* may carry into the exponent, up to infinity */
        }
        return (uint16_t)(sign | h);
    }
    if (e < -25) {
        return sign;
    }
    uint64_t sig = m | (UINT64_C(1) << 52);
    int shift = 28 - e; /* 43..53 */
    uint64_t h = sig >> shift;
    uint64_t rem = sig & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) {
        h++;
    }
    return (uint16_t)(sign | h);
}

/* Returns the float value of IEEE half `h`.  Cannot fail. */
static inline float
h2f(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0) {
        float f = (float)m * 0x1p-24f;
        return s ? -f : f;
    }
    if (e == 31) {
        bits = s | 0x7f800000u | (m << 13);
    }
    else {
        bits = s | ((e + 112) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Returns the double of IEEE half `h` as NumPy's astype makes it: exact,
   a NaN keeping its sign and payload bits (signalling too).  Cannot
   fail. */
static inline double
h2d(uint16_t h)
{
    if ((h & 0x7c00u) != 0x7c00u || (h & 0x3ffu) == 0) {
        return (double)h2f(h); /* finite or infinite: exact */
    }
    const uint64_t bits = ((uint64_t)(h & 0x8000u) << 48) |
                          UINT64_C(0x7ff0000000000000) |
                          ((uint64_t)(h & 0x3ffu) << 42);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* Float to integer casts: truncation toward zero inside the range,
   saturation outside it, 0 for NaN (NumPy leaves these undefined). */
static inline int64_t
sat_i(double v, double lo, double hi)
{
    if (!(v == v)) {
        return 0;
    }
    if (v <= lo) {
        return (int64_t)lo;
    }
    if (v >= hi) {
        return hi >= 9.2e18 ? INT64_MAX : (int64_t)hi;
    }
    return (int64_t)v;
}

/* The unsigned counterpart of sat_i (negative values give 0). */
static inline uint64_t
sat_u(double v, double hi)
{
    if (!(v == v) || v <= 0) {
        return 0;
    }
    if (v >= hi) {
        return hi >= 1.8e19 ? UINT64_MAX : (uint64_t)hi;
    }
    return (uint64_t)v;
}

/* One loop: `n` values of ST at `s` (any alignment) to DT at `d` with byte
   stride `ds` (contiguous stride gets its own vectorisable loop). */
#define LOOP(NAME, ST, DT, EXPR)                                     \
    static void NAME(const char *s, int64_t n, char *d, int64_t ds)  \
    {                                                                \
        if (ds == (int64_t)sizeof(DT)) {                             \
            for (int64_t i = 0; i < n; i++) {                        \
                ST v;                                                \
                memcpy(&v, s + i * (int64_t)sizeof(ST), sizeof(ST)); \
                DT o = (DT)(EXPR);                                   \
                memcpy(d + i * (int64_t)sizeof(DT), &o, sizeof(DT)); \
            }                                                        \
        }                                                            \
        else {                                                       \
            for (int64_t i = 0; i < n; i++) {                        \
                ST v;                                                \
                memcpy(&v, s + i * (int64_t)sizeof(ST), sizeof(ST)); \
                DT o = (DT)(EXPR);                                   \
                memcpy(d + i * ds, &o, sizeof(DT));                  \
            }                                                        \
        }                                                            \
    }

/* The eleven source loops of one output type: EI for integer sources, EF
   for float sources, EH for float16 bits (all in terms of `v`). */
#define SOURCES(DN, DT, EI, EF, EH)  \
    LOOP(DN##_i8, int8_t, DT, EI)    \
    LOOP(DN##_i16, int16_t, DT, EI)  \
    LOOP(DN##_i32, int32_t, DT, EI)  \
    LOOP(DN##_i64, int64_t, DT, EI)  \
    LOOP(DN##_u8, uint8_t, DT, EI)   \
    LOOP(DN##_u16, uint16_t, DT, EI) \
    LOOP(DN##_u32, uint32_t, DT, EI) \
    LOOP(DN##_u64, uint64_t, DT, EI) \
    LOOP(DN##_f32, float, DT, EF)    \
    LOOP(DN##_f64, double, DT, EF)   \
    LOOP(DN##_f16, uint16_t, DT, EH)

SOURCES(db, uint8_t, v != 0, v != 0, h2f(v) != 0)
SOURCES(di8, int8_t, v, sat_i(v, -128.0, 127.0), sat_i(h2f(v), -128.0, 127.0))
SOURCES(di16, int16_t, v, sat_i(v, -32768.0, 32767.0),
        sat_i(h2f(v), -32768.0, 32767.0))
SOURCES(di32, int32_t, v, sat_i(v, -2147483648.0, 2147483647.0),
        sat_i(h2f(v), -2147483648.0, 2147483647.0))
SOURCES(di64, int64_t, v,
        sat_i(v, -9223372036854775808.0, 9223372036854775808.0),
        sat_i(h2f(v), -9223372036854775808.0, 9223372036854775808.0))
SOURCES(du8, uint8_t, v, sat_u(v, 255.0), sat_u(h2f(v), 255.0))
SOURCES(du16, uint16_t, v, sat_u(v, 65535.0), sat_u(h2f(v), 65535.0))
SOURCES(du32, uint32_t, v, sat_u(v, 4294967295.0), sat_u(h2f(v), 4294967295.0))
SOURCES(du64, uint64_t, v, sat_u(v, 18446744073709551616.0),
        sat_u(h2f(v), 18446744073709551616.0))
/* float16 into float16: the bits, NaN payloads and signalling NaNs too */
SOURCES(df16, uint16_t, d2h((double)v), d2h((double)v), v)
SOURCES(df32, float, v, v, h2f(v))
SOURCES(df64, double, v, v, h2d(v))

#define ROW(DN)                                                 \
    {DN##_i8,  DN##_i16, DN##_i32, DN##_i64, DN##_u8, DN##_u16, \
     DN##_u32, DN##_u64, DN##_f32, DN##_f64, DN##_f16}

static const loop_fn loops[D_N][S_N] = {
    ROW(db),   ROW(di8),  ROW(di16), ROW(di32), ROW(di64), ROW(du8),
    ROW(du16), ROW(du32), ROW(du64), ROW(df16), ROW(df32), ROW(df64),
};

/* Reads the integer of loop type `t` at p[i] as int64 (uint64 wraps). */
static inline int64_t
int_at(const char *p, int t, int64_t i)
{
/* the W-byte T at p[i], any alignment */
#define AT(T, W)                          \
    {                                     \
        T v;                              \
        memcpy(&v, p + W * i, sizeof(v)); \
        return v;                         \
    }
    switch (t) {
        case S_I8:
            return ((const int8_t *)p)[i];
        case S_U8:
            return ((const uint8_t *)p)[i];
        case S_I16:
            AT(int16_t, 2)
        case S_U16:
            AT(uint16_t, 2)
        case S_I32:
            AT(int32_t, 4)
        case S_U32:
            AT(uint32_t, 4)
        default:
            AT(int64_t, 8)
    }
#undef AT
}

/* Makes `n` values of chunk `c` from element `i0` readable as native
   values of type c->st: returns a pointer into the chunk or into `buf`
   (PIECE * 8 bytes).  Cannot fail. */
static const char *
decode(const mchunk *c, int64_t i0, int64_t n, char *buf)
{
    const char *p = c->data + (c->offset + i0) * c->isz;
    if (c->stride != c->isz) {
        /* a strided, reversed or broadcast view (stride 0): gathered into
           buf, then read from there */
        const char *q = c->data + (c->offset + i0) * c->stride;
        for (int64_t i = 0; i < n; i++) {
            dfb_memcpy(buf + i * c->isz, q + i * c->stride, (size_t)c->isz);
        }
        p = buf;
    }
    switch (c->read) {
        case R_DIRECT:
            return p;
        case R_SWAP:
            for (int64_t i = 0; i < n; i++) {
                if (c->isz == 2) {
                    uint16_t v;
                    memcpy(&v, p + 2 * i, 2);
                    v = (uint16_t)__builtin_bswap16(v);
                    memcpy(buf + 2 * i, &v, 2);
                }
                else if (c->isz == 4) {
                    uint32_t v;
                    memcpy(&v, p + 4 * i, 4);
                    v = __builtin_bswap32(v);
                    memcpy(buf + 4 * i, &v, 4);
                }
                else {
                    uint64_t v;
                    memcpy(&v, p + 8 * i, 8);
                    v = __builtin_bswap64(v);
                    memcpy(buf + 8 * i, &v, 8);
                }
            }
            return buf;
        case R_BITS:
            dfb_unpack_bits((const uint8_t *)c->data, c->offset + i0, n,
                            (uint8_t *)buf, 0);
            return buf;
        case R_BOOL8:
            for (int64_t i = 0; i < n; i++) {
                buf[i] = p[i] != 0;
            }
            return buf;
        default:
            dfb_memset(buf, 0, (size_t)n);
            return buf;
    }
}

/* Sets flags[i] = 1 where element i0 + i of `c` is null (`s`: its decoded
   values).  Returns the number of nulls.  Cannot fail. */
static int64_t
null_flags(const mchunk *c, const char *s, int64_t i0, int64_t n,
           uint8_t *flags)
{
    int64_t count = 0;
    switch (c->nk) {
        case NK_NAN: {
            /* decoded: native */
            const int isz = c->st == S_F64 ? 8 : c->st == S_F16 ? 2 : 4;
            return dfb_count_nan(s, n, isz, isz, 0, flags);
        }
        case NK_SENT:
            for (int64_t i = 0; i < n; i++) {
                flags[i] = int_at(s, c->st, i) == c->null_value;
                count += flags[i];
            }
            return count;
        case NK_BITS:
            dfb_unpack_bits(c->valid, c->offset + i0, n, flags,
                            c->null_value == 0);
            break;
        case NK_BYTES: {
            const int64_t vs = c->vstride; /* any sign, 0 too */
            const uint8_t *v = c->valid + (c->offset + i0) * vs;
            for (int64_t i = 0; i < n; i++) {
                flags[i] = (v[i * vs] != 0) == (c->null_value != 0);
            }
            break;
        }
        case NK_ALL:
            dfb_memset(flags, 1, (size_t)n);
            return n;
        default:
            dfb_memset(flags, 0, (size_t)n);
            return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        count += flags[i];
    }
    return count;
}

/* Counts the nulls of chunk `c` (whole chunk).  Cannot fail; no GIL. */
int64_t
dfb_matrix_count_nulls(const mchunk *c)
{
    char buf[PIECE * 8];
    uint8_t flags[PIECE];
    int64_t count = 0;
    if (c->nk == NK_NONE) {
        return 0;
    }
    if (c->nk == NK_ALL) {
        return c->length;
    }
    if (c->nk == NK_BITS) {
        int64_t zeros = dfb_count_zero_bits(c->valid, c->offset, c->length);
        return c->null_value == 0 ? zeros : c->length - zeros;
    }
    for (int64_t i = 0; i < c->length; i += PIECE) {
        int64_t n = c->length - i < PIECE ? c->length - i : PIECE;
        const char *s = c->nk == NK_BYTES ? NULL : decode(c, i, n, buf);
        count += null_flags(c, s, i, n, flags);
    }
    return count;
}

/* Returns the chunk of `col` holding row `r` (binary search). */
static const mchunk *
chunk_at(const mcol *col, int64_t r)
{
    Py_ssize_t lo = 0, hi = col->n - 1;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi + 1) / 2;
        if (col->chunks[mid].start <= r) {
            lo = mid;
        }
        else {
            hi = mid - 1;
        }
    }
    return &col->chunks[lo];
}

/* Writes rows [r, r + n) of column `col` to `d` (byte stride ds) and, with a
   mask, its null flags to `m` (stride ms).  Cannot fail; no GIL. */
static void
fill_column(const mplan *p, const mcol *col, int64_t r, int64_t n, char *d,
            int64_t ds, uint8_t *m, int64_t ms)
{
    double bufd[PIECE];
    char *buf = (char *)bufd;
    uint8_t flags[PIECE];
    const loop_fn *row = loops[p->dst];
    char fill[8];
    memset(fill, 0, sizeof(fill));
    if (p->is_float) {
        if (p->dst == D_F64) {
            double v = NAN;
            memcpy(fill, &v, 8);
        }
        else if (p->dst == D_F32) {
            float v = NAN;
            memcpy(fill, &v, 4);
        }
        else {
            uint16_t v = 0x7e00u;
            memcpy(fill, &v, 2);
        }
    }
    Py_ssize_t k = chunk_at(col, r) - col->chunks;
    while (n > 0 && k < col->n) {
        const mchunk *c = &col->chunks[k];
        int64_t i0 = r - c->start;
        int64_t avail = c->length - i0;
        if (avail <= 0) {
            k++;
            continue;
        }
        int64_t take = n < avail ? n : avail;
        int nulls_pass =
            c->nk != NK_NONE && c->nnull != 0 &&
            (m != NULL || (p->fill_nan && !(c->nk == NK_NAN && p->is_float)));
        if (c->same && ds == p->isz && !nulls_pass) {
            /* one copy of the whole run */
            const char *s = c->data + (c->offset + i0) * c->isz;
            if (p->nt_min > 0 && take * p->isz >= p->nt_min) {
                dfb_stream_copy(d, s, take * p->isz);
            }
            else {
                dfb_memcpy(d, s, (size_t)(take * p->isz));
            }
            r += take;
            n -= take;
            d += take * ds;
            if (m != NULL) {
                m += take * ms;
            }
            continue;
        }
        if (take > PIECE) {
            take = PIECE;
        }
        const char *s = decode(c, i0, take, buf);
        row[c->st](s, take, d, ds);
        if (nulls_pass && null_flags(c, s, i0, take, flags) > 0) {
            for (int64_t i = 0; i < take; i++) {
                if (flags[i]) {
                    dfb_memcpy(d + i * ds, fill, (size_t)p->isz);
                    if (m != NULL) {
                        m[i * ms] = 1;
                    }
                }
            }
        }
        r += take;
        n -= take;
        d += take * ds;
        if (m != NULL) {
            m += take * ms;
        }
    }
}

/* The values of column `col` for rows [r, r + n) when the loops would
   copy them unchanged from one chunk (its values of the output type, no
   null to write), else NULL.  Cannot fail. */
static const char *
plain_run(const mplan *p, const mcol *col, int64_t r, int64_t n)
{
    if (col->n < 1 || p->mask != NULL) {
        return NULL;
    }
    const mchunk *c = chunk_at(col, r);
    const int64_t i0 = r - c->start;
    if (!c->same || i0 < 0 || n > c->length - i0 ||
        (c->nk != NK_NONE && c->nnull != 0 && p->fill_nan &&
         !(c->nk == NK_NAN && p->is_float))) {
        return NULL;
    }
    return c->data + (c->offset + i0) * c->isz; /* bounded: in the chunk */
}

/* How far ahead of their reads interleave8 and interleave4 ask for each
   column's lines, in bytes: with 4 or 8 columns read side by side the
   hardware prefetcher keeps up with none of them, and without the hint the
   loads wait on memory for most of a C-order to_matrix. */
#define INTERLEAVE_AHEAD 1024

/* Interleaves `G` (a constant) columns of 8-byte values, rows [0, n) of
   each src[q], into `d` (row stride rs): one 8 * G-byte store run per row
   instead of G strided passes, each column's line INTERLEAVE_AHEAD bytes
   on prefetched once per 8 rows.  Cannot fail. */
static inline __attribute__((always_inline)) void
interleave8(const char *const *src, int64_t n, char *d, int64_t rs,
            const int G)
{
    int64_t i = 0;
#if defined(__SSE2__)
    /* two rows at a time: a pair of columns' two values each, unpacked
       into (row i) and (row i + 1) halves */
    for (; i + 2 <= n; i += 2) {
        char *row = d + i * rs; /* bounded: rows of the block */
        if ((i & 7) == 0) {
            for (int q = 0; q < G; q++) {
                /* a hint only: an address past the column is not read, and
                   is made from an integer, not by pointer arithmetic */
                _mm_prefetch((const char *)((uintptr_t)src[q] + 8 * i +
                                            INTERLEAVE_AHEAD),
                             _MM_HINT_T0);
            }
        }
        for (int q = 0; q < G; q += 2) {
            const __m128d a = _mm_loadu_pd((const double *)(src[q] + 8 * i));
            const __m128d b =
                _mm_loadu_pd((const double *)(src[q + 1] + 8 * i));
            _mm_storeu_pd((double *)(row + 8 * q), _mm_unpacklo_pd(a, b));
            _mm_storeu_pd((double *)(row + rs + 8 * q), _mm_unpackhi_pd(a, b));
        }
    }
#endif
    for (; i < n; i++) {
        char *row = d + i * rs; /* bounded: rows of the block */
        for (int q = 0; q < G; q++) {
            memcpy(row + 8 * q, src[q] + 8 * i, 8);
        }
    }
}

/* interleave8 for `G` (4 or 8, a constant) columns of 4-byte values: four
   rows at a time, each four columns' four values transposed in registers
   (moved as bits: no value is converted).  Cannot fail. */
static inline __attribute__((always_inline)) void
interleave4(const char *const *src, int64_t n, char *d, int64_t rs,
            const int G)
{
    int64_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) {
        char *row = d + i * rs; /* bounded: rows of the block */
        if ((i & 15) == 0) {
            for (int q = 0; q < G; q++) {
                /* a hint only, as in interleave8 */
                _mm_prefetch((const char *)((uintptr_t)src[q] + 4 * i +
                                            INTERLEAVE_AHEAD),
                             _MM_HINT_T0);
            }
        }
        for (int q = 0; q < G; q += 4) {
            const __m128 a = _mm_loadu_ps((const float *)(src[q] + 4 * i));
            const __m128 b = _mm_loadu_ps((const float *)(src[q + 1] + 4 * i));
            const __m128 c = _mm_loadu_ps((const float *)(src[q + 2] + 4 * i));
            const __m128 e = _mm_loadu_ps((const float *)(src[q + 3] + 4 * i));
            const __m128 ab01 = _mm_unpacklo_ps(a, b); /* a0 b0 a1 b1 */
            const __m128 ab23 = _mm_unpackhi_ps(a, b);
            const __m128 ce01 = _mm_unpacklo_ps(c, e);
            const __m128 ce23 = _mm_unpackhi_ps(c, e);
            _mm_storeu_ps((float *)(row + 4 * q), _mm_movelh_ps(ab01, ce01));
            _mm_storeu_ps((float *)(row + rs + 4 * q),
                          _mm_movehl_ps(ce01, ab01));
            _mm_storeu_ps((float *)(row + 2 * rs + 4 * q),
                          _mm_movelh_ps(ab23, ce23));
            _mm_storeu_ps((float *)(row + 3 * rs + 4 * q),
                          _mm_movehl_ps(ce23, ab23));
        }
    }
#endif
    for (; i < n; i++) {
        char *row = d + i * rs; /* bounded: rows of the block */
        for (int q = 0; q < G; q++) {
            memcpy(row + 4 * q, src[q] + 4 * i, 4);
        }
    }
}

/* Writes columns [j0, j1) of rows [rb, rb + nb) into the row-major block
   at `base` (row stride rs): groups of 8, 4 or 2 plain 8-byte columns and
   of 8 or 4 plain 4-byte ones interleaved, the others through fill_column.
   Cannot fail; no GIL. */
static void
fill_block(const mplan *p, int64_t rb, int64_t nb, char *base, int64_t rs,
           Py_ssize_t j0, Py_ssize_t j1)
{
    const int64_t isz = p->isz;
    Py_ssize_t j = j0;
    while (j < j1) {
        const char *src[8];
        int g = 0;
        if (isz == 8 || isz == 4) {
            while (g < 8 && j + g < j1 &&
                   (src[g] = plain_run(p, &p->cols[j + g], rb, nb)) != NULL) {
                g++;
            }
        }
        if (isz == 4 && g >= 4) {
            g = g == 8 ? 8 : 4;
            if (g == 8) {
                interleave4(src, nb, base + j * isz, rs, 8);
            }
            else {
                interleave4(src, nb, base + j * isz, rs, 4);
            }
            j += g;
            continue;
        }
        if (isz == 8 && g >= 2) {
            /* the most columns of 8, 4 or 2 that are there */
            g = g == 8 ? 8 : g >= 4 ? 4 : 2;
            if (g == 8) {
                interleave8(src, nb, base + j * isz, rs, 8);
            }
            else if (g == 4) {
                interleave8(src, nb, base + j * isz, rs, 4);
            }
            else {
                interleave8(src, nb, base + j * isz, rs, 2);
            }
            j += g;
            continue;
        }
        const Py_ssize_t stop = j + (g > 0 ? g : 1);
        for (; j < stop; j++) {
            int64_t at = rb * p->ncols + j;
            fill_column(p, &p->cols[j], rb, nb, base + j * isz, rs,
                        p->mask ? p->mask + at : NULL, p->ncols);
        }
    }
}

/* Fills output rows [r0, r1) of every column.  Cannot fail; no GIL. */
static void
fill_rows(const mplan *p, int64_t r0, int64_t r1)
{
    const int64_t isz = p->isz;
    if (!p->corder) {
        const int64_t ld = p->ld > 0 ? p->ld : p->nrows;
        for (Py_ssize_t j = 0; j < p->ncols; j++) {
            int64_t at = (int64_t)j * ld + r0;
            fill_column(p, &p->cols[j], r0, r1 - r0, p->out + at * isz, isz,
                        p->mask ? p->mask + at : NULL, 1);
        }
#if defined(__SSE2__)
        if (p->nt_min > 0) {
            _mm_sfence(); /* the streamed stores are visible to the joiner */
        }
#endif
        return;
    }
    const int64_t rs = (int64_t)p->ncols * isz;
    /* the block is transposed into a cache-resident stage, then streamed
       out whole (without reading the output lines first) */
    char *stage = p->stage_bytes > 0 ? malloc((size_t)p->stage_bytes) : NULL;
    for (int64_t rb = r0; rb < r1; rb += p->rblock) {
        int64_t nb = r1 - rb < p->rblock ? r1 - rb : p->rblock;
        char *base = stage != NULL ? stage : p->out + rb * rs;
        for (Py_ssize_t g = 0; g < p->ncols; g += p->cgroup) {
            Py_ssize_t ge =
                g + p->cgroup < p->ncols ? g + p->cgroup : p->ncols;
            fill_block(p, rb, nb, base, rs, g, ge);
        }
        if (stage != NULL) {
            dfb_stream_copy(p->out + rb * rs, stage, nb * rs);
        }
    }
    if (stage != NULL) {
#if defined(__SSE2__)
        _mm_sfence(); /* the streamed stores are visible to the joiner */
#endif
        free(stage);
    }
}

/* ------------------------------------------------------------------ */
/* Threads                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    const mplan *p;
    int64_t r0, r1;
} mtask;

/* Thread entry: fills the rows of one mtask.  Cannot fail. */
#if defined(_WIN32)
static DWORD WINAPI
task_main(LPVOID arg)
{
    mtask *t = arg;
    fill_rows(t->p, t->r0, t->r1);
    return 0;
}
#else
static void *
task_main(void *arg)
{
    mtask *t = arg;
    fill_rows(t->p, t->r0, t->r1);
    return NULL;
}
#endif

/* Fills the whole output with `nt` threads (the caller's thread takes the
   first share; a thread that cannot start has its share run inline).
   Call without the GIL.  Cannot fail. */
void
dfb_matrix_run(const mplan *p, int nt)
{
    mtask tasks[MAX_THREADS];
#if defined(_WIN32)
    HANDLE th[MAX_THREADS];
#else
    pthread_t th[MAX_THREADS];
#endif
    int started[MAX_THREADS];
    /* shares in whole 64-row units so thread borders fall on cache lines */
    int64_t units = (p->nrows + 63) / 64;
    if (nt > units) {
        nt = units > 0 ? (int)units : 1;
    }
    for (int t = 0; t < nt; t++) {
        int64_t a = units * t / nt * 64, b = units * (t + 1) / nt * 64;
        tasks[t].p = p;
        tasks[t].r0 = a < p->nrows ? a : p->nrows;
        tasks[t].r1 = b < p->nrows ? b : p->nrows;
        started[t] = 0;
    }
    for (int t = 1; t < nt; t++) {
#if defined(_WIN32)
        th[t] = CreateThread(NULL, 0, task_main, &tasks[t], 0, NULL);
        started[t] = th[t] != NULL;
#else
        started[t] = pthread_create(&th[t], NULL, task_main, &tasks[t]) == 0;
#endif
        if (!started[t]) {
            fill_rows(p, tasks[t].r0, tasks[t].r1);
        }
    }
    if (nt > 0) {
        fill_rows(p, tasks[0].r0, tasks[0].r1);
    }
    for (int t = 1; t < nt; t++) {
        if (started[t]) {
#if defined(_WIN32)
            WaitForSingleObject(th[t], INFINITE);
            CloseHandle(th[t]);
#else
            pthread_join(th[t], NULL);
#endif
        }
    }
}

int
dfb_matrix_prepare(mplan *p, int nthreads, int reused)
{
    /* cache block: a group of <= 64 columns times enough rows for ~128 KiB
       of output (L2-resident; measured against 16 KiB - 1 MiB), at least
       16 rows; row-major blocks of up to 1 MiB are staged */
    p->cgroup = p->ncols < 64 ? (p->ncols > 0 ? p->ncols : 1) : 64;
    p->rblock = (128 * 1024) / ((int64_t)p->cgroup * p->isz);
    if (p->rblock < 16) {
        p->rblock = 16;
    }
    p->stage_bytes = p->rblock * (int64_t)p->ncols * p->isz;
    if (!p->corder || p->stage_bytes > 1024 * 1024) {
        p->stage_bytes = 0;
    }
    int64_t bytes = p->nrows * (int64_t)p->ncols * p->isz;
    /* non-temporal stores into a large reused block
       (benchmarks/matrix_stores.c: into fresh pages, which the kernel has just
       zeroed through the cache, plain stores cost less CPU) */
    p->nt_min = !p->corder && reused && bytes >= (int64_t)OUT_BIG ? NT_MIN : 0;
    /* one thread per THREAD_MIN_BYTES of output: below it no thread is
       started (nor the CPUs counted) */
    int nt = nthreads > 0 ? nthreads
                          : (int)(bytes / THREAD_MIN_BYTES > MAX_THREADS
                                      ? MAX_THREADS
                                      : bytes / THREAD_MIN_BYTES);
    if (nt <= 1) {
        return 1;
    }
    const int cpus = dfb_usable_cpus();
    if (nt > cpus) {
        nt = cpus;
    }
    return nt > MAX_THREADS ? MAX_THREADS : nt;
}
