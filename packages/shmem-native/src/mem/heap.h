/* Symmetric segments: each PE's HOST_SIDE heap, DEVICE_SIDE heap and control segment lie
 * one after another in one sparse memfd, which same-node PEs open (through /proc, or handed
 * over a Unix socket with SCM_RIGHTS) and map whole, with one mmap each.
 * No named shared-memory object exists, so a crash leaks nothing.  When init asks for it,
 * the program's own global and static data is one more segment (SHMEMI_SEG_DATA,
 * mem/data_segment.h), a memfd of its own shared the same way; otherwise that segment is
 * absent (size 0, no memfd, no mapping), on every PE alike. */
#ifndef SHMEMI_HEAP_H
#define SHMEMI_HEAP_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "mem/allocator.h"
#include "mem/data_segment.h"

/* Heaps are mapped at addresses aligned to this: the largest alignment aclshmem_align
 * honours (ACLSHMEM_HEAP_ALIGNMENT_SIZE in the original). */
#define SHMEMI_HEAP_ALIGN ((size_t)1 << 30)

enum {
    SHMEMI_SEG_HOST = 0,   /* == HOST_SIDE */
    SHMEMI_SEG_DEVICE = 1, /* == DEVICE_SIDE */
    SHMEMI_SEG_CTRL = 2,   /* the library's own: doorbell, barrier counters */
    SHMEMI_SEG_DATA = 3,   /* the program's globals (.data, .bss), at the program's own address */
    SHMEMI_SEG_COUNT = 4
};

/* The files behind the segments: SHMEMI_FILE_SEGMENTS holds the host heap, the device heap
 * and the control segment, each from a page boundary (shmemi_segments_layout); the data
 * segment is SHMEMI_FILE_DATA's alone. */
enum { SHMEMI_FILE_SEGMENTS = 0, SHMEMI_FILE_DATA = 1, SHMEMI_FILE_COUNT = 2 };

typedef struct {
    size_t offset;       /* where it starts in its file */
    size_t size;         /* 0: the segment is absent */
    uint8_t *base;       /* this PE's mapping (NULL when absent) */
    uint8_t **peer_base; /* [n_pes]: mapping of each PE's twin, NULL for other nodes */
    shmemi_allocator_t alloc;
} shmemi_segment_t;

typedef struct shmemi_handoff shmemi_handoff_t; /* mem/handoff.h */

typedef struct {
    int my_pe, n_pes;
    shmemi_segment_t seg[SHMEMI_SEG_COUNT];
    int file_fd[SHMEMI_FILE_COUNT];        /* -1 for an absent file */
    size_t file_size[SHMEMI_FILE_COUNT];   /* 0: absent */
    uint8_t *same_node; /* [n_pes] */
    int *node_first;    /* [n_pes]: each PE's node, named by the lowest world PE on it */
    int cpu_sharers;    /* PEs of the job on this kernel (boot), in any network namespace,
                         * that may compete with this one for a CPU, itself included (heap.c) */
    int shared_cpus;    /* the CPUs those PEs may run on, together */
    int shares_data;    /* init asked to share the program's data (SHMEMI_SEG_DATA may still be
                         * absent: a program without writable data) */
    uint64_t data_link; /* the data segment's link-time address (data_segment.h) */
    int listen_fd;      /* abstract Unix socket serving our memfds during init */
    char socket_name[64];
    shmemi_handoff_t *handoff; /* the thread serving it, from shmemi_heaps_share to _share_end */
    uint8_t *region;           /* the address space holding every peer's segments (heap.c), or NULL */
    uint8_t *region_next;      /* where the next one goes */
    size_t region_size;
} shmemi_heap_set_t;

/* The file of segment s. */
static inline int shmemi_segment_file(int s)
{
    return s == SHMEMI_SEG_DATA ? SHMEMI_FILE_DATA : SHMEMI_FILE_SEGMENTS;
}

/* From the segments' sizes (0: absent), each segment's offset in its file and each file's
 * size (0: absent); every PE computes the same. */
void shmemi_segments_layout(const size_t size[SHMEMI_SEG_COUNT], size_t offset[SHMEMI_SEG_COUNT],
                            size_t file_size[SHMEMI_FILE_COUNT]);

/* Every segment memfd is sealed so: no process holding it can resize it under a mapping. */
#define SHMEMI_HEAP_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* What a PE sends with its memfds (SCM_RIGHTS, one fd per present file, in order): the
 * sizes of its segments, from which the receiver knows the files' sizes. */
typedef struct {
    int32_t pe;
    int32_t reserved;
    uint64_t size[SHMEMI_SEG_COUNT];
} shmemi_fd_offer_t;

/* Creates this PE's segments (heap_size bytes for each heap) and starts listening for
 * same-node peers; data (NULL: none) is the program's data placement, which becomes
 * SHMEMI_SEG_DATA (its memfd is dup'ed; its pages are not the heap set's to unmap).
 * job_tag names the job (derived from the secret). */
int shmemi_heaps_create(shmemi_heap_set_t *h, int my_pe, int n_pes, size_t heap_size,
                        size_t ctrl_size, const shmemi_data_segment_t *data, const uint8_t secret[32]);

/* A memfd of size bytes sealed with SHMEMI_HEAP_SEALS; -1 with errno set on failure. */
int shmemi_sealed_memfd(const char *name, size_t size);

/* Collective: learns which PEs share this node and maps their segments.  Fails on every PE,
 * naming two that differ, unless all PEs share the same data segment (or none does).  Uses
 * the control-plane key key (one collective).  This PE's hand-off socket serves the peers
 * that cannot open its segments through /proc until shmemi_heaps_share_end, which the
 * caller calls once every PE is known to have mapped its peers (a later collective);
 * secret must stay valid until then. */
int shmemi_heaps_share(shmemi_heap_set_t *h, shmemi_bootstrap_t *boot, uint64_t key,
                       const uint8_t secret[32], int64_t timeout_ms);
/* Stops serving the hand-off socket and closes it (also done by shmemi_heaps_destroy). */
void shmemi_heaps_share_end(shmemi_heap_set_t *h);

/* The name of segment s, for messages; and of file f (its memfd's name). */
const char *shmemi_segment_name(int s);
const char *shmemi_file_name(int f);

/* Receives PE pe's offer on sock (data must be waiting), which must announce the segment
 * sizes size[] (this PE's): on success fds[] holds its files' fds, each checked to be
 * sealed (SHMEMI_HEAP_SEALS) and of the size shmemi_segments_layout gives (-1 for an
 * absent file, for which no fd comes).  On any failure every fd that arrived is closed.
 * An aclshmem error code (recorded). */
int shmemi_heap_receive_offer(int sock, int pe, const size_t size[SHMEMI_SEG_COUNT], int fds[SHMEMI_FILE_COUNT]);

void shmemi_heaps_destroy(shmemi_heap_set_t *h);

/* The segment holding [addr, addr + len) in this PE's mappings (a heap or the program's
 * data; never the control segment), or -1; *offset set. */
int shmemi_heap_locate(const shmemi_heap_set_t *h, const void *addr, size_t len, size_t *offset);

#endif
