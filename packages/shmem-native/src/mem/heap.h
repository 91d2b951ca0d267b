/* Symmetric segments: each PE's DEVICE_SIDE heap, HOST_SIDE heap and control segment are
 * sparse memfds, handed to same-node PEs over a Unix socket (SCM_RIGHTS) and mapped there.
 * No named shared-memory object exists, so a crash leaks nothing. */
#ifndef SHMEMI_HEAP_H
#define SHMEMI_HEAP_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "mem/allocator.h"

/* Heaps are mapped at addresses aligned to this: the largest alignment aclshmem_align
 * honours (ACLSHMEM_HEAP_ALIGNMENT_SIZE in the original). */
#define SHMEMI_HEAP_ALIGN ((size_t)1 << 30)

enum {
    SHMEMI_SEG_HOST = 0,   /* == HOST_SIDE */
    SHMEMI_SEG_DEVICE = 1, /* == DEVICE_SIDE */
    SHMEMI_SEG_CTRL = 2,   /* the library's own: doorbell, barrier counters */
    SHMEMI_SEG_COUNT = 3
};

typedef struct {
    int fd;
    size_t size;
    uint8_t *base;       /* this PE's mapping */
    uint8_t **peer_base; /* [n_pes]: mapping of each PE's twin, NULL for other nodes */
    shmemi_allocator_t alloc;
} shmemi_segment_t;

typedef struct {
    int my_pe, n_pes;
    shmemi_segment_t seg[SHMEMI_SEG_COUNT];
    uint8_t *same_node; /* [n_pes] */
    int listen_fd;      /* abstract Unix socket serving our memfds during init */
    char socket_name[64];
} shmemi_heap_set_t;

/* Every segment memfd is sealed so: no process holding it can resize it under a mapping. */
#define SHMEMI_HEAP_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* What a PE sends with its memfds (SCM_RIGHTS, one fd per segment). */
typedef struct {
    int32_t pe;
    int32_t reserved;
    uint64_t size[SHMEMI_SEG_COUNT];
} shmemi_fd_offer_t;

/* Creates this PE's segments (heap_size bytes for each heap) and starts listening for
 * same-node peers.  job_tag names the job (derived from the secret). */
int shmemi_heaps_create(shmemi_heap_set_t *h, int my_pe, int n_pes, size_t heap_size,
                        size_t ctrl_size, const uint8_t secret[32]);

/* Collective: learns which PEs share this node and maps their segments; then closes the
 * hand-off socket.  Uses the control-plane keys key and key + 0x100. */
int shmemi_heaps_share(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, uint64_t key,
                       const uint8_t secret[32], int64_t timeout_ms);

/* Receives PE pe's offer on sock (data must be waiting): on success fds[] holds its
 * segment fds, each checked to be sealed (SHMEMI_HEAP_SEALS) and of size[s] bytes.  On
 * any failure every fd that arrived is closed.  An aclshmem error code (recorded). */
int shmemi_heap_receive_offer(int sock, int pe, const size_t size[SHMEMI_SEG_COUNT], int fds[SHMEMI_SEG_COUNT]);

void shmemi_heaps_destroy(shmemi_heap_set_t *h);

/* The segment holding [addr, addr + len) in this PE's mappings, or -1; *offset set. */
int shmemi_heap_locate(const shmemi_heap_set_t *h, const void *addr, size_t len, size_t *offset);

#endif
