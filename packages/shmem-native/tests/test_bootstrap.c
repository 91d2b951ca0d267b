/*
 * test_bootstrap.c - the control plane under stress: PEs that never join, a PE that dies
 * (after init, inside a barrier or an allocation, inside init, and at swept moments of init),
 * processes without the ID (raw TCP outsiders, an impostor with a wrong secret, a second
 * claimant of a PE number), and jobs whose PEs disagree (TLS, n_pes, heap size).
 *
 * Arguments: none (every case, then the sweep), "--no-sweep", "dies_during_init" (only the
 * sweep), or a substring selecting cases.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024ULL * 1024)

enum { MSG_GO = 100, MSG_READY = 101, MSG_DONE = 102, MSG_RESULT = 103 };

static int is_bootstrap_failure(int rc)
{
    return rc == ACLSHMEM_TIMEOUT_ERROR || rc == ACLSHMEM_BOOTSTRAP_ERROR;
}

/* Inits PE me of n with the shared unique ID and short timeouts; returns rc and the time. */
static int init_short(int me, int n, aclshmemx_uniqueid_t *uid, uint32_t timeout_s, double *secs)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(aclshmemx_set_attr_uniqueid_args(me, n, (int64_t)(64 * MiB), uid, &attr), 0);
    if (timeout_s) {
        attr.option_attr.shm_init_timeout = timeout_s;
        attr.option_attr.shm_create_timeout = timeout_s;
        attr.option_attr.control_operation_timeout = timeout_s;
    }
    double t0 = harness_now();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (secs)
        *secs = harness_now() - t0;
    return rc;
}

