/* dfbuffer: an Arrow stream read one record batch at a time
 * (_ArrowBatchReader), each batch a small Arrow producer of its own
 * (_ArrowBatch) with zero-copy row slices, and a stream over several such
 * slices (_arrow_batch_stream): what dfbuffer.iter_matrices and
 * dfbuffer.iter_batches (_batches.py) re-chunk a stream with.
 *
 * The reader moves the ArrowArrayStream out of an "arrow_array_stream"
 * capsule once, reads its schema once (a struct: a table) and then
 * one batch per __next__, never ahead.  Each batch is moved into a holder
 * capsule ("dfbuffer.batch_array", released exactly once by its
 * destructor) and checked against the schema by core's
 * dfb_arrow_check_table before anything else sees it, as every Arrow
 * import is.  The schema lives in a capsule of its own shared by the
 * reader and its batches (capsules are not GC-tracked and hold nothing
 * else: no cycle can run through them).  A batch's __arrow_c_array__ hands
 * out a copy of the batch's struct tree whose buffer pointers are the
 * producer's (dfb_arrow_array_copy), each column's offset advanced to
 * the slice's first row and its length the slice's (the struct's own
 * offset is 0: pyarrow refuses a record batch with a struct offset), so
 * no buffer is touched.  Every exported node holds a strong reference to the
 * batch (dropped on any thread).  The stream of _arrow_batch_stream builds its
 * arrays when it is made (with the GIL): get_schema and get_next run no
 * Python.
 */
#include "common.h"
#include "state.h"
#include "arrow.h"
#include "arrow_check.h"
#include "outward.h"
#include "ops.h"
#include "checked.h"
#include "types.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030C0000
#include <structmember.h>
#define Py_T_PYSSIZET T_PYSSIZET
#define Py_READONLY READONLY
#endif

#define SCHEMA_HOLDER "dfbuffer.batch_schema"
#define ARRAY_HOLDER "dfbuffer.batch_array"

/* ------------------------------------------------------------------ */
/* Holders: capsules owning a producer's schema or one batch            */
/* ------------------------------------------------------------------ */

/* Capsule destructor of both holders: releases the struct (once) and
   frees it.  Keeps any pending exception (release may run Python). */
static void
holder_free(PyObject *cap)
{
    PyObject *exc = dfb_err_take();
    const char *name = PyCapsule_GetName(cap);
    void *p = PyCapsule_GetPointer(cap, name);
    if (p == NULL) {
        PyErr_Clear();
    }
    else if (name != NULL && strcmp(name, SCHEMA_HOLDER) == 0) {
        struct ArrowSchema *s = p;
        if (s->release != NULL) {
            s->release(s);
        }
        PyMem_Free(s);
    }
    else {
        struct ArrowArray *a = p;
        if (a->release != NULL) {
            a->release(a);
        }
        PyMem_Free(a);
    }
    dfb_err_give(exc);
}

/* Returns a new holder capsule named `name` over a zeroed struct of
   `size` bytes (in *out), or NULL with MemoryError set. */
static PyObject *
holder_new(const char *name, size_t size, void **out)
{
    void *p = PyMem_Calloc(1, size);
    if (p == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject *cap = PyCapsule_New(p, name, holder_free);
    if (cap == NULL) {
        PyMem_Free(p);
        return NULL;
    }
    *out = p;
    return cap;
}

/* ------------------------------------------------------------------ */
/* _ArrowBatch                                                          */
/* ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD PyObject *schema_cap; /* strong: SCHEMA_HOLDER capsule */
    PyObject *array_cap;                /* strong: ARRAY_HOLDER capsule */
    const struct ArrowSchema *schema;   /* in schema_cap */
    const struct ArrowArray *array;     /* in array_cap, checked */
    int64_t start;  /* first row of the slice, from the array's offset */
    int64_t length; /* rows of the slice */
    PyObject *weakreflist;
} batch_object;

