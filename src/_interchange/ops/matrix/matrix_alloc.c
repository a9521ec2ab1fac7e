/* dfbuffer: the output allocator of to_matrix: a NumPy memory handler
 * that keeps the last large block freed for the next output of about its
 * size, with the reaper thread that lets the kernel reclaim it after a
 * while and the fork handlers that keep it sound (see matrix.h).
 */
#include "common.h"
#include "sizes.h"
#include "matrix.h"
#include "checked.h"

#include <string.h>
#include <stdlib.h>

#if !defined(_WIN32)
#include <pthread.h>
#include <unistd.h>
#endif

/* ------------------------------------------------------------------ */
/* Output memory                                                        */
/* ------------------------------------------------------------------ */

/* Large outputs (>= OUT_BIG bytes) get a NumPy memory handler of their own
   that keeps the memory of the last one freed for the next one of about
   the same size (jemalloc and mimalloc, behind polars and pyarrow, do the
   same): fresh memory costs a page fault and the kernel zeroing each page,
   which is as long as the copy itself.  The kept block is released when
   an output of another size is asked for; after OUT_DECAY_NS unused the
   kernel may reclaim its pages (MADV_FREE).  The allocations are reported
   to tracemalloc in NumPy's domain. */
#define OUT_TRACE_DOMAIN 389047 /* NumPy's tracemalloc domain */

#if !defined(_WIN32)
#include <errno.h>
#include <sys/mman.h>
#include <time.h>

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static void *out_kept;       /* guarded by out_lock */
static size_t out_kept_size; /* the size NumPy freed it with */
/* the kept block out_malloc last handed out again on this thread: per
   thread, since the array dfb_matrix_new_output asks for is allocated on
   its own thread, while other threads make theirs */
static DFB_THREAD_LOCAL void *out_reused;

/* malloc of the handler: the kept block when it fits (at most 1/8
   larger), else new memory.  No huge pages are asked for (NumPy asks for
   them for every large array): where the kernel compacts memory for them
   on demand (THP defrag "madvise"), a first 400 MB output took 0.9-1.4 s
   instead of 0.25 s, and the kept block already spares repeated calls the
   page faults (benchmarks/bench_matrix.py).  Returns NULL when out of memory.
 */
static void *
out_malloc(void *ctx, size_t size)
{
    (void)ctx;
    void *p = NULL, *drop = NULL;
    if (size >= OUT_BIG) {
        pthread_mutex_lock(&out_lock);
        if (out_kept != NULL && out_kept_size >= size &&
            out_kept_size - size <= size / 8) {
            p = out_kept;
            out_reused = p;
        }
        else {
            drop = out_kept; /* released before the new block is made */
        }
        out_kept = NULL;
        out_kept_size = 0;
        pthread_mutex_unlock(&out_lock);
        free(drop);
    }
    if (p == NULL) {
        p = malloc(size > 0 ? size : 1);
    }
    if (p != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)p, size);
    }
    return p;
}

/* calloc of the handler (not served from the kept block). */
static void *
out_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void)ctx;
    void *p = calloc(nelem > 0 ? nelem : 1, elsize > 0 ? elsize : 1);
    if (p != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)p,
                                  nelem * elsize);
    }
    return p;
}

/* realloc of the handler (NULL when out of memory: `ptr` stays valid, traced
   from then on as one byte, its size being unknown here). */
static void *
out_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    if (ptr != NULL) {
        (void)PyTraceMalloc_Untrack(OUT_TRACE_DOMAIN, (uintptr_t)ptr);
    }
    void *p = realloc(ptr, size > 0 ? size : 1);
    if (p != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)p, size);
    }
    else if (ptr != NULL) {
        (void)PyTraceMalloc_Track(OUT_TRACE_DOMAIN, (uintptr_t)ptr, 1);
    }
    return p;
}

/* How long a freed large block stays as it is (nanoseconds).  Unused for
   that long, the reaper thread marks its pages MADV_FREE, so the kernel may
   take them back under memory pressure (where MADV_FREE does not exist, it
   frees the block).  jemalloc's background thread, behind polars, purges
   its freed pages after a decay time the same way.  Marking at once, in
   free, cost 7-24 ms there and 15-23 ms of CPU in the next call's writes of
   400 MB (docs/design.md).  DFBUFFER_MATRIX_DECAY_MS (an integer from 0 to
   3600000, read once) sets it; other values are ignored. */
