/*
 * test_signal.c - put-with-signal: aclshmemx_putmem_signal[_nbi], every typed family over
 * ACLSHMEM_RMA_TYPES and every sized family over ACLSHMEM_RMA_SIZES (generated from the
 * header's tables), SET and ADD (many PEs adding to one word at once give the exact sum),
 * data visible before its signal, prompt wake-up of a waiter, the value that
 * aclshmem_signal_wait_until returns, and bad input (misaligned, outside the heap, bad
 * sig_op, bad pe, NULL), after which nothing has been written.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NE 29

#define VAL(TYPE, pe, i, salt) ((TYPE)((pe) * 5 + (i) % 40 + 1 + (salt)))

/* Reads the local signal word as other PEs write it. */
static int32_t sig_now(const int32_t *sig)
{
    return __atomic_load_n(sig, __ATOMIC_ACQUIRE);
}

/* ---- untyped ------------------------------------------------------------------------------ */
static int t_putmem_signal(int me, int n)
{
    enum { SZ = 100000 };
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    unsigned char *buf = aclshmem_calloc(SZ, 1);
    int32_t *sig = aclshmem_calloc(2, sizeof(int32_t));
    unsigned char *src = malloc(SZ);
    ASSERT(buf && sig && src);
    for (int round = 1; round <= 6; round++) {
        for (int i = 0; i < SZ; i++)
            src[i] = (unsigned char)(me * 31 + i * 7 + round);
        aclshmem_barrier_all(); /* the previous round's data has been checked everywhere */
        if (round % 2)
            aclshmemx_putmem_signal(buf, src, SZ, sig, round, ACLSHMEM_SIGNAL_SET, next);
        else
            aclshmemx_putmem_signal_nbi(buf, src, SZ, sig, round, ACLSHMEM_SIGNAL_SET, next);
        EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, round), round);
        size_t bad = 0;
        for (int i = 0; i < SZ; i++)
            bad += buf[i] != (unsigned char)(prev * 31 + i * 7 + round);
        if (bad)
            harness_report(__FILE__, __LINE__, "round %d: %zu bytes wrong after the signal", round, bad);
    }
    /* Zero bytes: only the signal moves. */
    aclshmem_barrier_all();
    aclshmemx_putmem_signal(buf, NULL, 0, sig + 1, 42, ACLSHMEM_SIGNAL_SET, next);
    EXPECT_EQ(aclshmem_signal_wait_until(sig + 1, ACLSHMEM_CMP_EQ, 42), 42);
    aclshmem_barrier_all();
    free(src);
    aclshmem_free(sig);
    aclshmem_free(buf);
    return 0;
}

/* ---- typed and sized families ------------------------------------------------------------- */
#define DEFINE_TYPED_SIGNAL_TEST(NAME, TYPE)                                                     \
    static void typed_##NAME(int me, int n, int32_t *sig, void *sym_raw)                         \
    {                                                                                            \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                        \
        TYPE *sym = sym_raw, loc[NE];                                                            \
        for (int nbi = 0; nbi < 2; nbi++) {                                                      \
            for (int i = 0; i < NE; i++)                                                         \
                loc[i] = VAL(TYPE, me, i, nbi);                                                  \
            int32_t before = sig_now(sig);                                                       \
            aclshmem_barrier_all();                                                              \
            if (nbi)                                                                             \
                aclshmem_##NAME##_put_signal_nbi(sym, loc, NE, (uint8_t *)sig, 3,                \
                                                 ACLSHMEM_SIGNAL_ADD, next);                     \
            else                                                                                 \
                aclshmem_##NAME##_put_signal(sym, loc, NE, (uint8_t *)sig, 3,                    \
                                             ACLSHMEM_SIGNAL_ADD, next);                         \
            EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, before + 3), before + 3);  \
            int bad = 0;                                                                         \
            for (int i = 0; i < NE; i++)                                                         \
                bad += sym[i] != VAL(TYPE, prev, i, nbi);                                        \
            if (bad)                                                                             \
                harness_report(__FILE__, __LINE__, "aclshmem_%s_put_signal%s: %d wrong", #NAME,  \
                               nbi ? "_nbi" : "", bad);                                          \
        }                                                                                        \
    }
