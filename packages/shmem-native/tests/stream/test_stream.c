/*
 * test_stream.c - the cpu platform's streams and kernels, and the stream-ordered operations:
 * create / synchronize / destroy, handles that are bad or destroyed, order of work on a
 * stream, block indices, errors inside kernels reported (once) by synchronize, RMA, signals,
 * waits and barriers inside kernels (blocks meet, one PE barrier per call), every *_on_stream
 * operation with good and bad input, aclshmemx_handle_wait, the host barrier completing the
 * default stream, and the acceptance scenario: nothing on a stream happens before it
 * may, everything has happened after synchronize.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int32_t load32(const int32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* ---- small kernels ----------------------------------------------------------------------- */
static void noop_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)b, (void)dim, (void)arg;
}

static void sleep_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)b, (void)dim;
    harness_sleep_ms((int)(intptr_t)arg);
}

/* Holds its stream until the local symmetric word *arg becomes nonzero. */
static void gate_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)b, (void)dim;
    aclshmem_int32_wait_until(arg, ACLSHMEM_CMP_NE, 0);
}

static volatile int flag_set;
static void set_flag_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)b, (void)dim, (void)arg;
    harness_sleep_ms(100);
    __atomic_store_n(&flag_set, 1, __ATOMIC_RELEASE);
}

/* ---- create / synchronize / destroy ------------------------------------------------------ */
static int t_lifecycle(int me, int n)
{
    (void)me, (void)n;
    aclrtStream s[4] = {0};
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(aclshmemx_stream_create(&s[i]), 0);
        EXPECT_NOT_NULL(s[i]);
        for (int j = 0; j < i; j++)
            EXPECT(s[i] != s[j]);
    }
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(aclshmemx_stream_synchronize(s[i]), 0);
        EXPECT_EQ(aclshmemx_kernel_launch(s[i], sleep_kernel, 1, (void *)(intptr_t)5), 0);
    }
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), 0);
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, noop_kernel, 2, NULL), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), 0);
    /* destroy waits for the work still queued */
    flag_set = 0;
    EXPECT_EQ(aclshmemx_kernel_launch(s[0], set_flag_kernel, 1, NULL), 0);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(aclshmemx_stream_destroy(s[i]), 0);
    EXPECT_EQ(flag_set, 1);
    /* Outside a kernel a thread is block 0 of 1. */
    EXPECT_EQ(aclshmemx_block_idx(), 0);
    EXPECT_EQ(aclshmemx_block_num(), 1);
    return 0;
}

static int t_bad_handles(int me, int n)
{
    int next = (me + 1) % n;
    int32_t *sig = aclshmem_calloc(4, sizeof(int32_t));
    unsigned char *buf = aclshmem_calloc(64, 1);
    ASSERT(sig && buf);
    unsigned char src[64] = {1};
    int local = 0;
    aclrtStream bogus = &local, dead = NULL;
    ASSERT_EQ(aclshmemx_stream_create(&dead), 0);
    ASSERT_EQ(aclshmemx_stream_destroy(dead), 0);
    aclrtStream bad[] = {bogus, dead, (aclrtStream)(uintptr_t)0x10};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclrtStream h = bad[i];
        harness_mark_error();
        EXPECT_EQ(aclshmemx_stream_synchronize(h), ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_CONTAINS("not a live stream");
        harness_mark_error();
        EXPECT_EQ(aclshmemx_stream_destroy(h), ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_CONTAINS("not a live stream");
        harness_mark_error();
        EXPECT_EQ(aclshmemx_kernel_launch(h, noop_kernel, 1, NULL), ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_CONTAINS("not a live stream");
        EXPECT_REJECTED(aclshmemx_putmem_on_stream(buf, src, 64, next, h), "not a live stream");
        EXPECT_REJECTED(aclshmemx_getmem_on_stream(src, buf, 64, next, h), "not a live stream");
        EXPECT_REJECTED(aclshmemx_signal_op_on_stream(sig, 1, ACLSHMEM_SIGNAL_ADD, next, h), "not a live stream");
        EXPECT_REJECTED(aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_GE, 1, h), "not a live stream");
        EXPECT_REJECTED(aclshmemx_quiet_on_stream(h), "not a live stream");
        EXPECT_REJECTED(aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, h), "not a live stream");
        EXPECT_REJECTED(aclshmemx_barrier_all_on_stream(h), "not a live stream");
        EXPECT_REJECTED(aclshmemx_handle_wait((aclshmem_handle_t){ACLSHMEM_TEAM_WORLD}, h), "not a live stream");
    }
    harness_mark_error();
    EXPECT_EQ(aclshmemx_stream_create(NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_EQ(aclshmemx_stream_destroy(NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("default stream");
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, NULL, 1, NULL), ACLSHMEM_INVALID_PARAM);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, noop_kernel, 0, NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("block_dim");
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, noop_kernel, ACLSHMEMX_MAX_BLOCK_DIM + 1, NULL),
              ACLSHMEM_INVALID_PARAM);
    /* Nothing the rejected calls named happened. */
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), 0);
    aclshmem_barrier_all();
    EXPECT(load32(sig) == 0 && buf[0] == 0);
    aclshmem_barrier_all();
    aclshmem_free(buf);
    aclshmem_free(sig);
    return 0;
}

