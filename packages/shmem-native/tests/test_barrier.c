/*
 * test_barrier.c - aclshmem_barrier / barrier_all / sync / sync_all: nobody leaves before
 * everybody arrived (counter check with staggered arrivals), team barriers running side by
 * side, completion of non-blocking puts, and bad teams.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef enum { V_BARRIER_ALL, V_BARRIER_WORLD, V_SYNC_ALL, V_SYNC_WORLD } variant_t;
static const char *vname[] = { "barrier_all", "barrier(WORLD)", "sync_all", "sync(WORLD)" };

static void do_barrier(variant_t v)
{
    switch (v) {
    case V_BARRIER_ALL:
        aclshmem_barrier_all();
        break;
    case V_BARRIER_WORLD:
        aclshmem_barrier(ACLSHMEM_TEAM_WORLD);
        break;
    case V_SYNC_ALL:
        aclshmem_sync_all();
        break;
    case V_SYNC_WORLD:
        aclshmem_sync(ACLSHMEM_TEAM_WORLD);
        break;
    }
}

/* Round r: every PE tells every PE "I reached r", then the barrier; afterwards every PE must
 * have heard r (or r + 1 from a PE that is already ahead) from everybody. */
static void counter_check(int me, int n, variant_t v, int rounds)
{
    int64_t *arrived = aclshmem_calloc((size_t)n, sizeof(int64_t));
    ASSERT_NOT_NULL(arrived);
    do_barrier(V_BARRIER_ALL);
    srand(1000 + me);
    int early = 0;
    for (int r = 1; r <= rounds; r++) {
        /* Stagger the arrivals: someone is always late. */
        if (me == r % n)
            harness_sleep_ms(5);
        else if (rand() % 4 == 0)
            harness_sleep_ms(rand() % 2);
        for (int q = 0; q < n; q++)
            aclshmem_int64_p(&arrived[me], r, q);
        do_barrier(v);
        for (int j = 0; j < n; j++) {
            int64_t a = __atomic_load_n(&arrived[j], __ATOMIC_ACQUIRE);
            if (a < r || a > r + 1) {
                if (early++ < 5)
                    harness_report(__FILE__, __LINE__, "%s round %d: PE %d is at %lld", vname[v], r,
                                   j, (long long)a);
            }
        }
    }
    do_barrier(V_BARRIER_ALL);
    aclshmem_free(arrived);
}

static int t_barrier_all(int me, int n)
{
    counter_check(me, n, V_BARRIER_ALL, 40);
    return 0;
}

static int t_barrier_world(int me, int n)
{
    counter_check(me, n, V_BARRIER_WORLD, 25);
    return 0;
}

static int t_sync_all(int me, int n)
{
    counter_check(me, n, V_SYNC_ALL, 25);
    return 0;
}

static int t_sync_world(int me, int n)
{
    counter_check(me, n, V_SYNC_WORLD, 25);
    return 0;
}

/* Even and odd PEs barrier in their own teams at the same time. */
static int t_team_barriers(int me, int n)
{
    aclshmem_team_t even = 0, odd = 0;
    ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, &even), 0);
    ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 1, 2, n / 2, &odd), 0);
    aclshmem_team_t mine = me % 2 ? odd : even;
    ASSERT(mine > 0);
    EXPECT_EQ(me % 2 ? even : odd, ACLSHMEM_TEAM_INVALID);
    int tn = aclshmem_team_n_pes(mine), tme = aclshmem_team_my_pe(mine);
    ASSERT(tn > 0 && tme >= 0);
    int64_t *arrived = aclshmem_calloc((size_t)n, sizeof(int64_t));
    ASSERT_NOT_NULL(arrived);
    srand(77 + me);
    int early = 0;
    int rounds = 30 + 10 * (me % 2); /* the two teams do different numbers of rounds */
    for (int r = 1; r <= rounds; r++) {
        if (tme == r % tn)
            harness_sleep_ms(3);
        for (int j = 0; j < tn; j++)
            aclshmem_int64_p(&arrived[tme], r, aclshmem_team_translate_pe(mine, j, ACLSHMEM_TEAM_WORLD));
        if (r % 2)
            aclshmem_barrier(mine);
        else
            aclshmem_sync(mine);
        for (int j = 0; j < tn; j++) {
            int64_t a = __atomic_load_n(&arrived[j], __ATOMIC_ACQUIRE);
            if ((a < r || a > r + 1) && early++ < 5)
                harness_report(__FILE__, __LINE__, "team round %d: member %d is at %lld", r, j,
                               (long long)a);
        }
    }
    aclshmem_barrier_all();
    aclshmem_free(arrived);
    aclshmem_team_destroy(mine);
    return 0;
}

