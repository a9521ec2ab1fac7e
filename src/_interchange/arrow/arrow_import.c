/* dfbuffer: Arrow import: a PyCapsule producer's schema and arrays moved
 * into holders, and validated before any buffer is read.
 *
 * A producer's ArrowArray (from __arrow_c_array__, or each chunk of
 * __arrow_c_stream__; the embedded ArrowArray of __arrow_c_device_array__
 * and of each chunk of __arrow_c_device_stream__, by the same capsule move
 * and stream walk, with arrow_device.c's device checks) is *moved*
 * into a heap holder (bitwise copy, then the source's release set to NULL,
 * so the producer's capsule destructor no longer releases it).  The holder
 * is a GC-tracked dfbuffer.arrow_array object whose dealloc calls release
 * exactly once; every dfbuffer.Buffer made over one of the array's buffers
 * (at any depth: children and dictionaries are released by the top-level
 * release) holds a strong reference to that holder.  Every field
 * is validated (core's arrow_check.c) before any buffer is read: Arrow
 * gives no buffer sizes, so the sizes are computed from length + offset
 * (and the string offsets), and negative or inconsistent fields raise
 * ValueError.
 */
#include "common.h"
#include "arrow.h"
#include "probe.h"
#include "model.h"
#include "format.h"
#include "offsets.h"
#include "types.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The holder of one imported ArrowArray                                */
/* ------------------------------------------------------------------ */

/* dfbuffer.arrow_array: a GC-tracked holder of one moved-in ArrowArray,
   released exactly once when the holder dies.  GC rule (docs/design.md,
   "Safety rules"): tp_traverse visits only the references dfbuffer's own
   exports keep in the array's private data (dfb_arrow_array_visit: the
   owners of to_arrow's nodes, the Buffer of Buffer.__arrow_c_array__),
   whose release only drops them, so a cycle through dfbuffer's export
   read back by dfbuffer is collected; a producer's array is never looked
   into.  No tp_clear: the release stays with the dealloc, and the Buffers
   of the cycle break it. */
typedef struct {
    PyObject_HEAD struct ArrowArray
        array; /* moved in; release == NULL until then */
} arrow_holder;

/* tp_traverse: the type, and the references of dfbuffer's own nodes. */
static int
holder_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    return dfb_arrow_array_visit(&((arrow_holder *)op)->array, visit, arg);
}

/* tp_dealloc: releases the held ArrowArray (once), keeping any pending
   exception, and frees the holder. */
static void
holder_dealloc(PyObject *op)
{
    arrow_holder *h = (arrow_holder *)op;
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    if (h->array.release != NULL) {
        PyObject *exc = dfb_err_take();
        h->array.release(&h->array);
        h->array.release = NULL;
        dfb_err_give(exc);
    }
    tp->tp_free(op);
    Py_DECREF(tp);
}

static PyType_Slot holder_slots[] = {
    {Py_tp_doc, (void *)"A held Arrow array import (private)."},
    {Py_tp_traverse, holder_traverse},
    {Py_tp_dealloc, holder_dealloc},
    {0, NULL},
};

PyType_Spec dfb_arrow_holder_spec = {
    .name = "dfbuffer.arrow_array",
    .basicsize = sizeof(arrow_holder),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
             Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = holder_slots,
};

/* A visitproc that stops at the first reference: dfb_arrow_array_visit
   with it answers whether an array keeps any. */
static int
found_ref(PyObject *o, void *arg)
{
    (void)o;
    (void)arg;
    return 1;
}

/* Untracks holder `op` when its array keeps no reference of dfbuffer's
   own (a producer's array, the common case): it then cannot be part of a
   cycle, its array never changes once moved in, and the Buffers over it
   stay untracked too (buffer.c), costing the collector nothing.  Cannot
   fail. */
static void
holder_settle(PyObject *op)
{
    if (PyObject_GC_IsTracked(op) &&
        dfb_arrow_array_visit(&((arrow_holder *)op)->array, found_ref, NULL) ==
            0) {
        PyObject_GC_UnTrack(op);
    }
}

/* Returns a new holder of st's holder type (holder in *out, its array
   marked released), or NULL with an exception set (SystemError: no
   state). */
