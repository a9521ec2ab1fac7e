/* dfbuffer: the interface of nested_dictionary.c: dictionary-encoded columns
 * whose values are nested (lists, structs, maps, fixed-size lists, unions) for
 * the nested converter (dfbuffer/nested.h): the dictionary converted once by
 * the walk, each row the value its code names (codes read only through core's
 * checked reader, reader.h), or with categorical="codes" the codes and the
 * converted dictionary as a CategoricalCodes.
 */
#ifndef DFBUFFER_NESTED_DICTIONARY_H
#define DFBUFFER_NESTED_DICTIONARY_H

#include "common.h"
#include "nested.h"

/* the node kernel of a dictionary of nested values:
   each row the value of the converted dictionary its code names (codes
   read through core's checked reader); a null code or a null value is a
   null row.  Same returns as the other kernels. */
int
dfb_nested_dictionary(const dfb_nested_ctx *cx, const arrow_node *nd,
                      dfb_nested_out *out);

/* categorical="codes" of column `c` (dfb_nested_dict_is) in context
   `cx` (its refs hold what the descriptions make): a CategoricalCodes of
   its codes (zero-copy for one chunk; `nulls` applied to them) and its
   converted dictionary (one for every chunk; NotImplementedError when the
   chunks' dictionaries differ).  Returns a new reference, or NULL with an
   exception. */
PyObject *
dfb_nested_dictionary_codes(const dfb_nested_ctx *cx, const arrow_import *imp,
                            int is_table, int64_t c, const dfb_opts *opts);

#endif /* DFBUFFER_NESTED_DICTIONARY_H */
