/*
 * test_coll_move.c - the collectives that move data (aclshmem/coll.h): broadcast, collect,
 * fcollect, alltoall, alltoalls, in their *mem and typed forms and on streams, and the broadcast
 * of local memory (aclshmemx_broadcastmem_local, alone and mixed with broadcastmem); the world
 * team and strided sub-teams, out of place and in place, zero length and sizes that straddle
 * the engine's pieces; aclshmemx_team_exchange; and calls that do not match (another size,
 * root, type, operation or collective, a bad argument on one PE), which must fail on every
 * PE with a message naming a PE that differs, write nothing, and leave the team usable.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem/coll.h"
#include "harness.h"

/* The byte every PE's source holds at index i: a function of the team PE that sent it. */
static uint8_t pattern(int from, size_t i)
{
    return (uint8_t)(from * 37 + i * 7 + (i >> 8) * 3 + 1);
}

static void fill(uint8_t *buf, size_t len, int from)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(from, i);
}

/* The first index where buf[i] != pattern(from, first + i), or -1. */
static long mismatch(const uint8_t *buf, size_t len, int from, size_t first)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != pattern(from, first + i))
            return (long)i;
    return -1;
}

#define EXPECT_PATTERN(buf, len, from, first)                                                     \
    do {                                                                                           \
        long at_ = mismatch((buf), (len), (from), (first));                                        \
        HARNESS_CHECK_(at_ < 0, 0, "%s: byte %ld of %zu differs (from PE %d)", #buf, at_, (size_t)(len), \
                       (int)(from));                                                               \
    } while (0)

/* Sizes around the engine's limits: nothing, one byte, odd sizes, the most a record carries
 * (ACLSHMEMX_TEAM_EXCHANGE_MAX: the data in the records) and one byte more, the small/large
 * reduce switch and its 8 KiB pieces, and a size that straddles several of them. */
static const size_t sizes[] = {0, 1, 7, 64, 128, 129, 4095, 4097, 8191, 8193, 3 * 8192 + 5, 200001};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
#define MAX_SIZE 200001

/* A team of the world's PEs start, start + stride, ... (this PE in it or not). */
static aclshmem_team_t strided_team(int start, int stride, int size)
{
    aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
    ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, start, stride, size, &t), ACLSHMEM_SUCCESS);
    return t;
}

/* ---- broadcast ------------------------------------------------------------------------ */

static void broadcast_case(aclshmem_team_t team, uint8_t *src, uint8_t *dst, size_t len, int root, int in_place)
{
    int me = aclshmem_team_my_pe(team);
    uint8_t *from = in_place ? dst : src;
    memset(dst, 0xee, len + 1);
    fill(from, len, me == root ? root : 100 + me); /* only the root's source counts */
    EXPECT_EQ(aclshmem_broadcastmem(team, dst, from, len, root), ACLSHMEM_SUCCESS);
    EXPECT_PATTERN(dst, len, root, 0);
    EXPECT_EQ(dst[len], 0xee); /* not a byte more */
    aclshmem_barrier(team);    /* before the next case refills the sources */
}

/* Symmetric buffers for the cases of a team of up to n PEs (allocation is collective over
 * the world: made before the teams' cases, the same on every PE). */
typedef struct {
    uint8_t *src, *dst;
    int32_t *isrc, *idst;
} buffers_t;

#define SRC_CAP(n) ((MAX_SIZE + 16) * (size_t)(n) + 1)
#define INT_CAP(n) (sizeof(int32_t) * 40 * 3 * (size_t)(n))

static buffers_t buffers_alloc(int n)
{
    buffers_t b = {aclshmem_malloc(SRC_CAP(n)), aclshmem_malloc(SRC_CAP(n)), aclshmem_malloc(INT_CAP(n)),
                   aclshmem_malloc(INT_CAP(n))};
    ASSERT(b.src && b.dst && b.isrc && b.idst);
    return b;
}

static void buffers_free(buffers_t *b)
{
    aclshmem_free(b->idst);
    aclshmem_free(b->isrc);
    aclshmem_free(b->dst);
    aclshmem_free(b->src);
}

static void broadcasts(aclshmem_team_t team, const buffers_t *b)
{
    int n = aclshmem_team_n_pes(team);
    for (size_t s = 0; s < N_SIZES; s++)
        for (int root = 0; root < n; root++)
            broadcast_case(team, b->src, b->dst, sizes[s], root, (int)((s + (size_t)root) % 2));
}

static int t_broadcast(int me, int n)
{
    (void)me;
    buffers_t b = buffers_alloc(n);
    broadcasts(ACLSHMEM_TEAM_WORLD, &b);
    buffers_free(&b);
    return 0;
}

/* ---- broadcast of local memory ----------------------------------------------------------- */

