/* dfbuffer: the Arrow C data interface and the PyCapsule interface, both
 * ways.
 *
 * Import.  A producer's ArrowArray (from __arrow_c_array__, or each chunk of
 * __arrow_c_stream__) is *moved* into a heap holder (bitwise copy, then the
 * source's release set to NULL, so the producer's capsule destructor no
 * longer releases it).  The holder lives in a PyCapsule named
 * "dfbuffer.arrow_array" whose destructor calls release exactly once; every
 * dfbuffer.Buffer made over one of the array's buffers (at any depth:
 * children and dictionaries are released by the top-level release) holds a
 * strong reference to that capsule.  Every field is validated before any
 * buffer is read: Arrow gives no buffer sizes, so the sizes are computed
 * from length + offset (and the string offsets), and negative or
 * inconsistent fields raise ValueError.
 *
 * Export.  Buffer.__arrow_c_schema__ / __arrow_c_array__ describe a 1-D
 * contiguous host buffer of a primitive type without copying; the exported
 * ArrowArray's private data holds a strong reference to the Buffer.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/arrow_device.h"
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
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

/* Returns a+b in *out and 0, or -1 (no exception) on overflow or when
   either is negative. */
static int
add_nonneg(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || __builtin_add_overflow(a, b, out)) {
        return -1;
    }
    return 0;
}

/* Returns a*b in *out and 0, or -1 (no exception) on overflow. */
static int
mul_nonneg(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, out) ||
        *out > PY_SSIZE_T_MAX) {
        return -1;
    }
    return 0;
}

/* Returns bit `i` (LSB first) of `bits`. */
static inline int
get_bit(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

/* Counts the zero bits among `length` bits from bit `offset`.  Cannot
   fail. */
static int64_t
count_zero_bits(const uint8_t *bits, int64_t offset, int64_t length)
{
    int64_t ones = 0, i = offset, end = offset + length;
    while (i < end && (i & 7)) {
        ones += get_bit(bits, i++);
    }
    while (end - i >= 64) {
        uint64_t w;
        memcpy(&w, bits + (i >> 3), 8);
        ones += __builtin_popcountll(w);
        i += 64;
    }
    while (i < end) {
        ones += get_bit(bits, i++);
    }
    return length - ones;
}

/* A growable array of strong references (the Buffers and arrays a
   conversion made). */
typedef struct {
    PyObject **items;
    Py_ssize_t n, cap;
} ref_list;

/* Appends `o` (stolen, may not be NULL).  Returns 0, or -1 with MemoryError
   (`o` is released). */
static int
refs_add(ref_list *r, PyObject *o)
{
    if (r->n == r->cap) {
        Py_ssize_t cap = r->cap ? 2 * r->cap : 16;
        PyObject **items = PyMem_Realloc(r->items, cap * sizeof(PyObject *));
        if (items == NULL) {
            Py_DECREF(o);
            PyErr_NoMemory();
            return -1;
        }
        r->items = items;
        r->cap = cap;
    }
    r->items[r->n++] = o;
    return 0;
}

/* Drops every reference and frees the storage.  Cannot fail. */
static void
refs_clear(ref_list *r)
{
    for (Py_ssize_t i = 0; i < r->n; i++) {
        Py_DECREF(r->items[i]);
    }
    PyMem_Free(r->items);
    r->items = NULL;
    r->n = r->cap = 0;
}

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

typedef struct {
    struct ArrowSchema schema;  /* moved in; released by import_clear */
    Py_ssize_t n, cap;          /* number of chunks (top-level arrays) */
    PyObject **holders;         /* strong: holder capsules */
    struct ArrowArray **arrays; /* arrays[i] lives in holders[i] */
    DLDevice device;            /* of the chunks (device producers) */
    int accept_device;          /* set by callers that handle non-CPU data
                                   (else import_producer refuses it) */
} arrow_import;

/* Releases everything `imp` holds (arrays live on in any Buffer made over
   them).  Cannot fail. */
static void
import_clear(arrow_import *imp)
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
static struct ArrowArray *
import_add(arrow_import *imp)
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
    return import_add(imp);
}

/* Returns the pointer of capsule `cap` named `name`, or NULL with
   TypeError (not a capsule, or another name).  `what` names the source in
   the message. */
void *
dfb_arrow_capsule_pointer(PyObject *cap, const char *name, const char *what)
{
    if (!PyCapsule_CheckExact(cap)) {
        PyErr_Format(PyExc_TypeError,
                     "%s must give a PyCapsule named '%s', got %.100s", what,
                     name, Py_TYPE(cap)->tp_name);
        return NULL;
    }
    const char *got = PyCapsule_GetName(cap);
    if (got == NULL && PyErr_Occurred()) {
        return NULL;
    }
    if (got == NULL || strcmp(got, name) != 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s must give a PyCapsule named '%s', got one named "
                     "'%s'",
                     what, name, got ? got : "(null)");
        return NULL;
    }
    return PyCapsule_GetPointer(cap, name);
}

/* Moves the (schema, array) capsules of obj.__arrow_c_array__() into
   `imp`.  Returns 0, or -1 with TypeError (wrong result or capsule names),
   ValueError (already released) set. */
static int
import_array_capsules(dfb_state *st, PyObject *obj, arrow_import *imp)
{
    PyObject *res =
        PyObject_CallMethodNoArgs(obj, st->probe_names[DFB_PN_ARROW_ARRAY]);
    if (res == NULL) {
        return -1;
    }
    int ret = -1;
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "__arrow_c_array__ must return a tuple (schema capsule, "
                     "array capsule), got %.100s",
                     Py_TYPE(res)->tp_name);
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
    struct ArrowArray *dst = import_add(imp);
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

/* Sets the exception for a failed stream callback with errno `rc`
   (EINVAL -> ValueError, ENOMEM -> MemoryError, ENOSYS ->
   NotImplementedError, else OSError).  Always returns -1. */
