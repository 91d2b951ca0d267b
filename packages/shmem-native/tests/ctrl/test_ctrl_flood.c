/*
 * test_ctrl_flood.c - PE 0's control plane under a connection flood, and PEs whose
 * connection is dropped before authentication (issue 23, item 3).
 *
 *  - idle_flood_tls: a 2-PE job with TLS on initialises while a process that knows only
 *    PE 0's address floods its port with idle TCP connections.  Child 2 is the flooder: it
 *    opens non-blocking connections at PACE_RATE a second for FLOOD_MS, sends nothing on
 *    them, keeps up to IN_FLIGHT open (each newer one replaces the oldest), and measures
 *    and checks the rate it achieved (at least FLOOD_RATE).  PE 0 starts at once, PE 1
 *    once the flood has filled PE 0's pre-authentication slots; both inits must succeed,
 *    in each of three runs.  Before the fix every newcomer pushed out the oldest connection
 *    still being admitted, often PE 1's (or PE 0's own) mid-handshake, and the PE did not
 *    try again: "PE 0 refused the connection (wrong unique ID, ...)".  The old server also
 *    made TLS objects for every idle connection and could not take this rate.
 *  - dropped_then_joins_*: PE 1 reaches PE 0 through a middlebox that closes its first
 *    three connections once they have spoken (or after 200 ms of silence), as a flooded
 *    PE 0 may, then forwards the fourth: init succeeds.  Before, init failed at the first.
 *  - always_dropped_*: every connection is closed so: init fails when its timeout runs
 *    out, having tried several times, and the error says that PE 0 dropped the connection
 *    before authentication, never "wrong unique ID".
 *  - wrong_secret_*: a unique ID with a damaged secret is still refused at once (not tried
 *    again until the timeout), with TLS (an alert) and without (PE 0's 4-byte refusal).
 *  - per_source_cap: 100 idle connections from 127.0.0.2 keep at most 64 slots (the rest
 *    are closed); 40 from 127.0.0.1 then all find room and stay while 127.0.0.2 goes on,
 *    and the job forms.  Before, one host could take all 128.
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "outsider.h"

#define MSG_GO 100   /* the flood is on: PE 1 may init */
#define MSG_DONE 101 /* the flood is over */

#define JOB_PES 2          /* the last child of the run is the flooder */
#define FLOOD_RATE 4000    /* connections a second the flood must reach */
#define PACE_RATE 8000     /* what the flooder aims at: above what the old server could take */
#define FLOOD_MS 3000
#define HEAD_START_MS 300  /* flooding before PE 1 starts: PE 0's slots are full by then */
#define IN_FLIGHT 768      /* idle connections held open at once */
#define INIT_TIMEOUT_S 30

/* Until PE 0 listens (it has started its init). */
static int wait_listening(const struct sockaddr_in *sa, double timeout_s)
{
    int fd = outsider_dial_when_listening(sa, timeout_s);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

typedef struct {
    struct sockaddr_in target;
    int fds[IN_FLIGHT];
    int next;             /* the ring slot the next connection takes */
    long attempts;
    long established;     /* connections the kernel completed (counted when they retire) */
} flood_t;

/* A connection counts once the TCP handshake completed: at once on loopback when PE 0's
 * accept queue has room, else later (its SYN waits in the queue or is retried). */
static void retire(flood_t *f, int fd)
{
    if (fd < 0)
        return;
    int err = 0;
    socklen_t len = sizeof err;
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 &&
        getpeername(fd, (struct sockaddr *)&peer, &plen) == 0)
        f->established++;
    close(fd);
}

static void open_one(flood_t *f)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return;
    f->attempts++;
    if (connect(fd, (const struct sockaddr *)&f->target, sizeof f->target) != 0 && errno != EINPROGRESS) {
        close(fd);
        return;
    }
    retire(f, f->fds[f->next]);
    f->fds[f->next] = fd;
    f->next = (f->next + 1) % IN_FLIGHT;
}

/* Opens connections at PACE_RATE a second for ms milliseconds, in 1 ms steps. */
static void flood_for(flood_t *f, int ms)
{
    double start = harness_now();
    long opened = 0;
    for (;;) {
        double elapsed = harness_now() - start;
        if (elapsed * 1000 >= ms)
            return;
        long due = (long)(elapsed * PACE_RATE);
        while (opened < due) {
            open_one(f);
            opened++;
        }
        usleep(1000);
    }
}

