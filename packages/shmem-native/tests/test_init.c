/*
 * test_init.c - init, finalize, attributes, unique IDs, DEFAULT mode, status, info,
 * TLS settings and global_exit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024ULL * 1024)
#define GiB (1024ULL * MiB)

/* ---- helpers ------------------------------------------------------------------ */

#define ring_check harness_ring_check

/* A 1-PE job's attributes with a fresh unique ID (made in this process). */
static void one_pe_attr(aclshmemx_uniqueid_t *uid, aclshmemx_init_attr_t *attr)
{
    *uid = (aclshmemx_uniqueid_t)ACLSHMEM_UNIQUEID_INITIALIZER;
    ASSERT_EQ(aclshmemx_get_uniqueid(uid), ACLSHMEM_SUCCESS);
    *attr = (aclshmemx_init_attr_t)ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(aclshmemx_set_attr_uniqueid_args(0, 1, 64 * MiB, uid, attr), ACLSHMEM_SUCCESS);
}

/* ---- info ----------------------------------------------------------------------- */
static void check_info(void)
{
    int major = -1, minor = -1;
    aclshmem_info_get_version(&major, &minor);
    EXPECT_EQ(major, 1);
    EXPECT_EQ(minor, 1);
    char name[ACLSHMEM_MAX_NAME_LEN];
    memset(name, 'x', sizeof name);
    aclshmem_info_get_name(name);
    EXPECT(memchr(name, '\0', sizeof name) != NULL);
    name[sizeof name - 1] = '\0';
    EXPECT(strcmp(name, "ACLSHMEM v1.1.1") == 0);
    /* NULL arguments must not crash. */
    aclshmem_info_get_version(NULL, NULL);
    aclshmem_info_get_version(&major, NULL);
    aclshmem_info_get_version(NULL, &minor);
    aclshmem_info_get_name(NULL);
}

static int t_info(int me, int n)
{
    (void)me;
    (void)n;
    check_info(); /* before init */
    ASSERT_EQ(harness_init(), 0);
    check_info();
    EXPECT_EQ(aclshmem_finalize(), 0);
    check_info();
    return 0;
}

/* ---- aclshmemx_get_last_error: empty at first, kept by successes, per thread --------- */
static char g_thread_err[512];
static void *fail_in_thread(void *arg)
{
    (void)arg;
    const char *le = aclshmemx_get_last_error();
    if (le && le[0])
        snprintf(g_thread_err, sizeof g_thread_err, "new thread starts with \"%s\"", le);
    else if (aclshmemx_set_log_level(42) == ACLSHMEM_SUCCESS)
        snprintf(g_thread_err, sizeof g_thread_err, "set_log_level(42) succeeded");
    else if (!(le = aclshmemx_get_last_error()) || !le[0])
        snprintf(g_thread_err, sizeof g_thread_err, "no last error in the thread");
    else
        snprintf(g_thread_err, sizeof g_thread_err, "ok:%s", le);
    return NULL;
}

static int t_last_error(int me, int n)
{
    const char *le = aclshmemx_get_last_error();
    ASSERT_NOT_NULL(le);
    EXPECT(le[0] == '\0'); /* nothing has failed in this process yet */
    EXPECT_EQ(aclshmemx_set_log_level(-5) < 0, 1);
    char first[512];
    snprintf(first, sizeof first, "%s", aclshmemx_get_last_error());
    EXPECT(first[0] != '\0');
    /* Successful calls leave it alone. */
    EXPECT_EQ(aclshmemx_set_log_level(3), ACLSHMEM_SUCCESS);
    EXPECT(strcmp(aclshmemx_get_last_error(), first) == 0);
    ASSERT_EQ(harness_init(), 0);
    harness_ring_check(me, n);
    /* Another thread has its own. */
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, fail_in_thread, NULL), 0);
    pthread_join(th, NULL);
    if (strncmp(g_thread_err, "ok:", 3) != 0)
        harness_report(__FILE__, __LINE__, "thread: %s", g_thread_err);
    /* ... and the thread's failure did not touch mine. */
    if (strcmp(aclshmemx_get_last_error(), first) != 0)
        harness_report(__FILE__, __LINE__, "main thread's error changed from \"%s\"", first);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- everything before init ---------------------------------------------------------- */