/* ---- order and blocks -------------------------------------------------------------------- */
#define ORDER_N 200
static int order_log[ORDER_N], order_len;
static struct order_arg { int idx; } order_args[ORDER_N];

static void order_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)b, (void)dim;
    struct order_arg *a = arg;
    if (a->idx % 17 == 0)
        harness_sleep_ms(1); /* a slow one must not be overtaken */
    order_log[order_len++] = a->idx;
}

static int t_order(int me, int n)
{
    (void)n;
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    int32_t *word = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(word);
    order_len = 0;
    for (int i = 0; i < ORDER_N; i++) {
        order_args[i].idx = i;
        EXPECT_EQ(aclshmemx_kernel_launch(s, order_kernel, 1, &order_args[i]), 0);
        if (i == ORDER_N / 2) /* library operations keep their place too */
            aclshmemx_signal_op_on_stream(word, 5, ACLSHMEM_SIGNAL_SET, me, s);
    }
    EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
    EXPECT_EQ(order_len, ORDER_N);
    int wrong = 0;
    for (int i = 0; i < ORDER_N; i++)
        wrong += order_log[i] != i;
    EXPECT_EQ(wrong, 0);
    EXPECT_EQ(load32(word), 5);
    EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    aclshmem_barrier_all();
    aclshmem_free(word);
    return 0;
}

static int block_seen[ACLSHMEMX_MAX_BLOCK_DIM];
static int block_bad;

static void block_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)arg;
    if (aclshmemx_block_idx() != b || aclshmemx_block_num() != dim || b >= dim)
        __atomic_add_fetch(&block_bad, 1, __ATOMIC_RELAXED);
    else
        __atomic_add_fetch(&block_seen[b], 1, __ATOMIC_RELAXED);
}

static int t_blocks(int me, int n)
{
    (void)me, (void)n;
    static const uint32_t dims[] = {1, 2, 7, 64, ACLSHMEMX_MAX_BLOCK_DIM};
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        memset(block_seen, 0, sizeof block_seen);
        block_bad = 0;
        EXPECT_EQ(aclshmemx_kernel_launch(s, block_kernel, dims[k], NULL), 0);
        EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
        int missing = 0;
        for (uint32_t b = 0; b < ACLSHMEMX_MAX_BLOCK_DIM; b++)
            missing += block_seen[b] != (b < dims[k]);
        EXPECT_EQ(missing, 0);
        EXPECT_EQ(block_bad, 0);
    }
    EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    return 0;
}

/* ---- errors inside kernels ----------------------------------------------------------------- */
static int err_pe;
static void bad_put_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)dim;
    if (b == 2) {
        int32_t v = 1;
        aclshmem_int32_put(arg, &v, 1, err_pe);
    }
}

static void sync_own_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)b, (void)dim;
    aclshmemx_stream_synchronize(arg);
}

static void destroy_own_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)b, (void)dim;
    aclshmemx_stream_destroy(arg);
}

