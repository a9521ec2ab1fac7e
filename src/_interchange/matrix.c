/* dfbuffer: to_matrix, one 2-D array from the described columns of a frame.
 *
 * convert.c / arrow.c describe the selected columns (dfb_frame); this file
 * checks their types, promotes them to one dtype, allocates the output (and
 * the mask) once and fills it in C without the GIL, split by rows across
 * threads.  Row-major output is written in cache blocks: a block of rows
 * times a group of columns stays in cache while every column writes its
 * values into it with the row stride.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/pandas_block.h"
#include "dfbuffer/args.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/convert.h"
#include "dfbuffer/frame.h"

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

/* Native source types of the loops (bools arrive as U8 0/1, float16 as
   F32, byte-swapped values as their native type: see read kinds). */
enum {
    S_I8,
    S_I16,
    S_I32,
    S_I64,
    S_U8,
    S_U16,
    S_U32,
    S_U64,
    S_F32,
    S_F64,
    S_N
};

/* Output types. */
enum {
    D_BOOL,
    D_I8,
    D_I16,
    D_I32,
    D_I64,
    D_U8,
    D_U16,
    D_U32,
    D_U64,
    D_F16,
    D_F32,
    D_F64,
    D_N
};

/* How a chunk's stored values reach the loops. */
enum {
    R_DIRECT,  /* native values, read in place */
    R_SWAP,    /* byte-swapped values, swapped into scratch */
    R_BITS,    /* bit-packed bools, unpacked into scratch */
    R_BOOL8,   /* bytes, normalised to 0/1 in scratch */
    R_F16,     /* float16, widened to float32 in scratch */
    R_F16SWAP, /* byte-swapped float16 */
    R_ZERO     /* Arrow null type: zeros */
};

/* Null kinds of a chunk as the loops see them. */
enum { NK_NONE, NK_NAN, NK_SENT, NK_BITS, NK_BYTES, NK_ALL };

/* Elements per conversion step (bounded scratch on each thread's stack). */
#define PIECE 1024

/* Shortest copy of a column run that uses non-temporal stores, when the
   plan asks for them (bytes). */
#define NT_MIN 4096

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

/* The ten source loops of one output type: EI for integer sources, EF for
   float sources (both in terms of `v`). */