/* aclshmemx_broadcastmem_local into dst (this process's memory), from the root's src (its own
 * too, or dst itself in place), with work symmetric; PEs for which symmetric is set call
 * aclshmem_broadcastmem in place on the symmetric work instead (a team may mix the two). */
static void broadcast_local_case(aclshmem_team_t team, uint8_t *work, uint8_t *src, uint8_t *dst, size_t len,
                                 int root, int in_place, int symmetric)
{
    int me = aclshmem_team_my_pe(team);
    uint8_t *to = symmetric ? work : dst, *from = in_place || symmetric ? to : src;
    memset(to, 0xee, len + 1);
    fill(from, len, me == root ? root : 100 + me);
    int rc = symmetric ? aclshmem_broadcastmem(team, to, from, len, root)
                       : aclshmemx_broadcastmem_local(team, to, me == root ? from : NULL, work, len, root);
    EXPECT_EQ(rc, ACLSHMEM_SUCCESS);
    EXPECT_PATTERN(to, len, root, 0);
    EXPECT_EQ(to[len], 0xee);
    aclshmem_barrier(team);
}

/* The sizes above, then around the root's 1 MiB pieces (which it copies in one by one while
 * the others read: one piece, one byte more, several and a part). */
static const size_t local_sizes[] = {0, 1, 7, 64, 128, 129, 4095, 4097, 8191, 8193, 3 * 8192 + 5, 200001,
                                     1 << 20, (1 << 20) + 1, (3 << 20) + 5};
#define N_LOCAL_SIZES (sizeof local_sizes / sizeof local_sizes[0])
#define MAX_LOCAL_SIZE ((3 << 20) + 5)

static void broadcasts_local(aclshmem_team_t team, uint8_t *work, uint8_t *src, uint8_t *dst)
{
    int n = aclshmem_team_n_pes(team), me = aclshmem_team_my_pe(team);
    for (size_t s = 0; s < N_LOCAL_SIZES; s++)
        for (int root = 0; root < n; root++)
            broadcast_local_case(team, work, src, dst, local_sizes[s], root, (int)((s + (size_t)root) % 2),
                                 s % 3 == 2 && me % 2 == 1);
}

static int t_broadcast_local(int me, int n)
{
    size_t cap = MAX_LOCAL_SIZE + 16;
    uint8_t *work = aclshmem_malloc(cap), *src = malloc(cap), *dst = malloc(cap);
    ASSERT(work && src && dst);
    broadcasts_local(ACLSHMEM_TEAM_WORLD, work, src, dst);
    if (n >= 3) { /* the odd world PEs, or PEs 0 and 2 */
        aclshmem_team_t t = n >= 4 ? strided_team(1, 2, n / 2) : strided_team(0, 2, 2);
        if (t != ACLSHMEM_TEAM_INVALID) {
            broadcasts_local(t, work, src, dst);
            aclshmem_team_destroy(t);
        }
        aclshmem_barrier_all();
    }
    (void)me;
    aclshmem_free(work);
    free(dst);
    free(src);
    return 0;
}

/* ---- fcollect and collect ------------------------------------------------------------- */

static void fcollect_case(aclshmem_team_t team, uint8_t *src, uint8_t *dst, size_t len, int in_place)
{
    int me = aclshmem_team_my_pe(team), n = aclshmem_team_n_pes(team);
    uint8_t *mine = in_place ? dst + (size_t)me * len : src;
    memset(dst, 0xee, len * (size_t)n + 1);
    fill(mine, len, me);
    EXPECT_EQ(aclshmem_fcollectmem(team, dst, mine, len), ACLSHMEM_SUCCESS);
    for (int p = 0; p < n; p++)
        EXPECT_PATTERN(dst + (size_t)p * len, len, p, 0);
    EXPECT_EQ(dst[len * (size_t)n], 0xee);
    aclshmem_barrier(team);
}

/* PE p contributes count(p, len) bytes: different counts, one of them zero. */
static size_t collect_count(int p, size_t len)
{
    return p % 3 == 1 ? 0 : len + (size_t)p * 3;
}

static void collect_case(aclshmem_team_t team, uint8_t *src, uint8_t *dst, size_t len, int in_place)
{
    int me = aclshmem_team_my_pe(team), n = aclshmem_team_n_pes(team);
    size_t at = 0, total = 0;
    for (int p = 0; p < n; p++) {
        at += p < me ? collect_count(p, len) : 0;
        total += collect_count(p, len);
    }
    uint8_t *mine = in_place ? dst + at : src;
    memset(dst, 0xee, total + 1);
    fill(mine, collect_count(me, len), me);
    EXPECT_EQ(aclshmem_collectmem(team, dst, mine, collect_count(me, len)), ACLSHMEM_SUCCESS);
    at = 0;
    for (int p = 0; p < n; p++) {
        EXPECT_PATTERN(dst + at, collect_count(p, len), p, 0);
        at += collect_count(p, len);
    }
    EXPECT_EQ(dst[total], 0xee);
    aclshmem_barrier(team);
}

