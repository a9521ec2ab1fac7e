/* dfbuffer: the one pandas frame reader.  The one test "is this a pandas
 * frame" (dfb_pandas_is_frame), the frame behind pandas' interchange
 * objects, and dfb_pd_frame_read: a frame's columns read once from its
 * block manager, every array checked and held, for from_dataframe
 * (pandas_fast.c), to_matrix (matrix_pandas.c) and, through _pandas_frame,
 * dfbuffer.pandas.
 */
#include "common.h"
#include "pandas.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Is this a pandas frame                                               */
/* ------------------------------------------------------------------ */

/* Returns a new reference to attribute `name` of `obj`, or NULL with an
   exception set.  The name is the interned str: CPython's type attribute
   cache keeps a strong reference to the name of each lookup it caches,
   so a fresh str per call (PyObject_GetAttrString's) would stay alive
   there until its slot is reused, up to thousands of them (measured on
   3.13t: about two blocks of 65 bytes per to_matrix call). */
static PyObject *
get_attr(PyObject *obj, const char *name)
{
    PyObject *str = PyUnicode_InternFromString(name);
    if (str == NULL) {
        return NULL;
    }
    PyObject *res = PyObject_GetAttr(obj, str);
    Py_DECREF(str);
    return res;
}

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
    PyObject *attr = get_attr(mod, name);
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
    /* a type of another name is not that class: answered without a
       lookup (a heap type's tp_name is its bare name, a static type's
       "module.name") */
    const char *tn = Py_TYPE(obj)->tp_name;
    const char *dot = strrchr(tn, '.');
    if (strcmp(dot != NULL ? dot + 1 : tn, name) != 0) {
        return 0;
    }
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

int
dfb_pandas_is_series(PyObject *obj)
{
    return is_exact(obj, "pandas", "Series");
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
    PyObject *inner = get_attr(obj, attr);
    if (inner == NULL) {
        PyErr_Clear(); /* a pandas without it: the protocol as usual */
        return NULL;
    }
    r = is_exact(inner, "pandas", holds);
    if (r <= 0) {
        Py_DECREF(inner);
        return NULL;
    }
    PyObject *ac = get_attr(obj, "_allow_copy");
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
    PyObject *frame = dfb_pandas_series_frame(obj);
    if (frame != NULL || PyErr_Occurred()) {
        return frame;
    }
    return pandas_behind(obj, "pandas.core.interchange.dataframe",
                         "PandasDataFrameXchg", "_df", "DataFrame",
                         allow_copy);
}

PyObject *
dfb_pandas_series_frame(PyObject *obj)
{
    int r = is_exact(obj, "pandas", "Series");
    if (r <= 0) {
        return NULL;
    }
    /* the name read once: the frame's one label is what was read here
       ("" for an unnamed Series, not pandas' default label 0) */
    PyObject *name = get_attr(obj, "name");
    if (name == NULL) {
        return NULL;
    }
    PyObject *kw = name == Py_None ? Py_BuildValue("{ss}", "name", "")
                                   : Py_BuildValue("{sO}", "name", name);
    Py_DECREF(name);
    PyObject *meth = kw == NULL ? NULL : get_attr(obj, "to_frame");
    PyObject *args = meth == NULL ? NULL : PyTuple_New(0);
    PyObject *frame = args == NULL ? NULL : PyObject_Call(meth, args, kw);
    Py_XDECREF(args);
    Py_XDECREF(meth);
    Py_XDECREF(kw);
    return dfb_pandas_frame_result(frame, "Series.to_frame()");
}

/* 1 if a class named `name` (a heap type's bare tp_name, a static type's
   after its last dot) is in the MRO of `t`: every subclass of that class
   has it, so 0 answers "no subclass" without a lookup.  Cannot fail. */
static int
mro_has_name(PyTypeObject *t, const char *name)
{
    PyObject *mro = t->tp_mro; /* a tuple of types, owned by the type */
    if (mro == NULL || !PyTuple_Check(mro)) {
        return 1; /* not ready: ask the class */
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *b = PyTuple_GET_ITEM(mro, i);
        if (!PyType_Check(b)) {
            return 1;
        }
        const char *tn = ((PyTypeObject *)b)->tp_name;
        const char *dot = strrchr(tn, '.');
        if (strcmp(dot != NULL ? dot + 1 : tn, name) == 0) {
            return 1;
        }
    }
    return 0;
}

