/* dfbuffer: the interface of str_objects.c: UTF-8 + offsets to Python str
 * objects.
 */
#ifndef DFBUFFER_STR_OBJECTS_H
#define DFBUFFER_STR_OBJECTS_H

#include "common.h"
#include "column.h"

/* strings.c */

/* Builds a 1-D object array of Python str (None where `isnull` is given
   and isnull[i] != 0) from the validated UTF8 / LARGE_UTF8 chunk `c`
   (Arrow-style offsets, any alignment, maybe byte-swapped).  The offsets
   are read through core's checked reader (reader.h): each once, and every
   non-null string checked where it is used (0 <= start <= end <= the data
   size), so offsets that change after validation cannot send it outside
   the data.  Returns a new reference, or NULL with ValueError (offsets out
   of range) / UnicodeDecodeError / MemoryError set. */
PyObject *
dfb_strings_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* Builds a 1-D object array of Python str (None where isnull[i]) from the
   validated STRING_VIEW chunk `c` (element offset c->offset, c->length
   elements), straight from the views, with the de-duplication of
   dfb_strings_to_object_array.  Returns a new reference, or NULL with
   ValueError (a view outside its buffers) / UnicodeDecodeError /
   MemoryError set. */
PyObject *
dfb_views_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* strings.c: the prefaulting arena allocator of the str converters for
   any large run of new small objects: installs it when `bytes` (their
   estimated size) is large, returning 1 (undo with
   dfb_objects_prefault_end(1)), else 0.  Cannot fail. */
int
dfb_objects_prefault_begin(int64_t bytes);
void
dfb_objects_prefault_end(int on);

#endif /* DFBUFFER_STR_OBJECTS_H */
