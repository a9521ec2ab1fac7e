/* dfbuffer: the interface of schema.c: reading an Arrow schema without its
 * data.
 */
#ifndef DFBUFFER_SCHEMA_H
#define DFBUFFER_SCHEMA_H

#include "common.h"

/* Marks in `skip` (n_children bytes, zeroed by the caller) the children of
   struct schema `s` that its "pandas" metadata lists in "index_columns"
   (pandas' index stored as columns).  Returns the number marked (0 when
   there is no such metadata or it cannot be read), or -1 with an
   exception set (MemoryError only). */
int
dfb_arrow_index_columns(const struct ArrowSchema *s, uint8_t *skip);

/* Module-level functions of schema.c (the private helper _arrow_schema),
   added by module init. */
extern PyMethodDef dfb_schema_methods[];

/* the parsed "index_columns" of the "pandas" metadata of schema
   `s` (new reference; Py_None when there is none or it is unreadable), or
   NULL with MemoryError. */
PyObject *
dfb_arrow_pandas_index(const struct ArrowSchema *s);

#endif /* DFBUFFER_SCHEMA_H */