ACLSHMEM_RMA_TYPES(DEFINE_TYPED_SIGNAL_TEST)

static int t_typed(int me, int n)
{
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    void *sym = aclshmem_calloc(NE, 16);
    ASSERT(sig && sym);
#define RUN_TYPED(NAME, TYPE) typed_##NAME(me, n, sig, sym);
    ACLSHMEM_RMA_TYPES(RUN_TYPED)
    aclshmem_barrier_all();
    aclshmem_free(sym);
    aclshmem_free(sig);
    return 0;
}

#define DEFINE_SIZED_SIGNAL_TEST(BITS)                                                           \
    static void sized_##BITS(int me, int n, int32_t *sig, unsigned char *sym)                    \
    {                                                                                            \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                        \
        unsigned char loc[NE * BITS / 8];                                                        \
        for (int nbi = 0; nbi < 2; nbi++) {                                                      \
            for (size_t i = 0; i < sizeof loc; i++)                                              \
                loc[i] = (unsigned char)(me * 3 + i + BITS + nbi);                               \
            aclshmem_barrier_all();                                                              \
            int32_t want = BITS * 10 + nbi;                                                      \
            if (nbi)                                                                             \
                aclshmem_put##BITS##_signal_nbi(sym, loc, NE, sig, want, ACLSHMEM_SIGNAL_SET,    \
                                                next);                                           \
            else                                                                                 \
                aclshmem_put##BITS##_signal(sym, loc, NE, sig, want, ACLSHMEM_SIGNAL_SET, next); \
            EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, want), want);             \
            int bad = 0;                                                                         \
            for (size_t i = 0; i < sizeof loc; i++)                                              \
                bad += sym[i] != (unsigned char)(prev * 3 + i + BITS + nbi);                     \
            bad += sym[sizeof loc] != 0; /* exactly NE elements of BITS bits */                  \
            if (bad)                                                                             \
                harness_report(__FILE__, __LINE__, "aclshmem_put%d_signal%s: %d wrong", BITS,    \
                               nbi ? "_nbi" : "", bad);                                          \
            aclshmem_barrier_all();                                                              \
            memset(sym, 0, NE * 16 + 16);                                                        \
        }                                                                                        \
    }
ACLSHMEM_RMA_SIZES(DEFINE_SIZED_SIGNAL_TEST)

static int t_sized(int me, int n)
{
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    unsigned char *sym = aclshmem_calloc(NE + 1, 16);
    ASSERT(sig && sym);
#define RUN_SIZED(BITS) sized_##BITS(me, n, sig, sym);
    ACLSHMEM_RMA_SIZES(RUN_SIZED)
    aclshmem_barrier_all();
    aclshmem_free(sym);
    aclshmem_free(sig);
    return 0;
}

/* ---- SET / ADD semantics ------------------------------------------------------------------ */
/* Every PE adds to PE 0's word at the same time: the sum is exact. */
static int t_add_concurrent(int me, int n)
{
    enum { ADDS = 300 };
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    int32_t *dummy = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT(sig && dummy);
    aclshmem_barrier_all();
    for (int i = 0; i < ADDS; i++) {
        int32_t v = me + 1 + (i % 3);
        if (i % 2)
            aclshmemx_putmem_signal(dummy, &v, 0, sig, v, ACLSHMEM_SIGNAL_ADD, 0);
        else
            aclshmem_int32_put_signal_nbi(dummy, &v, 0, (uint8_t *)sig, v, ACLSHMEM_SIGNAL_ADD, 0);
    }
    int64_t want = 0;
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i < ADDS; i++)
            want += pe + 1 + (i % 3);
    if (me == 0)
        EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, (int32_t)want), want);
    aclshmem_barrier_all();
    if (me == 0)
        EXPECT_EQ(sig_now(sig), want);
    /* SET overwrites, ADD of a negative value subtracts. */
    aclshmem_barrier_all();
    if (me == n - 1) {
        aclshmemx_putmem_signal(dummy, dummy, 0, sig, -5, ACLSHMEM_SIGNAL_SET, 0);
        aclshmemx_putmem_signal(dummy, dummy, 0, sig, -7, ACLSHMEM_SIGNAL_ADD, 0);
    }
    aclshmem_barrier_all();
    if (me == 0)
        EXPECT_EQ(sig_now(sig), -12);
    aclshmem_barrier_all();
    aclshmem_free(dummy);
    aclshmem_free(sig);
    return 0;
}