#define SOURCES(DN, DT, EI, EF)      \
    LOOP(DN##_i8, int8_t, DT, EI)    \
    LOOP(DN##_i16, int16_t, DT, EI)  \
    LOOP(DN##_i32, int32_t, DT, EI)  \
    LOOP(DN##_i64, int64_t, DT, EI)  \
    LOOP(DN##_u8, uint8_t, DT, EI)   \
    LOOP(DN##_u16, uint16_t, DT, EI) \
    LOOP(DN##_u32, uint32_t, DT, EI) \
    LOOP(DN##_u64, uint64_t, DT, EI) \
    LOOP(DN##_f32, float, DT, EF)    \
    LOOP(DN##_f64, double, DT, EF)

SOURCES(db, uint8_t, v != 0, v != 0)
SOURCES(di8, int8_t, v, sat_i(v, -128.0, 127.0))
SOURCES(di16, int16_t, v, sat_i(v, -32768.0, 32767.0))
SOURCES(di32, int32_t, v, sat_i(v, -2147483648.0, 2147483647.0))
SOURCES(di64, int64_t, v,
        sat_i(v, -9223372036854775808.0, 9223372036854775808.0))
SOURCES(du8, uint8_t, v, sat_u(v, 255.0))
SOURCES(du16, uint16_t, v, sat_u(v, 65535.0))
SOURCES(du32, uint32_t, v, sat_u(v, 4294967295.0))
SOURCES(du64, uint64_t, v, sat_u(v, 18446744073709551616.0))
SOURCES(df16, uint16_t, d2h((double)v), d2h((double)v))
SOURCES(df32, float, v, v)
SOURCES(df64, double, v, v)

#define ROW(DN)                                       \
    {DN##_i8,  DN##_i16, DN##_i32, DN##_i64, DN##_u8, \
     DN##_u16, DN##_u32, DN##_u64, DN##_f32, DN##_f64}

static const loop_fn loops[D_N][S_N] = {
    ROW(db),   ROW(di8),  ROW(di16), ROW(di32), ROW(di64), ROW(du8),
    ROW(du16), ROW(du32), ROW(du64), ROW(df16), ROW(df32), ROW(df64),
};

/* ------------------------------------------------------------------ */
/* The plan                                                             */
/* ------------------------------------------------------------------ */

/* One chunk as the loops read it. */
typedef struct {
    const char *data; /* data buffer (bitmap for R_BITS) */
    int64_t offset;   /* elements (bits for R_BITS) into data / validity */
    int64_t start;    /* first row of the chunk in the column */
    int64_t length;   /* rows */
    int st;           /* S_* type the loops read */
    int read;         /* R_* */
    int isz;          /* bytes per stored value (0: bits / none) */
    int nk;           /* NK_* */
    int same;         /* R_DIRECT values of the output type: memcpy */
    const uint8_t *valid;
    int64_t null_value; /* sentinel, or the mask value meaning null */
    int64_t nnull;      /* -1 while unknown */
    int64_t stride;     /* bytes between stored values, 0: isz (pandas
                           views may be strided; R_DIRECT/R_BOOL8/R_F16) */
    int64_t vstride;    /* bytes between NK_BYTES mask bytes, 0: 1 */
} mchunk;

typedef struct {
    mchunk *chunks;
    Py_ssize_t n;
} mcol;

typedef struct {
    const mcol *cols;
    Py_ssize_t ncols;
    int64_t nrows;
    int dst;      /* D_* */
    int isz;      /* output itemsize */
    int is_float; /* output is a float type */
    int fill_nan; /* write NaN into null slots (nulls="nan") */
    int corder;   /* row-major output */
    char *out;
    uint8_t *mask; /* NULL unless nulls="mask" */
    int64_t rblock;
    Py_ssize_t cgroup;
    int64_t stage_bytes; /* row-major: bytes of one staged block, or 0 */
    int64_t nt_min;      /* column-major: copies of at least this many bytes
                            use non-temporal stores (0: never) */
} mplan;

/* Reads the integer of loop type `t` at p[i] as int64 (uint64 wraps). */
static inline int64_t
int_at(const char *p, int t, int64_t i)
{
    switch (t) {
        case S_I8:
            return ((const int8_t *)p)[i];
        case S_U8:
            return ((const uint8_t *)p)[i];
        case S_I16: {
            int16_t v;
            memcpy(&v, p + 2 * i, 2);
            return v;
        }
        case S_U16: {
            uint16_t v;
            memcpy(&v, p + 2 * i, 2);
            return v;
        }
        case S_I32: {
            int32_t v;
            memcpy(&v, p + 4 * i, 4);
            return v;
        }
        case S_U32: {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            return v;
        }
        default: {
            int64_t v;
            memcpy(&v, p + 8 * i, 8);
            return v;
        }
    }
}

/* Makes `n` values of chunk `c` from element `i0` readable as native
   values of type c->st: returns a pointer into the chunk or into `buf`
   (PIECE * 8 bytes).  Cannot fail. */
static const char *
decode(const mchunk *c, int64_t i0, int64_t n, char *buf)
{
    const char *p = c->data + (c->offset + i0) * c->isz;
    if (c->stride != 0) {
        /* a strided view: gathered into buf, then read from there */
        const char *q = c->data + (c->offset + i0) * c->stride;
        for (int64_t i = 0; i < n; i++) {
            memcpy(buf + i * c->isz, q + i * c->stride, (size_t)c->isz);
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
        case R_F16:
        case R_F16SWAP:
            /* backwards: p may be buf (each float lands at or after the
               half it comes from, which has been read by then) */
            for (int64_t i = n - 1; i >= 0; i--) {
                uint16_t v;
                memcpy(&v, p + 2 * i, 2);
                if (c->read == R_F16SWAP) {
                    v = (uint16_t)__builtin_bswap16(v);
                }
                float f = h2f(v);
                memcpy(buf + 4 * i, &f, 4);
            }
            return buf;
        default:
            memset(buf, 0, (size_t)n);
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
        case NK_NAN:
            for (int64_t i = 0; i < n; i++) {
                int isnan_;
                if (c->st == S_F64) {
                    double v;
                    memcpy(&v, s + 8 * i, 8);
                    isnan_ = v != v;
                }
                else {
                    float v;
                    memcpy(&v, s + 4 * i, 4);
                    isnan_ = v != v;
                }
                flags[i] = (uint8_t)isnan_;
                count += isnan_;
            }
            return count;
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
            const int64_t vs = c->vstride != 0 ? c->vstride : 1;
            const uint8_t *v = c->valid + (c->offset + i0) * vs;
            for (int64_t i = 0; i < n; i++) {
                flags[i] = (v[i * vs] != 0) == (c->null_value != 0);
            }
            break;
        }
        case NK_ALL:
            memset(flags, 1, (size_t)n);
            return n;
        default:
            memset(flags, 0, (size_t)n);
            return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        count += flags[i];
    }
    return count;
}

/* Counts the nulls of chunk `c` (whole chunk).  Cannot fail; no GIL. */
static int64_t
count_nulls(const mchunk *c)
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

/* Copies `n` bytes to `d` with non-temporal stores where the CPU has
   them (no read of the destination lines; the caller fences).  Cannot
   fail. */
static void
stream_copy(char *d, const char *s, int64_t n)
{
#if defined(__SSE2__)
    while (n > 0 && ((uintptr_t)d & 15) != 0) {
        *d++ = *s++;
        n--;
    }
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    }
#endif
    if (n > 0) {
        memcpy(d, s, (size_t)n);
    }
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
                stream_copy(d, s, take * p->isz);
            }
            else {
                memcpy(d, s, (size_t)(take * p->isz));
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
                    memcpy(d + i * ds, fill, (size_t)p->isz);
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

/* Fills output rows [r0, r1) of every column.  Cannot fail; no GIL. */
static void
fill_rows(const mplan *p, int64_t r0, int64_t r1)
{
    const int64_t isz = p->isz;
    if (!p->corder) {
        for (Py_ssize_t j = 0; j < p->ncols; j++) {
            int64_t at = (int64_t)j * p->nrows + r0;
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
            for (Py_ssize_t j = g; j < ge; j++) {
                int64_t at = rb * p->ncols + j;
                fill_column(p, &p->cols[j], rb, nb, base + j * isz, rs,
                            p->mask ? p->mask + at : NULL, p->ncols);
            }
        }
        if (stage != NULL) {
            stream_copy(p->out + rb * rs, stage, nb * rs);
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

/* Returns the number of online CPUs (>= 1).  Cannot fail. */
static int
cpu_count(void)
{
#if defined(_WIN32)
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (int)si.dwNumberOfProcessors : 1;
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n > 1024 ? 1024 : n) : 1;
#endif
}

#define MAX_THREADS 64

/* Fills the whole output with `nt` threads (the caller's thread takes the
   first share; a thread that cannot start has its share run inline).
   Call without the GIL.  Cannot fail. */
static void
run_plan(const mplan *p, int nt)
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

/* ------------------------------------------------------------------ */
/* Output memory                                                        */
/* ------------------------------------------------------------------ */

/* Large outputs (>= OUT_BIG bytes) get a NumPy memory handler of their own
   that keeps the memory of the last one freed for the next one of about
   the same size (jemalloc and mimalloc, behind polars and pyarrow, do the
   same): fresh memory costs a page fault and the kernel zeroing each page,
   which is as long as the copy itself.  The kept block is released when
   an output of another size is asked for; after OUT_DECAY_NS unused the
   kernel may reclaim its pages (MADV_FREE).  The allocations are reported
   to tracemalloc in NumPy's domain. */
#define OUT_BIG ((size_t)16 << 20)
#define OUT_TRACE_DOMAIN 389047 /* NumPy's tracemalloc domain */

#if !defined(_WIN32)
#include <errno.h>
#include <sys/mman.h>
#include <time.h>

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static void *out_kept;       /* guarded by out_lock */
static size_t out_kept_size; /* the size NumPy freed it with */
static void *out_reused;     /* the last kept block handed out again */

/* malloc of the handler: the kept block when it fits (at most 1/8
   larger), else new memory.  No huge pages are asked for (NumPy asks for
   them for every large array): where the kernel compacts memory for them
   on demand (THP defrag "madvise"), a first 400 MB output took 0.9-1.4 s
   instead of 0.25 s, and the kept block already spares repeated calls the
   page faults (docs/performance.md).  Returns NULL when out of memory. */
static void *
out_malloc(void *ctx, size_t size)
{
    (void)ctx;
    void *p = NULL, *drop = NULL;
    if (size >= OUT_BIG) {
        pthread_mutex_lock(&out_lock);
        if (out_kept != NULL && out_kept_size >= size &&
            out_kept_size - size <= size / 8) {
            p = out_kept;
            out_reused = p;
        }
        else {
            drop = out_kept; /* released before the new block is made */
        }
        out_kept = NULL;
        out_kept_size = 0;
        pthread_mutex_unlock(&out_lock);
        free(drop);
    }
    if (p == NULL) {
        p = malloc(size > 0 ? size : 1);
    }
    if (p != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)p, size);
    }
    return p;
}

/* calloc of the handler (not served from the kept block). */
static void *
out_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    void *p = calloc(nelem > 0 ? nelem : 1, elsize > 0 ? elsize : 1);
    if (p != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)p,
                                  nelem * elsize);
    }
    return p;
}

/* realloc of the handler (NULL when out of memory: `ptr` stays valid, traced
   from then on as one byte, its size being unknown here). */
static void *
out_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    if (ptr != NULL) {
        (void)PyTraceMalloc_Untrack(OUT_TRACE_DOMAIN, (uintptr_t)ptr);
    }
    void *p = realloc(ptr, size > 0 ? size : 1);
    if (p != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)p, size);
    }
    else if (ptr != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)ptr, 1);
    }
    return p;
}

/* How long a freed large block stays as it is (nanoseconds).  Unused for
   that long, the reaper thread marks its pages MADV_FREE, so the kernel may
   take them back under memory pressure (where MADV_FREE does not exist, it
   frees the block).  jemalloc's background thread, behind polars, purges
   its freed pages after a decay time the same way.  Marking at once, in
   free, cost 7-24 ms there and 15-23 ms of CPU in the next call's writes of
   400 MB (docs/design.md).  DFBUFFER_MATRIX_DECAY_MS (an integer from 0 to
   3600000, read once) sets it; other values are ignored. */
#define OUT_DECAY_NS 1000000000LL
static long long out_decay_ns = OUT_DECAY_NS;

/* The clock of the reaper's waits (condition variables cannot wait on the
   monotonic clock on macOS). */
#if defined(__APPLE__)
#define OUT_CLOCK CLOCK_REALTIME
#else
#define OUT_CLOCK CLOCK_MONOTONIC
#endif

static int out_kept_marked;         /* out_kept's pages are MADV_FREE */
static pthread_cond_t out_cond;     /* wakes the reaper; guarded by out_lock */
static struct timespec out_kept_at; /* when out_kept was freed (OUT_CLOCK) */
static pid_t out_reaper_pid;        /* process the reaper runs in, 0: none */
static pthread_once_t out_once = PTHREAD_ONCE_INIT;
static int out_cond_ok; /* out_cond is initialised */

/* Time `ts` plus `ns`, in nanoseconds.  Cannot fail. */
static long long
out_ns(const struct timespec *ts, long long ns)
{
    return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + ns;
}

/* Fork handlers: the lock is held across fork, so the child's copy is in a
   known state; the child has no reaper (started again on demand). */
static void
out_prefork(void)
{
    pthread_mutex_lock(&out_lock);
}

static void
out_postfork_parent(void)
{
    pthread_mutex_unlock(&out_lock);
}

/* Makes out_cond, waiting on OUT_CLOCK.  Returns 0 on failure. */
static int
out_cond_make(void)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) {
        return 0;
    }
#if !defined(__APPLE__)
    int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&out_cond, &ca) == 0;
#else
    int ok = pthread_cond_init(&out_cond, &ca) == 0;
#endif
    pthread_condattr_destroy(&ca);
    return ok;
}