static void flooder(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < IN_FLIGHT + 64) {
        rl.rlim_cur = rl.rlim_max < IN_FLIGHT + 64 ? rl.rlim_max : IN_FLIGHT + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    static flood_t f;
    f.target = outsider_pe0_address(harness_uid());
    for (int i = 0; i < IN_FLIGHT; i++)
        f.fds[i] = -1;
    ASSERT_EQ(wait_listening(&f.target, 30.0), 0);
    double t0 = harness_now();
    flood_for(&f, HEAD_START_MS);
    harness_send(1, MSG_GO, NULL, 0);
    flood_for(&f, FLOOD_MS - HEAD_START_MS);
    double secs = harness_now() - t0;
    for (int i = 0; i < IN_FLIGHT; i++)
        retire(&f, f.fds[i]);
    double rate = (double)f.established / secs;
    harness_log("flood: %ld connections opened, %ld established in %.2f s: %.0f a second", f.attempts,
                f.established, secs, rate);
    EXPECT_GE((long)rate, FLOOD_RATE);
    harness_send(0, MSG_DONE, NULL, 0);
    harness_send(1, MSG_DONE, NULL, 0);
}

static void job_pe(int me)
{
    if (me == 1)
        ASSERT_GE(harness_recv(MSG_GO, JOB_PES, NULL, 0, 60000), 0);
    aclshmemx_init_attr_t attr;
    aclshmemx_uniqueid_t uid = *harness_uid();
    ASSERT_EQ(harness_make_attr(me, JOB_PES, &uid, &attr), 0);
    attr.option_attr.shm_init_timeout = INIT_TIMEOUT_S;
    attr.option_attr.shm_create_timeout = INIT_TIMEOUT_S;
    attr.option_attr.control_operation_timeout = INIT_TIMEOUT_S;
    double t0 = harness_now();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    harness_log("PE %d: init returned %d after %.2f s%s%s", me, rc, harness_now() - t0,
                rc ? ": " : "", rc ? aclshmemx_get_last_error() : "");
    EXPECT_EQ(rc, ACLSHMEM_SUCCESS);
    /* The job stays up until the flood is over: finalize would close the port. */
    ASSERT_GE(harness_recv(MSG_DONE, JOB_PES, NULL, 0, 60000), 0);
    if (rc == ACLSHMEM_SUCCESS) {
        harness_ring_check(me, JOB_PES);
        EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    }
}

static int t_flood(int me, int n)
{
    ASSERT_EQ(n, JOB_PES + 1);
    if (me == JOB_PES)
        flooder();
    else
        job_pe(me);
    return 0;
}

/* ---- a middlebox that drops connections before authentication ------------------------- */

#define UID_PORT_OFF 6   /* src/bootstrap/uid.h: PE 0's port, network order */
#define UID_SECRET_OFF 24
#define DROPS_BEFORE_JOIN 3
#define DROP_ALL (-1)

typedef struct {
    int listen_fd;
    int port;
    struct sockaddr_in target; /* PE 0 */
    int drops;                 /* connections to close before forwarding one; DROP_ALL */
    int seen;                  /* connections accepted */
    int stop[2];
    pthread_t thread;
} middlebox_t;

static int stop_requested(const middlebox_t *m, int timeout_ms)
{
    struct pollfd pfd = {.fd = m->stop[0], .events = POLLIN};
    return poll(&pfd, 1, timeout_ms) > 0;
}

/* Closes c once it has sent something (the TLS ClientHello), or after 200 ms of silence (a
 * client without TLS waits for the server to speak first). */
static void drop(int c)
{
    struct pollfd pfd = {.fd = c, .events = POLLIN};
    (void)poll(&pfd, 1, 200);
    close(c);
}

/* Relays bytes both ways between c and PE 0 until either side closes or the test stops. */
static void forward(middlebox_t *m, int c)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (const struct sockaddr *)&m->target, sizeof m->target) != 0) {
        harness_report(__FILE__, __LINE__, "middlebox: cannot reach PE 0");
        close(c);
        if (s >= 0)
            close(s);
        return;
    }
    char buf[16384];
    for (int open = 1; open;) {
        struct pollfd pfd[3] = {{.fd = m->stop[0], .events = POLLIN}, {.fd = c, .events = POLLIN},
                                {.fd = s, .events = POLLIN}};
        if (poll(pfd, 3, 200) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents)
            break;
        for (int side = 1; side <= 2 && open; side++) {
            if (!pfd[side].revents)
                continue;
            ssize_t n = recv(pfd[side].fd, buf, sizeof buf, 0);
            open = n > 0 && send(side == 1 ? s : c, buf, (size_t)n, MSG_NOSIGNAL) == n;
        }
    }
    close(c);
    close(s);
}