/* Returns a new batch over `length` rows from `start` of the array in
   `array_cap` (checked by the caller), or NULL with an exception set. */
static PyObject *
batch_new(dfb_state *st, PyObject *schema_cap, PyObject *array_cap,
          int64_t start, int64_t length)
{
    batch_object *b = PyObject_New(batch_object, st->arrow_batch_type);
    if (b == NULL) {
        return NULL;
    }
    b->schema_cap = Py_NewRef(schema_cap);
    b->array_cap = Py_NewRef(array_cap);
    b->schema = PyCapsule_GetPointer(schema_cap, SCHEMA_HOLDER);
    b->array = PyCapsule_GetPointer(array_cap, ARRAY_HOLDER);
    b->start = start;
    b->length = length;
    b->weakreflist = NULL;
    return (PyObject *)b;
}

/* tp_dealloc: drops the holders (the last batch releases the producer's
   array).  Cannot fail. */
static void
batch_dealloc(PyObject *self)
{
    batch_object *b = (batch_object *)self;
    PyTypeObject *tp = Py_TYPE(self);
    if (b->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    Py_XDECREF(b->array_cap);
    Py_XDECREF(b->schema_cap);
    PyObject_Free(self);
    Py_DECREF(tp);
}

/* len(batch): its rows.  Cannot fail. */
static Py_ssize_t
batch_len(PyObject *self)
{
    return (Py_ssize_t)((batch_object *)self)->length;
}

/* num_rows getter.  Returns a new int, or NULL with an exception set. */
static PyObject *
batch_num_rows(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLongLong(((batch_object *)self)->length);
}

/* batch.slice(start, length): a batch over rows [start, start + length)
   of this one, zero-copy.  Returns a new batch, or NULL with TypeError
   (arguments) or IndexError (rows outside the batch) set. */
static PyObject *
batch_slice(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    batch_object *b = (batch_object *)self;
    long long start, length;
    if (nargs != 2 || !PyLong_Check(args[0]) || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "slice(start, length) takes two ints");
        return NULL;
    }
    start = PyLong_AsLongLong(args[0]);
    if (start == -1 && PyErr_Occurred()) {
        return NULL;
    }
    length = PyLong_AsLongLong(args[1]);
    if (length == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int64_t end, first;
    if (start < 0 || length < 0 || dfb_checked_add(start, length, &end) < 0 ||
        end > b->length || dfb_checked_add(b->start, start, &first) < 0) {
        PyErr_Format(PyExc_IndexError,
                     "rows [%lld, %lld + %lld) are outside the batch of "
                     "%lld rows",
                     start, start, length, (long long)b->length);
        return NULL;
    }
    return batch_new(dfb_state_from_type(Py_TYPE(self)), b->schema_cap,
                     b->array_cap, first, (int64_t)length);
}

/* Fills `dst` (uninitialised) with the export of batch `b`: a copy of its
   struct tree holding references to `b`, with the slice moved into the
   columns (each column's offset advanced to the slice's first row, its
   length the slice's) and the struct's own offset 0, as every consumer
   takes a record batch (pyarrow refuses a struct offset there).  Returns
   0, or -1 with an exception set (`dst` released-marked). */
static int
batch_export(batch_object *b, struct ArrowArray *dst)
{
    const struct ArrowArray *a = b->array;
    int64_t first;
    if (dfb_checked_add(a->offset, b->start, &first) < 0) {
        memset(dst, 0, sizeof(*dst));
        PyErr_SetString(PyExc_OverflowError, "batch offset overflows");
        return -1;
    }
    if (dfb_arrow_array_copy(a, (PyObject *)b, dst) < 0) {
        return -1;
    }
    const int whole = b->start == 0 && b->length == a->length;
    for (int64_t c = 0; c < dst->n_children; c++) {
        struct ArrowArray *ch = dst->children[c];
        const struct ArrowSchema *cs = b->schema->children[c];
        if (dfb_checked_add(ch->offset, first, &ch->offset) < 0) {
            dfb_arrow_array_release(dst);
            PyErr_SetString(PyExc_OverflowError, "batch offset overflows");
            return -1;
        }
        /* a slice's nulls are unknown, but where none or all are */
        if (!(whole && ch->length == b->length) && ch->null_count != 0) {
            ch->null_count = dfb_arrow_format_type(cs->format) == DFB_T_NULL
                                 ? b->length
                                 : -1;
        }
        ch->length = b->length;
    }
    /* the struct's own rows: checked on arrival to have no null row */
    if (dst->n_buffers > 0) {
        dst->buffers[0] = NULL;
    }
    dst->null_count = 0;
    dst->offset = 0;
    dst->length = b->length;
    return 0;
}

/* Returns a new "arrow_schema" capsule over a deep copy of `s`, or NULL
   with an exception set. */
static PyObject *
schema_capsule(const struct ArrowSchema *s)
{
    struct ArrowSchema *c = malloc(sizeof(*c));
    if (c == NULL) {
        return PyErr_NoMemory();
    }
    const char *why = NULL;
    if (dfb_arrow_schema_copy(s, NULL, c, 0, &why) < 0) {
        free(c);
        return why != NULL ? PyErr_Format(PyExc_ValueError, "%s", why)
                           : PyErr_NoMemory();
    }
    PyObject *cap =
        PyCapsule_New(c, "arrow_schema", dfb_arrow_schema_capsule_free);
    if (cap == NULL) {
        dfb_arrow_schema_release(c);
        free(c);
    }
    return cap;
}

/* Refuses a `requested_schema` other than None.  Returns 0, or -1 with
   NotImplementedError set. */
static int
check_requested(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                const char *method)
{
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1) {
        PyErr_Format(PyExc_TypeError, "%s takes at most one argument", method);
        return -1;
    }
    if (nkw == 1 &&
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0),
                                         "requested_schema") != 0) {
        PyErr_Format(PyExc_TypeError, "%s got an unexpected keyword argument",
                     method);
        return -1;
    }
    if (nargs + nkw == 1 && args[0] != Py_None) {
        PyErr_Format(PyExc_NotImplementedError,
                     "%s: a requested_schema other than None is not "
                     "supported (a batch exports its stream's schema)",
                     method);
        return -1;
    }
    return 0;
}

