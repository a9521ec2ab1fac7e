/* dfbuffer: the walk of Python interchange objects (DataFrame, Column,
 * Buffer) into dfb_column chunks.
 *
 * Each producer value is read once (describe_null, dtype, get_buffers, ...)
 * and each buffer read by dfb_read_interchange_buffer (ixbuffer.c) and
 * wrapped in a dfbuffer Buffer that owns it; the kernel (convert.c) then
 * validates and converts.  Also describes whole frames for to_matrix.
 */
#include "common.h"
#include "model.h"
#include "exchange.h"
#include "readers.h"
#include "dlpack_types.h"
#include "kernels.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Interchange buffers                                                  */
/* ------------------------------------------------------------------ */

/* Reads interchange buffer `obj` once (dfb_read_interchange_buffer, the
   reader Buffer.from_object uses too) and refuses device memory.  Returns
   0, or -1 with an exception set (BufferError for device memory). */
static int
read_block(dfb_state *st, PyObject *obj, dfb_block *blk)
{
    if (dfb_read_interchange_buffer(st, obj, NULL, NULL, blk) < 0) {
        return -1;
    }
    if (!dfb_dlpack_host_readable(blk->device.device_type)) {
        PyErr_Format(PyExc_BufferError,
                     "the buffer is on device (%d, %d), not in CPU memory; "
                     "dfbuffer converts host memory only",
                     (int)blk->device.device_type, (int)blk->device.device_id);
        return -1;
    }
    return 0;
}

/* Wraps interchange buffer `obj` in a new dfbuffer Buffer (owner = obj,
   u1, native INTERCHANGE, read-only unless obj is a writable
   dfbuffer.Buffer) and fills `span`.  Returns the new Buffer, or
   NULL with an exception set. */
PyObject *
dfb_ix_wrap_buffer(dfb_state *st, PyObject *obj, dfb_span *span)
{
    dfb_block blk;
    if (read_block(st, obj, &blk) < 0) {
        return NULL;
    }
    PyArray_Descr *u1 = PyArray_DescrFromType(NPY_UINT8);
    /* Read-only unless the producer says the memory is writable: only a
       writable dfbuffer.Buffer does (the interchange protocol grants read
       access only; pyarrow's memory is immutable, pandas' copy-on-write). */
    PyObject *b =
        dfb_buffer_new(st, blk.ptr, blk.size, obj, u1, 1, NULL, NULL,
                       blk.device, blk.readonly, DFB_NATIVE_INTERCHANGE);
    Py_DECREF(u1);
    if (b == NULL) {
        return NULL;
    }
    span->ptr = blk.ptr;
    span->size = blk.size;
    span->owner = b;
    return b;
}

/* ------------------------------------------------------------------ */
/* Interchange walk                                                     */
/* ------------------------------------------------------------------ */

/* What keeps a walked chunk's memory alive, plus its categories. */
typedef struct {
    dfb_column cats;
    PyObject *keep[8];
    int nkeep;
} walked;

/* Releases the references `w` holds. */
static void
walked_clear(walked *w)
{
    for (int i = 0; i < w->nkeep; i++) {
        Py_CLEAR(w->keep[i]);
    }
    w->nkeep = 0;
}

/* Returns a NEW reference to item `key` of dict or Mapping `d`, or NULL
   (no exception) when absent or None; sets *err = 1 (exception set) on
   error.  The caller owns the item: a Mapping may build it afresh on each
   access, and any later producer call may remove it from a dict. */
