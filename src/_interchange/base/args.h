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

/* The `nulls=` argument of the converters. */
typedef enum {
    DFB_NULLS_MASK = 0,
    DFB_NULLS_FILL = 1,
    DFB_NULLS_RAISE = 2
} dfb_nulls_mode;

/* The conversion options of one call, parsed once by the argument parser
   (dfb_parse_opts) and passed by pointer.  A converter never changes the
   caller's struct: one that needs other options for a part (the
   categories of codes) converts it with a copy. */
typedef struct {
    dfb_nulls_mode nulls;  /* nulls= */
    int always_mask;       /* nulls="always_mask": a MaskedArray even
                              without nulls (nulls is then MASK) */
    int categorical_codes; /* categorical="codes" */
    int stringdtype;       /* strings="stringdtype" */
    int structs_flatten;   /* structs="flatten" (Arrow) */
    int decimal_float;     /* decimals="float64" */
    int skip_unsupported;  /* on_unsupported="skip" */
    int copy;              /* copy=: -1 None (copy where needed), 0 False
                              (raise where a copy is needed), 1 True
                              (always fresh writable memory) */
    int period_ordinal;    /* period="ordinal": a pandas Period column as
                              its int64 ordinals (default "object":
                              pandas.Period objects) */
} dfb_opts;

/* The options of a call that gives none: nulls="mask", the defaults. */
#define DFB_OPTS_INIT {DFB_NULLS_MASK, 0, 0, 0, 0, 0, 0, -1, 0}

/* DFB_OPTS_INIT, for the internal conversions that take the defaults (a
   dictionary's codes, a nested node's values). */
extern const dfb_opts dfb_opts_default;

/* The parameters of one function. */
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

/* Parses string option `o` named `what` of function `func` (NULL: *out
   untouched, the caller's default) against `choices` (NULL-terminated)
   into the index of the matching choice.  Returns 0, or -1 with TypeError
   (not a str) or ValueError (no such choice), each naming the function,
   the keyword and the choices. */
int
dfb_parse_choice(const char *func, PyObject *o, const char *what,
                 const char *const *choices, int *out);

/* nulls= of function `func` ("mask", "fill", "raise", "always_mask";
   NULL: "mask"; the former spelling "nan" of "fill" with a
   DeprecationWarning) into out->nulls and out->always_mask.  Returns 0,
   or -1 with TypeError / ValueError (dfb_parse_choice) or the warning
   raised as an error. */
int
dfb_parse_nulls(const char *func, PyObject *o, dfb_opts *out);

/* A bool option `what` of function `func` (allow_copy=): True, False or
   NumPy's bool scalars (np.True_, np.False_); NULL leaves *out (the
   default).  Returns 0, or -1 with TypeError naming the function and the
   keyword (an int, a str, None: no truth value is guessed). */
int
dfb_parse_bool(const char *func, PyObject *o, const char *what, int *out);

/* The conversion options a function takes, each the borrowed argument
   (NULL: not given, or not taken by the function). */
typedef struct {
    const char *func;         /* the function, named in errors */
    PyObject *nulls;          /* nulls= */
    PyObject *categorical;    /* "decode", "codes" */
    PyObject *strings;        /* "object", "stringdtype" */
    PyObject *structs;        /* "object", "flatten" */
    PyObject *decimals;       /* "decimal", "float64" */
    PyObject *on_unsupported; /* "raise", "skip" */
    PyObject *copy;           /* None, False, True */
    PyObject *allow_copy;     /* the alias of copy: True is copy=None */
    PyObject *period;         /* "object", "ordinal" */
} dfb_opt_args;

/* Parses every option of `a` once into *out (DFB_OPTS_INIT for those not
   given).  copy= takes None, True or False, allow_copy= True or False
   (NumPy's bool scalars too, dfb_parse_bool); copy= and allow_copy=
   together raise TypeError.  Returns 0, or -1 with TypeError /
   ValueError naming a->func and the keyword, or a warning raised as an
   error. */
int
dfb_parse_opts(const dfb_opt_args *a, dfb_opts *out);

/* 0 when opts->copy is False (a copy raises CopyError), else 1: the
   allow_copy flag of the converters. */
static inline int
dfb_opts_allow_copy(const dfb_opts *opts)
{
    return opts->copy != 0;
}

/* Makes `kw` ("copy" or "allow_copy") the keyword this thread's copy
   errors name until the matching dfb_copy_keyword_leave; a converting
   entry point calls it with the keyword its caller gave.  Returns the
   previous keyword (NULL: none, "allow_copy" is named).  Cannot fail. */
const char *
dfb_copy_keyword_enter(const char *kw);

/* Restores the keyword `prev` that dfb_copy_keyword_enter returned.
   Cannot fail. */
void
dfb_copy_keyword_leave(const char *prev);

/* "copy" when this thread's current conversion was given copy=, else
   "allow_copy".  Cannot fail. */
const char *
dfb_copy_keyword(void);

/* Sets dfbuffer.CopyError (st->copy_error) with the message `format`
   (PyUnicode_FromFormat's) followed by ", which copy=False forbids" (or
   allow_copy=False, dfb_copy_keyword's).  Returns -1 (with CopyError, or
   another exception if the message could not be made). */
int
dfb_copy_error(dfb_state *st, const char *format, ...);

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
