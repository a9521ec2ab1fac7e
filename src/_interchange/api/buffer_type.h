/* dfbuffer: the interface of buffer_type.c: dfbuffer.Buffer: the heap type:
 * __new__, GC, dealloc, repr, attributes, and its method and slot tables,
 * which wire in the exports (dlpack.c, export_array.c, arrow_export.c,
 * arrow_device.c) and Buffer.from_object (protocols.c).
 */
#ifndef DFBUFFER_BUFFER_TYPE_H
#define DFBUFFER_BUFFER_TYPE_H

#include "common.h"

/* The spec of the Buffer type, for module init. */
extern PyType_Spec dfb_buffer_spec;

#endif /* DFBUFFER_BUFFER_TYPE_H */
