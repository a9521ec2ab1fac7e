/* dfbuffer: the interface of arrow_convert.c: Arrow producers to NumPy: one
 * column, a table (dict name -> array), the structs a C caller moves in (the C
 * API), and whole frames described for to_matrix.
 */
#ifndef DFBUFFER_ARROW_CONVERT_H
#define DFBUFFER_ARROW_CONVERT_H

#include "common.h"
#include "arrow_internal.h"
#include "frame.h"

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

#endif /* DFBUFFER_ARROW_CONVERT_H */
