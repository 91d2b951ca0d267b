/*
 * test_safety.c - library-side safety: the symmetric allocator used from several threads of
 * a PE, free(NULL) against free(p), finalize with a stream that never finishes, init that
 * does not hold up other threads' calls, and puts/gets of 1, 2, 4 and 8 aligned bytes that
 * a concurrent reader never sees half-written.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define ALLOC_THREADS 4
#define ALLOCS_PER_THREAD 40
#define BLOCK_BYTES 192 /* not a multiple of the allocator's granule: blocks sit close */

/* ---- the allocator from several threads ---------------------------------------------- */

typedef struct {
    int idx;
    unsigned char *blocks[ALLOCS_PER_THREAD];
} alloc_thread_t;

static unsigned char pattern_of(int thread, int i)
{
    return (unsigned char)(1 + thread * ALLOCS_PER_THREAD + i);
}

/* Allocations of one size and alignment only: whichever thread of a PE makes its k-th
 * collective call, it pairs with the k-th call of every other PE and they all agree. */
static void *alloc_thread_main(void *arg)
{
    alloc_thread_t *t = arg;
    for (int i = 0; i < ALLOCS_PER_THREAD; i++) {
        unsigned char *p = (i % 3 == 2) ? aclshmem_calloc(1, BLOCK_BYTES) : aclshmem_malloc(BLOCK_BYTES);
        t->blocks[i] = p;
        if (!p) {
            harness_log("thread %d: allocation %d failed: %s", t->idx, i, aclshmemx_get_last_error());
            return NULL;
        }
        memset(p, pattern_of(t->idx, i), BLOCK_BYTES);
    }
    return NULL;
}