/* ---- a PE that never joins ------------------------------------------------------- */
/* n_pes = 3 but only 2 processes: both must fail within a few seconds, then recover. */
static int t_never_joins(int me, int n)
{
    aclshmemx_uniqueid_t uid = *harness_uid();
    double secs = 0;
    harness_mark_error();
    int rc = init_short(me, n + 1, &uid, 3, &secs);
    if (!is_bootstrap_failure(rc))
        harness_report(__FILE__, __LINE__, "init with a missing PE returned %d, expected %d or %d", rc,
                       ACLSHMEM_TIMEOUT_ERROR, ACLSHMEM_BOOTSTRAP_ERROR);
    EXPECT_LT(secs, 12.0);
    harness_log("init failed after %.2f s: %s", secs, aclshmemx_get_last_error());
    if (rc == ACLSHMEM_SUCCESS) {
        aclshmem_finalize();
        return 1;
    }
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    EXPECT_NULL(aclshmemx_get_heap_base(DEVICE_SIDE));

    /* The failure left nothing behind: the same processes form a proper job now. */
    harness_sync();
    ASSERT_EQ(harness_init(), 0);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* PE 0 made the ID (its listening socket exists) but never calls init: PE 1 is accepted
 * by the kernel and then hears nothing.  It must still give up within its timeout. */
static int t_server_never_joins(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid = *harness_uid();
    if (me == 0) {
        ASSERT(harness_recv(MSG_DONE, 1, NULL, 0, 60000) >= 0);
        return 0;
    }
    double secs = 0;
    harness_mark_error();
    int rc = init_short(1, 2, &uid, 3, &secs);
    if (!is_bootstrap_failure(rc))
        harness_report(__FILE__, __LINE__, "init without PE 0 returned %d", rc);
    EXPECT_LT(secs, 12.0);
    EXPECT_ERROR_SET();
    harness_log("init failed after %.2f s: %s", secs, aclshmemx_get_last_error());
    if (rc == ACLSHMEM_SUCCESS)
        aclshmem_finalize();
    harness_send(0, MSG_DONE, NULL, 0);
    return 0;
}

/* ---- a PE that dies ------------------------------------------------------------------ */
static void check_dead_pe_error(int dead, double secs)
{
    char want[32];
    snprintf(want, sizeof want, "PE %d", dead);
    EXPECT_LT(secs, 10.0);
    EXPECT_ERROR_SET();
    if (!harness_contains(aclshmemx_get_last_error(), want))
        harness_report(__FILE__, __LINE__, "the error should name \"%s\"", want);
}

/* After init PE 1 leaves without finalize; the others then call barrier_all. */
static int t_dead_pe(int me, int n)
{
    (void)n;
    aclshmem_barrier_all();
    if (me == 1) {
        fflush(stderr);
        _exit(0);
    }
    harness_sleep_ms(300);
    harness_mark_error();
    double t0 = harness_now();
    aclshmem_barrier_all();
    check_dead_pe_error(1, harness_now() - t0);
    harness_log("barrier_all after PE 1 died: %.2f s, \"%s\"", harness_now() - t0,
                aclshmemx_get_last_error());
    /* Later collectives fail fast too, and finalize returns. */
    harness_mark_error();
    t0 = harness_now();
    void *p = aclshmem_malloc(1024);
    EXPECT_NULL(p);
    EXPECT_LT(harness_now() - t0, 10.0);
    EXPECT_ERROR_SET();
    t0 = harness_now();
    (void)aclshmem_finalize();
    EXPECT_LT(harness_now() - t0, 15.0);
    return 0;
}

/* PE 1 dies while the others are already waiting in the barrier. */
static int t_dead_pe_in_barrier(int me, int n)
{
    (void)n;
    aclshmem_barrier_all();
    if (me == 1) {
        harness_sleep_ms(500);
        fflush(stderr);
        _exit(0);
    }
    harness_mark_error();
    double t0 = harness_now();
    aclshmem_barrier_all();
    double secs = harness_now() - t0;
    check_dead_pe_error(1, secs - 0.5);
    t0 = harness_now();
    (void)aclshmem_finalize();
    EXPECT_LT(harness_now() - t0, 15.0);
    return 0;
}

/* PE 1 dies while the others wait for it inside a collective allocation. */
static int t_dead_pe_in_malloc(int me, int n)
{
    (void)n;
    aclshmem_barrier_all();
    if (me == 1) {
        harness_sleep_ms(500);
        fflush(stderr);
        _exit(0);
    }
    harness_mark_error();
    double t0 = harness_now();
    void *p = aclshmem_malloc(4096);
    double secs = harness_now() - t0;
    EXPECT_NULL(p);
    check_dead_pe_error(1, secs - 0.5);
    t0 = harness_now();
    (void)aclshmem_finalize();
    EXPECT_LT(harness_now() - t0, 15.0);
    return 0;
}

/* PE 0 (the control-plane server) dies: nobody may hang. */
static int t_dead_pe0(int me, int n)
{
    (void)n;
    aclshmem_barrier_all();
    if (me == 0) {
        fflush(stderr);
        _exit(0);
    }
    harness_sleep_ms(300);
    harness_mark_error();
    double t0 = harness_now();
    aclshmem_barrier_all();
    double secs = harness_now() - t0;
    EXPECT_LT(secs, 10.0);
    EXPECT_ERROR_SET();
    if (!harness_contains(aclshmemx_get_last_error(), "PE 0"))
        harness_report(__FILE__, __LINE__, "the error should name \"PE 0\"");
    t0 = harness_now();
    (void)aclshmem_finalize();
    EXPECT_LT(harness_now() - t0, 15.0);
    return 0;
}

/* ---- a PE dies in the middle of init (n_pes = 3, the third never comes) ------------- */
static void *die_soon(void *arg)
{
    harness_sleep_ms(*(int *)arg);
    fflush(stderr);
    _exit(0);
    return NULL;
}

static void dies_in_init(int me, int victim)
{
    aclshmemx_uniqueid_t uid = *harness_uid();
    if (me == victim) {
        static int delay_ms = 1000;
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, die_soon, &delay_ms), 0);
    }
    double secs = 0;
    harness_mark_error();
    int rc = init_short(me, 3, &uid, 20, &secs);
    /* Only the survivor gets here. */
    EXPECT_NE(rc, ACLSHMEM_SUCCESS);
    EXPECT_LT(secs, 10.0);
    EXPECT_ERROR_SET();
    harness_log("init returned %d after %.2f s: %s", rc, secs, aclshmemx_get_last_error());
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
}

