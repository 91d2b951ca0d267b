/*
 * tls_proxy.c - the recording proxy: it sits between PE 0's control-plane port and the other
 * PEs and records every byte, so that the cases here can look for plaintext in what crossed
 * the wire (TLS on, TLS off as the control, certificates).  Its socket helpers (send_all,
 * connect_retry) serve the outsiders too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tls_suite.h"

#define MSG_PROXIED_UID 101 /* harness message: the unique ID that points at the proxy */

#define PROXY_MAX_PAIRS 16
#define PROXY_REC_MAX (16u << 20)

typedef struct {
    unsigned char *data;
    size_t len, cap;
} record_t;

typedef struct {
    int listen_fd;
    int stop[2];
    struct sockaddr_in target;
    int port;
    pthread_t thread;
    int connections;
    record_t to_server, to_client;
} proxy_t;

static void record(record_t *r, const void *data, size_t n)
{
    if (r->len + n > PROXY_REC_MAX)
        return;
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : 65536;
        while (cap < r->len + n)
            cap *= 2;
        unsigned char *p = realloc(r->data, cap);
        if (!p)
            return;
        r->data = p;
        r->cap = cap;
    }
    memcpy(r->data + r->len, data, n);
    r->len += n;
}

int send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* PE 0 may not listen yet when a PE arrives: keep trying for a while. */
int connect_retry(const struct sockaddr_in *sa, double seconds)
{
    double deadline = harness_now() + seconds;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
        if (harness_now() > deadline)
            return -1;
        harness_sleep_ms(20);
    }
}

static void *proxy_main(void *arg)
{
    proxy_t *px = arg;
    int client[PROXY_MAX_PAIRS], server[PROXY_MAX_PAIRS];
    int pairs = 0;
    char buf[16384];
    for (;;) {
        struct pollfd pfd[2 + 2 * PROXY_MAX_PAIRS];
        int nfd = 0;
        pfd[nfd++] = (struct pollfd){ px->stop[0], POLLIN, 0 };
        pfd[nfd++] = (struct pollfd){ px->listen_fd, POLLIN, 0 };
        for (int i = 0; i < pairs; i++) {
            pfd[nfd++] = (struct pollfd){ client[i], POLLIN, 0 };
            pfd[nfd++] = (struct pollfd){ server[i], POLLIN, 0 };
        }
        if (poll(pfd, (nfds_t)nfd, 200) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents)
            break;
        if ((pfd[1].revents & POLLIN) && pairs < PROXY_MAX_PAIRS) {
            int c = accept4(px->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0) {
                int s = connect_retry(&px->target, 20.0);
                if (s < 0) {
                    close(c);
                } else {
                    int one = 1;
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    client[pairs] = c;
                    server[pairs] = s;
                    pairs++;
                    px->connections++;
                }
            }
        }
        for (int i = 0, k = 2; i < pairs && k < nfd; i++, k += 2) {
            int closed = 0;
            for (int side = 0; side < 2 && !closed; side++) {
                if (!pfd[k + side].revents)
                    continue;
                int from = side ? server[i] : client[i], to = side ? client[i] : server[i];
                ssize_t r = recv(from, buf, sizeof buf, 0);
                if (r <= 0) {
                    closed = 1;
                    break;
                }
                record(side ? &px->to_client : &px->to_server, buf, (size_t)r);
                if (send_all(to, buf, (size_t)r) != 0)
                    closed = 1;
            }
            if (closed) {
                close(client[i]);
                close(server[i]);
                client[i] = client[pairs - 1];
                server[i] = server[pairs - 1];
                pairs--;
                break; /* the poll array no longer matches: poll again */
            }
        }
    }
    for (int i = 0; i < pairs; i++) {
        close(client[i]);
        close(server[i]);
    }
    return NULL;
}

