/* dfbuffer: a whole dataframe described as dfb_column chunks, for consumers
 * that read several columns at once (to_matrix in matrix.c).
 *
 * ixwalk.c fills it from an interchange DataFrame, arrow_convert.c from an
 * Arrow PyCapsule producer; both reuse their column walks (walk_chunk,
 * describe_node), so a frame column is described exactly as the converters
 * describe it.
 */
#ifndef DFBUFFER_FRAME_H
#define DFBUFFER_FRAME_H

#include "common.h"
#include "column.h"

/* One selected column: its chunks in order. */
typedef struct {
    PyObject *name;     /* strong: the column name as str */
    dfb_column *chunks; /* PyMem, 2 * nchunks entries: the chunks, then the
                           categories each DICTIONARY chunk points to */
    Py_ssize_t nchunks; /* >= 1 (an empty column has one empty chunk) */
} dfb_frame_column;

/* The selected columns of a frame.  Every pointer in the chunks stays valid
   while `keep` lives (format tz pointers are cleared: not kept). */
typedef struct {
    Py_ssize_t ncols;
    int64_t nrows;          /* rows when the producer says, else -1 (the
                               shape of a frame without columns) */
    dfb_frame_column *cols; /* PyMem, ncols entries */
    PyObject *keep;         /* strong: a list of what keeps memory alive */
} dfb_frame;

/* Allocates `f` for `ncols` columns (zeroed chunks, an empty keep list).
   Returns 0, or -1 with MemoryError; clear `f` either way. */
int
dfb_frame_init(dfb_frame *f, Py_ssize_t ncols);

/* Releases everything `f` holds and zeroes it.  Cannot fail. */
void
dfb_frame_clear(dfb_frame *f);

/* Removes column `k` of `f` (its name and chunks released, the columns
   after it moved down one; the keep list stays).  Cannot fail. */
void
dfb_frame_drop(dfb_frame *f, Py_ssize_t k);

/* The texts of the columns= errors, the same in every function: a bare
   str (TypeError), not a sequence (TypeError), an unknown name (KeyError,
   a %R of the name), a name several columns share (ValueError, %R). */
#define DFB_COLUMNS_STR_ERROR \
    "columns must be a sequence of column names, not a single string"
#define DFB_COLUMNS_SEQ_ERROR "columns must be a sequence of column names"
#define DFB_COLUMNS_KEY_ERROR "column %R is not in the frame"
#define DFB_COLUMNS_AMBIGUOUS_ERROR \
    "column name %R is ambiguous: several columns have it"

/* Resolves the `columns=` selection `select` (NULL or None: all, in order;
   else a sequence of names, non-str items compared as str()) against
   `names` (a list of str).  Sets *idx to a PyMem array of *n indices into
   `names`.  Returns 0, or -1 with TypeError (not a sequence / a bare str),
   KeyError (unknown name) or ValueError (a name that is duplicated in the
   frame). */
int
dfb_frame_select(PyObject *names, PyObject *select, Py_ssize_t **idx,
                 Py_ssize_t *n);

#endif /* DFBUFFER_FRAME_H */
