/* dfbuffer: the frame-source table (frame_source.h): which kind of frame
 * an object is and what to read of it, asked in one order by every
 * function that reads a frame.
 */
#include "common.h"
#include "frame_source.h"
#include "arrow_import.h"
#include "ixwalk.h"
#include "pandas_frame.h"
#include "probe.h"

int
dfb_is_mapping(PyObject *obj)
{
    if (PyDict_Check(obj)) {
        return 1;
    }
    PyObject *cls = dfb_import_attr("collections.abc", "Mapping");
    if (cls == NULL) {
        return -1;
    }
    int r = PyObject_IsInstance(obj, cls);
    Py_DECREF(cls);
    return r;
}

PyObject *
dfb_not_a_frame_error(const char *func, PyObject *obj)
{
    PyObject *collect = PyObject_GetAttrString(obj, "collect");
    if (collect == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return NULL; /* the getattr's own error, kept */
        }
        PyErr_Clear(); /* no .collect: the common case */
    }
    int lazy = collect != NULL;
    Py_XDECREF(collect);
    if (lazy) {
        PyErr_Format(PyExc_TypeError,
                     "%s() got a lazy frame (%.200s), which holds no data "
                     "yet: call .collect() on it first",
                     func, Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s() expects a dataframe: an Arrow PyCapsule producer, an "
                 "object with __dataframe__, an interchange DataFrame or a "
                 "mapping of column names to 1-D arrays, got %.200s%s",
                 func, Py_TYPE(obj)->tp_name, dfb_not_a_frame_hint(obj));
    return NULL;
}

const char *
dfb_not_a_frame_hint(PyObject *obj)
{
    if (PyList_Check(obj) || PyTuple_Check(obj)) {
        return ": make a frame of the rows first (pandas.DataFrame(rows)), "
               "or pass a mapping of column names to arrays";
    }
    if (PyArray_Check(obj)) {
        return PyDataType_HASFIELDS(PyArray_DESCR((PyArrayObject *)obj))
                   ? ": a structured array is no frame; pass a mapping of "
                     "its fields, {name: a[name] for name in a.dtype.names}"
                   : ": an array is no frame; pass a mapping of column "
                     "names to 1-D arrays, such as {\"x\": a[:, 0], "
                     "\"y\": a[:, 1]}";
    }
    if (obj == Py_None) {
        return ": pass the frame itself";
    }
    if (PyIter_Check(obj)) {
        return ": an iterator is no frame; make one of its rows first "
               "(pandas.DataFrame(list(rows)))";
    }
    return "";
}

const char *
dfb_frame_kind_name(dfb_frame_kind kind)
{
    switch (kind) {
        case DFB_SRC_PANDAS:
            return "pandas";
        case DFB_SRC_ARROW:
            return "arrow";
        case DFB_SRC_INTERCHANGE:
            return "interchange";
        case DFB_SRC_MAPPING:
            return "mapping";
        case DFB_SRC_SCHEMA:
            return "schema";
        default:
            return "none";
    }
}

/* The rows of the table: each returns 1 and sets *frame (a new reference)
   when `obj` is its kind of source, 0 when not, -1 with an exception. */

static int
match_pandas(dfb_state *st, PyObject *obj, int *allow_copy, PyObject **frame)
{
    (void)st;
    *frame = dfb_pandas_frame_behind(obj, allow_copy);
    return *frame != NULL ? 1 : PyErr_Occurred() ? -1 : 0;
}

static int
match_arrow(dfb_state *st, PyObject *obj, int *allow_copy, PyObject **frame)
{
    (void)st;
    (void)allow_copy;
    int r = dfb_arrow_is_producer(obj);
    *frame = r == 1 ? Py_NewRef(obj) : NULL;
    return r;
}

static int
match_interchange(dfb_state *st, PyObject *obj, int *allow_copy,
                  PyObject **frame)
{
    *frame = dfb_ix_frame(st, obj, *allow_copy);
    return *frame != NULL ? 1 : PyErr_Occurred() ? -1 : 0;
}

static int
match_mapping(dfb_state *st, PyObject *obj, int *allow_copy, PyObject **frame)
{
    (void)st;
    (void)allow_copy;
    int r = dfb_is_mapping(obj);
    *frame = r == 1 ? Py_NewRef(obj) : NULL;
    return r;
}

static int
match_schema(dfb_state *st, PyObject *obj, int *allow_copy, PyObject **frame)
{
    (void)st;
    (void)allow_copy;
    int r = dfb_probe_has_str(obj, "__arrow_c_schema__");
    *frame = r == 1 ? Py_NewRef(obj) : NULL;
    return r;
}

