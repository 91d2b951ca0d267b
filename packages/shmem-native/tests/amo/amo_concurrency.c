/*
 * amo_concurrency.c - AMOs of many PEs, and of many kernel blocks, at once: fetch_add hands out
 * unique values, a compare_swap lock guards a read-modify-write, AMOs come after earlier puts,
 * 16 kernel blocks draw tickets and sum together, and a failing AMO in a kernel is the
 * kernel's stream error.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "amo_suite.h"

/* ---- fetch_add hands out unique values ------------------------------------------------------ */
#define TICKETS 100

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Every PE draws TICKETS tickets from PE 0's 64-bit and PE n-1's 32-bit counter at once;
 * each counter hands out 0 .. n * TICKETS - 1, each value exactly once. */
int t_fetch_add_unique(int me, int n)
{
    int64_t *counter64 = aclshmemx_calloc(1, sizeof(int64_t), HOST_SIDE);
    int32_t *counter32 = aclshmem_calloc(1, sizeof(int32_t));
    int64_t *drawn = aclshmem_calloc((size_t)n * TICKETS * 2, sizeof(int64_t));
    ASSERT_NOT_NULL(counter64);
    ASSERT_NOT_NULL(counter32);
    ASSERT_NOT_NULL(drawn);
    int64_t mine[2 * TICKETS];
    aclshmem_barrier_all();
    for (int i = 0; i < TICKETS; i++) {
        mine[i] = aclshmem_int64_atomic_fetch_add(counter64, 1, 0);
        mine[TICKETS + i] = aclshmem_int32_atomic_fetch_inc(counter32, n - 1);
    }
    aclshmem_int64_put(drawn + (size_t)me * TICKETS, mine, TICKETS, 0);
    aclshmem_int64_put(drawn + (size_t)(n + me) * TICKETS, mine + TICKETS, TICKETS, n - 1);
    aclshmem_barrier_all();
    for (int which = 0; which < 2; which++) {
        int owner = which == 0 ? 0 : n - 1;
        if (me != owner)
            continue;
        int64_t *all = drawn + (size_t)which * n * TICKETS;
        qsort(all, (size_t)n * TICKETS, sizeof(int64_t), cmp_int64);
        int wrong = 0;
        for (int64_t i = 0; i < (int64_t)n * TICKETS; i++)
            wrong += all[i] != i;
        if (wrong)
            harness_report(__FILE__, __LINE__, "%s counter: %d tickets are not 0..%d once each",
                           which ? "int32" : "int64", wrong, n * TICKETS - 1);
    }
    if (me == 0)
        EXPECT_EQ(*counter64, (int64_t)n * TICKETS);
    if (me == n - 1)
        EXPECT_EQ(*counter32, n * TICKETS);
    aclshmem_barrier_all();
    aclshmem_free(drawn);
    aclshmem_free(counter32);
    aclshmemx_free(counter64, HOST_SIDE);
    return 0;
}

/* ---- a compare_swap lock ----------------------------------------------------------------------
 * A lock word on PE n-1 guards a counter on PE 0 that is read with g and written with p
 * (no AMO), with a yield in between to invite every other PE in.  The release is an
 * atomic_set, ordered after the p.  Without mutual exclusion updates get lost. */
#define LOCKED_ROUNDS 25

