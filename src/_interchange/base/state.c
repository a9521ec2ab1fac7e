/* dfbuffer: the module definition and the state accessors every file
 * shares, the NumPy C API table (this file imports it), and the reference
 * drop any thread may make (DLPack deleters, Arrow release callbacks).
 *
 * module.c fills in the definition's slots, traverse, clear and free (they
 * name what every other file defines) before PyModuleDef_Init; this file
 * depends on no other file of the extension.
 */
#define DFB_IMPORT_ARRAY
#include "common.h"
#include "state.h"

#include <stddef.h>

PyModuleDef dfb_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "dfbuffer._interchange",
    .m_doc = "The C core of dfbuffer: the Buffer type and the converters.",
    .m_size = sizeof(dfb_state),
};

int
dfb_numpy_import(void)
{
    return PyArray_ImportNumPyAPI();
}

dfb_state *
dfb_state_from_module(PyObject *m)
{
    return (dfb_state *)PyModule_GetState(m);
}

dfb_state *
dfb_state_from_type(PyTypeObject *tp)
{
    PyObject *m = PyType_GetModuleByDef(tp, &dfb_module_def);
    if (m == NULL) {
        return NULL;
    }
    return dfb_state_from_module(m);
}

PyObject *
dfb_enum_member(PyObject *cls, long value)
{
    return PyObject_CallFunction(cls, "l", value);
}

