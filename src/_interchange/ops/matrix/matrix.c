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
#include "pandas.h"
#include "readers.h"
#include "args.h"
#include "arrow.h"
#include "model.h"
#include "kernels.h"
#include "matrix.h"
#include "layout.h"
#include "mem.h"
#include "types.h"

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
    NPY_INT8,   NPY_INT16,  NPY_INT32,   NPY_INT64,   NPY_UINT8,   NPY_UINT16,
    NPY_UINT32, NPY_UINT64, NPY_FLOAT32, NPY_FLOAT64, NPY_FLOAT16,
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

/* plan_chunk's answer for a chunk of a type to_matrix does not take (a
   TypeError naming the column is set): on_unsupported="skip" leaves its
   column out, "raise" raises it. */
#define REFUSED 1

/* Fills `mc` from described chunk `c` of column `name` and sets *typenum
   to the NumPy type of its values (NPY_BOOL for bools and the null type,
   the codes' type for categoricals): the one rule of the types to_matrix
   takes.  `codes_ok`: an explicit numeric dtype was given; `ree`: `c` is
   the values of a run-end encoded chunk (named so in the error).  A
   run-end encoded chunk is judged by its values (its plan is then its
   decoded column's: decode_runs).  Returns 0, REFUSED with TypeError
   naming the column, or -1 with an exception set. */