static void
out_postfork_child(void)
{
    /* the parent's reaper waited on out_cond: the child's copy starts over */
    out_cond_ok = out_cond_make();
    out_reaper_pid = 0;
    pthread_mutex_unlock(&out_lock);
}

/* Initialises out_cond and the fork handlers (once).  Failures leave
   out_cond_ok 0: blocks are then freed at once. */
static void
out_init(void)
{
    const char *env = getenv("DFBUFFER_MATRIX_DECAY_MS");
    if (env != NULL && *env != '\0') {
        char *end;
        errno = 0;
        long long ms = strtoll(env, &end, 10);
        if (errno == 0 && *end == '\0' && ms >= 0 && ms <= 3600000) {
            out_decay_ns = ms * 1000000LL;
        }
    }
    if (out_cond_make()) {
        out_cond_ok = pthread_atfork(out_prefork, out_postfork_parent,
                                     out_postfork_child) == 0;
    }
}

#if defined(MADV_FREE)
/* Applies madvise `advice` to the whole pages inside [p, p + size).
   Advisory: failures are ignored. */
static void
out_advise(void *p, size_t size, int advice)
{
    long ps = sysconf(_SC_PAGESIZE);
    const uintptr_t pg = ps > 0 ? (uintptr_t)ps : 4096;
    uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
    uintptr_t b = ((uintptr_t)p + size) & ~(pg - 1);
    if (b > a) {
        (void)madvise((void *)a, b - a, advice);
    }
}
#endif

/* The reaper thread: once the kept block has been unused for out_decay_ns,
   marks it MADV_FREE (or frees it), then sleeps until another is kept.
   The block is taken out of out_kept while it is marked, so no output is
   written into pages being marked.  Never returns; touches no Python
   state. */
static void *
out_reaper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&out_lock);
    for (;;) {
        if (out_kept == NULL || out_kept_marked) {
            pthread_cond_wait(&out_cond, &out_lock);
            continue;
        }
        struct timespec now;
        clock_gettime(OUT_CLOCK, &now);
        long long due = out_ns(&out_kept_at, out_decay_ns);
        if (out_ns(&now, 0) < due) {
            struct timespec until = {(time_t)(due / 1000000000LL),
                                     (long)(due % 1000000000LL)};
            (void)pthread_cond_timedwait(&out_cond, &out_lock, &until);
            continue;
        }
        void *blk = out_kept;
        size_t size = out_kept_size;
        out_kept = NULL;
        out_kept_size = 0;
        pthread_mutex_unlock(&out_lock);
#if defined(MADV_FREE)
        out_advise(blk, size, MADV_FREE);
        pthread_mutex_lock(&out_lock);
        if (out_kept == NULL) { /* back, unless a newer block is kept */
            out_kept = blk;
            out_kept_size = size;
            out_kept_marked = 1;
            blk = NULL;
        }
        pthread_mutex_unlock(&out_lock);
#endif
        free(blk);
        pthread_mutex_lock(&out_lock);
    }
    return NULL;
}

/* Starts the reaper of this process if it is not running; call with
   out_lock held.  Returns 0 when none can run (the caller frees then). */
static int
out_reaper_running(void)
{
    pid_t self = getpid();
    if (out_reaper_pid == self) {
        return 1;
    }
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0) {
        return 0;
    }
    pthread_t th;
    int ok = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
             pthread_attr_setstacksize(&at, 64 * 1024) == 0 &&
             pthread_create(&th, &at, out_reaper, NULL) == 0;
    pthread_attr_destroy(&at);
    if (ok) {
        out_reaper_pid = self;
    }
    return ok;
}

/* free of the handler: a large block becomes the kept one (the previous
   kept block is released), which the reaper marks MADV_FREE if the next
   output does not take it within out_decay_ns. */
static void
out_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    if (ptr == NULL) {
        return;
    }
    (void)PyTraceMalloc_Untrack(OUT_TRACE_DOMAIN, (uintptr_t)ptr);
    if (size < OUT_BIG) {
        free(ptr);
        return;
    }
    (void)pthread_once(&out_once, out_init);
    void *drop = ptr;
    pthread_mutex_lock(&out_lock);
    if (out_cond_ok && out_reaper_running()) {
        drop = out_kept;
        out_kept = ptr;
        out_kept_size = size;
        out_kept_marked = 0;
        clock_gettime(OUT_CLOCK, &out_kept_at);
        pthread_cond_signal(&out_cond);
    }
    pthread_mutex_unlock(&out_lock);
    free(drop);
}

static PyDataMem_Handler out_handler = {
    "dfbuffer_to_matrix",
    1,
    {NULL, out_malloc, out_calloc, out_realloc, out_free},
};
#endif

/* Returns a new C- or F-ordered (`fortran`) 2-D array of `descr` (reference
   stolen), allocated through the handler above when it is large; NULL with
   an exception set.  *reused is set to 1 when its memory is a kept block
   (written before, so its pages are in place), else 0. */
static PyObject *
new_output(PyArray_Descr *descr, npy_intp *dims, int fortran, int *reused)
{
    *reused = 0;
#if !defined(_WIN32)
    size_t bytes =
        (size_t)dims[0] * (size_t)dims[1] * (size_t)PyDataType_ELSIZE(descr);
    if (bytes >= OUT_BIG) {
        PyObject *cap = PyCapsule_New(&out_handler, "mem_handler", NULL);
        PyObject *old = cap != NULL ? PyDataMem_SetHandler(cap) : NULL;
        Py_XDECREF(cap);
        if (old == NULL) {
            Py_DECREF(descr);
            return NULL;
        }
        PyObject *out = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims,
                                             NULL, NULL, fortran, NULL);
        pthread_mutex_lock(&out_lock);
        *reused = out != NULL && out_reused != NULL &&
                  out_reused == PyArray_DATA((PyArrayObject *)out);
        out_reused = NULL;
        pthread_mutex_unlock(&out_lock);
        PyObject *back = PyDataMem_SetHandler(old);
        Py_DECREF(old);
        if (back == NULL) {
            Py_XDECREF(out);
            return NULL;
        }
        Py_DECREF(back);
        return out;
    }
#endif
    return PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, NULL, NULL,
                                fortran, NULL);
}

/* ------------------------------------------------------------------ */
/* Types                                                                */
/* ------------------------------------------------------------------ */

#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
#define SWAPPED(bo) ((bo) == '>')
#else
#define SWAPPED(bo) ((bo) == '<')
#endif

/* Returns the S_* type of an integer of `bits` (signed or not), or -1. */
static int
int_stype(int bits, int is_signed)
{
    switch (bits) {
        case 8:
            return is_signed ? S_I8 : S_U8;
        case 16:
            return is_signed ? S_I16 : S_U16;
        case 32:
            return is_signed ? S_I32 : S_U32;
        case 64:
            return is_signed ? S_I64 : S_U64;
        default:
            return -1;
    }
}

