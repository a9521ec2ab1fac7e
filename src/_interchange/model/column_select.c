/* dfbuffer: the columns= selection of from_dataframe: which columns to
 * convert, and the result in the order asked for.
 */
#include "common.h"
#include "column.h"
#include "column_select.h"

int
dfb_colsel_init(dfb_colsel *s, PyObject *columns)
{
    s->names = NULL;
    s->wanted = NULL;
    if (columns == NULL || columns == Py_None) {
        return 0;
    }
    if (PyUnicode_Check(columns)) {
        PyErr_SetString(PyExc_TypeError,
                        "columns= must be a sequence of column names, not a "
                        "str");
        return -1;
    }
    s->names = PySequence_Tuple(columns);
    s->wanted = s->names != NULL ? PySet_New(s->names) : NULL;
    if (s->wanted == NULL) {
        dfb_colsel_clear(s);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(s->names); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(s->names, i))) {
            PyErr_Format(PyExc_TypeError,
                         "columns= names must be str, got %.200s",
                         Py_TYPE(PyTuple_GET_ITEM(s->names, i))->tp_name);
            dfb_colsel_clear(s);
            return -1;
        }
    }
    return 0;
}

int
dfb_colsel_wants(const dfb_colsel *s, PyObject *key)
{
    return s == NULL || s->wanted == NULL ? 1 : PySet_Contains(s->wanted, key);
}

PyObject *
dfb_colsel_finish(const dfb_colsel *s, PyObject *result)
{
    if (result == NULL || s == NULL || s->names == NULL) {
        return result;
    }
    PyObject *out = PyDict_New();
    for (Py_ssize_t i = 0; out != NULL && i < PyTuple_GET_SIZE(s->names);
         i++) {
        PyObject *key = PyTuple_GET_ITEM(s->names, i);
        PyObject *v = PyDict_GetItemWithError(result, key);
        if (v == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_Format(PyExc_KeyError, "no column named %R", key);
            }
            Py_CLEAR(out);
        }
        else if (PyDict_SetItem(out, key, v) < 0) {
            Py_CLEAR(out);
        }
    }
    Py_DECREF(result);
    return out;
}

void
dfb_colsel_clear(dfb_colsel *s)
{
    Py_CLEAR(s->names);
    Py_CLEAR(s->wanted);
}