static int compare_addresses(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Every block still holds its own pattern: no two threads were handed overlapping ranges. */
static void expect_blocks_intact(alloc_thread_t *threads)
{
    for (int t = 0; t < ALLOC_THREADS; t++)
        for (int i = 0; i < ALLOCS_PER_THREAD; i++) {
            unsigned char *p = threads[t].blocks[i];
            if (!p)
                continue;
            for (int b = 0; b < BLOCK_BYTES; b++)
                if (p[b] != pattern_of(t, i)) {
                    harness_report(__FILE__, __LINE__, "thread %d block %d byte %d is %u, not %u: blocks overlap",
                                   t, i, b, p[b], pattern_of(t, i));
                    return;
                }
        }
}

static int t_alloc_threads(int me, int n)
{
    (void)me, (void)n;
    alloc_thread_t threads[ALLOC_THREADS];
    pthread_t ids[ALLOC_THREADS];
    for (int t = 0; t < ALLOC_THREADS; t++) {
        threads[t] = (alloc_thread_t){.idx = t};
        ASSERT_EQ(pthread_create(&ids[t], NULL, alloc_thread_main, &threads[t]), 0);
    }
    for (int t = 0; t < ALLOC_THREADS; t++)
        pthread_join(ids[t], NULL);
    expect_blocks_intact(threads);

    /* The same set of offsets on every PE (only which thread holds which may differ).  Offsets
     * from the heap's base, not addresses: each PE maps its heap wherever mmap puts it, and
     * that differs between PEs when earlier tests left their address spaces differently. */
    enum { TOTAL = ALLOC_THREADS * ALLOCS_PER_THREAD };
    uintptr_t all[TOTAL];
    uintptr_t base = (uintptr_t)aclshmemx_get_heap_base(DEVICE_SIDE);
    for (int t = 0; t < ALLOC_THREADS; t++)
        memcpy(&all[t * ALLOCS_PER_THREAD], threads[t].blocks, sizeof(threads[t].blocks));
    qsort(all, TOTAL, sizeof(all[0]), compare_addresses);
    uint64_t digest = 1469598103934665603ull;
    for (int i = 0; i < TOTAL; i++) {
        ASSERT(all[i] != 0);
        ASSERT(i == 0 || all[i] >= all[i - 1] + BLOCK_BYTES);
        digest = (digest ^ (all[i] - base)) * 1099511628211ull;
    }
    uint64_t digests[HARNESS_MAX_PES];
    harness_allgather(&digest, sizeof(digest), digests);
    for (int pe = 0; pe < harness_n_pes; pe++)
        EXPECT(digests[pe] == digests[0]);

    /* Frees in one order on every PE (the sorted addresses), then the heap is whole again. */
    for (int i = 0; i < TOTAL; i++)
        aclshmem_free((void *)all[i]);
    void *whole = aclshmem_malloc(HARNESS_DEFAULT_HEAP - (1 << 20));
    EXPECT_NOT_NULL(whole);
    aclshmem_free(whole);
    return 0;
}

/* ---- free(NULL) against free(p) ----------------------------------------------------- */

static int t_free_null_mismatch(int me, int n)
{
    (void)n;
    void *p = aclshmem_malloc(256);
    ASSERT_NOT_NULL(p);
    double t0 = harness_now();
    harness_mark_error();
    aclshmem_free(me == 0 ? NULL : p);
    double took = harness_now() - t0;
    EXPECT_ERROR_SET();
    EXPECT_ERROR_CONTAINS("NULL");
    EXPECT(took < 2.0);
    /* Nothing was freed: p is still p, and freeing it everywhere now works. */
    aclshmem_barrier_all();
    harness_mark_error();
    aclshmem_free(p);
    EXPECT(!harness_error_since_mark());
    /* free(NULL) everywhere is a no-op that succeeds. */
    aclshmem_free(NULL);
    aclshmemx_free(NULL, HOST_SIDE);
    EXPECT(!harness_error_since_mark());
    harness_ring_check(me, n);
    return 0;
}

/* ---- finalize with a stream that never finishes ------------------------------------- */

#define SHORT_TIMEOUT_S 2

static int t_finalize_stuck_wait(int me, int n)
{
    (void)me, (void)n;
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(sig);
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    aclshmem_barrier_all();
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 1, s); /* nobody sends it */
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 2, NULL);
    double t0 = harness_now();
    harness_mark_error();
    int rc = aclshmem_finalize();
    double took = harness_now() - t0;
    EXPECT_NE(rc, 0);
    EXPECT_ERROR_CONTAINS("aclshmemx_signal_wait_until_on_stream");
    EXPECT_ERROR_CONTAINS("did not finish");
    EXPECT(took < SHORT_TIMEOUT_S + 4.0);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    return 0;
}

static void sleep_kernel(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    harness_sleep_ms((int)(intptr_t)arg);
}

/* A kernel busy in its own code cannot be woken: finalize gives up on it in bounded time and
 * leaves the instance's memory mapped for it. */
static int t_finalize_stuck_kernel(int me, int n)
{
    (void)me, (void)n;
    ASSERT_EQ(aclshmemx_kernel_launch(NULL, sleep_kernel, 2, (void *)(intptr_t)20000), 0);
    double t0 = harness_now();
    harness_mark_error();
    int rc = aclshmem_finalize();
    double took = harness_now() - t0;
    EXPECT_NE(rc, 0);
    EXPECT_ERROR_CONTAINS("aclshmemx_kernel_launch");
    EXPECT(took < SHORT_TIMEOUT_S + 4.0);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    /* The library left the abandoned instance allocated on purpose (the kernel still runs):
     * end here, before the harness's leak check would count it. */
    fflush(NULL);
    _exit(harness_failures ? 1 : 0);
}

/* ---- init does not hold other threads up --------------------------------------------- */

#define LATE_MS 1500

typedef struct {
    aclshmemx_init_attr_t attr;
    int rc;
    double done;
} init_thread_t;

static void *init_thread_main(void *arg)
{
    init_thread_t *t = arg;
    t->rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &t->attr);
    t->done = harness_now();
    return NULL;
}

