/* dfbuffer: the list kernels of the nested converter (dfbuffer/nested.h):
 * lists, large lists and maps (offsets), list views (offsets and sizes),
 * both read only through core's checked reader (reader.h), and fixed-size
 * lists, which are a reshaped view of their child (the canonical
 * fixed_shape_tensor extension: its shape and permutation).
 */
#include "common.h"
#include "arrow.h"
#include "model.h"
#include "nested.h"
#include "reader.h"
#include "mem.h"
#include "types.h"
#include "kernels.h"

#include <string.h>

/* Sets up the checked readers of list node `nd` (`sizes` too for list
   views) and the child range [*lo, *hi) its rows may use.  Returns 0, or
   -1 with ValueError. */
static int
list_readers(const dfb_nested_ctx *cx, const arrow_node *nd,
             const dfb_type_row *row, int64_t climit, dfb_offsets *offs,
             dfb_offsets *sizes, int64_t *lo, int64_t *hi)
{
    const struct ArrowArray *a = nd->array;
    const int w = row->offset_bytes;
    const int is_view = row->layout == DFB_LAYOUT_LIST_VIEW;
    const int64_t count = is_view ? nd->length : nd->length + 1;
    int64_t end, bytes;
    dfb_error err;
    *lo = 0;
    *hi = is_view ? climit : 0;
    if (nd->length == 0) {
        return 0;
    }
    if (a->buffers[1] == NULL || (is_view && a->buffers[2] == NULL)) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a list array of format '%s' without its "
                     "offsets",
                     cx->name, nd->schema->format);
        return -1;
    }
    if (dfb_checked_add(nd->offset, count, &end) < 0 ||
        dfb_checked_mul(end, w, &bytes) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': the offsets of offset %lld + %lld "
                     "overflow",
                     cx->name, (long long)nd->offset, (long long)count);
        return -1;
    }
    if (dfb_offsets_init(offs, a->buffers[1], bytes, w, 0, nd->offset, count,
                         climit, &err) != DFB_OK ||
        (is_view &&
         dfb_offsets_init(sizes, a->buffers[2], bytes, w, 0, nd->offset, count,
                          INT64_MAX, &err) != DFB_OK)) {
        PyErr_Format(PyExc_ValueError, "column '%s': %s", cx->name,
                     err.message);
        return -1;
    }
    if (!is_view &&
        (dfb_offsets_get(offs, 0, lo) != DFB_OK ||
         dfb_offsets_get(offs, nd->length, hi) != DFB_OK || *lo > *hi)) {
        return dfb_nested_bad(cx->name, "offsets", 0);
    }
    return 0;
}

/* The (key, value) tuples of map entries [s, e) of the converted keys and
   values.  Returns a new list, or NULL with an exception. */
static PyObject *
map_row(const dfb_nested_out *keys, const dfb_nested_out *vals, int64_t s,
        int64_t e)
{
    PyObject *row = PyList_New((Py_ssize_t)(e - s));
    for (int64_t j = s; row != NULL && j < e; j++) {
        PyObject *k = dfb_nested_item(keys, j);
        PyObject *v = k ? dfb_nested_item(vals, j) : NULL;
        PyObject *t = v ? PyTuple_Pack(2, k, v) : NULL;
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (t == NULL) {
            Py_CLEAR(row);
            break;
        }
        PyList_SET_ITEM(row, (Py_ssize_t)(j - s), t);
    }
    return row;
}

/* Converts the entries struct of map node child `cn` into its keys and
   values.  Returns 0, or -1 with an exception. */
static int
map_entries(const dfb_nested_ctx *cx, const arrow_node *cn,
            dfb_nested_out *keys, dfb_nested_out *vals)
{
    arrow_node kn, vn;
    if (dfb_arrow_format_type(cn->schema->format) != DFB_T_STRUCT ||
        cn->schema->n_children != 2 || cn->array->n_children != 2) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a map's entries must be a struct of two "
                     "fields",
                     cx->name);
        return -1;
    }
    if (dfb_nested_child(cx, cn, 0, cn->offset, cn->length, &kn) < 0 ||
        dfb_nested_child(cx, cn, 1, cn->offset, cn->length, &vn) < 0 ||
        cx->node(cx, &kn, keys) < 0 || cx->node(cx, &vn, vals) < 0) {
        return -1;
    }
    return 0;
}

