/* dfbuffer: the described Arrow import behind dfbuffer.to_interchange
 * (dfb_arrow_ix_*, which ixview.c builds its typed view from) and
 * _arrow_import, its Python view as dicts (for tests).
 *
 * dfb_arrow_ix_* import a producer (CPU or device), validate a table, leave
 * out pandas' index columns and describe every chunk with the describer.
 */
#include "common.h"
#include "state.h"
#include "args.h"
#include "outward.h"
#include "arrow.h"
#include "model.h"
#include "format.h"
#include "offsets.h"
#include "types.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Python view of an import (for dfbuffer.to_interchange)               */
/* ------------------------------------------------------------------ */

PyObject *
dfb_arrow_ix_format(const struct ArrowSchema *s, int decode)
{
    /* the type the protocol reports it as (string views: decoded) */
    const dfb_type t = dfb_arrow_format_type(s->format);
    const char *as = dfb_type_arrow_format(dfb_type_row_of(t)->ix_as);
    return PyUnicode_FromString(decode && as != NULL ? as : s->format);
}

int
dfb_arrow_ix_open(dfb_state *st, PyObject *obj, int allow_copy,
                  dfb_arrow_ix *x)
{
    memset(x, 0, sizeof(*x));
    x->allow_copy = allow_copy;
    x->imp.accept_device = 1;
    if (dfb_arrow_import_producer(st, obj, &x->imp) < 0) {
        return -1;
    }
    x->is_table = dfb_arrow_import_is_table(&x->imp);
    if (x->is_table && dfb_arrow_validate_table(&x->imp) < 0) {
        return -1;
    }
    x->ncols = x->is_table ? x->imp.schema.n_children : 1;
    /* pandas' index stored as columns (schema metadata "pandas") */
    x->nkept = x->ncols;
    x->skip = PyMem_Calloc(x->ncols > 0 ? (size_t)x->ncols : 1, 1);
    if (x->skip == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (x->is_table) {
        int nskip = dfb_arrow_index_columns(&x->imp.schema, x->skip);
        if (nskip < 0) {
            return -1;
        }
        x->nkept -= nskip;
    }
    return 0;
}

int
dfb_arrow_ix_open_args(PyObject *module, const dfb_argspec *spec,
                       PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, dfb_state **st, dfb_arrow_ix *x)
{
    memset(x, 0, sizeof(*x)); /* closable whatever fails below */
    PyObject *a[2] = {NULL, NULL};
    int allow_copy = 1;
    if (dfb_parse_args(spec, NULL, args, nargs, kwnames, a) < 0 ||
        dfb_parse_flag(a[1], &allow_copy) < 0) {
        return -1;
    }
    *st = dfb_state_from_module(module);
    return dfb_arrow_ix_open(*st, a[0], allow_copy, x);
}

const struct ArrowSchema *
dfb_arrow_ix_schema(const dfb_arrow_ix *x, int64_t c)
{
    return x->is_table ? x->imp.schema.children[c] : &x->imp.schema;
}

/* Describes chunk `b` of column `c` into `out`; a column that cannot be
   described here (NotImplementedError, RuntimeError) gets out->error
   instead.  Returns 0 (clear `out` with ix_chunk_clear), or -1 with an
   exception set. */
static int
ix_chunk(dfb_state *st, dfb_arrow_ix *x, Py_ssize_t b, int64_t c,
         dfb_arrow_ix_chunk *out)
{
    arrow_node nd;
    memset(out, 0, sizeof(*out));
    if (dfb_arrow_import_node(&x->imp, x->is_table, b, c, &nd) < 0) {
        return -1;
    }
    out->length = nd.length;
    if (dfb_arrow_describe_node(
            st, &nd, &out->col, &out->dict, &out->dict_error, &x->refs,
            x->allow_copy ? DFB_VIEWS_COPY : 0,
            dfb_arrow_column_name(&x->imp, x->is_table, c)) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_NotImplementedError) &&
            !PyErr_ExceptionMatches(PyExc_RuntimeError)) {
            return -1;
        }
        /* unsupported here: raised when the column is used */
        out->error = dfb_err_take();
    }
    return 0;
}

/* Drops the errors `ch` holds.  Cannot fail. */
static void
ix_chunk_clear(dfb_arrow_ix_chunk *ch)
{
    Py_CLEAR(ch->error);
    Py_CLEAR(ch->dict_error);
}

