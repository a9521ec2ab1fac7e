/* dfbuffer: the interface of readers/: one reader per frame source: the
 * frame-source table, the interchange walk, the Arrow converters.
 */
#ifndef DFBUFFER_READERS_H
#define DFBUFFER_READERS_H

#include "common.h"
#include "arrow.h"
#include "model.h"

/* ---- arrow_convert.c ---- */

/* Describes the selected columns of an Arrow PyCapsule producer (table,
   record batch, stream of them, or one array as one column) into `out`
   (zeroed by the caller; clear it always); `flatten` (structs="flatten"):
   a struct column's leaves instead, named `parent.child`, selected by
   their names or their structs'.  A column of pandas' "pandas.period"
   type (Period ordinals) raises TypeError naming it unless
   `period_ordinal` (period="ordinal").  With `skip`
   (on_unsupported="skip") such a column, and one of a type no reader takes
   (the NotImplementedError that names it), is left out instead.  Returns 0, or
   -1 with an exception set (messages name the column). */
int
dfb_arrow_describe_frame(dfb_state *st, PyObject *obj, PyObject *select,
                         int flatten, int period_ordinal, int skip,
                         dfb_frame *out);

/* dfb_arrow_describe_frame of an import already made (`imp`, its chunks
   validated here; held by `out->keep` after, so the caller may drop its
   own): the chunks read so far of a stream, one group at a time.  Returns
   0, or -1 with an exception set. */
int
dfb_arrow_describe_import(dfb_state *st, const arrow_import *imp,
                          PyObject *select, int flatten, int period_ordinal,
                          int skip, dfb_frame *out);

/* column_to_ndarray for an Arrow producer of one column (Array,
   ChunkedArray, Series, ...).  Returns a new reference or NULL with an
   exception set (NotImplementedError naming the format for unsupported
   types). */
PyObject *
dfb_arrow_column_to_ndarray(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                            int allow_copy);

/* from_dataframe for an Arrow producer of a table (RecordBatch, Table,
   DataFrame, stream): a dict name -> array (a column of pandas'
   "pandas.period" type as pandas.Period objects unless opts->
   period_ordinal, here and in every converter of this file).  Returns a new
   reference or NULL with an exception set. */
PyObject *
dfb_arrow_from_dataframe(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                         int allow_copy);

/* dfb_arrow_from_dataframe converting only the columns `sel` selects
   (NULL: all), in the order asked for (KeyError for an unknown name).
   With opts->structs_flatten, sel->names becomes the flattened names
   selected (a struct's name: its leaves), for dfb_colsel_finish. */
PyObject *
dfb_arrow_from_dataframe_cols(dfb_state *st, PyObject *obj,
                              const dfb_opts *opts, int allow_copy,
                              dfb_colsel *sel);

/* capi.c: converts an ArrowArray + ArrowSchema a C caller moves in (both
   marked released in the caller's structs on return, success or error;
   each release callback runs exactly once, now or when the last array
   viewing the memory goes): one column to an ndarray (as_dict 0; a
   struct array is one column of dicts, as column_to_ndarray), or a
   record batch / column to a dict name -> ndarray (as_dict 1).  Returns a
   new reference or NULL with ValueError (released or malformed input),
   NotImplementedError or RuntimeError set. */
PyObject *
dfb_arrow_from_c(dfb_state *st, struct ArrowArray *array,
                 struct ArrowSchema *schema, int as_dict, const dfb_opts *opts,
                 int allow_copy);

/* capi.c: from_dataframe on an ArrowArrayStream a C caller moves in (marked
   released in the caller's struct on return; released by dfbuffer once,
   after its last chunk was read): a new dict name -> ndarray, chunks
   concatenated, or NULL with an exception set. */
PyObject *
dfb_arrow_stream_from_c(dfb_state *st, struct ArrowArrayStream *stream,
                        const dfb_opts *opts, int allow_copy);

/* from_dataframe's dict name -> array for an import that
   is already made (pandas' index columns left out).  Returns a new
   reference or NULL with an exception set. */
PyObject *
dfb_arrow_import_dict(dfb_state *st, const arrow_import *imp,
                      const dfb_opts *opts, int allow_copy);

/* ---- frame_source.c ---- */

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

/* ---- ixwalk.c ---- */