static int t_not_initialised(int me, int n)
{
    (void)me;
    (void)n;
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    EXPECT_NOT_NULL(aclshmemx_get_last_error());
    EXPECT_EQ(aclshmem_my_pe(), -1);
    EXPECT_EQ(aclshmem_n_pes(), -1);
    EXPECT_EQ(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD), -1);
    EXPECT_EQ(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD), -1);
    EXPECT_NULL(aclshmemx_get_heap_base(DEVICE_SIDE));
    EXPECT_NULL(aclshmemx_get_heap_base(HOST_SIDE));

    harness_mark_error();
    EXPECT_NULL(aclshmem_malloc(64));
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NULL(aclshmem_calloc(4, 16));
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NULL(aclshmem_align(64, 64));
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NULL(aclshmemx_malloc(64, HOST_SIDE));
    EXPECT_ERROR_SET();
    EXPECT_NULL(aclshmemx_calloc(4, 16, DEVICE_SIDE));
    EXPECT_NULL(aclshmemx_align(64, 64, HOST_SIDE));

    int local = 5, other = 0;
    harness_mark_error();
    aclshmem_free(&local);
    EXPECT_ERROR_SET();
    aclshmemx_free(&local, HOST_SIDE);
    aclshmem_free(NULL);
    EXPECT_NULL(aclshmem_ptr(&local, 0));

    aclshmem_team_t t = 77;
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, 1, &t), ACLSHMEM_NOT_INITED);
    EXPECT_EQ(t, ACLSHMEM_TEAM_INVALID);
    aclshmem_team_t x = 77, y = 77;
    EXPECT_EQ(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, &x, &y), ACLSHMEM_NOT_INITED);
    EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 0, ACLSHMEM_TEAM_WORLD), -1);
    aclshmem_team_config_t cfg;
    EXPECT_EQ(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, &cfg), ACLSHMEM_NOT_INITED);
    aclshmem_team_destroy(1);

    harness_mark_error();
    aclshmem_putmem(&other, &local, sizeof local, 0);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_getmem(&other, &local, sizeof local, 0);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_int32_p(&other, 3, 0);
    EXPECT_ERROR_SET();
    (void)aclshmem_int32_g(&other, 0);
    aclshmem_putmem_nbi(&other, &local, sizeof local, 0);
    aclshmem_quiet();
    aclshmem_fence();

    harness_mark_error();
    aclshmem_barrier_all();
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_barrier(ACLSHMEM_TEAM_WORLD);
    EXPECT_ERROR_SET();
    harness_mark_error();
    aclshmem_sync_all();
    EXPECT_ERROR_SET();
    aclshmem_sync(ACLSHMEM_TEAM_WORLD);

    int f = aclshmem_finalize();
    EXPECT(f == ACLSHMEM_SUCCESS || f == ACLSHMEM_NOT_INITED);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);

    /* And the process can still init normally afterwards. */
    ASSERT_EQ(harness_init(), 0);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    EXPECT_EQ(aclshmem_my_pe(), me);
    EXPECT_EQ(aclshmem_n_pes(), n);
    ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- attribute checks, in the reference order, with their codes ------------------- */
enum { F_NONE = 0, F_TIMEOUT_MSG = 1 };

typedef struct {
    const char *what;
    int my_pe, n_pes;
    uint32_t init_to, ctrl_to;
    uint32_t engine;
    uint64_t mem;
    int expect;
    int flags;
} attr_case_t;

