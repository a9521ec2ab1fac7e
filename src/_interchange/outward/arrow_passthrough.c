/* dfbuffer: the pass-through half of dfbuffer.to_arrow: an Arrow
 * producer's columns handed out again node for node, without reading a
 * value, for every Arrow format (lists, list views, structs, maps, unions,
 * run-end encoded, binary/string views with their variadic buffers,
 * dictionaries, extension types with their metadata).
 *
 * _arrow_nodes(obj) imports `obj` once (dfb_arrow_ix_open: pandas' index
 * columns left out, the table validated) and returns (fields, batches) in
 * _arrow_table_stream's form:
 *   field = (name, format, dictionary format | None, ordered, schema node)
 *   chunk = (length, null_count, offset, (), None, array node)
 * A schema node is a capsule owning a deep copy of the column's schema
 * (metadata included); an array node is a GC-tracked
 * dfbuffer._arrow_array_node pointing at the column's imported ArrowArray
 * and holding the import's holder (the producer's memory).
 * arrow_table_export.c exports them with dfb_arrow_node_schema /
 * dfb_arrow_node_array: copies of the nodes whose buffer pointers are the
 * producer's, each node holding a strong reference to the batches tuple (and
 * so to the holder) until released.
 */
#include "common.h"
#include "state.h"
#include "arrow_check.h"
#include "arrow.h"
#include "outward.h"
#include "types.h"

#include <stdlib.h>
#include <string.h>

#define NODE_MAX_DEPTH 256
#define NODE_MAX_BUFFERS (INT64_C(1) << 30)
#define SCHEMA_NODE "dfbuffer._arrow_schema_node"

/* ------------------------------------------------------------------ */
/* Schemas                                                              */
/* ------------------------------------------------------------------ */

/* Stores in *out the byte size of Arrow metadata `m` (non-NULL), read
   entry by entry through core's parser (dfb_metadata_next), which refuses
   a negative count or length, or one beyond DFB_METADATA_MAX_BYTES, before
   reading past it.  Returns 0, or -1 (malformed).  Runs no Python. */
static int
metadata_size(const char *m, size_t *out)
{
    int32_t n;
    const char *p;
    if (dfb_metadata_first(m, &n, &p) < 0) {
        return -1;
    }
    for (int32_t i = 0; i < n; i++) {
        dfb_metadata_entry e;
        if (dfb_metadata_next(m, &p, &e) < 0) {
            return -1;
        }
    }
    *out = (size_t)(p - m);
    return 0;
}

/* Returns a malloc'ed deep copy of `src` at nesting `depth` (NULL src:
 *why set), or NULL with *why (NULL: out of memory). */
static struct ArrowSchema *
schema_copy_new(const struct ArrowSchema *src, int depth, const char **why);

int
dfb_arrow_schema_copy(const struct ArrowSchema *src, const char *name,
                      struct ArrowSchema *dst, int depth, const char **why)
{
    memset(dst, 0, sizeof(*dst));
    *why = NULL;
    if (depth > NODE_MAX_DEPTH) {
        *why = "to_arrow: Arrow types nested deeper than 256 levels";
        return -1;
    }
    if (src->format == NULL || src->n_children < 0 ||
        (src->n_children > 0 && src->children == NULL)) {
        *why =
            "to_arrow: a schema node without a format or with bad "
            "children";
        return -1;
    }
    size_t msize = 0;
    if (src->metadata != NULL && metadata_size(src->metadata, &msize) < 0) {
        *why = "to_arrow: bad Arrow metadata lengths";
        return -1;
    }
    const char *nm = name != NULL ? name : (src->name ? src->name : "");
    if (dfb_arrow_schema_init(dst, src->format, nm, src->metadata, msize,
                              src->flags, src->n_children) < 0) {
        return -1;
    }
    for (int64_t i = 0; i < src->n_children; i++) {
        dst->children[i] = schema_copy_new(src->children[i], depth + 1, why);
        if (dst->children[i] == NULL) {
            dfb_arrow_schema_release(dst);
            return -1;
        }
    }
    if (src->dictionary != NULL) {
        dst->dictionary = schema_copy_new(src->dictionary, depth + 1, why);
        if (dst->dictionary == NULL) {
            dfb_arrow_schema_release(dst);
            return -1;
        }
    }
    return 0;
}

static struct ArrowSchema *
schema_copy_new(const struct ArrowSchema *src, int depth, const char **why)
{
    *why = NULL;
    if (src == NULL) {
        *why = "to_arrow: a NULL schema child";
        return NULL;
    }
    struct ArrowSchema *d = malloc(sizeof(*d));
    if (d != NULL && dfb_arrow_schema_copy(src, NULL, d, depth, why) < 0) {
        free(d);
        d = NULL;
    }
    return d;
}