static PyObject *
dict_item(PyObject *d, PyObject *key, int *err)
{
    PyObject *v;
    if (PyDict_CheckExact(d)) {
        if (dfb_dict_get_ref(d, key, &v) < 0) {
            *err = 1;
            return NULL;
        }
    }
    else {
        v = PyObject_GetItem(d, key);
        if (v == NULL) {
            if (PyErr_ExceptionMatches(PyExc_KeyError)) {
                PyErr_Clear();
            }
            else {
                *err = 1;
            }
            return NULL;
        }
    }
    if (v == Py_None) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* Splits a (buffer, dtype) pair (the caller owns `pair`, a tuple: *buf
   and the dtype stay alive as long as it does).  When the pair's dtype is
   the very object
   `known` (held alive by the caller, already parsed to `*known_dt`), copies
   that result instead of parsing it again: a tuple's items are immutable
   ints and strs, so the parse would give the same values.  Sets *reused.
   Returns 0, or -1 with TypeError. */
static int
split_pair(PyObject *pair, const char *what, PyObject **buf, dfb_ix_dtype *dt,
           PyObject *known, const dfb_ix_dtype *known_dt, int *reused)
{
    *reused = 0;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "get_buffers()[%s] must be a (buffer, dtype) pair, got "
                     "%.100s",
                     what, Py_TYPE(pair)->tp_name);
        return -1;
    }
    *buf = PyTuple_GET_ITEM(pair, 0);
    PyObject *t = PyTuple_GET_ITEM(pair, 1);
    if (known != NULL && t == known) {
        *dt = *known_dt;
        *reused = 1;
        return 0;
    }
    return dfb_ix_dtype_read(t, dt);
}

static int
walk_chunk(dfb_state *st, PyObject *col, dfb_column *out, walked *w,
           int depth);

/* Reads Column.size() and .offset into `out`: 0, or -1 (exception). */
static int
read_extent(dfb_state *st, PyObject *col, dfb_column *out)
{
    PyObject *o = PyObject_CallMethodNoArgs(col, st->str.size);
    if (o == NULL) {
        return -1;
    }
    int err = dfb_as_int64(o, "Column.size()", &out->length);
    Py_DECREF(o);
    if (err < 0 || (o = PyObject_GetAttr(col, st->str.offset)) == NULL) {
        return -1;
    }
    err = o == Py_None ? 0 : dfb_as_int64(o, "Column.offset", &out->offset);
    Py_DECREF(o);
    return err;
}

/* Reads Column.describe_null into `out`: 0, or -1 (exception). */
static int
read_describe_null(dfb_state *st, PyObject *col, dfb_column *out)
{
    PyObject *o = PyObject_GetAttr(col, st->str.describe_null);
    if (o == NULL) {
        return -1;
    }
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 2 ||
        !PyLong_Check(PyTuple_GET_ITEM(o, 0))) {
        PyErr_Format(PyExc_TypeError,
                     "Column.describe_null must be a (kind, value) tuple, "
                     "got %R",
                     o);
        Py_DECREF(o);
        return -1;
    }
    long nk = PyLong_AsLong(PyTuple_GET_ITEM(o, 0));
    PyObject *nv = PyTuple_GET_ITEM(o, 1);
    if (nk < 0 || nk > 4) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "unknown ColumnNullType %R",
                         PyTuple_GET_ITEM(o, 0));
        }
        Py_DECREF(o);
        return -1;
    }
    out->null_kind = (dfb_null_kind)nk;
    if (nv != Py_None &&
        (nk == DFB_NULL_USE_SENTINEL || nk == DFB_NULL_USE_BITMASK ||
         nk == DFB_NULL_USE_BYTEMASK)) {
        if (dfb_as_int64(nv, "the describe_null value", &out->null_value) <
            0) {
            Py_DECREF(o);
            return -1;
        }
        if (nk != DFB_NULL_USE_SENTINEL && out->null_value != 0 &&
            out->null_value != 1) {
            PyErr_Format(PyExc_ValueError,
                         "a mask's null value must be 0 or 1, got %R", nv);
            Py_DECREF(o);
            return -1;
        }
    }
    else if (nk == DFB_NULL_USE_SENTINEL) {
        PyErr_SetString(PyExc_ValueError,
                        "USE_SENTINEL without a sentinel value");
        Py_DECREF(o);
        return -1;
    }
    Py_DECREF(o);
    return 0;
}

/* Sets out->fmt (out->index too for categoricals) from the column's dtype
   `cdt` (`cf` when have_c), its data's `ddt` (`df` when have_d) and its
   offsets' `odt`.  Returns 0, or -1 with an exception set. */
