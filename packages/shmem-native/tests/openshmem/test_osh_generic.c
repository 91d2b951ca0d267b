/*
 * test_osh_generic.c - the C11 generic names of shmem.h on real PEs: each one, with and
 * without a context, on several types, must reach the typed function of its argument's
 * type (the results show which one ran: a float put moves floats, a long long AMO adds to
 * the whole 64-bit word), and so must the collectives' generic names, which pick by dest (the
 * team comes first).  Built with -std=c11 -pedantic -Werror.
 */
#define _GNU_SOURCE
#include <complex.h>
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

/* The arrays of the collectives' generic names: each dest with its source (symmetric both). */
typedef struct {
    double d[4], d_src[4];
    float f[4], f_src[1];
    short s[4], s_src[1];
    long long ll[4], ll_src[4];
    unsigned char uc[4], uc_src[4];
    unsigned long ul, ul_src;
    int8_t i8, i8_src;
    unsigned int ui, ui_src;
    char c, c_src;
    float _Complex z, z_src;
} coll_block_t;

/* Each collective's generic name on one type: the results show that the function of that type
 * ran (the element sizes of the data moved, the width of the operation). */
static int t_collectives(int me, int n)
{
    osh_test_init();
    coll_block_t *b = shmem_calloc(1, sizeof(*b));
    ASSERT_NOT_NULL(b);
    shmem_team_t team = SHMEM_TEAM_WORLD;
    for (int i = 0; i < 4; i++) {
        b->d_src[i] = me + i + 0.5;
        b->ll_src[i] = ((long long)me << 40) + i;
        b->uc_src[i] = (unsigned char)(16 * me + i);
    }
    b->f_src[0] = me + 0.25f;
    b->s_src[0] = (short)(-300 * me);
    b->ul_src = ~(1UL << (40 + me));
    b->i8_src = (int8_t)(1 << me);
    b->ui_src = 0x10000u << me;
    b->c_src = (char)(10 * me);
    b->z_src = 1.0f + (float)(me % 2) * I;
    EXPECT_EQ(shmem_broadcast(team, b->d, b->d_src, 4, n - 1), 0);
    EXPECT(b->d[3] == n - 1 + 3.5);
    EXPECT_EQ(shmem_collect(team, b->f, b->f_src, 1), 0);
    EXPECT(b->f[n - 1] == n - 1 + 0.25f);
    EXPECT_EQ(shmem_fcollect(team, b->s, b->s_src, 1), 0);
    EXPECT_EQ(b->s[n - 1], -300 * (n - 1));
    EXPECT_EQ(shmem_alltoall(team, b->ll, b->ll_src, 1), 0);
    EXPECT_EQ(b->ll[n - 1], ((long long)(n - 1) << 40) + me);
    EXPECT_EQ(shmem_alltoalls(team, b->uc, b->uc_src, 1, 1, 1), 0);
    EXPECT_EQ(b->uc[n - 1], 16 * (n - 1) + me);
    unsigned long cleared = 0;
    for (int p = 0; p < n; p++)
        cleared |= 1UL << (40 + p);
    EXPECT_EQ(shmem_and_reduce(team, &b->ul, &b->ul_src, 1), 0);
    EXPECT(b->ul == ~cleared);
    EXPECT_EQ(shmem_or_reduce(team, &b->i8, &b->i8_src, 1), 0);
    EXPECT_EQ(b->i8, (1 << n) - 1);
    EXPECT_EQ(shmem_xor_reduce(team, &b->ui, &b->ui_src, 1), 0);
    EXPECT(b->ui == ((1u << n) - 1) << 16);
    EXPECT_EQ(shmem_max_reduce(team, b->d, b->d_src, 4), 0);
    EXPECT(b->d[0] == n - 1 + 0.5);
    EXPECT_EQ(shmem_min_reduce(team, &b->c, &b->c_src, 1), 0);
    EXPECT_EQ(b->c, 0);
    EXPECT_EQ(shmem_sum_reduce(team, b->ll, b->ll_src, 4), 0);
    EXPECT_EQ(b->ll[1], ((long long)n * (n - 1) / 2 << 40) + n);
    EXPECT_EQ(shmem_prod_reduce(team, &b->z, &b->z_src, 1), 0);
    float _Complex want = 1.0f;
    for (int p = 0; p < n; p++)
        want *= 1.0f + (float)(p % 2) * I;
    EXPECT(b->z == want);
    shmem_barrier_all();
    shmem_free(b);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "rma", t_rma, OSH_OPTS, OSH_PES },
    { "atomics", t_atomics, OSH_OPTS, OSH_PES },
    { "waits", t_waits, OSH_OPTS, OSH_PES },
    { "collectives", t_collectives, OSH_OPTS, { 2, 3, 4 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
