/* Connections to PE 0's control plane before they have proved the job secret.
 *
 * Anyone who can reach the port can open one, so they are held to a budget: at most
 * SHMEMI_ADMISSION_MAX at a time (a new one pushes out the oldest), SHMEMI_HANDSHAKE_MS
 * each to finish TLS and prove the secret, and all are served without blocking from the
 * server's one thread, so an idle or garbage-sending client never delays a real PE.
 * Private to the store server. */
#ifndef SHMEMI_ADMISSION_H
#define SHMEMI_ADMISSION_H

#include <poll.h>
#include <stdint.h>

#include "bootstrap/channel.h"
#include "bootstrap/uid.h"

#define SHMEMI_ADMISSION_MAX 128

typedef struct shmemi_admission shmemi_admission_t;

/* Asked once a client has proved the secret and says it is PE pe of n_pes: 0 lets it in,
 * an aclshmem error code refuses it (the client is told which). */
typedef int (*shmemi_admit_check_fn)(void *ctx, int pe, int n_pes);
/* The client is in and has been welcomed: ch now belongs to the callee. */
typedef void (*shmemi_admitted_fn)(void *ctx, int pe, shmemi_channel_t *ch);

shmemi_admission_t *shmemi_admission_new(const uint8_t secret[SHMEMI_SECRET_LEN], shmemi_admit_check_fn check,
                                         shmemi_admitted_fn admitted, void *ctx);
/* Closes every connection still being admitted, then frees a. */
void shmemi_admission_free(shmemi_admission_t *a);

/* A connection just accepted (fd non-blocking; ownership passes). */
void shmemi_admission_add(shmemi_admission_t *a, int fd);

/* Fills up to SHMEMI_ADMISSION_MAX pollfds; returns how many. */
int shmemi_admission_poll_fds(shmemi_admission_t *a, struct pollfd *fds);
/* Advances the connections of the last poll_fds whose fds are ready (fds as poll returned
 * them) and ends those past their deadline. */
void shmemi_admission_serve(shmemi_admission_t *a, const struct pollfd *fds, int count);
/* Milliseconds until the next deadline (capped at cap_ms), for poll's timeout. */
int shmemi_admission_wait_ms(const shmemi_admission_t *a, int cap_ms);

/* Closes every connection still being admitted (the server stops accepting). */
void shmemi_admission_close_all(shmemi_admission_t *a);

#endif
