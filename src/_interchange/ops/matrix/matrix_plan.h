/* dfbuffer: the plan of one to_matrix call, shared by its files:
 * matrix.c (entry point and planning), matrix_fill.c (the fill kernels and
 * the thread pool), matrix_alloc.c (the output allocator and its reaper),
 * matrix_pandas.c (the pandas frame reader) and matrix_mapping.c (the
 * mapping reader).
 */
#ifndef DFBUFFER_MATRIX_PLAN_H
#define DFBUFFER_MATRIX_PLAN_H

#include "common.h"

#include <stdint.h>

/* Native source types of the loops (bools arrive as U8 0/1, float16 as
   its bits, byte-swapped values as their native type: see read kinds). */
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
    S_F16, /* IEEE half bits: moved as bits into float16, widened as
              NumPy's astype widens them (NaN payloads kept) */
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
    R_DIRECT, /* native values, read in place */
    R_SWAP,   /* byte-swapped values, swapped into scratch */
    R_BITS,   /* bit-packed bools, unpacked into scratch */
    R_BOOL8,  /* bytes, normalised to 0/1 in scratch */
    R_ZERO    /* Arrow null type: zeros */
};

/* Null kinds of a chunk as the loops see them. */
enum { NK_NONE, NK_NAN, NK_SENT, NK_BITS, NK_BYTES, NK_ALL };

/* Elements per conversion step (bounded scratch on each thread's stack). */
#define PIECE 1024

/* Shortest copy of a column run that uses non-temporal stores, when the
   plan asks for them (bytes). */
#define NT_MIN 4096

/* The most threads one fill uses. */
#define MAX_THREADS 64
/* Bytes of output per thread of a fill with threads=None: a smaller
   output is filled on the calling thread alone (docs/performance.md). */
#define THREAD_MIN_BYTES ((int64_t)8 << 20)

/* Outputs of at least OUT_BIG bytes take the kept-memory allocator
   (matrix_alloc.c). */
#define OUT_BIG ((size_t)16 << 20)

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
    int64_t stride;     /* bytes between stored values, any sign, 0 too
                           (a pandas view may be strided, reversed or
                           broadcast); == isz when contiguous */
    int64_t vstride;    /* bytes between NK_BYTES mask bytes, any sign,
                           0 too; 1 when contiguous */
} mchunk;

typedef struct {
    mchunk *chunks;
    Py_ssize_t n;
} mcol;

/* The byte strides of one described column's values and byte mask, as a
   NumPy or pandas view has them (any sign, 0 too: checked where read, so
   the plan does not validate the column); `given` 0: contiguous, the
   column's buffers validated against its description. */
typedef struct {
    int64_t data;
    int64_t mask;
    int given;
} mstrides;

typedef struct {
    const mcol *cols;
    Py_ssize_t ncols;
    int64_t nrows;
    int dst;       /* D_* */
    int isz;       /* output itemsize */
    int is_float;  /* output is a float type */
    int fill_nan;  /* write NaN into null slots (nulls="fill") */
    int corder;    /* row-major output */
    char *out;     /* the first output row of this fill */
    int64_t ld;    /* column-major: rows from one column's start to the
                      next's (0: nrows); a stream's output is taller than
                      the rows of one fill */
    uint8_t *mask; /* NULL unless nulls="mask" */
    int64_t rblock;
    Py_ssize_t cgroup;
    int64_t stage_bytes; /* row-major: bytes of one staged block, or 0 */
    int64_t nt_min;      /* column-major: copies of at least this many bytes
                            use non-temporal stores (0: never) */
} mplan;

#endif /* DFBUFFER_MATRIX_PLAN_H */