/* Ping-pong with large puts: whenever the signal is seen, all of the data is there. */
static int t_data_before_signal(int me, int n)
{
    enum { SZ = 1 << 20, ROUNDS = 30 };
    (void)n;
    uint32_t *buf = aclshmem_calloc(SZ / 4, 4);
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    uint32_t *src = malloc(SZ);
    ASSERT(buf && sig && src);
    if (me > 1) { /* only PEs 0 and 1 play */
        aclshmem_barrier_all();
        goto out;
    }
    int peer = 1 - me;
    aclshmem_barrier_all();
    for (int r = 1; r <= ROUNDS; r++) {
        int32_t turn = 2 * r - (me == 0); /* PE 0 sends odd values, PE 1 even ones */
        if (me == 1)
            aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, turn - 1);
        if (me == 1 || r > 1) {
            size_t bad = 0;
            for (int i = 0; i < SZ / 4; i++)
                bad += buf[i] != (uint32_t)(turn - 1) * 2654435761u + (uint32_t)i;
            if (bad)
                harness_report(__FILE__, __LINE__, "round %d: %zu words of the data missing", r, bad);
        }
        for (int i = 0; i < SZ / 4; i++)
            src[i] = (uint32_t)turn * 2654435761u + (uint32_t)i;
        aclshmemx_putmem_signal_nbi(buf, src, SZ, sig, turn, ACLSHMEM_SIGNAL_SET, peer);
        if (me == 0)
            aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, turn + 1);
    }
out:
    aclshmem_barrier_all();
    free(src);
    aclshmem_free(sig);
    aclshmem_free(buf);
    return 0;
}

/* A blocked receiver wakes promptly; the returned value is the one that met the condition. */
static int t_wake_and_value(int me, int n)
{
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(sig);
    int next = (me + 1) % n;
    aclshmem_barrier_all();
    if (me == 0) {
        double t0 = harness_now();
        int32_t v = aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, 10);
        double waited = harness_now() - t0;
        EXPECT(v >= 10 && v <= 15 && v % 5 == 0);
        /* it really waited for PE n-1, and woke up soon after the signal */
        if (!(waited > 0.15 && waited < 1.5))
            harness_report(__FILE__, __LINE__, "waited %.3f s for a signal sent after 0.2 s", waited);
    } else if (next == 0) {
        harness_sleep_ms(200);
        for (int i = 0; i < 3; i++)
            aclshmemx_putmem_signal(sig, sig, 0, sig, 5, ACLSHMEM_SIGNAL_ADD, 0);
    }
    aclshmem_barrier_all();
    /* Every comparison; the value returned satisfies it. */
    *sig = 7;
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_EQ, 7), 7);
    EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_NE, 6), 7);
    EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GT, 6), 7);
    EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_GE, 7), 7);
    EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_LT, 8), 7);
    EXPECT_EQ(aclshmem_signal_wait_until(sig, ACLSHMEM_CMP_LE, 7), 7);
    aclshmem_barrier_all();
    aclshmem_free(sig);
    return 0;
}

