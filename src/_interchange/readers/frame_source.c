/* dfbuffer: the frame-source table (readers.h): which kind of frame
 * or column an object is and what to read of it, asked in one order by
 * every function that reads a frame, and the column rows that read one
 * column (column_to_ndarray, a mapping's values).
 */
#include "common.h"
#include "readers.h"
#include "arrow.h"
#include "pandas.h"
#include "exchange.h"
#include "probe.h"

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#define Py_T_PYSSIZET T_PYSSIZET
#define Py_READONLY READONLY
#endif

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

/* A row of the frame-source table: the kind, its name (what Python's
   operation tables are keyed by, dfb_frame_kind_names), the test that
   matches it and how its frame is read once for a caller that reads it
   more than once (dfb_frame_source_pin; NULL: as it is). */
typedef struct {
    dfb_frame_kind kind;
    const char *name;
    int (*match)(dfb_state *, PyObject *, int *, PyObject **);
    PyObject *(*pin)(PyObject *);
} frame_row;

static const frame_row frame_sources[] = {
    /* pandas first: a pandas frame also speaks Arrow and __dataframe__,
       and its blocks are read directly */
    {DFB_SRC_PANDAS, "pandas", match_pandas, dfb_pd_frame_pin},
    /* Arrow before __dataframe__: Arrow states offsets and buffers exactly
       where producers' __dataframe__ have known bugs */
    {DFB_SRC_ARROW, "arrow", match_arrow, NULL},
    {DFB_SRC_INTERCHANGE, "interchange", match_interchange, NULL},
    {DFB_SRC_MAPPING, "mapping", match_mapping, dfb_mapping_snapshot},
    {DFB_SRC_SCHEMA, "schema", match_schema, NULL},
};

#define N_FRAME_SOURCES (sizeof(frame_sources) / sizeof(frame_sources[0]))

/* The row of `kind`, or NULL for DFB_SRC_NONE.  Cannot fail. */
static const frame_row *
row_of(dfb_frame_kind kind)
{
    for (size_t i = 0; i < N_FRAME_SOURCES; i++) {
        if (frame_sources[i].kind == kind) {
            return &frame_sources[i];
        }
    }
    return NULL;
}

const char *
dfb_frame_kind_name(dfb_frame_kind kind)
{
    const frame_row *row = row_of(kind);
    return row != NULL ? row->name : "none";
}

