/* dfbuffer: the one argument parser of the module functions (args.c) and
 * the parsers of their shared options.
 *
 * Errors are consistent: TypeError for a wrong type or a wrong call (too
 * many positional arguments, an unknown or repeated keyword, a missing
 * required argument), ValueError for a value of the right type that is not
 * allowed (a str that names no choice, a negative count).
 */
#ifndef DFBUFFER_ARGS_H
#define DFBUFFER_ARGS_H

#include "common.h"

/* The parameters of one function. */
/* The `nulls=` argument of the converters. */
typedef enum {
    DFB_NULLS_MASK = 0,
    DFB_NULLS_FILL = 1,
    DFB_NULLS_RAISE = 2
} dfb_nulls_mode;

typedef struct {
    const char *func;         /* its name, for messages */
    const char *const *names; /* every parameter, NULL-terminated */
    int npos;                 /* the first npos may be given positionally */
    int nreq;                 /* the first nreq are required */
} dfb_argspec;

/* Matches a METH_FASTCALL | METH_KEYWORDS call against `spec` and stores
   borrowed values in out[i] for names[i] (NULL when not given; the caller
   zeroes `out`).  `fast` (NULL, or one entry per name, NULL entries
   allowed) holds the names interned, compared by identity before the
   string compare.  Returns 0, or -1 with TypeError. */
int
dfb_parse_args(const dfb_argspec *spec, PyObject *const *fast,
               PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               PyObject **out);

/* Parses string option `o` named `what` (NULL: *out untouched, the
   caller's default) against `choices` (NULL-terminated) into the index of
   the matching choice.  Returns 0, or -1 with TypeError (not a str) or
   ValueError (no such choice), each naming the choices. */
int
dfb_parse_choice(PyObject *o, const char *what, const char *const *choices,
                 int *out);

/* nulls= ("mask", "fill", "raise"; NULL: "mask").  Returns 0, or -1 with
   TypeError / ValueError (dfb_parse_choice). */
int
dfb_parse_nulls(PyObject *o, dfb_nulls_mode *out);

/* A flag (allow_copy=, readonly=, ...): any object's truth value; NULL
   leaves *out (the default).  Returns 0, or -1 with the exception of its
   __bool__. */
int
dfb_parse_flag(PyObject *o, int *out);

/* An element count (None or NULL -> -1): an int, not a bool.  Returns 0,
   or -1 with TypeError (not an int), ValueError (negative) or
   OverflowError. */
int
dfb_parse_count(PyObject *o, const char *what, int64_t *out);

/* The items of sequence argument `o` as a tuple of our own (`o` itself
   when it is a tuple): converting an item may run code that changes a
   caller's list, so none is walked in place.  Returns a new reference, or
   NULL with TypeError `msg` (not a sequence) or another error set. */
PyObject *
dfb_parse_items(PyObject *o, const char *msg);

#endif /* DFBUFFER_ARGS_H */
