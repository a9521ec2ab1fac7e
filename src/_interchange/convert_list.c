/* dfbuffer: the list kernels of the nested converter (dfbuffer/nested.h):
 * lists, large lists and maps (offsets), list views (offsets and sizes),
 * both read only through core's checked reader (reader.h), and fixed-size
 * lists, which are a reshaped view of their child (the canonical
 * fixed_shape_tensor extension: its shape and permutation).
 */
#include "common.h"
#include "arrow_internal.h"
#include "convert.h"
#include "nested.h"
#include "reader.h"
#include "mem.h"
#include "sizes.h"
#include "types.h"

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
    if (cn->schema->format == NULL || strcmp(cn->schema->format, "+s") != 0 ||
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
    if (dfb_need_copy(cx->allow_copy,
                      "lists, maps, structs and unions (Python objects)") <
            0 ||
        dfb_nested_child(cx, nd, 0, 0, 0, &cn) < 0 ||
        list_readers(cx, nd, row, nd->array->children[0]->length, &offs,
                     &sizes, &lo, &hi) < 0 ||
        dfb_nested_child(cx, nd, 0, lo, hi - lo, &cn) < 0 ||
        dfb_nested_validity(nd, &out->rowmask) < 0) {
        return -1;
    }
    dfb_nested_ctx sub = *cx;
    sub.in_list = 1;
    if (is_map ? map_entries(cx, &cn, &ch, &vals) < 0
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

/* Finds the value of metadata key `key` in Arrow schema metadata `md` (an
   int32 count, then per entry an int32 length and bytes of the key and of
   the value).  Returns a new bytes object, Py_None when absent, or NULL
   with ValueError for a negative length. */
static PyObject *
metadata_value(const char *md, const char *key)
{
    int32_t n, len = 0;
    if (md == NULL) {
        Py_RETURN_NONE;
    }
    dfb_memcpy(&n, md, 4);
    md += 4;
    const size_t klen = strlen(key);
    for (int32_t i = 0; i < n; i++) {
        int32_t vlen;
        dfb_memcpy(&len, md, 4);
        if (len < 0) {
            break;
        }
        const char *k = md + 4;
        dfb_memcpy(&vlen, k + len, 4);
        if (vlen < 0) {
            break;
        }
        if ((size_t)len == klen && dfb_memcmp(k, key, klen) == 0) {
            return PyBytes_FromStringAndSize(k + len + 4, vlen);
        }
        md = k + len + 4 + vlen;
    }
    if (n < 0 || (n > 0 && len < 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "Arrow schema metadata with a negative length");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Reads an int list from JSON object `obj`'s `key` into out[0 .. *n)
   (at most NPY_MAXDIMS - 1; absent: *n = -1).  Returns 0, or -1 with
   ValueError. */
static int
json_ints(PyObject *obj, const char *key, npy_intp *out, int *n)
{
    PyObject *v = PyDict_Check(obj) ? PyDict_GetItemString(obj, key) : NULL;
    *n = -1;
    if (v == NULL || v == Py_None) {
        return 0;
    }
    if (!PyList_Check(v) || PyList_GET_SIZE(v) >= NPY_MAXDIMS - 1) {
        PyErr_Format(PyExc_ValueError,
                     "arrow.fixed_shape_tensor: '%s' is not a short list",
                     key);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
        long long x = PyLong_AsLongLong(PyList_GET_ITEM(v, i));
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (x < 0) {
            PyErr_Format(PyExc_ValueError,
                         "arrow.fixed_shape_tensor: negative '%s'", key);
            return -1;
        }
        out[i] = (npy_intp)x;
    }
    *n = (int)PyList_GET_SIZE(v);
    return 0;
}

/* For a fixed_shape_tensor node, reshapes *arr (n, w) to (n, *shape),
   honouring the permutation; other nodes are left alone.  Returns 0, or
   -1 with ValueError. */
static int
tensor_shape(const arrow_node *nd, int64_t w, PyArrayObject **arr)
{
    const char *md = nd->schema->metadata;
    PyObject *name = metadata_value(md, "ARROW:extension:name");
    if (name == NULL || name == Py_None ||
        strcmp(PyBytes_AS_STRING(name), "arrow.fixed_shape_tensor") != 0 ||
        PyArray_NDIM(*arr) != 2) {
        Py_XDECREF(name);
        return name == NULL ? -1 : 0;
    }
    Py_DECREF(name);
    PyObject *js = metadata_value(md, "ARROW:extension:metadata");
    PyObject *json =
        js && js != Py_None ? PyImport_ImportModule("json") : NULL;
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

/* Below a list or a struct (or with nulls='fill'), the null values of a
   fixed-size list (its null rows and its values' nulls) are filled (NaN,
   NaT, None) in a copy, as the list rows and the struct's dicts show
   them.  Returns 0, or -1 with an exception. */
static int
fill_null_rows(const dfb_nested_ctx *cx, dfb_nested_out *out)
{
    PyObject *shape = PyObject_GetAttrString((PyObject *)out->values, "shape");
    PyObject *fv = shape ? PyArray_Ravel(out->values, NPY_CORDER) : NULL;
    PyObject *fm = fv ? PyArray_Ravel(out->mask, NPY_CORDER) : NULL;
    PyObject *res = fm ? dfb_nulls_finish(cx->st, fv, (PyArrayObject *)fm, 1,
                                          0, DFB_NULLS_FILL, 1)
                       : NULL;
    PyObject *r = res ? PyObject_CallMethod(res, "reshape", "O", shape) : NULL;
    if (fm == NULL) {
        Py_XDECREF(fv);
    }
    Py_XDECREF(res);
    Py_XDECREF(shape);
    if (r == NULL) {
        return -1;
    }
    Py_SETREF(out->values, (PyArrayObject *)r);
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
    if (dfb_nested_child(cx, nd, 0, first, count, &cn) < 0 ||
        dfb_nested_validity(nd, &out->rowmask) < 0 ||
        cx->node(cx, &cn, &ch) < 0) {
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
    if (out->mask != NULL && (cx->fill || cx->in_list) &&
        fill_null_rows(cx, out) < 0) {
        goto done;
    }
    rc = 0;
done:
    dfb_nested_out_clear(&ch);
    return rc;
}
