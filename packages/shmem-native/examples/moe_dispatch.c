/*
 * moe_dispatch.c - the token dispatch and combine of a mixture-of-experts layer, in one
 * kernel per PE, with remote atomics reserving the slots.
 *
 *   moe_dispatch [N [SEED]]      (N PEs, default 4; routing seed, default 2024)
 *
 * Every PE owns TOKENS tokens of HIDDEN floats and hosts EXPERTS_PER_PE experts; token t of
 * PE p goes to the expert route(seed, p, t), which may live on any PE (a quarter of all
 * tokens go to expert 0, a hot expert, as real routers produce).  The kernel has BLOCKS
 * blocks and block b handles slice b of this PE's tokens:
 *
 *   dispatch  for each token: reserve a slot in the expert's inbox on the expert's PE with
 *             aclshmem_int32_atomic_fetch_add on that expert's fill counter (the old value is
 *             the slot, unique however many blocks of however many PEs race for it), put the
 *             token there, and when the slice is done add 1 to every PE's `dispatched`
 *             signal (aclshmemx_signal_op is ordered after this PE's puts to that PE);
 *   wait      until `dispatched` reaches N * BLOCKS: every block of every PE has put its
 *             tokens, and the fill counters hold how many each expert received;
 *   compute   each expert's tokens are shared out among the blocks; a token's result is
 *             token * (expert + 1);
 *   combine   put each result back to its owner, at the token's original index, then add 1
 *             to every PE's `combined` signal and wait until it reaches N * BLOCKS.
 *
 * Without an atomic fetch_add two senders could read the same fill count and write the
 * same slot: one token would be lost and its owner would never get its result back.  The
 * host checks, element by element, every token each expert received (and that none came
 * twice or went missing) and every result that came back.
 *
 * common/launch.c forks N children (child i is PE i); PE 0 makes the job's unique ID and pipes
 * its bytes to the others.  The parent prints one line and exits 0 only if every PE
 * verified everything.
 */
#define _POSIX_C_SOURCE 200809L

#include <aclshmem.h>

#include "common/launch.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_SIZE (32LL * 1024 * 1024) /* per PE; pages are only used when touched */
#define MAX_PES 16
#define BLOCKS 8
#define TOKENS 512 /* per PE */
#define HIDDEN 16  /* floats per token */
#define EXPERTS_PER_PE 2
#define DEFAULT_SEED 2024
#define TIME_LIMIT 60 /* seconds; a PE that hangs longer is killed */

/* A token on its way to an expert, and its result on the way back. */
typedef struct {
    int32_t filled;  /* 1 once written: a slot nobody wrote reads 0 (the heap is calloc'ed) */
    int32_t owner;   /* the PE the token belongs to */
    int32_t index;   /* its index among the owner's tokens */
    int32_t expert;  /* the expert it was routed to */
    float x[HIDDEN];
} token_msg_t;

typedef struct {
    int me, n;
    uint64_t seed;
    int32_t *fill;        /* symmetric [EXPERTS_PER_PE]: slots taken in each local expert's inbox */
    token_msg_t *inbox;   /* symmetric [EXPERTS_PER_PE][N * TOKENS]: room for every token of the job */
    token_msg_t *results; /* symmetric [TOKENS]: this PE's tokens after their expert */
    int32_t *dispatched;  /* symmetric signal: blocks (of all PEs) done dispatching */
    int32_t *combined;    /* symmetric signal: blocks (of all PEs) done combining */
} job_t;

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The expert (0 .. N * EXPERTS_PER_PE - 1) that token t of PE pe goes to.  Expert 0 is hot:
 * it gets a quarter of all tokens, so many blocks race for its counter at once. */
static int route(uint64_t seed, int n, int pe, int t)
{
    uint64_t h = splitmix64(seed ^ ((uint64_t)pe << 32 | (uint64_t)t));
    if ((h & 3) == 0)
        return 0;
    return (int)((h >> 2) % (uint64_t)(n * EXPERTS_PER_PE));
}

/* Element j of token t of PE pe: small integers, so every product below is exact. */
static float token_value(int pe, int t, int j)
{
    return (float)((pe * 131 + t * 17 + j * 5) % 1000 - 500);
}

static float expert_scale(int expert)
{
    return (float)(expert + 1);
}

static size_t inbox_capacity(int n)
{
    return (size_t)n * TOKENS;
}

