/* A hostile consumer of dfbuffer's public C API, built by the tests
 * (tests/safety/test_capi_hostile.py) against dfbuffer.get_include() only.
 *
 * run(name) calls one entry of the table directly (not through the
 * macros, so a NULL table can be passed) with NULL or garbage arguments
 * and returns what the entry returned, or raises the exception it set.  A
 * result that breaks the documented convention (NULL / -1 with no
 * exception, or a result with one) raises AssertionError instead.
 * counts() reports how many Arrow structs were made and released.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dfbuffer/dfbuffer.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define A DfBuffer_API

static long made, released;

/* ---- checking the convention ---- */

/* A PyObject * result: new reference with no exception, or NULL with one. */
static PyObject *
check_obj(PyObject *res)
{
    if (res == NULL && !PyErr_Occurred()) {
        PyErr_SetString(PyExc_AssertionError, "NULL without an exception");
        return NULL;
    }
    if (res != NULL && PyErr_Occurred()) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_AssertionError,
                        "a result with an exception set");
        return NULL;
    }
    return res;
}

/* An int result: 0 with no exception, or -1 with one.  Returns None. */
static PyObject *
check_int(int rc)
{
    if ((rc == -1) != (PyErr_Occurred() != NULL) || (rc != 0 && rc != -1)) {
        PyErr_Clear();
        PyErr_Format(PyExc_AssertionError,
                     "int result %d disagrees with the error indicator", rc);
        return NULL;
    }
    return rc == 0 ? Py_NewRef(Py_None) : NULL;
}

/* ---- Arrow structs whose release is counted ---- */

static int64_t values[4] = {1, 2, 3, 4};
static const void *two_buffers[2] = {NULL, values};
static const void *null_buffers[2] = {NULL, NULL};

static void
release_schema(struct ArrowSchema *s)
{
    s->release = NULL;
    released++;
}

static void
release_array(struct ArrowArray *a)
{
    a->release = NULL;
    released++;
}

static void
live_schema(struct ArrowSchema *s, const char *format)
{
    memset(s, 0, sizeof(*s));
    s->format = format;
    s->name = "x";
    s->flags = ARROW_FLAG_NULLABLE;
    s->release = release_schema;
    made++;
}

static void
live_array(struct ArrowArray *a)
{
    memset(a, 0, sizeof(*a));
    a->length = 4;
    a->n_buffers = 2;
    a->buffers = two_buffers;
    a->release = release_array;
    made++;
}

/* ---- streams ---- */

typedef struct {
    int schema_rc;  /* what get_schema returns */
    int schema_set; /* get_schema fills the schema */
    int next_rc;    /* what get_next returns */
} stream_plan;

static stream_plan plan;

static int
stream_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out)
{
    if (plan.schema_set) {
        live_schema(out, "l");
    }
    else {
        memset(out, 0, sizeof(*out));
    }
    return plan.schema_rc;
}

static int
stream_get_next(struct ArrowArrayStream *st, struct ArrowArray *out)
{
    memset(out, 0, sizeof(*out)); /* end of stream when it succeeds */
    return plan.next_rc;
}

static void
release_stream(struct ArrowArrayStream *st)
{
    st->release = NULL;
    released++;
}

static void
live_stream(struct ArrowArrayStream *st, stream_plan p)
{
    plan = p;
    st->get_schema = stream_get_schema;
    st->get_next = stream_get_next;
    st->get_last_error = NULL; /* no message: dfbuffer must cope */
    st->release = release_stream;
    st->private_data = NULL;
    made++;
}

/* ---- the cases ---- */

static Py_ssize_t shape4[1] = {4};
static Py_ssize_t shape_neg[1] = {-1};
static Py_ssize_t shape_huge[2] = {PY_SSIZE_T_MAX, PY_SSIZE_T_MAX};
static Py_ssize_t strides_far[1] = {(Py_ssize_t)1 << 40};
static Py_ssize_t strides_back[1] = {-8};
static Py_ssize_t shape0[1] = {0};
static char block[64];

