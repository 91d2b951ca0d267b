#include "mem/heap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/crypto.h"
#include "bootstrap/net.h"
#include "core/error.h"
#include "core/log.h"

/* The hand-off server: connections served at once, how long one may stay silent, and how
 * many may wait in the kernel's queue. */
#define HANDOFF_MAX_CLIENTS 32
#define HANDOFF_CLIENT_MS 5000
#define HANDOFF_BACKLOG 64
/* The collective that ends the hand-off uses the caller's key plus this. */
#define HEAPS_DONE_KEY_OFFSET 0x100

static const char *const segment_names[SHMEMI_SEG_COUNT] = {"aclshmem-host-heap", "aclshmem-device-heap",
                                                            "aclshmem-control", "aclshmem-data"};

/* What a PE tells the others so they can tell whether it shares their node, and which data
 * segment it shares (every PE must share the same one, or none). */
typedef struct {
    char boot_id[40];
    uint64_t netns;
    int32_t pid;
    int32_t shares_data; /* init was asked to share the program's data */
    uint64_t data_size;
    uint64_t data_link; /* its link-time address: with the size, tells executables apart */
} node_info_t;

static int segment_present(const shmemi_heap_set_t *h, int s)
{
    return h->seg[s].size > 0;
}

/* Maps fd at an address that is skew bytes past a multiple of SHMEMI_HEAP_ALIGN.  This PE's
 * own heaps get skew 0, so an alignment asked of the allocator (which works in offsets)
 * holds for the address on every PE.  Peers' segments get a skew of a few pages (see
 * peer_skew).  All segments, the control one included, follow the rule. */
static void *map_segment(int fd, size_t size, size_t skew)
{
    size_t align = SHMEMI_HEAP_ALIGN;
    size_t span = size + align + skew;
    uint8_t *reserve = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserve == MAP_FAILED)
        return NULL;
    uint8_t *start = (uint8_t *)(((uintptr_t)reserve + align - 1) & ~(uintptr_t)(align - 1)) + skew;
    void *p = mmap(start, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED) {
        munmap(reserve, span);
        return NULL;
    }
    if (start > reserve)
        munmap(reserve, (size_t)(start - reserve));
    size_t tail = (size_t)(reserve + span - (start + size));
    if (tail)
        munmap(start + size, tail);
    return start;
}

/* Where PE pe's segments sit in this process, past the alignment: never where this PE's own
 * do (relative to SHMEMI_HEAP_ALIGN; see peer_placement for the data segment).  A store to a peer's word followed by a load of the own word at the same offset (a
 * put, then a wait on the answer; a barrier's flags) has its two addresses equal in their
 * low 30 bits when both mappings are aligned alike, and the CPU's memory disambiguation
 * then holds the load back behind the store as if they overlapped (measured on AMD EPYC: a
 * bare store/poll ping-pong on the heaps took 65-72 ns a hop with equal low bits, 38-57 ns
 * with them a line or a page apart).  Peers' pointers (aclshmem_ptr) therefore keep the
 * alignment of their offset up to the page, not beyond. */
static size_t peer_skew(int pe)
{
    return (size_t)sysconf(_SC_PAGESIZE) * (size_t)(1 + pe % 255);
}

/* The skew of PE pe's segment s in this process.  The heaps' own mappings sit at skew 0; the
 * data segment sits where the program was loaded, so its peers' mappings are skewed from
 * there: a few pages off the own segment modulo the alignment, like the heaps'. */
static size_t peer_placement(const shmemi_heap_set_t *h, int s, int pe)
{
    if (s != SHMEMI_SEG_DATA)
        return peer_skew(pe);
    return ((uintptr_t)h->seg[s].base + peer_skew(pe)) & (SHMEMI_HEAP_ALIGN - 1);
}

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

/* A memfd of size bytes that nobody, holder of a copy of the fd or not, can shrink (which
 * would kill every process mapping it with SIGBUS) or grow. */
int shmemi_sealed_memfd(const char *name, size_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)size) != 0 || fcntl(fd, F_ADD_SEALS, SHMEMI_HEAP_SEALS) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* The program's data placement as segment SHMEMI_SEG_DATA: already mapped (at the
 * program's own address), with a memfd of its own to hand to peers; no allocator. */
