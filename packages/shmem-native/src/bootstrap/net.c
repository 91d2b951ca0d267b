#include "bootstrap/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t shmemi_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_ready(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int timeout = -1;
        if (deadline_ms >= 0) {
            int64_t left = deadline_ms - shmemi_now_ms();
            if (left <= 0)
                return -ETIMEDOUT;
            timeout = left > 1000 ? 1000 : (int)left;
        }
        struct pollfd pfd = {.fd = fd, .events = events};
        int rc = poll(&pfd, 1, timeout);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -errno;
    }
}

int shmemi_tcp_bind(const struct sockaddr_storage *ss, socklen_t len)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    /* SO_REUSEADDR only: it lets PE 0 bind the port that aclshmemx_get_uniqueid reserved
     * (bound, never listening) in another process, and a port whose last job's connections
     * linger in TIME_WAIT; it never lets two sockets listen on one port.  SO_REUSEPORT would,
     * and two jobs given the same port would silently split each other's connections. */
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)ss, len) != 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    return fd;
}

void shmemi_tcp_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* A refused connection is tried again after 1 ms, then 2, 4, ... up to 200 ms between tries.
 * The PEs of a job start together, and PE 0 opens its port a millisecond or two after its
 * process starts (it loads, then listens first thing in init): a first wait of 10 ms made
 * every PE that came too early lose 10 ms of init, PE 0's too, which waits for them. */
int shmemi_tcp_connect(const struct sockaddr_storage *ss, socklen_t len, int64_t deadline_ms)
{
    int delay_ms = 1;
    for (;;) {
        int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            return -errno;
        int rc = connect(fd, (const struct sockaddr *)ss, len);
        int err = rc == 0 ? 0 : errno;
        if (err == EINPROGRESS) {
            err = wait_ready(fd, POLLOUT, deadline_ms);
            if (err == 0) {
                socklen_t elen = sizeof(err);
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
            } else {
                err = -err;
            }
        }
        if (err == 0) {
            shmemi_tcp_nodelay(fd);
            return fd;
        }
        close(fd);
        if (err != ECONNREFUSED && err != ECONNRESET && err != ENETUNREACH && err != EAGAIN)
            return -err;
        if (deadline_ms >= 0 && shmemi_now_ms() + delay_ms > deadline_ms)
            return -ETIMEDOUT;
        usleep((useconds_t)delay_ms * 1000);
        if (delay_ms < 200)
            delay_ms *= 2;
    }
}

int shmemi_send_all(int fd, const void *buf, size_t len, int64_t deadline_ms)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int rc = wait_ready(fd, POLLOUT, deadline_ms);
            if (rc)
                return rc;
            continue;
        }
        return n < 0 ? -errno : -EPIPE;
    }
    return 0;
}

int shmemi_recv_all(int fd, void *buf, size_t len, int64_t deadline_ms)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return -EPIPE;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int rc = wait_ready(fd, POLLIN, deadline_ms);
            if (rc)
                return rc;
            continue;
        }
        return -errno;
    }
    return 0;
}

int shmemi_parse_host_port(const char *text, struct sockaddr_storage *ss, socklen_t *len)
{
    char host[256];
    const char *port_text;
    if (!text)
        return -EINVAL;
    if (text[0] == '[') {
        const char *end = strchr(text, ']');
        if (!end || end[1] != ':' || (size_t)(end - text - 1) >= sizeof(host))
            return -EINVAL;
        memcpy(host, text + 1, (size_t)(end - text - 1));
        host[end - text - 1] = '\0';
        port_text = end + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (!colon || (size_t)(colon - text) >= sizeof(host))
            return -EINVAL;
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = '\0';
        port_text = colon + 1;
    }
    char *end;
    long port = strtol(port_text, &end, 10);
    if (*port_text == '\0' || *end != '\0' || port < 0 || port > 65535)
        return -EINVAL;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return -EINVAL;
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    return 0;
}

int shmemi_interface_address(const char *ifname, int family, struct sockaddr_storage *ss,
                             socklen_t *len)
{
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        return -errno;
    int rc = -ENODEV;
    for (struct ifaddrs *it = list; it; it = it->ifa_next) {
        if (!it->ifa_addr || strcmp(it->ifa_name, ifname) != 0)
            continue;
        int fam = it->ifa_addr->sa_family;
        if ((fam != AF_INET && fam != AF_INET6) || (family != AF_UNSPEC && fam != family))
            continue;
        memset(ss, 0, sizeof(*ss));
        *len = fam == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        memcpy(ss, it->ifa_addr, *len);
        rc = 0;
        break;
    }
    freeifaddrs(list);
    return rc;
}

void shmemi_sockaddr_text(const struct sockaddr_storage *ss, char *out, size_t out_len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        port = ntohs(in->sin_port);
        snprintf(out, out_len, "%s:%d", host, port);
    } else {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        port = ntohs(in6->sin6_port);
        snprintf(out, out_len, "[%s]:%d", host, port);
    }
}
