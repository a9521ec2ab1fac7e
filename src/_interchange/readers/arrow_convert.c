/* dfbuffer: Arrow producers to NumPy: one column, a table (dict name ->
 * array), the structs a C caller moves in (the C API), and whole frames
 * described for to_matrix.
 */
#include "common.h"
#include "args.h"
#include "model.h"
#include "arrow.h"
#include "format.h"
#include "offsets.h"
#include "readers.h"
#include "pandas.h"
#include "nested.h"
#include "kernels.h"
#include "mem.h"
#include "types.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Converters                                                           */
/* ------------------------------------------------------------------ */

/* Release callback of the stand-in arrays of describe_empty (they own
   nothing). */
static void
noop_release(struct ArrowArray *a)
{
    a->release = NULL;
}

/* Describes a zero-length chunk of schema `s` (a stream without chunks),
   through describe_node on stand-in arrays without memory; a run-end
   encoded schema as its values' schema (zero rows decode to zero values,
   as a non-empty chunk decodes to its values' type).  Returns 0, or -1
   with an exception set. */
static int
describe_empty(dfb_state *st, const struct ArrowSchema *s, dfb_column *col,
               dfb_column *dict, ref_list *refs, const char *name)
{
    static const void *no_buffers[3] = {NULL, NULL, NULL};
    struct ArrowArray arr[2];
    dfb_format f;
    while (s->format != NULL && dfb_format_parse_arrow(s->format, &f) == 0 &&
           dfb_type_row_of(f.type)->layout == DFB_LAYOUT_RUN_END &&
           s->n_children == 2 && s->children != NULL &&
           s->children[1] != NULL) {
        s = s->children[1];
    }
    memset(arr, 0, sizeof(arr));
    for (int k = 0; k < 2; k++) {
        const struct ArrowSchema *ks = k == 0 ? s : s->dictionary;
        if (ks == NULL) {
            break;
        }
        if (ks->format == NULL || dfb_format_parse_arrow(ks->format, &f) < 0) {
            PyErr_Format(PyExc_NotImplementedError,
                         "column '%s': Arrow format '%s' is not supported",
                         name, ks->format ? ks->format : "(null)");
            return -1;
        }
        arr[k].n_buffers = dfb_arrow_expected_buffers(&f);
        arr[k].buffers = no_buffers;
        arr[k].release = noop_release;
    }
    if (s->dictionary != NULL) {
        arr[0].dictionary = &arr[1];
    }
    arrow_node nd = {s, &arr[0], 0, 0, Py_None, {kDLCPU, 0}};
    return dfb_arrow_describe_node(st, &nd, col, dict, NULL, refs,
                                   DFB_VIEWS_KEEP, name);
}

/* The one-chunk fast path of convert_column: a non-empty CPU chunk of a
   plain integer or float type (no extension type) without nulls (no
   validity bitmap, or a null_count of 0 over the whole array) or
   dictionary.  Makes what the
   general path makes of it (dfb_arrow_describe_node, then
   dfb_columns_to_ndarray): the same checks (dfb_arrow_check_node, first,
   as there), the same read-only span Buffer over the values buffer owned
   by the holder, and the same read-only view of [offset, offset + length)
   with that Buffer as its base; without the column description, its
   reference list and the converters' dispatch.  Returns 1 with *out set (a
   new reference, or NULL with the general path's exception set), or 0
   (nothing done) when the chunk takes the general path. */
static int
convert_plain_chunk(dfb_state *st, const arrow_import *imp, int is_table,
                    int64_t c, const char *name, PyObject **out)
{
    arrow_node nd;
    *out = NULL;
    if (imp->n != 1) {
        return 0;
    }
    if (dfb_arrow_import_node(imp, is_table, 0, c, &nd) < 0) {
        return 1; /* the general path fails here too */
    }
    const struct ArrowSchema *s = nd.schema;
    const struct ArrowArray *a = nd.array;
    /* an extension type (arrow.bool8 over int8, ...) is the general
       path's: the type table decides what it converts to */
    if (s->dictionary != NULL || nd.device.device_type != kDLCPU ||
        nd.length <= 0 ||
        dfb_metadata_extension(s->metadata, NULL, NULL) != DFB_EXT_NONE) {
        return 0;
    }
    dfb_format f;
    int64_t end, size;
    dfb_error err;
    dfb_code rc =
        dfb_arrow_check_node(s, a, nd.offset, nd.length, name, &f, &end, &err);
    if (rc != DFB_OK) {
        dfb_arrow_raise(rc, &err);
        return 1;
    }
    const int whole = nd.offset == a->offset && nd.length == a->length;
    const int itemsize = dfb_format_itemsize(&f);
    if ((f.type != DFB_T_INT && f.type != DFB_T_UINT &&
         f.type != DFB_T_FLOAT) ||
        itemsize <= 0 || a->buffers[1] == NULL ||
        !(a->buffers[0] == NULL || (a->null_count == 0 && whole)) ||
        nd.offset > INT64_MAX - nd.length - 8 ||
        dfb_checked_mul(end, itemsize, &size) < 0) {
        return 0; /* the general path (and its errors) */
    }
    /* the stored dtype is the result's: Arrow's plain numbers are in
       native order ('=', '|' for one byte) */
    PyArray_Descr *d = dfb_arrow_stored_descr(&f);
    if (d == NULL) {
        return 1;
    }
    PyObject *span =
        dfb_buffer_new(st, (char *)a->buffers[1], (Py_ssize_t)size, nd.holder,
                       d, 1, NULL, NULL, nd.device, 1, DFB_NATIVE_ARROW);
    if (span == NULL) {
        Py_DECREF(d);
        return 1;
    }
    /* read-only, as the span is */
    *out = dfb_buffer_view_1d((DfbBuffer *)span, d,
                              (char *)a->buffers[1] + nd.offset * itemsize,
                              (npy_intp)nd.length);
    return 1;
}

/* convert_column without pandas' Period objects: the column's values
   as its storage type gives them.  Returns a new reference, or NULL with
   an exception set. */
