/*
 * test_instance.c - several instances in the same processes: independent heaps and data,
 * switching (aclshmemx_instance_ctx_get / _set), finalize of the active and of a non-active
 * instance, ids out of range, re-init of a live id, the world-only team rules of nonzero
 * instances, and DEFAULT-mode instances that take their port from SHMEM_INSTANCE_PORT_RANGE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024ULL * 1024)

/* ---- helpers -------------------------------------------------------------------- */

/* Shares a fresh unique ID (PE 0 makes it) and initialises instance id with it. */
static int init_instance(uint64_t id, aclshmemx_uniqueid_t *uid)
{
    int rc = harness_share_uid(uid);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    rc = harness_make_attr(harness_my_pe, harness_n_pes, uid, &attr);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;
    attr.instance_id = id;
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
}

static uint64_t active_id(void)
{
    aclshmem_instance_ctx *ctx = aclshmemx_instance_ctx_get();
    return ctx ? ctx->id : (uint64_t)-1;
}

/* Offset of p inside the active instance's device heap. */
static size_t heap_offset(const void *p)
{
    const char *base = aclshmemx_get_heap_base(DEVICE_SIDE);
    return (size_t)((const char *)p - base);
}

/* Log lines of WARN and above, collected through the extern logger. */
static char g_log[8192];
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;

static void capture_log(int level, const char *msg)
{
    if (level < 2 || !msg)
        return;
    pthread_mutex_lock(&g_log_lock);
    size_t used = strlen(g_log);
    snprintf(g_log + used, sizeof g_log - used, "%d:%s\n", level, msg);
    pthread_mutex_unlock(&g_log_lock);
}

/* ---- two instances, side by side -------------------------------------------------- */

static void check_world_only(int me, int n)
{
    /* Nonzero instances keep the world team only: no split, no translate, no configs. */
    aclshmem_team_t t = 123;
    harness_mark_error();
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_NOT_SUPPORTED);
    EXPECT_EQ(t, ACLSHMEM_TEAM_INVALID);
    EXPECT_ERROR_SET();
    aclshmem_team_t x = 5, y = 6;
    EXPECT_EQ(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, &x, &y), ACLSHMEM_NOT_SUPPORTED);
    EXPECT_EQ(x, ACLSHMEM_TEAM_INVALID);
    EXPECT_EQ(y, ACLSHMEM_TEAM_INVALID);
    harness_mark_error();
    EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 0, ACLSHMEM_TEAM_WORLD), -1);
    EXPECT_ERROR_SET();
    aclshmem_team_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    harness_mark_error();
    EXPECT_EQ(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, &cfg), ACLSHMEM_NOT_SUPPORTED);
    EXPECT_ERROR_SET();
    /* The world team is there and right; nothing else is. */
    EXPECT_EQ(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD), n);
    EXPECT_EQ(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD), me);
    EXPECT_EQ(aclshmem_team_n_pes(1), -1);
    EXPECT_EQ(aclshmem_team_my_pe(1), -1);
    EXPECT_EQ(aclshmem_my_pe(), me);
    EXPECT_EQ(aclshmem_n_pes(), n);
}

static void check_team_zero(int me, int n)
{
    /* Instance 0 still has all team functions. */
    EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, n - 1, ACLSHMEM_TEAM_WORLD), n - 1);
    aclshmem_team_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    EXPECT_EQ(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, &cfg), ACLSHMEM_SUCCESS);
    aclshmem_team_t t = ACLSHMEM_TEAM_INVALID;
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_SUCCESS);
    EXPECT_NE(t, ACLSHMEM_TEAM_INVALID);
    EXPECT_EQ(aclshmem_team_my_pe(t), me);
    if (t != ACLSHMEM_TEAM_INVALID)
        aclshmem_team_destroy(t);
}