PyObject *
dfb_pandas_array_frame(PyObject *obj)
{
    if (PyArray_Check(obj) || !mro_has_name(Py_TYPE(obj), "ExtensionArray")) {
        return NULL; /* the common cases, answered without a lookup */
    }
    PyObject *ext = imported_attr("pandas.api.extensions", "ExtensionArray");
    if (ext == NULL) {
        return NULL; /* pandas not imported: no pandas array */
    }
    int r = PyType_Check(ext) ? PyObject_IsInstance(obj, ext) : 0;
    Py_DECREF(ext);
    if (r <= 0) {
        return NULL;
    }
    PyObject *series = imported_attr("pandas", "Series");
    if (series == NULL) {
        return NULL;
    }
    PyObject *args = Py_BuildValue("(O)", obj);
    PyObject *kw = Py_BuildValue("{s:O}", "copy", Py_False);
    PyObject *s =
        args == NULL || kw == NULL ? NULL : PyObject_Call(series, args, kw);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    Py_DECREF(series);
    if (s == NULL) {
        return NULL;
    }
    PyObject *frame = PyObject_CallMethod(s, "to_frame", NULL);
    Py_DECREF(s);
    return dfb_pandas_frame_result(frame, "Series.to_frame()");
}

PyObject *
dfb_pandas_frame_result(PyObject *res, const char *what)
{
    if (res == NULL) {
        return NULL;
    }
    int r = dfb_pandas_is_frame(res);
    if (r <= 0) {
        Py_DECREF(res);
        if (r == 0) {
            PyErr_Format(PyExc_TypeError,
                         "%s did not return a pandas DataFrame", what);
        }
        return NULL;
    }
    return res;
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
    PyObject *frame = dfb_pandas_series_frame(series);
    Py_DECREF(series);
    return frame;
}

