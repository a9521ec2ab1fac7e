/* dfbuffer: the interface of ops/matrix/: to_matrix: one 2-D array from a
 * frame's described columns: the plan, the fill kernels and their thread
 * pool, the output allocator, the mapping and pandas sides, and a stream read
 * group by group.
 */
#ifndef DFBUFFER_MATRIX_H
#define DFBUFFER_MATRIX_H

#include "common.h"
#include "model.h"
#include "pandas.h"

#include <stdint.h>

/* ---- matrix.c ---- */

/* Module-level functions of matrix.c (to_matrix), added by module init. */
extern PyMethodDef dfb_matrix_methods[];

/* ---- the plan of one to_matrix call, shared by its files: matrix.c (entry
 * point and planning), matrix_fill.c (the fill kernels and the thread pool),
 * matrix_alloc.c (the output allocator and its reaper), matrix_pandas.c (the
 * pandas frame reader) and matrix_mapping.c (the mapping reader). ---- */

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

/* ---- matrix_alloc.c ---- */

/* Returns a new uninitialised array of `descr` (stolen) and `dims`
   (C order, or Fortran when `fortran`), from the kept-memory allocator
   when it is large; *reused is 1 when its memory was kept from an earlier
   output.  NULL with an exception set on failure. */
PyObject *
dfb_matrix_new_output(PyArray_Descr *descr, npy_intp *dims, int fortran,
                      int *reused);

/* The bytes of the block kept for the next large output (its pages in
   place), 0 when none is kept: a stream of unknown length sizes its first
   output to take it.  Cannot fail. */
size_t
dfb_matrix_kept_bytes(void);

/* ---- matrix_fill.c ---- */

/* Counts the nulls of chunk `c` (the whole chunk).  Cannot fail; touches
   no Python object (runs without the GIL). */
int64_t
dfb_matrix_count_nulls(const mchunk *c);

/* Sets the cache blocking of plan `p` (its other fields filled; `reused`:
   the output is a reused block, see dfb_matrix_new_output) and returns the
   number of threads to fill it with (`nthreads`, or one per
   THREAD_MIN_BYTES of output when 0, at least 1; at most the CPUs this
   process may use, dfb_usable_cpus, and MAX_THREADS).  Cannot fail. */
int
dfb_matrix_prepare(mplan *p, int nthreads, int reused);

/* Fills the whole output of plan `p` with `nt` threads.  Call without the
   GIL.  Cannot fail. */
void
dfb_matrix_run(const mplan *p, int nt);

/* ---- matrix_mapping.c ---- */

/* Describes the selected values (`select`, NULL or None: all) of mapping
   `obj` into `out` (zeroed; clear it always), its items taken once: a
   pandas Series, ExtensionArray or interchange Column as the column of a
   one-column pandas frame (dfb_matrix_pandas_describe; `flatten` gives a
   struct's leaves), an Arrow array (one chunk), an ndarray (a masked
   array's mask its nulls) or anything Buffer.from_object reads, in place;
   *strides: a PyMem array of one per column.  With `skip` a value of a type
   to_matrix does not take is left out.  Returns 0, or -1 with an exception
   set naming the column (ValueError for columns of different lengths, a
   value not 1-D; TypeError for a list or no column). */
int
dfb_matrix_mapping_describe(dfb_state *st, PyObject *obj, PyObject *select,
                            int flatten, int ordinal, int skip, dfb_frame *out,
                            mstrides **strides);

/* ---- matrix_pandas.c ---- */

/* For a pandas DataFrame, whose Arrow stream carries a non-default index
   as extra columns: a new list of its own column names (str); NULL
   without an exception for other objects, NULL with one on error. */
PyObject *
dfb_matrix_pandas_columns(PyObject *obj);

/* Describes NumPy-stored column `s` (named `name`, `nrows` values) as one
   chunk `c` (zeroed) with its real byte strides (any sign, 0 too) in *ms.
   Returns 0, 1 for a dtype no plan reads in place (no exception: a
   non-native byte order, fields, an odd size), or -1 with TypeError naming
   the column for object, datetime, timedelta and complex values. */
int
dfb_matrix_numpy_chunk(const dfb_pd_column *s, PyObject *name, int64_t nrows,
                       dfb_column *c, mstrides *ms);

/* Appends the columns of `sub` to `out` (their chunks moved; `sub`'s keep
   list kept by `out`'s), with their strides `sst` (NULL: contiguous) in
   *strides; *room is the columns allocated in `out` and *strides, grown as
   needed.  Returns 0, or -1 with an exception set. */
int
dfb_matrix_frame_append(dfb_frame *out, mstrides **strides, Py_ssize_t *room,
                        dfb_frame *sub, const mstrides *sst);

/* Describes 1-D ndarray `arr` (with `mask`, a 1-D bool array of its
   length, 1 a null, or NULL) as the one column `name` of `sub` (zeroed;
   clear it always), both arrays kept, its strides in *strides (PyMem, one).
   Returns 0, or -1 with an exception set: TypeError naming the column and
   its `what` ("NumPy", "pandas") dtype for one to_matrix does not take,
   ValueError when the arrays are not so. */
int
dfb_matrix_array_frame(PyObject *arr, PyObject *mask, PyObject *name,
                       const char *what, dfb_frame *sub, mstrides **strides);

/* Describes the selected columns (`select`, NULL or None: all) of pandas
   DataFrame `obj` (exactly pandas.DataFrame) into `out` (zeroed; clear it
   always), never its index: NumPy and masked columns in place from the
   manager read once (*strides: a PyMem array of one per described column,
   or NULL), the others as the reader of the rest of the frame gives them;
   `flatten`, `ordinal`, `skip` as dfb_arrow_describe_frame takes them.
   Returns 0, or -1 with an exception set (TypeError naming a refused
   column). */
int
dfb_matrix_pandas_describe(dfb_state *st, PyObject *obj, PyObject *o_cols,
                           int flatten, int ordinal, int skip, dfb_frame *out,
                           mstrides **strides);

#endif /* DFBUFFER_MATRIX_H */
