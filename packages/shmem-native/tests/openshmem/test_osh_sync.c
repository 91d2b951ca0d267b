/*
 * test_osh_sync.c - OpenSHMEM signals and point-to-point synchronization on real PEs: put
 * with signal in every typed, sized and byte form (blocking and _nbi, with and without a
 * context) on the 64-bit signal word, SHMEM_SIGNAL_SET and _ADD, signal_fetch and
 * signal_wait_until; every wait_until / test family of every type of SHMEMI_TYPES_P2P on
 * variables another PE sets; sync_all and team_sync; bad input.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

#define NE 16


/* The block every signal test uses: the signal word, then the data. */
typedef struct {
    uint64_t sig;
    unsigned char data[NE * 16];
} signal_block_t;

/* The PE after me puts NE elements into mine and adds 1 to my signal: I wait for the k-th
 * signal, then the data must be there.  Every round adds one to the signal word. */
static void expect_signalled(signal_block_t *b, uint64_t k, int prev, size_t bytes, const char *what)
{
    uint64_t seen = shmem_signal_wait_until(&b->sig, SHMEM_CMP_GE, k);
    EXPECT_EQ(seen, k);
    EXPECT_EQ(shmem_signal_fetch(&b->sig), k);
    int bad = 0;
    for (size_t i = 0; i < bytes; i++)
        bad += b->data[i] != (unsigned char)(prev + i + k);
    if (bad)
        harness_report(__FILE__, __LINE__, "%s: %d wrong bytes after the signal", what, bad);
    shmem_barrier_all(); /* before prev writes the next round */
}

static void fill(unsigned char *src, int me, uint64_t k)
{
    for (size_t i = 0; i < NE * 16; i++)
        src[i] = (unsigned char)(me + i + k);
}