int
dfb_arrow_stream_failed(const char *kind, const char *what, int rc,
                        const char *msg)
{
    PyObject *exc = rc == EINVAL   ? PyExc_ValueError
                    : rc == ENOMEM ? PyExc_MemoryError
                    : rc == ENOSYS ? PyExc_NotImplementedError
                                   : PyExc_OSError;
    PyErr_Format(exc, "%s %s failed (error %d): %s", kind, what, rc,
                 msg ? msg : "no message");
    return -1;
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
static int
import_stream_struct(struct ArrowArrayStream *stream, arrow_import *imp)
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
        struct ArrowArray *dst = import_add(imp);
        if (dst == NULL) {
            goto done;
        }
        rc = stream->get_next(stream, dst);
        if (rc != 0) {
            stream_error(stream, rc, "get_next");
            goto done;
        }
        if (dst->release == NULL) {
            /* end of stream: drop the unused holder */
            imp->n--;
            Py_DECREF(imp->holders[imp->n]);
            break;
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
    PyObject *cap =
        PyObject_CallMethodNoArgs(obj, st->probe_names[DFB_PN_ARROW_STREAM]);
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
    return import_stream_struct(&stream, imp);
}

/* Imports `obj` (preferring __arrow_c_array__, else __arrow_c_stream__)
   into `imp` (zeroed by the caller; clear it with import_clear even on
   failure).  Returns 0 with a schema that has a format, or -1 with
   TypeError when obj is no producer, ValueError when the schema has no
   format, or the import's own error. */
static int
import_producer(dfb_state *st, PyObject *obj, arrow_import *imp)
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

/* One column chunk: a schema + array, with the element range it covers. */
typedef struct {
    const struct ArrowSchema *schema;
    const struct ArrowArray *array;
    int64_t offset; /* elements, into every buffer of `array` */
    int64_t length;
    PyObject *holder; /* borrowed: the capsule owning the top array */
} arrow_node;

/* Returns 1 if the import's top level is a struct ("+s"): a table whose
   children are the columns. */
static int
import_is_table(const arrow_import *imp)
{
    return imp->schema.format != NULL && strcmp(imp->schema.format, "+s") == 0;
}

/* Number of buffers a format has (string view: at least this many), or -1
   for formats without a fixed count here. */
static int64_t
expected_buffers(const dfb_format *f)
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
static int
wraps(const void *p, int64_t bytes)
{
    return p != NULL && (uintptr_t)p > UINTPTR_MAX - (uint64_t)bytes;
}

/* Checks, before any buffer of the node is read, that every buffer size the
   node implies (validity bitmap, values, offsets, views, and those of its
   dictionary) is computable without overflow and that no buffer would wrap
   the address space.  Only that: other malformations are left to
   describe_node, which reports them before it reads anything.  Returns 1
   when the sizes were verified, 0 when the node has no buffers or cannot be
   checked here (unsupported format, bad buffer list), or -1 with
   ValueError set. */
static int
check_node_sizes(const struct ArrowSchema *s, const struct ArrowArray *a,
                 int64_t offset, int64_t length, const char *name, int depth)
{
    int64_t end, need = 0;
    dfb_format f;
    if (s == NULL || a == NULL || s->format == NULL ||
        add_nonneg(offset, length, &end) < 0 || a->n_buffers < 0 ||
        (a->n_buffers > 0 && a->buffers == NULL) ||
        dfb_format_parse_arrow(s->format, &f) < 0) {
        return 0;
    }
    int64_t nbuf = expected_buffers(&f);
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
            if (end == INT64_MAX || mul_nonneg(end + 1, w, &need) < 0) {
                goto overflow;
            }
            break;
        }
        case DFB_T_STRING_VIEW:
            if (mul_nonneg(end, 16, &need) < 0) {
                goto overflow;
            }
            break;
        default: {
            int isz = dfb_format_itemsize(&f);
            if (isz <= 0) {
                return 0;
            }
            if (mul_nonneg(end, isz, &need) < 0) {
                goto overflow;
            }
        }
    }
    if (wraps(a->buffers[0], vbytes) || wraps(a->buffers[1], need)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a buffer of offset + length %lld reaches "
                     "beyond the address space",
                     name, (long long)end);
        return -1;
    }
    if (depth == 0 && s->dictionary != NULL && a->dictionary != NULL &&
        check_node_sizes(s->dictionary, a->dictionary, a->dictionary->offset,
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
static int
validate_table(const arrow_import *imp)
{
    const struct ArrowSchema *s = &imp->schema;
    if (s->n_children < 0 || (s->n_children > 0 && s->children == NULL)) {
        PyErr_SetString(PyExc_ValueError,
                        "struct schema with a bad children list");
        return -1;
    }
    for (int64_t c = 0; c < s->n_children; c++) {
        if (s->children[c] == NULL || s->children[c]->format == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "struct schema child %lld is NULL or has no format",
                         (long long)c);
            return -1;
        }
    }
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        const struct ArrowArray *a = imp->arrays[b];
        int64_t end;
        if (a->length < 0 || a->offset < 0 ||
            add_nonneg(a->offset, a->length, &end) < 0) {
            PyErr_Format(PyExc_ValueError,
                         "struct array with negative or overflowing length "
                         "%lld / offset %lld",
                         (long long)a->length, (long long)a->offset);
            return -1;
        }
        if (a->n_children != s->n_children ||
            (a->n_children > 0 && a->children == NULL)) {
            PyErr_Format(PyExc_ValueError,
                         "struct array has %lld children, its schema %lld",
                         (long long)a->n_children, (long long)s->n_children);
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
            if (add_nonneg(ch->offset, a->offset, &choff) < 0) {
                continue; /* import_node reports it */
            }
            const char *nm = s->children[c]->name;
            int r = check_node_sizes(s->children[c], ch, choff, a->length,
                                     nm ? nm : "", 0);
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
            if (wraps(a->buffers[0], end / 8 + (end % 8 != 0))) {
                PyErr_SetString(PyExc_ValueError,
                                "the struct's validity bitmap reaches beyond "
                                "the address space");
                return -1;
            }
            nulls = count_zero_bits(a->buffers[0], a->offset, a->length);
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
static int
import_node(const arrow_import *imp, int is_table, Py_ssize_t b, int64_t c,
            arrow_node *nd)
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
    if (add_nonneg(nd->array->offset, top->offset, &nd->offset) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column %lld has a negative or overflowing offset",
                     (long long)c);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Describing one column chunk as a dfb_column                          */
/* ------------------------------------------------------------------ */

/* Returns a new reference to the NumPy dtype of a fixed-width format's
   stored values (bitmaps and bytes: uint8), or NULL with an exception. */
static PyArray_Descr *
descr_for(const dfb_format *f)
{
    char ts[32];
    dfb_format g = *f;
    g.byteorder = '=';
    if (dfb_format_numpy_typestr(&g, ts, sizeof(ts)) < 0) {
        return PyArray_DescrFromType(NPY_UINT8); /* bits, bytes */
    }
    return dfb_descr_from_typestr(ts);
}

/* Makes a read-only 1-D Buffer of `descr` (stolen; NULL means an error is
   set) over [ptr, ptr + size) owned by `owner`, keeps it in `refs` and
   fills `span`.  Returns 0, or -1 with an exception set. */
static int
make_span(dfb_state *st, dfb_span *span, const void *ptr, int64_t size,
          PyArray_Descr *descr, PyObject *owner, int native, ref_list *refs)
{
    if (descr == NULL) {
        return -1;
    }
    DLDevice cpu = {kDLCPU, 0};
    PyObject *b = dfb_buffer_new(st, (char *)ptr, (Py_ssize_t)size, owner,
                                 descr, 1, NULL, NULL, cpu, 1, native);
    Py_DECREF(descr);
    if (b == NULL || refs_add(refs, b) < 0) {
        return -1;
    }
    span->ptr = ptr;
    span->size = size;
    span->owner = b;
    return 0;
}

/* Returns a new 1-D NumPy array of `n` elements of type `typenum`, kept in
   `refs` (borrowed result), or NULL with an exception. */
static PyArrayObject *
new_array(int typenum, int64_t n, ref_list *refs)
{
    npy_intp dims[1] = {(npy_intp)n};
    PyObject *arr = PyArray_SimpleNew(1, dims, typenum);
    if (arr == NULL || refs_add(refs, arr) < 0) {
        return NULL;
    }
    return (PyArrayObject *)arr;
}

/* Reads the variadic buffer sizes of string-view chunk `a` once (any
   alignment) into a new int64 array kept in `refs`, followed by the
   buffer pointers (as int64, same array), and checks them: >= 0, a
   non-empty buffer not NULL, the views present when `length` > 0.  Sets
   *n_var, *sizes and *bufs (NULL when there are no variadic buffers).
   Returns 0, or -1 with ValueError / MemoryError set. */
static int
read_view_buffers(const struct ArrowArray *a, int64_t length, ref_list *refs,
                  int64_t *n_var_out, const int64_t **sizes_out,
                  const char *const **bufs_out)
{
    int64_t n_var = a->n_buffers - 3;
    const uint8_t *views = a->buffers[1];
    const char *sizes_p = a->buffers[a->n_buffers - 1];
    int64_t *sizes = NULL;
    const char **bufs = NULL;
    if (length > 0 && views == NULL) {
        PyErr_SetString(PyExc_ValueError, "string view array without views");
        return -1;
    }
    if (n_var > 0 && sizes_p == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "string view array without its buffer sizes");
        return -1;
    }
    if (n_var > 0) {
        if ((size_t)n_var > PY_SSIZE_T_MAX / (2 * sizeof(int64_t))) {
            PyErr_NoMemory();
            return -1;
        }
        PyArrayObject *sz = new_array(NPY_INT64, 2 * n_var, refs);
        if (sz == NULL) {
            return -1;
        }
        sizes = PyArray_DATA(sz);
        memcpy(sizes, sizes_p, (size_t)n_var * sizeof(int64_t));
        bufs = (const char **)(sizes + n_var);
        for (int64_t k = 0; k < n_var; k++) {
            bufs[k] = a->buffers[2 + k];
        }
    }
    for (int64_t k = 0; k < n_var; k++) {
        if (sizes[k] < 0 || (sizes[k] > 0 && bufs[k] == NULL)) {
            PyErr_Format(PyExc_ValueError,
                         "string view data buffer %lld: bad size %lld or "
                         "NULL pointer",
                         (long long)k, (long long)sizes[k]);
            return -1;
        }
    }
    *n_var_out = n_var;
    *sizes_out = sizes;
    *bufs_out = bufs;
    return 0;
}

/* Decodes a string-view ("vu") chunk into large-utf8 (int64 offsets +
   bytes) in new memory, with a realigned validity copy: col->offset
   becomes 0 (the chunk dicts of to_interchange need offsets).
   `validity` is the Arrow bitmap (NULL when no nulls).  Validates every
   view against its data buffer.  Returns 0, or -1 with ValueError /
   MemoryError set. */
static int
views_to_large_utf8(dfb_state *st, const struct ArrowArray *a, int64_t offset,
                    int64_t length, const uint8_t *validity, dfb_column *col,
                    ref_list *refs)
{
    const uint8_t *views = a->buffers[1];
    int64_t n_var;
    const int64_t *sizes;
    const char *const *bufs;
    if (read_view_buffers(a, length, refs, &n_var, &sizes, &bufs) < 0) {
        return -1;
    }
    int64_t total = 0;
    for (int64_t i = 0; i < length; i++) {
        int64_t j = offset + i;
        if (validity != NULL && !get_bit(validity, j)) {
            continue;
        }
        const uint8_t *v = views + 16 * j;
        int32_t len, idx, off;
        memcpy(&len, v, 4);
        if (len < 0) {
            PyErr_Format(PyExc_ValueError,
                         "string view %lld has negative length %d",
                         (long long)j, (int)len);
            return -1;
        }
        if (len > 12) {
            memcpy(&idx, v + 8, 4);
            memcpy(&off, v + 12, 4);
            if (idx < 0 || idx >= n_var || off < 0 ||
                (int64_t)off + len > sizes[idx]) {
                PyErr_Format(PyExc_ValueError,
                             "string view %lld points outside its data "
                             "buffers (buffer %d, offset %d, length %d)",
                             (long long)j, (int)idx, (int)off, (int)len);
                return -1;
            }
        }
        if (total > PY_SSIZE_T_MAX - len) {
            PyErr_SetString(PyExc_ValueError,
                            "string views: the total length overflows");
            return -1;
        }
        total += len;
    }
    PyArrayObject *offs = new_array(NPY_INT64, length + 1, refs);
    if (offs == NULL) {
        return -1;
    }
    PyArrayObject *data = new_array(NPY_UINT8, total, refs);
    if (data == NULL) {
        return -1;
    }
    int64_t *o = PyArray_DATA(offs);
    uint8_t *d = PyArray_DATA(data);
    int64_t pos = 0;
    o[0] = 0;
    for (int64_t i = 0; i < length; i++) {
        int64_t j = offset + i;
        if (validity == NULL || get_bit(validity, j)) {
            /* read again: check again (the memory may have changed since
               the first pass; never write past `total` or read outside a
               data buffer) */
            const uint8_t *v = views + 16 * j;
            int32_t len, idx, off;
            memcpy(&len, v, 4);
            if (len < 0 || len > total - pos) {
                goto changed;
            }
            if (len <= 12) {
                memcpy(d + pos, v + 4, len);
            }
            else {
                memcpy(&idx, v + 8, 4);
                memcpy(&off, v + 12, 4);
                if (idx < 0 || idx >= n_var || off < 0 ||
                    (int64_t)off + len > sizes[idx]) {
                    goto changed;
                }
                memcpy(d + pos, bufs[idx] + off, len);
            }
            pos += len;
        }
        o[i + 1] = pos;
    }
    col->fmt.type = DFB_T_LARGE_UTF8;
    col->fmt.bits = 8;
    col->offset = 0;
    PyArray_Descr *i8 = PyArray_DescrFromType(NPY_INT64);
    if (make_span(st, &col->offsets, o, 8 * (length + 1), i8, (PyObject *)offs,
                  DFB_NATIVE_NUMPY, refs) < 0 ||
        make_span(st, &col->data, d, total, PyArray_DescrFromType(NPY_UINT8),
                  (PyObject *)data, DFB_NATIVE_NUMPY, refs) < 0) {
        return -1;
    }
    if (validity != NULL) {
        int64_t nbytes = length / 8 + (length % 8 != 0);
        PyArrayObject *bm = new_array(NPY_UINT8, nbytes, refs);
        if (bm == NULL) {
            return -1;
        }
        uint8_t *out = PyArray_DATA(bm);
        memset(out, 0, nbytes);
        for (int64_t i = 0; i < length; i++) {
            out[i >> 3] |= (uint8_t)(get_bit(validity, offset + i) << (i & 7));
        }
        if (make_span(st, &col->validity, out, nbytes,
                      PyArray_DescrFromType(NPY_UINT8), (PyObject *)bm,
                      DFB_NATIVE_NUMPY, refs) < 0) {
            return -1;
        }
    }
    return 0;
changed:
    PyErr_SetString(PyExc_ValueError,
                    "string views changed while they were converted");
    return -1;
}

/* Validates string offsets [offset, offset + length] (int32 or int64):
   non-negative and non-decreasing.  Stores the last one in *end.  Returns
   0, or -1 with ValueError. */
static int
check_offsets(const void *buf, int width, int64_t offset, int64_t length,
              int64_t *end)
{
    /* any alignment: Arrow only recommends it */
    dfb_error err;
    if (dfb_offsets_validate(buf, width, 0, offset, offset + length, end, NULL,
                             &err) != DFB_OK) {
        PyErr_SetString(PyExc_ValueError, err.message);
        return -1;
    }
    return 0;
}

/* The `decode_views` modes of describe_node. */
#define DFB_VIEWS_COPY 1
#define DFB_VIEWS_KEEP 2

/* Fills `col` (and `dict` for dictionary-encoded chunks; may be NULL only
   where dictionaries are not allowed) from one validated chunk.  Buffers
   made over Arrow memory are owned by the node's holder.  String views
   are kept as views when `decode_views` is DFB_VIEWS_KEEP (the converters
   read them), copied to large-utf8 in new NumPy arrays when it is
   DFB_VIEWS_COPY, refused with RuntimeError when 0.
   Everything made is kept in `refs`.  Returns 0, or -1 with ValueError
   (malformed), NotImplementedError (unsupported format) or RuntimeError
   set.  `name` names the column in messages. */
static int
describe_node(dfb_state *st, const arrow_node *nd, dfb_column *col,
              dfb_column *dict, ref_list *refs, int decode_views,
              const char *name)
{
    const struct ArrowSchema *s = nd->schema;
    const struct ArrowArray *a = nd->array;
    memset(col, 0, sizeof(*col));
    if (s->format == NULL) {
        PyErr_Format(PyExc_ValueError, "column '%s': schema has no format",
                     name);
        return -1;
    }
    if (a->release == NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': the Arrow array was released", name);
        return -1;
    }
    int64_t end;
    if (a->length < 0 || a->offset < 0 || nd->offset < 0 || nd->length < 0 ||
        add_nonneg(nd->offset, nd->length, &end) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': negative or overflowing length %lld / "
                     "offset %lld",
                     name, (long long)nd->length, (long long)nd->offset);
        return -1;
    }
    if (a->null_count < -1 || a->null_count > a->length) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': null_count %lld is outside [-1, length "
                     "%lld]",
                     name, (long long)a->null_count, (long long)a->length);
        return -1;
    }
    if (a->n_buffers < 0 || (a->n_buffers > 0 && a->buffers == NULL)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': bad buffer list (n_buffers %lld)", name,
                     (long long)a->n_buffers);
        return -1;
    }
    dfb_format f;
    if (dfb_format_parse_arrow(s->format, &f) < 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%s': Arrow format '%s' is not supported", name,
                     s->format);
        return -1;
    }
    if ((s->dictionary != NULL) != (a->dictionary != NULL)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': schema and array disagree about the "
                     "dictionary",
                     name);
        return -1;
    }
    if (s->n_children != 0 || a->n_children != 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': format '%s' has no children, got %lld "
                     "(schema %lld)",
                     name, s->format, (long long)a->n_children,
                     (long long)s->n_children);
        return -1;
    }
    int is_dict = s->dictionary != NULL;
    if (is_dict && f.type != DFB_T_INT && f.type != DFB_T_UINT) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': dictionary index format '%s' is not an "
                     "integer type",
                     name, s->format);
        return -1;
    }
    int64_t nbuf = expected_buffers(&f);
    if (f.type == DFB_T_STRING_VIEW ? a->n_buffers < nbuf
                                    : a->n_buffers != nbuf) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': an Arrow array of format '%s' has %s%lld "
                     "buffers, got %lld",
                     name, s->format,
                     f.type == DFB_T_STRING_VIEW ? "at least " : "",
                     (long long)nbuf, (long long)a->n_buffers);
        return -1;
    }
    /* every size, before any buffer (the bitmap included) is read */
    if (check_node_sizes(s, a, nd->offset, nd->length, name, 0) < 0) {
        return -1;
    }
    const int64_t vbytes = end / 8 + (end % 8 != 0);
    col->fmt = f;
    col->length = nd->length;
    col->offset = nd->offset;
    col->null_kind = DFB_NULL_NON_NULLABLE;
    PyObject *holder = nd->holder;

    /* validity */
    const uint8_t *vbuf = NULL;
    if (f.type == DFB_T_NULL) {
        col->null_count = nd->length;
    }
    else {
        vbuf = a->buffers[0];
        int64_t nulls = 0;
        if (vbuf == NULL) {
            if (a->null_count > 0) {
                PyErr_Format(PyExc_ValueError,
                             "column '%s': null_count %lld but no validity "
                             "bitmap",
                             name, (long long)a->null_count);
                return -1;
            }
        }
        else if (a->null_count == 0 && nd->offset == a->offset &&
                 nd->length == a->length) {
            nulls = 0;
        }
        else if (a->null_count > 0 && nd->offset == a->offset &&
                 nd->length == a->length) {
            nulls = a->null_count;
        }
        else {
            nulls = count_zero_bits(vbuf, nd->offset, nd->length);
        }
        col->null_count = nulls;
        if (nulls == 0) {
            vbuf = NULL;
        }
        else {
            col->null_kind = DFB_NULL_USE_BITMASK;
            col->null_value = 0;
            if (f.type != DFB_T_STRING_VIEW &&
                make_span(st, &col->validity, vbuf, vbytes,
                          PyArray_DescrFromType(NPY_UINT8), holder,
                          DFB_NATIVE_ARROW, refs) < 0) {
                return -1;
            }
        }
    }

    /* values */
    switch (f.type) {
        case DFB_T_NULL:
            break;
        case DFB_T_BOOL_BIT:
            if (end > 0 && a->buffers[1] == NULL) {
                goto null_data;
            }
            if (make_span(st, &col->data, a->buffers[1], vbytes,
                          PyArray_DescrFromType(NPY_UINT8), holder,
                          DFB_NATIVE_ARROW, refs) < 0) {
                return -1;
            }
            break;
        case DFB_T_UTF8:
        case DFB_T_LARGE_UTF8:
        case DFB_T_BINARY:
        case DFB_T_LARGE_BINARY: {
            int w = (f.type == DFB_T_UTF8 || f.type == DFB_T_BINARY) ? 4 : 8;
            static const int64_t zero_offsets[1] = {0};
            const void *obuf = a->buffers[1];
            int64_t last = 0, osize;
            if (obuf == NULL) {
                if (nd->length > 0) {
                    PyErr_Format(PyExc_ValueError,
                                 "column '%s': string array without offsets",
                                 name);
                    return -1;
                }
                obuf = zero_offsets;
                col->offset = 0;
                osize = w;
            }
            else {
                if (mul_nonneg(end + 1, w, &osize) < 0) {
                    goto overflow;
                }
                if (check_offsets(obuf, w, nd->offset, nd->length, &last) <
                    0) {
                    return -1;
                }
            }
            if (last > 0 && a->buffers[2] == NULL) {
                goto null_data;
            }
            if (make_span(
                    st, &col->offsets, obuf, osize,
                    PyArray_DescrFromType(w == 4 ? NPY_INT32 : NPY_INT64),
                    holder, DFB_NATIVE_ARROW, refs) < 0 ||
                make_span(st, &col->data, a->buffers[2], last,
                          PyArray_DescrFromType(NPY_UINT8), holder,
                          DFB_NATIVE_ARROW, refs) < 0) {
                return -1;
            }
            break;
        }
        case DFB_T_STRING_VIEW:
            if (!decode_views) {
                PyErr_Format(PyExc_RuntimeError,
                             "column '%s': string view ('vu') data must be "
                             "copied to offsets + bytes, which "
                             "allow_copy=False forbids",
                             name);
                return -1;
            }
            if (decode_views == DFB_VIEWS_KEEP) {
                /* read straight from the views by the converters;
                   variadic_sizes is never NULL here (it marks views the
                   importer checked) */
                static const int64_t no_sizes[1] = {0};
                int64_t vsize;
                if (mul_nonneg(end, 16, &vsize) < 0) {
                    goto overflow;
                }
                if (read_view_buffers(a, nd->length, refs, &col->n_variadic,
                                      &col->variadic_sizes,
                                      &col->variadic) < 0 ||
                    make_span(st, &col->data, a->buffers[1], vsize,
                              PyArray_DescrFromType(NPY_UINT8), holder,
                              DFB_NATIVE_ARROW, refs) < 0 ||
                    (vbuf != NULL &&
                     make_span(st, &col->validity, vbuf, vbytes,
                               PyArray_DescrFromType(NPY_UINT8), holder,
                               DFB_NATIVE_ARROW, refs) < 0)) {
                    return -1;
                }
                if (col->variadic_sizes == NULL) {
                    col->variadic_sizes = no_sizes;
                }
            }
            else if (views_to_large_utf8(st, a, nd->offset, nd->length, vbuf,
                                         col, refs) < 0) {
                return -1;
            }
            break;
        default: {
            /* fixed width: ints, floats, dates, timestamps, durations,
               dictionary codes */
            int64_t size;
            int itemsize = dfb_format_itemsize(&f);
            if (itemsize <= 0) {
                PyErr_Format(PyExc_NotImplementedError,
                             "column '%s': Arrow format '%s' is not "
                             "supported",
                             name, s->format);
                return -1;
            }
            if (mul_nonneg(end, itemsize, &size) < 0) {
                goto overflow;
            }
            if (size > 0 && a->buffers[1] == NULL) {
                goto null_data;
            }
            if (make_span(st, &col->data, a->buffers[1], size, descr_for(&f),
                          holder, DFB_NATIVE_ARROW, refs) < 0) {
                return -1;
            }
            break;
        }
    }

    if (is_dict) {
        if (dict == NULL || s->dictionary->dictionary != NULL) {
            PyErr_Format(PyExc_NotImplementedError,
                         "column '%s': nested dictionaries are not "
                         "supported",
                         name);
            return -1;
        }
        const struct ArrowArray *da = a->dictionary;
        arrow_node dn = {s->dictionary, da, da->offset, da->length, holder};
        if (describe_node(st, &dn, dict, NULL, refs,
                          decode_views ? DFB_VIEWS_COPY : 0, name) < 0) {
            return -1;
        }
        col->index = f;
        col->fmt.type = DFB_T_DICTIONARY;
        col->categories = dict;
        col->is_ordered = (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0;
    }
    return 0;

null_data:
    PyErr_Format(PyExc_ValueError,
                 "column '%s': a data buffer of format '%s' is NULL but "
                 "length + offset is %lld",
                 name, s->format, (long long)end);
    return -1;
overflow:
    PyErr_Format(PyExc_ValueError,
                 "column '%s': the buffer size for offset + length %lld "
                 "overflows",
                 name, (long long)end);
    return -1;
}