static void gathers(aclshmem_team_t team, const buffers_t *b)
{
    for (size_t s = 0; s < N_SIZES; s++) {
        fcollect_case(team, b->src, b->dst, sizes[s], (int)(s % 2));
        collect_case(team, b->src, b->dst, sizes[s], (int)((s + 1) % 2));
    }
}

static int t_gather(int me, int n)
{
    (void)me;
    buffers_t b = buffers_alloc(n);
    gathers(ACLSHMEM_TEAM_WORLD, &b);
    buffers_free(&b);
    return 0;
}

/* ---- alltoall and alltoalls ----------------------------------------------------------- */

static void alltoall_case(aclshmem_team_t team, uint8_t *src, uint8_t *dst, size_t len)
{
    int me = aclshmem_team_my_pe(team), n = aclshmem_team_n_pes(team);
    /* block j of my source, for PE j: the pattern of (me, j) */
    for (int j = 0; j < n; j++)
        fill(src + (size_t)j * len, len, me * 16 + j);
    memset(dst, 0xee, len * (size_t)n + 1);
    EXPECT_EQ(aclshmem_alltoallmem(team, dst, src, len), ACLSHMEM_SUCCESS);
    for (int p = 0; p < n; p++)
        EXPECT_PATTERN(dst + (size_t)p * len, len, p * 16 + me, 0);
    EXPECT_EQ(dst[len * (size_t)n], 0xee);
    aclshmem_barrier(team);
}

/* int32 elements with strides: element k of the block for PE j sits at src[(j*nelems+k)*sst]. */
static void alltoalls_case(aclshmem_team_t team, int32_t *src, int32_t *dst, size_t nelems, ptrdiff_t dstride,
                           ptrdiff_t sst)
{
    int me = aclshmem_team_my_pe(team), n = aclshmem_team_n_pes(team);
    size_t count = nelems * (size_t)n;
    for (size_t k = 0; k < count * (size_t)sst; k++)
        src[k] = -1;
    for (size_t k = 0; k < count; k++)
        src[k * (size_t)sst] = (int32_t)(me * 100000 + (int)k);
    for (size_t k = 0; k < count * (size_t)dstride; k++)
        dst[k] = -7;
    EXPECT_EQ(aclshmem_int32_alltoalls(team, dst, src, dstride, sst, nelems), ACLSHMEM_SUCCESS);
    for (int p = 0; p < n; p++)
        for (size_t k = 0; k < nelems; k++) {
            size_t at = ((size_t)p * nelems + k) * (size_t)dstride;
            EXPECT_EQ(dst[at], p * 100000 + (int)((size_t)me * nelems + k));
            for (ptrdiff_t gap = 1; gap < dstride; gap++)
                EXPECT_EQ(dst[at + (size_t)gap], -7); /* between the elements: untouched */
        }
    aclshmem_barrier(team);
}

static void alltoalls_all(aclshmem_team_t team, const buffers_t *b)
{
    static const size_t lens[] = {0, 1, 13, 4097, 50001};
    for (size_t s = 0; s < sizeof lens / sizeof lens[0]; s++)
        alltoall_case(team, b->src, b->dst, lens[s]);
    alltoalls_case(team, b->isrc, b->idst, 0, 1, 1);
    alltoalls_case(team, b->isrc, b->idst, 5, 1, 1);
    alltoalls_case(team, b->isrc, b->idst, 7, 2, 3);
    alltoalls_case(team, b->isrc, b->idst, 40, 3, 2);
}

static int t_alltoall(int me, int n)
{
    (void)me;
    buffers_t b = buffers_alloc(n);
    alltoalls_all(ACLSHMEM_TEAM_WORLD, &b);
    buffers_free(&b);
    return 0;
}

/* ---- sub-teams -------------------------------------------------------------------------- */

/* Two teams side by side (even and odd world PEs, stride 2), then one with a stride of 3 when
 * the job is large enough: the collectives of one team do not disturb the other's. */
static int t_subteams(int me, int n)
{
    if (n < 2)
        return 0;
    buffers_t b = buffers_alloc(n);
    int evens = (n + 1) / 2, odds = n / 2;
    aclshmem_team_t even = strided_team(0, 2, evens), odd = strided_team(1, 2, odds);
    aclshmem_team_t mine = me % 2 ? odd : even;
    ASSERT(mine != ACLSHMEM_TEAM_INVALID);
    broadcasts(mine, &b);
    gathers(mine, &b);
    alltoalls_all(mine, &b);
    aclshmem_barrier_all();
    aclshmem_team_destroy(even);
    aclshmem_team_destroy(odd);
    if (n >= 4) {
        aclshmem_team_t t = strided_team(1, 2, 2); /* PEs 1 and 3 */
        if (t != ACLSHMEM_TEAM_INVALID) {
            broadcasts(t, &b);
            gathers(t, &b);
            aclshmem_team_destroy(t);
        }
        aclshmem_barrier_all();
    }
    buffers_free(&b);
    return 0;
}

