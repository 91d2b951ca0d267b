/*
 * test_osh_teams.c - OpenSHMEM teams and contexts on real PEs: SHMEM_TEAM_WORLD and
 * SHMEM_TEAM_SHARED, split_strided and split_2d (members, numbering, configs with
 * num_contexts), translate_pe, team_ptr / shmem_ptr and the accessibility queries, contexts
 * created on teams (team-relative PEs, get_team, options), destroyed teams and contexts
 * (an error naming the call, never another team's or context's PEs), and team_sync.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

static int t_predefined(int me, int n)
{
    osh_test_init();
    EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_WORLD), me);
    EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_WORLD), n);
    /* One node: every PE shares memory with every other. */
    EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_SHARED), me);
    EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_SHARED), n);
    EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_SHARED, n - 1, SHMEM_TEAM_WORLD), n - 1);
    EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_INVALID), -1);
    EXPECT_EQ(shmem_team_n_pes(SHMEM_TEAM_INVALID), -1);
    shmem_team_config_t config = {.num_contexts = 99};
    EXPECT_EQ(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &config), 0);
    EXPECT_EQ(config.num_contexts, 0);
    OSH_EXPECT_REJECTED(shmem_team_destroy(SHMEM_TEAM_WORLD), "cannot be destroyed");
    OSH_EXPECT_REJECTED(shmem_team_destroy(SHMEM_TEAM_SHARED), "cannot be destroyed");
    EXPECT_EQ(shmem_team_my_pe(SHMEM_TEAM_WORLD), me);
    shmem_finalize();
    return 0;
}

/* The even PEs, then the last of them alone (a split of a split). */
static int t_split_strided(int me, int n)
{
    osh_test_init();
    shmem_team_t evens = SHMEM_TEAM_INVALID, last = SHMEM_TEAM_INVALID;
    shmem_team_config_t config = {.num_contexts = 3};
    int n_evens = (n + 1) / 2;
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n_evens, &config, SHMEM_TEAM_NUM_CONTEXTS, &evens),
              0);
    if (me % 2) {
        EXPECT(evens == SHMEM_TEAM_INVALID);
    } else {
        EXPECT_EQ(shmem_team_my_pe(evens), me / 2);
        EXPECT_EQ(shmem_team_n_pes(evens), n_evens);
        EXPECT_EQ(shmem_team_translate_pe(evens, n_evens - 1, SHMEM_TEAM_WORLD), 2 * (n_evens - 1));
        EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, evens), me / 2);
        if (n > 1) /* an odd PE is no member */
            EXPECT_EQ(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 1, evens), -1);
        shmem_team_config_t got = {0};
        EXPECT_EQ(shmem_team_get_config(evens, SHMEM_TEAM_NUM_CONTEXTS, &got), 0);
        EXPECT_EQ(got.num_contexts, 3);
        /* A split of a split: the last member of the evens alone (size 1, stride ignored). */
        EXPECT_EQ(shmem_team_split_strided(evens, n_evens - 1, 0, 1, NULL, 0, &last), 0);
        EXPECT_EQ(shmem_team_my_pe(last), me == 2 * (n_evens - 1) ? 0 : -1);
        EXPECT_EQ(shmem_team_sync(evens), 0);
        shmem_team_destroy(last);
        shmem_team_destroy(evens);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}

/* Rows of 2 PEs (x) and the columns across them (y). */
static int t_split_2d(int me, int n)
{
    osh_test_init();
    shmem_team_t x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
    shmem_team_config_t xc = {.num_contexts = 1}, yc = {.num_contexts = 2};
    EXPECT_EQ(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, &xc, SHMEM_TEAM_NUM_CONTEXTS, &x, &yc,
                                  SHMEM_TEAM_NUM_CONTEXTS, &y), 0);
    EXPECT_EQ(shmem_team_my_pe(x), me % 2);
    EXPECT_EQ(shmem_team_n_pes(x), 2);
    EXPECT_EQ(shmem_team_my_pe(y), me / 2);
    EXPECT_EQ(shmem_team_n_pes(y), n / 2);
    EXPECT_EQ(shmem_team_translate_pe(x, 0, SHMEM_TEAM_WORLD), me - me % 2);
    EXPECT_EQ(shmem_team_translate_pe(y, 0, SHMEM_TEAM_WORLD), me % 2);
    shmem_team_config_t got = {0};
    EXPECT_EQ(shmem_team_get_config(y, SHMEM_TEAM_NUM_CONTEXTS, &got), 0);
    EXPECT_EQ(got.num_contexts, 2);
    shmem_team_destroy(x);
    shmem_team_destroy(y);
    shmem_finalize();
    return 0;
}