static int t_pe0_dies_in_init(int me, int n)
{
    (void)n;
    dies_in_init(me, 0);
    return 0;
}

static int t_pe1_dies_in_init(int me, int n)
{
    (void)n;
    dies_in_init(me, 1);
    return 0;
}

/* A PE of a complete 4-PE job dies at some moment of init (swept over the first 20 ms).
 * The others must come back from init (with an error, or with success and then an error
 * from the next barrier) and never crash. */
static int g_sweep_victim, g_sweep_delay_us;

static void *die_after_us(void *arg)
{
    (void)arg;
    usleep((useconds_t)g_sweep_delay_us);
    fflush(stderr);
    _exit(0);
    return NULL;
}

static int t_dies_during_init(int me, int n)
{
    aclshmemx_uniqueid_t uid = *harness_uid();
    harness_sync();
    if (me == g_sweep_victim) {
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, die_after_us, NULL), 0);
    }
    double secs = 0;
    int rc = init_short(me, n, &uid, 2, &secs);
    /* The victim may die before it (or PE 0) even connected, so the survivors may have to
     * wait for their 2 s timeout; what they must never do is crash or hang beyond it. */
    if (secs >= 5.0)
        harness_report(__FILE__, __LINE__, "init took %.2f s (timeout 2 s) to return %d", secs, rc);
    else if (secs >= 1.5)
        harness_log("slow: init noticed PE %d's death only after %.2f s: %d %s", g_sweep_victim, secs,
                    rc, aclshmemx_get_last_error());
    if (rc == ACLSHMEM_SUCCESS) {
        double t0 = harness_now();
        aclshmem_barrier_all();
        EXPECT_LT(harness_now() - t0, 5.0);
        (void)aclshmem_finalize();
    } else {
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    }
    return 0;
}

static int run_dies_during_init_sweep(void)
{
    int failed = 0;
    static const int victims[] = { 0, 2 };
    for (size_t v = 0; v < sizeof victims / sizeof victims[0]; v++) {
        int bad = 0;
        g_sweep_victim = victims[v];
        /* Every 1 ms (PE 2) or 2 ms (PE 0) over the first 20 ms: init takes about that long. */
        int step = victims[v] == 0 ? 2000 : 1000;
        const int n_delays = 20000 / step + 1;
        for (int d = 0; d < n_delays; d++) {
            g_sweep_delay_us = d * step;
            char label[96];
            snprintf(label, sizeof label, "dies_during_init/4pe/victim%d/%dus", g_sweep_victim,
                     g_sweep_delay_us);
            harness_opts o = { .no_init = 1, .timeout_s = 20 };
            if (run_pes_named(label, 4, t_dies_during_init, &o) != 0) {
                printf("[ FAIL ] %s\n", label);
                bad++;
            }
        }
        printf("[%s] dies_during_init/4pe/victim%d: %d of %d delays failed\n", bad ? " FAIL " : "  OK  ",
               g_sweep_victim, bad, n_delays);
        failed += bad != 0;
    }
    return failed;
}

/* ---- outsiders: raw TCP connections to PE 0's address ---------------------------------- */
typedef struct {
    int family;
    struct sockaddr_storage ss;
    socklen_t len;
    unsigned char secret[32];
} target_t;

