/*
 * test_osh_coll.c - the team-based collectives of OpenSHMEM 1.5 on real PEs (2, 3 and 4):
 * broadcast, collect, fcollect, alltoall and alltoalls in bytes and for every type of
 * SHMEMI_TYPES_RMA, and every reduction of shmem.h's tables (each operation on each of its
 * types, out of place and in place), on SHMEM_TEAM_WORLD and on strided teams (the even and
 * the odd PEs, of one PE too); in place and zero-length calls; calls that do not match, or
 * have a bad argument on one PE, fail on every PE with nothing written; bad team handles.
 * The data each PE checks is what the specification says every PE gets.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_coll_values.h"
#include "osh_test.h"

#define NE 16                       /* elements per PE and block */
#define BUF_BYTES (64 * 1024)       /* each of the symmetric dest and source areas */


/* The symmetric dest and source areas of a case, and the team it runs on. */
typedef struct {
    shmem_team_t team;
    void *dest, *source;
} area_t;

/* ---- moving data ------------------------------------------------------------------------ */

/* Every typed form of one type over a's team; the number of wrong results. */
#define DEFINE_MOVE(NAME, TYPE)                                                                       \
    static int move_##NAME(const area_t *a)                                                          \
    {                                                                                                \
        int me = shmem_team_my_pe(a->team), n = shmem_team_n_pes(a->team), bad = 0, at = 0;         \
        TYPE *d = a->dest, *s = a->source;                                                           \
        size_t total = (size_t)n * NE * 3;                                                           \
        for (size_t i = 0; i < total; i++)                                                           \
            s[i] = VAL(TYPE, me, i);                                                                 \
        memset(d, 0, (total + 1) * sizeof(TYPE));                                                    \
        bad += shmem_##NAME##_broadcast(a->team, d, s, NE, n - 1) != 0;                              \
        for (int i = 0; i < NE; i++)                                                                 \
            bad += d[i] != VAL(TYPE, n - 1, i);                                                      \
        bad += d[NE] != (TYPE)0; /* NE elements of this type, no more */                            \
        bad += shmem_##NAME##_collect(a->team, d, s, (size_t)(me % 3 + 1)) != 0;                     \
        for (int j = 0; j < n; j++)                                                                  \
            for (int k = 0; k < j % 3 + 1; k++)                                                      \
                bad += d[at++] != VAL(TYPE, j, k);                                                   \
        bad += shmem_##NAME##_fcollect(a->team, d, s, NE) != 0;                                      \
        for (int j = 0; j < n * NE; j++)                                                             \
            bad += d[j] != VAL(TYPE, j / NE, j % NE);                                                \
        bad += shmem_##NAME##_alltoall(a->team, d, s, NE) != 0;                                      \
        for (int j = 0; j < n * NE; j++)                                                             \
            bad += d[j] != VAL(TYPE, j / NE, me * NE + j % NE);                                      \
        memset(d, 0, (total + 1) * sizeof(TYPE));                                                    \
        bad += shmem_##NAME##_alltoalls(a->team, d, s, 2, 3, NE) != 0;                               \
        for (int j = 0; j < n * NE; j++)                                                             \
            bad += d[2 * j] != VAL(TYPE, j / NE, (me * NE + j % NE) * 3) || d[2 * j + 1] != (TYPE)0; \
        return bad;                                                                                  \
    }
SHMEMI_TYPES_RMA(DEFINE_MOVE)

static const struct {
    const char *name;
    int (*fn)(const area_t *);
} moves[] = {
#define MOVE_ENTRY(NAME, TYPE) {#NAME, move_##NAME},
    SHMEMI_TYPES_RMA(MOVE_ENTRY)
#undef MOVE_ENTRY
};

