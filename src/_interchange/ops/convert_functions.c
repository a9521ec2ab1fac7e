/* dfbuffer: the module functions buffer_to_ndarray, column_to_ndarray and
 * from_dataframe (their argument parsing, and each frame-source row's
 * from_dataframe operation; which reader reads a source, frame_source.c
 * decides).
 *
 * Nothing but module.c and capi.c depends on this file.
 */
#include "common.h"
#include "state.h"
#include "pandas.h"
#include "args.h"
#include "model.h"
#include "kernels.h"
#include "readers.h"
#include "arrow.h"
#include "probe.h"
#include "types.h"
#include "exchange.h"
#include "dtype.h"
#include "ops.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Python entry points                                                  */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(
    buffer_to_ndarray_doc,
    "buffer_to_ndarray(buffer, dtype, *, offset=0, length=None)\n--\n\n"
    "View an interchange-protocol buffer (anything with ptr, bufsize and\n"
    "__dlpack_device__) as a 1-D NumPy array without copying.\n\n"
    "dtype is an interchange dtype tuple (kind, bit_width, format,\n"
    "endianness) or anything numpy.dtype accepts; non-native byte order "
    "gives\n"
    "a byte-swapped dtype.  offset and length count elements (bits for a\n"
    "bit-packed bool dtype, which is unpacked to a new bool array; int32\n"
    "dates become a new datetime64[D] array).  The result's base is a\n"
    "dfbuffer.Buffer whose owner is `buffer`.  CPU memory only (BufferError\n"
    "otherwise); ValueError when offset/length exceed bufsize.\n\n"
    "Parameters\n"
    "----------\n"
    "buffer : interchange Buffer\n"
    "    Anything with ptr, bufsize and __dlpack_device__ (a "
    "dfbuffer.Buffer,\n"
    "    or a column's buffer from get_buffers()).\n"
    "dtype : tuple or dtype-like\n"
    "    An interchange dtype (kind, bit_width, format, endianness), or\n"
    "    anything numpy.dtype accepts.\n"
    "offset : int, optional\n"
    "    The first element to view (default 0).\n"
    "length : int or None, optional\n"
    "    The number of elements (default: to the end of the buffer).\n"
    "\n"
    "Returns\n"
    "-------\n"
    "numpy.ndarray\n"
    "    A 1-D view of the buffer's memory (a new array for bit-packed bools\n"
    "    and int32 dates).\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError\n"
    "    buffer is not an interchange buffer, or dtype holds references.\n"
    "ValueError\n"
    "    offset and length leave the buffer.\n"
    "BufferError\n"
    "    The memory is not on the CPU.\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import numpy as np\n"
    ">>> import dfbuffer\n"
    ">>> buf = dfbuffer.Buffer.from_object(np.arange(4, dtype=np.int64))\n"
    ">>> arr = dfbuffer.buffer_to_ndarray(buf, \"<i8\", offset=1)\n"
    ">>> arr\n"
    "array([1, 2, 3])\n"
    ">>> arr.base.owner is buf\n"
    "True");

/* NumPy type number of plain fixed-width format `f` (bool, int, uint,
   float) in native byte order, or -1 for every other format (those take
   the converters).  Cannot fail. */
static int
native_typenum(const dfb_format *f)
{
    const char native_order = PY_LITTLE_ENDIAN ? '<' : '>';
    if (f->byteorder != '=' && f->byteorder != '|' &&
        f->byteorder != native_order) {
        return -1;
    }
    /* plain: zero-copy views whose values are what is stored */
    const dfb_type_row *r = dfb_type_row_of(f->type);
    if (r->layout != DFB_LAYOUT_FIXED || r->conv != DFB_CONV_VIEW ||
        r->storage != r->result) {
        return -1;
    }
    return f->bits % 8 == 0 ? dfb_numeric_typenum(r->storage, f->bits / 8)
                            : -1;
}

/* size / isz (size >= 0, isz > 0), without a division instruction for the
   widths of the plain types.  Cannot fail. */
static inline int64_t
elements_in(int64_t size, int64_t isz)
{
    switch (isz) {
        case 1:
            return size;
        case 2:
            return size / 2;
        case 4:
            return size / 4;
        case 8:
            return size / 8;
        default:
            return size / isz;
    }
}

