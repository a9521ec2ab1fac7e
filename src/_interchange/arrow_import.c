/* dfbuffer: Arrow import: a PyCapsule producer's schema and arrays moved
 * into holders, and validated before any buffer is read.
 *
 * A producer's ArrowArray (from __arrow_c_array__, or each chunk of
 * __arrow_c_stream__; device producers through arrow_device.c) is *moved*
 * into a heap holder (bitwise copy, then the source's release set to NULL,
 * so the producer's capsule destructor no longer releases it).  The holder
 * lives in a PyCapsule named "dfbuffer.arrow_array" whose destructor calls
 * release exactly once; every dfbuffer.Buffer made over one of the array's
 * buffers (at any depth: children and dictionaries are released by the
 * top-level release) holds a strong reference to that capsule.  Every field
 * is validated before any buffer is read: Arrow gives no buffer sizes, so
 * the sizes are computed from length + offset (and the string offsets),
 * and negative or inconsistent fields raise ValueError.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/arrow_device.h"
#include "dfbuffer/arrow_internal.h"
#include "dfbuffer/probe.h"
#include "dfbuffer/convert.h"
#include "format.h"
#include "offsets.h"
#include "dfbuffer/frame.h"
#include "dfbuffer/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HOLDER_NAME "dfbuffer.arrow_array"

/* ------------------------------------------------------------------ */
/* The holder of one imported ArrowArray                                */
/* ------------------------------------------------------------------ */

typedef struct {
    struct ArrowArray array; /* moved in; release == NULL until then */
} arrow_holder;

/* Capsule destructor: releases the held ArrowArray (once) and frees the
   holder.  Keeps any pending exception. */
static void
holder_destructor(PyObject *cap)
{
    PyObject *exc = dfb_err_take();
    arrow_holder *h = PyCapsule_GetPointer(cap, HOLDER_NAME);
    if (h != NULL) {
        if (h->array.release != NULL) {
            h->array.release(&h->array);
            h->array.release = NULL;
        }
        PyMem_RawFree(h);
    }
    else {
        PyErr_Clear();
    }
    dfb_err_give(exc);
}

/* Returns a new holder capsule (holder in *out, its array marked released),
   or NULL with MemoryError set. */
static PyObject *
holder_new(arrow_holder **out)
{
    arrow_holder *h = PyMem_RawCalloc(1, sizeof(*h));
    if (h == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject *cap = PyCapsule_New(h, HOLDER_NAME, holder_destructor);
    if (cap == NULL) {
        PyMem_RawFree(h);
        return NULL;
    }
    *out = h;
    return cap;
}

/* ------------------------------------------------------------------ */
/* Import: producer -> schema + holders                                 */
/* ------------------------------------------------------------------ */

/* Releases everything `imp` holds (arrays live on in any Buffer made over
   them).  Cannot fail. */
void
dfb_arrow_import_clear(arrow_import *imp)
{
    /* release callbacks may run Python code: keep a pending exception */
    PyObject *exc = dfb_err_take();
    for (Py_ssize_t i = 0; i < imp->n; i++) {
        Py_DECREF(imp->holders[i]);
    }
    PyMem_Free(imp->holders);
    PyMem_Free(imp->arrays);
    if (imp->schema.release != NULL) {
        imp->schema.release(&imp->schema);
    }
    memset(imp, 0, sizeof(*imp));
    dfb_err_give(exc);
}

/* Appends a new holder.  Returns its (released) array to be filled, or
   NULL with MemoryError. */
struct ArrowArray *
dfb_arrow_import_add(arrow_import *imp)
{
    if (imp->n == imp->cap) {
        Py_ssize_t cap = imp->cap ? 2 * imp->cap : 4;
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
    PyObject *cap = holder_new(&holder);
    if (cap == NULL) {
        return NULL;
    }
    imp->holders[imp->n] = cap;
    imp->arrays[imp->n] = &holder->array;
    imp->n++;
    return &holder->array;
}

/* import_add as a dfb_arrow_slot_fn for arrow_device.c.  Returns the
   slot or NULL with MemoryError. */
static struct ArrowArray *
import_slot(void *imp)
{
    return dfb_arrow_import_add(imp);
}

/* Moves the (schema, array) capsules of obj.__arrow_c_array__() into
   `imp`.  Returns 0, or -1 with TypeError (wrong result or capsule names),
   ValueError (already released) set. */
static int
import_array_capsules(dfb_state *st, PyObject *obj, arrow_import *imp)
{
    PyObject *res = PyObject_CallMethodNoArgs(obj, st->str.arrow_c_array);
    if (res == NULL) {
        return -1;
    }
    int ret = -1;
    if (dfb_arrow_check_pair(res, "__arrow_c_array__", "array capsule") < 0) {
        goto done;
    }
    PyObject *sc = PyTuple_GET_ITEM(res, 0), *ac = PyTuple_GET_ITEM(res, 1);
    if (PyCapsule_IsValid(sc, "arrow_array") &&
        PyCapsule_IsValid(ac, "arrow_schema")) {
        PyErr_SetString(PyExc_TypeError,
                        "__arrow_c_array__ returned its capsules in the wrong "
                        "order: (array, schema) instead of (schema, array)");
        goto done;
    }
    struct ArrowSchema *s = dfb_arrow_capsule_pointer(
        sc, "arrow_schema", "__arrow_c_array__()[0]");
    if (s == NULL) {
        goto done;
    }
    struct ArrowArray *a =
        dfb_arrow_capsule_pointer(ac, "arrow_array", "__arrow_c_array__()[1]");
    if (a == NULL) {
        goto done;
    }
    if (s->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the 'arrow_schema' capsule holds a released schema "
                        "(already consumed)");
        goto done;
    }
    if (a->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the 'arrow_array' capsule holds a released array "
                        "(already consumed)");
        goto done;
    }
    struct ArrowArray *dst = dfb_arrow_import_add(imp);
    if (dst == NULL) {
        goto done;
    }
    imp->schema = *s;
    s->release = NULL;
    *dst = *a;
    a->release = NULL;
    ret = 0;
done:
    Py_DECREF(res);
    return ret;
}

