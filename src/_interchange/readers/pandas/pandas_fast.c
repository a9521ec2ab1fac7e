/* dfbuffer: from_dataframe's fast path for pandas DataFrames.
 *
 * The frame is read once by the one pandas frame reader (pandas_frame.c):
 * each NumPy-backed numeric column (a row of a NumPy block) is wrapped
 * without a copy and, for the common case, without reading a value; every
 * other column goes through pandas' own Arrow export of the sub-frame, so
 * pandas' __dataframe__ (and its sliced-Arrow-column bug, requirement
 * P-26) is never used.
 */
#include "common.h"
#include "model.h"
#include "exchange.h"
#include "readers.h"
#include "probe.h"
#include "pandas.h"
#include "bitmap.h"
#include "mem.h"
#include "nan.h"
#include "kernels.h"
#include "args.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* pandas DataFrame fast path                                           */
/* ------------------------------------------------------------------ */

/* The null scan of one column view: counts NaN (kind 'f') or NaT ('M',
   'm'), filling `mask` when given.  Releases the GIL on large inputs (the
   caller holds a strong reference to `view`, whose base keeps the memory
   alive).  Cannot fail. */
static int64_t
scan_nulls(PyArrayObject *view, char kind, uint8_t *mask)
{
    const char *p = PyArray_BYTES(view);
    const npy_intp n = PyArray_DIM(view, 0);
    const npy_intp stride = PyArray_STRIDE(view, 0);
    const int isz = (int)PyArray_ITEMSIZE(view);
    int64_t c;
    DFB_NOGIL_IF(n, c = kind == 'f' ? dfb_count_nan(p, n, stride, isz, 0, NULL)
                                    : dfb_count_nat(p, n, stride, 0, mask));
    return c;
}

/* The null scan of an object column view: counts the items that are
   None, a float NaN or `na` (pandas.NA, when given): pandas' missing
   values in an object column, filling `mask` (1 = missing) when given.
   Holds the GIL (the items are compared, never called; the caller holds
   the view).  Each item's pointer is loaded once and the mask and count
   say what was loaded: with the GIL off a writer of the array can change
   items during the scan, and an item it frees while it is looked at is
   the hazard NumPy's own readers of object arrays share (NumPy's thread
   safety notes: no concurrent writers of an array being read).  Cannot
   fail. */
static int64_t
count_object_nulls(PyArrayObject *view, PyObject *na, uint8_t *mask)
{
    const char *p = PyArray_BYTES(view);
    const npy_intp n = PyArray_DIM(view, 0);
    const npy_intp stride = PyArray_STRIDE(view, 0);
    int64_t c = 0;
    for (npy_intp k = 0; k < n; k++) {
        PyObject *it;
        memcpy(&it, p + k * stride, sizeof(it));
        int miss = it == NULL || it == Py_None || (na != NULL && it == na) ||
                   (PyFloat_CheckExact(it) && isnan(PyFloat_AS_DOUBLE(it)));
        if (mask != NULL) {
            mask[k] = (uint8_t)miss;
        }
        c += miss;
    }
    return c;
}

/* The null scan of a complex column view (8 or 16 bytes a value): counts
   the values with a NaN part.  Cannot fail. */
static int64_t
count_complex_nan(PyArrayObject *view)
{
    const char *p = PyArray_BYTES(view);
    const npy_intp n = PyArray_DIM(view, 0);
    const npy_intp stride = PyArray_STRIDE(view, 0);
    const int half = (int)PyArray_ITEMSIZE(view) / 2;
    int64_t c = 0;
    for (npy_intp k = 0; k < n; k++) {
        c += dfb_count_nan(p + k * stride, 2, half, half, 0, NULL) > 0;
    }
    return c;
}

/* Sets ValueError for `nnull` nulls in "raise" mode.  Returns -1. */
static int
nulls_raise(int64_t nnull)
{
    PyErr_Format(PyExc_ValueError,
                 "the column has %lld null value%s (nulls='raise')",
                 (long long)nnull, nnull == 1 ? "" : "s");
    return -1;
}