static void *middlebox_main(void *arg)
{
    middlebox_t *m = arg;
    while (!stop_requested(m, 0)) {
        struct pollfd pfd = {.fd = m->listen_fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        int c = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        if (m->drops == DROP_ALL || m->seen < m->drops)
            drop(c);
        else
            forward(m, c);
        m->seen++;
    }
    return NULL;
}

static int middlebox_start(middlebox_t *m, const aclshmemx_uniqueid_t *uid, int drops)
{
    memset(m, 0, sizeof *m);
    m->target = outsider_pe0_address(uid);
    m->drops = drops;
    m->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (m->listen_fd < 0 || bind(m->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(m->listen_fd, 16) != 0 || getsockname(m->listen_fd, (struct sockaddr *)&sa, &len) != 0 ||
        pipe(m->stop) != 0)
        return -1;
    m->port = ntohs(sa.sin_port);
    return pthread_create(&m->thread, NULL, middlebox_main, m) == 0 ? 0 : -1;
}

static void middlebox_stop(middlebox_t *m)
{
    char c = 1;
    if (write(m->stop[1], &c, 1) != 1)
        harness_report(__FILE__, __LINE__, "cannot stop the middlebox");
    pthread_join(m->thread, NULL);
    close(m->listen_fd);
    close(m->stop[0]);
    close(m->stop[1]);
}

/* uid, with PE 0's port replaced by the middlebox's. */
static aclshmemx_uniqueid_t via(const aclshmemx_uniqueid_t *uid, const middlebox_t *m)
{
    aclshmemx_uniqueid_t out = *uid;
    uint16_t port = htons((uint16_t)m->port);
    memcpy(out.internal + UID_PORT_OFF, &port, sizeof port);
    return out;
}

static int init_pe(int me, int n, aclshmemx_uniqueid_t *uid, uint32_t timeout_s, double *elapsed)
{
    aclshmemx_init_attr_t attr;
    ASSERT_EQ(harness_make_attr(me, n, uid, &attr), 0);
    attr.option_attr.shm_init_timeout = timeout_s;
    attr.option_attr.shm_create_timeout = timeout_s;
    attr.option_attr.control_operation_timeout = timeout_s;
    double t0 = harness_now();
    harness_mark_error();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    *elapsed = harness_now() - t0;
    harness_log("PE %d: init returned %d after %.2f s%s%s", me, rc, *elapsed, rc ? ": " : "",
                rc ? aclshmemx_get_last_error() : "");
    return rc;
}

/* PE 1's first DROPS_BEFORE_JOIN connections are dropped; it tries again and joins. */
static int t_dropped_then_joins(int me, int n)
{
    aclshmemx_uniqueid_t uid = *harness_uid();
    middlebox_t m;
    if (me == 1) {
        ASSERT_EQ(middlebox_start(&m, &uid, DROPS_BEFORE_JOIN), 0);
        uid = via(&uid, &m);
    }
    double elapsed;
    ASSERT_EQ(init_pe(me, n, &uid, 20, &elapsed), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    if (me == 1) {
        middlebox_stop(&m);
        EXPECT_EQ(m.seen, DROPS_BEFORE_JOIN + 1);
        EXPECT_LT(elapsed, 5.0); /* the waits between tries start short */
    }
    return 0;
}

/* Nobody gets past the middlebox: init fails when its timeout is up, and says why. */
static int t_always_dropped(int me, int n)
{
    (void)n;
    aclshmemx_uniqueid_t uid = *harness_uid(); /* PE 0 never starts: the middlebox is all */
    middlebox_t m;
    ASSERT_EQ(middlebox_start(&m, &uid, DROP_ALL), 0);
    uid = via(&uid, &m);
    double elapsed;
    int rc = init_pe(me + 1, 2, &uid, 3, &elapsed);
    middlebox_stop(&m);
    EXPECT_EQ(rc, ACLSHMEM_TIMEOUT_ERROR);
    EXPECT_ERROR_SET();
    EXPECT_ERROR_CONTAINS("dropped");
    EXPECT_ERROR_CONTAINS("before authentication");
    EXPECT(!harness_contains(aclshmemx_get_last_error(), "unique ID"));
    EXPECT_GE(elapsed, 2.5);  /* it kept trying until the timeout... */
    EXPECT_LT(elapsed, 6.0);  /* ...and not much longer */
    EXPECT_GE(m.seen, 4);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    return 0;
}

/* A damaged secret is refused at once, although dropped connections are now retried. */
static int t_wrong_secret(int me, int n)
{
    aclshmemx_uniqueid_t uid = *harness_uid();
    double elapsed;
    if (me == 1) {
        aclshmemx_uniqueid_t bad = uid;
        bad.internal[UID_SECRET_OFF + 3] ^= 0x21;
        int rc = init_pe(1, n, &bad, 15, &elapsed);
        EXPECT_EQ(rc, ACLSHMEM_BOOTSTRAP_ERROR);
        EXPECT_ERROR_SET();
        EXPECT_LT(elapsed, 2.0);
        EXPECT(!harness_contains(aclshmemx_get_last_error(), "dropped"));
        if (rc == ACLSHMEM_SUCCESS)
            harness_abort();
    }
    /* PE 0 has been waiting for PE 1 all along: the job still forms. */
    ASSERT_EQ(init_pe(me, n, &uid, 20, &elapsed), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- one source address holds at most half the slots ----------------------------------- */

#define FROM_ONE_HOST 100 /* idle connections from 127.0.0.2: more than its share */
#define FROM_ANOTHER 40   /* then idle ones from 127.0.0.1: they fit in the other half */
#define SOURCE_SHARE 64   /* src/bootstrap/admission.h: SHMEMI_ADMISSION_PER_SOURCE */

static int dial_from(const struct sockaddr_in *to, const char *from)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in src = {.sin_family = AF_INET};
    inet_pton(AF_INET, from, &src.sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof src) != 0 ||
        connect(fd, (const struct sockaddr *)to, sizeof *to) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Waits up to 3 s for at least want of fds to be closed; returns how many are. */
static int wait_closed(const int *fds, int n, int want)
{
    int closed = 0;
    for (double until = harness_now() + 3.0; harness_now() < until; harness_sleep_ms(50))
        if ((closed = outsider_count_closed(fds, n)) >= want)
            break;
    return closed;
}

static void one_host_floods(void)
{
    struct sockaddr_in pe0 = outsider_pe0_address(harness_uid());
    ASSERT_EQ(wait_listening(&pe0, 30.0), 0);
    static int many[FROM_ONE_HOST], others[FROM_ANOTHER];
    for (int i = 0; i < FROM_ONE_HOST; i++)
        ASSERT_GE(many[i] = dial_from(&pe0, "127.0.0.2"), 0);
    int closed = wait_closed(many, FROM_ONE_HOST, FROM_ONE_HOST - SOURCE_SHARE);
    harness_log("127.0.0.2: %d of %d idle connections closed", closed, FROM_ONE_HOST);
    EXPECT_GE(closed, FROM_ONE_HOST - SOURCE_SHARE);
    /* The other half is still there for everyone else. */
    for (int i = 0; i < FROM_ANOTHER; i++)
        ASSERT_GE(others[i] = dial_from(&pe0, "127.0.0.1"), 0);
    for (int i = 0; i < 5; i++) { /* and the flood from 127.0.0.2 goes on: it pushes out its own */
        int fd = dial_from(&pe0, "127.0.0.2");
        if (fd >= 0)
            close(fd);
    }
    harness_sleep_ms(500);
    EXPECT_EQ(outsider_count_closed(others, FROM_ANOTHER), 0);
    harness_send(1, MSG_GO, NULL, 0);
    ASSERT_GE(harness_recv(MSG_DONE, 0, NULL, 0, 60000), 0);
    for (int i = 0; i < FROM_ONE_HOST; i++)
        close(many[i]);
    for (int i = 0; i < FROM_ANOTHER; i++)
        close(others[i]);
}

static int t_per_source_cap(int me, int n)
{
    (void)n;
    if (me == JOB_PES) {
        one_host_floods();
        return 0;
    }
    if (me == 1)
        ASSERT_GE(harness_recv(MSG_GO, JOB_PES, NULL, 0, 60000), 0);
    aclshmemx_uniqueid_t uid = *harness_uid();
    double elapsed;
    ASSERT_EQ(init_pe(me, JOB_PES, &uid, 20, &elapsed), ACLSHMEM_SUCCESS);
    harness_ring_check(me, JOB_PES);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    if (me == 0)
        harness_send(JOB_PES, MSG_DONE, NULL, 0);
    return 0;
}

static const harness_case cases[] = {
    {"idle_flood_tls", t_flood, {.no_init = 1, .tls = 1, .timeout_s = 60}, {JOB_PES + 1, JOB_PES + 1, JOB_PES + 1}},
    {"dropped_then_joins_tls", t_dropped_then_joins, {.no_init = 1, .tls = 1, .timeout_s = 60}, {2}},
    {"dropped_then_joins_plain", t_dropped_then_joins, {.no_init = 1, .timeout_s = 60}, {2}},
    {"always_dropped_tls", t_always_dropped, {.no_init = 1, .tls = 1, .timeout_s = 60}, {1}},
    {"always_dropped_plain", t_always_dropped, {.no_init = 1, .timeout_s = 60}, {1}},
    {"wrong_secret_tls", t_wrong_secret, {.no_init = 1, .tls = 1, .timeout_s = 60}, {2}},
    {"wrong_secret_plain", t_wrong_secret, {.no_init = 1, .timeout_s = 60}, {2}},
    {"per_source_cap", t_per_source_cap, {.no_init = 1, .tls = 1, .timeout_s = 60}, {JOB_PES + 1}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
