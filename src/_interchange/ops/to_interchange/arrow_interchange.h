/* dfbuffer: the interface of arrow_interchange.c: the described Arrow import
 * behind dfbuffer.to_interchange (dfb_arrow_ix_*, which ixview.c builds its
 * typed view from) and _arrow_import, its Python view as dicts (for tests).
 */
#ifndef DFBUFFER_ARROW_INTERCHANGE_H
#define DFBUFFER_ARROW_INTERCHANGE_H

#include "common.h"
#include "args.h"
#include "arrow_internal.h"

/* One Arrow import described for to_interchange,
   what _arrow_import and ixview.c's _ixview_import both build from. */
typedef struct {
    arrow_import imp;
    ref_list refs;  /* everything the descriptions made */
    uint8_t *skip;  /* skip[c]: column c is pandas' index, left out */
    int is_table;   /* top level "+s": the children are the columns */
    int64_t ncols;  /* columns of the schema */
    int64_t nkept;  /* of them not skipped */
    int allow_copy; /* string views decoded (else refused) */
} dfb_arrow_ix;

/* One chunk of one column of a dfb_arrow_ix. */
typedef struct {
    int64_t length;
    dfb_column col, dict; /* when error is NULL; dict for dictionaries */
    PyObject *error;      /* strong: the exception to raise on use */
    PyObject *dict_error; /* strong: the same for the dictionary only */
} dfb_arrow_ix_chunk;

/* Makes one item of dfb_arrow_ix_rows from chunk `ch` (borrowed; its
   dict_error too) of kept column `k`: a new reference, or NULL with an
   exception set. */
typedef PyObject *(*dfb_arrow_ix_make_fn)(void *ctx,
                                          const dfb_arrow_ix_chunk *ch,
                                          Py_ssize_t k);

/* Module-level function of arrow_interchange.c (_arrow_import, the private
   helper of dfbuffer.to_interchange), added by module init. */
extern PyMethodDef dfb_arrow_interchange_methods[];

/* imports `obj` into `x` (accepting device data),
   validates a table and finds pandas' index columns.  Returns 0, or -1
   with an exception set; close `x` either way. */
int
dfb_arrow_ix_open(dfb_state *st, PyObject *obj, int allow_copy,
                  dfb_arrow_ix *x);

/* the arguments (obj, allow_copy=True) of module
   function `module`.<spec's name> parsed (spec: its dfb_argspec, from
   args.h) and `obj` opened into `x` as dfb_arrow_ix_open does (allow_copy
   in x->allow_copy; *st set).  Returns 0, or -1 with an exception set;
   close `x` either way. */
int
dfb_arrow_ix_open_args(PyObject *module, const dfb_argspec *spec,
                       PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, dfb_state **st, dfb_arrow_ix *x);

/* returns the schema of column `c` (borrowed). */
const struct ArrowSchema *
dfb_arrow_ix_schema(const dfb_arrow_ix *x, int64_t c);

/* returns the format string (new reference) a column
   of schema `s` is presented under: "U" for string views when `decode`,
   else its own; NULL with an exception set. */
PyObject *
dfb_arrow_ix_format(const struct ArrowSchema *s, int decode);

/* describes every chunk of every kept column of `x`
   (a column that cannot be described here, NotImplementedError or
   RuntimeError, gets ch->error instead) and returns a new list (one per
   chunk) of lists (one per kept column) of what `make(ctx, ...)` made
   of them, or NULL with an exception set. */
PyObject *
dfb_arrow_ix_rows(dfb_state *st, dfb_arrow_ix *x, dfb_arrow_ix_make_fn make,
                  void *ctx);

/* releases everything `x` holds (Buffers made over
   its memory keep it alive).  Cannot fail. */
void
dfb_arrow_ix_close(dfb_arrow_ix *x);

#endif /* DFBUFFER_ARROW_INTERCHANGE_H */