#define OK_TO 2u
#define MTE ACLSHMEM_DATA_OP_MTE
static const attr_case_t attr_cases[] = {
    { "my_pe=-1", -1, 1, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "my_pe=-1 n_pes=-1 (my_pe checked before my_pe<n_pes)", -1, -1, OK_TO, OK_TO, MTE, 64 * MiB,
      ACLSHMEM_INVALID_VALUE, 0 },
    { "my_pe=-5 everything else bad", -5, 0, 0, 0, 0, 0, ACLSHMEM_INVALID_VALUE, 0 },
    { "n_pes=0", 0, 0, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "n_pes=-4", 0, -4, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "n_pes=0 my_pe=3 (n_pes checked before my_pe<n_pes)", 3, 0, OK_TO, OK_TO, MTE, 64 * MiB,
      ACLSHMEM_INVALID_VALUE, 0 },
    { "n_pes=16385", 0, 16385, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "n_pes=16385 my_pe=20000", 20000, 16385, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "n_pes=INT_MAX", 0, 0x7fffffff, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "my_pe=1 n_pes=1", 1, 1, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_PARAM, 0 },
    { "my_pe=16384 n_pes=16384", 16384, 16384, OK_TO, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_PARAM, 0 },
    { "my_pe=5 n_pes=2, zero timeouts (pe checked first)", 5, 2, 0, 0, MTE, 64 * MiB,
      ACLSHMEM_INVALID_PARAM, 0 },
    { "my_pe=5 n_pes=2, bad engine, mem 0 (pe checked first)", 5, 2, OK_TO, OK_TO, 0, 0,
      ACLSHMEM_INVALID_PARAM, 0 },
    { "shm_init_timeout=0", 0, 1, 0, OK_TO, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE, F_TIMEOUT_MSG },
    { "control_operation_timeout=0", 0, 1, OK_TO, 0, MTE, 64 * MiB, ACLSHMEM_INVALID_VALUE,
      F_TIMEOUT_MSG },
    { "timeout=0, engine=0, mem=0 (timeouts checked first)", 0, 1, 0, OK_TO, 0, 0,
      ACLSHMEM_INVALID_VALUE, F_TIMEOUT_MSG },
    { "engine=0", 0, 1, OK_TO, OK_TO, 0, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "engine=0x10", 0, 1, OK_TO, OK_TO, 0x10, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "engine=0x11", 0, 1, OK_TO, OK_TO, 0x11, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "engine=0x80000001", 0, 1, OK_TO, OK_TO, 0x80000001u, 64 * MiB, ACLSHMEM_INVALID_VALUE, 0 },
    { "local_mem_size=0", 0, 1, OK_TO, OK_TO, MTE, 0, ACLSHMEM_INVALID_VALUE, 0 },
    { "local_mem_size=40GiB+1", 0, 1, OK_TO, OK_TO, MTE, 40 * GiB + 1, ACLSHMEM_INVALID_VALUE, 0 },
    { "local_mem_size=2^64-1", 0, 1, OK_TO, OK_TO, MTE, UINT64_MAX, ACLSHMEM_INVALID_VALUE, 0 },
};

