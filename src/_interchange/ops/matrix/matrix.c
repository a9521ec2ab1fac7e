/* dfbuffer: to_matrix, one 2-D array from the described columns of a frame.
 *
 * convert.c / arrow.c describe the selected columns (dfb_frame); this file
 * checks their types, promotes them to one dtype, allocates the output (and
 * the mask) once and fills it in C without the GIL, split by rows across
 * threads.  Row-major output is written in cache blocks: a block of rows
 * times a group of columns stays in cache while every column writes its
 * values into it with the row stride.
 */
#include "common.h"
#include "state.h"
#include "pandas_frame.h"
#include "arrow_convert.h"
#include "ixwalk.h"
#include "args.h"
#include "arrow_import.h"
#include "column.h"
#include "checked.h"
#include "convert.h"
#include "frame.h"
#include "frame_source.h"
#include "matrix.h"
#include "matrix_plan.h"
#include "matrix_pandas.h"
#include "matrix_alloc.h"
#include "matrix_fill.h"
#include "mem.h"
#include "types.h"
#include "convert_nulls.h"
#include "convert_decimal.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Types                                                                */
/* ------------------------------------------------------------------ */

#if NPY_BYTE_ORDER == NPY_LITTLE_ENDIAN
#define SWAPPED(bo) ((bo) == '>')
#else
#define SWAPPED(bo) ((bo) == '<')
#endif

/* Returns the S_* type of an integer of `bits` (signed or not), or -1. */
static int
int_stype(int bits, int is_signed)
{
    switch (bits) {
        case 8:
            return is_signed ? S_I8 : S_U8;
        case 16:
            return is_signed ? S_I16 : S_U16;
        case 32:
            return is_signed ? S_I32 : S_U32;
        case 64:
            return is_signed ? S_I64 : S_U64;
        default:
            return -1;
    }
}

/* NumPy type numbers of the S_* types (bools are NPY_BOOL separately). */
static const int stype_npy[S_N] = {
    NPY_INT8,   NPY_INT16,  NPY_INT32,  NPY_INT64,   NPY_UINT8,
    NPY_UINT16, NPY_UINT32, NPY_UINT64, NPY_FLOAT32, NPY_FLOAT64,
};

/* Returns the type table's logical name of a chunk type that to_matrix
   does not take ("string", "date", ...; a datetime by its Arrow name,
   "timestamp"), or "unsupported". */
static const char *
kind_name(const dfb_column *c)
{
    const dfb_type_row *r = dfb_type_row_of(c->fmt.type);
    if (r->conv == DFB_CONV_REFUSED && r->layout == DFB_LAYOUT_NONE) {
        return "unsupported";
    }
    return strcmp(r->logical, "datetime") == 0 ? r->name : r->logical;
}

/* Fills `mc` from described chunk `c` of column `name` and sets *typenum
   to the NumPy type of its values (NPY_BOOL for bools and the null type,
   the codes' type for categoricals).  `codes_ok`: an explicit numeric
   dtype was given.  Returns 0, or -1 with TypeError naming the column. */
static int
plan_chunk(const dfb_column *c, PyObject *name, int codes_ok, mchunk *mc,
           int *typenum)
{
    const dfb_format *f = &c->fmt;
    memset(mc, 0, sizeof(*mc));
    mc->data = c->data.ptr;
    mc->offset = c->offset;
    mc->length = c->length;
    mc->nnull = -1;
    const dfb_type_row *r = dfb_type_row_of(f->type);
    /* run-end encoded: its codes are runs, not a categorical's */
    if (dfb_type_decodes_runs(f->type)) {
        PyErr_Format(PyExc_TypeError,
                     "column %R is run-end encoded; to_matrix takes bool, "
                     "integer and float columns",
                     name);
        return -1;
    }
    /* the NumPy kind of a fixed-width type's values; 'c' codes */
    const char k = r->conv == DFB_CONV_REFUSED     ? 0
                   : r->layout == DFB_LAYOUT_CODES ? 'c'
                   : r->layout == DFB_LAYOUT_FIXED ? r->result
                   : r->layout == DFB_LAYOUT_BITS  ? 'B'
                   : r->layout == DFB_LAYOUT_NONE  ? 'N'
                                                   : 0;
    if (k == 'N' || k == 'B') { /* the null type, bit-packed bools */
        mc->read = k == 'N' ? R_ZERO : R_BITS;
        mc->st = S_U8;
        *typenum = NPY_BOOL;
    }
    else if (k == 'b') {
        mc->read = R_BOOL8;
        mc->st = S_U8;
        mc->isz = 1;
        *typenum = NPY_BOOL;
    }
    else if (k == 'i' || k == 'u' || k == 'c') {
        const dfb_format *ix = k == 'c' ? &c->index : f;
        if (k == 'c' && !codes_ok) {
            PyErr_Format(PyExc_TypeError,
                         "column %R is categorical: pass a numeric "
                         "dtype= to get its codes",
                         name);
            return -1;
        }
        mc->st = int_stype(ix->bits, ix->type != DFB_T_UINT);
        if (mc->st < 0) {
            goto unsupported;
        }
        mc->isz = ix->bits / 8;
        mc->read = SWAPPED(ix->byteorder) && mc->isz > 1 ? R_SWAP : R_DIRECT;
        *typenum = stype_npy[mc->st];
    }
    else if (k == 'f') {
        mc->isz = f->bits / 8;
        if (f->bits == 16) {
            mc->read = SWAPPED(f->byteorder) ? R_F16SWAP : R_F16;
            mc->st = S_F32;
            *typenum = NPY_FLOAT16;
        }
        else if (f->bits == 32 || f->bits == 64) {
            mc->st = f->bits == 32 ? S_F32 : S_F64;
            mc->read = SWAPPED(f->byteorder) ? R_SWAP : R_DIRECT;
            *typenum = stype_npy[mc->st];
        }
        else {
            goto unsupported;
        }
    }
    else {
        goto unsupported;
    }
    /* nulls, as chunk_mask in convert.c reads them */
    if (f->type == DFB_T_NULL) {
        mc->nk = NK_ALL;
    }
    else if (c->null_count == 0) {
        mc->nk = NK_NONE;
    }
    else {
        switch (c->null_kind) {
            case DFB_NULL_USE_NAN:
                mc->nk = f->type == DFB_T_FLOAT ? NK_NAN : NK_NONE;
                break;
            case DFB_NULL_USE_SENTINEL:
                if (mc->st == S_F32 || mc->st == S_F64 ||
                    f->type == DFB_T_BOOL_BIT) {
                    PyErr_Format(PyExc_TypeError,
                                 "column %R: sentinel nulls are only "
                                 "supported on integer columns",
                                 name);
                    return -1;
                }
                mc->nk = NK_SENT;
                break;
            case DFB_NULL_USE_BITMASK:
            case DFB_NULL_USE_BYTEMASK:
                if (c->validity.ptr == NULL) {
                    mc->nk = NK_NONE;
                }
                else {
                    mc->nk = c->null_kind == DFB_NULL_USE_BITMASK ? NK_BITS
                                                                  : NK_BYTES;
                    mc->valid = (const uint8_t *)c->validity.ptr;
                }
                break;
            default:
                mc->nk = NK_NONE;
        }
    }
    mc->null_value = c->null_value;
    if (mc->nk == NK_NONE) {
        mc->nnull = 0;
    }
    return 0;
unsupported:
    const char *what = kind_name(c);
    /* its Arrow format, when it has one (not a timestamp's: the frame
       dropped its timezone) */
    char arrow[64];
    int has = f->type != DFB_T_TIMESTAMP &&
              dfb_format_to_arrow(f, arrow, sizeof(arrow)) == 0;
    PyErr_Format(PyExc_TypeError,
                 "column %R has %s %s type%s%s%s; to_matrix takes bool, "
                 "integer and float columns",
                 name, strchr("aeiou", what[0]) != NULL ? "an" : "a", what,
                 has ? " (Arrow format '" : "", has ? arrow : "",
                 has ? "')" : "");
    return -1;
}

