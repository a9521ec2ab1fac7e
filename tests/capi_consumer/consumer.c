/* A third-party consumer of dfbuffer's public C API, built by the tests
 * (tests/capi_build.py) against dfbuffer.get_include() only.
 *
 * It owns malloc'd blocks (counted, freed by a capsule destructor) and
 * Arrow arrays it builds itself (release callbacks counted), so the tests
 * can show exactly when dfbuffer lets go of them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dfbuffer/dfbuffer.h"

#include <stdlib.h>
#include <string.h>

#ifndef CONSUMER_NAME
#define CONSUMER_NAME capi_consumer
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

/* Counters (plain C integers: the consumer's own bookkeeping). */
static long blocks_live, blocks_freed;
static long arrow_arrays_made, arrow_arrays_released;
static long arrow_schemas_made, arrow_schemas_released;

#define BLOCK_CAPSULE "capi_consumer.block"

/* Capsule destructor: frees the block. */
static void
block_free(PyObject *cap)
{
    void *p = PyCapsule_GetPointer(cap, BLOCK_CAPSULE);
    free(p);
    blocks_live--;
    blocks_freed++;
}

/* Returns a new capsule owning a malloc'd block of `n` bytes (*out), or
   NULL with MemoryError. */
static PyObject *
block_new(size_t n, void **out)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *cap = PyCapsule_New(p, BLOCK_CAPSULE, block_free);
    if (cap == NULL) {
        free(p);
        return NULL;
    }
    blocks_live++;
    *out = p;
    return cap;
}

/* api() -> (abi, version, target) of the runtime's table and this build. */
static PyObject *
api(PyObject *m, PyObject *unused)
{
    return Py_BuildValue("(IIi)", DfBuffer_API->abi_version,
                         DfBuffer_API->api_version,
                         (int)DFBUFFER_TARGET_VERSION);
}

/* counters() -> dict of the consumer's counters. */
static PyObject *
counters(PyObject *m, PyObject *unused)
{
    return Py_BuildValue(
        "{slslslslslsl}", "blocks_live", blocks_live, "blocks_freed",
        blocks_freed, "arrays_made", arrow_arrays_made, "arrays_released",
        arrow_arrays_released, "schemas_made", arrow_schemas_made,
        "schemas_released", arrow_schemas_released);
}

/* buffer_type() -> dfbuffer.Buffer as the C API sees it. */
static PyObject *
buffer_type(PyObject *m, PyObject *unused)
{
    return Py_NewRef((PyObject *)DfBuffer_Type);
}

/* is_buffer(obj) -> bool (DfBuffer_Check). */
static PyObject *
is_buffer(PyObject *m, PyObject *obj)
{
    return PyBool_FromLong(DfBuffer_Check(obj));
}

/* make_block(n, readonly=0) -> Buffer of n float64 0.0, 1.0, ... over a
   malloc'd block owned by a capsule (DfBuffer_New). */
static PyObject *
make_block(PyObject *m, PyObject *args)
{
    Py_ssize_t n;
    int readonly = 0;
    if (!PyArg_ParseTuple(args, "n|i", &n, &readonly)) {
        return NULL;
    }
    double *p = NULL;
    PyObject *cap = block_new((size_t)n * sizeof(double), (void **)&p);
    if (cap == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        p[i] = (double)i;
    }
    PyObject *b = DfBuffer_New(p, n * (Py_ssize_t)sizeof(double), cap, "<f8",
                               1, &n, NULL, DFBUFFER_DEVICE_CPU, 0, readonly);
    Py_DECREF(cap);
    return b;
}

/* make_owned(n, extra) -> like make_block, but the Buffer's owner is the
   tuple (block capsule, extra): the tests close a reference cycle through
   it. */
