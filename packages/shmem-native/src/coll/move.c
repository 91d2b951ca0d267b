/* The collectives that move data: broadcast, collect, fcollect, alltoall, alltoalls.
 *
 * Every PE pulls what its own dest needs: a member on this node is read through its
 * mapping (one memcpy, source to dest), one on another node with a get straight into dest.
 * PE i starts with member i + 1 and goes round, so the PEs read different members at a time
 * instead of all the same one.  Nothing writes into another PE's memory, so a PE's dest is
 * its own business until it returns: the exchange's barrier is the start (every source is
 * ready) and one barrier is the end (nobody reads a source any more).  A PE whose own step
 * fails still takes part in that barrier, so that the others are not left waiting. */
#include <stdlib.h>
#include <string.h>

#include "coll/run.h"
#include "core/error.h"
#include "mem/heap.h"

/* The end barrier, after this PE's part (rc) is done or failed. */
static int finish(const shmemi_coll_run_t *r, int rc)
{
    int sync_rc = shmemi_coll_sync(r);
    return rc != ACLSHMEM_SUCCESS ? rc : sync_rc;
}

int shmemi_coll_broadcast(const shmemi_coll_run_t *r)
{
    size_t len = r->c->nelems * r->esize;
    if (len == 0)
        return ACLSHMEM_SUCCESS;
    int rc = ACLSHMEM_SUCCESS;
    if (r->me != r->c->root || r->c->dst != r->c->src)
        rc = shmemi_coll_pull(r, r->c->root, SHMEMI_COLL_SRC, 0, r->c->dst, len);
    return finish(r, rc);
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
static int check_collect_dest(const shmemi_coll_run_t *r, const size_t *offsets, size_t total)
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

static int gather_blocks(const shmemi_coll_run_t *r, const size_t *offsets)
{
    uint8_t *dst = r->c->dst;
    int n = r->t->size;
    for (int k = 1; k <= n; k++) {
        int i = (r->me + k) % n;
        size_t len = (size_t)r->all[i].nelems * r->esize;
        if (i == r->me && dst + offsets[i] == (const uint8_t *)r->c->src)
            continue; /* in place */
        SHMEMI_TRY(shmemi_coll_pull(r, i, SHMEMI_COLL_SRC, 0, dst + offsets[i], len));
    }
    return ACLSHMEM_SUCCESS;
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
        rc = check_collect_dest(r, offsets, total);
    if (rc == ACLSHMEM_SUCCESS)
        rc = gather_blocks(r, offsets);
    if (offsets != small)
        free(offsets);
    return finish(r, rc);
}

int shmemi_coll_alltoall(const shmemi_coll_run_t *r)
{
    size_t len = r->c->nelems * r->esize;
    if (len == 0)
        return ACLSHMEM_SUCCESS;
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
