/* dfbuffer: _ixview_slice and _ixview_concat of the to_interchange view:
 * one chunk re-based to a slice, and chunks joined into new memory (string
 * offsets through core's checked reader; dictionary codes mapped to a
 * joined dictionary).
 */
#include "common.h"
#include "state.h"
#include "model.h"
#include "arrow.h"
#include "outward.h"
#include "args.h"
#include "bitmap.h"
#include "format.h"
#include "offsets.h"
#include "mem.h"
#include "reader.h"
#include "types.h"
#include "bits.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* _ixview_slice                                                        */
/* ------------------------------------------------------------------ */

PyDoc_STRVAR(ixview_slice_doc,
             "_ixview_slice(chunk, start, length, allow_copy=True, /)\n--\n\n"
             "A new _IxChunk viewing elements [start, start + length) of\n"
             "`chunk`, re-based like _ixview_import's (no copy but of a\n"
             "bitmap at an odd bit offset when allow_copy); the null count\n"
             "is recounted (None for device memory), and a chunk without\n"
             "nulls drops its validity.");

/* _ixview_slice(chunk, start, length, allow_copy=True): see the
   docstring.  Returns a new _IxChunk or NULL with TypeError / ValueError
   set. */
static PyObject *
ixview_slice(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
             PyObject *kwnames)
{
    static const char *const kw[] = {"chunk", "start", "length", "allow_copy",
                                     NULL};
    static const dfb_argspec spec = {"_ixview_slice", kw, 4, 3};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    int allow_copy = 1;
    int64_t start, length;
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0 ||
        dfb_parse_flag(a[3], &allow_copy) < 0) {
        return NULL;
    }
    long long v[2];
    for (int i = 0; i < 2; i++) {
        if (PyBool_Check(a[i + 1])) {
            PyErr_SetString(PyExc_TypeError,
                            "_ixview_slice: start and length must be ints");
            return NULL;
        }
        PyObject *idx = PyNumber_Index(a[i + 1]);
        if (idx == NULL) {
            return NULL;
        }
        v[i] = PyLong_AsLongLong(idx);
        Py_DECREF(idx);
        if (v[i] == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    start = v[0];
    length = v[1];
    PyObject *obj = a[0];
    dfb_state *st = dfb_state_from_module(module);
    ixchunk c;
    if (dfb_ixv_read_chunk(st, obj, &c) < 0) {
        return NULL;
    }
    if (start < 0 || length < 0 || start > c.length ||
        length > c.length - start) {
        PyErr_Format(PyExc_ValueError,
                     "slice [%lld, %lld + %lld) is outside the chunk's %lld "
                     "elements",
                     (long long)start, (long long)start, (long long)length,
                     (long long)c.length);
        return NULL;
    }
    if (c.error != NULL) {
        return dfb_ixv_make_chunk(st, length, 0, PyLong_FromLong(0),
                                  Py_NewRef(Py_None), Py_NewRef(Py_None),
                                  Py_NewRef(Py_None), Py_NewRef(Py_None),
                                  Py_NewRef(c.error), Py_NewRef(c.format));
    }
    int64_t off = c.offset + start;
    PyObject *nulls;
    const DfbBuffer *validity = c.validity;
    if (validity != NULL && !dfb_ixv_on_host(validity)) {
        nulls = Py_NewRef(Py_None); /* not counted on the host */
    }
    else if (validity != NULL) {
        if (dfb_ixv_check_bits(validity, off + length) < 0) {
            return NULL;
        }
        int64_t zeros =
            dfb_count_zero_bits((const uint8_t *)validity->ptr, off, length);
        nulls = PyLong_FromLongLong(zeros);
        if (zeros == 0) {
            validity = NULL;
        }
    }
    else {
        nulls = PyLong_FromLong(0);
    }
    if (nulls == NULL) {
        return NULL;
    }
    rebased r;
    if (dfb_ixv_rebase(st, &c, validity, off, length, allow_copy, &r) < 0) {
        Py_DECREF(nulls);
        return NULL;
    }
    return dfb_ixv_make_chunk(st, length, r.offset, nulls, r.validity,
                              r.offsets, r.data,
                              Py_NewRef(c.dictionary ? c.dictionary : Py_None),
                              Py_NewRef(Py_None), Py_NewRef(c.format));
}

/* ------------------------------------------------------------------ */
/* _ixview_concat                                                       */
/* ------------------------------------------------------------------ */

/* Sets bits [pos, pos + n) of `bits` to 1.  Cannot fail. */
static void
set_ones(uint8_t *bits, int64_t pos, int64_t n)
{
    int64_t i = pos, end = pos + n;
    for (; i < end && (i & 7); i++) {
        bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
    if (end - i >= 8) {
        dfb_memset(bits + (i >> 3), 0xff, (size_t)((end - i) / 8));
        i += 8 * ((end - i) / 8);
    }
    for (; i < end; i++) {
        bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
}

/* Stores code `v` (checked to fit by the caller) as element `i`.  Cannot
   fail. */
static void
store_code(char *p, int width, int64_t i, int64_t v)
{
    switch (width) {
        case 1: {
            uint8_t x = (uint8_t)v;
            memcpy(p + i, &x, 1);
            break;
        }
        case 2: {
            uint16_t x = (uint16_t)v;
            memcpy(p + 2 * i, &x, 2);
            break;
        }
        case 4: {
            uint32_t x = (uint32_t)v;
            memcpy(p + 4 * i, &x, 4);
            break;
        }
        default: {
            uint64_t x = (uint64_t)v;
            memcpy(p + 8 * i, &x, 8);
        }
    }
}

/* Reads `maps_obj` (a sequence of `n` int64 arrays, one per chunk) into
   maps[] (new references).  Returns 0, or -1 with an exception set (maps
   read so far stay in maps[] for the caller to release). */
static int
read_maps(PyObject *maps_obj, Py_ssize_t n, PyObject **maps)
{
    PyObject *mlist = dfb_parse_items(maps_obj, "maps must be a sequence");
    if (mlist == NULL) {
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(mlist) != n) {
        PyErr_Format(PyExc_ValueError, "%zd maps for %zd chunks",
                     PySequence_Fast_GET_SIZE(mlist), n);
        Py_DECREF(mlist);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        maps[i] = PyArray_FROM_OTF(PySequence_Fast_GET_ITEM(mlist, i),
                                   NPY_INT64, NPY_ARRAY_IN_ARRAY);
        if (maps[i] == NULL || PyArray_NDIM((PyArrayObject *)maps[i]) != 1) {
            if (maps[i] != NULL) {
                PyErr_SetString(PyExc_ValueError, "each map must be 1-D");
            }
            Py_DECREF(mlist);
            return -1;
        }
    }
    Py_DECREF(mlist);
    return 0;
}

/* Returns a new Buffer of the bits of the `n` checked chunks `cs` joined
   (`total` values): their validity bitmaps (`values` 0; a chunk without
   one is all valid) or their bit-packed values (`values` 1).  NULL with
   MemoryError set. */
static PyObject *
join_bits(dfb_state *st, const ixchunk *cs, Py_ssize_t n, int64_t total,
          int values)
{
    uint8_t *bits;
    int64_t nb = total / 8 + (total % 8 != 0);
    PyObject *arr = dfb_ixv_new_bytes(nb, &bits);
    if (arr == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0, pos = 0; i < n; pos += cs[i].length, i++) {
        const DfbBuffer *b = values ? cs[i].data : cs[i].validity;
        if (b != NULL) {
            dfb_ixv_copy_bits((const uint8_t *)b->ptr, cs[i].offset,
                              cs[i].length, bits, pos);
        }
        else {
            set_ones(bits, pos, cs[i].length);
        }
    }
    return dfb_ixv_buffer_over(st, arr, nb, NULL);
}

/* Maps the codes of chunk `c`, copied to d[pos...], through its map `m`
   (null slots get 0), in place; the copied codes are read back through
   core's checked reader.  Returns 0, or -1 with ValueError (a code outside
   the map, or a joined code that does not fit format `fmt`). */
static int
remap_codes(char *d, int w, int is_signed, int64_t pos, const ixchunk *c,
            PyArrayObject *m, const char *fmt)
{
    dfb_codes rd;
    const int64_t *mp = PyArray_DATA(m);
    int64_t msize = PyArray_DIM(m, 0);
    int64_t limit =
        is_signed
            ? (int64_t)((UINT64_C(1) << (8 * w - 1)) - 1)
            : (w == 8 ? INT64_MAX : (int64_t)((UINT64_C(1) << (8 * w)) - 1));
    /* bounded: total < INT64_MAX / 16 (check_chunk) */
    if (dfb_codes_init(&rd, d + pos * w, c->length * w, w, is_signed, 0, 0,
                       c->length, msize, NULL) != DFB_OK) {
        PyErr_SetString(PyExc_ValueError,
                        "dictionary codes of an unsupported width");
        return -1;
    }
    for (int64_t j = 0; j < c->length; j++) {
        int64_t v = 0;
        int valid =
            c->validity == NULL ||
            ((((const uint8_t *)c->validity->ptr)[(c->offset + j) >> 3] >>
              ((c->offset + j) & 7)) &
             1);
        if (valid && msize > 0) {
            int64_t code;
            if (dfb_codes_get(&rd, j, &code) != DFB_OK) {
                PyErr_Format(PyExc_ValueError,
                             "dictionary code %lld out of range [0, %lld)",
                             (long long)code, (long long)msize);
                return -1;
            }
            v = mp[code];
            if (v < 0 || v > limit) {
                PyErr_Format(PyExc_ValueError,
                             "joined dictionary code %lld does not fit "
                             "format '%s'",
                             (long long)v, fmt);
                return -1;
            }
        }
        store_code(d, w, pos + j, v);
    }
    return 0;
}

/* Returns a new Buffer of the fixed-width values of the `n` checked chunks
   `cs` joined (`total` values of layout `lay`), dictionary codes mapped
   through `maps` (one per chunk) when not NULL; or NULL with an exception
   set (remap_codes' ValueError, MemoryError). */
static PyObject *
join_fixed(dfb_state *st, const ixchunk *cs, Py_ssize_t n, int64_t total,
           const layout *lay, PyObject *const *maps, const char *fmt)
{
    int w = lay->width;
    char *d;
    /* bounded: total < INT64_MAX / 16 (check_chunk) */
    PyObject *arr = dfb_ixv_new_bytes(total * w, (uint8_t **)&d);
    if (arr == NULL) {
        return NULL;
    }
    int is_signed = lay->f.type == DFB_T_INT;
    int64_t pos = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const ixchunk *c = &cs[i];
        if (c->length == 0) {
            continue;
        }
        /* bounded: total < INT64_MAX / 16 (check_chunk) */
        dfb_memcpy(d + pos * w, c->data->ptr + c->offset * w,
                   (size_t)(c->length * w));
        if (maps != NULL && remap_codes(d, w, is_signed, pos, c,
                                        (PyArrayObject *)maps[i], fmt) < 0) {
            Py_DECREF(arr);
            return NULL;
        }
        pos += c->length;
    }
    PyArray_Descr *descr = NULL;
    for (Py_ssize_t i = 0; i < n && descr == NULL; i++) {
        if (cs[i].data != NULL) {
            descr = cs[i].data->dtype;
            Py_INCREF(descr);
        }
    }
    if (descr == NULL && (descr = dfb_arrow_stored_descr(&lay->f)) == NULL) {
        Py_DECREF(arr);
        return NULL;
    }
    /* bounded: total < INT64_MAX / 16 (check_chunk) */
    PyObject *data = dfb_ixv_buffer_over(st, arr, total * w, descr);
    Py_DECREF(descr);
    return data;
}

/* Reads chunk `o` (the i-th to join) into `c` and checks it against the
   joined format `fmt` (layout `lay`) before anything is copied: host
   memory, buffer sizes, string offsets (through core's reader); adds its
   nulls to *nulls and its string bytes to *nbytes_str.  `total`: the
   values of the chunks before it.  Returns 0, or -1 with an exception set.
*/
static int
check_chunk(dfb_state *st, PyObject *o, Py_ssize_t i, ixchunk *c,
            const layout *lay, const char *fmt, int64_t total, int64_t *nulls,
            int64_t *nbytes_str)
{
    if (dfb_ixv_read_chunk(st, o, c) < 0) {
        return -1;
    }
    if (c->length > INT64_MAX / 16 - total) {
        /* sizes below are (total + 1) * 8 at most */
        PyErr_SetString(PyExc_ValueError, "the joined chunks are too long");
        return -1;
    }
    if (c->error != NULL) {
        dfb_ixv_raise_error(c->error);
        return -1;
    }
    if (strcmp(c->fmt, fmt) != 0) {
        PyErr_Format(PyExc_ValueError, "chunk %zd has format '%s', not '%s'",
                     i, c->fmt, fmt);
        return -1;
    }
    const DfbBuffer *bufs[3] = {c->validity, c->offsets, c->data};
    for (int k = 0; k < 3; k++) {
        if (bufs[k] != NULL &&
            dfb_buffer_require_host(bufs[k], "joining chunks") < 0) {
            return -1;
        }
    }
    int64_t end = c->offset + c->length;
    if (c->validity != NULL) {
        if (dfb_ixv_check_bits(c->validity, end) < 0) {
            return -1;
        }
        *nulls += dfb_count_zero_bits((const uint8_t *)c->validity->ptr,
                                      c->offset, c->length);
    }
    if (c->length > 0 && c->data == NULL && lay->kind != L_NONE &&
        !(lay->kind == L_STRINGS)) {
        PyErr_Format(PyExc_ValueError, "chunk %zd has no data buffer", i);
        return -1;
    }
    if (lay->kind == L_BITS && c->data != NULL &&
        dfb_ixv_check_bits(c->data, end) < 0) {
        return -1;
    }
    if (lay->kind == L_FIXED && c->data != NULL &&
        (int64_t)c->data->bufsize / lay->width < end) {
        PyErr_Format(PyExc_ValueError,
                     "chunk %zd: a data Buffer of %zd bytes is too small "
                     "for %lld elements",
                     i, c->data->bufsize, (long long)end);
        return -1;
    }
    if (lay->kind == L_STRINGS) {
        int64_t first = 0, last = 0;
        dfb_error err;
        if (c->offsets == NULL ||
            (int64_t)c->offsets->bufsize / lay->width < end + 1) {
            PyErr_Format(PyExc_ValueError,
                         "chunk %zd: the offsets Buffer is missing or "
                         "too small",
                         i);
            return -1;
        }
        if (dfb_offsets_validate(c->offsets->ptr, lay->width, 0, c->offset,
                                 c->offset, &first, NULL, &err) != DFB_OK ||
            dfb_offsets_validate(c->offsets->ptr, lay->width, 0, c->offset,
                                 end, &last, NULL, &err) != DFB_OK) {
            PyErr_Format(PyExc_ValueError, "chunk %zd: %s", i, err.message);
            return -1;
        }
        if (last > 0 &&
            (c->data == NULL || last > (int64_t)c->data->bufsize)) {
            PyErr_Format(PyExc_ValueError,
                         "chunk %zd: string offsets reach byte %lld of a "
                         "shorter data buffer",
                         i, (long long)last);
            return -1;
        }
        if (last - first > PY_SSIZE_T_MAX - *nbytes_str) {
            PyErr_SetString(PyExc_ValueError,
                            "the joined string data is too large");
            return -1;
        }
        *nbytes_str += last - first;
    }
    return 0;
}

/* Joins the strings of the `n` checked chunks `cs` (`total` values,
   `nbytes_str` bytes, offsets `w` bytes wide): sets *offsets to a new
   Buffer of the joined offsets and returns a new Buffer of the bytes; the
   offsets are read again through core's checked reader, each once.
   Returns NULL with an exception set (*offsets then NULL) on failure. */
static PyObject *
join_strings(dfb_state *st, const ixchunk *cs, Py_ssize_t n, int64_t total,
             int w, int64_t nbytes_str, PyObject **offsets)
{
    *offsets = NULL;
    if (w == 4 && nbytes_str > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError,
                        "joined string data exceeds int32 offsets");
        return NULL;
    }
    uint8_t *o, *d;
    PyObject *oarr = dfb_ixv_new_bytes((total + 1) * w, &o);
    if (oarr == NULL) {
        return NULL;
    }
    PyObject *darr = dfb_ixv_new_bytes(nbytes_str, &d);
    if (darr == NULL) {
        Py_DECREF(oarr);
        return NULL;
    }
    int64_t pos = 0, k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* the offsets read again, through core's checked reader:
           each once, every span inside the chunk's data and the
           data made */
        const DfbBuffer *db = cs[i].data;
        dfb_offsets ro;
        dfb_error err;
        if (dfb_offsets_init(
                &ro, cs[i].offsets->ptr, (int64_t)cs[i].offsets->bufsize, w, 0,
                cs[i].offset, cs[i].length + 1,
                db != NULL ? (int64_t)db->bufsize : 0, &err) != DFB_OK) {
            Py_DECREF(oarr);
            Py_DECREF(darr);
            PyErr_SetString(PyExc_ValueError, err.message);
            return NULL;
        }
        int64_t prev = dfb_offsets_load(&ro, 0);
        for (int64_t j = 0; j < cs[i].length; j++) {
            int64_t v;
            if (dfb_offsets_next(&ro, j, prev, &v) != DFB_OK ||
                v - prev > nbytes_str - pos) {
                Py_DECREF(oarr);
                Py_DECREF(darr);
                PyErr_SetString(PyExc_ValueError,
                                "string offsets changed while they "
                                "were joined");
                return NULL;
            }
            dfb_memcpy(d + pos, db->ptr + prev, (size_t)(v - prev));
            pos += v - prev;
            prev = v;
            k++;
            if (w == 4) {
                int32_t x = (int32_t)pos;
                memcpy(o + 4 * k, &x, 4);
            }
            else {
                memcpy(o + 8 * k, &pos, 8);
            }
        }
    }
    PyArray_Descr *od = PyArray_DescrFromType(w == 4 ? NPY_INT32 : NPY_INT64);
    *offsets = dfb_ixv_buffer_over(st, oarr, (total + 1) * w, od);
    Py_DECREF(od);
    if (*offsets == NULL) {
        Py_DECREF(darr);
        return NULL;
    }
    return dfb_ixv_buffer_over(st, darr, nbytes_str, NULL);
}

