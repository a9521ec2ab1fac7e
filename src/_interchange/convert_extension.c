/* dfbuffer: Arrow's canonical extension types (the "ARROW:extension:name"
 * field metadata on a storage type).
 *
 * arrow.bool8 (int8 storage) converts as a zero-copy bool view;
 * arrow.uuid (16-byte fixed-size binary) as uuid.UUID objects; arrow.json
 * (a string storage), arrow.opaque and unknown extensions as their storage
 * type.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/arrow_internal.h"
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

PyObject *
dfb_uuids_from_bytes(PyObject *arr)
{
    PyObject *mod = PyImport_ImportModule("uuid");
    PyObject *cls = mod ? PyObject_GetAttrString(mod, "UUID") : NULL;
    Py_XDECREF(mod);
    PyObject *kw = cls ? Py_BuildValue("(s)", "bytes") : NULL;
    if (kw == NULL) {
        Py_XDECREF(cls);
        Py_DECREF(arr);
        return NULL;
    }
    PyObject **o = PyArray_DATA((PyArrayObject *)arr);
    const npy_intp n = PyArray_DIM((PyArrayObject *)arr, 0);
    for (npy_intp i = 0; i < n; i++) {
        if (o[i] == Py_None) {
            continue;
        }
        PyObject *args[1] = {o[i]};
        PyObject *u = PyObject_Vectorcall(cls, args, 0, kw);
        if (u == NULL) {
            Py_CLEAR(arr);
            break;
        }
        Py_SETREF(o[i], u);
    }
    Py_DECREF(kw);
    Py_DECREF(cls);
    return arr;
}