int
dfb_pandas_has_range_index(PyObject *frame)
{
    PyObject *ri = imported_attr("pandas", "RangeIndex");
    if (ri == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *index = get_attr(frame, "index");
    if (index == NULL) {
        Py_DECREF(ri);
        return -1;
    }
    int r = (PyObject *)Py_TYPE(index) == ri;
    Py_DECREF(index);
    Py_DECREF(ri);
    return r;
}

/* ------------------------------------------------------------------ */
/* A frame's columns from its block manager                             */
/* ------------------------------------------------------------------ */

/* Returns a new list of labels `cols` (an Index) as str: an exact str as
   it is, anything else str(label); NULL with an exception set. */
static PyObject *
labels_as_str(PyObject *cols)
{
    PyObject *seq = PySequence_List(cols);
    if (seq == NULL) {
        return NULL;
    }
    /* our own list: nothing else can change its length or items */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(seq); i++) {
        PyObject *it = PyList_GET_ITEM(seq, i);
        if (!PyUnicode_CheckExact(it)) {
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

PyObject *
dfb_pandas_frame_names(PyObject *obj)
{
    PyObject *cols = get_attr(obj, "columns");
    if (cols == NULL) {
        return NULL;
    }
    PyObject *seq = labels_as_str(cols);
    Py_DECREF(cols);
    return seq;
}

/* The pandas.arrays types whose blocks are read: masked ones first. */
static const char *const pd_type_names[] = {"IntegerArray", "FloatingArray",
                                            "BooleanArray", "DatetimeArray",
                                            "TimedeltaArray"};
#define PD_NMASKED 3
#define PD_NTYPES 5

/* What reading one block found. */
enum { BLOCK_READ = 0, BLOCK_LIES = 1, BLOCK_OTHER = 2 };

/* Returns a new reference to attribute `name` of `obj` when it is exactly
   an ndarray of `ndim` dimensions whose last is `n` long, NULL with no
   exception otherwise (a raising lookup is cleared: the block lies). */
static PyObject *
array_attr(PyObject *obj, const char *name, int ndim, npy_intp n)
{
    PyObject *a = get_attr(obj, name);
    if (a == NULL || !PyArray_CheckExact(a) ||
        PyArray_NDIM((PyArrayObject *)a) != ndim ||
        PyArray_DIM((PyArrayObject *)a, ndim - 1) != n) {
        PyErr_Clear();
        Py_XDECREF(a);
        return NULL;
    }
    return a;
}

/* The ndarray behind block values `values`, which are not an ndarray: for
   a masked array its `_data` (*mask: a new reference to its bool `_mask`),
   for a tz-naive DatetimeArray / TimedeltaArray its `_ndarray`.  Returns a
   new reference; NULL with *what BLOCK_OTHER for another type (or a
   tz-aware one), BLOCK_LIES for arrays that do not check.  No exception. */
static PyObject *
extension_values(PyObject *values, PyObject *const *types, npy_intp nloc,
                 npy_intp nrows, PyObject **mask, int *what)
{
    int t = 0;
    while (t < PD_NTYPES && (PyObject *)Py_TYPE(values) != types[t]) {
        t++;
    }
    *what = BLOCK_OTHER;
    if (t == PD_NTYPES) {
        return NULL;
    }
    if (t >= PD_NMASKED) {
        PyObject *dtype = get_attr(values, "dtype");
        int naive = dtype != NULL && PyArray_DescrCheck(dtype);
        Py_XDECREF(dtype);
        PyErr_Clear();
        if (!naive) {
            return NULL; /* a time zone: pandas' Arrow export says it */
        }
    }
    *what = BLOCK_LIES;
    if (t < PD_NMASKED) {
        if (nloc != 1) {
            return NULL;
        }
        PyObject *data = array_attr(values, "_data", 1, nrows);
        *mask = data == NULL ? NULL : array_attr(values, "_mask", 1, nrows);
        if (*mask == NULL ||
            PyArray_TYPE((PyArrayObject *)*mask) != NPY_BOOL) {
            Py_XDECREF(data);
            Py_CLEAR(*mask);
            return NULL;
        }
        return data;
    }
    PyObject *arr = array_attr(values, "_ndarray", 2, nrows);
    if (arr == NULL && nloc == 1) {
        arr = array_attr(values, "_ndarray", 1, nrows);
    }
    if (arr != NULL && PyArray_NDIM((PyArrayObject *)arr) == 2 &&
        PyArray_DIM((PyArrayObject *)arr, 0) != nloc) {
        Py_CLEAR(arr);
    }
    return arr;
}

/* Records the columns of block `b` (values in `va`, mask in `ma` or NULL)
   in `f`: those at positions `la` (a 1-D intp ndarray), or when `la` is
   NULL the one at position `at`.  Returns BLOCK_READ, or BLOCK_LIES for a
   position out of range or seen before.  Cannot fail otherwise. */
static int
place_block(dfb_pd_frame *f, Py_ssize_t b, PyArrayObject *la, npy_intp at,
            PyArrayObject *va, PyArrayObject *ma)
{
    const npy_intp nloc = la != NULL ? PyArray_DIM(la, 0) : 1;
    const int nd = PyArray_NDIM(va);
    for (npy_intp i = 0; i < nloc; i++) {
        npy_intp pos = at;
        if (la != NULL) {
            memcpy(&pos, PyArray_BYTES(la) + i * PyArray_STRIDE(la, 0),
                   sizeof(pos));
        }
        if (pos < 0 || pos >= f->ncols || f->cols[pos].block >= 0) {
            return BLOCK_LIES; /* not a placement pandas makes */
        }
        dfb_pd_column *c = &f->cols[pos];
        c->kind = ma != NULL ? DFB_PD_MASKED : DFB_PD_NUMPY;
        c->array = (PyObject *)va;
        c->descr = PyArray_DESCR(va);
        c->data =
            PyArray_BYTES(va) + (nd == 2 ? i * PyArray_STRIDE(va, 0) : 0);
        c->stride = PyArray_STRIDE(va, nd - 1);
        c->mask = ma != NULL ? (const uint8_t *)PyArray_BYTES(ma) : NULL;
        c->mstride = ma != NULL ? PyArray_STRIDE(ma, 0) : 0;
        c->block = b;
        c->row = nd == 2 ? (Py_ssize_t)i : 0;
    }
    return BLOCK_READ;
}

/* Reads `values` (borrowed; held by the caller) of block `b` into `f`: a
   2-D ndarray of (len(la), rows) shape when `la` (its positions) is given,
   else the 1-D array of the column at position `at` (pandas 2's
   ArrayManager), or an extension array read by extension_values.  Appends
   the arrays it points into to f->keep.  Returns BLOCK_READ, BLOCK_OTHER,
   BLOCK_LIES (no exception), or -1 with MemoryError. */
static int
read_values(dfb_pd_frame *f, Py_ssize_t b, PyObject *values, PyArrayObject *la,
            npy_intp at, PyObject *const *types)
{
    int r = BLOCK_LIES;
    PyObject *arr = NULL, *mask = NULL;
    const npy_intp nloc = la != NULL ? PyArray_DIM(la, 0) : 1;
    if (PyArray_CheckExact(values)) {
        PyArrayObject *v = (PyArrayObject *)values;
        int ok = la != NULL
                     ? PyArray_NDIM(v) == 2 && PyArray_DIM(v, 0) == nloc &&
                           PyArray_DIM(v, 1) == f->nrows
                     : PyArray_NDIM(v) == 1 && PyArray_DIM(v, 0) == f->nrows;
        if (!ok) {
            return BLOCK_LIES;
        }
        arr = Py_NewRef(values);
    }
    else {
        arr = extension_values(values, types, nloc, (npy_intp)f->nrows, &mask,
                               &r);
        if (arr == NULL) {
            return r;
        }
    }
    if (PyList_Append(f->keep, arr) < 0 ||
        (mask != NULL && PyList_Append(f->keep, mask) < 0)) {
        r = -1;
    }
    else {
        /* the keep list holds both arrays from here on */
        r = place_block(f, b, la, at, (PyArrayObject *)arr,
                        (PyArrayObject *)mask);
    }
    Py_XDECREF(mask);
    Py_DECREF(arr);
    return r;
}

/* Reads block `b` (`blk`, borrowed from the caller's tuple) into `f`
   through read_values.  Returns BLOCK_READ, BLOCK_OTHER (values of a type
   not read here: its columns stay DFB_PD_OTHER), BLOCK_LIES (no
   exception), or -1 with MemoryError. */
static int
read_block(dfb_pd_frame *f, Py_ssize_t b, PyObject *blk,
           PyObject *const *types)
{
    int r = BLOCK_LIES;
    PyObject *locs = NULL, *values = NULL;
    PyObject *pl = get_attr(blk, "mgr_locs");
    if (pl != NULL) {
        locs = get_attr(pl, "as_array");
        Py_DECREF(pl);
    }
    values = locs != NULL ? get_attr(blk, "values") : NULL;
    if (values == NULL || !PyArray_CheckExact(locs) ||
        PyArray_NDIM((PyArrayObject *)locs) != 1 ||
        PyArray_TYPE((PyArrayObject *)locs) != NPY_INTP) {
        PyErr_Clear();
    }
    else {
        r = read_values(f, b, values, (PyArrayObject *)locs, 0, types);
    }
    Py_XDECREF(values);
    Py_XDECREF(locs);
    return r;
}

/* Reads the `arrays` of pandas 2's ArrayManager `mgr` (exactly a list of
   one 1-D array per column, in column order) into `f`.  Returns
   BLOCK_READ, BLOCK_OTHER (some array of another kind), BLOCK_LIES, or -1
   with MemoryError. */
static int
read_arrays(dfb_pd_frame *f, PyObject *mgr, PyObject *const *types)
{
    PyObject *arrays = get_attr(mgr, "arrays");
    /* our own tuple of the items: it holds each while it is read */
    PyObject *items = arrays != NULL && PyList_CheckExact(arrays)
                          ? PyList_AsTuple(arrays)
                          : NULL;
    Py_XDECREF(arrays);
    if (items == NULL) {
        if (PyErr_Occurred() && PyErr_ExceptionMatches(PyExc_MemoryError)) {
            return -1;
        }
        PyErr_Clear();
        return BLOCK_LIES;
    }
    int r = PyTuple_GET_SIZE(items) == f->ncols ? BLOCK_READ : BLOCK_LIES;
    int other = 0;
    for (Py_ssize_t i = 0; r == BLOCK_READ && i < f->ncols; i++) {
        int ri = read_values(f, i, PyTuple_GET_ITEM(items, i), NULL, i, types);
        if (ri == BLOCK_OTHER) {
            other = 1;
        }
        else {
            r = ri;
        }
    }
    Py_DECREF(items);
    return r == BLOCK_READ && other ? BLOCK_OTHER : r;
}

/* Reads the blocks of manager `mgr` (held by the caller) into `f` (names,
   length, keep and cols set).  Returns 0 (f->all_read and the columns say
   what was read), or -1 with MemoryError. */
static int
read_blocks(PyObject *mgr, dfb_pd_frame *f)
{
    PyObject *types[PD_NTYPES] = {NULL};
    PyObject *blocks = NULL;
    int r = BLOCK_LIES;
    PyObject *arrays = imported_attr("pandas", "arrays");
    for (int t = 0; arrays != NULL && t < PD_NTYPES; t++) {
        types[t] = get_attr(arrays, pd_type_names[t]);
        if (types[t] == NULL) {
            break;
        }
    }
    Py_XDECREF(arrays);
    if (types[PD_NTYPES - 1] == NULL) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
            PyErr_Clear(); /* a pandas without them: not read here */
        }
        r = PyErr_Occurred() ? -1 : BLOCK_LIES;
        goto done;
    }
    blocks = get_attr(mgr, "blocks");
    PyErr_Clear();
    if (blocks == NULL && is_exact(mgr, "pandas.core.internals.array_manager",
                                   "ArrayManager") > 0) {
        r = read_arrays(f, mgr, types);
        f->all_read = r == BLOCK_READ;
        r = r == BLOCK_OTHER ? BLOCK_READ : r;
        goto done;
    }
    if (blocks == NULL || !PyTuple_Check(blocks)) {
        PyErr_Clear();
        goto done;
    }
    f->all_read = 1;
    /* our reference to the tuple holds every block while it is read */
    for (Py_ssize_t b = 0; b < PyTuple_GET_SIZE(blocks); b++) {
        r = read_block(f, b, PyTuple_GET_ITEM(blocks, b), types);
        if (r == BLOCK_OTHER) {
            f->all_read = 0;
        }
        else if (r != BLOCK_READ) {
            goto done;
        }
    }
    r = BLOCK_READ;
done:
    if (r != BLOCK_READ) {
        /* a manager that lies is not read at all */
        f->all_read = 0;
        for (Py_ssize_t i = 0; i < f->ncols; i++) {
            memset(&f->cols[i], 0, sizeof(dfb_pd_column));
            f->cols[i].block = -1;
        }
    }
    Py_XDECREF(blocks);
    for (int t = 0; t < PD_NTYPES; t++) {
        Py_XDECREF(types[t]);
    }
    return r < 0 ? -1 : 0;
}

/* Reads the axes of manager `mgr` into `out`: its names (labels_as_str of
   axes[0], the frame's columns) and length (len(axes[1]), its index), as
   pandas' DataFrame.columns and len() read them from the frame's manager.
   Returns 0, or -1 with an exception set. */
static int
read_axes(PyObject *mgr, dfb_pd_frame *out)
{
    PyObject *axes = get_attr(mgr, "axes");
    /* our own tuple of the axes: it holds both while they are read */
    PyObject *both = axes == NULL ? NULL : PySequence_Tuple(axes);
    Py_XDECREF(axes);
    if (both == NULL) {
        return -1;
    }
    int r = -1;
    if (PyTuple_GET_SIZE(both) != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "the pandas DataFrame's block manager has not two "
                        "axes");
        goto done;
    }
    out->names = labels_as_str(PyTuple_GET_ITEM(both, 0));
    Py_ssize_t len =
        out->names == NULL ? -1 : PyObject_Size(PyTuple_GET_ITEM(both, 1));
    if (len >= 0) {
        out->nrows = len;
        out->ncols = PyList_GET_SIZE(out->names);
        r = 0;
    }
done:
    Py_DECREF(both);
    return r;
}