static int t_attr_checks(int me, int n)
{
    (void)me;
    (void)n;
    aclshmemx_uniqueid_t uid;
    aclshmemx_init_attr_t base;
    one_pe_attr(&uid, &base);

    for (size_t i = 0; i < sizeof attr_cases / sizeof attr_cases[0]; i++) {
        const attr_case_t *c = &attr_cases[i];
        aclshmemx_init_attr_t a = base;
        a.my_pe = c->my_pe;
        a.n_pes = c->n_pes;
        a.option_attr.shm_init_timeout = c->init_to;
        a.option_attr.shm_create_timeout = OK_TO;
        a.option_attr.control_operation_timeout = c->ctrl_to;
        a.option_attr.data_op_engine_type = (data_op_engine_type_t)c->engine;
        a.local_mem_size = c->mem;
        harness_mark_error();
        double t0 = harness_now();
        int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &a);
        double dt = harness_now() - t0;
        if (rc != c->expect)
            harness_report(__FILE__, __LINE__, "attr \"%s\": init returned %d, expected %d", c->what,
                           rc, c->expect);
        if (dt > 1.0)
            harness_report(__FILE__, __LINE__, "attr \"%s\": the check took %.2f s", c->what, dt);
        if (rc == ACLSHMEM_SUCCESS) {
            aclshmem_finalize();
            continue;
        }
        if (!harness_error_since_mark())
            harness_report(__FILE__, __LINE__, "attr \"%s\": no last-error message", c->what);
        if ((c->flags & F_TIMEOUT_MSG) && !harness_contains(aclshmemx_get_last_error(), "timeout"))
            harness_report(__FILE__, __LINE__, "attr \"%s\": the message should name the timeout",
                           c->what);
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    }

    /* NULL attributes, NULL / bad unique IDs, bad flags. */
    harness_mark_error();
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();
    aclshmemx_init_attr_t a = base;
    a.comm_args = NULL;
    harness_mark_error();
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &a), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();

    aclshmemx_uniqueid_t bad = uid;
    bad.version = 12345;
    a = base;
    a.comm_args = &bad;
    a.option_attr.shm_init_timeout = OK_TO;
    a.option_attr.control_operation_timeout = OK_TO;
    harness_mark_error();
    EXPECT_NE(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &a), ACLSHMEM_SUCCESS);
    EXPECT_ERROR_SET();
    bad = uid;
    memset(bad.internal, 0, sizeof bad.internal); /* no magic */
    harness_mark_error();
    EXPECT_NE(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &a), ACLSHMEM_SUCCESS);
    EXPECT_ERROR_SET();

    static const unsigned bad_flags[] = { 0, 1u << 2, 1u << 4, ACLSHMEMX_INIT_MAX,
                                          ACLSHMEMX_INIT_WITH_UNIQUEID | (1u << 5) };
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        a = base;
        harness_mark_error();
        int rc = aclshmemx_init_attr((aclshmemx_bootstrap_t)bad_flags[i], &a);
        if (rc == ACLSHMEM_SUCCESS) {
            harness_report(__FILE__, __LINE__, "init flags 0x%x were accepted", bad_flags[i]);
            aclshmem_finalize();
        } else {
            EXPECT_ERROR_SET();
        }
    }
    a = base;
    harness_mark_error();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_MPI, &a);
    EXPECT_NE(rc, ACLSHMEM_SUCCESS);
    if (rc == ACLSHMEM_SUCCESS)
        aclshmem_finalize();
    else
        EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);

    /* After all of that, a valid init works, and a second one is refused. */
    one_pe_attr(&uid, &a);
    ASSERT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &a), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    EXPECT_EQ(aclshmem_my_pe(), 0);
    EXPECT_EQ(aclshmem_n_pes(), 1);
    ring_check(0, 1);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &a), ACLSHMEM_INNER_ERROR);
    EXPECT_ERROR_CONTAINS("repeatedly");
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    return 0;
}

/* ---- double init on a real multi-PE job ------------------------------------------- */
static int t_double_init(int me, int n)
{
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    aclshmemx_uniqueid_t uid = *harness_uid();
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(harness_make_attr(me, n, &uid, &attr), 0);
    harness_mark_error();
    double t0 = harness_now();
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_INNER_ERROR);
    EXPECT_LT(harness_now() - t0, 2.0);
    EXPECT_ERROR_CONTAINS("repeatedly");
    /* Again, and in DEFAULT mode: still refused, still running. */
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_INNER_ERROR);
    aclshmemx_init_attr_t dflt = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    dflt.my_pe = me;
    dflt.n_pes = n;
    dflt.local_mem_size = HARNESS_DEFAULT_HEAP;
    snprintf(dflt.ip_port, sizeof dflt.ip_port, "tcp://127.0.0.1:%d", 40000 + me);
    EXPECT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &dflt), ACLSHMEM_INNER_ERROR);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
    EXPECT_EQ(aclshmem_my_pe(), me);
    EXPECT_EQ(aclshmem_n_pes(), n);
    ring_check(me, n);
    return 0;
}