/* A team id is reused by the next team made after a destroy: its collectives start over
 * (the old team's count and records do not confuse the new one, which has other members). */
static int t_team_reuse(int me, int n)
{
    buffers_t b = buffers_alloc(n);
    for (int round = 0; round < 6; round++) {
        int stride = round % 2 + 1, size = (n - 1) / stride + 1;
        aclshmem_team_t t = strided_team(0, stride, size);
        if (t != ACLSHMEM_TEAM_INVALID) {
            for (int k = 0; k <= round; k++) /* a different number of collectives each time */
                fcollect_case(t, b.src, b.dst, 100 + (size_t)k, 0);
            aclshmem_team_destroy(t);
        }
        aclshmem_barrier_all();
    }
    buffers_free(&b);
    (void)me;
    return 0;
}

/* Two threads of each PE, each running collectives on its own team of the same PEs at the
 * same time: teams are independent (their records, counts and barriers). */
typedef struct {
    aclshmem_team_t team;
    int32_t *src, *dst;
    int failures;
} thread_job_t;

static void *collectives_thread(void *arg)
{
    thread_job_t *job = arg;
    int me = aclshmem_team_my_pe(job->team), n = aclshmem_team_n_pes(job->team);
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 64; i++)
            job->src[i] = me * 1000 + round + job->team;
        if (aclshmem_int32_sum_reduce(job->team, job->dst, job->src, 64) != ACLSHMEM_SUCCESS)
            job->failures++;
        for (int i = 0; i < 64; i++)
            if (job->dst[i] != 1000 * n * (n - 1) / 2 + n * (round + job->team)) {
                job->failures++;
                break;
            }
    }
    return NULL;
}

static int t_threads(int me, int n)
{
    (void)me;
    thread_job_t jobs[2];
    for (int k = 0; k < 2; k++) {
        jobs[k].team = strided_team(0, 1, n);
        jobs[k].src = aclshmem_malloc(64 * sizeof(int32_t));
        jobs[k].dst = aclshmem_malloc(64 * sizeof(int32_t));
        jobs[k].failures = 0;
        ASSERT(jobs[k].src && jobs[k].dst);
    }
    pthread_t threads[2];
    for (int k = 0; k < 2; k++)
        ASSERT_EQ(pthread_create(&threads[k], NULL, collectives_thread, &jobs[k]), 0);
    for (int k = 0; k < 2; k++)
        pthread_join(threads[k], NULL);
    for (int k = 0; k < 2; k++) {
        EXPECT_EQ(jobs[k].failures, 0);
        aclshmem_team_destroy(jobs[k].team);
        aclshmem_free(jobs[k].dst);
        aclshmem_free(jobs[k].src);
    }
    return 0;
}

/* ---- typed forms ----------------------------------------------------------------------- */