static int
physical_format(dfb_column *out, const dfb_ix_dtype *cdt, int have_c,
                const dfb_format *cf, const dfb_ix_dtype *ddt, int have_d,
                const dfb_format *df, const dfb_ix_dtype *odt, int has_offsets,
                PyObject *dtobj)
{
    switch (cdt->kind) {
        case 21: /* STRING */
            if (!have_c) {
                goto bad;
            }
            out->fmt = *cf;
            if (has_offsets && (out->fmt.type == DFB_T_UTF8 ||
                                out->fmt.type == DFB_T_LARGE_UTF8)) {
                /* the offsets' own width decides (pandas says 'u' with
                   int64 offsets) */
                out->offsets_swapped = dfb_is_swapped(odt->endian);
                if (odt->bits == 64) {
                    out->fmt.type = DFB_T_LARGE_UTF8;
                }
                else if (odt->bits == 32) {
                    out->fmt.type = DFB_T_UTF8;
                }
                else {
                    PyErr_Format(PyExc_ValueError,
                                 "string offsets must be 32 or 64 bits, got "
                                 "%ld",
                                 odt->bits);
                    return -1;
                }
            }
            return 0;
        case 22: /* DATETIME */
            if (!have_c) {
                goto bad;
            }
            out->fmt = *cf;
            if (have_d && (ddt->endian == '<' || ddt->endian == '>')) {
                out->fmt.byteorder = ddt->endian;
            }
            if (have_d && df->bits != cf->bits) {
                PyErr_Format(PyExc_ValueError,
                             "datetime column %R has a %d-bit data buffer",
                             dtobj, df->bits);
                return -1;
            }
            return 0;
        case 23: /* CATEGORICAL */
            out->fmt.type = DFB_T_DICTIONARY;
            out->fmt.byteorder = '=';
            if (have_d && (df->type == DFB_T_INT || df->type == DFB_T_UINT ||
                           df->type == DFB_T_DICTIONARY)) {
                out->index = *df;
                if (df->type == DFB_T_DICTIONARY) {
                    out->index.type = DFB_T_INT;
                }
            }
            else if (have_c) {
                out->index = *cf;
                out->index.type = DFB_T_INT;
            }
            else {
                goto bad;
            }
            out->fmt.bits = out->index.bits;
            return 0;
        default:
            if (have_d && df->type != DFB_T_DICTIONARY &&
                df->type != DFB_T_UTF8 && df->type != DFB_T_LARGE_UTF8) {
                out->fmt = *df;
            }
            else if (have_c) {
                out->fmt = *cf;
            }
            else {
                goto bad;
            }
            return 0;
    }
bad:
    PyErr_Format(PyExc_NotImplementedError,
                 "unsupported interchange dtype %R (data buffer dtype "
                 "(%ld, %ld, '%s', '%c'))",
                 dtobj, ddt->kind, ddt->bits, ddt->fmt ? ddt->fmt : "",
                 ddt->endian);
    return -1;
}
/* Wraps the buffers the conversion of `out` reads (kept in `w`), asking
   null_count when a mask has no buffer: 0, or -1 (exception). */
static int
wrap_buffers(dfb_state *st, PyObject *col, dfb_column *out, walked *w,
             PyObject *dbuf, PyObject *vbuf, PyObject *obuf)
{
    PyObject *o;
    const int masked = out->null_kind == DFB_NULL_USE_BITMASK ||
                       out->null_kind == DFB_NULL_USE_BYTEMASK;
    if ((o = dfb_ix_wrap_buffer(st, dbuf, &out->data)) == NULL) {
        return -1;
    }
    w->keep[w->nkeep++] = o; /* stolen */
    if (vbuf != NULL && masked) {
        if ((o = dfb_ix_wrap_buffer(st, vbuf, &out->validity)) == NULL) {
            return -1;
        }
        w->keep[w->nkeep++] = o; /* stolen */
    }
    else if (vbuf == NULL && masked) {
        /* no validity buffer: fine only when nothing is null; ask */
        if ((o = PyObject_GetAttr(col, st->str.null_count)) == NULL) {
            return -1;
        }
        int r = o == Py_None
                    ? 0
                    : dfb_as_int64(o, "Column.null_count", &out->null_count);
        Py_DECREF(o);
        if (r < 0) {
            return -1;
        }
    }
    if (out->fmt.type == DFB_T_UTF8 || out->fmt.type == DFB_T_LARGE_UTF8) {
        if (obuf == NULL) {
            PyErr_SetString(PyExc_ValueError,
                            "a string column has no offsets buffer");
            return -1;
        }
        if ((o = dfb_ix_wrap_buffer(st, obuf, &out->offsets)) == NULL) {
            return -1;
        }
        w->keep[w->nkeep++] = o; /* stolen */
    }
    return 0;
}

