/* Connections to PE 0's control plane before they have proved the job secret.
 *
 * Anyone who can reach the port can open one, so they are held to a budget, and the budget
 * goes first to the connections that have begun a valid handshake:
 *  - at most SHMEMI_ADMISSION_MAX at a time, each with SHMEMI_HANDSHAKE_MS to finish TLS
 *    and prove the secret;
 *  - a connection "progresses" once its first message was accepted: with TLS, PE 0 has
 *    read and accepted its ClientHello (with the default pre-shared key that takes a key
 *    derived from the secret).  Until then it is idle, and costs PE 0 a socket only;
 *  - when the slots are full, a newcomer takes the place of the idle connection that has
 *    waited longest (and has been polled at least once, so data that had already arrived
 *    is seen first); a progressing connection is never pushed out, and when no idle one
 *    can make way the newcomer is closed at once (a real PE tries again);
 *  - one source address (an IPv6 /64) holds at most SHMEMI_ADMISSION_PER_SOURCE slots:
 *    beyond that its newcomers can only push out its own idle connections, so one flooding
 *    host never takes the whole table from the PEs of other nodes;
 *  - all are served without blocking from the server's one thread, so an idle or
 *    garbage-sending client never delays a real PE.
 * Private to the store server. */
#ifndef SHMEMI_ADMISSION_H
#define SHMEMI_ADMISSION_H

#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bootstrap/channel.h"
#include "bootstrap/uid.h"

#define SHMEMI_ADMISSION_MAX 128
/* Half the table: every PE of a node connects from the node's one address, and a node's
 * PEs beyond this many at once are not lost (they try again).  Loopback jobs share
 * 127.0.0.1 with any local flooder, so there the progress rule above is the defence. */
#define SHMEMI_ADMISSION_PER_SOURCE (SHMEMI_ADMISSION_MAX / 2)

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

/* A connection just accepted from address from (fd non-blocking; ownership passes). */
void shmemi_admission_add(shmemi_admission_t *a, int fd, const struct sockaddr_storage *from);

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
