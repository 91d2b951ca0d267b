/*
 * test_osh_threads.c - OpenSHMEM from several threads of each PE (SHMEM_THREAD_MULTIPLE):
 * every thread makes its own context and puts, adds and signals through it at once, while
 * another thread uses the default context, and others take a lock; the results must be
 * exact.  Run under ThreadSanitizer too (the tsan build of ci/sanitize.sh).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

#define THREADS 4
#define ROUNDS 100
#define CHUNK 64

typedef struct {
    long counters[THREADS + 1]; /* one per thread, and the default context's */
    unsigned char data[THREADS][CHUNK];
    uint64_t signals[THREADS];
    long lock, locked_sum;
} block_t;

typedef struct {
    int index, me, n;
    block_t *block;
} worker_t;

static void *context_worker(void *arg)
{
    worker_t *w = arg;
    int next = (w->me + 1) % w->n;
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        harness_report(__FILE__, __LINE__, "thread %d: shmem_ctx_create failed", w->index);
        return NULL;
    }
    unsigned char chunk[CHUNK];
    for (int r = 0; r < ROUNDS; r++) {
        memset(chunk, (unsigned char)(w->me + w->index + r), sizeof chunk);
        shmem_ctx_long_atomic_inc(ctx, &w->block->counters[w->index], next);
        shmem_ctx_putmem_signal(ctx, w->block->data[w->index], chunk, CHUNK, &w->block->signals[w->index], 1,
                                SHMEM_SIGNAL_ADD, next);
        shmem_ctx_quiet(ctx);
    }
    shmem_ctx_destroy(ctx);
    /* A lock shared by every thread of every PE. */
    for (int r = 0; r < ROUNDS / 10; r++) {
        shmem_set_lock(&w->block->lock);
        long sum = shmem_long_g(&w->block->locked_sum, 0);
        shmem_long_p(&w->block->locked_sum, sum + 1, 0);
        shmem_clear_lock(&w->block->lock);
    }
    return NULL;
}

static void *default_worker(void *arg)
{
    worker_t *w = arg;
    for (int r = 0; r < ROUNDS; r++)
        shmem_long_atomic_add(&w->block->counters[THREADS], 2, (w->me + 1) % w->n);
    shmem_quiet();
    return NULL;
}

static int t_contexts_in_threads(int me, int n)
{
    int provided = -1;
    osh_test_init();
    shmem_query_thread(&provided);
    EXPECT_EQ(provided, SHMEM_THREAD_MULTIPLE);
    block_t *block = shmem_calloc(1, sizeof(*block));
    ASSERT_NOT_NULL(block);
    pthread_t threads[THREADS + 1];
    worker_t workers[THREADS + 1];
    for (int t = 0; t <= THREADS; t++) {
        workers[t] = (worker_t){t, me, n, block};
        ASSERT_EQ(pthread_create(&threads[t], NULL, t < THREADS ? context_worker : default_worker, &workers[t]), 0);
    }
    for (int t = 0; t <= THREADS; t++)
        pthread_join(threads[t], NULL);
    shmem_barrier_all();
    int prev = (me + n - 1) % n;
    for (int t = 0; t < THREADS; t++) {
        EXPECT_EQ(block->counters[t], ROUNDS);
        EXPECT_EQ(shmem_signal_fetch(&block->signals[t]), ROUNDS);
        EXPECT_EQ(block->data[t][CHUNK - 1], (unsigned char)(prev + t + ROUNDS - 1));
    }
    EXPECT_EQ(block->counters[THREADS], 2 * ROUNDS);
    if (me == 0)
        EXPECT_EQ(block->locked_sum, (long)n * THREADS * (ROUNDS / 10));
    shmem_barrier_all();
    shmem_free(block);
    shmem_finalize();
    return 0;
}

/* shmem_init_thread's own case: every level may be requested, MULTIPLE is provided. */
static int t_init_thread(int me, int n)
{
    (void)me;
    (void)n;
    osh_test_set_launcher_env();
    int provided = -1;
    EXPECT(shmem_init_thread(42, &provided) != 0); /* no such level: nothing happens */
    EXPECT_EQ(provided, -1);
    EXPECT_EQ(shmem_init_thread(SHMEM_THREAD_FUNNELED, &provided), 0);
    EXPECT_EQ(provided, SHMEM_THREAD_MULTIPLE);
    provided = -1;
    shmem_query_thread(&provided);
    EXPECT_EQ(provided, SHMEM_THREAD_MULTIPLE);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "contexts_in_threads", t_contexts_in_threads, OSH_OPTS, OSH_PES },
    { "init_thread", t_init_thread, OSH_OPTS, OSH_PES },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
