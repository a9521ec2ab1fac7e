/* The second file of the two-file consumer: uses the table multi_a.c
 * imported, through the shared pointer. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define DFBUFFER_API_SYMBOL capi_multi_api
#define DFBUFFER_NO_IMPORT
#include "dfbuffer/dfbuffer.h"

static unsigned char bytes[64];

/* Returns a new read-only Buffer over the first n static bytes, or NULL
   with an exception set. */
PyObject *
multi_make(Py_ssize_t n)
{
    for (int i = 0; i < 64; i++) {
        bytes[i] = (unsigned char)i;
    }
    return DfBuffer_New(bytes, n, Py_None, NULL, 0, NULL, NULL,
                        DFBUFFER_DEVICE_CPU, 0, 1);
}