PyObject *
dfb_frame_kind_names(void)
{
    PyObject *out = PyTuple_New((Py_ssize_t)N_FRAME_SOURCES);
    for (size_t i = 0; out != NULL && i < N_FRAME_SOURCES; i++) {
        PyObject *s = PyUnicode_FromString(frame_sources[i].name);
        if (s == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, s);
    }
    return out;
}

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
    for (size_t i = 0; i < N_FRAME_SOURCES; i++) {
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
    const frame_row *row = row_of(src->kind);
    if (row == NULL || row->pin == NULL) {
        return 0; /* read as it is */
    }
    PyObject *pinned = row->pin(src->frame);
    Py_SETREF(src->frame, pinned);
    return pinned != NULL ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* _FrameOperation: an operation of the table, one callable per row     */
/* ------------------------------------------------------------------ */

/* One operation of the table for the Python functions (to_arrow's Arrow
   nodes, schema, to_interchange, dfbuffer.pandas, the batches): a callable
   per row, in the rows' order, and the class of what a row is handed. */
typedef struct {
    PyObject_HEAD PyObject *name; /* str */
    PyObject *rows;   /* tuple: one callable per row of frame_sources */
    PyObject *source; /* a tuple subclass: (obj, frame, allow_copy, func) */
    vectorcallfunc vectorcall;
} frame_op;

/* The position of the row of `kind` in frame_sources, or -1 for
   DFB_SRC_NONE.  Cannot fail. */
static Py_ssize_t
row_index(dfb_frame_kind kind)
{
    const frame_row *row = row_of(kind);
    return row != NULL ? row - frame_sources : -1;
}

/* op(obj, func, *args): asks the table once for `obj` (read once, as
   dfb_frame_source_pin reads it) and calls the row's callable with the
   source (op.source of (obj, frame, allow_copy, func)) and `args`; the
   TypeError of dfb_not_a_frame_error for `func` when no row reads obj.
   Returns what the row returns, or NULL with an exception set. */
static PyObject *
frame_op_call(PyObject *callable, PyObject *const *args, size_t nargsf,
              PyObject *kwnames)
{
    frame_op *self = (frame_op *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) || nargs < 2 ||
        !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "a frame operation takes (obj, func, *args), func a "
                        "str");
        return NULL;
    }
    const char *func = PyUnicode_AsUTF8(args[1]);
    dfb_state *st = PyType_GetModuleState(Py_TYPE(callable));
    if (func == NULL || st == NULL) {
        return NULL;
    }
    PyObject *obj = args[0];
    dfb_frame_source src;
    if (dfb_frame_source_of(st, obj, 1, &src) < 0 ||
        dfb_frame_source_pin(&src) < 0) {
        return NULL;
    }
    Py_ssize_t i = row_index(src.kind);
    if (i < 0) {
        return dfb_not_a_frame_error(func, obj);
    }
    PyObject *items = PyTuple_Pack(
        4, obj, src.frame, src.allow_copy ? Py_True : Py_False, args[1]);
    Py_DECREF(src.frame);
    PyObject *targs = items != NULL ? PyTuple_Pack(1, items) : NULL;
    Py_XDECREF(items);
    if (targs == NULL) {
        return NULL;
    }
    /* tuple.__new__(source, items): the class's own __new__ is not run */
    PyObject *source =
        PyTuple_Type.tp_new((PyTypeObject *)self->source, targs, NULL);
    Py_DECREF(targs);
    if (source == NULL) {
        return NULL;
    }
    PyObject *row = Py_NewRef(PyTuple_GET_ITEM(self->rows, i));
    PyObject *small[8];
    size_t n = (size_t)nargs - 1; /* the source, then args[2:] */
    PyObject **stack = n <= 8 ? small : PyMem_Malloc(n * sizeof(PyObject *));
    PyObject *res = NULL;
    if (stack == NULL) {
        PyErr_NoMemory();
    }
    else {
        stack[0] = source;
        for (size_t k = 1; k < n; k++) {
            stack[k] = args[k + 1];
        }
        res = PyObject_Vectorcall(row, stack, n, NULL);
        if (stack != small) {
            PyMem_Free(stack);
        }
    }
    Py_DECREF(row);
    Py_DECREF(source);
    return res;
}

/* _FrameOperation(name, rows, source): `rows` a tuple of one callable per
   row of the table (dfb_frame_kind_names' order), `source` a tuple
   subclass.  Returns a new operation, or NULL with TypeError. */
static PyObject *
frame_op_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *name, *rows, *source;
    if ((kwds != NULL && PyDict_GET_SIZE(kwds) != 0) ||
        !PyArg_ParseTuple(args, "UO!O!:_FrameOperation", &name, &PyTuple_Type,
                          &rows, &PyType_Type, &source)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError,
                            "_FrameOperation() takes no keyword arguments");
        }
        return NULL;
    }
    if (PyTuple_GET_SIZE(rows) != (Py_ssize_t)N_FRAME_SOURCES) {
        PyErr_Format(PyExc_TypeError,
                     "_FrameOperation() takes one callable per row of the "
                     "frame-source table (%zd), got %zd",
                     (Py_ssize_t)N_FRAME_SOURCES, PyTuple_GET_SIZE(rows));
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rows); i++) {
        if (!PyCallable_Check(PyTuple_GET_ITEM(rows, i))) {
            PyErr_Format(PyExc_TypeError,
                         "_FrameOperation() row %zd is not callable", i);
            return NULL;
        }
    }
    if (!PyType_IsSubtype((PyTypeObject *)source, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError,
                        "_FrameOperation() source must be a tuple subclass");
        return NULL;
    }
    frame_op *self = (frame_op *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->name = Py_NewRef(name);
    self->rows = Py_NewRef(rows);
    self->source = Py_NewRef(source);
    self->vectorcall = frame_op_call;
    return (PyObject *)self;
}

/* tp_traverse: the type and what the operation holds. */
static int
frame_op_traverse(PyObject *op, visitproc visit, void *arg)
{
    frame_op *self = (frame_op *)op;
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(self->name);
    Py_VISIT(self->rows);
    Py_VISIT(self->source);
    return 0;
}

