/* dfbuffer: structs="flatten" (see dfbuffer/nested.h): the leaves of a
 * table's struct columns as entries named `parent.child`, the columns=
 * selection over them (a leaf, or a struct and every leaf below it), and a
 * leaf chunk described for to_matrix with its structs' null rows added to
 * its validity.
 */
#include "common.h"
#include "arrow.h"
#include "model.h"
#include "nested.h"
#include "bitmap.h"
#include "mem.h"
#include "types.h"

#include <string.h>

int
dfb_nested_is_pandas_interval(const struct ArrowSchema *s, const char **meta,
                              int32_t *meta_len)
{
    const char *m = NULL;
    int32_t m_len = 0;
    if (s == NULL || dfb_arrow_format_type(s->format) != DFB_T_STRUCT ||
        s->n_children != 2 || s->children == NULL || s->dictionary != NULL ||
        dfb_metadata_extension(s->metadata, &m, &m_len) !=
            DFB_EXT_PANDAS_INTERVAL) {
        return 0;
    }
    static const char *const bounds[2] = {"left", "right"};
    for (int k = 0; k < 2; k++) {
        const struct ArrowSchema *ch = s->children[k];
        if (ch == NULL || ch->name == NULL || strcmp(ch->name, bounds[k])) {
            return 0;
        }
    }
    if (meta != NULL) {
        *meta = m;
        *meta_len = m_len;
    }
    return 1;
}

/* Returns 1 if schema `s` is a struct that flattening opens (not pandas'
   Intervals, which stay whole). */
static int
is_open_struct(const struct ArrowSchema *s)
{
    return s != NULL && dfb_arrow_format_type(s->format) == DFB_T_STRUCT &&
           s->dictionary == NULL &&
           !dfb_nested_is_pandas_interval(s, NULL, NULL);
}

/* Appends the entry (name, c, path, ancestors) to `list`.  Returns 0, or
   -1 with an exception. */
static int
add_entry(PyObject *list, PyObject *name, int64_t c, PyObject *path,
          PyObject *anc)
{
    PyObject *t = Py_BuildValue("(OLOO)", name, (long long)c, path, anc);
    int rc = t != NULL ? PyList_Append(list, t) : -1;
    Py_XDECREF(t);
    return rc;
}

/* Adds the leaves of struct schema `s` (column `c`, reached by `path`,
   named `prefix`, below the struct names `anc`) to `list`.  Returns 0,
   or -1 with an exception. */
static int
add_leaves(PyObject *list, const struct ArrowSchema *s, int64_t c,
           PyObject *prefix, PyObject *path, PyObject *anc, int depth)
{
    if (depth >= DFB_NESTED_MAX_DEPTH) {
        PyErr_SetString(PyExc_ValueError,
                        "structs nested deeper than 64 levels");
        return -1;
    }
    if (s->n_children > 0 && s->children == NULL) {
        PyErr_SetString(PyExc_ValueError, "a struct schema without children");
        return -1;
    }
    Py_ssize_t na = PyTuple_GET_SIZE(anc), np = PyTuple_GET_SIZE(path);
    PyObject *anc2 = PyTuple_New(na + 1);
    if (anc2 == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < na; i++) {
        PyTuple_SET_ITEM(anc2, i, Py_NewRef(PyTuple_GET_ITEM(anc, i)));
    }
    PyTuple_SET_ITEM(anc2, na, Py_NewRef(prefix));
    int rc = 0;
    for (int64_t k = 0; rc == 0 && k < s->n_children; k++) {
        const struct ArrowSchema *ch = s->children[k];
        const char *nm = ch != NULL && ch->name != NULL ? ch->name : "";
        PyObject *key = PyUnicode_FromFormat("%U.%s", prefix, nm);
        PyObject *path2 = key != NULL ? PyTuple_New(np + 1) : NULL;
        PyObject *kk = path2 != NULL ? PyLong_FromLongLong(k) : NULL;
        if (kk == NULL) {
            Py_XDECREF(key);
            Py_XDECREF(path2);
            rc = -1;
            break;
        }
        for (Py_ssize_t i = 0; i < np; i++) {
            PyTuple_SET_ITEM(path2, i, Py_NewRef(PyTuple_GET_ITEM(path, i)));
        }
        PyTuple_SET_ITEM(path2, np, kk);
        rc = is_open_struct(ch)
                 ? add_leaves(list, ch, c, key, path2, anc2, depth + 1)
                 : add_entry(list, key, c, path2, anc2);
        Py_DECREF(key);
        Py_DECREF(path2);
    }
    Py_DECREF(anc2);
    return rc;
}

