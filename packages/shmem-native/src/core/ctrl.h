/* The control segment: the library's own symmetric words, one copy per PE. */
#ifndef SHMEMI_CTRL_H
#define SHMEMI_CTRL_H

#include <stdatomic.h>
#include <stdint.h>

#include "aclshmem/types.h"

#define SHMEMI_BARRIER_ROUNDS 16 /* dissemination rounds: ceil(log2(ACLSHMEM_MAX_PES)) + spare */

typedef struct {
    /* Bumped after every remote write into this PE; waiters sleep on it (futex). */
    _Atomic uint32_t doorbell;
    _Atomic uint32_t sleepers;
    uint8_t pad[56];
    /* Barrier arrivals per team and dissemination round; monotonic. */
    _Atomic uint64_t team_psync[ACLSHMEM_MAX_TEAMS][SHMEMI_BARRIER_ROUNDS];
} shmemi_ctrl_t;

#endif