#define OUT_DECAY_NS 1000000000LL
static long long out_decay_ns = OUT_DECAY_NS;

/* The clock of the reaper's waits (condition variables cannot wait on the
   monotonic clock on macOS). */
#if defined(__APPLE__)
#define OUT_CLOCK CLOCK_REALTIME
#else
#define OUT_CLOCK CLOCK_MONOTONIC
#endif

static int out_kept_marked;         /* out_kept's pages are MADV_FREE */
static pthread_cond_t out_cond;     /* wakes the reaper; guarded by out_lock */
static struct timespec out_kept_at; /* when out_kept was freed (OUT_CLOCK) */
static pid_t out_reaper_pid;        /* process the reaper runs in, 0: none */
static pthread_once_t out_once = PTHREAD_ONCE_INIT;
static int out_cond_ok; /* out_cond is initialised */

/* Time `ts` plus `ns`, in nanoseconds.  Cannot fail. */
static long long
out_ns(const struct timespec *ts, long long ns)
{
    return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + ns;
}

/* Fork handlers: the lock is held across fork, so the child's copy is in a
   known state; the child has no reaper (started again on demand). */
static void
out_prefork(void)
{
    pthread_mutex_lock(&out_lock);
}

static void
out_postfork_parent(void)
{
    pthread_mutex_unlock(&out_lock);
}

/* Makes out_cond, waiting on OUT_CLOCK.  Returns 0 on failure. */
static int
out_cond_make(void)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) {
        return 0;
    }
#if !defined(__APPLE__)
    int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&out_cond, &ca) == 0;
#else
    int ok = pthread_cond_init(&out_cond, &ca) == 0;
#endif
    pthread_condattr_destroy(&ca);
    return ok;
}

static void
out_postfork_child(void)
{
    /* the parent's reaper waited on out_cond: the child's copy starts over */
    out_cond_ok = out_cond_make();
    out_reaper_pid = 0;
    pthread_mutex_unlock(&out_lock);
}

/* Initialises out_cond and the fork handlers (once).  Failures leave
   out_cond_ok 0: blocks are then freed at once. */
static void
out_init(void)
{
    const char *env = getenv("DFBUFFER_MATRIX_DECAY_MS");
    if (env != NULL && *env != '\0') {
        char *end;
        errno = 0;
        long long ms = strtoll(env, &end, 10);
        if (errno == 0 && *end == '\0' && ms >= 0 && ms <= 3600000) {
            out_decay_ns = ms * 1000000LL;
        }
    }
    if (out_cond_make()) {
        out_cond_ok = pthread_atfork(out_prefork, out_postfork_parent,
                                     out_postfork_child) == 0;
    }
}

#if defined(MADV_FREE)
/* Applies madvise `advice` to the whole pages inside [p, p + size).
   Advisory: failures are ignored. */
static void
out_advise(void *p, size_t size, int advice)
{
    long ps = sysconf(_SC_PAGESIZE);
    const uintptr_t pg = ps > 0 ? (uintptr_t)ps : 4096;
    uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1);
    uintptr_t b = ((uintptr_t)p + size) & ~(pg - 1);
    if (b > a) {
        (void)madvise((void *)a, b - a, advice);
    }
}
#endif

/* The reaper thread: once the kept block has been unused for out_decay_ns,
   marks it MADV_FREE (or frees it), then sleeps until another is kept.
   The block is taken out of out_kept while it is marked, so no output is
   written into pages being marked.  Never returns; touches no Python
   state. */
static void *
out_reaper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&out_lock);
    for (;;) {
        if (out_kept == NULL || out_kept_marked) {
            pthread_cond_wait(&out_cond, &out_lock);
            continue;
        }
        struct timespec now;
        clock_gettime(OUT_CLOCK, &now);
        long long due = out_ns(&out_kept_at, out_decay_ns);
        if (out_ns(&now, 0) < due) {
            struct timespec until = {(time_t)(due / 1000000000LL),
                                     (long)(due % 1000000000LL)};
            (void)pthread_cond_timedwait(&out_cond, &out_lock, &until);
            continue;
        }
        void *blk = out_kept;
        size_t size = out_kept_size;
        out_kept = NULL;
        out_kept_size = 0;
        pthread_mutex_unlock(&out_lock);
#if defined(MADV_FREE)
        out_advise(blk, size, MADV_FREE);
        pthread_mutex_lock(&out_lock);
        if (out_kept == NULL) { /* back, unless a newer block is kept */
            out_kept = blk;
            out_kept_size = size;
            out_kept_marked = 1;
            blk = NULL;
        }
        pthread_mutex_unlock(&out_lock);
#endif
        free(blk);
        pthread_mutex_lock(&out_lock);
    }
    return NULL;
}