/* buffer_to_ndarray(buffer, dtype, *, offset=0, length=None). */
static PyObject *
buffer_to_ndarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    static const char *const kw[] = {"buffer", "dtype", "offset", "length",
                                     NULL};
    static const dfb_argspec spec = {"buffer_to_ndarray", kw, 2, 2};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    int64_t offset = 0, length = -1;
    dfb_format fmt;
    PyArray_Descr *descr = NULL;
    int64_t isz;
    int plain;
    if (nargs == 2 && kwnames == NULL) {
        /* (buffer, dtype): what dfb_parse_args and dfb_parse_count give */
        a[0] = args[0];
        a[1] = args[1];
    }
    else {
        PyObject *const fast[] = {NULL, st->str.dtype, st->str.offset,
                                  st->str.length};
        if (dfb_parse_args(&spec, fast, args, nargs, kwnames, a) < 0) {
            return NULL;
        }
        if (dfb_parse_count(a[2], "offset", &offset) < 0 ||
            dfb_parse_count(a[3], "length", &length) < 0) {
            return NULL;
        }
        if (offset < 0) {
            offset = 0;
        }
    }

    /* the type: an interchange tuple or a NumPy dtype-like; a plain
       (kind, bits, format, endianness) tuple is read directly (the memo of
       its last reading), to the format the general reader gives it */
    if ((plain = dfb_ix_dtype_plain_memo(st, a[1], &fmt)) < 0) {
        return NULL;
    }
    if (plain) {
        isz = fmt.type == DFB_T_BOOL_BIT ? 0 : dfb_format_itemsize(&fmt);
    }
    else if (PyTuple_Check(a[1]) && PyTuple_GET_SIZE(a[1]) == 4 &&
             PyLong_Check(PyTuple_GET_ITEM(a[1], 0))) {
        dfb_ix_dtype dt;
        if (dfb_ix_dtype_read(a[1], &dt) < 0) {
            return NULL;
        }
        if (dfb_ix_dtype_format(&dt, &fmt) < 0) {
            PyErr_Format(PyExc_ValueError, "unsupported interchange dtype %R",
                         a[1]);
            return NULL;
        }
        if (fmt.type == DFB_T_UTF8 || fmt.type == DFB_T_LARGE_UTF8) {
            /* a string column's dtype on its data buffer: the bytes */
            fmt.type = DFB_T_UINT;
            fmt.bits = 8;
        }
        else if (fmt.type == DFB_T_DICTIONARY) {
            fmt.type = DFB_T_INT; /* the codes */
        }
        else if (fmt.type == DFB_T_STRING_VIEW) {
            PyErr_Format(PyExc_NotImplementedError,
                         "cannot view a buffer as %R", a[1]);
            return NULL;
        }
        isz = fmt.type == DFB_T_BOOL_BIT ? 0 : dfb_format_itemsize(&fmt);
    }
    else {
        descr = dfb_parse_dtype(a[1], NULL);
        if (descr == NULL) {
            return NULL;
        }
        memset(&fmt, 0, sizeof(fmt));
        isz = PyDataType_ELSIZE(descr);
    }

    dfb_span span;
    PyObject *wrapper = dfb_ix_wrap_buffer(st, a[0], &span);
    if (wrapper == NULL) {
        Py_XDECREF(descr);
        return NULL;
    }
    /* element capacity of the block */
    int64_t cap = isz == 0
                      ? (span.size > INT64_MAX / 8 ? INT64_MAX : span.size * 8)
                      : elements_in(span.size, isz);
    if (offset > cap || (length >= 0 && length > cap - offset)) {
        PyErr_Format(PyExc_ValueError,
                     "offset %lld + length %lld exceed the buffer's %lld "
                     "elements (bufsize %lld bytes)",
                     (long long)offset, (long long)(length < 0 ? 0 : length),
                     (long long)cap, (long long)span.size);
        Py_DECREF(wrapper);
        Py_XDECREF(descr);
        return NULL;
    }
    if (length < 0) {
        length = cap - offset;
    }
    PyObject *res;
    int typenum;
    if (descr == NULL && length > 0 && span.ptr != NULL &&
        span.owner == wrapper && (typenum = native_typenum(&fmt)) >= 0) {
        /* a plain fixed-width interchange dtype: the view the converters
           would make (view_values, convert.c), without a column to
           describe; the bounds were checked against bufsize above */
        descr = PyArray_DescrFromType(typenum);
        if (descr == NULL) {
            Py_DECREF(wrapper);
            return NULL;
        }
    }
    if (descr != NULL) {
        static char dummy;
        char *p = span.ptr != NULL ? (char *)span.ptr + offset * isz : &dummy;
        return dfb_buffer_view_1d((DfbBuffer *)wrapper, descr, p,
                                  (npy_intp)length);
    }
    dfb_column c;
    memset(&c, 0, sizeof(c));
    c.fmt = fmt;
    c.length = length;
    c.offset = offset;
    c.null_count = 0;
    c.null_kind = DFB_NULL_NON_NULLABLE;
    c.data = span;
    res = NULL;
    if (dfb_column_validate(&c) == 0) {
        res = dfb_chunk_values(st, &c, NULL, 1, 0);
    }
    Py_DECREF(wrapper);
    return res;
}

PyDoc_STRVAR(
    column_to_ndarray_doc,
    "column_to_ndarray(column, *, nulls='mask', categorical='decode',\n"
    "                  strings='object', decimals='decimal', copy=None,\n"
    "                  allow_copy=True, period='object')\n--\n\n"
    "Convert one DataFrame-interchange column (or an Arrow producer of one\n"
    "column, or, last, an object with pyarrow's __arrow_array__ or with\n"
    "__array__ giving a 1-D array) to a NumPy array.\n\n"
    "nulls='mask' gives a numpy.ma.MaskedArray where the column has nulls and "
    "a\n"
    "plain (zero-copy where the layout allows) ndarray otherwise; 'fill' "
    "gives\n"
    "a plain ndarray with NaN / NaT / None in the null slots (ints and bools\n"
    "upcast to float64); 'raise' raises ValueError if any value is null;\n"
    "'always_mask' gives a MaskedArray whether or not a value is null (its\n"
    "type depends only on the schema).  'nan' is the deprecated spelling of\n"
    "'fill' (DeprecationWarning).\n"
    "Strings become object arrays of str (strings='object') or NumPy\n"
    "StringDType(na_object=None) arrays built without Python str objects\n"
    "(strings='stringdtype'; null slots hold None).  Categoricals are "
    "decoded\n"
    "through their categories (categorical='decode') or returned as\n"
    "dfbuffer.CategoricalCodes(codes, categories, ordered) without decoding\n"
    "(categorical='codes'; codes zero-copy, masked where null).  Several\n"
    "chunks are concatenated.\n\n"
    "Parameters\n"
    "----------\n"
    "column : interchange Column or Arrow producer\n"
    "    A column of an interchange DataFrame (get_column(i)), or an object\n"
    "    with __arrow_c_array__ / __arrow_c_stream__ holding one column (a\n"
    "    pyarrow Array or ChunkedArray, a polars or pandas Series; a struct\n"
    "    array gives an object array of dicts).\n"
    "nulls : {'mask', 'fill', 'raise', 'always_mask'}, optional\n"
    "    How nulls come back (default 'mask').\n"
    "categorical : {'decode', 'codes'}, optional\n"
    "    Decode categoricals, or return CategoricalCodes (default 'decode').\n"
    "strings : {'object', 'stringdtype'}, optional\n"
    "    Strings as object arrays of str, or as NumPy StringDType arrays.\n"
    "decimals : {'decimal', 'float64'}, optional\n"
    "    Arrow decimals as exact decimal.Decimal objects (default), or as\n"
    "    float64 (the nearest double; NaN where null).\n"
    "copy : bool or None, optional\n"
    "    NumPy 2's copy=: None (default) copies only where the layout needs\n"
    "    it; False raises CopyError where a copy is needed; True always\n"
    "    gives fresh writable memory.\n"
    "allow_copy : bool, optional\n"
    "    The interchange protocol's word: True is copy=None, False is\n"
    "    copy=False (give one of the two).\n"
    "period : {'object', 'ordinal'}, optional\n"
    "    A pandas Period column (a Series, or a column of a pandas frame or\n"
    "    of its interchange object): an object array of pandas.Period\n"
    "    ('object', default), or its int64 ordinals ('ordinal': a read-only\n"
    "    view, NaT a null), whose frequency dfbuffer.schema() gives in\n"
    "    `unit`.  Never bare ordinals unasked.\n"
    "\n"
    "Returns\n"
    "-------\n"
    "numpy.ndarray, numpy.ma.MaskedArray or CategoricalCodes\n"
    "    Zero-copy and read-only where the layout allows, else a new array.\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError\n"
    "    column is neither an interchange column nor an Arrow producer.\n"
    "ValueError\n"
    "    nulls='raise' and the column has a null, or buffers that do not\n"
    "    match the column's description.\n"
    "CopyError\n"
    "    copy=False (or allow_copy=False in the producer) and a copy is\n"
    "    unavoidable (a ValueError and RuntimeError).\n"
    "BufferError\n"
    "    The data is not on the CPU.\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import pyarrow as pa\n"
    ">>> import dfbuffer\n"
    ">>> dfbuffer.column_to_ndarray(pa.array([1, None, 3]), nulls=\"fill\")\n"
    "array([ 1., nan,  3.])\n"
    ">>> res = dfbuffer.column_to_ndarray(\n"
    "...     pa.array([\"a\", \"b\", \"a\"]).dictionary_encode(), "
    "categorical=\"codes\")\n"
    ">>> res.codes.tolist(), res.categories.tolist(), res.ordered\n"
    "([0, 1, 0], ['a', 'b'], False)");