/* Parses dtype= into a D_* type and a new reference to its native
   descriptor (*descr NULL for None).  Returns 0, or -1 with TypeError. */
static int
parse_dtype(PyObject *o, int *dst, PyArray_Descr **descr)
{
    *descr = NULL;
    if (o == NULL || o == Py_None) {
        return 0;
    }
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter2(o, &d)) {
        return -1;
    }
    if (d == NULL) {
        return 0;
    }
    int kind = d->kind, size = (int)PyDataType_ELSIZE(d), t = -1, typenum = 0;
    Py_DECREF(d);
    if (kind == 'b') {
        t = D_BOOL;
        typenum = NPY_BOOL;
    }
    else if (kind == 'i' || kind == 'u') {
        int s = size == 1   ? 0
                : size == 2 ? 1
                : size == 4 ? 2
                : size == 8 ? 3
                            : -1;
        if (s >= 0) {
            t = (kind == 'i' ? D_I8 : D_U8) + s;
            typenum = stype_npy[(kind == 'i' ? S_I8 : S_U8) + s];
        }
    }
    else if (kind == 'f') {
        t = size == 2 ? D_F16 : size == 4 ? D_F32 : size == 8 ? D_F64 : -1;
        typenum = size == 2   ? NPY_FLOAT16
                  : size == 4 ? NPY_FLOAT32
                              : NPY_FLOAT64;
    }
    if (t < 0) {
        PyErr_Format(PyExc_TypeError,
                     "to_matrix dtype must be bool, a (u)int of 8-64 bits or "
                     "float16/32/64, not %R",
                     o);
        return -1;
    }
    *dst = t;
    *descr = PyArray_DescrFromType(typenum);
    return 0;
}

/* Returns the D_* type of native descriptor `d` (bool/int/uint/float of
   the supported sizes), or -1. */
static int
dst_of(PyArray_Descr *d)
{
    switch (d->type_num) {
        case NPY_BOOL:
            return D_BOOL;
        case NPY_HALF:
            return D_F16;
        case NPY_FLOAT:
            return D_F32;
        case NPY_DOUBLE:
            return D_F64;
        default:
            break;
    }
    int size = (int)PyDataType_ELSIZE(d);
    int s = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    if (s < 0) {
        return -1;
    }
    if (PyTypeNum_ISSIGNED(d->type_num)) {
        return D_I8 + s;
    }
    if (PyTypeNum_ISUNSIGNED(d->type_num)) {
        return D_U8 + s;
    }
    return -1;
}

/* Parses a str argument against `choices` (NULL-terminated;
   dfb_parse_choice).  Returns the index, or -1 with TypeError (not a str)
   or ValueError naming `what`. */
static int
parse_choice(PyObject *o, const char *what, const char *const *choices,
             int dflt)
{
    int i = dflt;
    return dfb_parse_choice(o, what, choices, &i) < 0 ? -1 : i;
}

