/*
 * test_secret.c - who may join a job and take its memory (real PEs, sockets, memfds).
 *
 * DEFAULT mode (ip_port = tcp://host:port) has no unique ID to carry a secret:
 *  - with TLS on (the default) and neither SHMEM_JOB_SECRET nor certificates, init fails at
 *    once on every PE with ACLSHMEM_INVALID_PARAM and a message naming the three ways out;
 *  - a shared SHMEM_JOB_SECRET (also one of 4 KiB), or TLS certificates, let it run;
 *  - PEs with different secrets fail within the init timeout instead of forming a job;
 *  - TLS turned off by the user runs the job, with a warning that it is unauthenticated.
 * The same-node heap hand-off (an abstract Unix socket of each PE, visible in /proc/net/unix):
 *  - a job member that fetches PE 0's memfds cannot resize them (sealed), so PE 0 cannot be
 *    made to die of SIGBUS;
 *  - a process of another user gets no fds, even with the right proof;
 *  - idle clients sitting on every listening Unix socket of PE 0 do not delay init.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1ull << 20)
#define UID_SECRET_OFF 24 /* src/bootstrap/uid.h: the 32-byte secret in internal[] */
#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static char g_dir[256]; /* certificates, made once by main() */

/* ---- DEFAULT mode ------------------------------------------------------------------------ */

static int shared_port(int me)
{
    int port = me == 0 ? harness_free_port() : 0;
    harness_bcast(&port, sizeof port);
    return port;
}

/* A random text from PE 0, the same on every PE. */
static void shared_random_text(int me, char *out, size_t len)
{
    char text[65] = {0};
    if (me == 0) {
        FILE *f = fopen("/dev/urandom", "rb");
        unsigned char raw[32];
        if (!f || fread(raw, 1, sizeof raw, f) != sizeof raw)
            harness_abort();
        fclose(f);
        for (int i = 0; i < 32; i++)
            snprintf(text + 2 * i, 3, "%02x", raw[i]);
    }
    harness_bcast(text, sizeof text);
    snprintf(out, len, "%s", text);
}

static int default_init(int me, int n, int port, uint32_t timeout_s, double *elapsed)
{
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    attr.my_pe = me;
    attr.n_pes = n;
    attr.local_mem_size = 64 * MiB;
    attr.option_attr.shm_init_timeout = timeout_s;
    attr.option_attr.shm_create_timeout = timeout_s;
    attr.option_attr.control_operation_timeout = timeout_s;
    snprintf(attr.ip_port, sizeof attr.ip_port, "tcp://127.0.0.1:%d", port);
    double t0 = harness_now();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_DEFAULT, &attr);
    if (elapsed)
        *elapsed = harness_now() - t0;
    return rc;
}

/* Inits in DEFAULT mode, proves the job works, finalizes. */
static void default_job(int me, int n)
{
    int port = shared_port(me);
    ASSERT_EQ(default_init(me, n, port, 30, NULL), ACLSHMEM_SUCCESS);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    harness_sync(); /* the port is free again before the next job picks one */
}

static int t_default_needs_secret(int me, int n)
{
    static const char *secrets[] = {NULL, ""}; /* unset, and set but empty */
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++) {
        if (secrets[i])
            setenv("SHMEM_JOB_SECRET", secrets[i], 1);
        else
            unsetenv("SHMEM_JOB_SECRET");
        int port = shared_port(me);
        double elapsed = 0;
        harness_mark_error();
        int rc = default_init(me, n, port, 20, &elapsed);
        EXPECT_EQ(rc, ACLSHMEM_INVALID_PARAM);
        if (rc == ACLSHMEM_SUCCESS) {
            aclshmem_finalize();
            continue;
        }
        EXPECT_LT(elapsed, 1.0); /* at once, not after a timeout */
        EXPECT_ERROR_CONTAINS("SHMEM_JOB_SECRET");
        EXPECT_ERROR_CONTAINS("certificate");
        EXPECT_ERROR_CONTAINS("aclshmemx_set_conf_store_tls(false");
        EXPECT_EQ(aclshmemx_init_status(), ACLSHMEM_STATUS_NOT_INITIALIZED);
        harness_sync();
    }
    /* The same PEs then run once they share a secret. */
    char secret[65];
    shared_random_text(me, secret, sizeof secret);
    setenv("SHMEM_JOB_SECRET", secret, 1);
    default_job(me, n);
    return 0;
}