static PyObject *
make_owned(PyObject *m, PyObject *args)
{
    Py_ssize_t n;
    PyObject *extra;
    if (!PyArg_ParseTuple(args, "nO", &n, &extra)) {
        return NULL;
    }
    double *p = NULL;
    PyObject *cap = block_new((size_t)n * sizeof(double), (void **)&p);
    if (cap == NULL) {
        return NULL;
    }
    PyObject *owner = PyTuple_Pack(2, cap, extra);
    Py_DECREF(cap);
    if (owner == NULL) {
        return NULL;
    }
    PyObject *b = DfBuffer_New(p, n * (Py_ssize_t)sizeof(double), owner, NULL,
                               0, NULL, NULL, DFBUFFER_DEVICE_CPU, 0, 0);
    Py_DECREF(owner);
    return b;
}

/* make_reversed(n) -> Buffer viewing n int32 n-1, ..., 0 backwards
   (DfBuffer_FromData with a negative stride: element 0 is the last). */
static PyObject *
make_reversed(PyObject *m, PyObject *args)
{
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "n", &n) || n < 1) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "n >= 1");
        }
        return NULL;
    }
    int32_t *p = NULL;
    PyObject *cap = block_new((size_t)n * sizeof(int32_t), (void **)&p);
    if (cap == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        p[i] = (int32_t)i;
    }
    Py_ssize_t stride = -(Py_ssize_t)sizeof(int32_t);
    PyObject *b = DfBuffer_FromData(p + n - 1, cap, "<i4", 1, &n, &stride,
                                    DFBUFFER_DEVICE_CPU, 0, 1);
    Py_DECREF(cap);
    return b;
}

/* make_bad(which) -> raises what DfBuffer_New raises for a bad argument. */
static PyObject *
make_bad(PyObject *m, PyObject *args)
{
    int which;
    if (!PyArg_ParseTuple(args, "i", &which)) {
        return NULL;
    }
    static double block[4];
    Py_ssize_t shape = 8;
    switch (which) {
        case 0: /* shape beyond the block */
            return DfBuffer_New(block, sizeof(block), Py_None, "<f8", 1,
                                &shape, NULL, DFBUFFER_DEVICE_CPU, 0, 1);
        case 1: /* an object dtype */
            return DfBuffer_New(block, sizeof(block), Py_None, "|O", 0, NULL,
                                NULL, DFBUFFER_DEVICE_CPU, 0, 1);
        case 2: /* no owner */
            return DfBuffer_New(block, sizeof(block), NULL, "<f8", 0, NULL,
                                NULL, DFBUFFER_DEVICE_CPU, 0, 1);
        case 3: /* a bad type string */
            return DfBuffer_New(block, sizeof(block), Py_None, "no such", 0,
                                NULL, NULL, DFBUFFER_DEVICE_CPU, 0, 1);
        default: /* not a Buffer */
        {
            DfBuffer_Info info;
            if (DfBuffer_GetInfo(Py_None, &info) < 0) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
    }
}

/* info(buffer) -> dict of DfBuffer_GetInfo's fields. */
static PyObject *
info(PyObject *m, PyObject *buf)
{
    DfBuffer_Info in;
    if (DfBuffer_GetInfo(buf, &in) < 0) {
        return NULL;
    }
    PyObject *shape = PyTuple_New(in.ndim), *strides = PyTuple_New(in.ndim);
    if (shape == NULL || strides == NULL) {
        Py_XDECREF(shape);
        Py_XDECREF(strides);
        return NULL;
    }
    for (int i = 0; i < in.ndim; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromSsize_t(in.shape[i]));
        PyTuple_SET_ITEM(strides, i, PyLong_FromSsize_t(in.strides[i]));
    }
    return Py_BuildValue("{sKsKsnsnsisNsNsisisisisCsCsOsO}", "ptr",
                         (unsigned long long)(uintptr_t)in.ptr, "data",
                         (unsigned long long)(uintptr_t)in.data, "bufsize",
                         in.bufsize, "itemsize", in.itemsize, "ndim", in.ndim,
                         "shape", shape, "strides", strides, "device_type",
                         (int)in.device_type, "device_id", (int)in.device_id,
                         "readonly", in.readonly, "native", in.native, "kind",
                         (int)in.kind, "byteorder", (int)in.byteorder, "dtype",
                         in.dtype, "owner", in.owner ? in.owner : Py_None);
}

/* as_ndarray(buffer) -> DfBuffer_AsNdarray. */
static PyObject *
as_ndarray(PyObject *m, PyObject *buf)
{
    return DfBuffer_AsNdarray(buf);
}

