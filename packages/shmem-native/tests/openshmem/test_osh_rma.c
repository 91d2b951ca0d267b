/*
 * test_osh_rma.c - OpenSHMEM RMA on real PEs: put, get, put_nbi, get_nbi, p, g, iput and
 * iget of every type of shmem.h's SHMEMI_TYPES_RMA (generated from that table), the sized
 * families over SHMEMI_SIZES_RMA and the mem family, each three ways: without a context,
 * through SHMEM_CTX_DEFAULT, and through a context on a team that leaves PE 0 out (so its PE
 * numbers are not the world's); fence and quiet; global and static variables as targets;
 * bad PEs, addresses and contexts.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

#define NE 37       /* elements per contiguous transfer */
#define NSTRIDED 10 /* elements per strided transfer */

/* A value that fits every type (char and int8 too) and differs per PE and index. */
#define VAL(TYPE, pe, i, salt) ((TYPE)((pe) * 7 + (i) % 50 + 1 + (salt)))


/* Every member of w's team meets (a quiet first, as sync does not complete RMA). */
static void meet(const osh_way_t *w)
{
    OSH_QUIET(w);
    EXPECT_EQ(shmem_team_sync(w->team), 0);
}

#define REPORT_BAD(bad, what)                                                                     \
    do {                                                                                          \
        if (bad)                                                                                  \
            harness_report(__FILE__, __LINE__, "%s %s: %d wrong elements", w->name, what, bad);  \
    } while (0)