/* Column `i` of `f`, a NumPy object column: *out = a new read-only view of
   its row of the block (the objects themselves, whatever they are; no
   copy).  Its missing items (None, float NaN, pandas.NA) are masked in
   "mask" mode (a MaskedArray over that view, only when there are any),
   left as they are in "fill" mode, refused in "raise" mode (ValueError).
   Returns 0, or -1 with an exception set. */
static int
object_column(dfb_state *st, const dfb_pd_frame *f, Py_ssize_t i,
              dfb_nulls_mode nulls, PyObject **out)
{
    PyObject *view = dfb_pd_column_view(f, i);
    if (view == NULL) {
        return -1;
    }
    if (nulls == DFB_NULLS_FILL) {
        *out = view;
        return 0;
    }
    PyObject *na = NULL;
    PyObject *pd = PyImport_GetModule(st->str.pandas);
    if (pd != NULL) {
        na = PyObject_GetAttrString(pd, "NA");
        Py_DECREF(pd);
    }
    if (na == NULL && PyErr_Occurred()) {
        PyErr_Clear(); /* a pandas without NA: None and NaN only */
    }
    PyArrayObject *v = (PyArrayObject *)view;
    int64_t nnull = count_object_nulls(v, na, NULL);
    PyObject *mask = NULL;
    if (nnull > 0 && nulls != DFB_NULLS_RAISE) {
        npy_intp dims[1] = {PyArray_DIM(v, 0)};
        mask = PyArray_SimpleNew(1, dims, NPY_BOOL);
        if (mask == NULL) {
            Py_XDECREF(na);
            Py_DECREF(view);
            return -1;
        }
        /* the view holds the items, `na` the NA object: no call runs.
           The mask's own pass decides: with the GIL off a writer can
           change the items between the two passes, and the mask must
           say what this pass read (each item read once) */
        nnull = count_object_nulls(
            v, na, (uint8_t *)PyArray_DATA((PyArrayObject *)mask));
    }
    Py_XDECREF(na);
    if (nnull == 0) {
        Py_XDECREF(mask);
        *out = view;
        return 0;
    }
    if (mask == NULL) {
        Py_DECREF(view);
        return nulls_raise(nnull);
    }
    *out = dfb_masked_array(st, view, mask);
    Py_DECREF(mask);
    Py_DECREF(view);
    return *out == NULL ? -1 : 0;
}

/* Converts column `i` of read frame `f` if it is a NumPy-backed numeric
   column (bool, int, uint, float16/32/64, datetime64, timedelta64 in
   native order): *out = a new zero-copy array whose base chain ends in a
   dfbuffer.Buffer owning a view of the column's row of its block.  Sets
   *out = NULL (and returns 0) for any other column, which the caller sends
   through Arrow.  Returns 0, or -1 with an exception set (ValueError for
   nulls in "raise" mode). */
