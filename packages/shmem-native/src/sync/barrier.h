#ifndef SHMEMI_BARRIER_H
#define SHMEMI_BARRIER_H

#include "core/instance.h"
#include "team/team.h"

/* Dissemination barrier over team t, written once over transport primitives: in round k
 * each member adds 1 to the round-k counter of the member 2^k ahead and waits until its
 * own round-k counter reaches the barrier's epoch.  Counters only grow, so there is no
 * reset race.  Completes this PE's outstanding RMA first. */
int shmemi_barrier(shmemi_instance_t *inst, shmemi_team_t *t);

#endif
