/*
 * test_ucx_guard.c - the fence the UCX plug-in puts around UCX's listening TCP sockets
 * (src/transport/ucx/ucx_guard.c, issue #23), on real sockets of this process over
 * loopback, where every 127.x.y.z address is ours to connect from.
 *
 *  - filter: a listener that allows 127.0.0.2 takes a connection from 127.0.0.2 and never
 *    one from 127.0.0.1 or 127.0.0.3 (the SYN is dropped: the connect does not complete);
 *    an empty list takes none; IPv6 (::1) when this host has it;
 *  - fence: ucx_guard_close fences only the listeners that appeared after ucx_guard_before,
 *    and ucx_guard_open_to opens them to the list and shuts down a connection accepted
 *    from elsewhere before the fence was up, while one from an allowed address stays;
 *  - limits: a list too long for one filter program is refused (E2BIG), not truncated;
 *  - this host's addresses: never loopback, always family 4 or 6.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/ucx/ucx_guard.h"

/* How long a connect may take before it counts as dropped (loopback answers in microseconds). */
#define CONNECT_WAIT_MS 300

static int failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "test_ucx_guard: FAILED at line %d: ", __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static ucx_host_addr_t v4(const char *text)
{
    ucx_host_addr_t a = {.family = 4};
    inet_pton(AF_INET, text, a.addr);
    return a;
}

static ucx_host_addr_t v6(const char *text)
{
    ucx_host_addr_t a = {.family = 6};
    inet_pton(AF_INET6, text, a.addr);
    return a;
}

/* A listening socket on 127.0.0.1 (or ::1) with a port of the kernel's choosing. */
static int listener(int family, uint16_t *port)
{
    int fd = socket(family, SOCK_STREAM, 0);
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(*in);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_addr = in6addr_loopback;
        len = sizeof(*in6);
    }
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 16) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    getsockname(fd, (struct sockaddr *)&ss, &len);
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

/* Connects from source to the port on loopback: the connected socket, or -1 when the
 * connection did not complete within CONNECT_WAIT_MS. */
