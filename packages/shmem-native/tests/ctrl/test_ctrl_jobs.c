/*
 * test_ctrl_jobs.c - real jobs (forked PEs over the shared library) while PE 0's control
 * port is under attack or taken (issue 11, defects 4 (TCP) and 5).
 *
 *  - flood_*: a job of 4 PEs initialises and finalizes normally while 64 idle and 16
 *    garbage-sending TCP clients sit on PE 0's port (an extra child plays the outsiders; it
 *    opens them after PE 0 listens and before the other PEs connect).  The old server let
 *    the job in but made PE 0's finalize wait until every outsider's handshake timed out.
 *  - port_in_use: with a fixed port (DEFAULT mode, tcp://127.0.0.1:PORT), a second job on
 *    the port of a running one fails at init with a message that the address is in use,
 *    and the running job is unharmed.  SO_REUSEPORT used to let both bind and split each
 *    other's connections.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "outsider.h"

#define MSG_GO 100   /* outsiders in place: the other PEs may init */
#define MSG_DONE 101 /* the job is over: the outsiders may leave */

#define IDLE_CLIENTS 64
#define GARBAGE_CLIENTS 16
#define JOB_PES 4 /* the last child of the run is the outsider */

static void send_garbage(int fd)
{
    unsigned char junk[512];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rand();
    ssize_t ignored = send(fd, junk, sizeof junk, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
}

static void outsider(void)
{
    struct sockaddr_in sa = outsider_pe0_address(harness_uid());
    static int fds[IDLE_CLIENTS + GARBAGE_CLIENTS];
    for (int i = 0; i < IDLE_CLIENTS + GARBAGE_CLIENTS; i++) {
        fds[i] = outsider_dial_when_listening(&sa, 30.0);
        ASSERT_GE(fds[i], 0);
        if (i >= IDLE_CLIENTS)
            send_garbage(fds[i]);
    }
    for (int pe = 1; pe < JOB_PES; pe++)
        harness_send(pe, MSG_GO, NULL, 0);
    /* Garbage keeps coming while the job initialises. */
    for (int round = 0; round < 5; round++) {
        harness_sleep_ms(20);
        for (int i = IDLE_CLIENTS; i < IDLE_CLIENTS + GARBAGE_CLIENTS; i++)
            send_garbage(fds[i]);
    }
    EXPECT_GE(harness_recv(MSG_DONE, 0, NULL, 0, 60000), 0);
    for (int i = 0; i < IDLE_CLIENTS + GARBAGE_CLIENTS; i++)
        close(fds[i]);
}

static void job_pe(int me)
{
    if (me != 0)
        ASSERT_GE(harness_recv(MSG_GO, JOB_PES, NULL, 0, 60000), 0);
    aclshmemx_init_attr_t attr;
    aclshmemx_uniqueid_t uid = *harness_uid();
    ASSERT_EQ(harness_make_attr(me, JOB_PES, &uid, &attr), 0);
    double t0 = harness_now();
    ASSERT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_SUCCESS);
    /* PE 0 waited for the outsiders to settle in; the others' init is what the flood
     * could slow down.  Normal is well under a second; the admission deadline is 5 s. */
    if (me != 0)
        EXPECT_LT(harness_now() - t0, 4.0);
    harness_ring_check(me, JOB_PES);
    /* Nor may idle outsiders hold up the end: PE 0's server used to wait for their
     * handshakes to time out before it stopped. */
    t0 = harness_now();
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    EXPECT_LT(harness_now() - t0, 3.0);
    if (me == 0)
        harness_send(JOB_PES, MSG_DONE, NULL, 0);
}

static int t_flood(int me, int n)
{
    ASSERT_EQ(n, JOB_PES + 1);
    if (me == JOB_PES)
        outsider();
    else
        job_pe(me);
    return 0;
}

/* ---- two jobs, one port ---------------------------------------------------------------- */
static int default_init(int me, int n, int port)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.my_pe = me;
    attr.n_pes = n;
    attr.local_mem_size = 64ULL << 20;
    attr.option_attr.shm_init_timeout = 5;
    attr.option_attr.shm_create_timeout = 5;
    attr.option_attr.control_operation_timeout = 5;
    snprintf(attr.ip_port, sizeof attr.ip_port, "tcp://127.0.0.1:%d", port);
    return aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
}

static int t_port_in_use(int me, int n)
{
    ASSERT_EQ(n, 3);
    int port = me == 0 ? harness_free_port() : 0;
    harness_bcast(&port, sizeof port);
    ASSERT(port > 1024);
    /* Children 0 and 1 are job A; child 2 is job B, with a secret of its own. */
    char secret[64];
    snprintf(secret, sizeof secret, "ctrl-port-test-%s-%d-%d", me < 2 ? "A" : "B", (int)getppid(), port);
    setenv("SHMEM_JOB_SECRET", secret, 1);
    if (me < 2) {
        ASSERT_EQ(default_init(me, 2, port), ACLSHMEM_SUCCESS);
        if (me == 0)
            harness_send(2, MSG_GO, NULL, 0);
        ASSERT_GE(harness_recv(MSG_DONE, 2, NULL, 0, 60000), 0);
        harness_ring_check(me, 2); /* job A is unharmed */
        EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
        return 0;
    }
    ASSERT_GE(harness_recv(MSG_GO, 0, NULL, 0, 60000), 0);
    char where[64];
    snprintf(where, sizeof where, "127.0.0.1:%d", port);
    double t0 = harness_now();
    EXPECT_REJECTED(EXPECT_EQ(default_init(0, 1, port), ACLSHMEM_BOOTSTRAP_ERROR), "already in use");
    EXPECT_ERROR_CONTAINS(where);
    EXPECT_LT(harness_now() - t0, 3.0);
    EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
    harness_send(0, MSG_DONE, NULL, 0);
    harness_send(1, MSG_DONE, NULL, 0);
    return 0;
}

static const harness_case cases[] = {
    {"flood_tls", t_flood, {.no_init = 1, .tls = 1, .timeout_s = 60}, {JOB_PES + 1}},
    {"flood_plain", t_flood, {.no_init = 1, .timeout_s = 60}, {JOB_PES + 1}},
    {"port_in_use", t_port_in_use, {.no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 60}, {3}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