PyObject *
dfb_nested_flat_entries(const arrow_import *imp, int is_table, int open,
                        const uint8_t *skip)
{
    const int64_t ncols = is_table ? imp->schema.n_children : 1;
    PyObject *list = PyList_New(0), *empty = PyTuple_New(0);
    for (int64_t c = 0; list != NULL && empty != NULL && c < ncols; c++) {
        if (skip != NULL && skip[c]) {
            continue;
        }
        const struct ArrowSchema *s =
            is_table ? imp->schema.children[c] : &imp->schema;
        PyObject *key =
            PyUnicode_FromString(dfb_arrow_column_name(imp, is_table, c));
        int rc = key == NULL ? -1
                 : is_table && open && is_open_struct(s)
                     ? add_leaves(list, s, c, key, empty, empty, 0)
                     : add_entry(list, key, c, empty, empty);
        Py_XDECREF(key);
        if (rc < 0) {
            Py_CLEAR(list);
        }
    }
    Py_XDECREF(empty);
    if (empty == NULL) {
        Py_CLEAR(list);
    }
    return list;
}

/* The entries of `entries` a name selects, appended to `out`: the entry
   of that name, or every leaf below the struct of that name.  Returns 0,
   or -1 with KeyError (no such name) or ValueError (a name several
   entries have, or both an entry and a struct). */
static int
select_one(PyObject *entries, PyObject *key, PyObject *out)
{
    Py_ssize_t n = PyList_GET_SIZE(entries), exact = 0, below = 0;
    PyObject *hit = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        int eq = PyUnicode_Compare(PyTuple_GET_ITEM(e, 0), key) == 0;
        int in = eq ? 0 : PySequence_Contains(PyTuple_GET_ITEM(e, 3), key);
        if (PyErr_Occurred() || in < 0) {
            return -1;
        }
        exact += eq;
        below += in;
        hit = eq ? e : hit;
    }
    if (exact > 1 || (exact == 1 && below > 0)) {
        PyErr_Format(PyExc_ValueError,
                     "column name %R is ambiguous with structs='flatten': "
                     "%s",
                     key,
                     exact > 1 ? "several columns have it"
                               : "a column and a struct have it");
        return -1;
    }
    if (exact == 1) {
        return PyList_Append(out, hit);
    }
    if (below == 0) {
        PyErr_Format(PyExc_KeyError, DFB_COLUMNS_KEY_ERROR, key);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        int in = PySequence_Contains(PyTuple_GET_ITEM(e, 3), key);
        if (in < 0 || (in > 0 && PyList_Append(out, e) < 0)) {
            return -1;
        }
    }
    return 0;
}

PyObject *
dfb_nested_flat_select(PyObject *entries, PyObject *select)
{
    PyObject *out = NULL, *seen = NULL, *seq = NULL;
    if (select == NULL || select == Py_None) {
        /* every entry: no two may share a name */
        seen = PySet_New(NULL);
        for (Py_ssize_t i = 0; seen != NULL && i < PyList_GET_SIZE(entries);
             i++) {
            PyObject *key = PyTuple_GET_ITEM(PyList_GET_ITEM(entries, i), 0);
            int has = PySet_Contains(seen, key);
            if (has != 0 || PySet_Add(seen, key) < 0) {
                if (has > 0) {
                    PyErr_Format(PyExc_ValueError,
                                 "duplicate column name %R after flattening "
                                 "structs",
                                 key);
                }
                Py_CLEAR(seen);
            }
        }
        out = seen != NULL ? Py_NewRef(entries) : NULL;
        Py_XDECREF(seen);
        return out;
    }
    if (PyUnicode_Check(select) || PyBytes_Check(select)) {
        PyErr_SetString(PyExc_TypeError,
                        "columns must be a sequence of column names, not a "
                        "single string");
        return NULL;
    }
    /* our own copy: an item's __str__ may change the caller's list */
    seq = PySequence_Tuple(select);
    out = seq != NULL ? PyList_New(0) : NULL;
    for (Py_ssize_t k = 0; out != NULL && k < PyTuple_GET_SIZE(seq); k++) {
        PyObject *item = PyTuple_GET_ITEM(seq, k);
        PyObject *key =
            PyUnicode_Check(item) ? Py_NewRef(item) : PyObject_Str(item);
        if (key == NULL || select_one(entries, key, out) < 0) {
            Py_CLEAR(out);
        }
        Py_XDECREF(key);
    }
    Py_XDECREF(seq);
    return out;
}

