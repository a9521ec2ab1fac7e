/* dfbuffer: the frame description shared by to_matrix and the walks: a
 * dfb_frame's allocation and release and the columns= selection.  (Moved
 * from matrix.c, so that the interchange and Arrow walks that fill a frame
 * do not depend on matrix.c, which uses them.)
 */
#include "common.h"
#include "model.h"
#include "args.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Frames                                                               */
/* ------------------------------------------------------------------ */

int
dfb_frame_init(dfb_frame *f, Py_ssize_t ncols)
{
    f->nrows = -1;
    f->ncols = ncols;
    f->cols =
        PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, sizeof(dfb_frame_column));
    f->keep = PyList_New(0);
    if (f->cols == NULL || f->keep == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        return -1;
    }
    return 0;
}

void
dfb_frame_clear(dfb_frame *f)
{
    if (f->cols != NULL) {
        for (Py_ssize_t i = 0; i < f->ncols; i++) {
            Py_CLEAR(f->cols[i].name);
            PyMem_Free(f->cols[i].chunks);
        }
        PyMem_Free(f->cols);
    }
    Py_CLEAR(f->keep);
    memset(f, 0, sizeof(*f));
    f->nrows = -1;
}

void
dfb_frame_drop(dfb_frame *f, Py_ssize_t k)
{
    Py_CLEAR(f->cols[k].name);
    PyMem_Free(f->cols[k].chunks);
    for (Py_ssize_t i = k + 1; i < f->ncols; i++) {
        f->cols[i - 1] = f->cols[i];
    }
    f->ncols--;
    memset(&f->cols[f->ncols], 0, sizeof(dfb_frame_column));
}

int
dfb_frame_select(PyObject *names, PyObject *select, Py_ssize_t **idx,
                 Py_ssize_t *n)
{
    Py_ssize_t nnames = PyList_GET_SIZE(names);
    *idx = NULL;
    *n = 0;
    if (select == NULL || select == Py_None) {
        *idx = PyMem_Malloc((nnames > 0 ? (size_t)nnames : 1) *
                            sizeof(Py_ssize_t));
        if (*idx == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < nnames; i++) {
            (*idx)[i] = i;
        }
        *n = nnames;
        return 0;
    }
    if (PyUnicode_Check(select) || PyBytes_Check(select)) {
        PyErr_SetString(PyExc_TypeError, DFB_COLUMNS_STR_ERROR);
        return -1;
    }
    /* our own copy: an item's __str__, __hash__ or __eq__ may change the
       caller's list while we walk it */
    PyObject *seq = dfb_parse_items(select, DFB_COLUMNS_SEQ_ERROR);
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t ns = PySequence_Fast_GET_SIZE(seq);
    *idx = PyMem_Malloc((ns > 0 ? (size_t)ns : 1) * sizeof(Py_ssize_t));
    if (*idx == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    /* name -> position (None where several columns share the name) */
    PyObject *pos = PyDict_New();
    if (pos == NULL) {
        goto fail;
    }
    for (Py_ssize_t i = 0; i < nnames; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        PyObject *had;
        int got = dfb_dict_get_ref(pos, name, &had);
        Py_XDECREF(had);
        PyObject *v = got > 0   ? Py_NewRef(Py_None)
                      : got < 0 ? NULL
                                : PyLong_FromSsize_t(i);
        if (v == NULL || PyDict_SetItem(pos, name, v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(pos);
            goto fail;
        }
        Py_DECREF(v);
    }
    for (Py_ssize_t k = 0; k < ns; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        PyObject *key =
            PyUnicode_Check(item) ? Py_NewRef(item) : PyObject_Str(item);
        if (key == NULL) {
            Py_DECREF(pos);
            goto fail;
        }
        PyObject *at;
        int got = dfb_dict_get_ref(pos, key, &at);
        if (got <= 0 || at == Py_None) {
            Py_XDECREF(at);
            if (got >= 0) {
                if (got == 0) {
                    PyErr_Format(PyExc_KeyError, DFB_COLUMNS_KEY_ERROR, key);
                }
                else {
                    PyErr_Format(PyExc_ValueError, DFB_COLUMNS_AMBIGUOUS_ERROR,
                                 key);
                }
            }
            Py_DECREF(key);
            Py_DECREF(pos);
            goto fail;
        }
        Py_DECREF(key);
        (*idx)[k] = PyLong_AsSsize_t(at);
        Py_DECREF(at);
    }
    Py_DECREF(pos);
    *n = ns;
    Py_DECREF(seq);
    return 0;
fail:
    Py_DECREF(seq);
    PyMem_Free(*idx);
    *idx = NULL;
    return -1;
}