static PyObject *
convert_column_values(dfb_state *st, const arrow_import *imp, int is_table,
                      int64_t c, const dfb_opts *opts, int allow_copy)
{
    const char *name = dfb_arrow_column_name(imp, is_table, c);
    PyObject *plain;
    const struct ArrowSchema *cs =
        is_table ? imp->schema.children[c] : &imp->schema;
    if (dfb_nested_is(cs) || dfb_nested_dict_is(cs)) {
        return dfb_nested_convert_column(st, imp, is_table, c, opts,
                                         allow_copy, name);
    }
    if (convert_plain_chunk(st, imp, is_table, c, name, &plain)) {
        return plain;
    }
    Py_ssize_t n = imp->n > 0 ? imp->n : 1;
    /* bounded: n columns of a schema, calloc checks the product */
    dfb_column *cols = PyMem_Calloc(2 * (size_t)n, sizeof(dfb_column));
    ref_list refs = {0};
    PyObject *res = NULL;
    if (cols == NULL) {
        return PyErr_NoMemory();
    }
    if (imp->n == 0) {
        const struct ArrowSchema *s =
            is_table ? imp->schema.children[c] : &imp->schema;
        if (describe_empty(st, s, &cols[0], &cols[n], &refs, name) < 0) {
            goto done;
        }
    }
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        arrow_node nd;
        if (dfb_arrow_import_node(imp, is_table, b, c, &nd) < 0 ||
            dfb_arrow_describe_node(st, &nd, &cols[b], &cols[n + b], NULL,
                                    &refs, DFB_VIEWS_KEEP, name) < 0) {
            goto done;
        }
    }
    res = dfb_columns_to_ndarray(st, cols, n, opts, allow_copy);
done:
    dfb_arrow_refs_clear(&refs);
    PyMem_Free(cols);
    return res;
}

/* 1 if schema `s` is of pandas' "pandas.period" extension type (the
   int64 ordinals of a Period column, its frequency in the extension
   metadata), with *freq_json (NULL when absent) and *freq_len set; 0 if
   not (malformed metadata too: the converters report that). */
static int
is_pandas_period(const struct ArrowSchema *s, const char **freq_json,
                 int32_t *freq_len)
{
    *freq_json = NULL;
    *freq_len = 0;
    return s != NULL &&
           dfb_metadata_extension(s->metadata, freq_json, freq_len) ==
               DFB_EXT_PANDAS_PERIOD;
}

/* period="object" (the default) for column `name` of schema `s`: when it
   is of pandas' "pandas.period" type, its converted ordinals `res`
   (stolen) become pandas.Period objects (pandas_columns.c's
   dfb_pd_periods_from_ordinals; a copy, st's CopyError under
   !allow_copy); never bare
   ordinals unasked.  Returns `res` otherwise, a new reference, or NULL
   with an exception set. */
static PyObject *
pandas_periods(dfb_state *st, const struct ArrowSchema *s, const char *name,
               const dfb_opts *opts, int allow_copy, PyObject *res)
{
    const char *freq;
    int32_t freq_len;
    if (res == NULL || opts->period_ordinal ||
        !is_pandas_period(s, &freq, &freq_len)) {
        return res;
    }
    if (!allow_copy) {
        Py_DECREF(res);
        dfb_copy_error(st,
                       "column '%s': converting pandas Period ordinals to "
                       "Period objects needs a copy",
                       name);
        return NULL;
    }
    PyObject *out = dfb_pd_periods_from_ordinals(st, name, res, freq, freq_len,
                                                 allow_copy);
    Py_DECREF(res);
    return out;
}

/* Column `c` of the import, of pandas' "pandas.interval" type (its
   schema `s`, extension metadata `meta`): its two bounds converted (null
   rows filled: NaN, NaT) and made pandas.Interval objects
   (pandas_columns.c's dfb_pd_intervals_from_bounds), as the frame's
   Interval column gives them.  Returns a new reference, or NULL with an
   exception set. */
static PyObject *
pandas_intervals(dfb_state *st, const arrow_import *imp, int is_table,
                 int64_t c, const dfb_opts *opts, int allow_copy,
                 const char *meta, int32_t meta_len)
{
    const char *name = dfb_arrow_column_name(imp, is_table, c);
    if (!allow_copy) {
        dfb_copy_error(st,
                       "column '%s': converting pandas Interval bounds to "
                       "Interval objects needs a copy",
                       name);
        return NULL;
    }
    dfb_opts o = *opts;
    o.nulls = DFB_NULLS_FILL;
    o.always_mask = 0;
    o.categorical_codes = 0;
    o.stringdtype = 0;
    const int64_t left_path = 0, right_path = 1;
    PyObject *left = dfb_nested_convert_path(st, imp, is_table, c, &left_path,
                                             1, &o, allow_copy, name);
    PyObject *right = left == NULL ? NULL
                                   : dfb_nested_convert_path(
                                         st, imp, is_table, c, &right_path, 1,
                                         &o, allow_copy, name);
    PyObject *res = right == NULL ? NULL
                                  : dfb_pd_intervals_from_bounds(
                                        st, name, left, right, meta, meta_len,
                                        opts->nulls, allow_copy);
    Py_XDECREF(right);
    Py_XDECREF(left);
    return res;
}

/* Converts column `c` of the import (all its chunks, or an empty column
   when there are none) with dfb_columns_to_ndarray (pandas' Period
   ordinals then through pandas_periods; pandas' Intervals through
   pandas_intervals).  Returns a new reference, or NULL with an exception
   set. */
static PyObject *
convert_column(dfb_state *st, const arrow_import *imp, int is_table, int64_t c,
               const dfb_opts *opts, int allow_copy)
{
    const struct ArrowSchema *cs =
        is_table ? imp->schema.children[c] : &imp->schema;
    const char *meta = NULL;
    int32_t meta_len = 0;
    if (dfb_nested_is_pandas_interval(cs, &meta, &meta_len)) {
        return pandas_intervals(st, imp, is_table, c, opts, allow_copy, meta,
                                meta_len);
    }
    return pandas_periods(
        st, cs, dfb_arrow_column_name(imp, is_table, c), opts, allow_copy,
        convert_column_values(st, imp, is_table, c, opts, allow_copy));
}

PyObject *
dfb_arrow_column_to_ndarray(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                            int allow_copy)
{
    arrow_import imp = {.st = st};
    PyObject *res = NULL;
    /* an array is one column: a struct array (or a record batch) is an
       object array of dicts, as a struct column of a table */
    if (dfb_arrow_import_producer(st, obj, &imp) == 0) {
        res = convert_column(st, &imp, 0, 0, opts, allow_copy);
    }
    dfb_arrow_import_clear(&imp);
    return res;
}

/* structs="flatten" of table import `imp`: a dict of every entry of
   dfb_nested_flat_entries (columns with skip[c] left out) that `sel`
   selects (NULL: all), in order; sel->names becomes the names selected.
   Returns a new reference, or NULL with an exception set. */
