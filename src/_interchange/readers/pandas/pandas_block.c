/* dfbuffer: the block builder of the pandas front end (dfbuffer.pandas).
 *
 * _pandas_arrow_block reads an Arrow table whose columns share one numeric
 * type into one 2-D (columns, rows) block, the layout pandas stores;
 * _rows_block finds columns that already lie one after the other;
 * _stringdtype_arrow turns a StringDType array into Arrow large-string
 * buffers.  The pandas frame reader is pandas_frame.c.
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "probe.h"
#include "pandas.h"
#include "readers.h"
#include "bitmap.h"
#include "mem.h"
#include "arrow.h"
#include "types.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* One 2-D block for a table whose columns share one numeric type       */
/* ------------------------------------------------------------------ */

/* Returns the NumPy type number of the one-character Arrow format `f`
   when dfbuffer.pandas puts such columns into one block (fixed-width ints
   and floats), else -1.  Cannot fail. */
static int
block_type(const char *f)
{
    if (f == NULL || f[0] == '\0' || f[1] != '\0') {
        return -1;
    }
    switch (f[0]) {
        case 'c':
            return NPY_INT8;
        case 'C':
            return NPY_UINT8;
        case 's':
            return NPY_INT16;
        case 'S':
            return NPY_UINT16;
        case 'i':
            return NPY_INT32;
        case 'I':
            return NPY_UINT32;
        case 'l':
            return NPY_INT64;
        case 'L':
            return NPY_UINT64;
        case 'e':
            return NPY_HALF;
        case 'f':
            return NPY_FLOAT;
        case 'g':
            return NPY_DOUBLE;
        default:
            return -1;
    }
}

/* Returns 1 if Arrow metadata `md` holds no entry (NULL or a zero count),
   else 0: a field with metadata may be an extension type.  Cannot fail. */
static int
no_metadata(const char *md)
{
    if (md == NULL) {
        return 1;
    }
    int32_t n;
    memcpy(&n, md, 4);
    return n == 0;
}

/* Returns the NumPy type shared by every column of table schema `s` (a
   struct of at least one child, each a plain fixed-width int or float of
   the same format, without dictionary, children or field metadata), or -1
   when the schema does not qualify.  Cannot fail. */
static int
block_schema_type(const struct ArrowSchema *s)
{
    if (dfb_arrow_format_type(s->format) != DFB_T_STRUCT ||
        s->dictionary != NULL || s->n_children < 1 || s->children == NULL) {
        return -1;
    }
    const struct ArrowSchema *c0 = s->children[0];
    if (c0 == NULL) {
        return -1;
    }
    int t = block_type(c0->format);
    for (int64_t c = 0; t >= 0 && c < s->n_children; c++) {
        const struct ArrowSchema *ch = s->children[c];
        if (ch == NULL || ch->format == NULL || ch->name == NULL ||
            ch->dictionary != NULL || ch->n_children != 0 ||
            strcmp(ch->format, c0->format) != 0 ||
            !no_metadata(ch->metadata)) {
            t = -1;
        }
    }
    return t;
}

/* Returns a new list of the column names of `s` (str), Py_None when two
   are equal (the caller falls back to the column converters, which report
   it), or NULL with an exception set (UnicodeDecodeError). */
static PyObject *
block_names(const struct ArrowSchema *s)
{
    PyObject *names = PyList_New(s->n_children);
    PyObject *seen = names == NULL ? NULL : PySet_New(NULL);
    if (seen == NULL) {
        Py_XDECREF(names);
        return NULL;
    }
    for (int64_t c = 0; c < s->n_children; c++) {
        PyObject *k = PyUnicode_FromString(s->children[c]->name);
        if (k == NULL) {
            goto fail;
        }
        PyList_SET_ITEM(names, c, k);
        int dup = PySet_Contains(seen, k);
        if (dup < 0 || (dup == 0 && PySet_Add(seen, k) < 0)) {
            goto fail;
        }
        if (dup > 0) {
            Py_DECREF(seen);
            Py_DECREF(names);
            Py_RETURN_NONE;
        }
    }
    Py_DECREF(seen);
    return names;
fail:
    Py_DECREF(seen);
    Py_DECREF(names);
    return NULL;
}