/* Every type of ACLSHMEM_COLL_TYPES through its typed calls, 3 elements a PE. */
#define TYPED_CASE(NAME, TYPE)                                                                     \
    static void typed_##NAME(int me, int n, uint8_t *src_bytes, uint8_t *dst_bytes)                \
    {                                                                                              \
        TYPE *src = (TYPE *)(void *)src_bytes, *dst = (TYPE *)(void *)dst_bytes;                   \
        size_t len = 3 * sizeof(TYPE);                                                             \
        fill(src_bytes, len * (size_t)n, me);                                                      \
        EXPECT_EQ(aclshmem_##NAME##_broadcast(ACLSHMEM_TEAM_WORLD, dst, src, 3, n - 1), 0);        \
        EXPECT_PATTERN(dst_bytes, len, n - 1, 0);                                                  \
        EXPECT_EQ(aclshmem_##NAME##_fcollect(ACLSHMEM_TEAM_WORLD, dst, src, 3), 0);                \
        for (int p = 0; p < n; p++)                                                                \
            EXPECT_PATTERN(dst_bytes + (size_t)p * len, len, p, 0);                                \
        EXPECT_EQ(aclshmem_##NAME##_collect(ACLSHMEM_TEAM_WORLD, dst, src, 3), 0);                 \
        for (int p = 0; p < n; p++)                                                                \
            EXPECT_PATTERN(dst_bytes + (size_t)p * len, len, p, 0);                                \
        EXPECT_EQ(aclshmem_##NAME##_alltoall(ACLSHMEM_TEAM_WORLD, dst, src, 3), 0);                \
        for (int p = 0; p < n; p++)                                                                \
            EXPECT_PATTERN(dst_bytes + (size_t)p * len, len, p, (size_t)me * len);                 \
        EXPECT_EQ(aclshmem_##NAME##_alltoalls(ACLSHMEM_TEAM_WORLD, dst, src, 1, 1, 3), 0);         \
        for (int p = 0; p < n; p++)                                                                \
            EXPECT_PATTERN(dst_bytes + (size_t)p * len, len, p, (size_t)me * len);                 \
        aclshmem_barrier_all();                                                                    \
    }
ACLSHMEM_COLL_TYPES(TYPED_CASE)

static int t_typed(int me, int n)
{
    uint8_t *src = aclshmem_malloc(64 * 16), *dst = aclshmem_malloc(64 * 16);
    ASSERT(src && dst);
#define RUN_TYPED(NAME, TYPE) typed_##NAME(me, n, src, dst);
    ACLSHMEM_COLL_TYPES(RUN_TYPED)
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* ---- streams ----------------------------------------------------------------------------- */

static int t_on_stream(int me, int n)
{
    aclrtStream stream = NULL;
    ASSERT_EQ(aclshmemx_stream_create(&stream), ACLSHMEM_SUCCESS);
    size_t len = 4099;
    uint8_t *src = aclshmem_malloc(len * (size_t)n), *dst = aclshmem_malloc(len * (size_t)n);
    ASSERT(src && dst);
    fill(src, len, me);
    /* Enqueued one after the other: the broadcast overwrites dst only after the fcollect. */
    EXPECT_EQ(aclshmemx_fcollectmem_on_stream(ACLSHMEM_TEAM_WORLD, dst, src, len, stream), 0);
    EXPECT_EQ(aclshmemx_uint8_broadcast_on_stream(ACLSHMEM_TEAM_WORLD, dst + len, src, len, 0, stream), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(stream), ACLSHMEM_SUCCESS);
    EXPECT_PATTERN(dst, len, 0, 0);
    EXPECT_PATTERN(dst + len, len, 0, 0);
    for (int p = 2; p < n; p++)
        EXPECT_PATTERN(dst + (size_t)p * len, len, p, 0);
    /* The default stream (NULL), and alltoall through it. */
    for (int j = 0; j < n; j++)
        fill(src + (size_t)j * 5, 5, me * 16 + j);
    EXPECT_EQ(aclshmemx_alltoallmem_on_stream(ACLSHMEM_TEAM_WORLD, dst, src, 5, NULL), 0);
    EXPECT_EQ(aclshmemx_stream_synchronize(NULL), ACLSHMEM_SUCCESS);
    for (int p = 0; p < n; p++)
        EXPECT_PATTERN(dst + (size_t)p * 5, 5, p * 16 + me, 0);
    /* A bad argument on one PE: its call says so at once, and the stream of every PE fails. */
    aclshmem_barrier_all();
    uint8_t local[8];
    void *bad_dst = me == n - 1 ? (void *)local : (void *)dst;
    harness_mark_error();
    int rc = aclshmemx_broadcastmem_on_stream(ACLSHMEM_TEAM_WORLD, bad_dst, src, sizeof local, 0, stream);
    if (me == n - 1) {
        EXPECT_EQ(rc, ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_CONTAINS("not symmetric");
    } else {
        EXPECT_EQ(rc, ACLSHMEM_SUCCESS);
    }
    EXPECT_NE(aclshmemx_stream_synchronize(stream), ACLSHMEM_SUCCESS);
    /* A missing team: refused at the call, nothing enqueued. */
    EXPECT_EQ(aclshmemx_fcollectmem_on_stream(77, dst, src, 1, stream), ACLSHMEM_INVALID_PARAM);
    aclshmem_barrier_all();
    EXPECT_EQ(aclshmemx_stream_destroy(stream), ACLSHMEM_SUCCESS);
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* A host collective comes after the work enqueued on the default stream before it (as the
 * host barrier does): a kernel that fills the source late is done before fcollect reads it. */
typedef struct {
    uint8_t *buf;
    size_t len;
    int from;
} late_fill_t;

static void late_fill(uint32_t block, uint32_t blocks, void *arg)
{
    (void)block, (void)blocks;
    late_fill_t *a = arg;
    harness_sleep_ms(50);
    fill(a->buf, a->len, a->from);
}

static int t_after_default_stream(int me, int n)
{
    size_t len = 1000;
    uint8_t *src = aclshmem_malloc(len), *dst = aclshmem_malloc(len * (size_t)n);
    ASSERT(src && dst);
    memset(src, 0, len);
    aclshmem_barrier_all();
    late_fill_t arg = {src, len, me};
    ASSERT_EQ(aclshmemx_kernel_launch(NULL, late_fill, 1, &arg), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, dst, src, len), ACLSHMEM_SUCCESS);
    for (int p = 0; p < n; p++)
        EXPECT_PATTERN(dst + (size_t)p * len, len, p, 0);
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* ---- rounds ----------------------------------------------------------------------------- */

/* Back-to-back collectives whose data changes every round, at sizes that travel in the
 * records (8 B), beside them in the control segment (up to 512 B per PE in a pair, 2 KiB in
 * larger teams) and the general way: each round reads that round's data, never an earlier
 * one's left where it travels. */
static uint8_t round_byte(int from, int round, size_t k)
{
    return (uint8_t)(from * 29 + round * 7 + (int)(k % 13));
}

static void rounds_of(aclshmem_team_t team, uint8_t *src, uint8_t *dst, size_t len, int me, int n)
{
    for (int round = 0; round < 6; round++) {
        for (size_t k = 0; k < len; k++)
            src[k] = round_byte(me, round, k);
        EXPECT_EQ(aclshmem_fcollectmem(team, dst, src, len), ACLSHMEM_SUCCESS);
        for (size_t k = 0; k < len * (size_t)n; k++)
            if (dst[k] != round_byte((int)(k / len), round, k % len)) {
                harness_report(__FILE__, __LINE__, "fcollect of %zu B, round %d: byte %zu", len, round, k);
                break;
            }
        int root = round % n;
        EXPECT_EQ(aclshmem_broadcastmem(team, dst, src, len, root), ACLSHMEM_SUCCESS);
        for (size_t k = 0; k < len; k++)
            if (dst[k] != round_byte(root, round, k)) {
                harness_report(__FILE__, __LINE__, "broadcast of %zu B, round %d: byte %zu", len, round, k);
                break;
            }
        size_t block = len / (size_t)n;
        for (size_t k = 0; block && k < block * (size_t)n; k++) /* block j of src: for PE j */
            src[k] = round_byte(me * n + (int)(k / block), round, k % block);
        EXPECT_EQ(aclshmem_alltoallmem(team, dst, src, block), ACLSHMEM_SUCCESS);
        for (size_t k = 0; block && k < block * (size_t)n; k++)
            if (dst[k] != round_byte((int)(k / block) * n + me, round, k % block)) {
                harness_report(__FILE__, __LINE__, "alltoall of %zu B blocks, round %d: byte %zu", block, round, k);
                break;
            }
    }
}

static int t_rounds(int me, int n)
{
    static const size_t lens[] = {8, 200, 512, 513, 1000, 2048, 2049, 5000};
    uint8_t *src = aclshmem_malloc(5000), *dst = aclshmem_malloc(5000 * (size_t)n);
    ASSERT(src && dst);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
        rounds_of(ACLSHMEM_TEAM_WORLD, src, dst, lens[i], me, n);
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* ---- the exchange ----------------------------------------------------------------------- */

static int t_exchange(int me, int n)
{
    int64_t mine[2] = {1000 + me, -me}, all[2 * 16];
    memset(all, 0, sizeof all);
    EXPECT_EQ(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, mine, sizeof mine, all), ACLSHMEM_SUCCESS);
    for (int p = 0; p < n; p++) {
        EXPECT_EQ(all[2 * p], 1000 + p);
        EXPECT_EQ(all[2 * p + 1], -p);
    }
    /* Many rounds in a row: a record is never read after it was overwritten. */
    for (int round = 0; round < 200; round++) {
        int32_t v = round * 16 + me, got[16];
        ASSERT_EQ(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, &v, sizeof v, got), ACLSHMEM_SUCCESS);
        for (int p = 0; p < n; p++)
            if (got[p] != round * 16 + p) {
                harness_report(__FILE__, __LINE__, "round %d: PE %d sent %d", round, p, got[p]);
                return 1;
            }
    }
    EXPECT_EQ(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, NULL, 0, NULL), ACLSHMEM_SUCCESS);
    /* Sizes that differ, and one that is too large: every PE fails. */
    uint8_t big[ACLSHMEMX_TEAM_EXCHANGE_MAX + 1] = {0}, out[(ACLSHMEMX_TEAM_EXCHANGE_MAX + 1) * 16];
    if (n > 1) {
        harness_mark_error();
        EXPECT_EQ(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, big, me == 0 ? 4 : 8, out), ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_CONTAINS("different calls");
    }
    harness_mark_error();
    EXPECT_EQ(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, big, me == 0 ? sizeof big : 4, out),
              ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS(me == 0 ? "ACLSHMEMX_TEAM_EXCHANGE_MAX" : "failed on PE 0");
    /* The team still works. */
    EXPECT_EQ(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, mine, sizeof mine, all), ACLSHMEM_SUCCESS);
    EXPECT_EQ(all[0], 1000);
    return 0;
}

/* ---- calls that do not match ---------------------------------------------------------- */

/* rc on every PE is INVALID_PARAM with a message containing text; dst is untouched. */
#define EXPECT_ALL_FAIL(call, text, dst, len)                                                   \
    do {                                                                                        \
        memset((dst), 0x5c, (len));                                                             \
        aclshmem_barrier_all();                                                                 \
        harness_mark_error();                                                                   \
        EXPECT_EQ((call), ACLSHMEM_INVALID_PARAM);                                              \
        EXPECT_ERROR_SET();                                                                     \
        EXPECT_ERROR_CONTAINS(text);                                                            \
        for (size_t k_ = 0; k_ < (size_t)(len); k_++)                                           \
            if ((dst)[k_] != 0x5c) {                                                            \
                harness_report(__FILE__, __LINE__, "byte %zu of dest was written", k_);         \
                break;                                                                          \
            }                                                                                   \
    } while (0)

static int t_mismatch(int me, int n)
{
    size_t cap = 4096 * (size_t)n;
    uint8_t *src = aclshmem_malloc(cap), *dst = aclshmem_malloc(cap);
    int32_t *isrc = aclshmem_malloc(cap), *idst = aclshmem_malloc(cap);
    ASSERT(src && dst && isrc && idst);
    int last = n - 1;
    char text[64];
    snprintf(text, sizeof text, "PE %d", me == 0 ? last : 0); /* a PE that differs from this one */
    /* another size */
    EXPECT_ALL_FAIL(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, me == last ? 17 : 16, 0), "different calls",
                    dst, 32);
    EXPECT_ERROR_CONTAINS(text);
    /* another root */
    EXPECT_ALL_FAIL(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, 16, me == last ? 1 % n : 0), "from team PE",
                    dst, 32);
    /* another type, with the same bytes */
    EXPECT_ALL_FAIL(me == last ? aclshmem_int32_fcollect(ACLSHMEM_TEAM_WORLD, (int32_t *)(void *)dst,
                                                         (int32_t *)(void *)src, 4)
                               : aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, dst, src, 16),
                    "int32", dst, 16 * (size_t)n);
    /* another operation */
    EXPECT_ALL_FAIL(me == last ? aclshmem_int32_max_reduce(ACLSHMEM_TEAM_WORLD, idst, isrc, 8)
                               : aclshmem_int32_sum_reduce(ACLSHMEM_TEAM_WORLD, idst, isrc, 8),
                    "max reduction", (uint8_t *)idst, 32);
    /* another collective */
    EXPECT_ALL_FAIL(me == last ? aclshmem_alltoallmem(ACLSHMEM_TEAM_WORLD, dst, src, 8)
                               : aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, dst, src, 8),
                    "different calls", dst, 8 * (size_t)n);
    /* other strides */
    EXPECT_ALL_FAIL(aclshmem_int32_alltoalls(ACLSHMEM_TEAM_WORLD, idst, isrc, me == last ? 2 : 1, 1, 4), "stride",
                    (uint8_t *)idst, 16 * (size_t)n);
    /* a bad argument on one PE: non-symmetric dest, a root out of range, overlap */
    uint8_t local[64];
    EXPECT_ALL_FAIL(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, me == last ? local : dst, src, 4),
                    me == last ? "not symmetric" : "failed on PE", dst, 4 * (size_t)n);
    EXPECT_ALL_FAIL(aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, 4, me == last ? n : 0),
                    me == last ? "not a PE of team" : "failed on PE", dst, 4);
    EXPECT_ALL_FAIL(aclshmem_alltoallmem(ACLSHMEM_TEAM_WORLD, dst, me == last ? dst + 1 : src, 4),
                    me == last ? "overlap" : "failed on PE", dst, 4 * (size_t)n);
    EXPECT_ALL_FAIL(aclshmem_int32_sum_reduce(ACLSHMEM_TEAM_WORLD, idst, me == last ? idst + 1 : isrc, 8),
                    me == last ? "overlap" : "failed on PE", (uint8_t *)idst, 32);
    /* broadcast_local: work not symmetric, work over dest, no dest, no source on the root */
    uint8_t mine[64];
    EXPECT_ALL_FAIL(aclshmemx_broadcastmem_local(ACLSHMEM_TEAM_WORLD, mine, src, me == last ? local : dst, 16, 0),
                    me == last ? "work [" : "failed on PE", mine, 16);
    EXPECT_ALL_FAIL(aclshmemx_broadcastmem_local(ACLSHMEM_TEAM_WORLD, me == last ? dst + 8 : mine, src, dst, 16, 0),
                    me == last ? "overlaps dest" : "failed on PE", mine, 16);
    EXPECT_ALL_FAIL(aclshmemx_broadcastmem_local(ACLSHMEM_TEAM_WORLD, me == last ? NULL : mine, src, dst, 16, 0),
                    me == last ? "dest is NULL" : "failed on PE", mine, 16);
    EXPECT_ALL_FAIL(aclshmemx_broadcastmem_local(ACLSHMEM_TEAM_WORLD, mine, NULL, dst, 16, last),
                    me == last ? "source is NULL" : "failed on PE", mine, 16);
    EXPECT_ALL_FAIL(aclshmemx_broadcastmem_local(ACLSHMEM_TEAM_WORLD, mine, src, dst, 16, me == last ? 0 : n),
                    me == last ? "failed on PE" : "not a PE of team", mine, 16);
    /* alltoalls strides below 1 */
    EXPECT_ALL_FAIL(aclshmem_int32_alltoalls(ACLSHMEM_TEAM_WORLD, idst, isrc, 1, me == last ? 0 : 1, 4),
                    me == last ? "must be >= 1" : "failed on PE", (uint8_t *)idst, 16 * (size_t)n);
    /* A barrier where the other PE calls a collective, on a team of two (whose collectives
     * exchange their records without a barrier): the collective fails, the barrier returns. */
    aclshmem_team_t pair = strided_team(0, 1, 2);
    if (me < 2) {
        memset(dst, 0x5c, 32);
        harness_mark_error();
        if (me == 0)
            EXPECT_EQ(aclshmem_fcollectmem(pair, dst, src, 16), ACLSHMEM_INVALID_PARAM);
        else
            aclshmem_barrier(pair);
        if (me == 0)
            EXPECT_ERROR_CONTAINS("entered a barrier of the team");
        EXPECT_EQ(dst[0], 0x5c);
        fill(src, 16, me);
        EXPECT_EQ(aclshmem_fcollectmem(pair, dst, src, 16), ACLSHMEM_SUCCESS); /* and the pair goes on */
        for (int p = 0; p < 2; p++)
            EXPECT_PATTERN(dst + (size_t)p * 16, 16, p, 0);
        aclshmem_team_destroy(pair);
    }
    /* The same on the world team (whose members all share this node, up to 4 of them):
     * the last PE calls the barrier, every other PE's collective fails. */
    memset(dst, 0x5c, 16 * (size_t)n);
    harness_mark_error();
    if (me == last) {
        aclshmem_barrier_all();
    } else {
        EXPECT_EQ(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, dst, src, 16), ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_CONTAINS("entered a barrier of the team");
    }
    EXPECT_EQ(dst[0], 0x5c);
    /* After all that, the team works. */
    aclshmem_barrier_all();
    fill(src, 16, me);
    EXPECT_EQ(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, dst, src, 16), ACLSHMEM_SUCCESS);
    for (int p = 0; p < n; p++)
        EXPECT_PATTERN(dst + (size_t)p * 16, 16, p, 0);
    aclshmem_barrier_all();
    aclshmem_free(idst);
    aclshmem_free(isrc);
    aclshmem_free(dst);
    aclshmem_free(src);
    return 0;
}