int
dfb_pd_frame_read(PyObject *obj, dfb_pd_frame *out)
{
    int r = dfb_pandas_is_frame(obj);
    if (r <= 0) {
        return r < 0 ? -1 : 1;
    }
    /* the frame's manager, read once: another thread can swap `obj._mgr`
       (with the GIL off, between any two reads), so the names, the length
       and the blocks all come from this one object */
    out->mgr = get_attr(obj, "_mgr");
    if (out->mgr == NULL || read_axes(out->mgr, out) < 0) {
        return -1;
    }
    out->keep = PyList_New(0);
    out->cols = PyMem_Calloc(out->ncols > 0 ? (size_t)out->ncols : 1,
                             sizeof(dfb_pd_column));
    if (out->keep == NULL || out->cols == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        return -1;
    }
    for (Py_ssize_t i = 0; i < out->ncols; i++) {
        out->cols[i].block = -1;
    }
    return read_blocks(out->mgr, out);
}

/* A new reference to a pandas DataFrame over manager `mgr` of pandas frame
   `obj`: type(obj)._from_mgr(mgr, mgr.axes); `obj` itself on a pandas
   without _from_mgr.  NULL with an exception set on error. */
static PyObject *
frame_over(PyObject *obj, PyObject *mgr)
{
    PyObject *cls = (PyObject *)Py_TYPE(obj);
    PyObject *meth = get_attr(cls, "_from_mgr");
    if (meth == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return NULL;
        }
        PyErr_Clear(); /* a pandas before 2.1: the frame itself */
        return Py_NewRef(obj);
    }
    PyObject *axes = get_attr(mgr, "axes");
    PyObject *res = axes == NULL
                        ? NULL
                        : PyObject_CallFunctionObjArgs(meth, mgr, axes, NULL);
    Py_XDECREF(axes);
    Py_DECREF(meth);
    return dfb_pandas_frame_result(res, "DataFrame._from_mgr()");
}