/* ------------------------------------------------------------------ */
/* to_matrix                                                            */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(
    to_matrix_doc,
    "to_matrix(obj, *, dtype=None, order='C', nulls='fill', columns=None, "
    "threads=None,\n          decimals='decimal', structs='object', "
    "copy=None, on_unsupported='raise', out=None,\n          "
    "period='object')\n--\n\n"
    "Copy the columns of a dataframe into one 2-D NumPy array (rows x "
    "columns).\n\n"
    "obj is anything from_dataframe accepts.  dtype=None promotes the "
    "columns'\n"
    "types as numpy.result_type does (bool and integer columns with nulls "
    "count\n"
    "as float64 when nulls='fill'); an explicit bool / (u)int / float16/32/64 "
    "dtype\n"
    "casts (categoricals give their codes).  String, date/time, nested and "
    "(without\n"
    "dtype) categorical columns raise TypeError naming the column.  "
    "order='C' or\n"
    "'F'.  nulls='fill' writes NaN (ValueError for a non-float dtype), "
    "'raise'\n"
    "raises ValueError naming the column, 'mask' (and 'always_mask') "
    "returns a\nnumpy.ma.MaskedArray "
    "with a 2-D bool mask of the same order, with or\nwithout nulls; "
    "'nan' is the deprecated spelling of 'fill'.  columns= selects and orders "
    "columns\n"
    "by name (KeyError for an unknown one).  threads= caps the worker "
    "threads (at\n"
    "most the CPU count; default by size).  The result is a new array that "
    "owns\n"
    "its memory (base None); it exports DLPack like any NumPy array.\n"
    "decimals='float64' reads Arrow decimal columns as float64 (default\n"
    "'decimal': TypeError, as for the other types NumPy numbers cannot "
    "hold).\n"
    "structs='flatten' takes an Arrow struct column's leaves as columns "
    "named\n'parent.child' (a struct's null rows are nulls of its leaves); "
    "columns= then\nnames leaves, or structs for all their leaves.\n"
    "out= writes the result into a caller's array instead of a new one and "
    "returns\nit: a writeable, aligned C- or F-contiguous (rows, columns) "
    "ndarray of a\nsupported dtype (native byte order) that the columns' "
    "type casts to\n(same_kind; dtype=, when given, must be out's dtype), "
    "sharing no memory with\na column; its order is the result's.  "
    "ValueError names what differs.\n\n"
    "Parameters\n"
    "----------\n"
    "obj : dataframe\n"
    "    Anything from_dataframe accepts.\n"
    "dtype : dtype-like or None, optional\n"
    "    The result's dtype; None promotes the columns' types.\n"
    "order : {'C', 'F'}, optional\n"
    "    Row-major or column-major result (default 'C').\n"
    "nulls : {'fill', 'raise', 'mask', 'always_mask'}, optional\n"
    "    NaN in null slots, ValueError, or a MaskedArray (default 'fill').\n"
    "columns : sequence of str, optional\n"
    "    The columns to take, in this order (default: all).\n"
    "threads : int or None, optional\n"
    "    The most worker threads to use.\n"
    "decimals : {'decimal', 'float64'}, optional\n"
    "structs : {'object', 'flatten'}, optional\n"
    "    Struct columns refused, or their leaves (default 'object').\n"
    "copy : bool or None, optional\n"
    "    None or True (the result is always new memory); False raises\n"
    "    CopyError.\n"
    "on_unsupported : {'raise', 'skip'}, optional\n"
    "    A column of a type to_matrix does not take raises TypeError\n"
    "    (default), or is left out ('skip'; decided from the schema: bool,\n"
    "    integer and float columns, categoricals with a dtype, decimals with\n"
    "    decimals='float64').\n"
    "out : numpy.ndarray, optional\n"
    "    The array to write the result into (returned).\n"
    "period : {'object', 'ordinal'}, optional\n"
    "    A pandas Period column: refused ('object', default: a Period has\n"
    "    no number; TypeError naming it, or left out with\n"
    "    on_unsupported='skip'), or taken as its int64 ordinals\n"
    "    ('ordinal'; NaT a null), whose frequency dfbuffer.schema() gives.\n"
    "\n"
    "Returns\n"
    "-------\n"
    "numpy.ndarray or numpy.ma.MaskedArray\n"
    "    A new (rows, columns) array that owns its memory.\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError\n"
    "    obj is not a dataframe; a column has a type to_matrix does not "
    "take.\n"
    "KeyError\n"
    "    A name in columns is not in the frame.\n"
    "ValueError\n"
    "    A null that nulls= or dtype= cannot hold; columns of different\n"
    "    lengths.  Errors about one column name it.\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import pyarrow as pa\n"
    ">>> import dfbuffer\n"
    ">>> t = pa.table({\"x\": [1, 2], \"y\": [0.5, None]})\n"
    ">>> dfbuffer.to_matrix(t)\n"
    "array([[1. , 0.5],\n"
    "       [2. , nan]])\n"
    ">>> dfbuffer.to_matrix(t, nulls=\"mask\", order=\"F\").mask.tolist()\n"
    "[[False, False], [False, True]]\n"
    ">>> s = pa.table({\"p\": [{\"a\": 1, \"b\": 2.5}, None]})\n"
    ">>> dfbuffer.to_matrix(s, structs=\"flatten\", columns=[\"p.b\"])\n"
    "array([[2.5],\n       [nan]])");

/* Returns 0, or -1 with ValueError when nulls are present where they
   cannot be kept.  Counts unknown null counts first (GIL released). */
static int
check_nulls(mcol *cols, Py_ssize_t ncols, const dfb_frame *fr, int mode,
            int dst_is_float)
{
    int need_all = mode == 1 || !dst_is_float; /* raise, or nan into ints */
    for (Py_ssize_t j = 0; j < ncols; j++) {
        int64_t total = 0;
        Py_BEGIN_ALLOW_THREADS for (Py_ssize_t k = 0; k < cols[j].n; k++)
        {
            mchunk *c = &cols[j].chunks[k];
            if (c->nnull < 0 && (need_all || c->nk != NK_NAN)) {
                c->nnull = dfb_matrix_count_nulls(c);
            }
            total += c->nnull > 0 ? c->nnull : 0;
        }
        Py_END_ALLOW_THREADS if (total > 0 && mode == 1)
        {
            PyErr_Format(PyExc_ValueError,
                         "column %R has %lld null value%s (nulls='raise')",
                         fr->cols[j].name, (long long)total,
                         total == 1 ? "" : "s");
            return -1;
        }
        if (total > 0 && mode == 0 && !dst_is_float) {
            PyErr_Format(PyExc_ValueError,
                         "column %R has %lld null value%s, which the "
                         "requested non-float dtype cannot hold as NaN; use "
                         "nulls='mask' or a float dtype",
                         fr->cols[j].name, (long long)total,
                         total == 1 ? "" : "s");
            return -1;
        }
    }
    return 0;
}