static PyObject *
holder_new(dfb_state *st, arrow_holder **out)
{
    if (st == NULL) {
        PyErr_SetString(PyExc_SystemError, "an Arrow import without state");
        return NULL;
    }
    PyTypeObject *tp = st->arrow_holder_type;
    arrow_holder *h = (arrow_holder *)tp->tp_alloc(tp, 0);
    if (h == NULL) {
        return NULL;
    }
    h->array.release = NULL;
    *out = h;
    return (PyObject *)h;
}

/* ------------------------------------------------------------------ */
/* Import: producer -> schema + holders                                 */
/* ------------------------------------------------------------------ */

void
dfb_arrow_import_clear(arrow_import *imp)
{
    /* release callbacks may run Python code: keep a pending exception */
    PyObject *exc = dfb_err_take();
    for (Py_ssize_t i = 0; i < imp->n; i++) {
        Py_DECREF(imp->holders[i]);
    }
    if (imp->holders != &imp->holder1) {
        PyMem_Free(imp->holders);
        PyMem_Free(imp->arrays);
    }
    if (imp->schema.release != NULL) {
        imp->schema.release(&imp->schema);
    }
    dfb_state *st = imp->st;
    memset(imp, 0, sizeof(*imp));
    imp->st = st;
    dfb_err_give(exc);
}

/* The output bytes a group of a stream's chunks makes (docs/design.md,
   "Whole streams"): 16 MiB unless the tests set it. */
static atomic_llong group_bytes = (long long)16 << 20;

long long
dfb_arrow_group_bytes_swap(long long n)
{
    return n > 0 ? atomic_exchange(&group_bytes, n)
                 : atomic_load(&group_bytes);
}

int
dfb_arrow_import_is_group(const arrow_import *imp)
{
    const long long bytes = atomic_load(&group_bytes);
    const long long width =
        dfb_arrow_import_is_table(imp) && imp->schema.n_children > 0
            ? imp->schema.n_children
            : 1;
    long long rows = 0;
    /* the chunks before the newest make the group: a stream whose chunks
       end before one more arrives (a table of one chunk, however large)
       is never grouped, and is filled at once, its length known */
    for (Py_ssize_t i = 0; i + 1 < imp->n; i++) {
        /* unvalidated here: an estimate, each chunk counted at most once
           the whole group */
        const long long len = imp->arrays[i]->length;
        rows += len > 0 && len < bytes ? len : bytes;
        if (rows >= bytes) {
            break;
        }
    }
    return rows >= bytes / (8 * width);
}

void
dfb_arrow_import_drop_chunks(arrow_import *imp)
{
    PyObject *exc = dfb_err_take();
    for (Py_ssize_t i = 0; i < imp->n; i++) {
        Py_CLEAR(imp->holders[i]);
        imp->arrays[i] = NULL;
    }
    imp->n = 0;
    dfb_err_give(exc);
}

