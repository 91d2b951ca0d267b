/* Teams.  Every team is a strided set of world PEs (start, stride, size), so splits of
 * splits compose and membership needs no tables.  Ids come from a 2048-bit pool; members
 * of a new team agree on its id because the split picks the lowest id free on all of them.
 * A split also compares every parent PE's arguments first and fails on all of them if any
 * PE asked for another split, so no two PEs can build different teams under one id. */
#ifndef SHMEMI_TEAM_H
#define SHMEMI_TEAM_H

#include <pthread.h>
#include <stdint.h>

#include "aclshmem/types.h"
#include "core/instance.h"
#include "core/ctrl.h"

typedef struct shmemi_team {
    int index;
    int start, stride, size; /* in world PEs */
    int my_idx;              /* this PE's number in the team */
    uint64_t uid;            /* names the team's control-plane collectives */
    uint64_t coll_seq;
    int on_one_node;         /* every member shares this PE's node (the node barrier) */
    /* The members grouped by node (sync/barrier.c's two-level barrier for teams that span
     * nodes): each node's first member in team order is its leader. */
    int local_size;   /* members on this PE's node, this one included */
    int local_leader; /* the team index of this node's leader */
    int n_leaders;    /* nodes the team spans */
    int leader_rank;  /* this PE's place among the leaders, or -1 */
    int *leaders;     /* [n_leaders]: the leaders' team indices, in team order */
    aclshmem_team_config_t config;
    pthread_mutex_t lock; /* one collective at a time per team */
} shmemi_team_t;

#define SHMEMI_TEAM_WORDS (ACLSHMEM_MAX_TEAMS / 64)

typedef struct shmemi_team_pool {
    uint64_t used[SHMEMI_TEAM_WORDS];
    shmemi_team_t *teams[ACLSHMEM_MAX_TEAMS];
    /* Barriers this PE completed per (team id, round).  It outlives the teams: the matching
     * counters in the control segment are never reset (a peer may add to them before this
     * PE has even created the team), and between barriers each counter equals its epoch. */
    uint64_t barrier_epoch[ACLSHMEM_MAX_TEAMS][SHMEMI_BARRIER_ROUNDS];
} shmemi_team_pool_t;

int shmemi_teams_init(shmemi_instance_t *inst);
void shmemi_teams_fini(shmemi_instance_t *inst);

/* The live team with that id, or NULL. */
shmemi_team_t *shmemi_team_get(shmemi_instance_t *inst, aclshmem_team_t team);

static inline int shmemi_team_world_pe(const shmemi_team_t *t, int idx)
{
    return t->start + idx * t->stride;
}

/* t's number of world PE pe, or -1 when pe is not a member. */
static inline int shmemi_team_index_of(const shmemi_team_t *t, int pe)
{
    int rel = pe - t->start;
    if (rel < 0 || rel % t->stride != 0 || rel / t->stride >= t->size)
        return -1;
    return rel / t->stride;
}

/* The splits and the destroy of aclshmem/team.h, whose errors name api (the public call). */
int shmemi_team_split_strided(const char *api, aclshmem_team_t parent_team, int pe_start, int pe_stride,
                              int pe_size, aclshmem_team_t *new_team);
int shmemi_team_split_2d(const char *api, aclshmem_team_t parent_team, int x_range, aclshmem_team_t *x_team,
                         aclshmem_team_t *y_team);
void shmemi_team_destroy(shmemi_instance_t *inst, aclshmem_team_t team, const char *api);
/* The work of aclshmem_team_translate_pe (-1 with an error naming it) and of
 * aclshmem_team_get_config (instance 0 only) on inst. */
int shmemi_team_translate(shmemi_instance_t *inst, aclshmem_team_t src_team, int src_pe, aclshmem_team_t dest_team);
int shmemi_team_config(shmemi_instance_t *inst, aclshmem_team_t team, aclshmem_team_config_t *config);
/* Collective over the world PEs start, start + stride, ... (size of them), which alone call
 * it (the other PEs take no part, unlike a split): makes the team of exactly those PEs, under
 * an id free on all of them, whose uid is key.  key names the creation among the control
 * plane's collectives: the same on every member, and never that of another creation alive at
 * the same time (OpenSHMEM's active sets: a hash of the set).  Errors name api; members that
 * name other PEs fail, or time out when their keys differ. */
int shmemi_team_create_strided(const char *api, shmemi_instance_t *inst, int start, int stride, int size,
                               uint64_t key, aclshmem_team_t *out);

/* Collective over t's members: gathers len bytes from each into out (member order). */
int shmemi_team_collective(shmemi_instance_t *inst, shmemi_team_t *t, const void *in, size_t len,
                           void *out);

#endif