static int adopt_data_segment(shmemi_heap_set_t *h, const shmemi_data_segment_t *data)
{
    shmemi_segment_t *seg = &h->seg[SHMEMI_SEG_DATA];
    if (!data || data->size == 0)
        return ACLSHMEM_SUCCESS;
    seg->fd = fcntl(data->fd, F_DUPFD_CLOEXEC, 0);
    if (seg->fd < 0)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "cannot keep the program's data segment: %s", strerror(errno));
    seg->size = data->size;
    seg->base = data->base;
    seg->peer_base[h->my_pe] = seg->base;
    return ACLSHMEM_SUCCESS;
}

int shmemi_heaps_create(shmemi_heap_set_t *h, int my_pe, int n_pes, size_t heap_size,
                        size_t ctrl_size, const shmemi_data_segment_t *data, const uint8_t secret[32])
{
    memset(h, 0, sizeof(*h));
    h->my_pe = my_pe;
    h->n_pes = n_pes;
    h->listen_fd = -1;
    h->shares_data = data != NULL;
    if (data)
        h->data_link = data->link_addr;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        h->seg[s].fd = -1;
    h->same_node = calloc((size_t)n_pes, 1);
    if (!h->same_node)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for %d PEs", n_pes);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        shmemi_segment_t *seg = &h->seg[s];
        seg->peer_base = calloc((size_t)n_pes, sizeof(uint8_t *));
        if (!seg->peer_base)
            return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for %d PEs", n_pes);
        if (s == SHMEMI_SEG_DATA)
            continue;
        seg->size = s == SHMEMI_SEG_CTRL ? ctrl_size : heap_size;
        seg->fd = shmemi_sealed_memfd(segment_names[s], seg->size);
        if (seg->fd < 0 || !(seg->base = map_segment(seg->fd, seg->size, 0)))
            return shmemi_fail(ACLSHMEM_SMEM_ERROR, "cannot create the %zu-byte %s: %s", seg->size,
                               segment_names[s], strerror(errno));
        seg->peer_base[my_pe] = seg->base;
        if (s != SHMEMI_SEG_CTRL && shmemi_alloc_init(&seg->alloc, seg->size) != 0)
            return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    }
    SHMEMI_TRY(adopt_data_segment(h, data));
    h->same_node[my_pe] = 1;

    socket_name(h->socket_name, sizeof(h->socket_name), secret, my_pe);
    struct sockaddr_un sun;
    socklen_t len = 0;
    make_socket_address(h->socket_name, &sun, &len);
    h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); /* accepted in a loop */
    if (h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&sun, len) != 0 ||
        listen(h->listen_fd, HANDOFF_BACKLOG) != 0)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR,
                           "PE %d cannot open its memory-sharing socket: %s (is another process "
                           "already PE %d of this job?)", my_pe, strerror(errno), my_pe);
    return ACLSHMEM_SUCCESS;
}

static void read_node_info(node_info_t *info)
{
    memset(info, 0, sizeof(*info));
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(info->boot_id, sizeof(info->boot_id), f))
            info->boot_id[0] = '\0';
        fclose(f);
    }
    struct stat st;
    if (stat("/proc/self/ns/net", &st) == 0)
        info->netns = (uint64_t)st.st_ino;
    info->pid = (int32_t)getpid();
}

static int describe_data(const node_info_t *info, char *out, size_t len)
{
    if (!info->shares_data)
        return snprintf(out, len, "does not share its globals");
    return snprintf(out, len, "shares %llu bytes of globals linked at %#llx", (unsigned long long)info->data_size,
                    (unsigned long long)info->data_link);
}

/* Every PE shares the same data segment, or none does: a PE whose globals sit elsewhere, or
 * that has none to share, would turn a put to a global into a write to other variables.
 * Every PE checks the same gathered table, so all fail alike, naming PE 0 and the first PE
 * that differs from it. */
static int check_data_segments(const node_info_t *all, int n_pes)
{
    for (int pe = 1; pe < n_pes; pe++) {
        if (all[pe].shares_data == all[0].shares_data && all[pe].data_size == all[0].data_size &&
            all[pe].data_link == all[0].data_link)
            continue;
        char first[96], other[96];
        describe_data(&all[0], first, sizeof(first));
        describe_data(&all[pe], other, sizeof(other));
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "init: the PEs' global and static data differ: PE 0 %s, PE %d %s; every PE must "
                           "run the same executable and initialise the same way (shmem_init) for its globals "
                           "to be symmetric", first, pe, other);
    }
    return ACLSHMEM_SUCCESS;
}

