/*
 * test_osh_generic.c - the C11 generic names of shmem.h on real PEs: each one, with and
 * without a context, on several types, must reach the typed function of its argument's
 * type (the results show which one ran: a float put moves floats, a long long AMO adds to
 * the whole 64-bit word).  Built with -std=c11 -pedantic -Werror.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

typedef struct {
    double d[4];
    float f[4];
    short s[4];
    unsigned char uc[4];
    long long ll[4];
    unsigned long ul[4];
    int i[8];
    uint64_t sig;
    const int ci[1]; /* read through const pointers */
} block_t;

static int t_rma(int me, int n)
{
    osh_test_init();
    block_t *b = shmem_calloc(1, sizeof(*b));
    ASSERT_NOT_NULL(b);
    shmem_ctx_t ctx;
    ASSERT_EQ(shmem_ctx_create(0, &ctx), 0);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    double d[4] = {me + 0.5, me + 1.5, me + 2.5, me + 3.5};
    float f[4] = {me + 0.25f, 1, 2, 3};
    short s = (short)(-1000 - me);
    unsigned char uc[4] = {1, 2, 3, (unsigned char)(200 + me)};
    shmem_put(b->d, d, 4, next);
    shmem_put_nbi(ctx, b->f, f, 4, next);
    shmem_p(&b->s[1], s, next);
    shmem_p(ctx, &b->uc[3], uc[3], next);
    /* (Arguments with commas of their own, such as compound literals, need parentheses in a
     * macro call, as in any macro's.) */
    int every_other[3] = {me, -1, me + 1};
    long long shifted = (long long)me << 40;
    shmem_iput(b->i, every_other, 2, 2, 2, next);
    shmem_put_signal(ctx, b->ll, &shifted, 1, &b->sig, 1, SHMEM_SIGNAL_ADD, next);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    EXPECT(b->d[3] == prev + 3.5);
    EXPECT(b->f[0] == prev + 0.25f);
    EXPECT_EQ(b->s[1], -1000 - prev);
    EXPECT_EQ(b->uc[3], 200 + prev);
    EXPECT(b->i[0] == prev && b->i[1] == 0 && b->i[2] == prev + 1);
    EXPECT(b->ll[0] == (long long)prev << 40);
    EXPECT_EQ(shmem_signal_fetch(&b->sig), 1);
    double got[4] = {0};
    shmem_get(ctx, got, b->d, 4, next);
    EXPECT(got[2] == me + 2.5);
    EXPECT(shmem_g(&b->f[0], next) == me + 0.25f);
    EXPECT(shmem_g(ctx, b->ci, next) == 0); /* a const int * source */
    int strided[3] = {0};
    shmem_iget(strided, b->i, 2, 2, 2, next);
    EXPECT(strided[0] == me && strided[2] == me + 1);
    shmem_get_nbi(got, b->d, 1, prev);
    shmem_quiet();
    EXPECT(got[0] == (prev + n - 1) % n + 0.5);
    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_free(b);
    shmem_finalize();
    return 0;
}