/* One column chunk of the block: where its values are and whether its
   validity bitmap marks nulls. */
typedef struct {
    const char *values;  /* first element (offset applied) */
    const uint8_t *bits; /* validity, or NULL when no value is null */
    int64_t bit_offset;  /* of the first element in `bits` */
    int64_t length;
} block_piece;

/* Fills `p` for column `c` of chunk `b` of the validated table import
   `imp` (element size `isz`).  Returns 0, or -1 with ValueError for an
   array that is not a plain fixed-width one. */
static int
block_piece_of(const arrow_import *imp, Py_ssize_t b, int64_t c, int isz,
               block_piece *p)
{
    arrow_node nd;
    if (dfb_arrow_import_node(imp, 1, b, c, &nd) < 0) {
        return -1;
    }
    const struct ArrowArray *a = nd.array;
    const char *name = imp->schema.children[c]->name;
    if (a->n_buffers != 2 || a->buffers == NULL || a->n_children != 0 ||
        a->dictionary != NULL) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': a fixed-width Arrow array must have 2 "
                     "buffers and no children",
                     name);
        return -1;
    }
    if (nd.length > 0 && a->buffers[1] == NULL) {
        PyErr_Format(PyExc_ValueError, "column '%s': no values buffer", name);
        return -1;
    }
    p->values =
        nd.length > 0 ? (const char *)a->buffers[1] + nd.offset * isz : NULL;
    p->length = nd.length;
    p->bits = NULL;
    p->bit_offset = nd.offset;
    const uint8_t *bits = a->buffers[0];
    if (bits == NULL) {
        if (a->null_count > 0) {
            PyErr_Format(PyExc_ValueError,
                         "column '%s': null_count %lld but no validity "
                         "bitmap",
                         name, (long long)a->null_count);
            return -1;
        }
        return 0;
    }
    if (a->null_count != 0 &&
        dfb_bitmap_count_zeros(bits, nd.offset, nd.length) > 0) {
        p->bits = bits;
    }
    return 0;
}

/* Copies the pieces of one column (`npieces`, `isz`-byte elements) to
   `dst`, writing NaN into the null slots of float columns (`nan`, `isz`
   bytes; NULL for ints) and 1 into `mask` at the null rows of int columns
   (NULL: no mask).  Touches no Python object.  Cannot fail. */
static void
copy_column(const block_piece *pieces, Py_ssize_t npieces, int isz,
            const void *nan, char *dst, uint8_t *mask)
{
    for (Py_ssize_t b = 0; b < npieces; b++) {
        const block_piece *p = &pieces[b];
        if (p->length > 0) {
            dfb_memcpy(dst, p->values, (size_t)(p->length * isz));
        }
        if (p->bits != NULL && nan != NULL) {
            for (int64_t i = 0; i < p->length; i++) {
                int64_t j = p->bit_offset + i;
                if (!((p->bits[j >> 3] >> (j & 7)) & 1)) {
                    dfb_memcpy(dst + i * isz, nan, (size_t)isz);
                }
            }
        }
        else if (p->bits != NULL && mask != NULL) {
            dfb_bitmap_unpack(p->bits, p->bit_offset, p->length, mask, 1);
        }
        dst += p->length * isz;
        if (mask != NULL) {
            mask += p->length;
        }
    }
}

/* Returns a new (ncols, nrows) C-ordered array of NumPy type `type` over
   the memory at `start` (the rows one after the other, which the caller
   checked), read-only unless `writeable`, holding a strong reference to
   `base` (what keeps that memory alive), or NULL with an exception set. */
