/* dfbuffer: the interface of convert_decimal.c: the decimal kernel:
 * decimal32/64/128/256 chunks to exact decimal.Decimal objects, or to float64
 * (decimals="float64").
 */
#ifndef DFBUFFER_CONVERT_DECIMAL_H
#define DFBUFFER_CONVERT_DECIMAL_H

#include "common.h"
#include "column.h"

/* decimal chunk `c` to a 1-D object array of exact
   decimal.Decimal (None where isnull[i]), or with opts->decimal_float
   to float64 (NaN where isnull[i]).  Returns a new reference, or
   NULL with an exception set. */
PyObject *
dfb_decimals_convert(const dfb_column *c, const uint8_t *isnull,
                     const dfb_opts *opts);

/* Replaces the values of decimal chunk `c` by float64 in new memory (kept
   alive by list `keep`), at the same element offset so its validity still
   applies; `c` becomes a FLOAT 64 chunk.  Returns 0, or -1 with
   MemoryError. */
int
dfb_decimals_as_f64(dfb_column *c, PyObject *keep);

#endif /* DFBUFFER_CONVERT_DECIMAL_H */