int
dfb_nested_list(const dfb_nested_ctx *cx, const arrow_node *nd,
                const dfb_format *f, dfb_nested_out *out)
{
    const dfb_type_row *row = dfb_type_row_of(f->type);
    const int is_view = row->layout == DFB_LAYOUT_LIST_VIEW;
    const int is_map = f->type == DFB_T_MAP;
    const int64_t n = nd->length;
    dfb_offsets offs, sizes;
    dfb_nested_out ch = {0}, vals = {0};
    arrow_node cn;
    int64_t lo, hi;
    int rc = -1;
    if (dfb_need_copy(cx->st, cx->allow_copy,
                      "lists, maps, structs and unions (Python objects)") <
            0 ||
        dfb_nested_child(cx, nd, 0, 0, 0, &cn) < 0 ||
        list_readers(cx, nd, row, nd->array->children[0]->length, &offs,
                     &sizes, &lo, &hi) < 0 ||
        dfb_nested_child(cx, nd, 0, lo, hi - lo, &cn) < 0 ||
        dfb_nested_validity(nd, &out->rowmask) < 0) {
        return -1;
    }
    /* list rows are views of the child's values; map entries are
       (key, value) items */
    const dfb_nested_ctx sub = dfb_nested_below(cx, DFB_NESTED_IN_ARRAY);
    const dfb_nested_ctx items = dfb_nested_below(cx, DFB_NESTED_IN_ITEM);
    if (is_map ? map_entries(&items, &cn, &ch, &vals) < 0
               : sub.node(&sub, &cn, &ch) < 0) {
        goto done;
    }
    out->values = dfb_nested_objects(n);
    if (out->values == NULL) {
        goto done;
    }
    PyObject **slots = PyArray_DATA(out->values);
    const uint8_t *null =
        out->rowmask ? (const uint8_t *)PyArray_DATA(out->rowmask) : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t s, e;
        if (null != NULL && null[i]) {
            continue;
        }
        dfb_code ok = is_view ? dfb_list_view_span(&offs, &sizes, i, &s, &e)
                              : dfb_offsets_span(&offs, i, &s, &e);
        if (ok != DFB_OK || s < lo || e > hi) {
            dfb_nested_bad(cx->name, is_view ? "offsets and sizes" : "offsets",
                           i);
            goto done;
        }
        PyObject *item = is_map ? map_row(&ch, &vals, s - lo, e - lo)
                                : dfb_nested_rows(ch.values, s - lo, e - lo);
        if (item == NULL) {
            goto done;
        }
        Py_SETREF(slots[i], item);
    }
    out->mask = (PyArrayObject *)Py_XNewRef(out->rowmask);
    rc = 0;
done:
    dfb_nested_out_clear(&ch);
    dfb_nested_out_clear(&vals);
    return rc;
}

/* Reads an int list from JSON object `obj`'s `key` into out[0 .. *n)
   (at most NPY_MAXDIMS - 1; absent: *n = -1).  Returns 0, or -1 with
   ValueError. */