/* __arrow_c_schema__(): the stream's schema.  Returns a new capsule, or
   NULL with an exception set. */
static PyObject *
batch_arrow_c_schema(PyObject *self, PyObject *unused)
{
    (void)unused;
    return schema_capsule(((batch_object *)self)->schema);
}

/* __arrow_c_array__(requested_schema=None): (schema, array) capsules over
   the batch's rows, zero-copy.  Returns a new tuple, or NULL with an
   exception set. */
static PyObject *
batch_arrow_c_array(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    batch_object *b = (batch_object *)self;
    if (check_requested(args, nargs, kwnames, "__arrow_c_array__") < 0) {
        return NULL;
    }
    PyObject *sc = schema_capsule(b->schema);
    if (sc == NULL) {
        return NULL;
    }
    struct ArrowArray *a = malloc(sizeof(*a));
    if (a == NULL) {
        Py_DECREF(sc);
        return PyErr_NoMemory();
    }
    if (batch_export(b, a) < 0) {
        free(a);
        Py_DECREF(sc);
        return NULL;
    }
    PyObject *ac =
        PyCapsule_New(a, "arrow_array", dfb_arrow_array_capsule_free);
    if (ac == NULL) {
        dfb_arrow_array_release(a);
        free(a);
        Py_DECREF(sc);
        return NULL;
    }
    return Py_BuildValue("(NN)", sc, ac);
}

/* repr(batch).  Returns a new str, or NULL with an exception set. */
static PyObject *
batch_repr(PyObject *self)
{
    batch_object *b = (batch_object *)self;
    return PyUnicode_FromFormat("<_ArrowBatch of %lld rows, %lld columns>",
                                (long long)b->length,
                                (long long)b->schema->n_children);
}

