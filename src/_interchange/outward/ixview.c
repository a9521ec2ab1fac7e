/* dfbuffer: the typed view of an Arrow import behind
 * dfbuffer.to_interchange (dfbuffer._arrow_interchange).
 *
 * _ixview_import imports a producer once (arrow_interchange.c's
 * dfb_arrow_ix_*: the Arrow import, validation and describer, called
 * directly; string views are copied to large strings there) and returns
 * struct sequences: an _IxField per column (name, formats, the interchange
 * dtypes of the column and its buffers) and an _IxChunk per column chunk
 * whose Buffers are already re-based to the chunk's first element: the
 * validity bitmap (and bool data) is copied to bit 0 when allow_copy and
 * the memory is on the host, else moved by whole bytes with the remaining
 * 0..7 bits in `offset`; string offsets and fixed-width data are moved to
 * the first element.  _ixview_slice re-bases a slice of a chunk the same
 * way (null count recounted), _ixview_concat joins chunks into new memory
 * and _ixview_values converts one chunk with the NumPy converters.  The
 * bit work is core's (bitmap.h) behind the GIL-releasing wrappers.  The
 * chunk helpers are in ixview_chunk.c, slicing and joining in
 * ixview_join.c.
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "outward.h"
#include "arrow.h"
#include "kernels.h"
#include "args.h"
#include "bitmap.h"
#include "format.h"
#include "offsets.h"
#include "mem.h"
#include "reader.h"
#include "types.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* The struct sequence types                                            */
/* ------------------------------------------------------------------ */

enum {
    F_NAME,
    F_FORMAT,
    F_DICTIONARY,
    F_ORDERED,
    F_NULLABLE,
    F_DTYPE,
    F_DATA_DTYPE,
    F_OFFSETS_DTYPE,
    F_COPY_ERROR,
    F_N
};

static PyStructSequence_Field field_fields[] = {
    {"name", "column name (str)"},
    {"format",
     "Arrow format of the column's buffers ('U' for string views copied to "
     "large strings; the codes' format for dictionaries)"},
    {"dictionary", "an _IxField for the dictionary's values, or None"},
    {"ordered", "dictionary-encoded with ordered categories (bool)"},
    {"nullable", "the Arrow field is nullable (bool)"},
    {"dtype",
     "interchange dtype (kind, bit_width, format, '=') of the column, or "
     "None when the protocol has none for the format"},
    {"data_dtype", "interchange dtype of the data buffer, or None"},
    {"offsets_dtype", "interchange dtype of the offsets buffer, or None"},
    {"copy_error",
     "None, or the CopyError message to raise under allow_copy=False: "
     "the buffers are a copy the import made (values decoded from run "
     "ends, string views copied to large strings)"},
    {NULL, NULL},
};

static PyStructSequence_Desc field_desc = {
    "dfbuffer._interchange._IxField",
    "One column of an Arrow import as dfbuffer.to_interchange presents it.",
    field_fields,
    F_N,
};

static PyStructSequence_Field chunk_fields[] = {
    {"length", "number of elements"},
    {"offset",
     "element offset into the buffers: 0, or the 0..7 bits a bitmap keeps "
     "when re-basing it would need a copy"},
    {"null_count", "number of nulls, or None when unknown (device data)"},
    {"validity", "the validity bitmap Buffer (None when no nulls)"},
    {"offsets", "the string offsets Buffer, or None"},
    {"data", "the data Buffer (values, bits, codes or UTF-8 bytes), or None"},
    {"dictionary", "an _IxChunk of the dictionary's values, or None"},
    {"error",
     "None, or the exception to raise when the chunk is used (a format the "
     "interchange protocol cannot serve)"},
    {"format", "Arrow format of the buffers"},
    {NULL, NULL},
};

static PyStructSequence_Desc chunk_desc = {
    "dfbuffer._interchange._IxChunk",
    "One column chunk of an Arrow import, with re-based Buffers.",
    chunk_fields,
    C_N,
};

