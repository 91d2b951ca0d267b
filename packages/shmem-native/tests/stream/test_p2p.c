/*
 * test_p2p.c - point-to-point waits and tests: every family of every type of
 * ACLSHMEM_P2P_SYNC_TYPES (the test is generated from the header's table): test / test_any /
 * test_some / the vector forms on local values with every comparison and status masks, the
 * wait families woken by puts of another PE, the reference's conventions for empty sets
 * (SIZE_MAX for any, 0 for some, 1 for all_vector), and bad input (bad comparison, NULL,
 * misaligned, outside the heap).
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
        aclshmem_##NAME##_test_any(iv, N, NULL, ACLSHMEM_CMP_GE, 3, &res);                       \
        EXPECT_EQ(res, 3);                                                                       \
        aclshmem_##NAME##_test_any(iv, N, excl3, ACLSHMEM_CMP_GE, 3, &res);                      \
        EXPECT_EQ(res, 4);                                                                       \
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
        EXPECT_EQ(res, 0);                                                                       \
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
    { "ffts", t_ffts, { 0 }, { 1 } },
    { "not_initialised", not_initialised, { .no_init = 1, .no_uid = 1 }, { 1 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