static int t_atomics(int me, int n)
{
    osh_test_init();
    block_t *b = shmem_calloc(1, sizeof(*b));
    ASSERT_NOT_NULL(b);
    shmem_ctx_t ctx;
    ASSERT_EQ(shmem_ctx_create(0, &ctx), 0);
    long long big = 1LL << 40;
    shmem_atomic_add(&b->ll[0], big, 0);
    shmem_atomic_inc(ctx, &b->ll[1], 0);
    long long before = shmem_atomic_fetch_add(ctx, &b->ll[2], big, 0);
    EXPECT_EQ(before % big, 0);
    unsigned long old = 0;
    shmem_atomic_fetch_inc_nbi(&old, &b->ul[0], 0);
    shmem_atomic_fetch_add_nbi(ctx, &old, &b->ul[0], 1, 0);
    shmem_atomic_or(&b->ul[1], 1ul << me, 0);
    shmem_atomic_fetch_xor(ctx, &b->ul[2], 1ul << (me + 8), 0);
    shmem_atomic_fetch_and_nbi(&old, &b->ul[3], ~0ul, 0);
    shmem_atomic_set(ctx, &b->d[me % 4], 1.5, 0);
    shmem_barrier_all();
    if (me == 0) {
        EXPECT(b->ll[0] == n * big && b->ll[1] == n && b->ll[2] == n * big);
        EXPECT_EQ(b->ul[0], 2UL * n);
        EXPECT_EQ(b->ul[1], (1ul << n) - 1);
        EXPECT_EQ(b->ul[2], ((1ul << n) - 1) << 8);
        EXPECT(b->d[0] == 1.5);
    }
    shmem_barrier_all();
    EXPECT(shmem_atomic_fetch(&b->d[0], 0) == 1.5);
    EXPECT(shmem_atomic_fetch(ctx, b->ci, 0) == 0);
    double fetched = 0;
    shmem_atomic_fetch_nbi(&fetched, &b->d[0], 0);
    EXPECT(fetched == 1.5);
    shmem_barrier_all();
    if (me == 0) {
        EXPECT(shmem_atomic_swap(&b->f[0], 2.5f, 1 % n) == 0.0f);
        EXPECT_EQ(shmem_atomic_compare_swap(ctx, &b->i[0], 0, 7, 1 % n), 0);
        int prior = -1;
        shmem_atomic_compare_swap_nbi(&prior, &b->i[0], 7, 8, 1 % n);
        EXPECT_EQ(prior, 7);
        float swapped = 0;
        shmem_atomic_swap_nbi(ctx, &swapped, &b->f[0], 3.5f, 1 % n);
        EXPECT(swapped == 2.5f);
        shmem_atomic_and(&b->ul[3], 0ul, 0);
        shmem_atomic_xor(ctx, &b->ul[3], 5ul, 0);
        EXPECT_EQ(shmem_atomic_fetch_and(&b->ul[3], 4ul, 0), 5);
        EXPECT_EQ(shmem_atomic_fetch_or(ctx, &b->ul[3], 1ul, 0), 4);
        shmem_atomic_fetch_or_nbi(&old, &b->ul[3], 2ul, 0);
        shmem_atomic_fetch_xor_nbi(ctx, &old, &b->ul[3], 7ul, 0);
        EXPECT_EQ(old, 7);
        EXPECT_EQ(b->ul[3], 0);
    }
    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_free(b);
    shmem_finalize();
    return 0;
}

/* Every PE sets the next one's variables; the generic waits and tests read them. */
static int t_waits(int me, int n)
{
    osh_test_init();
    block_t *b = shmem_calloc(1, sizeof(*b));
    ASSERT_NOT_NULL(b);
    int next = (me + 1) % n;
    size_t idx[4];
    short want[4] = {0, 9, 0, 9};
    shmem_p(&b->s[1], (short)9, next);
    shmem_p(&b->s[3], (short)9, next);
    shmem_atomic_set(&b->ll[2], 5LL, next);
    shmem_wait_until(&b->ll[2], SHMEM_CMP_EQ, 5LL);
    shmem_wait_until_all(&b->s[1], 1, NULL, SHMEM_CMP_EQ, (short)9);
    size_t any = shmem_wait_until_any(b->s, 4, NULL, SHMEM_CMP_EQ, (short)9);
    EXPECT(any == 1 || any == 3);
    EXPECT_EQ(shmem_wait_until_some(b->s, 4, idx, NULL, SHMEM_CMP_EQ, (short)9), 2);
    shmem_wait_until_all_vector(b->s, 4, NULL, SHMEM_CMP_EQ, want);
    EXPECT(shmem_wait_until_any_vector(b->s, 4, NULL, SHMEM_CMP_EQ, want) < 4);
    EXPECT_EQ(shmem_wait_until_some_vector(b->s, 4, idx, NULL, SHMEM_CMP_EQ, want), 4);
    EXPECT_EQ(shmem_test(&b->ll[2], SHMEM_CMP_GT, 4LL), 1);
    EXPECT_EQ(shmem_test_all(b->s, 4, NULL, SHMEM_CMP_EQ, (short)9), 0);
    EXPECT(shmem_test_any(b->s, 4, NULL, SHMEM_CMP_EQ, (short)9) < 4);
    EXPECT_EQ(shmem_test_some(b->s, 4, idx, NULL, SHMEM_CMP_NE, (short)9), 2);
    EXPECT_EQ(shmem_test_all_vector(b->s, 4, NULL, SHMEM_CMP_EQ, want), 1);
    EXPECT_EQ(shmem_test_any_vector(b->s, 4, NULL, SHMEM_CMP_NE, want), SIZE_MAX);
    EXPECT_EQ(shmem_test_some_vector(b->s, 4, idx, NULL, SHMEM_CMP_GE, want), 4);
    shmem_barrier_all();
    shmem_free(b);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "rma", t_rma, OSH_OPTS, OSH_PES },
    { "atomics", t_atomics, OSH_OPTS, OSH_PES },
    { "waits", t_waits, OSH_OPTS, OSH_PES },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
