/* dfbuffer: checked sizes as Python errors (see sizes.h). */
#include "sizes.h"

int
dfb_alloc_bytes(const char *name, int64_t n, int64_t isz, int64_t *out)
{
    if (dfb_checked_mul(n, isz, out) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': %lld items of %lld bytes: the size "
                     "overflows",
                     name, (long long)n, (long long)isz);
        return -1;
    }
    const int64_t limit = dfb_alloc_limit();
    if (*out > limit) {
        PyErr_Format(PyExc_MemoryError,
                     "column '%s': %lld items of %lld bytes need %lld bytes, "
                     "more than this machine's %lld",
                     name, (long long)n, (long long)isz, (long long)*out,
                     (long long)limit);
        return -1;
    }
    return 0;
}

int
dfb_check_alloc(int64_t n, int64_t itemsize)
{
    int64_t bytes;
    if (n < 0 || dfb_checked_mul(n, itemsize, &bytes) < 0 ||
        bytes > dfb_alloc_limit()) {
        PyErr_Format(PyExc_MemoryError,
                     "%lld values of %lld bytes cannot be allocated: more "
                     "than this machine's memory",
                     (long long)n, (long long)itemsize);
        return -1;
    }
    return 0;
}

PyArrayObject *
dfb_new_array(PyArray_Descr *descr, int64_t n)
{
    if (descr == NULL) {
        return NULL;
    }
    if (dfb_check_alloc(n, PyDataType_ELSIZE(descr)) < 0) {
        Py_DECREF(descr);
        return NULL;
    }
    npy_intp dims[1] = {(npy_intp)n};
    return (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, descr, 1, dims,
                                                 NULL, NULL, 0, NULL);
}