/* dfb_arrow_schema_copy with its failure raised: ValueError(*why) or
   MemoryError.  Returns 0, or -1 with an exception set. */
static int
schema_copy_py(const struct ArrowSchema *src, const char *name,
               struct ArrowSchema *dst)
{
    const char *why;
    if (dfb_arrow_schema_copy(src, name, dst, 0, &why) == 0) {
        return 0;
    }
    if (why != NULL) {
        PyErr_SetString(PyExc_ValueError, why);
    }
    else {
        PyErr_NoMemory();
    }
    return -1;
}

/* Destructor of schema node capsules: releases and frees the copy. */
static void
schema_node_free(PyObject *cap)
{
    struct ArrowSchema *s = PyCapsule_GetPointer(cap, SCHEMA_NODE);
    if (s != NULL) {
        dfb_arrow_schema_release(s);
        free(s);
    }
}

/* Returns a new schema node capsule over a deep copy of `src`, or NULL
   with an exception set. */
static PyObject *
schema_node_new(const struct ArrowSchema *src)
{
    struct ArrowSchema *s = malloc(sizeof(*s));
    if (s == NULL) {
        return PyErr_NoMemory();
    }
    if (schema_copy_py(src, NULL, s) < 0) {
        free(s);
        return NULL;
    }
    PyObject *cap = PyCapsule_New(s, SCHEMA_NODE, schema_node_free);
    if (cap == NULL) {
        dfb_arrow_schema_release(s);
        free(s);
    }
    return cap;
}

int
dfb_arrow_is_schema_node(PyObject *o)
{
    return PyCapsule_IsValid(o, SCHEMA_NODE);
}

int
dfb_arrow_node_schema(PyObject *cap, const char *name, struct ArrowSchema *dst)
{
    struct ArrowSchema *s = PyCapsule_GetPointer(cap, SCHEMA_NODE);
    if (s == NULL) {
        memset(dst, 0, sizeof(*dst));
        return -1;
    }
    return schema_copy_py(s, name, dst);
}

/* ------------------------------------------------------------------ */
/* Arrays                                                               */
/* ------------------------------------------------------------------ */

/* Returns a malloc'ed copy of producer node `src` at nesting `depth`
   (children and dictionary copied too), or NULL with an exception set. */
static struct ArrowArray *
array_copy_new(const struct ArrowArray *src, PyObject *owner, int depth);

/* Fills `dst` (uninitialised) as a copy of producer node `src` at nesting
   `depth` holding a reference to `owner`.  Returns 0, or -1 with an
   exception set (`dst` released-marked). */
static int
array_copy(const struct ArrowArray *src, PyObject *owner,
           struct ArrowArray *dst, int depth)
{
    memset(dst, 0, sizeof(*dst));
    if (depth > NODE_MAX_DEPTH) {
        PyErr_Format(PyExc_ValueError,
                     "to_arrow: Arrow arrays nested deeper than %d levels",
                     NODE_MAX_DEPTH);
        return -1;
    }
    int64_t nbuf = src->n_buffers, nch = src->n_children;
    if (src->release == NULL || nbuf < 0 || nbuf > NODE_MAX_BUFFERS ||
        (nbuf > 0 && src->buffers == NULL) || nch < 0 ||
        nch > NODE_MAX_BUFFERS || (nch > 0 && src->children == NULL)) {
        PyErr_SetString(PyExc_ValueError,
                        "to_arrow: an Arrow array node that is released or "
                        "has bad buffers or children");
        return -1;
    }
    if (dfb_arrow_array_init(dst, owner, nbuf, nch) < 0) {
        return -1;
    }
    for (int64_t i = 0; i < nbuf; i++) {
        dst->buffers[i] = src->buffers[i];
    }
    dst->length = src->length;
    dst->null_count = src->null_count;
    dst->offset = src->offset;
    for (int64_t i = 0; i < nch; i++) {
        dst->children[i] = array_copy_new(src->children[i], owner, depth + 1);
        if (dst->children[i] == NULL) {
            dfb_arrow_array_release(dst);
            return -1;
        }
    }
    if (src->dictionary != NULL) {
        dst->dictionary = array_copy_new(src->dictionary, owner, depth + 1);
        if (dst->dictionary == NULL) {
            dfb_arrow_array_release(dst);
            return -1;
        }
    }
    return 0;
}

