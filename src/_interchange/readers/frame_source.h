/* dfbuffer: the frame-source table, the one place that decides how a frame
 * is read, for every function that reads one (from_dataframe and to_matrix
 * in C; schema, to_arrow and to_interchange through the private
 * _frame_source of convert_functions.c), and the snapshot a caller that
 * reads a frame more than once reads instead.
 */
#ifndef DFBUFFER_FRAME_SOURCE_H
#define DFBUFFER_FRAME_SOURCE_H

#include "common.h"

/* The kinds of frame source. */
typedef enum {
    DFB_SRC_NONE = 0,    /* nothing dfbuffer reads (TypeError) */
    DFB_SRC_PANDAS,      /* a pandas DataFrame, or pandas' interchange
                            object over one: the frame, from its blocks */
    DFB_SRC_ARROW,       /* an Arrow PyCapsule producer: stream, array or
                            their device counterparts */
    DFB_SRC_INTERCHANGE, /* an object with __dataframe__, or an
                            interchange DataFrame */
    DFB_SRC_MAPPING,     /* a mapping of column names to 1-D arrays,
                            Buffers or columns */
    DFB_SRC_SCHEMA,      /* only __arrow_c_schema__: a schema, no data
                            (schema() reads it; the others refuse it) */
    DFB_SRC_COUNT        /* the number of kinds: the size of an operation
                            table indexed by kind */
} dfb_frame_kind;

/* What dfb_frame_source_of found. */
typedef struct {
    dfb_frame_kind kind;
    PyObject *frame; /* strong (NULL for DFB_SRC_NONE): what to read, the
                        pandas frame behind pandas' interchange object or
                        of a pandas Series, the interchange DataFrame
                        (obj.__dataframe__()), or obj itself (the native
                        object of a narwhals wrapper): callers read this,
                        never obj */
    int allow_copy;  /* the caller's, cleared when the object forbids
                        copies (pandas' interchange object) */
} dfb_frame_source;

/* The name of a kind ("pandas", "arrow", "interchange", "mapping",
   "schema", "none").  Cannot fail. */
const char *
dfb_frame_kind_name(dfb_frame_kind kind);

/* A new tuple of the names of the table's rows, in the order they are
   asked ("pandas", "arrow", ...): the keys of every Python operation table
   (dfbuffer._sources).  NULL with MemoryError. */
PyObject *
dfb_frame_kind_names(void);

/* Asks the rows of the frame-source table in order (pandas, Arrow
   producer, interchange, mapping, schema-only), of the native object a
   narwhals frame or Series wraps, of `obj` itself otherwise, and fills
   *out from the first that matches (DFB_SRC_NONE when none does; the caller
   then raises dfb_not_a_frame_error).  `allow_copy` is passed to
   __dataframe__.  Returns 0, or -1 with an exception set (out->frame
   NULL). */
int
dfb_frame_source_of(dfb_state *st, PyObject *obj, int allow_copy,
                    dfb_frame_source *out);

/* For a narwhals DataFrame, LazyFrame or Series (any of its namespaces:
   narwhals, stable.v1, stable.v2; narwhals already imported), a new
   reference to the native object it wraps (`obj.to_native()`), read as
   itself: the same answer as for the native object, and no detour through
   the wrapper's Arrow export.  NULL without an exception for anything
   else, NULL with one on error. */
PyObject *
dfb_narwhals_native(PyObject *obj);
/* Replaces src->frame, as dfb_frame_source_of gave it, by what it held
   when read once, for a caller that reads it more than once: a pandas
   frame by a frame over its manager read once (dfb_pd_frame_pin), a
   mapping by a new dict of its items taken in one pass
   (dfb_mapping_snapshot); other kinds stay as they are.  Returns 0, or -1
   with an exception set (src->frame then NULL). */
int
dfb_frame_source_pin(dfb_frame_source *src);

/* A new dict of the items of mapping `obj` taken in one pass: an exact
   dict copied (PyDict_Copy, under the dict's lock on free-threaded
   CPython), any other mapping's items() read once (TypeError for an item
   that is not a (key, value) pair).  NULL with an exception set. */
PyObject *
dfb_mapping_snapshot(PyObject *obj);

/* Returns 1 if `obj` is a mapping (a dict, or a collections.abc.Mapping)
   that the converting functions read as a frame of named columns, 0 if
   not, -1 with an exception set. */
int
dfb_is_mapping(PyObject *obj);

/* Sets the TypeError of function `func` for `obj`, which is no frame it
   reads; a lazy frame (an object with .collect, polars' or narwhals'
   LazyFrame) is told to be collected first (an error of reading its
   .collect other than AttributeError is kept instead).  Returns NULL. */
PyObject *
dfb_not_a_frame_error(const char *func, PyObject *obj);

/* What to do instead, for `obj` that no function reads as a frame: a
   static string starting ": " (a list of rows, an ndarray, None, an
   iterator), or "" for any other object.  Cannot fail. */
const char *
dfb_not_a_frame_hint(PyObject *obj);

/* Adds the type _FrameOperation (an operation of the table for the Python
   functions: one callable per row, called with the source the table read)
   to module `m`.  Returns 0, or -1 with an exception set. */
int
dfb_frame_op_init(PyObject *m);

#endif /* DFBUFFER_FRAME_SOURCE_H */
