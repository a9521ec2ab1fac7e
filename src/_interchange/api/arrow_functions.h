/* dfbuffer: the interface of arrow_functions.c: the test-only module functions
 * _arrow_to_ndarray, _arrow_from_dataframe and _arrow_buffer (the Arrow
 * converters and the from_object fallback, callable from Python).
 */
#ifndef DFBUFFER_ARROW_FUNCTIONS_H
#define DFBUFFER_ARROW_FUNCTIONS_H

#include "common.h"

/* Module-level functions of arrow_functions.c (the test-only
   _arrow_to_ndarray, _arrow_from_dataframe, _arrow_buffer), added by module
   init. */
extern PyMethodDef dfb_arrow_methods[];

#endif /* DFBUFFER_ARROW_FUNCTIONS_H */