/* Walks the categories of `col` into w->cats (out->categories, is_ordered
   set).  Returns 0, or -1 with an exception set. */
static int
walk_categories(dfb_state *st, PyObject *col, dfb_column *out, walked *w,
                int depth)
{
    if (depth > 0) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "nested categoricals are not supported");
        return -1;
    }
    PyObject *dc = PyObject_GetAttr(col, st->str.describe_categorical);
    if (dc == NULL) {
        return -1;
    }
    PyObject *cats = NULL;
    if (PyDict_Check(dc)) {
        (void)dfb_dict_get_ref(dc, st->str.categories, &cats);
    }
    else {
        cats = PyObject_GetItem(dc, st->str.categories);
    }
    if (cats != NULL && cats != Py_None) {
        /* is_ordered (read once; absent or unreadable: unordered) */
        PyObject *ord = PyMapping_Check(dc)
                            ? PyMapping_GetItemString(dc, "is_ordered")
                            : NULL;
        out->is_ordered = ord != NULL ? PyObject_IsTrue(ord) : 0;
        Py_XDECREF(ord);
        if (out->is_ordered < 0 || ord == NULL) {
            if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_KeyError)) {
                Py_DECREF(cats);
                Py_DECREF(dc);
                return -1;
            }
            PyErr_Clear();
            out->is_ordered = 0;
        }
    }
    Py_DECREF(dc);
    if (cats == NULL || cats == Py_None) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_KeyError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_NotImplementedError,
                            "categorical columns without a categories "
                            "column (is_dictionary=False) are not "
                            "supported");
        }
        Py_XDECREF(cats);
        return -1;
    }
    int r = walk_chunk(st, cats, &w->cats, w, depth + 1);
    Py_DECREF(cats);
    if (r < 0) {
        return -1;
    }
    out->categories = &w->cats;
    return 0;
}

/* Fills `out` from interchange column `col` (one chunk) and stores the
   Buffers it creates in `w`.  Returns 0, or -1 with an exception set. */