/* Buffer_New(ptr, bufsize, owner, typestr, ndim, shape, strides, device,
   id, readonly) with the table `t`. */
static PyObject *
new_case(const DfBuffer_CAPI *t, void *ptr, Py_ssize_t bufsize,
         PyObject *owner, const char *typestr, int ndim,
         const Py_ssize_t *shape, const Py_ssize_t *strides, int32_t dev,
         int32_t id, int readonly)
{
    return check_obj(A->Buffer_New(t, ptr, bufsize, owner, typestr, ndim,
                                   shape, strides, dev, id, readonly));
}

static PyObject *
from_data_case(const DfBuffer_CAPI *t, void *data, PyObject *owner,
               const char *typestr, int ndim, const Py_ssize_t *shape,
               const Py_ssize_t *strides)
{
    return check_obj(A->Buffer_FromData(t, data, owner, typestr, ndim, shape,
                                        strides, 1, 0, 0));
}

/* A Buffer over `block` (for the cases that need a real one). */
static PyObject *
real_buffer(void)
{
    return A->Buffer_New(A, block, sizeof(block), Py_None, "<f8", 1, NULL,
                         NULL, DFBUFFER_DEVICE_CPU, 0, 0);
}

/* GetInfo with `size` into a canary-filled struct: returns (rc result,
   how many bytes changed) or raises. */
static PyObject *
info_case(const DfBuffer_CAPI *t, PyObject *buf, int null_out, size_t size)
{
    unsigned char raw[sizeof(DfBuffer_Info) + 16];
    memset(raw, 0xA5, sizeof(raw));
    PyObject *r = check_int(A->Buffer_GetInfo(
        t, buf, null_out ? NULL : (DfBuffer_Info *)(void *)raw, size));
    if (r == NULL) {
        return NULL;
    }
    Py_DECREF(r);
    Py_ssize_t changed = 0;
    for (size_t i = 0; i < sizeof(raw); i++) {
        if (raw[i] != 0xA5) {
            changed = (Py_ssize_t)i + 1;
        }
    }
    return PyLong_FromSsize_t(changed); /* one past the last byte written */
}

static PyObject *
arrow_case(const DfBuffer_CAPI *t, int as_dict, int have_array,
           int have_schema, int live, const char *format, int nulls,
           int garbage)
{
    struct ArrowArray arr;
    struct ArrowSchema sch;
    live_array(&arr);
    live_schema(&sch, format);
    if (!live) {
        arr.release(&arr);
        sch.release(&sch);
    }
    switch (garbage) {
    case 1:
        arr.length = -1;
        break;
    case 2:
        arr.n_buffers = -1;
        break;
    case 3:
        arr.buffers = NULL;
        break;
    case 4:
        arr.offset = INT64_MAX;
        break;
    case 5:
        arr.buffers = null_buffers; /* no values buffer for 4 values */
        break;
    case 6:
        arr.n_children = INT64_MAX; /* and no children pointer */
        break;
    case 7:
        sch.n_children = -5;
        break;
    case 8:
        arr.null_count = 7; /* more nulls than values, no validity */
        break;
    default:
        break;
    }
    struct ArrowArray *ap = have_array ? &arr : NULL;
    struct ArrowSchema *sp = have_schema ? &sch : NULL;
    PyObject *res = as_dict ? A->ArrowToDict(t, ap, sp, nulls, 1)
                            : A->ArrowToNdarray(t, ap, sp, nulls, 1);
    res = check_obj(res);
    /* whatever happened, every struct passed in must be marked released */
    if ((ap != NULL && arr.release != NULL) ||
        (sp != NULL && sch.release != NULL)) {
        Py_XDECREF(res);
        PyErr_SetString(PyExc_AssertionError,
                        "a struct passed in was not marked released");
        return NULL;
    }
    /* the ones not passed in are ours to release */
    if (ap == NULL && arr.release != NULL) {
        arr.release(&arr);
    }
    if (sp == NULL && sch.release != NULL) {
        sch.release(&sch);
    }
    return res;
}