/* A barrier completes the PE's outstanding non-blocking puts. */
static int t_barrier_completes_nbi(int me, int n)
{
    enum { SZ = 256 * 1024 };
    unsigned char *sym = aclshmem_calloc(SZ, 1);
    unsigned char *src = malloc(SZ);
    ASSERT(sym && src);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < SZ; i++)
            src[i] = (unsigned char)(me * 13 + i * 3 + round);
        for (int off = 0; off < SZ; off += 8192)
            aclshmem_putmem_nbi(sym + off, src + off, 8192, next);
        do_barrier((variant_t)round);
        size_t bad = 0;
        for (int i = 0; i < SZ; i++)
            bad += sym[i] != (unsigned char)(prev * 13 + i * 3 + round);
        if (bad)
            harness_report(__FILE__, __LINE__, "%s: %zu bytes of nbi puts missing", vname[round], bad);
        aclshmem_barrier_all();
    }
    free(src);
    aclshmem_free(sym);
    return 0;
}

/* Many barriers in a row: no drift, no slow leak of time. */
static int t_many(int me, int n)
{
    (void)me;
    int rounds = n >= 8 ? 300 : 1000;
    double t0 = harness_now();
    for (int i = 0; i < rounds; i++)
        aclshmem_barrier_all();
    double dt = harness_now() - t0;
    if (me == 0)
        harness_log("%d barrier_all: %.3f s (%.1f us each)", rounds, dt, dt / rounds * 1e6);
    return 0;
}

static int t_bad_team(int me, int n)
{
    (void)me;
    (void)n;
    /* TEAM_INVALID: a silent no-op. */
    double t0 = harness_now();
    aclshmem_barrier(ACLSHMEM_TEAM_INVALID);
    aclshmem_sync(ACLSHMEM_TEAM_INVALID);
    EXPECT_LT(harness_now() - t0, 1.0);
    static const aclshmem_team_t bad[] = { 77, 2047, 2048, -5, 100000 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        harness_mark_error();
        t0 = harness_now();
        aclshmem_barrier(bad[i]);
        EXPECT_LT(harness_now() - t0, 1.0);
        EXPECT_ERROR_SET();
        harness_mark_error();
        aclshmem_sync(bad[i]);
        EXPECT_ERROR_SET();
    }
    /* Still in step afterwards. */
    counter_check(me, n, V_BARRIER_ALL, 5);
    return 0;
}

static const harness_case cases[] = {
    { "barrier_all", t_barrier_all, { 0 }, { 2, 4, 8 } },
    { "barrier_world", t_barrier_world, { 0 }, { 3, 8 } },
    { "sync_all", t_sync_all, { 0 }, { 2, 8 } },
    { "sync_world", t_sync_world, { 0 }, { 8 } },
    { "team_barriers", t_team_barriers, { 0 }, { 4, 8 } },
    { "barrier_completes_nbi", t_barrier_completes_nbi, { 0 }, { 2, 4 } },
    { "many", t_many, { 0 }, { 2, 8 } },
    { "bad_team", t_bad_team, { 0 }, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