/* ---- bad input ---------------------------------------------------------------------------- */
static int t_bad_input(int me, int n)
{
    int next = (me + 1) % n;
    int32_t *sig = aclshmem_calloc(4, sizeof(int32_t));
    int32_t *buf = aclshmem_calloc(16, sizeof(int32_t));
    ASSERT(sig && buf);
    int32_t src[16], stack_sig = 0;
    for (int i = 0; i < 16; i++)
        src[i] = 1000 + i;
    aclshmem_barrier_all();

    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, src, 64, (char *)sig + 1, 1, ACLSHMEM_SIGNAL_SET, next),
                    "aligned");
    EXPECT_REJECTED(aclshmemx_putmem_signal_nbi(buf, src, 64, (char *)sig + 2, 1, ACLSHMEM_SIGNAL_ADD, next),
                    "aligned");
    EXPECT_REJECTED(aclshmem_int32_put_signal(buf, src, 16, (uint8_t *)sig + 3, 1, ACLSHMEM_SIGNAL_SET, next),
                    "aligned");
    EXPECT_REJECTED(aclshmem_put32_signal(buf, src, 16, &stack_sig, 1, ACLSHMEM_SIGNAL_SET, next),
                    "symmetric heap");
    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, src, 64, NULL, 1, ACLSHMEM_SIGNAL_SET, next), "NULL");
    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, src, 64, sig, 1, 2, next), "sig_op");
    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, src, 64, sig, 1, -1, next), "sig_op");
    EXPECT_REJECTED(aclshmem_float_put_signal_nbi((float *)buf, (float *)src, 16, (uint8_t *)sig, 1, 7, next),
                    "sig_op");
    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, src, 64, sig, 1, ACLSHMEM_SIGNAL_SET, -1), "PE -1");
    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, src, 64, sig, 1, ACLSHMEM_SIGNAL_SET, n), "PE");
    EXPECT_REJECTED(aclshmem_put64_signal_nbi(buf, src, 8, sig, 1, ACLSHMEM_SIGNAL_ADD, n + 5), "PE");
    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, NULL, 64, sig, 1, ACLSHMEM_SIGNAL_SET, next), "NULL");
    EXPECT_REJECTED(aclshmemx_putmem_signal(src, src, 64, sig, 1, ACLSHMEM_SIGNAL_SET, next), "symmetric heap");
    EXPECT_REJECTED(aclshmemx_putmem_signal(buf, src, 1 << 30, sig, 1, ACLSHMEM_SIGNAL_SET, next),
                    "symmetric heap");
    EXPECT_REJECTED(aclshmem_put128_signal(buf, src, SIZE_MAX / 2, sig, 1, ACLSHMEM_SIGNAL_SET, next),
                    "overflow");
    /* Waits: a bad comparison, a misaligned or foreign word fail at once. */
    double t0 = harness_now();
    EXPECT_REJECTED(aclshmem_signal_wait_until(sig, 6, 0), "cmp");
    EXPECT_REJECTED(aclshmem_signal_wait_until(sig, -1, 0), "cmp");
    EXPECT_REJECTED(aclshmem_signal_wait_until((int32_t *)((char *)sig + 1), ACLSHMEM_CMP_EQ, 0), "aligned");
    EXPECT_REJECTED(aclshmem_signal_wait_until(&stack_sig, ACLSHMEM_CMP_EQ, 1), "symmetric heap");
    EXPECT_REJECTED(aclshmem_signal_wait_until(NULL, ACLSHMEM_CMP_EQ, 1), "NULL");
    EXPECT_LT(harness_now() - t0, 1.0);

    /* None of the rejected calls wrote anything anywhere. */
    aclshmem_barrier_all();
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(sig[i], 0);
    for (int i = 0; i < 16; i++)
        EXPECT_EQ(buf[i], 0);
    aclshmem_barrier_all();
    aclshmem_free(buf);
    aclshmem_free(sig);
    return 0;
}

static int not_initialised(int me, int n)
{
    (void)me, (void)n;
    int32_t word = 0, data = 0;
    harness_mark_error();
    aclshmemx_putmem_signal(&data, &data, 4, &word, 1, ACLSHMEM_SIGNAL_SET, 0);
    EXPECT_ERROR_CONTAINS("not initialized");
    harness_mark_error();
    aclshmem_signal_wait_until(&word, ACLSHMEM_CMP_EQ, 0);
    EXPECT_ERROR_CONTAINS("not initialized");
    EXPECT_EQ(word, 0);
    return 0;
}

static const harness_case cases[] = {
    { "putmem_signal", t_putmem_signal, { 0 }, { 2, 4 } },
    { "typed", t_typed, { 0 }, { 2, 3 } },
    { "sized", t_sized, { 0 }, { 2, 3 } },
    { "add_concurrent", t_add_concurrent, { 0 }, { 2, 8 } },
    { "data_before_signal", t_data_before_signal, { 0 }, { 2 } },
    { "wake_and_value", t_wake_and_value, { 0 }, { 2, 4 } },
    { "bad_input", t_bad_input, { 0 }, { 2 } },
    { "not_initialised", not_initialised, { .no_init = 1, .no_uid = 1 }, { 1 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