struct ArrowArray *
dfb_arrow_import_add(arrow_import *imp)
{
    if (imp->cap == 0) {
        /* the first chunk: the inline slots, nothing allocated */
        imp->holders = &imp->holder1;
        imp->arrays = &imp->array1;
        imp->cap = 1;
    }
    else if (imp->n == imp->cap && imp->holders == &imp->holder1) {
        /* a second chunk: off the inline slots, both arrays or neither */
        PyObject **h = PyMem_Malloc(4 * sizeof(PyObject *));
        struct ArrowArray **a = PyMem_Malloc(4 * sizeof(struct ArrowArray *));
        if (h == NULL || a == NULL) {
            PyMem_Free(h);
            PyMem_Free(a);
            PyErr_NoMemory();
            return NULL;
        }
        h[0] = imp->holder1;
        a[0] = imp->array1;
        imp->holders = h;
        imp->arrays = a;
        imp->cap = 4;
    }
    else if (imp->n == imp->cap) {
        Py_ssize_t cap = 2 * imp->cap;
        PyObject **h = PyMem_Realloc(imp->holders, cap * sizeof(PyObject *));
        if (h == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        imp->holders = h;
        struct ArrowArray **a =
            PyMem_Realloc(imp->arrays, cap * sizeof(struct ArrowArray *));
        if (a == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        imp->arrays = a;
        imp->cap = cap;
    }
    arrow_holder *holder;
    PyObject *cap = holder_new(imp->st, &holder);
    if (cap == NULL) {
        return NULL;
    }
    imp->holders[imp->n] = cap;
    imp->arrays[imp->n] = &holder->array;
    imp->n++;
    return &holder->array;
}

/* Moves the capsules `res` returned by `method` (__arrow_c_array__, whose
   array capsule is named "arrow_array", or __arrow_c_device_array__:
   "arrow_device_array", a struct that starts with the ArrowArray moved)
   into `imp`; `what` names the two capsules in messages.  Stores the array
   capsule's struct in *held (readable while `res` lives).  Returns 0, or -1
   with TypeError (not a 2-tuple, capsule names or order) or ValueError
   (already released) set. */
static int
move_pair(PyObject *res, const char *method, const char *array_name,
          const char *const what[2], arrow_import *imp, void **held)
{
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        PyErr_Format(
            PyExc_TypeError,
            "%s must return a tuple (schema capsule, %s), got %.100s", method,
            strcmp(array_name, "arrow_array") == 0 ? "array capsule"
                                                   : "device array capsule",
            Py_TYPE(res)->tp_name);
        return -1;
    }
    PyObject *sc = PyTuple_GET_ITEM(res, 0), *ac = PyTuple_GET_ITEM(res, 1);
    if (PyCapsule_IsValid(sc, array_name) &&
        PyCapsule_IsValid(ac, "arrow_schema")) {
        PyErr_Format(PyExc_TypeError,
                     "%s returned its capsules in the wrong order: (array, "
                     "schema) instead of (schema, array)",
                     method);
        return -1;
    }
    struct ArrowSchema *s =
        dfb_arrow_capsule_pointer(sc, "arrow_schema", what[0]);
    if (s == NULL) {
        return -1;
    }
    struct ArrowArray *a = dfb_arrow_capsule_pointer(ac, array_name, what[1]);
    if (a == NULL) {
        return -1;
    }
    if (s->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the 'arrow_schema' capsule holds a released schema "
                        "(already consumed)");
        return -1;
    }
    if (a->release == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "the '%s' capsule holds a released array (already "
                     "consumed)",
                     array_name);
        return -1;
    }
    struct ArrowArray *dst = dfb_arrow_import_add(imp);
    if (dst == NULL) {
        return -1;
    }
    imp->schema = *s;
    s->release = NULL;
    *dst = *a;
    a->release = NULL;
    *held = a;
    return 0;
}

/* Moves the capsules `res` (a new reference, released here; NULL: the
   call failed) that __arrow_c_array__ returned (`device`:
   __arrow_c_device_array__, whose device it checks) into `imp`.  Returns
   0, or -1 with an exception set. */
static int
import_pair(PyObject *res, int device, arrow_import *imp)
{
    if (res == NULL) {
        return -1;
    }
    static const char *const cpu_what[2] = {"__arrow_c_array__()[0]",
                                            "__arrow_c_array__()[1]"};
    static const char *const dev_what[2] = {"__arrow_c_device_array__()[0]",
                                            "__arrow_c_device_array__()[1]"};
    void *held;
    int r = device ? move_pair(res, "__arrow_c_device_array__",
                               "arrow_device_array", dev_what, imp, &held)
                   : move_pair(res, "__arrow_c_array__", "arrow_array",
                               cpu_what, imp, &held);
    /* moved: from here on `imp` releases both */
    if (r == 0 && device) {
        r = dfb_arrow_device_check(held, &imp->device);
    }
    Py_DECREF(res);
    return r;
}

/* A stream of either kind, moved in: the walk below serves both. */
typedef struct {
    int device; /* which of the two is live */
    struct ArrowArrayStream cpu;
    struct ArrowDeviceArrayStream dev;
    dfb_arrow_accept_fn accept; /* asked after the schema; NULL: always */
    void *ctx;                  /* accept's */
} any_stream;

/* Sets the exception for failed callback `what` of `s` with errno `rc`
   (EINVAL -> ValueError, ENOMEM -> MemoryError, ENOSYS ->
   NotImplementedError, else OSError), with the stream's last error;
   `batch` >= 0 names the batch get_next was asked for (0 the first).
   Always returns -1. */
