/* dfbuffer: the Arrow fallback of Buffer.from_object: a Buffer over the
 * values of a 1-D fixed-width Arrow array, on the CPU or on a device (the
 * device half of the PyCapsule interface; nothing is read there).
 */
#include "common.h"
#include "model.h"
#include "arrow.h"
#include "exchange.h"
#include "format.h"
#include "offsets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Buffer.from_object fallback                                          */
/* ------------------------------------------------------------------ */

PyObject *
dfb_arrow_buffer_from_object(dfb_state *st, PyObject *obj, PyObject *dtype)
{
    arrow_import imp = {.st = st};
    PyObject *result = NULL;
    imp.accept_device = 1;
    if (dfb_arrow_import_producer(st, obj, &imp) < 0) {
        goto done;
    }
    if (imp.n != 1) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Buffer.from_object needs exactly one Arrow chunk, got "
                     "%zd",
                     imp.n);
        goto done;
    }
    dfb_format f;
    if (dfb_format_parse_arrow(imp.schema.format, &f) < 0 ||
        imp.schema.dictionary != NULL || dfb_format_itemsize(&f) <= 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Buffer.from_object wraps fixed-width primitive Arrow "
                     "arrays only, not format '%s'",
                     imp.schema.format);
        goto done;
    }
    /* the values only: the checks of every import, no span of its own */
    arrow_node nd;
    int64_t end;
    dfb_error err;
    dfb_code rc;
    if (dfb_arrow_import_node(&imp, 0, 0, 0, &nd) < 0) {
        goto done;
    }
    rc = dfb_arrow_check_node(nd.schema, nd.array, nd.offset, nd.length, "",
                              &f, &end, &err);
    if (rc != DFB_OK) {
        dfb_arrow_raise(rc, &err);
        goto done;
    }
    int itemsize = dfb_format_itemsize(&f);
    PyArray_Descr *stored = dfb_arrow_stored_descr(&f);
    if (stored == NULL) {
        goto done;
    }
    PyArray_Descr *d = dfb_parse_dtype(dtype, stored);
    Py_DECREF(stored);
    if (d == NULL) {
        goto done;
    }
    if (PyDataType_ELSIZE(d) != itemsize) {
        PyErr_Format(
            PyExc_ValueError, "dtype %R has itemsize %zd, the Arrow values %d",
            (PyObject *)d, (Py_ssize_t)PyDataType_ELSIZE(d), itemsize);
        Py_DECREF(d);
        goto done;
    }
    /* bounded: offset + length times itemsize was checked to fit */
    const char *values = nd.array->buffers[1];
    char *start = nd.length == 0 || values == NULL
                      ? NULL
                      : (char *)values + nd.offset * itemsize;
    /* bounded: within offset + length times itemsize */
    result = dfb_buffer_new(st, start, (Py_ssize_t)(nd.length * itemsize),
                            nd.holder, d, 1, NULL, NULL, nd.device, 1,
                            DFB_NATIVE_ARROW);
    Py_DECREF(d);
done:
    dfb_arrow_import_clear(&imp);
    return result;
}
