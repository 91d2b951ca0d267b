/* Transports: how this PE reaches another PE's segments.  One ops table per kind, chosen
 * per peer at init (shm for same-node PEs).  Every operation addresses the target by
 * (segment, offset), so it never needs the target's virtual addresses. */
#ifndef SHMEMI_TRANSPORT_H
#define SHMEMI_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct shmemi_instance;

typedef enum { SHMEMI_ATOMIC_SET = 0, SHMEMI_ATOMIC_ADD = 1 } shmemi_atomic_op_t;

typedef struct shmemi_transport_ops {
    const char *name;
    int (*put)(struct shmemi_instance *inst, int pe, int seg, size_t offset, const void *src, size_t len);
    int (*get)(struct shmemi_instance *inst, int pe, int seg, size_t offset, void *dst, size_t len);
    /* Atomic SET or ADD of a 4- or 8-byte word, ordered after every earlier put to pe. */
    int (*atomic)(struct shmemi_instance *inst, int pe, int seg, size_t offset, shmemi_atomic_op_t op,
                  int width, uint64_t value);
    /* Wakes pe's waiters after writes to it. */
    void (*notify)(struct shmemi_instance *inst, int pe);
    /* Completes every operation issued to any PE through this transport. */
    int (*quiet)(struct shmemi_instance *inst);
    /* A load/store address of pe's (seg, offset), or NULL if there is none. */
    void *(*ptr)(struct shmemi_instance *inst, int pe, int seg, size_t offset);
} shmemi_transport_ops_t;

extern const shmemi_transport_ops_t shmemi_transport_shm;
/* For PEs on other nodes when no inter-node transport is built: fails with a clear error. */
extern const shmemi_transport_ops_t shmemi_transport_none;

/* Picks a transport for every PE of inst. */
int shmemi_transport_select(struct shmemi_instance *inst);

#endif