static int
stream_error(any_stream *s, int rc, const char *what, Py_ssize_t batch)
{
    const char *msg = NULL;
    if (s->device ? s->dev.get_last_error != NULL
                  : s->cpu.get_last_error != NULL) {
        msg = s->device ? s->dev.get_last_error(&s->dev)
                        : s->cpu.get_last_error(&s->cpu);
    }
    PyObject *exc = rc == EINVAL   ? PyExc_ValueError
                    : rc == ENOMEM ? PyExc_MemoryError
                    : rc == ENOSYS ? PyExc_NotImplementedError
                                   : PyExc_OSError;
    char at[48] = "";
    if (batch >= 0) {
        PyOS_snprintf(at, sizeof(at), " at batch %zd", batch);
    }
    PyErr_Format(exc, "%s %s failed%s (error %d): %s",
                 s->device ? "Arrow device stream" : "Arrow stream", what, at,
                 rc, msg ? msg : "no message");
    return -1;
}

/* Gets the next chunk of `s` into `dst` (released at the end of the
   stream; a device chunk's embedded array, its device fields in *d).
   Returns the producer's return code. */
static int
stream_next(any_stream *s, struct ArrowArray *dst, struct ArrowDeviceArray *d)
{
    if (!s->device) {
        return s->cpu.get_next(&s->cpu, dst);
    }
    memset(d, 0, sizeof(*d));
    int rc = s->dev.get_next(&s->dev, d);
    if (rc == 0) {
        *dst = d->array; /* moved: released with its holder */
    }
    return rc;
}

/* Checks the chunk a stream walk just moved into `imp` against the schema
   (a table's, on the CPU; dfb_arrow_check_table), before a consumer of the
   chunks so far (on_chunk) reads it.  Returns 0, or -1 with ValueError /
   NotImplementedError naming the batch (0 the first). */
static int
check_last(const arrow_import *imp)
{
    if (!dfb_arrow_import_is_table(imp) || !dfb_arrow_import_on_cpu(imp)) {
        return 0;
    }
    dfb_error err;
    const struct ArrowArray *a = imp->arrays[imp->n - 1];
    dfb_code rc = dfb_arrow_check_table(&imp->schema, imp->arrays + imp->n - 1,
                                        1, 1, &err);
    /* each column's buffer and child counts, where its format fixes them
       (the layout of another type; one of the same layout cannot be told) */
    for (int64_t c = 0; rc == DFB_OK && c < imp->schema.n_children; c++) {
        const struct ArrowSchema *cs = imp->schema.children[c];
        const struct ArrowArray *ca = a->children[c];
        dfb_format f;
        if (dfb_format_parse_arrow(cs->format, &f) < 0 ||
            cs->dictionary != NULL || f.type == DFB_T_NULL) {
            continue; /* refused, or checked (a null column's legacy
                         buffer taken), where the column is read */
        }
        const dfb_type_row *row = dfb_type_row_of(f.type);
        if ((row->layout != DFB_LAYOUT_VIEWS && row->n_buffers >= 0 &&
             ca->n_buffers != row->n_buffers) ||
            ca->n_children != cs->n_children) {
            rc = dfb_error_set(&err, DFB_EINVAL,
                               "column '%s' of format '%s' has %lld buffers "
                               "and %lld children",
                               cs->name != NULL ? cs->name : "", cs->format,
                               (long long)ca->n_buffers,
                               (long long)ca->n_children);
        }
    }
    if (rc == DFB_OK) {
        return 0;
    }
    dfb_error named;
    PyOS_snprintf(
        named.message, sizeof(named.message),
        "batch %zd of the Arrow stream does not match its schema: %s",
        imp->nread - 1, err.message);
    return dfb_arrow_raise(rc, &named);
}

/* Moves the schema and every chunk of live stream `s` into `imp` (zeroed
   by the caller; on a device stream, its device checked chunk by chunk)
   and releases the stream; when s->accept declines the schema, no chunk
   is read.  Returns 0, 1 (declined), or -1 with an exception set (clear
   `imp` either way). */