/* column_to_ndarray(column, *, nulls="mask", ..., copy=None). */
static PyObject *
column_to_ndarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    static const char *const kw[] = {"column",     "nulls",    "categorical",
                                     "strings",    "decimals", "copy",
                                     "allow_copy", "period",   NULL};
    static const dfb_argspec spec = {"column_to_ndarray", kw, 1, 1};
    PyObject *a[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    PyObject *const fast[] = {NULL, st->str.nulls,      NULL, NULL, NULL,
                              NULL, st->str.allow_copy, NULL};
    if (dfb_parse_args(&spec, fast, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    const dfb_opt_args oa = {.func = "column_to_ndarray",
                             .nulls = a[1],
                             .categorical = a[2],
                             .strings = a[3],
                             .decimals = a[4],
                             .copy = a[5],
                             .allow_copy = a[6],
                             .period = a[7]};
    dfb_opts opts;
    if (dfb_parse_opts(&oa, &opts) < 0) {
        return NULL;
    }
    const int allow_copy = dfb_opts_allow_copy(&opts);
    if (dfb_column_frame_names_unique(a[0]) < 0) {
        return NULL;
    }
    /* a copy error names the keyword given */
    const char *prev =
        dfb_copy_keyword_enter(a[5] != NULL ? "copy" : "allow_copy");
    PyObject *res =
        dfb_column_read(st, a[0], &opts, allow_copy, "column_to_ndarray");
    dfb_copy_keyword_leave(prev);
    return dfb_result_finish(st, res, &opts);
}

PyDoc_STRVAR(
    from_dataframe_doc,
    "from_dataframe(obj, *, nulls='mask', allow_copy=True, "
    "categorical='decode',\n"
    "               strings='object', structs='object', decimals='decimal',\n"
    "               on_unsupported='raise', columns=None, copy=None,\n"
    "               period='object')\n--\n\n"
    "Convert every column of a dataframe to NumPy: a dict name -> array.\n\n"
    "obj is anything with __dataframe__, an interchange DataFrame object, "
    "an\n"
    "Arrow producer of a table, or a mapping of column names to 1-D arrays,\n"
    "Buffers or columns (each read as column_to_ndarray reads it).  A lazy\n"
    "frame (polars' or narwhals' LazyFrame) raises TypeError: collect it.\n"
    "Non-string column names become str; duplicate\n"
    "names raise ValueError.  nulls and copy as in column_to_ndarray.  "
    "copy=False\n"
    "raises CopyError wherever a copy is unavoidable (several chunks,\n"
    "filled nulls, strings, bit-packed bools, decoded categoricals, "
    "date32).\n"
    "categorical and strings as in column_to_ndarray.  Columns that pandas'\n"
    "Arrow metadata marks as its index are left out, as the interchange "
    "path\n"
    "leaves them out.  Timestamps with a time zone come back as UTC\n"
    "datetime64 (the zone is not a NumPy dtype): dfbuffer.schema(obj) gives\n"
    "each column's zone, unit, categorical ordering and null "
    "representation.\n\n"
    "Parameters\n"
    "----------\n"
    "obj : dataframe\n"
    "    A pandas, polars or pyarrow object (any Arrow PyCapsule producer, a\n"
    "    pandas Series included), an object with __dataframe__, an\n"
    "    interchange DataFrame, or a mapping of names to 1-D arrays.\n"
    "nulls : {'mask', 'fill', 'raise', 'always_mask'}, optional\n"
    "    As in column_to_ndarray (default 'mask').\n"
    "allow_copy : bool, optional\n"
    "    The alias of copy: True is copy=None, False is copy=False.\n"
    "categorical : {'decode', 'codes'}, optional\n"
    "    As in column_to_ndarray (default 'decode').\n"
    "strings : {'object', 'stringdtype'}, optional\n"
    "    As in column_to_ndarray (default 'object').\n"
    "structs : {'object', 'flatten'}, optional\n"
    "    'object' (default): a struct column is an object array of dicts.\n"
    "    'flatten': one entry per leaf field of an Arrow struct column,\n"
    "    named 'parent.child', zero-copy where the leaf allows; a struct's\n"
    "    null rows are nulls of its leaves.\n"
    "decimals : {'decimal', 'float64'}, optional\n"
    "    As in column_to_ndarray (default 'decimal').\n"
    "on_unsupported : {'raise', 'skip'}, optional\n"
    "    A column of a type dfbuffer cannot convert raises\n"
    "    NotImplementedError naming it and its format (default 'raise'), or\n"
    "    is left out of the result ('skip').\n"
    "columns : sequence of str, optional\n"
    "    Convert only these columns, in this order (KeyError for a name no\n"
    "    column has; default: every column).  With structs='flatten' a name\n"
    "    is a leaf ('s.a') or a struct ('s': all its leaves); a name both a\n"
    "    column and a leaf has is a ValueError.\n"
    "copy : bool or None, optional\n"
    "    As in column_to_ndarray: None (default) copies only where needed,\n"
    "    False raises where a copy is needed, True gives fresh writable\n"
    "    memory for every column.\n"
    "period : {'object', 'ordinal'}, optional\n"
    "    As in column_to_ndarray: a pandas Period column as pandas.Period\n"
    "    objects (default) or its int64 ordinals.\n"
    "\n"
    "Returns\n"
    "-------\n"
    "dict of str to numpy.ndarray or CategoricalCodes\n"
    "    One entry per column, in order.  A pandas Series is keyed by\n"
    "    str(name) ('' when unnamed).\n"
    "\n"
    "Raises\n"
    "------\n"
    "TypeError\n"
    "    obj is not a dataframe dfbuffer reads.\n"
    "ValueError\n"
    "    A duplicate column name; nulls='raise' and a column has a null\n"
    "    (\"column 'x' has 1 null value\"); buffers that do not match their\n"
    "    description.  Errors about one column name it.\n"
    "CopyError\n"
    "    copy=False (allow_copy=False) and a copy is unavoidable (a\n"
    "    ValueError and RuntimeError).\n"
    "\n"
    "Examples\n"
    "--------\n"
    ">>> import pandas as pd\n"
    ">>> import dfbuffer\n"
    ">>> df = pd.DataFrame({\"x\": [1.5, 2.5, None], \"s\": [\"a\", None, "
    "\"c\"]})\n"
    ">>> cols = dfbuffer.from_dataframe(df)\n"
    ">>> cols[\"x\"]\n"
    "array([1.5, 2.5, nan])\n"
    ">>> cols[\"s\"].tolist()\n"
    "['a', None, 'c']\n"
    ">>> dfbuffer.from_dataframe(df, nulls=\"raise\")\n"
    "Traceback (most recent call last):\n"
    "    ...\n"
    "ValueError: column 'x' has 1 null value (nulls='raise')");

/* A subclass of pandas Series (an exact one is read as its one-column
   frame by the frame-source table) exports its values through Arrow
   without its name (a field named ""): the one column of `res` (stolen) is
   keyed by str(obj.name) instead, unless the name is None; an error (res
   NULL) names that column.  Returns a new reference, or NULL with an exception
   set. */
static PyObject *
series_named(dfb_state *st, PyObject *obj, PyObject *res)
{
    PyObject *key = NULL, *value = NULL, *out = NULL;
    if (res == NULL) {
        PyObject *exc = dfb_err_take();
        if (dfb_series_key(st, obj, &key) < 0) {
            PyErr_Clear(); /* the conversion's error is the one to raise */
        }
        dfb_err_give(exc);
        if (key != NULL) {
            dfb_add_column_context(st, key);
            Py_DECREF(key);
        }
        return NULL;
    }
    if (!PyDict_CheckExact(res) || PyDict_GET_SIZE(res) != 1) {
        return res;
    }
    Py_ssize_t pos = 0;
    if (!PyDict_Next(res, &pos, &key, &value) || !PyUnicode_Check(key) ||
        PyUnicode_GET_LENGTH(key) != 0) {
        return res;
    }
    Py_INCREF(value); /* held across the calls below */
    if (dfb_series_key(st, obj, &key) < 0) {
        out = NULL;
    }
    else if (key == NULL) {
        out = Py_NewRef(res);
    }
    else {
        out = PyDict_New();
        if (out != NULL && PyDict_SetItem(out, key, value) < 0) {
            Py_CLEAR(out);
        }
        Py_DECREF(key);
    }
    Py_DECREF(value);
    Py_DECREF(res);
    return out;
}

/* The interchange DataFrame `df` (stolen) column by column, only those
   `sel` selects (NULL: all).  Returns a new dict, or NULL with an
   exception set. */
static PyObject *
ix_frame_to_dict(dfb_state *st, PyObject *df, const dfb_opts *opts,
                 int allow_copy, const dfb_colsel *sel)
{
    PyObject *result = NULL, *names = NULL, *seq = NULL;
    names = PyObject_CallMethodNoArgs(df, st->str.column_names);
    if (names == NULL) {
        goto done;
    }
    /* A private tuple, never the producer's own list: get_column() runs
       producer code that may change that list while we index it. */
    seq = PySequence_Tuple(names);
    if (seq == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyObject *exc = dfb_err_take();
            PyErr_SetString(PyExc_TypeError,
                            "column_names() must return an iterable");
            dfb_err_raise_from(exc);
        }
        goto done;
    }
    result = PyDict_New();
    if (result == NULL) {
        goto done;
    }
    PyObject *getcol = PyObject_GetAttr(df, st->str.get_column);
    if (getcol == NULL) {
        Py_CLEAR(result);
        goto done;
    }
    Py_ssize_t ncols = PyTuple_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < ncols; i++) {
        PyObject *name = PyTuple_GET_ITEM(seq, i);
        PyObject *key =
            PyUnicode_CheckExact(name) ? Py_NewRef(name) : PyObject_Str(name);
        if (key == NULL) {
            goto fail;
        }
        int want = dfb_colsel_wants(sel, key);
        if (want <= 0) {
            Py_DECREF(key);
            if (want < 0) {
                goto fail;
            }
            continue;
        }
        int has = PyDict_Contains(result, key);
        if (has != 0) {
            if (has > 0) {
                PyErr_Format(PyExc_ValueError,
                             "from_dataframe() returns a dict, one array per "
                             "name: duplicate column name %R (rename the "
                             "columns)",
                             key);
            }
            Py_DECREF(key);
            goto fail;
        }
        PyObject *idx = PyLong_FromSsize_t(i);
        if (idx == NULL) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *col = PyObject_CallOneArg(getcol, idx);
        Py_DECREF(idx);
        if (col == NULL) {
            dfb_column_refused(key);
            if (dfb_skip_unsupported(opts)) {
                Py_DECREF(key);
                continue;
            }
            Py_DECREF(key);
            goto fail;
        }
        /* each column as column_to_ndarray reads one (an interchange
           column, or any protocol of its dispatch) */
        uint64_t scope = dfb_probe_scope_open(st, col);
        PyObject *arr =
            dfb_column_dispatch(st, col, opts, allow_copy, "from_dataframe");
        dfb_probe_scope_close(st, scope);
        Py_DECREF(col);
        if (arr == NULL && dfb_skip_unsupported(opts)) {
            Py_DECREF(key);
            continue;
        }
        if (arr == NULL) {
            dfb_add_column_context(st, key);
            Py_DECREF(key);
            goto fail;
        }
        int r = PyDict_SetItem(result, key, arr);
        Py_DECREF(key);
        Py_DECREF(arr);
        if (r < 0) {
            goto fail;
        }
    }
    Py_DECREF(getcol);
    goto done;
fail:
    Py_DECREF(getcol);
    Py_CLEAR(result);
done:
    Py_XDECREF(seq);
    Py_XDECREF(names);
    Py_DECREF(df);
    return result;
}

