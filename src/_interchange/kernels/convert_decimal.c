/* dfbuffer: the decimal kernel: decimal32/64/128/256 chunks to exact
 * decimal.Decimal objects, or to float64 (decimals="float64").
 *
 * A value is a little-endian two's-complement integer of 4, 8, 16 or 32
 * bytes scaled by 10^-scale.  The exact route writes its digits and
 * exponent as text ("-12345E-2") and lets decimal.Decimal parse it, so the
 * result carries the column's scale as pyarrow's does.
 */
#include "common.h"
#include "sizes.h"
#include "args.h"
#include "model.h"
#include "probe.h"
#include "mem.h"
#include "types.h"
#include "kernels.h"

#include <math.h>
#include <string.h>

/* Reads the value at `p` (bytes = 4, 8, 16 or 32) into four 64-bit limbs,
   least significant first, as its magnitude; returns 1 if negative.
   Cannot fail. */
static int
read_magnitude(const char *p, int bytes, uint64_t limb[4])
{
    uint64_t w[4] = {0, 0, 0, 0};
    if (bytes == 4) {
        int32_t v;
        memcpy(&v, p, 4);
        w[0] = (uint64_t)(int64_t)v;
        w[1] = w[2] = w[3] = v < 0 ? UINT64_MAX : 0;
    }
    else {
        dfb_memcpy(w, p, (size_t)bytes);
        const uint64_t fill = (int64_t)w[bytes / 8 - 1] < 0 ? UINT64_MAX : 0;
        for (int k = bytes / 8; k < 4; k++) {
            w[k] = fill;
        }
    }
    const int neg = (int64_t)w[3] < 0;
    if (neg) { /* two's complement negation over 256 bits */
        unsigned carry = 1;
        for (int k = 0; k < 4; k++) {
            w[k] = ~w[k] + carry;
            carry = carry && w[k] == 0;
        }
    }
    memcpy(limb, w, sizeof(w));
    return neg;
}

/* Divides the 256-bit number `limb` by 10^19 in place; returns the
   remainder.  Cannot fail. */
static uint64_t
div_1e19(uint64_t limb[4])
{
    const uint64_t d = UINT64_C(10000000000000000000);
    unsigned __int128 r = 0;
    for (int k = 3; k >= 0; k--) {
        unsigned __int128 cur = (r << 64) | limb[k];
        limb[k] = (uint64_t)(cur / d);
        r = cur % d;
    }
    return (uint64_t)r;
}

/* Writes the decimal digits of `v` ending at `end` (backwards); returns
   their count (1 for 0; exactly `pad` when `pad` > 0).  Cannot fail. */
static int
put_digits(uint64_t v, char *end, int pad)
{
    int n = 0;
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
        n++;
    } while (v != 0 || n < pad);
    return n;
}

/* Writes "[-]digitsE<exp>" for the value at `p` into buf (>= 112 bytes).
   Returns its length.  Cannot fail. */
static int
decimal_text(const char *p, int bytes, int scale, char *buf)
{
    uint64_t limb[4];
    const int neg = read_magnitude(p, bytes, limb);
    char digits[96];
    char *end = digits + sizeof(digits);
    int nd = 0;
    /* 19 digits a step while more than 64 bits remain, least significant
       first */
    while ((limb[1] | limb[2] | limb[3]) != 0) {
        nd += put_digits(div_1e19(limb), end - nd, 19);
    }
    nd += put_digits(limb[0], end - nd, 0);
    int n = 0;
    if (neg) {
        buf[n++] = '-';
    }
    dfb_memcpy(buf + n, end - nd, (size_t)nd);
    n += nd;
    buf[n++] = 'E';
    if (scale > 0) {
        buf[n++] = '-';
    }
    char e[8];
    const int ne =
        put_digits((uint64_t)(scale < 0 ? -scale : scale), e + sizeof(e), 0);
    dfb_memcpy(buf + n, e + sizeof(e) - ne, (size_t)ne);
    return n + ne;
}

/* The 256-bit magnitude in `limb` as the nearest double (within one
   rounding per limb).  Cannot fail. */
static double
limbs_to_double(const uint64_t limb[4])
{
    return ldexp((double)limb[3], 192) + ldexp((double)limb[2], 128) +
           ldexp((double)limb[1], 64) + (double)limb[0];
}