static PyObject *
flat_to_dict(dfb_state *st, const arrow_import *imp, const uint8_t *skip,
             const dfb_opts *opts, int allow_copy, dfb_colsel *sel)
{
    PyObject *entries = dfb_nested_flat_entries(imp, 1, 1, skip);
    PyObject *chosen =
        entries ? dfb_nested_flat_select(entries, sel ? sel->names : NULL)
                : NULL;
    PyObject *res = chosen ? PyDict_New() : NULL;
    PyObject *names = res ? PyTuple_New(PyList_GET_SIZE(chosen)) : NULL;
    for (Py_ssize_t i = 0; names != NULL && i < PyList_GET_SIZE(chosen); i++) {
        PyObject *e = PyList_GET_ITEM(chosen, i);
        PyObject *key = PyTuple_GET_ITEM(e, 0), *arr = NULL;
        int64_t c, path[DFB_NESTED_MAX_DEPTH];
        int depth, has = PyDict_Contains(res, key);
        PyTuple_SET_ITEM(names, i, Py_NewRef(key));
        if (has != 0) {
            if (has < 0) {
                Py_CLEAR(res);
                break;
            }
            continue; /* named twice in columns= */
        }
        const char *name = PyUnicode_AsUTF8(key);
        if (name != NULL && dfb_nested_flat_path(e, &c, path, &depth) == 0) {
            arr = depth == 0
                      ? convert_column(st, imp, 1, c, opts, allow_copy)
                      : dfb_nested_convert_path(st, imp, 1, c, path, depth,
                                                opts, allow_copy, name);
        }
        if (arr == NULL && dfb_skip_unsupported(opts)) {
            continue;
        }
        if (arr == NULL) {
            dfb_add_column_context(st, key); /* the error names the column */
        }
        if (arr == NULL || PyDict_SetItem(res, key, arr) < 0) {
            Py_XDECREF(arr);
            Py_CLEAR(res);
            break;
        }
        Py_DECREF(arr);
    }
    if (res != NULL && names != NULL && sel != NULL) {
        Py_SETREF(sel->names, Py_NewRef(names)); /* for dfb_colsel_finish */
    }
    if (names == NULL) {
        Py_CLEAR(res);
    }
    Py_XDECREF(names);
    Py_XDECREF(chosen);
    Py_XDECREF(entries);
    return res;
}

/* Converts every column of an import to a dict name -> array, leaving out
   pandas' index columns (schema metadata "pandas") when `skip_index`.
   Returns a new reference or NULL with an exception set (ValueError for a
   duplicate name). */
static PyObject *
import_to_dict(dfb_state *st, const arrow_import *imp, int skip_index,
               const dfb_opts *opts, int allow_copy, dfb_colsel *sel)
{
    PyObject *res = NULL;
    uint8_t *skip = NULL;
    int is_table = dfb_arrow_import_is_table(imp);
    if (is_table && dfb_arrow_validate_table(imp) < 0) {
        goto done;
    }
    int64_t ncols = is_table ? imp->schema.n_children : 1;
    skip = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, 1);
    if (skip == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (skip_index && is_table &&
        dfb_arrow_index_columns(&imp->schema, skip) < 0) {
        goto done;
    }
    if (opts->structs_flatten && is_table) {
        res = flat_to_dict(st, imp, skip, opts, allow_copy, sel);
        goto done;
    }
    res = PyDict_New();
    if (res == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < ncols; c++) {
        if (skip[c]) {
            continue;
        }
        PyObject *key =
            PyUnicode_FromString(dfb_arrow_column_name(imp, is_table, c));
        if (key == NULL) {
            Py_CLEAR(res);
            goto done;
        }
        int want = dfb_colsel_wants(sel, key);
        if (want <= 0) {
            Py_DECREF(key);
            if (want < 0) {
                Py_CLEAR(res);
                goto done;
            }
            continue;
        }
        int dup = PyDict_Contains(res, key);
        if (dup != 0) {
            if (dup > 0) {
                PyErr_Format(PyExc_ValueError,
                             "from_dataframe() returns a dict, one array per "
                             "name: duplicate column name %R in the Arrow "
                             "schema (rename the columns)",
                             key);
            }
            Py_DECREF(key);
            Py_CLEAR(res);
            goto done;
        }
        PyObject *arr = convert_column(st, imp, is_table, c, opts, allow_copy);
        if (arr == NULL && dfb_skip_unsupported(opts)) {
            Py_DECREF(key);
            continue;
        }
        if (arr == NULL && (is_table || PyUnicode_GET_LENGTH(key) > 0)) {
            dfb_add_column_context(st, key); /* the error names the column */
        }
        if (arr == NULL || PyDict_SetItem(res, key, arr) < 0) {
            Py_XDECREF(arr);
            Py_DECREF(key);
            Py_CLEAR(res);
            goto done;
        }
        Py_DECREF(arr);
        Py_DECREF(key);
    }
done:
    PyMem_Free(skip);
    return res;
}

PyObject *
dfb_arrow_from_dataframe(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                         int allow_copy)
{
    return dfb_arrow_from_dataframe_cols(st, obj, opts, allow_copy, NULL);
}

/* ------------------------------------------------------------------ */
/* from_dataframe of a stream: its groups' columns joined               */
/* ------------------------------------------------------------------ */

/* One column of a stream's groups joined (docs/design.md, "Whole
   streams"): fixed-width values in one block of ours grown by realloc,
   other values (objects, StringDType) as the groups' arrays, joined at
   the end; a bool mask from the first group with a null. */
typedef struct {
    PyObject *data;   /* strong: a 1-D array of ours, `cap` rows, or NULL */
    PyObject *pieces; /* strong: a list of the groups' arrays, or NULL */
    PyObject *mask;   /* strong: a 1-D bool array of ours, `mcap` rows, or
                         NULL before the first masked group */
    int64_t n, cap, mcap;
    int codes;      /* the column is CategoricalCodes */
    PyObject *cats; /* strong: the categories so far */
    int ordered;    /* the first group's */
    int unified;    /* some group's categories were new */
    int code_type;  /* the first group's codes' type number */
    int code_types; /* 1 while every group's codes have code_type */
} join_col;

/* The groups of one stream joined column by column. */
typedef struct {
    PyObject *keys; /* strong: the first group's keys (a list) */
    join_col *cols;
    Py_ssize_t ncols;
} stream_join;

