/* The fence around UCX's TCP listening sockets (see ucx_guard.h). */
#include "transport/ucx/ucx_guard.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/filter.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- the filter --------------------------------------------------------------------------- */

/* A classic BPF program is at most BPF_MAXINSNS long; an IPv6 address takes 9 of them. */
#define GUARD_MAX_INSNS BPF_MAXINSNS
#define ACCEPT 0xffffffffu /* keep the whole packet */
#define DROP 0u

static uint32_t word_at(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

typedef struct {
    struct sock_filter *code;
    int len;
} program_t;

static void emit(program_t *p, struct sock_filter insn)
{
    p->code[p->len++] = insn;
}

/* For each IPv4 address: compare the source (loaded once) and accept on a match. */
static void emit_v4(program_t *p, const ucx_host_addr_t *allowed, int n)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_NET_OFF + 12));
    for (int i = 0; i < n; i++) {
        if (allowed[i].family != 4)
            continue;
        emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, word_at(allowed[i].addr), 0, 1));
        emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ACCEPT));
    }
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DROP));
}

/* For each IPv6 address: its four words against the source's, skipping to the next address
 * at the first difference. */
static void emit_v6(program_t *p, const ucx_host_addr_t *allowed, int n)
{
    for (int i = 0; i < n; i++) {
        if (allowed[i].family != 6)
            continue;
        for (int w = 0; w < 4; w++) {
            uint8_t skip = (uint8_t)(2 * (3 - w) + 1); /* the rest of this address's block */
            emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_NET_OFF + 8 + 4 * w));
            emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, word_at(allowed[i].addr + 4 * w), 0, skip));
        }
        emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ACCEPT));
    }
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, DROP));
}

static int program_length(const ucx_host_addr_t *allowed, int n)
{
    int len = 4 + 2 + 1; /* the version test and jump, the IPv4 load and drop, the IPv6 drop */
    for (int i = 0; i < n; i++)
        len += allowed[i].family == 6 ? 9 : 2;
    return len;
}

/* The program: IPv6 packets to the IPv6 list, everything else to the IPv4 list.  The
 * source address is read from the network header (SKF_NET_OFF), which the kernel has
 * parsed before a TCP socket's filter runs; a listening socket runs it on every SYN. */
int ucx_guard_attach(int fd, const ucx_host_addr_t *allowed, int n)
{
    int len = program_length(allowed, n);
    if (len > GUARD_MAX_INSNS) {
        errno = E2BIG;
        return -1;
    }
    struct sock_filter code[GUARD_MAX_INSNS];
    program_t p = {code, 0};
    emit(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS, SKF_NET_OFF));
    emit(&p, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4));
    emit(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 1));
    int jump_to_v6 = p.len;
    emit(&p, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0)); /* k set below */
    emit_v4(&p, allowed, n);
    code[jump_to_v6].k = (uint32_t)(p.len - jump_to_v6 - 1);
    emit_v6(&p, allowed, n);
    struct sock_fprog prog = {.len = (unsigned short)p.len, .filter = code};
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

/* ---- the process's sockets -------------------------------------------------------------------- */

static int int_option(int fd, int level, int name)
{
    int value = -1;
    socklen_t len = sizeof(value);
    return getsockopt(fd, level, name, &value, &len) == 0 ? value : -1;
}

static int is_tcp(int fd)
{
    int domain = int_option(fd, SOL_SOCKET, SO_DOMAIN);
    return (domain == AF_INET || domain == AF_INET6) && int_option(fd, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP;
}

/* The port of a socket address (either family), 0 if none. */
static uint16_t port_of(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return 0;
}

static uint16_t local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 ? port_of(&ss) : 0;
}

/* Calls visit(fd, inode, arg) for every socket the process has open. */
static void for_each_socket(void (*visit)(int fd, unsigned long inode, void *arg), void *arg)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end != '\0' || fd < 0 || fd == dirfd(dir))
            continue;
        char path[64], target[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        unsigned long inode;
        if (sscanf(target, "socket:[%lu]", &inode) == 1)
            visit((int)fd, inode, arg);
    }
    closedir(dir);
}

static void add_listener(int fd, unsigned long inode, void *arg)
{
    ucx_listeners_t *set = arg;
    if (set->count < UCX_GUARD_MAX_LISTENERS && is_tcp(fd) && int_option(fd, SOL_SOCKET, SO_ACCEPTCONN) == 1) {
        set->fd[set->count] = fd;
        set->inode[set->count] = inode;
        set->port[set->count] = local_port(fd);
        set->count++;
    }
}

