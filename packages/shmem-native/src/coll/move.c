/* The collectives that move data: broadcast, collect, fcollect, alltoall, alltoalls.
 *
 * Every PE pulls what its own dest needs: a member on this node is read through its
 * mapping (one memcpy, source to dest), one on another node with a get straight into dest.
 * PE i starts with member i + 1 and goes round, so the PEs read different members at a time
 * instead of all the same one.  Nothing writes into another PE's memory, so a PE's dest is
 * its own business until it returns: the exchange's barrier is the start (every source is
 * ready) and one barrier is the end (nobody reads a source any more).  A PE whose own step
 * fails still takes part in that barrier, so that the others are not left waiting.
 *
 * Across nodes, broadcast, fcollect and collect of more than a few kilobytes go node by
 * node (topology.c): each byte that must cross the network is fetched once per node, the
 * node's PEs each fetching a share (its part of each remote block) into their own dest;
 * after a barrier of the node's PEs, each copies the other shares from its neighbours'
 * dests through the mappings.  The end barrier of the team then also says that nobody
 * reads a neighbour's dest any more.
 *
 * broadcast_local (dest and source local memory, work symmetric): the root copies its source
 * into its work before the exchange (more than a piece: after it, a piece at a time, below),
 * and the others read the root's work where they would read its source; a PE that must give
 * its neighbours a share fetches it into its work, where they read it, and copies it into its
 * dest like theirs.  Every other byte goes straight into dest:
 * one copy fewer on every PE than a copy out of a symmetric staging area. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "coll/run.h"
#include "core/wait.h"
#include "mem/heap.h"

/* The end barrier, after this PE's part (rc) is done or failed. */
static int finish(const shmemi_coll_run_t *r, int rc)
{
    int sync_rc = shmemi_coll_sync(r);
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}

/* This PE's share of a remote block of len bytes: part local of group_size parts. */
static void share(const shmemi_coll_run_t *r, size_t len, size_t *first, size_t *last)
{
    int g = r->topo->group[r->me];
    shmemi_coll_part(len, shmemi_coll_group_size(r->topo, g), r->topo->local[r->me], 64, first, last);
}

/* After the node's barrier: the shares of member i's block (at off in dest, len bytes) that
 * this PE's neighbours fetched, from their dests. */
static int copy_neighbours_shares(const shmemi_coll_run_t *r, size_t off, size_t len)
{
    int g = r->topo->group[r->me], q = shmemi_coll_group_size(r->topo, g);
    for (int l = 0; l < q; l++) {
        int j = shmemi_coll_group_member(r->topo, g, l);
        size_t first, last;
        shmemi_coll_part(len, q, l, 64, &first, &last);
        if (j != r->me)
            SHMEMI_TRY(shmemi_coll_pull(r, j, SHMEMI_COLL_DST, off + first, (uint8_t *)r->c->dst + off + first,
                                        last - first));
    }
    return ACLSHMEM_SUCCESS;
}

/* ---- broadcast ------------------------------------------------------------------------ */

/* A broadcast_local root with more than a piece copies its source into its work a piece at a
 * time after the exchange, and tells every other member after each (one more in its
 * ctrl->coll_ready), so that they read piece k while it copies k + 1: of the copy, only the
 * first piece stays in the way.  1 MiB: the members' reads of a piece across nodes take longer
 * than its copy, and the root sends (team size - 1) notifications a piece. */
#define PIECE_BYTES ((size_t)1 << 20)

/* Whether a broadcast_local root copies len bytes in pieces after the exchange (else whole,
 * before it). */
static int copied_in_pieces(size_t len)
{
    return len > PIECE_BYTES;
}

static int piecewise(const shmemi_coll_run_t *r, size_t len)
{
    return r->all[r->c->root].kind == SHMEMI_COLL_BROADCAST_LOCAL && copied_in_pieces(len);
}

static uint64_t pieces_in(size_t len)
{
    return (len + PIECE_BYTES - 1) / PIECE_BYTES;
}

static size_t ready_offset(const shmemi_coll_run_t *r)
{
    return offsetof(shmemi_ctrl_t, coll_ready) + (size_t)r->t->index * sizeof(uint64_t);
}