/* Returns a new interchange dtype tuple (DtypeKind(kind), bits, fmt, "="),
   or NULL with an exception set. */
static PyObject *
dtype_tuple(dfb_state *st, int kind, int bits, const char *fmt)
{
    PyObject *k = dfb_enum_member(st->dtype_kind, kind);
    if (k == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Niss)", k, bits, fmt, "=");
}

/* ------------------------------------------------------------------ */
/* _IxField                                                             */
/* ------------------------------------------------------------------ */

/* The interchange protocol's DtypeKind values. */
enum {
    K_INT = 0,
    K_UINT = 1,
    K_FLOAT = 2,
    K_BOOL = 20,
    K_STRING = 21,
    K_DATETIME = 22,
    K_CATEGORICAL = 23
};

/* Returns a new interchange dtype tuple of a K_INT or K_UINT of `bits`
   bits, its format from the type table, or NULL with an exception set. */
static PyObject *
int_dtype(dfb_state *st, int kind, int bits)
{
    dfb_format f = {.type = kind == K_INT ? DFB_T_INT : DFB_T_UINT,
                    .bits = bits,
                    .byteorder = '='};
    char fmt[8];
    if (dfb_format_to_arrow(&f, fmt, sizeof(fmt)) < 0) {
        PyErr_Format(PyExc_SystemError, "no Arrow format for int%d", bits);
        return NULL;
    }
    return dtype_tuple(st, kind, bits, fmt);
}

/* Stores new references to the column dtype, data-buffer dtype and
   offsets dtype (Py_None where there is none) of a column of Arrow format
   `fmt`, dictionary-encoded if `is_dict`.  Returns 0, or -1 with an
   exception set (nothing stored). */
static int
field_dtypes(dfb_state *st, const char *fmt, int is_dict, PyObject **dtype,
             PyObject **data_dtype, PyObject **offsets_dtype)
{
    dfb_format f;
    int kind, bits;
    PyObject *dt = NULL, *ddt = NULL, *odt = NULL;
    int known = dfb_format_parse_arrow(fmt, &f) == 0 &&
                dfb_type_interchange(&f, &kind, &bits) == 0;
    if (!known) {
        *dtype = Py_NewRef(Py_None);
        *data_dtype = Py_NewRef(Py_None);
        *offsets_dtype = Py_NewRef(Py_None);
        return 0;
    }
    int codes = is_dict && (f.type == DFB_T_INT || f.type == DFB_T_UINT);
    dt = dtype_tuple(st, codes ? K_CATEGORICAL : kind, bits, fmt);
    const dfb_type_row *r = dfb_type_row_of(f.type);
    if (r->layout == DFB_LAYOUT_OFFSETS) {
        ddt = int_dtype(st, K_UINT, 8);
        odt = int_dtype(st, K_INT, r->offset_bytes * 8);
    }
    else if (r->layout == DFB_LAYOUT_VIEWS) {
        /* its chunks are copied to large strings (or raise) */
        ddt = dtype_tuple(st, kind, bits, fmt);
        odt = int_dtype(st, K_INT, 64);
    }
    else if (r->storage == 'i' && r->result != 'i') {
        /* dates, timestamps, durations: stored as plain integers */
        ddt = int_dtype(st, K_INT, bits == 32 ? 32 : 64);
    }
    else {
        ddt = dtype_tuple(st, kind, bits, fmt);
    }
    if (odt == NULL && ddt != NULL && dt != NULL &&
        r->layout != DFB_LAYOUT_OFFSETS && r->layout != DFB_LAYOUT_VIEWS) {
        odt = Py_NewRef(Py_None);
    }
    if (dt == NULL || ddt == NULL || odt == NULL) {
        Py_XDECREF(dt);
        Py_XDECREF(ddt);
        Py_XDECREF(odt);
        return -1;
    }
    *dtype = dt;
    *data_dtype = ddt;
    *offsets_dtype = odt;
    return 0;
}