static const struct {
    dfb_frame_kind kind;
    int (*match)(dfb_state *, PyObject *, int *, PyObject **);
} frame_sources[] = {
    /* pandas first: a pandas frame also speaks Arrow and __dataframe__,
       and its blocks are read directly */
    {DFB_SRC_PANDAS, match_pandas},
    /* Arrow before __dataframe__: Arrow states offsets and buffers exactly
       where producers' __dataframe__ have known bugs */
    {DFB_SRC_ARROW, match_arrow},
    {DFB_SRC_INTERCHANGE, match_interchange},
    {DFB_SRC_MAPPING, match_mapping},
    {DFB_SRC_SCHEMA, match_schema},
};

/* Returns 1 if `obj` is an instance of class `name` of module `modname`
   (already imported: nothing is imported here; a subclass too, by its
   type alone: no __instancecheck__ runs), 0 if not (or not imported), -1
   with an exception set. */
static int
imported_instance(const char *modname, const char *name, PyObject *obj)
{
    PyObject *mn = PyUnicode_FromString(modname);
    PyObject *mod = mn == NULL ? NULL : PyImport_GetModule(mn);
    Py_XDECREF(mn);
    if (mod == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *cls = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    if (cls == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return -1;
        }
        PyErr_Clear(); /* a version without it */
        return 0;
    }
    int r = PyType_Check(cls) &&
            PyType_IsSubtype(Py_TYPE(obj), (PyTypeObject *)cls);
    Py_DECREF(cls);
    return r;
}

PyObject *
dfb_narwhals_native(PyObject *obj)
{
    /* narwhals not imported (the common case): no narwhals object, one
       look-up for both of its classes */
    PyObject *mn = PyUnicode_FromString("narwhals");
    PyObject *nw = mn == NULL ? NULL : PyImport_GetModule(mn);
    Py_XDECREF(mn);
    if (nw == NULL) {
        return NULL; /* with the look-up's error, if any */
    }
    Py_DECREF(nw);
    int r = imported_instance("narwhals.dataframe", "BaseFrame", obj);
    if (r == 0) {
        r = imported_instance("narwhals.series", "Series", obj);
    }
    if (r <= 0) {
        return NULL;
    }
    return PyObject_CallMethod(obj, "to_native", NULL);
}

int
dfb_frame_source_of(dfb_state *st, PyObject *obj, int allow_copy,
                    dfb_frame_source *out)
{
    out->kind = DFB_SRC_NONE;
    out->frame = NULL;
    out->allow_copy = allow_copy;
    PyObject *native = dfb_narwhals_native(obj);
    if (native == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (native != NULL) {
        obj = native; /* held until the row below has its own reference */
    }
    int r = 0;
    for (size_t i = 0; i < sizeof(frame_sources) / sizeof(frame_sources[0]);
         i++) {
        r = frame_sources[i].match(st, obj, &out->allow_copy, &out->frame);
        if (r < 0) {
            out->frame = NULL;
            break;
        }
        if (r == 1) {
            out->kind = frame_sources[i].kind;
            break;
        }
    }
    Py_XDECREF(native);
    return r < 0 ? -1 : 0;
}

PyObject *
dfb_mapping_snapshot(PyObject *obj)
{
    if (PyDict_CheckExact(obj)) {
        /* one copy under the dict's lock (free-threaded CPython): keys and
           values of one moment */
        return PyDict_Copy(obj);
    }
    /* any other mapping: its items() read once */
    PyObject *items = PyMapping_Items(obj);
    if (items == NULL) {
        return NULL;
    }
    PyObject *res = PyDict_New();
    /* our own list: nothing else can change its length or items */
    for (Py_ssize_t i = 0; res != NULL && i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(kv) || PyTuple_GET_SIZE(kv) != 2) {
            PyErr_SetString(PyExc_TypeError,
                            "the mapping's items() must be (key, value) "
                            "pairs");
            Py_CLEAR(res);
        }
        else if (PyDict_SetItem(res, PyTuple_GET_ITEM(kv, 0),
                                PyTuple_GET_ITEM(kv, 1)) < 0) {
            Py_CLEAR(res);
        }
    }
    Py_DECREF(items);
    return res;
}

int
dfb_frame_source_pin(dfb_frame_source *src)
{
    PyObject *pinned;
    switch (src->kind) {
        case DFB_SRC_PANDAS:
            pinned = dfb_pd_frame_pin(src->frame);
            break;
        case DFB_SRC_MAPPING:
            pinned = dfb_mapping_snapshot(src->frame);
            break;
        default:
            return 0;
    }
    Py_SETREF(src->frame, pinned);
    return pinned != NULL ? 0 : -1;
}