/* Releases what `j` holds.  Cannot fail. */
static void
join_clear(stream_join *j)
{
    for (Py_ssize_t c = 0; c < j->ncols; c++) {
        Py_XDECREF(j->cols[c].data);
        Py_XDECREF(j->cols[c].pieces);
        Py_XDECREF(j->cols[c].mask);
        Py_XDECREF(j->cols[c].cats);
    }
    PyMem_Free(j->cols);
    Py_CLEAR(j->keys);
    j->cols = NULL;
    j->ncols = 0;
}

/* Resizes 1-D array `a` of ours (no view of it alive) to `n` rows through
   its memory handler's realloc, the rows added left as they are (NumPy
   zeroes them only in a writeable array).  Returns 0, or -1 with an
   exception set. */
static int
join_resize(PyObject *a, int64_t n)
{
    npy_intp dim = (npy_intp)(n > 0 ? n : 0);
    PyArray_Dims shape = {&dim, 1};
    PyArray_CLEARFLAGS((PyArrayObject *)a, NPY_ARRAY_WRITEABLE);
    PyObject *r = PyArray_Resize((PyArrayObject *)a, &shape, 0, NPY_ANYORDER);
    PyArray_ENABLEFLAGS((PyArrayObject *)a, NPY_ARRAY_WRITEABLE);
    Py_XDECREF(r);
    return r != NULL ? 0 : -1;
}

/* Makes room for `need` rows in `a` (`*cap` rows): at least twice as
   many.  Returns 0, or -1 with an exception set. */
static int
join_reserve(PyObject *a, int64_t *cap, int64_t need)
{
    if (need <= *cap) {
        return 0;
    }
    int64_t cap2 = need > 2 * *cap ? need : 2 * *cap;
    if (join_resize(a, cap2) < 0) {
        return -1;
    }
    *cap = cap2;
    return 0;
}

/* Copies `src` (1-D, cast as astype casts) into rows [at, at + len) of
   `dst`.  Returns 0, or -1 with an exception set. */
static int
join_put(PyObject *dst, int64_t at, PyObject *src)
{
    PyObject *view = PySequence_GetSlice(
        dst, (Py_ssize_t)at,
        (Py_ssize_t)(at + PyArray_DIM((PyArrayObject *)src, 0)));
    int r = view != NULL
                ? PyArray_CopyInto((PyArrayObject *)view, (PyArrayObject *)src)
                : -1;
    Py_XDECREF(view);
    return r;
}

/* A new empty 1-D array of `d` (stolen) of `n` rows (at least 1), zeroed
   when `zero`.  NULL with an exception set. */
static PyObject *
join_new(PyArray_Descr *d, int64_t n, int zero)
{
    npy_intp dim = (npy_intp)(n > 0 ? n : 1);
    return zero ? PyArray_Zeros(1, &dim, d, 0) : PyArray_Empty(1, &dim, d, 0);
}

/* 1 if categories `a` and `b` hold the same values of the same dtype (and
   nulls), 0 if not, -1 with an exception set. */
static int
same_categories(PyObject *a, PyObject *b)
{
    if (a == b) {
        return 1;
    }
    PyObject *da = PyObject_GetAttrString(a, "dtype");
    PyObject *db = da != NULL ? PyObject_GetAttrString(b, "dtype") : NULL;
    int r = db != NULL ? PyObject_RichCompareBool(da, db, Py_EQ) : -1;
    Py_XDECREF(da);
    Py_XDECREF(db);
    if (r != 1 || Py_TYPE(a) != Py_TYPE(b)) {
        return r < 0 ? -1 : 0;
    }
    PyObject *la = PyObject_CallMethod(a, "tolist", NULL);
    PyObject *lb = la != NULL ? PyObject_CallMethod(b, "tolist", NULL) : NULL;
    r = lb != NULL ? PyObject_RichCompareBool(la, lb, Py_EQ) : -1;
    Py_XDECREF(la);
    Py_XDECREF(lb);
    return r;
}

/* The codes `data` (an integer array, -1 where null; borrowed) of
   categories `cats` as codes of the column's categories so far, which
   gain `cats`' values not yet among them, in order (the unification of
   dfb_categorical_codes).  Returns a new int64 array, or NULL with an
   exception set (NotImplementedError where categories are null). */
static PyObject *
join_remap(join_col *c, PyObject *data, PyObject *cats)
{
    if (!PyArray_CheckExact(cats) || !PyArray_CheckExact(c->cats)) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "the chunks of the categorical column have different "
                        "categories, some of them null; use "
                        "categorical='decode'");
        return NULL;
    }
    c->unified = 1;
    PyObject *index = PyDict_New(), *have = NULL, *vals = NULL;
    PyObject *fresh = PyList_New(0), *table = NULL, *res = NULL;
    if (index == NULL || fresh == NULL) {
        goto done;
    }
    have = PyObject_CallMethod(c->cats, "tolist", NULL);
    vals = have != NULL ? PyObject_CallMethod(cats, "tolist", NULL) : NULL;
    if (vals == NULL || !PyList_Check(have) || !PyList_Check(vals)) {
        if (vals != NULL) {
            PyErr_SetString(PyExc_TypeError, "tolist() did not give a list");
        }
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(have); i++) {
        PyObject *k = PyLong_FromSsize_t(i);
        if (k == NULL ||
            PyDict_SetDefault(index, PyList_GET_ITEM(have, i), k) == NULL) {
            Py_XDECREF(k);
            goto done;
        }
        Py_DECREF(k);
    }
    npy_intp nv = PyList_GET_SIZE(vals);
    table = PyArray_SimpleNew(1, &nv, NPY_INT64);
    if (table == NULL) {
        goto done;
    }
    int64_t *tb = PyArray_DATA((PyArrayObject *)table);
    for (Py_ssize_t i = 0; i < nv; i++) {
        PyObject *v = PyList_GET_ITEM(vals, i); /* our own list */
        PyObject *k = PyDict_GetItemWithError(index, v);
        if (k == NULL) {
            if (PyErr_Occurred()) {
                goto done;
            }
            k = PyLong_FromSsize_t(PyDict_GET_SIZE(index));
            int r = k == NULL || PyDict_SetItem(index, v, k) < 0 ||
                            PyList_Append(fresh, v) < 0
                        ? -1
                        : 0;
            Py_XDECREF(k);
            if (r < 0) {
                goto done;
            }
            k = PyDict_GetItemWithError(index, v);
            if (k == NULL) {
                goto done;
            }
        }
        tb[i] = PyLong_AsLongLong(k);
    }
    if (PyList_GET_SIZE(fresh) > 0) {
        PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)cats);
        Py_INCREF(d);
        PyObject *add = PyArray_FromAny(fresh, d, 1, 1, 0, NULL);
        PyObject *both = add != NULL ? PyTuple_Pack(2, c->cats, add) : NULL;
        PyObject *cat = both != NULL ? PyArray_Concatenate(both, 0) : NULL;
        Py_XDECREF(add);
        Py_XDECREF(both);
        if (cat == NULL) {
            goto done;
        }
        Py_SETREF(c->cats, cat);
    }
    res = PyArray_FROM_OTF(data, NPY_INT64,
                           NPY_ARRAY_ENSURECOPY | NPY_ARRAY_CARRAY);
    if (res == NULL) {
        goto done;
    }
    int64_t *cd = PyArray_DATA((PyArrayObject *)res);
    for (npy_intp i = 0; i < PyArray_DIM((PyArrayObject *)res, 0); i++) {
        if (cd[i] >= nv) {
            PyErr_Format(PyExc_ValueError,
                         "a categorical code %lld is out of the range of its "
                         "%lld categories",
                         (long long)cd[i], (long long)nv);
            Py_CLEAR(res);
            goto done;
        }
        if (cd[i] >= 0) {
            cd[i] = tb[cd[i]];
        }
    }