PyDoc_STRVAR(
    ixview_concat_doc,
    "_ixview_concat(format, chunks, dictionary=None, maps=None)\n--\n\n"
    "A new _IxChunk joining `chunks` (host memory, all of Arrow format\n"
    "`format`) into new memory at offset 0; no chunks give an empty one.\n"
    "For dictionary codes, `maps` (one int64 array per chunk) maps each\n"
    "chunk's codes to the joined `dictionary` (an _IxChunk), null slots\n"
    "get code 0; a code outside its map raises ValueError.");

/* _ixview_concat(format, chunks, dictionary=None, maps=None): see the
   docstring.  Returns a new _IxChunk, or NULL with TypeError, ValueError,
   OverflowError, BufferError (device memory) or MemoryError set. */
static PyObject *
ixview_concat(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
              PyObject *kwnames)
{
    static const char *const kw[] = {"format", "chunks", "dictionary", "maps",
                                     NULL};
    static const dfb_argspec spec = {"_ixview_concat", kw, 4, 2};
    PyObject *a[4] = {NULL, NULL, NULL, NULL};
    if (dfb_parse_args(&spec, NULL, args, nargs, kwnames, a) < 0) {
        return NULL;
    }
    PyObject *format = a[0], *seq = a[1];
    PyObject *dictionary = a[2] ? a[2] : Py_None;
    PyObject *maps_obj = a[3] ? a[3] : Py_None;
    if (!PyUnicode_Check(format)) {
        PyErr_SetString(PyExc_TypeError,
                        "_ixview_concat: format must be a str");
        return NULL;
    }
    dfb_state *st = dfb_state_from_module(module);
    const char *fmt = PyUnicode_AsUTF8(format);
    layout lay;
    if (fmt == NULL || dfb_ixv_layout_of(fmt, &lay) < 0) {
        return NULL;
    }
    if (dictionary != Py_None &&
        !Py_IS_TYPE(dictionary, st->ixview_chunk_type)) {
        PyErr_SetString(PyExc_TypeError,
                        "dictionary must be an _IxChunk or None");
        return NULL;
    }
    PyObject *list = dfb_parse_items(seq, "chunks must be a sequence");
    if (list == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
    ixchunk *cs = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(ixchunk));
    PyObject **maps = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(PyObject *));
    PyObject *validity = NULL, *offsets = NULL, *data = NULL, *out = NULL;
    PyObject *dict_ref = NULL;
    if (cs == NULL || maps == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int is_codes = maps_obj != Py_None;
    if (is_codes) {
        if (lay.kind != L_FIXED ||
            (lay.f.type != DFB_T_INT && lay.f.type != DFB_T_UINT)) {
            PyErr_Format(PyExc_ValueError,
                         "maps need integer codes, not format '%s'", fmt);
            goto done;
        }
        if (read_maps(maps_obj, n, maps) < 0) {
            goto done;
        }
    }
    /* read and check every chunk before anything is copied */
    int64_t total = 0, nulls = 0, nbytes_str = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (check_chunk(st, PySequence_Fast_GET_ITEM(list, i), i, &cs[i], &lay,
                        fmt, total, &nulls, &nbytes_str) < 0) {
            goto done;
        }
        total += cs[i].length;
    }
    validity = nulls > 0 ? join_bits(st, cs, n, total, 0) : Py_NewRef(Py_None);
    if (validity == NULL) {
        goto done;
    }
    offsets = Py_NewRef(Py_None);
    switch (lay.kind) {
        case L_NONE:
            data = Py_NewRef(Py_None);
            break;
        case L_BITS:
            data = join_bits(st, cs, n, total, 1);
            break;
        case L_STRINGS:
            Py_CLEAR(offsets);
            data = join_strings(st, cs, n, total, lay.width, nbytes_str,
                                &offsets);
            break;
        case L_FIXED:
            data = join_fixed(st, cs, n, total, &lay, is_codes ? maps : NULL,
                              fmt);
            break;
    }
    if (data == NULL) {
        goto done;
    }
    dict_ref = Py_NewRef(dictionary);
    out = dfb_ixv_make_chunk(st, total, 0, PyLong_FromLongLong(nulls),
                             validity, offsets, data, dict_ref,
                             Py_NewRef(Py_None), Py_NewRef(format));
    validity = offsets = data = NULL; /* stolen */
done:
    Py_XDECREF(validity);
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    for (Py_ssize_t i = 0; maps != NULL && i < n; i++) {
        Py_XDECREF(maps[i]);
    }
    PyMem_Free(maps);
    PyMem_Free(cs);
    Py_DECREF(list);
    return out;
}

PyMethodDef dfb_ixview_join_methods[] = {
    {"_ixview_slice", (PyCFunction)(void (*)(void))ixview_slice,
     METH_FASTCALL | METH_KEYWORDS, ixview_slice_doc},
    {"_ixview_concat", (PyCFunction)(void (*)(void))ixview_concat,
     METH_FASTCALL | METH_KEYWORDS, ixview_concat_doc},
    {NULL, NULL, 0, NULL},
};