static void dispatch(const job_t *job, uint32_t block)
{
    int per_block = TOKENS / BLOCKS;
    for (int t = (int)block * per_block; t < ((int)block + 1) * per_block; t++) {
        int expert = route(job->seed, job->n, job->me, t);
        int pe = expert / EXPERTS_PER_PE, local = expert % EXPERTS_PER_PE;
        int32_t slot = aclshmem_int32_atomic_fetch_add(&job->fill[local], 1, pe);
        if (slot < 0 || (size_t)slot >= inbox_capacity(job->n))
            continue; /* a broken counter: the host check reports the lost token */
        token_msg_t msg = {1, job->me, t, expert, {0}};
        for (int j = 0; j < HIDDEN; j++)
            msg.x[j] = token_value(job->me, t, j);
        aclshmem_putmem(&job->inbox[(size_t)local * inbox_capacity(job->n) + (size_t)slot], &msg, sizeof msg, pe);
    }
    for (int pe = 0; pe < job->n; pe++)
        aclshmemx_signal_op(job->dispatched, 1, ACLSHMEM_SIGNAL_ADD, pe);
}

/* Block `block` takes every BLOCKS-th token of each local expert's inbox. */
static void compute_and_combine(const job_t *job, uint32_t block)
{
    for (int local = 0; local < EXPERTS_PER_PE; local++) {
        int32_t received = aclshmem_int32_atomic_fetch(&job->fill[local], job->me);
        const token_msg_t *box = job->inbox + (size_t)local * inbox_capacity(job->n);
        for (int32_t slot = (int32_t)block; slot < received && (size_t)slot < inbox_capacity(job->n);
             slot += BLOCKS) {
            token_msg_t out = box[slot];
            if (!out.filled || out.owner < 0 || out.owner >= job->n || out.index < 0 || out.index >= TOKENS)
                continue; /* an empty or garbled slot: the host check reports it */
            for (int j = 0; j < HIDDEN; j++)
                out.x[j] *= expert_scale(out.expert);
            aclshmem_putmem(&job->results[out.index], &out, sizeof out, out.owner);
        }
    }
    for (int pe = 0; pe < job->n; pe++)
        aclshmemx_signal_op(job->combined, 1, ACLSHMEM_SIGNAL_ADD, pe);
}

static void moe_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    const job_t *job = arg;
    int32_t everyone = job->n * (int32_t)blocks;
    dispatch(job, block);
    aclshmem_signal_wait_until(job->dispatched, ACLSHMEM_CMP_GE, everyone);
    compute_and_combine(job, block);
    aclshmem_signal_wait_until(job->combined, ACLSHMEM_CMP_GE, everyone);
}

static int fail(int me, const char *what)
{
    const char *why = aclshmemx_get_last_error();
    fprintf(stderr, "PE %d: FAILED: %s%s%s\n", me, what, why && why[0] ? ": " : "", why && why[0] ? why : "");
    return 1;
}

/* Reports a mismatch (the first few only); returns 1 for `bad += ...`. */
static int mismatch(long *reported, int me, const char *what, long a, long b, long got, long want)
{
    if ((*reported)++ < 5)
        fprintf(stderr, "PE %d: %s (%ld, %ld): found %ld, expected %ld\n", me, what, a, b, got, want);
    return 1;
}

/* The expert side: each local expert received exactly the tokens routed to it, each once,
 * intact. */
static long check_inboxes(const job_t *job, long *reported)
{
    long bad = 0;
    int n = job->n;
    char *seen = calloc((size_t)n * TOKENS, 1);
    if (!seen)
        return 1;
    for (int local = 0; local < EXPERTS_PER_PE; local++) {
        int expert = job->me * EXPERTS_PER_PE + local;
        long want = 0;
        for (int pe = 0; pe < n; pe++)
            for (int t = 0; t < TOKENS; t++)
                want += route(job->seed, n, pe, t) == expert;
        long received = job->fill[local];
        if (received != want) {
            bad += mismatch(reported, job->me, "tokens received by expert, local", expert, local, received, want);
            continue;
        }
        const token_msg_t *box = job->inbox + (size_t)local * inbox_capacity(n);
        for (long slot = 0; slot < received; slot++) {
            const token_msg_t *m = &box[slot];
            if (!m->filled || m->expert != expert || m->owner < 0 || m->owner >= n || m->index < 0 ||
                m->index >= TOKENS || route(job->seed, n, m->owner, m->index) != expert) {
                bad += mismatch(reported, job->me, "empty or misrouted slot of expert", expert, slot, m->filled, 1);
                continue;
            }
            char *once = &seen[(size_t)m->owner * TOKENS + (size_t)m->index];
            if ((*once)++)
                bad += mismatch(reported, job->me, "token (owner, index) arrived twice", m->owner, m->index, 2, 1);
            for (int j = 0; j < HIDDEN; j++)
                if (m->x[j] != token_value(m->owner, m->index, j))
                    bad += mismatch(reported, job->me, "token element (slot, j)", slot, j, (long)m->x[j],
                                    (long)token_value(m->owner, m->index, j));
        }
    }
    free(seen);
    return bad;
}

