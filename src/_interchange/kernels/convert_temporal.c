/* dfbuffer: the time-of-day and interval kernels.
 *
 * time32 / time64 chunks become object arrays of datetime.time; a
 * nanosecond value that datetime.time cannot hold exactly (not a whole
 * microsecond) raises ValueError rather than being truncated, and so does
 * a value outside [0, 24 h).  Intervals are zero-copy views as NumPy
 * records: months (int32); days and milliseconds (int32 each); months,
 * days (int32 each) and nanoseconds (int64).
 */
#include "common.h"
#include "sizes.h"
#include "model.h"
#include "types.h"
#include "kernels.h"

#include <datetime.h>
#include <string.h>

/* Fills `o` (n slots, all NULL) with datetime.time objects from the
   `bytes`-wide time values at `p` in unit `unit` ('s', 'm', 'u', 'n'),
   None where `isnull` (may be NULL) is set.  Written for constant `bytes`
   and `unit`, so that the unit's divisions are multiplications.  Returns
   0, or -1 with ValueError (a value outside [0, 24 h) or, in nanoseconds,
   not a whole microsecond) or the datetime module's error. */
static inline __attribute__((always_inline)) int
times_fill(PyObject **o, const char *p, int64_t n, const uint8_t *isnull,
           const int bytes, const char unit)
{
    const int64_t per_us = unit == 'n' ? 1000 : 1;
    const int64_t us_per = unit == 's' ? 1000000 : unit == 'm' ? 1000 : 1;
    const int64_t limit = INT64_C(86400) * 1000000 * per_us / us_per;
    for (int64_t i = 0; i < n; i++) {
        if (isnull != NULL && isnull[i]) {
            o[i] = Py_NewRef(Py_None);
            continue;
        }
        int64_t v;
        if (bytes == 4) {
            int32_t x;
            memcpy(&x, p + 4 * i, 4);
            v = x;
        }
        else {
            memcpy(&v, p + 8 * i, 8);
        }
        if (v < 0 || v >= limit || v % per_us != 0) {
            PyErr_Format(
                PyExc_ValueError, "time value %lld%s at row %lld is %s",
                (long long)v, dfb_unit_name(unit), (long long)i,
                v % per_us != 0 ? "not a whole microsecond: datetime.time "
                                  "cannot hold it"
                                : "outside [0, 24 h)");
            return -1;
        }
        const int64_t us = v / per_us * us_per;
        const int64_t sec = us / 1000000;
        o[i] = PyTime_FromTime((int)(sec / 3600), (int)(sec / 60 % 60),
                               (int)(sec % 60), (int)(us % 1000000));
        if (o[i] == NULL) {
            return -1;
        }
    }
    return 0;
}

PyObject *
dfb_times_to_object_array(const dfb_column *c, const uint8_t *isnull)
{
    if (PyDateTimeAPI == NULL) {
        PyDateTime_IMPORT; /* the capsule's C API table, not an object */
        if (PyDateTimeAPI == NULL) {
            return NULL;
        }
    }
    const int bytes = c->fmt.bits / 8;
    PyArrayObject *out =
        dfb_new_array(PyArray_DescrFromType(NPY_OBJECT), c->length);
    if (out == NULL || c->length == 0) {
        return (PyObject *)out;
    }
    PyObject **o = PyArray_DATA(out);
    const char *p = c->data.ptr + c->offset * bytes;
    const int64_t n = c->length;
    /* a datetime.time without tzinfo takes a 48-byte block */
    int64_t est;
    const int on = dfb_objects_prefault_begin(
        dfb_checked_mul(n, 48, &est) < 0 ? INT64_MAX : est);
    int rc;
    const char unit = c->fmt.unit;
    /* time32 in s or ms, time64 in us or ns */
    if (bytes == 4 && unit == 's') {
        rc = times_fill(o, p, n, isnull, 4, 's');
    }
    else if (bytes == 4 && unit == 'm') {
        rc = times_fill(o, p, n, isnull, 4, 'm');
    }
    else if (bytes == 8 && unit == 'u') {
        rc = times_fill(o, p, n, isnull, 8, 'u');
    }
    else if (bytes == 8 && unit == 'n') {
        rc = times_fill(o, p, n, isnull, 8, 'n');
    }
    else {
        rc = times_fill(o, p, n, isnull, bytes, unit);
    }
    dfb_objects_prefault_end(on);
    if (rc < 0) {
        Py_DECREF(out); /* NULL slots are skipped by the dealloc */
        return NULL;
    }
    return (PyObject *)out;
}

PyArray_Descr *
dfb_interval_descr(const dfb_format *f)
{
    /* the record's fields, from the type table */
    const dfb_record_field *fields = dfb_type_row_of(f->type)->fields;
    PyObject *spec = PyList_New(0);
    for (int k = 0; spec != NULL && fields != NULL && fields[k].name != NULL;
         k++) {
        PyObject *field =
            Py_BuildValue("(ss)", fields[k].name, fields[k].typestr);
        if (field == NULL || PyList_Append(spec, field) < 0) {
            Py_XDECREF(field);
            Py_CLEAR(spec);
            break;
        }
        Py_DECREF(field);
    }
    if (spec == NULL) {
        return NULL;
    }
    PyArray_Descr *d = NULL;
    int ok = PyArray_DescrConverter(spec, &d);
    Py_DECREF(spec);
    return ok ? d : NULL;
}