/* Returns the name of column `c` of the import (UTF-8, never NULL). */
static const char *
column_name(const arrow_import *imp, int is_table, int64_t c)
{
    const char *n =
        is_table ? imp->schema.children[c]->name : imp->schema.name;
    return n ? n : "";
}

/* ------------------------------------------------------------------ */
/* Python view of an import (for dfbuffer.to_interchange)               */
/* ------------------------------------------------------------------ */

/* Returns a new dict describing one chunk (see _arrow_import's doc), or
   NULL with an exception. */
static PyObject *
chunk_dict(const dfb_column *col)
{
    PyObject *dict = Py_None;
    Py_INCREF(dict);
    if (col->fmt.type == DFB_T_DICTIONARY) {
        Py_DECREF(dict);
        dict = chunk_dict(col->categories);
        if (dict == NULL) {
            return NULL;
        }
    }
#define OWNER(span) ((span).owner ? (span).owner : Py_None)
    return Py_BuildValue("{sLsLsLsOsOsOsN}", "length", (long long)col->length,
                         "offset", (long long)col->offset, "null_count",
                         (long long)col->null_count, "validity",
                         OWNER(col->validity), "offsets", OWNER(col->offsets),
                         "data", OWNER(col->data), "dictionary", dict);
#undef OWNER
}