static int
plan_chunk(const dfb_column *c, PyObject *name, int codes_ok, int ree,
           mchunk *mc, int *typenum)
{
    const dfb_format *f = &c->fmt;
    memset(mc, 0, sizeof(*mc));
    mc->data = c->data.ptr;
    mc->offset = c->offset;
    mc->length = c->length;
    mc->nnull = -1;
    const dfb_type_row *r = dfb_type_row_of(f->type);
    if (dfb_type_decodes_runs(f->type)) {
        /* run-end encoded: taken when its values are (never as a
           categorical's codes: its codes are runs) */
        const dfb_column *v = c->categories;
        if (v == NULL || ree || dfb_type_has_codes(v->fmt.type)) {
            PyErr_Format(PyExc_TypeError,
                         "column %R is run-end encoded with %s values; "
                         "to_matrix takes bool, integer and float columns",
                         name, v == NULL ? "no" : "encoded");
            return REFUSED;
        }
        return plan_chunk(v, name, codes_ok, 1, mc, typenum);
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
            return REFUSED;
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
        if (f->bits == 16 || f->bits == 32 || f->bits == 64) {
            mc->st = f->bits == 16 ? S_F16 : f->bits == 32 ? S_F32 : S_F64;
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
                if (mc->st == S_F16 || mc->st == S_F32 || mc->st == S_F64 ||
                    f->type == DFB_T_BOOL_BIT) {
                    PyErr_Format(PyExc_TypeError,
                                 "column %R: sentinel nulls are only "
                                 "supported on integer columns",
                                 name);
                    return REFUSED;
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
    /* contiguous: a pandas column sets its own strides (plan_column) */
    mc->stride = mc->isz;
    mc->vstride = 1;
    return 0;
unsupported:
    const char *what = kind_name(c);
    /* its Arrow format, when it has one (not a timestamp's: the frame
       dropped its timezone) */
    char arrow[64];
    int has = f->type != DFB_T_TIMESTAMP &&
              dfb_format_to_arrow(f, arrow, sizeof(arrow)) == 0;
    PyErr_Format(PyExc_TypeError,
                 "column %R %s %s %s type%s%s%s; to_matrix takes bool, "
                 "integer and float columns",
                 name, ree ? "is run-end encoded with" : "has",
                 strchr("aeiou", what[0]) != NULL ? "an" : "a", what,
                 has ? " (Arrow format '" : "", has ? arrow : "",
                 has ? "')" : "");
    return REFUSED;
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
    return dfb_parse_choice("to_matrix", o, what, choices, &i) < 0 ? -1 : i;
}

/* ------------------------------------------------------------------ */
/* to_matrix                                                            */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(
    to_matrix_doc,
    "to_matrix(obj, *, dtype=None, order='C', nulls='fill', columns=None, "
    "threads=None,\n          decimals='decimal', structs='object', "
    "copy=None, on_unsupported='raise', out=None,\n          "
    "period='object', allow_copy=True)\n--\n\n"
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
    "allow_copy : bool, optional\n"
    "    The alias of copy (True is copy=None, False copy=False); not\n"
    "    both.\n"
    "on_unsupported : {'raise', 'skip'}, optional\n"
    "    A column of a type to_matrix does not take raises TypeError\n"
    "    (default), or is left out ('skip': exactly the columns 'raise'\n"
    "    refuses; bool, integer and float columns, run-end encoded ones by\n"
    "    their values, categoricals with a dtype, decimals with\n"
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

/* to_matrix's operation of a row of the frame-source table: describes the
   selected columns (`o_cols`) of the row's frame `obj` into `fr`; `flatten`:
   an Arrow producer's struct columns as their leaves; `skip`
   (on_unsupported="skip"): a column no reader takes, or one refused by its
   pandas type, is left out.  Returns 0, or -1 with an exception set. */
typedef int (*frame_describer)(dfb_state *st, PyObject *obj, PyObject *o_cols,
                               int flatten, int ordinal, int skip,
                               dfb_frame *fr, mstrides **strides,
                               PyObject **own);

/* A pandas frame (matrix_pandas.c: its blocks in place, *strides set). */
static int
describe_pandas(dfb_state *st, PyObject *obj, PyObject *o_cols, int flatten,
                int ordinal, int skip, dfb_frame *fr, mstrides **strides,
                PyObject **own)
{
    (void)own;
    return dfb_matrix_pandas_describe(st, obj, o_cols, flatten, ordinal, skip,
                                      fr, strides);
}

/* A mapping (matrix_mapping.c: value by value, *strides set). */
static int
describe_mapping(dfb_state *st, PyObject *obj, PyObject *o_cols, int flatten,
                 int ordinal, int skip, dfb_frame *fr, mstrides **strides,
                 PyObject **own)
{
    (void)own;
    return dfb_matrix_mapping_describe(st, obj, o_cols, flatten, ordinal, skip,
                                       fr, strides);
}

/* An Arrow producer (*own: a new list of a pandas frame's own column names,
   or NULL). */
static int
describe_arrow(dfb_state *st, PyObject *obj, PyObject *o_cols, int flatten,
               int ordinal, int skip, dfb_frame *fr, mstrides **strides,
               PyObject **own)
{
    (void)strides;
    if (o_cols == NULL || o_cols == Py_None) {
        *own = dfb_matrix_pandas_columns(obj);
        if (*own == NULL && PyErr_Occurred()) {
            return -1;
        }
    }
    return dfb_arrow_describe_frame(st, obj, *own != NULL ? *own : o_cols,
                                    flatten, ordinal, skip, fr);
}

/* An interchange DataFrame (TypeError for one that is no frame). */
static int
describe_interchange(dfb_state *st, PyObject *obj, PyObject *o_cols,
                     int flatten, int ordinal, int skip, dfb_frame *fr,
                     mstrides **strides, PyObject **own)
{
    (void)flatten;
    (void)ordinal;
    (void)strides;
    (void)own;
    int r = dfb_ix_describe_frame(st, obj, o_cols, skip, fr);
    if (r == 1) {
        dfb_not_a_frame_error("to_matrix", obj);
        return -1;
    }
    return r;
}

/* to_matrix's operation of each row of the frame-source table (NULL: a row
   it does not read: a schema has no data). */
static const frame_describer describe_rows[DFB_SRC_COUNT] = {
    [DFB_SRC_PANDAS] = describe_pandas,
    [DFB_SRC_ARROW] = describe_arrow,
    [DFB_SRC_INTERCHANGE] = describe_interchange,
    [DFB_SRC_MAPPING] = describe_mapping,
    [DFB_SRC_SCHEMA] = NULL,
};

/* Describes the selected columns of `obj`, the frame of a row of kind
   `kind` (the frame-source table's answer), into `fr` by the row's
   operation in describe_rows.  Returns 0, or -1 with an exception set
   (TypeError for a kind to_matrix does not read, or naming an unsupported
   column). */
static int
describe_frame(dfb_state *st, PyObject *obj, dfb_frame_kind kind,
               PyObject *o_cols, int flatten, int ordinal, int skip,
               dfb_frame *fr, mstrides **strides, PyObject **own)
{
    frame_describer describe = describe_rows[kind];
    if (describe == NULL) {
        dfb_not_a_frame_error("to_matrix", obj);
    }
    if (describe == NULL || describe(st, obj, o_cols, flatten, ordinal, skip,
                                     fr, strides, own) < 0) {
        unsupported_to_type_error();
        return -1;
    }
    return 0;
}

/* Decodes run-end encoded chunk `c` (its values of a type plan_chunk
   takes) into `dec`, a plain column of its values' type over new arrays
   kept in `keep`: each row its run's value (core's run-ends reader, through
   the converters' gather), a byte mask of the null rows.  Returns 0, or -1
   with an exception set (ValueError for run ends that do not match). */
static int
decode_runs(dfb_state *st, const dfb_column *c, PyObject *keep,
            dfb_column *dec)
{
    memset(dec, 0, sizeof(*dec));
    dec->length = c->length;
    if (dfb_column_validate(c) < 0) {
        return -1;
    }
    if (c->categories->fmt.type == DFB_T_NULL) { /* every row null */
        dec->fmt = c->categories->fmt;
        dec->null_count = c->length;
        dec->null_kind = DFB_NULL_NON_NULLABLE;
        return 0;
    }
    PyArrayObject *mask = NULL;
    int64_t nnull = 0;
    if (dfb_chunk_mask(c, &mask, &nnull) < 0) {
        return -1;
    }
    /* the rows whose run's value is null, as the converters find them */
    if (c->categories->null_count != 0 &&
        dfb_mask_null_categories(c, &mask, &nnull) < 0) {
        Py_XDECREF(mask);
        return -1;
    }
    dfb_opts opts;
    memset(&opts, 0, sizeof(opts));
    opts.nulls = DFB_NULLS_MASK;
    opts.copy = -1;
    PyObject *vals = dfb_chunk_values(
        st, c, mask != NULL ? PyArray_DATA(mask) : NULL, 1, &opts);
    int r = vals == NULL || PyList_Append(keep, vals) < 0 ||
                    (mask != NULL && PyList_Append(keep, (PyObject *)mask) < 0)
                ? -1
                : 0;
    if (r == 0) {
        PyArrayObject *v = (PyArrayObject *)vals;
        const PyArray_Descr *d = PyArray_DESCR(v);
        const int bits = (int)PyDataType_ELSIZE(d) * 8;
        dec->fmt.type = d->kind == 'b'   ? DFB_T_BOOL8
                        : d->kind == 'i' ? DFB_T_INT
                        : d->kind == 'u' ? DFB_T_UINT
                        : d->kind == 'f' ? DFB_T_FLOAT
                                         : DFB_T_INVALID;
        dec->fmt.bits = bits;
        dec->fmt.byteorder = bits > 8 ? '=' : '|';
        dec->data.ptr = PyArray_DATA(v);
        dec->data.size = (int64_t)PyArray_NBYTES(v);
        dec->data.owner = vals;
        dec->null_count = nnull;
        dec->null_kind = DFB_NULL_NON_NULLABLE;
        if (mask != NULL) {
            dec->null_kind = DFB_NULL_USE_BYTEMASK;
            dec->null_value = 1;
            dec->validity.ptr = PyArray_DATA(mask);
            dec->validity.size = (int64_t)PyArray_NBYTES(mask);
            dec->validity.owner = (PyObject *)mask;
        }
        if (!PyArray_Check(vals) || PyArray_NDIM(v) != 1 ||
            PyArray_DIM(v, 0) != c->length || dec->fmt.type == DFB_T_INVALID) {
            PyErr_SetString(PyExc_SystemError,
                            "run-end values decoded to an unexpected array");
            r = -1;
        }
    }
    Py_XDECREF(vals);
    Py_XDECREF(mask);
    return r;
}

/* Plans the chunks of column `fc` into `col` (its chunks already point
   into the plan's array): their read and null kinds, first rows, and the
   NumPy type they promote to (*coltype; NPY_BOOL when every chunk is of
   the null type) and the column's length (*len); a run-end encoded chunk
   of values it takes is decoded first (decode_runs, kept in `keep`).
   `codes_ok`: an explicit dtype= was given; `strides`: the column's byte
   strides (NULL, or not `given`: contiguous and validated here).  Returns 0,
   REFUSED (a chunk of a type to_matrix does not take, TypeError naming the
   column), or -1 with an exception set. */
static int
plan_column(dfb_state *st, const dfb_frame_column *fc, mcol *col, int codes_ok,
            const mstrides *strides, PyObject *keep, int *coltype,
            int64_t *len)
{
    *len = 0;
    *coltype = -1; /* null-type chunks take no part */
    for (Py_ssize_t k = 0; k < fc->nchunks; k++) {
        const dfb_column *c = &fc->chunks[k];
        mchunk *mc = &col->chunks[k];
        int tn;
        int r = plan_chunk(c, fc->name, codes_ok, 0, mc, &tn);
        if (r != 0) {
            return r;
        }
        dfb_column dec;
        if (dfb_type_decodes_runs(c->fmt.type)) {
            if (decode_runs(st, c, keep, &dec) < 0) {
                add_name(fc->name);
                return -1;
            }
            c = &dec;
            if (plan_chunk(c, fc->name, codes_ok, 0, mc, &tn) != 0) {
                return -1; /* taken by its values: cannot be refused */
            }
        }
        if (strides != NULL && strides->given) {
            /* a NumPy or pandas view, checked when read: strides instead */
            mc->stride = strides->data;
            mc->vstride = strides->mask;
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
   number of rows (*nrows, -1 when there is no column); with `skip`
   (on_unsupported="skip") a column plan_column refuses is dropped from
   `fr` instead of raising.  When no dtype= was
   given (*descr NULL) sets *descr to the promoted type of the columns (a
   new reference) and *dst to its D_* type.  Returns 0, or -1 with an
   exception set. */
static int
plan_frame(dfb_state *st, dfb_frame *fr, mcol *cols, mchunk *all,
           const mstrides *strides, int fill_nan, int skip, int64_t *nrows,
           PyArray_Descr **descr, int *dst)
{
    PyArray_Descr *promoted = NULL;
    int64_t skipped_rows = -1;
    *nrows = -1;
    for (Py_ssize_t j = 0, at = 0, described = 0; j < fr->ncols; described++) {
        const dfb_frame_column *fc = &fr->cols[j];
        int coltype;
        int64_t len;
        cols[j].chunks = all + at;
        cols[j].n = fc->nchunks;
        at += fc->nchunks;
        int r = plan_column(st, fc, &cols[j], *descr != NULL,
                            strides != NULL ? strides + described : NULL,
                            fr->keep, &coltype, &len);
        if (r == REFUSED && skip) {
            /* on_unsupported="skip": the column the plan refuses is left
               out (its chunk slots stay unused); its length still gives
               the rows of a frame that keeps no column */
            PyErr_Clear();
            if (skipped_rows < 0) {
                skipped_rows = 0;
                for (Py_ssize_t k = 0; k < fc->nchunks; k++) {
                    skipped_rows += fc->chunks[k].length;
                }
            }
            dfb_frame_drop(fr, j);
            continue;
        }
        if (r != 0) {
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
        j++;
    }
    if (*nrows < 0 && fr->nrows < 0) {
        *nrows = skipped_rows; /* every column left out */
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

/* Fills the `nrows` rows of the planned columns into `data` (where this
   fill's first output row starts; column-major: `ld` rows from one
   column's start to the next's, 0 for `nrows`) and `mask` (NULL unless
   nulls="mask", `mode` 2: laid out as the data, zeroed by the caller),
   of D_* type `dst` (`isz` bytes), with up to `nthreads` threads (0:
   automatic), the GIL released; `reused`: the output's pages are in
   place.  Cannot fail. */
static void
fill_into(mcol *cols, Py_ssize_t ncols, mchunk *all, Py_ssize_t total_chunks,
          int64_t nrows, int dst, int isz, int fortran, int mode, int nthreads,
          char *data, int64_t ld, uint8_t *mask, int reused)
{
    static const int same_src[D_N] = {-1,    S_I8,  S_I16, S_I32,
                                      S_I64, S_U8,  S_U16, S_U32,
                                      S_U64, S_F16, S_F32, S_F64};
    for (Py_ssize_t i = 0; i < total_chunks; i++) {
        all[i].same = all[i].read == R_DIRECT && all[i].stride == all[i].isz &&
                      all[i].st == same_src[dst];
    }
    mplan plan;
    memset(&plan, 0, sizeof(plan));
    plan.cols = cols;
    plan.ncols = ncols;
    plan.nrows = nrows;
    plan.dst = dst;
    plan.isz = isz;
    plan.is_float = dst == D_F16 || dst == D_F32 || dst == D_F64;
    plan.fill_nan = mode == 0;
    plan.corder = !fortran && ncols > 1;
    plan.out = data;
    plan.ld = ld;
    plan.mask = mode == 2 ? mask : NULL;
    int nt = dfb_matrix_prepare(&plan, nthreads, reused);
    if (nrows * (int64_t)ncols * plan.isz > 0) {
        Py_BEGIN_ALLOW_THREADS;
        dfb_matrix_run(&plan, nt);
        Py_END_ALLOW_THREADS;
    }
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
    fill_into(cols, ncols, all, total_chunks, nrows, dst,
              (int)PyDataType_ELSIZE(descr), fortran, mode, nthreads,
              PyArray_DATA((PyArrayObject *)out), 0,
              mask ? PyArray_DATA((PyArrayObject *)mask) : NULL, reused);
    res = mode == 2 ? dfb_masked_array(st, out, mask) : Py_NewRef(out);
    Py_DECREF(out);
    Py_XDECREF(mask);
    return res;
}

/* 1 if the `on` bytes from `o` meet the bytes [lo, hi) around `base`
   (NULL: no buffer).  Cannot fail. */
static int
meets(const char *o, int64_t on, const void *base, int64_t lo, int64_t hi)
{
    if (o == NULL || base == NULL || on <= 0 || hi <= lo) {
        return 0;
    }
    /* as addresses (unsigned: lo may be below base), spans that fit */
    const uintptr_t a = (uintptr_t)o, b = (uintptr_t)base + (uintptr_t)lo;
    return a < b + (uint64_t)(hi - lo) && b < a + (uint64_t)on;
}

/* 1 if the `on` bytes from `o` meet a byte that chunk `c`'s loops may read:
   its data (values of isz bytes at its stride, a bitmap for R_BITS, nothing
   for R_ZERO) and its validity (a bitmap, or mask bytes at vstride), from
   its offset for its rows, as core's dfb_buffer_extent places them; 0
   with *err set when an extent does not fit in int64.  Cannot fail
   otherwise. */
static int
chunk_meets(const char *o, int64_t on, const mchunk *c, dfb_error *err)
{
    int64_t lo, hi;
    if (c->read != R_ZERO) {
        const int64_t isz = c->read == R_BITS ? 0 : c->isz;
        if (dfb_buffer_extent(c->offset, c->length, isz, c->stride, &lo, &hi,
                              err) != DFB_OK) {
            return 0;
        }
        if (meets(o, on, c->data, lo, hi)) {
            return 1;
        }
    }
    if (c->nk == NK_BITS || c->nk == NK_BYTES) {
        const int64_t isz = c->nk == NK_BITS ? 0 : 1;
        if (dfb_buffer_extent(c->offset, c->length, isz, c->vstride, &lo, &hi,
                              err) != DFB_OK) {
            return 0;
        }
        return meets(o, on, c->valid, lo, hi);
    }
    return 0;
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
check_out(PyObject *o, int64_t at, int64_t nrows, int final, Py_ssize_t ncols,
          int explicit, PyArray_Descr **descr, int *dst, int *fortran,
          const mcol *cols, const dfb_frame *fr)
{
    if (!PyArray_Check(o)) {
        PyErr_Format(PyExc_TypeError,
                     "to_matrix out must be a numpy.ndarray, not %.200s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    PyArray_Descr *od = PyArray_DESCR(a);
    const int64_t need = at + nrows;
    if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) < need ||
        (final && PyArray_DIM(a, 0) != need) || PyArray_DIM(a, 1) != ncols) {
        PyObject *shape = PyObject_GetAttrString(o, "shape");
        if (shape != NULL) {
            PyErr_Format(PyExc_ValueError,
                         final ? "to_matrix out has shape %R, the frame gives "
                                 "(%lld, %lld)"
                               : "to_matrix out has shape %R, the stream "
                                 "gives at least (%lld, %lld)",
                         shape, (long long)need, (long long)ncols);
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
            dfb_error err;
            err.message[0] = '\0';
            if (chunk_meets(ob, on, &cols[j].chunks[k], &err)) {
                PyErr_Format(PyExc_ValueError,
                             "to_matrix out shares memory with column %R",
                             fr->cols[j].name);
                return -1;
            }
            if (err.message[0] != '\0') {
                PyErr_Format(PyExc_ValueError, "to_matrix column %R: %s",
                             fr->cols[j].name, err.message);
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

/* decimals="float64": every decimal chunk of `fr` (and the decimal values
   of a run-end encoded one) becomes float64 (kept by fr->keep).  Returns 0, or
   -1 with an exception set. */
static int
decimals_to_float(dfb_frame *fr)
{
    for (Py_ssize_t j = 0; j < fr->ncols; j++) {
        for (Py_ssize_t k = 0; k < fr->cols[j].nchunks; k++) {
            dfb_column *c = &fr->cols[j].chunks[k];
            /* a run-end encoded chunk's decimal values too */
            if (dfb_type_decodes_runs(c->fmt.type) && c->categories != NULL) {
                c = (dfb_column *)c->categories;
            }
            if (c->fmt.type == DFB_T_DECIMAL &&
                dfb_decimals_as_f64(c, fr->keep) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Arrow producers: a stream filled group by group                      */
/* ------------------------------------------------------------------ */

/* Bytes of output moved by one step of relayout (its source then
   shrinks by as much). */
#define MOVE_BYTES ((int64_t)8 << 20)

/* One to_matrix of an Arrow producer, read group by group
   (docs/design.md, "to_matrix of a stream"). */
typedef struct {
    dfb_state *st;
    PyObject *select; /* borrowed: columns=, or a pandas frame's own names */
    int flatten, ordinal, skip, dec, mode, nthreads, explicit, fortran;
    PyObject *order_arg;   /* borrowed: order= as given, or NULL */
    PyObject *given;       /* borrowed: out=, or NULL */
    PyArray_Descr *descr;  /* strong: the output's dtype so far (dtype=, or
                              NULL before the first group) */
    int dst;               /* its D_* type */
    PyObject *out;         /* strong: the output, `cap` rows (out= itself when
                              given), NULL before the first group */
    PyObject *mask;        /* strong: nulls="mask": the mask, laid out alike */
    int64_t rows;          /* rows filled */
    int64_t cap;           /* rows allocated */
    Py_ssize_t ncols;      /* -1 before the first group */
    PyObject *names;       /* strong: the first group's column names */
    Py_ssize_t group_from; /* the first batch of the group being filled */
} mstream;

/* Returns a new array of `d` (stolen) over `rows` x `ncols` of `data`
   (C or F order, `fortran`; a column-major one `ld` rows between column
   starts), not owning it: a view that lives only while `data` does.
   NULL with an exception set. */
static PyObject *
raw_view(PyArray_Descr *d, char *data, int64_t rows, Py_ssize_t ncols,
         int64_t ld, int fortran)
{
    npy_intp dims[2] = {(npy_intp)rows, (npy_intp)ncols};
    npy_intp isz = (npy_intp)PyDataType_ELSIZE(d);
    npy_intp strides[2] = {fortran ? isz : isz * (npy_intp)ncols,
                           fortran ? isz * (npy_intp)ld : isz};
    return PyArray_NewFromDescr(&PyArray_Type, d, 2, dims, strides, data,
                                NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED, NULL);
}

/* Resizes `arr` (an array of ours, owning its memory, no view of it
   alive) to (rows, ncols) through its own memory handler's realloc
   (glibc moves large blocks by remapping, no copy).  The rows added are
   left as they are: NumPy zeroes them only in a writeable array, so it is
   made read-only for the call.  Returns 0, or -1 with an exception
   set. */
static int
resize_rows(PyObject *arr, int64_t rows, Py_ssize_t ncols)
{
    npy_intp dims[2] = {(npy_intp)rows, (npy_intp)ncols};
    PyArray_Dims shape = {dims, 2};
    PyArrayObject *a = (PyArrayObject *)arr;
    PyArray_CLEARFLAGS(a, NPY_ARRAY_WRITEABLE);
    PyObject *r = PyArray_Resize(a, &shape, 0, NPY_ANYORDER);
    PyArray_ENABLEFLAGS(a, NPY_ARRAY_WRITEABLE);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Returns a new (newcap, ncols) array of `d` (a new reference taken) in
   the order `fortran`, its first `rows` rows those of `old` (of `cap`
   rows, same order) cast to `d` (NumPy's cast, as astype), moved a part
   at a time from the end (the last rows of a row-major array, the last
   column of a column-major one), `old` shrunk after each part, so that
   the two hold about one copy at any time.  `old` is released (its data
   then garbage).  NULL with an exception set. */
static PyObject *
relayout(PyObject *old, int64_t rows, int64_t cap, Py_ssize_t ncols,
         PyArray_Descr *d, int64_t newcap, int fortran)
{
    npy_intp dims[2] = {(npy_intp)newcap, (npy_intp)ncols};
    int reused;
    Py_INCREF(d);
    PyObject *res = dfb_matrix_new_output(d, dims, fortran, &reused);
    if (res == NULL) {
        Py_DECREF(old);
        return NULL;
    }
    PyArray_Descr *od = PyArray_DESCR((PyArrayObject *)old);
    const int64_t osz = (int64_t)PyDataType_ELSIZE(od),
                  nsz = (int64_t)PyDataType_ELSIZE(d);
    int64_t step = fortran     ? 1
                   : ncols > 0 ? MOVE_BYTES / ((int64_t)ncols * osz)
                               : rows;
    if (step < 1) {
        step = 1;
    }
    /* fortran: parts are columns; else rows */
    int64_t hi = fortran ? (int64_t)ncols : rows;
    while (hi > 0) {
        int64_t lo = hi - step > 0 ? hi - step : 0;
        char *src = PyArray_BYTES((PyArrayObject *)old);
        char *dst = PyArray_BYTES((PyArrayObject *)res);
        PyObject *sv, *dv;
        Py_INCREF(od);
        Py_INCREF(d);
        if (fortran) {
            sv = raw_view(od, src + lo * cap * osz, rows,
                          (Py_ssize_t)(hi - lo), cap, 1);
            dv = raw_view(d, dst + lo * newcap * nsz, rows,
                          (Py_ssize_t)(hi - lo), newcap, 1);
        }
        else {
            sv = raw_view(od, src + lo * ncols * osz, hi - lo, ncols, 0, 0);
            dv = raw_view(d, dst + lo * ncols * nsz, hi - lo, ncols, 0, 0);
        }
        int r =
            sv == NULL || dv == NULL
                ? -1
                : PyArray_CopyInto((PyArrayObject *)dv, (PyArrayObject *)sv);
        Py_XDECREF(sv);
        Py_XDECREF(dv);
        /* what was moved is given back */
        if (r < 0 || (fortran ? resize_rows(old, cap, (Py_ssize_t)lo)
                              : resize_rows(old, lo, ncols)) < 0) {
            Py_DECREF(old);
            Py_DECREF(res);
            return NULL;
        }
        hi = lo;
    }
    Py_DECREF(old);
    return res;
}

/* Makes room in the stream's output (and mask) for `n` more rows: the
   first group allocates it (exactly when `final`, else twice its rows or
   the kept block of the last large output, whichever holds more),
   later ones grow it to at least twice as many rows: a row-major output
   by its allocator's realloc, a column-major one by relayout.  Returns 0,
   or -1 with an exception set. */
static int
stream_room(mstream *s, int64_t n, int final)
{
    int64_t need = 0;
    if (s->given != NULL) {
        /* check_out saw room for the rows; the mask is out's size */
        if (s->mode == 2 && s->mask == NULL) {
            npy_intp dims[2] = {PyArray_DIM((PyArrayObject *)s->given, 0),
                                (npy_intp)s->ncols};
            s->mask = PyArray_Zeros(2, dims, PyArray_DescrFromType(NPY_BOOL),
                                    s->fortran);
        }
        return s->mode == 2 && s->mask == NULL ? -1 : 0;
    }
    if (dfb_checked_add(s->rows, n, &need) < 0 || need > INT64_MAX / 4) {
        PyErr_SetString(PyExc_ValueError, "the stream's rows overflow");
        return -1;
    }
    if (s->out != NULL && need <= s->cap) {
        return 0;
    }
    int64_t cap = final ? need : 2 * need;
    if (s->out != NULL && cap < 2 * s->cap && !final) {
        cap = 2 * s->cap;
    }
    if (cap < 2 && !final) {
        cap = 2; /* never one row: NumPy takes (1, k) for C order */
    }
    if (s->out == NULL) {
        /* the block the last large output left, when it holds the rows:
           its pages are in place (a stream read again, epoch after epoch,
           then neither grows nor faults) */
        const int64_t row = (int64_t)s->ncols * PyDataType_ELSIZE(s->descr);
        const int64_t kept = (int64_t)dfb_matrix_kept_bytes();
        if (!final && row > 0 && kept / row > cap) {
            cap = kept / row;
        }
        npy_intp dims[2] = {(npy_intp)cap, (npy_intp)s->ncols};
        int reused;
        Py_INCREF(s->descr);
        s->out = dfb_matrix_new_output(s->descr, dims, s->fortran, &reused);
        if (s->out == NULL) {
            return -1;
        }
        if (s->mode == 2) {
            s->mask = PyArray_Zeros(2, dims, PyArray_DescrFromType(NPY_BOOL),
                                    s->fortran);
            if (s->mask == NULL) {
                return -1;
            }
        }
        s->cap = cap;
        return 0;
    }
    if (s->fortran && s->ncols > 1) {
        PyObject *o = s->out;
        s->out = NULL;
        s->out =
            relayout(o, s->rows, s->cap, s->ncols, s->descr, cap, s->fortran);
        if (s->out == NULL) {
            return -1;
        }
        if (s->mask != NULL) {
            PyArray_Descr *b = PyArray_DescrFromType(NPY_BOOL);
            o = s->mask;
            s->mask = relayout(o, s->rows, s->cap, s->ncols, b, cap, 1);
            Py_DECREF(b);
            if (s->mask == NULL) {
                return -1;
            }
        }
    }
    else if (resize_rows(s->out, cap, s->ncols) < 0 ||
             (s->mask != NULL && resize_rows(s->mask, cap, s->ncols) < 0)) {
        return -1;
    }
    s->cap = cap;
    return 0;
}

/* Takes the dtype group `gd` (stolen; D_* `gdst`) of the stream's next
   group, of `n` rows (`final`: the last): the first group's is the
   output's; a later one that promotes with it to a new type (an integer
   column's first null under nulls="fill", dtype=None) casts the rows
   filled so far to the promoted type (relayout), so that the stream gives
   the dtype to_matrix gives for all its batches at once.  With out=, the
   group is checked against out (check_out) instead.  Returns 0, or -1
   with an exception set. */
static int
stream_dtype(mstream *s, PyArray_Descr *gd, int gdst, int64_t n, int final,
             const mcol *cols, const dfb_frame *fr)
{
    if (s->given != NULL) {
        int fortran = s->fortran;
        int r = check_out(s->given, s->rows, n, final, s->ncols, s->explicit,
                          &gd, &gdst, &fortran, cols, fr);
        if (r == 0 && s->order_arg != NULL && fortran != s->fortran &&
            s->ncols > 1 && PyArray_DIM((PyArrayObject *)s->given, 0) > 1) {
            PyErr_Format(PyExc_ValueError,
                         "to_matrix order=%R, out is %s-ordered", s->order_arg,
                         fortran ? "F" : "C");
            r = -1;
        }
        s->fortran = fortran;
        Py_XSETREF(s->descr, gd);
        s->dst = gdst;
        return r;
    }
    if (s->descr == NULL || PyArray_EquivTypes(s->descr, gd)) {
        Py_XSETREF(s->descr, gd);
        s->dst = gdst;
        return 0;
    }
    PyArray_Descr *p = PyArray_PromoteTypes(s->descr, gd);
    Py_DECREF(gd);
    if (p == NULL) {
        return -1;
    }
    if (PyArray_EquivTypes(p, s->descr)) {
        Py_DECREF(p);
        return 0;
    }
    const int pdst = dst_of(p);
    if (pdst < 0) {
        PyErr_Format(PyExc_TypeError,
                     "the columns promote to %R, which to_matrix cannot "
                     "write",
                     (PyObject *)p);
        Py_DECREF(p);
        return -1;
    }
    if (s->out != NULL) {
        PyObject *o = s->out;
        s->out = NULL;
        s->out = relayout(o, s->rows, s->cap, s->ncols, p, s->cap, s->fortran);
        if (s->out == NULL) {
            Py_DECREF(p);
            return -1;
        }
    }
    Py_SETREF(s->descr, p);
    s->dst = pdst;
    return 0;
}

/* Checks that a group gives the first group's columns (a stream's batches
   share its schema: anything else is a producer's error).  Returns 0, or
   -1 with ValueError naming the batches. */
static int
stream_columns(mstream *s, const dfb_frame *fr, Py_ssize_t last)
{
    PyObject *names = PyList_New(fr->ncols);
    if (names == NULL) {
        return -1;
    }
    for (Py_ssize_t j = 0; j < fr->ncols; j++) {
        PyList_SET_ITEM(names, j, Py_NewRef(fr->cols[j].name));
    }
    if (s->names == NULL) {
        s->names = names;
        s->ncols = fr->ncols;
        return 0;
    }
    int eq = PyObject_RichCompareBool(names, s->names, Py_EQ);
    if (eq == 0) {
        PyErr_Format(PyExc_ValueError,
                     "to_matrix: batches %zd-%zd of the Arrow stream give "
                     "the columns %R, its first batches %R",
                     s->group_from, last, names, s->names);
    }
    Py_DECREF(names);
    return eq == 1 ? 0 : -1;
}

/* Fills the chunks `imp` holds (a group of the stream; none at the end of
   a stream whose last group was filled already) into the output after
   the rows filled so far: described, planned and filled as to_matrix of
   those batches alone is, into the stream's one output.  `final`: the
   stream has ended.  Returns 0, or -1 with an exception set. */
static int
stream_group(mstream *s, const arrow_import *imp, int final)
{
    dfb_frame fr;
    memset(&fr, 0, sizeof(fr));
    fr.nrows = -1;
    mcol *cols = NULL;
    mchunk *all = NULL;
    PyArray_Descr *gd = NULL;
    if (s->explicit) {
        Py_INCREF(s->descr);
        gd = s->descr;
    }
    int gdst = s->dst, ret = -1;
    int64_t n = -1;
    if (dfb_arrow_describe_import(s->st, imp, s->select, s->flatten,
                                  s->ordinal, s->skip, &fr) < 0) {
        unsupported_to_type_error();
        goto done;
    }
    if (s->dec && decimals_to_float(&fr) < 0) {
        goto done;
    }
    Py_ssize_t total_chunks = 0;
    for (Py_ssize_t j = 0; j < fr.ncols; j++) {
        total_chunks += fr.cols[j].nchunks;
    }
    cols = PyMem_Calloc(fr.ncols > 0 ? (size_t)fr.ncols : 1, sizeof(mcol));
    all = PyMem_Calloc(total_chunks > 0 ? (size_t)total_chunks : 1,
                       sizeof(mchunk));
    if (cols == NULL || all == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (plan_frame(s->st, &fr, cols, all, NULL, s->mode == 0, s->skip, &n, &gd,
                   &gdst) < 0) {
        goto done;
    }
    if (n < 0) {
        n = fr.nrows >= 0 ? fr.nrows : 0;
    }
    for (Py_ssize_t j = 0; j < fr.ncols; j++) {
        PyMem_Free(fr.cols[j].chunks);
        fr.cols[j].chunks = NULL;
    }
    if (stream_columns(s, &fr, imp->nread - 1) < 0) {
        goto done;
    }
    PyArray_Descr *taken = gd;
    gd = NULL;
    if (stream_dtype(s, taken, gdst, n, final, cols, &fr) < 0 ||
        stream_room(s, n, final) < 0) {
        goto done;
    }
    const int is_float = s->dst == D_F16 || s->dst == D_F32 || s->dst == D_F64;
    if (s->mode != 2 &&
        check_nulls(cols, fr.ncols, &fr, s->mode, is_float) < 0) {
        goto done;
    }
    PyArrayObject *o = (PyArrayObject *)(s->given ? s->given : s->out);
    const int64_t ld = PyArray_DIM(o, 0), isz = PyArray_ITEMSIZE(o);
    char *data = PyArray_BYTES(o) +
                 (s->fortran ? s->rows * isz : s->rows * s->ncols * isz);
    uint8_t *mask = NULL;
    if (s->mode == 2) {
        /* the group's rows of the mask: zeroed (a grown mask is not) */
        mask = (uint8_t *)PyArray_BYTES((PyArrayObject *)s->mask) +
               (s->fortran ? s->rows : s->rows * s->ncols);
        if (s->fortran) {
            for (Py_ssize_t j = 0; j < s->ncols; j++) {
                dfb_memset(mask + j * ld, 0, (size_t)n);
            }
        }
        else {
            dfb_memset(mask, 0, (size_t)(n * s->ncols));
        }
    }
    fill_into(cols, s->ncols, all, total_chunks, n, s->dst, (int)isz,
              s->fortran, s->mode, s->nthreads, data, ld, mask,
              s->given != NULL);
    s->rows += n;
    s->group_from = imp->nread;
    ret = 0;
done:
    Py_XDECREF(gd);
    PyMem_Free(all);
    PyMem_Free(cols);
    dfb_frame_clear(&fr);
    return ret;
}

/* on_chunk of the stream walk: fills the chunks read so far once they
   make a group (dfb_arrow_import_is_group), then drops them.  Device data is
   left to the import's own refusal.  Returns 0, or -1 with an exception set.
 */
static int
stream_chunk(arrow_import *imp, void *ctx)
{
    mstream *s = ctx;
    if (!dfb_arrow_import_on_cpu(imp) || !dfb_arrow_import_is_group(imp)) {
        return 0;
    }
    if (stream_group(s, imp, 0) < 0) {
        return -1;
    }
    dfb_arrow_import_drop_chunks(imp);
    return 0;
}

/* to_matrix of an Arrow producer `obj` (options in `s`, set by the
   caller): its stream read chunk by chunk, each group of chunks filled
   into the output as it arrives and then dropped (an array producer's
   one chunk is one group).  Returns the result, or NULL with an
   exception set. */
static PyObject *
stream_matrix(mstream *s, PyObject *obj)
{
    arrow_import imp = {.st = s->st};
    imp.on_chunk = stream_chunk;
    imp.chunk_ctx = s;
    PyObject *res = NULL;
    if (dfb_arrow_import_producer(s->st, obj, &imp) < 0) {
        unsupported_to_type_error();
        goto done;
    }
    if (stream_group(s, &imp, 1) < 0) {
        goto done;
    }
    dfb_arrow_import_clear(&imp);
    if (s->given == NULL && s->rows != s->cap) {
        /* the rows filled: a column-major output's columns moved to their
           final starts first (each lower than it was) */
        if (s->fortran && s->ncols > 1) {
            const int64_t isz = PyArray_ITEMSIZE((PyArrayObject *)s->out);
            char *o = PyArray_BYTES((PyArrayObject *)s->out);
            char *m = s->mask ? PyArray_BYTES((PyArrayObject *)s->mask) : NULL;
            for (Py_ssize_t j = 1; j < s->ncols; j++) {
                dfb_memmove(o + j * s->rows * isz, o + j * s->cap * isz,
                            (size_t)(s->rows * isz));
                if (m != NULL) {
                    dfb_memmove(m + j * s->rows, m + j * s->cap,
                                (size_t)s->rows);
                }
            }
        }
        if (resize_rows(s->out, s->rows, s->ncols) < 0 ||
            (s->mask != NULL && resize_rows(s->mask, s->rows, s->ncols) < 0)) {
            goto done;
        }
    }
    PyObject *out = s->given != NULL ? s->given : s->out;
    res =
        s->mode == 2 ? dfb_masked_array(s->st, out, s->mask) : Py_NewRef(out);
done:
    dfb_arrow_import_clear(&imp);
    return res;
}

/* A whole result read by a row's own way, into `s` (its options set,
   s->select the caller's columns=): *own receives a reference the caller
   drops.  Returns the matrix, or NULL with an exception set. */
typedef PyObject *(*whole_reader)(mstream *s, PyObject *obj, PyObject **own);

/* An Arrow producer read as a stream, group by group (stream_matrix),
   with a pandas frame's own columns when none are selected (its stream
   adds its index).  Same returns. */
static PyObject *
whole_arrow(mstream *s, PyObject *obj, PyObject **own)
{
    if (s->select == NULL || s->select == Py_None) {
        *own = dfb_matrix_pandas_columns(obj);
        if (*own == NULL && PyErr_Occurred()) {
            return NULL;
        }
        if (*own != NULL) {
            s->select = *own;
        }
    }
    return stream_matrix(s, obj);
}

/* to_matrix's whole-result operation of each row of the frame-source
   table (NULL: the frame is described by describe_rows, then planned and
   filled at once). */
static const whole_reader whole_rows[DFB_SRC_COUNT] = {
    [DFB_SRC_PANDAS] = NULL,      [DFB_SRC_ARROW] = whole_arrow,
    [DFB_SRC_INTERCHANGE] = NULL, [DFB_SRC_MAPPING] = NULL,
    [DFB_SRC_SCHEMA] = NULL,
};

/* to_matrix(obj, *, dtype=None, order="C", nulls="fill", columns=None,
   threads=None, decimals=, structs=, copy=None, ..., allow_copy=).
   Returns a new array
   (MaskedArray for nulls="mask"), or NULL with an exception set. */
static PyObject *
to_matrix(PyObject *module, dfb_frame_kind kind, PyObject *const *args,
          Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const kw[] = {
        "obj",     "dtype",    "order",      "nulls", "columns",
        "threads", "decimals", "structs",    "copy",  "on_unsupported",
        "out",     "period",   "allow_copy", NULL};
    static const dfb_argspec spec = {"to_matrix", kw, 1, 1};
    static const char *const orders[] = {"C", "F", NULL};
    PyObject *a[13] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                       NULL, NULL, NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    const dfb_opt_args oa = {.func = "to_matrix",
                             .nulls = a[3],
                             .decimals = a[6],
                             .structs = a[7],
                             .copy = a[8],
                             .on_unsupported = a[9],
                             .period = a[11],
                             .allow_copy = a[12]};
    dfb_opts opts;
    if (dfb_parse_opts(&oa, &opts) < 0) {
        return NULL;
    }
    if (opts.copy == 0) {
        /* the result is always new memory: copy=None and True are one */
        const char *prev =
            dfb_copy_keyword_enter(a[12] != NULL ? "allow_copy" : "copy");
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
    mstrides *strides = NULL;
    const int skip = opts.skip_unsupported;
    whole_reader whole = whole_rows[kind];
    if (whole != NULL) {
        mstream s = {.st = st,
                     .select = o_cols,
                     .flatten = flatten,
                     .ordinal = opts.period_ordinal,
                     .skip = skip,
                     .dec = dec,
                     .mode = mode,
                     .nthreads = nthreads,
                     .explicit = explicit,
                     .fortran = order == 1,
                     .order_arg = a[2],
                     .given = given,
                     .descr = descr,
                     .dst = dst,
                     .ncols = -1};
        descr = NULL; /* the stream's now */
        res = whole(&s, obj, &own);
        Py_XDECREF(s.descr);
        Py_XDECREF(s.out);
        Py_XDECREF(s.mask);
        Py_XDECREF(s.names);
        goto done;
    }
    if (describe_frame(st, obj, kind, o_cols, flatten, opts.period_ordinal,
                       skip, &fr, &strides, &own) < 0 ||
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
    if (plan_frame(st, &fr, cols, all, strides, mode == 0, skip, &nrows,
                   &descr, &dst) < 0) {
        goto done;
    }
    ncols = fr.ncols; /* less the columns skip left out */
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
        if (check_out(given, 0, nrows, 1, ncols, explicit, &descr, &dst,
                      &fortran, cols, &fr) < 0) {
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
    PyMem_Free(strides);
    dfb_frame_clear(&fr);
    return res;
}

/* to_matrix's entry: the frame-source table (frame.c) says how the
   frame is read; the call goes on with the object to read in place of
   the first argument: the pandas frame behind pandas' interchange object
   (its own buffers drop the slice offset of Arrow-backed columns, P-26),
   the interchange DataFrame of an object with __dataframe__, the mapping
   itself (read once by matrix_mapping.c).  Returns what to_matrix
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