/* NumPy type numbers of the S_* types (bools are NPY_BOOL separately). */
static const int stype_npy[S_N] = {
    NPY_INT8,   NPY_INT16,  NPY_INT32,  NPY_INT64,   NPY_UINT8,
    NPY_UINT16, NPY_UINT32, NPY_UINT64, NPY_FLOAT32, NPY_FLOAT64,
};

/* Returns a printable name for the type of chunk `c`. */
static const char *
kind_name(const dfb_column *c)
{
    switch (c->fmt.type) {
        case DFB_T_UTF8:
        case DFB_T_LARGE_UTF8:
        case DFB_T_STRING_VIEW:
            return "a string";
        case DFB_T_BINARY:
        case DFB_T_LARGE_BINARY:
            return "a binary";
        case DFB_T_DATE32:
        case DFB_T_DATE64:
            return "a date";
        case DFB_T_TIMESTAMP:
            return "a timestamp";
        case DFB_T_DURATION:
            return "a duration";
        case DFB_T_DICTIONARY:
            return "a categorical";
        default:
            return "an unsupported";
    }
}

/* Fills `mc` from described chunk `c` of column `name` and sets *typenum
   to the NumPy type of its values (NPY_BOOL for bools and the null type,
   the codes' type for categoricals).  `codes_ok`: an explicit numeric
   dtype was given.  Returns 0, or -1 with TypeError naming the column. */
static int
plan_chunk(const dfb_column *c, PyObject *name, int codes_ok, mchunk *mc,
           int *typenum)
{
    const dfb_format *f = &c->fmt;
    memset(mc, 0, sizeof(*mc));
    mc->data = c->data.ptr;
    mc->offset = c->offset;
    mc->length = c->length;
    mc->nnull = -1;
    switch (f->type) {
        case DFB_T_NULL:
            mc->read = R_ZERO;
            mc->st = S_U8;
            *typenum = NPY_BOOL;
            break;
        case DFB_T_BOOL_BIT:
            mc->read = R_BITS;
            mc->st = S_U8;
            *typenum = NPY_BOOL;
            break;
        case DFB_T_BOOL8:
            mc->read = R_BOOL8;
            mc->st = S_U8;
            mc->isz = 1;
            *typenum = NPY_BOOL;
            break;
        case DFB_T_INT:
        case DFB_T_UINT:
        case DFB_T_DICTIONARY: {
            const dfb_format *ix = f->type == DFB_T_DICTIONARY ? &c->index : f;
            if (f->type == DFB_T_DICTIONARY && !codes_ok) {
                PyErr_Format(PyExc_TypeError,
                             "column %R is categorical: pass a numeric "
                             "dtype= to get its codes",
                             name);
                return -1;
            }
            mc->st = int_stype(ix->bits, ix->type != DFB_T_UINT);
            if (mc->st < 0) {
                goto unsupported;
            }
            mc->isz = ix->bits / 8;
            mc->read =
                SWAPPED(ix->byteorder) && mc->isz > 1 ? R_SWAP : R_DIRECT;
            *typenum = stype_npy[mc->st];
            break;
        }
        case DFB_T_FLOAT:
            mc->isz = f->bits / 8;
            if (f->bits == 16) {
                mc->read = SWAPPED(f->byteorder) ? R_F16SWAP : R_F16;
                mc->st = S_F32;
                *typenum = NPY_FLOAT16;
            }
            else if (f->bits == 32 || f->bits == 64) {
                mc->st = f->bits == 32 ? S_F32 : S_F64;
                mc->read = SWAPPED(f->byteorder) ? R_SWAP : R_DIRECT;
                *typenum = stype_npy[mc->st];
            }
            else {
                goto unsupported;
            }
            break;
        default:
            goto unsupported;
    }
    /* nulls, as chunk_mask in convert.c reads them */
    if (f->type == DFB_T_NULL) {
        mc->nk = NK_ALL;
    }
    else if (c->null_count == 0) {
        mc->nk = NK_NONE;
    }
    else {
        switch (c->null_kind) {
            case DFB_NULL_USE_NAN:
                mc->nk = f->type == DFB_T_FLOAT ? NK_NAN : NK_NONE;
                break;
            case DFB_NULL_USE_SENTINEL:
                if (mc->st == S_F32 || mc->st == S_F64 ||
                    f->type == DFB_T_BOOL_BIT) {
                    PyErr_Format(PyExc_TypeError,
                                 "column %R: sentinel nulls are only "
                                 "supported on integer columns",
                                 name);
                    return -1;
                }
                mc->nk = NK_SENT;
                break;
            case DFB_NULL_USE_BITMASK:
            case DFB_NULL_USE_BYTEMASK:
                if (c->validity.ptr == NULL) {
                    mc->nk = NK_NONE;
                }
                else {
                    mc->nk = c->null_kind == DFB_NULL_USE_BITMASK ? NK_BITS
                                                                  : NK_BYTES;
                    mc->valid = (const uint8_t *)c->validity.ptr;
                }
                break;
            default:
                mc->nk = NK_NONE;
        }
    }
    mc->null_value = c->null_value;
    if (mc->nk == NK_NONE) {
        mc->nnull = 0;
    }
    return 0;
unsupported:
    PyErr_Format(PyExc_TypeError,
                 "column %R has %s type; to_matrix takes bool, integer and "
                 "float columns",
                 name, kind_name(c));
    return -1;
}

/* Parses dtype= into a D_* type and a new reference to its native
   descriptor (*descr NULL for None).  Returns 0, or -1 with TypeError. */
static int
parse_dtype(PyObject *o, int *dst, PyArray_Descr **descr)
{
    *descr = NULL;
    if (o == NULL || o == Py_None) {
        return 0;
    }
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter2(o, &d)) {
        return -1;
    }
    if (d == NULL) {
        return 0;
    }
    int kind = d->kind, size = (int)PyDataType_ELSIZE(d), t = -1, typenum = 0;
    Py_DECREF(d);
    if (kind == 'b') {
        t = D_BOOL;
        typenum = NPY_BOOL;
    }
    else if (kind == 'i' || kind == 'u') {
        int s = size == 1   ? 0
                : size == 2 ? 1
                : size == 4 ? 2
                : size == 8 ? 3
                            : -1;
        if (s >= 0) {
            t = (kind == 'i' ? D_I8 : D_U8) + s;
            typenum = stype_npy[(kind == 'i' ? S_I8 : S_U8) + s];
        }
    }
    else if (kind == 'f') {
        t = size == 2 ? D_F16 : size == 4 ? D_F32 : size == 8 ? D_F64 : -1;
        typenum = size == 2   ? NPY_FLOAT16
                  : size == 4 ? NPY_FLOAT32
                              : NPY_FLOAT64;
    }
    if (t < 0) {
        PyErr_Format(PyExc_TypeError,
                     "to_matrix dtype must be bool, a (u)int of 8-64 bits or "
                     "float16/32/64, not %R",
                     o);
        return -1;
    }
    *dst = t;
    *descr = PyArray_DescrFromType(typenum);
    return 0;
}

/* Returns the D_* type of native descriptor `d` (bool/int/uint/float of
   the supported sizes), or -1. */
static int
dst_of(PyArray_Descr *d)
{
    switch (d->type_num) {
        case NPY_BOOL:
            return D_BOOL;
        case NPY_HALF:
            return D_F16;
        case NPY_FLOAT:
            return D_F32;
        case NPY_DOUBLE:
            return D_F64;
        default:
            break;
    }
    int size = (int)PyDataType_ELSIZE(d);
    int s = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    if (s < 0) {
        return -1;
    }
    if (PyTypeNum_ISSIGNED(d->type_num)) {
        return D_I8 + s;
    }
    if (PyTypeNum_ISUNSIGNED(d->type_num)) {
        return D_U8 + s;
    }
    return -1;
}

/* Parses a str argument against `choices` (NULL-terminated;
   dfb_parse_choice).  Returns the index, or -1 with TypeError (not a str)
   or ValueError naming `what`. */
