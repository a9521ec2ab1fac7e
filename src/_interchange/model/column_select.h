/* dfbuffer: the interface of column_select.c: the columns= selection of
 * from_dataframe: which columns to convert, and the result in the order asked
 * for.
 */
#ifndef DFBUFFER_COLUMN_SELECT_H
#define DFBUFFER_COLUMN_SELECT_H

#include "common.h"
#include "column.h"

/* Fills `s` from columns= (NULL or None: every column), each name as str()
   (the rule of dfb_frame_select).  Returns 0, or -1 with TypeError (a
   str, not a sequence) or an item's __str__ error. */
int
dfb_colsel_init(dfb_colsel *s, PyObject *columns);

/* Returns 1 if column `key` is selected (`s` NULL: all are), 0 if not, -1
   with an exception set. */
int
dfb_colsel_wants(const dfb_colsel *s, PyObject *key);

/* Returns the dict `result` (stolen) in the order of the names asked for
   (KeyError naming a name no column has), `result` itself without a
   selection, or NULL with an exception set (NULL in: NULL out). */
PyObject *
dfb_colsel_finish(const dfb_colsel *s, PyObject *result);

/* Drops the references of `s`.  Cannot fail. */
void
dfb_colsel_clear(dfb_colsel *s);

#endif /* DFBUFFER_COLUMN_SELECT_H */
