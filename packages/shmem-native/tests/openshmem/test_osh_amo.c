/*
 * test_osh_amo.c - OpenSHMEM atomic memory operations on real PEs: every operation of every
 * type of shmem.h's tables (standard: SHMEMI_TYPES_AMO; extended: those and
 * SHMEMI_TYPES_AMO_FLOAT; bitwise: SHMEMI_TYPES_AMO_BITWISE), blocking and _nbi fetching,
 * without a context and through a context; every PE's fetch_add on one word at once (each
 * old value seen once); bad input.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"


#define CHECK(w, tn, what, cond)                                                                  \
    do {                                                                                          \
        if (!(cond))                                                                              \
            harness_report(__FILE__, __LINE__, "%s %s: %s", (w)->name, tn, what);                 \
    } while (0)

#define WORDS 8 /* per type: the operations of each group act on words of their own */

/* Each PE acts on the next PE's words, which their owner set up before a barrier, and the
 * owner checks what they hold at the end. */

/* inc, fetch_inc, add, fetch_add, compare_swap (and the _nbi forms). */
#define DEFINE_STANDARD_TEST(NAME, TYPE)                                                          \
    static void standard_##NAME(const osh_way_t *w, TYPE *word, int next)                            \
    {                                                                                            \
        const char *tn = #NAME;                                                                  \
        TYPE f = 0;                                                                              \
        word[0] = 10, word[1] = 5, word[2] = 7;                                                  \
        shmem_barrier_all();                                                                     \
        OSH_CALL(w, NAME##_atomic_inc, &word[0], next);                                              \
        CHECK(w, tn, "fetch_inc", OSH_CALL(w, NAME##_atomic_fetch_inc, &word[0], next) == 11);       \
        OSH_CALL(w, NAME##_atomic_fetch_inc_nbi, &f, &word[0], next);                                \
        CHECK(w, tn, "fetch_inc_nbi", f == 12);                                                  \
        OSH_CALL(w, NAME##_atomic_add, &word[1], 3, next);                                           \
        CHECK(w, tn, "fetch_add", OSH_CALL(w, NAME##_atomic_fetch_add, &word[1], 4, next) == 8);     \
        OSH_CALL(w, NAME##_atomic_fetch_add_nbi, &f, &word[1], 1, next);                             \
        CHECK(w, tn, "fetch_add_nbi", f == 12);                                                  \
        CHECK(w, tn, "compare_swap", OSH_CALL(w, NAME##_atomic_compare_swap, &word[2], 7, 9, next) == 7); \
        CHECK(w, tn, "compare_swap (no match)",                                                  \
              OSH_CALL(w, NAME##_atomic_compare_swap, &word[2], 7, 1, next) == 9);                   \
        OSH_CALL(w, NAME##_atomic_compare_swap_nbi, &f, &word[2], 9, 20, next);                      \
        CHECK(w, tn, "compare_swap_nbi", f == 9);                                                \
        shmem_barrier_all();                                                                     \
        CHECK(w, tn, "the words after the standard AMOs", word[0] == 13 && word[1] == 13 && word[2] == 20); \
    }
SHMEMI_TYPES_AMO(DEFINE_STANDARD_TEST)

/* fetch, set, swap (and the _nbi forms). */
#define DEFINE_EXTENDED_TEST(NAME, TYPE)                                                          \
    static void extended_##NAME(const osh_way_t *w, TYPE *word, int next)                            \
    {                                                                                            \
        const char *tn = #NAME;                                                                  \
        TYPE f = 0;                                                                              \
        word[3] = 0;                                                                             \
        shmem_barrier_all();                                                                     \
        OSH_CALL(w, NAME##_atomic_set, &word[3], 21, next);                                          \
        CHECK(w, tn, "fetch", OSH_CALL(w, NAME##_atomic_fetch, &word[3], next) == 21);               \
        OSH_CALL(w, NAME##_atomic_fetch_nbi, &f, &word[3], next);                                    \
        CHECK(w, tn, "fetch_nbi", f == 21);                                                      \
        CHECK(w, tn, "swap", OSH_CALL(w, NAME##_atomic_swap, &word[3], 22, next) == 21);             \
        OSH_CALL(w, NAME##_atomic_swap_nbi, &f, &word[3], 23, next);                                 \
        CHECK(w, tn, "swap_nbi", f == 22);                                                       \
        shmem_barrier_all();                                                                     \
        CHECK(w, tn, "the word after the extended AMOs", word[3] == 23);                         \
    }
SHMEMI_TYPES_AMO(DEFINE_EXTENDED_TEST)
SHMEMI_TYPES_AMO_FLOAT(DEFINE_EXTENDED_TEST)

/* and, or, xor and their fetching forms. */
#define DEFINE_BITWISE_TEST(NAME, TYPE)                                                           \
    static void bitwise_##NAME(const osh_way_t *w, TYPE *word, int next)                             \
    {                                                                                            \
        const char *tn = #NAME;                                                                  \
        TYPE f = 0;                                                                              \
        word[4] = 12;                                                                            \
        shmem_barrier_all();                                                                     \
        OSH_CALL(w, NAME##_atomic_and, &word[4], 10, next);                                          \
        CHECK(w, tn, "fetch_and", OSH_CALL(w, NAME##_atomic_fetch_and, &word[4], 0xFF, next) == 8);  \
        OSH_CALL(w, NAME##_atomic_or, &word[4], 1, next);                                            \
        CHECK(w, tn, "fetch_or", OSH_CALL(w, NAME##_atomic_fetch_or, &word[4], 2, next) == 9);       \
        OSH_CALL(w, NAME##_atomic_xor, &word[4], 3, next);                                           \
        CHECK(w, tn, "fetch_xor", OSH_CALL(w, NAME##_atomic_fetch_xor, &word[4], 1, next) == 8);     \
        OSH_CALL(w, NAME##_atomic_fetch_and_nbi, &f, &word[4], 0xF, next);                           \
        CHECK(w, tn, "fetch_and_nbi", f == 9);                                                   \
        OSH_CALL(w, NAME##_atomic_fetch_or_nbi, &f, &word[4], 4, next);                              \
        CHECK(w, tn, "fetch_or_nbi", f == 9);                                                    \
        OSH_CALL(w, NAME##_atomic_fetch_xor_nbi, &f, &word[4], 1, next);                             \
        CHECK(w, tn, "fetch_xor_nbi", f == 13);                                                  \
        shmem_barrier_all();                                                                     \
        CHECK(w, tn, "the word after the bitwise AMOs", word[4] == 12);                          \
    }
SHMEMI_TYPES_AMO_BITWISE(DEFINE_BITWISE_TEST)

static void every_operation(const osh_way_t *w, void *block, int next)
{
#define RUN_STANDARD(NAME, TYPE) standard_##NAME(w, (TYPE *)block, next);
#define RUN_EXTENDED(NAME, TYPE) extended_##NAME(w, (TYPE *)block, next);
#define RUN_BITWISE(NAME, TYPE) bitwise_##NAME(w, (TYPE *)block, next);
    SHMEMI_TYPES_AMO(RUN_STANDARD)
    SHMEMI_TYPES_AMO(RUN_EXTENDED)
    SHMEMI_TYPES_AMO_FLOAT(RUN_EXTENDED)
    SHMEMI_TYPES_AMO_BITWISE(RUN_BITWISE)
}

static int t_every_operation(int me, int n)
{
    osh_test_init();
    void *block = shmem_malloc(WORDS * sizeof(long long));
    ASSERT_NOT_NULL(block);
    osh_way_t plain = {"without a context", 0, SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD};
    osh_way_t ctx = {"through a context", 1, SHMEM_CTX_INVALID, SHMEM_TEAM_WORLD};
    ASSERT_EQ(shmem_ctx_create(SHMEM_CTX_SERIALIZED, &ctx.ctx), 0);
    every_operation(&plain, block, (me + 1) % n);
    every_operation(&ctx, block, (me + 1) % n);
    shmem_ctx_destroy(ctx.ctx);
    shmem_free(block);
    shmem_finalize();
    return 0;
}

/* Every PE adds 1 to PE 0's counter ROUNDS times at once: the old values are 0 .. total-1,
 * each seen once (their sum and count match), and the counter ends at the total. */
#define ROUNDS 300

static int t_fetch_add_at_once(int me, int n)
{
    osh_test_init();
    long *counter = shmem_calloc(2, sizeof(long));
    ASSERT_NOT_NULL(counter);
    shmem_barrier_all();
    long sum = 0;
    for (int i = 0; i < ROUNDS; i++)
        sum += shmem_long_atomic_fetch_add(&counter[0], 1, 0);
    shmem_long_atomic_add(&counter[1], sum, 0);
    shmem_barrier_all();
    if (me == 0) {
        long total = (long)n * ROUNDS;
        EXPECT_EQ(counter[0], total);
        EXPECT_EQ(counter[1], total * (total - 1) / 2);
    }
    shmem_free(counter);
    shmem_finalize();
    return 0;
}

static int t_bad_input(int me, int n)
{
    (void)me;
    osh_test_init();
    long *word = shmem_calloc(4, sizeof(long));
    ASSERT_NOT_NULL(word);
    long local = 0;
    OSH_EXPECT_REJECTED(shmem_long_atomic_add(word, 1, n), "shmem_long_atomic_add: PE");
    OSH_EXPECT_REJECTED(shmem_long_atomic_inc(&local, 0), "not inside a symmetric heap");
    OSH_EXPECT_REJECTED(shmem_int_atomic_fetch((int *)((char *)word + 1), 0), "aligned");
    OSH_EXPECT_REJECTED(shmem_long_atomic_fetch_add_nbi(NULL, word, 1, 0), "fetch is NULL");
    OSH_EXPECT_REJECTED(shmem_ctx_long_atomic_swap(SHMEM_CTX_INVALID, word, 1, 0), "SHMEM_CTX_INVALID");
    EXPECT_EQ(word[0], 0); /* nothing happened */
    shmem_barrier_all();
    shmem_free(word);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "every_operation", t_every_operation, OSH_OPTS, OSH_PES },
    { "fetch_add_at_once", t_fetch_add_at_once, OSH_OPTS, OSH_PES },
    { "bad_input", t_bad_input, OSH_OPTS, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
