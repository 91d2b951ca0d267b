/*
 * insider.h - a control-plane peer that knows the job secret and says whatever it likes.
 *
 * Tests and the fuzzer link the library's own objects (not the shared library) and use
 * this to play an authenticated PE gone bad: it joins PE 0's server with the real
 * handshake (TLS when it is on, the proof of the secret), then sends arbitrary headers,
 * payloads of any length, or raw bytes.  Also starts a server in this process on a
 * loopback port, so PE 0's side runs under the test's eyes (and its sanitizers).
 */
#ifndef ACLSHMEM_TEST_INSIDER_H
#define ACLSHMEM_TEST_INSIDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/channel.h"
#include "bootstrap/protocol.h"

typedef struct {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    uint8_t secret[SHMEMI_SECRET_LEN];
    int n_pes;
    shmemi_store_server_t *server;
} insider_server_t;

/* Starts a store server for n_pes PEs on 127.0.0.1 with a random secret.  0 or -1. */
int insider_server_start(insider_server_t *srv, int n_pes);
/* Stops it, waiting at most timeout_ms for the PEs to leave; returns the ms it took. */
long insider_server_stop(insider_server_t *srv, int64_t timeout_ms);

typedef struct {
    shmemi_channel_t *ch;
    int pe;
    int32_t welcome_status; /* what the server said to the hello */
} insider_t;

/* Joins srv as PE pe of n_pes.  0 when welcomed; -1 (with *peer closed) otherwise, and
 * peer->welcome_status then holds the server's verdict if it gave one. */
int insider_join(insider_t *peer, const insider_server_t *srv, int pe, int n_pes);

/* A header and payload_len bytes of payload (which may disagree with m->len: that is the
 * point).  0, or a negative errno when the server closed the connection. */
int insider_send(insider_t *peer, const shmemi_msg_t *m, const void *payload, size_t payload_len);
/* Raw bytes. */
int insider_send_raw(insider_t *peer, const void *bytes, size_t len);

/* The next message within timeout_ms: 1 (and *payload malloc'ed when m->len > 0, to be
 * freed), 0 on timeout, -1 when the connection closed, -2 when the server sent a header
 * no server may send (a type of the clients' or unknown, a payload where none belongs or
 * over SHMEMI_MAX_PAYLOAD). */
int insider_recv(insider_t *peer, shmemi_msg_t *m, uint8_t **payload, int timeout_ms);

void insider_close(insider_t *peer);

#endif