/* tp_clear: drops what the operation holds.  Returns 0. */
static int
frame_op_clear(PyObject *op)
{
    frame_op *self = (frame_op *)op;
    Py_CLEAR(self->name);
    Py_CLEAR(self->rows);
    Py_CLEAR(self->source);
    return 0;
}

/* tp_dealloc: untracks, clears, frees, and drops the heap type. */
static void
frame_op_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    (void)frame_op_clear(op);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyMemberDef frame_op_members[] = {
    {"name", Py_T_OBJECT_EX, offsetof(frame_op, name), Py_READONLY,
     "The operation's name."},
    {"rows", Py_T_OBJECT_EX, offsetof(frame_op, rows), Py_READONLY,
     "One callable per row of the table, in the rows' order."},
    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(frame_op, vectorcall),
     Py_READONLY, NULL},
    {NULL},
};

static PyType_Slot frame_op_slots[] = {
    {Py_tp_doc,
     "_FrameOperation(name, rows, source, /)\n--\n\n"
     "Private: an operation of the frame-source table, one callable per\n"
     "row (rows, in the order of _frame_kinds()).  op(obj, func, *args)\n"
     "asks the table once and calls the row's callable with source(obj,\n"
     "frame, allow_copy, func) and args (frame read once); TypeError\n"
     "naming func when no row reads obj."},
    {Py_tp_new, frame_op_new},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_traverse, frame_op_traverse},
    {Py_tp_clear, frame_op_clear},
    {Py_tp_dealloc, frame_op_dealloc},
    {Py_tp_members, frame_op_members},
    {0, NULL},
};

static PyType_Spec frame_op_spec = {
    .name = "dfbuffer._interchange._FrameOperation",
    .basicsize = sizeof(frame_op),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = frame_op_slots,
};

int
dfb_frame_op_init(PyObject *m)
{
    PyObject *type = PyType_FromModuleAndSpec(m, &frame_op_spec, NULL);
    if (type == NULL) {
        return -1;
    }
    int r = PyModule_AddType(m, (PyTypeObject *)type);
    Py_DECREF(type);
    return r;
}

/* ------------------------------------------------------------------ */
/* The column rows: which reader reads one column (column_to_ndarray,   */
/* a mapping's values, a pandas Series read without its frame)          */
/* ------------------------------------------------------------------ */

/* Sets *key to the key of pandas Series `obj` (str(obj.name), or the name
   itself when it is a str; a new reference), or to NULL when `obj` is not a
   Series or its name is None.  Returns 0, or -1 with an exception set (the
   name could not be read or made a str). */
int
dfb_series_key(dfb_state *st, PyObject *obj, PyObject **key)
{
    *key = NULL;
    PyObject *pd = PyImport_GetModule(st->str.pandas);
    PyObject *cls = pd == NULL ? NULL : PyObject_GetAttrString(pd, "Series");
    Py_XDECREF(pd);
    int is_series = cls != NULL && PyType_Check(cls) &&
                    PyObject_TypeCheck(obj, (PyTypeObject *)cls);
    Py_XDECREF(cls);
    PyErr_Clear(); /* no pandas, or no pandas.Series: not a Series */
    if (!is_series) {
        return 0;
    }
    PyObject *name = PyObject_GetAttrString(obj, "name");
    if (name == NULL) {
        return -1;
    }
    if (name != Py_None) {
        *key = PyUnicode_Check(name) ? Py_NewRef(name) : PyObject_Str(name);
    }
    int failed = name != Py_None && *key == NULL;
    Py_DECREF(name);
    return failed ? -1 : 0;
}

/* from_dataframe of the table's pandas Series row without making the frame:
   a pandas Series of NumPy values (or of a nullable array) read as its
   frame's block is (dfb_pandas_series_fast), keyed as that frame's column
   (str(name), "" when unnamed).  Returns 1 with *res the dict (a new
   reference), 0 with *res NULL when `obj` is not read so (the table's
   rows read it), -1 with an exception set. */
