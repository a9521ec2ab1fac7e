/* dfbuffer: the uuid kernel: 16-byte values of the arrow.uuid extension
 * (the type table's DFB_CONV_UUID) to object arrays of uuid.UUID.
 *
 * The objects are made as the uuid module's own constructors make them
 * (object.__new__, then the two slots set) while uuid.UUID is the class
 * that allows it, else by calling the class.
 */
#include "common.h"
#include "sizes.h"
#include "model.h"
#include "kernels.h"

#include <string.h>

/* What a uuid.UUID needs: the class (uuid.UUID as it is at call time),
   the names of its two slots, SafeUUID.unknown (UUID(bytes=...)'s
   is_safe) and, for the constructor, the keyword name "bytes".  `fast` is
   1 when the class passed slots_class_ok: its objects are then made as the
   uuid module's own constructors make them, without calling it. */
typedef struct {
    PyObject *cls, *int_name, *safe_name, *unknown, *empty, *bytes_kw;
    int fast;
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
    Py_CLEAR(k->bytes_kw);
}

/* Returns 1 when `cls`'s attribute `name` is a slot (a member descriptor
   of its layout), 0 when not, -1 with an exception set. */
static int
is_slot(PyObject *cls, PyObject *name)
{
    PyObject *d = PyObject_GetAttr(cls, name);
    if (d == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return -1;
        }
        PyErr_Clear();
        return 0;
    }
    const int r = Py_IS_TYPE(d, &PyMemberDescr_Type);
    Py_DECREF(d);
    return r;
}

/* Returns 1 when objects of `cls` can be made without calling it, as
   uuid.UUID's are (object.__new__, then its slots set): a real class (of
   the plain metaclass) whose __new__ is object's, whose `int` and
   `is_safe` are slots of its layout.  Anything else that uuid.UUID may
   have been replaced by (functools.partial: a class with a __new__ of its
   own, which object.__new__ would leave uninitialised) is 0 and gets
   called.  Returns -1 with an exception set. */
static int
slots_class_ok(const uuid_kit *k)
{
    if (!PyType_CheckExact(k->cls)) {
        return 0;
    }
    PyTypeObject *t = (PyTypeObject *)k->cls;
    if (t->tp_new != PyBaseObject_Type.tp_new ||
        (t->tp_flags & Py_TPFLAGS_HEAPTYPE) == 0) {
        return 0;
    }
    int r = is_slot(k->cls, k->int_name);
    return r <= 0 ? r : is_slot(k->cls, k->safe_name);
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
    k->bytes_kw = Py_BuildValue("(s)", "bytes");
    if (k->cls == NULL || k->unknown == NULL || k->int_name == NULL ||
        k->safe_name == NULL || k->empty == NULL || k->bytes_kw == NULL) {
        uuid_kit_clear(k);
        return -1;
    }
    k->fast = slots_class_ok(k);
    if (k->fast < 0) {
        uuid_kit_clear(k);
        return -1;
    }
    return 0;
}

/* The 128-bit big-endian unsigned integer at `b` as a Python int (one
   allocation).  Returns a new reference, or NULL with an exception. */
static PyObject *
int_from_16(const unsigned char *b)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyLong_FromUnsignedNativeBytes(
        b, 16, Py_ASNATIVEBYTES_BIG_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER);
#else
    /* 32 hex digits: a power-of-two base, parsed in one linear pass */
    static const char hex[] = "0123456789abcdef";
    char s[33];
    for (int i = 0; i < 16; i++) {
        s[2 * i] = hex[b[i] >> 4];
        s[2 * i + 1] = hex[b[i] & 15];
    }
    s[32] = 0;
    return PyLong_FromString(s, NULL, 16);
#endif
}

/* uuid.UUID(bytes=b) for the 16 bytes `b`: for a class that passed
   slots_class_ok, as the uuid module's own constructors make it
   (object.__new__, then its two slots set with object.__setattr__), else
   by calling the class.  Returns a new reference, or NULL with an
   exception set. */
static PyObject *
uuid_from_16(const uuid_kit *k, const unsigned char *b)
{
    if (!k->fast) {
        PyObject *arg = PyBytes_FromStringAndSize((const char *)b, 16);
        PyObject *u =
            arg ? PyObject_Vectorcall(k->cls, &arg, 0, k->bytes_kw) : NULL;
        Py_XDECREF(arg);
        return u;
    }
    PyObject *v = int_from_16(b);
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

/* Fills `o` (n slots, all NULL) with uuid.UUID objects (as
   UUID(bytes=...) makes them) of the n 16-byte values at `p`, None where
   isnull[i].  Returns 0, or -1 with an exception set (the slots filled so
   far hold new references, the rest NULL). */
static int
uuids_fill(const char *p, int64_t n, const uint8_t *isnull, PyObject **o)
{
    uuid_kit k;
    if (uuid_kit_init(&k) < 0) {
        return -1;
    }
    /* The UUIDs are GC-tracked but cannot form cycles: a collection run by
       their allocations would only walk them again and again (most of the
       time of a large column), so the collector waits until the loop ends.
       The fast loop runs no Python code (object.__new__ and the slots' own
       setters); the other calls the class, with the collector as it is. */
    const int gc_was_on = k.fast ? PyGC_Disable() : 0;
    int rc = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnull != NULL && isnull[i]) {
            o[i] = Py_NewRef(Py_None);
            continue;
        }
        o[i] = uuid_from_16(&k, (const unsigned char *)p + 16 * i);
        if (o[i] == NULL) {
            rc = -1;
            break;
        }
    }
    if (gc_was_on) {
        PyGC_Enable();
    }
    uuid_kit_clear(&k);
    return rc;
}

PyObject *
dfb_uuids_to_object_array(const dfb_column *c, const uint8_t *isnull)
{
    PyArrayObject *out =
        dfb_new_array(PyArray_DescrFromType(NPY_OBJECT), c->length);
    if (out == NULL || c->length == 0) {
        return (PyObject *)out;
    }
    /* a UUID and its int take about 112 bytes */
    int64_t est;
    const int on = dfb_objects_prefault_begin(
        dfb_checked_mul(c->length, 112, &est) < 0 ? INT64_MAX : est);
    const int rc = uuids_fill(c->data.ptr + c->offset * 16, c->length, isnull,
                              PyArray_DATA(out));
    dfb_objects_prefault_end(on);
    if (rc < 0) {
        Py_DECREF(out); /* NULL slots are skipped by the dealloc */
        return NULL;
    }
    return (PyObject *)out;
}
