/* dfbuffer core: validation of imported Arrow structs (see arrow_check.h).
 */
#include "arrow_check.h"
#include "bitmap.h"
#include "checked.h"
#include "types.h"

#include <stddef.h>
#include <string.h>

int
dfb_arrow_wraps(const void *p, int64_t bytes)
{
    return p != NULL && (uintptr_t)p > UINTPTR_MAX - (uint64_t)bytes;
}

int64_t
dfb_arrow_expected_buffers(const dfb_format *f)
{
    return dfb_type_row_of(f->type)->n_buffers;
}

/* Checks that every buffer size node [offset, offset + length) of `a`
   implies (validity, values, offsets, views; its dictionary's at depth 0)
   is computable and wraps no address.  Sets *verified to 1 when the sizes
   were checked, 0 when the node has no buffers or cannot be checked here
   (unsupported format, bad buffer list: reported by dfb_arrow_check_node).
   Returns DFB_OK or DFB_EOVERFLOW / DFB_EINVAL with a message. */
static dfb_code
node_sizes(const struct ArrowSchema *s, const struct ArrowArray *a,
           int64_t offset, int64_t length, const char *name, int depth,
           int *verified, dfb_error *err)
{
    int64_t end, need = 0;
    dfb_format f;
    *verified = 0;
    if (s == NULL || a == NULL || s->format == NULL ||
        dfb_checked_add(offset, length, &end) < 0 || a->n_buffers < 0 ||
        (a->n_buffers > 0 && a->buffers == NULL) ||
        dfb_format_parse_arrow(s->format, &f) < 0) {
        return DFB_OK;
    }
    const dfb_type_row *row = dfb_type_row_of(f.type);
    int64_t nbuf = row->n_buffers;
    if (row->layout == DFB_LAYOUT_VIEWS ? a->n_buffers < nbuf
                                        : a->n_buffers != nbuf) {
        return DFB_OK;
    }
    const int64_t vbytes = end / 8 + (end % 8 != 0);
    switch (row->layout) {
        case DFB_LAYOUT_NONE:
            return DFB_OK; /* no buffers */
        case DFB_LAYOUT_BITS:
            need = vbytes;
            break;
        case DFB_LAYOUT_OFFSETS:
            if (end == INT64_MAX ||
                dfb_checked_mul(end + 1, row->offset_bytes, &need) < 0) {
                goto overflow;
            }
            break;
        case DFB_LAYOUT_VIEWS:
            if (dfb_checked_mul(end, row->offset_bytes, &need) < 0) {
                goto overflow;
            }
            break;
        default: {
            int isz = dfb_format_itemsize(&f);
            if (isz <= 0) {
                return DFB_OK;
            }
            if (dfb_checked_mul(end, isz, &need) < 0) {
                goto overflow;
            }
        }
    }
    if (dfb_arrow_wraps(a->buffers[0], vbytes) ||
        dfb_arrow_wraps(a->buffers[1], need)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': a buffer of offset + length %lld "
                             "reaches beyond the address space",
                             name, (long long)end);
    }
    if (depth == 0 && s->dictionary != NULL && a->dictionary != NULL) {
        int dv;
        DFB_RETURN_NOT_OK(
            node_sizes(s->dictionary, a->dictionary, a->dictionary->offset,
                       a->dictionary->length, name, 1, &dv, err));
    }
    *verified = 1;
    return DFB_OK;
overflow:
    return dfb_error_set(err, DFB_EOVERFLOW,
                         "column '%s': the buffer size for offset + length "
                         "%lld overflows",
                         name, (long long)end);
}