/* A one-PE job of its own, initialised, used and finalised while instance 0 is stuck. */
static void quick_instance(uint64_t id)
{
    aclshmemx_uniqueid_t uid;
    ASSERT_EQ(aclshmemx_get_uniqueid(&uid), 0);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.instance_id = id;
    ASSERT_EQ(aclshmemx_set_attr_uniqueid_args(0, 1, 16 << 20, &uid, &attr), 0);
    ASSERT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), 0);
    ASSERT_EQ(aclshmemx_instance_ctx_set(id), 0);
    int32_t *x = aclshmem_malloc(sizeof(int32_t));
    ASSERT_NOT_NULL(x);
    aclshmem_int32_p(x, 42, 0);
    EXPECT_EQ(aclshmem_int32_g(x, 0), 42);
    aclshmem_free(x);
    EXPECT_EQ(aclshmemx_finalize(id), 0);
}

static int t_init_not_blocking(int me, int n)
{
    aclshmemx_uniqueid_t uid = *harness_uid();
    if (me != 0) {
        harness_sleep_ms(LATE_MS); /* PE 0's init waits for this one */
        aclshmemx_init_attr_t attr;
        ASSERT_EQ(harness_make_attr(me, n, &uid, &attr), 0);
        ASSERT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), 0);
    } else {
        init_thread_t slow = {0};
        ASSERT_EQ(harness_make_attr(me, n, &uid, &slow.attr), 0);
        pthread_t id;
        double t0 = harness_now();
        ASSERT_EQ(pthread_create(&id, NULL, init_thread_main, &slow), 0);
        harness_sleep_ms(200);
        double t1 = harness_now();
        harness_mark_error();
        EXPECT_EQ(aclshmemx_instance_ctx_set(9), ACLSHMEM_INVALID_VALUE);
        EXPECT_ERROR_CONTAINS("not initialized");
        quick_instance(3);
        double took = harness_now() - t1;
        EXPECT(took < 0.9); /* not held up until instance 0 is ready (~1.5 s) */
        pthread_join(id, NULL);
        EXPECT_EQ(slow.rc, 0);
        EXPECT(slow.done - t0 > LATE_MS / 1000.0 * 0.7); /* it really was slow */
    }
    EXPECT_EQ(aclshmemx_instance_ctx_set(0), 0);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- small aligned puts and gets are not torn ---------------------------------------- */

#define READ_SECONDS 0.3

/* A writer writes all-zero / all-one words of each width as fast as it can, with put, p and
 * putmem (blocking and nbi), until the reader sets done in the writer's copy; the reader
 * looks with g, plain atomic loads and wait_until for READ_SECONDS. */
typedef struct {
    uint64_t w8;
    uint32_t w4;
    uint16_t w2;
    uint8_t w1;
    uint64_t done;
} words_t;

static void write_round(words_t *w, int round, int pe)
{
    uint64_t v8 = round & 1 ? ~0ull : 0;
    uint32_t v4 = (uint32_t)v8;
    uint16_t v2 = (uint16_t)v8;
    uint8_t v1 = (uint8_t)v8;
    switch (round % 3) {
    case 0:
        aclshmem_uint64_put(&w->w8, &v8, 1, pe);
        aclshmem_putmem(&w->w4, &v4, 4, pe);
        aclshmem_put16(&w->w2, &v2, 1, pe);
        aclshmem_put8(&w->w1, &v1, 1, pe);
        break;
    case 1:
        aclshmem_uint64_p(&w->w8, v8, pe);
        aclshmem_uint32_p(&w->w4, v4, pe);
        aclshmem_uint16_p(&w->w2, v2, pe);
        aclshmem_uint8_p(&w->w1, v1, pe);
        break;
    default:
        aclshmem_putmem_nbi(&w->w8, &v8, 8, pe);
        aclshmem_put32_nbi(&w->w4, &v4, 1, pe);
        aclshmem_putmem(&w->w2, &v2, 2, pe);
        aclshmem_putmem(&w->w1, &v1, 1, pe);
        break;
    }
}

/* Writes into PE target until the reader sets done in this PE's copy; ends all-one. */
static void writer(words_t *w, int target)
{
    int round = 0;
    while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
        write_round(w, ++round, target);
    write_round(w, 1, target);
}

static int whole(uint64_t v, uint64_t ones)
{
    return v == 0 || v == ones;
}