/* from_object(obj, dtype=None) -> DfBuffer_FromObject. */
static PyObject *
from_object(PyObject *m, PyObject *args)
{
    PyObject *obj, *dtype = NULL;
    if (!PyArg_ParseTuple(args, "O|O", &obj, &dtype)) {
        return NULL;
    }
    return DfBuffer_FromObject(obj, dtype);
}

#if DFBUFFER_TARGET_VERSION >= 2
/* buffer_to_ndarray(buf, dtype, offset=0, length=-1). */
static PyObject *
buffer_to_ndarray(PyObject *m, PyObject *args)
{
    PyObject *buf, *dtype;
    long long offset = 0, length = -1;
    if (!PyArg_ParseTuple(args, "OO|LL", &buf, &dtype, &offset, &length)) {
        return NULL;
    }
    return DfBuffer_BufferToNdarray(buf, dtype, offset, length);
}

/* column_to_ndarray(col, nulls=0). */
static PyObject *
column_to_ndarray(PyObject *m, PyObject *args)
{
    PyObject *col;
    int nulls = DFBUFFER_NULLS_MASK;
    if (!PyArg_ParseTuple(args, "O|i", &col, &nulls)) {
        return NULL;
    }
    return DfBuffer_ColumnToNdarray(col, nulls);
}

/* from_dataframe(obj, nulls=0, allow_copy=1). */
static PyObject *
from_dataframe(PyObject *m, PyObject *args)
{
    PyObject *obj;
    int nulls = DFBUFFER_NULLS_MASK, allow_copy = 1;
    if (!PyArg_ParseTuple(args, "O|ii", &obj, &nulls, &allow_copy)) {
        return NULL;
    }
    return DfBuffer_FromDataFrame(obj, nulls, allow_copy);
}

/* columns_loop(ixframe) -> list: DfBuffer_ColumnToNdarray on every
   get_column(i) of an interchange DataFrame (the benchmark's C path). */