static PyObject *
rows_view(const char *start, int64_t ncols, int64_t nrows, int type,
          PyObject *base, int writeable)
{
    npy_intp dims[2] = {(npy_intp)ncols, (npy_intp)nrows};
    PyObject *v = PyArray_NewFromDescr(
        &PyArray_Type, PyArray_DescrFromType(type), 2, dims, NULL,
        (void *)start, writeable ? NPY_ARRAY_WRITEABLE : 0, NULL);
    if (v == NULL) {
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)v, Py_NewRef(base)) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* Returns 1 if the one-chunk pieces of every column (`ncols` of `nrows`
   `isz`-byte values, none null) lie one after the other from an aligned
   start, so that one 2-D view holds them, else 0.  Cannot fail. */
static int
pieces_adjacent(const block_piece *pieces, int64_t ncols, int64_t nrows,
                int isz)
{
    const char *start = pieces[0].values;
    if (nrows == 0 || start == NULL || (uintptr_t)start % (uintptr_t)isz) {
        return 0;
    }
    for (int64_t c = 0; c < ncols; c++) {
        if (pieces[c].bits != NULL ||
            (uintptr_t)pieces[c].values !=
                (uintptr_t)start +
                    (uintptr_t)c * (uintptr_t)nrows * (uintptr_t)isz) {
            return 0;
        }
    }
    return 1;
}

/* Builds the (ncols, nrows) block of validated table import `imp` (NumPy
   type `type`): a read-only view of the producer's memory when the
   columns are one chunk whose values lie one after the other (pandas'
   own 2-D blocks exported to Arrow), else a copy if `copy_ok`.  Returns a
   new 2-tuple (block, masks: dict column -> bool null mask for int
   columns with nulls, or None), Py_None when neither applies, or NULL
   with an exception set. */