static int parse_uid(const aclshmemx_uniqueid_t *uid, target_t *t)
{
    const unsigned char *in = (const unsigned char *)uid->internal;
    uint32_t magic;
    uint16_t fam, port_be;
    memcpy(&magic, in, 4);
    memcpy(&fam, in + 4, 2);
    memcpy(&port_be, in + 6, 2);
    memcpy(t->secret, in + 24, 32);
    if (magic != 0x554D4853u)
        return -1;
    memset(&t->ss, 0, sizeof t->ss);
    if (fam == AF_INET) {
        struct sockaddr_in *sa = (struct sockaddr_in *)&t->ss;
        sa->sin_family = AF_INET;
        sa->sin_port = port_be;
        memcpy(&sa->sin_addr, in + 8, 4);
        t->len = sizeof *sa;
    } else if (fam == AF_INET6) {
        struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&t->ss;
        sa->sin6_family = AF_INET6;
        sa->sin6_port = port_be;
        memcpy(&sa->sin6_addr, in + 8, 16);
        t->len = sizeof *sa;
    } else {
        return -1;
    }
    t->family = fam;
    return 0;
}

static int dial(const target_t *t)
{
    int fd = socket(t->family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&t->ss, t->len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void random_bytes(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(rand() & 0xff);
}

/* Reads until the peer closes (returns 1), or timeout_ms passes with it open (returns 0),
 * or, with want > 0, until want bytes arrived (returns 0).  Appends to buf/got. */
static int read_until(int fd, int timeout_ms, unsigned char *buf, size_t max, size_t *got, size_t want)
{
    double deadline = harness_now() + timeout_ms / 1000.0;
    for (;;) {
        if (want && *got >= want)
            return 0;
        int left = (int)((deadline - harness_now()) * 1000.0);
        if (left <= 0)
            return 0;
        struct pollfd p = { fd, POLLIN, 0 };
        int r = poll(&p, 1, left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        unsigned char tmp[4096];
        ssize_t n = recv(fd, tmp, sizeof tmp, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE)))
            return 1;
        if (n < 0)
            return 1;
        size_t room = max > *got ? max - *got : 0;
        size_t c = (size_t)n < room ? (size_t)n : room;
        memcpy(buf + *got, tmp, c);
        *got += (size_t)n;
    }
}

static int contains_secret(const target_t *t, const unsigned char *buf, size_t n)
{
    for (size_t i = 0; i + 32 <= n; i++)
        if (memcmp(buf + i, t->secret, 32) == 0)
            return 1;
    return 0;
}

/* A plausible hello: a 32-byte "proof", a 32-byte nonce, a PE number and a PE count. */
static void make_hello(unsigned char hello[72], const unsigned char *proof, const unsigned char *nonce)
{
    if (proof)
        memcpy(hello, proof, 32);
    else
        random_bytes(hello, 32);
    if (nonce)
        memcpy(hello + 32, nonce, 32);
    else
        random_bytes(hello + 32, 32);
    int32_t pe = 1, np = 2;
    memcpy(hello + 64, &pe, 4);
    memcpy(hello + 68, &np, 4);
}

/* One round of attacks; returns the idle connection (to be closed by the caller). */
static int attack_round(const target_t *t, const char *when, int tls)
{
    unsigned char buf[8192];
    size_t got;

    /* A: garbage. */
    int fd = dial(t);
    if (fd < 0) {
        /* Not listening (any more) is a perfectly safe answer. */
        harness_log("%s: PE 0's address refuses connections (%s); nothing to attack", when,
                    strerror(errno));
        return -1;
    }
    unsigned char junk[4096];
    random_bytes(junk, sizeof junk);
    (void)send(fd, junk, sizeof junk, MSG_NOSIGNAL);
    got = 0;
    int closed = read_until(fd, 8000, buf, sizeof buf, &got, 0);
    if (!closed)
        harness_report(__FILE__, __LINE__, "%s: garbage did not get the connection closed in 8 s", when);
    if (got > 64)
        harness_report(__FILE__, __LINE__, "%s: the server sent %zu bytes to a garbage client", when, got);
    EXPECT(!contains_secret(t, buf, got < sizeof buf ? got : sizeof buf));
    harness_log("%s: garbage -> %zu bytes back, %s", when, got, closed ? "closed" : "open");
    close(fd);

    /* B: a plausible hello with a wrong 32-byte proof. */
    fd = dial(t);
    ASSERT(fd >= 0);
    got = 0;
    (void)read_until(fd, 1500, buf, sizeof buf, &got, 40); /* the challenge, if any */
    size_t before = got;
    unsigned char hello[72];
    make_hello(hello, NULL, NULL);
    (void)send(fd, hello, sizeof hello, MSG_NOSIGNAL);
    closed = read_until(fd, 8000, buf, sizeof buf, &got, 0);
    if (!closed)
        harness_report(__FILE__, __LINE__, "%s: a wrong proof did not get the connection closed in 8 s",
                       when);
    if (got - before >= 32)
        harness_report(__FILE__, __LINE__,
                       "%s: the server answered a wrong proof with %zu bytes (job data or a proof)",
                       when, got - before);
    EXPECT(!contains_secret(t, buf, got < sizeof buf ? got : sizeof buf));
    harness_log("%s: wrong proof -> %zu bytes before, %zu after, %s", when, before, got - before,
                closed ? "closed" : "open");
    close(fd);

    /* B2: the secret itself, with one bit flipped, in place of the proof. */
    fd = dial(t);
    ASSERT(fd >= 0);
    got = 0;
    (void)read_until(fd, 1500, buf, sizeof buf, &got, 40);
    before = got;
    unsigned char near[32];
    memcpy(near, t->secret, 32);
    near[31] ^= 1;
    make_hello(hello, near, NULL);
    (void)send(fd, hello, sizeof hello, MSG_NOSIGNAL);
    closed = read_until(fd, 8000, buf, sizeof buf, &got, 0);
    if (!closed)
        harness_report(__FILE__, __LINE__, "%s: a near-secret proof was not refused", when);
    if (got - before >= 32)
        harness_report(__FILE__, __LINE__, "%s: %zu bytes sent after a near-secret proof", when,
                       got - before);
    close(fd);

    /* C: reflection.  Ask the server to prove itself over its own challenge on a second
     * connection, and replay that proof on the first.  (Plain-text control plane only.) */
    if (!tls) {
        int a = dial(t), b = dial(t);
        ASSERT(a >= 0 && b >= 0);
        unsigned char ca[64], cb[64];
        size_t ga = 0, gb = 0;
        (void)read_until(a, 3000, ca, sizeof ca, &ga, 40);
        (void)read_until(b, 3000, cb, sizeof cb, &gb, 40);
        if (ga >= 40 && gb >= 40) {
            make_hello(hello, NULL, ca + 8); /* our "nonce" is A's challenge */
            (void)send(b, hello, sizeof hello, MSG_NOSIGNAL);
            size_t gr = 0;
            unsigned char reply[256];
            (void)read_until(b, 3000, reply, sizeof reply, &gr, 0);
            harness_log("%s: reflection: %zu bytes back from the first hello", when, gr);
            if (gr >= 32) {
                make_hello(hello, reply, NULL);
                (void)send(a, hello, sizeof hello, MSG_NOSIGNAL);
                size_t g2 = 0;
                unsigned char r2[256];
                closed = read_until(a, 8000, r2, sizeof r2, &g2, 0);
                if (!closed || g2 >= 8)
                    harness_report(__FILE__, __LINE__,
                                   "%s: a reflected proof was not refused (%zu bytes back, %s)", when,
                                   g2, closed ? "closed" : "still open");
            }
        } else {
            harness_log("%s: no 40-byte challenge (%zu, %zu bytes); reflection check skipped", when,
                        ga, gb);
        }
        close(a);
        close(b);
    }

    /* D: a connection that says nothing and stays open. */
    int idle = dial(t);
    ASSERT(idle >= 0);
    return idle;
}

/* Children 0 and 1 are a 2-PE job, child 2 is an outsider that has only the address. */
static int outsider_common(int me, int tls)
{
    if (me == 2) {
        srand(12345);
        target_t t;
        ASSERT_EQ(parse_uid(harness_uid(), &t), 0);
        harness_sleep_ms(300); /* PE 0 is initialising now, PE 1 has not started */
        int idle = attack_round(&t, "during init", tls);
        harness_send(1, MSG_GO, NULL, 0);
        ASSERT(harness_recv(MSG_READY, 0, NULL, 0, 60000) >= 0);
        if (idle >= 0)
            close(idle);
        idle = attack_round(&t, "while running", tls);
        harness_send(0, MSG_DONE, NULL, 0);
        harness_send(1, MSG_DONE, NULL, 0);
        ASSERT(harness_recv(MSG_DONE, 0, NULL, 0, 60000) >= 0);
        if (idle >= 0)
            close(idle);
        return 0;
    }
    aclshmemx_uniqueid_t uid = *harness_uid();
    if (me == 1)
        ASSERT(harness_recv(MSG_GO, 2, NULL, 0, 60000) >= 0);
    double secs;
    int rc = init_short(me, 2, &uid, 0, &secs);
    ASSERT_EQ(rc, ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_n_pes(), 2);
    harness_ring_check(me, 2);
    if (me == 0)
        harness_send(2, MSG_READY, NULL, 0);
    for (int i = 0; i < 60; i++) {
        aclshmem_barrier_all();
        harness_sleep_ms(30);
    }
    ASSERT(harness_recv(MSG_DONE, 2, NULL, 0, 60000) >= 0);
    harness_ring_check(me, 2);
    EXPECT_EQ(aclshmem_finalize(), 0);
    if (me == 0)
        harness_send(2, MSG_DONE, NULL, 0);
    return 0;
}

static int t_outsider(int me, int n)
{
    (void)n;
    return outsider_common(me, 0);
}

static int t_outsider_tls(int me, int n)
{
    (void)n;
    return outsider_common(me, 1);
}

/* ---- an impostor: the right address, a wrong secret, claiming PE 1 -------------------- */
static int t_impostor(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid = *harness_uid();
    if (me == 2) {
        aclshmemx_uniqueid_t bad = uid;
        bad.internal[24 + 5] ^= 0x40;
        double secs = 0;
        harness_mark_error();
        int rc = init_short(1, 2, &bad, 3, &secs);
        EXPECT_NE(rc, ACLSHMEM_SUCCESS);
        EXPECT_LT(secs, 12.0);
        harness_log("impostor: init returned %d after %.2f s: %s", rc, secs, aclshmemx_get_last_error());
        if (rc == ACLSHMEM_SUCCESS)
            aclshmem_finalize();
        else
            EXPECT_ERROR_SET();
        harness_send(1, MSG_GO, NULL, 0);
        return 0;
    }
    if (me == 1)
        ASSERT(harness_recv(MSG_GO, 2, NULL, 0, 60000) >= 0);
    ASSERT_EQ(init_short(me, 2, &uid, 0, NULL), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmem_my_pe(), me);
    harness_ring_check(me, 2);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- two processes claim PE 1: exactly one of them gets in --------------------------- */
static int t_duplicate_pe(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid = *harness_uid();
    int rc;
    if (me == 0) {
        rc = init_short(0, 2, &uid, 10, NULL);
    } else {
        if (me == 2)
            harness_sleep_ms(500);
        rc = init_short(1, 2, &uid, 10, NULL);
    }
    int rcs[3];
    harness_allgather(&rc, sizeof rc, rcs);
    EXPECT_EQ(rcs[0], ACLSHMEM_SUCCESS);
    EXPECT((rcs[1] == 0) != (rcs[2] == 0));
    if (rc == ACLSHMEM_SUCCESS) {
        EXPECT_EQ(aclshmem_my_pe(), me == 0 ? 0 : 1);
        if (rcs[1] == 0 || rcs[2] == 0)
            harness_ring_check(me == 0 ? 0 : 1, 2);
        EXPECT_EQ(aclshmem_finalize(), 0);
    } else {
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
        harness_log("the second PE 1 got %d: %s", rc, aclshmemx_get_last_error());
    }
    return 0;
}

/* ---- jobs whose PEs disagree: everyone fails, nobody hangs ------------------------------ */
static void expect_fail_both(int rc, double secs)
{
    EXPECT_NE(rc, ACLSHMEM_SUCCESS);
    EXPECT_LT(secs, 15.0);
    if (rc == ACLSHMEM_SUCCESS)
        aclshmem_finalize();
    else
        harness_log("init failed as expected after %.2f s: %d %s", secs, rc, aclshmemx_get_last_error());
}

static int t_tls_mismatch(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid = *harness_uid();
    EXPECT_EQ(aclshmemx_set_conf_store_tls(me == 0, NULL, 0), 0);
    double secs = 0;
    int rc = init_short(me, 2, &uid, 3, &secs);
    expect_fail_both(rc, secs);
    return 0;
}

static int t_n_pes_mismatch(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid = *harness_uid();
    double secs = 0;
    int rc = init_short(me, me == 0 ? 2 : 3, &uid, 3, &secs);
    expect_fail_both(rc, secs);
    return 0;
}

static int t_heap_mismatch(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid = *harness_uid();
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    ASSERT_EQ(aclshmemx_set_attr_uniqueid_args(me, 2, (int64_t)((me == 0 ? 64 : 32) * MiB), &uid,
                                               &attr),
              0);
    attr.option_attr.shm_init_timeout = 3;
    attr.option_attr.shm_create_timeout = 3;
    attr.option_attr.control_operation_timeout = 3;
    double t0 = harness_now();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    expect_fail_both(rc, harness_now() - t0);
    return 0;
}

static const harness_case cases[] = {
    { "never_joins", t_never_joins, { .no_init = 1, .timeout_s = 60 }, { 2 } },
    { "server_never_joins", t_server_never_joins, { .no_init = 1, .timeout_s = 40 }, { 2 } },
    { "pe0_dies_in_init", t_pe0_dies_in_init, { .no_init = 1, .timeout_s = 40 }, { 2 } },
    { "pe1_dies_in_init", t_pe1_dies_in_init, { .no_init = 1, .timeout_s = 40 }, { 2 } },
    { "dead_pe", t_dead_pe, { .no_finalize = 1, .timeout_s = 60 }, { 2, 4 } },
    { "dead_pe_in_barrier", t_dead_pe_in_barrier, { .no_finalize = 1, .timeout_s = 60 }, { 3 } },
    { "dead_pe_in_malloc", t_dead_pe_in_malloc, { .no_finalize = 1, .timeout_s = 60 }, { 3 } },
    { "dead_pe0", t_dead_pe0, { .no_finalize = 1, .timeout_s = 60 }, { 2 } },
    { "outsider", t_outsider, { .no_init = 1, .timeout_s = 90 }, { 3 } },
    { "outsider_tls", t_outsider_tls, { .no_init = 1, .tls = 1, .timeout_s = 90 }, { 3 } },
    { "impostor", t_impostor, { .no_init = 1, .timeout_s = 60 }, { 3 } },
    { "duplicate_pe", t_duplicate_pe, { .no_init = 1, .timeout_s = 60 }, { 3 } },
    { "tls_mismatch", t_tls_mismatch, { .no_init = 1, .timeout_s = 60 }, { 2 } },
    { "n_pes_mismatch", t_n_pes_mismatch, { .no_init = 1, .timeout_s = 60 }, { 2 } },
    { "heap_mismatch", t_heap_mismatch, { .no_init = 1, .timeout_s = 60 }, { 2 } },
};

/* Arguments: none (every case and the sweep), "--no-sweep" (every case), "dies_during_init"
 * (only the sweep), or a filter for the cases. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "dies_during_init") == 0)
        return run_dies_during_init_sweep() != 0;
    int sweep = argc < 2;
    if (argc > 1 && strcmp(argv[1], "--no-sweep") == 0)
        argc = 1;
    int rc = harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
    if (sweep)
        rc |= run_dies_during_init_sweep() != 0;
    return rc;
}
