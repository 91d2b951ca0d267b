#include "mem/heap.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static const char *const segment_names[SHMEMI_SEG_COUNT] = {"aclshmem-host-heap", "aclshmem-device-heap",
                                                            "aclshmem-control"};

/* What a PE tells the others so they can tell whether it shares their node. */
typedef struct {
    char boot_id[40];
    uint64_t netns;
    int32_t pid;
    int32_t reserved;
} node_info_t;

/* What a PE sends with its memfds. */
typedef struct {
    int32_t pe;
    int32_t reserved;
    uint64_t size[SHMEMI_SEG_COUNT];
} fd_offer_t;

/* Maps fd at an address aligned to SHMEMI_HEAP_ALIGN for the heaps, so an alignment
 * asked of the allocator (which works in offsets) holds for the address on every PE. */
static void *map_segment(int fd, size_t size, int segment)
{
    size_t align = segment == SHMEMI_SEG_CTRL ? (size_t)sysconf(_SC_PAGESIZE) : SHMEMI_HEAP_ALIGN;
    uint8_t *reserve = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserve == MAP_FAILED)
        return NULL;
    uint8_t *start = (uint8_t *)(((uintptr_t)reserve + align - 1) & ~(uintptr_t)(align - 1));
    void *p = mmap(start, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED) {
        munmap(reserve, size + align);
        return NULL;
    }
    if (start > reserve)
        munmap(reserve, (size_t)(start - reserve));
    size_t tail = (size_t)(reserve + size + align - (start + size));
    if (tail)
        munmap(start + size, tail);
    return start;
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

int shmemi_heaps_create(shmemi_heap_set_t *h, int my_pe, int n_pes, size_t heap_size,
                        size_t ctrl_size, const uint8_t secret[32])
{
    memset(h, 0, sizeof(*h));
    h->my_pe = my_pe;
    h->n_pes = n_pes;
    h->listen_fd = -1;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++)
        h->seg[s].fd = -1;
    h->same_node = calloc((size_t)n_pes, 1);
    if (!h->same_node)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for %d PEs", n_pes);
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        shmemi_segment_t *seg = &h->seg[s];
        seg->size = s == SHMEMI_SEG_CTRL ? ctrl_size : heap_size;
        seg->peer_base = calloc((size_t)n_pes, sizeof(uint8_t *));
        seg->fd = memfd_create(segment_names[s], MFD_CLOEXEC);
        if (!seg->peer_base || seg->fd < 0 || ftruncate(seg->fd, (off_t)seg->size) != 0 ||
            !(seg->base = map_segment(seg->fd, seg->size, s)))
            return shmemi_fail(ACLSHMEM_SMEM_ERROR, "cannot create the %zu-byte %s: %s", seg->size,
                               segment_names[s], strerror(errno));
        seg->peer_base[my_pe] = seg->base;
        if (s != SHMEMI_SEG_CTRL && shmemi_alloc_init(&seg->alloc, seg->size) != 0)
            return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    }
    h->same_node[my_pe] = 1;

    socket_name(h->socket_name, sizeof(h->socket_name), secret, my_pe);
    struct sockaddr_un sun;
    socklen_t len = 0;
    make_socket_address(h->socket_name, &sun, &len);
    h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&sun, len) != 0 ||
        listen(h->listen_fd, n_pes) != 0)
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

/* Serving side: hand our memfds to each same-node peer that proves it is in the job. */
typedef struct {
    shmemi_heap_set_t *h;
    shmemi_bootstrap_t *boot;
    const uint8_t *secret;
    int expected;
    int64_t deadline;
    int served;
} serve_arg_t;

static int serve_one(serve_arg_t *a, int fd)
{
    struct {
        int32_t pe;
        uint8_t proof[SHMEMI_PROOF_LEN];
    } request;
    if (shmemi_recv_all(fd, &request, sizeof(request), a->deadline) != 0)
        return -1;
    uint8_t expected[SHMEMI_PROOF_LEN];
    shmemi_proof(a->secret, "aclshmem-memfd", &request.pe, sizeof(request.pe), expected);
    if (!shmemi_proof_equal(expected, request.proof) || request.pe < 0 || request.pe >= a->h->n_pes)
        return -1;
    fd_offer_t offer = {.pe = a->h->my_pe};
    int fds[SHMEMI_SEG_COUNT];
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        offer.size[s] = a->h->seg[s].size;
        fds[s] = a->h->seg[s].fd;
    }
    struct iovec iov = {.iov_base = &offer, .iov_len = sizeof(offer)};
    char control[CMSG_SPACE(sizeof(fds))];
    memset(control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof(control)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(fds));
    memcpy(CMSG_DATA(cm), fds, sizeof(fds));
    return sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(offer) ? 0 : -1;
}