/* ---- the memfd hand-off ---------------------------------------------------------------
 * Each PE serves its memfds on an abstract Unix socket during init.  The name is public
 * (/proc/net/unix), so the server trusts nobody: it accepts only processes of its own user
 * (SO_PEERCRED), then only a proof of the job secret, serves every connection at once
 * (poll) and drops any that stays silent for HANDOFF_CLIENT_MS, so idle clients cannot
 * stall init.  The fetching side checks that the server is of its user too, and that each
 * memfd is sealed against resizing and has the size it expects. */

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

typedef struct {
    shmemi_heap_set_t *h;
    shmemi_bootstrap_t *boot;
    const uint8_t *secret;
    int64_t deadline;
    atomic_int stop;
    int stop_fd; /* readable once stop is set, so that the server's poll returns at once */
    handoff_client_t client[HANDOFF_MAX_CLIENTS];
} handoff_server_t;

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
    int fds[SHMEMI_SEG_COUNT];
    size_t n = 0;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        offer.size[s] = h->seg[s].size;
        if (segment_present(h, s))
            fds[n++] = h->seg[s].fd;
    }
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

/* A peer's segment is safe to map only if nobody can resize it under us: sealed against
 * shrinking, growing and unsealing, and exactly the size we will map. */
static int check_segment_fd(int fd, size_t expected, const char *name, int pe)
{
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

/* fds[] holds one fd per present segment (size[s] > 0), in segment order. */
static int check_offer(const shmemi_fd_offer_t *offer, const int *fds, int pe, const size_t size[SHMEMI_SEG_COUNT])
{
    if (offer->pe != pe)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d's memory-sharing socket answered as PE %d", pe, offer->pe);
    for (int s = 0, i = 0; s < SHMEMI_SEG_COUNT; s++) {
        if (offer->size[s] != size[s])
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "PE %d's %s is %llu bytes but this PE's is %zu: every PE must use the "
                               "same %s", pe, segment_names[s], (unsigned long long)offer->size[s], size[s],
                               s == SHMEMI_SEG_DATA ? "executable" : "local_mem_size");
        if (size[s] > 0)
            SHMEMI_TRY(check_segment_fd(fds[i++], size[s], segment_names[s], pe));
    }
    return ACLSHMEM_SUCCESS;
}

/* The fds of the present segments, in order, spread into fds[] (-1 for absent ones). */
static void spread_fds(const int *present, const size_t size[SHMEMI_SEG_COUNT], int fds[SHMEMI_SEG_COUNT])
{
    for (int s = 0, i = 0; s < SHMEMI_SEG_COUNT; s++)
        fds[s] = size[s] > 0 ? present[i++] : -1;
}

/* How many fds an offer says come with it: one per segment it announces as present. */
static int fds_announced(const shmemi_fd_offer_t *offer)
{
    int n = 0;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        n += offer->size[s] > 0;
    return n;
}

int shmemi_heap_receive_offer(int sock, int pe, const size_t size[SHMEMI_SEG_COUNT], int fds[SHMEMI_SEG_COUNT])
{
    shmemi_fd_offer_t offer;
    int all[SHMEMI_SEG_COUNT + 1];
    union {
        char buf[CMSG_SPACE(sizeof(all))]; /* room for one fd too many, so extras are seen and closed */
        struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = &offer, .iov_len = sizeof(offer)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    ssize_t got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    int n = got >= 0 ? take_fds(&msg, all, SHMEMI_SEG_COUNT + 1) : 0;
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
static int fetch_once(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, int pe, const uint8_t secret[32],
                      int64_t deadline, int *dropped)
{
    int fd = -1;
    SHMEMI_TRY(connect_handoff(h, pe, secret, &fd));
    handoff_request_t request = {.pe = h->my_pe};
    shmemi_proof(secret, "aclshmem-memfd", &request.pe, sizeof(request.pe), request.proof);
    int fds[SHMEMI_SEG_COUNT];
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
    if (rc != ACLSHMEM_SUCCESS)
        return rc;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        if (fds[s] < 0)
            continue;
        if (rc == ACLSHMEM_SUCCESS &&
            !(h->seg[s].peer_base[pe] = map_segment(fds[s], h->seg[s].size, peer_placement(h, s, pe))))
            rc = shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d cannot map PE %d's %s: %s", h->my_pe, pe,
                             segment_names[s], strerror(errno));
        close(fds[s]);
    }
    return rc;
}

static int fetch_from(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, int pe, const uint8_t secret[32],
                      int64_t deadline)
{
    for (;;) {
        int dropped = 0;
        int rc = fetch_once(h, boot, pe, secret, deadline, &dropped);
        if (rc == ACLSHMEM_SUCCESS || !dropped || shmemi_now_ms() >= deadline)
            return rc;
        usleep(10000);
    }
}