static int t_default_with_secret(int me, int n)
{
    char seed[65];
    shared_random_text(me, seed, sizeof seed);
    setenv("SHMEM_JOB_SECRET", seed, 1);
    default_job(me, n);

    /* A 4 KiB secret: every byte counts, nothing is read past a buffer. */
    size_t len = 4096;
    char *big = malloc(len + 1);
    ASSERT_NOT_NULL(big);
    for (size_t i = 0; i < len; i++)
        big[i] = seed[i % 64];
    big[len] = '\0';
    setenv("SHMEM_JOB_SECRET", big, 1);
    default_job(me, n);

    /* TLS off with a secret: not encrypted, still authenticated, so no warning is due. */
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, NULL, 0), ACLSHMEM_SUCCESS);
    default_job(me, n);
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 0), ACLSHMEM_SUCCESS);
    free(big);
    return 0;
}

/* Secrets that differ (in the last byte of 4 KiB, too) must not form a job, and nobody
 * waits past the init timeout. */
static void different_secrets(int me, int n, size_t len)
{
    char seed[65];
    shared_random_text(me, seed, sizeof seed);
    char *secret = malloc(len + 1);
    ASSERT_NOT_NULL(secret);
    for (size_t i = 0; i < len; i++)
        secret[i] = seed[i % 64];
    secret[len] = '\0';
    if (me == n - 1)
        secret[len - 1] = secret[len - 1] == 'x' ? 'y' : 'x';
    setenv("SHMEM_JOB_SECRET", secret, 1);
    free(secret);
    int port = shared_port(me);
    const uint32_t timeout_s = 3;
    double elapsed = 0;
    harness_mark_error();
    int rc = default_init(me, n, port, timeout_s, &elapsed);
    EXPECT_NE(rc, ACLSHMEM_SUCCESS);
    if (rc == ACLSHMEM_SUCCESS) {
        aclshmem_finalize();
    } else {
        EXPECT_ERROR_SET();
        EXPECT_LT(elapsed, timeout_s + 4.0);
    }
    harness_sync();
}

static int t_default_different_secrets(int me, int n)
{
    different_secrets(me, n, 64);   /* TLS on: the PSK handshake refuses */
    different_secrets(me, n, 4096); /* the difference is at byte 4095 */
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, NULL, 0), ACLSHMEM_SUCCESS);
    different_secrets(me, n, 64);   /* TLS off: the HMAC proof refuses */
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 0), ACLSHMEM_SUCCESS);
    return 0;
}

static atomic_int g_unauthenticated_warnings;

static void capture_log(int level, const char *msg)
{
    if (level >= 2 && harness_contains(msg, "unauthenticated") && harness_contains(msg, "SHMEM_JOB_SECRET"))
        atomic_fetch_add(&g_unauthenticated_warnings, 1);
}

static int t_default_tls_off_warns(int me, int n)
{
    unsetenv("SHMEM_JOB_SECRET");
    EXPECT_EQ(aclshmemx_set_conf_store_tls(false, NULL, 0), ACLSHMEM_SUCCESS);
    aclshmemx_set_log_level(2);
    aclshmemx_set_extern_logger(capture_log);
    default_job(me, n);
    aclshmemx_set_extern_logger(NULL);
    EXPECT_EQ(atomic_load(&g_unauthenticated_warnings), 1);
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 0), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- certificates (openssl CLI) ---------------------------------------------------------- */

