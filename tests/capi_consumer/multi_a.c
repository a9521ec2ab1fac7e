/* A consumer of two files sharing one table pointer (DFBUFFER_API_SYMBOL):
 * this file imports the API, multi_b.c only uses it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define DFBUFFER_API_SYMBOL capi_multi_api
#include "dfbuffer/dfbuffer.h"

/* multi_b.c: a Buffer over `n` static bytes. */
PyObject *
multi_make(Py_ssize_t n);

static PyObject *
make(PyObject *m, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n < 0 && PyErr_Occurred()) {
        return NULL;
    }
    return multi_make(n);
}

static PyMethodDef methods[] = {
    {"make", make, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    "capi_multi",
    NULL,
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit_capi_multi(void)
{
    if (DfBuffer_ImportAPI() < 0) {
        return NULL;
    }
    return PyModule_Create(&moddef);
}
