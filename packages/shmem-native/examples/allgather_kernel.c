/*
 * allgather_kernel.c - an all-gather done inside one kernel, with no barrier in it.
 *
 *   allgather_kernel [N]      (N PEs, default 4)
 *
 * Every PE contributes BLOCKS * SLICE int64 values and ends up with everybody's
 * contribution: gathered[p] holds PE p's.  The kernel runs BLOCKS blocks, and block b owns
 * slice b of every contribution:
 *
 *   1. it puts its slice of this PE's contribution to every PE (itself included) with
 *      aclshmemx_putmem_signal, which adds 1 to the target's signal word arrived[b] once
 *      the data is there;
 *   2. it waits with aclshmem_signal_wait_until until its own arrived[b] reaches N: then
 *      slice b of every PE's contribution has landed here.
 *
 * The signal update is atomic, so N PEs count into one word without a lock and without
 * knowing who comes first.  Blocks never wait for each other and nothing waits for a whole
 * PE: a block goes on as soon as its own slices are in.  The host then checks every
 * gathered element.
 *
 * common/launch.c forks N children (child i is PE i); PE 0 makes the job's unique ID and pipes
 * its bytes to the others.  The parent prints one line and exits 0 only if every PE
 * verified every element.
 */
#define _POSIX_C_SOURCE 200809L

#include <aclshmem.h>

#include "common/launch.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define HEAP_SIZE (32LL * 1024 * 1024) /* per PE; pages are only used when touched */
#define MAX_PES 16
#define BLOCKS 8
#define SLICE 2048                     /* int64 values per block */
#define CONTRIBUTION (BLOCKS * SLICE)  /* int64 values per PE */
#define TIME_LIMIT 60                  /* seconds; a PE that hangs longer is killed */

/* The value PE pe contributes at index i: distinct for every (pe, i). */
static int64_t value_of(int pe, int i)
{
    return (int64_t)pe * 1000003 + (int64_t)i * 7 + 1;
}

typedef struct {
    int me, n;
    const int64_t *mine; /* [CONTRIBUTION] this PE's contribution (private memory) */
    int64_t *gathered;   /* symmetric [N][CONTRIBUTION] */
    int32_t *arrived;    /* symmetric [BLOCKS]: how many PEs' slice b have landed here */
} job_t;

static void allgather_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    const job_t *job = arg;
    (void)blocks;
    size_t offset = (size_t)job->me * CONTRIBUTION + (size_t)block * SLICE;
    const int64_t *slice = job->mine + (size_t)block * SLICE;
    /* Start with the right neighbour, so the PEs do not all write to PE 0 first. */
    for (int k = 1; k <= job->n; k++) {
        int target = (job->me + k) % job->n;
        aclshmemx_putmem_signal(job->gathered + offset, slice, SLICE * sizeof(int64_t), &job->arrived[block], 1,
                                ACLSHMEM_SIGNAL_ADD, target);
    }
    aclshmem_signal_wait_until(&job->arrived[block], ACLSHMEM_CMP_GE, job->n);
}

static int fail(int me, const char *what)
{
    const char *why = aclshmemx_get_last_error();
    fprintf(stderr, "PE %d: FAILED: %s%s%s\n", me, what, why && why[0] ? ": " : "", why && why[0] ? why : "");
    return 1;
}

/* Checks every gathered element and every signal word; returns the number of mismatches. */
static long check(const job_t *job)
{
    long bad = 0;
    for (int pe = 0; pe < job->n; pe++) {
        for (int i = 0; i < CONTRIBUTION; i++) {
            int64_t got = job->gathered[(size_t)pe * CONTRIBUTION + (size_t)i];
            if (got != value_of(pe, i) && bad++ < 5)
                fprintf(stderr, "PE %d: element %d of PE %d's contribution is %" PRId64 ", expected %" PRId64 "\n",
                        job->me, i, pe, got, value_of(pe, i));
        }
    }
    for (int b = 0; b < BLOCKS; b++) {
        if (job->arrived[b] != job->n && bad++ < 5)
            fprintf(stderr, "PE %d: signal of block %d is %d, expected %d\n", job->me, b, (int)job->arrived[b],
                    job->n);
    }
    return bad;
}

/* The body of PE me, run once it has joined the job (common/launch.c). */
static int pe_main(int me, int n, void *unused)
{
    (void)unused;
    int64_t *mine = malloc(CONTRIBUTION * sizeof(int64_t));
    /* calloc is collective: when it returns, every PE's buffers are zeroed, so nobody's
     * put or signal can land before the zeroing. */
    job_t job = {me, n, mine, aclshmem_calloc((size_t)n * CONTRIBUTION, sizeof(int64_t)),
                 aclshmem_calloc(BLOCKS, sizeof(int32_t))};
    if (!mine || !job.gathered || !job.arrived)
        return fail(me, "allocation");
    for (int i = 0; i < CONTRIBUTION; i++)
        mine[i] = value_of(me, i);

    int failures = 0;
    aclrtStream stream;
    if (aclshmemx_stream_create(&stream) != ACLSHMEM_SUCCESS)
        return fail(me, "aclshmemx_stream_create");
    if (aclshmemx_kernel_launch(stream, allgather_kernel, BLOCKS, &job) != ACLSHMEM_SUCCESS)
        failures += fail(me, "aclshmemx_kernel_launch");
    else if (aclshmemx_stream_synchronize(stream) != ACLSHMEM_SUCCESS)
        failures += fail(me, "the all-gather kernel");
    else if (check(&job) != 0)
        failures += fail(me, "gathered data");
    aclshmemx_stream_destroy(stream);

    aclshmem_barrier_all(); /* nobody frees a buffer another PE may still write */
    aclshmem_free(job.arrived);
    aclshmem_free(job.gathered);
    free(mine);
    if (aclshmem_finalize() != ACLSHMEM_SUCCESS)
        failures += fail(me, "aclshmem_finalize");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    int n = 4;
    if (argc > 1) {
        char *end;
        long v = strtol(argv[1], &end, 10);
        if (argc > 2 || end == argv[1] || *end || v < 1 || v > MAX_PES) {
            fprintf(stderr, "usage: %s [number of PEs, 1..%d]\n", argv[0], MAX_PES);
            return 2;
        }
        n = (int)v;
    }
    double t0 = example_now();
    int bad = example_launch("allgather_kernel", n, HEAP_SIZE, TIME_LIMIT, pe_main, NULL);
    if (bad < 0)
        return 1;
    if (bad) {
        printf("allgather_kernel: FAILED on %d of %d PEs\n", bad, n);
        return 1;
    }
    printf("allgather_kernel: OK: %d PEs x %d blocks, each PE checked %d gathered int64 values (%.2f s)\n", n,
           BLOCKS, n * CONTRIBUTION, example_now() - t0);
    return 0;
}
