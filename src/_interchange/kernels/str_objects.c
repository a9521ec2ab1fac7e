/* dfbuffer: UTF-8 + offsets to Python str objects.
 */
#include "common.h"
#include "sizes.h"
#include "model.h"
#include "mem.h"
#include "kernels.h"

#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Returns 1 if the `n` bytes at `s` are all ASCII (< 0x80), else 0.
   32 bytes a step in four independent 8-byte lanes; the tail and short
   strings with overlapping loads. */
static inline int
is_ascii(const char *s, int64_t n)
{
    const uint64_t hi = UINT64_C(0x8080808080808080);
    if (n >= 8) {
        uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, w0, w1, w2, w3;
        int64_t i = 0;
        for (; i + 32 <= n; i += 32) {
            memcpy(&w0, s + i, 8);
            memcpy(&w1, s + i + 8, 8);
            memcpy(&w2, s + i + 16, 8);
            memcpy(&w3, s + i + 24, 8);
            a0 |= w0;
            a1 |= w1;
            a2 |= w2;
            a3 |= w3;
        }
        for (; i + 8 <= n; i += 8) {
            memcpy(&w0, s + i, 8);
            a0 |= w0;
        }
        memcpy(&w1, s + n - 8, 8);
        return ((a0 | a1 | a2 | a3 | w1) & hi) == 0;
    }
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        return ((a | b) & 0x80808080u) == 0;
    }
    unsigned acc = 0;
    for (int64_t i = 0; i < n; i++) {
        acc |= (uint8_t)s[i];
    }
    return (acc & 0x80u) == 0;
}

/* Copies `n` bytes (short copies inline, with overlapping stores).  Cannot
   fail. */
static inline void
copy_bytes(char *dst, const char *src, int64_t n)
{
    if (n > 16) {
        dfb_memcpy(dst, src, (size_t)n);
    }
    else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    }
    else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    }
    else {
        for (int64_t i = 0; i < n; i++) {
            dst[i] = src[i];
        }
    }
}

/* Strings up to this many bytes are decoded by decode_short. */
#define SHORT_DECODE_MAX 64

/* Decodes `n` (<= SHORT_DECODE_MAX) bytes of strict UTF-8 at `s` into a
   new str of the narrowest kind.  Returns the str, NULL with an exception
   set (MemoryError), or NULL without one when the bytes are not valid
   UTF-8 (the caller then lets CPython's decoder raise the exact error). */
