/* dfbuffer: the one pandas frame reader (pandas_frame.c): the one test "is
 * this a pandas frame", the frame behind pandas' interchange objects, and a
 * frame's columns read once from its block manager, for from_dataframe
 * (pandas_fast.c), to_matrix (matrix_pandas.c) and dfbuffer.pandas
 * (_pandas_frame).
 */
#ifndef DFBUFFER_PANDAS_FRAME_H
#define DFBUFFER_PANDAS_FRAME_H

#include "common.h"

#include <stdint.h>

/* THE test "is this a pandas frame": 1 if `obj` is exactly a
   pandas.DataFrame (pandas already imported; nothing is imported), 0 if
   not, -1 with an exception set. */
int
dfb_pandas_is_frame(PyObject *obj);

/* 1 if `obj` is exactly a pandas.Series (pandas already imported; nothing
   is imported), 0 if not, -1 with an exception set. */
int
dfb_pandas_is_series(PyObject *obj);

/* `res` (stolen; NULL passes an error on) as the result of pandas method
   `what`, which must give a pandas DataFrame: returns it, or NULL with
   TypeError ("<what> did not return a pandas DataFrame") when it is
   something else, or with the check's own error. */
PyObject *
dfb_pandas_frame_result(PyObject *res, const char *what);

/* A new reference to the pandas DataFrame behind `obj`: `obj` itself when
   dfb_pandas_is_frame says so, or the frame an exact pandas interchange
   DataFrame object wraps (its `_df`), clearing *allow_copy when that
   object forbids copies.  NULL without an exception for anything else,
   NULL with one on error. */
PyObject *
dfb_pandas_frame_behind(PyObject *obj, int *allow_copy);

/* For an exact pandas interchange Column object, a new one-column
   DataFrame of the Series behind it (Series.to_frame(), no copy), clearing
   *allow_copy when the column forbids copies.  NULL without an exception
   for anything else, NULL with one on error. */
PyObject *
dfb_pandas_column_frame(PyObject *obj, int *allow_copy);

/* For an exact pandas Series whose values pandas' Arrow export would
   mangle or refuse (a Period, Interval, complex or object dtype), a new
   one-column DataFrame of it (Series.to_frame(), no copy), read as a frame
   column is read.  NULL without an exception for anything else, NULL with one
   on error. */
PyObject *
dfb_pandas_series_frame(PyObject *obj);

/* For a pandas ExtensionArray (Categorical, DatetimeArray, IntegerArray,
   ...; pandas already imported), a new one-column DataFrame over it
   (pandas.Series(obj, copy=False).to_frame()), read as a frame column is
   read.  NULL without an exception for anything else, NULL with one on
   error. */
PyObject *
dfb_pandas_array_frame(PyObject *obj);

/* 1 if the index of pandas frame `frame` is exactly a pandas.RangeIndex
   (pandas' Arrow export then adds no index column), 0 if not, -1 with an
   exception set. */
int
dfb_pandas_has_range_index(PyObject *frame);

/* A new list of the column names of pandas frame `obj` (`obj.columns`,
   each label as str: an exact str as it is, anything else str(label)), or
   NULL with an exception set. */
PyObject *
dfb_pandas_frame_names(PyObject *obj);

/* How one column of a pandas frame is stored. */
enum {
    DFB_PD_OTHER = 0,  /* not read: an extension array other than below */
    DFB_PD_NUMPY = 1,  /* a row of a NumPy block (datetime64 and
                          timedelta64 ones too: the ndarray behind a
                          tz-naive DatetimeArray / TimedeltaArray) */
    DFB_PD_MASKED = 2, /* IntegerArray, FloatingArray, BooleanArray: the
                          1-D `_data` and its bool `_mask` (1 = missing) */
};

/* One column of a read frame.  Every pointer stays valid while the frame's
   `keep` list lives (it holds `array` and the mask's array). */
typedef struct {
    int kind;             /* DFB_PD_* */
    PyObject *array;      /* borrowed from keep: the ndarray holding the
                             values (a 2-D block or a 1-D `_data`) */
    PyArray_Descr *descr; /* borrowed from `array`: the values' dtype */
    const char *data;     /* the first value */
    int64_t stride;       /* bytes between values (any sign, 0 too) */
    const uint8_t *mask;  /* DFB_PD_MASKED: the first mask byte */
    int64_t mstride;      /* bytes between mask bytes */
    Py_ssize_t block;     /* the block's position in the manager's blocks */
    Py_ssize_t row;       /* the column's row in that block (0 for 1-D) */
} dfb_pd_column;

/* A pandas frame read once. */
typedef struct {
    PyObject *mgr;       /* strong: the frame's `_mgr`, read once */
    PyObject *names;     /* strong: list of str, mgr.axes[0] */
    PyObject *keep;      /* strong: list of every array pointed into */
    Py_ssize_t ncols;    /* len(names) */
    int64_t nrows;       /* len(mgr.axes[1]), read before the blocks */
    int all_read;        /* 1 when every block was of a kind read here */
    dfb_pd_column *cols; /* PyMem, ncols entries (all DFB_PD_OTHER when
                            the block manager is not one read here) */
} dfb_pd_frame;

/* Reads pandas frame `obj` into `out` (zeroed by the caller; clear it
   always): `obj._mgr` once, then everything from that manager (another
   thread may swap the frame's): names and length from its `axes` first,
   then its `blocks` (or, for
   pandas 2's ArrayManager, its `arrays`: one 1-D array per column), each
   block's
   `mgr_locs.as_array` (exactly a 1-D intp ndarray) and `values`, every
   array checked (exactly an ndarray, the frame's length, each position
   seen once) and held.  A manager or block that lies (shapes, positions,
   types, an attribute that raises) leaves every column DFB_PD_OTHER.
   Returns 0, 1 when `obj` is not exactly a pandas DataFrame (nothing read,
   no exception), or -1 with an exception set (names, length). */
int
dfb_pd_frame_read(PyObject *obj, dfb_pd_frame *out);

/* A new reference to a pandas DataFrame over `f`'s manager (read from
   pandas frame `obj`): pandas.DataFrame._from_mgr(f->mgr, axes), so that
   whatever is read of it later is what `f` read even if another thread
   swaps `obj`'s manager; `obj` itself on a pandas without _from_mgr.  NULL
   with an exception set on error. */
PyObject *
dfb_pd_frame_snapshot(const dfb_pd_frame *f, PyObject *obj);

/* A new reference to a pandas DataFrame over the manager of pandas frame
   `obj` (exactly a pandas.DataFrame), read once: `obj._mgr` once, then
   pandas.DataFrame._from_mgr(mgr, mgr.axes) with `obj`'s attrs, so that
   its names, dtypes and columns, however many times they are read, all
   come from that one manager even if another thread sets `obj`'s since
   (a manager changed in place, as DataFrame.insert changes it, is
   pandas' own race); `obj` itself on a pandas without _from_mgr.  NULL
   with an exception set. */
PyObject *
dfb_pd_frame_pin(PyObject *obj);

/* Releases what `f` holds and zeroes it.  Cannot fail. */
void
dfb_pd_frame_clear(dfb_pd_frame *f);

/* A new read-only 1-D ndarray over the values of column `i` of `f` (kind
   DFB_PD_NUMPY or DFB_PD_MASKED; its base the array that holds them), or
   NULL with an exception set. */
PyObject *
dfb_pd_column_view(const dfb_pd_frame *f, Py_ssize_t i);

/* The private _pandas_frame, added by module init. */
extern PyMethodDef dfb_pandas_frame_methods[];

#endif /* DFBUFFER_PANDAS_FRAME_H */
