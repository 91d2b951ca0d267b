/* The socket hand-off of segment memfds between the PEs of one node, for a peer whose
 * memfds cannot be opened through /proc (see heap.c): each PE serves its memfds during init
 * on an abstract Unix socket.  The name is public (/proc/net/unix), so the server trusts
 * nobody: it accepts only processes of its own user (SO_PEERCRED), then only a proof of the
 * job secret, serves every connection at once (poll) and drops any that stays silent for
 * HANDOFF_CLIENT_MS, so idle clients cannot stall init.  The fetching side checks that the
 * server is of its user too, and that each memfd is sealed against resizing and has the
 * size it expects. */
#include "mem/handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/crypto.h"
#include "bootstrap/net.h"
#include "base/error.h"
#include "base/log.h"

/* The hand-off server: connections served at once, how long one may stay silent, and how
 * many may wait in the kernel's queue. */
#define HANDOFF_MAX_CLIENTS 32
#define HANDOFF_CLIENT_MS 5000
#define HANDOFF_BACKLOG 64

static int make_socket_address(const char *name, struct sockaddr_un *sun, socklen_t *len)
{
    memset(sun, 0, sizeof(*sun));
    sun->sun_family = AF_UNIX;
    size_t n = strlen(name);
    if (n + 1 > sizeof(sun->sun_path))
        return -1;
    memcpy(sun->sun_path + 1, name, n); /* abstract namespace: leading NUL */
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    return 0;
}

static void socket_name(char *out, size_t len, const uint8_t secret[32], int pe)
{
    uint8_t tag[32];
    shmemi_sha256(secret, 32, tag);
    snprintf(out, len, "aclshmem-%02x%02x%02x%02x%02x%02x%02x%02x-%d", tag[0], tag[1], tag[2], tag[3],
             tag[4], tag[5], tag[6], tag[7], pe);
}

typedef struct {
    int32_t pe;
    uint8_t proof[SHMEMI_PROOF_LEN];
} handoff_request_t;

typedef struct {
    int fd; /* -1: a free slot */
    int64_t deadline;
    size_t got;
    handoff_request_t request;
} handoff_client_t;

struct shmemi_handoff {
    const shmemi_heap_set_t *h;
    shmemi_bootstrap_t *boot;
    const uint8_t *secret; /* the caller's, alive until stop */
    int64_t deadline;
    atomic_int stop;
    int stop_fd; /* readable once stop is set, so that the server's poll returns at once */
    pthread_t thread;
    handoff_client_t client[HANDOFF_MAX_CLIENTS];
};
typedef struct shmemi_handoff handoff_server_t;

/* 1 when the process at the other end of a Unix socket runs as our user. */
static int peer_is_same_user(int fd, struct ucred *cred)
{
    *cred = (struct ucred){.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1}; /* unknown until asked */
    socklen_t len = sizeof(*cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) != 0 || len != sizeof(*cred))
        return 0;
    return cred->uid == geteuid();
}