static int
walk_stream(any_stream *s, arrow_import *imp)
{
    const char *kind = s->device ? "Arrow device stream" : "Arrow stream";
    int ret = -1, rc;
    if (s->device ? s->dev.get_schema == NULL || s->dev.get_next == NULL
                  : s->cpu.get_schema == NULL || s->cpu.get_next == NULL) {
        PyErr_Format(PyExc_ValueError, "the %s has no get_schema/get_next",
                     kind);
        goto done;
    }
    if (s->device &&
        dfb_arrow_device_of_stream(s->dev.device_type, &imp->device) < 0) {
        goto done;
    }
    rc = s->device ? s->dev.get_schema(&s->dev, &imp->schema)
                   : s->cpu.get_schema(&s->cpu, &imp->schema);
    if (rc != 0) {
        stream_error(s, rc, "get_schema", -1);
        goto done;
    }
    if (imp->schema.release == NULL) {
        PyErr_Format(PyExc_ValueError, "the %s gave a released schema", kind);
        goto done;
    }
    if (s->accept != NULL) {
        int a = s->accept(&imp->schema, s->ctx);
        if (a <= 0) {
            ret = a == 0 ? 1 : -1;
            goto done;
        }
    }
    for (int first = 1;; first = 0) {
        /* on the stack first: the end-of-stream marker needs no holder */
        struct ArrowArray next;
        struct ArrowDeviceArray d;
        memset(&next, 0, sizeof(next));
        rc = stream_next(s, &next, &d);
        if (next.release != NULL) {
            struct ArrowArray *dst = dfb_arrow_import_add(imp);
            if (dst == NULL) {
                PyObject *saved = dfb_err_take();
                next.release(&next);
                dfb_err_give(saved);
                goto done;
            }
            *dst = next; /* moved: released with its holder */
        }
        if (rc != 0) {
            stream_error(s, rc, "get_next", imp->nread);
            goto done;
        }
        if (next.release == NULL) {
            break; /* end of stream */
        }
        if (s->device && dfb_arrow_device_next(s->dev.device_type, &d,
                                               &imp->device, first) < 0) {
            goto done;
        }
        imp->nread++;
        if (imp->on_chunk != NULL &&
            (check_last(imp) < 0 || imp->on_chunk(imp, imp->chunk_ctx) < 0)) {
            goto done;
        }
    }
    ret = 0;
done:
    {
        PyObject *saved = dfb_err_take();
        if (s->device) {
            s->dev.release(&s->dev);
        }
        else {
            s->cpu.release(&s->cpu);
        }
        dfb_err_give(saved);
    }
    return ret;
}

int
dfb_arrow_import_stream_struct(struct ArrowArrayStream *stream,
                               arrow_import *imp)
{
    any_stream s = {.device = 0, .cpu = *stream};
    stream->release = NULL;
    return walk_stream(&s, imp);
}

/* Moves the stream in capsule `cap` (a new reference, released here;
   NULL: the call failed) that __arrow_c_stream__ returned (`device`:
   __arrow_c_device_stream__) into `imp`: its schema and, unless `accept`
   (may be NULL) declines the schema, every chunk.  Returns 0, 1
   (declined), or -1 with an exception set. */
static int
import_stream(PyObject *cap, int device, arrow_import *imp,
              dfb_arrow_accept_fn accept, void *ctx)
{
    const char *name =
        device ? "arrow_device_array_stream" : "arrow_array_stream";
    if (cap == NULL) {
        return -1;
    }
    any_stream s = {.device = device, .accept = accept, .ctx = ctx};
    void *src = dfb_arrow_capsule_pointer(
        cap, name,
        device ? "__arrow_c_device_stream__()" : "__arrow_c_stream__()");
    if (src != NULL) {
        struct ArrowArrayStream *cs = src;
        struct ArrowDeviceArrayStream *ds = src;
        if (device ? ds->release == NULL : cs->release == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "the '%s' capsule holds a released stream (already "
                         "consumed)",
                         name);
            src = NULL;
        }
        else if (device) {
            s.dev = *ds;
            ds->release = NULL;
        }
        else {
            s.cpu = *cs;
            cs->release = NULL;
        }
    }
    Py_DECREF(cap);
    return src == NULL ? -1 : walk_stream(&s, imp);
}

/* Imports obj's __arrow_c_device_array__ (else __arrow_c_device_stream__)
   into `imp`, its device in imp->device.  Returns 0, or -1 with an
   exception set (TypeError when it has neither). */
