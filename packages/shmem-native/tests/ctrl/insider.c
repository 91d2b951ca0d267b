/* insider.c - see insider.h. */
#define _GNU_SOURCE
#include "insider.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclshmem/types.h"
#include "bootstrap/crypto.h"
#include "bootstrap/net.h"

#define IO_TIMEOUT_MS 5000

int insider_server_start(insider_server_t *srv, int n_pes)
{
    memset(srv, 0, sizeof(*srv));
    struct sockaddr_in *in = (struct sockaddr_in *)&srv->addr;
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = shmemi_tcp_bind(&srv->addr, sizeof(*in));
    if (fd < 0)
        return -1;
    srv->addr_len = sizeof(srv->addr);
    getsockname(fd, (struct sockaddr *)&srv->addr, &srv->addr_len);
    if (shmemi_random_bytes(srv->secret, sizeof(srv->secret)) != 0) {
        close(fd);
        return -1;
    }
    srv->n_pes = n_pes;
    return shmemi_store_server_start(fd, srv->secret, n_pes, &srv->server) == ACLSHMEM_SUCCESS ? 0 : -1;
}

long insider_server_stop(insider_server_t *srv, int64_t timeout_ms)
{
    int64_t t0 = shmemi_now_ms();
    shmemi_store_server_stop(srv->server, timeout_ms);
    srv->server = NULL;
    return (long)(shmemi_now_ms() - t0);
}

/* The client half of the handshake in bootstrap/client.c, without its trust in itself. */
static int prove_secret(insider_t *peer, const insider_server_t *srv, int pe, int n_pes, int64_t deadline)
{
    shmemi_wire_challenge_t challenge;
    if (shmemi_channel_recv(peer->ch, &challenge, sizeof(challenge), deadline) != 0 ||
        challenge.magic != SHMEMI_WIRE_MAGIC)
        return -1;
    shmemi_wire_hello_t hello = {.pe = pe, .n_pes = n_pes};
    shmemi_proof(srv->secret, "aclshmem-client", challenge.nonce, sizeof(challenge.nonce), hello.proof);
    shmemi_random_bytes(hello.nonce, sizeof(hello.nonce));
    shmemi_wire_welcome_t welcome;
    if (shmemi_channel_send(peer->ch, &hello, sizeof(hello), deadline) != 0 ||
        shmemi_channel_recv(peer->ch, &welcome, sizeof(welcome), deadline) != 0)
        return -1;
    uint8_t expected[SHMEMI_PROOF_LEN];
    shmemi_proof(srv->secret, "aclshmem-server", hello.nonce, sizeof(hello.nonce), expected);
    if (!shmemi_proof_equal(expected, welcome.proof))
        return -1;
    peer->welcome_status = welcome.status;
    return welcome.status == 0 ? 0 : -1;
}

int insider_join(insider_t *peer, const insider_server_t *srv, int pe, int n_pes)
{
    memset(peer, 0, sizeof(*peer));
    peer->pe = pe;
    peer->welcome_status = -1;
    int64_t deadline = shmemi_now_ms() + IO_TIMEOUT_MS;
    int fd = shmemi_tcp_connect(&srv->addr, srv->addr_len, deadline);
    if (fd < 0)
        return -1;
    if (shmemi_channel_open(fd, 0, srv->secret, deadline, &peer->ch) != ACLSHMEM_SUCCESS)
        return -1;
    if (prove_secret(peer, srv, pe, n_pes, deadline) != 0) {
        insider_close(peer);
        return -1;
    }
    return 0;
}

int insider_send(insider_t *peer, const shmemi_msg_t *m, const void *payload, size_t payload_len)
{
    int64_t deadline = shmemi_now_ms() + IO_TIMEOUT_MS;
    int rc = shmemi_channel_send(peer->ch, m, sizeof(*m), deadline);
    if (rc == 0 && payload_len)
        rc = shmemi_channel_send(peer->ch, payload, payload_len, deadline);
    return rc;
}

int insider_send_raw(insider_t *peer, const void *bytes, size_t len)
{
    return shmemi_channel_send(peer->ch, bytes, len, shmemi_now_ms() + IO_TIMEOUT_MS);
}

static int wait_readable(insider_t *peer, int timeout_ms)
{
    if (shmemi_channel_pending(peer->ch))
        return 1;
    struct pollfd pfd = {.fd = shmemi_channel_fd(peer->ch), .events = POLLIN};
    int rc;
    do
        rc = poll(&pfd, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    return rc > 0;
}

static int server_may_send(const shmemi_msg_t *m)
{
    switch (m->type) {
    case SHMEMI_MSG_COLL_DONE:
        return m->len <= SHMEMI_MAX_PAYLOAD;
    case SHMEMI_MSG_COLL_ERROR:
    case SHMEMI_MSG_EXIT:
    case SHMEMI_MSG_PEER_DIED:
        return m->len == 0;
    default:
        return 0;
    }
}

int insider_recv(insider_t *peer, shmemi_msg_t *m, uint8_t **payload, int timeout_ms)
{
    *payload = NULL;
    if (!wait_readable(peer, timeout_ms))
        return 0;
    /* The server writes whole messages: once a byte is there, the rest follows at once. */
    int64_t deadline = shmemi_now_ms() + IO_TIMEOUT_MS;
    if (shmemi_channel_recv(peer->ch, m, sizeof(*m), deadline) != 0)
        return -1;
    if (!server_may_send(m))
        return -2;
    if (m->len == 0)
        return 1;
    *payload = malloc(m->len);
    if (!*payload || shmemi_channel_recv(peer->ch, *payload, m->len, deadline) != 0) {
        free(*payload);
        *payload = NULL;
        return -1;
    }
    return 1;
}

void insider_close(insider_t *peer)
{
    shmemi_channel_close(peer->ch);
    peer->ch = NULL;
}