static int
walk_chunk(dfb_state *st, PyObject *col, dfb_column *out, walked *w, int depth)
{
    dfb_ix_dtype cdt, ddt, vdt, odt;
    int err = 0;
    memset(out, 0, sizeof(*out));
    out->null_count = -1;
    if (read_extent(st, col, out) < 0 ||
        read_describe_null(st, col, out) < 0) {
        return -1;
    }

    /* dtype: the column's logical type */
    PyObject *dtobj = PyObject_GetAttr(col, st->str.dtype);
    if (dtobj == NULL) {
        return -1;
    }
    if (dfb_ix_dtype_read(dtobj, &cdt) < 0) {
        Py_DECREF(dtobj);
        return -1;
    }

    /* buffers */
    PyObject *bufs = PyObject_CallMethodNoArgs(col, st->str.get_buffers);
    if (bufs == NULL) {
        Py_DECREF(dtobj);
        return -1;
    }
    PyObject *dpair = dict_item(bufs, st->str.data, &err);
    PyObject *vpair = err ? NULL : dict_item(bufs, st->str.validity, &err);
    PyObject *opair = err ? NULL : dict_item(bufs, st->str.offsets, &err);
    PyObject *dbuf = NULL, *vbuf = NULL, *obuf = NULL;
    /* dpair, vpair, opair are owned (new references) from here on: the
       buffers and dtypes in them survive whatever the producer's ptr,
       bufsize, __dlpack_device__ or null_count do to `bufs`. */
    if (err) {
        goto fail;
    }
    if (dpair == NULL) {
        PyErr_SetString(PyExc_ValueError, "get_buffers() has no data buffer");
        goto fail;
    }
    int same_d, unused;
    if (split_pair(dpair, "'data'", &dbuf, &ddt, dtobj, &cdt, &same_d) < 0 ||
        (vpair != NULL && split_pair(vpair, "'validity'", &vbuf, &vdt, NULL,
                                     NULL, &unused) < 0) ||
        (opair != NULL && split_pair(opair, "'offsets'", &obuf, &odt, NULL,
                                     NULL, &unused) < 0)) {
        goto fail;
    }

    /* the physical format (parsed once when the data buffer's dtype is the
       column's dtype object) */
    dfb_format cf, df;
    int have_c = dfb_ix_dtype_format(&cdt, &cf) == 0;
    int have_d;
    if (same_d) {
        have_d = have_c;
        df = cf;
    }
    else {
        have_d = dfb_ix_dtype_format(&ddt, &df) == 0;
    }
    if (physical_format(out, &cdt, have_c, &cf, &ddt, have_d, &df, &odt,
                        obuf != NULL, dtobj) < 0 ||
        wrap_buffers(st, col, out, w, dbuf, vbuf, obuf) < 0) {
        goto fail;
    }
    Py_XDECREF(dpair);
    Py_XDECREF(vpair);
    Py_XDECREF(opair);
    Py_DECREF(bufs);
    Py_DECREF(dtobj);
    if (out->fmt.type == DFB_T_DICTIONARY) {
        return walk_categories(st, col, out, w, depth);
    }
    return 0;

fail:
    Py_XDECREF(dpair);
    Py_XDECREF(vpair);
    Py_XDECREF(opair);
    Py_DECREF(bufs);
    Py_DECREF(dtobj);
    return -1;
}

/* Converts interchange column `col` (all its chunks).  Returns a new
   reference or NULL with an exception set. */
PyObject *
dfb_ix_column_to_ndarray(dfb_state *st, PyObject *col, const dfb_opts *opts,
                         int allow_copy)
{
    PyObject *o = PyObject_CallMethodNoArgs(col, st->str.num_chunks);
    if (o == NULL) {
        return NULL;
    }
    int64_t nchunks;
    int r = dfb_as_int64(o, "Column.num_chunks()", &nchunks);
    Py_DECREF(o);
    if (r < 0) {
        return NULL;
    }
    if (nchunks <= 1) {
        dfb_column c;
        walked w;
        w.nkeep = 0;
        PyObject *res = NULL;
        if (walk_chunk(st, col, &c, &w, 0) == 0) {
            res = dfb_columns_to_ndarray(st, &c, 1, opts, allow_copy);
        }
        walked_clear(&w);
        return res;
    }
    if (dfb_need_copy(st, allow_copy, "a column of several chunks") < 0) {
        return NULL;
    }
    PyObject *it = PyObject_CallMethodNoArgs(col, st->str.get_chunks);
    if (it == NULL) {
        return NULL;
    }
    PyObject *list = PySequence_List(it);
    Py_DECREF(it);
    if (list == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n == 0) {
        Py_DECREF(list);
        PyErr_SetString(PyExc_ValueError,
                        "Column.get_chunks() yielded no chunks");
        return NULL;
    }
    dfb_column *cols = PyMem_Calloc((size_t)n, sizeof(dfb_column));
    walked *ws = PyMem_Calloc((size_t)n, sizeof(walked));
    PyObject *res = NULL;
    Py_ssize_t done = 0;
    if (cols == NULL || ws == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    for (; done < n; done++) {
        if (walk_chunk(st, PyList_GET_ITEM(list, done), &cols[done], &ws[done],
                       0) < 0) {
            done++;
            goto out;
        }
    }
    res = dfb_columns_to_ndarray(st, cols, n, opts, allow_copy);
out:
    if (ws != NULL) {
        for (Py_ssize_t i = 0; i < done; i++) {
            walked_clear(&ws[i]);
        }
    }
    PyMem_Free(ws);
    PyMem_Free(cols);
    Py_DECREF(list);
    return res;
}

/* Returns 1 if `obj` has attribute `name`, 0 if not, -1 on error. */
int
dfb_has_attr(PyObject *obj, PyObject *name)
{
    PyObject *v;
    int r = dfb_getattr_optional(obj, name, &v);
    Py_XDECREF(v);
    return r;
}

/* Returns the interchange DataFrame of `obj` (new reference), NULL with
   an exception set, or NULL without one when `obj` is none. */
PyObject *
dfb_ix_frame(dfb_state *st, PyObject *obj, int allow_copy)
{
    /* an interchange DataFrame already: use it as it is (calling its
       __dataframe__ again may copy, as pandas' does) */
    int a = dfb_has_attr(obj, st->str.column_names);
    int b = a == 1 ? dfb_has_attr(obj, st->str.get_column) : a;
    if (b < 0) {
        return NULL;
    }
    if (b == 1) {
        return Py_NewRef(obj);
    }
    PyObject *meth = PyObject_GetAttr(obj, st->str.dataframe);
    if (meth == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
        }
        return NULL;
    }
    PyObject *kwargs[1] = {allow_copy ? Py_True : Py_False};
    PyObject *df = PyObject_Vectorcall(meth, kwargs, 0, st->tup.allow_copy_kw);
    if (df == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        df = PyObject_CallNoArgs(meth);
    }
    Py_DECREF(meth);
    return df;
}