/* dfb_arrow_stream_failed with the stream's own last error message.
   Always returns -1. */
static int
stream_error(struct ArrowArrayStream *stream, int rc, const char *what)
{
    const char *msg = NULL;
    if (stream->get_last_error != NULL) {
        msg = stream->get_last_error(stream);
    }
    return dfb_arrow_stream_failed("Arrow stream", what, rc, msg);
}

/* Moves every chunk of `stream` (a live stream moved in by the caller; the
   schema and chunks go into `imp`, zeroed by the caller) and releases the
   stream.  Returns 0, or -1 with an exception set (clear `imp` either
   way). */
int
dfb_arrow_import_stream_struct(struct ArrowArrayStream *stream,
                               arrow_import *imp)
{
    int ret = -1;
    if (stream->get_schema == NULL || stream->get_next == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the Arrow stream has no get_schema/get_next");
        goto done;
    }
    int rc = stream->get_schema(stream, &imp->schema);
    if (rc != 0) {
        stream_error(stream, rc, "get_schema");
        goto done;
    }
    if (imp->schema.release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the Arrow stream gave a released schema");
        goto done;
    }
    for (;;) {
        /* on the stack first: the end-of-stream marker needs no holder */
        struct ArrowArray next;
        memset(&next, 0, sizeof(next));
        rc = stream->get_next(stream, &next);
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
            stream_error(stream, rc, "get_next");
            goto done;
        }
        if (next.release == NULL) {
            break; /* end of stream */
        }
    }
    ret = 0;
done:
    {
        PyObject *saved = dfb_err_take();
        stream->release(stream);
        dfb_err_give(saved);
    }
    return ret;
}

/* Moves the stream of obj.__arrow_c_stream__() into `imp`: its schema and
   every chunk.  Returns 0, or -1 with an exception set. */
static int
import_stream(dfb_state *st, PyObject *obj, arrow_import *imp)
{
    PyObject *cap = PyObject_CallMethodNoArgs(obj, st->str.arrow_c_stream);
    if (cap == NULL) {
        return -1;
    }
    struct ArrowArrayStream *src = dfb_arrow_capsule_pointer(
        cap, "arrow_array_stream", "__arrow_c_stream__()");
    if (src == NULL) {
        Py_DECREF(cap);
        return -1;
    }
    if (src->release == NULL) {
        Py_DECREF(cap);
        PyErr_SetString(PyExc_ValueError,
                        "the 'arrow_array_stream' capsule holds a released "
                        "stream (already consumed)");
        return -1;
    }
    struct ArrowArrayStream stream = *src;
    src->release = NULL;
    Py_DECREF(cap);
    return dfb_arrow_import_stream_struct(&stream, imp);
}

/* Imports `obj` (preferring __arrow_c_array__, else __arrow_c_stream__)
   into `imp` (zeroed by the caller; clear it with import_clear even on
   failure).  Returns 0 with a schema that has a format, or -1 with
   TypeError when obj is no producer, ValueError when the schema has no
   format, or the import's own error. */