static int t_two_instances(int me, int n)
{
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    aclshmemx_uniqueid_t uid0, uid3;
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    ASSERT_EQ(init_instance(0, &uid0), ACLSHMEM_SUCCESS);
    ASSERT_EQ(active_id(), 0);
    void *inst0 = aclshmemx_instance_ctx_get()->instance;
    EXPECT_NOT_NULL(inst0);
    ASSERT_EQ(init_instance(3, &uid3), ACLSHMEM_SUCCESS);
    /* A later nonzero instance does not take over: instance 0 stays active. */
    EXPECT_EQ(active_id(), 0);

    /* Heaps of the two instances are distinct. */
    char *base0 = aclshmemx_get_heap_base(DEVICE_SIDE);
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    ASSERT_EQ(active_id(), 3);
    EXPECT(aclshmemx_instance_ctx_get()->instance != inst0);
    char *base3 = aclshmemx_get_heap_base(DEVICE_SIDE);
    ASSERT_NOT_NULL(base0);
    ASSERT_NOT_NULL(base3);
    EXPECT(base0 != base3);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    check_world_only(me, n);

    /* Allocations: the first one of each instance lands at the same offset, and a lot of
     * allocation on instance 3 does not move what instance 0 hands out next. */
    int64_t *q = aclshmem_calloc(64, sizeof(int64_t)); /* instance 3 */
    ASSERT_NOT_NULL(q);
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    int64_t *p = aclshmem_calloc(64, sizeof(int64_t)); /* instance 0 */
    ASSERT_NOT_NULL(p);
    EXPECT(p != q);
    EXPECT(aclshmemx_get_heap_base(DEVICE_SIDE) == base0);
    EXPECT((char *)p >= base0 && (char *)p < base0 + HARNESS_DEFAULT_HEAP);
    EXPECT((char *)q >= base3 && (char *)q < base3 + HARNESS_DEFAULT_HEAP);
    size_t off_p = heap_offset(p);
    EXPECT_EQ(off_p, (size_t)((char *)q - base3));

    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    void *big1 = aclshmem_malloc(4 * MiB);
    void *big2 = aclshmem_malloc(4 * MiB);
    EXPECT_NOT_NULL(big1);
    EXPECT_NOT_NULL(big2);
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    int64_t *p2 = aclshmem_malloc(64);
    ASSERT_NOT_NULL(p2);
    EXPECT_GT(heap_offset(p2), off_p);
    EXPECT_LT(heap_offset(p2), off_p + 1 * MiB); /* not pushed up by instance 3's 8 MiB */
    aclshmem_free(p2);

    /* Data: each instance's puts land in that instance's heap only. */
    int64_t v0 = 1000 + me, v3 = 3000 + me;
    aclshmem_putmem(&p[1], &v0, sizeof v0, peer); /* instance 0 */
    aclshmem_barrier_all();
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    aclshmem_putmem(&q[2], &v3, sizeof v3, peer); /* instance 3 */
    aclshmem_barrier_all();
    EXPECT_EQ(q[2], 3000 + from);
    EXPECT_EQ(q[1], 0);
    EXPECT_EQ(p[1], 1000 + from);
    EXPECT_EQ(p[2], 0);
    /* get through instance 3 reads instance 3's heap of the peer */
    int64_t got = -1;
    aclshmem_getmem(&got, &q[2], sizeof got, peer);
    EXPECT_EQ(got, 3000 + me);

    /* An address of instance 0's heap is foreign to instance 3: refused, nothing written. */
    harness_mark_error();
    int64_t bad = 77;
    aclshmem_putmem(&p[3], &bad, sizeof bad, peer);
    EXPECT_ERROR_SET();
    aclshmem_barrier_all();
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    aclshmem_barrier_all();
    EXPECT_EQ(p[3], 0);
    check_team_zero(me, n);

    /* A stream belongs to the instance that was active when it was made: its kernels act
     * on that instance even after the process switched. */
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    aclrtStream s3 = NULL;
    EXPECT_EQ(aclshmemx_stream_create(&s3), ACLSHMEM_SUCCESS);
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    if (s3) {
        /* Checked against the stream's instance: its own address is fine ... */
        int64_t v = 5000 + me;
        harness_mark_error();
        aclshmemx_putmem_on_stream(&q[4], &v, sizeof v, peer, s3);
        HARNESS_CHECK_(!harness_error_since_mark(), 0,
                       "putmem_on_stream of an instance-3 address on instance 3's stream was refused");
        EXPECT_EQ(aclshmemx_stream_synchronize(s3), ACLSHMEM_SUCCESS);
        /* ... and an address of instance 0 (the active one) is refused at the call, with
         * nothing enqueued (stream.h: bad input fails at the call). */
        harness_mark_error();
        aclshmemx_putmem_on_stream(&p[5], &v, sizeof v, peer, s3);
        HARNESS_CHECK_(harness_error_since_mark(), 0,
                       "putmem_on_stream of an instance-0 address on instance 3's stream was accepted");
        int rc = aclshmemx_stream_synchronize(s3);
        HARNESS_CHECK_(rc == ACLSHMEM_SUCCESS, 0,
                       "an instance-0 address reached instance 3's stream: synchronize returned %d", rc);
        EXPECT_EQ(aclshmemx_stream_destroy(s3), ACLSHMEM_SUCCESS);
    }
    EXPECT_EQ(active_id(), 0);
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    aclshmem_barrier_all();
    EXPECT_EQ(q[4], 5000 + from);
    aclshmem_free(big2);
    aclshmem_free(big1);
    aclshmem_free(q);
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    aclshmem_free(p);

    /* Finalize of the non-active instance: instance 0 stays active and works. */
    EXPECT_EQ(aclshmemx_finalize(3), ACLSHMEM_SUCCESS);
    EXPECT_EQ(active_id(), 0);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    EXPECT_EQ(active_id(), 0);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmemx_finalize(0), ACLSHMEM_SUCCESS);
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    return 0;
}