/* The number of torn values seen in one look at every word. */
static int reader_look(words_t *w, int me)
{
    int torn = 0;
    torn += !whole(aclshmem_uint64_g(&w->w8, me), ~0ull);
    torn += !whole(aclshmem_uint32_g(&w->w4, me), 0xFFFFFFFFu);
    torn += !whole(aclshmem_uint16_g(&w->w2, me), 0xFFFFu);
    torn += !whole(__atomic_load_n(&w->w8, __ATOMIC_RELAXED), ~0ull);
    torn += !whole(__atomic_load_n(&w->w4, __ATOMIC_RELAXED), 0xFFFFFFFFu);
    torn += !whole(__atomic_load_n(&w->w2, __ATOMIC_RELAXED), 0xFFFFu);
    return torn;
}

/* Reads for READ_SECONDS, then tells the writer (PE writer_pe) to stop. */
static void reader(words_t *w, int me, int writer_pe, const char *where)
{
    long looks = 0, waits = 0;
    int torn = 0;
    double end = harness_now() + READ_SECONDS;
    while (torn == 0 && ((looks & 1023) || harness_now() < end)) {
        torn += reader_look(w, me);
        /* Now and then a wait that ends on a change (the writer's last value is all-one, so
         * a wait for "not zero" always ends), then a look at what it saw. */
        if ((looks++ & 255) == 0 && __atomic_load_n(&w->w8, __ATOMIC_RELAXED) == 0) {
            aclshmem_uint64_wait_until(&w->w8, ACLSHMEM_CMP_NE, 0);
            waits++;
        }
    }
    aclshmem_uint64_p(&w->done, 1, writer_pe);
    if (torn)
        harness_report(__FILE__, __LINE__, "%s: a reader saw a half-written word", where);
    harness_log("%s: %ld looks, %ld waits", where, looks, waits);
}

static int t_small_puts_whole(int me, int n)
{
    (void)n;
    words_t *w = aclshmem_calloc(1, sizeof(words_t));
    ASSERT_NOT_NULL(w);
    aclshmem_barrier_all();
    if (me == 1)
        writer(w, 0);
    else if (me == 0)
        reader(w, me, 1, "puts from PE 1");
    aclshmem_barrier_all();
    aclshmem_free(w);
    return 0;
}

/* The same within one process: a thread puts into its own PE while another reads.  This
 * also lets ThreadSanitizer see both sides: a put that is a plain memmove races with the
 * atomic loads of g, test and wait_until. */
static void *self_writer_main(void *arg)
{
    writer(arg, harness_my_pe);
    return NULL;
}

static int t_small_puts_whole_self(int me, int n)
{
    (void)n;
    words_t *w = aclshmem_calloc(1, sizeof(words_t));
    ASSERT_NOT_NULL(w);
    pthread_t id;
    ASSERT_EQ(pthread_create(&id, NULL, self_writer_main, w), 0);
    reader(w, me, me, "puts from another thread");
    pthread_join(id, NULL);
    aclshmem_free(w);
    return 0;
}

static const harness_case cases[] = {
    { "alloc_threads", t_alloc_threads, { 0 }, { 2, 3 } },
    { "free_null_mismatch", t_free_null_mismatch, { .init_timeout_s = 5 }, { 2, 3 } },
    { "finalize_stuck_wait", t_finalize_stuck_wait,
      { .no_finalize = 1, .init_timeout_s = SHORT_TIMEOUT_S, .timeout_s = 30 }, { 2 } },
    { "finalize_stuck_kernel", t_finalize_stuck_kernel,
      { .no_finalize = 1, .init_timeout_s = SHORT_TIMEOUT_S, .timeout_s = 30 }, { 2 } },
    { "init_not_blocking", t_init_not_blocking, { .no_init = 1, .timeout_s = 30 }, { 2 } },
    { "small_puts_whole", t_small_puts_whole, { 0 }, { 2 } },
    { "small_puts_whole_self", t_small_puts_whole_self, { 0 }, { 1 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
