/* dfbuffer: the interface of array_dunders.c: __arrow_array__ and __array__,
 * the two protocols whose producer hands over a Python array (a pyarrow array,
 * a NumPy ndarray) instead of describing its memory.
 */
#ifndef DFBUFFER_ARRAY_DUNDERS_H
#define DFBUFFER_ARRAY_DUNDERS_H

#include "common.h"

PyObject *
dfb_arrow_array_method_call(dfb_state *st, PyObject *obj);
PyObject *
dfb_import_arrow_array_method(dfb_state *st, PyObject *obj, PyObject *dtype);
PyObject *
dfb_array_method_call(dfb_state *st, PyObject *obj, int allow_copy,
                      int *shared);
PyObject *
dfb_import_array_method(dfb_state *st, PyObject *obj, PyObject *dtype,
                        int allow_copy);
PyObject *
dfb_array_method_column(dfb_state *st, PyObject *obj, int allow_copy,
                        const char *func);

/* Sets the ValueError of public function `func` for column `arr`, which
   is not 1-D: it names arr's shape.  Cannot fail. */
void
dfb_not_1d_error(const char *func, PyArrayObject *arr);

#endif /* DFBUFFER_ARRAY_DUNDERS_H */
