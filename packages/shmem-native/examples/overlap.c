/*
 * overlap.c - compute and communication fused in one kernel, in the spirit of the original
 * library's fused operators (matmul + allreduce and friends).
 *
 *   overlap [N]      (N PEs, default 4)
 *
 * common/launch.c forks N children (PE i = child i), PE 0 makes the unique ID and pipes its
 * bytes to the others.  Every PE then launches one kernel of BLOCKS blocks on a stream of
 * its own.  The result vector is cut into BLOCKS chunks and each block owns one chunk:
 *
 *   1. it computes its chunk of the PE's local contribution (an arithmetic loop standing in
 *      for a matmul tile),
 *   2. it runs a ring all-reduce of that chunk: in each of the N-1 steps it puts its running
 *      sum to the right neighbour with aclshmemx_putmem_signal_nbi (data first, then the
 *      per-step, per-chunk signal), then waits with aclshmem_signal_wait_until for the left
 *      neighbour's chunk of that step and adds its own contribution to it.
 *
 * Blocks do not wait for each other: while one block waits for its chunk, the others are
 * still computing or already sending, so computation and communication overlap.  Every step
 * gets its own receive buffer and signal, so nothing is ever overwritten while being read.
 * The host synchronizes the stream, checks every element against the sum computed
 * directly, and prints what it verified.  The parent exits 0 only when every PE did.
 */
#define _POSIX_C_SOURCE 200809L

#include <aclshmem.h>

#include "common/launch.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_SIZE (64LL * 1024 * 1024)
#define MAX_PES 16
#define BLOCKS 4
#define CHUNK 8192 /* doubles per block */
#define TOTAL (BLOCKS * CHUNK)
#define WORK 24    /* inner iterations per element: the "compute" */
#define TIME_LIMIT 120

/* What PE pe contributes at element i: a small loop, so computing takes a while. */
static double contribution(int pe, int i)
{
    double x = (double)(i % 1000) * 0.001 + pe;
    double acc = 0.0;
    for (int k = 1; k <= WORK; k++)
        acc += x / (double)(k * k + pe + 1);
    return acc;
}

typedef struct {
    int me, n;
    double *acc;     /* [TOTAL] this PE's running sums, then the result */
    double *recv;    /* symmetric [N-1][TOTAL]: step s's chunks from the left neighbour */
    int32_t *signal; /* symmetric [N-1][BLOCKS]: set to 1 when that chunk has arrived */
} job_t;

static void fused_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    job_t *job = arg;
    (void)blocks;
    int right = (job->me + 1) % job->n;
    double *mine = job->acc + (size_t)block * CHUNK;
    /* 1. compute */
    for (int i = 0; i < CHUNK; i++)
        mine[i] = contribution(job->me, (int)block * CHUNK + i);
    /* 2. ring all-reduce of this chunk, one neighbour step at a time */
    for (int step = 0; step < job->n - 1; step++) {
        size_t slot = (size_t)step * TOTAL + (size_t)block * CHUNK;
        int32_t *sig = &job->signal[step * BLOCKS + (int)block];
        aclshmemx_putmem_signal_nbi(job->recv + slot, mine, CHUNK * sizeof(double), sig, 1, ACLSHMEM_SIGNAL_SET,
                                    right);
        aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, 1);
        /* the left neighbour's running sum plus my own contribution */
        for (int i = 0; i < CHUNK; i++)
            mine[i] = job->recv[slot + (size_t)i] + contribution(job->me, (int)block * CHUNK + i);
    }
}

static int fail(int me, const char *what)
{
    const char *why = aclshmemx_get_last_error();
    fprintf(stderr, "PE %d: FAILED: %s%s%s\n", me, what, why && why[0] ? ": " : "", why && why[0] ? why : "");
    return 1;
}

/* The body of PE me, run once it has joined the job (common/launch.c). */
static int pe_main(int me, int n, void *unused)
{
    (void)unused;
    int steps = n - 1 > 0 ? n - 1 : 1;
    job_t job = {me, n, malloc(TOTAL * sizeof(double)), aclshmem_calloc((size_t)steps * TOTAL, sizeof(double)),
                 aclshmem_calloc((size_t)steps * BLOCKS, sizeof(int32_t))};
    if (!job.acc || !job.recv || !job.signal)
        return fail(me, "allocation");
    aclrtStream stream;
    if (aclshmemx_stream_create(&stream) != ACLSHMEM_SUCCESS)
        return fail(me, "aclshmemx_stream_create");

    double t0 = example_now();
    if (aclshmemx_kernel_launch(stream, fused_kernel, BLOCKS, &job) != ACLSHMEM_SUCCESS)
        return fail(me, "aclshmemx_kernel_launch");
    if (aclshmemx_stream_synchronize(stream) != ACLSHMEM_SUCCESS)
        return fail(me, "the fused kernel");
    double elapsed = example_now() - t0;

    int failures = 0;
    double checksum = 0.0;
    for (int i = 0; i < TOTAL; i++) {
        double want = 0.0;
        for (int pe = 0; pe < n; pe++)
            want += contribution(pe, i);
        double diff = job.acc[i] > want ? job.acc[i] - want : want - job.acc[i];
        if (diff > 1e-9 * (want > 0 ? want : -want) + 1e-12) { /* the ring adds in another order */
            fprintf(stderr, "PE %d: element %d is %.17g, expected %.17g\n", me, i, job.acc[i], want);
            failures = 1;
            break;
        }
        checksum += job.acc[i];
    }
    if (!failures)
        printf("PE %d: fused compute + ring all-reduce of %d doubles over %d PEs in %d blocks verified "
               "(checksum %.6f, %.1f ms)\n", me, TOTAL, n, BLOCKS, checksum, elapsed * 1e3);

    aclshmemx_stream_destroy(stream);
    aclshmem_barrier_all(); /* nobody frees a buffer a neighbour may still read */
    aclshmem_free(job.signal);
    aclshmem_free(job.recv);
    free(job.acc);
    if (aclshmem_finalize() != ACLSHMEM_SUCCESS)
        failures |= fail(me, "finalize");
    return failures;
}

int main(int argc, char **argv)
{
    int n = 4;
    if (argc > 1) {
        char *end;
        long v = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end || v < 1 || v > MAX_PES) {
            fprintf(stderr, "usage: %s [number of PEs, 1..%d]\n", argv[0], MAX_PES);
            return 2;
        }
        n = (int)v;
    }
    int bad = example_launch("overlap", n, HEAP_SIZE, TIME_LIMIT, pe_main, NULL);
    printf("overlap: %s\n", bad ? "FAILED" : "all PEs verified");
    return bad ? 1 : 0;
}