done:
    Py_XDECREF(index);
    Py_XDECREF(have);
    Py_XDECREF(vals);
    Py_XDECREF(fresh);
    Py_XDECREF(table);
    return res;
}

/* The 1-D values and bool mask (NULL: none) of group value `v` (an
   ndarray or a MaskedArray), in *data and *mask (new references).
   Returns 0, or -1 with an exception set. */
static int
join_parts(PyObject *v, PyObject **data, PyObject **mask)
{
    *mask = NULL;
    if (PyArray_CheckExact(v)) {
        *data = Py_NewRef(v);
    }
    else {
        *data = PyObject_GetAttrString(v, "data");
        PyObject *m = *data != NULL ? PyObject_GetAttrString(v, "mask") : NULL;
        *mask =
            m != NULL ? PyArray_FROM_OTF(m, NPY_BOOL, NPY_ARRAY_CARRAY) : NULL;
        Py_XDECREF(m);
        if (*mask == NULL) {
            Py_CLEAR(*data);
            return -1;
        }
    }
    if (!PyArray_Check(*data) || PyArray_NDIM((PyArrayObject *)*data) != 1) {
        PyErr_SetString(PyExc_SystemError,
                        "from_dataframe of a stream: a group's column is not "
                        "a 1-D array");
        Py_CLEAR(*data);
        Py_CLEAR(*mask);
        return -1;
    }
    if (PyArray_NDIM((PyArrayObject *)*mask != NULL
                         ? (PyArrayObject *)*mask
                         : (PyArrayObject *)*data) == 0) {
        /* numpy.ma.nomask, or one flag for every row */
        int all = PyObject_IsTrue(*mask);
        Py_SETREF(*mask, join_new(PyArray_DescrFromType(NPY_BOOL),
                                  PyArray_DIM((PyArrayObject *)*data, 0), 1));
        if (all < 0 || *mask == NULL ||
            (all &&
             PyArray_FillWithScalar((PyArrayObject *)*mask, Py_True) < 0)) {
            Py_CLEAR(*data);
            Py_CLEAR(*mask);
            return -1;
        }
    }
    return 0;
}

/* Joins group value `v` (borrowed: an ndarray, a MaskedArray or
   CategoricalCodes, as from_dataframe gives) to column `c`: its mask
   (made, all False for the rows before, by the first group with one), its
   values copied into the block (cast to the promotion of both types:
   an integer column's first null under nulls="fill" casts the rows so far
   to float64) or kept as a piece, its codes remapped when its categories
   are new.  Returns 0, or -1 with an exception set. */
static int
join_add(dfb_state *st, join_col *c, PyObject *v)
{
    PyObject *data = NULL, *mask = NULL, *other = NULL;
    int ret = -1;
    if (Py_IS_TYPE(v, (PyTypeObject *)st->categorical_codes)) {
        PyObject *cats = PyStructSequence_GetItem(v, 1);
        if (!c->codes) {
            c->codes = 1;
            c->cats = Py_NewRef(cats);
            c->ordered = PyStructSequence_GetItem(v, 2) == Py_True;
            c->code_type = -1;
            c->code_types = 1;
        }
        else {
            int same = same_categories(cats, c->cats);
            if (same < 0) {
                return -1;
            }
            other = same ? NULL : cats;
        }
        v = PyStructSequence_GetItem(v, 0);
    }
    if (join_parts(v, &data, &mask) < 0) {
        return -1;
    }
    if (c->codes) {
        const int t = PyArray_TYPE((PyArrayObject *)data);
        if (c->code_type < 0) {
            c->code_type = t;
        }
        else if (t != c->code_type) {
            c->code_types = 0;
        }
        if (other != NULL) {
            PyObject *r = join_remap(c, data, other);
            if (r == NULL) {
                goto out;
            }
            Py_SETREF(data, r);
        }
    }
    const int64_t k = PyArray_DIM((PyArrayObject *)data, 0);
    if (mask != NULL || c->mask != NULL) {
        if (c->mask == NULL) {
            c->mask = join_new(PyArray_DescrFromType(NPY_BOOL), c->n, 1);
            c->mcap = c->n > 0 ? c->n : 1;
        }
        if (c->mask == NULL || join_reserve(c->mask, &c->mcap, c->n + k) < 0) {
            goto out;
        }
        if (mask != NULL) {
            if (join_put(c->mask, c->n, mask) < 0) {
                goto out;
            }
        }
        else if (k > 0) {
            dfb_memset(PyArray_BYTES((PyArrayObject *)c->mask) + c->n, 0,
                       (size_t)k);
        }
    }
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)data);
    const int fixed = d->kind != '\0' && strchr("biufcmM", d->kind) != NULL &&
                      !PyDataType_REFCHK(d);
    if (c->pieces != NULL || !fixed) {
        if (c->pieces == NULL) {
            c->pieces = PyList_New(0);
            if (c->pieces == NULL ||
                (c->data != NULL && (join_resize(c->data, c->n) < 0 ||
                                     PyList_Append(c->pieces, c->data) < 0))) {
                goto out;
            }
            Py_CLEAR(c->data);
        }
        if (PyList_Append(c->pieces, data) < 0) {
            goto out;
        }
    }
    else {
        PyArray_Descr *have =
            c->data != NULL ? PyArray_DESCR((PyArrayObject *)c->data) : NULL;
        if (c->data == NULL) {
            Py_INCREF(d);
            c->data = join_new(d, k, 0);
            c->cap = k > 0 ? k : 1;
            if (c->data == NULL) {
                goto out;
            }
        }
        else if (!PyArray_EquivTypes(have, d)) {
            PyArray_Descr *p = PyArray_PromoteTypes(have, d);
            if (p == NULL) {
                goto out;
            }
            if (PyArray_EquivTypes(p, have)) {
                Py_DECREF(p);
            }
            else {
                /* the rows so far cast (astype); that column twice for the
                   moment */
                PyObject *wide = join_new(p, c->cap, 0);
                PyObject *old =
                    wide != NULL
                        ? PySequence_GetSlice(c->data, 0, (Py_ssize_t)c->n)
                        : NULL;
                int r = old != NULL ? join_put(wide, 0, old) : -1;
                Py_XDECREF(old);
                if (r < 0) {
                    Py_XDECREF(wide);
                    goto out;
                }
                Py_SETREF(c->data, wide);
            }
        }
        if (join_reserve(c->data, &c->cap, c->n + k) < 0 ||
            join_put(c->data, c->n, data) < 0) {
            goto out;
        }
    }
    c->n += k;
    ret = 0;