static PyObject *
decode_short(const char *s, int64_t n)
{
    Py_UCS4 buf[SHORT_DECODE_MAX];
    Py_UCS4 maxchar = 0;
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    Py_ssize_t len = 0;
    while (p < end) {
        uint8_t c = *p;
        Py_UCS4 ch;
        if (c < 0x80) {
            ch = c;
            p += 1;
        }
        else if (c >= 0xC2 && c <= 0xDF) {
            if (end - p < 2 || (p[1] & 0xC0) != 0x80) {
                return NULL;
            }
            ch = ((Py_UCS4)(c & 0x1F) << 6) | (p[1] & 0x3F);
            p += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            if (end - p < 3 || (p[1] & 0xC0) != 0x80 ||
                (p[2] & 0xC0) != 0x80 || (c == 0xE0 && p[1] < 0xA0) ||
                (c == 0xED && p[1] > 0x9F)) {
                return NULL; /* truncated, overlong or a surrogate */
            }
            ch = ((Py_UCS4)(c & 0x0F) << 12) | ((Py_UCS4)(p[1] & 0x3F) << 6) |
                 (p[2] & 0x3F);
            p += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            if (end - p < 4 || (p[1] & 0xC0) != 0x80 ||
                (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80 ||
                (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F)) {
                return NULL; /* truncated, overlong or beyond U+10FFFF */
            }
            ch = ((Py_UCS4)(c & 0x07) << 18) | ((Py_UCS4)(p[1] & 0x3F) << 12) |
                 ((Py_UCS4)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
            p += 4;
        }
        else {
            return NULL;
        }
        maxchar = ch > maxchar ? ch : maxchar;
        buf[len++] = ch;
    }
    PyObject *u = PyUnicode_New(len, maxchar);
    if (u == NULL) {
        return NULL;
    }
    int kind = PyUnicode_KIND(u);
    void *data = PyUnicode_DATA(u);
    for (Py_ssize_t i = 0; i < len; i++) {
        PyUnicode_WRITE(kind, data, i, buf[i]);
    }
    return u;
}

/* Returns a new str from `n` UTF-8 bytes at `s`, or NULL with
   UnicodeDecodeError / MemoryError / OverflowError set. */
static inline PyObject *
decode(const char *s, int64_t n)
{
    if (n > PY_SSIZE_T_MAX) {
        PyErr_SetString(PyExc_OverflowError, "string too long");
        return NULL;
    }
    if (is_ascii(s, n)) {
        PyObject *u = PyUnicode_New((Py_ssize_t)n, 127);
        if (u == NULL) {
            return NULL;
        }
        copy_bytes((char *)PyUnicode_1BYTE_DATA(u), s, n);
        return u;
    }
    if (n <= SHORT_DECODE_MAX) {
        PyObject *u = decode_short(s, n);
        if (u != NULL || PyErr_Occurred()) {
            return u;
        }
    }
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
}

/* One slot of the de-duplication table: a str made from the `len` bytes
   at `ptr`. */
typedef struct {
    const char *ptr;
    int64_t len;
    PyObject *obj; /* borrowed from the output array; NULL = empty */
} dedup_slot;

/* Strings at most this long are looked up in the table. */
#define DEDUP_MAX_LEN 64
/* Slots in the table at most (a power of two). */
#define DEDUP_MAX_SLOTS (1 << 16)
/* After DEDUP_PROBE look-ups, de-duplication stops unless at least one in
   DEDUP_MIN_RATIO of them hit (mostly distinct values: a miss costs a hash
   and a cache miss for nothing). */
#define DEDUP_PROBE 8192
#define DEDUP_MIN_RATIO 8

/* Returns a zeroed de-duplication table for `length` strings (its slot
   count, a power of two, in *tsize), or NULL when `length` is too small
   to be worth one or memory is short (no exception: the converters then
   decode every string).  Free with PyMem_Free. */
static dedup_slot *
dedup_table(int64_t length, size_t *tsize)
{
    size_t t = 16;
    /* bounded: t < DEDUP_MAX_SLOTS, length < INT64_MAX / 2 */
    while (t < DEDUP_MAX_SLOTS && (int64_t)t < 2 * length) {
        t <<= 1;
    }
    *tsize = t;
    return length >= 64 ? PyMem_Calloc(t, sizeof(dedup_slot)) : NULL;
}

/* Hashes `n` (<= DEDUP_MAX_LEN) bytes at `s`.  Cannot fail. */
static inline uint64_t
hash_bytes(const char *s, int64_t n)
{
    uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)n;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 29;
    }
    if (i < n) {
        uint64_t w = 0;
        dfb_memcpy(&w, s + i, (size_t)(n - i));
        h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
    }
    h ^= h >> 32;
    return h;
}

/* The de-duplication state of one conversion. */
typedef struct {
    dedup_slot *table; /* NULL: off */
    size_t tsize;
    int64_t lookups, hits;
} dedup;

/* Returns a new str for the `n` UTF-8 bytes at `p`: the one already made
   for equal bytes when the table has it, else a decoded one (remembered
   when short).  The table borrows the str: the caller stores it in the
   output right away.  Switches the table off after DEDUP_PROBE look-ups
   with too few hits.  NULL with an exception set (as decode). */