/* The nulls of mapping value `v` when it is a numpy.ma.MaskedArray: its
   mask applied to `arr` (stolen, the values read from `v`) in the nulls=
   mode of `opts`, as an Arrow column's nulls are (to_arrow of the same
   mapping gives them as nulls).  Returns a new reference (`arr` itself for
   any other value or no masked value), or NULL with an exception set. */
static PyObject *
mapping_value_nulls(dfb_state *st, PyObject *v, PyObject *arr,
                    const dfb_opts *opts, int allow_copy)
{
    if (!PyArray_Check(v) || PyArray_CheckExact(v) || !PyArray_Check(arr) ||
        PyArray_NDIM((PyArrayObject *)arr) != 1) {
        return arr;
    }
    PyObject *ma = PyImport_ImportModule("numpy.ma");
    PyObject *cls =
        ma == NULL ? NULL : PyObject_GetAttrString(ma, "MaskedArray");
    int is_ma = cls == NULL ? -1 : PyObject_IsInstance(v, cls);
    Py_XDECREF(cls);
    PyObject *m =
        is_ma == 1 ? PyObject_CallMethod(ma, "getmaskarray", "(O)", v) : NULL;
    Py_XDECREF(ma);
    if (is_ma == 0) {
        return arr;
    }
    /* a mask of our own, as long as the values */
    PyObject *mask =
        m == NULL
            ? NULL
            : PyArray_FromAny(m, PyArray_DescrFromType(NPY_BOOL), 1, 1,
                              NPY_ARRAY_CARRAY | NPY_ARRAY_ENSURECOPY, NULL);
    Py_XDECREF(m);
    if (mask == NULL) {
        Py_DECREF(arr);
        return NULL;
    }
    npy_intp n = PyArray_DIM((PyArrayObject *)mask, 0);
    if (n != PyArray_DIM((PyArrayObject *)arr, 0)) {
        Py_DECREF(mask);
        Py_DECREF(arr);
        PyErr_SetString(PyExc_ValueError,
                        "the masked array's mask and values differ in length");
        return NULL;
    }
    const npy_bool *b = PyArray_DATA((PyArrayObject *)mask);
    int64_t nnull = 0;
    for (npy_intp i = 0; i < n; i++) {
        nnull += b[i] != 0;
    }
    if (nnull == 0) {
        Py_DECREF(mask);
        return arr;
    }
    return dfb_nulls_finish(st, arr, (PyArrayObject *)mask, nnull, 0,
                            opts->nulls, allow_copy);
}