/* The owner side: every token came back from its expert, multiplied by the expert's scale. */
static long check_results(const job_t *job, long *reported)
{
    long bad = 0;
    for (int t = 0; t < TOKENS; t++) {
        const token_msg_t *r = &job->results[t];
        int expert = route(job->seed, job->n, job->me, t);
        if (!r->filled || r->owner != job->me || r->index != t || r->expert != expert) {
            bad += mismatch(reported, job->me, "result of token (t, expert) missing or wrong, expert", t, expert,
                            r->expert, expert);
            continue;
        }
        for (int j = 0; j < HIDDEN; j++) {
            float want = token_value(job->me, t, j) * expert_scale(expert);
            if (r->x[j] != want)
                bad += mismatch(reported, job->me, "result element (t, j)", t, j, (long)r->x[j], (long)want);
        }
    }
    return bad;
}

/* The body of PE me, run once it has joined the job (common/launch.c). */
static int pe_main(int me, int n, void *seed_arg)
{
    uint64_t seed = *(const uint64_t *)seed_arg;
    /* calloc is collective: when it returns, every PE's counters and slots are zero, so no
     * AMO, put or signal of another PE can land before the zeroing. */
    job_t job = {me, n, seed, aclshmem_calloc(EXPERTS_PER_PE, sizeof(int32_t)),
                 aclshmem_calloc(EXPERTS_PER_PE * inbox_capacity(n), sizeof(token_msg_t)),
                 aclshmem_calloc(TOKENS, sizeof(token_msg_t)), aclshmem_calloc(1, sizeof(int32_t)),
                 aclshmem_calloc(1, sizeof(int32_t))};
    if (!job.fill || !job.inbox || !job.results || !job.dispatched || !job.combined)
        return fail(me, "allocation");

    int failures = 0;
    long reported = 0;
    aclrtStream stream;
    if (aclshmemx_stream_create(&stream) != ACLSHMEM_SUCCESS)
        return fail(me, "aclshmemx_stream_create");
    if (aclshmemx_kernel_launch(stream, moe_kernel, BLOCKS, &job) != ACLSHMEM_SUCCESS)
        failures += fail(me, "aclshmemx_kernel_launch");
    else if (aclshmemx_stream_synchronize(stream) != ACLSHMEM_SUCCESS)
        failures += fail(me, "the dispatch/combine kernel");
    else if (check_inboxes(&job, &reported) + check_results(&job, &reported) != 0)
        failures += fail(me, "tokens or results");
    aclshmemx_stream_destroy(stream);

    aclshmem_barrier_all(); /* nobody frees a buffer another PE may still write */
    aclshmem_free(job.combined);
    aclshmem_free(job.dispatched);
    aclshmem_free(job.results);
    aclshmem_free(job.inbox);
    aclshmem_free(job.fill);
    if (aclshmem_finalize() != ACLSHMEM_SUCCESS)
        failures += fail(me, "aclshmem_finalize");
    return failures ? 1 : 0;
}

static int parse_args(int argc, char **argv, int *n, uint64_t *seed)
{
    char *end;
    if (argc > 3)
        return -1;
    if (argc > 1) {
        long v = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end || v < 1 || v > MAX_PES)
            return -1;
        *n = (int)v;
    }
    if (argc > 2) {
        errno = 0;
        unsigned long long v = strtoull(argv[2], &end, 10);
        if (end == argv[2] || *end || errno || argv[2][0] == '-')
            return -1;
        *seed = v;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int n = 4;
    uint64_t seed = DEFAULT_SEED;
    if (parse_args(argc, argv, &n, &seed) != 0) {
        fprintf(stderr, "usage: %s [number of PEs, 1..%d [routing seed, an unsigned integer]]\n", argv[0], MAX_PES);
        return 2;
    }
    double t0 = example_now();
    int bad = example_launch("moe_dispatch", n, HEAP_SIZE, TIME_LIMIT, pe_main, &seed);
    if (bad < 0)
        return 1;
    if (bad) {
        printf("moe_dispatch: FAILED on %d of %d PEs\n", bad, n);
        return 1;
    }
    printf("moe_dispatch: OK: %d PEs x %d blocks, %d tokens to %d experts (seed %llu), each checked at its expert "
           "and back at its owner (%.2f s)\n",
           n, BLOCKS, n * TOKENS, n * EXPERTS_PER_PE, (unsigned long long)seed, example_now() - t0);
    return 0;
}