/* ------------------------------------------------------------------ */
/* Whole frames, described for to_matrix (matrix.c)                     */
/* ------------------------------------------------------------------ */

/* Prefixes the message of the pending exception with the column name when
   its type is a plain ValueError / TypeError / RuntimeError /
   NotImplementedError / BufferError or st's CopyError (others are left alone;
   a message that starts "the column " reads "column 'x' ..." instead; an
   unnamed column, key "", keeps "the column ...").  The original exception
   becomes the new one's __cause__ (a NotImplementedError's own cause when
   it has one: the other library's error behind it). */
void
dfb_add_column_context(dfb_state *st, PyObject *key)
{
    if (PyUnicode_Check(key) && PyUnicode_GET_LENGTH(key) == 0) {
        return; /* no name to give: as for a bare Arrow array */
    }
    PyObject *exc = dfb_err_take();
    if (exc == NULL) {
        return;
    }
    PyObject *t = (PyObject *)Py_TYPE(exc);
    if (t != PyExc_ValueError && t != PyExc_TypeError &&
        t != PyExc_RuntimeError && t != PyExc_NotImplementedError &&
        t != PyExc_BufferError && t != st->copy_error) {
        dfb_err_give(exc);
        return;
    }
    PyObject *msg = PyObject_Str(exc);
    if (msg == NULL) {
        PyErr_Clear();
        dfb_err_give(exc);
        return;
    }
    /* a message that names the column ("column 'x' ...", "column 'x': ...")
       keeps its text */
    PyObject *prefix = PyUnicode_FromFormat("column %R", key);
    int named = prefix == NULL ? -1
                               : (int)PyUnicode_Tailmatch(msg, prefix, 0,
                                                          PY_SSIZE_T_MAX, -1);
    if (named == 1 &&
        PyUnicode_GET_LENGTH(msg) > PyUnicode_GET_LENGTH(prefix)) {
        Py_UCS4 c = PyUnicode_READ_CHAR(msg, PyUnicode_GET_LENGTH(prefix));
        named = c == ' ' || c == ':';
    }
    Py_XDECREF(prefix);
    if (named != 0) {
        if (named < 0) {
            PyErr_Clear();
        }
        Py_DECREF(msg);
        dfb_err_give(exc);
        return;
    }
    /* "the column has ..." becomes "column 'x' has ..." */
    PyObject *the = PyUnicode_FromString("the column ");
    int lead = the == NULL
                   ? -1
                   : (int)PyUnicode_Tailmatch(msg, the, 0, PY_SSIZE_T_MAX, -1);
    Py_ssize_t skip = lead == 1 ? PyUnicode_GET_LENGTH(the) : 0;
    Py_XDECREF(the);
    PyObject *rest = PyUnicode_Substring(msg, skip, PyUnicode_GET_LENGTH(msg));
    Py_DECREF(msg);
    if (lead < 0 || rest == NULL) {
        PyErr_Clear();
        Py_XDECREF(rest);
        dfb_err_give(exc);
        return;
    }
    if (skip > 0) {
        PyErr_Format(t, "column %R %U", key, rest);
    }
    else {
        PyErr_Format(t, "column %R: %U", key, rest);
    }
    Py_DECREF(rest);
    /* a NotImplementedError made of another library's error (the Arrow
       import's of a failed export) passes that error on as the cause: its
       own text is in the new message */
    PyObject *cause =
        t == PyExc_NotImplementedError ? PyException_GetCause(exc) : NULL;
    if (cause != NULL) {
        Py_DECREF(exc);
        exc = cause;
    }
    dfb_err_raise_from(exc);
}