static int
parse_choice(PyObject *o, const char *what, const char *const *choices,
             int dflt)
{
    int i = dflt;
    return dfb_parse_choice(o, what, choices, &i) < 0 ? -1 : i;
}

/* ------------------------------------------------------------------ */
/* to_matrix                                                            */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(
    to_matrix_doc,
    "to_matrix(obj, *, dtype=None, order='C', nulls='nan', columns=None, "
    "threads=None)\n--\n\n"
    "Copy the columns of a dataframe into one 2-D NumPy array (rows x "
    "columns).\n\n"
    "obj is anything from_dataframe accepts.  dtype=None promotes the "
    "columns'\n"
    "types as numpy.result_type does (bool and integer columns with nulls "
    "count\n"
    "as float64 when nulls='nan'); an explicit bool / (u)int / float16/32/64 "
    "dtype\n"
    "casts (categoricals give their codes).  String, date/time, nested and "
    "(without\n"
    "dtype) categorical columns raise TypeError naming the column.  "
    "order='C' or\n"
    "'F'.  nulls='nan' writes NaN (ValueError for a non-float dtype), "
    "'raise'\n"
    "raises ValueError naming the column, 'mask' returns a "
    "numpy.ma.MaskedArray\n"
    "with a 2-D bool mask of the same order.  columns= selects and orders "
    "columns\n"
    "by name (KeyError for an unknown one).  threads= caps the worker "
    "threads (at\n"
    "most the CPU count; default by size).  The result is a new array that "
    "owns\n"
    "its memory (base None); it exports DLPack like any NumPy array.");

/* Returns 0, or -1 with ValueError when nulls are present where they
   cannot be kept.  Counts unknown null counts first (GIL released). */
static int
check_nulls(mcol *cols, Py_ssize_t ncols, const dfb_frame *fr, int mode,
            int dst_is_float)
{
    int need_all = mode == 1 || !dst_is_float; /* raise, or nan into ints */
    for (Py_ssize_t j = 0; j < ncols; j++) {
        int64_t total = 0;
        Py_BEGIN_ALLOW_THREADS for (Py_ssize_t k = 0; k < cols[j].n; k++)
        {
            mchunk *c = &cols[j].chunks[k];
            if (c->nnull < 0 && (need_all || c->nk != NK_NAN)) {
                c->nnull = count_nulls(c);
            }
            total += c->nnull > 0 ? c->nnull : 0;
        }
        Py_END_ALLOW_THREADS if (total > 0 && mode == 1)
        {
            PyErr_Format(PyExc_ValueError,
                         "column %R has %lld null value%s (nulls='raise')",
                         fr->cols[j].name, (long long)total,
                         total == 1 ? "" : "s");
            return -1;
        }
        if (total > 0 && mode == 0 && !dst_is_float) {
            PyErr_Format(PyExc_ValueError,
                         "column %R has %lld null value%s, which the "
                         "requested non-float dtype cannot hold as NaN; use "
                         "nulls='mask' or a float dtype",
                         fr->cols[j].name, (long long)total,
                         total == 1 ? "" : "s");
            return -1;
        }
    }
    return 0;
}

/* Prefixes the pending exception's message with column `name` (as a
   ValueError: the column's buffers do not match its description). */
static void
add_name(PyObject *name)
{
    PyObject *exc = dfb_err_take();
    PyObject *msg = exc != NULL ? PyObject_Str(exc) : NULL;
    if (msg == NULL) {
        PyErr_Clear();
        dfb_err_give(exc);
        return;
    }
    PyErr_Format((PyObject *)Py_TYPE(exc), "column %R: %U", name, msg);
    Py_DECREF(msg);
    Py_DECREF(exc);
}

/* Replaces a pending NotImplementedError (an unsupported Arrow format or
   interchange dtype, already naming the column) by TypeError, chained to
   the original. */
static void
unsupported_to_type_error(void)
{
    if (!PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
        return;
    }
    PyObject *exc = dfb_err_take();
    PyObject *msg = exc != NULL ? PyObject_Str(exc) : NULL;
    if (msg == NULL) {
        PyErr_Clear();
        dfb_err_give(exc);
        return;
    }
    PyErr_Format(PyExc_TypeError,
                 "%U (to_matrix takes bool, integer and "
                 "float columns)",
                 msg);
    Py_DECREF(msg);
    PyObject *outer = dfb_err_take();
    PyException_SetCause(outer, exc); /* steals exc */
    dfb_err_give(outer);
}

/* For a pandas DataFrame, whose Arrow stream carries a non-default index
   as extra columns: returns a new list of its own column names (str), so
   the index stays out of the matrix.  Returns NULL without an exception
   for other objects, NULL with one on error. */
static PyObject *
pandas_columns(PyObject *obj)
{
    PyObject *mod =
        PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__module__");
    if (mod == NULL) {
        PyErr_Clear();
        return NULL;
    }
    const char *m = PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    int is_pandas = m != NULL && strncmp(m, "pandas", 6) == 0 &&
                    (m[6] == 0 || m[6] == '.');
    Py_DECREF(mod);
    if (!is_pandas) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *cols = PyObject_GetAttrString(obj, "columns");
    if (cols == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *seq = PySequence_List(cols);
    Py_DECREF(cols);
    if (seq == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(seq); i++) {
        PyObject *it = PyList_GET_ITEM(seq, i);
        if (!PyUnicode_Check(it)) {
            PyObject *str = PyObject_Str(it);
            if (str == NULL) {
                Py_DECREF(seq);
                return NULL;
            }
            PyList_SetItem(seq, i, str);
        }
    }
    return seq;
}

/* ------------------------------------------------------------------ */
/* pandas DataFrame source: its blocks, read in place                   */
/* ------------------------------------------------------------------ */

/* Where one column of a pandas frame is (borrowed from `arr`, which the
   frame's keep list holds). */
typedef struct {
    PyObject *arr;       /* borrowed: the values array (NULL: not seen) */
    const char *data;    /* first value */
    int64_t stride;      /* bytes between values */
    const uint8_t *mask; /* masked arrays: True = missing; or NULL */
    int64_t vstride;
    PyArray_Descr *descr; /* borrowed: the values' dtype */
    int masked;
} pd_src;

/* Returns a new reference to attribute `name` of `obj` when it is exactly
   a 1-D ndarray of `n` elements, NULL with no exception otherwise (any
   exception the lookup raised is cleared: the caller falls back). */
static PyObject *
vector_attr(PyObject *obj, const char *name, npy_intp n)
{
    PyObject *a = PyObject_GetAttrString(obj, name);
    if (a == NULL || !PyArray_CheckExact(a) ||
        PyArray_NDIM((PyArrayObject *)a) != 1 ||
        PyArray_DIM((PyArrayObject *)a, 0) != n) {
        PyErr_Clear();
        Py_XDECREF(a);
        return NULL;
    }
    return a;
}

/* Reads block `blk` of a pandas BlockManager into `src` (ncols entries,
   by column position) and appends what holds its memory to `keep`.
   Returns 0, 1 when the block is not one read here (no exception: the
   caller takes the Arrow path), or -1 with an exception set. */
static int
pandas_block(PyObject *blk, PyObject *masked_types, npy_intp nrows,
             pd_src *src, Py_ssize_t ncols, PyObject *keep)
{
    int r = 1;
    PyObject *locs = NULL, *values = NULL, *data = NULL, *mask = NULL;
    PyObject *pl = PyObject_GetAttrString(blk, "mgr_locs");
    if (pl != NULL) {
        locs = PyObject_GetAttrString(pl, "as_array");
        Py_DECREF(pl);
    }
    values = locs != NULL ? PyObject_GetAttrString(blk, "values") : NULL;
    if (values == NULL || !PyArray_CheckExact(locs) ||
        PyArray_NDIM((PyArrayObject *)locs) != 1 ||
        PyArray_TYPE((PyArrayObject *)locs) != NPY_INTP) {
        PyErr_Clear();
        goto done;
    }
    PyArrayObject *la = (PyArrayObject *)locs;
    npy_intp nloc = PyArray_DIM(la, 0);
    PyArrayObject *va = NULL, *ma = NULL;
    if (PyArray_CheckExact(values)) {
        va = (PyArrayObject *)values;
        if (PyArray_NDIM(va) != 2 || PyArray_DIM(va, 0) != nloc ||
            PyArray_DIM(va, 1) != nrows) {
            goto done;
        }
    }
    else {
        int is_masked = 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(masked_types); i++) {
            is_masked |= (PyObject *)Py_TYPE(values) ==
                         PyTuple_GET_ITEM(masked_types, i);
        }
        if (!is_masked || nloc != 1 ||
            (data = vector_attr(values, "_data", nrows)) == NULL ||
            (mask = vector_attr(values, "_mask", nrows)) == NULL ||
            PyArray_TYPE((PyArrayObject *)mask) != NPY_BOOL) {
            goto done;
        }
        va = (PyArrayObject *)data;
        ma = (PyArrayObject *)mask;
    }
    if (PyList_Append(keep, (PyObject *)va) < 0 ||
        (ma != NULL && PyList_Append(keep, (PyObject *)ma) < 0)) {
        r = -1;
        goto done;
    }
    int nd = PyArray_NDIM(va);
    for (npy_intp i = 0; i < nloc; i++) {
        npy_intp pos;
        memcpy(&pos, PyArray_BYTES(la) + i * PyArray_STRIDE(la, 0),
               sizeof(pos));
        if (pos < 0 || pos >= ncols || src[pos].arr != NULL) {
            goto done; /* not a placement we understand */
        }
        pd_src *s = &src[pos];
        s->arr = (PyObject *)va;
        s->descr = PyArray_DESCR(va);
        s->data =
            PyArray_BYTES(va) + (nd == 2 ? i * PyArray_STRIDE(va, 0) : 0);
        s->stride = PyArray_STRIDE(va, nd - 1);
        s->masked = ma != NULL;
        s->mask = ma != NULL ? (const uint8_t *)PyArray_BYTES(ma) : NULL;
        s->vstride = ma != NULL ? PyArray_STRIDE(ma, 0) : 0;
    }
    r = 0;
done:
    Py_XDECREF(mask);
    Py_XDECREF(data);
    Py_XDECREF(values);
    Py_XDECREF(locs);
    return r;
}