static PyMethodDef batch_methods[] = {
    {"slice", (PyCFunction)(void (*)(void))batch_slice, METH_FASTCALL,
     "slice(start, length): rows [start, start + length), zero-copy."},
    {"__arrow_c_schema__", batch_arrow_c_schema, METH_NOARGS,
     "The stream's schema (a struct of the columns)."},
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))batch_arrow_c_array,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_array__(requested_schema=None): the batch's rows, "
     "zero-copy."},
    {NULL},
};

static PyGetSetDef batch_getset[] = {
    {"num_rows", batch_num_rows, NULL, "The rows of the batch.", NULL},
    {NULL},
};

static PyMemberDef batch_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(batch_object, weakreflist),
     Py_READONLY, NULL},
    {NULL},
};

static PyType_Slot batch_slots[] = {
    {Py_tp_doc,
     (void *)"One record batch of an Arrow stream (or a row slice of one), "
             "an Arrow PyCapsule producer of its own; made by "
             "_ArrowBatchReader only."},
    {Py_tp_dealloc, batch_dealloc},
    {Py_tp_repr, batch_repr},
    {Py_tp_methods, batch_methods},
    {Py_tp_getset, batch_getset},
    {Py_tp_members, batch_members},
    {Py_sq_length, batch_len},
    {0, NULL},
};

/* Holds only capsules (never GC-tracked, never pointing back): no cycle
   can run through a batch, so the type is not GC-tracked. */
static PyType_Spec batch_spec = {
    .name = "dfbuffer._interchange._ArrowBatch",
    .basicsize = sizeof(batch_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = batch_slots,
};

/* ------------------------------------------------------------------ */
/* _ArrowBatchReader                                                    */
/* ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD struct ArrowArrayStream
        stream;           /* moved in; release NULL once ended */
    PyObject *schema_cap; /* strong: SCHEMA_HOLDER capsule */
    const struct ArrowSchema *schema;
    int busy;       /* a get_next is running (guarded by `lock`) */
    dfb_mutex lock; /* guards `busy` only; no Python runs under it */
    PyObject *weakreflist;
} reader_object;

/* Releases the reader's stream if it is live (ends it).  May run Python
   code; keeps any pending exception.  Cannot fail. */
static void
reader_end(reader_object *r)
{
    if (r->stream.release != NULL) {
        PyObject *exc = dfb_err_take();
        r->stream.release(&r->stream);
        r->stream.release = NULL;
        dfb_err_give(exc);
    }
}

/* Sets the exception of failed stream callback `what` (return code `rc`)
   with the stream's last error: ValueError for EINVAL, MemoryError for
   ENOMEM, NotImplementedError for ENOSYS, else OSError.  Returns -1. */
static int
reader_error(reader_object *r, int rc, const char *what)
{
    const char *msg = r->stream.get_last_error != NULL
                          ? r->stream.get_last_error(&r->stream)
                          : NULL;
    PyObject *exc = rc == EINVAL   ? PyExc_ValueError
                    : rc == ENOMEM ? PyExc_MemoryError
                    : rc == ENOSYS ? PyExc_NotImplementedError
                                   : PyExc_OSError;
    PyErr_Format(exc, "Arrow stream %s failed (error %d): %.400s", what, rc,
                 msg != NULL ? msg : "no message");
    return -1;
}

/* _ArrowBatchReader(capsule): moves the stream out of an
   "arrow_array_stream" capsule and reads its schema.  Returns a new
   reader, or NULL with TypeError (not such a capsule, or not a table
   schema) or ValueError (a released or broken stream or schema) set. */
