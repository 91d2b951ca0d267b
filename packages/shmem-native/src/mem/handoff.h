/* The socket hand-off of segment memfds between the PEs of one node (private to mem/).
 * heap.c opens a peer's memfds through /proc when it can; this is the way for the peers it
 * cannot (another PID namespace, a process that is not dumpable, a /proc that refuses):
 * each PE serves its memfds during init on an abstract Unix socket, to processes of its
 * user that prove the job's secret. */
#ifndef SHMEMI_HANDOFF_H
#define SHMEMI_HANDOFF_H

#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "mem/heap.h"

/* Opens h's listening socket (h->listen_fd, h->socket_name), named from the secret and the
 * PE number, so that peers may connect (and queue) before the server runs. */
int shmemi_handoff_listen(shmemi_heap_set_t *h, const uint8_t secret[32]);

/* Serves h's memfds on h->listen_fd from a thread of its own until shmemi_handoff_stop, the
 * deadline, or a failure of the job.  h and secret must stay valid until then. */
int shmemi_handoff_start(const shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, const uint8_t secret[32],
                         int64_t deadline, shmemi_handoff_t **out);
/* Ends the service (NULL: nothing to do).  The listening socket is the caller's to close. */
void shmemi_handoff_stop(shmemi_handoff_t *server);

/* Fetches PE pe's file fds over its socket, trying again while it drops the connection,
 * until deadline: fds[f] is -1 for an absent file, every other one is checked as
 * shmemi_file_fd_check does.  An aclshmem error code (recorded). */
int shmemi_handoff_fetch(const shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, int pe, const uint8_t secret[32],
                         int64_t deadline, int fds[SHMEMI_FILE_COUNT]);

/* A peer's file f is safe to map only if nobody can resize it under us: sealed with
 * SHMEMI_HEAP_SEALS and exactly expected bytes.  An aclshmem error code naming pe. */
int shmemi_file_fd_check(int fd, size_t expected, int f, int pe);

#endif