/* The root of a piecewise broadcast: every piece into work, each member told after each. */
static int root_copies_pieces(const shmemi_coll_run_t *r, size_t len)
{
    const uint8_t *src = r->c->src;
    uint8_t *work = r->c->work;
    int rc = ACLSHMEM_SUCCESS;
    for (size_t off = 0; off < len; off += PIECE_BYTES) {
        memcpy(work + off, src + off, len - off < PIECE_BYTES ? len - off : PIECE_BYTES);
        for (int j = 0; j < r->t->size; j++) {
            int notify_rc = j == r->me ? ACLSHMEM_SUCCESS : shmemi_coll_notify(r, j, ready_offset(r));
            rc = rc != ACLSHMEM_SUCCESS ? rc : notify_rc; /* the others are told all the same */
        }
    }
    return rc;
}

/* Bytes [off, off + len) of the root's source (its work in a broadcast_local) into to; in a
 * piecewise broadcast each piece once the root said it is there, the gets of the pieces across
 * nodes in flight together. */
static int pull_from_root(const shmemi_coll_run_t *r, size_t off, uint8_t *to, size_t len)
{
    int root = r->c->root;
    if (!piecewise(r, r->c->nelems * r->esize))
        return shmemi_coll_pull(r, root, SHMEMI_COLL_SRC, off, to, len);
    _Atomic uint64_t *ready = &shmemi_ctrl_of(r->inst, r->inst->my_pe)->coll_ready[r->t->index];
    uint64_t before = r->inst->coll->ready_epoch[r->t->index];
    shmemi_gets_t gets = {0};
    int rc = ACLSHMEM_SUCCESS;
    for (size_t at = off, next; rc == ACLSHMEM_SUCCESS && at < off + len; at = next) {
        next = (at / PIECE_BYTES + 1) * PIECE_BYTES;
        next = next < off + len ? next : off + len;
        rc = shmemi_coll_wait_count(r, ready, before + pieces_in(next));
        if (rc == ACLSHMEM_SUCCESS)
            rc = shmemi_coll_pull_start(r, root, SHMEMI_COLL_SRC, at, to + (at - off), next - at, &gets);
    }
    int wait_rc = shmemi_coll_pulls_wait(r, &gets);
    return rc != ACLSHMEM_SUCCESS ? rc : wait_rc;
}

/* The broadcast's whole len bytes into this PE's dest: the root's own from its source (local
 * or not), the others' from the root. */
static int broadcast_from_root(const shmemi_coll_run_t *r, size_t len)
{
    if (r->me != r->c->root)
        return pull_from_root(r, 0, r->c->dst, len);
    int rc = piecewise(r, len) ? root_copies_pieces(r, len) : ACLSHMEM_SUCCESS;
    if (r->c->dst != r->c->src)
        memcpy(r->c->dst, r->c->src, len);
    return rc;
}

/* broadcast, node by node: the root's node reads the root; every other node fetches its
 * shares from the root (into work in a broadcast_local, where the neighbours read them),
 * meets, and copies the rest from the neighbours. */
static int broadcast_by_node(const shmemi_coll_run_t *r, size_t len)
{
    int root = r->c->root;
    if (r->topo->group[r->me] == r->topo->group[root])
        return finish(r, broadcast_from_root(r, len));
    uint8_t *dst = r->c->dst, *landing = r->c->kind == SHMEMI_COLL_BROADCAST_LOCAL ? r->c->work : dst;
    size_t first, last;
    share(r, len, &first, &last);
    int rc = pull_from_root(r, first, landing + first, last - first);
    int sync_rc = shmemi_coll_node_sync(r);
    if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS)
        rc = copy_neighbours_shares(r, 0, len);
    if (rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS && landing != dst)
        memcpy(dst + first, landing + first, last - first);
    return finish(r, rc != ACLSHMEM_SUCCESS ? rc : sync_rc);
}

void shmemi_coll_broadcast_local_stage(const shmemi_team_t *t, const shmemi_coll_t *c)
{
    size_t len = c->nelems * shmemi_dtype_size(c->dtype);
    if (t->my_idx == c->root && !shmemi_coll_small(c, t) && !copied_in_pieces(len))
        memcpy(c->work, c->src, len);
}