/* ---- finalize of the active instance and the fall-back to 0 ---------------------- */

static int t_finalize_active(int me, int n)
{
    aclshmemx_uniqueid_t uid0, uid3, uid3b;
    ASSERT_EQ(init_instance(0, &uid0), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_instance(3, &uid3), ACLSHMEM_SUCCESS);
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    /* Finalizing the active instance falls back to instance 0. */
    EXPECT_EQ(aclshmemx_finalize(3), ACLSHMEM_SUCCESS);
    EXPECT_EQ(active_id(), 0);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    harness_ring_check(me, n);

    /* The id can be used again after its finalize. */
    ASSERT_EQ(init_instance(3, &uid3b), ACLSHMEM_SUCCESS);
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    /* Finalize of a non-active instance 0 keeps 3 active. */
    EXPECT_EQ(aclshmemx_finalize(0), ACLSHMEM_SUCCESS);
    EXPECT_EQ(active_id(), 3);
    harness_ring_check(me, n);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    EXPECT_EQ(active_id(), 3);
    /* aclshmem_finalize ends the active one; nothing is left to fall back to. */
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    harness_mark_error();
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_NOT_INITED);
    EXPECT_ERROR_SET();
    return 0;
}

/* ---- a nonzero instance alone --------------------------------------------------------- */

static int t_nonzero_alone(int me, int n)
{
    aclshmemx_uniqueid_t uid;
    ASSERT_EQ(init_instance(7, &uid), ACLSHMEM_SUCCESS);
    /* With nothing else alive it is the active instance. */
    EXPECT_EQ(active_id(), 7);
    harness_ring_check(me, n);
    check_world_only(me, n);
    EXPECT_EQ(aclshmemx_finalize(7), ACLSHMEM_SUCCESS);
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    /* The highest id works too. */
    ASSERT_EQ(init_instance(254, &uid), ACLSHMEM_SUCCESS);
    EXPECT_EQ(active_id(), 254);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmemx_finalize(254), ACLSHMEM_SUCCESS);
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    return 0;
}

/* ---- bad ids, repeated init ------------------------------------------------------------- */

