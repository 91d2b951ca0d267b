#ifndef SHMEMI_BARRIER_H
#define SHMEMI_BARRIER_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/instance.h"
#include "team/team.h"

/* A meeting of the members of one node on two words of one member's control segment: the
 * node barrier's (below) and the node sync inside a collective (coll/topology.c).  Each
 * member opens it (reads the release count), then arrives; the last to arrive puts the
 * arrivals back to 0, so that nobody arrives at the next meeting before it is, then moves
 * the release count on; the others wait for it to move.  Nothing outlives a meeting, and
 * while a member waits the count can only move on by its own meeting.  Waking the members
 * that sleep is the caller's. */
typedef struct {
    _Atomic uint64_t *arrivals; /* of the meeting under way */
    _Atomic uint64_t *release;  /* meetings completed (only grows) */
    uint64_t seen;              /* the release count before this PE arrived */
} shmemi_meeting_t;

static inline void shmemi_meeting_open(shmemi_meeting_t *m, _Atomic uint64_t *arrivals, _Atomic uint64_t *release)
{
    m->arrivals = arrivals;
    m->release = release;
    m->seen = atomic_load(release);
}

/* Completes m's meeting, moving the release count on by `by`. */
static inline void shmemi_meeting_complete(const shmemi_meeting_t *m, uint64_t by)
{
    atomic_store(m->arrivals, 0);
    atomic_store(m->release, m->seen + by);
}

/* Arrives at m's meeting of `members`: nonzero when this PE was the last (it completed it). */
static inline int shmemi_meeting_arrive(const shmemi_meeting_t *m, int members)
{
    if (atomic_fetch_add(m->arrivals, 1) + 1 < (uint64_t)members)
        return 0;
    shmemi_meeting_complete(m, 1);
    return 1;
}

/* Whether m's meeting completed (a shmemi_ready_fn). */
static inline int shmemi_meeting_released(void *m)
{
    const shmemi_meeting_t *meeting = m;
    return atomic_load(meeting->release) != meeting->seen;
}

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