/* Describes column `s` (named `name`) as one chunk `c` (zeroed) with the
   strides in st2[0] (data) and st2[1] (mask).  Returns 0, 1 for a dtype
   the Arrow path should judge (no exception), or -1 with TypeError for
   object, datetime, timedelta and complex columns (naming the column). */
static int
pandas_chunk(const pd_src *s, PyObject *name, int64_t nrows, dfb_column *c,
             int64_t *st2)
{
    const PyArray_Descr *d = s->descr;
    const int isz = (int)PyDataType_ELSIZE(d);
    const char *what = d->kind == 'O'   ? "an object"
                       : d->kind == 'M' ? "a timestamp"
                       : d->kind == 'm' ? "a duration"
                       : d->kind == 'c' ? "a complex"
                                        : NULL;
    if (what != NULL) {
        PyErr_Format(PyExc_TypeError,
                     "column %R has %s type; to_matrix takes bool, integer "
                     "and float columns",
                     name, what);
        return -1;
    }
    if (!PyArray_ISNBO(d->byteorder) || PyDataType_HASFIELDS(d)) {
        return 1;
    }
    switch (d->kind) {
        case 'b':
            c->fmt.type = DFB_T_BOOL8;
            break;
        case 'i':
            c->fmt.type = DFB_T_INT;
            break;
        case 'u':
            c->fmt.type = DFB_T_UINT;
            break;
        case 'f':
            c->fmt.type = DFB_T_FLOAT;
            break;
        default:
            return 1;
    }
    if (isz != 1 && isz != 2 && isz != 4 && isz != 8) {
        return 1;
    }
    if (d->kind == 'f' && isz == 1) {
        return 1;
    }
    c->fmt.bits = 8 * isz;
    c->fmt.byteorder = '=';
    c->length = nrows;
    c->data.ptr = s->data;
    c->data.size = nrows * (int64_t)isz; /* not checked: see st2 */
    if (s->masked) {
        c->null_kind = DFB_NULL_USE_BYTEMASK;
        c->null_value = 1;
        c->null_count = -1;
        c->validity.ptr = (const char *)s->mask;
    }
    else if (d->kind == 'f') {
        /* NaN is pandas' missing float, as its Arrow export says */
        c->null_kind = DFB_NULL_USE_NAN;
        c->null_count = -1;
    }
    else {
        c->null_kind = DFB_NULL_NON_NULLABLE;
        c->null_count = 0;
    }
    st2[0] = s->stride == isz ? 0 : s->stride;
    st2[1] = s->vstride == 1 ? 0 : s->vstride;
    return 0;
}

/* Describes the selected columns of pandas DataFrame `obj` (exactly
   pandas.DataFrame with a block manager) into `out` (zeroed), reading the
   arrays of its numpy blocks and of its masked arrays (Int*, UInt*,
   Float*, boolean) in place; sets *strides to a PyMem array of 2 per
   selected column (data and mask byte strides, 0 when contiguous).
   Returns 0; 1 when `obj` is not such a frame or a selected column is of
   another kind (no exception; `out` and *strides are cleared: the caller
   takes pandas' Arrow export); or -1 with an exception set (TypeError
   naming an object, datetime, timedelta or complex column; the
   selection's). */
