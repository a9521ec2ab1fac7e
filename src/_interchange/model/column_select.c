/* dfbuffer: the columns= selection of from_dataframe: which columns to
 * convert, and the result in the order asked for.
 */
#include "common.h"
#include "model.h"
#include "args.h"

int
dfb_colsel_init(dfb_colsel *s, PyObject *columns)
{
    s->names = NULL;
    s->wanted = NULL;
    if (columns == NULL || columns == Py_None) {
        return 0;
    }
    if (PyUnicode_Check(columns) || PyBytes_Check(columns)) {
        PyErr_SetString(PyExc_TypeError, DFB_COLUMNS_STR_ERROR);
        return -1;
    }
    /* our own copy (an item's __str__ may change the caller's list), each
       name as str(): the rule of dfb_frame_select */
    PyObject *seq = dfb_parse_items(columns, DFB_COLUMNS_SEQ_ERROR);
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    s->names = PyTuple_New(n);
    for (Py_ssize_t i = 0; s->names != NULL && i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *key =
            PyUnicode_Check(item) ? Py_NewRef(item) : PyObject_Str(item);
        if (key == NULL) {
            Py_CLEAR(s->names);
            break;
        }
        PyTuple_SET_ITEM(s->names, i, key);
    }
    Py_DECREF(seq);
    s->wanted = s->names != NULL ? PySet_New(s->names) : NULL;
    if (s->wanted == NULL) {
        dfb_colsel_clear(s);
        return -1;
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
        PyObject *v;
        int got = dfb_dict_get_ref(result, key, &v);
        if (got <= 0) {
            if (got == 0) {
                PyErr_Format(PyExc_KeyError, DFB_COLUMNS_KEY_ERROR, key);
            }
            Py_CLEAR(out);
        }
        else if (PyDict_SetItem(out, key, v) < 0) {
            Py_CLEAR(out);
        }
        Py_XDECREF(v);
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