static int connect_from(int family, const char *source, uint16_t port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_storage from = {0}, to = {0};
    socklen_t len;
    if (family == AF_INET) {
        struct sockaddr_in *f = (struct sockaddr_in *)&from, *t = (struct sockaddr_in *)&to;
        f->sin_family = t->sin_family = AF_INET;
        inet_pton(AF_INET, source, &f->sin_addr);
        t->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        t->sin_port = htons(port);
        len = sizeof(*f);
    } else {
        struct sockaddr_in6 *f = (struct sockaddr_in6 *)&from, *t = (struct sockaddr_in6 *)&to;
        f->sin6_family = t->sin6_family = AF_INET6;
        inet_pton(AF_INET6, source, &f->sin6_addr);
        t->sin6_addr = in6addr_loopback;
        t->sin6_port = htons(port);
        len = sizeof(*f);
    }
    if (bind(fd, (struct sockaddr *)&from, len) != 0) {
        close(fd);
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&to, len) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int err = 0;
    socklen_t err_len = sizeof(err);
    if (poll(&p, 1, CONNECT_WAIT_MS) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Accepts what is waiting on the listener, or -1. */
static int accept_waiting(int lfd)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    return poll(&p, 1, CONNECT_WAIT_MS) == 1 ? accept(lfd, NULL, NULL) : -1;
}

/* 1 when the peer of fd has shut the connection down (EOF or reset). */
static int closed_by_peer(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char c;
    return poll(&p, 1, CONNECT_WAIT_MS) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

static void test_filter_v4(void)
{
    uint16_t port;
    int lfd = listener(AF_INET, &port);
    CHECK(lfd >= 0, "no IPv4 listener on loopback");
    ucx_host_addr_t allowed[] = {v4("10.1.2.3"), v4("127.0.0.2")};
    CHECK(ucx_guard_attach(lfd, allowed, 2) == 0, "attach: %s", strerror(errno));
    int c = connect_from(AF_INET, "127.0.0.2", port);
    CHECK(c >= 0, "a connection from an allowed address did not complete");
    int a = accept_waiting(lfd);
    CHECK(a >= 0, "the allowed connection was not accepted");
    for (const char *from = "127.0.0.1"; from; from = strcmp(from, "127.0.0.1") == 0 ? "127.0.0.3" : NULL) {
        int x = connect_from(AF_INET, from, port);
        CHECK(x < 0, "a connection from %s completed", from);
        if (x >= 0)
            close(x);
    }
    CHECK(accept_waiting(lfd) < 0, "a connection from an address not allowed reached accept");
    CHECK(ucx_guard_attach(lfd, NULL, 0) == 0, "attach of the empty list: %s", strerror(errno));
    int y = connect_from(AF_INET, "127.0.0.2", port);
    CHECK(y < 0, "a listener that allows nobody took a connection");
    if (c >= 0)
        close(c);
    if (a >= 0)
        close(a);
    if (y >= 0)
        close(y);
    close(lfd);
}

static void test_filter_v6(void)
{
    uint16_t port;
    int lfd = listener(AF_INET6, &port);
    if (lfd < 0) {
        printf("test_ucx_guard: no IPv6 on loopback here, its case skipped\n");
        return;
    }
    ucx_host_addr_t other[] = {v6("fe80::1"), v4("127.0.0.1")};
    CHECK(ucx_guard_attach(lfd, other, 2) == 0, "attach: %s", strerror(errno));
    int x = connect_from(AF_INET6, "::1", port);
    CHECK(x < 0, "an IPv6 connection from ::1 completed though only fe80::1 is allowed");
    if (x >= 0)
        close(x);
    ucx_host_addr_t mine[] = {v4("127.0.0.1"), v6("::1")};
    CHECK(ucx_guard_attach(lfd, mine, 2) == 0, "attach: %s", strerror(errno));
    int c = connect_from(AF_INET6, "::1", port);
    CHECK(c >= 0, "an IPv6 connection from the allowed ::1 did not complete");
    if (c >= 0)
        close(c);
    close(lfd);
}

static void test_fence(void)
{
    uint16_t old_port, port;
    int old = listener(AF_INET, &old_port); /* the application's own: never fenced */
    ucx_guard_t g;
    ucx_guard_before(&g);
    int lfd = listener(AF_INET, &port); /* "UCX's" */
    int early = connect_from(AF_INET, "127.0.0.3", port);
    int early_accepted = accept_waiting(lfd);
    int friend = connect_from(AF_INET, "127.0.0.2", port);
    int friend_accepted = accept_waiting(lfd);
    CHECK(early >= 0 && early_accepted >= 0 && friend >= 0 && friend_accepted >= 0, "connections before the fence");
    char why[256] = "";
    CHECK(ucx_guard_close(&g, why, sizeof(why)) == 0, "close: %s", why);
    CHECK(g.fenced.count == 1 && g.fenced.fd[0] == lfd, "fenced %d sockets, not just the new listener",
          g.fenced.count);
    int during = connect_from(AF_INET, "127.0.0.2", port);
    CHECK(during < 0, "a connection completed while the fence was closed");
    int app = connect_from(AF_INET, "127.0.0.3", old_port);
    CHECK(app >= 0, "the application's own listener was fenced");
    ucx_host_addr_t allowed[] = {v4("127.0.0.2")};
    CHECK(ucx_guard_open_to(&g, allowed, 1, why, sizeof(why)) == 0, "open_to: %s", why);
    CHECK(g.swept == 1, "%lu connections shut down, expected 1 (the one from 127.0.0.3)", g.swept);
    CHECK(early >= 0 && closed_by_peer(early), "the connection from 127.0.0.3 was not shut down");
    CHECK(friend >= 0 && !closed_by_peer(friend), "the connection from the allowed 127.0.0.2 was shut down");
    int after = connect_from(AF_INET, "127.0.0.2", port);
    CHECK(after >= 0, "an allowed connection did not complete after the fence opened");
    int stranger = connect_from(AF_INET, "127.0.0.4", port);
    CHECK(stranger < 0, "a connection from 127.0.0.4 completed after the fence opened");
    int fds[] = {early, early_accepted, friend, friend_accepted, during, app, after, stranger, lfd, old};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

static void test_limits(void)
{
    enum { MANY = 500 };
    ucx_host_addr_t *many = calloc(MANY, sizeof(*many));
    for (int i = 0; i < MANY; i++) {
        many[i].family = 6;
        many[i].addr[15] = (uint8_t)i;
        many[i].addr[14] = (uint8_t)(i >> 8);
    }
    uint16_t port;
    int lfd = listener(AF_INET, &port);
    errno = 0;
    CHECK(ucx_guard_attach(lfd, many, MANY) == -1 && errno == E2BIG, "500 IPv6 addresses: not refused with E2BIG");
    CHECK(ucx_guard_attach(lfd, many, 400) == 0, "400 IPv6 addresses: %s", strerror(errno));
    free(many);
    close(lfd);
}

static void test_host_addresses(void)
{
    ucx_host_addr_t a[UCX_GUARD_MAX_HOST_ADDRS];
    int n = ucx_host_addresses(a, UCX_GUARD_MAX_HOST_ADDRS);
    CHECK(n >= 0 && n <= UCX_GUARD_MAX_HOST_ADDRS, "%d addresses", n);
    static const uint8_t loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    for (int i = 0; i < n; i++) {
        CHECK(a[i].family == 4 || a[i].family == 6, "address %d of family %u", i, a[i].family);
        CHECK(!(a[i].family == 4 && a[i].addr[0] == 127) && !(a[i].family == 6 && memcmp(a[i].addr, loop6, 16) == 0),
              "address %d is a loopback address", i);
    }
}

int main(void)
{
    test_filter_v4();
    test_filter_v6();
    test_fence();
    test_limits();
    test_host_addresses();
    if (failures) {
        fprintf(stderr, "test_ucx_guard: %d checks failed\n", failures);
        return 1;
    }
    printf("test_ucx_guard: every check held\n");
    return 0;
}