int
dfb_series_fast_dict(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                     PyObject **res)
{
    PyObject *key = NULL, *value = NULL;
    *res = NULL;
    int fast = dfb_pandas_series_fast(st, obj, opts, &value);
    if (fast != 1 && fast >= 0) {
        return 0;
    }
    if (fast > 0 && dfb_series_key(st, obj, &key) == 0) {
        if (key == NULL) {
            key = PyUnicode_FromString("");
        }
        *res = key == NULL ? NULL : PyDict_New();
        if (*res != NULL && PyDict_SetItem(*res, key, value) < 0) {
            Py_CLEAR(*res);
        }
    }
    Py_XDECREF(key);
    Py_XDECREF(value);
    return *res != NULL ? 1 : -1;
}

/* What to do instead of passing `col`, no column: a static string
   starting ": " (a list or tuple, a lazy frame), or "".  Cannot fail. */
static const char *
column_hint(PyObject *col)
{
    if (PyList_Check(col) || PyTuple_Check(col)) {
        return ": pass np.asarray(...) of it";
    }
    if (PyDict_Check(col)) {
        return ": a mapping of columns is a frame, read by from_dataframe()";
    }
    /* asked of the type: no __getattr__ runs for a message */
    PyObject *name = PyUnicode_FromString("collect");
    int lazy =
        name == NULL ? -1 : dfb_has_attr((PyObject *)Py_TYPE(col), name);
    Py_XDECREF(name);
    if (lazy < 0) {
        PyErr_Clear(); /* no hint, the TypeError is raised all the same */
    }
    return lazy == 1 ? ": a lazy frame holds no data yet, call .collect() on "
                       "it first"
                     : "";
}

/* column_to_ndarray's dispatch of `col` (borrowed), in this order: an
   interchange column (get_buffers on the type), an Arrow producer, an
   interchange column by instance attribute, then the registry's last two
   protocols (protocols.c): pyarrow's __arrow_array__ (when pyarrow
   imports; its array read as any Arrow producer) and __array__ (copy=False
   unless `allow_copy`; a 1-D result only).  `func` names the public
   function called, in messages.  Returns a new reference, or NULL with an
   exception set (TypeError when `col` is none of these). */