/* Checks that column `arr` (an ndarray, or CategoricalCodes whose codes
   are one) has *length values, the length of the mapping's columns so far
   (-1: none yet, then set).  Returns 0, or -1 with ValueError. */
static int
same_length(PyObject *arr, int64_t *length)
{
    PyObject *a = PyArray_Check(arr) ? arr
                  : PyTuple_Check(arr) && PyTuple_GET_SIZE(arr) > 0
                      ? PyTuple_GET_ITEM(arr, 0)
                      : NULL;
    if (a == NULL || !PyArray_Check(a) ||
        PyArray_NDIM((PyArrayObject *)a) != 1) {
        return 0;
    }
    int64_t n = (int64_t)PyArray_DIM((PyArrayObject *)a, 0);
    if (*length >= 0 && n != *length) {
        PyErr_Format(PyExc_ValueError,
                     "from_dataframe() takes columns of one length: this one "
                     "has %lld values, the others %lld",
                     (long long)n, (long long)*length);
        return -1;
    }
    *length = n;
    return 0;
}

/* A mapping of column names to 1-D arrays, Buffers or columns (borrowed
   `obj`), each value read as column_to_ndarray reads it (a MaskedArray's
   mask giving its nulls), only the keys
   `sel` selects (NULL: all).  Returns a new dict, or NULL with an
   exception set (naming the column). */
