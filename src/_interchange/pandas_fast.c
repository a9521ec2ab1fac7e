/* dfbuffer: the pandas frame reader (from_dataframe's fast path) and the
 * one test "is this a pandas frame" (dfb_pandas_is_frame), which
 * from_dataframe, column_to_ndarray, to_matrix, to_arrow and dfbuffer.pandas
 * all use; pandas' interchange objects are read through the frame behind
 * them (dfb_pandas_frame_behind).
 *
 * It reads each numpy-backed numeric column of a pandas DataFrame through
 * the public Series.to_numpy() and wraps that array without a copy and, for
 * the common case, without reading a value; every other column goes
 * through pandas' own Arrow export of the sub-frame, so pandas'
 * __dataframe__ (and its sliced-Arrow-column bug, requirement P-26) is
 * never used.  (Moved from probe.c, which keeps the probes.)
 */
#include "common.h"
#include "buffer.h"
#include "convert.h"
#include "arrow.h"
#include "probe.h"
#include "arrow_device.h"
#include "pandas_block.h"
#include "ixwalk.h"
#include "bitmap.h"
#include "mem.h"
#include "nan.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* pandas DataFrame fast path                                           */
/* ------------------------------------------------------------------ */

/* Returns a new reference to attribute `name` of the already imported
   module `modname`, or NULL without an exception when the module is not
   imported or has no such attribute (NULL with one only on MemoryError). */
static PyObject *
imported_attr(const char *modname, const char *name)
{
    PyObject *mn = PyUnicode_FromString(modname);
    if (mn == NULL) {
        return NULL;
    }
    PyObject *mod = PyImport_GetModule(mn);
    Py_DECREF(mn);
    if (mod == NULL) {
        return NULL;
    }
    PyObject *attr = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    if (attr == NULL && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
    }
    return attr;
}

/* Returns 1 if `obj`'s type is exactly `modname`.`name` (the module
   already imported: nothing is imported here), 0 if not, -1 with
   MemoryError. */