static inline PyObject *
dedup_decode(dedup *d, const char *p, int64_t n)
{
    dedup_slot *slot = NULL;
    if (d->table != NULL && n <= DEDUP_MAX_LEN) {
        slot = &d->table[hash_bytes(p, n) & (d->tsize - 1)];
        d->lookups++;
        if (slot->obj != NULL && slot->len == n &&
            (n == 0 || dfb_memcmp(slot->ptr, p, (size_t)n) == 0)) {
            d->hits++;
            return Py_NewRef(slot->obj);
        }
        if (d->lookups == DEDUP_PROBE &&
            d->hits * DEDUP_MIN_RATIO < d->lookups) {
            PyMem_Free(d->table);
            d->table = NULL;
            slot = NULL;
        }
    }
    PyObject *item = decode(p, n);
    if (item != NULL && slot != NULL) {
        slot->ptr = p;
        slot->len = n;
        slot->obj = item;
    }
    return item;
}

/* Prefaulting the str objects' memory.  A conversion of many strings
   spends most of its time in the kernel: every 4 KiB page of the new
   pymalloc arenas that hold the str objects is faulted in one at a time.
   For large conversions the arena allocator is wrapped (public API,
   PyObject_SetArenaAllocator) for the duration of the loop so that each
   new arena is populated in one madvise(MADV_POPULATE_WRITE) call: the
   same pages (no more memory), without a page fault for each.  The
   wrapper forwards every call to the allocator it replaced, so arenas
   allocated meanwhile are freed by it later, and it is removed before the
   converter returns.  The GIL is held throughout and the module refuses
   subinterpreters, so no other thread sees the swap half-done.  The
   allocator is process-wide: without a GIL (free-threaded builds, whose
   objects come from mimalloc, not from these arenas) it is never
   swapped. */
#if defined(MADV_POPULATE_WRITE) && !defined(Py_GIL_DISABLED)
static PyObjectArenaAllocator prefault_orig;

/* Arena allocation: the replaced allocator's arena, populated (best
   effort: a failed madvise changes nothing).  NULL on out of memory. */
static void *
prefault_alloc(void *ctx, size_t size)
{
    (void)ctx;
    void *p = prefault_orig.alloc(prefault_orig.ctx, size);
    if (p != NULL) {
        (void)madvise(p, size, MADV_POPULATE_WRITE);
    }
    return p;
}

/* Arena release: forwarded to the replaced allocator.  Cannot fail. */
static void
prefault_free(void *ctx, void *p, size_t size)
{
    (void)ctx;
    prefault_orig.free(prefault_orig.ctx, p, size);
}
#endif

/* Estimated bytes of new str objects from which prefaulting pays (the
   last, partly used arena is populated whole: at most 1 MiB more). */
#define PREFAULT_MIN_BYTES ((int64_t)8 << 20)

/* Installs the prefaulting arena allocator when `bytes` (the estimated
   size of the str objects to make) is large.  Returns 1 if installed
   (undo with prefault_end), else 0.  Cannot fail. */
static int
prefault_begin(int64_t bytes)
{
#if defined(MADV_POPULATE_WRITE) && !defined(Py_GIL_DISABLED)
    PyObjectArenaAllocator cur;
    if (bytes < PREFAULT_MIN_BYTES) {
        return 0;
    }
    PyObject_GetArenaAllocator(&cur);
    if (cur.alloc == prefault_alloc || cur.alloc == NULL || cur.free == NULL) {
        return 0;
    }
    prefault_orig = cur;
    PyObjectArenaAllocator mine = {NULL, prefault_alloc, prefault_free};
    PyObject_SetArenaAllocator(&mine);
    return 1;
#else
    (void)bytes;
    return 0;
#endif
}

/* Restores the arena allocator prefault_begin replaced, if `on`.  Cannot
   fail. */