static int t_bad_ids(int me, int n)
{
    (void)me;
    (void)n;
    /* Before any init. */
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    harness_mark_error();
    EXPECT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_instance_ctx_set(255), ACLSHMEM_INVALID_VALUE);
    EXPECT_EQ(aclshmemx_finalize(0), ACLSHMEM_INVALID_VALUE);
    EXPECT_EQ(aclshmemx_finalize(5), ACLSHMEM_INVALID_VALUE);

    aclshmemx_uniqueid_t uid0, uid3;
    ASSERT_EQ(init_instance(0, &uid0), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_instance(3, &uid3), ACLSHMEM_SUCCESS);

    /* Ids out of range. */
    static const uint64_t out_of_range[] = { 255, 256, 1000, UINT64_MAX };
    for (size_t i = 0; i < sizeof out_of_range / sizeof out_of_range[0]; i++) {
        harness_mark_error();
        EXPECT_EQ(aclshmemx_instance_ctx_set(out_of_range[i]), ACLSHMEM_INVALID_VALUE);
        EXPECT_ERROR_SET();
        harness_mark_error();
        EXPECT_EQ(aclshmemx_finalize(out_of_range[i]), ACLSHMEM_INVALID_VALUE);
        EXPECT_ERROR_SET();
        EXPECT_EQ(active_id(), 0);
    }
    /* Ids in range that were never initialised. */
    harness_mark_error();
    EXPECT_EQ(aclshmemx_instance_ctx_set(4), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_EQ(aclshmemx_finalize(4), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_finalize(254), ACLSHMEM_INVALID_VALUE);
    EXPECT_EQ(active_id(), 0);

    /* init with an id out of range. */
    aclshmemx_uniqueid_t uid_bad;
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(harness_share_uid(&uid_bad), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_make_attr(me, n, &uid_bad, &attr), ACLSHMEM_SUCCESS);
    attr.instance_id = 255;
    harness_mark_error();
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    attr.instance_id = UINT64_MAX;
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_INVALID_VALUE);
    EXPECT_EQ(active_id(), 0);
    /* A failing init of a new id (a damaged unique ID) leaves no instance behind. */
    aclshmemx_uniqueid_t damaged = uid_bad;
    damaged.version = 12345;
    attr.comm_args = &damaged;
    attr.instance_id = 6;
    harness_mark_error();
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_instance_ctx_set(6), ACLSHMEM_INVALID_VALUE);
    EXPECT_EQ(active_id(), 0);

    /* init of a live nonzero id: SUCCESS with a warning, and nothing changes. */
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    void *inst3 = aclshmemx_instance_ctx_get()->instance;
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    g_log[0] = '\0';
    EXPECT_EQ(aclshmemx_set_extern_logger(capture_log), 0);
    EXPECT_EQ(aclshmemx_set_log_level(2), 0);
    aclshmemx_init_attr_t again = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(harness_make_attr(me, n, &uid3, &again), ACLSHMEM_SUCCESS);
    again.instance_id = 3;
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &again), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_set_log_level(3), 0);
    EXPECT_EQ(aclshmemx_set_extern_logger(NULL), 0);
    pthread_mutex_lock(&g_log_lock);
    HARNESS_CHECK_(harness_contains(g_log, "instance 3") && harness_contains(g_log, "already"), 0,
                   "a warning about instance 3 being initialised already was expected; log: \"%s\"", g_log);
    pthread_mutex_unlock(&g_log_lock);
    EXPECT_EQ(active_id(), 0);
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    EXPECT(aclshmemx_instance_ctx_get()->instance == inst3);
    harness_ring_check(me, n);

    /* init of a live instance 0: an error (do not init twice), instance 0 unharmed. */
    aclshmemx_init_attr_t zero = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(harness_make_attr(me, n, &uid0, &zero), ACLSHMEM_SUCCESS);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &zero), ACLSHMEM_INNER_ERROR);
    EXPECT_ERROR_SET();
    EXPECT_EQ(active_id(), 3);
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);

    EXPECT_EQ(aclshmemx_finalize(3), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_finalize(0), ACLSHMEM_SUCCESS);
    /* Finalized ids are gone. */
    EXPECT_EQ(aclshmemx_finalize(0), ACLSHMEM_INVALID_VALUE);
    EXPECT_EQ(aclshmemx_finalize(3), ACLSHMEM_INVALID_VALUE);
    return 0;
}