/* Takes the pending exception into *exc (a new reference) and returns its
   str() (a new reference), for rewriting it; when there is none or str()
   fails, returns NULL with the original exception pending again and *exc
   NULL. */
static PyObject *
take_message(PyObject **exc)
{
    *exc = dfb_err_take();
    PyObject *msg = *exc != NULL ? PyObject_Str(*exc) : NULL;
    if (msg == NULL) {
        PyErr_Clear();
        dfb_err_give(*exc);
        *exc = NULL;
    }
    return msg;
}

/* Prefixes the pending exception's message with column `name` (as a
   ValueError: the column's buffers do not match its description). */
static void
add_name(PyObject *name)
{
    PyObject *exc;
    PyObject *msg = take_message(&exc);
    if (msg == NULL) {
        return;
    }
    PyErr_Format((PyObject *)Py_TYPE(exc), "column %R: %U", name, msg);
    Py_DECREF(msg);
    Py_DECREF(exc);
}

/* Replaces a pending NotImplementedError (an unsupported Arrow format or
   interchange dtype, already naming the column) by TypeError, chained to
   the original. */
static void
unsupported_to_type_error(void)
{
    if (!PyErr_ExceptionMatches(PyExc_NotImplementedError)) {
        return;
    }
    PyObject *exc;
    PyObject *msg = take_message(&exc);
    if (msg == NULL) {
        return;
    }
    PyErr_Format(PyExc_TypeError,
                 "%U (to_matrix takes bool, integer and "
                 "float columns)",
                 msg);
    Py_DECREF(msg);
    dfb_err_raise_from(exc);
}

/* Parses threads= (None: 0, automatic; at most MAX_THREADS).  Returns 0,
   or -1 with TypeError / ValueError. */
static int
parse_threads(PyObject *o, int *out)
{
    *out = 0;
    if (o == NULL || o == Py_None) {
        return 0;
    }
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError,
                     "threads must be an int or None, "
                     "not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < 1) {
        PyErr_Format(PyExc_ValueError, "threads must be >= 1, got %ld", v);
        return -1;
    }
    *out = v > MAX_THREADS ? MAX_THREADS : (int)v;
    return 0;
}

/* The Arrow producer to_matrix reads the columns `o_cols` (NULL or None:
   all) of pandas frame `obj` through when its blocks are not all read in
   place: dfbuffer._to_arrow._matrix_source (to_arrow's reading, refusing
   a selected Period, Interval, object or complex column by name; with
   `ordinal`, period="ordinal", a Period column gives its ordinals).
   Returns a new reference or NULL with an exception. */
static PyObject *
pandas_matrix_source(PyObject *obj, PyObject *o_cols, int ordinal)
{
    PyObject *mod = PyImport_ImportModule("dfbuffer._to_arrow");
    if (mod == NULL) {
        return NULL;
    }
    PyObject *res = PyObject_CallMethod(mod, "_matrix_source", "(OOO)", obj,
                                        o_cols != NULL ? o_cols : Py_None,
                                        ordinal ? Py_True : Py_False);
    Py_DECREF(mod);
    return res;
}

/* Describes the selected columns (`o_cols`) of `obj`, a frame of kind
   `kind` (the frame-source table's answer), into `fr`: a pandas frame from
   its blocks (*pd_strides then set) or else through to_arrow's reading
   of it, an Arrow
   producer (*own: a new list of a pandas frame's own column names, or
   NULL), or an interchange DataFrame; `flatten`: an Arrow producer's
   struct columns as their leaves.  Returns 0, or -1 with an exception set
   (TypeError for any other kind, or naming an unsupported column). */
static int
describe_frame(dfb_state *st, PyObject *obj, dfb_frame_kind kind,
               PyObject *o_cols, int flatten, int ordinal, dfb_frame *fr,
               int64_t **pd_strides, PyObject **own)
{
    int r;
    switch (kind) {
        case DFB_SRC_PANDAS: {
            PyObject *rest = NULL;
            r = dfb_matrix_pandas_describe(obj, o_cols, fr, pd_strides, &rest);
            if (r != 1) {
                break;
            }
            /* columns the blocks do not serve: to_arrow's reading of the
               frame (no index column, no pyarrow needed, errors named),
               of a frame over the manager read when there is one */
            PyObject *src = pandas_matrix_source(rest != NULL ? rest : obj,
                                                 o_cols, ordinal);
            Py_XDECREF(rest);
            if (src == NULL) {
                r = -1;
                break;
            }
            r = dfb_arrow_describe_frame(st, src, o_cols, flatten, ordinal,
                                         fr);
            Py_DECREF(src);
            break;
        }
        case DFB_SRC_ARROW:
            r = 0;
            if (o_cols == NULL || o_cols == Py_None) {
                *own = dfb_matrix_pandas_columns(obj);
                if (*own == NULL && PyErr_Occurred()) {
                    r = -1;
                }
            }
            if (r == 0) {
                r = dfb_arrow_describe_frame(st, obj,
                                             *own != NULL ? *own : o_cols,
                                             flatten, ordinal, fr);
            }
            break;
        case DFB_SRC_INTERCHANGE:
            r = dfb_ix_describe_frame(st, obj, o_cols, fr);
            if (r == 1) {
                dfb_not_a_frame_error("to_matrix", obj);
                r = -1;
            }
            break;
        default:
            dfb_not_a_frame_error("to_matrix", obj);
            r = -1;
            break;
    }
    if (r < 0) {
        unsupported_to_type_error();
        return -1;
    }
    return 0;
}