/* ---- init / finalize / init again in one process ------------------------------------- */
static int t_init_finalize_loop(int me, int n)
{
    for (int round = 0; round < 3; round++) {
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
        ASSERT_EQ(harness_init(), 0);
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
        EXPECT_EQ(aclshmem_my_pe(), me);
        EXPECT_EQ(aclshmem_n_pes(), n);
        EXPECT_NOT_NULL(aclshmemx_get_heap_base(DEVICE_SIDE));
        ring_check(me, n);
        /* Leave something allocated: finalize must clean it up. */
        void *leak = aclshmem_malloc(4096);
        EXPECT_NOT_NULL(leak);
        EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
        EXPECT_NULL(aclshmemx_get_heap_base(DEVICE_SIDE));
        EXPECT_EQ(aclshmem_my_pe(), -1);
        int f = aclshmem_finalize(); /* a second finalize: harmless */
        EXPECT(f == ACLSHMEM_SUCCESS || f == ACLSHMEM_NOT_INITED);
    }
    return 0;
}

/* ---- DEFAULT mode: tcp://127.0.0.1:<port>, every PE fills its own attributes ---------- */
static int default_init(int me, int n, int port)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.my_pe = me;
    attr.n_pes = n;
    attr.local_mem_size = 64 * MiB;
    snprintf(attr.ip_port, sizeof attr.ip_port, "tcp://127.0.0.1:%d", port);
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
}

static int t_default_mode(int me, int n)
{
    /* With TLS on, DEFAULT mode needs a job secret (or certificates); with TLS off it runs
     * unauthenticated, as the user chose. */
    if (harness_current_opts()->tls) {
        char secret[33];
        if (me == 0)
            snprintf(secret, sizeof secret, "%08x%08x%08x%08x", (unsigned)rand(), (unsigned)getpid(),
                     (unsigned)(harness_now() * 1e6), (unsigned)rand());
        harness_bcast(secret, sizeof secret);
        setenv("SHMEM_JOB_SECRET", secret, 1);
    }
    for (int round = 0; round < 2; round++) {
        int port = 0;
        if (me == 0)
            port = harness_free_port();
        harness_bcast(&port, sizeof port);
        ASSERT(port > 1024);
        int rc = default_init(me, n, port);
        ASSERT_EQ(rc, ACLSHMEM_SUCCESS);
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_IS_INITIALIZED);
        EXPECT_EQ(aclshmem_my_pe(), me);
        EXPECT_EQ(aclshmem_n_pes(), n);
        ring_check(me, n);
        EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
        harness_sync(); /* the port is free again before the next round picks one */
    }
    return 0;
}