static void drop_client(handoff_client_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

/* A free slot; when all are taken, the oldest connection makes room, so a flood of
 * clients cannot lock legitimate ones out. */
static handoff_client_t *client_slot(handoff_server_t *s)
{
    handoff_client_t *oldest = &s->client[0];
    for (int i = 0; i < HANDOFF_MAX_CLIENTS; i++) {
        if (s->client[i].fd < 0)
            return &s->client[i];
        if (s->client[i].deadline < oldest->deadline)
            oldest = &s->client[i];
    }
    drop_client(oldest);
    return oldest;
}

static void accept_clients(handoff_server_t *s)
{
    for (int i = 0; i < HANDOFF_MAX_CLIENTS; i++) {
        int fd = accept4(s->h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        struct ucred cred;
        if (!peer_is_same_user(fd, &cred)) {
            SHMEMI_INFO("PE %d refused a memory-sharing connection from pid %d, uid %u: not our user",
                        s->h->my_pe, (int)cred.pid, (unsigned)cred.uid);
            close(fd);
            continue;
        }
        handoff_client_t *c = client_slot(s);
        *c = (handoff_client_t){.fd = fd, .deadline = shmemi_now_ms() + HANDOFF_CLIENT_MS};
    }
}

static int send_offer(int fd, const shmemi_heap_set_t *h)
{
    shmemi_fd_offer_t offer = {.pe = h->my_pe};
    int fds[SHMEMI_FILE_COUNT];
    size_t n = 0;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        offer.size[s] = h->seg[s].size;
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++)
        if (h->file_size[f] > 0)
            fds[n++] = h->file_fd[f];
    struct iovec iov = {.iov_base = &offer, .iov_len = sizeof(offer)};
    union {
        char buf[CMSG_SPACE(sizeof(fds))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = CMSG_SPACE(n * sizeof(int))};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
    return sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof(offer) ? 0 : -1;
}

/* Reads what the client has sent; once the whole request is there, answers it.  The
 * connection is finished (drop it) unless the request is still incomplete. */
static int serve_client(handoff_server_t *s, handoff_client_t *c)
{
    ssize_t n = recv(c->fd, (char *)&c->request + c->got, sizeof(c->request) - c->got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0)
        return 1;
    c->got += (size_t)n;
    if (c->got < sizeof(c->request))
        return 0;
    uint8_t expected[SHMEMI_PROOF_LEN];
    int32_t pe = c->request.pe;
    if (shmemi_proof(s->secret, "aclshmem-memfd", &pe, sizeof(pe), expected) == 0 &&
        shmemi_proof_equal(expected, c->request.proof) && pe >= 0 && pe < s->h->n_pes && pe != s->h->my_pe &&
        send_offer(c->fd, s->h) != 0)
        SHMEMI_INFO("PE %d could not hand its heaps to PE %d: %s", s->h->my_pe, pe, strerror(errno));
    return 1;
}

static void serve_ready_clients(handoff_server_t *s, const struct pollfd *pfd, const int *slot, int n)
{
    int64_t now = shmemi_now_ms();
    for (int i = 0; i < n; i++) {
        handoff_client_t *c = &s->client[slot[i]];
        if ((pfd[i].revents && serve_client(s, c)) || now >= c->deadline)
            drop_client(c);
    }
}

static void *serve_fds(void *p)
{
    handoff_server_t *s = p;
    for (int i = 0; i < HANDOFF_MAX_CLIENTS; i++)
        s->client[i].fd = -1;
    while (!atomic_load(&s->stop) && shmemi_now_ms() < s->deadline && !shmemi_bootstrap_failure(s->boot, NULL, 0)) {
        struct pollfd pfd[HANDOFF_MAX_CLIENTS + 2] = {{.fd = s->h->listen_fd, .events = POLLIN},
                                                      {.fd = s->stop_fd, .events = POLLIN}};
        int slot[HANDOFF_MAX_CLIENTS], n = 0;
        for (int i = 0; i < HANDOFF_MAX_CLIENTS; i++) {
            if (s->client[i].fd < 0)
                continue;
            pfd[n + 2] = (struct pollfd){.fd = s->client[i].fd, .events = POLLIN};
            slot[n++] = i;
        }
        if (poll(pfd, (nfds_t)n + 2, 50) < 0 && errno != EINTR)
            break;
        serve_ready_clients(s, pfd + 2, slot, n);
        if (pfd[0].revents)
            accept_clients(s);
    }
    for (int i = 0; i < HANDOFF_MAX_CLIENTS; i++)
        drop_client(&s->client[i]);
    return NULL;
}

/* Waits for fd to become readable until deadline, giving up early if a PE of the job died. */
static int wait_readable(int fd, shmemi_bootstrap_t *boot, int64_t deadline)
{
    while (shmemi_now_ms() < deadline && !shmemi_bootstrap_failure(boot, NULL, 0)) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) == 1)
            return 0;
    }
    return -1;
}

/* Keeps up to max of the fds that came with msg in fds[] and closes every other one, so
 * that nothing a peer sends can leak into this process.  Returns how many it kept. */
static int take_fds(struct msghdr *msg, int *fds, int max)
{
    int kept = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            if (kept < max)
                fds[kept++] = fd;
            else
                close(fd);
        }
    }
    return kept;
}