static int listed(const ucx_listeners_t *set, unsigned long inode)
{
    for (int i = 0; i < set->count; i++)
        if (set->inode[i] == inode)
            return 1;
    return 0;
}

void ucx_guard_before(ucx_guard_t *g)
{
    memset(g, 0, sizeof(*g));
    for_each_socket(add_listener, &g->before);
}

int ucx_guard_close(ucx_guard_t *g, char *why, size_t why_len)
{
    ucx_listeners_t now = {0};
    for_each_socket(add_listener, &now);
    for (int i = 0; i < now.count; i++) {
        if (listed(&g->before, now.inode[i]))
            continue;
        if (ucx_guard_attach(now.fd[i], NULL, 0) != 0) {
            snprintf(why, why_len, "cannot fence UCX's listening socket (port %u): %s", now.port[i], strerror(errno));
            return -1;
        }
        int k = g->fenced.count++;
        g->fenced.fd[k] = now.fd[i];
        g->fenced.inode[k] = now.inode[i];
        g->fenced.port[k] = now.port[i];
    }
    return 0;
}

/* ---- after the exchange ------------------------------------------------------------------- */

static int same_address(const struct sockaddr_storage *ss, const ucx_host_addr_t *a)
{
    if (ss->ss_family == AF_INET && a->family == 4)
        return memcmp(&((const struct sockaddr_in *)ss)->sin_addr, a->addr, 4) == 0;
    if (ss->ss_family == AF_INET6) {
        const uint8_t *v6 = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (a->family == 6)
            return memcmp(v6, a->addr, 16) == 0;
        return memcmp(v6, mapped, 12) == 0 && memcmp(v6 + 12, a->addr, 4) == 0;
    }
    return 0;
}

typedef struct {
    ucx_guard_t *g;
    const ucx_host_addr_t *allowed;
    int n;
} sweep_t;

/* A connection accepted on a fenced port from an address not allowed is shut down (UCX
 * sees it closed and drops it). */
static void sweep_one(int fd, unsigned long inode, void *arg)
{
    sweep_t *s = arg;
    (void)inode;
    if (!is_tcp(fd) || int_option(fd, SOL_SOCKET, SO_ACCEPTCONN) != 0)
        return;
    uint16_t port = local_port(fd);
    int fenced_port = 0;
    for (int i = 0; i < s->g->fenced.count; i++)
        fenced_port |= port != 0 && port == s->g->fenced.port[i];
    struct sockaddr_storage peer;
    socklen_t len = sizeof(peer);
    if (!fenced_port || getpeername(fd, (struct sockaddr *)&peer, &len) != 0)
        return;
    for (int i = 0; i < s->n; i++)
        if (same_address(&peer, &s->allowed[i]))
            return;
    shutdown(fd, SHUT_RDWR);
    s->g->swept++;
}

int ucx_guard_open_to(ucx_guard_t *g, const ucx_host_addr_t *allowed, int n, char *why, size_t why_len)
{
    for (int i = 0; i < g->fenced.count; i++) {
        if (ucx_guard_attach(g->fenced.fd[i], allowed, n) != 0) {
            snprintf(why, why_len, "cannot set the filter of UCX's listening socket (port %u) for %d node "
                     "addresses: %s", g->fenced.port[i], n, strerror(errno));
            return -1;
        }
    }
    sweep_t s = {g, allowed, n};
    if (g->fenced.count)
        for_each_socket(sweep_one, &s);
    return 0;
}

int ucx_host_addresses(ucx_host_addr_t *out, int max)
{
    struct ifaddrs *list;
    if (getifaddrs(&list) != 0)
        return 0;
    int n = 0;
    for (struct ifaddrs *ifa = list; ifa && n < max; ifa = ifa->ifa_next) {
        if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK))
            continue;
        ucx_host_addr_t a = {0};
        if (ifa->ifa_addr->sa_family == AF_INET) {
            a.family = 4;
            memcpy(a.addr, &((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr, 4);
        } else if (ifa->ifa_addr->sa_family == AF_INET6) {
            a.family = 6;
            memcpy(a.addr, &((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr, 16);
        } else {
            continue;
        }
        out[n++] = a;
    }
    freeifaddrs(list);
    return n;
}