/* Gives `field` (new, not shared yet) the dtypes of an arrow.bool8 column:
   the protocol's byte bools (BOOL, 8, "b", "=") for the column and its
   data.  Returns 0, or -1 with an exception set (`field` unchanged). */
static int
bool8_dtypes(dfb_state *st, PyObject *field)
{
    const char *b = dfb_type_arrow_format(DFB_T_BOOL_BIT);
    PyObject *dt = dtype_tuple(st, K_BOOL, 8, b);
    PyObject *ddt = dtype_tuple(st, K_BOOL, 8, b);
    if (dt == NULL || ddt == NULL) {
        Py_XDECREF(dt);
        Py_XDECREF(ddt);
        return -1;
    }
    Py_DECREF(PyStructSequence_GetItem(field, F_DTYPE));
    PyStructSequence_SetItem(field, F_DTYPE, dt);
    Py_DECREF(PyStructSequence_GetItem(field, F_DATA_DTYPE));
    PyStructSequence_SetItem(field, F_DATA_DTYPE, ddt);
    return 0;
}

/* Returns 1 when schema `s` is an arrow.bool8 column (int8 storage, not
   dictionary-encoded), else 0.  Cannot fail. */
static int
is_bool8(const struct ArrowSchema *s)
{
    dfb_format f;
    return s->dictionary == NULL &&
           dfb_format_parse_arrow(s->format, &f) == 0 && f.type == DFB_T_INT &&
           f.bits == 8 &&
           dfb_metadata_extension(s->metadata, NULL, NULL) == DFB_EXT_BOOL8;
}

/* Returns a new _IxField (name, fmt, dictionary field for `dict_fmt` or
   None, ordered, nullable, the dtypes), or NULL with an exception set.
   `name` and `fmt` are borrowed str objects; `dict_fmt` a str or None. */
static PyObject *
make_field(dfb_state *st, PyObject *name, PyObject *fmt, PyObject *dict_fmt,
           int ordered, int nullable)
{
    if (!PyUnicode_Check(name) || !PyUnicode_Check(fmt) ||
        (dict_fmt != Py_None && !PyUnicode_Check(dict_fmt))) {
        PyErr_SetString(PyExc_TypeError,
                        "a column description has no str "
                        "name / format");
        return NULL;
    }
    const char *f = PyUnicode_AsUTF8(fmt);
    if (f == NULL) {
        return NULL;
    }
    PyObject *dict = Py_None;
    if (dict_fmt != Py_None) {
        /* the categories carry the column's name, for its errors */
        dict = make_field(st, name, dict_fmt, Py_None, 0, 0);
        if (dict == NULL) {
            return NULL;
        }
    }
    else {
        Py_INCREF(dict);
    }
    PyObject *dt, *ddt, *odt;
    if (field_dtypes(st, f, dict_fmt != Py_None, &dt, &ddt, &odt) < 0) {
        Py_DECREF(dict);
        return NULL;
    }
    PyObject *field = PyStructSequence_New(st->ixview_field_type);
    if (field == NULL) {
        Py_DECREF(dict);
        Py_DECREF(dt);
        Py_DECREF(ddt);
        Py_DECREF(odt);
        return NULL;
    }
    PyStructSequence_SetItem(field, F_NAME, Py_NewRef(name));
    PyStructSequence_SetItem(field, F_FORMAT, Py_NewRef(fmt));
    PyStructSequence_SetItem(field, F_DICTIONARY, dict);
    PyStructSequence_SetItem(field, F_ORDERED, PyBool_FromLong(ordered));
    PyStructSequence_SetItem(field, F_NULLABLE, PyBool_FromLong(nullable));
    PyStructSequence_SetItem(field, F_DTYPE, dt);
    PyStructSequence_SetItem(field, F_DATA_DTYPE, ddt);
    PyStructSequence_SetItem(field, F_OFFSETS_DTYPE, odt);
    PyStructSequence_SetItem(field, F_COPY_ERROR, Py_NewRef(Py_None));
    /* CPython 3.11's PyStructSequence_New leaves it untracked: the
       collector would count its dictionary field as an outside reference */
    if (!PyObject_GC_IsTracked(field)) {
        PyObject_GC_Track(field);
    }
    return field;
}