static void close_fds(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

int shmemi_file_fd_check(int fd, size_t expected, int f, int pe)
{
    const char *name = shmemi_file_name(f);
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & SHMEMI_HEAP_SEALS) != SHMEMI_HEAP_SEALS)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR,
                           "PE %d's %s is not sealed against resizing (seals 0x%x): refused, since a "
                           "resize would crash this PE", pe, name, seals < 0 ? 0 : seals);
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size != (uint64_t)expected)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d's %s is %lld bytes, not the %zu it announced: refused",
                           pe, name, (long long)st.st_size, expected);
    return ACLSHMEM_SUCCESS;
}

/* fds[] holds one fd per present file, in file order.  The segments' sizes are checked
 * first: they decide the files' sizes. */
static int check_offer(const shmemi_fd_offer_t *offer, const int *fds, int pe, const size_t size[SHMEMI_SEG_COUNT])
{
    if (offer->pe != pe)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d's memory-sharing socket answered as PE %d", pe, offer->pe);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        if (offer->size[s] != size[s])
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "PE %d's %s is %llu bytes but this PE's is %zu: every PE must use the "
                               "same %s", pe, shmemi_segment_name(s), (unsigned long long)offer->size[s], size[s],
                               s == SHMEMI_SEG_DATA ? "executable" : "local_mem_size");
    size_t offset[SHMEMI_SEG_COUNT], file_size[SHMEMI_FILE_COUNT];
    shmemi_segments_layout(size, offset, file_size);
    for (int f = 0, i = 0; f < SHMEMI_FILE_COUNT; f++)
        if (file_size[f] > 0)
            SHMEMI_TRY(shmemi_file_fd_check(fds[i++], file_size[f], f, pe));
    return ACLSHMEM_SUCCESS;
}

/* The fds of the present files, in order, spread into fds[] (-1 for absent ones). */
static void spread_fds(const int *present, const size_t size[SHMEMI_SEG_COUNT], int fds[SHMEMI_FILE_COUNT])
{
    size_t offset[SHMEMI_SEG_COUNT], file_size[SHMEMI_FILE_COUNT];
    shmemi_segments_layout(size, offset, file_size);
    for (int f = 0, i = 0; f < SHMEMI_FILE_COUNT; f++)
        fds[f] = file_size[f] > 0 ? present[i++] : -1;
}

/* How many fds an offer says come with it: one per file of the segments it announces. */
static int fds_announced(const shmemi_fd_offer_t *offer)
{
    size_t size[SHMEMI_SEG_COUNT], offset[SHMEMI_SEG_COUNT], file_size[SHMEMI_FILE_COUNT];
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        size[s] = (size_t)offer->size[s];
    shmemi_segments_layout(size, offset, file_size);
    int n = 0;
    for (int f = 0; f < SHMEMI_FILE_COUNT; f++)
        n += file_size[f] > 0;
    return n;
}

int shmemi_heap_receive_offer(int sock, int pe, const size_t size[SHMEMI_SEG_COUNT], int fds[SHMEMI_FILE_COUNT])
{
    shmemi_fd_offer_t offer;
    int all[SHMEMI_FILE_COUNT + 1];
    union {
        char buf[CMSG_SPACE(sizeof(all))]; /* room for one fd too many, so extras are seen and closed */
        struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = &offer, .iov_len = sizeof(offer)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    ssize_t got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    int n = got >= 0 ? take_fds(&msg, all, SHMEMI_FILE_COUNT + 1) : 0;
    int rc;
    if (got == 0 && n == 0)
        rc = shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d closed its memory-sharing connection without an answer", pe);
    else if (got != (ssize_t)sizeof(offer) || n != fds_announced(&offer) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        rc = shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d sent a malformed heap offer (%zd bytes, %d fds)", pe, got, n);
    else
        rc = check_offer(&offer, all, pe, size);
    if (rc != ACLSHMEM_SUCCESS) {
        close_fds(all, n);
        return rc;
    }
    spread_fds(all, size, fds);
    return ACLSHMEM_SUCCESS;
}

/* Connects to pe's hand-off socket, which must belong to a process of our user: otherwise
 * someone else took the name first and would be sent our proof and serve us fds. */
static int connect_handoff(const shmemi_heap_set_t *h, int pe, const uint8_t secret[32], int *out)
{
    char name[64];
    socket_name(name, sizeof(name), secret, pe);
    struct sockaddr_un sun;
    socklen_t len = 0;
    make_socket_address(name, &sun, &len);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sun, len) != 0) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d cannot reach PE %d's memory-sharing socket: %s",
                           h->my_pe, pe, strerror(saved));
    }
    struct ucred cred;
    if (!peer_is_same_user(fd, &cred)) {
        close(fd);
        return shmemi_fail(ACLSHMEM_SMEM_ERROR,
                           "PE %d's memory-sharing socket @%s is held by pid %d of uid %u, not by a process "
                           "of this user: refused", pe, name, (int)cred.pid, (unsigned)cred.uid);
    }
    *out = fd;
    return ACLSHMEM_SUCCESS;
}