int t_cswap_lock(int me, int n)
{
    int32_t *lock = aclshmem_calloc(1, sizeof(int32_t));
    int64_t *counter = aclshmem_calloc(1, sizeof(int64_t));
    ASSERT_NOT_NULL(lock);
    ASSERT_NOT_NULL(counter);
    int holder = n - 1, overlaps = 0;
    aclshmem_barrier_all();
    for (int r = 0; r < LOCKED_ROUNDS; r++) {
        while (aclshmem_int32_atomic_compare_swap(lock, 0, me + 1, holder) != 0)
            sched_yield();
        int64_t v = aclshmem_int64_g(counter, 0);
        sched_yield();
        aclshmem_int64_p(counter, v + 1, 0);
        overlaps += aclshmem_int32_atomic_fetch(lock, holder) != me + 1;
        aclshmem_int32_atomic_set(lock, 0, holder);
    }
    EXPECT_EQ(overlaps, 0);
    aclshmem_barrier_all();
    if (me == 0)
        EXPECT_EQ(*counter, (int64_t)n * LOCKED_ROUNDS);
    if (me == holder)
        EXPECT_EQ(*lock, 0);
    aclshmem_barrier_all();
    aclshmem_free(counter);
    aclshmem_free(lock);
    return 0;
}

/* ---- AMOs come after earlier puts --------------------------------------------------------------
 * Each round a PE puts a block into the next PE, then increments the next PE's flag with
 * an AMO; the next PE waits for the flag (sleeping: the AMO must wake it) and then must
 * find the whole block. */
#define ORDER_ROUNDS 40
#define ORDER_BYTES 4096

int t_after_puts(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    uint64_t *flag = aclshmem_calloc(1, sizeof(uint64_t));
    unsigned char *block = aclshmem_calloc(ORDER_BYTES, 1);
    uint64_t *ack = aclshmem_calloc(1, sizeof(uint64_t));
    ASSERT_NOT_NULL(flag);
    ASSERT_NOT_NULL(block);
    ASSERT_NOT_NULL(ack);
    unsigned char src[ORDER_BYTES];
    int torn = 0;
    aclshmem_barrier_all();
    for (int r = 1; r <= ORDER_ROUNDS; r++) {
        memset(src, (me * 16 + r) & 0xff, sizeof src);
        aclshmem_putmem(block, src, sizeof src, next);
        aclshmem_uint64_atomic_inc(flag, next);
        aclshmem_uint64_wait_until(flag, ACLSHMEM_CMP_GE, (uint64_t)r);
        for (int i = 0; i < ORDER_BYTES; i++)
            torn += block[i] != ((prev * 16 + r) & 0xff);
        /* let prev overwrite the block only after it was checked */
        aclshmem_uint64_atomic_add(ack, 1, prev);
        aclshmem_uint64_wait_until(ack, ACLSHMEM_CMP_GE, (uint64_t)r);
    }
    EXPECT_EQ(torn, 0);
    aclshmem_barrier_all();
    aclshmem_free(ack);
    aclshmem_free(block);
    aclshmem_free(flag);
    return 0;
}

/* ---- 16 kernel blocks at once ---------------------------------------------------------------- */
#define BLOCKS 16
#define BLOCK_TICKETS 40

typedef struct {
    int64_t *counter;             /* symmetric: one per PE */
    aclshmem_half_t *half_sum;    /* symmetric */
    aclshmem_bfloat16_t *bf_sum;  /* symmetric */
    int32_t *mask;                /* symmetric: bit b set by block b of every PE */
    int n_pes;
    int64_t drawn[BLOCKS][BLOCK_TICKETS]; /* tickets this PE's blocks drew from PE 0 */
    int not_increasing[BLOCKS];   /* a block saw PE 0's counter go back */
    int64_t seen_after_barrier[BLOCKS];
} kernel_arg;

static void amo_kernel(uint32_t block, uint32_t block_dim, void *varg)
{
    (void)block_dim;
    kernel_arg *a = varg;
    int me = aclshmem_my_pe();
    for (int i = 0; i < BLOCK_TICKETS; i++) {
        for (int k = 0; k < a->n_pes; k++) {
            int pe = (me + k) % a->n_pes;
            int64_t t = aclshmem_int64_atomic_fetch_add(a->counter, 1, pe);
            if (pe == 0) {
                if (i > 0 && t <= a->drawn[block][i - 1])
                    a->not_increasing[block] = 1;
                a->drawn[block][i] = t;
            }
        }
    }
    aclshmem_half_atomic_add(a->half_sum, 0x3c00 /* 1.0 */, 0);
    aclshmem_bfloat16_atomic_fetch_add(a->bf_sum, 0x3f80 /* 1.0 */, a->n_pes - 1);
    aclshmem_int32_atomic_or(a->mask, (int32_t)(1u << block), (me + 1) % a->n_pes);
    /* Every block of every PE is done once this returns: the counters are final. */
    aclshmemx_barrier_all_vec();
    a->seen_after_barrier[block] = aclshmem_int64_atomic_fetch(a->counter, me);
}