static int t_default_mode_bad(int me, int n)
{
    (void)me;
    (void)n;
    static const char *urls[] = { "", "garbage", "tcp://127.0.0.1", "tcp://127.0.0.1:",
                                  "tcp://127.0.0.1:80", "tcp://127.0.0.1:99999",
                                  "tcp://127.0.0.1:-5", "udp://127.0.0.1:5000",
                                  "tcp://:5000", "tcp://127.0.0.1:5000x" };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
        attr.my_pe = 0;
        attr.n_pes = 1;
        attr.local_mem_size = 64 * MiB;
        attr.option_attr.shm_init_timeout = 2;
        attr.option_attr.control_operation_timeout = 2;
        snprintf(attr.ip_port, sizeof attr.ip_port, "%s", urls[i]);
        harness_mark_error();
        double t0 = harness_now();
        int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
        if (rc != ACLSHMEM_INVALID_PARAM)
            harness_report(__FILE__, __LINE__, "ip_port \"%s\": init returned %d, expected %d",
                           urls[i], rc, ACLSHMEM_INVALID_PARAM);
        if (rc == ACLSHMEM_SUCCESS) {
            aclshmem_finalize();
            continue;
        }
        EXPECT_ERROR_SET();
        EXPECT_LT(harness_now() - t0, 1.0);
    }

    /* The port is taken by someone else: a clear failure within the timeouts, no hang. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ASSERT_EQ(listen(fd, 4), 0);
    ASSERT_EQ(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.my_pe = 0;
    attr.n_pes = 1;
    attr.local_mem_size = 64 * MiB;
    attr.option_attr.shm_init_timeout = 2;
    attr.option_attr.shm_create_timeout = 2;
    attr.option_attr.control_operation_timeout = 2;
    snprintf(attr.ip_port, sizeof attr.ip_port, "tcp://127.0.0.1:%d", ntohs(sa.sin_port));
    harness_mark_error();
    double t0 = harness_now();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    EXPECT_NE(rc, ACLSHMEM_SUCCESS);
    EXPECT_LT(harness_now() - t0, 10.0);
    if (rc == ACLSHMEM_SUCCESS)
        aclshmem_finalize();
    else
        EXPECT_ERROR_SET();
    close(fd);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    return 0;
}

/* ---- unique IDs and set_attr_uniqueid_args ---------------------------------------- */
static uint32_t rd32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint16_t rd16(const char *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static int t_uniqueid(int me, int n)
{
    (void)me;
    (void)n;
    EXPECT_EQ(sizeof(aclshmemx_uniqueid_t), 136);
    harness_mark_error();
    EXPECT_EQ(aclshmemx_get_uniqueid(NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();

    aclshmemx_uniqueid_t u1 = ACLSHMEM_UNIQUEID_INITIALIZER, u2 = ACLSHMEM_UNIQUEID_INITIALIZER;
    ASSERT_EQ(aclshmemx_get_uniqueid(&u1), ACLSHMEM_SUCCESS);
    ASSERT_EQ(aclshmemx_get_uniqueid(&u2), ACLSHMEM_SUCCESS);
    EXPECT_EQ(u1.version, ACLSHMEM_UNIQUEID_VERSION);
    EXPECT_EQ(rd32(u1.internal), 0x554D4853u);
    uint16_t fam = rd16(u1.internal + 4);
    EXPECT(fam == AF_INET || fam == AF_INET6);
    EXPECT_NE(rd16(u1.internal + 6), 0);
    static const char zero[32];
    EXPECT(memcmp(u1.internal + 24, zero, 32) != 0);
    EXPECT(memcmp(u1.internal + 24, u2.internal + 24, 32) != 0); /* a new secret each time */

    /* SHMEM_UID_SESSION_ID chooses the listen address. */
    int port = harness_free_port();
    char sess[64];
    snprintf(sess, sizeof sess, "127.0.0.1:%d", port);
    setenv("SHMEM_UID_SESSION_ID", sess, 1);
    aclshmemx_uniqueid_t u3 = ACLSHMEM_UNIQUEID_INITIALIZER;
    EXPECT_EQ(aclshmemx_get_uniqueid(&u3), ACLSHMEM_SUCCESS);
    unsetenv("SHMEM_UID_SESSION_ID");
    EXPECT_EQ(rd16(u3.internal + 4), AF_INET);
    EXPECT_EQ(ntohs(rd16(u3.internal + 6)), port);
    uint32_t lo = htonl(INADDR_LOOPBACK);
    EXPECT(memcmp(u3.internal + 8, &lo, 4) == 0);

    /* set_attr_uniqueid_args fills everything. */
    aclshmemx_init_attr_t attr;
    memset(&attr, 0x5a, sizeof attr);
    EXPECT_EQ(aclshmemx_set_attr_uniqueid_args(1, 4, 32 * MiB, &u1, &attr), ACLSHMEM_SUCCESS);
    EXPECT_EQ(attr.my_pe, 1);
    EXPECT_EQ(attr.n_pes, 4);
    EXPECT_EQ(attr.local_mem_size, 32 * MiB);
    EXPECT(attr.comm_args == &u1);
    EXPECT_EQ(attr.instance_id, 0);
    EXPECT_EQ(attr.option_attr.version, ACLSHMEM_INIT_OPTIONAL_ATTR_VERSION);
    EXPECT_EQ(attr.option_attr.data_op_engine_type, ACLSHMEM_DATA_OP_MTE);
    EXPECT_EQ(attr.option_attr.shm_init_timeout, ACLSHMEM_DEFAULT_TIMEOUT);
    EXPECT_EQ(attr.option_attr.shm_create_timeout, ACLSHMEM_DEFAULT_TIMEOUT);
    EXPECT_EQ(attr.option_attr.control_operation_timeout, ACLSHMEM_DEFAULT_TIMEOUT);

    harness_mark_error();
    EXPECT_NE(aclshmemx_set_attr_uniqueid_args(0, 2, 32 * MiB, NULL, &attr), ACLSHMEM_SUCCESS);
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NE(aclshmemx_set_attr_uniqueid_args(0, 2, 32 * MiB, &u1, NULL), ACLSHMEM_SUCCESS);
    EXPECT_ERROR_SET();
    harness_mark_error();
    EXPECT_NE(aclshmemx_set_attr_uniqueid_args(0, 2, (int64_t)(40 * GiB + 1), &u1, &attr),
              ACLSHMEM_SUCCESS);
    EXPECT_ERROR_SET();
    EXPECT_NE(aclshmemx_set_attr_uniqueid_args(0, 16385, 32 * MiB, &u1, &attr), ACLSHMEM_SUCCESS);
    EXPECT_NE(aclshmemx_set_attr_uniqueid_args(16384, 16384, 32 * MiB, &u1, &attr),
              ACLSHMEM_SUCCESS);
    EXPECT_NE(aclshmemx_set_attr_uniqueid_args(0, 2, -1, &u1, &attr), ACLSHMEM_SUCCESS);
    return 0;
}

/* A unique ID made by PE 0 works for a real job (the harness path), and what the other
 * PEs received carries PE 0's version and internal bytes (my_pe / n_pes may be per PE). */
static int t_uniqueid_job(int me, int n)
{
    const aclshmemx_uniqueid_t *u = harness_uid();
    uint32_t sum = (uint32_t)u->version;
    const unsigned char *p = (const unsigned char *)u->internal;
    for (size_t i = 0; i < sizeof u->internal; i++)
        sum = sum * 31 + p[i];
    uint32_t sums[HARNESS_MAX_PES];
    harness_allgather(&sum, sizeof sum, sums);
    for (int i = 0; i < n; i++)
        EXPECT_EQ(sums[i], sums[0]);
    ring_check(me, n);
    return 0;
}

/* An init that fails before its segments exist (here: PE 0 never comes) closes none of the
 * process's files: its clean-up once took the still zeroed fields for fd 0 and closed stdin. */
static int t_failed_init_keeps_files(int me, int n)
{
    (void)me;
    (void)n;
    if (fcntl(0, F_GETFD) == -1) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd > 0) {
            dup2(fd, 0);
            close(fd);
        }
    }
    ASSERT(fcntl(0, F_GETFD) != -1);
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    ASSERT_EQ(aclshmemx_get_uniqueid(&uid), ACLSHMEM_SUCCESS);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(aclshmemx_set_attr_uniqueid_args(1, 2, 64 * MiB, &uid, &attr), ACLSHMEM_SUCCESS);
    attr.option_attr.shm_init_timeout = 1;
    EXPECT_NE(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_SUCCESS);
    EXPECT(fcntl(0, F_GETFD) != -1);
    return 0;
}

/* ---- TLS settings --------------------------------------------------------------------- */
static int t_conf_store_tls_api(int me, int n)
{
    (void)me;
    (void)n;
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, NULL, 0), 0);
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, "", 0), 0);
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 0), 0);
    static const char info[] = "tlsCaPath: /nonexistent; tlsCert: a.pem; tlsPk: k.pem";
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, info, (uint32_t)strlen(info)), 0);
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, NULL, 0), 0);
    /* Settings take effect at the next init: a TLS-off 1-PE job still works. */
    ASSERT_EQ(harness_init(), 0);
    /* While running they are refused: they could only apply at the next init anyway. */
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 0), ACLSHMEM_NOT_SUPPORTED);
    EXPECT(strstr(aclshmemx_get_last_error(), "while an instance is initialized") != NULL);
    ring_check(0, 1);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* The job with TLS left on (the default) works, and so does turning it on explicitly. */