static PyObject *
mapping_to_dict(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                int allow_copy, const dfb_colsel *sel)
{
    /* a private list of (key, value) from the items taken in one pass
       (dfb_mapping_snapshot, as every function takes them): reading a
       value runs code that may change the caller's mapping */
    PyObject *snap = dfb_mapping_snapshot(obj);
    PyObject *items = snap != NULL ? PyDict_Items(snap) : NULL;
    Py_XDECREF(snap);
    if (items == NULL) {
        return NULL;
    }
    PyObject *result = PyDict_New();
    int64_t length = -1; /* of the columns read so far */
    for (Py_ssize_t i = 0; result != NULL && i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        if (!PyTuple_Check(kv) || PyTuple_GET_SIZE(kv) != 2) {
            PyErr_SetString(PyExc_TypeError,
                            "the mapping's items() must be (key, value) "
                            "pairs");
            Py_CLEAR(result);
            break;
        }
        PyObject *k = PyTuple_GET_ITEM(kv, 0), *v = PyTuple_GET_ITEM(kv, 1);
        PyObject *key =
            PyUnicode_CheckExact(k) ? Py_NewRef(k) : PyObject_Str(k);
        int want = key == NULL ? -1 : dfb_colsel_wants(sel, key);
        int has = want <= 0 ? 0 : PyDict_Contains(result, key);
        if (has > 0) {
            PyErr_Format(PyExc_ValueError,
                         "from_dataframe() returns a dict, one array per "
                         "name: duplicate column name %R (rename the columns)",
                         key);
        }
        PyObject *arr = NULL;
        if (want > 0 && has == 0) {
            arr = dfb_column_read(st, v, opts, allow_copy, "from_dataframe");
            if (arr != NULL) {
                arr = mapping_value_nulls(st, v, arr, opts, allow_copy);
            }
            if (arr == NULL && dfb_skip_unsupported(opts)) {
                Py_DECREF(key);
                continue;
            }
            if (arr != NULL && PyArray_Check(arr) &&
                PyArray_NDIM((PyArrayObject *)arr) != 1) {
                dfb_not_1d_error("from_dataframe", (PyArrayObject *)arr);
                Py_CLEAR(arr);
            }
            if (arr != NULL && same_length(arr, &length) < 0) {
                Py_CLEAR(arr);
            }
            if (arr == NULL) {
                dfb_add_column_context(st, key);
            }
        }
        if (want < 0 || has != 0 || (want > 0 && arr == NULL) ||
            (arr != NULL && PyDict_SetItem(result, key, arr) < 0)) {
            Py_CLEAR(result);
        }
        Py_XDECREF(arr);
        Py_XDECREF(key);
    }
    Py_DECREF(items);
    return result;
}

/* str() of every column label of pandas frame `frame`.  Returns a new
   list, or NULL with an exception set. */