static PyObject *
build_block(const arrow_import *imp, int type, int64_t nrows, int copy_ok)
{
    const int64_t ncols = imp->schema.n_children;
    const Py_ssize_t nb = imp->n;
    PyArray_Descr *d = PyArray_DescrFromType(type);
    const int isz = (int)PyDataType_ELSIZE(d);
    const int is_float = d->kind == 'f';
    Py_DECREF(d);
    block_piece *pieces = PyMem_Calloc(
        (size_t)(nb > 0 ? nb : 1) * (size_t)ncols, sizeof(block_piece));
    uint8_t **masks = PyMem_Calloc((size_t)ncols, sizeof(uint8_t *));
    PyObject *block = NULL, *mdict = NULL, *res = NULL;
    if (pieces == NULL || masks == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    mdict = PyDict_New();
    if (mdict == NULL) {
        goto done;
    }
    for (int64_t c = 0; c < ncols; c++) {
        int nulls = 0;
        for (Py_ssize_t b = 0; b < nb; b++) {
            block_piece *p = &pieces[c * nb + b];
            if (block_piece_of(imp, b, c, isz, p) < 0) {
                goto done;
            }
            nulls |= p->bits != NULL;
        }
        if (nulls && !is_float) {
            npy_intp n = (npy_intp)nrows;
            PyObject *m = PyArray_ZEROS(1, &n, NPY_BOOL, 0);
            PyObject *k = m == NULL ? NULL : PyLong_FromLongLong(c);
            int e = k == NULL || PyDict_SetItem(mdict, k, m) < 0;
            Py_XDECREF(k);
            Py_XDECREF(m); /* the dict holds it */
            if (e) {
                goto done;
            }
            masks[c] = PyArray_DATA((PyArrayObject *)m);
        }
    }
    if (nb == 1 && pieces_adjacent(pieces, ncols, nrows, isz)) {
        block = rows_view(pieces[0].values, ncols, nrows, type,
                          imp->holders[0], 0);
        res = block == NULL ? NULL : PyTuple_Pack(2, block, Py_None);
        goto done;
    }
    if (!copy_ok) {
        res = Py_NewRef(Py_None);
        goto done;
    }
    npy_intp dims[2] = {(npy_intp)ncols, (npy_intp)nrows};
    block = PyArray_SimpleNew(2, dims, type);
    if (block == NULL) {
        goto done;
    }
    char *out = PyArray_DATA((PyArrayObject *)block);
    static const uint16_t nan16 = 0x7e00;
    static const uint32_t nan32 = 0x7fc00000u;
    static const uint64_t nan64 = 0x7ff8000000000000ull;
    const void *nan = !is_float  ? NULL
                      : isz == 2 ? (const void *)&nan16
                      : isz == 4 ? (const void *)&nan32
                                 : (const void *)&nan64;
    DFB_NOGIL_IF(nrows * ncols, {
        for (int64_t c = 0; c < ncols; c++) {
            copy_column(&pieces[c * nb], nb, isz, nan, out + c * nrows * isz,
                        masks[c]);
        }
    });
    res = PyTuple_Pack(2, block, PyDict_GET_SIZE(mdict) ? mdict : Py_None);
done:
    Py_XDECREF(block);
    Py_XDECREF(mdict);
    PyMem_Free(masks);
    PyMem_Free(pieces);
    return res;
}

/* The rest of _pandas_arrow_block once the stream's schema qualified and
   its chunks are in `imp`: returns the new 4-tuple (names, block or None,
   masks / column dict / None, pandas index metadata), or NULL with an
   exception set. */
static PyObject *
block_from_import(dfb_state *st, arrow_import *imp, int type, PyObject *names,
                  Py_ssize_t min_columns, Py_ssize_t max_bytes)
{
    if (dfb_arrow_validate_table(imp) < 0) {
        return NULL;
    }
    int64_t nrows = 0;
    for (Py_ssize_t b = 0; b < imp->n; b++) {
        if (dfb_checked_add(nrows, imp->arrays[b]->length, &nrows) < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "the Arrow stream's row count "
                            "overflows");
            return NULL;
        }
    }
    PyObject *meta = dfb_arrow_pandas_index(&imp->schema);
    if (meta == NULL) {
        return NULL;
    }
    PyArray_Descr *d = PyArray_DescrFromType(type);
    const int64_t isz = PyDataType_ELSIZE(d);
    Py_DECREF(d);
    PyObject *res = NULL;
    int copy_ok =
        imp->schema.n_children >= min_columns && nrows <= max_bytes / isz;
    PyObject *bm = build_block(imp, type, nrows, copy_ok);
    if (bm == Py_None) {
        /* columns too long (or too few) to share a copied block: the
           converters' zero-copy columns */
        PyObject *cols = dfb_arrow_import_dict(st, imp, &dfb_opts_default, 1);
        if (cols != NULL) {
            res = PyTuple_Pack(4, names, Py_None, cols, meta);
            Py_DECREF(cols);
        }
    }
    else if (bm != NULL) {
        res = PyTuple_Pack(4, names, PyTuple_GET_ITEM(bm, 0),
                           PyTuple_GET_ITEM(bm, 1), meta);
    }
    Py_XDECREF(bm);
    Py_DECREF(meta);
    return res;
}

/* What block_accept learnt from a schema that qualifies. */
typedef struct {
    int type;        /* the NumPy type number of every column */
    PyObject *names; /* the column names (new reference) */
} block_schema;

/* dfb_arrow_accept_fn of _pandas_arrow_block: 1 when every column of
   `schema` has one fixed-width int or float type and there are no pandas
   index columns and no duplicate names (type and names then in ctx, a
   block_schema), 0 when not, -1 with an exception set. */