static int
pandas_column(dfb_state *st, const dfb_pd_frame *f, Py_ssize_t i,
              dfb_nulls_mode nulls, PyObject **out)
{
    *out = NULL;
    if (f->cols[i].kind != DFB_PD_NUMPY) {
        return 0; /* masked and extension arrays: pandas' Arrow export */
    }
    const PyArray_Descr *d = f->cols[i].descr;
    const char kind = d->kind;
    const Py_ssize_t isz = PyDataType_ELSIZE(d);
    if (kind == 'O') {
        return object_column(st, f, i, nulls, out);
    }
    int ok = PyArray_ISNBO(d->byteorder) && !PyDataType_HASFIELDS(d) &&
             (kind == 'b' || kind == 'i' || kind == 'u' ||
              (kind == 'f' && (isz == 2 || isz == 4 || isz == 8)) ||
              (kind == 'c' && (isz == 8 || isz == 16)) ||
              ((kind == 'M' || kind == 'm') && isz == 8));
    if (!ok) {
        return 0;
    }
    PyObject *arr = dfb_pd_column_view(f, i);
    if (arr == NULL) {
        return -1;
    }
    PyObject *buf = dfb_buffer_from_object_impl(st, arr, NULL);
    Py_DECREF(arr);
    if (buf == NULL) {
        return -1;
    }
    PyObject *view = dfb_buffer_as_ndarray((DfbBuffer *)buf);
    Py_DECREF(buf);
    if (view == NULL) {
        return -1;
    }
    /* pandas' memory is read-only through dfbuffer (pandas 2 without
       copy-on-write has writable blocks) */
    PyArray_CLEARFLAGS((PyArrayObject *)view, NPY_ARRAY_WRITEABLE);
    if (kind != 'f' && kind != 'c' && kind != 'M' && kind != 'm') {
        *out = view; /* no null representation: nothing to look at */
        return 0;
    }
    /* Float NaN is the value pandas (and NumPy) use for a missing float:
       in "mask" and "fill" mode the array is returned as it is, NaN
       included, without reading it.  "raise" asks for the check.  A
       complex value is missing when either part is NaN. */
    if ((kind == 'f' || kind == 'c') && nulls != DFB_NULLS_RAISE) {
        *out = view;
        return 0;
    }
    /* datetimes in "fill" mode: NaT is already in the null slots */
    if (kind != 'f' && nulls == DFB_NULLS_FILL) {
        *out = view;
        return 0;
    }
    PyArrayObject *v = (PyArrayObject *)view;
    int64_t nnull =
        kind == 'c' ? count_complex_nan(v) : scan_nulls(v, kind, NULL);
    if (nnull == 0) {
        *out = view;
        return 0;
    }
    if (nulls == DFB_NULLS_RAISE) {
        Py_DECREF(view);
        return nulls_raise(nnull);
    }
    /* datetimes in "mask" mode: NaT masked, as the Arrow path did */
    npy_intp dims[1] = {PyArray_DIM(v, 0)};
    PyObject *mask = PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (mask == NULL) {
        Py_DECREF(view);
        return -1;
    }
    (void)scan_nulls(v, kind, (uint8_t *)PyArray_DATA((PyArrayObject *)mask));
    *out = dfb_masked_array(st, view, mask);
    Py_DECREF(view);
    Py_DECREF(mask);
    return *out == NULL ? -1 : 0;
}

/* Converts the columns at `positions` (a list of ints) of frame `df`
   through pandas' Arrow export of df.iloc[:, positions] (of `df` itself
   when `whole`).  Returns a new list of arrays in that order, NULL with an
   exception set, or NULL without one when the export's columns do not
   match (a column skipped, say: the caller converts them one by one). */