static PyObject *
reader_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *cap;
    if (kwds != NULL && PyDict_GET_SIZE(kwds) > 0) {
        PyErr_SetString(PyExc_TypeError,
                        "_ArrowBatchReader takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:_ArrowBatchReader", &cap)) {
        return NULL;
    }
    struct ArrowArrayStream *src = dfb_arrow_capsule_pointer(
        cap, "arrow_array_stream", "__arrow_c_stream__()");
    if (src == NULL) {
        return NULL;
    }
    if (src->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the 'arrow_array_stream' capsule holds a released "
                        "stream (already consumed)");
        return NULL;
    }
    reader_object *r = (reader_object *)type->tp_alloc(type, 0);
    if (r == NULL) {
        return NULL;
    }
    memset(&r->lock, 0, sizeof(r->lock));
    r->stream = *src; /* moved: the capsule no longer releases it */
    src->release = NULL;
    if (r->stream.get_schema == NULL || r->stream.get_next == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the Arrow stream has no get_schema/get_next");
        goto fail;
    }
    void *p;
    r->schema_cap = holder_new(SCHEMA_HOLDER, sizeof(struct ArrowSchema), &p);
    if (r->schema_cap == NULL) {
        goto fail;
    }
    struct ArrowSchema *s = p;
    int rc = r->stream.get_schema(&r->stream, s);
    if (rc != 0) {
        if (s->release != NULL) {
            s->release(s);
            s->release = NULL;
        }
        reader_error(r, rc, "get_schema");
        goto fail;
    }
    if (s->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the Arrow stream gave a released schema");
        goto fail;
    }
    if (s->format == NULL ||
        dfb_arrow_format_type(s->format) != DFB_T_STRUCT) {
        PyErr_Format(PyExc_TypeError,
                     "an Arrow stream of record batches (a struct schema) "
                     "is needed, this one's schema has format '%.40s'",
                     s->format != NULL ? s->format : "(NULL)");
        goto fail;
    }
    dfb_error err;
    dfb_code code = dfb_arrow_check_table(s, NULL, 0, 1, &err);
    if (code != DFB_OK) {
        dfb_arrow_raise(code, &err);
        goto fail;
    }
    r->schema = s;
    return (PyObject *)r;
fail:
    Py_DECREF(r);
    return NULL;
}

/* next(reader): the stream's next batch, checked against the schema
   (StopIteration at the end, after which the stream is released).
   Returns a new _ArrowBatch, or NULL with StopIteration not set (the
   end), or with ValueError / MemoryError / OSError (the producer's
   error, or a batch that does not match the schema: the stream is then
   released) or RuntimeError (another thread is reading) set. */
static PyObject *
reader_next(PyObject *self)
{
    reader_object *r = (reader_object *)self;
    dfb_mutex_lock(&r->lock);
    int was_busy = r->busy;
    r->busy = 1;
    dfb_mutex_unlock(&r->lock);
    if (was_busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the Arrow batch reader is already reading (in "
                        "another thread, or from its own producer)");
        return NULL;
    }
    PyObject *result = NULL, *cap = NULL;
    if (r->stream.release == NULL) {
        goto done; /* ended: StopIteration */
    }
    struct ArrowArray *a;
    cap = holder_new(ARRAY_HOLDER, sizeof(struct ArrowArray), (void **)&a);
    if (cap == NULL) {
        goto done;
    }
    int rc = r->stream.get_next(&r->stream, a);
    if (rc != 0) {
        reader_error(r, rc, "get_next");
        reader_end(r);
        goto done; /* the capsule releases whatever `a` holds */
    }
    if (a->release == NULL) {
        reader_end(r); /* the end of the stream */
        goto done;
    }
    dfb_error err;
    struct ArrowArray *arrays[1] = {a};
    dfb_code code = dfb_arrow_check_table(r->schema, arrays, 1, 1, &err);
    if (code != DFB_OK) {
        dfb_arrow_raise(code, &err);
        reader_end(r);
        goto done;
    }
    result = batch_new(dfb_state_from_type(Py_TYPE(self)), r->schema_cap, cap,
                       0, a->length);
done:
    Py_XDECREF(cap);
    dfb_mutex_lock(&r->lock);
    r->busy = 0;
    dfb_mutex_unlock(&r->lock);
    return result;
}

