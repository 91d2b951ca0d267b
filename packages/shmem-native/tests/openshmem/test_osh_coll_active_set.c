/*
 * test_osh_coll_active_set.c - the collectives over active sets that OpenSHMEM 1.5 deprecated,
 * on real PEs (2, 3 and 4): broadcast, collect, fcollect, alltoall and alltoalls of 32- and
 * 64-bit elements and every shmem_<TYPE>_<OP>_to_all of shmem.h's tables, out of place and in
 * place, over several active sets at once (all PEs, the even and the odd ones, all but PE 0),
 * each leaving its pSync as it found it and the broadcast leaving the root's dest alone; a bad
 * pSync, pWrk or nreduce on one PE and calls that do not match fail on every PE of the set;
 * a set's team is made once (thousands of calls do not use up the team ids) and lives beside
 * the teams of shmem_team_split_strided.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_coll_values.h"
#include "osh_test.h"

/* The calls under test are deprecated: using them is the point. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define NE 16
#define BUF_BYTES (64 * 1024)

/* An active set, the number of this PE in it, and the symmetric arrays of a case. */
typedef struct {
    int start, log_stride, size, me;
    void *dest, *source, *work;
    long *psync;
} set_t;

#define SET_ARGS(s) (s)->start, (s)->log_stride, (s)->size

/* The words of pSync that are not SHMEM_SYNC_VALUE (after a call: none). */
static int psync_changed(const set_t *s)
{
    int bad = 0;
    for (int k = 0; k < SHMEM_SYNC_SIZE; k++)
        bad += s->psync[k] != SHMEM_SYNC_VALUE;
    return bad;
}

/* ---- moving data ---------------------------------------------------------------------------- */

/* Every collective of BITS-bit elements over the set: the number of wrong results. */
#define DEFINE_SIZED(BITS)                                                                            \
    static int sized_##BITS(const set_t *set)                                                        \
    {                                                                                                \
        typedef uint##BITS##_t T;                                                                    \
        int n = set->size, me = set->me, bad = 0, at = 0;                                            \
        T *d = set->dest, *s = set->source;                                                          \
        size_t total = (size_t)n * NE * 3;                                                           \
        for (size_t i = 0; i < total; i++)                                                           \
            s[i] = VAL(T, me, i);                                                                    \
        memset(d, 0, (total + 1) * sizeof(T));                                                       \
        shmem_broadcast##BITS(d, s, NE, n - 1, SET_ARGS(set), set->psync);                           \
        for (int i = 0; i <= NE; i++) /* the root's dest is not written */                          \
            bad += d[i] != (me == n - 1 || i == NE ? 0 : VAL(T, n - 1, i));                          \
        bad += psync_changed(set);                                                                   \
        shmem_collect##BITS(d, s, (size_t)(me % 3 + 1), SET_ARGS(set), set->psync);                  \
        for (int j = 0; j < n; j++)                                                                  \
            for (int k = 0; k < j % 3 + 1; k++)                                                      \
                bad += d[at++] != VAL(T, j, k);                                                      \
        shmem_fcollect##BITS(d, s, NE, SET_ARGS(set), set->psync);                                   \
        for (int j = 0; j < n * NE; j++)                                                             \
            bad += d[j] != VAL(T, j / NE, j % NE);                                                   \
        shmem_alltoall##BITS(d, s, NE, SET_ARGS(set), set->psync);                                   \
        for (int j = 0; j < n * NE; j++)                                                             \
            bad += d[j] != VAL(T, j / NE, me * NE + j % NE);                                         \
        memset(d, 0, (total + 1) * sizeof(T));                                                       \
        shmem_alltoalls##BITS(d, s, 2, 3, NE, SET_ARGS(set), set->psync);                            \
        for (int j = 0; j < n * NE; j++)                                                             \
            bad += d[2 * j] != VAL(T, j / NE, (me * NE + j % NE) * 3) || d[2 * j + 1] != 0;          \
        return bad + psync_changed(set);                                                             \
    }
SHMEMI_SIZES_COLL(DEFINE_SIZED)

/* ---- reductions --------------------------------------------------------------------------------- */

/* One reduction over the set, out of place then in place: the number of wrong results. */
#define DEFINE_TO_ALL_CHECK(NAME, TYPE, OP)                                                           \
    static int to_all_##NAME##_##OP(const set_t *set)                                                \
    {                                                                                                \
        int bad = 0;                                                                                 \
        REDUCTION_ERRORS(TYPE, OP, set->me, set->size, NE, set->dest, set->source,                   \
                         (shmem_##NAME##_##OP##_to_all(dst_, src_, NE, SET_ARGS(set), (TYPE *)set->work, \
                                                       set->psync), 0), bad);                        \
        return bad + psync_changed(set);                                                             \
    }