/* Returns the format string a described schema is exported under: "U"
   for decoded string views, else the schema's own.  New reference. */
static PyObject *
exported_format(const struct ArrowSchema *s, int decode)
{
    if (decode && strcmp(s->format, "vu") == 0) {
        return PyUnicode_FromString("U");
    }
    return PyUnicode_FromString(s->format);
}

PyDoc_STRVAR(
    arrow_import_doc,
    "_arrow_import(obj, allow_copy=True)\n--\n\n"
    "Private helper of dfbuffer.to_interchange: import an Arrow PyCapsule\n"
    "producer.  Returns (is_table, columns, chunks): columns is a list of\n"
    "(name, format, dictionary_format or None, ordered, nullable) and chunks\n"
    "a list (one per record batch) of lists (one per column) of dicts\n"
    "{length, offset, null_count, validity, offsets, data, dictionary} whose\n"
    "buffers are dfbuffer.Buffer objects over the Arrow memory (owner: the\n"
    "holder capsule of the imported array), or {length, error} when the\n"
    "column cannot be described (the exception to raise on use).");

/* _arrow_import(obj, allow_copy=True): see the docstring.  Returns a new
   tuple or NULL with an exception set. */
static PyObject *
arrow_import_py(PyObject *module, PyObject *args)
{
    PyObject *obj;
    int allow_copy = 1;
    if (!PyArg_ParseTuple(args, "O|p:_arrow_import", &obj, &allow_copy)) {
        return NULL;
    }
    dfb_state *st = dfb_state_from_module(module);
    arrow_import imp = {0};
    ref_list refs = {0};
    PyObject *columns = NULL, *chunks = NULL, *result = NULL;
    imp.accept_device = 1;
    uint8_t *skip = NULL;
    if (import_producer(st, obj, &imp) < 0) {
        goto done;
    }
    if (imp.device.device_type != kDLCPU) {
        result = dfb_arrow_device_describe(st, &imp.schema, imp.arrays,
                                           imp.holders, imp.n, imp.device);
        goto done;
    }
    int is_table = import_is_table(&imp);
    if (is_table && validate_table(&imp) < 0) {
        goto done;
    }
    int64_t ncols = is_table ? imp.schema.n_children : 1;
    /* pandas' index stored as columns (schema metadata "pandas") */
    int64_t nkept = ncols;
    skip = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, 1);
    if (skip == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (is_table) {
        int nskip = dfb_arrow_index_columns(&imp.schema, skip);
        if (nskip < 0) {
            goto done;
        }
        nkept -= nskip;
    }
    columns = PyList_New(0);
    chunks = PyList_New(0);
    if (columns == NULL || chunks == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < ncols; c++) {
        if (skip[c]) {
            continue;
        }
        const struct ArrowSchema *s =
            is_table ? imp.schema.children[c] : &imp.schema;
        PyObject *dfmt = Py_None;
        Py_INCREF(dfmt);
        if (s->dictionary != NULL && s->dictionary->format != NULL) {
            Py_DECREF(dfmt);
            dfmt = exported_format(s->dictionary, allow_copy);
            if (dfmt == NULL) {
                goto done;
            }
        }
        PyObject *item = Py_BuildValue(
            "(sNNOO)", column_name(&imp, is_table, c),
            exported_format(s, allow_copy), dfmt,
            (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? Py_True : Py_False,
            (s->flags & ARROW_FLAG_NULLABLE) ? Py_True : Py_False);
        if (item == NULL || PyList_Append(columns, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    for (Py_ssize_t b = 0; b < imp.n; b++) {
        PyObject *row = PyList_New(nkept);
        if (row == NULL || PyList_Append(chunks, row) < 0) {
            Py_XDECREF(row);
            goto done;
        }
        Py_DECREF(row);
        for (int64_t c = 0, k = 0; c < ncols; c++) {
            if (skip[c]) {
                continue;
            }
            arrow_node nd;
            dfb_column col, dict;
            if (import_node(&imp, is_table, b, c, &nd) < 0) {
                goto done;
            }
            PyObject *d = NULL;
            if (describe_node(st, &nd, &col, &dict, &refs,
                              allow_copy ? DFB_VIEWS_COPY : 0,
                              column_name(&imp, is_table, c)) < 0) {
                if (!PyErr_ExceptionMatches(PyExc_NotImplementedError) &&
                    !PyErr_ExceptionMatches(PyExc_RuntimeError)) {
                    goto done;
                }
                /* unsupported here: raised when the column is used */
                PyObject *v = dfb_err_take();
                d = Py_BuildValue("{sLsN}", "length", (long long)nd.length,
                                  "error", v);
            }
            else {
                d = chunk_dict(&col);
            }
            if (d == NULL) {
                goto done;
            }
            PyList_SET_ITEM(row, k++, d);
        }
    }
    result =
        Py_BuildValue("(OOO)", is_table ? Py_True : Py_False, columns, chunks);
done:
    PyMem_Free(skip);
    Py_XDECREF(columns);
    Py_XDECREF(chunks);
    refs_clear(&refs);
    import_clear(&imp);
    return result;
}

/* ------------------------------------------------------------------ */
/* Converters                                                           */
/* ------------------------------------------------------------------ */

/* Release callback of the stand-in arrays of describe_empty (they own
   nothing). */
static void
noop_release(struct ArrowArray *a)
{
    a->release = NULL;
}

/* Describes a zero-length chunk of schema `s` (a stream without chunks),
   through describe_node on stand-in arrays without memory.  Returns 0, or
   -1 with an exception set. */
static int
describe_empty(dfb_state *st, const struct ArrowSchema *s, dfb_column *col,
               dfb_column *dict, ref_list *refs, const char *name)
{
    static const void *no_buffers[3] = {NULL, NULL, NULL};
    struct ArrowArray arr[2];
    dfb_format f;
    memset(arr, 0, sizeof(arr));
    for (int k = 0; k < 2; k++) {
        const struct ArrowSchema *ks = k == 0 ? s : s->dictionary;
        if (ks == NULL) {
            break;
        }
        if (ks->format == NULL || dfb_format_parse_arrow(ks->format, &f) < 0) {
            PyErr_Format(PyExc_NotImplementedError,
                         "column '%s': Arrow format '%s' is not supported",
                         name, ks->format ? ks->format : "(null)");
            return -1;
        }
        arr[k].n_buffers = expected_buffers(&f);
        arr[k].buffers = no_buffers;
        arr[k].release = noop_release;
    }
    if (s->dictionary != NULL) {
        arr[0].dictionary = &arr[1];
    }
    arrow_node nd = {s, &arr[0], 0, 0, Py_None};
    return describe_node(st, &nd, col, dict, refs, DFB_VIEWS_KEEP, name);
}

/* Converts column `c` of the import (all its chunks, or an empty column
   when there are none) with dfb_columns_to_ndarray.  Returns a new
   reference, or NULL with an exception set. */
static PyObject *
convert_column(dfb_state *st, const arrow_import *imp, int is_table, int64_t c,
               dfb_nulls_mode nulls, int allow_copy)
{
    const char *name = column_name(imp, is_table, c);
    Py_ssize_t n = imp->n > 0 ? imp->n : 1;
    dfb_column *cols = PyMem_Calloc(2 * (size_t)n, sizeof(dfb_column));
    ref_list refs = {0};
    PyObject *res = NULL;
    if (cols == NULL) {
        return PyErr_NoMemory();
    }
    if (imp->n == 0) {
        const struct ArrowSchema *s =
            is_table ? imp->schema.children[c] : &imp->schema;
        if (describe_empty(st, s, &cols[0], &cols[n], &refs, name) < 0) {
            goto done;
        }
    }
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        arrow_node nd;
        if (import_node(imp, is_table, b, c, &nd) < 0 ||
            describe_node(st, &nd, &cols[b], &cols[n + b], &refs,
                          DFB_VIEWS_KEEP, name) < 0) {
            goto done;
        }
    }
    dfb_type t = cols[0].fmt.type == DFB_T_DICTIONARY
                     ? cols[0].categories->fmt.type
                     : cols[0].fmt.type;
    if (t == DFB_T_BINARY || t == DFB_T_LARGE_BINARY) {
        const struct ArrowSchema *s =
            is_table ? imp->schema.children[c] : &imp->schema;
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%s': Arrow format '%s' (binary) is not "
                     "supported",
                     name,
                     cols[0].fmt.type == DFB_T_DICTIONARY
                         ? s->dictionary->format
                         : s->format);
        goto done;
    }
    res = dfb_columns_to_ndarray(st, cols, n, nulls, allow_copy);
done:
    refs_clear(&refs);
    PyMem_Free(cols);
    return res;
}

PyObject *
dfb_arrow_column_to_ndarray(dfb_state *st, PyObject *obj, dfb_nulls_mode nulls,
                            int allow_copy)
{
    arrow_import imp = {0};
    PyObject *res = NULL;
    if (import_producer(st, obj, &imp) < 0) {
        goto done;
    }
    if (import_is_table(&imp)) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column_to_ndarray: Arrow format '+s' (struct) is not a "
                     "column; use from_dataframe for tables and record "
                     "batches");
        goto done;
    }
    res = convert_column(st, &imp, 0, 0, nulls, allow_copy);
done:
    import_clear(&imp);
    return res;
}

