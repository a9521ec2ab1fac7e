/* dfbuffer: the interface of convert_functions.c: the module functions
 * buffer_to_ndarray, column_to_ndarray and from_dataframe (their argument
 * parsing and dispatch to the interchange walk, the Arrow converters or the
 * pandas fast path).
 */
#ifndef DFBUFFER_CONVERT_FUNCTIONS_H
#define DFBUFFER_CONVERT_FUNCTIONS_H

#include "common.h"

/* Module-level functions of convert_functions.c (buffer_to_ndarray,
   column_to_ndarray, from_dataframe), added by module init. */
extern PyMethodDef dfb_convert_methods[];

#endif /* DFBUFFER_CONVERT_FUNCTIONS_H */