static PyObject *
columns_loop(PyObject *m, PyObject *df)
{
    PyObject *n_o = PyObject_CallMethod(df, "num_columns", NULL);
    if (n_o == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(n_o);
    Py_DECREF(n_o);
    if (n < 0) {
        return PyErr_Occurred() ? NULL : PyList_New(0);
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    PyObject *get = PyUnicode_InternFromString("get_column");
    if (get == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *idx = PyLong_FromSsize_t(i);
        PyObject *col = idx ? PyObject_CallMethodOneArg(df, get, idx) : NULL;
        Py_XDECREF(idx);
        PyObject *arr =
            col ? DfBuffer_ColumnToNdarray(col, DFBUFFER_NULLS_MASK) : NULL;
        Py_XDECREF(col);
        if (arr == NULL) {
            Py_DECREF(get);
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, arr);
    }
    Py_DECREF(get);
    return out;
}

/* ---- Arrow arrays built here ---- */

/* What one built array owns: its buffers and the buffer pointer list. */
typedef struct {
    const void *buffers[2];
    void *values;
    void *validity;
    struct ArrowArray **children;
    struct ArrowArray *child_storage;
} built_array;

static void
built_array_release(struct ArrowArray *a)
{
    built_array *b = a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) {
        if (b->children[i]->release != NULL) {
            b->children[i]->release(b->children[i]);
        }
    }
    free(b->children);
    free(b->child_storage);
    free(b->values);
    free(b->validity);
    free(b);
    a->release = NULL;
    arrow_arrays_released++;
}

static void
schema_release(struct ArrowSchema *s)
{
    for (int64_t i = 0; i < s->n_children; i++) {
        if (s->children[i]->release != NULL) {
            s->children[i]->release(s->children[i]);
        }
    }
    if (s->n_children > 0) {
        free(s->children[0]); /* the children's storage */
        free(s->children);
    }
    free((void *)s->name);
    s->release = NULL;
    arrow_schemas_released++;
}

/* Fills *s as a schema of `format` named `name` (copied).  Returns 0 or
   -1 with MemoryError. */
static int
schema_init(struct ArrowSchema *s, const char *format, const char *name,
            int64_t flags)
{
    memset(s, 0, sizeof(*s));
    char *nm = malloc(strlen(name) + 1);
    if (nm == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    strcpy(nm, name);
    s->format = format;
    s->name = nm;
    s->flags = flags;
    s->release = schema_release;
    arrow_schemas_made++;
    return 0;
}

/* Fills *a as an int64 array 0, 10, 20, ... of `n` elements, with every
   third element null when `nulls`.  Returns 0 or -1 with MemoryError. */
static int
int64_array_init(struct ArrowArray *a, int64_t n, int nulls)
{
    memset(a, 0, sizeof(*a));
    built_array *b = calloc(1, sizeof(*b));
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    uint8_t *bits = nulls ? calloc((size_t)(n / 8 + 1), 1) : NULL;
    if (b == NULL || v == NULL || (nulls && bits == NULL)) {
        free(b);
        free(v);
        free(bits);
        PyErr_NoMemory();
        return -1;
    }
    int64_t nnull = 0;
    for (int64_t i = 0; i < n; i++) {
        v[i] = 10 * i;
        if (bits != NULL) {
            if (i % 3 == 2) {
                nnull++;
            }
            else {
                bits[i / 8] |= (uint8_t)(1u << (i % 8));
            }
        }
    }
    b->values = v;
    b->validity = bits;
    b->buffers[0] = bits;
    b->buffers[1] = v;
    a->length = n;
    a->null_count = nnull;
    a->n_buffers = 2;
    a->buffers = b->buffers;
    a->release = built_array_release;
    a->private_data = b;
    arrow_arrays_made++;
    return 0;
}

/* Returns 0 and fills the pair with an int64 column, or -1 (nothing left
   to release). */
static int
int64_column(struct ArrowArray *a, struct ArrowSchema *s, int64_t n, int nulls,
             const char *format)
{
    if (schema_init(s, format, "x", ARROW_FLAG_NULLABLE) < 0) {
        return -1;
    }
    if (int64_array_init(a, n, nulls) < 0) {
        s->release(s);
        return -1;
    }
    return 0;
}

/* arrow_column(n, nulls=0, mode=0, nulls_arg=0, format="l") -> ndarray
   from an int64 ArrowArray built here (DfBuffer_ArrowToNdarray).  mode 1:
   the schema is passed already released; mode 2: the array is.  The
   structs must come back released whatever happens; a SystemError says
   they did not. */
static PyObject *
arrow_column(PyObject *m, PyObject *args)
{
    long long n;
    int nulls = 0, mode = 0, nulls_arg = DFBUFFER_NULLS_MASK;
    const char *format = "l";
    if (!PyArg_ParseTuple(args, "L|iiis", &n, &nulls, &mode, &nulls_arg,
                          &format)) {
        return NULL;
    }
    struct ArrowArray a;
    struct ArrowSchema s;
    if (int64_column(&a, &s, n, nulls, format) < 0) {
        return NULL;
    }
    if (mode == 1) {
        s.release(&s);
    }
    else if (mode == 2) {
        a.release(&a);
    }
    PyObject *res = DfBuffer_ArrowToNdarray(&a, &s, nulls_arg, 1);
    if (a.release != NULL || s.release != NULL) {
        Py_XDECREF(res);
        PyErr_SetString(PyExc_SystemError,
                        "dfbuffer did not take the ArrowArray/ArrowSchema");
        return NULL;
    }
    return res;
}

/* arrow_batch(ncols, n, as_dict=1) -> dict from a struct array ("+s") of
   `ncols` int64 children built here (DfBuffer_ArrowToDict); as_dict 0: an
   object array of dicts (DfBuffer_ArrowToNdarray). */
static PyObject *
arrow_batch(PyObject *m, PyObject *args)
{
    Py_ssize_t ncols;
    long long n;
    int as_dict = 1;
    if (!PyArg_ParseTuple(args, "nL|i", &ncols, &n, &as_dict) || ncols < 1) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "ncols >= 1");
        }
        return NULL;
    }
    struct ArrowArray a;
    struct ArrowSchema s;
    memset(&a, 0, sizeof(a));
    if (schema_init(&s, "+s", "", 0) < 0) {
        return NULL;
    }
    built_array *b = calloc(1, sizeof(*b));
    struct ArrowSchema *sch = calloc((size_t)ncols, sizeof(*sch));
    s.children = calloc((size_t)ncols, sizeof(*s.children));
    if (b != NULL) {
        b->child_storage = calloc((size_t)ncols, sizeof(struct ArrowArray));
        b->children = calloc((size_t)ncols, sizeof(*b->children));
    }
    if (b == NULL || sch == NULL || s.children == NULL ||
        b->child_storage == NULL || b->children == NULL) {
        if (b != NULL) {
            free(b->child_storage);
            free(b->children);
        }
        free(b);
        free(sch);
        s.release(&s);
        return PyErr_NoMemory();
    }
    a.length = n;
    a.n_buffers = 1;
    a.buffers = b->buffers; /* {NULL, NULL}: no validity */
    a.private_data = b;
    a.release = built_array_release;
    a.children = b->children;
    arrow_arrays_made++;
    for (Py_ssize_t c = 0; c < ncols; c++) {
        char name[32];
        snprintf(name, sizeof(name), "c%zd", c);
        s.children[c] = &sch[c];
        b->children[c] = &b->child_storage[c];
        if (schema_init(&sch[c], "l", name, 0) < 0 ||
            int64_array_init(&b->child_storage[c], n, 0) < 0) {
            /* release what exists: count the built children only */
            s.n_children = sch[c].release ? c + 1 : c;
            a.n_children = c;
            a.release(&a);
            s.release(&s);
            return NULL;
        }
        s.n_children = a.n_children = c + 1;
    }
    return as_dict ? DfBuffer_ArrowToDict(&a, &s, DFBUFFER_NULLS_MASK, 1)
                   : DfBuffer_ArrowToNdarray(&a, &s, DFBUFFER_NULLS_MASK, 1);
}