int shmemi_coll_broadcast(const shmemi_coll_run_t *r)
{
    size_t len = r->c->nelems * r->esize;
    if (len == 0)
        return ACLSHMEM_SUCCESS;
    int rc = shmemi_coll_hierarchical(r, len) ? broadcast_by_node(r, len) : finish(r, broadcast_from_root(r, len));
    /* Every member but the root was told of every piece, whatever happened here. */
    if (piecewise(r, len) && r->me != r->c->root)
        r->inst->coll->ready_epoch[r->t->index] += pieces_in(len);
    return rc;
}

/* The bytes of dest the members' blocks fill: the same on every PE (every PE has every
 * record), so is the verdict when they do not fit in a size_t. */
static int total_bytes(const shmemi_coll_run_t *r, size_t *total)
{
    size_t sum = 0;
    for (int i = 0; i < r->t->size; i++) {
        size_t len = (size_t)r->all[i].nelems * r->esize;
        if (r->all[i].nelems > SIZE_MAX / r->esize || len > SIZE_MAX - sum)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the PEs' counts add up to more than size_t holds",
                               r->api);
        sum += len;
    }
    *total = sum;
    return ACLSHMEM_SUCCESS;
}

/* collect: dest as a whole is checked here, the first moment its size is known. */
int shmemi_coll_check_collect_dest(const shmemi_coll_run_t *r, const size_t *offsets, size_t total)
{
    const uint8_t *dst = r->c->dst, *src = r->c->src;
    size_t mine = (size_t)r->c->nelems * r->esize, off;
    if (total && (!dst || shmemi_heap_locate(&r->inst->heaps, dst, total, &off) < 0))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: dest [%p, +%zu bytes) (the team's counts added up) is not symmetric", r->api,
                           (const void *)dst, total);
    int overlaps = mine && (uintptr_t)src < (uintptr_t)dst + total && (uintptr_t)dst < (uintptr_t)src + mine;
    if (overlaps && src != dst + offsets[r->me])
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: source overlaps dest other than as this PE's block (dest + %zu bytes)", r->api,
                           offsets[r->me]);
    return ACLSHMEM_SUCCESS;
}

/* Every member's block into dest; by_node: the blocks of other nodes only this PE's share
 * of each (the rest comes from the neighbours after the node's barrier). */
static int gather_blocks(const shmemi_coll_run_t *r, const size_t *offsets, int by_node)
{
    uint8_t *dst = r->c->dst;
    int n = r->t->size;
    for (int k = 1; k <= n; k++) {
        int i = (r->me + k) % n;
        size_t len = (size_t)r->all[i].nelems * r->esize, first = 0, last = len;
        if (i == r->me && dst + offsets[i] == (const uint8_t *)r->c->src)
            continue; /* in place */
        if (by_node && r->topo->group[i] != r->topo->group[r->me])
            share(r, len, &first, &last);
        SHMEMI_TRY(shmemi_coll_pull(r, i, SHMEMI_COLL_SRC, first, dst + offsets[i] + first, last - first));
    }
    return ACLSHMEM_SUCCESS;
}

/* By node, after gather_blocks: the meeting of the node's PEs, then the neighbours' shares
 * of every remote block. */
static int gather_neighbours(const shmemi_coll_run_t *r, const size_t *offsets, int rc)
{
    int sync_rc = shmemi_coll_node_sync(r);
    for (int i = 0; rc == ACLSHMEM_SUCCESS && sync_rc == ACLSHMEM_SUCCESS && i < r->t->size; i++)
        if (r->topo->group[i] != r->topo->group[r->me])
            rc = copy_neighbours_shares(r, offsets[i], (size_t)r->all[i].nelems * r->esize);
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}

int shmemi_coll_gather(const shmemi_coll_run_t *r)
{
    size_t total = 0;
    SHMEMI_TRY(total_bytes(r, &total));
    if (total == 0)
        return ACLSHMEM_SUCCESS;
    int n = r->t->size, rc = ACLSHMEM_SUCCESS;
    size_t small[64];
    size_t *offsets = n <= 64 ? small : malloc(sizeof(size_t) * (size_t)n);
    if (!offsets)
        rc = shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", r->api);
    if (offsets) {
        size_t sum = 0;
        for (int i = 0; i < n; i++) {
            offsets[i] = sum;
            sum += (size_t)r->all[i].nelems * r->esize;
        }
    }
    if (rc == ACLSHMEM_SUCCESS && r->c->kind == SHMEMI_COLL_COLLECT)
        rc = shmemi_coll_check_collect_dest(r, offsets, total);
    int by_node = shmemi_coll_hierarchical(r, total);
    if (rc == ACLSHMEM_SUCCESS)
        rc = gather_blocks(r, offsets, by_node);
    if (by_node) /* (even after a failure: the neighbours wait for this PE) */
        rc = gather_neighbours(r, offsets, rc);
    if (offsets != small)
        free(offsets);
    return finish(r, rc);
}