static int proxy_start(proxy_t *px, const aclshmemx_uniqueid_t *uid)
{
    memset(px, 0, sizeof *px);
    uid_sockaddr(uid, &px->target);
    px->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (px->listen_fd < 0 || bind(px->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(px->listen_fd, 16) != 0 || getsockname(px->listen_fd, (struct sockaddr *)&sa, &sl) != 0 ||
        pipe(px->stop) != 0)
        return -1;
    px->port = ntohs(sa.sin_port);
    return pthread_create(&px->thread, NULL, proxy_main, px) == 0 ? 0 : -1;
}

static void proxy_stop(proxy_t *px)
{
    char c = 1;
    if (write(px->stop[1], &c, 1) != 1)
        harness_report(__FILE__, __LINE__, "cannot stop the proxy");
    pthread_join(px->thread, NULL);
    close(px->listen_fd);
    close(px->stop[0]);
    close(px->stop[1]);
}

static int recorded(const proxy_t *px, const void *needle, size_t len)
{
    return (px->to_server.len && memmem(px->to_server.data, px->to_server.len, needle, len)) ||
           (px->to_client.len && memmem(px->to_client.data, px->to_client.len, needle, len));
}

/* The plaintext that every PE sends over the control plane during init. */
static int boot_id(char *out, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return -1;
    int ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return ok && strlen(out) >= 16 ? 0 : -1;
}

typedef enum { EXPECT_CIPHER, EXPECT_PLAIN } proxy_expect_t;

/* PE 0 makes the ID and runs the proxy; everybody else reaches PE 0 through it. */
static void proxied_job(int me, int n, proxy_expect_t expect)
{
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    proxy_t px;
    if (me == 0) {
        ASSERT_EQ(aclshmemx_get_uniqueid(&uid), ACLSHMEM_SUCCESS);
        ASSERT_EQ(proxy_start(&px, &uid), 0);
        aclshmemx_uniqueid_t proxied = uid;
        uint16_t port = htons((uint16_t)px.port);
        memcpy(proxied.internal + UID_PORT_OFF, &port, sizeof port);
        for (int pe = 1; pe < n; pe++)
            harness_send(pe, MSG_PROXIED_UID, &proxied, sizeof proxied);
    } else {
        ASSERT_EQ(harness_recv(MSG_PROXIED_UID, 0, &uid, sizeof uid, -1), (int)sizeof uid);
    }
    ASSERT_EQ(init_job(&uid, 30, NULL), ACLSHMEM_SUCCESS);
    exercise(me, n);
    EXPECT_EQ(aclshmem_finalize(), ACLSHMEM_SUCCESS);
    if (me != 0)
        return;

    proxy_stop(&px);
    char id[64];
    ASSERT_EQ(boot_id(id, sizeof id), 0);
    harness_log("proxy: %d connections, %zu bytes to PE 0, %zu bytes back", px.connections, px.to_server.len,
                px.to_client.len);
    EXPECT_EQ(px.connections, n - 1);
    /* The init handshake, the heap exchange and the collectives make some traffic. */
    EXPECT_GT(px.to_server.len, 200);
    EXPECT_GT(px.to_client.len, 200);
    static const char wire_magic[] = "SHRS"; /* the plaintext challenge's magic */
    if (expect == EXPECT_CIPHER) {
        HARNESS_CHECK_(!recorded(&px, id, strlen(id)), 0, "the boot id %s crossed the proxy in plaintext", id);
        EXPECT(!recorded(&px, wire_magic, 4));
        /* TLS records: a handshake record starts each direction. */
        EXPECT(px.to_server.len >= 3 && px.to_server.data[0] == 0x16 && px.to_server.data[1] == 0x03);
        EXPECT(px.to_client.len >= 3 && px.to_client.data[0] == 0x16 && px.to_client.data[1] == 0x03);
    } else {
        /* The control: without TLS the same check does find it. */
        HARNESS_CHECK_(recorded(&px, id, strlen(id)), 0, "TLS off, yet the boot id %s did not cross the proxy",
                       id);
        EXPECT(recorded(&px, wire_magic, 4));
    }
    /* The job secret itself never travels, with or without TLS. */
    EXPECT(!recorded(&px, uid.internal + UID_SECRET_OFF, UID_SECRET_LEN));
    free(px.to_server.data);
    free(px.to_client.data);
}

int t_proxy_tls_on(int me, int n)
{
    proxied_job(me, n, EXPECT_CIPHER);
    return 0;
}

int t_proxy_tls_off(int me, int n)
{
    ASSERT_EQ(set_tls(false, NULL), ACLSHMEM_SUCCESS);
    proxied_job(me, n, EXPECT_PLAIN);
    return 0;
}

int t_proxy_certificates(int me, int n)
{
    char ca[512], info[2048];
    good_ca(ca, sizeof ca);
    cert_info(info, sizeof info, ca, "cert.pem", "key.pem", NULL);
    ASSERT_EQ(set_tls(true, info), ACLSHMEM_SUCCESS);
    proxied_job(me, n, EXPECT_CIPHER);
    return 0;
}
