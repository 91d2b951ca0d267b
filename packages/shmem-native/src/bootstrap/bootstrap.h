/* The control plane: PE 0 serves a small coordination service at the UID's address;
 * every PE keeps one authenticated connection to it for the life of the job.
 *
 * It provides collectives among any subset of PEs (keyed so members agree), job-wide
 * exit, and liveness: when a PE's connection drops, every other PE learns which one died
 * and its blocked collectives and waits fail instead of hanging.
 */
#ifndef SHMEMI_BOOTSTRAP_H
#define SHMEMI_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap/uid.h"

typedef struct shmemi_bootstrap shmemi_bootstrap_t;
typedef struct shmemi_store_server shmemi_store_server_t;

/* PE 0: serve n_pes PEs on listen_fd (already bound; ownership passes). */
int shmemi_store_server_start(int listen_fd, const uint8_t secret[SHMEMI_SECRET_LEN], int n_pes,
                              shmemi_store_server_t **out);
/* Waits (up to timeout_ms) for every PE to leave, then stops. */
void shmemi_store_server_stop(shmemi_store_server_t *server, int64_t timeout_ms);

/* Called (from the bootstrap's own thread, under its lock: it must not call back into the
 * bootstrap) when the job fails, to wake local waiters. */
typedef void (*shmemi_failure_hook)(void *ctx);

/* Connects PE my_pe to the server named by inner, retrying until timeout_ms. */
int shmemi_bootstrap_connect(const shmemi_uid_inner_t *inner, int my_pe, int n_pes,
                             int64_t timeout_ms, shmemi_bootstrap_t **out);
void shmemi_bootstrap_set_failure_hook(shmemi_bootstrap_t *boot, shmemi_failure_hook hook, void *ctx);

/* Gathers len bytes from each of n members (this PE is member idx) into out[n * len], in
 * member order.  key must be the same on every member and unique among live collectives. */
int shmemi_bootstrap_collective(shmemi_bootstrap_t *boot, uint64_t key, int n, int idx,
                                const void *in, size_t len, void *out, int64_t timeout_ms);

/* Ends every PE's process with status (this one too). */
void shmemi_bootstrap_global_exit(shmemi_bootstrap_t *boot, int status);

/* 0 while the job is healthy; otherwise an error code with a message in msg. */
int shmemi_bootstrap_failure(shmemi_bootstrap_t *boot, char *msg, size_t msg_len);

/* Leaves the job.  clean: say goodbye first, so the server does not report this PE as
 * dead; otherwise (a failed init) the others learn at once that this PE is gone. */
void shmemi_bootstrap_close(shmemi_bootstrap_t *boot, int clean);

#endif