static int
block_accept(const struct ArrowSchema *schema, void *ctx)
{
    block_schema *q = ctx;
    int type = block_schema_type(schema);
    if (type < 0) {
        return 0;
    }
    uint8_t *skip = PyMem_Calloc((size_t)schema->n_children, 1);
    if (skip == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int nindex = dfb_arrow_index_columns(schema, skip);
    PyMem_Free(skip);
    if (nindex != 0) {
        return nindex < 0 ? -1 : 0;
    }
    PyObject *names = block_names(schema);
    if (names == NULL) {
        return -1;
    }
    if (names == Py_None) {
        Py_DECREF(names);
        return 0;
    }
    q->type = type;
    q->names = names;
    return 1;
}

PyDoc_STRVAR(pandas_arrow_block_doc,
             "_pandas_arrow_block(obj, min_columns, max_bytes, /)\n--\n\n"
             "Private helper of dfbuffer.pandas: for an Arrow stream producer "
             "whose\n"
             "columns all share one fixed-width int or float type (no "
             "pandas index\n"
             "columns, no duplicate names), (names, block, masks, "
             "pandas_index):\n"
             "block the (columns, rows) copy of the values (float nulls as "
             "NaN),\n"
             "masks {column: null mask} for int columns with nulls or None; "
             "with\n"
             "fewer than min_columns columns or columns of more than "
             "max_bytes,\n"
             "block is None and masks from_dataframe's dict.  None (the "
             "stream's\n"
             "data unread) for any other producer.");

/* _pandas_arrow_block(obj, min_columns, max_bytes).  Returns a new tuple,
   None, or NULL with an exception set. */
static PyObject *
pandas_arrow_block_py(PyObject *module, PyObject *const *args,
                      Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError,
                        "_pandas_arrow_block() takes 3 arguments");
        return NULL;
    }
    Py_ssize_t min_columns = PyLong_AsSsize_t(args[1]);
    Py_ssize_t max_bytes = PyLong_AsSsize_t(args[2]);
    if ((min_columns == -1 || max_bytes == -1) && PyErr_Occurred()) {
        return NULL;
    }
    dfb_state *st = dfb_state_from_module(module);
    PyObject *obj = args[0];
    PyObject *meth = PyObject_GetAttr(obj, st->str.arrow_c_stream);
    if (meth == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
            return NULL;
        }
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *cap = PyObject_CallNoArgs(meth);
    Py_DECREF(meth);
    arrow_import imp = {.st = st};
    block_schema q = {-1, NULL};
    PyObject *res = NULL;
    int r = dfb_arrow_import_stream_capsule(cap, &imp, block_accept, &q);
    if (r == 0) {
        res = block_from_import(st, &imp, q.type, q.names, min_columns,
                                max_bytes);
    }
    else if (r == 1) {
        res = Py_NewRef(Py_None); /* the stream's data unread */
    }
    Py_XDECREF(q.names);
    dfb_arrow_import_clear(&imp);
    return res;
}

PyDoc_STRVAR(rows_block_doc,
             "_rows_block(arrays, /)\n--\n\n"
             "Private helper of dfbuffer.pandas: one (len(arrays), n) view "
             "of a list of\n"
             "1-D contiguous, aligned NumPy arrays of one int, uint, float "
             "or bool\n"
             "dtype and length n >= 1 whose data lie one after the other "
             "(the columns\n"
             "of one 2-D block), holding them all; writeable only if every "
             "one is.\n"
             "None when they do not.");

/* _rows_block(arrays).  Returns a new array, None, or NULL with an
   exception set (TypeError for a non-list). */