/* get_column() refused column `key`: a ValueError, TypeError or
   NotImplementedError becomes NotImplementedError naming it, the original
   its __cause__ (others are left alone).  Cannot fail. */
void
dfb_column_refused(PyObject *key)
{
    if (!PyErr_ExceptionMatches(PyExc_ValueError) &&
        !PyErr_ExceptionMatches(PyExc_TypeError) &&
        !PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
        return;
    }
    PyObject *exc = dfb_err_take();
    PyErr_Format(PyExc_NotImplementedError,
                 "column %R: its producer's get_column() failed to describe "
                 "it: %s: %S",
                 key, Py_TYPE(exc)->tp_name, exc);
    dfb_err_raise_from(exc);
}

/* Moves the references `w` holds into list `keep`.  Returns 0, or -1 with
   MemoryError (the references are released either way). */
static int
walked_keep(walked *w, PyObject *keep)
{
    int r = 0;
    for (int i = 0; i < w->nkeep; i++) {
        if (r == 0 && PyList_Append(keep, w->keep[i]) < 0) {
            r = -1;
        }
    }
    walked_clear(w);
    return r;
}

/* Describes every chunk of interchange column `col` into `fc` (chunks
   PyMem-allocated, categories copied next to them), keeping the Buffers in
   `keep`.  Returns 0, or -1 with an exception set. */
static int
describe_ix_column(dfb_state *st, PyObject *col, dfb_frame_column *fc,
                   PyObject *keep)
{
    PyObject *o = PyObject_CallMethodNoArgs(col, st->str.num_chunks);
    if (o == NULL) {
        return -1;
    }
    int64_t nchunks;
    int r = dfb_as_int64(o, "Column.num_chunks()", &nchunks);
    Py_DECREF(o);
    if (r < 0) {
        return -1;
    }
    PyObject *list;
    if (nchunks <= 1) {
        list = PyList_New(1);
        if (list == NULL) {
            return -1;
        }
        PyList_SET_ITEM(list, 0, Py_NewRef(col));
    }
    else {
        PyObject *it = PyObject_CallMethodNoArgs(col, st->str.get_chunks);
        if (it == NULL) {
            return -1;
        }
        list = PySequence_List(it);
        Py_DECREF(it);
        if (list == NULL) {
            return -1;
        }
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n == 0) {
        Py_DECREF(list);
        PyErr_SetString(PyExc_ValueError,
                        "Column.get_chunks() yielded no chunks");
        return -1;
    }
    /* bounded: n chunks of a Python sequence, calloc checks the product */
    fc->chunks = PyMem_Calloc(2 * (size_t)n, sizeof(dfb_column));
    if (fc->chunks == NULL) {
        Py_DECREF(list);
        PyErr_NoMemory();
        return -1;
    }
    fc->nchunks = n;
    r = 0;
    for (Py_ssize_t i = 0; i < n && r == 0; i++) {
        walked w;
        w.nkeep = 0;
        /* the list holds the chunk: get_chunks() cannot drop it */
        r = walk_chunk(st, PyList_GET_ITEM(list, i), &fc->chunks[i], &w, 0);
        if (r == 0 && fc->chunks[i].categories == &w.cats) {
            fc->chunks[n + i] = w.cats;
            fc->chunks[i].categories = &fc->chunks[n + i];
        }
        if (walked_keep(&w, keep) < 0) {
            r = -1;
        }
        fc->chunks[i].fmt.tz = NULL;
        fc->chunks[i].fmt.tz_len = 0;
    }
    Py_DECREF(list);
    return r;
}