/* The *mem forms (bytes), with an in-place broadcast and fcollect. */
static int move_mem(const area_t *a)
{
    int me = shmem_team_my_pe(a->team), n = shmem_team_n_pes(a->team), bad = 0;
    unsigned char *d = a->dest, *s = a->source;
    for (int i = 0; i < n * NE * 3; i++)
        s[i] = VAL(unsigned char, me, i);
    bad += shmem_broadcastmem(a->team, d, s, NE, 0) != 0;
    for (int i = 0; i < NE; i++)
        bad += d[i] != VAL(unsigned char, 0, i);
    bad += shmem_collectmem(a->team, d, s, (size_t)me) != 0; /* PE 0 gives nothing */
    for (int j = 0, at = 0; j < n; j++)
        for (int k = 0; k < j; k++)
            bad += d[at++] != VAL(unsigned char, j, k);
    bad += shmem_fcollectmem(a->team, d, s, NE) != 0;
    bad += shmem_alltoallmem(a->team, s, d, NE) != 0; /* block j of d was PE j's: now back to it */
    for (int j = 0; j < n * NE; j++)
        bad += s[j] != VAL(unsigned char, me, j % NE);
    bad += shmem_alltoallsmem(a->team, d, s, 1, 1, NE) != 0;
    for (int j = 0; j < n * NE; j++)
        bad += d[j] != VAL(unsigned char, j / NE, j % NE);
    /* in place: the root's dest is its source; this PE's block of dest is its source */
    long *words = a->dest;
    for (int i = 0; i < NE; i++)
        words[i] = me == n - 1 ? VAL(long, 9, i) : -1;
    bad += shmem_long_broadcast(a->team, words, words, NE, n - 1) != 0;
    for (int i = 0; i < NE; i++)
        bad += words[i] != VAL(long, 9, i);
    for (int i = 0; i < NE; i++)
        words[me * NE + i] = VAL(long, me, i);
    bad += shmem_long_fcollect(a->team, words, words + me * NE, NE) != 0;
    for (int j = 0; j < n * NE; j++)
        bad += words[j] != VAL(long, j / NE, j % NE);
    return bad;
}

/* ---- reductions ----------------------------------------------------------------------------- */

/* One reduction over a's team, out of place then in place: the number of wrong results. */
#define DEFINE_REDUCE_CHECK(NAME, TYPE, OP)                                                           \
    static int reduce_##NAME##_##OP(const area_t *a)                                                 \
    {                                                                                                \
        int bad = 0;                                                                                 \
        REDUCTION_ERRORS(TYPE, OP, shmem_team_my_pe(a->team), shmem_team_n_pes(a->team), NE, a->dest, \
                         a->source, shmem_##NAME##_##OP##_reduce(a->team, dst_, src_, NE), bad);     \
        return bad;                                                                                  \
    }

/* Every reduction of shmem.h as R(NAME, TYPE, OP): each operation over its tables. */
#define EVERY_REDUCTION                                                                             \
    SHMEMI_TYPES_REDUCE_BITWISE(BIND_and) SHMEMI_TYPES_REDUCE_BITWISE(BIND_or)                      \
    SHMEMI_TYPES_REDUCE_BITWISE(BIND_xor) SHMEMI_TYPES_REDUCE_MINMAX(BIND_max)                      \
    SHMEMI_TYPES_REDUCE_MINMAX(BIND_min) SHMEMI_TYPES_REDUCE_MINMAX(BIND_sum)                       \
    SHMEMI_TYPES_REDUCE_MINMAX(BIND_prod) SHMEMI_TYPES_REDUCE_COMPLEX(BIND_sum)                     \
    SHMEMI_TYPES_REDUCE_COMPLEX(BIND_prod)

#define R(NAME, TYPE, OP) DEFINE_REDUCE_CHECK(NAME, TYPE, OP)
EVERY_REDUCTION
#undef R

static const struct {
    const char *name;
    int (*fn)(const area_t *);
} reductions[] = {
#define R(NAME, TYPE, OP) {"shmem_" #NAME "_" #OP "_reduce", reduce_##NAME##_##OP},
    EVERY_REDUCTION
#undef R
};

/* ---- the cases ---------------------------------------------------------------------------------- */

static void alloc_area(area_t *a)
{
    a->dest = shmem_malloc(BUF_BYTES);
    a->source = shmem_malloc(BUF_BYTES);
    ASSERT(a->dest && a->source);
}

static void free_area(area_t *a)
{
    shmem_free(a->dest);
    shmem_free(a->source);
}

/* Every move (or every reduction) on the world, then on the even PEs and on the odd ones. */
static void run_on_teams(int me, int n, int reduce)
{
    area_t a = {SHMEM_TEAM_WORLD, NULL, NULL};
    alloc_area(&a);
    shmem_team_t halves[2] = {SHMEM_TEAM_INVALID, SHMEM_TEAM_INVALID};
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &halves[0]), 0);
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &halves[1]), 0);
    shmem_team_t teams[2] = {SHMEM_TEAM_WORLD, halves[me % 2]};
    for (int k = 0; k < 2; k++) {
        a.team = teams[k];
        size_t count = reduce ? sizeof(reductions) / sizeof(reductions[0]) : sizeof(moves) / sizeof(moves[0]);
        for (size_t i = 0; i < count; i++) {
            int bad = reduce ? reductions[i].fn(&a) : moves[i].fn(&a);
            if (bad)
                harness_report(__FILE__, __LINE__, "%s on team %d: %d wrong results (%s)",
                               reduce ? reductions[i].name : moves[i].name, k, bad, shmemx_get_last_error());
        }
        if (!reduce)
            EXPECT_EQ(move_mem(&a), 0);
    }
    shmem_team_destroy(halves[me % 2]);
    shmem_barrier_all();
    free_area(&a);
}

