/* dfbuffer: the interface of readers/pandas/: the one pandas reader: a
 * frame's manager read once, its blocks and extension arrays described into
 * the column model, the front end's blocks and from_dataframe's fast path.
 */
#ifndef DFBUFFER_PANDAS_H
#define DFBUFFER_PANDAS_H

#include "common.h"
#include "args.h"

#include <stdint.h>

/* ---- pandas_block.c ---- */

/* the private _pandas_arrow_block, _rows_block and
   _stringdtype_arrow, added by module init. */
extern PyMethodDef dfb_pandas_methods[];

/* ---- pandas_columns.c ---- */

/* Reads one-column pandas frame `df` as from_dataframe reads a pandas
   frame (its block reader): a new dict name -> array, or NULL with an
   exception set (NULL without one: not a frame read there). */
typedef PyObject *(*dfb_pd_frame_reader)(dfb_state *st, PyObject *df,
                                         const dfb_opts *opts, int allow_copy);

/* pandas Period objects of the int64 ordinals `values` (a converted Arrow
   column of pandas' "pandas.period" type, masked or, with nulls="fill",
   float64 with NaN; borrowed) of column `name`, its frequency in `meta`
   (the extension metadata, {"freq": ...}; NULL: none, meta_len bytes):
   nulls become None (masked when `values` was).  CopyError under
   !allow_copy, NotImplementedError naming the column without pandas or a
   frequency.  Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_pd_periods_from_ordinals(dfb_state *st, const char *name, PyObject *values,
                             const char *meta, int32_t meta_len,
                             int allow_copy);

/* pandas Interval objects of the bounds `left` and `right` (the converted
   children of an Arrow column `name` of pandas' "pandas.interval" type, 1-D
   arrays of one length with NaN / NaT / None where null; borrowed), closed
   on the side its extension metadata `meta` (JSON {"closed": ...}, NULL:
   none, meta_len bytes) names ("right" when it names none), as pandas'
   IntervalArray.from_arrays makes them: an object array, None where both
   bounds are null, masked, filled or refused by `mode` as any object
   column.  CopyError under !allow_copy, NotImplementedError naming the
   column without pandas or for bounds pandas refuses.  Returns a new
   reference, or NULL with an exception set. */
PyObject *
dfb_pd_intervals_from_bounds(dfb_state *st, const char *name, PyObject *left,
                             PyObject *right, const char *meta,
                             int32_t meta_len, dfb_nulls_mode mode,
                             int allow_copy);

/* For each column position in `positions` (a list of ints) of pandas
   frame `frame`: its array read from pandas' own arrays, Py_None for the
   caller's Arrow export, or Py_Ellipsis when on_unsupported="skip" drops
   it.  Read here: Period, Interval and Sparse columns always, every other
   extension column when pyarrow cannot be imported; `read_frame` reads a
   one-column frame of a NumPy array.  Under !allow_copy a column whose
   values must be made anew raises CopyError naming it.  Returns a new
   list as long as `positions`, or NULL with an exception set. */
PyObject *
dfb_pd_columns_convert(dfb_state *st, PyObject *frame, PyObject *positions,
                       const dfb_opts *opts, int allow_copy,
                       dfb_pd_frame_reader read_frame);

/* ---- pandas_fast.c ---- */

/* from_dataframe for a pandas.DataFrame (exact type, any index):
   numpy-backed numeric and object columns, as the pandas frame reader
   (pandas_frame.c) reads them from the blocks, are wrapped without a copy
   (float NaN stays in the values in "mask" and "fill" modes); the other
   columns are read from pandas' own arrays (pandas_columns.c) or go through
   pandas' Arrow export of the sub-frame.  Returns a new dict, NULL with an
   exception set, or NULL *without* an exception when `obj` is not such a frame
   (the caller then takes its usual path). */
PyObject *
dfb_pandas_from_dataframe(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                          int allow_copy);

/* The fast path of a pandas.Series (exact type) whose values are a 1-D
   NumPy array (`Series._values`: every NumPy dtype but datetime64 and
   timedelta64, which pandas wraps) or pandas' nullable Int / UInt / Float
   array: *out = the array from_dataframe gives for the column of its
   one-column frame, read as that frame's block is (a read-only zero-copy
   view; NaN kept in a float column; an object column's missing items
   masked; a nullable array's values viewed, its mask copied), without
   building the frame.  "raise"
   mode and other values take the frame's path (the caller's).  Returns 1
   with *out set (a new reference), 2 with *out NULL for a pandas Series
   not read here, 0 with *out NULL for anything but a pandas Series, -1
   with an exception set. */
int
dfb_pandas_series_fast(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                       PyObject **out);

/* ---- pandas_frame.c ---- */

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

/* from_dataframe of pandas DataFrame `frame` (pandas_fast.c): its
   numpy-backed columns in place, the rest through its Arrow export.
   Returns a new dict or NULL with an exception set. */
PyObject *
dfb_pandas_frame_dict(dfb_state *st, PyObject *frame, const dfb_opts *opts,
                      int allow_copy);

#endif /* DFBUFFER_PANDAS_H */