static int
json_ints(PyObject *obj, const char *key, npy_intp *out, int *n)
{
    /* `obj` is our own json.loads result: nothing else reaches it, but its
       items are held all the same */
    PyObject *v = NULL;
    *n = -1;
    if (PyDict_Check(obj) && dfb_dict_get_ref_str(obj, key, &v) < 0) {
        return -1;
    }
    if (v == NULL || v == Py_None) {
        Py_XDECREF(v);
        return 0;
    }
    if (!PyList_Check(v) || PyList_GET_SIZE(v) >= NPY_MAXDIMS - 1) {
        PyErr_Format(PyExc_ValueError,
                     "arrow.fixed_shape_tensor: '%s' is not a short list",
                     key);
        Py_DECREF(v);
        return -1;
    }
    int len = (int)PyList_GET_SIZE(v);
    for (int i = 0; i < len; i++) {
        PyObject *item = dfb_list_get_ref(v, i);
        long long x = item != NULL ? PyLong_AsLongLong(item) : -1;
        Py_XDECREF(item);
        if (x == -1 && PyErr_Occurred()) {
            Py_DECREF(v);
            return -1;
        }
        if (x < 0) {
            PyErr_Format(PyExc_ValueError,
                         "arrow.fixed_shape_tensor: negative '%s'", key);
            Py_DECREF(v);
            return -1;
        }
        out[i] = (npy_intp)x;
    }
    Py_DECREF(v);
    *n = len;
    return 0;
}

/* For a fixed_shape_tensor node, reshapes *arr (n, w) to (n, *shape),
   honouring the permutation; other nodes are left alone.  Returns 0, or
   -1 with ValueError. */
static int
tensor_shape(const arrow_node *nd, int64_t w, PyArrayObject **arr)
{
    const char *md;
    int32_t md_len;
    const int x = dfb_metadata_extension(nd->schema->metadata, &md, &md_len);
    if (x < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "Arrow schema metadata with a negative count or "
                        "length, or one beyond 2**31 - 1 bytes");
        return -1;
    }
    if (x != DFB_EXT_FIXED_SHAPE_TENSOR || PyArray_NDIM(*arr) != 2) {
        return 0;
    }
    PyObject *js = md ? PyBytes_FromStringAndSize(md, md_len) : NULL;
    PyObject *json = js ? PyImport_ImportModule("json") : NULL;
    PyObject *meta = json ? PyObject_CallMethod(json, "loads", "O", js) : NULL;
    Py_XDECREF(js);
    Py_XDECREF(json);
    npy_intp shape[NPY_MAXDIMS], perm[NPY_MAXDIMS], dims[NPY_MAXDIMS];
    npy_intp axes[NPY_MAXDIMS];
    int ns, np_, rc = -1;
    if (meta == NULL || json_ints(meta, "shape", shape, &ns) < 0 ||
        json_ints(meta, "permutation", perm, &np_) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError,
                            "arrow.fixed_shape_tensor without metadata");
        }
        goto done;
    }
    /* the shape's product, stopping at an overflow or a negative extent */
    int64_t ext[NPY_MAXDIMS], size = -1;
    for (int i = 0; i < ns; i++) {
        ext[i] = (int64_t)shape[i];
    }
    if (ns < 0 || dfb_checked_shape(ext, ns, &size) < 0 || size != w ||
        (np_ >= 0 && np_ != ns)) {
        PyErr_SetString(PyExc_ValueError,
                        "arrow.fixed_shape_tensor: its shape does not match "
                        "its list size, or its permutation its shape");
        goto done;
    }
    /* stored row-major in `shape`; result axis i is stored axis perm[i]
       (as pyarrow's to_numpy_ndarray) */
    uint8_t seen[NPY_MAXDIMS] = {0};
    dims[0] = PyArray_DIM(*arr, 0);
    axes[0] = 0;
    for (int i = 0; i < ns; i++) {
        npy_intp p = np_ >= 0 ? perm[i] : i;
        if (p >= ns || seen[p]) {
            PyErr_SetString(PyExc_ValueError,
                            "arrow.fixed_shape_tensor: a bad permutation");
            goto done;
        }
        seen[p] = 1;
        dims[1 + i] = shape[i];
        axes[1 + i] = 1 + p;
    }
    PyArray_Dims d = {dims, ns + 1}, t = {axes, ns + 1};
    PyObject *r = PyArray_Newshape(*arr, &d, NPY_CORDER);
    PyObject *tr = r ? PyArray_Transpose((PyArrayObject *)r, &t) : NULL;
    Py_XDECREF(r);
    if (tr != NULL) {
        Py_SETREF(*arr, (PyArrayObject *)tr);
        rc = 0;
    }
