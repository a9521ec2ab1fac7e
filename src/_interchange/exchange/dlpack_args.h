/* dfbuffer: the keyword parsers of Buffer.__dlpack__ (dlpack_args.c), used
 * by dlpack.c's export.  Each returns 0, or -1 with an exception set; the
 * contract of each is at its definition.
 */
#ifndef DFBUFFER_DLPACK_ARGS_H
#define DFBUFFER_DLPACK_ARGS_H

#include "common.h"

/* The keywords of one __dlpack__ call. */
typedef struct {
    PyObject *stream;      /* borrowed; NULL or None = not given */
    PyObject *max_version; /* borrowed */
    PyObject *dl_device;   /* borrowed */
    PyObject *copy;        /* borrowed */
} dfb_dlpack_args;

int
dfb_dlpack_parse_args(PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, dfb_dlpack_args *a);
int
dfb_dlpack_parse_max_version(PyObject *obj, int *versioned);
int
dfb_dlpack_parse_dl_device(PyObject *obj, DLDevice *out);
int
dfb_dlpack_parse_copy(PyObject *obj, int *out);
int
dfb_dlpack_check_stream(PyObject *stream, DLDeviceType t);

#endif /* DFBUFFER_DLPACK_ARGS_H */