/* Writes the n values of `c` from element c->offset as float64 into `o`
   (NaN where isnull[i]).  Touches no Python object.  Cannot fail. */
static void
decimals_to_f64(const dfb_column *c, const uint8_t *isnull, double *o)
{
    const int bytes = c->fmt.bits / 8;
    const char *p = c->data.ptr + c->offset * bytes;
    const int s = c->fmt.scale;
    const double pw = pow(10.0, s < 0 ? -s : s);
    for (int64_t i = 0; i < c->length; i++, p += bytes) {
        double v;
        if (isnull != NULL && isnull[i]) {
            o[i] = NAN;
            continue;
        }
        if (bytes == 4) {
            int32_t x;
            memcpy(&x, p, 4);
            v = (double)x;
        }
        else if (bytes == 8) {
            int64_t x;
            memcpy(&x, p, 8);
            v = (double)x;
        }
        else if (bytes == 16) {
            __int128 x;
            memcpy(&x, p, 16);
            v = (double)x;
        }
        else {
            uint64_t limb[4];
            const int neg = read_magnitude(p, bytes, limb);
            v = limbs_to_double(limb);
            v = neg ? -v : v;
        }
        o[i] = s >= 0 ? v / pw : v * pw;
    }
}

/* Returns a new object array of decimal.Decimal (None where isnull[i]) for
   chunk `c`, or NULL with an exception set. */
static PyObject *
decimals_to_objects(const dfb_column *c, const uint8_t *isnull)
{
    PyObject *cls = dfb_import_attr("decimal", "Decimal");
    if (cls == NULL) {
        return NULL;
    }
    PyArrayObject *out =
        dfb_new_array(PyArray_DescrFromType(NPY_OBJECT), c->length);
    if (out == NULL) {
        Py_DECREF(cls);
        return NULL;
    }
    PyObject **o = PyArray_DATA(out);
    const int bytes = c->fmt.bits / 8;
    const char *p = c->length > 0 ? c->data.ptr + c->offset * bytes : NULL;
    char buf[112];
    for (int64_t i = 0; i < c->length; i++) {
        if (isnull != NULL && isnull[i]) {
            o[i] = Py_NewRef(Py_None);
            continue;
        }
        const int n = decimal_text(p + i * bytes, bytes, c->fmt.scale, buf);
        PyObject *s = PyUnicode_New(n, 127);
        if (s != NULL) {
            dfb_memcpy(PyUnicode_DATA(s), buf, (size_t)n);
        }
        o[i] = s == NULL ? NULL : PyObject_CallOneArg(cls, s);
        Py_XDECREF(s);
        if (o[i] == NULL) {
            Py_DECREF(out);
            Py_DECREF(cls);
            return NULL;
        }
    }
    Py_DECREF(cls);
    return (PyObject *)out;
}

PyObject *
dfb_decimals_convert(const dfb_column *c, const uint8_t *isnull,
                     const dfb_opts *opts)
{
    if (!opts->decimal_float) {
        return decimals_to_objects(c, isnull);
    }
    PyArrayObject *out =
        dfb_new_array(PyArray_DescrFromType(NPY_DOUBLE), c->length);
    if (out == NULL) {
        return NULL;
    }
    if (c->length > 0) {
        double *o = PyArray_DATA(out);
        DFB_NOGIL_IF(c->length, decimals_to_f64(c, isnull, o));
    }
    return (PyObject *)out;
}

int
dfb_decimals_as_f64(dfb_column *c, PyObject *keep)
{
    npy_intp dims[1] = {(npy_intp)(c->offset + c->length)};
    PyObject *arr = PyArray_ZEROS(1, dims, NPY_DOUBLE, 0);
    if (arr == NULL || PyList_Append(keep, arr) < 0) {
        Py_XDECREF(arr);
        return -1;
    }
    Py_DECREF(arr); /* the keep list holds it */
    double *o = PyArray_DATA((PyArrayObject *)arr);
    if (c->length > 0) {
        DFB_NOGIL_IF(c->length, decimals_to_f64(c, NULL, o + c->offset));
    }
    c->fmt.type = DFB_T_FLOAT;
    c->fmt.bits = 64;
    c->fmt.byteorder = '=';
    c->data.ptr = (const char *)o;
    c->data.size = 8 * (c->offset + c->length);
    c->data.owner = arr;
    return 0;
}