/* What one PE alone can get wrong, refused before it takes part: no such team. */
static int t_bad_team(int me, int n)
{
    (void)me, (void)n;
    uint8_t *buf = aclshmem_malloc(64);
    ASSERT_NOT_NULL(buf);
    static const aclshmem_team_t bad[] = {ACLSHMEM_TEAM_INVALID, 77, 2048, -5};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        harness_mark_error();
        EXPECT_EQ(aclshmem_broadcastmem(bad[i], buf, buf, 4, 0), ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_CONTAINS("does not exist");
    }
    aclshmem_free(buf);
    return 0;
}

static int t_not_initialized(int me, int n)
{
    (void)me, (void)n;
    uint8_t a[4], b[4 * 16];
    harness_mark_error();
    EXPECT_EQ(aclshmem_fcollectmem(ACLSHMEM_TEAM_WORLD, b, a, 4), ACLSHMEM_NOT_INITED);
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, a, 4, b), ACLSHMEM_NOT_INITED);
    return 0;
}

static const harness_case cases[] = {
    {"broadcast", t_broadcast, {0}, {1, 2, 3, 4}},
    {"broadcast_local", t_broadcast_local, {0}, {1, 2, 3, 4}},
    {"gather", t_gather, {0}, {1, 2, 3, 4}},
    {"alltoall", t_alltoall, {0}, {1, 2, 3, 4}},
    {"subteams", t_subteams, {0}, {2, 3, 4}},
    {"team_reuse", t_team_reuse, {0}, {2, 3, 4}},
    {"rounds", t_rounds, {0}, {1, 2, 3, 4}},
    {"threads", t_threads, {0}, {2, 3}},
    {"typed", t_typed, {0}, {2, 3}},
    {"on_stream", t_on_stream, {0}, {2, 3}},
    {"after_default_stream", t_after_default_stream, {0}, {2, 3}},
    {"exchange", t_exchange, {0}, {1, 2, 3, 4}},
    {"mismatch", t_mismatch, {0}, {2, 3, 4}},
    {"bad_team", t_bad_team, {0}, {2}},
    {"not_initialized", t_not_initialized, {.no_init = 1, .no_uid = 1}, {1}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