/* Converts every column of an import to a dict name -> array, leaving out
   pandas' index columns (schema metadata "pandas") when `skip_index`.
   Returns a new reference or NULL with an exception set (ValueError for a
   duplicate name). */
static PyObject *
import_to_dict(dfb_state *st, const arrow_import *imp, int skip_index,
               dfb_nulls_mode nulls, int allow_copy)
{
    PyObject *res = NULL;
    uint8_t *skip = NULL;
    int is_table = import_is_table(imp);
    if (is_table && validate_table(imp) < 0) {
        goto done;
    }
    int64_t ncols = is_table ? imp->schema.n_children : 1;
    skip = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, 1);
    if (skip == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (skip_index && is_table &&
        dfb_arrow_index_columns(&imp->schema, skip) < 0) {
        goto done;
    }
    res = PyDict_New();
    if (res == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < ncols; c++) {
        if (skip[c]) {
            continue;
        }
        PyObject *key = PyUnicode_FromString(column_name(imp, is_table, c));
        if (key == NULL) {
            Py_CLEAR(res);
            goto done;
        }
        int dup = PyDict_Contains(res, key);
        if (dup != 0) {
            if (dup > 0) {
                PyErr_Format(PyExc_ValueError,
                             "duplicate column name %R in the Arrow schema",
                             key);
            }
            Py_DECREF(key);
            Py_CLEAR(res);
            goto done;
        }
        PyObject *arr =
            convert_column(st, imp, is_table, c, nulls, allow_copy);
        if (arr == NULL || PyDict_SetItem(res, key, arr) < 0) {
            Py_XDECREF(arr);
            Py_DECREF(key);
            Py_CLEAR(res);
            goto done;
        }
        Py_DECREF(arr);
        Py_DECREF(key);
    }
done:
    PyMem_Free(skip);
    return res;
}