static int
pandas_describe_frame(PyObject *obj, PyObject *select, dfb_frame *out,
                      int64_t **strides)
{
    static const char *const masked_names[] = {"IntegerArray", "FloatingArray",
                                               "BooleanArray"};
    *strides = NULL;
    int r = 1;
    PyObject *pd = NULL, *names = NULL, *mgr = NULL, *blocks = NULL;
    PyObject *types = NULL, *keep = NULL, *arrays = NULL;
    pd_src *src = NULL;
    Py_ssize_t *idx = NULL, n = 0;
    PyObject *pdname = PyUnicode_FromString("pandas");
    if (pdname == NULL) {
        return -1;
    }
    pd = PyImport_GetModule(pdname);
    Py_DECREF(pdname);
    if (pd == NULL) {
        return PyErr_Occurred() ? -1 : 1;
    }
    int exact = dfb_pandas_is_frame(obj);
    if (exact <= 0) {
        r = exact < 0 ? -1 : 1;
        goto done;
    }
    arrays = PyObject_GetAttrString(pd, "arrays");
    types = arrays != NULL ? PyTuple_New(3) : NULL;
    for (int i = 0; types != NULL && i < 3; i++) {
        PyObject *t = PyObject_GetAttrString(arrays, masked_names[i]);
        if (t == NULL) {
            Py_CLEAR(types);
            break;
        }
        PyTuple_SET_ITEM(types, i, t);
    }
    if (types == NULL) {
        PyErr_Clear();
        goto done;
    }
    names = pandas_columns(obj);
    if (names == NULL) {
        r = PyErr_Occurred() ? -1 : 1;
        goto done;
    }
    Py_ssize_t ncols = PyList_GET_SIZE(names);
    Py_ssize_t len = PyObject_Size(obj);
    if (len < 0) {
        r = -1;
        goto done;
    }
    mgr = PyObject_GetAttrString(obj, "_mgr");
    blocks = mgr != NULL ? PyObject_GetAttrString(mgr, "blocks") : NULL;
    if (blocks == NULL || !PyTuple_Check(blocks)) {
        PyErr_Clear();
        goto done;
    }
    src = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, sizeof(pd_src));
    keep = PyList_New(0);
    if (src == NULL || keep == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        r = -1;
        goto done;
    }
    for (Py_ssize_t b = 0; b < PyTuple_GET_SIZE(blocks); b++) {
        int rb = pandas_block(PyTuple_GET_ITEM(blocks, b), types, len, src,
                              ncols, keep);
        if (rb != 0) {
            r = rb;
            goto done;
        }
    }
    if (dfb_frame_select(names, select, &idx, &n) < 0) {
        r = -1;
        goto done;
    }
    /* refusals first (they name the column), then anything unread */
    for (Py_ssize_t k = 0; k < n; k++) {
        const pd_src *s = &src[idx[k]];
        char kind = s->arr != NULL ? s->descr->kind : 0;
        if (kind == 'O' || kind == 'M' || kind == 'm' || kind == 'c') {
            dfb_column scratch;
            int64_t st2[2];
            memset(&scratch, 0, sizeof(scratch));
            r = pandas_chunk(s, PyList_GET_ITEM(names, idx[k]), len, &scratch,
                             st2);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (src[idx[k]].arr == NULL) {
            goto done;
        }
    }
    if (dfb_frame_init(out, n) < 0) {
        r = -1;
        goto done;
    }
    Py_DECREF(out->keep);
    out->keep = keep; /* takes the reference */
    keep = NULL;
    out->nrows = len;
    *strides = PyMem_Calloc(n > 0 ? 2 * (size_t)n : 1, sizeof(int64_t));
    if (*strides == NULL) {
        PyErr_NoMemory();
        r = -1;
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        dfb_frame_column *fc = &out->cols[k];
        fc->name = Py_NewRef(PyList_GET_ITEM(names, idx[k]));
        fc->chunks = PyMem_Calloc(2, sizeof(dfb_column));
        if (fc->chunks == NULL) {
            PyErr_NoMemory();
            r = -1;
            goto done;
        }
        fc->nchunks = 1;
        int rc = pandas_chunk(&src[idx[k]], fc->name, len, fc->chunks,
                              *strides + 2 * k);
        if (rc != 0) {
            r = rc;
            goto done;
        }
    }
    r = 0;
done:
    if (r != 0) {
        dfb_frame_clear(out);
        PyMem_Free(*strides);
        *strides = NULL;
    }
    PyMem_Free(idx);
    PyMem_Free(src);
    Py_XDECREF(keep);
    Py_XDECREF(blocks);
    Py_XDECREF(mgr);
    Py_XDECREF(names);
    Py_XDECREF(types);
    Py_XDECREF(arrays);
    Py_DECREF(pd);
    return r;
}

/* to_matrix(obj, *, dtype=None, order="C", nulls="nan", columns=None,
   threads=None).  Returns a new array (MaskedArray for nulls="mask"), or
   NULL with an exception set. */