/* reader.close(): releases the stream now (later next() calls stop).
   Returns None, or NULL with RuntimeError (reading in another thread). */
static PyObject *
reader_close(PyObject *self, PyObject *unused)
{
    (void)unused;
    reader_object *r = (reader_object *)self;
    dfb_mutex_lock(&r->lock);
    int was_busy = r->busy;
    r->busy = 1;
    dfb_mutex_unlock(&r->lock);
    if (was_busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the Arrow batch reader is reading: it cannot be "
                        "closed now");
        return NULL;
    }
    reader_end(r);
    dfb_mutex_lock(&r->lock);
    r->busy = 0;
    dfb_mutex_unlock(&r->lock);
    Py_RETURN_NONE;
}

/* __arrow_c_schema__(): the stream's schema.  Returns a new capsule, or
   NULL with an exception set. */
static PyObject *
reader_arrow_c_schema(PyObject *self, PyObject *unused)
{
    (void)unused;
    return schema_capsule(((reader_object *)self)->schema);
}

/* fields getter: ((name, format, nullable), ...) of the columns.  Returns
   a new tuple, or NULL with an exception set. */
static PyObject *
reader_fields(PyObject *self, void *closure)
{
    (void)closure;
    const struct ArrowSchema *s = ((reader_object *)self)->schema;
    PyObject *t = PyTuple_New((Py_ssize_t)s->n_children);
    for (int64_t c = 0; t != NULL && c < s->n_children; c++) {
        const struct ArrowSchema *ch = s->children[c];
        PyObject *f = Py_BuildValue(
            "(ssO)", ch->name != NULL ? ch->name : "", ch->format,
            (ch->flags & ARROW_FLAG_NULLABLE) ? Py_True : Py_False);
        if (f == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)c, f);
    }
    return t;
}

/* tp_traverse: the type only.  The stream is a foreign export that GC
   cannot see into, and the schema capsule holds no object (safety rule
   2).  Returns 0 or visit's result. */
static int
reader_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return 0;
}

/* tp_dealloc: releases the stream (may run the producer's Python code)
   and drops the schema holder.  Cannot fail. */
static void
reader_dealloc(PyObject *self)
{
    reader_object *r = (reader_object *)self;
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (r->weakreflist != NULL) {
        PyObject_ClearWeakRefs(self);
    }
    reader_end(r);
    Py_CLEAR(r->schema_cap);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMethodDef reader_methods[] = {
    {"close", reader_close, METH_NOARGS,
     "close(): release the stream now; later next() calls stop."},
    {"__arrow_c_schema__", reader_arrow_c_schema, METH_NOARGS,
     "The stream's schema (a struct of the columns)."},
    {NULL},
};

static PyGetSetDef reader_getset[] = {
    {"fields", reader_fields, NULL,
     "((name, format, nullable), ...): the columns of the schema.", NULL},
    {NULL},
};

static PyMemberDef reader_members[] = {
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(reader_object, weakreflist),
     Py_READONLY, NULL},
    {NULL},
};

static PyType_Slot reader_slots[] = {
    {Py_tp_doc,
     (void *)"_ArrowBatchReader(capsule): an Arrow stream (an "
             "'arrow_array_stream' capsule, moved out once) read one record "
             "batch per next(), each an _ArrowBatch."},
    {Py_tp_new, reader_new},
    {Py_tp_dealloc, reader_dealloc},
    {Py_tp_traverse, reader_traverse},
    {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, reader_next},
    {Py_tp_methods, reader_methods},
    {Py_tp_getset, reader_getset},
    {Py_tp_members, reader_members},
    {0, NULL},
};

static PyType_Spec reader_spec = {
    .name = "dfbuffer._interchange._ArrowBatchReader",
    .basicsize = sizeof(reader_object),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = reader_slots,
};