static int t_kernel_errors(int me, int n)
{
    (void)me;
    int32_t *word = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(word);
    err_pe = n + 3;
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    /* The first error is reported, later work still runs, and the report clears it. */
    EXPECT_EQ(aclshmemx_kernel_launch(s, bad_put_kernel, 4, word), 0);
    EXPECT_EQ(aclshmemx_kernel_launch(s, sync_own_kernel, 1, s), 0);
    flag_set = 0;
    EXPECT_EQ(aclshmemx_kernel_launch(s, set_flag_kernel, 1, NULL), 0);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_stream_synchronize(s), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("aclshmem_int32_put");
    EXPECT_ERROR_CONTAINS("block 2 of 4");
    EXPECT_ERROR_CONTAINS("aclshmemx_kernel_launch");
    EXPECT_EQ(flag_set, 1);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
    /* A kernel may not wait for, or destroy, its own stream. */
    EXPECT_EQ(aclshmemx_kernel_launch(s, sync_own_kernel, 1, s), 0);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_stream_synchronize(s), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("wait for itself");
    EXPECT_EQ(aclshmemx_kernel_launch(s, destroy_own_kernel, 1, s), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
    EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    /* The same on the default stream. */
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, bad_put_kernel, 3, word), 0);
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, sync_own_kernel, 1, NULL), 0);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("PE");
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), 0);
    /* A failing on-stream operation: its team went away before the stream reached it. */
    aclshmem_team_t team = ACLSHMEM_TEAM_INVALID;
    ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &team), 0);
    int32_t *gate = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(gate);
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, gate_kernel, 1, gate), 0);
    aclshmemx_barrier_on_stream(team, NULL);
    aclshmem_team_destroy(team);
    aclshmem_int32_p(gate, 1, me);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("aclshmemx_barrier_on_stream");
    EXPECT_EQ(load32(word), 0);
    aclshmem_barrier_all();
    aclshmem_free(gate);
    aclshmem_free(word);
    return 0;
}

/* ---- the device-side API inside kernels -------------------------------------------------- */
#define ROUNDS 8
#define MAXB 4
typedef struct {
    int64_t *slots; /* [n][MAXB]: slot [pe][b] is written by block b of pe */
    int32_t *sig;
    int me, n;
} rma_arg_t;

static void rma_kernel(uint32_t b, uint32_t dim, void *p)
{
    rma_arg_t *a = p;
    int next = (a->me + 1) % a->n, prev = (a->me + a->n - 1) % a->n;
    uint32_t prev_dim = 1 + (uint32_t)prev % MAXB;
    for (int r = 1; r <= ROUNDS; r++) {
        aclshmem_int64_p(&a->slots[a->me * MAXB + (int)b], r, next);
        aclshmem_barrier_all(); /* the blocks meet, one PE barrier, all go on */
        if (b == 0) {
            for (uint32_t j = 0; j < prev_dim; j++)
                EXPECT_EQ(a->slots[prev * MAXB + (int)j], r);
        }
        aclshmem_barrier_all();
    }
    /* signal and wait inside the kernel; quiet as well */
    if (b == dim - 1) {
        int64_t v = 99;
        aclshmem_int64_put(&a->slots[a->me * MAXB], &v, 1, next);
        aclshmem_quiet();
        aclshmemx_putmem_signal(&a->slots[a->me * MAXB + 1], &v, sizeof v, a->sig, 1, ACLSHMEM_SIGNAL_ADD,
                                next);
        EXPECT_EQ(aclshmem_signal_wait_until(a->sig, ACLSHMEM_CMP_GE, 1), 1);
        EXPECT_EQ(a->slots[prev * MAXB], 99);
        EXPECT_EQ(a->slots[prev * MAXB + 1], 99);
    }
}