int
dfb_nested_flat_path(PyObject *entry, int64_t *c, int64_t *path, int *depth)
{
    PyObject *p = PyTuple_GET_ITEM(entry, 2);
    *c = PyLong_AsLongLong(PyTuple_GET_ITEM(entry, 1));
    *depth = (int)PyTuple_GET_SIZE(p);
    for (int k = 0; k < *depth; k++) {
        path[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(p, k));
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* Replaces the validity of described chunk `col` by a new bitmap (kept
   by `keep`) that is also null where rowmask `pm` says.  Returns 0, or
   -1 with an exception. */
static int
add_row_nulls(dfb_column *col, PyArrayObject *pm, PyObject *keep)
{
    const int64_t off = col->offset, n = col->length;
    const uint8_t *old =
        col->validity.ptr != NULL && col->null_kind == DFB_NULL_USE_BITMASK
            ? (const uint8_t *)col->validity.ptr
            : NULL;
    if (col->validity.ptr != NULL && old == NULL) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "a flattened struct field whose nulls are not a "
                        "bitmap");
        return -1;
    }
    if (PyArray_DIM(pm, 0) != n) {
        PyErr_SetString(PyExc_ValueError,
                        "a struct field shorter than its struct");
        return -1;
    }
    const int64_t nbytes = (off + n) / 8 + 1;
    PyObject *buf = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)nbytes);
    if (buf == NULL || PyList_Append(keep, buf) < 0) {
        Py_XDECREF(buf);
        return -1;
    }
    Py_DECREF(buf); /* `keep` holds it */
    uint8_t *bits = (uint8_t *)PyBytes_AS_STRING(buf);
    const uint8_t *null = PyArray_DATA(pm);
    int64_t nnull = 0;
    dfb_memset(bits, 0, (size_t)nbytes);
    for (int64_t i = 0; i < n; i++) {
        const int64_t j = off + i;
        const int valid =
            !null[i] && (old == NULL || ((old[j >> 3] >> (j & 7)) & 1));
        bits[j >> 3] |= (uint8_t)(valid << (j & 7));
        nnull += !valid;
    }
    col->validity.ptr = (const char *)bits;
    col->validity.size = nbytes;
    col->validity.owner = NULL;
    col->null_kind = DFB_NULL_USE_BITMASK;
    col->null_value = 0;
    col->null_count = nnull;
    return 0;
}

int
dfb_nested_describe_leaf(dfb_state *st, const arrow_import *imp, int is_table,
                         Py_ssize_t b, int64_t c, const int64_t *path,
                         int depth, dfb_column *col, dfb_column *dict,
                         ref_list *refs, PyObject *keep, const char *name)
{
    dfb_nested_ctx cx = {0};
    cx.st = st;
    cx.refs = refs;
    cx.name = name;
    cx.node = dfb_nested_node;
    arrow_node nd;
    PyArrayObject *pm = NULL;
    int rc = -1;
    if (dfb_arrow_import_node(imp, is_table, b, c, &nd) == 0 &&
        dfb_nested_walk_path(&cx, &nd, path, depth, &pm) == 0 &&
        dfb_arrow_describe_node(st, &nd, col, dict, NULL, refs, DFB_VIEWS_KEEP,
                                name) == 0) {
        rc = pm != NULL ? add_row_nulls(col, pm, keep) : 0;
    }
    Py_XDECREF(pm);
    return rc;
}