/* Plans the chunks of column `fc` into `col` (its chunks already point
   into the plan's array): their read and null kinds, first rows, and the
   NumPy type they promote to (*coltype; NPY_BOOL when every chunk is of
   the null type) and the column's length (*len).  `codes_ok`: an explicit
   dtype= was given; `pd_stride2`: the (data, mask) strides of a pandas
   column, or NULL.  Returns 0, or -1 with an exception set. */
static int
plan_column(const dfb_frame_column *fc, mcol *col, int codes_ok,
            const int64_t *pd_stride2, int *coltype, int64_t *len)
{
    *len = 0;
    *coltype = -1; /* null-type chunks take no part */
    for (Py_ssize_t k = 0; k < fc->nchunks; k++) {
        const dfb_column *c = &fc->chunks[k];
        mchunk *mc = &col->chunks[k];
        int tn;
        if (plan_chunk(c, fc->name, codes_ok, mc, &tn) < 0) {
            return -1;
        }
        if (pd_stride2 != NULL) {
            /* a pandas array, checked when read: strides instead */
            mc->stride = pd_stride2[0];
            mc->vstride = pd_stride2[1];
        }
        else if (dfb_column_validate(c) < 0) {
            add_name(fc->name);
            return -1;
        }
        mc->start = *len;
        *len += c->length;
        if (c->fmt.type == DFB_T_NULL || tn == *coltype) {
            continue;
        }
        if (*coltype < 0) {
            *coltype = tn;
            continue;
        }
        PyArray_Descr *a = PyArray_DescrFromType(*coltype);
        PyArray_Descr *b = PyArray_DescrFromType(tn);
        PyArray_Descr *pr = PyArray_PromoteTypes(a, b);
        Py_DECREF(a);
        Py_DECREF(b);
        if (pr == NULL) {
            return -1;
        }
        *coltype = pr->type_num;
        Py_DECREF(pr);
    }
    if (*coltype < 0) {
        *coltype = NPY_BOOL;
    }
    return 0;
}

/* Promotes *promoted (a new reference or NULL) with the type of column
   `col` (`coltype`), widened to float64 when nulls="nan" (`fill_nan`) and
   the bool / integer column has nulls (counted here, without the GIL).
   Returns 0, or -1 with an exception set (*promoted then NULL). */
static int
promote_column(mcol *col, int coltype, int fill_nan, PyArray_Descr **promoted)
{
    if (fill_nan &&
        (PyTypeNum_ISBOOL(coltype) || PyTypeNum_ISINTEGER(coltype))) {
        int64_t nn = 0;
        Py_BEGIN_ALLOW_THREADS;
        for (Py_ssize_t k = 0; k < col->n; k++) {
            mchunk *mc = &col->chunks[k];
            if (mc->nnull < 0) {
                mc->nnull = dfb_matrix_count_nulls(mc);
            }
            nn += mc->nnull;
        }
        Py_END_ALLOW_THREADS;
        if (nn > 0) {
            coltype = NPY_FLOAT64;
        }
    }
    PyArray_Descr *cd = PyArray_DescrFromType(coltype);
    if (*promoted == NULL) {
        *promoted = cd;
        return 0;
    }
    PyArray_Descr *p = PyArray_PromoteTypes(*promoted, cd);
    Py_DECREF(cd);
    Py_SETREF(*promoted, p);
    return p == NULL ? -1 : 0;
}

/* Plans every column of `fr` into `cols` (chunks in `all`) and finds the
   number of rows (*nrows, -1 when there is no column).  When no dtype= was
   given (*descr NULL) sets *descr to the promoted type of the columns (a
   new reference) and *dst to its D_* type.  Returns 0, or -1 with an
   exception set. */
static int
plan_frame(const dfb_frame *fr, mcol *cols, mchunk *all,
           const int64_t *pd_strides, int fill_nan, int64_t *nrows,
           PyArray_Descr **descr, int *dst)
{
    PyArray_Descr *promoted = NULL;
    *nrows = -1;
    for (Py_ssize_t j = 0, at = 0; j < fr->ncols; j++) {
        const dfb_frame_column *fc = &fr->cols[j];
        int coltype;
        int64_t len;
        cols[j].chunks = all + at;
        cols[j].n = fc->nchunks;
        at += fc->nchunks;
        if (plan_column(fc, &cols[j], *descr != NULL,
                        pd_strides != NULL ? pd_strides + 2 * j : NULL,
                        &coltype, &len) < 0) {
            goto fail;
        }
        if (*nrows < 0) {
            *nrows = len;
        }
        else if (len != *nrows) {
            PyErr_Format(PyExc_ValueError,
                         "columns have different lengths: column %R has "
                         "%lld rows, column %R has %lld",
                         fr->cols[0].name, (long long)*nrows, fc->name,
                         (long long)len);
            goto fail;
        }
        if (*descr == NULL &&
            promote_column(&cols[j], coltype, fill_nan, &promoted) < 0) {
            goto fail;
        }
    }
    if (*descr == NULL) {
        *descr =
            promoted != NULL ? promoted : PyArray_DescrFromType(NPY_FLOAT64);
        *dst = dst_of(*descr);
        if (*dst < 0) {
            PyErr_Format(PyExc_TypeError,
                         "the columns promote to %R, which to_matrix cannot "
                         "write",
                         (PyObject *)*descr);
            return -1;
        }
    }
    return 0;
fail:
    Py_XDECREF(promoted);
    return -1;
}