PyObject *
dfb_arrow_from_dataframe(dfb_state *st, PyObject *obj, dfb_nulls_mode nulls,
                         int allow_copy)
{
    arrow_import imp = {0};
    PyObject *res = NULL;
    if (import_producer(st, obj, &imp) == 0) {
        res = import_to_dict(st, &imp, 1, nulls, allow_copy);
    }
    import_clear(&imp);
    return res;
}

/* ------------------------------------------------------------------ */
/* Buffer.from_object fallback                                          */
/* ------------------------------------------------------------------ */

PyObject *
dfb_arrow_buffer_from_object(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    arrow_import imp = {0};
    ref_list refs = {0};
    PyObject *result = NULL;
    imp.accept_device = 1;
    if (import_producer(st, obj, &imp) < 0) {
        goto done;
    }
    if (imp.n != 1) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Buffer.from_object needs exactly one Arrow chunk, got "
                     "%zd",
                     imp.n);
        goto done;
    }
    if (imp.device.device_type != kDLCPU) {
        result = dfb_arrow_device_buffer(st, &imp.schema, imp.arrays[0],
                                         imp.holders[0], imp.device, dtype);
        goto done;
    }
    dfb_format f;
    if (dfb_format_parse_arrow(imp.schema.format, &f) < 0 ||
        imp.schema.dictionary != NULL || dfb_format_itemsize(&f) <= 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Buffer.from_object wraps fixed-width primitive Arrow "
                     "arrays only, not format '%s'",
                     imp.schema.format);
        goto done;
    }
    arrow_node nd;
    dfb_column col, dict;
    if (import_node(&imp, 0, 0, 0, &nd) < 0 ||
        describe_node(st, &nd, &col, &dict, &refs, 0, "") < 0) {
        goto done;
    }
    int itemsize = dfb_format_itemsize(&col.fmt);
    DfbBuffer *vb = (DfbBuffer *)col.data.owner;
    PyArray_Descr *d = dfb_parse_dtype(dtype, vb->dtype);
    if (d == NULL) {
        goto done;
    }
    if (PyDataType_ELSIZE(d) != itemsize) {
        PyErr_Format(
            PyExc_ValueError, "dtype %R has itemsize %zd, the Arrow values %d",
            (PyObject *)d, (Py_ssize_t)PyDataType_ELSIZE(d), itemsize);
        Py_DECREF(d);
        goto done;
    }
    DLDevice cpu = {kDLCPU, 0};
    char *start = col.data.ptr == NULL
                      ? NULL
                      : (char *)col.data.ptr + col.offset * itemsize;
    result = dfb_buffer_new(st, col.length == 0 ? NULL : start,
                            (Py_ssize_t)(col.length * itemsize), nd.holder, d,
                            1, NULL, NULL, cpu, 1, DFB_NATIVE_ARROW);
    Py_DECREF(d);
done:
    refs_clear(&refs);
    import_clear(&imp);
    return result;
}

/* ------------------------------------------------------------------ */
/* Export: Buffer.__arrow_c_schema__ / __arrow_c_array__                */
/* ------------------------------------------------------------------ */

/* Private data of an exported ArrowArray. */
typedef struct {
    PyObject *buffer; /* strong reference to the exported Buffer */
    const void *buffers[2];
} export_private;

/* Release callback of exported arrays (any thread, with or without the
   GIL, even at exit): drops the Buffer reference as the DLPack deleter does
   (dfb_decref_any_thread: leaked rather than risk a hang during or after
   finalization) and frees the private data.  Marks the array released. */
static void
export_array_release(struct ArrowArray *array)
{
    if (array == NULL || array->release == NULL) {
        return;
    }
    export_private *p = array->private_data;
    if (p != NULL) {
        dfb_decref_any_thread(p->buffer);
        free(p);
    }
    array->private_data = NULL;
    array->release = NULL;
}

/* Release callback of exported schemas (static strings: nothing to
   free but the format copy). */
static void
export_schema_release(struct ArrowSchema *schema)
{
    if (schema == NULL || schema->release == NULL) {
        return;
    }
    free(schema->private_data);
    schema->private_data = NULL;
    schema->release = NULL;
}

/* Capsule destructor for "arrow_schema" capsules we made: releases the
   schema unless a consumer moved it out, then frees the struct. */
static void
schema_capsule_destructor(PyObject *cap)
{
    struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release != NULL) {
        s->release(s);
    }
    free(s);
}

/* Capsule destructor for "arrow_array" capsules we made: releases the
   array unless a consumer moved it out, then frees the struct. */
static void
array_capsule_destructor(PyObject *cap)
{
    struct ArrowArray *a = PyCapsule_GetPointer(cap, "arrow_array");
    if (a == NULL) {
        PyErr_Clear();
        return;
    }
    if (a->release != NULL) {
        a->release(a);
    }
    free(a);
}

/* Writes the Arrow format of Buffer `b`'s dtype into buf.  Returns 0, or
   -1 with BufferError (layout, device, byte order) or TypeError (dtype)
   set. */
