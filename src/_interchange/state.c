/* dfbuffer: the module definition and the state accessors every file
 * shares, and the NumPy C API table (this file imports it).
 *
 * module.c fills in the definition's slots, traverse, clear and free (they
 * name what every other file defines) before PyModuleDef_Init; this file
 * depends on no other file of the extension.
 */
#define DFB_IMPORT_ARRAY
#include "dfbuffer/common.h"

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