/* Starts the reaper of this process if it is not running; call with
   out_lock held.  Returns 0 when none can run (the caller frees then). */
static int
out_reaper_running(void)
{
    pid_t self = getpid();
    if (out_reaper_pid == self) {
        return 1;
    }
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0) {
        return 0;
    }
    pthread_t th;
    int ok = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
             pthread_attr_setstacksize(&at, 64 * 1024) == 0 &&
             pthread_create(&th, &at, out_reaper, NULL) == 0;
    pthread_attr_destroy(&at);
    if (ok) {
        out_reaper_pid = self;
    }
    return ok;
}

/* free of the handler: a large block becomes the kept one (the previous
   kept block is released), which the reaper marks MADV_FREE if the next
   output does not take it within out_decay_ns. */
static void
out_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    if (ptr == NULL) {
        return;
    }
    (void)PyTraceMalloc_Untrack(OUT_TRACE_DOMAIN, (uintptr_t)ptr);
    if (size < OUT_BIG) {
        free(ptr);
        return;
    }
    (void)pthread_once(&out_once, out_init);
    void *drop = ptr;
    pthread_mutex_lock(&out_lock);
    if (out_cond_ok && out_reaper_running()) {
        drop = out_kept;
        out_kept = ptr;
        out_kept_size = size;
        out_kept_marked = 0;
        clock_gettime(OUT_CLOCK, &out_kept_at);
        pthread_cond_signal(&out_cond);
    }
    pthread_mutex_unlock(&out_lock);
    free(drop);
}

static PyDataMem_Handler out_handler = {
    "dfbuffer_to_matrix",
    1,
    {NULL, out_malloc, out_calloc, out_realloc, out_free},
};
#endif

/* Returns a new C- or F-ordered (`fortran`) 2-D array of `descr` (reference
   stolen), allocated through the handler above when it is large; NULL with
   an exception set.  *reused is set to 1 when its memory is a kept block
   (written before, so its pages are in place), else 0. */
PyObject *
dfb_matrix_new_output(PyArray_Descr *descr, npy_intp *dims, int fortran,
                      int *reused)
{
    *reused = 0;
    /* rows come from the producer: a size that overflows, or exceeds the
       machine's memory, is refused before NumPy is asked */
    int64_t cells;
    if (dfb_checked_mul(dims[0], dims[1], &cells) < 0) {
        Py_DECREF(descr);
        PyErr_SetString(PyExc_ValueError,
                        "the matrix's number of cells overflows");
        return NULL;
    }
    if (dfb_check_alloc(cells, PyDataType_ELSIZE(descr)) < 0) {
        Py_DECREF(descr);
        return NULL;
    }
#if !defined(_WIN32)
    size_t bytes = (size_t)cells * (size_t)PyDataType_ELSIZE(descr);
    if (bytes >= OUT_BIG) {
        PyObject *cap = PyCapsule_New(&out_handler, "mem_handler", NULL);
        PyObject *old = cap != NULL ? PyDataMem_SetHandler(cap) : NULL;
        Py_XDECREF(cap);
        if (old == NULL) {
            Py_DECREF(descr);
            return NULL;
        }
        out_reused = NULL;
        PyObject *out = PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims,
                                             NULL, NULL, fortran, NULL);
        *reused = out != NULL && out_reused != NULL &&
                  out_reused == PyArray_DATA((PyArrayObject *)out);
        out_reused = NULL;
        PyObject *back = PyDataMem_SetHandler(old);
        Py_DECREF(old);
        if (back == NULL) {
            Py_XDECREF(out);
            return NULL;
        }
        Py_DECREF(back);
        return out;
    }
#endif
    return PyArray_NewFromDescr(&PyArray_Type, descr, 2, dims, NULL, NULL,
                                fortran, NULL);
}

size_t
dfb_matrix_kept_bytes(void)
{
#if !defined(_WIN32)
    pthread_mutex_lock(&out_lock);
    size_t n = out_kept != NULL ? out_kept_size : 0;
    pthread_mutex_unlock(&out_lock);
    return n;
#else
    return 0;
#endif
}