/* A context of the team of PEs 1 .. n-1: its PE k is world PE k + 1, for RMA, AMOs and
 * team_ptr alike; get_team gives the team back.  PE 0, no member, gets no context. */
static int t_team_context(int me, int n)
{
    osh_test_init();
    long *word = shmem_calloc(2, sizeof(long));
    ASSERT_NOT_NULL(word);
    shmem_team_t team = SHMEM_TEAM_INVALID;
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, n - 1, NULL, 0, &team), 0);
    if (me > 0) {
        shmem_ctx_t ctx = SHMEM_CTX_INVALID;
        ASSERT_EQ(shmem_team_create_ctx(team, SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE, &ctx), 0);
        shmem_team_t got = SHMEM_TEAM_INVALID;
        EXPECT_EQ(shmem_ctx_get_team(ctx, &got), 0);
        EXPECT(got == team);
        /* Team PE 0 is world PE 1. */
        shmem_ctx_long_atomic_add(ctx, &word[0], me, 0);
        shmem_ctx_long_p(ctx, &word[1], 5, n - 2);
        shmem_ctx_quiet(ctx);
        EXPECT(shmem_team_ptr(team, &word[0], 0) == shmem_ptr(&word[0], 1));
        OSH_EXPECT_REJECTED(shmem_ctx_long_p(ctx, &word[1], 5, n - 1), "PE");
        EXPECT_EQ(shmem_team_sync(team), 0);
        if (me == 1)
            EXPECT_EQ(word[0], (long)n * (n - 1) / 2);
        if (me == n - 1)
            EXPECT_EQ(word[1], 5);
        shmem_ctx_destroy(ctx);
        shmem_team_destroy(team);
        /* The team is gone: its handle names no team, a context cannot be made of it. */
        OSH_EXPECT_REJECTED(shmem_team_n_pes(team), "was destroyed");
        shmem_ctx_t late = SHMEM_CTX_INVALID;
        OSH_EXPECT_REJECTED(EXPECT(shmem_team_create_ctx(team, 0, &late) != 0), "shmem_team_create_ctx");
        EXPECT(late == SHMEM_CTX_INVALID);
    } else {
        /* PE 0 is no member: its handle is SHMEM_TEAM_INVALID, and a context of that is
         * refused with ctx set to SHMEM_CTX_INVALID (OpenSHMEM 1.5), whatever it held, so
         * a non-member can test its context handle as members test theirs. */
        EXPECT(team == SHMEM_TEAM_INVALID);
        shmem_ctx_t none = SHMEM_CTX_DEFAULT;
        EXPECT(shmem_team_create_ctx(team, 0, &none) != 0);
        EXPECT(none == SHMEM_CTX_INVALID);
    }
    shmem_barrier_all();
    shmem_free(word);
    shmem_finalize();
    return 0;
}

/* A team destroyed and another one made in its slot: the old handle, and a context made of
 * the old team, name neither the new team nor its PEs. */
