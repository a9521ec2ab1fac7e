/* dfbuffer: Arrow export: Buffer.__arrow_c_schema__ / __arrow_c_array__.
 *
 * They describe a 1-D contiguous host buffer of a primitive type without
 * copying; the exported ArrowArray's private data holds a strong reference
 * to the Buffer.
 */
#include "common.h"
#include "model.h"
#include "arrow.h"
#include "state.h"
#include "format.h"
#include "offsets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int
dfb_arrow_export_visit(const struct ArrowArray *a, visitproc visit, void *arg)
{
    if (a->release != export_array_release || a->private_data == NULL) {
        return 0;
    }
    const export_private *p = a->private_data;
    Py_VISIT(p->buffer);
    return 0;
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

/* Defines capsule destructor `fn` of our `name` capsules holding a
   malloc'd struct `T`: releases it unless a consumer moved it out, then
   frees it.  Cannot fail. */
#define CAPSULE_FREE(fn, T, name)                        \
    void fn(PyObject *cap)                               \
    {                                                    \
        struct T *p = PyCapsule_GetPointer(cap, (name)); \
        if (p == NULL) {                                 \
            PyErr_Clear();                               \
            return;                                      \
        }                                                \
        if (p->release != NULL) {                        \
            p->release(p);                               \
        }                                                \
        free(p);                                         \
    }

CAPSULE_FREE(dfb_arrow_schema_capsule_free, ArrowSchema, "arrow_schema")
CAPSULE_FREE(dfb_arrow_array_capsule_free, ArrowArray, "arrow_array")
CAPSULE_FREE(dfb_arrow_stream_capsule_free, ArrowArrayStream,
             "arrow_array_stream")
#undef CAPSULE_FREE

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
        PyCapsule_New(s, "arrow_schema", dfb_arrow_schema_capsule_free);
    if (cap == NULL) {
        export_schema_release(s);
        free(s);
    }
    return cap;
}

int
dfb_arrow_check_requested(PyObject *requested, const char *fmt)
{
    if (requested == Py_None) {
        return 0;
    }
    const struct ArrowSchema *rs = dfb_arrow_capsule_pointer(
        requested, "arrow_schema", "requested_schema");
    if (rs == NULL) {
        return -1;
    }
    if (rs->release == NULL || rs->format == NULL ||
        strcmp(rs->format, fmt) != 0 || rs->n_children != 0 ||
        rs->dictionary != NULL) {
        PyErr_Format(PyExc_NotImplementedError,
                     "a Buffer exports as Arrow format '%s' only; it "
                     "cannot be cast to the requested schema '%s'",
                     fmt, rs->release && rs->format ? rs->format : "?");
        return -1;
    }
    return 0;
}

int
dfb_arrow_export_fill(PyObject *self, struct ArrowArray *a)
{
    const DfbBuffer *b = (const DfbBuffer *)self;
    export_private *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
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
    return 0;
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
    if (dfb_arrow_check_requested(requested, fmt) < 0) {
        return NULL;
    }
    PyObject *scap = schema_capsule(fmt);
    if (scap == NULL) {
        return NULL;
    }
    struct ArrowArray *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        Py_DECREF(scap);
        return PyErr_NoMemory();
    }
    if (dfb_arrow_export_fill(self, a) < 0) {
        free(a);
        Py_DECREF(scap);
        return NULL;
    }
    PyObject *acap =
        PyCapsule_New(a, "arrow_array", dfb_arrow_array_capsule_free);
    if (acap == NULL) {
        a->release(a);
        free(a);
        Py_DECREF(scap);
        return NULL;
    }
    return Py_BuildValue("(NN)", scap, acap);
}
