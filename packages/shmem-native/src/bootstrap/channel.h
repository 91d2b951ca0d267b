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

typedef struct shmemi_channel shmemi_channel_t;

/* Wraps connected fd (ownership passes).  Returns an aclshmem error code; on failure the
 * fd is closed and the last error says why. */
int shmemi_channel_open(int fd, int is_server, const uint8_t secret[32], int64_t deadline_ms,
                        shmemi_channel_t **out);

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
