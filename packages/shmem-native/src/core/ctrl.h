/* The control segment: the library's own symmetric words, one copy per PE. */
#ifndef SHMEMI_CTRL_H
#define SHMEMI_CTRL_H

#include <stdatomic.h>
#include <stdint.h>

#include "aclshmem/types.h"

#define SHMEMI_BARRIER_ROUNDS 16 /* dissemination rounds: ceil(log2(ACLSHMEM_MAX_PES)) + spare */

/* A collective's record (coll/exchange.c): what this PE was asked to do, read by the team. */
#define SHMEMI_COLL_RECORD_BYTES 256

typedef struct {
    _Alignas(64) uint8_t bytes[SHMEMI_COLL_RECORD_BYTES];
} shmemi_coll_slot_t;

/* The data of a small collective of the first SHMEMI_COLL_PAYLOAD_TEAMS team ids, when every
 * member shares one node (coll/small.c): up to SHMEMI_COLL_PAYLOAD_BYTES per member and
 * round, where a record carries ACLSHMEMX_TEAM_EXCHANGE_MAX.  Pages nobody touches cost
 * nothing, so the teams that never use it (or span nodes) take no memory. */
#define SHMEMI_COLL_PAYLOAD_TEAMS 8
#define SHMEMI_COLL_PAYLOAD_BYTES 2048

typedef struct {
    _Alignas(64) uint8_t bytes[SHMEMI_COLL_PAYLOAD_BYTES];
} shmemi_coll_payload_t;

/* A futex word that several PEs may sleep on, and how many do: the writer that makes their
 * condition true wakes them all with one call (core/wait.h, shmemi_wake_shared). */
typedef struct {
    _Atomic uint32_t word;
    _Atomic uint32_t sleepers;
} shmemi_wake_word_t;

typedef struct {
    /* The futex word waiters sleep on: bumped to wake them (see core/wait.c). */
    _Atomic uint32_t doorbell;
    /* 1 while a waiter may be asleep on the doorbell; the writer that wakes it clears it. */
    _Atomic uint32_t sleeping;
    /* 1 when this PE's waiters make every registered process's CPU pass a memory barrier
     * before they sleep (membarrier(2), see core/wait.c): then a registered writer's notify
     * needs no fence of its own.  Written once at init. */
    _Atomic uint32_t waiter_fences_writers;
    uint8_t pad[52];
    /* Barrier arrivals per team and dissemination round; monotonic. */
    _Atomic uint64_t team_psync[ACLSHMEM_MAX_TEAMS][SHMEMI_BARRIER_ROUNDS];
    /* The node barrier of teams whose members all share this node (sync/barrier.c), kept
     * by the team's first member: arrivals of the barrier under way (the last arriver
     * puts it back to 0), and the number of barriers completed (only grows). */
    _Atomic uint64_t node_arrivals[ACLSHMEM_MAX_TEAMS];
    _Atomic uint64_t node_release[ACLSHMEM_MAX_TEAMS];
    /* ... and where its waiting members sleep, all woken by the last arriver at once. */
    shmemi_wake_word_t node_wake[ACLSHMEM_MAX_TEAMS];
    /* The collectives' records per team, two used in turn: one collective's record stays
     * readable while a slow PE still reads it and the fast ones start the next one. */
    shmemi_coll_slot_t coll_record[ACLSHMEM_MAX_TEAMS][2];
    /* ... and the data of their small collectives, for the first team ids, in turn as well. */
    shmemi_coll_payload_t coll_payload[SHMEMI_COLL_PAYLOAD_TEAMS][2];
    /* The node syncs inside a collective (coll/topology.c), per team, kept by the first
     * member of each node's group: arrivals of the sync under way (the last arriver puts it
     * back to 0), and the number of syncs completed (only grows). */
    _Atomic uint64_t coll_arrivals[ACLSHMEM_MAX_TEAMS];
    _Atomic uint64_t coll_completed[ACLSHMEM_MAX_TEAMS];
    /* Pieces of a broadcast's data that its root made ready for reading, per team; monotonic
     * (coll/move.c). */
    _Atomic uint64_t coll_ready[ACLSHMEM_MAX_TEAMS];
} shmemi_ctrl_t;

#endif
