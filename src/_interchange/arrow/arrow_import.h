/* dfbuffer: the interface of arrow_import.c: Arrow import: a PyCapsule
 * producer's schema and arrays moved into holders, and validated before any
 * buffer is read.
 */
#ifndef DFBUFFER_ARROW_IMPORT_H
#define DFBUFFER_ARROW_IMPORT_H

#include "common.h"
#include "arrow_internal.h"

/* The spec of dfbuffer.arrow_array, the GC-tracked holder of one imported
   ArrowArray (module.c makes the type into st->arrow_holder_type). */
extern PyType_Spec dfb_arrow_holder_spec;

/* Appends a new holder (of imp->st's holder type).  Returns its (released)
   array to be filled, or NULL with MemoryError. */
struct ArrowArray *
dfb_arrow_import_add(arrow_import *imp);

/* Returns 1 if `obj` speaks the Arrow PyCapsule interface
   (__arrow_c_array__ or __arrow_c_stream__), 0 if not, -1 on error. */
int
dfb_arrow_is_producer(PyObject *obj);

/* Imports `obj` (preferring __arrow_c_array__, else __arrow_c_stream__)
   into `imp` (zeroed by the caller; clear it with import_clear even on
   failure).  Returns 0 with a schema that has a format, or -1 with
   TypeError when obj is no producer, ValueError when the schema has no
   format, or the import's own error. */
int
dfb_arrow_import_producer(dfb_state *st, PyObject *obj, arrow_import *imp);

/* Returns 1 if the import's top level is a struct ("+s"): a table whose
   children are the columns. */
int
dfb_arrow_import_is_table(const arrow_import *imp);

/* Fills `nd` for column `c` of chunk `b` (the top array itself when not a
   table).  Returns 0, or -1 with ValueError (overflowing offsets). */
int
dfb_arrow_import_node(const arrow_import *imp, int is_table, Py_ssize_t b,
                      int64_t c, arrow_node *nd);

/* Returns 1 when the chunks `imp` holds make a group of a stream read
   group by group (to_matrix and from_dataframe of a stream): their rows
   times the columns times 8 bytes reach the group size; else 0.  Cannot
   fail. */
int
dfb_arrow_import_is_group(const arrow_import *imp);

/* Sets the group size (bytes) to `n` when n > 0 (the tests' small groups)
   and returns the size before.  Cannot fail. */
long long
dfb_arrow_group_bytes_swap(long long n);

/* Drops the chunks `imp` holds (their holders: each array is released
   when nothing else holds it), keeping the schema: imp->n becomes 0 and
   later chunks go in from the start.  May run the producer's release
   code; keeps any pending exception.  Cannot fail. */
void
dfb_arrow_import_drop_chunks(arrow_import *imp);

/* Releases everything `imp` holds (arrays live on in any Buffer made over
   them).  Cannot fail. */
void
dfb_arrow_import_clear(arrow_import *imp);

/* Moves the stream out of capsule `cap` (a new reference, released here;
   NULL: the __arrow_c_stream__ call failed) into `imp` (zeroed by the
   caller; clear it either way): its schema and, unless `accept` (NULL:
   always read) declines the schema, every chunk; the stream is released.
   Returns 0, 1 (declined), or -1 with an exception set. */
int
dfb_arrow_import_stream_capsule(PyObject *cap, arrow_import *imp,
                                dfb_arrow_accept_fn accept, void *ctx);

/* Moves every chunk of `stream` (a live stream moved in by the caller; the
   schema and chunks go into `imp`, zeroed by the caller) and releases the
   stream.  Returns 0, or -1 with an exception set (clear `imp` either
   way). */
int
dfb_arrow_import_stream_struct(struct ArrowArrayStream *stream,
                               arrow_import *imp);

/* Validates the top-level struct schema and arrays of a table import
   (dfb_arrow_check_table; the struct's bitmap is counted only on the
   CPU).  Returns 0, or -1 with ValueError / NotImplementedError set. */
int
dfb_arrow_validate_table(const arrow_import *imp);

#endif /* DFBUFFER_ARROW_IMPORT_H */
