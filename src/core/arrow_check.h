/* dfbuffer core: validation of imported Arrow C data interface structs
 * (pure C, no Python).
 *
 * Arrow gives no buffer sizes: they follow from length + offset (and, for
 * strings, the offsets).  These checks run before any buffer of an
 * imported ArrowArray is read, for CPU and device imports alike; reading
 * the memory (the offsets, a struct's validity bitmap) is left to callers
 * that may, or asked for by `may_read`.
 */
#ifndef DFBUFFER_CORE_ARROW_CHECK_H
#define DFBUFFER_CORE_ARROW_CHECK_H

#include "checked.h"
#include "core.h"
#include "format.h"

#include <stdint.h>

/* The Arrow C data interface structs: the public pure-C header the C API's
   dfbuffer.h includes too. */
#include "dfbuffer/arrow_c_interface.h"

/* Returns 1 if `bytes` bytes from `p` would wrap the address space. */
int
dfb_arrow_wraps(const void *p, int64_t bytes);

/* Number of buffers a format has (string view: at least this many), or -1
   for formats without a fixed count here. */
int64_t
dfb_arrow_expected_buffers(const dfb_format *f);

/* Checks one column node, elements [offset, offset + length) of array `a`
   with schema `s`, before any of its buffers is read: schema format,
   not released, lengths and offsets, null_count in [-1, length], the
   buffer list, a supported format (DFB_ENOTSUP otherwise), schema and
   array agreeing about the dictionary, no children, integer dictionary
   indices, the buffer count, that every buffer size the node implies (its
   dictionary's included) is computable and wraps no address, a validity
   bitmap when null_count > 0, and a fixed-width or bit-packed values
   buffer when offset + length > 0.  Stores
   the parsed format in *f and offset + length in *end.  Returns DFB_OK,
   or DFB_EINVAL / DFB_EOVERFLOW / DFB_ENOTSUP with a message naming
   column `name`. */
dfb_code
dfb_arrow_check_node(const struct ArrowSchema *s, const struct ArrowArray *a,
                     int64_t offset, int64_t length, const char *name,
                     dfb_format *f, int64_t *end, dfb_error *err);

/* Checks the top-level struct ("+s") schema `s` and its `n` arrays of a
   table import: children lists, lengths, one buffer, every child present
   and long enough, the children's buffer sizes, and that no row is null.
   The struct's validity bitmap is counted only when `may_read` (a device
   struct with a bitmap and a non-zero null_count is refused instead).
   Returns DFB_OK, DFB_EINVAL / DFB_EOVERFLOW, or DFB_ENOTSUP (null rows),
   with a message. */
dfb_code
dfb_arrow_check_table(const struct ArrowSchema *s,
                      struct ArrowArray *const *arrays, int64_t n,
                      int may_read, dfb_error *err);

#endif /* DFBUFFER_CORE_ARROW_CHECK_H */
