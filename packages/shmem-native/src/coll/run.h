/* Inside the collectives engine: one running collective and the pieces its algorithms share
 * (exchange.c: the records, the reads and writes of members' memory, the syncs; move.c and
 * reduce.c: the algorithms). */
#ifndef SHMEMI_COLL_RUN_H
#define SHMEMI_COLL_RUN_H

#include <pthread.h>
#include <stdint.h>

#include "aclshmem/coll.h"
#include "coll/coll.h"
#include "core/ctrl.h"
#include "sync/barrier.h"
#include "transport/transport.h"

/* What one PE publishes at the start of a collective (its slot in the control segment). */
typedef struct {
    uint64_t seq;      /* the team's collectives this PE started, this one included */
    uint64_t team_uid; /* the team (an id can be reused by a later team) */
    int32_t kind, dtype, op, root;
    int32_t status;    /* ACLSHMEM_SUCCESS, or the error this PE's own checks found */
    int32_t dst_seg, src_seg; /* -1: no buffer (nothing to move, or this PE's is not read) */
    int32_t node;      /* the lowest world PE of this PE's node: who shares memory with whom */
    uint64_t nelems;
    uint64_t dst_off, src_off;
    int64_t dst_stride, src_stride;
    uint8_t payload[ACLSHMEMX_TEAM_EXCHANGE_MAX]; /* aclshmemx_team_exchange's bytes */
} shmemi_coll_record_t;

_Static_assert(sizeof(shmemi_coll_record_t) <= SHMEMI_COLL_RECORD_BYTES, "a record fits its slot");

/* Per team id, on this PE. */
typedef struct {
    pthread_mutex_t lock; /* one collective of the team at a time on this PE */
    uint64_t uid;         /* the team the count below belongs to */
    uint64_t seq;
} shmemi_coll_team_t;

struct shmemi_coll_state {
    shmemi_coll_team_t team[ACLSHMEM_MAX_TEAMS];
    /* The node sync under way per team id, between its two halves (topology.c). */
    shmemi_meeting_t node_meeting[ACLSHMEM_MAX_TEAMS];
    /* The same for the pieces of broadcasts made ready by their roots (ctrl->coll_ready). */
    uint64_t ready_epoch[ACLSHMEM_MAX_TEAMS];
};

/* The buffers of a member that a collective reads or writes. */
typedef enum { SHMEMI_COLL_SRC, SHMEMI_COLL_DST } shmemi_coll_side_t;

/* Which members share a node (from the records' node fields): the members fall into groups
 * of one node each, numbered in the order their first member appears in the team. */
typedef struct {
    int nodes;         /* how many groups */
    int *group;        /* [team size] each member's group */
    int *local;        /* [team size] each member's index in its group */
    int *start;        /* [nodes + 1] where each group's members begin in member[] */
    int *member;       /* [team size] the members, group by group, each group in team order */
} shmemi_coll_topo_t;

/* The ints a topology of a team of size members needs (allocated with the records, before
 * the exchange, so that no PE can fail to make it afterwards). */
#define SHMEMI_COLL_TOPO_INTS(size) (4 * (size_t)(size) + 1)

/* One collective in progress on this PE, after the exchange. */
typedef struct {
    const char *api;
    shmemi_instance_t *inst;
    shmemi_team_t *t;
    const shmemi_coll_t *c;
    const shmemi_coll_record_t *all; /* every member's record, in team order */
    int me;                          /* this PE's index in the team */
    size_t esize;                    /* bytes of one element */
    const shmemi_coll_topo_t *topo;
} shmemi_coll_run_t;

/* topology.c: the topology of the team from the records, in ints (SHMEMI_COLL_TOPO_INTS). */
void shmemi_coll_topology(const shmemi_coll_record_t *all, int size, int *ints, shmemi_coll_topo_t *topo);
/* Whether a collective of bytes in all should go node by node (hierarchical): the team
 * spans several nodes and some node holds more than one of its members. */
int shmemi_coll_hierarchical(const shmemi_coll_run_t *r, size_t bytes);
/* Member l of group g. */
static inline int shmemi_coll_group_member(const shmemi_coll_topo_t *topo, int g, int l)
{
    return topo->member[topo->start[g] + l];
}
static inline int shmemi_coll_group_size(const shmemi_coll_topo_t *topo, int g)
{
    return topo->start[g + 1] - topo->start[g];
}
/* A barrier of this PE's group only (the members on this node), on two words of the
 * group's first member's control segment (coll/topology.c). */
int shmemi_coll_node_sync(const shmemi_coll_run_t *r);
/* The node sync in two halves, so that a PE can work between telling its group it arrived
 * and waiting for the group's arrivals. */