/* Every reduction as R(NAME, TYPE, OP): each operation over its tables. */
#define EVERY_TO_ALL                                                                                \
    SHMEMI_TYPES_TO_ALL_INT(BIND_and) SHMEMI_TYPES_TO_ALL_INT(BIND_or)                              \
    SHMEMI_TYPES_TO_ALL_INT(BIND_xor) SHMEMI_TYPES_TO_ALL_INT(BIND_max)                             \
    SHMEMI_TYPES_TO_ALL_REAL(BIND_max) SHMEMI_TYPES_TO_ALL_INT(BIND_min)                            \
    SHMEMI_TYPES_TO_ALL_REAL(BIND_min) SHMEMI_TYPES_TO_ALL_INT(BIND_sum)                            \
    SHMEMI_TYPES_TO_ALL_REAL(BIND_sum) SHMEMI_TYPES_TO_ALL_INT(BIND_prod)                           \
    SHMEMI_TYPES_TO_ALL_REAL(BIND_prod) SHMEMI_TYPES_REDUCE_COMPLEX(BIND_sum)                       \
    SHMEMI_TYPES_REDUCE_COMPLEX(BIND_prod)

#define R(NAME, TYPE, OP) DEFINE_TO_ALL_CHECK(NAME, TYPE, OP)
EVERY_TO_ALL
#undef R

static const struct {
    const char *name;
    int (*fn)(const set_t *);
} checks[] = {
#define SIZED_ENTRY(BITS) {"32/64-bit collectives (" #BITS ")", sized_##BITS},
    SHMEMI_SIZES_COLL(SIZED_ENTRY)
#undef SIZED_ENTRY
#define R(NAME, TYPE, OP) {"shmem_" #NAME "_" #OP "_to_all", to_all_##NAME##_##OP},
    EVERY_TO_ALL
#undef R
};

/* ---- the cases ------------------------------------------------------------------------------------ */

/* The symmetric arrays of a case (pSync: SHMEM_SYNC_SIZE longs of SHMEM_SYNC_VALUE). */
static void alloc_arrays(set_t *s)
{
    s->dest = shmem_malloc(BUF_BYTES);
    s->source = shmem_malloc(BUF_BYTES);
    s->work = shmem_malloc(NE * 16);
    s->psync = shmem_malloc(SHMEM_SYNC_SIZE * sizeof(long));
    ASSERT(s->dest && s->source && s->work && s->psync);
    for (int k = 0; k < SHMEM_SYNC_SIZE; k++)
        s->psync[k] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
}

static void free_arrays(set_t *s)
{
    shmem_barrier_all();
    shmem_free(s->dest);
    shmem_free(s->source);
    shmem_free(s->work);
    shmem_free(s->psync);
}

/* With *s's arrays: whether world PE pe is in the set (start, log_stride, size), and its number
 * there in s->me. */
static int enter_set(set_t *s, int pe, int start, int log_stride, int size)
{
    s->start = start;
    s->log_stride = log_stride;
    s->size = size;
    int rel = pe - start;
    s->me = rel >> log_stride;
    return size > 0 && rel >= 0 && rel % (1 << log_stride) == 0 && s->me < size;
}

/* Every check on the sets of all PEs, the even and the odd ones, and all but PE 0, one after the
 * other: each PE takes part in the sets it is in, in the same order (as the specification asks
 * of overlapping sets). */
static int t_every_form(int me, int n)
{
    osh_test_init();
    set_t s;
    alloc_arrays(&s);
    const int sets[4][3] = {{0, 0, n}, {0, 1, (n + 1) / 2}, {1, 1, n / 2}, {1, 0, n - 1}};
    for (int k = 0; k < 4; k++) {
        if (!enter_set(&s, me, sets[k][0], sets[k][1], sets[k][2]))
            continue;
        for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
            int bad = checks[i].fn(&s);
            if (bad)
                harness_report(__FILE__, __LINE__, "%s over set %d: %d wrong results (%s)", checks[i].name, k, bad,
                               shmemx_get_last_error());
        }
    }
    free_arrays(&s);
    shmem_finalize();
    return 0;
}

/* A void call fails, with a last error that mentions text. */
#define EXPECT_CALL_FAILS(call, text) OSH_EXPECT_REJECTED(call, (text))

