/* The copy inside to_matrix(order="F") alone: 50 float64 columns of 1e6
   values into one 400 MB column-major block, on 1 or 2 threads, with glibc's
   memcpy (what polars' copy_from_slice calls) and with SSE2 non-temporal
   stores (dfb_stream_copy of src/core/stream_copy.h, what to_matrix uses
   into a reused block); with MADV_FREE the block is marked before every
   copy, as the output handler did in its free.
   Prints the best wall and process CPU time of 12 rounds for each.

       cc -O2 -pthread -o /tmp/matrix_stores benchmarks/matrix_stores.c
       /tmp/matrix_stores THREADS [MADV_FREE]
*/
#define _GNU_SOURCE
#include <emmintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../src/core/stream_copy.h" /* to_matrix's own copy loop */

#define K 50
#define N 1000000L

static double *src[K];
static char *out;
static int streamed;

typedef struct {
    long r0, r1;
} share;

/* Copies rows [r0, r1) of every column (to_matrix's split by rows). */
static void *
run(void *arg)
{
    share *t = arg;
    for (long j = 0; j < K; j++) {
        char *d = out + (j * N + t->r0) * 8;
        const char *s = (const char *)(src[j] + t->r0);
        long n = (t->r1 - t->r0) * 8;
        if (streamed) {
            dfb_stream_copy(d, s, n);
        }
        else {
            memcpy(d, s, (size_t)n);
        }
    }
    _mm_sfence();
    return NULL;
}

static double
seconds(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
    int nt = argc > 1 ? atoi(argv[1]) : 2;
    int mark = argc > 2;
    if (nt < 1 || nt > 2) {
        fprintf(stderr, "threads: 1 or 2\n");
        return 2;
    }
    for (int j = 0; j < K; j++) {
        src[j] = malloc(N * 8);
        for (long i = 0; i < N; i++) {
            src[j][i] = i * 0.5 + j;
        }
    }
    out = aligned_alloc(4096, K * N * 8);
    memset(out, 1, K * N * 8);
    double wall[2] = {1e9, 1e9}, cpu[2] = {1e9, 1e9};
    for (int round = 0; round < 12; round++) {
        for (streamed = 0; streamed < 2; streamed++) {
            if (mark) {
                madvise(out, K * N * 8, MADV_FREE);
            }
            share sh[2] = {{0, N / nt}, {N / nt, N}};
            pthread_t th;
            double t0 = seconds(CLOCK_MONOTONIC);
            double c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
            if (nt == 2 && pthread_create(&th, NULL, run, &sh[1]) != 0) {
                return 1;
            }
            run(&sh[0]);
            if (nt == 2) {
                pthread_join(th, NULL);
            }
            double dt = seconds(CLOCK_MONOTONIC) - t0;
            double dc = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
            wall[streamed] = dt < wall[streamed] ? dt : wall[streamed];
            cpu[streamed] = dc < cpu[streamed] ? dc : cpu[streamed];
        }
    }
    printf(
        "threads %d%s: memcpy %.1f ms (cpu %.1f), non-temporal %.1f ms "
        "(cpu %.1f)\n",
        nt, mark ? ", MADV_FREE before each" : "", wall[0] * 1e3, cpu[0] * 1e3,
        wall[1] * 1e3, cpu[1] * 1e3);
    return 0;
}