int
dfb_ix_describe_frame(dfb_state *st, PyObject *obj, PyObject *select, int skip,
                      dfb_frame *out)
{
    PyObject *df = dfb_ix_frame(st, obj, 1);
    if (df == NULL) {
        return PyErr_Occurred() ? -1 : 1;
    }
    int ret = -1;
    Py_ssize_t *idx = NULL, n = 0;
    PyObject *keys = NULL, *getcol = NULL, *seq = NULL;
    PyObject *names = PyObject_CallMethodNoArgs(df, st->str.column_names);
    if (names == NULL) {
        goto done;
    }
    seq = PySequence_Fast(names, "column_names() must return an iterable");
    if (seq != NULL && PyList_Check(seq)) {
        /* our own copy: a name's __str__ may change the producer's list */
        PyObject *list = seq;
        seq = PyList_AsTuple(list);
        Py_DECREF(list);
    }
    if (seq == NULL) {
        goto done;
    }
    Py_ssize_t ncols = PySequence_Fast_GET_SIZE(seq);
    keys = PyList_New(ncols);
    if (keys == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < ncols; i++) {
        PyObject *name = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *key =
            PyUnicode_CheckExact(name) ? Py_NewRef(name) : PyObject_Str(name);
        if (key == NULL) {
            goto done;
        }
        PyList_SET_ITEM(keys, i, key);
    }
    if (dfb_frame_select(keys, select, &idx, &n) < 0 ||
        dfb_frame_init(out, n) < 0) {
        goto done;
    }
    getcol = PyObject_GetAttr(df, st->str.get_column);
    if (getcol == NULL) {
        goto done;
    }
    for (Py_ssize_t k = 0, w = 0; k < n; k++) {
        PyObject *key = PyList_GET_ITEM(keys, idx[k]);
        out->cols[w].name = Py_NewRef(key);
        PyObject *pos = PyLong_FromSsize_t(idx[k]);
        if (pos == NULL) {
            goto done;
        }
        PyObject *col = PyObject_CallOneArg(getcol, pos);
        Py_DECREF(pos);
        if (col == NULL) {
            dfb_column_refused(key);
            if (skip && PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
                PyErr_Clear();
                dfb_frame_drop(out, w);
                continue;
            }
            goto done;
        }
        int r = PyList_Append(out->keep, col);
        if (r == 0) {
            r = describe_ix_column(st, col, &out->cols[w], out->keep);
        }
        Py_DECREF(col);
        if (r < 0 && skip &&
            PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
            PyErr_Clear(); /* a type no reader of dfbuffer's takes */
            dfb_frame_drop(out, w);
            continue;
        }
        if (r < 0) {
            dfb_add_column_context(st, key);
            goto done;
        }
        w++;
    }
    if (out->ncols == 0) {
        /* no columns selected (or all left out): the row count gives the
           shape */
        PyObject *nr = PyObject_CallMethod(df, "num_rows", NULL);
        if (nr == NULL) {
            goto done;
        }
        int r = nr == Py_None
                    ? 0
                    : dfb_as_int64(nr, "DataFrame.num_rows()", &out->nrows);
        Py_DECREF(nr);
        if (r < 0) {
            goto done;
        }
    }
    ret = 0;
done:
    PyMem_Free(idx);
    Py_XDECREF(getcol);
    Py_XDECREF(keys);
    Py_XDECREF(seq);
    Py_XDECREF(names);
    Py_DECREF(df);
    return ret;
}