/* alltoall on one node: each PE writes its blocks into the others' dests through the mappings
 * (the exchange said every dest is free) and then adds one to each one's count
 * (shmemi_coll_node_arrive), and copies its own block while the others go on: a PE is done
 * when every other one told it (shmemi_coll_node_await), and, nobody reading its source,
 * needs no barrier for the others to finish with it (one meeting fewer for the small
 * blocks, where the meetings are the time).  A write through a mapping cannot fail once
 * the exchange agreed on every dest, so a PE's count never says "done" for data that is not
 * there.  Up to ALLTOALL_PUSH_MAX bytes a block: above, reading is faster (256 KiB blocks on 4
 * PEs: 142 us read against 152 us written, alternating runs), the meetings no longer matter. */
#define ALLTOALL_PUSH_MAX (32 << 10)
static int alltoall_push(const shmemi_coll_run_t *r, size_t len)
{
    const uint8_t *src = r->c->src;
    int n = r->t->size, rc = ACLSHMEM_SUCCESS;
    for (int k = 1; k < n && rc == ACLSHMEM_SUCCESS; k++) {
        int i = (r->me + k) % n;
        rc = shmemi_coll_push(r, i, SHMEMI_COLL_DST, (size_t)r->me * len, src + (size_t)i * len, len);
    }
    /* The others may go on while this PE copies its own block (also after a failure: they
     * wait for the arrival). */
    SHMEMI_TRY(shmemi_coll_node_arrive(r));
    if (rc == ACLSHMEM_SUCCESS)
        rc = shmemi_coll_push(r, r->me, SHMEMI_COLL_DST, (size_t)r->me * len, src + (size_t)r->me * len, len);
    int wait_rc = shmemi_coll_node_await(r);
    return rc != ACLSHMEM_SUCCESS ? rc : wait_rc;
}

int shmemi_coll_alltoall(const shmemi_coll_run_t *r)
{
    size_t len = r->c->nelems * r->esize;
    if (len == 0)
        return ACLSHMEM_SUCCESS;
    if (r->topo->nodes == 1 && len <= ALLTOALL_PUSH_MAX)
        return alltoall_push(r, len);
    uint8_t *dst = r->c->dst;
    int n = r->t->size, rc = ACLSHMEM_SUCCESS;
    for (int k = 1; k <= n && rc == ACLSHMEM_SUCCESS; k++) {
        int i = (r->me + k) % n;
        rc = shmemi_coll_pull(r, i, SHMEMI_COLL_SRC, (size_t)r->me * len, dst + (size_t)i * len, len);
    }
    return finish(r, rc);
}

/* Member i's block for this PE, element by element: through the mapping, or one get each. */
static int strided_block(const shmemi_coll_run_t *r, int i)
{
    size_t es = r->esize, count = r->c->nelems;
    size_t sst = (size_t)r->c->src_stride, dstride = (size_t)r->c->dst_stride;
    uint8_t *dst = r->c->dst;
    const uint8_t *mapped = shmemi_coll_peer(r, i, SHMEMI_COLL_SRC, 0);
    for (size_t e = 0; e < count; e++) {
        size_t from = ((size_t)r->me * count + e) * sst * es, to = ((size_t)i * count + e) * dstride * es;
        if (mapped)
            memcpy(dst + to, mapped + from, es);
        else
            SHMEMI_TRY(shmemi_coll_pull(r, i, SHMEMI_COLL_SRC, from, dst + to, es));
    }
    return ACLSHMEM_SUCCESS;
}

int shmemi_coll_alltoalls(const shmemi_coll_run_t *r)
{
    if (r->c->nelems == 0)
        return ACLSHMEM_SUCCESS;
    int n = r->t->size, rc = ACLSHMEM_SUCCESS;
    for (int k = 1; k <= n && rc == ACLSHMEM_SUCCESS; k++)
        rc = strided_block(r, (r->me + k) % n);
    return finish(r, rc);
}