static int make_certificate(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/aclshmem-secret-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout key.pem -out cert.pem -days 3 -subj /CN=aclshmem-pe >openssl.log 2>&1",
             g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void remove_certificate(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (g_dir[0] && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", g_dir);
}

static int t_default_certificates(int me, int n)
{
    unsetenv("SHMEM_JOB_SECRET");
    char info[1024];
    snprintf(info, sizeof info, "tlsCaFile: %s/cert.pem; tlsCert: %s/cert.pem; tlsPk: %s/key.pem", g_dir, g_dir,
             g_dir);
    ASSERT_EQ(aclshmemx_set_conf_store_tls(true, info, (uint32_t)strlen(info)), ACLSHMEM_SUCCESS);
    default_job(me, n);
    EXPECT_EQ(aclshmemx_set_conf_store_tls(true, NULL, 0), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- the heap hand-off, as a member of the job or an outsider would use it ------------------ */

static const uint8_t *uid_secret(void)
{
    return (const uint8_t *)harness_uid()->internal + UID_SECRET_OFF;
}

/* The name the library gives PE pe's hand-off socket (src/mem/heap.c socket_name). */
static void handoff_name(int pe, char *out, size_t len)
{
    uint8_t tag[32];
    unsigned int tag_len = 32;
    EVP_Digest(uid_secret(), 32, tag, &tag_len, EVP_sha256(), NULL);
    snprintf(out, len, "aclshmem-%02x%02x%02x%02x%02x%02x%02x%02x-%d", tag[0], tag[1], tag[2], tag[3], tag[4],
             tag[5], tag[6], tag[7], pe);
}

static int connect_abstract(const char *name)
{
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    size_t n = strlen(name);
    memcpy(sun.sun_path + 1, name, n);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Connects to PE 0's hand-off socket as soon as it exists (within timeout_ms). */
static int connect_when_listening(const char *name, int timeout_ms)
{
    double end = harness_now() + timeout_ms / 1000.0;
    for (;;) {
        int fd = connect_abstract(name);
        if (fd >= 0 || harness_now() > end)
            return fd;
        harness_sleep_ms(2);
    }
}

/* What a PE sends to ask for a peer's memfds: its number and the proof of the job secret. */
static int send_request(int fd, int32_t pe)
{
    struct {
        int32_t pe;
        uint8_t proof[32];
    } request = {.pe = pe};
    uint8_t data[14 + sizeof(int32_t)];
    memcpy(data, "aclshmem-memfd", 14);
    memcpy(data + 14, &pe, sizeof pe);
    unsigned int len = 32;
    HMAC(EVP_sha256(), uid_secret(), 32, data, sizeof data, request.proof, &len);
    return send(fd, &request, sizeof request, MSG_NOSIGNAL) == (ssize_t)sizeof request ? 0 : -1;
}

/* Waits up to timeout_ms for the answer; returns the number of fds received (0 when the
 * server closed the connection without any), or -1 on timeout. */
static int receive_fds(int fd, int *fds, int max, int timeout_ms)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    if (poll(&pfd, 1, timeout_ms) != 1)
        return -1;
    char data[64];
    union {
        char buf[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    if (recvmsg(fd, &msg, MSG_CMSG_CLOEXEC) <= 0)
        return 0;
    int n = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
        for (size_t i = 0; cm->cmsg_type == SCM_RIGHTS && i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
            int got;
            memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof got);
            if (n < max)
                fds[n++] = got;
            else
                close(got);
        }
    return n;
}

/* A member of the job (it knows the secret) fetches PE 0's memfds, posing as PE 1, and
 * tries to resize them under PE 0's mappings. */
typedef struct {
    int fd;           /* connected to PE 0's hand-off socket, request sent */
    pthread_t thread;
    int n_fds;        /* received */
    int sealed;       /* how many carried all of SEALS */
    int resized;      /* how many ftruncate calls succeeded */
} resizer_t;

static void *resize_peer_heaps(void *p)
{
    resizer_t *r = p;
    int fds[8];
    r->n_fds = receive_fds(r->fd, fds, 8, 60000);
    for (int i = 0; i < r->n_fds; i++) {
        int seals = fcntl(fds[i], F_GET_SEALS);
        r->sealed += seals >= 0 && (seals & SEALS) == SEALS;
        struct stat st;
        if (fstat(fds[i], &st) == 0) {
            r->resized += ftruncate(fds[i], 0) == 0;             /* PE 0 would die of SIGBUS */
            r->resized += ftruncate(fds[i], st.st_size * 2) == 0; /* or see its heap change size */
        }
        close(fds[i]);
    }
    close(r->fd);
    return NULL;
}

static int t_heap_fds_sealed(int me, int n)
{
    resizer_t r = {.fd = -1};
    /* PE 0 hides its files from /proc, so PE 1 fetches them over PE 0's hand-off socket,
     * which then serves until every PE is mapped: the impostor queued first is served too.
     * (Through /proc, PE 1 could be done, and the socket closed, before it got its turn.) */
    harness_drop_ptrace_capability();
    if (me == 0)
        EXPECT_EQ(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), 0);
    harness_sync();
    if (me == 1) {
        char name[64];
        handoff_name(0, name, sizeof name);
        /* PE 0's socket exists from the start of its init; be first in its queue. */
        r.fd = connect_when_listening(name, 30000);
        ASSERT(r.fd >= 0);
        ASSERT_EQ(send_request(r.fd, 1), 0);
        ASSERT_EQ(pthread_create(&r.thread, NULL, resize_peer_heaps, &r), 0);
    }
    aclshmemx_init_attr_t attr;
    aclshmemx_uniqueid_t uid = *harness_uid();
    ASSERT_EQ(harness_make_attr(me, n, &uid, &attr), ACLSHMEM_SUCCESS);
    attr.option_attr.shm_init_timeout = 20;
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    EXPECT_EQ(rc, ACLSHMEM_SUCCESS); /* serving a member that posed as PE 1 did not cost PE 1 its turn */
    if (me == 1) {
        pthread_join(r.thread, NULL);
        EXPECT_EQ(r.n_fds, 1); /* one memfd holds both heaps and the control segment */
        EXPECT_EQ(r.sealed, r.n_fds);
        EXPECT_EQ(r.resized, 0);
    }
    if (rc != ACLSHMEM_SUCCESS)
        return 0;
    aclshmem_barrier_all();
    /* PE 0 touches all of its heap: a shrunk memfd would kill it here. */
    size_t size = 16 * MiB;
    uint8_t *p = aclshmem_malloc(size);
    ASSERT_NOT_NULL(p);
    memset(p, 0x5A, size);
    harness_ring_check(me, n);
    aclshmem_free(p);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* A process of another user (nobody) with the right proof: the server must give it no fds. */
static pid_t start_other_user_client(int ready_pipe)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    char name[64];
    handoff_name(0, name, sizeof name);
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
        _exit(3);
    int fd = connect_when_listening(name, 30000);
    char byte = fd >= 0 && send_request(fd, 1) == 0 ? 'c' : 'x';
    if (write(ready_pipe, &byte, 1) != 1 || byte != 'c')
        _exit(2);
    int fds[8];
    int got = receive_fds(fd, fds, 8, 60000);
    _exit(got == 0 ? 0 : got > 0 ? 1 : 4);
}

static int t_heap_other_user_refused(int me, int n)
{
    pid_t child = -1;
    if (me == 1) {
        int ready[2];
        ASSERT_EQ(pipe(ready), 0);
        child = start_other_user_client(ready[1]);
        ASSERT(child > 0);
        char byte = 0;
        EXPECT_EQ(read(ready[0], &byte, 1), 1);
        EXPECT_EQ(byte, 'c');
        close(ready[0]);
        close(ready[1]);
    }
    aclshmemx_init_attr_t attr;
    aclshmemx_uniqueid_t uid = *harness_uid();
    ASSERT_EQ(harness_make_attr(me, n, &uid, &attr), ACLSHMEM_SUCCESS);
    attr.option_attr.shm_init_timeout = 20;
    ASSERT_EQ(aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr), ACLSHMEM_SUCCESS);
    if (me == 1) {
        int status = 0;
        EXPECT_EQ(waitpid(child, &status, 0), child);
        /* 0: connection closed without fds; 1: it got PE 0's heaps */
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
            harness_log("the other-user client exited with %d", WEXITSTATUS(status));
    }
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    return 0;
}

/* ---- idle clients on every listening Unix socket of PE 0 ----------------------------------- */

/* The abstract names of the listening Unix sockets that process pid holds. */
static int listening_unix_names(pid_t pid, char names[][108], int max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    unsigned long inodes[256];
    int n_inodes = 0;
    for (struct dirent *e = readdir(d); e && n_inodes < 256; e = readdir(d)) {
        char link[320], target[64];
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        if (sscanf(target, "socket:[%lu]", &inodes[n_inodes]) == 1)
            n_inodes++;
    }
    closedir(d);
    FILE *f = fopen("/proc/net/unix", "r");
    if (!f)
        return 0;
    char line[512];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        unsigned long flags, inode;
        char name[108] = "";
        if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %107s", &flags, &inode, name) != 3)
            continue;
        if (!(flags & 0x10000) || name[0] != '@') /* __SO_ACCEPTCON: listening */
            continue;
        for (int i = 0; i < n_inodes; i++)
            if (inodes[i] == inode)
                snprintf(names[n++], 108, "%.106s", name + 1);
    }
    fclose(f);
    return n;
}

#define IDLE_PER_SOCKET 4
#define IDLE_MAX 64

typedef struct {
    pid_t target;
    char handoff[64];  /* the hand-off socket's name, which must be among those found */
    atomic_int stop;
    atomic_int handoff_covered;
    int fds[IDLE_MAX];
    int n_fds;
    pthread_t thread;
} idler_t;

/* Keeps IDLE_PER_SOCKET silent connections on each listening Unix socket of the target
 * as soon as it appears, until told to stop. */
static void *sit_idle(void *p)
{
    idler_t *w = p;
    char done[16][108];
    int n_done = 0;
    while (!atomic_load(&w->stop)) {
        char names[16][108];
        int n = listening_unix_names(w->target, names, 16);
        for (int i = 0; i < n; i++) {
            int seen = 0;
            for (int j = 0; j < n_done; j++)
                seen |= strcmp(done[j], names[i]) == 0;
            if (seen || n_done == 16)
                continue;
            for (int k = 0; k < IDLE_PER_SOCKET && w->n_fds < IDLE_MAX; k++) {
                int fd = connect_abstract(names[i]);
                if (fd >= 0)
                    w->fds[w->n_fds++] = fd;
            }
            memcpy(done[n_done++], names[i], 108);
            if (strcmp(names[i], w->handoff) == 0)
                atomic_store(&w->handoff_covered, 1);
        }
        harness_sleep_ms(2);
    }
    return NULL;
}

static int t_idle_unix_clients(int me, int n)
{
    int pid0 = (int)getpid();
    harness_bcast(&pid0, sizeof pid0);
    idler_t w = {.target = pid0};
    handoff_name(0, w.handoff, sizeof w.handoff);
    if (me == 1) {
        ASSERT_EQ(pthread_create(&w.thread, NULL, sit_idle, &w), 0);
        /* PE 0 is in init (its socket exists) once the idlers are in place; only then do
         * the other PEs start, so the hand-off meets the idle clients first. */
        for (double end = harness_now() + 30; !atomic_load(&w.handoff_covered) && harness_now() < end;)
            harness_sleep_ms(5);
        EXPECT(atomic_load(&w.handoff_covered));
        for (int pe = 2; pe < n; pe++)
            harness_send(pe, 101, "go", 2);
    } else if (me > 1) {
        char go[8];
        EXPECT_EQ(harness_recv(101, 1, go, sizeof go, 40000), 2);
    }
    aclshmemx_init_attr_t attr;
    aclshmemx_uniqueid_t uid = *harness_uid();
    ASSERT_EQ(harness_make_attr(me, n, &uid, &attr), ACLSHMEM_SUCCESS);
    attr.option_attr.shm_init_timeout = 30;
    double t0 = harness_now();
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    double elapsed = harness_now() - t0;
    EXPECT_EQ(rc, ACLSHMEM_SUCCESS);
    EXPECT_LT(elapsed, 10.0); /* the idle clients cost nothing like the 30 s timeout */
    harness_sync(); /* PE 0's init has returned too: it closes its socket at the end of init */
    if (me == 1) {
        atomic_store(&w.stop, 1);
        pthread_join(w.thread, NULL);
        EXPECT_GE(w.n_fds, IDLE_PER_SOCKET);
        /* The hand-off socket is gone once init is done: nobody can queue on it for the
         * life of the job. */
        char names[16][108];
        int found = listening_unix_names(pid0, names, 16);
        for (int i = 0; i < found; i++)
            EXPECT(strcmp(names[i], w.handoff) != 0);
        for (int i = 0; i < w.n_fds; i++)
            close(w.fds[i]);
    }
    if (rc == ACLSHMEM_SUCCESS) {
        harness_ring_check(me, n);
        EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    }
    return 0;
}

static const harness_case cases[] = {
    {"default_needs_secret", t_default_needs_secret, {.no_init = 1, .no_uid = 1, .tls = 1}, {1, 2, 4}},
    {"default_with_secret", t_default_with_secret, {.no_init = 1, .no_uid = 1, .tls = 1}, {2, 4}},
    {"default_different_secrets", t_default_different_secrets, {.no_init = 1, .no_uid = 1, .tls = 1, .timeout_s = 90}, {2, 3}},
    {"default_tls_off_warns", t_default_tls_off_warns, {.no_init = 1, .no_uid = 1}, {2}},
    {"default_certificates", t_default_certificates, {.no_init = 1, .no_uid = 1, .tls = 1}, {2}},
    {"heap_fds_sealed", t_heap_fds_sealed, {.no_init = 1}, {2, 4}},
    {"heap_other_user_refused", t_heap_other_user_refused, {.no_init = 1}, {2}},
    {"idle_unix_clients", t_idle_unix_clients, {.no_init = 1}, {2, 4}},
};

int main(int argc, char **argv)
{
    unsetenv("SHMEM_JOB_SECRET"); /* the cases set it as they need */
    size_t n_cases = sizeof cases / sizeof cases[0];
    harness_case run[sizeof cases / sizeof cases[0]];
    size_t n_run = 0;
    int have_cert = make_certificate() == 0;
    if (!have_cert)
        fprintf(stderr, "note: no openssl CLI: default_certificates is skipped\n");
    for (size_t i = 0; i < n_cases; i++) {
        if (!have_cert && strcmp(cases[i].name, "default_certificates") == 0)
            continue;
        if (geteuid() != 0 && strcmp(cases[i].name, "heap_other_user_refused") == 0) {
            fprintf(stderr, "note: not root, cannot run a client as another user: heap_other_user_refused is skipped\n");
            continue;
        }
        run[n_run++] = cases[i];
    }
    int rc = harness_main(argc, argv, run, n_run);
    remove_certificate();
    return rc;
}
