/* dfbuffer: the interface of convert_temporal.c: the time-of-day and interval
 * kernels.
 */
#ifndef DFBUFFER_CONVERT_TEMPORAL_H
#define DFBUFFER_CONVERT_TEMPORAL_H

#include "common.h"
#include "column.h"

/* time32 / time64 chunk `c` to a 1-D object array of
   datetime.time (None where isnull[i]).  Returns a new reference, or NULL
   with ValueError for a value outside [0, 24 h) or with nanoseconds
   datetime.time cannot hold. */
PyObject *
dfb_times_to_object_array(const dfb_column *c, const uint8_t *isnull);

/* The NumPy record dtype of interval format `f` (months; days,
   milliseconds; months, days, nanoseconds).  Returns a new reference, or
   NULL with an exception set. */
PyArray_Descr *
dfb_interval_descr(const dfb_format *f);

#endif /* DFBUFFER_CONVERT_TEMPORAL_H */
