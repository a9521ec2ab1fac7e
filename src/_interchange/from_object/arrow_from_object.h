/* dfbuffer: the interface of arrow_from_object.c: the Arrow fallback of
 * Buffer.from_object: a Buffer over the values of a 1-D fixed-width Arrow
 * array, on the CPU or on a device (the device half of the PyCapsule
 * interface; nothing is read there).
 */
#ifndef DFBUFFER_ARROW_FROM_OBJECT_H
#define DFBUFFER_ARROW_FROM_OBJECT_H

#include "common.h"

/* Buffer.from_object fallback for objects with __arrow_c_array__ (or a
   one-chunk __arrow_c_stream__): returns a new read-only Buffer over the
   values of a 1-D fixed-width primitive Arrow array (elements [offset,
   offset + length); nulls, if any, are not masked), whose owner is the
   holder of the imported ArrowArray ("dfbuffer.arrow_array" capsule).
   `dtype` (NULL/None: the Arrow type's) may override the element type at
   equal itemsize.  NULL with NotImplementedError for other layouts
   (strings, bit-packed bools, dictionaries, nested), TypeError /
   ValueError for bad producers. */
PyObject *
dfb_arrow_buffer_from_object(dfb_state *st, PyObject *obj, PyObject *dtype);

#endif /* DFBUFFER_ARROW_FROM_OBJECT_H */
