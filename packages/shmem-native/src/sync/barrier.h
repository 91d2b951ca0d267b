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

/* Whether another member of t, a team on this node, is in a barrier of t that this PE has
 * not entered (its arrival counted, the barrier not released): the collectives' exchange
 * without a barrier (coll/exchange.c) asks, to tell a barrier called against its collective
 * from a member that is late. */
int shmemi_barrier_entered(shmemi_instance_t *inst, const shmemi_team_t *t);

#endif