static int t_tls_on(int me, int n)
{
    ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 0), 0);
    ASSERT_EQ(harness_init(), 0);
    ring_check(me, n);
    aclshmem_barrier_all();
    return 0;
}

/* ---- global_exit -------------------------------------------------------------------- */
static void wait_to_be_ended(void)
{
    for (int i = 0; i < 100; i++)
        harness_sleep_ms(100);
    harness_report(__FILE__, __LINE__, "still alive 10 s after global_exit");
    harness_abort();
}

static int t_global_exit_pe0(int me, int n)
{
    (void)n;
    aclshmem_barrier_all();
    if (me == 0) {
        harness_sleep_ms(300);
        aclshmem_global_exit(7);
        harness_report(__FILE__, __LINE__, "aclshmem_global_exit returned");
        harness_abort();
    }
    aclshmem_barrier_all(); /* blocked here when the exit arrives */
    wait_to_be_ended();
    return 1;
}

static int t_global_exit_last(int me, int n)
{
    aclshmem_barrier_all();
    if (me == n - 1) {
        harness_sleep_ms(300);
        aclshmem_global_exit(7);
        harness_report(__FILE__, __LINE__, "aclshmem_global_exit returned");
        harness_abort();
    }
    if (me == 0)
        wait_to_be_ended(); /* PE 0 is not even in a library call */
    aclshmem_barrier_all();
    wait_to_be_ended();
    return 1;
}