static int
import_device(PyObject *obj, arrow_import *imp)
{
    PyObject *meth;
    int r = dfb_getattr_optional_str(obj, "__arrow_c_device_array__", &meth);
    int stream = 0;
    if (r == 0) {
        stream = 1;
        r = dfb_getattr_optional_str(obj, "__arrow_c_device_stream__", &meth);
    }
    if (r < 0) {
        return -1;
    }
    if (r == 0) {
        PyErr_Format(PyExc_TypeError,
                     "%.100s object has no __arrow_c_device_array__ or "
                     "__arrow_c_device_stream__",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *res = PyObject_CallNoArgs(meth);
    Py_DECREF(meth);
    return stream ? import_stream(res, 1, imp, NULL, NULL)
                  : import_pair(res, 1, imp);
}

/* The top-level package of the module that defines type `t` ("pyarrow"
   for pyarrow.lib.ArrowInvalid, "builtins"), written into buf (empty when
   it cannot be read).  Leaves no exception.  Cannot fail. */
static void
type_package(PyTypeObject *t, char *buf, size_t size)
{
    buf[0] = '\0';
    PyObject *mod = PyObject_GetAttrString((PyObject *)t, "__module__");
    const char *m =
        mod != NULL && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    if (m != NULL) {
        size_t n = strcspn(m, ".");
        if (n < size) {
            snprintf(buf, size, "%.*s", (int)n, m);
        }
    }
    Py_XDECREF(mod);
    PyErr_Clear(); /* a module that cannot be read: no package */
}

/* Returns 1 if exception `exc` (borrowed) is of a type of one of the peer
   libraries dfbuffer reads (pyarrow, polars, pandas, nanoarrow, DuckDB,
   narwhals), else 0: a producer's own errors pass as they are.  Called
   with no exception pending; leaves none.  Cannot fail. */
static int
peer_error(PyObject *exc)
{
    static const char *const peers[] = {"pyarrow",   "polars", "pandas",
                                        "nanoarrow", "duckdb", "narwhals",
                                        NULL};
    char pkg[32];
    type_package(Py_TYPE(exc), pkg, sizeof(pkg));
    for (int i = 0; peers[i] != NULL; i++) {
        if (strcmp(pkg, peers[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Calls export method `which` of producer `obj` (dfb_probe_call); an error
   of a peer library's type (pyarrow's, when pandas exports a column Arrow
   cannot hold) becomes NotImplementedError naming the producer's library
   and the error, the original as __cause__: no raw error of another
   library reaches dfbuffer's caller.  Returns the new result, or NULL with
   an exception set. */
static PyObject *
call_export(dfb_state *st, PyObject *obj, int which)
{
    PyObject *res = dfb_probe_call(st, obj, which);
    if (res != NULL) {
        return res;
    }
    PyObject *exc = dfb_err_take();
    if (exc == NULL || !peer_error(exc)) {
        dfb_err_give(exc);
        return NULL;
    }
    char pkg[32];
    type_package(Py_TYPE(obj), pkg, sizeof(pkg));
    size_t n = strlen(pkg);
    PyErr_Format(
        PyExc_NotImplementedError, "%s%s Arrow export failed: %.100s: %S",
        n > 0 ? pkg : Py_TYPE(obj)->tp_name,
        n > 0 && pkg[n - 1] == 's' ? "'" : "'s", Py_TYPE(exc)->tp_name, exc);
    dfb_err_raise_from(exc);
    return NULL;
}

int
dfb_arrow_import_stream_capsule(PyObject *cap, arrow_import *imp,
                                dfb_arrow_accept_fn accept, void *ctx)
{
    return import_stream(cap, 0, imp, accept, ctx);
}

/* Refuses the device data of `imp` (dfb_arrow_device_refuse), naming its
   first nested column (a list, struct, map, union: its children's buffers
   cannot be followed on the host) where it has one.  Returns -1 with
   BufferError. */
static int
refuse_device(const arrow_import *imp)
{
    const struct ArrowSchema *s = &imp->schema;
    const struct ArrowSchema *nested = NULL;
    dfb_error err;
    /* the children are followed only when schema and arrays agree (their
       buffers are never read: the data is on the device) */
    const int table =
        dfb_arrow_format_type(s->format) == DFB_T_STRUCT &&
        dfb_arrow_check_table(s, imp->arrays, imp->n, 0, &err) == DFB_OK;
    for (int64_t k = 0; table && k < s->n_children; k++) {
        const struct ArrowSchema *c = s->children[k];
        const struct ArrowSchema *v =
            c != NULL && c->dictionary != NULL ? c->dictionary : c;
        if (v != NULL &&
            dfb_type_is_nested(dfb_arrow_format_type(v->format))) {
            nested = c;
            break;
        }
    }
    const dfb_type top = dfb_arrow_format_type(s->format);
    if (nested == NULL && top != DFB_T_STRUCT && dfb_type_is_nested(top)) {
        nested = s;
    }
    if (nested == NULL) {
        return dfb_arrow_device_refuse(imp->device,
                                       "column_to_ndarray/from_dataframe");
    }
    char what[200];
    const struct ArrowSchema *v =
        nested->dictionary != NULL ? nested->dictionary : nested;
    PyOS_snprintf(what, sizeof(what),
                  "column '%.80s': nested Arrow format '%.40s' cannot be "
                  "read on the host",
                  nested->name != NULL ? nested->name : "", v->format);
    return dfb_arrow_device_refuse(imp->device, what);
}

int
dfb_arrow_import_producer(dfb_state *st, PyObject *obj, arrow_import *imp)
{
    int r;
    imp->st = st;
    imp->device.device_type = kDLCPU;
    imp->device.device_id = 0;
    /* probed on the type (probe.c): no __getattr__ runs for a miss */
    int has = dfb_probe_mask(st, obj, DFB_PB_ARROW_HOST);
    if (has < 0) {
        return -1;
    }
    int has_array = (has & DFB_PB(DFB_PN_ARROW_ARRAY)) != 0;
    int has_stream = !has_array && has != 0;
    if (has_array) {
        r = import_pair(call_export(st, obj, DFB_PN_ARROW_ARRAY), 0, imp);
    }
    else if (has_stream) {
        r = import_stream(call_export(st, obj, DFB_PN_ARROW_STREAM), 0, imp,
                          NULL, NULL);
    }
    else if ((r = dfb_arrow_device_is_producer(obj)) != 0) {
        /* device data: CPU takes the same path as __arrow_c_array__ */
        r = r < 0 ? -1 : import_device(obj, imp);
        if (r == 0 && imp->device.device_type != kDLCPU &&
            !imp->accept_device) {
            r = refuse_device(imp);
        }
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "%.100s object is not an Arrow PyCapsule producer (no "
                     "__arrow_c_array__ or __arrow_c_stream__)",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (r == 0 && imp->schema.format == NULL) {
        PyErr_SetString(PyExc_ValueError, "the Arrow schema has no format");
        return -1;
    }
    return r;
}

int
dfb_arrow_is_producer(PyObject *obj)
{
    int r = dfb_probe_has_str(obj, "__arrow_c_array__");
    if (r != 0) {
        return r;
    }
    r = dfb_probe_has_str(obj, "__arrow_c_stream__");
    if (r != 0) {
        return r;
    }
    return dfb_arrow_device_is_producer(obj);
}

/* ------------------------------------------------------------------ */
/* Columns of an import                                                 */
/* ------------------------------------------------------------------ */

int
dfb_arrow_import_is_table(const arrow_import *imp)
{
    return dfb_arrow_format_type(imp->schema.format) == DFB_T_STRUCT;
}

int
dfb_arrow_validate_table(const arrow_import *imp)
{
    dfb_error err;
    dfb_code rc = dfb_arrow_check_table(&imp->schema, imp->arrays, imp->n,
                                        dfb_arrow_import_on_cpu(imp), &err);
    return rc == DFB_OK ? 0 : dfb_arrow_raise(rc, &err);
}

int
dfb_arrow_import_node(const arrow_import *imp, int is_table, Py_ssize_t b,
                      int64_t c, arrow_node *nd)
{
    const struct ArrowArray *top = imp->arrays[b];
    nd->holder = imp->holders[b];
    holder_settle(nd->holder); /* the array is in: Buffers follow */
    nd->device = imp->device;
    if (dfb_arrow_import_on_cpu(imp)) {
        nd->device.device_type = kDLCPU;
        nd->device.device_id = 0;
    }
    if (!is_table) {
        nd->schema = &imp->schema;
        nd->array = top;
        nd->offset = top->offset;
        nd->length = top->length;
        return 0;
    }
    nd->schema = imp->schema.children[c];
    nd->array = top->children[c];
    nd->length = top->length;
    if (dfb_checked_add(nd->array->offset, top->offset, &nd->offset) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column %lld has a negative or overflowing offset",
                     (long long)c);
        return -1;
    }
    return 0;
}