done:
    Py_XDECREF(meta);
    return rc;
}

/* The element mask of a fixed-size list node: the child's mask (if any)
   with every element of a null row set, shaped like `values`.  Returns 0
   (*mask NULL when nothing is null), or -1 with an exception. */
static int
fixed_list_mask(const dfb_nested_out *ch, PyArrayObject *rowmask,
                PyArrayObject *values, PyArrayObject **mask)
{
    *mask = NULL;
    if (ch->mask == NULL && rowmask == NULL) {
        return 0;
    }
    PyArrayObject *m = (PyArrayObject *)PyArray_ZEROS(
        PyArray_NDIM(values), PyArray_DIMS(values), NPY_BOOL, 0);
    if (m == NULL) {
        return -1;
    }
    char *p = PyArray_DATA(m);
    const npy_intp total = PyArray_SIZE(m);
    if (ch->mask != NULL && PyArray_SIZE(ch->mask) == total) {
        dfb_memcpy(p, PyArray_DATA(ch->mask), (size_t)total);
    }
    if (rowmask != NULL && PyArray_DIM(m, 0) > 0) {
        const npy_intp n = PyArray_DIM(m, 0), inner = total / n;
        const uint8_t *r = PyArray_DATA(rowmask);
        for (npy_intp i = 0; i < n; i++) {
            if (r[i]) {
                dfb_memset(p + i * inner, 1, (size_t)inner);
            }
        }
    }
    *mask = m;
    return 0;
}

int
dfb_nested_fixed_list(const dfb_nested_ctx *cx, const arrow_node *nd,
                      const dfb_format *f, dfb_nested_out *out)
{
    const int64_t w = f->size, n = nd->length;
    int64_t first, count;
    arrow_node cn;
    dfb_nested_out ch = {0};
    int rc = -1;
    if (dfb_checked_mul(nd->offset, w, &first) < 0 ||
        dfb_checked_mul(n, w, &count) < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': fixed-size list offset and length "
                     "overflow",
                     cx->name);
        return -1;
    }
    /* the child is one array with this node: its null elements are
       settled with this node's (dfb_nested_settle), not before */
    const dfb_nested_ctx sub = dfb_nested_below(cx, DFB_NESTED_TOP);
    if (dfb_nested_child(cx, nd, 0, first, count, &cn) < 0 ||
        dfb_nested_validity(nd, &out->rowmask) < 0 ||
        sub.node(&sub, &cn, &ch) < 0) {
        goto done;
    }
    const int cnd = PyArray_NDIM(ch.values);
    if (cnd + 1 > NPY_MAXDIMS) {
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%s': fixed-size lists nested deeper than "
                     "NumPy's dimensions",
                     cx->name);
        goto done;
    }
    npy_intp dims[NPY_MAXDIMS];
    dims[0] = (npy_intp)n;
    dims[1] = (npy_intp)w;
    for (int k = 1; k < cnd; k++) {
        dims[k + 1] = PyArray_DIM(ch.values, k);
    }
    PyArray_Dims d = {dims, cnd + 1};
    out->values = (PyArrayObject *)PyArray_Newshape(ch.values, &d, NPY_CORDER);
    if (out->values == NULL ||
        fixed_list_mask(&ch, out->rowmask, out->values, &out->mask) < 0 ||
        tensor_shape(nd, w, &out->values) < 0 ||
        (out->mask != NULL && tensor_shape(nd, w, &out->mask) < 0)) {
        goto done;
    }
    if (out->mask != NULL && !PyArray_IS_C_CONTIGUOUS(out->mask)) {
        Py_SETREF(out->mask,
                  (PyArrayObject *)PyArray_NewCopy(out->mask, NPY_CORDER));
        if (out->mask == NULL) {
            goto done;
        }
    }
    rc = 0;
done:
    dfb_nested_out_clear(&ch);
    return rc;
}