static PyObject *
arrow_columns(dfb_state *st, PyObject *df, PyObject *positions, int whole,
              const dfb_opts *opts, int allow_copy)
{
    PyObject *sub = NULL;
    if (whole) {
        sub = Py_NewRef(df);
    }
    else {
        PyObject *iloc = PyObject_GetAttr(df, st->str.iloc);
        if (iloc == NULL) {
            return NULL;
        }
        PyObject *all = PySlice_New(NULL, NULL, NULL);
        PyObject *key = all == NULL ? NULL : PyTuple_Pack(2, all, positions);
        Py_XDECREF(all);
        sub = key == NULL ? NULL : PyObject_GetItem(iloc, key);
        Py_XDECREF(key);
        Py_DECREF(iloc);
        if (sub == NULL) {
            return NULL;
        }
    }
    PyObject *d = dfb_arrow_from_dataframe(st, sub, opts, allow_copy);
    Py_DECREF(sub);
    if (d == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    if (!PyDict_CheckExact(d) ||
        PyDict_GET_SIZE(d) != PyList_GET_SIZE(positions)) {
        Py_DECREF(d);
        return NULL;
    }
    /* our own fresh dict, in column order: its values in order */
    res = PyDict_Values(d);
    Py_DECREF(d);
    return res;
}

/* Replaces the pending exception, when it is of another library's type
   (pyarrow's ArrowTypeError, say), by a NotImplementedError (dfbuffer
   cannot read that column; on_unsupported="skip" drops it) whose message
   names column `key`; the original becomes its __cause__.  Builtin
   exceptions and st's CopyError are left as they are.  Cannot fail. */
static void
foreign_error(dfb_state *st, PyObject *key)
{
    static PyObject **const builtins[] = {
        &PyExc_NotImplementedError, &PyExc_TypeError,
        &PyExc_ValueError,          &PyExc_BufferError,
        &PyExc_MemoryError,         &PyExc_KeyError,
        &PyExc_IndexError,          &PyExc_OverflowError,
        &PyExc_RuntimeError,        &PyExc_RecursionError,
        &PyExc_SystemError,         &PyExc_KeyboardInterrupt,
        &PyExc_UnicodeDecodeError};
    PyObject *exc = dfb_err_take();
    if (exc == NULL) {
        return;
    }
    PyTypeObject *t = Py_TYPE(exc);
    if ((PyObject *)t == st->copy_error) {
        dfb_err_give(exc);
        return;
    }
    for (size_t k = 0; k < sizeof(builtins) / sizeof(builtins[0]); k++) {
        if ((PyObject *)t == *builtins[k]) {
            dfb_err_give(exc);
            return;
        }
    }
    PyErr_Format(PyExc_NotImplementedError,
                 "column %R: pandas' Arrow export failed: %s: %S", key,
                 t->tp_name, exc);
    PyObject *mine = dfb_err_take();
    if (mine == NULL) {
        dfb_err_give(exc);
        return;
    }
    PyException_SetContext(mine, Py_NewRef(exc));
    PyException_SetCause(mine, exc); /* steals */
    dfb_err_give(mine);
}

/* Converts column `pos` (named `key`) of frame `df` alone through
   pandas' Arrow export: *out = a new reference to its array, or to
   Py_Ellipsis when on_unsupported="skip" drops it.  Returns 0, or -1 with
   an exception that names the column (foreign_error). */
static int
arrow_one(dfb_state *st, PyObject *df, Py_ssize_t pos, PyObject *key,
          const dfb_opts *opts, int allow_copy, PyObject **out)
{
    *out = NULL;
    PyObject *p = PyLong_FromSsize_t(pos);
    PyObject *lst = p == NULL ? NULL : PyList_New(1);
    if (lst == NULL) {
        Py_XDECREF(p);
        return -1;
    }
    PyList_SET_ITEM(lst, 0, p);
    PyObject *got = arrow_columns(st, df, lst, 0, opts, allow_copy);
    Py_DECREF(lst);
    if (got == NULL && !PyErr_Occurred()) {
        *out = Py_NewRef(Py_Ellipsis); /* the import skipped it */
        return 0;
    }
    if (got == NULL) {
        foreign_error(st, key);
        if (dfb_skip_unsupported(opts)) {
            *out = Py_NewRef(Py_Ellipsis);
            return 0;
        }
        dfb_add_column_context(st, key);
        return -1;
    }
    *out = Py_NewRef(PyList_GET_ITEM(got, 0));
    Py_DECREF(got);
    return 0;
}

/* A frame to export through Arrow: `df` itself when its index is a
   RangeIndex (pandas' export then adds no index column), else
   df.reset_index(drop=True) (no copy of the columns on pandas 3), so that
   no index is exported (nor can fail to be).  New reference or NULL with
   an exception set. */
static PyObject *
without_index(PyObject *df)
{
    int r = dfb_pandas_has_range_index(df);
    if (r != 0) {
        return r < 0 ? NULL : Py_NewRef(df);
    }
    PyObject *meth = PyObject_GetAttrString(df, "reset_index");
    PyObject *args = meth == NULL ? NULL : PyTuple_New(0);
    PyObject *kw =
        args == NULL ? NULL : Py_BuildValue("{s:O}", "drop", Py_True);
    PyObject *res = kw == NULL ? NULL : PyObject_Call(meth, args, kw);
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_XDECREF(meth);
    return dfb_pandas_frame_result(res, "DataFrame.reset_index()");
}

/* Fills the None items of `vals` at the positions in `pending` (a list
   of ints) from frame `df`: first the pandas columns read from pandas'
   own arrays (pandas_columns.c), then pandas'
   Arrow export of the rest at once, or, if that fails or skips a column,
   one column at a time (so an error names its column, and "skip" drops
   only that one).  Skipped columns get Py_Ellipsis.  Returns 0, or -1
   with an exception set. */
static int
fill_pending(dfb_state *st, PyObject *df, PyObject *keys, PyObject *vals,
             PyObject *pending, const dfb_opts *opts, int allow_copy)
{
    int ret = -1;
    PyObject *src = NULL, *rest = NULL, *got = NULL;
    PyObject *py = dfb_pd_columns_convert(st, df, pending, opts, allow_copy,
                                          dfb_pandas_from_dataframe);
    rest = PyList_New(0);
    if (py == NULL || rest == NULL) {
        goto done;
    }
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(pending); j++) {
        PyObject *p = PyList_GET_ITEM(pending, j);
        PyObject *v = PyList_GET_ITEM(py, j);
        Py_ssize_t pos = PyLong_AsSsize_t(p);
        if (pos < 0 || pos >= PyList_GET_SIZE(vals)) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_SystemError, "bad column position");
            }
            goto done;
        }
        if (v == Py_None) {
            if (PyList_Append(rest, p) < 0) {
                goto done;
            }
        }
        else if (PyList_SetItem(vals, pos, Py_NewRef(v)) < 0) {
            goto done;
        }
    }
    Py_ssize_t nrest = PyList_GET_SIZE(rest);
    if (nrest == 0) {
        ret = 0;
        goto done;
    }
    src = without_index(df);
    if (src == NULL) {
        goto done;
    }
    got = arrow_columns(st, src, rest, nrest == PyList_GET_SIZE(vals), opts,
                        allow_copy);
    if (got == NULL) {
        PyErr_Clear(); /* converted again column by column: named */
    }
    for (Py_ssize_t j = 0; j < nrest; j++) {
        Py_ssize_t pos = PyLong_AsSsize_t(PyList_GET_ITEM(rest, j));
        PyObject *v;
        if (got != NULL) {
            v = Py_NewRef(PyList_GET_ITEM(got, j));
        }
        else if (arrow_one(st, src, pos, PyList_GET_ITEM(keys, pos), opts,
                           allow_copy, &v) < 0) {
            goto done;
        }
        if (PyList_SetItem(vals, pos, v) < 0) {
            goto done;
        }
    }
    ret = 0;
