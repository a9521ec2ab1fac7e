/* dfbuffer: Arrow export of a table (dfbuffer.to_arrow).
 *
 * dfbuffer/_to_arrow.py describes a table as columns of chunks whose
 * buffers are dfbuffer.Buffer objects; these functions assemble the Arrow C
 * data interface structs over those buffers without copying:
 *   _arrow_table_schema(fields) -> "arrow_schema" capsule (a struct "+s")
 *   _arrow_table_stream(fields, batches) -> "arrow_array_stream" capsule
 * fields:  tuple of (name str, format str, dictionary format str | None,
 *          ordered bool[, schema node]), one per column.
 * batches: tuple of (length int, tuple of chunk), one chunk per column;
 *          chunk = (length, null_count, offset, tuple of Buffer | None,
 *          dictionary chunk | None[, array node]).
 * A field with a schema node and a chunk with an array node are an Arrow
 * producer's own nodes, handed out again node for node
 * (arrow_passthrough.c; _arrow_nodes makes them).
 * Every ArrowArray node holds its own strong reference to `batches` (which
 * holds the Buffers, which hold the producers' memory), dropped by its
 * release callback on any thread (dfb_decref_any_thread).  The stream's
 * arrays are built when it is made (with the GIL), so get_next and
 * get_schema run no Python.  That stream (dfb_arrow_built_stream) also
 * serves _arrow_batch_stream (ops/arrow_batches.c).
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "outward.h"
#include "arrow.h"
#include "types.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUFFERS 3

/* ------------------------------------------------------------------ */
/* Schemas                                                              */
/* ------------------------------------------------------------------ */

/* Returns the UTF-8 of str `o` (borrowed), or NULL with TypeError naming
   `what`. */
static const char *
utf8_of(PyObject *o, const char *what)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str", what);
        return NULL;
    }
    return PyUnicode_AsUTF8(o);
}

/* Stores in *out a new malloc'ed schema copied from schema node `node`
   named `name`.  Returns 0, or -1 with an exception set. */