static PyObject *
str_names(PyObject *frame)
{
    PyObject *cols = PyObject_GetAttrString(frame, "columns");
    PyObject *out = cols != NULL ? PySequence_List(cols) : NULL;
    Py_XDECREF(cols);
    for (Py_ssize_t i = 0; out != NULL && i < PyList_GET_SIZE(out); i++) {
        PyObject *item = PyList_GET_ITEM(out, i);
        if (!PyUnicode_Check(item)) {
            PyObject *s = PyObject_Str(item);
            if (s == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SetItem(out, i, s); /* steals s, drops the label */
        }
    }
    return out;
}

/* The positions of the columns that `columns` selects among `names` (a
   list of str; dfb_frame_select's rule and errors), each once when
   `unique`.  Returns a new list of int, or NULL with an exception set. */
static PyObject *
select_positions(PyObject *names, PyObject *columns, int unique)
{
    Py_ssize_t *idx, n;
    if (dfb_frame_select(names, columns, &idx, &n) < 0) {
        return NULL;
    }
    PyObject *out = PyList_New(0);
    for (Py_ssize_t k = 0; out != NULL && k < n; k++) {
        int seen = 0;
        for (Py_ssize_t j = 0; unique && j < k && !seen; j++) {
            seen = idx[j] == idx[k];
        }
        PyObject *v = seen ? NULL : PyLong_FromSsize_t(idx[k]);
        if (!seen && (v == NULL || PyList_Append(out, v) < 0)) {
            Py_CLEAR(out);
        }
        Py_XDECREF(v);
    }
    PyMem_Free(idx);
    return out;
}

/* from_dataframe of pandas DataFrame `frame` (borrowed), only the columns
   `sel` selects (NULL: all).  Returns a new dict, or NULL with an
   exception set. */
static PyObject *
pandas_to_dict(dfb_state *st, PyObject *frame, const dfb_opts *opts,
               int pd_copy, dfb_colsel *sel)
{
    /* the frame is read (pandas_fast.c), never pandas' __dataframe__
       buffers, which drop the slice offset of Arrow-backed columns
       (P-26) */
    if (sel == NULL) {
        /* reads the manager once (pandas_fast.c) */
        return dfb_pandas_frame_dict(st, frame, opts, pd_copy);
    }
    /* pandas' selection and Arrow export read the frame's manager more
       than once: they read a frame over it read once */
    PyObject *pinned = dfb_pd_frame_pin(frame);
    if (pinned == NULL) {
        return NULL;
    }
    PyObject *res = NULL;
    if (opts->structs_flatten) {
        /* columns= may name struct leaves, which only the Arrow export
           of the frame shows */
        int arrow = dfb_arrow_is_producer(pinned);
        if (arrow != 0) {
            res = arrow == 1 ? dfb_arrow_from_dataframe_cols(st, pinned, opts,
                                                             pd_copy, sel)
                             : NULL;
            Py_DECREF(pinned);
            return res;
        }
    }
    /* the selected columns by position, each once (dfb_colsel_finish
       orders and repeats them): the names matched as str() of the
       labels, as every function matches them (dfb_frame_select) */
    PyObject *names = str_names(pinned);
    PyObject *pos =
        names != NULL ? select_positions(names, sel->names, 1) : NULL;
    Py_XDECREF(names);
    PyObject *all = pos != NULL ? PySlice_New(NULL, NULL, NULL) : NULL;
    PyObject *key = all != NULL ? PyTuple_Pack(2, all, pos) : NULL;
    PyObject *iloc =
        key != NULL ? PyObject_GetAttrString(pinned, "iloc") : NULL;
    PyObject *sub = iloc != NULL ? PyObject_GetItem(iloc, key) : NULL;
    Py_XDECREF(iloc);
    Py_XDECREF(key);
    Py_XDECREF(all);
    Py_XDECREF(pos);
    Py_DECREF(pinned);
    if (sub == NULL) {
        return NULL;
    }
    res = dfb_pandas_frame_dict(st, sub, opts, pd_copy);
    Py_DECREF(sub);
    return res;
}

/* from_dataframe of Arrow producer `frame` (borrowed): its columns (a
   pandas Series subclass's one column named as from_dataframe keys it).
   Returns a new dict, or NULL with an exception set. */
static PyObject *
arrow_to_dict(dfb_state *st, PyObject *frame, const dfb_opts *opts,
              int allow_copy, dfb_colsel *sel)
{
    return series_named(
        st, frame,
        dfb_arrow_from_dataframe_cols(st, frame, opts, allow_copy, sel));
}

/* from_dataframe of interchange DataFrame `df` (borrowed).  Returns a new
   dict, or NULL with an exception set. */
static PyObject *
ix_to_dict(dfb_state *st, PyObject *df, const dfb_opts *opts, int allow_copy,
           dfb_colsel *sel)
{
    return ix_frame_to_dict(st, Py_NewRef(df), opts, allow_copy, sel);
}

/* from_dataframe of mapping `obj` (borrowed).  Returns a new dict, or NULL
   with an exception set. */
static PyObject *
mapping_rows_to_dict(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                     int allow_copy, dfb_colsel *sel)
{
    return mapping_to_dict(st, obj, opts, allow_copy, sel);
}

/* from_dataframe's operation of each row of the frame-source table: the
   row's frame (borrowed) read into a new dict, or NULL with an exception
   set; NULL for a row it does not read (a schema has no data). */
typedef PyObject *(*frame_reader)(dfb_state *, PyObject *, const dfb_opts *,
                                  int, dfb_colsel *);
static const frame_reader to_dict_rows[DFB_SRC_COUNT] = {
    [DFB_SRC_PANDAS] = pandas_to_dict,
    [DFB_SRC_ARROW] = arrow_to_dict,
    [DFB_SRC_INTERCHANGE] = ix_to_dict,
    [DFB_SRC_MAPPING] = mapping_rows_to_dict,
    [DFB_SRC_SCHEMA] = NULL,
};

/* from_dataframe of `obj` (borrowed), read as the frame-source table says
   (its row's operation in to_dict_rows), only the columns `sel` selects
   (NULL: all).  Returns a new dict, or NULL with an exception set. */
static PyObject *
frame_to_dict(dfb_state *st, PyObject *obj, const dfb_opts *opts,
              int allow_copy, dfb_colsel *sel)
{
    if (sel == NULL) {
        /* the table's Series row read without making the frame */
        PyObject *res = NULL;
        int fast = dfb_series_fast_dict(st, obj, opts, &res);
        if (fast != 0) {
            return res;
        }
    }
    /* the frame-source table (frame_source.c) decides how obj is read */
    dfb_frame_source src;
    if (dfb_frame_source_of(st, obj, allow_copy, &src) < 0) {
        return NULL;
    }
    frame_reader read = to_dict_rows[src.kind];
    PyObject *res = read != NULL
                        ? read(st, src.frame, opts, src.allow_copy, sel)
                        : dfb_not_a_frame_error("from_dataframe", obj);
    Py_XDECREF(src.frame);
    return res;
}

/* from_dataframe(obj, *, nulls="mask", copy=None, ...). */
static PyObject *
from_dataframe(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
               PyObject *kwnames)
{
    static const char *const kw[] = {
        "obj",     "nulls",   "allow_copy", "categorical",
        "strings", "structs", "decimals",   "on_unsupported",
        "columns", "copy",    "period",     NULL};
    static const dfb_argspec spec = {"from_dataframe", kw, 1, 1};
    PyObject *a[11] = {NULL, NULL, NULL, NULL, NULL, NULL,
                       NULL, NULL, NULL, NULL, NULL};
    dfb_state *st = dfb_state_from_module(module);
    PyObject *const fast[] = {NULL, st->str.nulls, st->str.allow_copy,
                              NULL, NULL,          NULL,
                              NULL, NULL,          NULL,
                              NULL, NULL};
    if (dfb_parse_args(&spec, fast, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    const dfb_opt_args oa = {.func = "from_dataframe",
                             .nulls = a[1],
                             .allow_copy = a[2],
                             .categorical = a[3],
                             .strings = a[4],
                             .structs = a[5],
                             .decimals = a[6],
                             .on_unsupported = a[7],
                             .copy = a[9],
                             .period = a[10]};
    dfb_opts opts;
    if (dfb_parse_opts(&oa, &opts) < 0) {
        return NULL;
    }
    dfb_colsel sel;
    if (dfb_colsel_init(&sel, a[8]) < 0) {
        return NULL;
    }
    /* a copy error names the keyword given */
    const char *prev =
        dfb_copy_keyword_enter(a[9] != NULL ? "copy" : "allow_copy");
    PyObject *res = dfb_colsel_finish(
        &sel, frame_to_dict(st, a[0], &opts, dfb_opts_allow_copy(&opts),
                            sel.names != NULL ? &sel : NULL));
    dfb_copy_keyword_leave(prev);
    dfb_colsel_clear(&sel);
    return dfb_result_finish(st, res, &opts);
}

PyDoc_STRVAR(
    frame_source_doc,
    "_frame_source(obj, allow_copy=True, /)\n--\n\n"
    "Private: the frame-source table's answer for obj, (kind, frame,\n"
    "allow_copy): kind one of 'pandas', 'arrow', 'interchange',\n"
    "'mapping', 'schema', 'none'; frame what to read (None for "
    "'none'),\n"
    "read once: a pandas frame as a frame over its manager read once, a\n"
    "mapping as a dict of its items taken in one pass.");

/* _frame_source(obj, allow_copy=True, /): the table's answer, its frame
   read once (dfb_frame_source_pin: the Python callers read it more than
   once).  Returns a new tuple, or NULL with an exception set. */
static PyObject *
frame_source_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError,
                        "_frame_source() takes 1 or 2 arguments");
        return NULL;
    }
    int allow_copy = 1;
    if (nargs == 2 && dfb_parse_flag(args[1], &allow_copy) < 0) {
        return NULL;
    }
    dfb_frame_source src;
    if (dfb_frame_source_of(dfb_state_from_module(module), args[0], allow_copy,
                            &src) < 0 ||
        dfb_frame_source_pin(&src) < 0) {
        return NULL;
    }
    return Py_BuildValue("(sNO)", dfb_frame_kind_name(src.kind),
                         src.frame != NULL ? src.frame : Py_NewRef(Py_None),
                         src.allow_copy ? Py_True : Py_False);
}

