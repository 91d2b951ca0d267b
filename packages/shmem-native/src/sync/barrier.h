#ifndef SHMEMI_BARRIER_H
#define SHMEMI_BARRIER_H

#include "core/instance.h"
#include "team/team.h"

/* Barrier over team t; completes this PE's outstanding RMA first.  Teams of more than two
 * members that all share this node take the node barrier (one shared counter, the last
 * arriver wakes everyone at once: barrier.c).  Teams that span nodes with several members
 * on some node take two levels: the node's members meet at its leader, the leaders meet in
 * a dissemination barrier, each leader releases its node.  The rest (two members, or one
 * per node) take the dissemination barrier alone, written once over transport primitives:
 * in round k each participant adds 1 to the round-k counter of the participant 2^k ahead
 * and waits until its own round-k counter reaches the barrier's epoch.  Those counters
 * only grow, so there is no reset race. */
int shmemi_barrier(shmemi_instance_t *inst, shmemi_team_t *t);

/* A block of bytes that each node's leader sends the other node's leader with its arrival,
 * in a barrier of a team whose members are on exactly two nodes, several on some node (the
 * two-level barrier): build fills it (called on a leader once its node's members arrived,
 * so that what they published before is there), and it lands at offset inbox of the other
 * leader's control segment before that leader's barrier ends (and before it releases its
 * node's members).  The collectives' exchange
 * sends its records so (coll/exchange.c): no read across the network after the barrier. */
#define SHMEMI_BARRIER_CARRY_MAX 2048

typedef struct {
    void (*build)(void *ctx, uint8_t *block);
    void *ctx;
    size_t bytes; /* of the block, at most SHMEMI_BARRIER_CARRY_MAX */
    size_t inbox; /* where the other leader's block lands, in this leader's control segment */
} shmemi_barrier_carry_t;

/* shmemi_barrier carrying carry's blocks (NULL: none). */
int shmemi_barrier_carrying(shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_barrier_carry_t *carry);

/* Whether another member of t, a team on this node, is in a barrier of t that this PE has
 * not entered (its arrival counted, the barrier not released): the collectives' exchange
 * without a barrier (coll/exchange.c) asks, to tell a barrier called against its collective
 * from a member that is late. */
int shmemi_barrier_entered(shmemi_instance_t *inst, const shmemi_team_t *t);

#endif