static int
export_format(DfbBuffer *b, char *buf, size_t size)
{
    if (dfb_buffer_require_host(b, "the Arrow PyCapsule interface") < 0) {
        return -1;
    }
    if (b->ndim != 1) {
        PyErr_Format(PyExc_BufferError,
                     "only 1-D Buffers export as Arrow arrays, this one has "
                     "%d dimensions",
                     b->ndim);
        return -1;
    }
    PyArray_Descr *d = b->dtype;
    Py_ssize_t itemsize = PyDataType_ELSIZE(d);
    if (b->shape[0] > 1 && b->strides[0] != itemsize) {
        PyErr_Format(PyExc_BufferError,
                     "only contiguous Buffers export as Arrow arrays (stride "
                     "%zd, itemsize %zd)",
                     b->strides[0], itemsize);
        return -1;
    }
    if (!PyArray_ISNBO(d->byteorder)) {
        PyErr_SetString(PyExc_BufferError,
                        "Arrow arrays are native-endian; this Buffer is "
                        "byte-swapped");
        return -1;
    }
    if (d->type_num == NPY_BOOL) {
        PyErr_SetString(PyExc_TypeError,
                        "bool Buffers do not export as Arrow arrays: "
                        "Arrow booleans are bit-packed (copy with "
                        "pyarrow.array(numpy.asarray(buf)))");
        return -1;
    }
    /* the mapping is core's format table, by kind and size (type numbers
       alias differently per platform); only the datetime unit is read
       here */
    char unit = 0;
    if (d->type_num == NPY_DATETIME || d->type_num == NPY_TIMEDELTA) {
        PyArray_DatetimeMetaData *m =
            &((PyArray_DatetimeDTypeMetaData *)PyDataType_C_METADATA(d))->meta;
        if (m->num == 1) {
            unit = m->base == NPY_FR_s    ? 's'
                   : m->base == NPY_FR_ms ? 'm'
                   : m->base == NPY_FR_us ? 'u'
                   : m->base == NPY_FR_ns ? 'n'
                                          : 0;
        }
        if (unit == 0) {
            PyErr_Format(PyExc_TypeError,
                         "Arrow has no type for %R (units s, ms, us, ns "
                         "only)",
                         (PyObject *)d);
            return -1;
        }
    }
    dfb_format f;
    if (itemsize > 8 ||
        dfb_format_from_numpy(d->kind, (int)itemsize, unit, &f) < 0 ||
        dfb_format_to_arrow(&f, buf, size) < 0) {
        PyErr_Format(PyExc_TypeError, "Arrow has no primitive type for %R",
                     (PyObject *)d);
        return -1;
    }
    return 0;
}

/* Returns a new "arrow_schema" capsule for format `fmt` (copied), or NULL
   with an exception set. */
static PyObject *
schema_capsule(const char *fmt)
{
    struct ArrowSchema *s = calloc(1, sizeof(*s));
    char *copy = malloc(strlen(fmt) + 1);
    if (s == NULL || copy == NULL) {
        free(s);
        free(copy);
        PyErr_NoMemory();
        return NULL;
    }
    strcpy(copy, fmt);
    s->format = copy;
    s->name = "";
    s->metadata = NULL;
    s->flags = ARROW_FLAG_NULLABLE;
    s->release = export_schema_release;
    s->private_data = copy;
    PyObject *cap =
        PyCapsule_New(s, "arrow_schema", schema_capsule_destructor);
    if (cap == NULL) {
        export_schema_release(s);
        free(s);
    }
    return cap;
}

PyObject *
dfb_buffer_arrow_c_schema(PyObject *self, PyObject *unused)
{
    char fmt[16];
    if (export_format((DfbBuffer *)self, fmt, sizeof(fmt)) < 0) {
        return NULL;
    }
    return schema_capsule(fmt);
}

PyObject *
dfb_buffer_arrow_c_array(PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"requested_schema", NULL};
    PyObject *requested = Py_None;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError,
                        "__arrow_c_array__() takes at most 1 argument");
        return NULL;
    }
    if (nargs == 1) {
        requested = args[0];
    }
    for (Py_ssize_t i = 0; i < nkw; i++) {
        const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
        if (k == NULL) {
            return NULL;
        }
        if (strcmp(k, names[0]) != 0 || nargs == 1) {
            PyErr_Format(PyExc_TypeError,
                         "__arrow_c_array__() got an unexpected or repeated "
                         "keyword argument '%s'",
                         k);
            return NULL;
        }
        requested = args[nargs + i];
    }
    DfbBuffer *b = (DfbBuffer *)self;
    char fmt[16];
    if (export_format(b, fmt, sizeof(fmt)) < 0) {
        return NULL;
    }
    if (requested != Py_None) {
        struct ArrowSchema *rs = dfb_arrow_capsule_pointer(
            requested, "arrow_schema", "requested_schema");
        if (rs == NULL) {
            return NULL;
        }
        if (rs->release == NULL || rs->format == NULL ||
            strcmp(rs->format, fmt) != 0 || rs->n_children != 0 ||
            rs->dictionary != NULL) {
            PyErr_Format(PyExc_NotImplementedError,
                         "a Buffer exports as Arrow format '%s' only; it "
                         "cannot be cast to the requested schema '%s'",
                         fmt, rs->release && rs->format ? rs->format : "?");
            return NULL;
        }
    }
    PyObject *scap = schema_capsule(fmt);
    if (scap == NULL) {
        return NULL;
    }
    struct ArrowArray *a = calloc(1, sizeof(*a));
    export_private *p = calloc(1, sizeof(*p));
    if (a == NULL || p == NULL) {
        free(a);
        free(p);
        Py_DECREF(scap);
        return PyErr_NoMemory();
    }
    static const uint64_t empty[1] = {0};
    p->buffer = Py_NewRef(self);
    p->buffers[0] = NULL;
    p->buffers[1] = b->data != NULL ? (const void *)b->data : empty;
    a->length = b->shape[0];
    a->null_count = 0;
    a->offset = 0;
    a->n_buffers = 2;
    a->n_children = 0;
    a->buffers = p->buffers;
    a->children = NULL;
    a->dictionary = NULL;
    a->release = export_array_release;
    a->private_data = p;
    PyObject *acap = PyCapsule_New(a, "arrow_array", array_capsule_destructor);
    if (acap == NULL) {
        export_array_release(a);
        free(a);
        Py_DECREF(scap);
        return NULL;
    }
    return Py_BuildValue("(NN)", scap, acap);
}

PyDoc_STRVAR(
    arrow_buffer_doc,
    "_arrow_buffer(obj, dtype=None)\n--\n\n"
    "Private: the Arrow fallback of Buffer.from_object (a read-only Buffer\n"
    "over the values of a 1-D fixed-width primitive Arrow array).");

/* _arrow_buffer(obj, dtype=None): dfb_arrow_buffer_from_object from
   Python.  Returns a new Buffer or NULL with an exception set. */
static PyObject *
arrow_buffer_py(PyObject *module, PyObject *args)
{
    PyObject *obj, *dtype = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:_arrow_buffer", &obj, &dtype)) {
        return NULL;
    }
    return dfb_arrow_buffer_from_object(dfb_state_from_module(module), obj,
                                        dtype);
}

/* Parses the nulls= argument ("mask", "fill", "raise").  Returns 0, or -1
   with TypeError / ValueError set. */
static int
parse_nulls_arg(PyObject *o, dfb_nulls_mode *out)
{
    if (o == NULL) {
        *out = DFB_NULLS_MASK;
        return 0;
    }
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError,
                            "nulls must be 'mask', 'fill' or 'raise'");
        }
        return -1;
    }
    if (strcmp(s, "mask") == 0) {
        *out = DFB_NULLS_MASK;
    }
    else if (strcmp(s, "fill") == 0) {
        *out = DFB_NULLS_FILL;
    }
    else if (strcmp(s, "raise") == 0) {
        *out = DFB_NULLS_RAISE;
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "nulls must be 'mask', 'fill' or 'raise', not %R", o);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(
    arrow_to_ndarray_doc,
    "_arrow_to_ndarray(obj, nulls='mask', allow_copy=True)\n--\n\n"
    "Private: column_to_ndarray's Arrow path (dfb_arrow_column_to_ndarray).");

/* _arrow_to_ndarray(obj, nulls, allow_copy).  Returns a new array or NULL
   with an exception set. */
static PyObject *
arrow_to_ndarray_py(PyObject *module, PyObject *args)
{
    PyObject *obj, *nulls_o = NULL;
    int allow_copy = 1;
    dfb_nulls_mode nulls;
    if (!PyArg_ParseTuple(args, "O|Op:_arrow_to_ndarray", &obj, &nulls_o,
                          &allow_copy) ||
        parse_nulls_arg(nulls_o, &nulls) < 0) {
        return NULL;
    }
    return dfb_arrow_column_to_ndarray(dfb_state_from_module(module), obj,
                                       nulls, allow_copy);
}