static int
node_field(PyObject *node, const char *name, struct ArrowSchema **out)
{
    if (!dfb_arrow_is_schema_node(node)) {
        PyErr_SetString(PyExc_TypeError,
                        "a field's fifth item must be a schema node");
        return -1;
    }
    struct ArrowSchema *c = malloc(sizeof(*c));
    if (c == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (dfb_arrow_node_schema(node, name, c) < 0) {
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

/* Fills `s` with the struct schema of `fields` (see the file comment).
   Returns 0, or -1 with an exception set (`s` released-marked). */
static int
table_schema(PyObject *fields, struct ArrowSchema *s)
{
    if (!PyTuple_Check(fields)) {
        PyErr_SetString(PyExc_TypeError, "fields must be a tuple");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(fields);
    if (dfb_arrow_schema_init(s, dfb_type_arrow_format(DFB_T_STRUCT), "", NULL,
                              0, 0, n) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *f = PyTuple_GET_ITEM(fields, i);
        if (!PyTuple_Check(f) || PyTuple_GET_SIZE(f) < 4 ||
            PyTuple_GET_SIZE(f) > 5) {
            PyErr_SetString(PyExc_TypeError,
                            "a field must be a 4- or 5-tuple");
            goto fail;
        }
        const char *name = utf8_of(PyTuple_GET_ITEM(f, 0), "a field name");
        if (name != NULL && PyTuple_GET_SIZE(f) == 5) {
            if (node_field(PyTuple_GET_ITEM(f, 4), name, &s->children[i]) <
                0) {
                goto fail;
            }
            continue;
        }
        const char *fmt =
            name ? utf8_of(PyTuple_GET_ITEM(f, 1), "a format") : NULL;
        PyObject *dfo = PyTuple_GET_ITEM(f, 2);
        const char *dfmt =
            dfo == Py_None || fmt == NULL ? NULL : utf8_of(dfo, "a format");
        if (fmt == NULL || (dfo != Py_None && dfmt == NULL)) {
            goto fail;
        }
        int ordered = PyObject_IsTrue(PyTuple_GET_ITEM(f, 3));
        if (ordered < 0) {
            goto fail;
        }
        int64_t flags = ARROW_FLAG_NULLABLE;
        if (dfmt != NULL && ordered) {
            flags |= ARROW_FLAG_DICTIONARY_ORDERED;
        }
        struct ArrowSchema *c = malloc(sizeof(*c));
        if (c == NULL ||
            dfb_arrow_schema_init(c, fmt, name, NULL, 0, flags, 0) < 0) {
            free(c);
            PyErr_NoMemory();
            goto fail;
        }
        s->children[i] = c;
        if (dfmt != NULL) {
            c->dictionary = malloc(sizeof(struct ArrowSchema));
            if (c->dictionary == NULL ||
                dfb_arrow_schema_init(c->dictionary, dfmt, "", NULL, 0,
                                      ARROW_FLAG_NULLABLE, 0) < 0) {
                free(c->dictionary);
                c->dictionary = NULL;
                PyErr_NoMemory();
                goto fail;
            }
        }
    }
    return 0;
fail:
    dfb_arrow_schema_release(s);
    return -1;
}

/* _arrow_table_schema(fields).  Returns a new "arrow_schema" capsule or
   NULL with an exception set. */
static PyObject *
table_schema_py(PyObject *module, PyObject *fields)
{
    (void)module;
    struct ArrowSchema *s = malloc(sizeof(*s));
    if (s == NULL) {
        return PyErr_NoMemory();
    }
    if (table_schema(fields, s) < 0) {
        free(s);
        return NULL;
    }
    PyObject *cap =
        PyCapsule_New(s, "arrow_schema", dfb_arrow_schema_capsule_free);
    if (cap == NULL) {
        dfb_arrow_schema_release(s);
        free(s);
    }
    return cap;
}

/* ------------------------------------------------------------------ */
/* Arrays                                                               */
/* ------------------------------------------------------------------ */

/* Reads a non-negative int64 from `o` into *out.  Returns 0, or -1 with
   an exception set. */
static int
read_count(PyObject *o, int64_t *out, int allow_minus_one)
{
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < (allow_minus_one ? -1 : 0)) {
        PyErr_SetString(PyExc_ValueError, "a chunk count must be >= 0");
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* Fills `a` with the column chunk `chunk` (see the file comment).
   Returns 0, or -1 with an exception set (`a` released-marked). */
static int
chunk_array(dfb_state *st, PyObject *chunk, PyObject *owner,
            struct ArrowArray *a)
{
    static const uint64_t empty[1] = {0};
    a->release = NULL;
    if (!PyTuple_Check(chunk) || PyTuple_GET_SIZE(chunk) < 5 ||
        PyTuple_GET_SIZE(chunk) > 6 ||
        !PyTuple_Check(PyTuple_GET_ITEM(chunk, 3))) {
        PyErr_SetString(PyExc_TypeError, "a chunk must be a 5- or 6-tuple");
        return -1;
    }
    int64_t length, nulls, offset;
    if (read_count(PyTuple_GET_ITEM(chunk, 0), &length, 0) < 0 ||
        read_count(PyTuple_GET_ITEM(chunk, 1), &nulls, 1) < 0 ||
        read_count(PyTuple_GET_ITEM(chunk, 2), &offset, 0) < 0) {
        return -1;
    }
    if (PyTuple_GET_SIZE(chunk) == 6) {
        PyObject *node = PyTuple_GET_ITEM(chunk, 5);
        if (!dfb_arrow_is_array_node(st, node)) {
            PyErr_SetString(PyExc_TypeError,
                            "a chunk's sixth item must be an array node");
            return -1;
        }
        return dfb_arrow_node_array(node, length, nulls, offset, owner, a);
    }
    PyObject *bufs = PyTuple_GET_ITEM(chunk, 3);
    Py_ssize_t nbuf = PyTuple_GET_SIZE(bufs);
    if (nbuf > MAX_BUFFERS) { /* 0: the null type */
        PyErr_SetString(PyExc_ValueError, "a chunk has 0 to 3 buffers");
        return -1;
    }
    if (dfb_arrow_array_init(a, owner, nbuf, 0) < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < nbuf; i++) {
        PyObject *b = PyTuple_GET_ITEM(bufs, i);
        if (b == Py_None) {
            a->buffers[i] = NULL;
            continue;
        }
        if (!DfbBuffer_Check(st, b)) {
            PyErr_SetString(PyExc_TypeError,
                            "a chunk's buffers must be dfbuffer.Buffer or "
                            "None");
            goto fail;
        }
        const DfbBuffer *db = (const DfbBuffer *)b;
        if (dfb_buffer_require_host(db, "dfbuffer.to_arrow") < 0) {
            goto fail;
        }
        a->buffers[i] = db->data != NULL ? (const void *)db->data : empty;
    }
    a->length = length;
    a->null_count = nulls;
    a->offset = offset;
    PyObject *dict = PyTuple_GET_ITEM(chunk, 4);
    if (dict != Py_None) {
        a->dictionary = malloc(sizeof(struct ArrowArray));
        if (a->dictionary == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        if (chunk_array(st, dict, owner, a->dictionary) < 0) {
            free(a->dictionary);
            a->dictionary = NULL;
            goto fail;
        }
    }
    return 0;
fail:
    dfb_arrow_array_release(a);
    return -1;
}

/* Fills `a` with batch `batch`, a struct array of `ncols` columns.
   Returns 0, or -1 with an exception set (`a` released-marked). */
static int
batch_array(dfb_state *st, PyObject *batch, Py_ssize_t ncols, PyObject *owner,
            struct ArrowArray *a)
{
    a->release = NULL;
    if (!PyTuple_Check(batch) || PyTuple_GET_SIZE(batch) != 2 ||
        !PyTuple_Check(PyTuple_GET_ITEM(batch, 1)) ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(batch, 1)) != ncols) {
        PyErr_SetString(PyExc_TypeError,
                        "a batch must be (length, one chunk per field)");
        return -1;
    }
    int64_t length;
    if (read_count(PyTuple_GET_ITEM(batch, 0), &length, 0) < 0 ||
        dfb_arrow_array_init(a, owner, 1, ncols) < 0) {
        return -1;
    }
    a->length = length;
    PyObject *chunks = PyTuple_GET_ITEM(batch, 1);
    for (Py_ssize_t i = 0; i < ncols; i++) {
        struct ArrowArray *c = malloc(sizeof(*c));
        if (c == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        if (chunk_array(st, PyTuple_GET_ITEM(chunks, i), owner, c) < 0) {
            free(c);
            goto fail;
        }
        a->children[i] = c;
        if (c->length != length) {
            PyErr_SetString(PyExc_ValueError,
                            "every column of a batch must have the batch's "
                            "length");
            goto fail;
        }
    }
    return 0;
fail:
    dfb_arrow_array_release(a);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Streams                                                              */
/* ------------------------------------------------------------------ */

/* Private data of an exported stream: the schema and every batch, built
   when the stream was made; get_next moves them out in order. */
typedef struct {
    struct ArrowSchema schema;
    struct ArrowArray *batches;
    int64_t nbatches;
    int64_t next;
} stream_private;

/* get_schema: a deep copy of the stream's schema.  Returns 0 or ENOMEM. */
static int
stream_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out)
{
    stream_private *p = stream->private_data;
    const char *why;
    return dfb_arrow_schema_copy(&p->schema, NULL, out, 0, &why) < 0 ? ENOMEM
                                                                     : 0;
}

/* get_next: moves the next batch out, or marks `out` released at the end.
   Returns 0. */
static int
stream_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out)
{
    stream_private *p = stream->private_data;
    if (p->next >= p->nbatches) {
        memset(out, 0, sizeof(*out));
        out->release = NULL;
        return 0;
    }
    *out = p->batches[p->next];
    p->batches[p->next].release = NULL;
    p->next++;
    return 0;
}

/* get_last_error: none is ever recorded (errors are ENOMEM only). */
static const char *
stream_get_last_error(struct ArrowArrayStream *stream)
{
    (void)stream;
    return NULL;
}

/* release: releases the schema and the batches not moved out. */
static void
stream_release(struct ArrowArrayStream *stream)
{
    if (stream == NULL || stream->release == NULL) {
        return;
    }
    stream_private *p = stream->private_data;
    if (p != NULL) {
        dfb_arrow_schema_release(&p->schema);
        for (int64_t i = 0; i < p->nbatches; i++) {
            dfb_arrow_array_release(&p->batches[i]);
        }
        free(p->batches);
        free(p);
    }
    stream->release = NULL;
}

PyObject *
dfb_arrow_built_stream(struct ArrowSchema *schema, Py_ssize_t n,
                       int (*fill)(void *ctx, Py_ssize_t i,
                                   struct ArrowArray *out),
                       void *ctx)
{
    stream_private *p = calloc(1, sizeof(*p));
    struct ArrowArrayStream *s = calloc(1, sizeof(*s));
    if (p == NULL || s == NULL) {
        free(p);
        free(s);
        dfb_arrow_schema_release(schema);
        return PyErr_NoMemory();
    }
    p->schema = *schema; /* moved: the caller no longer releases it */
    schema->release = NULL;
    s->private_data = p;
    s->get_schema = stream_get_schema;
    s->get_next = stream_get_next;
    s->get_last_error = stream_get_last_error;
    s->release = stream_release;
    p->batches = calloc(n > 0 ? (size_t)n : 1, sizeof(struct ArrowArray));
    if (p->batches == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (fill(ctx, i, &p->batches[i]) < 0) {
            goto fail;
        }
        p->nbatches = i + 1;
    }
    PyObject *cap =
        PyCapsule_New(s, "arrow_array_stream", dfb_arrow_stream_capsule_free);
    if (cap == NULL) {
        goto fail;
    }
    return cap;
fail:
    stream_release(s);
    free(s);
    return NULL;
}

/* What table_fill needs to build batch `i` of _arrow_table_stream. */
typedef struct {
    dfb_state *st;
    PyObject *batches;
    Py_ssize_t ncols;
} table_fill_ctx;

/* Fills `out` with batch `i` of the table (batch_array).  Returns 0, or -1
   with an exception set. */
static int
table_fill(void *ctx, Py_ssize_t i, struct ArrowArray *out)
{
    table_fill_ctx *c = ctx;
    return batch_array(c->st, PyTuple_GET_ITEM(c->batches, i), c->ncols,
                       c->batches, out);
}

/* _arrow_table_stream(fields, batches).  Returns a new
   "arrow_array_stream" capsule or NULL with an exception set. */
static PyObject *
table_stream_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "_arrow_table_stream(fields, batches) takes two "
                        "tuples");
        return NULL;
    }
    PyObject *fields = args[0], *batches = args[1];
    table_fill_ctx c = {dfb_state_from_module(module), batches,
                        PyTuple_GET_SIZE(fields)};
    struct ArrowSchema schema;
    if (table_schema(fields, &schema) < 0) {
        return NULL;
    }
    return dfb_arrow_built_stream(&schema, PyTuple_GET_SIZE(batches),
                                  table_fill, &c);
}

PyMethodDef dfb_arrow_table_export_methods[] = {
    {"_arrow_table_schema", (PyCFunction)table_schema_py, METH_O,
     "_arrow_table_schema(fields): the struct schema capsule of to_arrow."},
    {"_arrow_table_stream", (PyCFunction)(void (*)(void))table_stream_py,
     METH_FASTCALL,
     "_arrow_table_stream(fields, batches): the stream capsule of "
     "to_arrow."},
    {"_arrow_nodes", (PyCFunction)dfb_arrow_nodes_py, METH_O,
     "_arrow_nodes(obj): an Arrow producer's columns as to_arrow's fields "
     "and batches, node for node."},
    {"_arrow_column_nodes", (PyCFunction)dfb_arrow_column_nodes_py, METH_O,
     "_arrow_column_nodes(obj): _arrow_nodes of an Arrow producer read as "
     "one column (a struct array is one struct column)."},
    {NULL},
};
