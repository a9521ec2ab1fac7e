// A C++ consumer of dfbuffer's C API: a Buffer over a std::vector the
// consumer owns (deleted by a capsule destructor), and the info struct.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "dfbuffer/dfbuffer.h"

#include <cstdint>
#include <vector>

#ifndef CONSUMER_NAME
#define CONSUMER_NAME capi_consumer_cpp
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static long vectors_freed = 0;

static void
vector_free(PyObject *cap)
{
    delete static_cast<std::vector<std::int16_t> *>(
        PyCapsule_GetPointer(cap, "consumer_cpp.vector"));
    vectors_freed++;
}

// make(n) -> Buffer of n int16 0, 1, ... in a std::vector.
static PyObject *
make(PyObject *, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n < 0) {
        return PyErr_Occurred() ? nullptr : PyLong_FromLong(-1);
    }
    auto *v = new std::vector<std::int16_t>(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; i++) {
        (*v)[static_cast<size_t>(i)] = static_cast<std::int16_t>(i);
    }
    PyObject *cap = PyCapsule_New(v, "consumer_cpp.vector", vector_free);
    if (cap == nullptr) {
        delete v;
        return nullptr;
    }
    PyObject *b = DfBuffer_New(v->data(), n * 2, cap, "<i2", 1, &n, nullptr,
                               DFBUFFER_DEVICE_CPU, 0, 0);
    Py_DECREF(cap);
    return b;
}

// ndim_itemsize(buffer) -> (ndim, itemsize) through DfBuffer_GetInfo.
static PyObject *
ndim_itemsize(PyObject *, PyObject *buf)
{
    DfBuffer_Info info;
    if (DfBuffer_GetInfo(buf, &info) < 0) {
        return nullptr;
    }
    return Py_BuildValue("(in)", info.ndim, info.itemsize);
}

static PyObject *
freed(PyObject *, PyObject *)
{
    return PyLong_FromLong(vectors_freed);
}

static PyMethodDef methods[] = {
    {"make", make, METH_O, nullptr},
    {"ndim_itemsize", ndim_itemsize, METH_O, nullptr},
    {"freed", freed, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

static PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,
    STR(CONSUMER_NAME),
    nullptr,
    -1,
    methods,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

PyMODINIT_FUNC
CAT(PyInit_, CONSUMER_NAME)(void)
{
    if (import_dfbuffer() < 0) {
        return nullptr;
    }
    return PyModule_Create(&moddef);
}
