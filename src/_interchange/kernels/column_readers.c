/* dfbuffer: core's checked readers of offsets and codes (src/core/reader.h)
 * set up over a chunk's memory, and the errors the converters raise when
 * a value read through them is out of range.
 */
#include "common.h"
#include "model.h"
#include "types.h"
#include "kernels.h"

/* Turns a failed reader init into ValueError (NotImplementedError for an
   unsupported width).  Returns -1. */
static int
init_error(dfb_code rc, const dfb_error *err)
{
    PyErr_SetString(
        rc == DFB_ENOTSUP ? PyExc_NotImplementedError : PyExc_ValueError,
        err->message);
    return -1;
}

int
dfb_column_offsets(const dfb_column *c, dfb_offsets *o)
{
    dfb_error err;
    const int width = dfb_type_row_of(c->fmt.type)->offset_bytes;
    /* an empty column may come without offsets: nothing is read then */
    const int64_t count = c->length > 0 ? c->length + 1 : 0;
    dfb_code rc =
        dfb_offsets_init(o, c->offsets.ptr, c->offsets.size, width,
                         c->offsets_swapped, count > 0 ? c->offset : 0, count,
                         c->data.ptr != NULL ? c->data.size : 0, &err);
    return rc == DFB_OK ? 0 : init_error(rc, &err);
}

int
dfb_column_codes(const dfb_column *c, int64_t ncats, dfb_codes *r)
{
    dfb_error err;
    const int64_t count = c->length;
    dfb_code rc = dfb_codes_init(
        r, c->data.ptr, c->data.size, c->index.bits / 8,
        c->index.type != DFB_T_UINT, dfb_is_swapped(c->index.byteorder),
        count > 0 ? c->offset : 0, count, ncats, &err);
    return rc == DFB_OK ? 0 : init_error(rc, &err);
}

PyObject *
dfb_bad_span_error(int64_t i, int64_t start, int64_t end, int64_t limit)
{
    PyErr_Format(PyExc_ValueError,
                 "string %lld has offsets [%lld, %lld) outside the %lld-byte "
                 "data buffer (or decreasing): the offsets changed after "
                 "they were validated, or are corrupt",
                 (long long)i, (long long)start, (long long)end,
                 (long long)limit);
    return NULL;
}

PyObject *
dfb_bad_code_error(int64_t i, int64_t code, int64_t ncats)
{
    PyErr_Format(PyExc_ValueError,
                 "categorical code %lld at row %lld is out of range for "
                 "%lld categories",
                 (long long)code, (long long)i, (long long)ncats);
    return NULL;
}
