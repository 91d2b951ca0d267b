/*
 * test_p2p.c - point-to-point waits and tests: every family of every type of
 * ACLSHMEM_P2P_SYNC_TYPES (the test is generated from the header's table): test / test_any /
 * test_some / the vector forms on local values with every comparison and status masks, the
 * wait families woken by puts of another PE, the reference's conventions for empty sets
 * (SIZE_MAX for any, 0 for some, 1 for all_vector), the fairness of the ANY families (a series
 * of calls returns every entry that holds, also on two arrays in turn and in kernel blocks),
 * and bad input (bad comparison, NULL, misaligned, outside the heap).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define N 6

/* Both sides of a wait phase: the writer (this PE, into next) puts after the barrier, the
 * reader (this PE, on its own variables) waits; then everything is reset. */
#define PHASE_BEGIN(iv)                                                                          \
    do {                                                                                         \
        memset((iv), 0, N * sizeof(*(iv)));                                                      \
        aclshmem_barrier_all();                                                                  \
    } while (0)
#define PHASE_END() aclshmem_barrier_all()

#define DEFINE_P2P_TEST(NAME, TYPE)                                                              \
    static void p2p_##NAME(int me, int n, void *raw)                                             \
    {                                                                                            \
        TYPE *iv = raw;                                                                          \
        int next = (me + 1) % n;                                                                 \
        size_t idx[N], res;                                                                      \
        int ires, excl_none[N] = {0}, excl3[N] = {0, 0, 0, 1, 0, 0}, excl_all[N];                \
        for (int i = 0; i < N; i++)                                                              \
            excl_all[i] = 1;                                                                     \
        /* ---- tests on local values 0..5 ---- */                                               \
        for (int i = 0; i < N; i++)                                                              \
            iv[i] = (TYPE)i;                                                                     \
        static const struct { int cmp, value, want; } scalar[] = {                               \
            {ACLSHMEM_CMP_EQ, 2, 1}, {ACLSHMEM_CMP_EQ, 3, 0}, {ACLSHMEM_CMP_NE, 2, 0},           \
            {ACLSHMEM_CMP_NE, 1, 1}, {ACLSHMEM_CMP_GT, 1, 1}, {ACLSHMEM_CMP_GT, 2, 0},           \
            {ACLSHMEM_CMP_GE, 2, 1}, {ACLSHMEM_CMP_GE, 3, 0}, {ACLSHMEM_CMP_LT, 3, 1},           \
            {ACLSHMEM_CMP_LT, 2, 0}, {ACLSHMEM_CMP_LE, 2, 1}, {ACLSHMEM_CMP_LE, 1, 0}};          \
        for (size_t k = 0; k < sizeof scalar / sizeof scalar[0]; k++) {                          \
            ires = -1;                                                                           \
            aclshmem_##NAME##_test(&iv[2], scalar[k].cmp, (TYPE)scalar[k].value, &ires);         \
            if (ires != scalar[k].want)                                                          \
                harness_report(__FILE__, __LINE__, "%s_test(2 cmp%d %d) = %d", #NAME,            \
                               scalar[k].cmp, scalar[k].value, ires);                            \
            if (scalar[k].want) /* holds already: returns at once (a wrong comparison hangs) */ \
                aclshmem_##NAME##_wait_until(&iv[2], scalar[k].cmp, (TYPE)scalar[k].value);      \
        }                                                                                        \
        /* any: one of the entries that hold (which one depends on the earlier scans) */        \
        aclshmem_##NAME##_test_any(iv, N, NULL, ACLSHMEM_CMP_GE, 3, &res);                       \
        EXPECT(res >= 3 && res <= 5);                                                            \
        aclshmem_##NAME##_test_any(iv, N, excl3, ACLSHMEM_CMP_GE, 3, &res);                      \
        EXPECT(res == 4 || res == 5);                                                            \
        aclshmem_##NAME##_test_any(iv, N, excl_none, ACLSHMEM_CMP_EQ, 9, &res);                  \
        EXPECT(res == SIZE_MAX);                                                                 \
        aclshmem_##NAME##_test_any(iv, N, excl_all, ACLSHMEM_CMP_GE, 0, &res);                   \
        EXPECT(res == SIZE_MAX);                                                                 \
        aclshmem_##NAME##_test_any(iv, 0, NULL, ACLSHMEM_CMP_GE, 0, &res);                       \
        EXPECT(res == SIZE_MAX);                                                                 \
        aclshmem_##NAME##_test_some(iv, N, idx, NULL, ACLSHMEM_CMP_GE, 3, &res);                 \
        EXPECT(res == 3 && idx[0] == 3 && idx[1] == 4 && idx[2] == 5);                           \
        aclshmem_##NAME##_test_some(iv, N, idx, excl3, ACLSHMEM_CMP_LE, 3, &res);                \
        EXPECT(res == 3 && idx[0] == 0 && idx[1] == 1 && idx[2] == 2);                           \
        aclshmem_##NAME##_test_some(iv, N, idx, NULL, ACLSHMEM_CMP_GT, 5, &res);                 \
        EXPECT_EQ(res, 0);                                                                       \
        aclshmem_##NAME##_test_some(iv, 0, NULL, NULL, ACLSHMEM_CMP_GT, 0, &res);                \
        EXPECT_EQ(res, 0);                                                                       \
        TYPE vals[N];                                                                            \
        memcpy(vals, iv, sizeof vals);                                                           \
        aclshmem_##NAME##_test_all_vector(iv, N, NULL, ACLSHMEM_CMP_EQ, vals, &ires);            \
        EXPECT_EQ(ires, 1);                                                                      \
        vals[3] = 9;                                                                             \
        aclshmem_##NAME##_test_all_vector(iv, N, NULL, ACLSHMEM_CMP_EQ, vals, &ires);            \
        EXPECT_EQ(ires, 0);                                                                      \
        aclshmem_##NAME##_test_all_vector(iv, N, excl3, ACLSHMEM_CMP_EQ, vals, &ires);           \
        EXPECT_EQ(ires, 1);                                                                      \
        ires = -1;                                                                               \
        aclshmem_##NAME##_test_all_vector(iv, 0, NULL, ACLSHMEM_CMP_EQ, vals, &ires);            \
        EXPECT_EQ(ires, 1);                                                                      \
        for (int i = 0; i < N; i++)                                                              \
            vals[i] = (TYPE)(i % 2 ? 9 : i);                                                     \
        aclshmem_##NAME##_test_any_vector(iv, N, NULL, ACLSHMEM_CMP_EQ, vals, &res);             \
        EXPECT(res == 0 || res == 2 || res == 4);                                                \
        aclshmem_##NAME##_test_any_vector(iv, N, NULL, ACLSHMEM_CMP_GT, vals, &res);             \
        EXPECT(res == SIZE_MAX);                                                                 \
        aclshmem_##NAME##_test_some_vector(iv, N, idx, NULL, ACLSHMEM_CMP_LT, vals, &res);       \
        EXPECT(res == 3 && idx[0] == 1 && idx[1] == 3 && idx[2] == 5);                           \
        aclshmem_##NAME##_test_some_vector(iv, N, idx, excl3, ACLSHMEM_CMP_LT, vals, &res);      \
        EXPECT(res == 2 && idx[0] == 1 && idx[1] == 5);                                          \
        /* ---- waits, woken by the previous PE's puts ---- */                                   \
        PHASE_BEGIN(iv);                                                                         \
        harness_sleep_ms(me % 2 ? 0 : 3); /* sometimes the reader is already asleep */           \
        aclshmem_##NAME##_p(&iv[0], 5, next);                                                    \
        aclshmem_##NAME##_wait_until(&iv[0], ACLSHMEM_CMP_GE, 5);                                \
        EXPECT(iv[0] == 5);                                                                      \
        PHASE_END();                                                                             \
        PHASE_BEGIN(iv);                                                                         \
        aclshmem_##NAME##_p(&iv[1], 1, next);                                                    \
        aclshmem_##NAME##_wait(&iv[1], 0);                                                       \
        EXPECT(iv[1] == 1);                                                                      \
        PHASE_END();                                                                             \
        PHASE_BEGIN(iv);                                                                         \
        for (int i = 0; i < N; i++)                                                              \
            if (i != 3)                                                                          \
                aclshmem_##NAME##_p(&iv[i], 7, next);                                            \
        aclshmem_##NAME##_wait_until_all(iv, N, excl3, ACLSHMEM_CMP_EQ, 7);                      \
        EXPECT(iv[0] == 7 && iv[5] == 7 && iv[3] == 0);                                          \
        PHASE_END();                                                                             \
        PHASE_BEGIN(iv);                                                                         \
        harness_sleep_ms(me % 2 ? 3 : 0);                                                        \
        aclshmem_##NAME##_p(&iv[3], 1, next); /* excluded: must not end the wait */              \
        aclshmem_##NAME##_p(&iv[4], 1, next);                                                    \
        aclshmem_##NAME##_wait_until_any(iv, N, excl3, ACLSHMEM_CMP_GT, 0, &res);                \
        EXPECT_EQ(res, 4);                                                                       \
        PHASE_END();                                                                             \
        PHASE_BEGIN(iv);                                                                         \
        aclshmem_##NAME##_p(&iv[1], 2, next);                                                    \
        aclshmem_##NAME##_p(&iv[4], 2, next);                                                    \
        aclshmem_##NAME##_wait_until_some(iv, N, idx, NULL, ACLSHMEM_CMP_NE, 0, &res);           \
        EXPECT(res >= 1 && res <= 2 && (idx[0] == 1 || idx[0] == 4));                           \
        aclshmem_##NAME##_wait_until_all(iv, N, (int[N]){1, 0, 1, 1, 0, 1}, ACLSHMEM_CMP_EQ, 2); \
        aclshmem_##NAME##_test_some(iv, N, idx, NULL, ACLSHMEM_CMP_NE, 0, &res);                 \
        EXPECT(res == 2 && idx[0] == 1 && idx[1] == 4);                                          \
        PHASE_END();                                                                             \
        for (int i = 0; i < N; i++)                                                              \
            vals[i] = (TYPE)(10 + i);                                                            \
        PHASE_BEGIN(iv);                                                                         \
        aclshmem_##NAME##_put(iv, vals, N, next);                                                \
        aclshmem_##NAME##_wait_until_all_vector(iv, N, NULL, ACLSHMEM_CMP_EQ, vals);             \
        EXPECT(iv[5] == 15);                                                                     \
        PHASE_END();                                                                             \
        PHASE_BEGIN(iv);                                                                         \
        aclshmem_##NAME##_p(&iv[3], 13, next);                                                   \
        aclshmem_##NAME##_p(&iv[2], 12, next);                                                   \
        aclshmem_##NAME##_wait_until_any_vector(iv, N, excl3, ACLSHMEM_CMP_EQ, vals, &res);      \
        EXPECT_EQ(res, 2);                                                                       \
        PHASE_END();                                                                             \
        PHASE_BEGIN(iv);                                                                         \
        aclshmem_##NAME##_p(&iv[5], 15, next);                                                   \
        aclshmem_##NAME##_wait_until_some_vector(iv, N, idx, NULL, ACLSHMEM_CMP_GE, vals, &res); \
        EXPECT(res == 1 && idx[0] == 5);                                                         \
        PHASE_END();                                                                             \
        /* ---- empty sets end at once ---- */                                                   \
        res = 77;                                                                                \
        aclshmem_##NAME##_wait_until_any(iv, N, excl_all, ACLSHMEM_CMP_EQ, 1, &res);             \
        EXPECT(res == SIZE_MAX);                                                                 \
        aclshmem_##NAME##_wait_until_any_vector(iv, 0, NULL, ACLSHMEM_CMP_EQ, vals, &res);       \
        EXPECT(res == SIZE_MAX);                                                                 \
        res = 77;                                                                                \
        aclshmem_##NAME##_wait_until_some(iv, 0, idx, NULL, ACLSHMEM_CMP_EQ, 1, &res);           \
        EXPECT_EQ(res, 0);                                                                       \
        res = 77;                                                                                \
        aclshmem_##NAME##_wait_until_some_vector(iv, N, idx, excl_all, ACLSHMEM_CMP_EQ, vals, &res); \
        EXPECT_EQ(res, 0);                                                                       \
        aclshmem_##NAME##_wait_until_all(iv, 0, NULL, ACLSHMEM_CMP_EQ, 1);                       \
        aclshmem_##NAME##_wait_until_all_vector(iv, N, excl_all, ACLSHMEM_CMP_EQ, vals);         \
        /* ---- bad input: rejected at once, failure values in res_out ---- */                   \
        for (int bad = -1; bad <= 6; bad += 7) {                                                 \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until(iv, bad, 0), "cmp");                    \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until_all(iv, N, NULL, bad, 0), "cmp");       \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until_all_vector(iv, N, NULL, bad, vals), "cmp"); \
            res = 0;                                                                             \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until_any(iv, N, NULL, bad, 0, &res), "cmp"); \
            EXPECT(res == SIZE_MAX);                                                             \
            res = 0;                                                                             \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until_any_vector(iv, N, NULL, bad, vals, &res), \
                            "cmp");                                                              \
            EXPECT(res == SIZE_MAX);                                                             \
            res = 0;                                                                             \
            EXPECT_REJECTED(aclshmem_##NAME##_test_any(iv, N, NULL, bad, 0, &res), "cmp");       \
            EXPECT(res == SIZE_MAX);                                                             \
            res = 0;                                                                             \
            EXPECT_REJECTED(aclshmem_##NAME##_test_any_vector(iv, N, NULL, bad, vals, &res), "cmp"); \
            EXPECT(res == SIZE_MAX);                                                             \
            res = 9;                                                                             \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until_some(iv, N, idx, NULL, bad, 0, &res),   \
                            "cmp");                                                              \
            EXPECT_EQ(res, 0);                                                                   \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until_some_vector(iv, N, idx, NULL, bad, vals, \
                                                                     &res), "cmp");              \
            EXPECT_REJECTED(aclshmem_##NAME##_test_some(iv, N, idx, NULL, bad, 0, &res), "cmp"); \
            EXPECT_REJECTED(aclshmem_##NAME##_test_some_vector(iv, N, idx, NULL, bad, vals, &res), \
                            "cmp");                                                              \
            ires = 9;                                                                            \
            EXPECT_REJECTED(aclshmem_##NAME##_test(iv, bad, 0, &ires), "cmp");                   \
            EXPECT_EQ(ires, 0);                                                                  \
            ires = 9;                                                                            \
            EXPECT_REJECTED(aclshmem_##NAME##_test_all_vector(iv, N, NULL, bad, vals, &ires), "cmp"); \
            EXPECT_EQ(ires, 0);                                                                  \
        }                                                                                        \
        TYPE on_stack = 0;                                                                       \
        EXPECT_REJECTED(aclshmem_##NAME##_wait_until(&on_stack, ACLSHMEM_CMP_EQ, 0), "symmetric heap"); \
        EXPECT_REJECTED(aclshmem_##NAME##_test(&on_stack, ACLSHMEM_CMP_EQ, 0, &ires), "symmetric heap"); \
        EXPECT_REJECTED(aclshmem_##NAME##_wait(NULL, 0), "NULL");                                \
        EXPECT_REJECTED(aclshmem_##NAME##_test_any(NULL, N, NULL, ACLSHMEM_CMP_EQ, 0, &res), "NULL"); \
        EXPECT_REJECTED(aclshmem_##NAME##_test_any(iv, N, NULL, ACLSHMEM_CMP_EQ, 0, NULL), "res_out"); \
        EXPECT_REJECTED(aclshmem_##NAME##_test(iv, ACLSHMEM_CMP_EQ, 0, NULL), "res_out");        \
        EXPECT_REJECTED(aclshmem_##NAME##_test_some(iv, N, NULL, NULL, ACLSHMEM_CMP_EQ, 0, &res), \
                        "indices");                                                              \
        EXPECT_REJECTED(aclshmem_##NAME##_wait_until_all_vector(iv, N, NULL, ACLSHMEM_CMP_EQ, NULL), \
                        "cmp_values");                                                           \
        EXPECT_REJECTED(aclshmem_##NAME##_test_all_vector(iv, 1 << 30, NULL, ACLSHMEM_CMP_EQ, vals, \
                                                          &ires), "symmetric heap");             \
        if (sizeof(TYPE) > 1)                                                                    \
            EXPECT_REJECTED(aclshmem_##NAME##_wait_until((TYPE *)((char *)iv + 1),               \
                                                         ACLSHMEM_CMP_EQ, 0), "aligned");        \
        aclshmem_barrier_all();                                                                  \
    }
ACLSHMEM_P2P_SYNC_TYPES(DEFINE_P2P_TEST)

static int t_all_types(int me, int n)
{
    void *iv = aclshmem_calloc(N, 8);
    ASSERT_NOT_NULL(iv);
#define RUN_P2P(NAME, TYPE) p2p_##NAME(me, n, iv);
    ACLSHMEM_P2P_SYNC_TYPES(RUN_P2P)
    aclshmem_free(iv);
    return 0;
}

/* Many writers, one reader: wait_until_all over one flag per PE, woken PE by PE. */
static int t_gather_flags(int me, int n)
{
    int64_t *flags = aclshmem_calloc((size_t)n, sizeof(int64_t));
    ASSERT_NOT_NULL(flags);
    for (int round = 1; round <= 20; round++) {
        harness_sleep_ms((me * 3 + round) % 4);
        aclshmem_int64_p(&flags[me], round, 0);
        if (me == 0) {
            aclshmem_int64_wait_until_all(flags, (size_t)n, NULL, ACLSHMEM_CMP_GE, round);
            size_t count = 0, idx[64];
            aclshmem_int64_test_some(flags, (size_t)n, idx, NULL, ACLSHMEM_CMP_GE, round, &count);
            EXPECT_EQ(count, n);
        }
        aclshmem_barrier_all();
    }
    aclshmem_free(flags);
    return 0;
}

/* ---- the ANY families do not starve an entry ---------------------------------------------
 * OpenSHMEM: if entry i satisfies the condition, a series of test_any / wait_until_any calls
 * must eventually return i.  Each scan starts after the index the previous scan of the same
 * array returned, so 4 satisfied entries come back in turn. */
#define FAIR_N 4
#define FAIR_CALLS 1000

typedef enum { ANY_TEST, ANY_TEST_VECTOR, ANY_WAIT, ANY_WAIT_VECTOR } any_family_t;
static const char *const any_names[] = {"test_any", "test_any_vector", "wait_until_any",
                                        "wait_until_any_vector"};

/* One call of the family on iv (every entry compared with 1, or with ones[i]). */
static size_t any_call(any_family_t f, int32_t *iv, const int *status)
{
    int32_t ones[FAIR_N] = {1, 1, 1, 1};
    size_t res = 77;
    switch (f) {
    case ANY_TEST: aclshmem_int32_test_any(iv, FAIR_N, status, ACLSHMEM_CMP_EQ, 1, &res); break;
    case ANY_TEST_VECTOR: aclshmem_int32_test_any_vector(iv, FAIR_N, status, ACLSHMEM_CMP_EQ, ones, &res); break;
    case ANY_WAIT: aclshmem_int32_wait_until_any(iv, FAIR_N, status, ACLSHMEM_CMP_EQ, 1, &res); break;
    case ANY_WAIT_VECTOR:
        aclshmem_int32_wait_until_any_vector(iv, FAIR_N, status, ACLSHMEM_CMP_EQ, ones, &res);
        break;
    }
    return res;
}

/* FAIR_CALLS calls: every result is an included entry, and every included entry comes back.
 * Returns the bit mask of the indices returned (bit FAIR_N: something else came back). */
static unsigned any_series(any_family_t f, int32_t *iv, const int *status)
{
    unsigned seen = 0;
    for (int k = 0; k < FAIR_CALLS; k++) {
        size_t r = any_call(f, iv, status);
        seen |= r < FAIR_N && !(status && status[r]) ? 1u << r : 1u << FAIR_N;
    }
    return seen;
}

static void expect_series(any_family_t f, int32_t *iv, const int *status, unsigned want)
{
    unsigned seen = any_series(f, iv, status);
    if (seen != want)
        harness_report(__FILE__, __LINE__, "%d calls of %s returned the indices 0x%x, expected 0x%x",
                       FAIR_CALLS, any_names[f], seen, want);
}

/* Polling two arrays in turn: each one's series still returns all of its entries. */
static void expect_interleaved(any_family_t f, int32_t *a, int32_t *b)
{
    unsigned seen_a = 0, seen_b = 0;
    for (int k = 0; k < FAIR_CALLS; k++) {
        size_t ra = any_call(f, a, NULL), rb = any_call(f, b, NULL);
        seen_a |= ra < FAIR_N ? 1u << ra : 1u << FAIR_N;
        seen_b |= rb < FAIR_N ? 1u << rb : 1u << FAIR_N;
    }
    if (seen_a != 0xF || seen_b != 0xF)
        harness_report(__FILE__, __LINE__, "%s on two arrays in turn returned 0x%x and 0x%x, expected 0xf",
                       any_names[f], seen_a, seen_b);
}

typedef struct {
    int32_t *iv;
    unsigned seen[4];
} any_threads_t;

/* Each kernel block (a thread of its own) polls the same array; each one's series is fair. */
static void any_kernel(uint32_t block, uint32_t block_dim, void *arg)
{
    (void)block_dim;
    any_threads_t *t = arg;
    t->seen[block] = any_series((any_family_t)(block % 4), t->iv, NULL);
}

static int t_any_fairness(int me, int n)
{
    (void)n;
    int32_t *iv = aclshmem_calloc(2 * FAIR_N, sizeof(int32_t));
    ASSERT_NOT_NULL(iv);
    int32_t *other = iv + FAIR_N;
    for (int i = 0; i < 2 * FAIR_N; i++)
        iv[i] = 1;
    static const int none[FAIR_N] = {0, 0, 0, 0}, odd_out[FAIR_N] = {0, 1, 0, 1}, one_in[FAIR_N] = {1, 1, 0, 1};
    for (any_family_t f = ANY_TEST; f <= ANY_WAIT_VECTOR; f++) {
        /* Four calls in a row return the four entries, one each. */
        unsigned four = 0;
        for (int k = 0; k < FAIR_N; k++) {
            size_t r = any_call(f, iv, NULL);
            four |= r < FAIR_N ? 1u << r : 1u << FAIR_N;
        }
        if (four != 0xF)
            harness_report(__FILE__, __LINE__, "4 calls of %s returned the indices 0x%x, expected 0xf",
                           any_names[f], four);
        expect_series(f, iv, NULL, 0xF);
        expect_series(f, iv, none, 0xF);
        expect_series(f, iv, odd_out, 0x5); /* excluded entries never come back */
        expect_series(f, iv, one_in, 0x4);
        expect_interleaved(f, iv, other);
    }
    /* Only entries that hold come back; none holding still gives SIZE_MAX. */
    iv[1] = iv[3] = 0;
    expect_series(ANY_TEST, iv, NULL, 0x5);
    expect_series(ANY_WAIT, iv, NULL, 0x5);
    iv[0] = iv[2] = 0;
    EXPECT(any_call(ANY_TEST, iv, NULL) == SIZE_MAX);
    EXPECT(any_call(ANY_TEST_VECTOR, iv, NULL) == SIZE_MAX);
    EXPECT(any_call(ANY_WAIT, iv, (const int[FAIR_N]){1, 1, 1, 1}) == SIZE_MAX);

    /* Kernel blocks (threads of their own) poll one array at the same time. */
    for (int i = 0; i < FAIR_N; i++)
        iv[i] = 1;
    any_threads_t threads = {iv, {0}};
    ASSERT_EQ(aclshmemx_kernel_launch(0, any_kernel, 4, &threads), 0);
    ASSERT_EQ(aclshmemx_stream_synchronize(0), 0);
    for (int b = 0; b < 4; b++)
        if (threads.seen[b] != 0xF)
            harness_report(__FILE__, __LINE__, "PE %d block %d: %s returned the indices 0x%x, expected 0xf", me,
                           b, any_names[b % 4], threads.seen[b]);
    aclshmem_barrier_all();
    aclshmem_free(iv);
    return 0;
}

static int t_ffts(int me, int n)
{
    (void)me, (void)n;
    EXPECT_EQ(util_get_ffts_config(), 0);
    return 0;
}

static int not_initialised(int me, int n)
{
    (void)me, (void)n;
    int32_t v = 0;
    size_t res = 0;
    harness_mark_error();
    aclshmem_int32_test_any(&v, 1, NULL, ACLSHMEM_CMP_EQ, 0, &res);
    EXPECT_ERROR_CONTAINS("not initialized");
    EXPECT(res == SIZE_MAX);
    harness_mark_error();
    aclshmem_int32_wait_until(&v, ACLSHMEM_CMP_EQ, 1); /* must not wait */
    EXPECT_ERROR_CONTAINS("not initialized");
    return 0;
}

static const harness_case cases[] = {
    { "all_types", t_all_types, { 0 }, { 2, 3 } },
    { "gather_flags", t_gather_flags, { 0 }, { 4, 8 } },
    { "any_fairness", t_any_fairness, { 0 }, { 2 } },
    { "ffts", t_ffts, { 0 }, { 1 } },
    { "not_initialised", not_initialised, { .no_init = 1, .no_uid = 1 }, { 1 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
