/* dfbuffer core: the error convention of the pure-C layer (no Python).
 *
 * A core function that can fail returns a dfb_code (DFB_OK = 0, else an
 * errno-style code saying what kind of failure) and, when given a non-NULL
 * dfb_error, writes a message into it.  The CPython layer turns the code
 * into the Python exception its caller documents (DFB_EOVERFLOW is an
 * OverflowError in one place and a ValueError in another), with the
 * message as its text.
 */
#ifndef DFBUFFER_CORE_H
#define DFBUFFER_CORE_H

typedef enum {
    DFB_OK = 0,
    DFB_EINVAL,    /* malformed input (bad offsets, unknown format) */
    DFB_EOVERFLOW, /* a size or an address does not fit */
    DFB_ENOTSUP    /* valid input dfbuffer does not support */
} dfb_code;

typedef struct {
    char message[256];
} dfb_error;

/* Evaluates `expr` (a dfb_code) once and returns it from the enclosing
   function unless it is DFB_OK. */
#define DFB_RETURN_NOT_OK(expr)    \
    do {                           \
        dfb_code dfb_rc_ = (expr); \
        if (dfb_rc_ != DFB_OK) {   \
            return dfb_rc_;        \
        }                          \
    } while (0)

/* Writes the printf-formatted message into err (truncated to fit; no-op if
   err is NULL) and returns `code`, so that callers can `return
   dfb_error_set(err, DFB_EINVAL, "...")`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
dfb_code
dfb_error_set(dfb_error *err, dfb_code code, const char *fmt, ...);

#endif /* DFBUFFER_CORE_H */