/* Wraps interchange buffer `obj` in a new dfbuffer Buffer (owner = obj,
   u1, native INTERCHANGE, read-only unless obj is a writable
   dfbuffer.Buffer) and fills `span`; host memory only.  Returns the new
   Buffer, or NULL with an exception set (BufferError for device
   memory). */
PyObject *
dfb_ix_wrap_buffer(dfb_state *st, PyObject *obj, dfb_span *span);

/* Converts interchange column `col` (all its chunks).  Returns a new
   reference or NULL with an exception set. */
PyObject *
dfb_ix_column_to_ndarray(dfb_state *st, PyObject *col, const dfb_opts *opts,
                         int allow_copy);

/* Returns the interchange DataFrame of `obj` (new reference): obj itself
   when it has column_names and get_column, else obj.__dataframe__(
   allow_copy=...); NULL with an exception set, or NULL without one when
   `obj` is neither. */
PyObject *
dfb_ix_frame(dfb_state *st, PyObject *obj, int allow_copy);

/* Returns 1 if `obj` has attribute `name` (getattr, AttributeError -> 0),
   0 if not, -1 with an exception set. */
int
dfb_has_attr(PyObject *obj, PyObject *name);

/* Prefixes the message of the pending exception with column name `key`
   when its type is a plain ValueError / TypeError / RuntimeError /
   NotImplementedError / BufferError or st->copy_error (others are left
   alone); the original (a NotImplementedError's own cause when it has
   one) becomes the new one's __cause__.  Cannot fail. */
void
dfb_add_column_context(dfb_state *st, PyObject *key);

/* get_column() of an interchange DataFrame raised for column `key`: a
   ValueError, TypeError or NotImplementedError (how producers refuse a
   column the protocol cannot describe: pyarrow's ValueError for a list
   column) becomes NotImplementedError naming the column, the original as
   its __cause__, so on_unsupported="skip" drops that column; other
   exceptions are left alone.  Call with the exception set.  Cannot fail. */
void
dfb_column_refused(PyObject *key);

/* Describes the selected columns of interchange DataFrame (or __dataframe__
   producer) `obj` into `out` (zeroed by the caller; clear it always).
   With `skip` (on_unsupported="skip") a column of a type no reader takes
   (the NotImplementedError that names it) is left out.  Returns 0, 1 when
   `obj` is neither (no exception set), or -1 with an exception set whose
   message names the column. */
int
dfb_ix_describe_frame(dfb_state *st, PyObject *obj, PyObject *select, int skip,
                      dfb_frame *out);

/* The column rows of the table (frame_source.c): one column `col` as
   column_to_ndarray reads it, and a mapping's value alike: the native
   object of a narwhals Series, a pandas Series (or pandas' interchange
   Column, or a pandas array) as the column of its frame, else an
   interchange column, an Arrow producer, __arrow_array__ or __array__
   (dfb_column_dispatch); `func` names the public function in messages.
   Returns a new reference, or NULL with an exception set. */
PyObject *
dfb_column_read(dfb_state *st, PyObject *col, const dfb_opts *opts,
                int allow_copy, const char *func);

/* The column rows after the pandas ones: an interchange column, an Arrow
   producer, __arrow_array__, __array__, in that order.  Returns a new
   reference, or NULL with an exception set (TypeError naming `func` when
   `col` is none of these). */
PyObject *
dfb_column_dispatch(dfb_state *st, PyObject *col, const dfb_opts *opts,
                    int allow_copy, const char *func);

/* Sets *key to str(obj.name) of pandas Series `obj` (a new reference), or
   to NULL when `obj` is no Series or its name is None.  Returns 0, or -1
   with an exception set. */
int
dfb_series_key(dfb_state *st, PyObject *obj, PyObject **key);

/* from_dataframe of a pandas Series read without making its frame (see
   frame_source.c).  Returns 1 with *res set, 0 when not read so, -1 with
   an exception set. */
int
dfb_series_fast_dict(dfb_state *st, PyObject *obj, const dfb_opts *opts,
                     PyObject **res);

/* column_to_ndarray of a pandas frame `obj` (one struct column, its Arrow
   export) needs unique field names: ValueError naming the first name
   several columns share.  Returns 0 (not a pandas frame, or unique
   names), or -1 with an exception set. */
int
dfb_column_frame_names_unique(PyObject *obj);

#endif /* DFBUFFER_READERS_H */