/* ------------------------------------------------------------------ */
/* _arrow_batch_stream(pieces)                                          */
/* ------------------------------------------------------------------ */

/* Fills `out` with the rows of batch `i` of tuple `ctx` (batch_export).
   Returns 0, or -1 with an exception set. */
static int
pieces_fill(void *ctx, Py_ssize_t i, struct ArrowArray *out)
{
    return batch_export((batch_object *)PyTuple_GET_ITEM((PyObject *)ctx, i),
                        out);
}

/* _arrow_batch_stream(pieces): an "arrow_array_stream" capsule over the
   rows of `pieces` (a tuple of _ArrowBatch of one reader), one array
   each, zero-copy.  Returns a new capsule, or NULL with TypeError (not
   such a tuple) or ValueError (batches of different streams) set. */
static PyObject *
pieces_stream_py(PyObject *module, PyObject *pieces)
{
    dfb_state *st = dfb_state_from_module(module);
    if (!PyTuple_Check(pieces) || PyTuple_GET_SIZE(pieces) == 0) {
        PyErr_SetString(PyExc_TypeError,
                        "_arrow_batch_stream takes a non-empty tuple of "
                        "_ArrowBatch");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(pieces);
    batch_object *first = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(pieces, i);
        if (!Py_IS_TYPE(o, st->arrow_batch_type)) {
            PyErr_SetString(PyExc_TypeError,
                            "_arrow_batch_stream takes a non-empty tuple of "
                            "_ArrowBatch");
            return NULL;
        }
        batch_object *b = (batch_object *)o;
        if (first == NULL) {
            first = b;
        }
        else if (b->schema_cap != first->schema_cap) {
            PyErr_SetString(PyExc_ValueError,
                            "_arrow_batch_stream: the batches come from "
                            "different streams");
            return NULL;
        }
    }
    struct ArrowSchema schema;
    const char *why = NULL;
    if (dfb_arrow_schema_copy(first->schema, NULL, &schema, 0, &why) < 0) {
        return why != NULL ? PyErr_Format(PyExc_ValueError, "%s", why)
                           : PyErr_NoMemory();
    }
    return dfb_arrow_built_stream(&schema, n, pieces_fill, pieces);
}

/* _stream_group_bytes(n=0): the group size of to_matrix and
   from_dataframe of a stream (set to n when n > 0; tests only).  Returns
   the size before as an int, or NULL with TypeError / OverflowError. */
static PyObject *
group_bytes_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    long long n = 0;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError,
                        "_stream_group_bytes takes at most one int");
        return NULL;
    }
    if (nargs == 1) {
        n = PyLong_AsLongLong(args[0]);
        if (n == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    return PyLong_FromLongLong(dfb_arrow_group_bytes_swap(n));
}

static PyMethodDef batches_methods[] = {
    {"_stream_group_bytes", (PyCFunction)(void (*)(void))group_bytes_py,
     METH_FASTCALL,
     "_stream_group_bytes(n=0): the group size (bytes) of to_matrix and "
     "from_dataframe of a stream, set to n when n > 0 (tests only); "
     "returns the size before."},
    {"_arrow_batch_stream", pieces_stream_py, METH_O,
     "_arrow_batch_stream(pieces): an Arrow stream over a tuple of "
     "_ArrowBatch of one reader, zero-copy."},
    {NULL},
};

int
dfb_arrow_batches_state_init(PyObject *m, dfb_state *st)
{
    st->arrow_batch_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(m, &batch_spec, NULL);
    if (st->arrow_batch_type == NULL) {
        return -1;
    }
    st->arrow_batch_reader_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(m, &reader_spec, NULL);
    if (st->arrow_batch_reader_type == NULL) {
        return -1;
    }
    if (PyModule_AddType(m, st->arrow_batch_type) < 0 ||
        PyModule_AddType(m, st->arrow_batch_reader_type) < 0) {
        return -1;
    }
    return PyModule_AddFunctions(m, batches_methods);
}