dfb_code
dfb_arrow_check_node(const struct ArrowSchema *s, const struct ArrowArray *a,
                     int64_t offset, int64_t length, const char *name,
                     dfb_format *f, int64_t *end, dfb_error *err)
{
    if (s->format == NULL) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': schema has no format", name);
    }
    if (a->release == NULL) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': the Arrow array was released",
                             name);
    }
    if (a->length < 0 || a->offset < 0 || offset < 0 || length < 0 ||
        dfb_checked_add(offset, length, end) < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': negative or overflowing length "
                             "%lld / offset %lld",
                             name, (long long)length, (long long)offset);
    }
    if (a->null_count < -1 || a->null_count > a->length) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': null_count %lld is outside [-1, "
                             "length %lld]",
                             name, (long long)a->null_count,
                             (long long)a->length);
    }
    if (a->n_buffers < 0 || (a->n_buffers > 0 && a->buffers == NULL)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': bad buffer list (n_buffers %lld)",
                             name, (long long)a->n_buffers);
    }
    if (a->n_children < 0 || s->n_children < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': a negative number of children "
                             "(%lld; its schema %lld)",
                             name, (long long)a->n_children,
                             (long long)s->n_children);
    }
    if (dfb_format_parse_arrow(s->format, f) < 0) {
        return dfb_error_set(err, DFB_ENOTSUP,
                             "column '%s': Arrow format '%s' is not supported",
                             name, s->format);
    }
    if ((s->dictionary != NULL) != (a->dictionary != NULL)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': schema and array disagree about "
                             "the dictionary",
                             name);
    }
    const int64_t nch =
        dfb_type_row_of(f->type)->layout == DFB_LAYOUT_RUN_END ? 2 : 0;
    if (nch > 0 && (s->n_children != nch || a->n_children != nch)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': format '%s' has %lld children, "
                             "got %lld (schema %lld)",
                             name, s->format, (long long)nch,
                             (long long)a->n_children,
                             (long long)s->n_children);
    }
    if (nch == 0 && (s->n_children != 0 || a->n_children != 0)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': format '%s' has no children, got "
                             "%lld (schema %lld)",
                             name, s->format, (long long)a->n_children,
                             (long long)s->n_children);
    }
    if (s->dictionary != NULL && f->type != DFB_T_INT &&
        f->type != DFB_T_UINT) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': dictionary index format '%s' is "
                             "not an integer type",
                             name, s->format);
    }
    const int variadic = dfb_type_row_of(f->type)->layout == DFB_LAYOUT_VIEWS;
    int64_t nbuf = dfb_arrow_expected_buffers(f);
    /* a null array may carry the one (ignored) validity buffer that
       polars and older writers export */
    const int legacy_null = f->type == DFB_T_NULL && a->n_buffers == 1;
    if (variadic ? a->n_buffers < nbuf
                 : a->n_buffers != nbuf && !legacy_null) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': an Arrow array of format '%s' has "
                             "%s%lld buffers, got %lld",
                             name, s->format, variadic ? "at least " : "",
                             (long long)nbuf, (long long)a->n_buffers);
    }
    int verified;
    DFB_RETURN_NOT_OK(
        node_sizes(s, a, offset, length, name, 0, &verified, err));
    if (f->type != DFB_T_NULL && a->n_buffers > 0 && a->buffers[0] == NULL &&
        a->null_count > 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': null_count %lld but no validity "
                             "bitmap",
                             name, (long long)a->null_count);
    }
    /* a fixed-width (or bit-packed) values buffer must be there when it
       holds anything; a string's data size is in its offsets */
    if (*end > 0 && a->n_buffers > 1 && a->buffers[1] == NULL &&
        (f->type == DFB_T_BOOL_BIT || dfb_format_itemsize(f) > 0)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "column '%s': a data buffer of format '%s' is "
                             "NULL but length + offset is %lld",
                             name, s->format, (long long)*end);
    }
    return DFB_OK;
}

/* Checks one struct array `a` of table schema `s` (whose children were
   checked).  Returns DFB_OK or an error code with a message. */