static void
prefault_end(int on)
{
#if defined(MADV_POPULATE_WRITE) && !defined(Py_GIL_DISABLED)
    if (on) {
        PyObject_SetArenaAllocator(&prefault_orig);
    }
#else
    (void)on;
#endif
}

/* Estimated bytes of `length` str objects holding `data` bytes in all. */
static int64_t
str_bytes(int64_t length, int64_t data)
{
    const int64_t head = (int64_t)sizeof(PyASCIIObject) + 8;
    int64_t total;
    if (dfb_checked_mul(length, head, &total) < 0 ||
        dfb_checked_add(total, data, &total) < 0) {
        return INT64_MAX;
    }
    return total;
}

/* dfb_strings_to_object_array without the prefaulting: the strings of
   `length` elements whose offsets `offs` reads (spans within the `data`,
   NULL only when offs->limit is 0).  Same returns. */
static PyObject *
strings_to_objects(const char *data, const dfb_offsets *offs, int64_t length,
                   const uint8_t *isnull)
{
    PyObject *arr =
        (PyObject *)dfb_new_array(PyArray_DescrFromType(NPY_OBJECT), length);
    if (arr == NULL) {
        return NULL;
    }
    PyObject **out = (PyObject **)PyArray_DATA((PyArrayObject *)arr);
    /* Offsets are read through core's checked reader (any alignment:
       interchange pointers promise none, Arrow only recommends it), each
       exactly once: the end of string i is the start of string i + 1.  The
       memory may change under us (another thread, a producer that lies),
       so every string is checked where it is used: 0 <= start <= end <=
       the data size.  A local copy of the reader: the calls below cannot
       make the compiler reload it. */
    const dfb_offsets o = *offs;
    static const char empty = 0;
    if (data == NULL) {
        data = &empty; /* the limit is 0: only empty strings are valid */
    }

    /* Equal short strings share one str object (as pyarrow's to_pandas
       does by default): repeated values cost a hash and a memcmp instead
       of an allocation and a decode.  A direct-mapped table, switched off
       when the first look-ups show mostly distinct values. */
    dedup dd = {0};
    dd.table = dedup_table(length, &dd.tsize);
    /* once the table is off, native 32-bit offsets take the loop below */
    const int plain32 = o.width == 4 && !o.swapped;

    /* the loops run to the reader's own count (length + 1 offsets), so
       the compiler drops its index checks */
    const int64_t n = o.count - 1;
    int64_t i = 0;
    int64_t start = n > 0 ? dfb_offsets_load(&o, 0) : 0;
    for (; i < n && !(dd.table == NULL && plain32); i++) {
        PyObject *item;
        int64_t end;
        const dfb_code rc = dfb_offsets_next(&o, i, start, &end);
        if (isnull != NULL && isnull[i]) {
            item = Py_NewRef(Py_None);
        }
        else {
            if (rc != DFB_OK) {
                PyMem_Free(dd.table);
                Py_DECREF(arr);
                return dfb_bad_span_error(i, start, end, o.limit);
            }
            item = dedup_decode(&dd, data + start, end - start);
            if (item == NULL) {
                PyMem_Free(dd.table);
                Py_DECREF(arr);
                return NULL;
            }
        }
        Py_XSETREF(out[i], item);
        start = end;
    }
    /* The same without de-duplication, for native 32-bit offsets (the
       common Arrow layout): no per-element width, swap or table tests. */
    for (; i < n; i++) {
        PyObject *item;
        int64_t end;
        const dfb_code rc = dfb_offsets_next_i32(&o, i, start, &end);
        if (isnull != NULL && isnull[i]) {
            item = Py_NewRef(Py_None);
        }
        else {
            if (rc != DFB_OK) {
                Py_DECREF(arr);
                return dfb_bad_span_error(i, start, end, o.limit);
            }
            item = decode(data + start, end - start);
            if (item == NULL) {
                Py_DECREF(arr);
                return NULL;
            }
        }
        Py_XSETREF(out[i], item);
        start = end;
    }
    PyMem_Free(dd.table);
    return arr;
}

