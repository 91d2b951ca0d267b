/* The control segment: the library's own symmetric words, one copy per PE. */
#ifndef SHMEMI_CTRL_H
#define SHMEMI_CTRL_H

#include <stdatomic.h>
#include <stdint.h>

#include "aclshmem/types.h"

#define SHMEMI_BARRIER_ROUNDS 16 /* dissemination rounds: ceil(log2(ACLSHMEM_MAX_PES)) + spare */

typedef struct {
    /* The futex word waiters sleep on: bumped to wake them (see core/wait.c). */
    _Atomic uint32_t doorbell;
    /* 1 while a waiter may be asleep on the doorbell; the writer that wakes it clears it. */
    _Atomic uint32_t sleeping;
    uint8_t pad[56];
    /* Barrier arrivals per team and dissemination round; monotonic. */
    _Atomic uint64_t team_psync[ACLSHMEM_MAX_TEAMS][SHMEMI_BARRIER_ROUNDS];
} shmemi_ctrl_t;

#endif
