/* dfbuffer: UTF-8 + offsets to Python str objects.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/convert.h"

#include <string.h>

/* Returns 1 if the `n` bytes at `s` are all ASCII (< 0x80), else 0. */
static inline int
is_ascii(const char *s, int64_t n)
{
    int64_t i = 0;
    uint64_t acc = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < n; i++) {
        acc |= (uint8_t)s[i];
    }
    return (acc & UINT64_C(0x8080808080808080)) == 0;
}

/* Returns a new str from `n` UTF-8 bytes at `s`, or NULL with
   UnicodeDecodeError / MemoryError / OverflowError set. */
static inline PyObject *
decode(const char *s, int64_t n)
{
    if (n > PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_OverflowError, "string too long");
        return NULL;
    }
    if (is_ascii(s, n)) {
        PyObject *u = PyUnicode_New((Py_ssize_t)n, 127);
        if (u == NULL) {
            return NULL;
        }
        if (n > 0) {
            memcpy(PyUnicode_1BYTE_DATA(u), s, (size_t)n);
        }
        return u;
    }
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
}

PyObject *
dfb_strings_to_object_array(const char *data, const void *offsets,
                            int offset_bits, int64_t offset, int64_t length,
                            const uint8_t *isnull)
{
    npy_intp dims[1] = {(npy_intp)length};
    PyObject *arr = PyArray_SimpleNew(1, dims, NPY_OBJECT);
    if (arr == NULL) {
        return NULL;
    }
    PyObject **out = (PyObject **)PyArray_DATA((PyArrayObject *)arr);
    const int32_t *o32 = (const int32_t *)offsets + offset;
    const int64_t *o64 = (const int64_t *)offsets + offset;
    for (int64_t i = 0; i < length; i++) {
        PyObject *item;
        if (isnull != NULL && isnull[i]) {
            item = Py_NewRef(Py_None);
        }
        else {
            int64_t start, end;
            if (offset_bits == 32) {
                start = o32[i];
                end = o32[i + 1];
            }
            else {
                start = o64[i];
                end = o64[i + 1];
            }
            item = decode(data + start, end - start);
            if (item == NULL) {
                Py_DECREF(arr);
                return NULL;
            }
        }
        Py_XSETREF(out[i], item);
    }
    return arr;
}
