/* dfbuffer: to_matrix (matrix.c), one 2-D array from a frame. */
#ifndef DFBUFFER_MATRIX_H
#define DFBUFFER_MATRIX_H

#include "common.h"

/* Module-level functions of matrix.c (to_matrix), added by module init. */
extern PyMethodDef dfb_matrix_methods[];

#endif /* DFBUFFER_MATRIX_H */