/* Bad input: on the calling PE alone when it cannot take part (a set that does not fit, a PE
 * outside it); on every PE of the set for a bad pSync, pWrk or nreduce on one of them and for
 * calls that do not match; nothing written then, and the set goes on. */
static int t_errors(int me, int n)
{
    osh_test_init();
    set_t s;
    alloc_arrays(&s);
    enter_set(&s, me, 0, 0, n);
    long *d = s.dest, *src = s.source, local[NE];
    for (int i = 0; i < NE; i++) {
        src[i] = me;
        d[i] = -7;
    }
    char named[32];
    snprintf(named, sizeof(named), "failed on PE %d", n - 1);
    EXPECT_CALL_FAILS(shmem_fcollect64(d, src, 1, 0, 0, n, me == n - 1 ? NULL : s.psync),
                      me == n - 1 ? "pSync is NULL" : named);
    EXPECT_CALL_FAILS(shmem_long_sum_to_all(d, src, NE, 0, 0, n, me == n - 1 ? local : s.work, s.psync),
                      me == n - 1 ? "pWrk" : named);
    EXPECT_CALL_FAILS(shmem_int_max_to_all(s.dest, s.source, me == n - 1 ? -1 : 1, 0, 0, n, s.work, s.psync),
                      me == n - 1 ? "nreduce -1 is negative" : named);
    EXPECT_CALL_FAILS(shmem_fcollect32(d, src, me == 0 ? 2 : 1, 0, 0, n, s.psync), "different calls");
    EXPECT_CALL_FAILS(shmem_alltoalls64(d, src, 0, 1, 1, 0, 0, n, s.psync), "strides");
    EXPECT_CALL_FAILS(shmem_broadcast64(d, src, 1, n, 0, 0, n, s.psync), "root");
    EXPECT_CALL_FAILS(shmem_broadcast32(d, src, 1, 0, 0, 0, n + 1, s.psync), "does not fit");
    if (me == 1)
        EXPECT_CALL_FAILS(shmem_long_or_to_all(d, src, 1, 0, 1, (n + 1) / 2, s.work, s.psync), "not in the active set");
    for (int i = 0; i < NE; i++)
        EXPECT_EQ(d[i], -7);
    EXPECT_EQ(psync_changed(&s), 0);
    /* The set goes on. */
    OSH_EXPECT_OK(shmem_long_sum_to_all(d, src, NE, 0, 0, n, s.work, s.psync));
    EXPECT_EQ(d[NE - 1], (long)n * (n - 1) / 2);
    free_arrays(&s);
    shmem_finalize();
    return 0;
}

/* A set's team is made on its first call and found again later: many more calls over two sets
 * than there are team ids, then, beside them, the teams of a split, whose ids the sets' teams
 * do not take. */
static int t_teams_reused(int me, int n)
{
    osh_test_init();
    set_t s;
    alloc_arrays(&s);
    long *d = s.dest, *src = s.source;
    *src = me + 1;
    int in_evens = enter_set(&s, me, 0, 1, (n + 1) / 2), rounds = 3000, bad = 0;
    for (int r = 0; in_evens && r < rounds; r++) {
        shmem_long_max_to_all(d, src, 1, 0, 1, (n + 1) / 2, s.work, s.psync);
        bad += *d != 2 * ((n + 1) / 2 - 1) + 1;
    }
    for (int r = 0; me > 0 && r < rounds; r++) {
        shmem_long_sum_to_all(d, src, 1, 1, 0, n - 1, s.work, s.psync);
        bad += *d != (long)n * (n + 1) / 2 - 1;
    }
    EXPECT_EQ(bad, 0);
    shmem_team_t evens = SHMEM_TEAM_INVALID;
    EXPECT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens), 0);
    if (in_evens) {
        for (int r = 0; r < 3; r++) {
            EXPECT_EQ(shmem_long_sum_reduce(evens, d, src, 1), 0);
            EXPECT_EQ(*d, (long)((n + 1) / 2) * ((n + 1) / 2));
            shmem_long_min_to_all(d, src, 1, 0, 1, (n + 1) / 2, s.work, s.psync);
            EXPECT_EQ(*d, 1);
        }
    }
    shmem_team_destroy(evens);
    EXPECT_EQ(psync_changed(&s), 0);
    free_arrays(&s);
    shmem_finalize();
    return 0;
}

#define OSH_PES_234 { 2, 3, 4 }

static const harness_case cases[] = {
    { "every_form", t_every_form, OSH_OPTS, OSH_PES_234 },
    { "errors", t_errors, OSH_OPTS, OSH_PES_234 },
    { "teams_reused", t_teams_reused, OSH_OPTS, OSH_PES_234 },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