/* Views read ahead of the one decoded: each view is read once (memcpy,
   dfb_view_at) and checked that many elements early, and its bytes are
   prefetched meanwhile. */
#define VIEW_AHEAD 8

/* dfb_views_to_object_array without the prefaulting (same contract). */
static PyObject *
views_to_objects(const dfb_column *c, const uint8_t *isnull)
{
    const int64_t length = c->length;
    PyObject *arr =
        (PyObject *)dfb_new_array(PyArray_DescrFromType(NPY_OBJECT), length);
    if (arr == NULL || length == 0) {
        return arr;
    }
    PyObject **out = (PyObject **)PyArray_DATA((PyArrayObject *)arr);
    /* a private copy: the calls below cannot make the compiler reload the
       column's fields for every element */
    const dfb_column col = *c;
    /* as dfb_strings_to_object_array: equal short strings share one str
       until the first look-ups show mostly distinct values */
    dedup dd = {0};
    dd.table = dedup_table(length, &dd.tsize);
    /* ring of the views read ahead: element i is in slot i % VIEW_AHEAD;
       n < 0 marks a null (its view is not read) */
    const char *ptrs[VIEW_AHEAD];
    int64_t lens[VIEW_AHEAD];
    int64_t ahead = 0; /* elements read so far */
    for (int64_t i = 0; i < length; i++) {
        /* read (once), check and prefetch up to VIEW_AHEAD views ahead */
        for (; ahead < length && ahead <= i + (VIEW_AHEAD - 1); ahead++) {
            const int k = (int)(ahead % VIEW_AHEAD);
            if (isnull != NULL && isnull[ahead]) {
                lens[k] = -1;
                continue;
            }
            if (dfb_view_at(&col, col.offset + ahead, &ptrs[k], &lens[k]) <
                0) {
                goto fail;
            }
            if (lens[k] > 12) {
                __builtin_prefetch(ptrs[k]);
                __builtin_prefetch(ptrs[k] + lens[k] - 1);
            }
        }
        const int k = (int)(i % VIEW_AHEAD);
        PyObject *item;
        if (lens[k] < 0) {
            item = Py_NewRef(Py_None);
        }
        else if (dd.table == NULL) {
            item = decode(ptrs[k], lens[k]);
        }
        else {
            item = dedup_decode(&dd, ptrs[k], lens[k]);
        }
        if (item == NULL) {
            goto fail;
        }
        Py_XSETREF(out[i], item);
    }
    PyMem_Free(dd.table);
    return arr;
fail:
    PyMem_Free(dd.table);
    Py_DECREF(arr);
    return NULL;
}

PyObject *
dfb_strings_to_object_array(const dfb_column *c, const uint8_t *isnull)
{
    dfb_offsets o;
    if (dfb_column_offsets(c, &o) < 0) {
        return NULL;
    }
    const int on = prefault_begin(str_bytes(c->length, o.limit));
    PyObject *arr = strings_to_objects(c->data.ptr, &o, c->length, isnull);
    prefault_end(on);
    return arr;
}

PyObject *
dfb_views_to_object_array(const dfb_column *c, const uint8_t *isnull)
{
    /* the out-of-line bytes are at most the variadic buffers' sizes */
    int64_t data = 0;
    for (int64_t b = 0; b < c->n_variadic; b++) {
        data = c->variadic_sizes[b] > INT64_MAX - data
                   ? INT64_MAX
                   : data + c->variadic_sizes[b];
    }
    const int on = prefault_begin(str_bytes(c->length, data));
    PyObject *arr = views_to_objects(c, isnull);
    prefault_end(on);
    return arr;
}

int
dfb_objects_prefault_begin(int64_t bytes)
{
    return prefault_begin(bytes);
}

void
dfb_objects_prefault_end(int on)
{
    prefault_end(on);
}
