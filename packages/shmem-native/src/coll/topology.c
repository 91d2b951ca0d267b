/* Which members of a team share a node, and the pieces the node-by-node (hierarchical)
 * algorithms share: the cut of an array into parts and a barrier of one node's members.
 *
 * Every record carries its PE's node (the lowest world PE that shares its memory), so every
 * PE computes the same groups from the same records, and so takes the same algorithm. */
#include <stdlib.h>

#include "base/error.h"
#include "coll/run.h"
#include "core/wait.h"
#include "mem/heap.h"
#include "sync/barrier.h"
#include "transport/transport.h"

/* Below this many bytes a collective goes flat: the node-by-node algorithms save network
 * bytes but take an extra synchronisation or two, which costs more than small data. */
#define HIERARCHY_MIN_BYTES (64 * 1024)

static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void shmemi_coll_topology(const shmemi_coll_record_t *all, int size, int *ints, shmemi_coll_topo_t *topo)
{
    topo->group = ints;
    topo->local = ints + size;
    topo->member = ints + 2 * size;
    topo->start = ints + 3 * size;
    /* Sorting node * size + member puts each node's members together, in team order (nodes
     * and members are below ACLSHMEM_MAX_PES, so the keys fit an int). */
    int sorted = 1; /* as on one node, or with the nodes' members in turn: no sort */
    for (int i = 0; i < size; i++) {
        topo->member[i] = all[i].node * size + i;
        sorted = sorted && (i == 0 || topo->member[i] > topo->member[i - 1]);
    }
    if (!sorted)
        qsort(topo->member, (size_t)size, sizeof(int), compare_ints);
    int nodes = 0, previous = -1;
    for (int k = 0; k < size; k++) {
        int i = topo->member[k] % size, node = topo->member[k] / size;
        if (k == 0 || node != previous)
            topo->start[nodes++] = k;
        previous = node;
        topo->group[i] = nodes - 1;
        topo->local[i] = k - topo->start[nodes - 1];
        topo->member[k] = i;
    }
    topo->start[nodes] = size;
    topo->nodes = nodes;
}

int shmemi_coll_hierarchical(const shmemi_coll_run_t *r, size_t bytes)
{
    return r->topo->nodes > 1 && r->topo->nodes < r->t->size && bytes >= HIERARCHY_MIN_BYTES;
}

void shmemi_coll_part(size_t len, int parts, int l, size_t unit, size_t *first, size_t *last)
{
    size_t n = (size_t)parts;
    for (int k = 0; k < 2; k++) {
        size_t i = (size_t)l + (size_t)k;
        size_t at = i >= n ? len : len / n * i + len % n * i / n; /* floor(len * i / n), no overflow */
        at -= i >= n ? 0 : at % unit;
        *(k ? last : first) = at;
    }
}

typedef struct {
    _Atomic uint64_t *counter;
    uint64_t epoch;
} arrivals_t;

static int all_arrived(void *ctx)
{
    arrivals_t *a = ctx;
    return atomic_load(a->counter) >= a->epoch;
}

int shmemi_coll_notify(const shmemi_coll_run_t *r, int idx, size_t ctrl_offset)
{
    /* untracked: the next quiet need not wait for it (the waiter's progress is its completion) */
    shmemi_amo_t add = {.op = SHMEMI_AMO_ADD, .kind = SHMEMI_AMO_INT, .width = 8, .value = 1, .untracked = 1};
    int pe = shmemi_team_world_pe(r->t, idx);
    return r->inst->transport[pe]->amo(r->inst, NULL, pe, SHMEMI_SEG_CTRL, ctrl_offset, &add, NULL); /* wakes it */
}

int shmemi_coll_wait_count(const shmemi_coll_run_t *r, _Atomic uint64_t *counter, uint64_t target)
{
    arrivals_t a = {counter, target};
    return shmemi_wait(r->inst, all_arrived, &a);
}

/* ---- the node sync ----------------------------------------------------------------------
 *
 * A meeting of the group as the node barrier's (sync/barrier.h), on the group's first
 * member's words of the team; the last to arrive rings the others' doorbells.  One add per
 * member on one line, where an add to every other member's counter took n - 1: an alltoall
 * of 4 KiB blocks on 4 PEs sharing 2 CPUs, whose end is this sync, took 3.53 against 3.89 us
 * with the sort above skipped too (medians of 10 alternating runs).  The meeting keeps no
 * count of its own, so a team id used again by another team, with another first member,
 * starts clean. */

int shmemi_coll_node_arrive(const shmemi_coll_run_t *r)
{
    const shmemi_coll_topo_t *topo = r->topo;
    int g = topo->group[r->me], q = shmemi_coll_group_size(topo, g);
    if (q == 1)
        return ACLSHMEM_SUCCESS;
    shmemi_ctrl_t *first = shmemi_ctrl_of(r->inst, shmemi_team_world_pe(r->t, shmemi_coll_group_member(topo, g, 0)));
    shmemi_meeting_t *m = &r->inst->coll->node_meeting[r->t->index];
    shmemi_meeting_open(m, &first->coll_arrivals[r->t->index], &first->coll_completed[r->t->index]);
    if (!shmemi_meeting_arrive(m, q))
        return ACLSHMEM_SUCCESS;
    for (int l = 0; l < q; l++) { /* they may sleep */
        int j = shmemi_coll_group_member(topo, g, l);
        if (j != r->me)
            shmemi_doorbell_notify(shmemi_ctrl_of(r->inst, shmemi_team_world_pe(r->t, j)));
    }
    return ACLSHMEM_SUCCESS;
}

int shmemi_coll_node_await(const shmemi_coll_run_t *r)
{
    if (shmemi_coll_group_size(r->topo, r->topo->group[r->me]) == 1)
        return ACLSHMEM_SUCCESS;
    return shmemi_wait(r->inst, shmemi_meeting_released, &r->inst->coll->node_meeting[r->t->index]);
}

int shmemi_coll_node_sync(const shmemi_coll_run_t *r)
{
    SHMEMI_TRY(shmemi_coll_node_arrive(r));
    return shmemi_coll_node_await(r);
}