PyDoc_STRVAR(frame_kinds_doc,
             "_frame_kinds()\n--\n\n"
             "Private: the names of the frame-source table's rows, in the\n"
             "order they are asked: the keys of every Python operation table\n"
             "(dfbuffer._sources), which _frame_source answers with.");

/* _frame_kinds(): dfb_frame_kind_names for dfbuffer._sources.  Returns a
   new tuple, or NULL with MemoryError. */
static PyObject *
frame_kinds_py(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(unused))
{
    return dfb_frame_kind_names();
}

PyDoc_STRVAR(ix_frame_doc,
             "_ix_frame(obj, /)\n--\n\n"
             "Private: the interchange DataFrame of obj (obj itself when it\n"
             "has column_names and get_column, else\n"
             "obj.__dataframe__(allow_copy=True)), or None when obj has\n"
             "neither: the interchange row's test, for a device-only Arrow\n"
             "producer read through its __dataframe__.");

/* _ix_frame(obj, /): dfb_ix_frame with allow_copy.  Returns a new
   reference (None for neither), or NULL with an exception set. */
static PyObject *
ix_frame_py(PyObject *module, PyObject *obj)
{
    PyObject *df = dfb_ix_frame(dfb_state_from_module(module), obj, 1);
    if (df == NULL && !PyErr_Occurred()) {
        return Py_NewRef(Py_None);
    }
    return df;
}

PyDoc_STRVAR(select_columns_doc,
             "_select_columns(names, columns, /)\n--\n\n"
             "Private: the positions in names (a list of str) of the columns\n"
             "columns= selects (None: all), by the rule every function uses:\n"
             "names matched as str(), a repeated name repeated; TypeError,\n"
             "KeyError or ValueError with the same text everywhere.");

/* _select_columns(names, columns, /): select_positions for the Python
   functions.  Returns a new list, or NULL with an exception set. */
static PyObject *
select_columns_py(PyObject *Py_UNUSED(module), PyObject *const *args,
                  Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError,
                        "_select_columns() takes a list and a selection");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args[0]); i++) {
        if (!PyUnicode_Check(PyList_GET_ITEM(args[0], i))) {
            PyErr_SetString(PyExc_TypeError,
                            "_select_columns() takes a list of str");
            return NULL;
        }
    }
    return select_positions(args[0], args[1], 0);
}

PyDoc_STRVAR(
    not_a_frame_error_doc,
    "_not_a_frame_error(func, obj, /)\n--\n\n"
    "Private: the TypeError that function func raises for obj, which\n"
    "is no frame it reads (dfb_not_a_frame_error), returned, not\n"
    "raised: the one message of every function.");

/* _not_a_frame_error(func, obj, /): the exception dfb_not_a_frame_error
   sets, taken and returned for the Python functions to raise.  Returns a
   new reference to it, or NULL with TypeError for wrong arguments. */
static PyObject *
not_a_frame_error_py(PyObject *Py_UNUSED(module), PyObject *const *args,
                     Py_ssize_t nargs)
{
    const char *func = nargs == 2 && PyUnicode_Check(args[0])
                           ? PyUnicode_AsUTF8(args[0])
                           : NULL;
    if (func == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError,
                            "_not_a_frame_error() takes a str and an object");
        }
        return NULL;
    }
    dfb_not_a_frame_error(func, args[1]);
    return dfb_err_take();
}

PyMethodDef dfb_convert_methods[] = {
    {"_frame_source", (PyCFunction)(void (*)(void))frame_source_py,
     METH_FASTCALL, frame_source_doc},
    {"_frame_kinds", frame_kinds_py, METH_NOARGS, frame_kinds_doc},
    {"_ix_frame", ix_frame_py, METH_O, ix_frame_doc},
    {"_not_a_frame_error", (PyCFunction)(void (*)(void))not_a_frame_error_py,
     METH_FASTCALL, not_a_frame_error_doc},
    {"_select_columns", (PyCFunction)(void (*)(void))select_columns_py,
     METH_FASTCALL, select_columns_doc},
    {"buffer_to_ndarray", (PyCFunction)(void (*)(void))buffer_to_ndarray,
     METH_FASTCALL | METH_KEYWORDS, buffer_to_ndarray_doc},
    {"column_to_ndarray", (PyCFunction)(void (*)(void))column_to_ndarray,
     METH_FASTCALL | METH_KEYWORDS, column_to_ndarray_doc},
    {"from_dataframe", (PyCFunction)(void (*)(void))from_dataframe,
     METH_FASTCALL | METH_KEYWORDS, from_dataframe_doc},
    {NULL},
};