#define DEFINE_TYPED_SIGNAL(NAME, TYPE)                                                           \
    static void signal_##NAME(const osh_way_t *w, signal_block_t *b, uint64_t *k, int me, int n)     \
    {                                                                                            \
        unsigned char src[NE * 16];                                                              \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                        \
        fill(src, me, ++*k);                                                                     \
        OSH_CALL(w, NAME##_put_signal, (TYPE *)b->data, (const TYPE *)src, NE, &b->sig, 1,           \
             SHMEM_SIGNAL_ADD, next);                                                            \
        expect_signalled(b, *k, prev, NE * sizeof(TYPE), #NAME "_put_signal");                  \
        fill(src, me, ++*k);                                                                     \
        OSH_CALL(w, NAME##_put_signal_nbi, (TYPE *)b->data, (const TYPE *)src, NE, &b->sig, 1,       \
             SHMEM_SIGNAL_ADD, next);                                                            \
        OSH_QUIET(w);                                                                          \
        expect_signalled(b, *k, prev, NE * sizeof(TYPE), #NAME "_put_signal_nbi");              \
    }
SHMEMI_TYPES_RMA(DEFINE_TYPED_SIGNAL)

#define DEFINE_SIZED_SIGNAL(BITS)                                                                 \
    static void signal_##BITS(const osh_way_t *w, signal_block_t *b, uint64_t *k, int me, int n)     \
    {                                                                                            \
        unsigned char src[NE * 16];                                                              \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                        \
        fill(src, me, ++*k);                                                                     \
        OSH_CALL(w, put##BITS##_signal, b->data, src, NE, &b->sig, 1, SHMEM_SIGNAL_ADD, next);       \
        expect_signalled(b, *k, prev, NE * BITS / 8, "put" #BITS "_signal");                     \
        fill(src, me, ++*k);                                                                     \
        OSH_CALL(w, put##BITS##_signal_nbi, b->data, src, NE, &b->sig, 1, SHMEM_SIGNAL_ADD, next);   \
        OSH_QUIET(w);                                                                          \
        expect_signalled(b, *k, prev, NE * BITS / 8, "put" #BITS "_signal_nbi");                 \
    }
SHMEMI_SIZES_RMA(DEFINE_SIZED_SIGNAL)

static void signal_mem(const osh_way_t *w, signal_block_t *b, uint64_t *k, int me, int n)
{
    unsigned char src[NE * 16];
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    fill(src, me, ++*k);
    OSH_CALL(w, putmem_signal, b->data, src, NE, &b->sig, 1, SHMEM_SIGNAL_ADD, next);
    expect_signalled(b, *k, prev, NE, "putmem_signal");
    fill(src, me, ++*k);
    OSH_CALL(w, putmem_signal_nbi, b->data, src, NE, &b->sig, 1, SHMEM_SIGNAL_ADD, next);
    OSH_QUIET(w);
    expect_signalled(b, *k, prev, NE, "putmem_signal_nbi");
    /* SET: the word becomes the value, whatever it was */
    ++*k;
    OSH_CALL(w, putmem_signal, b->data, src, 0, &b->sig, *k, SHMEM_SIGNAL_SET, next);
    expect_signalled(b, *k, prev, 0, "putmem_signal SET");
}

static void every_signal(const osh_way_t *w, signal_block_t *b, uint64_t *k, int me, int n)
{
#define RUN_TYPED(NAME, TYPE) signal_##NAME(w, b, k, me, n);
    SHMEMI_TYPES_RMA(RUN_TYPED)
#define RUN_SIZED(BITS) signal_##BITS(w, b, k, me, n);
    SHMEMI_SIZES_RMA(RUN_SIZED)
    signal_mem(w, b, k, me, n);
}

static int t_signals(int me, int n)
{
    osh_test_init();
    signal_block_t *b = shmem_calloc(1, sizeof(*b));
    ASSERT_NOT_NULL(b);
    osh_way_t plain = {"without a context", 0, SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD};
    osh_way_t ctx = {"through a context", 1, SHMEM_CTX_INVALID, SHMEM_TEAM_WORLD};
    ASSERT_EQ(shmem_ctx_create(0, &ctx.ctx), 0);
    uint64_t k = 0;
    every_signal(&plain, b, &k, me, n);
    every_signal(&ctx, b, &k, me, n);
    shmem_ctx_destroy(ctx.ctx);
    /* The full 64 bits travel. */
    uint64_t big = 0xFEDCBA9876543210ull;
    shmem_putmem_signal(b->data, b->data, 0, &b->sig, big, SHMEM_SIGNAL_SET, (me + 1) % n);
    EXPECT(shmem_signal_wait_until(&b->sig, SHMEM_CMP_EQ, big) == big);
    shmem_barrier_all();
    shmem_free(b);
    shmem_finalize();
    return 0;
}

/* ---- wait_until and test ------------------------------------------------------------------
 * Each PE sets the next one's variables: first ivars[1] and ivars[3] to 7, then, after a
 * barrier, every variable to 7.  Each type gets fresh variables, 0 before anyone writes. */
#define SET_IN_NEXT(NAME, TYPE, ivars, i) shmem_##NAME##_p(&(ivars)[i], 7, next)

#define DEFINE_P2P_TEST(NAME, TYPE)                                                               \
    static void p2p_##NAME(TYPE *ivars, int me, int n)                                           \
    {                                                                                            \
        const char *tn = #NAME;                                                                  \
        int next = (me + 1) % n;                                                                 \
        size_t idx[4] = {0};                                                                     \
        int odd_only[4] = {1, 0, 1, 0}, none[4] = {1, 1, 1, 1};                                  \
        TYPE want[4] = {0, 7, 0, 7}, sevens[4] = {7, 7, 7, 7};                                   \
        memset(ivars, 0, 5 * sizeof(TYPE));                                                      \
        shmem_barrier_all();                                                                     \
        EXPECT_EQ(shmem_##NAME##_test(&ivars[1], SHMEM_CMP_EQ, 7), 0);                           \
        EXPECT_EQ(shmem_##NAME##_test_any(ivars, 4, NULL, SHMEM_CMP_EQ, 7), SIZE_MAX);           \
        EXPECT_EQ(shmem_##NAME##_test_some(ivars, 4, idx, NULL, SHMEM_CMP_NE, 0), 0);            \
        EXPECT_EQ(shmem_##NAME##_test_all(ivars, 4, NULL, SHMEM_CMP_EQ, 0), 1);                  \
        shmem_barrier_all();                                                                     \
        SET_IN_NEXT(NAME, TYPE, ivars, 1);                                                       \
        SET_IN_NEXT(NAME, TYPE, ivars, 3);                                                       \
        shmem_##NAME##_wait_until(&ivars[3], SHMEM_CMP_EQ, 7);                                   \
        shmem_##NAME##_wait_until(&ivars[1], SHMEM_CMP_GT, 6);                                   \
        size_t any = shmem_##NAME##_wait_until_any(ivars, 4, NULL, SHMEM_CMP_EQ, 7);             \
        if (any != 1 && any != 3)                                                                \
            harness_report(__FILE__, __LINE__, "%s_wait_until_any gave %zu", tn, any);           \
        EXPECT_EQ(shmem_##NAME##_wait_until_some(ivars, 4, idx, NULL, SHMEM_CMP_EQ, 7), 2);      \
        EXPECT(idx[0] == 1 && idx[1] == 3);                                                      \
        shmem_##NAME##_wait_until_all(ivars, 4, odd_only, SHMEM_CMP_EQ, 7);                      \
        shmem_##NAME##_wait_until_all_vector(ivars, 4, NULL, SHMEM_CMP_EQ, want);                \
        any = shmem_##NAME##_wait_until_any_vector(ivars, 4, odd_only, SHMEM_CMP_EQ, want);      \
        EXPECT(any == 1 || any == 3);                                                            \
        EXPECT_EQ(shmem_##NAME##_wait_until_some_vector(ivars, 4, idx, NULL, SHMEM_CMP_EQ, sevens), 2); \
        EXPECT_EQ(shmem_##NAME##_test(&ivars[1], SHMEM_CMP_EQ, 7), 1);                           \
        EXPECT_EQ(shmem_##NAME##_test_all(ivars, 4, NULL, SHMEM_CMP_EQ, 7), 0);                  \
        EXPECT_EQ(shmem_##NAME##_test_all(ivars, 4, odd_only, SHMEM_CMP_EQ, 7), 1);              \
        EXPECT_EQ(shmem_##NAME##_test_any(ivars, 4, none, SHMEM_CMP_EQ, 7), SIZE_MAX);           \
        EXPECT_EQ(shmem_##NAME##_test_some(ivars, 4, idx, NULL, SHMEM_CMP_LT, 7), 2);            \
        EXPECT(idx[0] == 0 && idx[1] == 2);                                                      \
        EXPECT_EQ(shmem_##NAME##_test_all_vector(ivars, 4, NULL, SHMEM_CMP_EQ, want), 1);        \
        EXPECT_EQ(shmem_##NAME##_test_any_vector(ivars, 4, NULL, SHMEM_CMP_NE, want), SIZE_MAX); \
        EXPECT_EQ(shmem_##NAME##_test_some_vector(ivars, 4, idx, NULL, SHMEM_CMP_GE, want), 4);  \
        /* every variable: each wait ends only when the last one arrives */                      \
        shmem_barrier_all();                                                                     \
        for (int i = 0; i < 4; i++)                                                              \
            SET_IN_NEXT(NAME, TYPE, ivars, i);                                                   \
        shmem_##NAME##_wait_until_all(ivars, 4, NULL, SHMEM_CMP_EQ, 7);                          \
        EXPECT_EQ(shmem_##NAME##_test_all_vector(ivars, 4, NULL, SHMEM_CMP_EQ, sevens), 1);      \
        EXPECT_EQ(ivars[4], 0); /* past the end: untouched */                                    \
        shmem_barrier_all();                                                                     \
    }
SHMEMI_TYPES_P2P(DEFINE_P2P_TEST)

static int t_waits(int me, int n)
{
    osh_test_init();
    void *ivars = shmem_malloc(5 * sizeof(long long));
    ASSERT_NOT_NULL(ivars);
#define RUN_P2P(NAME, TYPE) p2p_##NAME((TYPE *)ivars, me, n);
    SHMEMI_TYPES_P2P(RUN_P2P)
    shmem_free(ivars);
    shmem_finalize();
    return 0;
}

/* sync_all and team_sync: every PE has arrived when any of them leaves. */
static int t_syncs(int me, int n)
{
    osh_test_init();
    int *arrived = shmem_calloc(1, sizeof(int));
    ASSERT_NOT_NULL(arrived);
    for (int round = 1; round <= 3; round++) {
        shmem_int_atomic_inc(arrived, 0);
        shmem_quiet();
        if (round % 2)
            shmem_sync_all();
        else
            EXPECT_EQ(shmem_team_sync(SHMEM_TEAM_WORLD), 0);
        if (me == 0)
            EXPECT_EQ(shmem_int_atomic_fetch(arrived, 0), round * n);
        shmem_sync_all();
    }
    EXPECT(shmem_team_sync(SHMEM_TEAM_INVALID) != 0);
    shmem_free(arrived);
    shmem_finalize();
    return 0;
}

/* The name shmem_sync of OpenSHMEM 1.5: shmem_sync(team) is the team's sync (C11 synopsis,
 * an int result) and shmem_sync(PE_start, logPE_stride, PE_size, pSync) the deprecated
 * active-set one.  The even PEs pass their number to the next even PE, quiet and sync as a
 * team: after shmem_sync(evens) the number is there.  The odd PEs take no part. */
static int t_sync_name(int me, int n)
{
    osh_test_init();
    int *got = shmem_calloc(1, sizeof(int));
    long *psync = shmem_calloc(SHMEM_BARRIER_SYNC_SIZE, sizeof(long));
    ASSERT_NOT_NULL(got);
    ASSERT_NOT_NULL(psync);
    *got = -1;
    shmem_team_t evens = SHMEM_TEAM_INVALID;
    ASSERT_EQ(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens), 0);
    EXPECT_EQ(shmem_sync(SHMEM_TEAM_WORLD), 0);
    if (evens != SHMEM_TEAM_INVALID) {
        int size = shmem_team_n_pes(evens), next = (shmem_team_my_pe(evens) + 1) % size;
        shmem_int_p(got, me, shmem_team_translate_pe(evens, next, SHMEM_TEAM_WORLD));
        shmem_quiet();
        int rc = shmem_sync(evens);
        EXPECT_EQ(rc, 0);
        EXPECT_EQ(*got, (me / 2 + size - 1) % size * 2); /* the even PE before me */
    } else {
        EXPECT_EQ(*got, -1);
    }
    EXPECT(shmem_sync(SHMEM_TEAM_INVALID) != 0);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    shmem_sync(0, 0, n, psync); /* every PE: the active set of the whole job */
#pragma GCC diagnostic pop
    shmem_team_destroy(evens);
    shmem_free(psync);
    shmem_free(got);
    shmem_finalize();
    return 0;
}

static int t_bad_input(int me, int n)
{
    (void)me;
    osh_test_init();
    signal_block_t *b = shmem_calloc(1, sizeof(*b));
    ASSERT_NOT_NULL(b);
    uint64_t local = 0;
    OSH_EXPECT_REJECTED(shmem_putmem_signal(b->data, b->data, 1, &b->sig, 1, 7, 0), "sig_op 7");
    OSH_EXPECT_REJECTED(shmem_putmem_signal(b->data, b->data, 1, (uint64_t *)((char *)&b->sig + 4), 1,
                                            SHMEM_SIGNAL_SET, 0), "8-byte aligned");
    OSH_EXPECT_REJECTED(shmem_putmem_signal(b->data, b->data, 1, &local, 1, SHMEM_SIGNAL_SET, 0),
                        "shmem_putmem_signal");
    OSH_EXPECT_REJECTED(shmem_long_put_signal((long *)b->data, (long *)b->data, 1, &b->sig, 1, SHMEM_SIGNAL_ADD, n),
                        "PE");
    OSH_EXPECT_REJECTED(shmem_signal_wait_until(&b->sig, 9, 0), "cmp 9");
    OSH_EXPECT_REJECTED(shmem_signal_fetch(&local), "shmem_signal_fetch");
    OSH_EXPECT_REJECTED(shmem_long_wait_until(NULL, SHMEM_CMP_EQ, 0), "shmem_long_wait_until");
    OSH_EXPECT_REJECTED(shmem_int_test((int *)&local, SHMEM_CMP_EQ, 0), "not inside a symmetric heap");
    EXPECT_EQ(b->sig, 0);
    shmem_barrier_all();
    shmem_free(b);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "signals", t_signals, OSH_OPTS, OSH_PES },
    { "waits", t_waits, OSH_OPTS, OSH_PES },
    { "syncs", t_syncs, OSH_OPTS, OSH_PES },
    { "sync_name", t_sync_name, OSH_OPTS, { 2, 3, 4 } },
    { "bad_input", t_bad_input, OSH_OPTS, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