static int t_move(int me, int n)
{
    osh_test_init();
    run_on_teams(me, n, 0);
    shmem_finalize();
    return 0;
}

static int t_reduce(int me, int n)
{
    osh_test_init();
    run_on_teams(me, n, 1);
    shmem_finalize();
    return 0;
}

/* Zero elements: every form returns 0 and writes nothing. */
static int t_zero_length(int me, int n)
{
    (void)me;
    osh_test_init();
    area_t a = {SHMEM_TEAM_WORLD, NULL, NULL};
    alloc_area(&a);
    memset(a.dest, 0x7E, 64);
    EXPECT_EQ(shmem_broadcastmem(a.team, a.dest, a.source, 0, n - 1), 0);
    EXPECT_EQ(shmem_int_collect(a.team, a.dest, a.source, 0), 0);
    EXPECT_EQ(shmem_double_fcollect(a.team, a.dest, a.source, 0), 0);
    EXPECT_EQ(shmem_alltoallmem(a.team, a.dest, a.source, 0), 0);
    EXPECT_EQ(shmem_long_alltoalls(a.team, a.dest, a.source, 2, 2, 0), 0);
    EXPECT_EQ(shmem_float_sum_reduce(a.team, a.dest, a.source, 0), 0);
    EXPECT_EQ(shmem_complexd_prod_reduce(a.team, a.dest, a.source, 0), 0);
    for (int i = 0; i < 64; i++)
        EXPECT_EQ(((unsigned char *)a.dest)[i], 0x7E);
    free_area(&a);
    shmem_finalize();
    return 0;
}

/* call returns nonzero and leaves a last error that mentions text. */
#define EXPECT_FAILS(call, text) OSH_EXPECT_REJECTED(EXPECT((call) != 0), (text))

/* Calls that do not match, or have a bad argument on one PE: nonzero on every PE, nothing
 * written, a message that says what differs; the team works again afterwards. */