done:
    Py_XDECREF(got);
    Py_XDECREF(src);
    Py_XDECREF(rest);
    Py_XDECREF(py);
    return ret;
}

/* Adds keys[i] -> vals[i] to a new dict, in order, leaving out the
   skipped columns (Py_Ellipsis).  Returns it or NULL. */
static PyObject *
build_result(PyObject *keys, PyObject *vals)
{
    PyObject *res = PyDict_New();
    if (res == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *v = PyList_GET_ITEM(vals, i);
        if (v != Py_Ellipsis &&
            PyDict_SetItem(res, PyList_GET_ITEM(keys, i), v) < 0) {
            Py_DECREF(res);
            return NULL;
        }
    }
    return res;
}

PyObject *
dfb_pandas_from_dataframe(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                          int allow_copy)
{
    int r = dfb_pandas_is_frame(obj);
    if (r <= 0) {
        return NULL;
    }
    Py_INCREF(obj); /* the frame stays alive across every call below */
    PyObject *res = NULL, *keys = NULL, *vals = NULL, *pending = NULL,
             *seen = NULL;
    dfb_pd_frame f = {0};
    keys = PyList_New(0);
    vals = PyList_New(0);
    pending = PyList_New(0);
    seen = PySet_New(NULL);
    if (keys == NULL || vals == NULL || pending == NULL || seen == NULL ||
        dfb_pd_frame_read(obj, &f) != 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < f.ncols; i++) {
        /* the frame's names list holds the key */
        PyObject *key = PyList_GET_ITEM(f.names, i);
        int dup = PySet_Contains(seen, key);
        if (dup != 0) {
            if (dup > 0) {
                PyErr_Format(PyExc_ValueError,
                             "from_dataframe() returns a dict, one array per "
                             "name: duplicate column name %R (rename the "
                             "columns)",
                             key);
            }
            goto done;
        }
        PyObject *arr;
        if (PySet_Add(seen, key) < 0 ||
            pandas_column(st, &f, i, opts->nulls, &arr) < 0) {
            dfb_add_column_context(st, key); /* the error names the column */
            goto done;
        }
        if (arr == NULL) {
            PyObject *pos = PyLong_FromSsize_t(i);
            int e = pos == NULL || PyList_Append(pending, pos) < 0;
            Py_XDECREF(pos);
            if (e) {
                goto done;
            }
            arr = Py_NewRef(Py_None);
        }
        int e = PyList_Append(keys, key) < 0 || PyList_Append(vals, arr) < 0;
        Py_DECREF(arr);
        if (e) {
            goto done;
        }
    }
    if (PyList_GET_SIZE(pending) > 0) {
        /* the rest from a frame over the manager read, not from `obj`,
           whose manager another thread may have swapped since */
        PyObject *snap = dfb_pd_frame_snapshot(&f, obj);
        int e = snap == NULL || fill_pending(st, snap, keys, vals, pending,
                                             opts, allow_copy) < 0;
        Py_XDECREF(snap);
        if (e) {
            goto done;
        }
    }
    res = build_result(keys, vals);
done:
    dfb_pd_frame_clear(&f);
    Py_XDECREF(seen);
    Py_XDECREF(pending);
    Py_XDECREF(vals);
    Py_XDECREF(keys);
    Py_DECREF(obj);
    return res;
}

