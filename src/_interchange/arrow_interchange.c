/* dfbuffer: _arrow_import, the Python view of an Arrow import that
 * dfbuffer.to_interchange builds its interchange objects from.
 *
 * Nothing but module.c depends on this file.
 */
#include "dfbuffer/common.h"
#include "dfbuffer/args.h"
#include "dfbuffer/buffer.h"
#include "dfbuffer/arrow.h"
#include "dfbuffer/arrow_device.h"
#include "dfbuffer/arrow_internal.h"
#include "dfbuffer/probe.h"
#include "dfbuffer/convert.h"
#include "format.h"
#include "offsets.h"
#include "dfbuffer/frame.h"
#include "dfbuffer/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Python view of an import (for dfbuffer.to_interchange)               */
/* ------------------------------------------------------------------ */

/* Returns a new dict describing one chunk (see _arrow_import's doc), or
   NULL with an exception. */
static PyObject *
chunk_dict(const dfb_column *col)
{
    PyObject *dict = Py_None;
    Py_INCREF(dict);
    if (col->fmt.type == DFB_T_DICTIONARY) {
        Py_DECREF(dict);
        dict = chunk_dict(col->categories);
        if (dict == NULL) {
            return NULL;
        }
    }
#define OWNER(span) ((span).owner ? (span).owner : Py_None)
    return Py_BuildValue("{sLsLsLsOsOsOsN}", "length", (long long)col->length,
                         "offset", (long long)col->offset, "null_count",
                         (long long)col->null_count, "validity",
                         OWNER(col->validity), "offsets", OWNER(col->offsets),
                         "data", OWNER(col->data), "dictionary", dict);
#undef OWNER
}

/* Returns the format string a described schema is exported under: "U"
   for decoded string views, else the schema's own.  New reference. */
static PyObject *
exported_format(const struct ArrowSchema *s, int decode)
{
    if (decode && strcmp(s->format, "vu") == 0) {
        return PyUnicode_FromString("U");
    }
    return PyUnicode_FromString(s->format);
}

PyDoc_STRVAR(
    arrow_import_doc,
    "_arrow_import(obj, allow_copy=True)\n--\n\n"
    "Private helper of dfbuffer.to_interchange: import an Arrow PyCapsule\n"
    "producer.  Returns (is_table, columns, chunks): columns is a list of\n"
    "(name, format, dictionary_format or None, ordered, nullable) and chunks\n"
    "a list (one per record batch) of lists (one per column) of dicts\n"
    "{length, offset, null_count, validity, offsets, data, dictionary} whose\n"
    "buffers are dfbuffer.Buffer objects over the Arrow memory (owner: the\n"
    "holder capsule of the imported array), or {length, error} when the\n"
    "column cannot be described (the exception to raise on use).");

/* _arrow_import(obj, allow_copy=True): see the docstring.  Returns a new
   tuple or NULL with an exception set. */
PyObject *
arrow_import_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    static const char *const kw[] = {"obj", "allow_copy", NULL};
    static const dfb_argspec spec = {"_arrow_import", kw, 2, 1};
    PyObject *a[2] = {NULL, NULL};
    int allow_copy = 1;
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0 ||
        dfb_parse_flag(a[1], &allow_copy) < 0) {
        return NULL;
    }
    PyObject *obj = a[0];
    dfb_state *st = dfb_state_from_module(module);
    arrow_import imp = {0};
    ref_list refs = {0};
    PyObject *columns = NULL, *chunks = NULL, *result = NULL;
    imp.accept_device = 1;
    uint8_t *skip = NULL;
    if (dfb_arrow_import_producer(st, obj, &imp) < 0) {
        goto done;
    }
    if (imp.device.device_type != kDLCPU) {
        result = dfb_arrow_device_describe(st, &imp.schema, imp.arrays,
                                           imp.holders, imp.n, imp.device);
        goto done;
    }
    int is_table = dfb_arrow_import_is_table(&imp);
    if (is_table && dfb_arrow_validate_table(&imp) < 0) {
        goto done;
    }
    int64_t ncols = is_table ? imp.schema.n_children : 1;
    /* pandas' index stored as columns (schema metadata "pandas") */
    int64_t nkept = ncols;
    skip = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, 1);
    if (skip == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (is_table) {
        int nskip = dfb_arrow_index_columns(&imp.schema, skip);
        if (nskip < 0) {
            goto done;
        }
        nkept -= nskip;
    }
    columns = PyList_New(0);
    chunks = PyList_New(0);
    if (columns == NULL || chunks == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < ncols; c++) {
        if (skip[c]) {
            continue;
        }
        const struct ArrowSchema *s =
            is_table ? imp.schema.children[c] : &imp.schema;
        PyObject *dfmt = Py_None;
        Py_INCREF(dfmt);
        if (s->dictionary != NULL && s->dictionary->format != NULL) {
            Py_DECREF(dfmt);
            dfmt = exported_format(s->dictionary, allow_copy);
            if (dfmt == NULL) {
                goto done;
            }
        }
        PyObject *item = Py_BuildValue(
            "(sNNOO)", dfb_arrow_column_name(&imp, is_table, c),
            exported_format(s, allow_copy), dfmt,
            (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? Py_True : Py_False,
            (s->flags & ARROW_FLAG_NULLABLE) ? Py_True : Py_False);
        if (item == NULL || PyList_Append(columns, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    for (Py_ssize_t b = 0; b < imp.n; b++) {
        PyObject *row = PyList_New(nkept);
        if (row == NULL || PyList_Append(chunks, row) < 0) {
            Py_XDECREF(row);
            goto done;
        }
        Py_DECREF(row);
        for (int64_t c = 0, k = 0; c < ncols; c++) {
            if (skip[c]) {
                continue;
            }
            arrow_node nd;
            dfb_column col, dict;
            if (dfb_arrow_import_node(&imp, is_table, b, c, &nd) < 0) {
                goto done;
            }
            PyObject *d = NULL;
            if (dfb_arrow_describe_node(
                    st, &nd, &col, &dict, &refs,
                    allow_copy ? DFB_VIEWS_COPY : 0,
                    dfb_arrow_column_name(&imp, is_table, c)) < 0) {
                if (!PyErr_ExceptionMatches(PyExc_NotImplementedError) &&
                    !PyErr_ExceptionMatches(PyExc_RuntimeError)) {
                    goto done;
                }
                /* unsupported here: raised when the column is used */
                PyObject *v = dfb_err_take();
                d = Py_BuildValue("{sLsN}", "length", (long long)nd.length,
                                  "error", v);
            }
            else {
                d = chunk_dict(&col);
            }
            if (d == NULL) {
                goto done;
            }
            PyList_SET_ITEM(row, k++, d);
        }
    }
    result =
        Py_BuildValue("(OOO)", is_table ? Py_True : Py_False, columns, chunks);
done:
    PyMem_Free(skip);
    Py_XDECREF(columns);
    Py_XDECREF(chunks);
    dfb_arrow_refs_clear(&refs);
    dfb_arrow_import_clear(&imp);
    return result;
}

PyMethodDef dfb_arrow_interchange_methods[] = {
    {"_arrow_import", (PyCFunction)(void (*)(void))arrow_import_py,
     METH_FASTCALL | METH_KEYWORDS, arrow_import_doc},
    {NULL},
};