int
dfb_intern_strings(PyObject **out, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        out[i] = PyUnicode_InternFromString(names[i]);
        if (out[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Each field of dfb_names and its string. */
static const struct {
    size_t field;
    const char *name;
} name_table[] = {
#define NAME(f, s) {offsetof(dfb_names, f), s}
    NAME(ptr, "ptr"),
    NAME(bufsize, "bufsize"),
    NAME(dlpack_device, "__dlpack_device__"),
    NAME(size, "size"),
    NAME(offset, "offset"),
    NAME(dtype, "dtype"),
    NAME(describe_null, "describe_null"),
    NAME(num_chunks, "num_chunks"),
    NAME(get_chunks, "get_chunks"),
    NAME(get_buffers, "get_buffers"),
    NAME(describe_categorical, "describe_categorical"),
    NAME(data, "data"),
    NAME(validity, "validity"),
    NAME(offsets, "offsets"),
    NAME(categories, "categories"),
    NAME(dataframe, "__dataframe__"),
    NAME(allow_copy, "allow_copy"),
    NAME(column_names, "column_names"),
    NAME(get_column, "get_column"),
    NAME(is_dictionary, "is_dictionary"),
    NAME(null_count, "null_count"),
    NAME(length, "length"),
    NAME(nulls, "nulls"),
    NAME(arrow_c_array, "__arrow_c_array__"),
    NAME(arrow_c_stream, "__arrow_c_stream__"),
    NAME(arrow_c_device_array, "__arrow_c_device_array__"),
    NAME(arrow_c_device_stream, "__arrow_c_device_stream__"),
    NAME(cuda_array_interface, "__cuda_array_interface__"),
    NAME(array_interface, "__array_interface__"),
    NAME(dlpack, "__dlpack__"),
    NAME(dlpack_c_exchange_api, "__dlpack_c_exchange_api__"),
    NAME(requires_grad, "requires_grad"),
    NAME(array_method, "__array__"),
    NAME(arrow_array_method, "__arrow_array__"),
    NAME(copy, "copy"),
    NAME(pyarrow, "pyarrow"),
    NAME(Array, "Array"),
    NAME(ChunkedArray, "ChunkedArray"),
    NAME(is_conj, "is_conj"),
    NAME(is_neg, "is_neg"),
    NAME(pandas, "pandas"),
    NAME(DataFrame, "DataFrame"),
    NAME(RangeIndex, "RangeIndex"),
    NAME(items, "items"),
    NAME(to_numpy, "to_numpy"),
    NAME(iloc, "iloc"),
    NAME(index, "index"),
#undef NAME
};

_Static_assert(sizeof(name_table) / sizeof(name_table[0]) ==
                   sizeof(dfb_names) / sizeof(PyObject *),
               "every field of dfb_names has an entry in name_table");

int
dfb_state_names_init(dfb_state *st)
{
    for (size_t i = 0; i < sizeof(name_table) / sizeof(name_table[0]); i++) {
        PyObject **slot =
            (PyObject **)((char *)&st->str + name_table[i].field);
        if (dfb_intern_strings(slot, &name_table[i].name, 1) < 0) {
            return -1;
        }
    }
    st->tup.allow_copy_kw = PyTuple_Pack(1, st->str.allow_copy);
    st->tup.max_version_kw = Py_BuildValue("(s)", "max_version");
    st->tup.copy_kw = PyTuple_Pack(1, st->str.copy);
    st->tup.dlpack_version =
        Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
    if (st->tup.allow_copy_kw == NULL || st->tup.max_version_kw == NULL ||
        st->tup.dlpack_version == NULL || st->tup.copy_kw == NULL) {
        return -1;
    }
    return 0;
}

void
dfb_state_names_clear(dfb_state *st)
{
    for (size_t i = 0; i < sizeof(name_table) / sizeof(name_table[0]); i++) {
        Py_CLEAR(*(PyObject **)((char *)&st->str + name_table[i].field));
    }
    Py_CLEAR(st->tup.allow_copy_kw);
    Py_CLEAR(st->tup.max_version_kw);
    Py_CLEAR(st->tup.copy_kw);
    Py_CLEAR(st->tup.dlpack_version);
}

/* ------------------------------------------------------------------ */
/* The reference drop any thread may make (deleters, release callbacks)  */
/* ------------------------------------------------------------------ */

#if PY_VERSION_HEX < 0x030D0000
/* 3.11 and 3.12 have no public Py_IsFinalizing: an atexit callback (run by
   Py_FinalizeEx before it marks the runtime finalizing) sets this flag, so
   the flag is set a little *earlier* than the real state, never later.  A
   plain C int, not a Python object. */
#ifndef __STDC_NO_ATOMICS__
#include <stdatomic.h>
static atomic_int exiting;
#define EXITING_GET() atomic_load(&exiting)
#define EXITING_SET() atomic_store(&exiting, 1)
#else
static volatile int exiting;
#define EXITING_GET() (exiting)
#define EXITING_SET() (exiting = 1)
#endif

/* The atexit callback: marks the interpreter as shutting down. */
static PyObject *
at_exit(PyObject *self, PyObject *unused)
{
    EXITING_SET();
    Py_RETURN_NONE;
}

static PyMethodDef at_exit_def = {"_dfbuffer_at_exit", at_exit, METH_NOARGS,
                                  NULL};
#endif

int
dfb_exit_watch_init(PyObject *module)
{
#if PY_VERSION_HEX < 0x030D0000
    PyObject *fn = PyCFunction_NewEx(&at_exit_def, NULL, NULL);
    if (fn == NULL) {
        return -1;
    }
    PyObject *atexit = PyImport_ImportModule("atexit");
    if (atexit == NULL) {
        Py_DECREF(fn);
        return -1;
    }
    PyObject *r = PyObject_CallMethod(atexit, "register", "O", fn);
    Py_DECREF(atexit);
    Py_DECREF(fn);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
#endif
    (void)module;
    return 0;
}

/* Returns 1 once the interpreter is finalizing (3.11/3.12: once its atexit
   callbacks ran, which is a little earlier).  Safe without the GIL. */
static int
interpreter_finalizing(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return EXITING_GET();
#endif
}

void
dfb_decref_any_thread(PyObject *obj)
{
    if (obj == NULL || !Py_IsInitialized()) {
        return;
    }
    if (interpreter_finalizing()) {
        if (PyGILState_Check()) {
            Py_DECREF(obj);
        }
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(obj);
    PyGILState_Release(g);
}