int t_kernel_blocks(int me, int n)
{
    kernel_arg *a = calloc(1, sizeof *a);
    ASSERT_NOT_NULL(a);
    a->counter = aclshmem_calloc(1, sizeof(int64_t));
    a->half_sum = aclshmem_calloc(1, sizeof(aclshmem_half_t));
    a->bf_sum = aclshmem_calloc(1, sizeof(aclshmem_bfloat16_t));
    a->mask = aclshmem_calloc(1, sizeof(int32_t));
    int64_t *all = aclshmem_calloc((size_t)n * BLOCKS * BLOCK_TICKETS, sizeof(int64_t));
    ASSERT_NOT_NULL(a->counter);
    ASSERT_NOT_NULL(a->half_sum);
    ASSERT_NOT_NULL(a->bf_sum);
    ASSERT_NOT_NULL(a->mask);
    ASSERT_NOT_NULL(all);
    a->n_pes = n;
    aclshmem_barrier_all();
    ASSERT_EQ(aclshmemx_kernel_launch(NULL, amo_kernel, BLOCKS, a), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), 0);
    int64_t total = (int64_t)n * BLOCKS * BLOCK_TICKETS;
    for (int b = 0; b < BLOCKS; b++) {
        EXPECT_EQ(a->not_increasing[b], 0);
        EXPECT_EQ(a->seen_after_barrier[b], total);
    }
    /* Every ticket of PE 0's counter went to exactly one block of one PE. */
    aclshmem_int64_put(all + (size_t)me * BLOCKS * BLOCK_TICKETS, &a->drawn[0][0], BLOCKS * BLOCK_TICKETS, 0);
    aclshmem_barrier_all();
    if (me == 0) {
        qsort(all, (size_t)total, sizeof(int64_t), cmp_int64);
        int wrong = 0;
        for (int64_t i = 0; i < total; i++)
            wrong += all[i] != i;
        EXPECT_EQ(wrong, 0);
        EXPECT_EQ(dbl_half(*a->half_sum), n * BLOCKS);
    }
    if (me == n - 1)
        EXPECT_EQ(dbl_bfloat16(*a->bf_sum), n * BLOCKS);
    EXPECT_EQ(*a->mask, (int32_t)((1u << BLOCKS) - 1));
    EXPECT_EQ(*a->counter, total);
    aclshmem_barrier_all();
    aclshmem_free(all);
    aclshmem_free(a->mask);
    aclshmem_free(a->bf_sum);
    aclshmem_free(a->half_sum);
    aclshmem_free(a->counter);
    free(a);
    return 0;
}

/* A failing AMO in a kernel is the kernel's stream error. */
static void bad_amo_kernel(uint32_t block, uint32_t block_dim, void *arg)
{
    (void)block_dim;
    int32_t *word = arg;
    if (block == 1)
        aclshmem_int32_atomic_add(word, 1, aclshmem_n_pes());
}

int t_kernel_bad_input(int me, int n)
{
    (void)me, (void)n;
    int32_t *word = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(word);
    ASSERT_EQ(aclshmemx_kernel_launch(NULL, bad_amo_kernel, 2, word), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("aclshmem_int32_atomic_add");
    EXPECT_EQ(*word, 0);
    aclshmem_barrier_all();
    aclshmem_free(word);
    return 0;
}