int
dfb_arrow_import_producer(dfb_state *st, PyObject *obj, arrow_import *imp)
{
    int r;
    imp->device.device_type = kDLCPU;
    imp->device.device_id = 0;
    /* probed on the type (probe.c): no __getattr__ runs for a miss */
    int has_array = dfb_probe(st, obj, DFB_PN_ARROW_ARRAY);
    int has_stream = has_array ? 0 : dfb_probe(st, obj, DFB_PN_ARROW_STREAM);
    if (has_array < 0 || has_stream < 0) {
        return -1;
    }
    if (has_array) {
        r = import_array_capsules(st, obj, imp);
    }
    else if (has_stream) {
        r = import_stream(st, obj, imp);
    }
    else if ((r = dfb_arrow_device_is_producer(obj)) != 0) {
        /* device data: CPU takes the same path as __arrow_c_array__ */
        r = r < 0 ? -1
                  : dfb_arrow_device_import(obj, &imp->schema, import_slot,
                                            imp, &imp->device);
        if (r == 0 && imp->device.device_type != kDLCPU &&
            !imp->accept_device) {
            r = dfb_arrow_device_refuse(imp->device,
                                        "column_to_ndarray/from_dataframe");
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

/* Returns 1 if the import's top level is a struct ("+s"): a table whose
   children are the columns. */
int
dfb_arrow_import_is_table(const arrow_import *imp)
{
    return imp->schema.format != NULL && strcmp(imp->schema.format, "+s") == 0;
}

/* Number of buffers a format has (string view: at least this many), or -1
   for formats without a fixed count here. */
int64_t
dfb_arrow_expected_buffers(const dfb_format *f)
{
    switch (f->type) {
        case DFB_T_NULL:
            return 0;
        case DFB_T_UTF8:
        case DFB_T_LARGE_UTF8:
        case DFB_T_BINARY:
        case DFB_T_LARGE_BINARY:
        case DFB_T_STRING_VIEW:
            return 3;
        default:
            return 2;
    }
}

/* Returns 1 if `bytes` bytes from `p` would wrap the address space. */
int
dfb_arrow_wraps(const void *p, int64_t bytes)
{
    return p != NULL && (uintptr_t)p > UINTPTR_MAX - (uint64_t)bytes;
}

/* Checks, before any buffer of the node is read, that every buffer size the
   node implies (validity bitmap, values, offsets, views, and those of its
   dictionary) is computable without overflow and that no buffer would wrap
   the address space.  Only that: other malformations are left to
   dfb_arrow_describe_node, which reports them before it reads anything.
   Returns 1 when the sizes were verified, 0 when the node has no buffers or
   cannot be checked here (unsupported format, bad buffer list), or -1 with
   ValueError set. */
int
dfb_arrow_check_node_sizes(const struct ArrowSchema *s,
                           const struct ArrowArray *a, int64_t offset,
                           int64_t length, const char *name, int depth)
{
    int64_t end, need = 0;
    dfb_format f;
    if (s == NULL || a == NULL || s->format == NULL ||
        dfb_arrow_add_nonneg(offset, length, &end) < 0 || a->n_buffers < 0 ||
        (a->n_buffers > 0 && a->buffers == NULL) ||
        dfb_format_parse_arrow(s->format, &f) < 0) {
        return 0;
    }
    int64_t nbuf = dfb_arrow_expected_buffers(&f);
    if (f.type == DFB_T_STRING_VIEW ? a->n_buffers < nbuf
                                    : a->n_buffers != nbuf) {
        return 0;
    }
    const int64_t vbytes = end / 8 + (end % 8 != 0);
    switch (f.type) {
        case DFB_T_NULL:
            return 0; /* no buffers */
        case DFB_T_BOOL_BIT:
            need = vbytes;
            break;
        case DFB_T_UTF8:
        case DFB_T_BINARY:
        case DFB_T_LARGE_UTF8:
        case DFB_T_LARGE_BINARY: {
            int w = (f.type == DFB_T_UTF8 || f.type == DFB_T_BINARY) ? 4 : 8;
            if (end == INT64_MAX ||
                dfb_arrow_mul_nonneg(end + 1, w, &need) < 0) {
                goto overflow;
            }
            break;
        }
        case DFB_T_STRING_VIEW:
            if (dfb_arrow_mul_nonneg(end, 16, &need) < 0) {
                goto overflow;
            }
            break;
        default: {
            int isz = dfb_format_itemsize(&f);
            if (isz <= 0) {
                return 0;
            }
            if (dfb_arrow_mul_nonneg(end, isz, &need) < 0) {
                goto overflow;
            }
        }
    }
    if (dfb_arrow_wraps(a->buffers[0], vbytes) ||
        dfb_arrow_wraps(a->buffers[1], need)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a buffer of offset + length %lld reaches "
                     "beyond the address space",
                     name, (long long)end);
        return -1;
    }
    if (depth == 0 && s->dictionary != NULL && a->dictionary != NULL &&
        dfb_arrow_check_node_sizes(s->dictionary, a->dictionary,
                                   a->dictionary->offset,
                                   a->dictionary->length, name, 1) < 0) {
        return -1;
    }
    return 1;
overflow:
    PyErr_Format(PyExc_ValueError,
                 "column '%s': the buffer size for offset + length %lld "
                 "overflows",
                 name, (long long)end);
    return -1;
}

/* Validates the top-level struct schema and arrays of a table import.
   Returns 0, or -1 with ValueError / NotImplementedError set. */
int
dfb_arrow_validate_table(const arrow_import *imp)
{
    const struct ArrowSchema *s = &imp->schema;
    if (dfb_arrow_check_struct_schema(s) < 0) {
        return -1;
    }
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        const struct ArrowArray *a = imp->arrays[b];
        int64_t end;
        if (a->length < 0 || a->offset < 0 ||
            dfb_arrow_add_nonneg(a->offset, a->length, &end) < 0) {
            PyErr_Format(PyExc_ValueError,
                         "struct array with negative or overflowing length "
                         "%lld / offset %lld",
                         (long long)a->length, (long long)a->offset);
            return -1;
        }
        if (dfb_arrow_check_struct_children(s, a) < 0) {
            return -1;
        }
        if (a->n_buffers != 1 || a->buffers == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "struct array must have 1 buffer, got %lld",
                         (long long)a->n_buffers);
            return -1;
        }
        /* the children (their sizes included) before the struct's own
           bitmap is read: a length no child can have is a lie whose bitmap
           must not be scanned, and a length no child vouches for (no
           child with buffers whose sizes could be checked) is not scanned
           either */
        int verified = 0;
        for (int64_t c = 0; c < a->n_children; c++) {
            const struct ArrowArray *ch = a->children[c];
            if (ch == NULL) {
                PyErr_Format(PyExc_ValueError, "struct child %lld is NULL",
                             (long long)c);
                return -1;
            }
            if (ch->length < end) {
                PyErr_Format(PyExc_ValueError,
                             "struct child %lld has length %lld, fewer than "
                             "the struct's offset + length %lld",
                             (long long)c, (long long)ch->length,
                             (long long)end);
                return -1;
            }
            int64_t choff;
            if (dfb_arrow_add_nonneg(ch->offset, a->offset, &choff) < 0) {
                continue; /* import_node reports it */
            }
            const char *nm = s->children[c]->name;
            int r = dfb_arrow_check_node_sizes(s->children[c], ch, choff,
                                               a->length, nm ? nm : "", 0);
            if (r < 0) {
                return -1;
            }
            verified |= r;
        }
        int64_t nulls = a->null_count;
        if (a->buffers[0] != NULL && nulls < 0 && !verified) {
            nulls = 0; /* unknown and uncheckable: no column is convertible */
        }
        else if (a->buffers[0] != NULL && nulls != 0) {
            if (dfb_arrow_wraps(a->buffers[0], end / 8 + (end % 8 != 0))) {
                PyErr_SetString(PyExc_ValueError,
                                "the struct's validity bitmap reaches beyond "
                                "the address space");
                return -1;
            }
            nulls =
                dfb_bitmap_count_zeros(a->buffers[0], a->offset, a->length);
        }
        else if (a->buffers[0] == NULL && nulls > 0) {
            PyErr_SetString(PyExc_ValueError,
                            "struct array has nulls but no validity bitmap");
            return -1;
        }
        if (nulls > 0) {
            PyErr_SetString(PyExc_NotImplementedError,
                            "top-level struct arrays with null rows are not "
                            "supported as tables");
            return -1;
        }
    }
    return 0;
}

/* Fills `nd` for column `c` of chunk `b` (the top array itself when not a
   table).  Returns 0, or -1 with ValueError (overflowing offsets). */
int
dfb_arrow_import_node(const arrow_import *imp, int is_table, Py_ssize_t b,
                      int64_t c, arrow_node *nd)
{
    const struct ArrowArray *top = imp->arrays[b];
    nd->holder = imp->holders[b];
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
    if (dfb_arrow_add_nonneg(nd->array->offset, top->offset, &nd->offset) <
        0) {
        PyErr_Format(PyExc_ValueError,
                     "column %lld has a negative or overflowing offset",
                     (long long)c);
        return -1;
    }
    return 0;
}