/* One request for pe's memfds; *dropped is set when the server closed the connection
 * without answering (it was busy or we were slow), which is worth another try. */
static int fetch_once(const shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, int pe, const uint8_t secret[32],
                      int64_t deadline, int *dropped, int fds[SHMEMI_FILE_COUNT])
{
    int fd = -1;
    SHMEMI_TRY(connect_handoff(h, pe, secret, &fd));
    handoff_request_t request = {.pe = h->my_pe};
    shmemi_proof(secret, "aclshmem-memfd", &request.pe, sizeof(request.pe), request.proof);
    size_t size[SHMEMI_SEG_COUNT];
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        size[s] = h->seg[s].size;
    int rc = ACLSHMEM_TIMEOUT_ERROR;
    if (shmemi_send_all(fd, &request, sizeof(request), deadline) == 0 && wait_readable(fd, boot, deadline) == 0) {
        char byte;
        *dropped = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
        rc = *dropped ? ACLSHMEM_SMEM_ERROR : shmemi_heap_receive_offer(fd, pe, size, fds);
    }
    close(fd);
    char failure[256];
    int code = shmemi_bootstrap_failure(boot, failure, sizeof(failure));
    if (rc != ACLSHMEM_SUCCESS && code)
        return shmemi_fail(code, "%s", failure);
    if (rc == ACLSHMEM_TIMEOUT_ERROR || *dropped)
        return shmemi_fail(ACLSHMEM_TIMEOUT_ERROR, "PE %d did not receive PE %d's heaps", h->my_pe, pe);
    return rc;
}

int shmemi_handoff_fetch(const shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, int pe, const uint8_t secret[32],
                         int64_t deadline, int fds[SHMEMI_FILE_COUNT])
{
    for (;;) {
        int dropped = 0;
        int rc = fetch_once(h, boot, pe, secret, deadline, &dropped, fds);
        if (rc == ACLSHMEM_SUCCESS || !dropped || shmemi_now_ms() >= deadline)
            return rc;
        usleep(10000);
    }
}

int shmemi_handoff_listen(shmemi_heap_set_t *h, const uint8_t secret[32])
{
    socket_name(h->socket_name, sizeof(h->socket_name), secret, h->my_pe);
    struct sockaddr_un sun;
    socklen_t len = 0;
    make_socket_address(h->socket_name, &sun, &len);
    h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); /* accepted in a loop */
    if (h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&sun, len) != 0 ||
        listen(h->listen_fd, HANDOFF_BACKLOG) != 0)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR,
                           "PE %d cannot open its memory-sharing socket: %s (is another process "
                           "already PE %d of this job?)", h->my_pe, strerror(errno), h->my_pe);
    return ACLSHMEM_SUCCESS;
}

int shmemi_handoff_start(const shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, const uint8_t secret[32],
                         int64_t deadline, shmemi_handoff_t **out)
{
    handoff_server_t *server = calloc(1, sizeof(*server));
    if (!server)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    server->h = h;
    server->boot = boot;
    server->secret = secret;
    server->deadline = deadline;
    server->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (server->stop_fd < 0 || pthread_create(&server->thread, NULL, serve_fds, server) != 0) {
        if (server->stop_fd >= 0)
            close(server->stop_fd);
        free(server);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "cannot start the memory-sharing thread");
    }
    *out = server;
    return ACLSHMEM_SUCCESS;
}

void shmemi_handoff_stop(shmemi_handoff_t *server)
{
    if (!server)
        return;
    atomic_store(&server->stop, 1);
    uint64_t one = 1;
    if (write(server->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
        SHMEMI_WARN("cannot wake the memory-sharing thread: %s; it stops within 50 ms", strerror(errno));
    pthread_join(server->thread, NULL);
    close(server->stop_fd);
    free(server);
}