PyObject *
dfb_arrow_ix_rows(dfb_state *st, dfb_arrow_ix *x, dfb_arrow_ix_make_fn make,
                  void *ctx)
{
    PyObject *rows = PyList_New(x->imp.n);
    if (rows == NULL) {
        return NULL;
    }
    for (Py_ssize_t b = 0; b < x->imp.n; b++) {
        PyObject *row = PyList_New(x->nkept);
        if (row == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(rows, b, row);
        for (int64_t c = 0, k = 0; c < x->ncols; c++) {
            if (x->skip[c]) {
                continue;
            }
            dfb_arrow_ix_chunk ch;
            if (ix_chunk(st, x, b, c, &ch) < 0) {
                goto fail;
            }
            PyObject *o = make(ctx, &ch, (Py_ssize_t)k);
            ix_chunk_clear(&ch);
            if (o == NULL) {
                goto fail;
            }
            PyList_SET_ITEM(row, k++, o);
        }
    }
    return rows;
fail:
    Py_DECREF(rows);
    return NULL;
}

void
dfb_arrow_ix_close(dfb_arrow_ix *x)
{
    PyMem_Free(x->skip);
    x->skip = NULL;
    dfb_arrow_refs_clear(&x->refs);
    dfb_arrow_import_clear(&x->imp);
}

/* Returns a new dict describing one chunk (see _arrow_import's doc), or
   NULL with an exception. */
static PyObject *
chunk_dict(const dfb_column *col, PyObject *dict_error)
{
    PyObject *dict = Py_None;
    Py_INCREF(dict);
    if (dfb_type_has_codes(col->fmt.type)) {
        Py_DECREF(dict);
        dict = dict_error != NULL
                   ? Py_BuildValue("{sLsO}", "length",
                                   (long long)col->categories->length, "error",
                                   dict_error)
                   : chunk_dict(col->categories, NULL);
        if (dict == NULL) {
            return NULL;
        }
    }
    PyObject *nulls = col->null_count < 0
                          ? Py_NewRef(Py_None)
                          : PyLong_FromLongLong(col->null_count);
#define OWNER(span) ((span).owner ? (span).owner : Py_None)
    return Py_BuildValue("{sLsLsNsOsOsOsN}", "length", (long long)col->length,
                         "offset", (long long)col->offset, "null_count", nulls,
                         "validity", OWNER(col->validity), "offsets",
                         OWNER(col->offsets), "data", OWNER(col->data),
                         "dictionary", dict);
#undef OWNER
}

/* A dfb_arrow_ix_make_fn: the chunk dict of `ch`, or {length, error}.
   Returns a new reference or NULL with an exception. */
static PyObject *
chunk_dict_of(void *ctx, const dfb_arrow_ix_chunk *ch, Py_ssize_t k)
{
    (void)ctx;
    (void)k;
    if (ch->error != NULL) {
        return Py_BuildValue("{sLsO}", "length", (long long)ch->length,
                             "error", ch->error);
    }
    return chunk_dict(&ch->col, ch->dict_error);
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
static PyObject *
arrow_import_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    static const char *const kw[] = {"obj", "allow_copy", NULL};
    static const dfb_argspec spec = {"_arrow_import", kw, 2, 1};
    dfb_state *st;
    dfb_arrow_ix x;
    PyObject *columns = NULL, *chunks = NULL, *result = NULL;
    if (dfb_arrow_ix_open_args(module, &spec, args, nargs, kwnames, &st, &x) <
        0) {
        goto done;
    }
    columns = PyList_New(0);
    if (columns == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < x.ncols; c++) {
        if (x.skip[c]) {
            continue;
        }
        const struct ArrowSchema *s = dfb_arrow_ix_schema(&x, c);
        PyObject *dfmt = Py_None;
        Py_INCREF(dfmt);
        if (s->dictionary != NULL && s->dictionary->format != NULL) {
            Py_DECREF(dfmt);
            dfmt = dfb_arrow_ix_format(s->dictionary, x.allow_copy);
            if (dfmt == NULL) {
                goto done;
            }
        }
        PyObject *item = Py_BuildValue(
            "(sNNOO)", dfb_arrow_column_name(&x.imp, x.is_table, c),
            dfb_arrow_ix_format(s, x.allow_copy), dfmt,
            (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? Py_True : Py_False,
            (s->flags & ARROW_FLAG_NULLABLE) ? Py_True : Py_False);
        if (item == NULL || PyList_Append(columns, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    chunks = dfb_arrow_ix_rows(st, &x, chunk_dict_of, NULL);
    if (chunks == NULL) {
        goto done;
    }
    result = Py_BuildValue("(OOO)", x.is_table ? Py_True : Py_False, columns,
                           chunks);
done:
    Py_XDECREF(columns);
    Py_XDECREF(chunks);
    dfb_arrow_ix_close(&x);
    return result;
}

PyMethodDef dfb_arrow_interchange_methods[] = {
    {"_arrow_import", (PyCFunction)(void (*)(void))arrow_import_py,
     METH_FASTCALL | METH_KEYWORDS, arrow_import_doc},
    {NULL},
};