PyObject *
dfb_column_dispatch(dfb_state *st, PyObject *col, const dfb_opts *opts,
                    int allow_copy, const char *func)
{
    /* the instance is asked (has_attr) only when the type names neither;
       the three names in one walk of the MRO (dfb_probe_mask) */
    int has = dfb_probe_mask(st, col,
                             DFB_PB(DFB_PN_GET_BUFFERS) | DFB_PB_ARROW_HOST);
    if (has < 0) {
        return NULL;
    }
    if (has & DFB_PB(DFB_PN_GET_BUFFERS)) {
        return dfb_ix_column_to_ndarray(st, col, opts, allow_copy);
    }
    int r = has != 0 ? 1 : dfb_type_is_arrow_producer(st, col);
    if (r < 0) {
        return NULL;
    }
    if (r == 1) {
        return dfb_arrow_column_to_ndarray(st, col, opts, allow_copy);
    }
    if ((r = dfb_has_attr(col, st->str.get_buffers)) < 0) {
        return NULL;
    }
    if (r == 1) {
        return dfb_ix_column_to_ndarray(st, col, opts, allow_copy);
    }
    has = dfb_probe_mask(
        st, col,
        DFB_PB(DFB_PN_ARROW_ARRAY_METHOD) | DFB_PB(DFB_PN_ARRAY_METHOD));
    if (has < 0) {
        return NULL;
    }
    if (has & DFB_PB(DFB_PN_ARROW_ARRAY_METHOD)) {
        PyObject *arr = dfb_arrow_array_method_call(st, col);
        if (arr != NULL) {
            PyObject *res =
                dfb_arrow_column_to_ndarray(st, arr, opts, allow_copy);
            Py_DECREF(arr);
            return res;
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    if (has & DFB_PB(DFB_PN_ARRAY_METHOD)) {
        return dfb_array_method_column(st, col, allow_copy, func);
    }
    PyErr_Format(PyExc_TypeError,
                 "%s() expects a column: a 1-D array (an object with "
                 "__arrow_array__ or __array__), a Buffer, an Arrow array or "
                 "a DataFrame-interchange column, got %.200s%s",
                 func, Py_TYPE(col)->tp_name, column_hint(col));
    return NULL;
}

/* column_to_ndarray of pandas' interchange Column object: the Series
   behind it, read as a one-column frame (never pandas' buffers, which drop
   the slice offset of Arrow-backed columns, P-26); of a pandas Series
   of a Period, Interval, complex or object dtype (dfb_pandas_series_frame,
   asked only when `series`: the caller found a pandas Series); and of a
   pandas ExtensionArray (dfb_pandas_array_frame).
   Returns a new reference, or NULL with an exception set, or NULL without one
   when `col` is no such object. */
static PyObject *
pandas_column(dfb_state *st, PyObject *col, const dfb_opts *opts,
              int allow_copy, int series)
{
    int pd_copy = allow_copy;
    PyObject *frame = dfb_pandas_column_frame(col, &pd_copy);
    if (frame == NULL && !PyErr_Occurred() && series) {
        /* a Series pandas' Arrow export would mangle (Period as bare
           ordinals) or refuse: read as the column of a frame */
        frame = dfb_pandas_series_frame(col);
    }
    if (frame == NULL && !PyErr_Occurred()) {
        /* a pandas array (Categorical, a tz-aware DatetimeArray, ...):
           read as the column of a frame, not through its __array__ */
        frame = dfb_pandas_array_frame(col);
    }
    if (frame == NULL) {
        return NULL;
    }
    PyObject *d = dfb_pandas_frame_dict(st, frame, opts, pd_copy);
    Py_DECREF(frame);
    if (d == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    if (PyDict_CheckExact(d) && PyDict_GET_SIZE(d) == 1) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        if (PyDict_Next(d, &pos, &k, &v)) {
            res = Py_NewRef(v);
        }
    }
    Py_DECREF(d);
    if (res == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "pandas' column did not convert to one column");
    }
    return res;
}

/* One column `col` as column_to_ndarray reads it, and a mapping's value
   alike: the native object of a narwhals Series, a pandas Series (or
   pandas' interchange Column) as the column of its frame, anything else
   through column_dispatch (`func`: the public function called, in
   messages).  Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_column_read(dfb_state *st, PyObject *col, const dfb_opts *opts,
                int allow_copy, const char *func)
{
    PyObject *native = dfb_narwhals_native(col);
    if (native == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (native != NULL) {
        col = native; /* held to the end */
    }
    /* a pandas Series of NumPy values: its block read as its frame's; any
       other Series as its frame (fast == 2), no Series asked about twice */
    PyObject *res = NULL;
    int fast = dfb_pandas_series_fast(st, col, opts, &res);
    if (fast == 0 || fast == 2) {
        res = pandas_column(st, col, opts, allow_copy, fast == 2);
    }
    if ((fast == 0 || fast == 2) && res == NULL && !PyErr_Occurred()) {
        /* each protocol probed once per call, on the type (probe.c): the
           Arrow import answers its own probes from this scope's record */
        uint64_t scope = dfb_probe_scope_open(st, col);
        res = dfb_column_dispatch(st, col, opts, allow_copy, func);
        dfb_probe_scope_close(st, scope);
    }
    Py_XDECREF(native);
    return res;
}

/* column_to_ndarray reads a pandas frame `obj` (borrowed) as one struct
   column (its Arrow export), whose fields need unique names: ValueError
   naming the first name several columns share.  Returns 0 (not a pandas
   frame, or unique names), or -1 with an exception set. */
int
dfb_column_frame_names_unique(PyObject *obj)
{
    int is = dfb_pandas_is_frame(obj);
    if (is <= 0) {
        return is;
    }
    PyObject *names = dfb_pandas_frame_names(obj);
    PyObject *seen = names == NULL ? NULL : PySet_New(NULL);
    int r = seen == NULL ? -1 : 0;
    for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(names); i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        r = PySet_Contains(seen, name);
        if (r == 0) {
            r = PySet_Add(seen, name);
        }
        else if (r == 1) {
            PyErr_Format(PyExc_ValueError,
                         "column_to_ndarray() reads a frame as one struct "
                         "column, whose fields need unique names: duplicate "
                         "column name %R (rename the columns, or pass one "
                         "column, df[name])",
                         name);
            r = -1;
        }
    }
    Py_XDECREF(seen);
    Py_XDECREF(names);
    return r;
}
