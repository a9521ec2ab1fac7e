/* dfbuffer: the interface of convert_uuid.c: the uuid kernel: 16-byte values
 * of the arrow.uuid extension (the type table's DFB_CONV_UUID) to object
 * arrays of uuid.UUID.
 */
#ifndef DFBUFFER_CONVERT_UUID_H
#define DFBUFFER_CONVERT_UUID_H

#include "common.h"
#include "column.h"

/* The 16-byte fixed-size binary values of validated chunk `c` to a 1-D
   object array of uuid.UUID (as UUID(bytes=...) makes them; None where
   isnull[i]).  Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_uuids_to_object_array(const dfb_column *c, const uint8_t *isnull);

#endif /* DFBUFFER_CONVERT_UUID_H */