PyObject *
dfb_pd_frame_snapshot(const dfb_pd_frame *f, PyObject *obj)
{
    return frame_over(obj, f->mgr);
}

PyObject *
dfb_pd_frame_pin(PyObject *obj)
{
    /* `obj._mgr` read once: whatever is read of the result comes from
       this manager, whichever another thread sets on `obj` since */
    PyObject *mgr = get_attr(obj, "_mgr");
    if (mgr == NULL) {
        return NULL;
    }
    PyObject *res = frame_over(obj, mgr);
    Py_DECREF(mgr);
    if (res == NULL || res == obj) {
        return res;
    }
    /* the caller's attrs, which pandas' Arrow export writes into the
       schema's metadata (set as pandas sets them: a shallow copy) */
    PyObject *attrs = get_attr(obj, "attrs");
    int e = attrs == NULL ||
            ((!PyDict_Check(attrs) || PyDict_GET_SIZE(attrs) > 0) &&
             PyObject_SetAttrString(res, "attrs", attrs) < 0);
    Py_XDECREF(attrs);
    if (e) {
        Py_CLEAR(res);
    }
    return res;
}

void
dfb_pd_frame_clear(dfb_pd_frame *f)
{
    Py_CLEAR(f->mgr);
    Py_CLEAR(f->names);
    Py_CLEAR(f->keep);
    PyMem_Free(f->cols);
    memset(f, 0, sizeof(*f));
}

PyObject *
dfb_pd_column_view(const dfb_pd_frame *f, Py_ssize_t i)
{
    const dfb_pd_column *c = &f->cols[i];
    if (c->kind == DFB_PD_OTHER) {
        PyErr_SetString(PyExc_SystemError, "the pandas column was not read");
        return NULL;
    }
    npy_intp n = (npy_intp)f->nrows, stride = (npy_intp)c->stride;
    Py_INCREF(c->descr); /* stolen below */
    PyObject *v = PyArray_NewFromDescr(&PyArray_Type, c->descr, 1, &n, &stride,
                                       (void *)c->data, 0, NULL);
    if (v == NULL) {
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)v, Py_NewRef(c->array)) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
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