out:
    Py_DECREF(data);
    Py_XDECREF(mask);
    return ret;
}

/* The joined value of column `c`: its block trimmed to its rows (or its
   pieces concatenated), with its mask a MaskedArray, with its categories
   CategoricalCodes (codes of the smallest integer type that holds the
   categories when groups' categories or codes' types differed, as
   dfb_categorical_codes makes them).  Returns a new reference, or NULL with
   an exception set. */
static PyObject *
join_finish(dfb_state *st, join_col *c)
{
    PyObject *data;
    if (c->pieces != NULL) {
        data = PyList_GET_SIZE(c->pieces) == 1
                   ? Py_NewRef(PyList_GET_ITEM(c->pieces, 0))
                   : PyArray_Concatenate(c->pieces, 0);
    }
    else {
        data = join_resize(c->data, c->n) < 0 ? NULL : Py_NewRef(c->data);
    }
    if (data == NULL) {
        return NULL;
    }
    if (c->codes && (c->unified || !c->code_types)) {
        const Py_ssize_t ncats = PyObject_Length(c->cats);
        const int t = ncats <= INT8_MAX    ? NPY_INT8
                      : ncats <= INT16_MAX ? NPY_INT16
                      : ncats <= INT32_MAX ? NPY_INT32
                                           : NPY_INT64;
        Py_SETREF(data,
                  ncats < 0 ? NULL : PyArray_Cast((PyArrayObject *)data, t));
        if (data == NULL) {
            return NULL;
        }
    }
    PyObject *res = data;
    if (c->mask != NULL) {
        res = join_resize(c->mask, c->n) < 0
                  ? NULL
                  : dfb_masked_array(st, data, c->mask);
        Py_DECREF(data);
        if (res == NULL) {
            return NULL;
        }
    }
    if (!c->codes) {
        return res;
    }
    PyObject *cc = PyStructSequence_New((PyTypeObject *)st->categorical_codes);
    if (cc == NULL) {
        Py_DECREF(res);
        return NULL;
    }
    PyStructSequence_SetItem(cc, 0, res);
    PyStructSequence_SetItem(cc, 1, Py_NewRef(c->cats));
    PyStructSequence_SetItem(cc, 2,
                             Py_NewRef(c->ordered ? Py_True : Py_False));
    return cc;
}

/* Joins group dict `d` (borrowed) to `j`: the first sets the columns.
   Returns 0, or -1 with an exception set (ValueError when a group gives
   other columns than the first). */
static int
join_group(dfb_state *st, stream_join *j, PyObject *d)
{
    PyObject *keys = PyDict_Keys(d);
    if (keys == NULL) {
        return -1;
    }
    if (j->keys == NULL) {
        j->ncols = PyList_GET_SIZE(keys);
        j->cols = PyMem_Calloc(j->ncols > 0 ? (size_t)j->ncols : 1,
                               sizeof(join_col));
        if (j->cols == NULL) {
            Py_DECREF(keys);
            j->ncols = 0;
            PyErr_NoMemory();
            return -1;
        }
        j->keys = keys;
    }
    else {
        int eq = PyObject_RichCompareBool(keys, j->keys, Py_EQ);
        if (eq == 0) {
            PyErr_Format(PyExc_ValueError,
                         "from_dataframe: the batches of the Arrow stream "
                         "give the columns %R, its first batches %R",
                         keys, j->keys);
        }
        Py_DECREF(keys);
        if (eq != 1) {
            return -1;
        }
    }
    for (Py_ssize_t c = 0; c < j->ncols; c++) {
        PyObject *v = PyDict_GetItemWithError(d, PyList_GET_ITEM(j->keys, c));
        if (v == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_SystemError,
                                "from_dataframe of a stream: a column went "
                                "missing");
            }
            return -1;
        }
        Py_INCREF(v);
        int r = join_add(st, &j->cols[c], v);
        Py_DECREF(v);
        if (r < 0) {
            return -1;
        }
    }
    return 0;
}

/* The joined dict of `j`.  Returns a new dict, or NULL with an exception
   set. */
static PyObject *
join_result(dfb_state *st, stream_join *j)
{
    PyObject *res = PyDict_New();
    for (Py_ssize_t c = 0; res != NULL && c < j->ncols; c++) {
        PyObject *v = join_finish(st, &j->cols[c]);
        if (v == NULL ||
            PyDict_SetItem(res, PyList_GET_ITEM(j->keys, c), v) < 0) {
            Py_CLEAR(res);
        }
        Py_XDECREF(v);
    }
    return res;
}

/* from_dataframe of an Arrow stream read group by group. */
typedef struct {
    dfb_state *st;
    const dfb_opts *opts;
    int allow_copy;
    dfb_colsel *sel;
    PyObject *first;  /* strong: the first group's dict while it is the only
                         one (its arrays may view the group's chunks) */
    int joining;      /* from the second group on, the groups go to `join` */
    stream_join join; /* the groups joined */
} dict_stream;

/* Converts the chunks `imp` holds, as from_dataframe of those batches
   alone, and joins the dict to the groups before (the first is kept as it
   is until a second comes; joining is a copy, which copy=False
   forbids).  Returns 0, or -1 with an exception set. */