/* ---- the active instance is per process ------------------------------------------------ */

static void *switch_to_3(void *arg)
{
    int *rc = arg;
    *rc = aclshmemx_instance_ctx_set(3);
    return NULL;
}

static int t_per_process(int me, int n)
{
    aclshmemx_uniqueid_t uid0, uid3;
    ASSERT_EQ(init_instance(0, &uid0), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_instance(3, &uid3), ACLSHMEM_SUCCESS);
    EXPECT_EQ(active_id(), 0);
    pthread_t th;
    int rc = -999;
    ASSERT_EQ(pthread_create(&th, NULL, switch_to_3, &rc), 0);
    pthread_join(th, NULL);
    EXPECT_EQ(rc, ACLSHMEM_SUCCESS);
    /* Documented: switching from one thread switches the process. */
    EXPECT_EQ(active_id(), 3);
    harness_ring_check(me, n);
    /* aclshmem_finalize ends the active instance (3) and falls back to 0. */
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    EXPECT_EQ(active_id(), 0);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    return 0;
}

/* ---- instances of different sizes: a 2-PE job and a 1-PE job per process --------------- */

static int t_different_sizes(int me, int n)
{
    aclshmemx_uniqueid_t uid0;
    ASSERT_EQ(init_instance(0, &uid0), ACLSHMEM_SUCCESS);
    /* Each process alone forms instance 5 with an ID of its own. */
    aclshmemx_uniqueid_t solo = ACLSHMEM_UNIQUEID_INITIALIZER;
    ASSERT_EQ(aclshmemx_get_uniqueid(&solo), ACLSHMEM_SUCCESS);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(aclshmemx_set_attr_uniqueid_args(0, 1, 16 * MiB, &solo, &attr), ACLSHMEM_SUCCESS);
    attr.instance_id = 5;
    ASSERT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_SUCCESS);
    ASSERT_EQ(aclshmemx_instance_ctx_set(5), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_my_pe(), 0);
    EXPECT_EQ(aclshmem_n_pes(), 1);
    harness_ring_check(0, 1);
    harness_mark_error();
    int64_t v = 1, *x = aclshmem_malloc(sizeof v);
    ASSERT_NOT_NULL(x);
    aclshmem_putmem(x, &v, sizeof v, 1); /* PE 1 does not exist in this instance */
    EXPECT_ERROR_SET();
    aclshmem_free(x);
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_my_pe(), me);
    EXPECT_EQ(aclshmem_n_pes(), n);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmemx_finalize(5), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- settings are frozen while any instance lives --------------------------------------- */

static int t_settings_frozen(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid0, uid3;
    ASSERT_EQ(init_instance(0, &uid0), ACLSHMEM_SUCCESS);
    ASSERT_EQ(init_instance(3, &uid3), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_finalize(0), ACLSHMEM_SUCCESS);
    /* The active instance 0 is gone and there is no instance 0 to fall back to: none is
     * active until the caller picks one. */
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    harness_mark_error();
    EXPECT_EQ(aclshmem_my_pe(), -1);
    EXPECT_ERROR_CONTAINS("not initialized");
    ASSERT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_my_pe(), me);
    /* Instance 3 is still alive: settings that apply at init stay frozen. */
    harness_mark_error();
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, NULL, 0), ACLSHMEM_NOT_SUPPORTED);
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_set_qp_num(ACLSHMEM_DATA_OP_ROCE, 4), ACLSHMEM_NOT_SUPPORTED);
    EXPECT_ERROR_CONTAINS("initialized");
    EXPECT_EQ(aclshmemx_finalize(3), ACLSHMEM_SUCCESS);
    /* Nothing alive: they may change again. */
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, NULL, 0), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- DEFAULT mode: instances take start + id from SHMEM_INSTANCE_PORT_RANGE ------------ */