static struct ArrowArray *
array_copy_new(const struct ArrowArray *src, PyObject *owner, int depth)
{
    if (src == NULL) {
        PyErr_SetString(PyExc_ValueError, "to_arrow: a NULL Arrow child");
        return NULL;
    }
    struct ArrowArray *a = malloc(sizeof(*a));
    if (a == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    if (array_copy(src, owner, a, depth) < 0) {
        free(a);
        return NULL;
    }
    return a;
}

int
dfb_arrow_array_copy(const struct ArrowArray *src, PyObject *owner,
                     struct ArrowArray *dst)
{
    return array_copy(src, owner, dst, 0);
}

/* dfbuffer._arrow_array_node: one column chunk of an import, a GC-tracked
   object pointing at the imported ArrowArray that `holder` (the import's
   dfbuffer.arrow_array holder) keeps alive.  tp_traverse visits the
   holder, which visits what dfbuffer's own exports keep in the array; no
   tp_clear, which would leave `array` dangling (the Buffers of a cycle
   break it). */
typedef struct {
    PyObject_HEAD const struct ArrowArray *array;
    PyObject *holder; /* strong */
} array_node;

/* tp_traverse: the type and the holder. */
static int
array_node_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(((array_node *)op)->holder);
    return 0;
}

/* tp_dealloc: drops the holder. */
static void
array_node_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_CLEAR(((array_node *)op)->holder);
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyType_Slot array_node_slots[] = {
    {Py_tp_doc, (void *)"An imported Arrow column chunk (private)."},
    {Py_tp_traverse, array_node_traverse},
    {Py_tp_dealloc, array_node_dealloc},
    {0, NULL},
};

PyType_Spec dfb_array_node_spec = {
    .name = "dfbuffer._arrow_array_node",
    .basicsize = sizeof(array_node),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = array_node_slots,
};

/* Returns a new array node over `array` kept alive by `holder`, or NULL
   with an exception set. */
static PyObject *
array_node_new(dfb_state *st, const struct ArrowArray *array, PyObject *holder)
{
    PyTypeObject *tp = st->array_node_type;
    array_node *n = (array_node *)tp->tp_alloc(tp, 0);
    if (n == NULL) {
        return NULL;
    }
    n->array = array;
    n->holder = Py_NewRef(holder);
    if (!PyObject_GC_IsTracked(holder)) {
        /* a holder of a producer's array (untracked for good): the node,
           which never changes either, cannot be part of a cycle */
        PyObject_GC_UnTrack((PyObject *)n);
    }
    return (PyObject *)n;
}

int
dfb_arrow_is_array_node(dfb_state *st, PyObject *o)
{
    return Py_IS_TYPE(o, st->array_node_type);
}

int
dfb_arrow_node_array(PyObject *node, int64_t length, int64_t null_count,
                     int64_t offset, PyObject *owner, struct ArrowArray *a)
{
    const struct ArrowArray *src = ((const array_node *)node)->array;
    /* the slice must lie within the rows the producer's node holds */
    if (src->offset < 0 || src->length < 0 ||
        src->length > INT64_MAX - src->offset) {
        memset(a, 0, sizeof(*a));
        PyErr_SetString(PyExc_ValueError,
                        "to_arrow: an Arrow node's offset or length is "
                        "negative, or their sum overflows int64");
        return -1;
    }
    if (offset < 0 || length < 0 ||
        offset > src->offset + src->length - length) {
        memset(a, 0, sizeof(*a));
        PyErr_Format(PyExc_ValueError,
                     "to_arrow: %lld rows at %lld are outside the Arrow "
                     "node of %lld rows at offset %lld",
                     (long long)length, (long long)offset,
                     (long long)src->length, (long long)src->offset);
        return -1;
    }
    if (array_copy(src, owner, a, 0) < 0) {
        return -1;
    }
    a->length = length;
    a->null_count = null_count;
    a->offset = offset;
    return 0;
}

/* ------------------------------------------------------------------ */
/* _arrow_nodes                                                         */
/* ------------------------------------------------------------------ */

/* Returns the field tuple of column `c` of `x`, or NULL with an exception
   set. */
