/* dfbuffer: the interface of convert_binary.c: the binary kernel: binary,
 * large binary, binary view and fixed-size binary chunks to object arrays of
 * Python bytes.
 */
#ifndef DFBUFFER_CONVERT_BINARY_H
#define DFBUFFER_CONVERT_BINARY_H

#include "common.h"
#include "column.h"

/* binary (offsets, views or fixed widths) of validated
   chunk `c` to a 1-D object array of bytes (None where isnull[i]).
   Offsets go through core's checked reader, views through dfb_view_at.
   Returns a new reference, or NULL with ValueError (a span outside its
   buffer) / MemoryError set. */
PyObject *
dfb_bytes_to_object_array(const dfb_column *c, const uint8_t *isnull);

#endif /* DFBUFFER_CONVERT_BINARY_H */
