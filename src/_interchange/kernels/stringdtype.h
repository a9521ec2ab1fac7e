/* dfbuffer: the interface of stringdtype.c: UTF-8 + offsets to NumPy
 * StringDType arrays, through NumPy's string C API
 * (NpyString_acquire_allocator / NpyString_pack / NpyString_pack_null, NumPy
 * >= 2.0): no Python str per element.
 */
#ifndef DFBUFFER_STRINGDTYPE_H
#define DFBUFFER_STRINGDTYPE_H

#include "common.h"
#include "column.h"

/* Builds a 1-D numpy StringDType(na_object=None) array from the validated
   UTF8 / LARGE_UTF8 chunk `c`, its offsets read and checked as
   dfb_strings_to_object_array reads them; null rows hold the dtype's
   na_object.  No Python str is made.  Returns a new reference, or NULL
   with ValueError (offsets out of range) / UnicodeDecodeError /
   MemoryError set. */
PyObject *
dfb_strings_to_stringdtype(const dfb_column *c, const uint8_t *isnull);

/* Builds a 1-D StringDType(na_object=None) array from the validated
   STRING_VIEW chunk `c`, straight from the views (null rows: na_object).
   Returns a new reference, or NULL with ValueError (a view outside its
   buffers) / UnicodeDecodeError / MemoryError set. */
PyObject *
dfb_views_to_stringdtype(const dfb_column *c, const uint8_t *isnull);

/* Decodes the validated categorical chunk `c`, whose categories are
   strings, into a StringDType(na_object=None) array (null rows: na_object).
   The categories' spans are read once (checked) into a table; each code is
   read once (checked).  Returns a new reference, or NULL with ValueError
   (code or category offsets out of range), UnicodeDecodeError or
   MemoryError set. */
PyObject *
dfb_stringdtype_take(const dfb_column *c, const uint8_t *isnull);

#endif /* DFBUFFER_STRINGDTYPE_H */