static PyObject *
stream_case(const DfBuffer_CAPI *t, int have_stream, int live,
            stream_plan p, int no_schema_cb, int nulls)
{
    struct ArrowArrayStream st;
    live_stream(&st, p);
    if (!live) {
        st.release(&st);
    }
    if (no_schema_cb) {
        st.get_schema = NULL;
    }
    PyObject *res = check_obj(
        A->ArrowStreamToDict(t, have_stream ? &st : NULL, nulls, 1));
    if (have_stream && st.release != NULL) {
        Py_XDECREF(res);
        PyErr_SetString(PyExc_AssertionError,
                        "the stream passed in was not marked released");
        return NULL;
    }
    if (!have_stream && st.release != NULL) {
        st.release(&st);
    }
    return res;
}

#define IS(s) (strcmp(name, (s)) == 0)

/* The Buffer part of the table (version 1). */
static PyObject *
run_v1(const char *name, int *found)
{
    const DfBuffer_CAPI *T = A;
    PyObject *none = Py_None;
    *found = 1;
    if (IS("new/null table"))
        return new_case(NULL, block, 8, none, NULL, 1, NULL, NULL, 1, 0, 0);
    if (IS("new/null owner"))
        return new_case(T, block, 8, NULL, NULL, 1, NULL, NULL, 1, 0, 0);
    if (IS("new/null ptr with a size"))
        return new_case(T, NULL, 8, none, NULL, 1, NULL, NULL, 1, 0, 0);
    if (IS("new/null ptr, size 0"))
        return new_case(T, NULL, 0, none, NULL, 1, NULL, NULL, 1, 0, 0);
    if (IS("new/negative bufsize"))
        return new_case(T, block, -1, none, NULL, 1, NULL, NULL, 1, 0, 0);
    if (IS("new/address overflow"))
        return new_case(T, (void *)(UINTPTR_MAX - 3), 8, none, NULL, 1, NULL,
                        NULL, 1, 0, 0);
    if (IS("new/negative ndim"))
        return new_case(T, block, 8, none, NULL, -1, shape4, NULL, 1, 0, 0);
    if (IS("new/huge ndim"))
        return new_case(T, block, 8, none, NULL, INT_MAX, shape4, NULL, 1, 0,
                        0);
    if (IS("new/negative shape"))
        return new_case(T, block, 8, none, NULL, 1, shape_neg, NULL, 1, 0, 0);
    if (IS("new/shape overflow"))
        return new_case(T, block, 8, none, NULL, 2, shape_huge, NULL, 1, 0,
                        0);
    if (IS("new/strides outside the block"))
        return new_case(T, block, 32, none, NULL, 1, shape4, strides_far, 1,
                        0, 0);
    if (IS("new/strides without shape"))
        return new_case(T, block, 8, none, NULL, 1, NULL, strides_far, 1, 0,
                        0);
    if (IS("new/not a multiple of the itemsize"))
        return new_case(T, block, 7, none, "<f8", 1, NULL, NULL, 1, 0, 0);
    if (IS("new/garbage typestr"))
        return new_case(T, block, 8, none, "not a type", 1, NULL, NULL, 1, 0,
                        0);
    if (IS("new/typestr NumPy cannot parse"))
        return new_case(T, block, 8, none, "i4,,", 1, NULL, NULL, 1, 0, 0);
    if (IS("new/typestr not UTF-8"))
        return new_case(T, block, 8, none, "\xff\xfe", 1, NULL, NULL, 1, 0,
                        0);
    if (IS("new/object typestr"))
        return new_case(T, block, 8, none, "|O", 1, NULL, NULL, 1, 0, 0);
    if (IS("new/unknown device"))
        return new_case(T, block, 8, none, NULL, 1, NULL, NULL, 12345, 0, 0);
    if (IS("new/negative device type"))
        return new_case(T, block, 8, none, NULL, 1, NULL, NULL, -1, 0, 0);
    if (IS("new/negative device id"))
        return new_case(T, block, 8, none, NULL, 1, NULL, NULL, 1, -1, 0);
    if (IS("new/readonly 7"))
        return new_case(T, block, 8, none, NULL, 1, NULL, NULL, 1, 0, 7);
    if (IS("from_data/null table"))
        return from_data_case(NULL, block, none, NULL, 1, shape4, NULL);
    if (IS("from_data/null owner"))
        return from_data_case(T, block, NULL, NULL, 1, shape4, NULL);
    if (IS("from_data/null shape"))
        return from_data_case(T, block, none, NULL, 2, NULL, NULL);
    if (IS("from_data/null data with elements"))
        return from_data_case(T, NULL, none, NULL, 1, shape4, NULL);
    if (IS("from_data/null data, no elements"))
        return from_data_case(T, NULL, none, NULL, 1, shape0, NULL);
    if (IS("from_data/negative ndim"))
        return from_data_case(T, block, none, NULL, -1, shape4, NULL);
    if (IS("from_data/strides below address 0"))
        return from_data_case(T, (void *)16, none, "<f8", 1, shape4,
                              strides_back);
    if (IS("from_data/garbage typestr"))
        return from_data_case(T, block, none, "?!", 1, shape4, NULL);
    PyObject *buf = real_buffer();
    if (buf == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    if (IS("get_info/null table"))
        res = info_case(NULL, buf, 0, sizeof(DfBuffer_Info));
    else if (IS("get_info/null buffer"))
        res = info_case(T, NULL, 0, sizeof(DfBuffer_Info));
    else if (IS("get_info/not a buffer"))
        res = info_case(T, none, 0, sizeof(DfBuffer_Info));
    else if (IS("get_info/null info, size 0"))
        res = info_case(T, buf, 1, 0);
    else if (IS("get_info/null info with a size"))
        res = info_case(T, buf, 1, sizeof(DfBuffer_Info));
    else if (IS("get_info/size 0"))
        res = info_case(T, buf, 0, 0);
    else if (IS("get_info/size 1"))
        res = info_case(T, buf, 0, 1);
    else if (IS("get_info/size larger than the runtime's"))
        res = info_case(T, buf, 0, sizeof(DfBuffer_Info) + 16);
    else if (IS("from_object/null table"))
        res = check_obj(A->Buffer_FromObject(NULL, buf, NULL));
    else if (IS("from_object/null obj"))
        res = check_obj(A->Buffer_FromObject(T, NULL, NULL));
    else if (IS("from_object/garbage obj"))
        res = check_obj(A->Buffer_FromObject(T, (PyObject *)&PyLong_Type,
                                              NULL));
    else if (IS("from_object/garbage dtype"))
        res = check_obj(A->Buffer_FromObject(T, buf, (PyObject *)T->BufferType));
    else if (IS("from_object/null dtype"))
        res = check_obj(A->Buffer_FromObject(T, buf, NULL));
    else if (IS("as_ndarray/null table"))
        res = check_obj(A->Buffer_AsNdarray(NULL, buf));
    else if (IS("as_ndarray/null buffer"))
        res = check_obj(A->Buffer_AsNdarray(T, NULL));
    else if (IS("as_ndarray/not a buffer"))
        res = check_obj(A->Buffer_AsNdarray(T, none));
    else
        *found = 0;
    Py_DECREF(buf);
    return res;
}

/* The converters and the Arrow functions (version 2). */
static PyObject *
run_v2(const char *name, int *found)
{
    const DfBuffer_CAPI *T = A;
    PyObject *none = Py_None;
    stream_plan ok = {0, 1, 0};
    *found = 1;
    if (IS("arrow/null table"))
        return arrow_case(NULL, 0, 1, 1, 1, "l", 0, 0);
    if (IS("arrow/null array"))
        return arrow_case(T, 0, 0, 1, 1, "l", 0, 0);
    if (IS("arrow/null schema"))
        return arrow_case(T, 0, 1, 0, 1, "l", 0, 0);
    if (IS("arrow/both null"))
        return arrow_case(T, 0, 0, 0, 1, "l", 0, 0);
    if (IS("arrow/both released"))
        return arrow_case(T, 0, 1, 1, 0, "l", 0, 0);
    if (IS("arrow/nulls -1"))
        return arrow_case(T, 0, 1, 1, 1, "l", -1, 0);
    if (IS("arrow/nulls INT_MAX"))
        return arrow_case(T, 0, 1, 1, 1, "l", INT_MAX, 0);
    if (IS("arrow/null format"))
        return arrow_case(T, 0, 1, 1, 1, NULL, 0, 0);
    if (IS("arrow/garbage format"))
        return arrow_case(T, 0, 1, 1, 1, "\x01zz", 0, 0);
    if (IS("arrow/empty format"))
        return arrow_case(T, 0, 1, 1, 1, "", 0, 0);
    if (IS("arrow/negative length"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 1);
    if (IS("arrow/negative n_buffers"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 2);
    if (IS("arrow/null buffers"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 3);
    if (IS("arrow/huge offset"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 4);
    if (IS("arrow/null values buffer"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 5);
    if (IS("arrow/huge n_children"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 6);
    if (IS("arrow/negative schema n_children"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 7);
    if (IS("arrow/null_count above length"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 8);
    if (IS("arrow/valid"))
        return arrow_case(T, 0, 1, 1, 1, "l", 0, 0);
    if (IS("arrow_dict/null table"))
        return arrow_case(NULL, 1, 1, 1, 1, "l", 0, 0);
    if (IS("arrow_dict/null array"))
        return arrow_case(T, 1, 0, 1, 1, "l", 0, 0);
    if (IS("arrow_dict/nulls 3"))
        return arrow_case(T, 1, 1, 1, 1, "l", 3, 0);
    if (IS("arrow_dict/garbage format"))
        return arrow_case(T, 1, 1, 1, 1, "+zz", 0, 0);
    if (IS("arrow_dict/struct without children"))
        return arrow_case(T, 1, 1, 1, 1, "+s", 0, 6);
    if (IS("stream/null table"))
        return stream_case(NULL, 1, 1, ok, 0, 0);
    if (IS("stream/null stream"))
        return stream_case(T, 0, 1, ok, 0, 0);
    if (IS("stream/released"))
        return stream_case(T, 1, 0, ok, 0, 0);
    if (IS("stream/nulls -7"))
        return stream_case(T, 1, 1, ok, 0, -7);
    if (IS("stream/no get_schema"))
        return stream_case(T, 1, 1, ok, 1, 0);
    if (IS("stream/get_schema fails, no message"))
        return stream_case(T, 1, 1, (stream_plan){EINVAL, 0, 0}, 0, 0);
    if (IS("stream/get_schema odd error code"))
        return stream_case(T, 1, 1, (stream_plan){-12345, 0, 0}, 0, 0);
    if (IS("stream/get_schema leaves no schema"))
        return stream_case(T, 1, 1, (stream_plan){0, 0, 0}, 0, 0);
    if (IS("stream/get_next fails"))
        return stream_case(T, 1, 1, (stream_plan){0, 1, ENOMEM}, 0, 0);
    if (IS("stream/empty"))
        return stream_case(T, 1, 1, ok, 0, 0);
    if (IS("column/null table"))
        return check_obj(A->ColumnToNdarray(NULL, none, 0));
    if (IS("column/null column"))
        return check_obj(A->ColumnToNdarray(T, NULL, 0));
    if (IS("column/nulls -1"))
        return check_obj(A->ColumnToNdarray(T, none, -1));
    if (IS("column/nulls INT_MIN"))
        return check_obj(A->ColumnToNdarray(T, none, INT_MIN));
    if (IS("frame/null table"))
        return check_obj(A->FromDataFrame(NULL, none, 0, 0));
    if (IS("frame/null obj"))
        return check_obj(A->FromDataFrame(T, NULL, 0, 0));
    if (IS("frame/nulls 99"))
        return check_obj(A->FromDataFrame(T, none, 99, 0));
    if (IS("b2n/null table"))
        return check_obj(A->BufferToNdarray(NULL, none, none, 0, -1));
    if (IS("b2n/null buffer"))
        return check_obj(A->BufferToNdarray(T, NULL, none, 0, -1));
    if (IS("b2n/null dtype"))
        return check_obj(A->BufferToNdarray(T, none, NULL, 0, -1));
    *found = 0;
    return NULL;
}

/* run(name): see the file comment. */
static PyObject *
run(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL) {
        return NULL;
    }
    int found;
    PyObject *res = run_v1(name, &found);
    if (!found) {
        res = run_v2(name, &found);
    }
    if (!found) {
        PyErr_Format(PyExc_KeyError, "no case %s", name);
        return NULL;
    }
    return res;
}

/* Converters called with arguments from Python (objects are passed
   through; None for `buffer` / `dtype` / `column` / `obj` means NULL is
   not used here: the NULL cases are in run()). */
static PyObject *
buffer_to_ndarray(PyObject *self, PyObject *args)
{
    PyObject *buffer, *dtype;
    long long offset, length;
    if (!PyArg_ParseTuple(args, "OOLL", &buffer, &dtype, &offset, &length)) {
        return NULL;
    }
    return check_obj(A->BufferToNdarray(A, buffer, dtype, (int64_t)offset,
                                        (int64_t)length));
}

static PyObject *
column_to_ndarray(PyObject *self, PyObject *args)
{
    PyObject *column;
    int nulls;
    if (!PyArg_ParseTuple(args, "Oi", &column, &nulls)) {
        return NULL;
    }
    return check_obj(A->ColumnToNdarray(A, column, nulls));
}

static PyObject *
from_dataframe(PyObject *self, PyObject *args)
{
    PyObject *obj;
    int nulls, allow_copy;
    if (!PyArg_ParseTuple(args, "Oii", &obj, &nulls, &allow_copy)) {
        return NULL;
    }
    return check_obj(A->FromDataFrame(A, obj, nulls, allow_copy));
}

static PyObject *
from_object(PyObject *self, PyObject *args)
{
    PyObject *obj, *dtype;
    if (!PyArg_ParseTuple(args, "OO", &obj, &dtype)) {
        return NULL;
    }
    return check_obj(A->Buffer_FromObject(A, obj, dtype));
}

static PyObject *
counts(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("(ll)", made, released);
}

static PyMethodDef methods[] = {
    {"run", run, METH_O, NULL},
    {"buffer_to_ndarray", buffer_to_ndarray, METH_VARARGS, NULL},
    {"column_to_ndarray", column_to_ndarray, METH_VARARGS, NULL},
    {"from_dataframe", from_dataframe, METH_VARARGS, NULL},
    {"from_object", from_object, METH_VARARGS, NULL},
    {"counts", counts, METH_NOARGS, NULL},
    {NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "capi_hostile", NULL, -1, methods,
    NULL,                  NULL,           NULL, NULL,
};

PyMODINIT_FUNC
PyInit_capi_hostile(void)
{
    if (DfBuffer_ImportAPI() < 0) {
        return NULL;
    }
    return PyModule_Create(&moddef);
}