/* Every PE is sleeping outside the library. */
static int t_global_exit_idle(int me, int n)
{
    (void)n;
    if (me == 1) {
        harness_sleep_ms(300);
        aclshmem_global_exit(7);
        harness_abort();
    }
    wait_to_be_ended();
    return 1;
}

static const harness_case cases[] = {
    { "info", t_info, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "last_error", t_last_error, { .no_init = 1, .no_uid = 1 }, { 1, 2 } },
    { "not_initialised", t_not_initialised, { .no_init = 1, .no_uid = 1 }, { 1, 2 } },
    { "attr_checks", t_attr_checks, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "double_init", t_double_init, { 0 }, { 2, 4 } },
    { "init_finalize_loop", t_init_finalize_loop, { .no_init = 1, .no_uid = 1 }, { 1, 2, 4 } },
    { "default_mode", t_default_mode, { .no_init = 1, .no_uid = 1 }, { 2, 4 } },
    { "default_mode_tls", t_default_mode, { .no_init = 1, .no_uid = 1, .tls = 1 }, { 2 } },
    { "default_mode_bad", t_default_mode_bad, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "uniqueid", t_uniqueid, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "uniqueid_job", t_uniqueid_job, { 0 }, { 2, 8 } },
    { "failed_init_keeps_files", t_failed_init_keeps_files, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "conf_store_tls_api", t_conf_store_tls_api, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "tls_on", t_tls_on, { .tls = 1 }, { 2, 4 } },
    { "global_exit_pe0", t_global_exit_pe0, { .no_finalize = 1, .expect_status = 7, .timeout_s = 30 },
      { 2 } },
    { "global_exit_last", t_global_exit_last,
      { .no_finalize = 1, .expect_status = 7, .timeout_s = 30 }, { 4 } },
    { "global_exit_idle", t_global_exit_idle,
      { .no_finalize = 1, .expect_status = 7, .timeout_s = 30 }, { 3 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