/* ------------------------------------------------------------------ */
/* _ixview_import                                                       */
/* ------------------------------------------------------------------ */

/* Returns a new _IxChunk of described chunk `col` of column `name` (the
   Arrow format `fmt`, borrowed; its dictionary's `dict_fmt`, and
   `dict_error` when only the dictionary could not be described), re-based,
   or NULL with an exception set. */
static PyObject *
chunk_from_column(dfb_state *st, const dfb_column *col, PyObject *name,
                  PyObject *dict_error, PyObject *fmt, PyObject *dict_fmt,
                  int allow_copy)
{
    layout lay;
    int refused = 1;
    const char *fs = PyUnicode_AsUTF8(fmt);
    if (fs == NULL) {
        return NULL;
    }
    if (dfb_type_decodes_runs(col->fmt.type) ||
        dfb_arrow_format_type(fs) == DFB_T_RUN_END) {
        /* run-end encoded values that are not decoded to fixed widths:
           no interchange dtype, raised when used */
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%U': Arrow format '+r' (run-end encoded) of "
                     "these values has no interchange-protocol dtype",
                     name);
    }
    else if (col->fmt.type != DFB_T_DICTIONARY &&
             dfb_ixv_layout_of(fs, &lay) < 0) {
        /* a layout the protocol's buffers cannot describe (binary
           views): raised when used */
        PyErr_Clear();
        PyErr_Format(PyExc_NotImplementedError,
                     "column '%U': Arrow format '%U' has no "
                     "interchange-protocol dtype",
                     name, fmt);
    }
    else {
        refused = 0;
    }
    if (refused) {
        PyObject *err = dfb_err_take();
        PyObject *chunk = dfb_ixv_error_chunk(st, col->length, err, fmt);
        Py_DECREF(err);
        return chunk;
    }
    ixchunk c;
    memset(&c, 0, sizeof(c));
    c.length = col->length;
    c.offset = col->offset;
    c.format = fmt;
    c.fmt = PyUnicode_AsUTF8(fmt);
    if (c.fmt == NULL) {
        return NULL;
    }
    /* the describer's spans: 1-D Buffers, or no owner when absent */
    c.validity = (DfbBuffer *)col->validity.owner;
    c.offsets = (DfbBuffer *)col->offsets.owner;
    c.data = (DfbBuffer *)col->data.owner;
    PyObject *dchunk = NULL;
    if (col->fmt.type != DFB_T_DICTIONARY) {
        dchunk = Py_NewRef(Py_None);
    }
    else if (dict_error != NULL) {
        dchunk = dfb_ixv_error_chunk(st, col->categories->length, dict_error,
                                     dict_fmt);
    }
    else {
        dchunk = chunk_from_column(st, col->categories, name, NULL, dict_fmt,
                                   Py_None, allow_copy);
    }
    if (dchunk == NULL) {
        return NULL;
    }
    rebased r;
    if (dfb_ixv_rebase(st, &c, c.validity, c.offset, c.length, allow_copy,
                       &r) < 0) {
        Py_DECREF(dchunk);
        return NULL;
    }
    PyObject *nulls = col->null_count < 0
                          ? Py_NewRef(Py_None)
                          : PyLong_FromLongLong(col->null_count);
    return dfb_ixv_make_chunk(st, c.length, r.offset, nulls, r.validity,
                              r.offsets, r.data, dchunk, Py_NewRef(Py_None),
                              Py_NewRef(fmt));
}

