/* dfbuffer: Arrow producers to NumPy: one column, a table (dict name ->
 * array), the structs a C caller moves in (the C API), and whole frames
 * described for to_matrix.
 */
#include "common.h"
#include "args.h"
#include "buffer.h"
#include "arrow_internal.h"
#include "arrow_describe.h"
#include "arrow_import.h"
#include "arrow_common.h"
#include "column.h"
#include "format.h"
#include "offsets.h"
#include "frame.h"
#include "arrow_convert.h"
#include "ixwalk.h"
#include "pandas_columns.h"
#include "nested.h"
#include "nested_flat.h"
#include "convert_nested.h"
#include "nested_nodes.h"
#include "categorical.h"
#include "column_select.h"
#include "schema.h"
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
   through describe_node on stand-in arrays without memory.  Returns 0, or
   -1 with an exception set. */
static int
describe_empty(dfb_state *st, const struct ArrowSchema *s, dfb_column *col,
               dfb_column *dict, ref_list *refs, const char *name)
{
    static const void *no_buffers[3] = {NULL, NULL, NULL};
    struct ArrowArray arr[2];
    dfb_format f;
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

PyObject *
dfb_arrow_from_dataframe_cols(dfb_state *st, PyObject *obj,
                              const dfb_opts *opts, int allow_copy,
                              dfb_colsel *sel)
{
    arrow_import imp = {.st = st};
    PyObject *res = NULL;
    if (dfb_arrow_import_producer(st, obj, &imp) == 0) {
        res = import_to_dict(st, &imp, 1, opts, allow_copy, sel);
    }
    dfb_arrow_import_clear(&imp);
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
    ref_list refs = {0};
    Py_ssize_t *idx = NULL, n = 0;
    PyObject *keys = NULL, *entries = NULL;
    int ret = -1;
    if (dfb_arrow_import_producer(st, obj, &imp) < 0) {
        goto done;
    }
    int is_table = dfb_arrow_import_is_table(&imp);
    if (is_table && dfb_arrow_validate_table(&imp) < 0) {
        goto done;
    }
    entries = frame_entries(&imp, is_table, select, flatten);
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
    for (Py_ssize_t b = 0; b < imp.n; b++) {
        if (dfb_checked_add(out->nrows, imp.arrays[b]->length, &out->nrows) <
            0) {
            PyErr_SetString(PyExc_ValueError,
                            "the Arrow chunks' lengths overflow");
            goto done;
        }
    }
    /* the holders own every buffer of the producer's: keep them */
    for (Py_ssize_t b = 0; b < imp.n; b++) {
        if (PyList_Append(out->keep, imp.holders[b]) < 0) {
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
            is_pandas_period(is_table ? imp.schema.children[c] : &imp.schema,
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
        if (describe_frame_column(st, &imp, is_table, c, path, depth, fc,
                                  &refs, out->keep) < 0) {
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
    dfb_arrow_import_clear(&imp);
    return ret;
}

/* import_to_dict (index columns left out) for pandas_fast.c (see
   arrow_convert.h). */
PyObject *
dfb_arrow_import_dict(dfb_state *st, const arrow_import *imp,
                      const dfb_opts *opts, int allow_copy)
{
    return import_to_dict(st, imp, 1, opts, allow_copy, NULL);
}