static int t_kernel_rma(int me, int n)
{
    rma_arg_t a = {aclshmem_calloc((size_t)n * MAXB, sizeof(int64_t)), aclshmem_calloc(1, sizeof(int32_t)), me, n};
    ASSERT(a.slots && a.sig);
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    /* Each PE uses another number of blocks: barriers count per kernel, not per block. */
    EXPECT_EQ(aclshmemx_kernel_launch(s, rma_kernel, 1 + (uint32_t)me % MAXB, &a), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
    EXPECT_EQ(load32(a.sig), 1);
    EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    aclshmem_barrier_all();
    aclshmem_free(a.sig);
    aclshmem_free(a.slots);
    return 0;
}

/* Blocks that return at once do not hold up the barriers of the others. */
static void early_exit_kernel(uint32_t b, uint32_t dim, void *arg)
{
    (void)dim, (void)arg;
    if (b % 2)
        return;
    for (int i = 0; i < 3; i++)
        aclshmem_barrier_all();
    aclshmem_sync(ACLSHMEM_TEAM_WORLD);
}

static int t_early_exit(int me, int n)
{
    (void)me, (void)n;
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, early_exit_kernel, 6, NULL), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), 0);
    aclshmem_barrier_all();
    return 0;
}

/* ---- on-stream operations ---------------------------------------------------------------- */
enum { OPS_SZ = 3000 };

static void ops_round(int me, int n, aclrtStream s, unsigned char *buf, int32_t *sig, int round)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    unsigned char src[OPS_SZ], back[OPS_SZ];
    for (int i = 0; i < OPS_SZ; i++)
        src[i] = (unsigned char)(me * 11 + i + round);
    memset(back, 0, sizeof back);
    int32_t before = load32(sig);
    aclshmem_barrier_all();
    aclshmemx_putmem_on_stream(buf, src, OPS_SZ, next, s);
    aclshmemx_quiet_on_stream(s);
    aclshmemx_signal_op_on_stream(sig, 1, ACLSHMEM_SIGNAL_ADD, next, s);
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_GE, before + 1, s);
    aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, s);
    aclshmemx_getmem_on_stream(back, buf, OPS_SZ, next, s); /* what I put there */
    aclshmemx_barrier_all_on_stream(s);
    aclshmemx_handle_wait((aclshmem_handle_t){ACLSHMEM_TEAM_WORLD}, s);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
    size_t bad = 0;
    for (int i = 0; i < OPS_SZ; i++)
        bad += buf[i] != (unsigned char)(prev * 11 + i + round) || back[i] != src[i];
    if (bad)
        harness_report(__FILE__, __LINE__, "round %d: %zu bytes wrong", round, bad);
    EXPECT_EQ(load32(sig), before + 1);
}

static int t_on_stream_ops(int me, int n)
{
    unsigned char *buf = aclshmem_calloc(OPS_SZ, 1);
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT(buf && sig);
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    for (int round = 0; round < 3; round++) {
        ops_round(me, n, s, buf, sig, round);
        ops_round(me, n, NULL, buf, sig, round + 10);
    }
    EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    aclshmem_barrier_all();
    aclshmem_free(sig);
    aclshmem_free(buf);
    return 0;
}