PyDoc_STRVAR(
    ixview_import_doc,
    "_ixview_import(obj, allow_copy=True, /)\n--\n\n"
    "Private helper of dfbuffer.to_interchange: import an Arrow PyCapsule\n"
    "producer once.  Returns (fields, chunks): a tuple of _IxField (one per\n"
    "column) and a list (one per record batch) of lists (one per column) of\n"
    "_IxChunk whose Buffers are re-based to the chunk's first element (see\n"
    "_IxChunk.offset).  Columns the protocol cannot serve get a chunk with\n"
    "an `error` to raise when used.");

/* The format run-end encoded column `s` is served in: its values' format
   when the describer decodes them to fixed-width values (convert_run_end.c,
   values that convert as a view), else NULL.  Cannot fail. */
static const char *
decoded_runs_format(const struct ArrowSchema *s)
{
    dfb_format f;
    if (dfb_arrow_format_type(s->format) != DFB_T_RUN_END ||
        s->n_children != 2 || s->children == NULL || s->children[1] == NULL ||
        s->children[1]->format == NULL || s->children[1]->dictionary != NULL ||
        dfb_format_parse_arrow(s->children[1]->format, &f) < 0) {
        return NULL;
    }
    const dfb_type_row *r = dfb_type_row_of(f.type);
    return r->conv == DFB_CONV_VIEW && r->layout == DFB_LAYOUT_FIXED &&
                   !dfb_is_swapped(f.byteorder) && dfb_format_itemsize(&f) > 0
               ? s->children[1]->format
               : NULL;
}

/* Gives `field` (new, not shared yet) of column `name` of schema `s` its
   copy_error: the message allow_copy=False raises when the import serves
   a copy (run ends decoded: `runs`; string views).  Returns 0, or -1 with
   an exception set. */
static int
field_copy_error(PyObject *field, const struct ArrowSchema *s, PyObject *name,
                 int runs)
{
    PyObject *msg;
    if (runs) {
        msg = PyUnicode_FromFormat(
            "column '%U': its run-end encoded values "
            "are decoded, a copy, which "
            "allow_copy=False forbids",
            name);
    }
    else if (dfb_arrow_format_type(s->format) == DFB_T_STRING_VIEW) {
        msg = PyUnicode_FromFormat(
            "column '%U': string view ('vu') data "
            "must be copied to offsets + bytes, "
            "which allow_copy=False forbids",
            name);
    }
    else {
        msg = Py_NewRef(Py_None);
    }
    if (msg == NULL) {
        return -1;
    }
    Py_DECREF(PyStructSequence_GetItem(field, F_COPY_ERROR));
    PyStructSequence_SetItem(field, F_COPY_ERROR, msg);
    return 0;
}

/* Fills fields[k] and the format strings fmts[k] / dfmts[k] (new
   references) of kept column `c` of `x`.  Returns 0, or -1 with an
   exception set. */
