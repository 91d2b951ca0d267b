/* A control-plane connection: TCP, encrypted with TLS 1.3 unless TLS is turned off.
 *
 * With no certificates configured the TLS key is a pre-shared key derived from the unique
 * ID's secret, so the default needs no set-up and an outsider can neither join nor read the
 * traffic.  With certificates (tls_info names tlsCert/tlsPk/CA files) both ends present and
 * verify them.  Either way the HMAC proof of the secret still runs inside the channel.
 * One thread may receive while others send: calls on one channel are serialised inside. */
#ifndef SHMEMI_CHANNEL_H
#define SHMEMI_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct shmemi_channel shmemi_channel_t;

/* Wraps connected fd (ownership passes).  Returns an aclshmem error code; on failure the
 * fd is closed and the last error says why. */
int shmemi_channel_open(int fd, int is_server, const uint8_t secret[32], int64_t deadline_ms,
                        shmemi_channel_t **out);

/* The TLS handshake of a channel made by shmemi_channel_start, waiting until deadline_ms
 * (at once without TLS).  An aclshmem error code; ch stays open either way, so that the
 * caller can ask shmemi_channel_peer_hung_up why it failed. */
int shmemi_channel_handshake(shmemi_channel_t *ch, int64_t deadline_ms);
/* 1 once the connection has ended because the peer closed or reset it, with no TLS alert
 * before: a handshake or transfer that failed so was dropped (PE 0 overloaded or flooded),
 * not refused (a wrong key or certificate comes as an alert) nor misunderstood. */
int shmemi_channel_peer_hung_up(shmemi_channel_t *ch);

/* ---- non-blocking use, for a server that drives many channels from one thread ----- */

/* Wraps fd (ownership passes) without starting the TLS handshake: drive it with
 * shmemi_channel_handshake_step.  An aclshmem error code (fd closed on failure). */
int shmemi_channel_start(int fd, int is_server, const uint8_t secret[32], shmemi_channel_t **out);

/* What the channels of one side share: the TLS settings read once and OpenSSL's context
 * made from them (making one costs a tenth of a millisecond, the first of a process ten
 * times that), for a server that wraps a connection per PE.  An aclshmem error code. */
typedef struct shmemi_channel_context shmemi_channel_context_t;
int shmemi_channel_context_new(int is_server, shmemi_channel_context_t **out);
/* Channels made from c keep what they need: c may go first. */
void shmemi_channel_context_free(shmemi_channel_context_t *c);
/* shmemi_channel_start with c's side and settings. */
int shmemi_channel_start_in(const shmemi_channel_context_t *c, int fd, const uint8_t secret[32],
                            shmemi_channel_t **out);
/* Advances the TLS handshake without blocking: 0 when done (at once without TLS), -EAGAIN
 * to be called again when shmemi_channel_wanted() events arrive, -EPROTO when it failed
 * (shmemi_channel_failure says why; nothing is logged, so a flood of bad clients is quiet). */
int shmemi_channel_handshake_step(shmemi_channel_t *ch);
const char *shmemi_channel_failure(const shmemi_channel_t *ch);
/* Server side, TLS: 1 once the handshake has read and accepted the client's first message
 * (its ClientHello; with the default pre-shared key that proves a key derived from the
 * secret).  0 before, and always 0 without TLS. */
int shmemi_channel_handshake_begun(shmemi_channel_t *ch);
/* Receives what has arrived, up to len bytes, without blocking: a byte count, -EAGAIN
 * (nothing yet) or -EPIPE (closed or broken). */
ssize_t shmemi_channel_recv_some(shmemi_channel_t *ch, void *buf, size_t len);
/* The poll() events (POLLIN or POLLOUT) that the last -EAGAIN waits for. */
short shmemi_channel_wanted(const shmemi_channel_t *ch);

/* Checks the TLS settings on this PE alone (files load, the key matches, this PE's own
 * certificate verifies against the configured CA and CRL), so a bad configuration fails at
 * once on every PE instead of as a failed handshake on some.  An aclshmem error code. */
int shmemi_channel_check_settings(void);

/* 1 when TLS is on and tls_info names a certificate (tlsCert): peers then authenticate
 * with certificates rather than only with the job secret. */
int shmemi_channel_uses_certificates(void);

/* 0, -ETIMEDOUT, -EPIPE (closed) or another -errno. */
int shmemi_channel_send(shmemi_channel_t *ch, const void *buf, size_t len, int64_t deadline_ms);
int shmemi_channel_recv(shmemi_channel_t *ch, void *buf, size_t len, int64_t deadline_ms);

/* Nonzero when decrypted bytes wait inside the channel (poll() cannot see them). */
int shmemi_channel_pending(shmemi_channel_t *ch);

/* The socket, for poll() by a server loop. */
int shmemi_channel_fd(const shmemi_channel_t *ch);
/* Unblocks a thread receiving on ch (for shutdown). */
void shmemi_channel_shutdown(shmemi_channel_t *ch);
void shmemi_channel_close(shmemi_channel_t *ch);

#endif