static void *serve_fds(void *p)
{
    serve_arg_t *a = p;
    while (a->served < a->expected && shmemi_now_ms() < a->deadline &&
           !shmemi_bootstrap_failure(a->boot, NULL, 0)) {
        struct pollfd pfd = {.fd = a->h->listen_fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        int fd = accept4(a->h->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        if (serve_one(a, fd) == 0)
            a->served++;
        close(fd);
    }
    return NULL;
}

/* Fetching side: connect to pe's socket, prove membership, receive and map its memfds. */
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

static int fetch_from(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, int pe, const uint8_t secret[32],
                      int64_t deadline)
{
    char name[64];
    socket_name(name, sizeof(name), secret, pe);
    struct sockaddr_un sun;
    socklen_t len = 0;
    make_socket_address(name, &sun, &len);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sun, len) != 0) {
        if (fd >= 0)
            close(fd);
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d cannot reach PE %d's memory-sharing socket: %s",
                           h->my_pe, pe, strerror(errno));
    }
    struct {
        int32_t pe;
        uint8_t proof[SHMEMI_PROOF_LEN];
    } request = {.pe = h->my_pe};
    shmemi_proof(secret, "aclshmem-memfd", &request.pe, sizeof(request.pe), request.proof);
    fd_offer_t offer;
    int fds[SHMEMI_SEG_COUNT] = {-1, -1, -1};
    char control[CMSG_SPACE(sizeof(fds))];
    struct iovec iov = {.iov_base = &offer, .iov_len = sizeof(offer)};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof(control)};
    int rc = shmemi_send_all(fd, &request, sizeof(request), deadline);
    ssize_t got = -1;
    if (rc == 0 && wait_readable(fd, boot, deadline) == 0)
        got = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    close(fd);
    char failure[256];
    int code = shmemi_bootstrap_failure(boot, failure, sizeof(failure));
    if (got != (ssize_t)sizeof(offer) && code)
        return shmemi_fail(code, "%s", failure);
    struct cmsghdr *cm = got == (ssize_t)sizeof(offer) ? CMSG_FIRSTHDR(&msg) : NULL;
    if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(fds)) || offer.pe != pe)
        return shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d did not receive PE %d's heaps", h->my_pe, pe);
    memcpy(fds, CMSG_DATA(cm), sizeof(fds));
    rc = ACLSHMEM_SUCCESS;
    for (int s = 0; s < SHMEMI_SEG_COUNT; s++) {
        if (rc == ACLSHMEM_SUCCESS && offer.size[s] != h->seg[s].size)
            rc = shmemi_fail(ACLSHMEM_INVALID_PARAM,
                             "PE %d's %s is %llu bytes but PE %d's is %zu: every PE must use the "
                             "same local_mem_size", pe, segment_names[s],
                             (unsigned long long)offer.size[s], h->my_pe, h->seg[s].size);
        if (rc == ACLSHMEM_SUCCESS && !(h->seg[s].peer_base[pe] = map_segment(fds[s], h->seg[s].size, s)))
            rc = shmemi_fail(ACLSHMEM_SMEM_ERROR, "PE %d cannot map PE %d's %s: %s", h->my_pe, pe,
                             segment_names[s], strerror(errno));
        close(fds[s]);
    }
    return rc;
}

int shmemi_heaps_share(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, uint64_t key,
                       const uint8_t secret[32], int64_t timeout_ms)
{
    node_info_t mine, *all = calloc((size_t)h->n_pes, sizeof(node_info_t));
    if (!all)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    read_node_info(&mine);
    int rc = shmemi_bootstrap_collective(boot, key, h->n_pes, h->my_pe, &mine, sizeof(mine), all, timeout_ms);
    int peers = 0;
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < h->n_pes; pe++) {
        h->same_node[pe] = strcmp(all[pe].boot_id, mine.boot_id) == 0 && all[pe].netns == mine.netns;
        peers += h->same_node[pe] && pe != h->my_pe;
    }
    free(all);
    if (rc != ACLSHMEM_SUCCESS)
        return rc;

    serve_arg_t serve = {.h = h, .boot = boot, .secret = secret, .expected = peers,
                         .deadline = shmemi_now_ms() + timeout_ms};
    pthread_t server;
    if (pthread_create(&server, NULL, serve_fds, &serve) != 0)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "cannot start the memory-sharing thread");
    for (int i = 1; rc == ACLSHMEM_SUCCESS && i < h->n_pes; i++) {
        int pe = (h->my_pe + i) % h->n_pes; /* staggered, so PEs do not all queue on one */
        if (h->same_node[pe])
            rc = fetch_from(h, boot, pe, secret, serve.deadline);
    }
    pthread_join(server, NULL);
    char failure[256];
    int code = shmemi_bootstrap_failure(boot, failure, sizeof(failure));
    if (rc == ACLSHMEM_SUCCESS && code)
        rc = shmemi_fail(code, "%s", failure);
    if (rc == ACLSHMEM_SUCCESS && serve.served < peers)
        rc = shmemi_fail(ACLSHMEM_TIMEOUT_ERROR, "PE %d handed its heaps to %d of %d same-node PEs",
                         h->my_pe, serve.served, peers);
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
        for (int pe = 0; seg->peer_base && pe < h->n_pes; pe++)
            if (seg->peer_base[pe])
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
    for (int s = SHMEMI_SEG_HOST; s <= SHMEMI_SEG_DEVICE; s++) {
        uintptr_t base = (uintptr_t)h->seg[s].base;
        if (base && a >= base && a - base <= h->seg[s].size && len <= h->seg[s].size - (a - base) &&
            (len > 0 || a - base < h->seg[s].size)) {
            *offset = a - base;
            return s;
        }
    }
    return -1;
}
