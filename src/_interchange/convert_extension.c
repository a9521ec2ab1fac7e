/* dfbuffer: Arrow's canonical extension types (the "ARROW:extension:name"
 * field metadata on a storage type).
 *
 * arrow.bool8 (int8 storage) converts as a zero-copy bool view;
 * arrow.uuid (16-byte fixed-size binary) as uuid.UUID objects; arrow.json
 * (a string storage), arrow.opaque and unknown extensions as their storage
 * type.
 */
#include "common.h"
#include "arrow_internal.h"
#include "mem.h"
#include "types.h"

#include <string.h>

/* Returns 1 if the `len` bytes at `v` spell `name`, else 0. */
static int
named(const char *v, int32_t len, const char *name)
{
    return (size_t)len == strlen(name) &&
           dfb_memcmp(v, name, (size_t)len) == 0;
}

void
dfb_arrow_apply_extension(const struct ArrowSchema *s, dfb_column *col)
{
    const char *v;
    int32_t len;
    if (!dfb_arrow_metadata_find(s->metadata, "ARROW:extension:name", &v,
                                 &len)) {
        return;
    }
    if (named(v, len, "arrow.bool8") && col->fmt.type == DFB_T_INT &&
        col->fmt.bits == 8) {
        col->fmt.type = DFB_T_BOOL8;
        col->fmt.byteorder = '|';
    }
    else if (named(v, len, "arrow.uuid") &&
             col->fmt.type == DFB_T_FIXED_BINARY && col->fmt.size == 16) {
        col->uuid = 1;
    }
}

/* What a fast uuid.UUID needs: the class, the names of its two slots and
   SafeUUID.unknown (UUID(bytes=...)'s is_safe). */
typedef struct {
    PyObject *cls, *int_name, *safe_name, *unknown, *empty;
} uuid_kit;

/* Drops the references of `k`.  Cannot fail. */
static void
uuid_kit_clear(uuid_kit *k)
{
    Py_CLEAR(k->cls);
    Py_CLEAR(k->int_name);
    Py_CLEAR(k->safe_name);
    Py_CLEAR(k->unknown);
    Py_CLEAR(k->empty);
}

/* Fills `k` from the uuid module.  Returns 0, or -1 with an exception. */
static int
uuid_kit_init(uuid_kit *k)
{
    memset(k, 0, sizeof(*k));
    PyObject *mod = PyImport_ImportModule("uuid");
    if (mod == NULL) {
        return -1;
    }
    PyObject *safe = PyObject_GetAttrString(mod, "SafeUUID");
    k->cls = PyObject_GetAttrString(mod, "UUID");
    Py_DECREF(mod);
    k->unknown = safe ? PyObject_GetAttrString(safe, "unknown") : NULL;
    Py_XDECREF(safe);
    k->int_name = PyUnicode_InternFromString("int");
    k->safe_name = PyUnicode_InternFromString("is_safe");
    k->empty = PyTuple_New(0);
    if (k->cls == NULL || k->unknown == NULL || k->int_name == NULL ||
        k->safe_name == NULL || k->empty == NULL) {
        uuid_kit_clear(k);
        return -1;
    }
    return 0;
}

/* uuid.UUID(bytes=b) for the 16 bytes `b` as the uuid module's own
   constructors make it (object.__new__, then its two slots set with
   object.__setattr__).  Returns a new reference, or NULL with an
   exception set. */
static PyObject *
uuid_from_16(const uuid_kit *k, const unsigned char *b)
{
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | b[i];
        lo = lo << 8 | b[8 + i];
    }
    PyObject *h = PyLong_FromUnsignedLongLong(hi);
    PyObject *l = PyLong_FromUnsignedLongLong(lo);
    PyObject *sh = PyLong_FromLong(64);
    PyObject *hs = h && sh ? PyNumber_Lshift(h, sh) : NULL;
    PyObject *v = hs && l ? PyNumber_Or(hs, l) : NULL;
    Py_XDECREF(h);
    Py_XDECREF(l);
    Py_XDECREF(sh);
    Py_XDECREF(hs);
    PyObject *u =
        v ? PyBaseObject_Type.tp_new((PyTypeObject *)k->cls, k->empty, NULL)
          : NULL;
    if (u != NULL &&
        (PyObject_GenericSetAttr(u, k->int_name, v) < 0 ||
         PyObject_GenericSetAttr(u, k->safe_name, k->unknown) < 0)) {
        Py_CLEAR(u);
    }
    Py_XDECREF(v);
    return u;
}

PyObject *
dfb_uuids_from_bytes(PyObject *arr)
{
    uuid_kit k;
    if (uuid_kit_init(&k) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    PyObject **o = PyArray_DATA((PyArrayObject *)arr);
    const npy_intp n = PyArray_DIM((PyArrayObject *)arr, 0);
    for (npy_intp i = 0; i < n; i++) {
        if (o[i] == Py_None) {
            continue;
        }
        PyObject *u =
            uuid_from_16(&k, (const unsigned char *)PyBytes_AS_STRING(o[i]));
        if (u == NULL) {
            Py_CLEAR(arr);
            break;
        }
        Py_SETREF(o[i], u);
    }
    uuid_kit_clear(&k);
    return arr;
}