static int
dict_group(dict_stream *s, const arrow_import *imp)
{
    PyObject *d =
        import_to_dict(s->st, imp, 1, s->opts, s->allow_copy, s->sel);
    if (d == NULL) {
        return -1;
    }
    if (s->first == NULL && !s->joining) {
        s->first = d;
        return 0;
    }
    if (!s->joining) {
        if (!s->allow_copy) {
            Py_DECREF(d);
            return dfb_copy_error(s->st,
                                  "joining the batches of an Arrow stream "
                                  "needs a copy");
        }
        s->joining = 1;
        int r = join_group(s->st, &s->join, s->first);
        Py_CLEAR(s->first); /* the first group's chunks go with it */
        if (r < 0) {
            Py_DECREF(d);
            return -1;
        }
    }
    int r = join_group(s->st, &s->join, d);
    Py_DECREF(d);
    return r;
}

/* on_chunk of from_dataframe's stream walk: converts the chunks read so
   far once they make a group (dfb_arrow_import_is_group), then drops them.
   Device data is left to the import's own refusal.  Returns 0, or -1 with an
   exception set. */
static int
dict_chunk(arrow_import *imp, void *ctx)
{
    if (!dfb_arrow_import_on_cpu(imp) || !dfb_arrow_import_is_group(imp)) {
        return 0;
    }
    if (dict_group(ctx, imp) < 0) {
        return -1;
    }
    dfb_arrow_import_drop_chunks(imp);
    return 0;
}

PyObject *
dfb_arrow_from_dataframe_cols(dfb_state *st, PyObject *obj,
                              const dfb_opts *opts, int allow_copy,
                              dfb_colsel *sel)
{
    dict_stream s = {
        .st = st, .opts = opts, .allow_copy = allow_copy, .sel = sel};
    arrow_import imp = {.st = st};
    imp.on_chunk = dict_chunk;
    imp.chunk_ctx = &s;
    PyObject *res = NULL;
    int ok = dfb_arrow_import_producer(st, obj, &imp) == 0;
    /* the last chunks are a group, unless a group took them all (an
       empty stream is one group of no chunk: its empty columns) */
    if (ok && (imp.n > 0 || (s.first == NULL && !s.joining))) {
        ok = dict_group(&s, &imp) == 0;
    }
    dfb_arrow_import_clear(&imp);
    if (ok) {
        res = s.joining ? join_result(st, &s.join) : Py_NewRef(s.first);
    }
    Py_XDECREF(s.first);
    join_clear(&s.join);
    return res;
}

/* ------------------------------------------------------------------ */
/* The C API's Arrow entry (capi.c): structs moved in by a C caller     */
/* ------------------------------------------------------------------ */

PyObject *
dfb_arrow_from_c(dfb_state *st, struct ArrowArray *array,
                 struct ArrowSchema *schema, int as_dict, const dfb_opts *opts,
                 int allow_copy)
{
    arrow_import imp = {.st = st};
    PyObject *res = NULL;
    int had_schema = schema != NULL && schema->release != NULL;
    int had_array = array != NULL && array->release != NULL;
    /* Move both in before anything can fail: from here on import_clear (or
       the holder, when a result keeps it) releases each exactly once. */
    if (had_schema) {
        imp.schema = *schema;
        schema->release = NULL;
    }
    if (had_array) {
        struct ArrowArray *dst = dfb_arrow_import_add(&imp);
        if (dst == NULL) {
            struct ArrowArray tmp = *array;
            array->release = NULL;
            PyObject *saved = dfb_err_take();
            tmp.release(&tmp);
            dfb_err_give(saved);
            goto done;
        }
        *dst = *array;
        array->release = NULL;
    }
    if (!had_schema || !had_array) {
        PyErr_Format(PyExc_ValueError,
                     "the ArrowSchema and the ArrowArray must be live (not "
                     "released); got a %s schema and a %s array",
                     schema == NULL ? "NULL"
                     : had_schema   ? "live"
                                    : "released",
                     array == NULL ? "NULL"
                     : had_array   ? "live"
                                   : "released");
        goto done;
    }
    if (imp.schema.format == NULL) {
        PyErr_SetString(PyExc_ValueError, "the Arrow schema has no format");
        goto done;
    }
    /* as column_to_ndarray: a struct array (a record batch) is one column,
       an object array of dicts */
    res = as_dict ? import_to_dict(st, &imp, 0, opts, allow_copy, NULL)
                  : convert_column(st, &imp, 0, 0, opts, allow_copy);
done:
    dfb_arrow_import_clear(&imp);
    return res;
}

PyObject *
dfb_arrow_stream_from_c(dfb_state *st, struct ArrowArrayStream *stream,
                        const dfb_opts *opts, int allow_copy)
{
    if (stream == NULL || stream->release == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "the ArrowArrayStream must be live (not released)");
        return NULL;
    }
    struct ArrowArrayStream s = *stream;
    stream->release = NULL;
    arrow_import imp = {.st = st};
    PyObject *res = NULL;
    if (dfb_arrow_import_stream_struct(&s, &imp) == 0) {
        if (imp.schema.format == NULL) {
            PyErr_SetString(PyExc_ValueError,
                            "the Arrow schema has no format");
        }
        else {
            res = import_to_dict(st, &imp, 0, opts, allow_copy, NULL);
        }
    }
    dfb_arrow_import_clear(&imp);
    return res;
}

/* ------------------------------------------------------------------ */
/* Whole frames, described for to_matrix (matrix.c)                     */
/* ------------------------------------------------------------------ */

/* Describes every chunk of frame column `fc` (named `name`): column `c`
   of the import, or with depth > 0 its struct leaf at `path` (the
   structs' null rows added to its validity, kept by `keep`).  Returns 0,
   or -1 with an exception set. */