/* ---- typed families: every member of w's team puts into the next member and gets from it */
#define DEFINE_TYPED_TEST(NAME, TYPE)                                                             \
    static void typed_##NAME(const osh_way_t *w, TYPE *sym)                                          \
    {                                                                                            \
        int me = shmem_team_my_pe(w->team), n = shmem_team_n_pes(w->team);                       \
        int next = (me + 1) % n, prev = (me + n - 1) % n, bad = 0;                               \
        TYPE loc[4 * NE];                                                                        \
        memset(sym, 0, 4 * NE * sizeof(TYPE));                                                   \
        for (int i = 0; i < NE; i++)                                                             \
            loc[i] = VAL(TYPE, me, i, 0);                                                        \
        meet(w);                                                                                 \
        OSH_CALL(w, NAME##_put, sym, loc, NE, next);                                                 \
        meet(w);                                                                                 \
        for (int i = 0; i < NE; i++)                                                             \
            bad += sym[i] != VAL(TYPE, prev, i, 0);                                              \
        REPORT_BAD(bad, #NAME "_put");                                                           \
        for (int i = 0; i < NE; i++)                                                             \
            sym[NE + i] = VAL(TYPE, me, i, 1);                                                   \
        memset(loc, 0, sizeof loc);                                                              \
        meet(w);                                                                                 \
        OSH_CALL(w, NAME##_get, loc, sym + NE, NE, next);                                            \
        bad = loc[NE] != 0;                                                                      \
        for (int i = 0; i < NE; i++)                                                             \
            bad += loc[i] != VAL(TYPE, next, i, 1);                                              \
        REPORT_BAD(bad, #NAME "_get");                                                           \
        for (int i = 0; i < NE; i++)                                                             \
            loc[i] = VAL(TYPE, me, i, 2);                                                        \
        OSH_CALL(w, NAME##_put_nbi, sym, loc, NE, next);                                             \
        meet(w);                                                                                 \
        bad = 0;                                                                                 \
        for (int i = 0; i < NE; i++)                                                             \
            bad += sym[i] != VAL(TYPE, prev, i, 2);                                              \
        REPORT_BAD(bad, #NAME "_put_nbi");                                                       \
        meet(w); /* before prev's p below lands in sym[5] */                                     \
        memset(loc, 0, sizeof loc);                                                              \
        OSH_CALL(w, NAME##_get_nbi, loc, sym + NE, NE, next);                                        \
        OSH_QUIET(w);                                                                                \
        bad = 0;                                                                                 \
        for (int i = 0; i < NE; i++)                                                             \
            bad += loc[i] != VAL(TYPE, next, i, 1);                                              \
        REPORT_BAD(bad, #NAME "_get_nbi");                                                       \
        OSH_CALL(w, NAME##_p, &sym[5], VAL(TYPE, me, 40, 3), next);                                  \
        meet(w);                                                                                 \
        bad = sym[5] != VAL(TYPE, prev, 40, 3) || sym[4] != VAL(TYPE, prev, 4, 2) ||             \
              sym[6] != VAL(TYPE, prev, 6, 2);                                                   \
        bad += OSH_CALL(w, NAME##_g, &sym[NE + 3], next) != VAL(TYPE, next, 3, 1);                   \
        REPORT_BAD(bad, #NAME "_p/_g");                                                          \
        /* iput: dest stride 3, source stride 2; iget back: dest stride 2, source stride 3 */    \
        memset(loc, 0, sizeof loc);                                                              \
        for (int i = 0; i < NSTRIDED; i++)                                                       \
            loc[2 * i] = VAL(TYPE, me, i, 4);                                                    \
        OSH_CALL(w, NAME##_iput, sym + 2 * NE, loc, 3, 2, NSTRIDED, next);                           \
        meet(w);                                                                                 \
        bad = 0;                                                                                 \
        for (int j = 0; j < 2 * NE; j++)                                                         \
            bad += sym[2 * NE + j] !=                                                            \
                   ((j % 3 == 0 && j / 3 < NSTRIDED) ? VAL(TYPE, prev, j / 3, 4) : (TYPE)0);     \
        REPORT_BAD(bad, #NAME "_iput");                                                          \
        memset(loc, 0, sizeof loc);                                                              \
        OSH_CALL(w, NAME##_iget, loc, sym + 2 * NE, 2, 3, NSTRIDED, next);                           \
        bad = 0;                                                                                 \
        for (int j = 0; j < 2 * NSTRIDED + 2; j++)                                               \
            bad += loc[j] != ((j % 2 == 0 && j / 2 < NSTRIDED) ? VAL(TYPE, me, j / 2, 4) : (TYPE)0); \
        REPORT_BAD(bad, #NAME "_iget");                                                          \
        OSH_EXPECT_REJECTED(OSH_CALL(w, NAME##_put, sym, loc, NE, n), "PE");                         \
        OSH_EXPECT_REJECTED(OSH_CALL(w, NAME##_p, sym, loc[0], -1), "PE -1");                        \
        meet(w);                                                                                 \
    }
SHMEMI_TYPES_RMA(DEFINE_TYPED_TEST)

/* ---- sized families and mem: bytes, whatever the element width ---------------------------- */
static unsigned char byte_val(int pe, int i, int salt)
{
    return (unsigned char)(pe * 13 + i * 7 + salt + 1);
}

#define DEFINE_SIZED_TEST(BITS)                                                                   \
    static void sized_##BITS(const osh_way_t *w, unsigned char *sym)                                 \
    {                                                                                            \
        enum { SZ = BITS / 8 };                                                                  \
        int me = shmem_team_my_pe(w->team), n = shmem_team_n_pes(w->team);                      \
        int next = (me + 1) % n, prev = (me + n - 1) % n, bad = 0;                               \
        unsigned char loc[4 * NE * SZ];                                                          \
        memset(sym, 0, 4 * NE * SZ);                                                             \
        for (int i = 0; i < NE * SZ; i++)                                                        \
            loc[i] = byte_val(me, i, BITS);                                                      \
        meet(w);                                                                                 \
        OSH_CALL(w, put##BITS, sym, loc, NE, next);                                                  \
        OSH_CALL(w, put##BITS##_nbi, sym + NE * SZ, loc, NE, next);                                  \
        meet(w);                                                                                 \
        for (int i = 0; i < NE * SZ; i++)                                                        \
            bad += sym[i] != byte_val(prev, i, BITS) || sym[NE * SZ + i] != byte_val(prev, i, BITS); \
        REPORT_BAD(bad, "put" #BITS "[_nbi]");                                                   \
        memset(loc, 0, sizeof loc);                                                              \
        OSH_CALL(w, get##BITS, loc, sym, NE, next);                                                  \
        OSH_CALL(w, get##BITS##_nbi, loc + NE * SZ, sym, NE, next);                                  \
        OSH_QUIET(w);                                                                                \
        bad = 0;                                                                                 \
        for (int i = 0; i < NE * SZ; i++)                                                        \
            bad += loc[i] != byte_val(me, i, BITS) || loc[NE * SZ + i] != byte_val(me, i, BITS); \
        REPORT_BAD(bad, "get" #BITS "[_nbi]");                                                   \
        /* strided: every other element of mine to every third of next's, and back */            \
        meet(w);                                                                                 \
        memset(sym, 0, 4 * NE * SZ);                                                             \
        for (int i = 0; i < 2 * NSTRIDED * SZ; i++)                                              \
            loc[i] = byte_val(me, i, 3);                                                         \
        meet(w);                                                                                 \
        OSH_CALL(w, iput##BITS, sym, loc, 3, 2, NSTRIDED, next);                                     \
        meet(w);                                                                                 \
        bad = 0;                                                                                 \
        for (int e = 0; e < 3 * NSTRIDED; e++)                                                   \
            for (int b = 0; b < SZ; b++)                                                         \
                bad += sym[e * SZ + b] !=                                                        \
                       (e % 3 == 0 ? byte_val(prev, (e / 3) * 2 * SZ + b, 3) : 0);               \
        REPORT_BAD(bad, "iput" #BITS);                                                           \
        memset(loc, 0, sizeof loc);                                                              \
        OSH_CALL(w, iget##BITS, loc, sym, 1, 3, NSTRIDED, next);                                     \
        bad = 0;                                                                                 \
        for (int e = 0; e < NSTRIDED; e++)                                                       \
            for (int b = 0; b < SZ; b++)                                                         \
                bad += loc[e * SZ + b] != byte_val(me, e * 2 * SZ + b, 3);                       \
        REPORT_BAD(bad, "iget" #BITS);                                                           \
        meet(w);                                                                                 \
    }
SHMEMI_SIZES_RMA(DEFINE_SIZED_TEST)

static void mem_family(const osh_way_t *w, unsigned char *sym)
{
    int me = shmem_team_my_pe(w->team), n = shmem_team_n_pes(w->team);
    int next = (me + 1) % n, prev = (me + n - 1) % n, bad = 0;
    unsigned char loc[3 * NE];
    for (int i = 0; i < NE; i++)
        loc[i] = byte_val(me, i, 9);
    meet(w);
    OSH_CALL(w, putmem, sym, loc, NE, next);
    OSH_CALL(w, putmem_nbi, sym + NE, loc, NE, next);
    meet(w);
    for (int i = 0; i < NE; i++)
        bad += sym[i] != byte_val(prev, i, 9) || sym[NE + i] != byte_val(prev, i, 9);
    REPORT_BAD(bad, "putmem[_nbi]");
    memset(loc, 0, sizeof loc);
    OSH_CALL(w, getmem, loc, sym, NE, next);
    OSH_CALL(w, getmem_nbi, loc + NE, sym + NE, NE, next);
    OSH_QUIET(w);
    bad = 0;
    for (int i = 0; i < NE; i++)
        bad += loc[i] != byte_val(me, i, 9) || loc[NE + i] != byte_val(me, i, 9);
    REPORT_BAD(bad, "getmem[_nbi]");
    meet(w);
}

#define BLOCK (4 * NE * 16)

static void every_family(const osh_way_t *w, void *sym)
{
#define RUN_TYPED(NAME, TYPE) typed_##NAME(w, (TYPE *)sym);
    SHMEMI_TYPES_RMA(RUN_TYPED)
#define RUN_SIZED(BITS) sized_##BITS(w, (unsigned char *)sym);
    SHMEMI_SIZES_RMA(RUN_SIZED)
    mem_family(w, (unsigned char *)sym);
}

static int t_without_context(int me, int n)
{
    (void)me;
    (void)n;
    osh_test_init();
    void *sym = shmem_malloc(BLOCK);
    ASSERT_NOT_NULL(sym);
    osh_way_t plain = {"without a context", 0, SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD};
    osh_way_t dflt = {"SHMEM_CTX_DEFAULT", 1, SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD};
    every_family(&plain, sym);
    every_family(&dflt, sym);
    shmem_free(sym);
    shmem_finalize();
    return 0;
}

/* A context of the team of PEs 1 .. n-1: its PE k is world PE k + 1. */
static int t_team_context(int me, int n)
{
    osh_test_init();
    void *sym = shmem_malloc(BLOCK);
    ASSERT_NOT_NULL(sym);
    shmem_team_t team = SHMEM_TEAM_INVALID;
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, n - 1, NULL, 0, &team), 0);
    if (me == 0) {
        EXPECT(team == SHMEM_TEAM_INVALID);
    } else {
        EXPECT_EQ(shmem_team_my_pe(team), me - 1);
        osh_way_t w = {"a team context", 1, SHMEM_CTX_INVALID, team};
        ASSERT_EQ(shmem_team_create_ctx(team, SHMEM_CTX_PRIVATE, &w.ctx), 0);
        every_family(&w, sym);
        shmem_ctx_destroy(w.ctx);
        shmem_team_destroy(team);
    }
    shmem_barrier_all();
    shmem_free(sym);
    shmem_finalize();
    return 0;
}

/* Puts to one PE arrive in order after a fence; all of them after a quiet. */
static int t_fence_quiet(int me, int n)
{
    osh_test_init();
    long *data = shmem_calloc(2, sizeof(long));
    ASSERT_NOT_NULL(data);
    if (me == 0) {
        for (int pe = 1; pe < n; pe++) {
            shmem_long_p(&data[0], 42, pe);
            shmem_fence();
            shmem_long_p(&data[1], 1, pe); /* the flag */
        }
        shmem_quiet();
    } else {
        shmem_long_wait_until(&data[1], SHMEM_CMP_EQ, 1);
        EXPECT_EQ(data[0], 42);
    }
    shmem_barrier_all();
    shmem_free(data);
    shmem_finalize();
    return 0;
}

/* shmem_init makes the program's globals and statics symmetric: RMA and AMO targets. */
long global_target[8];

static int t_static_targets(int me, int n)
{
    static int static_target[4];
    osh_test_init();
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    long values[8];
    for (int i = 0; i < 8; i++)
        values[i] = me * 100 + i;
    shmem_long_put(global_target, values, 8, next);
    shmem_int_atomic_add(&static_target[1], me + 1, 0);
    EXPECT_EQ(shmem_addr_accessible(global_target, next), 1);
    shmem_barrier_all();
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(global_target[i], prev * 100 + i);
    if (me == 0)
        EXPECT_EQ(static_target[1], n * (n + 1) / 2);
    EXPECT_EQ(shmem_long_g(&global_target[7], next), me * 100 + 7);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}

static int t_bad_input(int me, int n)
{
    (void)me;
    osh_test_init();
    int *sym = shmem_malloc(64 * sizeof(int));
    ASSERT_NOT_NULL(sym);
    int local[64] = {0};
    OSH_EXPECT_REJECTED(shmem_int_put(sym, local, 4, n), "shmem_int_put: PE");
    OSH_EXPECT_REJECTED(shmem_int_get(local, local, 4, 0), "shmem_int_get");
    OSH_EXPECT_REJECTED(shmem_int_get(local, local, 4, 0), "not inside a symmetric heap");
    OSH_EXPECT_REJECTED(shmem_int_iput(sym, local, 0, 1, 4, 0), "stride");
    OSH_EXPECT_REJECTED(shmem_put64(sym, local, (size_t)5 << 20, 0), "shmem_put64"); /* beyond the 32M heap */
    OSH_EXPECT_REJECTED(shmem_ctx_int_put(SHMEM_CTX_INVALID, sym, local, 4, 0), "SHMEM_CTX_INVALID");
    shmem_ctx_t ctx;
    ASSERT_EQ(shmem_ctx_create(0, &ctx), 0);
    shmem_ctx_destroy(ctx);
    OSH_EXPECT_REJECTED(shmem_ctx_int_put(ctx, sym, local, 4, 0), "was destroyed");
    OSH_EXPECT_REJECTED(shmem_ctx_int_g(ctx, sym, 0), "shmem_ctx_int_g");
    OSH_EXPECT_REJECTED(shmem_ctx_quiet(ctx), "shmem_ctx_quiet");
    OSH_EXPECT_OK(shmem_int_put(sym, local, 0, 0));
    shmem_barrier_all();
    shmem_free(sym);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "without_context", t_without_context, OSH_OPTS, OSH_PES },
    { "team_context", t_team_context, OSH_OPTS, OSH_PES },
    { "fence_quiet", t_fence_quiet, OSH_OPTS, OSH_PES },
    { "static_targets", t_static_targets, OSH_OPTS, OSH_PES },
    { "bad_input", t_bad_input, OSH_OPTS, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