static dfb_code
check_struct_array(const struct ArrowSchema *s, const struct ArrowArray *a,
                   int may_read, dfb_error *err)
{
    int64_t end;
    if (a->length < 0 || a->offset < 0 ||
        dfb_checked_add(a->offset, a->length, &end) < 0) {
        return dfb_error_set(err, DFB_EINVAL,
                             "struct array with negative or overflowing "
                             "length %lld / offset %lld",
                             (long long)a->length, (long long)a->offset);
    }
    if (a->null_count < -1 || a->null_count > a->length) {
        return dfb_error_set(err, DFB_EINVAL,
                             "struct array: null_count %lld is outside [-1, "
                             "length %lld]",
                             (long long)a->null_count, (long long)a->length);
    }
    if (a->n_children != s->n_children ||
        (a->n_children > 0 && a->children == NULL)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "struct array has %lld children, its schema "
                             "%lld",
                             (long long)a->n_children,
                             (long long)s->n_children);
    }
    if (a->n_buffers != 1 || a->buffers == NULL) {
        return dfb_error_set(err, DFB_EINVAL,
                             "struct array must have 1 buffer, got %lld",
                             (long long)a->n_buffers);
    }
    /* the children (their sizes included) before the struct's own bitmap
       is read: a length no child can have is a lie whose bitmap must not
       be scanned, and a length no child vouches for (no child with
       buffers whose sizes could be checked) is not scanned either */
    int verified = 0;
    for (int64_t c = 0; c < a->n_children; c++) {
        const struct ArrowArray *ch = a->children[c];
        if (ch == NULL) {
            return dfb_error_set(err, DFB_EINVAL, "struct child %lld is NULL",
                                 (long long)c);
        }
        if (ch->length < end) {
            return dfb_error_set(err, DFB_EINVAL,
                                 "struct child %lld has length %lld, fewer "
                                 "than the struct's offset + length %lld",
                                 (long long)c, (long long)ch->length,
                                 (long long)end);
        }
        int64_t choff;
        if (dfb_checked_add(ch->offset, a->offset, &choff) < 0) {
            continue; /* the column's own check reports it */
        }
        const char *nm = s->children[c]->name;
        int v;
        DFB_RETURN_NOT_OK(node_sizes(s->children[c], ch, choff, a->length,
                                     nm ? nm : "", 0, &v, err));
        verified |= v;
    }
    const uint8_t *bits = a->buffers[0];
    int64_t nulls = a->null_count;
    if (bits == NULL) {
        if (nulls > 0) {
            return dfb_error_set(err, DFB_EINVAL,
                                 "struct array has nulls but no validity "
                                 "bitmap");
        }
        return DFB_OK;
    }
    if (nulls == 0) {
        return DFB_OK;
    }
    if (!may_read) {
        return dfb_error_set(err, DFB_ENOTSUP,
                             "a device struct array with a validity bitmap "
                             "(null rows, or an unknown null count) cannot "
                             "be presented as a table");
    }
    if (nulls < 0 && !verified) {
        return DFB_OK; /* unknown and uncheckable: no column is convertible */
    }
    if (dfb_arrow_wraps(bits, end / 8 + (end % 8 != 0))) {
        return dfb_error_set(err, DFB_EINVAL,
                             "the struct's validity bitmap reaches beyond the "
                             "address space");
    }
    if (dfb_bitmap_count_zeros(bits, a->offset, a->length) > 0) {
        return dfb_error_set(err, DFB_ENOTSUP,
                             "top-level struct arrays with null rows are not "
                             "supported as tables");
    }
    return DFB_OK;
}

dfb_code
dfb_arrow_check_table(const struct ArrowSchema *s,
                      struct ArrowArray *const *arrays, int64_t n,
                      int may_read, dfb_error *err)
{
    if (s->n_children < 0 || (s->n_children > 0 && s->children == NULL)) {
        return dfb_error_set(err, DFB_EINVAL,
                             "struct schema with a bad children list");
    }
    for (int64_t c = 0; c < s->n_children; c++) {
        if (s->children[c] == NULL || s->children[c]->format == NULL) {
            return dfb_error_set(err, DFB_EINVAL,
                                 "struct schema child %lld is NULL or has no "
                                 "format",
                                 (long long)c);
        }
    }
    for (int64_t b = 0; b < n; b++) {
        DFB_RETURN_NOT_OK(check_struct_array(s, arrays[b], may_read, err));
    }
    return DFB_OK;
}