static int
is_exact(PyObject *obj, const char *modname, const char *name)
{
    PyObject *cls = imported_attr(modname, name);
    if (cls == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int r = (PyObject *)Py_TYPE(obj) == cls;
    Py_DECREF(cls);
    return r;
}

int
dfb_pandas_is_frame(PyObject *obj)
{
    return is_exact(obj, "pandas", "DataFrame");
}

/* Returns a new reference to attribute `attr` of `obj` if it is exactly
   of type `what` and holds exactly a pandas `holds` ("DataFrame" or
   "Series"); NULL without an exception otherwise, NULL with one on error.
   Clears *allow_copy when `obj`'s `_allow_copy` is false. */
static PyObject *
pandas_behind(PyObject *obj, const char *modname, const char *what,
              const char *attr, const char *holds, int *allow_copy)
{
    int r = is_exact(obj, modname, what);
    if (r <= 0) {
        return NULL;
    }
    PyObject *inner = PyObject_GetAttrString(obj, attr);
    if (inner == NULL) {
        PyErr_Clear(); /* a pandas without it: the protocol as usual */
        return NULL;
    }
    r = is_exact(inner, "pandas", holds);
    if (r <= 0) {
        Py_DECREF(inner);
        return NULL;
    }
    PyObject *ac = PyObject_GetAttrString(obj, "_allow_copy");
    int flag = ac == NULL ? 1 : PyObject_IsTrue(ac);
    Py_XDECREF(ac);
    if (ac == NULL) {
        PyErr_Clear();
    }
    if (flag < 0) {
        Py_DECREF(inner);
        return NULL;
    }
    if (!flag) {
        *allow_copy = 0;
    }
    return inner;
}

PyObject *
dfb_pandas_frame_behind(PyObject *obj, int *allow_copy)
{
    int r = dfb_pandas_is_frame(obj);
    if (r != 0) {
        return r < 0 ? NULL : Py_NewRef(obj);
    }
    return pandas_behind(obj, "pandas.core.interchange.dataframe",
                         "PandasDataFrameXchg", "_df", "DataFrame",
                         allow_copy);
}

PyObject *
dfb_pandas_column_frame(PyObject *obj, int *allow_copy)
{
    PyObject *series =
        pandas_behind(obj, "pandas.core.interchange.column", "PandasColumn",
                      "_col", "Series", allow_copy);
    if (series == NULL) {
        return NULL;
    }
    PyObject *frame = PyObject_CallMethod(series, "to_frame", NULL);
    Py_DECREF(series);
    if (frame == NULL) {
        return NULL;
    }
    if (dfb_pandas_is_frame(frame) <= 0) {
        Py_DECREF(frame);
        return NULL;
    }
    return frame;
}

/* Returns 1 if `obj` is exactly a pandas.DataFrame (dfb_pandas_is_frame)
   whose index is exactly a RangeIndex (pandas' Arrow export adds no index
   column then), 0 if not, -1 with an exception set. */
static int
is_plain_pandas_frame(dfb_state *st, PyObject *obj)
{
    int r = dfb_pandas_is_frame(obj);
    if (r <= 0) {
        return r;
    }
    PyObject *ri = imported_attr("pandas", "RangeIndex");
    if (ri == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *index = PyObject_GetAttr(obj, st->str.index);
    if (index == NULL) {
        Py_DECREF(ri);
        return -1;
    }
    r = (PyObject *)Py_TYPE(index) == ri;
    Py_DECREF(index);
    Py_DECREF(ri);
    return r;
}

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

/* Returns a new reference to numpy.ma.MaskedArray(values, mask), importing
   numpy.ma once into the module state; NULL with an exception set. */
static PyObject *
masked(dfb_state *st, PyObject *values, PyObject *mask)
{
    if (st->ma_masked_array == NULL) {
        PyObject *ma = PyImport_ImportModule("numpy.ma");
        if (ma == NULL) {
            return NULL;
        }
        PyObject *cls = PyObject_GetAttrString(ma, "MaskedArray");
        Py_DECREF(ma);
        if (cls == NULL) {
            return NULL;
        }
        if (st->ma_masked_array == NULL) {
            st->ma_masked_array = cls;
        }
        else {
            Py_DECREF(cls);
        }
    }
    PyObject *cls = Py_NewRef(st->ma_masked_array);
    PyObject *args[2] = {values, mask};
    PyObject *res = PyObject_Vectorcall(cls, args, 2, NULL);
    Py_DECREF(cls);
    return res;
}

/* Converts one pandas Series if it is a numpy-backed numeric column
   (bool, int, uint, float16/32/64, datetime64, timedelta64 in native
   order): *out = a new zero-copy array whose base chain ends in a
   dfbuffer.Buffer owning the array Series.to_numpy() returned.  Sets
   *out = NULL (and returns 0) for any other column, which the caller sends
   through Arrow.  Returns 0, or -1 with an exception set (ValueError for
   nulls in "raise" mode). */
static int
pandas_column(dfb_state *st, PyObject *series, dfb_nulls_mode nulls,
              PyObject **out)
{
    *out = NULL;
    /* the mode alone: categorical= and strings= bits do not apply here */
    nulls = (dfb_nulls_mode)((int)nulls & DFB_NULLS_MODE_BITS);
    PyObject *dtype = PyObject_GetAttr(series, st->str.dtype);
    if (dtype == NULL) {
        return -1;
    }
    if (!PyArray_DescrCheck(dtype)) {
        Py_DECREF(dtype);
        return 0;
    }
    PyArray_Descr *d = (PyArray_Descr *)dtype;
    const char kind = d->kind;
    const Py_ssize_t isz = PyDataType_ELSIZE(d);
    int ok = PyArray_ISNBO(d->byteorder) && !PyDataType_HASFIELDS(d) &&
             (kind == 'b' || kind == 'i' || kind == 'u' ||
              (kind == 'f' && (isz == 2 || isz == 4 || isz == 8)) ||
              ((kind == 'M' || kind == 'm') && isz == 8));
    if (!ok) {
        Py_DECREF(dtype);
        return 0;
    }
    PyObject *arr = PyObject_CallMethodNoArgs(series, st->str.to_numpy);
    if (arr == NULL) {
        Py_DECREF(dtype);
        return -1;
    }
    /* read what came back once: exactly a 1-D ndarray of the same dtype */
    if (!PyArray_CheckExact(arr) || PyArray_NDIM((PyArrayObject *)arr) != 1 ||
        !PyArray_EquivTypes(PyArray_DESCR((PyArrayObject *)arr), d)) {
        Py_DECREF(arr);
        Py_DECREF(dtype);
        return 0;
    }
    Py_DECREF(dtype);
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
    /* pandas' memory is read-only through dfbuffer, whatever to_numpy()
       gave (pandas 2 without copy-on-write hands out writable arrays) */
    PyArray_CLEARFLAGS((PyArrayObject *)view, NPY_ARRAY_WRITEABLE);
    if (kind != 'f' && kind != 'M' && kind != 'm') {
        *out = view; /* no null representation: nothing to look at */
        return 0;
    }
    /* Float NaN is the value pandas (and NumPy) use for a missing float:
       in "mask" and "fill" mode the array is returned as it is, NaN
       included, without reading it.  "raise" asks for the check. */
    if (kind == 'f' && nulls != DFB_NULLS_RAISE) {
        *out = view;
        return 0;
    }
    /* datetimes in "fill" mode: NaT is already in the null slots */
    if (kind != 'f' && nulls == DFB_NULLS_FILL) {
        *out = view;
        return 0;
    }
    PyArrayObject *v = (PyArrayObject *)view;
    int64_t nnull = scan_nulls(v, kind, NULL);
    if (nnull == 0) {
        *out = view;
        return 0;
    }
    if (nulls == DFB_NULLS_RAISE) {
        PyErr_Format(PyExc_ValueError,
                     "the column has %lld null value%s (nulls='raise')",
                     (long long)nnull, nnull == 1 ? "" : "s");
        Py_DECREF(view);
        return -1;
    }
    /* datetimes in "mask" mode: NaT masked, as the Arrow path did */
    npy_intp dims[1] = {PyArray_DIM(v, 0)};
    PyObject *mask = PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (mask == NULL) {
        Py_DECREF(view);
        return -1;
    }
    (void)scan_nulls(v, kind, (uint8_t *)PyArray_DATA((PyArrayObject *)mask));
    *out = masked(st, view, mask);
    Py_DECREF(view);
    Py_DECREF(mask);
    return *out == NULL ? -1 : 0;
}

/* Converts the columns at `positions` (a list of ints) of frame `df`
   through pandas' Arrow export of df.iloc[:, positions].  Returns a new
   list of arrays in that order, NULL with an exception set, or NULL
   without one when the export's columns do not match (the caller then
   reads the whole frame through Arrow). */
static PyObject *
arrow_columns(dfb_state *st, PyObject *df, PyObject *positions,
              dfb_nulls_mode nulls, int allow_copy)
{
    PyObject *iloc = PyObject_GetAttr(df, st->str.iloc);
    if (iloc == NULL) {
        return NULL;
    }
    PyObject *all = PySlice_New(NULL, NULL, NULL);
    PyObject *key = all == NULL ? NULL : PyTuple_Pack(2, all, positions);
    Py_XDECREF(all);
    PyObject *sub = key == NULL ? NULL : PyObject_GetItem(iloc, key);
    Py_XDECREF(key);
    Py_DECREF(iloc);
    if (sub == NULL) {
        return NULL;
    }
    PyObject *d = dfb_arrow_from_dataframe(st, sub, nulls, allow_copy);
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

/* Adds keys[i] -> vals[i] to a new dict, in order.  Returns it or NULL. */
static PyObject *
build_result(PyObject *keys, PyObject *vals)
{
    PyObject *res = PyDict_New();
    if (res == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        if (PyDict_SetItem(res, PyList_GET_ITEM(keys, i),
                           PyList_GET_ITEM(vals, i)) < 0) {
            Py_DECREF(res);
            return NULL;
        }
    }
    return res;
}

PyObject *
dfb_pandas_from_dataframe(dfb_state *st, PyObject *obj, dfb_nulls_mode nulls,
                          int allow_copy)
{
    int r = is_plain_pandas_frame(st, obj);
    if (r <= 0) {
        return NULL;
    }
    Py_INCREF(obj); /* the frame stays alive across every call below */
    PyObject *res = NULL, *it = NULL, *keys = NULL, *vals = NULL,
             *pending = NULL, *seen = NULL, *items = NULL;
    keys = PyList_New(0);
    vals = PyList_New(0);
    pending = PyList_New(0);
    seen = PySet_New(NULL);
    if (keys == NULL || vals == NULL || pending == NULL || seen == NULL) {
        goto done;
    }
    items = PyObject_CallMethodNoArgs(obj, st->str.items);
    if (items == NULL || (it = PyObject_GetIter(items)) == NULL) {
        goto done;
    }
    PyObject *pair;
    while ((pair = PyIter_Next(it)) != NULL) {
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError,
                            "DataFrame.items() must yield (label, Series) "
                            "pairs");
            Py_DECREF(pair);
            goto done;
        }
        /* the tuple holds label and series for as long as we use them */
        PyObject *label = PyTuple_GET_ITEM(pair, 0);
        PyObject *series = PyTuple_GET_ITEM(pair, 1);
        PyObject *key = PyUnicode_CheckExact(label) ? Py_NewRef(label)
                                                    : PyObject_Str(label);
        if (key == NULL) {
            Py_DECREF(pair);
            goto done;
        }
        int dup = PySet_Contains(seen, key);
        if (dup != 0) {
            if (dup > 0) {
                PyErr_Format(PyExc_ValueError, "duplicate column name %R",
                             key);
            }
            Py_DECREF(key);
            Py_DECREF(pair);
            goto done;
        }
        PyObject *arr;
        if (PySet_Add(seen, key) < 0 ||
            pandas_column(st, series, nulls, &arr) < 0) {
            dfb_add_column_context(key); /* the error names the column */
            Py_DECREF(key);
            Py_DECREF(pair);
            goto done;
        }
        Py_DECREF(pair);
        if (arr == NULL) {
            PyObject *pos = PyLong_FromSsize_t(PyList_GET_SIZE(keys));
            int e = pos == NULL || PyList_Append(pending, pos) < 0;
            Py_XDECREF(pos);
            if (e) {
                Py_DECREF(key);
                goto done;
            }
            arr = Py_NewRef(Py_None);
        }
        int e = PyList_Append(keys, key) < 0 || PyList_Append(vals, arr) < 0;
        Py_DECREF(key);
        Py_DECREF(arr);
        if (e) {
            goto done;
        }
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    Py_ssize_t npend = PyList_GET_SIZE(pending);
    if (npend > 0 && npend == PyList_GET_SIZE(keys)) {
        /* nothing numpy-backed: pandas' Arrow export of the whole frame */
        res = dfb_arrow_from_dataframe(st, obj, nulls, allow_copy);
        goto done;
    }
    if (npend > 0) {
        PyObject *got = arrow_columns(st, obj, pending, nulls, allow_copy);
        if (got == NULL) {
            if (!PyErr_Occurred()) {
                res = dfb_arrow_from_dataframe(st, obj, nulls, allow_copy);
            }
            goto done;
        }
        for (Py_ssize_t j = 0; j < npend; j++) {
            Py_ssize_t pos = PyLong_AsSsize_t(PyList_GET_ITEM(pending, j));
            if (pos < 0 || pos >= PyList_GET_SIZE(vals)) {
                Py_DECREF(got);
                if (!PyErr_Occurred()) {
                    PyErr_SetString(PyExc_SystemError, "bad column position");
                }
                goto done;
            }
            if (PyList_SetItem(vals, pos, Py_NewRef(PyList_GET_ITEM(got, j))) <
                0) {
                Py_DECREF(got);
                goto done;
            }
        }
        Py_DECREF(got);
    }
    res = build_result(keys, vals);
done:
    Py_XDECREF(it);
    Py_XDECREF(items);
    Py_XDECREF(seen);
    Py_XDECREF(pending);
    Py_XDECREF(vals);
    Py_XDECREF(keys);
    Py_DECREF(obj);
    return res;
}

/* _pandas_frame(obj): (frame, allow_copy) for a pandas DataFrame or
   pandas' interchange object over one (dfb_pandas_frame_behind), else
   None.  Returns a new reference or NULL with an exception set. */
static PyObject *
pandas_frame_py(PyObject *module, PyObject *obj)
{
    (void)module;
    int allow_copy = 1;
    PyObject *frame = dfb_pandas_frame_behind(obj, &allow_copy);
    if (frame == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    return Py_BuildValue("(NO)", frame, allow_copy ? Py_True : Py_False);
}

PyMethodDef dfb_pandas_frame_methods[] = {
    {"_pandas_frame", (PyCFunction)pandas_frame_py, METH_O,
     "_pandas_frame(obj): (frame, allow_copy) when obj is a pandas DataFrame "
     "or pandas' interchange object over one, else None."},
    {NULL},
};