/* Allocates the output (or takes the caller's `given`, checked by
   check_out; borrowed) and for nulls="mask", `mode` 2, the mask, and fills
   it from the planned columns with up to `nthreads` threads (0:
   automatic).  `descr` is borrowed.  Returns the new result, or NULL with
   an exception set. */
static PyObject *
fill_output(dfb_state *st, mcol *cols, Py_ssize_t ncols, mchunk *all,
            Py_ssize_t total_chunks, int64_t nrows, PyArray_Descr *descr,
            int dst, int fortran, int mode, int nthreads, PyObject *given)
{
    static const int same_src[D_N] = {-1,    S_I8, S_I16, S_I32,
                                      S_I64, S_U8, S_U16, S_U32,
                                      S_U64, -1,   S_F32, S_F64};
    npy_intp dims[2] = {(npy_intp)nrows, (npy_intp)ncols};
    PyObject *mask = NULL, *res = NULL;
    int reused = 0;
    PyObject *out;
    if (given != NULL) {
        out = Py_NewRef(given);
        reused = 1; /* the caller's memory: its pages are there */
    }
    else {
        Py_INCREF(descr);
        out = dfb_matrix_new_output(descr, dims, fortran, &reused);
        if (out == NULL) {
            return NULL;
        }
    }
    if (mode == 2) {
        mask =
            PyArray_Zeros(2, dims, PyArray_DescrFromType(NPY_BOOL), fortran);
        if (mask == NULL) {
            Py_DECREF(out);
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < total_chunks; i++) {
        all[i].same = all[i].read == R_DIRECT && all[i].stride == 0 &&
                      all[i].st == same_src[dst];
    }
    mplan plan;
    memset(&plan, 0, sizeof(plan));
    plan.cols = cols;
    plan.ncols = ncols;
    plan.nrows = nrows;
    plan.dst = dst;
    plan.isz = (int)PyDataType_ELSIZE(descr);
    plan.is_float = dst == D_F16 || dst == D_F32 || dst == D_F64;
    plan.fill_nan = mode == 0;
    plan.corder = !fortran && ncols > 1;
    plan.out = PyArray_DATA((PyArrayObject *)out);
    plan.mask = mask ? PyArray_DATA((PyArrayObject *)mask) : NULL;
    int nt = dfb_matrix_prepare(&plan, nthreads, reused);
    if (nrows * (int64_t)ncols * plan.isz > 0) {
        Py_BEGIN_ALLOW_THREADS;
        dfb_matrix_run(&plan, nt);
        Py_END_ALLOW_THREADS;
    }
    res = mode == 2 ? dfb_masked_array(st, out, mask) : Py_NewRef(out);
    Py_DECREF(out);
    Py_XDECREF(mask);
    return res;
}

/* 1 if the `n` bytes from `a` and from `b` overlap.  Cannot fail. */
static int
overlaps(const char *a, int64_t n, const char *b, int64_t m)
{
    return a != NULL && b != NULL && n > 0 && m > 0 &&
           (uintptr_t)a < (uintptr_t)b + (uint64_t)m &&
           (uintptr_t)b < (uintptr_t)a + (uint64_t)n;
}

/* The bytes a chunk's loops may read from its data buffer start, at most
   (its offset and rows at its stride; bits for R_BITS), or INT64_MAX when
   that does not fit.  Cannot fail. */
static int64_t
chunk_extent(const mchunk *c, int64_t *vbytes)
{
    int64_t end, n;
    *vbytes = dfb_checked_add(c->offset, c->length, &end) < 0 ? INT64_MAX
                                                              : end / 8 + 1;
    if (c->read == R_BITS) {
        return *vbytes;
    }
    const int64_t step =
        c->stride != 0 ? (c->stride < 0 ? -c->stride : c->stride) : c->isz;
    return dfb_checked_add(c->offset, c->length, &end) < 0 ||
                   dfb_checked_mul(end, step, &n) < 0
               ? INT64_MAX
               : n;
}

/* Checks the caller's out= `o` for a (nrows, ncols) result of dtype
   `descr` (borrowed; `explicit`: dtype= was given) read from the planned
   columns: a writeable, aligned, native-order C- or F-contiguous ndarray
   of that shape, whose dtype is dtype= itself or one the columns' type
   casts to (same_kind), sharing no memory with a column.  On success sets
   *dst to its D_* type, *fortran to its order and replaces *descr with a
   new reference to its dtype.  Returns 0, or -1 with TypeError (not an
   ndarray) or ValueError naming what differs. */
static int
check_out(PyObject *o, int64_t nrows, Py_ssize_t ncols, int explicit,
          PyArray_Descr **descr, int *dst, int *fortran, const mcol *cols,
          const dfb_frame *fr)
{
    if (!PyArray_Check(o)) {
        PyErr_Format(PyExc_TypeError,
                     "to_matrix out must be a numpy.ndarray, not %.200s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    PyArray_Descr *od = PyArray_DESCR(a);
    if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) != nrows ||
        PyArray_DIM(a, 1) != ncols) {
        PyObject *shape = PyObject_GetAttrString(o, "shape");
        if (shape != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "to_matrix out has shape %R, the frame gives "
                         "(%lld, %lld)",
                         shape, (long long)nrows, (long long)ncols);
            Py_DECREF(shape);
        }
        return -1;
    }
    if (!PyArray_ISWRITEABLE(a)) {
        PyErr_SetString(PyExc_ValueError, "to_matrix out is read-only");
        return -1;
    }
    const int c_ok = PyArray_IS_C_CONTIGUOUS(a),
              f_ok = PyArray_IS_F_CONTIGUOUS(a);
    if ((!c_ok && !f_ok) || !PyArray_ISALIGNED(a)) {
        PyErr_SetString(PyExc_ValueError,
                        "to_matrix out must be an aligned C- or F-contiguous "
                        "array");
        return -1;
    }
    const int odst = PyArray_ISNBO(od->byteorder) ? dst_of(od) : -1;
    if (odst < 0) {
        PyErr_Format(PyExc_ValueError,
                     "to_matrix out has dtype %R: bool, a (u)int of 8-64 "
                     "bits or float16/32/64 in native byte order expected",
                     (PyObject *)od);
        return -1;
    }
    if (explicit ? !PyArray_EquivTypes(*descr, od)
                 : !PyArray_CanCastTypeTo(*descr, od, NPY_SAME_KIND_CASTING)) {
        PyErr_Format(PyExc_ValueError,
                     explicit ? "to_matrix out has dtype %R, dtype= is %R"
                              : "to_matrix out has dtype %R, the columns "
                                "promote to %R, which does not cast to it "
                                "(same_kind)",
                     (PyObject *)od, (PyObject *)*descr);
        return -1;
    }
    const char *ob = PyArray_DATA(a);
    const int64_t on = (int64_t)PyArray_NBYTES(a);
    for (Py_ssize_t j = 0; j < ncols; j++) {
        for (Py_ssize_t k = 0; k < cols[j].n; k++) {
            const mchunk *c = &cols[j].chunks[k];
            int64_t vb;
            const int64_t db = chunk_extent(c, &vb);
            /* a negative stride reads below data: both sides checked */
            const int64_t below = c->stride < 0 ? db : 0;
            if (overlaps(ob, on, c->data - below,
                         db > INT64_MAX / 2 ? INT64_MAX : db + below) ||
                overlaps(ob, on, (const char *)c->valid, vb)) {
                PyErr_Format(PyExc_ValueError,
                             "to_matrix out shares memory with column %R",
                             fr->cols[j].name);
                return -1;
            }
        }
    }
    Py_INCREF(od);
    Py_SETREF(*descr, od);
    *dst = odst;
    *fortran = !c_ok;
    return 0;
}