int shmemi_heaps_share(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, uint64_t key,
                       const uint8_t secret[32], int64_t timeout_ms)
{
    node_info_t mine, *all = calloc((size_t)h->n_pes, sizeof(node_info_t));
    if (!all)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    read_node_info(&mine);
    mine.shares_data = h->shares_data;
    mine.data_size = h->seg[SHMEMI_SEG_DATA].size;
    mine.data_link = h->data_link;
    int rc = shmemi_bootstrap_collective(boot, key, h->n_pes, h->my_pe, &mine, sizeof(mine), all, timeout_ms);
    if (rc == ACLSHMEM_SUCCESS)
        rc = check_data_segments(all, h->n_pes);
    int peers = 0;
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < h->n_pes; pe++) {
        h->same_node[pe] = strcmp(all[pe].boot_id, mine.boot_id) == 0 && all[pe].netns == mine.netns;
        peers += h->same_node[pe] && pe != h->my_pe;
    }
    free(all);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;

    handoff_server_t *server = calloc(1, sizeof(*server));
    if (!server)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    server->h = h;
    server->boot = boot;
    server->secret = secret;
    server->deadline = shmemi_now_ms() + timeout_ms;
    server->stop_fd = eventfd(0, EFD_CLOEXEC);
    pthread_t thread;
    if (server->stop_fd < 0 || (peers > 0 && pthread_create(&thread, NULL, serve_fds, server) != 0)) {
        if (server->stop_fd >= 0)
            close(server->stop_fd);
        free(server);
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "cannot start the memory-sharing thread");
    }
    for (int i = 1; rc == ACLSHMEM_SUCCESS && i < h->n_pes; i++) {
        int pe = (h->my_pe + i) % h->n_pes; /* staggered, so PEs do not all queue on one */
        if (h->same_node[pe])
            rc = fetch_from(h, boot, pe, secret, server->deadline);
    }
    /* Serve until every PE has its peers' heaps: a connection that used a peer's name (a
     * job member posing as it) must not end the service before the peer was served. */
    if (rc == ACLSHMEM_SUCCESS)
        rc = shmemi_bootstrap_collective(boot, key + HEAPS_DONE_KEY_OFFSET, h->n_pes, h->my_pe, NULL, 0, NULL,
                                         timeout_ms);
    atomic_store(&server->stop, 1);
    uint64_t one = 1;
    if (write(server->stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
        SHMEMI_WARN("cannot wake the memory-sharing thread: %s; it stops within 50 ms", strerror(errno));
    if (peers > 0)
        pthread_join(thread, NULL);
    close(server->stop_fd);
    free(server);
    /* The name is public and no longer needed: nobody may queue on it for the job's life. */
    close(h->listen_fd);
    h->listen_fd = -1;
    if (rc == ACLSHMEM_SUCCESS)
        SHMEMI_INFO("PE %d shares memory with %d other PE(s) on this node", h->my_pe, peers);
    return rc;
}

void shmemi_heaps_destroy(shmemi_heap_set_t *h)
{
    if (h->listen_fd >= 0)
        close(h->listen_fd);
    h->listen_fd = -1;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        shmemi_segment_t *seg = &h->seg[s];
        /* The own data segment is the program's globals: data_segment.c gives them back. */
        for (int pe = 0; seg->peer_base && pe < h->n_pes; pe++)
            if (seg->peer_base[pe] && !(s == SHMEMI_SEG_DATA && pe == h->my_pe))
                munmap(seg->peer_base[pe], seg->size);
        free(seg->peer_base);
        seg->peer_base = NULL;
        seg->base = NULL;
        if (seg->fd >= 0)
            close(seg->fd);
        seg->fd = -1;
        shmemi_alloc_destroy(&seg->alloc);
    }
    free(h->same_node);
    h->same_node = NULL;
}

int shmemi_heap_locate(const shmemi_heap_set_t *h, const void *addr, size_t len, size_t *offset)
{
    uintptr_t a = (uintptr_t)addr;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        if (s == SHMEMI_SEG_CTRL) /* the library's own: no user address lies there */
            continue;
        uintptr_t base = (uintptr_t)h->seg[s].base;
        if (base && a >= base && a - base <= h->seg[s].size && len <= h->seg[s].size - (a - base) &&
            (len > 0 || a - base < h->seg[s].size)) {
            *offset = a - base;
            return s;
        }
    }
    return -1;
}