/* 1 if `values` is exactly pandas' IntegerArray or FloatingArray (pandas
   imported), 0 if not, -1 with an exception set. */
static int
is_masked_numeric(dfb_state *st, PyObject *values)
{
    PyObject *pd = PyImport_GetModule(st->str.pandas);
    PyObject *arrays =
        pd == NULL ? NULL : PyObject_GetAttrString(pd, "arrays");
    Py_XDECREF(pd);
    if (arrays == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    static const char *const names[] = {"IntegerArray", "FloatingArray"};
    int r = 0;
    for (size_t k = 0; r == 0 && k < sizeof(names) / sizeof(names[0]); k++) {
        PyObject *cls = PyObject_GetAttrString(arrays, names[k]);
        if (cls == NULL) {
            r = -1;
            break;
        }
        r = (PyObject *)Py_TYPE(values) == cls;
        Py_DECREF(cls);
    }
    Py_DECREF(arrays);
    return r;
}

/* The fast path of a pandas IntegerArray / FloatingArray `values` (held
   by the caller): its `_data` read as a NumPy block (pandas_column), its
   `_mask` copied once (our own: what is counted is what is masked), and
   then what the Arrow path gives such a column: the view when no value is
   missing, a MaskedArray over it in "mask" mode, a copy with NaN in the
   missing slots in "fill" mode (float64 for ints, the float's own width
   for floats).  Returns 1 with *out set, 0 when the arrays are not read
   here, -1 with an exception set. */
static int
masked_series(dfb_state *st, PyObject *values, const dfb_opts *opts,
              PyObject **out)
{
    *out = NULL;
    PyObject *data = PyObject_GetAttrString(values, "_data");
    PyObject *m =
        data == NULL ? NULL : PyObject_GetAttrString(values, "_mask");
    PyObject *mask = NULL, *view = NULL;
    int rc = -1;
    if (m == NULL) {
        goto done;
    }
    PyArrayObject *d = (PyArrayObject *)data;
    if (!PyArray_CheckExact(data) || PyArray_NDIM(d) != 1 ||
        !PyArray_CheckExact(m) || PyArray_NDIM((PyArrayObject *)m) != 1 ||
        PyArray_TYPE((PyArrayObject *)m) != NPY_BOOL ||
        PyArray_DIM((PyArrayObject *)m, 0) != PyArray_DIM(d, 0) ||
        strchr("iuf", PyArray_DESCR(d)->kind) == NULL) {
        rc = 0; /* not the arrays pandas makes: the frame's path */
        goto done;
    }
    mask = PyArray_NewCopy((PyArrayObject *)m, NPY_CORDER);
    if (mask == NULL) {
        goto done;
    }
    dfb_pd_column col = {
        .kind = DFB_PD_NUMPY,
        .array = data,
        .descr = PyArray_DESCR(d),
        .data = PyArray_BYTES(d),
        .stride = (int64_t)PyArray_STRIDE(d, 0),
    };
    dfb_pd_frame f = {.ncols = 1,
                      .nrows = (int64_t)PyArray_DIM(d, 0),
                      .all_read = 1,
                      .cols = &col};
    if (pandas_column(st, &f, 0, DFB_NULLS_MASK, &view) < 0) {
        goto done;
    }
    if (view == NULL || !PyArray_CheckExact(view)) {
        rc = 0;
        goto done;
    }
    const npy_bool *mb = (const npy_bool *)PyArray_DATA((PyArrayObject *)mask);
    const npy_intp n = PyArray_DIM((PyArrayObject *)mask, 0);
    npy_intp nnull = 0;
    for (npy_intp k = 0; k < n; k++) {
        nnull += mb[k] != 0;
    }
    rc = 1;
    if (nnull == 0) {
        *out = Py_NewRef(view);
    }
    else if (opts->nulls == DFB_NULLS_MASK) {
        *out = dfb_masked_array(st, view, mask);
    }
    else if (opts->copy == 0) {
        rc = 0; /* fill needs a copy: the frame's path names the column in
                   the CopyError */
    }
    else { /* fill: a copy, NaN in the missing slots */
        int kind = PyArray_DESCR((PyArrayObject *)view)->kind;
        PyArray_Descr *to = kind == 'f' ? PyArray_DESCR((PyArrayObject *)view)
                                        : PyArray_DescrFromType(NPY_FLOAT64);
        if (kind == 'f') {
            Py_INCREF(to);
        }
        PyObject *filled = PyArray_FromAny(
            view, to, 1, 1,
            NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY | NPY_ARRAY_FORCECAST,
            NULL);
        if (filled != NULL) {
            PyObject *nan = PyFloat_FromDouble(NAN);
            for (npy_intp k = 0; nan != NULL && k < n; k++) {
                if (mb[k] && PyArray_SETITEM(
                                 (PyArrayObject *)filled,
                                 PyArray_GETPTR1((PyArrayObject *)filled, k),
                                 nan) < 0) {
                    Py_CLEAR(filled);
                    break;
                }
            }
            if (nan == NULL) {
                Py_CLEAR(filled);
            }
            Py_XDECREF(nan);
        }
        *out = filled;
    }
    if (rc == 1 && *out == NULL) {
        rc = -1;
    }
done:
    Py_XDECREF(view);
    Py_XDECREF(mask);
    Py_XDECREF(m);
    Py_XDECREF(data);
    return rc;
}

int
dfb_pandas_series_fast(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                       PyObject **out)
{
    *out = NULL;
    int r = dfb_pandas_is_series(obj);
    if (r <= 0) {
        return r;
    }
    if (opts->nulls == DFB_NULLS_RAISE) {
        return 2; /* the frame's path names the column in its error */
    }
    /* the values read once and held: every pointer below is into them */
    PyObject *values = PyObject_GetAttrString(obj, "_values");
    if (values == NULL) {
        return -1;
    }
    if (!PyArray_CheckExact(values)) {
        /* pandas' nullable Int / UInt / Float arrays: their two arrays */
        int masked = is_masked_numeric(st, values);
        int rc = masked <= 0 ? masked : masked_series(st, values, opts, out);
        Py_DECREF(values);
        return rc == 0 ? 2 : rc; /* another extension array: the frame's */
    }
    if (PyArray_NDIM((PyArrayObject *)values) != 1) {
        Py_DECREF(values);
        return 2;
    }
    PyArrayObject *v = (PyArrayObject *)values;
    dfb_pd_column col = {
        .kind = DFB_PD_NUMPY,
        .array = values,
        .descr = PyArray_DESCR(v),
        .data = PyArray_BYTES(v),
        .stride = (int64_t)PyArray_STRIDE(v, 0),
    };
    /* a frame of that one column, as dfb_pd_frame_read would read the
       Series' frame: pandas_column reads only cols and nrows */
    dfb_pd_frame f = {.ncols = 1,
                      .nrows = (int64_t)PyArray_DIM(v, 0),
                      .all_read = 1,
                      .cols = &col};
    int rc = pandas_column(st, &f, 0, opts->nulls, out);
    Py_DECREF(values);
    if (rc < 0) {
        return -1;
    }
    return *out != NULL ? 1 : 2;
}

/* from_dataframe of pandas DataFrame `frame`: its numpy-backed columns
   directly, the rest through its Arrow export.  Returns a new dict or NULL
   with an exception set. */
PyObject *
dfb_pandas_frame_dict(dfb_state *st, PyObject *frame, const dfb_opts *opts,
                      int allow_copy)
{
    PyObject *res = dfb_pandas_from_dataframe(st, frame, opts, allow_copy);
    if (res == NULL && !PyErr_Occurred()) {
        res = dfb_arrow_from_dataframe(st, frame, opts, allow_copy);
    }
    return res;
}
