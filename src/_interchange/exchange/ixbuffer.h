/* dfbuffer: the interface of ixbuffer.c: THE reader of interchange-protocol
 * buffers (ptr, bufsize, __dlpack_device__), shared by Buffer.from_object and
 * the interchange walk, and the protocol int readers every importer uses.
 */
#ifndef DFBUFFER_IXBUFFER_H
#define DFBUFFER_IXBUFFER_H

#include "common.h"
#include "buffer.h"

/* converts a Python int to Py_ssize_t for field `what` of
   protocol `proto`.  Returns 0, or -1 with TypeError (not an int) or
   OverflowError set.  Negative values are allowed (strides); callers
   check signs. */
int
dfb_as_ssize(PyObject *o, const char *proto, const char *what,
             Py_ssize_t *out);

/* converts a non-negative Python int to a pointer.  Returns 0,
   or -1 with TypeError, ValueError (negative) or OverflowError set. */
int
dfb_as_pointer(PyObject *o, const char *proto, void **out);

/* converts a Python int to int64 for `what` (a uint64 beyond
   INT64_MAX keeps its bit pattern: a sentinel).  Returns 0, or -1 with
   TypeError (not an int) or OverflowError set. */
int
dfb_as_int64(PyObject *o, const char *what, int64_t *out);

/* THE reader of interchange-protocol buffers, shared by
   Buffer.from_object and the converters.  Reads ptr, bufsize and
   __dlpack_device__() of `obj` exactly once each (a dfbuffer.Buffer: from
   its struct, no Python code); `ptr_o` / `size_o` are values the caller
   already read (borrowed), or NULL to read them here.  ptr must be an int
   (not bool) >= 0 fitting a pointer, bufsize an int (not bool) >= 0, ptr 0
   only with bufsize 0, ptr + bufsize within the address space.  Any device
   is accepted (the caller decides).  Returns 0, or -1 with TypeError (not
   an interchange buffer, wrong types), ValueError or OverflowError set. */
int
dfb_read_interchange_buffer(dfb_state *st, PyObject *obj, PyObject *ptr_o,
                            PyObject *size_o, dfb_block *out);

#endif /* DFBUFFER_IXBUFFER_H */