int shmemi_coll_node_arrive(const shmemi_coll_run_t *r);
int shmemi_coll_node_await(const shmemi_coll_run_t *r);
/* Adds one to member idx's counter at ctrl_offset in its control segment (waking it). */
int shmemi_coll_notify(const shmemi_coll_run_t *r, int idx, size_t ctrl_offset);
/* Waits until this PE's counter reaches target (a PE that died ends the wait with an error). */
int shmemi_coll_wait_count(const shmemi_coll_run_t *r, _Atomic uint64_t *counter, uint64_t target);
/* [*first, *last) of part l of len units cut into parts parts, at multiples of unit. */
void shmemi_coll_part(size_t len, int parts, int l, size_t unit, size_t *first, size_t *last);

/* exchange.c: publishes mine, waits for the team and gathers every member's record into all
 * (t->size of them), then checks that they describe the same call.  Every PE of the team gets
 * the same verdict; on a mismatch the error names a PE that differs. */
int shmemi_coll_exchange_records(const char *api, shmemi_instance_t *inst, shmemi_team_t *t,
                                 shmemi_coll_record_t *mine, shmemi_coll_record_t *all);
/* The number the team's next exchange on this PE will give its record (its round). */
uint64_t shmemi_coll_upcoming_seq(shmemi_instance_t *inst, const shmemi_team_t *t);

/* The team's barrier (every member arrived; earlier writes of each are visible). */
int shmemi_coll_sync(const shmemi_coll_run_t *r);

/* Copies len bytes at offset off of member idx's source or dest into to (local memory):
 * from its mapping when it shares this node, else with a get. */
int shmemi_coll_pull(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, void *to,
                     size_t len);
/* shmemi_coll_pull that does not wait for another node: a member on this node is copied at
 * once, one on another node is a get started into batch gets, whose data is in to only
 * after shmemi_coll_pulls_wait (so many of them travel at the same time). */
int shmemi_coll_pull_start(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, void *to,
                           size_t len, shmemi_gets_t *gets);
/* Completes the gets of a batch (and empties it, also when it fails). */
int shmemi_coll_pulls_wait(const shmemi_coll_run_t *r, shmemi_gets_t *gets);
/* Copies len bytes from local memory into member idx's source or dest at offset off. */
int shmemi_coll_push(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, const void *from,
                     size_t len);
/* Member idx's source or dest at offset off as this process maps it, or NULL when that
 * member is on another node. */
void *shmemi_coll_peer(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off);

/* small.c: collectives whose data travels with the records.  Whether this PE's source of
 * call c fits where its data may travel on team t; stage copies it there before the
 * exchange (after this PE's checks passed, holding the team's lock).  After the exchange,
 * all says whether every member's did (the same answer on every member), and run then
 * computes this PE's dest from the members' data, with no meeting more. */
int shmemi_coll_small(const shmemi_coll_t *c, const shmemi_team_t *t);
void shmemi_coll_small_stage(shmemi_instance_t *inst, const shmemi_coll_t *c, const shmemi_team_t *t,
                             shmemi_coll_record_t *rec);
int shmemi_coll_small_all(const shmemi_coll_run_t *r);
int shmemi_coll_small_run(const shmemi_coll_run_t *r);

/* move.c: collect's dest, once the team's counts give its size (offsets: where each
 * member's block goes; total: their sum). */
int shmemi_coll_check_collect_dest(const shmemi_coll_run_t *r, const size_t *offsets, size_t total);

/* move.c and reduce.c: the algorithms, after the exchange agreed. */
int shmemi_coll_broadcast(const shmemi_coll_run_t *r); /* broadcast and broadcast_local, mixed or not */
/* broadcast_local's copy of the root's source into its work, made before the exchange once the
 * root's checks passed. */
void shmemi_coll_broadcast_local_stage(const shmemi_team_t *t, const shmemi_coll_t *c);
int shmemi_coll_gather(const shmemi_coll_run_t *r); /* collect and fcollect */
int shmemi_coll_alltoall(const shmemi_coll_run_t *r);
int shmemi_coll_alltoalls(const shmemi_coll_run_t *r);
int shmemi_coll_reduce(const shmemi_coll_run_t *r); /* reduce and reduce_local, mixed or not */
/* reduce_local's copies into work, made before the exchange once this PE's checks passed. */
void shmemi_coll_reduce_local_stage(const shmemi_team_t *t, const shmemi_coll_t *c);
int shmemi_coll_reducescatter(const shmemi_coll_run_t *r);

#endif
