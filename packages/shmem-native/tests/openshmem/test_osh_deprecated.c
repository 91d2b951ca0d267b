/*
 * test_osh_deprecated.c - the names OpenSHMEM deprecated before 1.5, as older programs use
 * them: start_pes, _my_pe, _num_pes, shmalloc / shrealloc / shmemalign / shfree, the cache
 * calls, the typed atomics fadd, finc, add, inc, cswap, swap, fetch and set, wait, and their
 * C11 generic names; each must do what its replacement does.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int t_setup_and_memory(int me, int n)
{
    osh_test_set_launcher_env();
    start_pes(0);
    start_pes(0); /* a second call changes nothing */
    EXPECT_EQ(_my_pe(), me);
    EXPECT_EQ(_num_pes(), n);
    long *block = shmalloc(4 * sizeof(long));
    ASSERT_NOT_NULL(block);
    block[0] = me;
    block = shrealloc(block, 64 * sizeof(long));
    ASSERT_NOT_NULL(block);
    EXPECT_EQ(block[0], me);
    void *aligned = shmemalign(256, 100);
    EXPECT_EQ((uintptr_t)aligned % 256, 0);
    shmem_set_cache_inv();
    shmem_set_cache_line_inv(block);
    shmem_clear_cache_inv();
    shmem_clear_cache_line_inv(block);
    shmem_udcflush();
    shmem_udcflush_line(block);
    shmem_barrier_all();
    EXPECT_EQ(shmem_long_g(block, (me + 1) % n), (me + 1) % n);
    OSH_EXPECT_REJECTED(shfree(&me), "shmem_free"); /* the call it stands for */
    shmem_barrier_all();
    shfree(aligned);
    shfree(block);
    shmem_finalize();
    return 0;
}

#define DEFINE_OLD_AMO_TEST(NAME, TYPE)                                                           \
    static void old_amo_##NAME(TYPE *word, int me, int n)                                        \
    {                                                                                            \
        const char *tn = #NAME;                                                                  \
        int next = (me + 1) % n;                                                                 \
        word[0] = 10, word[1] = 7;                                                               \
        shmem_barrier_all();                                                                     \
        shmem_##NAME##_inc(&word[0], next);                                                      \
        shmem_##NAME##_add(&word[0], 2, next);                                                   \
        if (shmem_##NAME##_finc(&word[0], next) != 13 || shmem_##NAME##_fadd(&word[0], 5, next) != 14 || \
            shmem_##NAME##_cswap(&word[1], 7, 8, next) != 7 || shmem_##NAME##_swap(&word[1], 9, next) != 8 || \
            shmem_##NAME##_fetch(&word[1], next) != 9)                                           \
            harness_report(__FILE__, __LINE__, "%s: an old AMO name returned a wrong value", tn); \
        shmem_##NAME##_set(&word[1], 30, next);                                                  \
        shmem_barrier_all();                                                                     \
        if (word[0] != 19 || word[1] != 30)                                                      \
            harness_report(__FILE__, __LINE__, "%s: the words after the old AMO names", tn);     \
        shmem_barrier_all();                                                                     \
    }
SHMEMI_TYPES_AMO(DEFINE_OLD_AMO_TEST)

#define DEFINE_OLD_FLOAT_TEST(NAME, TYPE)                                                         \
    static void old_float_##NAME(TYPE *word, int me, int n)                                      \
    {                                                                                            \
        int next = (me + 1) % n;                                                                 \
        shmem_##NAME##_set(&word[0], 1.5, next);                                                 \
        shmem_barrier_all();                                                                     \
        EXPECT(shmem_##NAME##_swap(&word[0], 2.5, next) == 1.5);                                 \
        EXPECT(shmem_##NAME##_fetch(&word[0], next) == 2.5);                                     \
        shmem_barrier_all();                                                                     \
    }
SHMEMI_TYPES_AMO_FLOAT(DEFINE_OLD_FLOAT_TEST)

static int t_old_atomics(int me, int n)
{
    osh_test_init();
    void *words = shmem_calloc(4, sizeof(long long));
    ASSERT_NOT_NULL(words);
#define RUN_OLD_AMO(NAME, TYPE) old_amo_##NAME((TYPE *)words, me, n);
    SHMEMI_TYPES_AMO(RUN_OLD_AMO)
#define RUN_OLD_FLOAT(NAME, TYPE) old_float_##NAME((TYPE *)words, me, n);
    SHMEMI_TYPES_AMO_FLOAT(RUN_OLD_FLOAT)
    /* The C11 generic names of the same. */
    long *w = words;
    w[0] = 0;
    shmem_barrier_all();
    shmem_inc(&w[0], 0);
    shmem_add(&w[0], 2L, 0);
    (void)shmem_finc(&w[0], 0);
    (void)shmem_fadd(&w[0], 1L, 0);
    shmem_barrier_all();
    if (me == 0)
        EXPECT_EQ(w[0], 5L * n);
    shmem_barrier_all();
    if (me == 0) {
        EXPECT_EQ(shmem_cswap(&w[0], 5L * n, 1L, 0), 5L * n);
        EXPECT_EQ(shmem_swap(&w[0], 2L, 0), 1);
        EXPECT_EQ(shmem_fetch((const long *)&w[0], 0), 2);
        shmem_set(&w[0], 3L, 0);
        EXPECT_EQ(w[0], 3);
    }
    shmem_barrier_all();
    shmem_free(words);
    shmem_finalize();
    return 0;
}

#define DEFINE_OLD_WAIT_TEST(NAME, TYPE)                                                          \
    static void old_wait_##NAME(TYPE *ivar, int me, int n)                                       \
    {                                                                                            \
        *ivar = 0;                                                                               \
        shmem_barrier_all();                                                                     \
        shmem_##NAME##_p(ivar, 3, (me + 1) % n);                                                 \
        shmem_##NAME##_wait(ivar, 0);                                                            \
        EXPECT_EQ(*ivar, 3);                                                                     \
        shmem_barrier_all();                                                                     \
    }
SHMEMI_TYPES_P2P(DEFINE_OLD_WAIT_TEST)

static int t_old_wait(int me, int n)
{
    osh_test_init();
    void *ivar = shmem_calloc(1, sizeof(long long));
    ASSERT_NOT_NULL(ivar);
#define RUN_OLD_WAIT(NAME, TYPE) old_wait_##NAME((TYPE *)ivar, me, n);
    SHMEMI_TYPES_P2P(RUN_OLD_WAIT)
    int *iv = ivar;
    *iv = 0;
    shmem_barrier_all();
    shmem_int_p(iv, 4, (me + 1) % n);
    shmem_wait(iv, 0); /* the generic name */
    EXPECT_EQ(*iv, 4);
    shmem_barrier_all();
    shmem_free(ivar);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "setup_and_memory", t_setup_and_memory, OSH_OPTS, OSH_PES },
    { "old_atomics", t_old_atomics, OSH_OPTS, OSH_PES },
    { "old_wait", t_old_wait, OSH_OPTS, OSH_PES },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