static PyObject *
node_field(const dfb_arrow_ix *x, int64_t c)
{
    const struct ArrowSchema *s = dfb_arrow_ix_schema(x, c);
    PyObject *node = schema_node_new(s);
    if (node == NULL) {
        return NULL;
    }
    PyObject *dfmt = Py_None;
    if (s->dictionary != NULL && s->dictionary->format != NULL) {
        dfmt = PyUnicode_FromString(s->dictionary->format);
        if (dfmt == NULL) {
            Py_DECREF(node);
            return NULL;
        }
    }
    else {
        Py_INCREF(dfmt);
    }
    return Py_BuildValue(
        "(ssNON)", dfb_arrow_column_name(&x->imp, x->is_table, c), s->format,
        dfmt, (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? Py_True : Py_False,
        node);
}

/* Returns the null count of a slice of `length` elements of format `fmt`:
   unknown (-1), but for the types without a validity bitmap (unions and
   run-end encoded arrays have 0 nulls, the null type all). */
static int64_t
slice_nulls(const char *fmt, int64_t length)
{
    const dfb_type t = dfb_arrow_format_type(fmt);
    if (t == DFB_T_NULL) {
        return length;
    }
    return t != DFB_T_INVALID && !dfb_type_has_validity(t) ? 0 : -1;
}

/* Returns the (length, chunks) tuple of batch `b` of `x`, or NULL with an
   exception set. */
static PyObject *
node_batch(const dfb_arrow_ix *x, Py_ssize_t b)
{
    PyObject *chunks = PyTuple_New((Py_ssize_t)x->nkept);
    if (chunks == NULL) {
        return NULL;
    }
    Py_ssize_t k = 0;
    for (int64_t c = 0; c < x->ncols; c++) {
        if (x->skip[c]) {
            continue;
        }
        arrow_node nd;
        if (dfb_arrow_import_node(&x->imp, x->is_table, b, c, &nd) < 0) {
            Py_DECREF(chunks);
            return NULL;
        }
        int64_t end;
        if (dfb_checked_add(nd.offset, nd.length, &end) < 0 ||
            nd.array->null_count < -1) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s' has a negative length, offset or "
                         "null_count, or an offset + length that overflows",
                         dfb_arrow_column_name(&x->imp, x->is_table, c));
            Py_DECREF(chunks);
            return NULL;
        }
        int64_t nulls =
            nd.offset == nd.array->offset && nd.length == nd.array->length
                ? nd.array->null_count
                : slice_nulls(nd.schema->format, nd.length);
        PyObject *node = array_node_new(x->imp.st, nd.array, nd.holder);
        PyObject *chunk =
            node == NULL ? NULL
                         : Py_BuildValue("(LLL()ON)", (long long)nd.length,
                                         (long long)nulls,
                                         (long long)nd.offset, Py_None, node);
        if (chunk == NULL) {
            Py_DECREF(chunks);
            return NULL;
        }
        PyTuple_SET_ITEM(chunks, k++, chunk);
    }
    return Py_BuildValue("(LN)", (long long)x->imp.arrays[b]->length, chunks);
}

/* _arrow_nodes / _arrow_column_nodes of `obj`: a table's columns, or,
   when `as_column`, the producer as one column (a struct array or a
   record batch one struct column, as column_to_ndarray reads it).
   Returns a new (fields, batches) tuple, or NULL with an exception set. */
static PyObject *
arrow_nodes(PyObject *module, PyObject *obj, int as_column)
{
    dfb_state *st = dfb_state_from_module(module);
    dfb_arrow_ix x;
    PyObject *fields = NULL, *batches = NULL, *result = NULL;
    if (as_column) {
        /* dfb_arrow_ix_open's import without its table: the whole array
           (a struct too, null rows and all) is the one column */
        memset(&x, 0, sizeof(x));
        x.allow_copy = 1;
        x.imp.accept_device = 1;
        x.ncols = x.nkept = 1;
        x.skip = PyMem_Calloc(1, 1);
        if (x.skip == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        if (dfb_arrow_import_producer(st, obj, &x.imp) < 0) {
            goto done;
        }
    }
    else if (dfb_arrow_ix_open(st, obj, 1, &x) < 0) {
        goto done;
    }
    if (!dfb_arrow_import_on_cpu(&x.imp)) {
        PyErr_SetString(PyExc_BufferError,
                        "dfbuffer.to_arrow exports host memory only");
        goto done;
    }
    fields = PyTuple_New((Py_ssize_t)x.nkept);
    batches = fields == NULL ? NULL : PyTuple_New(x.imp.n);
    if (batches == NULL) {
        goto done;
    }
    Py_ssize_t k = 0;
    for (int64_t c = 0; c < x.ncols; c++) {
        if (x.skip[c]) {
            continue;
        }
        PyObject *f = node_field(&x, c);
        if (f == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(fields, k++, f);
    }
    for (Py_ssize_t b = 0; b < x.imp.n; b++) {
        PyObject *batch = node_batch(&x, b);
        if (batch == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(batches, b, batch);
    }
    result = PyTuple_Pack(2, fields, batches);
done:
    Py_XDECREF(fields);
    Py_XDECREF(batches);
    dfb_arrow_ix_close(&x);
    return result;
}

PyObject *
dfb_arrow_nodes_py(PyObject *module, PyObject *obj)
{
    return arrow_nodes(module, obj, 0);
}

PyObject *
dfb_arrow_column_nodes_py(PyObject *module, PyObject *obj)
{
    return arrow_nodes(module, obj, 1);
}
