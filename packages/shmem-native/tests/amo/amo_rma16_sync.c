/*
 * amo_rma16_sync.c - what came with the AMO family: half and bfloat16 RMA (bit patterns moved
 * unchanged), barrier_vec on the host, and the host signal_op.
 */
#define _GNU_SOURCE
#include <string.h>

#include "amo_suite.h"

/* ---- half and bfloat16 RMA moves bit patterns ----------------------------------------------
 * Every typed RMA family of the two types, with patterns that a conversion would change:
 * NaN payloads (signalling too), infinities, subnormals, -0. */
static const uint16_t SPECIAL[] = {0x7c01, 0x7e55, 0xfd00, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x8000, 0x7bff,
                                   0x7f81, 0xffc1, 0x7f80, 0x0080, 0x807f, 0x3c00, 0x3f80, 0x1234, 0xabcd};
#define N_SPECIAL ((int)(sizeof SPECIAL / sizeof SPECIAL[0]))

static uint16_t special(int i, int pe)
{
    return SPECIAL[(i + pe) % N_SPECIAL];
}

#define DEFINE_RMA16_TEST(NAME, TYPE)                                                             \
    static void rma16_##NAME(int me, int n)                                                       \
    {                                                                                             \
        const char *tn = #NAME;                                                                   \
        int next = (me + 1) % n, prev = (me + n - 1) % n;                                         \
        TYPE *sym = aclshmem_calloc(4 * N_SPECIAL, sizeof(TYPE));                                 \
        int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));                                       \
        ASSERT_NOT_NULL(sym);                                                                     \
        ASSERT_NOT_NULL(sig);                                                                     \
        TYPE src[2 * N_SPECIAL], got[2 * N_SPECIAL];                                              \
        for (int i = 0; i < N_SPECIAL; i++)                                                       \
            src[i] = special(i, me);                                                              \
        int bad = 0;                                                                              \
        aclshmem_barrier_all();                                                                   \
        aclshmem_##NAME##_put(sym, src, N_SPECIAL, next);                                         \
        aclshmem_##NAME##_p(&sym[N_SPECIAL], src[3], next);                                       \
        aclshmem_##NAME##_iput(&sym[2 * N_SPECIAL], src, 2, 1, N_SPECIAL / 2, next);              \
        aclshmem_##NAME##_put_signal(&sym[3 * N_SPECIAL], src, N_SPECIAL, (uint8_t *)sig, 1,      \
                                     ACLSHMEM_SIGNAL_ADD, next);                                  \
        aclshmem_barrier_all();                                                                   \
        for (int i = 0; i < N_SPECIAL; i++) {                                                     \
            bad += sym[i] != special(i, prev);                                                    \
            bad += sym[3 * N_SPECIAL + i] != special(i, prev);                                    \
        }                                                                                         \
        for (int i = 0; i < N_SPECIAL / 2; i++)                                                   \
            bad += sym[2 * N_SPECIAL + 2 * i] != special(i, prev);                                \
        bad += sym[N_SPECIAL] != special(3, prev);                                                \
        bad += *sig != 1;                                                                         \
        if (bad)                                                                                  \
            harness_report(__FILE__, __LINE__, "%s put/p/iput/put_signal: %d wrong", tn, bad);    \
        bad = 0;                                                                                  \
        aclshmem_##NAME##_get(got, sym, N_SPECIAL, next);                                         \
        for (int i = 0; i < N_SPECIAL; i++)                                                       \
            bad += got[i] != special(i, me);                                                      \
        bad += aclshmem_##NAME##_g(&sym[5], next) != special(5, me);                              \
        memset(got, 0, sizeof got);                                                               \
        aclshmem_##NAME##_iget(got, sym, 2, 3, N_SPECIAL / 3, next);                              \
        for (int i = 0; i < N_SPECIAL / 3; i++)                                                   \
            bad += got[2 * i] != special(3 * i, me) || got[2 * i + 1] != 0;                       \
        if (bad)                                                                                  \
            harness_report(__FILE__, __LINE__, "%s get/g/iget: %d wrong", tn, bad);               \
        aclshmem_barrier_all();                                                                   \
        aclshmem_free(sig);                                                                       \
        aclshmem_free(sym);                                                                       \
    }
ACLSHMEM_AMO_HALF_TYPES(DEFINE_RMA16_TEST)

int t_rma16(int me, int n)
{
    rma16_half(me, n);
    rma16_bfloat16(me, n);
    return 0;
}

/* ---- barrier_vec on the host ------------------------------------------------------------------ */
int t_barrier_vec(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int32_t *slot = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(slot);
    aclshmem_barrier_all();
    for (int r = 1; r <= 5; r++) {
        aclshmem_int32_p(slot, me * 100 + r, next);
        if (r % 2)
            aclshmemx_barrier_vec(ACLSHMEM_TEAM_WORLD);
        else
            aclshmemx_barrier_all_vec();
        EXPECT_EQ(*slot, prev * 100 + r);
        aclshmemx_barrier_all_vec(); /* nobody writes round r + 1 before everyone read round r */
    }
    EXPECT_REJECTED(aclshmemx_barrier_vec(1234), "does not exist");
    aclshmemx_barrier_vec(ACLSHMEM_TEAM_INVALID); /* a no-op, as aclshmem_barrier */
    aclshmem_barrier_all();
    aclshmem_free(slot);
    return 0;
}

/* ---- signal_op on the host ---------------------------------------------------------------------
 * Data with putmem, then signal_op ADD; the receiver waits for the signal and finds the
 * data.  SET overwrites.  Bad input fails and changes nothing. */
int t_signal_op(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int32_t *sig = aclshmem_calloc(2, sizeof(int32_t));
    int64_t *data = aclshmem_calloc(64, sizeof(int64_t));
    ASSERT_NOT_NULL(sig);
    ASSERT_NOT_NULL(data);
    int64_t src[64];
    aclshmem_barrier_all();
    for (int r = 1; r <= 10; r++) {
        for (int i = 0; i < 64; i++)
            src[i] = me * 1000 + r * 64 + i;
        aclshmem_putmem(data, src, sizeof src, next);
        aclshmemx_signal_op(&sig[0], 1, ACLSHMEM_SIGNAL_ADD, next);
        EXPECT_GE(aclshmem_signal_wait_until(&sig[0], ACLSHMEM_CMP_GE, r), r);
        int wrong = 0;
        for (int i = 0; i < 64; i++)
            wrong += data[i] != prev * 1000 + r * 64 + i;
        EXPECT_EQ(wrong, 0);
        aclshmemx_signal_op(&sig[1], r, ACLSHMEM_SIGNAL_SET, prev); /* "read round r" */
        aclshmem_signal_wait_until(&sig[1], ACLSHMEM_CMP_EQ, r);
    }
    EXPECT_REJECTED(aclshmemx_signal_op(&sig[0], 1, 7, next), "sig_op");
    EXPECT_REJECTED(aclshmemx_signal_op(&sig[0], 1, ACLSHMEM_SIGNAL_SET, n), "PE");
    EXPECT_REJECTED(aclshmemx_signal_op((int32_t *)(void *)((char *)sig + 2), 1, ACLSHMEM_SIGNAL_SET, next),
                    "aligned");
    int32_t local = 0;
    EXPECT_REJECTED(aclshmemx_signal_op(&local, 1, ACLSHMEM_SIGNAL_SET, next), "symmetric heap");
    aclshmem_barrier_all();
    EXPECT_EQ(sig[0], 10);
    EXPECT_EQ(sig[1], 10);
    aclshmem_barrier_all();
    aclshmem_free(data);
    aclshmem_free(sig);
    return 0;
}