static int t_mismatch(int me, int n)
{
    osh_test_init();
    area_t a = {SHMEM_TEAM_WORLD, NULL, NULL};
    alloc_area(&a);
    long *d = a.dest, *s = a.source;
    for (int i = 0; i < NE; i++) {
        s[i] = me;
        d[i] = -7;
    }
    EXPECT_FAILS(shmem_long_broadcast(a.team, d, s, me == 0 ? 2 : 1, 0), "different calls");
    EXPECT_FAILS(shmem_long_broadcast(a.team, d, s, 1, me == 0 ? 1 : 0), "different calls");
    EXPECT_FAILS(me == 0 ? shmem_long_sum_reduce(a.team, d, s, 1) : shmem_long_max_reduce(a.team, d, s, 1),
                 "different calls");
    EXPECT_FAILS(me == n - 1 ? shmem_float_fcollect(a.team, a.dest, a.source, 1)
                             : shmem_int_fcollect(a.team, a.dest, a.source, 1),
                 "different calls");
    EXPECT_FAILS(me == 0 ? shmem_collectmem(a.team, d, s, 8) : shmem_fcollectmem(a.team, d, s, 8), "different calls");
    EXPECT_FAILS(shmem_alltoallsmem(a.team, d, s, me == 0 ? 2 : 1, 1, 1), "different calls");
    /* A bad argument on the last PE: its own checks name it, the others name that PE. */
    long local[NE];
    char other_pe[32];
    snprintf(other_pe, sizeof(other_pe), "failed on PE %d", n - 1);
    EXPECT_FAILS(shmem_long_sum_reduce(a.team, me == n - 1 ? local : d, s, NE),
                 me == n - 1 ? "not symmetric" : other_pe);
    EXPECT_FAILS(shmem_long_broadcast(a.team, d, s, NE, n), "root");
    EXPECT_FAILS(shmem_long_fcollect(a.team, d, d + 1, NE), "overlap");
    for (int i = 0; i < NE; i++)
        EXPECT_EQ(d[i], -7);
    /* The team goes on. */
    EXPECT_EQ(shmem_long_sum_reduce(a.team, d, s, NE), 0);
    EXPECT_EQ(d[0], (long)n * (n - 1) / 2);
    /* Handles that name no team fail on the calling PE. */
    EXPECT_FAILS(shmem_long_broadcast(SHMEM_TEAM_INVALID, d, s, 1, 0), "SHMEM_TEAM_INVALID");
    shmem_team_t gone = SHMEM_TEAM_INVALID;
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &gone), 0);
    shmem_team_destroy(gone);
    EXPECT_FAILS(shmem_int32_and_reduce(gone, a.dest, a.source, 1), "shmem_int32_and_reduce: team");
    shmem_barrier_all();
    free_area(&a);
    shmem_finalize();
    return 0;
}

/* Sizes past the engine's small-message path: a reduction split among the PEs, and fcollect and
 * broadcast of 64 KiB blocks. */
static int t_large(int me, int n)
{
    osh_test_init();
    size_t count = 16384; /* longs: 128 KiB */
    long *s = shmem_malloc(count * sizeof(long)), *d = shmem_malloc((size_t)n * count * sizeof(long));
    ASSERT(s && d);
    for (size_t i = 0; i < count; i++)
        s[i] = (long)(i * 3 + (size_t)me);
    EXPECT_EQ(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, d, s, count), 0);
    int bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += d[i] != (long)(i * 3 * (size_t)n) + (long)n * (n - 1) / 2;
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(shmem_fcollect(SHMEM_TEAM_WORLD, d, s, count / 2), 0);
    for (int p = 0; p < n; p++)
        for (size_t i = 0; i < count / 2; i++)
            bad += d[(size_t)p * count / 2 + i] != (long)(i * 3 + (size_t)p);
    EXPECT_EQ(shmem_broadcast(SHMEM_TEAM_WORLD, d, s, count, 1), 0);
    for (size_t i = 0; i < count; i++)
        bad += d[i] != (long)(i * 3 + 1);
    EXPECT_EQ(bad, 0);
    shmem_free(s);
    shmem_free(d);
    shmem_finalize();
    return 0;
}

#define OSH_PES_234 { 2, 3, 4 }

static const harness_case cases[] = {
    { "move", t_move, OSH_OPTS, OSH_PES_234 },
    { "reduce", t_reduce, OSH_OPTS, OSH_PES_234 },
    { "zero_length", t_zero_length, OSH_OPTS, OSH_PES_234 },
    { "mismatch", t_mismatch, OSH_OPTS, OSH_PES_234 },
    { "large", t_large, OSH_OPTS, OSH_PES_234 },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