static int t_destroyed_handles(int me, int n)
{
    (void)me;
    osh_test_init();
    long *word = shmem_calloc(1, sizeof(long));
    ASSERT_NOT_NULL(word);
    shmem_team_t old = SHMEM_TEAM_INVALID, fresh = SHMEM_TEAM_INVALID;
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &old), 0);
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    ASSERT_EQ(shmem_team_create_ctx(old, 0, &ctx), 0);
    shmem_team_destroy(old);
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &fresh), 0);
    EXPECT(fresh != old);
    EXPECT_EQ(shmem_team_n_pes(fresh), n);
    OSH_EXPECT_REJECTED(EXPECT_EQ(shmem_team_n_pes(old), -1), "shmem_team_n_pes: team");
    OSH_EXPECT_REJECTED(shmem_ctx_long_atomic_inc(ctx, word, 0), "was destroyed");
    shmem_ctx_destroy(ctx);
    OSH_EXPECT_REJECTED(shmem_ctx_long_atomic_inc(ctx, word, 0), "context");
    OSH_EXPECT_REJECTED(shmem_ctx_destroy(SHMEM_CTX_DEFAULT), "cannot be destroyed");
    shmem_ctx_destroy(SHMEM_CTX_INVALID); /* no-op */
    shmem_team_t none = fresh;
    EXPECT(shmem_ctx_get_team(SHMEM_CTX_INVALID, &none) != 0);
    EXPECT(none == SHMEM_TEAM_INVALID);
    EXPECT_EQ(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &none), 0);
    EXPECT(none == SHMEM_TEAM_WORLD);
    shmem_team_destroy(fresh);
    shmem_barrier_all();
    EXPECT_EQ(*word, 0);
    shmem_free(word);
    shmem_finalize();
    return 0;
}

/* Many contexts at once, with every option; each made, used and destroyed. */
static int t_many_contexts(int me, int n)
{
    osh_test_init();
    int *word = shmem_calloc(1, sizeof(int));
    ASSERT_NOT_NULL(word);
    enum { COUNT = 64 };
    shmem_ctx_t ctx[COUNT];
    static const long options[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE,
                                   SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE};
    for (int i = 0; i < COUNT; i++)
        ASSERT_EQ(shmem_ctx_create(options[i % 5], &ctx[i]), 0);
    for (int i = 0; i < COUNT; i++)
        shmem_ctx_int_atomic_inc(ctx[i], word, (me + i) % n);
    for (int i = 0; i < COUNT; i++)
        shmem_ctx_destroy(ctx[i]);
    shmem_barrier_all();
    EXPECT_EQ(*word, COUNT);
    shmem_ctx_t bad = SHMEM_CTX_INVALID;
    OSH_EXPECT_REJECTED(EXPECT(shmem_ctx_create(1L << 10, &bad) != 0), "options");
    EXPECT(bad == SHMEM_CTX_INVALID);
    shmem_free(word);
    shmem_finalize();
    return 0;
}

static int t_access(int me, int n)
{
    osh_test_init();
    long *sym = shmem_malloc(sizeof(long));
    ASSERT_NOT_NULL(sym);
    long local = 0;
    *sym = 100 + me;
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        EXPECT_EQ(shmem_pe_accessible(pe), 1);
        EXPECT_EQ(shmem_addr_accessible(sym, pe), 1);
        long *peer = shmem_ptr(sym, pe);
        ASSERT_NOT_NULL(peer);
        EXPECT_EQ(*peer, 100 + pe);
        EXPECT(shmem_team_ptr(SHMEM_TEAM_SHARED, sym, pe) == peer);
    }
    EXPECT(shmem_ptr(sym, me) == sym);
    EXPECT_EQ(shmem_pe_accessible(n), 0);
    EXPECT_EQ(shmem_pe_accessible(-1), 0);
    EXPECT_EQ(shmem_addr_accessible(&local, 0), 0);
    EXPECT_EQ(shmem_addr_accessible(sym, n), 0);
    OSH_EXPECT_REJECTED(EXPECT_NULL(shmem_ptr(&local, 0)), "shmem_ptr");
    OSH_EXPECT_REJECTED(EXPECT_NULL(shmem_team_ptr(SHMEM_TEAM_WORLD, sym, n)), "shmem_team_ptr");
    shmem_barrier_all();
    shmem_free(sym);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "predefined", t_predefined, OSH_OPTS, OSH_PES },
    { "split_strided", t_split_strided, OSH_OPTS, OSH_PES },
    { "split_2d", t_split_2d, OSH_OPTS, OSH_PES },
    { "team_context", t_team_context, OSH_OPTS, OSH_PES },
    { "destroyed_handles", t_destroyed_handles, OSH_OPTS, OSH_PES },
    { "many_contexts", t_many_contexts, OSH_OPTS, OSH_PES },
    { "access", t_access, OSH_OPTS, OSH_PES },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