static int t_on_stream_bad_input(int me, int n)
{
    int next = (me + 1) % n;
    unsigned char *buf = aclshmem_calloc(64, 1);
    int32_t *sig = aclshmem_calloc(2, sizeof(int32_t));
    ASSERT(buf && sig);
    unsigned char src[64];
    memset(src, 7, sizeof src);
    int32_t on_stack = 0;
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    aclshmem_barrier_all();
    aclrtStream streams[] = {s, NULL};
    for (int k = 0; k < 2; k++) {
        aclrtStream h = streams[k];
        EXPECT_REJECTED(aclshmemx_putmem_on_stream(buf, src, 64, n, h), "PE");
        EXPECT_REJECTED(aclshmemx_putmem_on_stream(buf, src, 64, -1, h), "PE");
        EXPECT_REJECTED(aclshmemx_putmem_on_stream(src, src, 64, next, h), "symmetric heap");
        EXPECT_REJECTED(aclshmemx_putmem_on_stream(buf, NULL, 64, next, h), "NULL");
        EXPECT_REJECTED(aclshmemx_putmem_on_stream(buf, src, 1 << 30, next, h), "symmetric heap");
        EXPECT_REJECTED(aclshmemx_getmem_on_stream(NULL, buf, 64, next, h), "NULL");
        EXPECT_REJECTED(aclshmemx_getmem_on_stream(src, src, 64, next, h), "symmetric heap");
        EXPECT_REJECTED(aclshmemx_getmem_on_stream(src, buf, 64, n + 1, h), "PE");
        EXPECT_REJECTED(aclshmemx_signal_op_on_stream((int32_t *)((char *)sig + 2), 1, ACLSHMEM_SIGNAL_SET,
                                                      next, h), "aligned");
        EXPECT_REJECTED(aclshmemx_signal_op_on_stream(sig, 1, 3, next, h), "sig_op");
        EXPECT_REJECTED(aclshmemx_signal_op_on_stream(sig, 1, ACLSHMEM_SIGNAL_SET, n, h), "PE");
        EXPECT_REJECTED(aclshmemx_signal_op_on_stream(&on_stack, 1, ACLSHMEM_SIGNAL_SET, next, h),
                        "symmetric heap");
        EXPECT_REJECTED(aclshmemx_signal_op_on_stream(NULL, 1, ACLSHMEM_SIGNAL_SET, next, h), "NULL");
        EXPECT_REJECTED(aclshmemx_signal_wait_until_on_stream(sig, 6, 0, h), "cmp");
        EXPECT_REJECTED(aclshmemx_signal_wait_until_on_stream(sig, -3, 0, h), "cmp");
        EXPECT_REJECTED(aclshmemx_signal_wait_until_on_stream((int32_t *)((char *)sig + 1), ACLSHMEM_CMP_EQ,
                                                              0, h), "aligned");
        EXPECT_REJECTED(aclshmemx_signal_wait_until_on_stream(&on_stack, ACLSHMEM_CMP_EQ, 1, h),
                        "symmetric heap");
        EXPECT_REJECTED(aclshmemx_barrier_on_stream(77, h), "team 77");
        EXPECT_REJECTED(aclshmemx_barrier_on_stream(5000, h), "team");
        EXPECT_REJECTED(aclshmemx_handle_wait((aclshmem_handle_t){77}, h), "team 77");
        /* The invalid team is a no-op, as for aclshmem_barrier. */
        aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_INVALID, h);
        aclshmemx_handle_wait((aclshmem_handle_t){ACLSHMEM_TEAM_INVALID}, h);
        /* Nothing was enqueued: the stream is empty and clean. */
        EXPECT_EQ(aclshmemx_stream_synchronize(h), 0);
    }
    aclshmem_barrier_all();
    for (int i = 0; i < 64; i++)
        EXPECT_EQ(buf[i], 0);
    EXPECT(load32(&sig[0]) == 0 && load32(&sig[1]) == 0);
    EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    aclshmem_barrier_all();
    aclshmem_free(sig);
    aclshmem_free(buf);
    return 0;
}

/* ---- the acceptance scenario ------------------------------------------------------------- */
static void acceptance(int me, int n, int use_default)
{
    enum { SZ = 64 * 1024 };
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    unsigned char *buf = aclshmem_calloc(SZ, 1);
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    int32_t *gate = aclshmem_calloc(1, sizeof(int32_t));
    unsigned char *src = malloc(SZ), *mirror = malloc(SZ);
    ASSERT(buf && sig && gate && src && mirror);
    for (int i = 0; i < SZ; i++)
        src[i] = (unsigned char)(me * 37 + i * 3 + 1);
    aclrtStream s = NULL;
    if (!use_default)
        ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    aclshmem_barrier_all();

    /* A kernel that holds the stream until this PE opens the gate, then the work. */
    double t0 = harness_now();
    EXPECT_EQ(aclshmemx_kernel_launch(s, gate_kernel, 1, gate), 0);
    aclshmemx_putmem_on_stream(buf, src, SZ, next, s);
    aclshmemx_quiet_on_stream(s);
    aclshmemx_signal_op_on_stream(sig, 1, ACLSHMEM_SIGNAL_ADD, next, s);
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 1, s);
    aclshmemx_barrier_on_stream(ACLSHMEM_TEAM_WORLD, s);
    EXPECT(harness_now() - t0 < 0.5); /* every call only enqueued */

    /* Nothing has happened yet, on any PE. */
    harness_sleep_ms(30);
    size_t early = 0;
    for (int i = 0; i < SZ; i++)
        early += buf[i] != 0;
    EXPECT_EQ(early, 0);
    EXPECT_EQ(load32(sig), 0);
    harness_sync(); /* every PE has looked before any gate opens */

    aclshmem_int32_p(gate, 1, me);
    EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);

    /* Everything has happened: my data from prev, my signal, and (the stream's barrier)
     * every other PE's put as well. */
    size_t bad = 0;
    for (int i = 0; i < SZ; i++)
        bad += buf[i] != (unsigned char)(prev * 37 + i * 3 + 1);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(load32(sig), 1);
    aclshmem_getmem(mirror, buf, SZ, next);
    EXPECT(memcmp(mirror, src, SZ) == 0);

    if (s)
        EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    aclshmem_barrier_all();
    free(mirror);
    free(src);
    aclshmem_free(gate);
    aclshmem_free(sig);
    aclshmem_free(buf);
}