static int init_default(uint64_t id, const char *url)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.my_pe = harness_my_pe;
    attr.n_pes = harness_n_pes;
    attr.local_mem_size = HARNESS_DEFAULT_HEAP;
    attr.instance_id = id;
    attr.option_attr.shm_init_timeout = 20;
    attr.option_attr.shm_create_timeout = 20;
    attr.option_attr.control_operation_timeout = 20;
    snprintf(attr.ip_port, sizeof attr.ip_port, "%s", url);
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
}

static int t_default_mode_instances(int me, int n)
{
    /* PE 0 picks the range: instance 1 gets start + 1, a port that was free just now. */
    int port = 0;
    for (int tries = 0; me == 0 && tries < 50 && (port <= 1026 || port >= 65535); tries++)
        port = harness_free_port();
    harness_bcast(&port, sizeof port);
    ASSERT(port > 1026);
    char range[64];
    snprintf(range, sizeof range, "%d:%d", port - 1, port + 1); /* ids 0..2 */
    setenv("SHMEM_INSTANCE_PORT_RANGE", range, 1);

    /* Instance 0 through a unique ID, instance 1 in DEFAULT mode with port 0. */
    aclshmemx_uniqueid_t uid0;
    ASSERT_EQ(init_instance(0, &uid0), ACLSHMEM_SUCCESS);
    int rc = init_default(1, "tcp://127.0.0.1:0");
    ASSERT_EQ(rc, ACLSHMEM_SUCCESS);
    EXPECT_EQ(active_id(), 0);
    ASSERT_EQ(aclshmemx_instance_ctx_set(1), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    check_world_only(me, n);

    /* An id beyond the range: INVALID_VALUE on every PE, nothing created. */
    harness_mark_error();
    EXPECT_EQ(init_default(3, "tcp://127.0.0.1:0"), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    EXPECT_ERROR_CONTAINS("SHMEM_INSTANCE_PORT_RANGE");
    EXPECT_EQ(aclshmemx_instance_ctx_set(3), ACLSHMEM_INVALID_VALUE);
    /* No range at all: INVALID_VALUE too. */
    unsetenv("SHMEM_INSTANCE_PORT_RANGE");
    harness_mark_error();
    EXPECT_EQ(init_default(2, "tcp://127.0.0.1:0"), ACLSHMEM_INVALID_VALUE);
    EXPECT_ERROR_SET();
    /* A malformed range. */
    setenv("SHMEM_INSTANCE_PORT_RANGE", "40000-40010", 1);
    EXPECT_EQ(init_default(2, "tcp://127.0.0.1:0"), ACLSHMEM_INVALID_VALUE);
    setenv("SHMEM_INSTANCE_PORT_RANGE", "40010:40000", 1);
    EXPECT_EQ(init_default(2, "tcp://127.0.0.1:0"), ACLSHMEM_INVALID_VALUE);
    unsetenv("SHMEM_INSTANCE_PORT_RANGE");
    EXPECT_EQ(active_id(), 1);

    /* Both instances still move data. */
    ASSERT_EQ(aclshmemx_instance_ctx_set(0), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmemx_finalize(1), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_finalize(0), ACLSHMEM_SUCCESS);
    EXPECT_NULL(aclshmemx_instance_ctx_get());
    return 0;
}

static const harness_case cases[] = {
    { "two_instances", t_two_instances, { .no_init = 1, .no_uid = 1, .timeout_s = 40 }, { 2, 3 } },
    { "finalize_active", t_finalize_active, { .no_init = 1, .no_uid = 1, .timeout_s = 40 }, { 2 } },
    { "nonzero_alone", t_nonzero_alone, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "bad_ids", t_bad_ids, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "per_process", t_per_process, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "different_sizes", t_different_sizes, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "settings_frozen", t_settings_frozen, { .no_init = 1, .no_uid = 1, .timeout_s = 30 }, { 2 } },
    { "default_mode_instances", t_default_mode_instances, { .no_init = 1, .no_uid = 1, .timeout_s = 40 },
      { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