/* on_unsupported="skip": the names of the columns of `obj` (of `o_cols`,
   NULL/None: all) that to_matrix takes by its rule, read from the schema
   (dfbuffer._schema._matrix_columns; no data read).  Returns a new list,
   or NULL with an exception set. */
static PyObject *
matrix_columns(PyObject *obj, PyObject *o_cols, int flatten, int dtype_given,
               int dec, int ordinal)
{
    PyObject *fn = dfb_import_attr("dfbuffer._schema", "_matrix_columns");
    if (fn == NULL) {
        return NULL;
    }
    PyObject *res = PyObject_CallFunction(
        fn, "OOOOOO", obj, o_cols != NULL ? o_cols : Py_None,
        flatten ? Py_True : Py_False, dtype_given ? Py_True : Py_False,
        dec ? Py_True : Py_False, ordinal ? Py_True : Py_False);
    Py_DECREF(fn);
    return res;
}

/* decimals="float64": every decimal chunk of `fr` becomes float64 (kept
   by fr->keep).  Returns 0, or -1 with an exception set. */
static int
decimals_to_float(dfb_frame *fr)
{
    for (Py_ssize_t j = 0; j < fr->ncols; j++) {
        for (Py_ssize_t k = 0; k < fr->cols[j].nchunks; k++) {
            dfb_column *c = &fr->cols[j].chunks[k];
            if (c->fmt.type == DFB_T_DECIMAL &&
                dfb_decimals_as_f64(c, fr->keep) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* to_matrix(obj, *, dtype=None, order="C", nulls="fill", columns=None,
   threads=None, decimals=, structs=, copy=None).  Returns a new array
   (MaskedArray for nulls="mask"), or NULL with an exception set. */
static PyObject *
to_matrix(PyObject *module, dfb_frame_kind kind, PyObject *const *args,
          Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const kw[] = {
        "obj",     "dtype",    "order",   "nulls", "columns",
        "threads", "decimals", "structs", "copy",  "on_unsupported",
        "out",     "period",   NULL};
    static const dfb_argspec spec = {"to_matrix", kw, 1, 1};
    static const char *const orders[] = {"C", "F", NULL};
    PyObject *a[12] = {NULL, NULL, NULL, NULL, NULL, NULL,
                       NULL, NULL, NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    const dfb_opt_args oa = {.nulls = a[3],
                             .decimals = a[6],
                             .structs = a[7],
                             .copy = a[8],
                             .on_unsupported = a[9],
                             .period = a[11]};
    dfb_opts opts;
    if (dfb_parse_opts(&oa, &opts) < 0) {
        return NULL;
    }
    if (opts.copy == 0) {
        /* the result is always new memory: copy=None and True are one */
        const char *prev = dfb_copy_keyword_enter("copy");
        dfb_copy_error(st,
                       "to_matrix() always copies the columns into a "
                       "new array");
        dfb_copy_keyword_leave(prev);
        return NULL;
    }
    /* fill (the default: NaN), raise, mask (always a MaskedArray) */
    const int mode = a[3] == NULL                    ? 0
                     : opts.nulls == DFB_NULLS_RAISE ? 1
                     : opts.nulls == DFB_NULLS_MASK  ? 2
                                                     : 0;
    const int dec = opts.decimal_float, flatten = opts.structs_flatten;
    PyObject *obj = a[0], *o_cols = a[4];
    int order = parse_choice(a[2], "order", orders, 0);
    int nthreads = 0, dst = -1;
    PyArray_Descr *descr = NULL;
    if (order < 0 || parse_threads(a[5], &nthreads) < 0 ||
        parse_dtype(a[1], &dst, &descr) < 0) {
        return NULL;
    }
    PyObject *skip_cols = NULL; /* on_unsupported="skip": what is taken */
    if (opts.skip_unsupported) {
        skip_cols = matrix_columns(obj, o_cols, flatten, descr != NULL, dec,
                                   opts.period_ordinal);
        if (skip_cols == NULL) {
            Py_XDECREF(descr);
            return NULL;
        }
        o_cols = skip_cols;
    }
    /* held: describing the frame runs the producer's code */
    PyObject *given =
        a[10] != NULL && a[10] != Py_None ? Py_NewRef(a[10]) : NULL;
    const int explicit = descr != NULL;

    dfb_frame fr;
    memset(&fr, 0, sizeof(fr));
    fr.nrows = -1;
    mcol *cols = NULL;
    mchunk *all = NULL;
    int64_t nrows = -1;
    PyObject *res = NULL, *own = NULL;
    int64_t *pd_strides = NULL;
    if (describe_frame(st, obj, kind, o_cols, flatten, opts.period_ordinal,
                       &fr, &pd_strides, &own) < 0 ||
        (dec && decimals_to_float(&fr) < 0)) {
        goto done;
    }
    Py_ssize_t ncols = fr.ncols, total_chunks = 0;
    for (Py_ssize_t j = 0; j < ncols; j++) {
        total_chunks += fr.cols[j].nchunks;
    }
    cols = PyMem_Calloc(ncols > 0 ? (size_t)ncols : 1, sizeof(mcol));
    all = PyMem_Calloc(total_chunks > 0 ? (size_t)total_chunks : 1,
                       sizeof(mchunk));
    if (cols == NULL || all == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (plan_frame(&fr, cols, all, pd_strides, mode == 0, &nrows, &descr,
                   &dst) < 0) {
        goto done;
    }
    if (nrows < 0) {
        nrows = fr.nrows >= 0 ? fr.nrows : 0;
    }
    /* the plan holds all the fill needs: drop the descriptions before the
       output exists (the keep list still holds the memory) */
    for (Py_ssize_t j = 0; j < ncols; j++) {
        PyMem_Free(fr.cols[j].chunks);
        fr.cols[j].chunks = NULL;
    }
    int fortran = order == 1;
    if (given != NULL) {
        if (check_out(given, nrows, ncols, explicit, &descr, &dst, &fortran,
                      cols, &fr) < 0) {
            goto done;
        }
        if (a[2] != NULL && fortran != (order == 1) && ncols > 1 &&
            nrows > 1) {
            PyErr_Format(PyExc_ValueError,
                         "to_matrix order=%R, out is %s-ordered", a[2],
                         fortran ? "F" : "C");
            goto done;
        }
    }
    int is_float = dst == D_F16 || dst == D_F32 || dst == D_F64;
    if (mode != 2 && check_nulls(cols, ncols, &fr, mode, is_float) < 0) {
        goto done;
    }
    res = fill_output(st, cols, ncols, all, total_chunks, nrows, descr, dst,
                      fortran, mode, nthreads, given);
done:
    Py_XDECREF(given);
    Py_XDECREF(descr);
    PyMem_Free(all);
    PyMem_Free(cols);
    Py_XDECREF(own);
    Py_XDECREF(skip_cols);
    PyMem_Free(pd_strides);
    dfb_frame_clear(&fr);
    return res;
}

/* to_matrix's entry: the frame-source table (frame.c) says how the
   frame is read; the call goes on with the object to read in place of
   the first argument: the pandas frame behind pandas' interchange object
   (its own buffers drop the slice offset of Arrow-backed columns, P-26),
   the interchange DataFrame of an object with __dataframe__, the Arrow
   export of a mapping (to_arrow, zero-copy).  Returns what to_matrix
   returns. */
static PyObject *
to_matrix_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    if (nargs < 1) { /* the parser's TypeError */
        return to_matrix(module, DFB_SRC_NONE, args, nargs, kwnames);
    }
    dfb_frame_source src;
    if (dfb_frame_source_of(dfb_state_from_module(module), args[0], 1, &src) <
        0) {
        return NULL;
    }
    if (src.kind == DFB_SRC_MAPPING) {
        /* to_arrow(obj, func="to_matrix"): its errors name to_matrix */
        PyObject *fn = dfb_import_attr("dfbuffer._to_arrow", "to_arrow");
        PyObject *kw =
            fn == NULL ? NULL : Py_BuildValue("{ss}", "func", "to_matrix");
        PyObject *pos = kw == NULL ? NULL : PyTuple_Pack(1, args[0]);
        Py_SETREF(src.frame, pos == NULL ? NULL : PyObject_Call(fn, pos, kw));
        Py_XDECREF(pos);
        Py_XDECREF(kw);
        Py_XDECREF(fn);
        if (src.frame == NULL) {
            return NULL;
        }
        src.kind = DFB_SRC_ARROW;
    }
    if (src.frame == NULL) {
        return to_matrix(module, src.kind, args, nargs, kwnames);
    }
    Py_ssize_t n = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject **copy = PyMem_Malloc((size_t)n * sizeof(PyObject *));
    if (copy == NULL) {
        Py_DECREF(src.frame);
        return PyErr_NoMemory();
    }
    dfb_memcpy(copy, args, (size_t)n * sizeof(PyObject *));
    copy[0] = src.frame;
    PyObject *res = to_matrix(module, src.kind, copy, nargs, kwnames);
    PyMem_Free(copy);
    Py_DECREF(src.frame);
    return res;
}

PyMethodDef dfb_matrix_methods[] = {
    {"to_matrix", (PyCFunction)(void (*)(void))to_matrix_entry,
     METH_FASTCALL | METH_KEYWORDS, to_matrix_doc},
    {NULL},
};