static int t_acceptance(int me, int n)
{
    acceptance(me, n, 0);
    acceptance(me, n, 1);
    return 0;
}

/* ---- streams next to each other, barriers and the default stream ------------------------- */
static int t_two_streams(int me, int n)
{
    (void)n;
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(sig);
    aclrtStream a, b;
    ASSERT_EQ(aclshmemx_stream_create(&a), 0);
    ASSERT_EQ(aclshmemx_stream_create(&b), 0);
    /* a waits for what b does later: only works if the streams run side by side. */
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 3, a);
    EXPECT_EQ(aclshmemx_kernel_launch(b, sleep_kernel, 1, (void *)(intptr_t)20), 0);
    aclshmemx_signal_op_on_stream(sig, 3, ACLSHMEM_SIGNAL_SET, me, b);
    EXPECT_EQ(aclshmemx_stream_synchronize(a), 0);
    EXPECT_EQ(load32(sig), 3);
    EXPECT_EQ(aclshmemx_stream_destroy(a), 0);
    EXPECT_EQ(aclshmemx_stream_destroy(b), 0);
    aclshmem_barrier_all();
    aclshmem_free(sig);
    return 0;
}

static int t_host_barrier_drains_default(int me, int n)
{
    (void)me, (void)n;
    for (int v = 0; v < 2; v++) {
        flag_set = 0;
        EXPECT_EQ(aclshmemx_kernel_launch(NULL, set_flag_kernel, 1, NULL), 0);
        if (v)
            aclshmem_sync_all();
        else
            aclshmem_barrier_all();
        EXPECT_EQ(flag_set, 1);
    }
    return 0;
}

static int t_handle_wait(int me, int n)
{
    aclshmem_team_t even = ACLSHMEM_TEAM_INVALID;
    ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, &even), 0);
    int64_t *slot = aclshmem_calloc(1, sizeof(int64_t));
    ASSERT_NOT_NULL(slot);
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    if (even != ACLSHMEM_TEAM_INVALID) {
        int tn = aclshmem_team_n_pes(even), tme = aclshmem_team_my_pe(even);
        int to = aclshmem_team_translate_pe(even, (tme + 1) % tn, ACLSHMEM_TEAM_WORLD);
        int from = aclshmem_team_translate_pe(even, (tme + tn - 1) % tn, ACLSHMEM_TEAM_WORLD);
        for (int r = 1; r <= 5; r++) {
            int64_t v = 1000 * r + me;
            aclshmemx_putmem_on_stream(slot, &v, sizeof v, to, s);
            aclshmemx_handle_wait((aclshmem_handle_t){even}, s); /* my put is complete, and theirs */
            EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
            EXPECT_EQ(*slot, 1000 * r + from);
            aclshmemx_handle_wait((aclshmem_handle_t){even}, s); /* nobody overwrites before I looked */
            EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
        }
    } else {
        /* Not a member: the handle names the invalid team, a no-op. */
        aclshmemx_handle_wait((aclshmem_handle_t){even}, s);
        EXPECT_EQ(aclshmemx_stream_synchronize(s), 0);
    }
    EXPECT_EQ(aclshmemx_stream_destroy(s), 0);
    aclshmem_barrier_all();
    if (even != ACLSHMEM_TEAM_INVALID)
        aclshmem_team_destroy(even);
    aclshmem_free(slot);
    return 0;
}