static PyObject *
rows_block_py(PyObject *module, PyObject *arg)
{
    (void)module;
    if (!PyList_CheckExact(arg)) {
        PyErr_SetString(PyExc_TypeError, "_rows_block() expects a list");
        return NULL;
    }
    PyObject *arrays = PyList_AsTuple(arg); /* what the view holds */
    if (arrays == NULL) {
        return NULL;
    }
    const Py_ssize_t k = PyTuple_GET_SIZE(arrays);
    PyObject *res = NULL;
    if (k < 1 || !PyArray_CheckExact(PyTuple_GET_ITEM(arrays, 0))) {
        goto none;
    }
    PyArrayObject *a0 = (PyArrayObject *)PyTuple_GET_ITEM(arrays, 0);
    PyArray_Descr *d = PyArray_DESCR(a0);
    const int type = d->type_num;
    const npy_intp isz = PyDataType_ELSIZE(d);
    if (PyArray_NDIM(a0) != 1 || d->kind == 0 || !strchr("biuf", d->kind) ||
        !PyArray_ISNBO(d->byteorder) || PyTypeNum_ISUSERDEF(type) ||
        isz <= 0) {
        goto none;
    }
    const npy_intp n = PyArray_DIM(a0, 0);
    const char *start = PyArray_DATA(a0);
    int writeable = 1;
    if (n < 1 || (uintptr_t)start % (uintptr_t)isz) {
        goto none;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *o = PyTuple_GET_ITEM(arrays, i);
        if (!PyArray_CheckExact(o)) {
            goto none;
        }
        PyArrayObject *a = (PyArrayObject *)o;
        if (PyArray_DESCR(a)->type_num != type || PyArray_NDIM(a) != 1 ||
            PyArray_DIM(a, 0) != n || PyArray_STRIDE(a, 0) != isz ||
            !PyArray_ISNBO(PyArray_DESCR(a)->byteorder) ||
            (uintptr_t)PyArray_DATA(a) !=
                (uintptr_t)start + (uintptr_t)i * (uintptr_t)(n * isz)) {
            goto none;
        }
        writeable &= PyArray_ISWRITEABLE(a) != 0;
    }
    res = rows_view(start, k, n, type, arrays, writeable);
    Py_DECREF(arrays);
    return res;
none:
    Py_DECREF(arrays);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ */
/* StringDType to Arrow large-string buffers                            */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(stringdtype_arrow_doc,
             "_stringdtype_arrow(values, mask, /)\n--\n\n"
             "Private helper of dfbuffer.pandas: the Arrow large_string "
             "buffers of a 1-D\n"
             "StringDType array as (offsets int64[n + 1], data uint8, "
             "validity bitmap\n"
             "uint8 or None, null count); a value is null where the dtype's "
             "na_object\n"
             "stands or where `mask` (None, or a bool array of the same "
             "length) is\n"
             "True.");

/* _stringdtype_arrow(values, mask).  Returns a new 4-tuple, or NULL with
   TypeError / ValueError (not a 1-D StringDType array, a mask that does
   not match) or MemoryError set. */
static PyObject *
stringdtype_arrow_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "_stringdtype_arrow() takes 2 arguments");
        return NULL;
    }
    if (!PyArray_Check(args[0]) ||
        PyArray_DESCR((PyArrayObject *)args[0])->type_num != NPY_VSTRING ||
        PyArray_NDIM((PyArrayObject *)args[0]) != 1) {
        PyErr_SetString(PyExc_TypeError,
                        "_stringdtype_arrow() expects a 1-D StringDType "
                        "array");
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)args[0];
    const npy_intp n = PyArray_DIM(arr, 0), stride = PyArray_STRIDE(arr, 0);
    const uint8_t *mask = NULL;
    if (args[1] != Py_None) {
        PyArrayObject *m = (PyArrayObject *)args[1];
        if (!PyArray_Check(args[1]) || PyArray_TYPE(m) != NPY_BOOL ||
            PyArray_NDIM(m) != 1 || PyArray_DIM(m, 0) != n ||
            !PyArray_IS_C_CONTIGUOUS(m)) {
            PyErr_SetString(PyExc_ValueError,
                            "_stringdtype_arrow(): the mask must be a "
                            "contiguous 1-D bool array of the values' "
                            "length");
            return NULL;
        }
        mask = PyArray_DATA(m);
    }
    Py_INCREF(arr); /* held across everything below */
    const char *src = PyArray_DATA(arr);
    npy_intp n1 = n + 1;
    PyObject *offs = PyArray_SimpleNew(1, &n1, NPY_INT64);
    PyObject *data = NULL, *bits = NULL, *res = NULL;
    if (offs == NULL) {
        Py_DECREF(arr);
        return NULL;
    }
    int64_t *o = PyArray_DATA((PyArrayObject *)offs);
    npy_string_allocator *alloc = NpyString_acquire_allocator(
        (PyArray_StringDTypeObject *)PyArray_DESCR(arr));
    /* pass 1: the offsets and the null count */
    int64_t total = 0, nulls = 0;
    int bad = 0;
    o[0] = 0;
    for (npy_intp i = 0; i < n; i++) {
        npy_static_string u = {0, NULL};
        int r = NpyString_load(
            alloc, (const npy_packed_static_string *)(src + i * stride), &u);
        if (r < 0) {
            bad = 1;
            break;
        }
        if (r == 1 || (mask != NULL && mask[i])) {
            nulls++;
        }
        else {
            total += (int64_t)u.size;
        }
        o[i + 1] = total;
    }
    npy_intp nbytes = (npy_intp)total;
    if (!bad) {
        NpyString_release_allocator(alloc);
        data = PyArray_SimpleNew(1, &nbytes, NPY_UINT8);
        npy_intp nb = (n + 7) / 8;
        bits = data == NULL || nulls == 0
                   ? NULL
                   : PyArray_ZEROS(1, &nb, NPY_UINT8, 0);
        alloc = NpyString_acquire_allocator(
            (PyArray_StringDTypeObject *)PyArray_DESCR(arr));
    }
    if (!bad && data != NULL && (nulls == 0 || bits != NULL)) {
        /* pass 2: the bytes and the validity bitmap */
        char *d = PyArray_DATA((PyArrayObject *)data);
        uint8_t *b = bits ? PyArray_DATA((PyArrayObject *)bits) : NULL;
        for (npy_intp i = 0; i < n && !bad; i++) {
            npy_static_string u = {0, NULL};
            int r = NpyString_load(
                alloc, (const npy_packed_static_string *)(src + i * stride),
                &u);
            if (r < 0) {
                bad = 1;
            }
            else if (r == 0 && !(mask != NULL && mask[i])) {
                if ((int64_t)u.size != o[i + 1] - o[i]) {
                    bad = 1; /* changed under us: no write past the end */
                }
                else if (u.size > 0) {
                    dfb_memcpy(d + o[i], u.buf, u.size);
                }
                if (b != NULL) {
                    b[i >> 3] |= (uint8_t)(1u << (i & 7));
                }
            }
        }
    }
    NpyString_release_allocator(alloc);
    if (bad) {
        PyErr_SetString(PyExc_ValueError,
                        "_stringdtype_arrow(): a string could not be read");
    }
    else if (data != NULL && (nulls == 0 || bits != NULL)) {
        PyObject *nc = PyLong_FromLongLong(nulls);
        if (nc != NULL) {
            res = PyTuple_Pack(4, offs, data, bits ? bits : Py_None, nc);
            Py_DECREF(nc);
        }
    }
    Py_XDECREF(bits);
    Py_XDECREF(data);
    Py_DECREF(offs);
    Py_DECREF(arr);
    return res;
}

PyMethodDef dfb_pandas_methods[] = {
    {"_stringdtype_arrow", (PyCFunction)(void (*)(void))stringdtype_arrow_py,
     METH_FASTCALL, stringdtype_arrow_doc},
    {"_rows_block", (PyCFunction)rows_block_py, METH_O, rows_block_doc},
    {"_pandas_arrow_block", (PyCFunction)(void (*)(void))pandas_arrow_block_py,
     METH_FASTCALL, pandas_arrow_block_doc},
    {NULL},
};
