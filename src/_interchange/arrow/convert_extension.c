/* dfbuffer: Arrow's canonical extension types (the "ARROW:extension:name"
 * field metadata on a storage type).
 *
 * arrow.bool8 (int8 storage) converts as a zero-copy bool view;
 * arrow.uuid (16-byte fixed-size binary) as uuid.UUID objects (the type
 * table's result class of the extension, convert_uuid.c); arrow.json (a
 * string storage), arrow.opaque and unknown extensions as their storage
 * type.
 */
#include "common.h"
#include "arrow.h"
#include "types.h"

int
dfb_arrow_apply_extension(const struct ArrowSchema *s, dfb_column *col,
                          const char *name)
{
    const int x = dfb_metadata_extension(s->metadata, NULL, NULL);
    if (x < 0) {
        PyErr_Format(PyExc_ValueError,
                     "column '%s': Arrow metadata with a negative count or "
                     "length, or one beyond 2**31 - 1 bytes",
                     name);
        return -1;
    }
    if (!dfb_extension_applies((dfb_extension)x, &col->fmt)) {
        return 0; /* its values convert as their storage type */
    }
    col->ext = (dfb_extension)x; /* the table's result class (uuid) */
    if (x == DFB_EXT_BOOL8) {
        col->fmt.type = DFB_T_BOOL8;
        col->fmt.byteorder = '|';
    }
    return 0;
}