/* Returns the pointer in capsule `cap` named `name`, or NULL. */
static void *
capsule_ptr(PyObject *cap, const char *name)
{
    return PyCapsule_GetPointer(cap, name);
}

/* arrow_capsules(schema_capsule, array_capsule, as_dict=0) -> moves the
   structs out of a producer's __arrow_c_array__ capsules (pyarrow) and
   converts them with DfBuffer_ArrowToNdarray / _ArrowToDict. */
static PyObject *
arrow_capsules(PyObject *m, PyObject *args)
{
    PyObject *sc, *ac;
    int as_dict = 0;
    if (!PyArg_ParseTuple(args, "OO|i", &sc, &ac, &as_dict)) {
        return NULL;
    }
    struct ArrowSchema *ps = capsule_ptr(sc, "arrow_schema");
    struct ArrowArray *pa = ps ? capsule_ptr(ac, "arrow_array") : NULL;
    if (pa == NULL) {
        return NULL;
    }
    struct ArrowSchema s = *ps;
    struct ArrowArray a = *pa;
    ps->release = NULL; /* moved: the capsules' destructors skip them */
    pa->release = NULL;
    return as_dict ? DfBuffer_ArrowToDict(&a, &s, DFBUFFER_NULLS_MASK, 1)
                   : DfBuffer_ArrowToNdarray(&a, &s, DFBUFFER_NULLS_MASK, 1);
}

/* arrow_stream(stream_capsule) -> dict: moves the stream out of a
   producer's __arrow_c_stream__ capsule into DfBuffer_ArrowStreamToDict
   (the benchmark's C path). */
static PyObject *
arrow_stream(PyObject *m, PyObject *cap)
{
    struct ArrowArrayStream *ps = capsule_ptr(cap, "arrow_array_stream");
    if (ps == NULL) {
        return NULL;
    }
    struct ArrowArrayStream st = *ps;
    ps->release = NULL;
    PyObject *res = DfBuffer_ArrowStreamToDict(&st, DFBUFFER_NULLS_MASK, 1);
    if (st.release != NULL) {
        Py_XDECREF(res);
        PyErr_SetString(PyExc_SystemError, "dfbuffer did not take the stream");
        return NULL;
    }
    return res;
}