PyDoc_STRVAR(
    arrow_from_dataframe_doc,
    "_arrow_from_dataframe(obj, nulls='mask', allow_copy=True)\n--\n\n"
    "Private: from_dataframe's Arrow path (dfb_arrow_from_dataframe).");

/* _arrow_from_dataframe(obj, nulls, allow_copy).  Returns a new dict or
   NULL with an exception set. */
static PyObject *
arrow_from_dataframe_py(PyObject *module, PyObject *args)
{
    PyObject *obj, *nulls_o = NULL;
    int allow_copy = 1;
    dfb_nulls_mode nulls;
    if (!PyArg_ParseTuple(args, "O|Op:_arrow_from_dataframe", &obj, &nulls_o,
                          &allow_copy) ||
        parse_nulls_arg(nulls_o, &nulls) < 0) {
        return NULL;
    }
    return dfb_arrow_from_dataframe(dfb_state_from_module(module), obj, nulls,
                                    allow_copy);
}

PyMethodDef dfb_arrow_methods[] = {
    {"_arrow_to_ndarray", arrow_to_ndarray_py, METH_VARARGS,
     arrow_to_ndarray_doc},
    {"_arrow_from_dataframe", arrow_from_dataframe_py, METH_VARARGS,
     arrow_from_dataframe_doc},
    {"_arrow_import", arrow_import_py, METH_VARARGS, arrow_import_doc},
    {"_arrow_buffer", arrow_buffer_py, METH_VARARGS, arrow_buffer_doc},
    {NULL},
};

/* ------------------------------------------------------------------ */
/* The C API's Arrow entry (capi.c): structs moved in by a C caller     */
/* ------------------------------------------------------------------ */

PyObject *
dfb_arrow_from_c(dfb_state *st, struct ArrowArray *array,
                 struct ArrowSchema *schema, int as_dict, dfb_nulls_mode nulls,
                 int allow_copy)
{
    arrow_import imp = {0};
    PyObject *res = NULL;
    int had_schema = schema != NULL && schema->release != NULL;
    int had_array = array != NULL && array->release != NULL;
    /* Move both in before anything can fail: from here on import_clear (or
       the holder, when a result keeps it) releases each exactly once. */
    if (had_schema) {
        imp.schema = *schema;
        schema->release = NULL;
    }
    if (had_array) {
        struct ArrowArray *dst = import_add(&imp);
        if (dst == NULL) {
            struct ArrowArray tmp = *array;
            array->release = NULL;
            PyObject *saved = dfb_err_take();
            tmp.release(&tmp);
            dfb_err_give(saved);
            goto done;
        }
        *dst = *array;
        array->release = NULL;
    }
    if (!had_schema || !had_array) {
        PyErr_Format(PyExc_ValueError,
                     "the ArrowSchema and the ArrowArray must be live (not "
                     "released); got a %s schema and a %s array",
                     schema == NULL ? "NULL"
                     : had_schema   ? "live"
                                    : "released",
                     array == NULL ? "NULL"
                     : had_array   ? "live"
                                   : "released");
        goto done;
    }
    if (imp.schema.format == NULL) {
        PyErr_SetString(PyExc_ValueError, "the Arrow schema has no format");
        goto done;
    }
    if (as_dict) {
        res = import_to_dict(st, &imp, 0, nulls, allow_copy);
    }
    else if (import_is_table(&imp)) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "DfBuffer_ArrowToNdarray: Arrow format '+s' (struct) "
                        "is not a column; use DfBuffer_ArrowToDict for "
                        "record batches");
    }
    else {
        res = convert_column(st, &imp, 0, 0, nulls, allow_copy);
    }
done:
    import_clear(&imp);
    return res;
}

PyObject *
dfb_arrow_stream_from_c(dfb_state *st, struct ArrowArrayStream *stream,
                        dfb_nulls_mode nulls, int allow_copy)
{
    if (stream == NULL || stream->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the ArrowArrayStream must be live (not released)");
        return NULL;
    }
    struct ArrowArrayStream s = *stream;
    stream->release = NULL;
    arrow_import imp = {0};
    PyObject *res = NULL;
    if (import_stream_struct(&s, &imp) == 0) {
        if (imp.schema.format == NULL) {
            PyErr_SetString(PyExc_ValueError,
                            "the Arrow schema has no format");
        }
        else {
            res = import_to_dict(st, &imp, 0, nulls, allow_copy);
        }
    }
    import_clear(&imp);
    return res;
}

/* ------------------------------------------------------------------ */
/* Whole frames, described for to_matrix (matrix.c)                     */
/* ------------------------------------------------------------------ */

int
dfb_arrow_describe_frame(dfb_state *st, PyObject *obj, PyObject *select,
                         dfb_frame *out)
{
    arrow_import imp = {0};
    ref_list refs = {0};
    Py_ssize_t *idx = NULL, n = 0;
    PyObject *keys = NULL;
    int ret = -1;
    if (import_producer(st, obj, &imp) < 0) {
        goto done;
    }
    int is_table = import_is_table(&imp);
    if (is_table && validate_table(&imp) < 0) {
        goto done;
    }
    int64_t ncols = is_table ? imp.schema.n_children : 1;
    keys = PyList_New((Py_ssize_t)ncols);
    if (keys == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < ncols; c++) {
        PyObject *key = PyUnicode_FromString(column_name(&imp, is_table, c));
        if (key == NULL) {
            goto done;
        }
        PyList_SET_ITEM(keys, (Py_ssize_t)c, key);
    }
    if (dfb_frame_select(keys, select, &idx, &n) < 0 ||
        dfb_frame_init(out, n) < 0) {
        goto done;
    }
    out->nrows = 0;
    for (Py_ssize_t b = 0; b < imp.n; b++) {
        if (add_nonneg(out->nrows, imp.arrays[b]->length, &out->nrows) < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "the Arrow chunks' lengths overflow");
            goto done;
        }
    }
    /* the holders own every fixed-width buffer: keep them, so that the
       per-span Buffers of fixed-width columns can go right away */
    for (Py_ssize_t b = 0; b < imp.n; b++) {
        if (PyList_Append(out->keep, imp.holders[b]) < 0) {
            goto done;
        }
    }
    Py_ssize_t nch = imp.n > 0 ? imp.n : 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        int64_t c = idx[k];
        Py_ssize_t mark = refs.n;
        const char *name = column_name(&imp, is_table, c);
        dfb_frame_column *fc = &out->cols[k];
        fc->name = Py_NewRef(PyList_GET_ITEM(keys, idx[k]));
        fc->chunks = PyMem_Calloc(2 * (size_t)nch, sizeof(dfb_column));
        if (fc->chunks == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        fc->nchunks = nch;
        if (imp.n == 0) {
            const struct ArrowSchema *s =
                is_table ? imp.schema.children[c] : &imp.schema;
            if (describe_empty(st, s, &fc->chunks[0], &fc->chunks[1], &refs,
                               name) < 0) {
                goto done;
            }
        }
        for (Py_ssize_t b = 0; b < imp.n; b++) {
            arrow_node nd;
            if (import_node(&imp, is_table, b, c, &nd) < 0 ||
                describe_node(st, &nd, &fc->chunks[b], &fc->chunks[nch + b],
                              &refs, DFB_VIEWS_KEEP, name) < 0) {
                goto done;
            }
        }
        int fixed = 1;
        for (Py_ssize_t b = 0; b < 2 * nch; b++) {
            dfb_type t = fc->chunks[b].fmt.type;
            fixed &= t != DFB_T_UTF8 && t != DFB_T_LARGE_UTF8 &&
                     t != DFB_T_BINARY && t != DFB_T_LARGE_BINARY &&
                     t != DFB_T_STRING_VIEW;
            fc->chunks[b].fmt.tz = NULL;
            fc->chunks[b].fmt.tz_len = 0;
        }
        /* strings may point into arrays made for them (decoded views):
           their Buffers stay in the keep list */
        for (; fixed && refs.n > mark; refs.n--) {
            Py_DECREF(refs.items[refs.n - 1]);
        }
    }
    ret = 0;
done:
    for (Py_ssize_t i = 0; i < refs.n; i++) {
        if (ret == 0 && PyList_Append(out->keep, refs.items[i]) < 0) {
            ret = -1;
        }
    }
    refs_clear(&refs);
    PyMem_Free(idx);
    Py_XDECREF(keys);
    import_clear(&imp);
    return ret;
}