static int
describe_frame_column(dfb_state *st, const arrow_import *imp, int is_table,
                      int64_t c, const int64_t *path, int depth,
                      dfb_frame_column *fc, ref_list *refs, PyObject *keep)
{
    const char *name = PyUnicode_AsUTF8(fc->name);
    Py_ssize_t nch = imp->n > 0 ? imp->n : 1;
    if (name == NULL) {
        return -1;
    }
    fc->chunks = PyMem_Calloc(2 * (size_t)nch, sizeof(dfb_column));
    if (fc->chunks == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    fc->nchunks = nch;
    if (imp->n == 0) {
        const struct ArrowSchema *s =
            is_table ? imp->schema.children[c] : &imp->schema;
        for (int k = 0; k < depth && s != NULL; k++) {
            s = path[k] < s->n_children && s->children != NULL
                    ? s->children[path[k]]
                    : NULL;
        }
        if (s == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': a struct schema without that field",
                         name);
            return -1;
        }
        return describe_empty(st, s, &fc->chunks[0], &fc->chunks[1], refs,
                              name);
    }
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        dfb_column *col = &fc->chunks[b], *dict = &fc->chunks[nch + b];
        arrow_node nd;
        if (depth > 0
                ? dfb_nested_describe_leaf(st, imp, is_table, b, c, path,
                                           depth, col, dict, refs, keep,
                                           name) < 0
                : dfb_arrow_import_node(imp, is_table, b, c, &nd) < 0 ||
                      dfb_arrow_describe_node(st, &nd, col, dict, NULL, refs,
                                              DFB_VIEWS_KEEP, name) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The columns of the import that to_matrix's `select` names, as entries
   of dfb_nested_flat_entries (structs opened when `flatten`; pandas'
   index columns left out, as from_dataframe leaves them out).  Returns a
   new list, or NULL with an exception set. */
static PyObject *
frame_entries(const arrow_import *imp, int is_table, PyObject *select,
              int flatten)
{
    uint8_t *skip = NULL;
    if (is_table) {
        int64_t ncols = imp->schema.n_children;
        skip = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, 1);
        if (skip == NULL) {
            return PyErr_NoMemory();
        }
        if (dfb_arrow_index_columns(&imp->schema, skip) < 0) {
            PyMem_Free(skip);
            return NULL;
        }
    }
    PyObject *entries = dfb_nested_flat_entries(imp, is_table, flatten, skip);
    PyMem_Free(skip);
    if (entries == NULL || !flatten) {
        return entries;
    }
    PyObject *chosen = dfb_nested_flat_select(entries, select);
    Py_DECREF(entries);
    return chosen;
}

int
dfb_arrow_describe_frame(dfb_state *st, PyObject *obj, PyObject *select,
                         int flatten, int period_ordinal, int skip,
                         dfb_frame *out)
{
    arrow_import imp = {.st = st};
    int ret = dfb_arrow_import_producer(st, obj, &imp);
    if (ret == 0) {
        ret = dfb_arrow_describe_import(st, &imp, select, flatten,
                                        period_ordinal, skip, out);
    }
    dfb_arrow_import_clear(&imp);
    return ret;
}

int
dfb_arrow_describe_import(dfb_state *st, const arrow_import *imp,
                          PyObject *select, int flatten, int period_ordinal,
                          int skip, dfb_frame *out)
{
    ref_list refs = {0};
    Py_ssize_t *idx = NULL, n = 0;
    PyObject *keys = NULL, *entries = NULL;
    int ret = -1;
    int is_table = dfb_arrow_import_is_table(imp);
    if (is_table && dfb_arrow_validate_table(imp) < 0) {
        goto done;
    }
    entries = frame_entries(imp, is_table, select, flatten);
    keys = entries != NULL ? PyList_New(PyList_GET_SIZE(entries)) : NULL;
    if (keys == NULL) {
        goto done;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(entries); k++) {
        PyObject *key = PyTuple_GET_ITEM(PyList_GET_ITEM(entries, k), 0);
        PyList_SET_ITEM(keys, k, Py_NewRef(key));
    }
    /* flattened: `entries` is the selection already */
    if (dfb_frame_select(keys, flatten ? NULL : select, &idx, &n) < 0 ||
        dfb_frame_init(out, n) < 0) {
        goto done;
    }
    out->nrows = 0;
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        if (dfb_checked_add(out->nrows, imp->arrays[b]->length, &out->nrows) <
            0) {
            PyErr_SetString(PyExc_ValueError,
                            "the Arrow chunks' lengths overflow");
            goto done;
        }
    }
    /* the holders own every buffer of the producer's: keep them */
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        if (PyList_Append(out->keep, imp->holders[b]) < 0) {
            goto done;
        }
    }
    /* every array and Buffer a describe or decode step made (run-end
       values, dictionary and view decodes, bitmaps) goes to the frame's
       keep list below: the columns point into them for as long as the
       frame lives */
    for (Py_ssize_t k = 0, w = 0; k < n; k++) {
        dfb_frame_column *fc = &out->cols[w];
        int64_t c, path[DFB_NESTED_MAX_DEPTH];
        int depth;
        fc->name = Py_NewRef(PyList_GET_ITEM(keys, idx[k]));
        if (dfb_nested_flat_path(PyList_GET_ITEM(entries, idx[k]), &c, path,
                                 &depth) < 0) {
            goto done;
        }
        const char *freq;
        int32_t freq_len;
        if (!period_ordinal && depth == 0 &&
            is_pandas_period(is_table ? imp->schema.children[c] : &imp->schema,
                             &freq, &freq_len)) {
            if (skip) {
                dfb_frame_drop(out, w);
                continue;
            }
            PyErr_Format(PyExc_TypeError,
                         "column %R holds pandas Period ordinals (Arrow type "
                         "pandas.period); to_matrix takes them with "
                         "period='ordinal'",
                         fc->name);
            goto done;
        }
        if (describe_frame_column(st, imp, is_table, c, path, depth, fc, &refs,
                                  out->keep) < 0) {
            if (skip && PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
                PyErr_Clear(); /* a type no reader of dfbuffer's takes */
                dfb_frame_drop(out, w);
                continue;
            }
            goto done;
        }
        for (Py_ssize_t b = 0; b < 2 * fc->nchunks; b++) {
            fc->chunks[b].fmt.tz = NULL;
            fc->chunks[b].fmt.tz_len = 0;
        }
        w++;
    }
    ret = 0;
done:
    for (Py_ssize_t i = 0; i < refs.n; i++) {
        if (ret == 0 && PyList_Append(out->keep, refs.items[i]) < 0) {
            ret = -1;
        }
    }
    dfb_arrow_refs_clear(&refs);
    PyMem_Free(idx);
    Py_XDECREF(keys);
    Py_XDECREF(entries);
    return ret;
}

/* import_to_dict (index columns left out) for pandas_fast.c (see
   readers.h). */
PyObject *
dfb_arrow_import_dict(dfb_state *st, const arrow_import *imp,
                      const dfb_opts *opts, int allow_copy)
{
    return import_to_dict(st, imp, 1, opts, allow_copy, NULL);
}