/* arrow_drain(stream_capsule) -> number of batches: reads the stream and
   releases everything without converting (the benchmark's measure of the
   producer's own export cost). */
static PyObject *
arrow_drain(PyObject *m, PyObject *cap)
{
    struct ArrowArrayStream *ps = capsule_ptr(cap, "arrow_array_stream");
    if (ps == NULL) {
        return NULL;
    }
    struct ArrowArrayStream st = *ps;
    ps->release = NULL;
    struct ArrowSchema s;
    long n = 0;
    if (st.get_schema(&st, &s) == 0) {
        s.release(&s);
        struct ArrowArray a;
        while (st.get_next(&st, &a) == 0 && a.release != NULL) {
            a.release(&a);
            n++;
        }
    }
    st.release(&st);
    return PyLong_FromLong(n);
}

/* arrow_batches(stream_capsule) -> list of dicts, one per record batch,
   each through DfBuffer_ArrowToDict (each batch gets its own schema from
   get_schema, as ArrowToDict consumes it). */
static PyObject *
arrow_batches(PyObject *m, PyObject *cap)
{
    struct ArrowArrayStream *ps = capsule_ptr(cap, "arrow_array_stream");
    if (ps == NULL) {
        return NULL;
    }
    struct ArrowArrayStream st = *ps;
    ps->release = NULL;
    PyObject *out = PyList_New(0);
    while (out != NULL) {
        struct ArrowArray a;
        struct ArrowSchema s;
        if (st.get_next(&st, &a) != 0) {
            PyErr_SetString(PyExc_RuntimeError, "get_next failed");
            Py_CLEAR(out);
            break;
        }
        if (a.release == NULL) {
            break;
        }
        if (st.get_schema(&st, &s) != 0) {
            a.release(&a);
            PyErr_SetString(PyExc_RuntimeError, "get_schema failed");
            Py_CLEAR(out);
            break;
        }
        PyObject *d = DfBuffer_ArrowToDict(&a, &s, DFBUFFER_NULLS_MASK, 1);
        if (d == NULL || PyList_Append(out, d) < 0) {
            Py_XDECREF(d);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(d);
    }
    st.release(&st);
    return out;
}
#endif /* DFBUFFER_TARGET_VERSION >= 2 */

static PyMethodDef methods[] = {
    {"api", api, METH_NOARGS, NULL},
    {"counters", counters, METH_NOARGS, NULL},
    {"buffer_type", buffer_type, METH_NOARGS, NULL},
    {"is_buffer", is_buffer, METH_O, NULL},
    {"make_block", make_block, METH_VARARGS, NULL},
    {"make_owned", make_owned, METH_VARARGS, NULL},
    {"make_reversed", make_reversed, METH_VARARGS, NULL},
    {"make_bad", make_bad, METH_VARARGS, NULL},
    {"info", info, METH_O, NULL},
    {"as_ndarray", as_ndarray, METH_O, NULL},
    {"from_object", from_object, METH_VARARGS, NULL},
#if DFBUFFER_TARGET_VERSION >= 2
    {"buffer_to_ndarray", buffer_to_ndarray, METH_VARARGS, NULL},
    {"column_to_ndarray", column_to_ndarray, METH_VARARGS, NULL},
    {"from_dataframe", from_dataframe, METH_VARARGS, NULL},
    {"columns_loop", columns_loop, METH_O, NULL},
    {"arrow_column", arrow_column, METH_VARARGS, NULL},
    {"arrow_batch", arrow_batch, METH_VARARGS, NULL},
    {"arrow_capsules", arrow_capsules, METH_VARARGS, NULL},
    {"arrow_stream", arrow_stream, METH_O, NULL},
    {"arrow_batches", arrow_batches, METH_O, NULL},
    {"arrow_drain", arrow_drain, METH_O, NULL},
#endif
    {NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    STR(CONSUMER_NAME),
    NULL,
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
CAT(PyInit_, CONSUMER_NAME)(void)
{
    if (DfBuffer_ImportAPI() < 0) {
        return NULL;
    }
    return PyModule_Create(&moddef);
}