static int
field_of(dfb_state *st, const dfb_arrow_ix *x, int64_t c, PyObject **field,
         PyObject **fmt, PyObject **dfmt)
{
    const struct ArrowSchema *s = dfb_arrow_ix_schema(x, c);
    const char *decoded = decoded_runs_format(s);
    *field = *dfmt = NULL;
    *fmt = decoded != NULL ? PyUnicode_FromString(decoded)
                           : dfb_arrow_ix_format(s, x->allow_copy);
    if (*fmt == NULL) {
        return -1;
    }
    *dfmt = s->dictionary != NULL && s->dictionary->format != NULL
                ? dfb_arrow_ix_format(s->dictionary, x->allow_copy)
                : Py_NewRef(Py_None);
    if (*dfmt == NULL) {
        return -1;
    }
    PyObject *name =
        PyUnicode_FromString(dfb_arrow_column_name(&x->imp, x->is_table, c));
    if (name == NULL) {
        return -1;
    }
    *field = make_field(st, name, *fmt, *dfmt,
                        (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0,
                        (s->flags & ARROW_FLAG_NULLABLE) != 0);
    if (*field != NULL &&
        ((is_bool8(s) && bool8_dtypes(st, *field) < 0) ||
         field_copy_error(*field, s, name, decoded != NULL) < 0)) {
        Py_CLEAR(*field);
    }
    Py_DECREF(name);
    return *field == NULL ? -1 : 0;
}

/* What chunk_of needs: the kept columns' formats and dictionary formats
   (tuples, borrowed). */
typedef struct {
    dfb_state *st;
    PyObject *fmts, *dfmts, *fields;
    int allow_copy;
} ix_ctx;

/* A dfb_arrow_ix_make_fn: the _IxChunk of `ch` of kept column `k`.
   Returns a new reference or NULL with an exception set. */
static PyObject *
chunk_of(void *ctx, const dfb_arrow_ix_chunk *ch, Py_ssize_t k)
{
    const ix_ctx *c = ctx;
    PyObject *fmt = PyTuple_GET_ITEM(c->fmts, k);
    if (ch->error != NULL) {
        return dfb_ixv_error_chunk(c->st, ch->length, ch->error, fmt);
    }
    /* values decoded from run ends are served whatever allow_copy (the
       describer decoded them): the view refuses them by the field's
       copy_error, so that __dataframe__(allow_copy=) can switch */
    PyObject *name =
        PyStructSequence_GetItem(PyTuple_GET_ITEM(c->fields, k), F_NAME);
    return chunk_from_column(c->st, &ch->col, name, ch->dict_error, fmt,
                             PyTuple_GET_ITEM(c->dfmts, k), c->allow_copy);
}

/* _ixview_import(obj, allow_copy=True): see the docstring.  Returns a new
   tuple or NULL with an exception set. */
static PyObject *
ixview_import(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    static const char *const kw[] = {"obj", "allow_copy", NULL};
    static const dfb_argspec spec = {"_ixview_import", kw, 2, 1};
    dfb_state *st;
    dfb_arrow_ix x;
    PyObject *fields = NULL, *chunks = NULL, *fmts = NULL, *dfmts = NULL;
    PyObject *result = NULL;
    if (dfb_arrow_ix_open_args(module, &spec, args, nargs, kwnames, &st, &x) <
        0) {
        goto done;
    }
    fields = PyTuple_New(x.nkept);
    fmts = PyTuple_New(x.nkept);
    dfmts = PyTuple_New(x.nkept);
    if (fields == NULL || fmts == NULL || dfmts == NULL) {
        goto done;
    }
    for (int64_t c = 0, k = 0; c < x.ncols; c++) {
        if (x.skip[c]) {
            continue;
        }
        PyObject *f, *fmt, *dfmt;
        int r = field_of(st, &x, c, &f, &fmt, &dfmt);
        /* the tuples own what was made, even on failure */
        PyTuple_SET_ITEM(fmts, k, fmt ? fmt : Py_NewRef(Py_None));
        PyTuple_SET_ITEM(dfmts, k, dfmt ? dfmt : Py_NewRef(Py_None));
        PyTuple_SET_ITEM(fields, k, f ? f : Py_NewRef(Py_None));
        k++;
        if (r < 0) {
            goto done;
        }
    }
    ix_ctx ctx = {st, fmts, dfmts, fields, x.allow_copy};
    chunks = dfb_arrow_ix_rows(st, &x, chunk_of, &ctx);
    if (chunks == NULL) {
        goto done;
    }
    result = PyTuple_Pack(2, fields, chunks);
done:
    Py_XDECREF(fields);
    Py_XDECREF(chunks);
    Py_XDECREF(fmts);
    Py_XDECREF(dfmts);
    dfb_arrow_ix_close(&x);
    return result;
}

/* ------------------------------------------------------------------ */
/* _ixview_values                                                       */
/* ------------------------------------------------------------------ */

/* Fills span `s` from Buffer `b` (NULL: absent).  Cannot fail. */
static void
span_of(dfb_span *s, const DfbBuffer *b)
{
    if (b == NULL) {
        memset(s, 0, sizeof(*s));
        return;
    }
    s->ptr = b->ptr;
    s->size = b->bufsize;
    s->owner = (PyObject *)b;
}

PyDoc_STRVAR(ixview_values_doc,
             "_ixview_values(chunk, /)\n--\n\n"
             "The values of one host _IxChunk as a NumPy array, through\n"
             "dfbuffer's converters (a MaskedArray where it has nulls;\n"
             "strings as objects, dates as datetime64[D]; dictionary codes\n"
             "as integers).");

/* _ixview_values(chunk): see the docstring.  Returns a new array or NULL
   with TypeError, ValueError, BufferError (device memory) or the
   converter's error. */
static PyObject *
ixview_values(PyObject *module, PyObject *obj)
{
    dfb_state *st = dfb_state_from_module(module);
    ixchunk c;
    if (dfb_ixv_read_chunk(st, obj, &c) < 0) {
        return NULL;
    }
    if (c.error != NULL) {
        return dfb_ixv_raise_error(c.error), NULL;
    }
    const DfbBuffer *bufs[3] = {c.validity, c.offsets, c.data};
    for (int k = 0; k < 3; k++) {
        if (bufs[k] != NULL &&
            dfb_buffer_require_host(bufs[k], "reading values") < 0) {
            return NULL;
        }
    }
    dfb_column col;
    memset(&col, 0, sizeof(col));
    if (dfb_format_parse_arrow(c.fmt, &col.fmt) < 0) {
        PyErr_Format(PyExc_NotImplementedError,
                     "Arrow format '%s' is not supported", c.fmt);
        return NULL;
    }
    col.length = c.length;
    col.offset = c.offset;
    col.null_count = -1; /* counted by the converter: a hand-made chunk's
                            field is not trusted */
    col.null_kind =
        c.validity != NULL ? DFB_NULL_USE_BITMASK : DFB_NULL_NON_NULLABLE;
    span_of(&col.data, c.data);
    span_of(&col.validity, c.validity);
    span_of(&col.offsets, c.offsets);
    if (dfb_column_validate(&col) < 0) {
        return NULL;
    }
    return dfb_columns_to_ndarray(st, &col, 1, &dfb_opts_default, 1);
}

/* ------------------------------------------------------------------ */
/* Module                                                               */
/* ------------------------------------------------------------------ */

static PyMethodDef ixview_methods[] = {
    {"_ixview_import", (PyCFunction)(void (*)(void))ixview_import,
     METH_FASTCALL | METH_KEYWORDS, ixview_import_doc},
    {"_ixview_values", ixview_values, METH_O, ixview_values_doc},
    {NULL, NULL, 0, NULL},
};

int
dfb_ixview_state_init(PyObject *m, dfb_state *st)
{
    st->ixview_field_type = PyStructSequence_NewType(&field_desc);
    if (st->ixview_field_type == NULL) {
        return -1;
    }
    st->ixview_chunk_type = PyStructSequence_NewType(&chunk_desc);
    if (st->ixview_chunk_type == NULL) {
        return -1;
    }
    if (PyModule_AddObjectRef(m, "_IxField",
                              (PyObject *)st->ixview_field_type) < 0 ||
        PyModule_AddObjectRef(m, "_IxChunk",
                              (PyObject *)st->ixview_chunk_type) < 0) {
        return -1;
    }
    if (PyModule_AddFunctions(m, ixview_methods) < 0) {
        return -1;
    }
    return PyModule_AddFunctions(m, dfb_ixview_join_methods);
}