/* Streams left alive and busy at finalize are drained and destroyed by it. */
static int t_left_at_finalize(int me, int n)
{
    (void)me, (void)n;
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    EXPECT_EQ(aclshmemx_kernel_launch(s, sleep_kernel, 3, (void *)(intptr_t)30), 0);
    aclshmemx_barrier_all_on_stream(s);
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, sleep_kernel, 2, (void *)(intptr_t)30), 0);
    return 0; /* the harness finalizes */
}

/* A stream waiting for a PE that dies does not hang: synchronize fails, naming the PE. */
static int t_dead_pe(int me, int n)
{
    (void)n;
    int32_t *sig = aclshmem_calloc(1, sizeof(int32_t));
    ASSERT_NOT_NULL(sig);
    aclrtStream s;
    ASSERT_EQ(aclshmemx_stream_create(&s), 0);
    aclshmem_barrier_all();
    if (me == 1) {
        fflush(NULL);
        _exit(0);
    }
    aclshmemx_signal_wait_until_on_stream(sig, ACLSHMEM_CMP_EQ, 1, s); /* PE 1 never sends it */
    aclshmemx_barrier_all_on_stream(NULL);
    double t0 = harness_now();
    harness_mark_error();
    EXPECT_NE(aclshmemx_stream_synchronize(s), 0);
    EXPECT_ERROR_CONTAINS("PE 1");
    harness_mark_error();
    EXPECT_NE(aclshmemx_stream_synchronize(NULL), 0);
    EXPECT_ERROR_CONTAINS("PE 1");
    EXPECT(harness_now() - t0 < 10.0);
    t0 = harness_now();
    (void)aclshmem_finalize();
    EXPECT(harness_now() - t0 < 15.0);
    return 0;
}

static int not_initialised(int me, int n)
{
    (void)me, (void)n;
    aclrtStream s = NULL;
    harness_mark_error();
    EXPECT_EQ(aclshmemx_stream_create(&s), ACLSHMEM_NOT_INITED);
    EXPECT_NULL(s);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), ACLSHMEM_NOT_INITED);
    EXPECT_EQ(aclshmemx_kernel_launch(NULL, noop_kernel, 1, NULL), ACLSHMEM_NOT_INITED);
    EXPECT_REJECTED(aclshmemx_quiet_on_stream(NULL), "not initialized");
    return 0;
}

static const harness_case cases[] = {
    { "lifecycle", t_lifecycle, { 0 }, { 2 } },
    { "bad_handles", t_bad_handles, { 0 }, { 2 } },
    { "order", t_order, { 0 }, { 2 } },
    { "blocks", t_blocks, { 0 }, { 2 } },
    { "kernel_errors", t_kernel_errors, { 0 }, { 2 } },
    { "kernel_rma", t_kernel_rma, { 0 }, { 2, 5, 8 } },
    { "early_exit", t_early_exit, { 0 }, { 3 } },
    { "on_stream_ops", t_on_stream_ops, { 0 }, { 2, 4 } },
    { "on_stream_bad_input", t_on_stream_bad_input, { 0 }, { 2 } },
    { "acceptance", t_acceptance, { 0 }, { 2, 4, 8 } },
    { "two_streams", t_two_streams, { 0 }, { 2 } },
    { "host_barrier_drains_default", t_host_barrier_drains_default, { 0 }, { 2 } },
    { "handle_wait", t_handle_wait, { 0 }, { 4, 5 } },
    { "left_at_finalize", t_left_at_finalize, { 0 }, { 2 } },
    { "dead_pe", t_dead_pe, { .no_finalize = 1, .timeout_s = 60 }, { 2, 3 } },
    { "not_initialised", not_initialised, { .no_init = 1, .no_uid = 1 }, { 1 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