static PyObject *
to_matrix(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
          PyObject *kwnames)
{
    static const char *const kw[] = {"obj",     "dtype",   "order", "nulls",
                                     "columns", "threads", NULL};
    static const dfb_argspec spec = {"to_matrix", kw, 1, 1};
    static const char *const orders[] = {"C", "F", NULL};
    static const char *const modes[] = {"nan", "raise", "mask", NULL};
    PyObject *a[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    PyObject *obj = a[0], *o_dtype = a[1], *o_order = a[2], *o_nulls = a[3];
    PyObject *o_cols = a[4], *o_threads = a[5];
    int order = parse_choice(o_order, "order", orders, 0);
    if (order < 0) {
        return NULL;
    }
    int mode = parse_choice(o_nulls, "nulls", modes, 0);
    if (mode < 0) {
        return NULL;
    }
    int nthreads = 0;
    if (o_threads != NULL && o_threads != Py_None) {
        if (!PyLong_Check(o_threads) || PyBool_Check(o_threads)) {
            PyErr_Format(PyExc_TypeError,
                         "threads must be an int or None, "
                         "not %.100s",
                         Py_TYPE(o_threads)->tp_name);
            return NULL;
        }
        long v = PyLong_AsLong(o_threads);
        if (v == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (v < 1) {
            PyErr_Format(PyExc_ValueError, "threads must be >= 1, got %ld", v);
            return NULL;
        }
        nthreads = v > MAX_THREADS ? MAX_THREADS : (int)v;
    }
    int dst = -1;
    PyArray_Descr *descr = NULL;
    if (parse_dtype(o_dtype, &dst, &descr) < 0) {
        return NULL;
    }

    dfb_frame fr;
    memset(&fr, 0, sizeof(fr));
    fr.nrows = -1;
    mcol *cols = NULL;
    mchunk *all = NULL;
    int64_t nrows = -1;
    PyArray_Descr *promoted = NULL;
    PyObject *out = NULL, *mask = NULL, *res = NULL;
    PyObject *own = NULL;
    int64_t *pd_strides = NULL;
    int r = pandas_describe_frame(obj, o_cols, &fr, &pd_strides);
    if (r == 0) {
        goto described;
    }
    if (r == 1) {
        r = dfb_arrow_is_producer(obj);
    }
    if (r == 1 && (o_cols == NULL || o_cols == Py_None)) {
        own = pandas_columns(obj);
        if (own == NULL && PyErr_Occurred()) {
            r = -1;
        }
    }
    if (r == 1) {
        r = dfb_arrow_describe_frame(st, obj, own != NULL ? own : o_cols, &fr);
    }
    else if (r == 0) {
        r = dfb_ix_describe_frame(st, obj, o_cols, &fr);
        if (r == 1) {
            PyErr_Format(PyExc_TypeError,
                         "to_matrix() expects an object with __dataframe__, "
                         "an interchange DataFrame or an Arrow PyCapsule "
                         "producer, got %.200s",
                         Py_TYPE(obj)->tp_name);
            r = -1;
        }
    }
    if (r < 0) {
        unsupported_to_type_error();
        goto done;
    }

described:
    /* plan every chunk; promote */
    Py_ssize_t ncols = fr.ncols, total_chunks = 0;
    for (Py_ssize_t j = 0; j < ncols; j++) {
        total_chunks += fr.cols[j].nchunks;
    }
    cols = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, sizeof(mcol));
    all = PyMem_Calloc(total_chunks > 0 ? (size_t)total_chunks : 1,
                       sizeof(mchunk));
    if (cols == NULL || all == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0, at = 0; j < ncols; j++) {
        const dfb_frame_column *fc = &fr.cols[j];
        cols[j].chunks = all + at;
        cols[j].n = fc->nchunks;
        at += fc->nchunks;
        int64_t len = 0;
        int coltype = -1; /* NumPy type of the column; null-type chunks
                             take no part */
        for (Py_ssize_t k = 0; k < fc->nchunks; k++) {
            const dfb_column *c = &fc->chunks[k];
            mchunk *mc = &cols[j].chunks[k];
            int tn;
            if (plan_chunk(c, fc->name, descr != NULL, mc, &tn) < 0) {
                goto fail_promote;
            }
            if (pd_strides != NULL) {
                /* a pandas array, checked when read: strides instead */
                mc->stride = pd_strides[2 * j];
                mc->vstride = pd_strides[2 * j + 1];
            }
            else if (dfb_column_validate(c) < 0) {
                add_name(fc->name);
                goto fail_promote;
            }
            mc->start = len;
            len += c->length;
            if (c->fmt.type == DFB_T_NULL || tn == coltype) {
                continue;
            }
            if (coltype < 0) {
                coltype = tn;
                continue;
            }
            PyArray_Descr *a = PyArray_DescrFromType(coltype);
            PyArray_Descr *b = PyArray_DescrFromType(tn);
            PyArray_Descr *pr = PyArray_PromoteTypes(a, b);
            Py_DECREF(a);
            Py_DECREF(b);
            if (pr == NULL) {
                goto fail_promote;
            }
            coltype = pr->type_num;
            Py_DECREF(pr);
        }
        if (coltype < 0) {
            coltype = NPY_BOOL; /* only null-type chunks */
        }
        if (nrows < 0) {
            nrows = len;
        }
        else if (len != nrows) {
            PyErr_Format(PyExc_ValueError,
                         "columns have different lengths: column %R has "
                         "%lld rows, column %R has %lld",
                         fr.cols[0].name, (long long)nrows, fc->name,
                         (long long)len);
            goto fail_promote;
        }
        if (descr == NULL) {
            /* the null counts decide whether bools/ints become float64 */
            int64_t nn = 0;
            if (mode == 0 &&
                (PyTypeNum_ISBOOL(coltype) || PyTypeNum_ISINTEGER(coltype))) {
                Py_BEGIN_ALLOW_THREADS for (Py_ssize_t k = 0; k < fc->nchunks;
                                            k++)
                {
                    mchunk *mc = &cols[j].chunks[k];
                    if (mc->nnull < 0) {
                        mc->nnull = count_nulls(mc);
                    }
                    nn += mc->nnull;
                }
                Py_END_ALLOW_THREADS if (nn > 0) { coltype = NPY_FLOAT64; }
            }
            PyArray_Descr *cd = PyArray_DescrFromType(coltype);
            if (promoted == NULL) {
                promoted = cd;
            }
            else {
                PyArray_Descr *p = PyArray_PromoteTypes(promoted, cd);
                Py_DECREF(cd);
                Py_DECREF(promoted);
                promoted = p;
                if (p == NULL) {
                    goto fail_promote;
                }
            }
        }
    }
    if (descr == NULL) {
        descr =
            promoted != NULL ? promoted : PyArray_DescrFromType(NPY_FLOAT64);
        promoted = NULL;
        dst = dst_of(descr);
        if (dst < 0) {
            PyErr_Format(PyExc_TypeError,
                         "the columns promote to %R, which to_matrix cannot "
                         "write",
                         (PyObject *)descr);
            goto done;
        }
    }
    if (nrows < 0) {
        nrows = fr.nrows >= 0 ? fr.nrows : 0;
    }
    /* the plan holds all the fill needs: drop the descriptions before the
       output exists (the keep list still holds the memory) */
    for (Py_ssize_t j = 0; j < ncols; j++) {
        PyMem_Free(fr.cols[j].chunks);
        fr.cols[j].chunks = NULL;
    }
    int is_float = dst == D_F16 || dst == D_F32 || dst == D_F64;
    if (mode != 2 && check_nulls(cols, ncols, &fr, mode, is_float) < 0) {
        goto done;
    }

    /* the one allocation (plus the mask) */
    npy_intp dims[2] = {(npy_intp)nrows, (npy_intp)ncols};
    int fortran = order == 1;
    Py_INCREF(descr);
    int reused = 0;
    out = new_output(descr, dims, fortran, &reused);
    if (out == NULL) {
        goto done;
    }
    if (mode == 2) {
        mask =
            PyArray_Zeros(2, dims, PyArray_DescrFromType(NPY_BOOL), fortran);
        if (mask == NULL) {
            goto done;
        }
    }
    static const int same_src[D_N] = {-1,    S_I8, S_I16, S_I32,
                                      S_I64, S_U8, S_U16, S_U32,
                                      S_U64, -1,   S_F32, S_F64};
    for (Py_ssize_t i = 0; i < total_chunks; i++) {
        all[i].same = all[i].read == R_DIRECT && all[i].stride == 0 &&
                      all[i].st == same_src[dst];
    }
    mplan plan;
    plan.cols = cols;
    plan.ncols = ncols;
    plan.nrows = nrows;
    plan.dst = dst;
    plan.isz = (int)PyDataType_ELSIZE(descr);
    plan.is_float = is_float;
    plan.fill_nan = mode == 0;
    plan.corder = !fortran && ncols > 1;

    plan.out = PyArray_DATA((PyArrayObject *)out);
    plan.mask = mask ? PyArray_DATA((PyArrayObject *)mask) : NULL;
    /* cache block: a group of <= 64 columns times enough rows for ~128 KiB
       of output (L2-resident; measured against 16 KiB - 1 MiB), at least
       16 rows; row-major blocks of up to 1 MiB are staged */
    plan.cgroup = ncols < 64 ? (ncols > 0 ? ncols : 1) : 64;
    plan.rblock = (128 * 1024) / ((int64_t)plan.cgroup * plan.isz);
    if (plan.rblock < 16) {
        plan.rblock = 16;
    }
    plan.stage_bytes = plan.rblock * (int64_t)ncols * plan.isz;
    if (!plan.corder || plan.stage_bytes > 1024 * 1024) {
        plan.stage_bytes = 0;
    }
    int64_t bytes = nrows * (int64_t)ncols * plan.isz;
    /* non-temporal stores into a large reused block (docs/performance.md:
       into fresh pages, which the kernel has just zeroed through the cache,
       plain stores cost less CPU) */
    plan.nt_min =
        !plan.corder && reused && bytes >= (int64_t)OUT_BIG ? NT_MIN : 0;
    int cpus = cpu_count();
    int nt = nthreads > 0 ? nthreads : (int)(bytes / (1 << 20)) + 1;
    if (nt > cpus) {
        nt = cpus;
    }
    if (nt > MAX_THREADS) {
        nt = MAX_THREADS;
    }
    if (bytes > 0) {
        Py_BEGIN_ALLOW_THREADS run_plan(&plan, nt);
        Py_END_ALLOW_THREADS
    }
    if (mode == 2) {
        if (st->ma_masked_array == NULL) {
            PyObject *ma = PyImport_ImportModule("numpy.ma");
            if (ma == NULL) {
                goto done;
            }
            st->ma_masked_array = PyObject_GetAttrString(ma, "MaskedArray");
            Py_DECREF(ma);
            if (st->ma_masked_array == NULL) {
                goto done;
            }
        }
        PyObject *margs[2] = {out, mask};
        res = PyObject_Vectorcall(st->ma_masked_array, margs, 2, NULL);
    }
    else {
        res = Py_NewRef(out);
    }
    goto done;
fail_promote:
    Py_XDECREF(promoted);
done:
    Py_XDECREF(out);
    Py_XDECREF(mask);
    Py_XDECREF(descr);
    PyMem_Free(all);
    PyMem_Free(cols);
    Py_XDECREF(own);
    PyMem_Free(pd_strides);
    dfb_frame_clear(&fr);
    return res;
}

/* to_matrix's entry: pandas' interchange object is read through the
   pandas frame behind it (its own buffers drop the slice offset of
   Arrow-backed columns, P-26); everything else as it is.  Returns what
   to_matrix returns. */
static PyObject *
to_matrix_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    int unused = 1;
    PyObject *frame =
        nargs >= 1 ? dfb_pandas_frame_behind(args[0], &unused) : NULL;
    if (frame == NULL) {
        return PyErr_Occurred() ? NULL
                                : to_matrix(module, args, nargs, kwnames);
    }
    Py_ssize_t n = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject **copy = PyMem_Malloc((size_t)n * sizeof(PyObject *));
    if (copy == NULL) {
        Py_DECREF(frame);
        return PyErr_NoMemory();
    }
    memcpy(copy, args, (size_t)n * sizeof(PyObject *));
    copy[0] = frame;
    PyObject *res = to_matrix(module, copy, nargs, kwnames);
    PyMem_Free(copy);
    Py_DECREF(frame);
    return res;
}

PyMethodDef dfb_matrix_methods[] = {
    {"to_matrix", (PyCFunction)(void (*)(void))to_matrix_entry,
     METH_FASTCALL | METH_KEYWORDS, to_matrix_doc},
    {NULL},
};
