/* The collective allocation calls behind api/mem.c and openshmem/memory.c.  Each call
 * allocates locally (deterministically), then all PEs compare what they asked for inside
 * the implicit barrier: if any PE asked for something else, every PE undoes its allocation
 * and fails, so an asymmetric request can never silently corrupt the heap.
 *
 * Threads: every call holds the instance's allocation lock from its local reservation to the
 * end of its collective, so the calls of one PE are serialised and its allocator state is
 * never touched by two threads at once.  As OpenSHMEM requires, the k-th collective
 * allocation call of every PE must be the same request: when several threads of a PE
 * allocate concurrently, the lock decides which call is k-th, so either the requests they
 * race with are interchangeable (same size, alignment and heap) or the program orders them
 * itself.  free(NULL) is collective as well (a no-op every PE must make), so a PE that frees
 * NULL while others free a block fails at once on every PE instead of leaving them waiting. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/alloc.h"

#include "aclshmem/mem.h"
#include "base/error.h"
#include "core/instance.h"
#include "mem/heap.h"
#include "prof/prof.h"
#include "team/team.h"

typedef enum { REQ_ALLOC = 1, REQ_FREE = 2 } request_kind_t;

/* What each PE contributes to the check.  Identical on every PE of a symmetric call. */
typedef struct {
    int32_t kind;
    int32_t heap;
    uint64_t size;
    uint64_t alignment;
    uint64_t offset; /* result (alloc) or argument (free; FREE_OF_NULL for NULL) */
    int32_t status;  /* 0, or why this PE could not do it */
    int32_t reserved;
} request_t;

#define FREE_OF_NULL UINT64_MAX

static const char *heap_name(int heap)
{
    return heap == HOST_SIDE ? "HOST_SIDE" : "DEVICE_SIDE";
}

static int check_mem_type(aclshmem_mem_type_t mem_type, const char *api)
{
    if (mem_type != HOST_SIDE && mem_type != DEVICE_SIDE)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: mem_type %d is not HOST_SIDE or DEVICE_SIDE", api,
                           (int)mem_type);
    return ACLSHMEM_SUCCESS;
}

static const char *request_text(const request_t *r, char *buf, size_t len)
{
    if (r->kind == REQ_FREE && r->offset == FREE_OF_NULL)
        snprintf(buf, len, "a free of NULL");
    else if (r->kind == REQ_FREE)
        snprintf(buf, len, "a free of the block at offset %llu", (unsigned long long)r->offset);
    else
        snprintf(buf, len, "an allocation of %llu bytes (alignment %llu)", (unsigned long long)r->size,
                 (unsigned long long)r->alignment);
    return buf;
}

/* PEs pe and this one asked for different things: an error that shows both requests. */
static int disagreement(shmemi_instance_t *inst, int pe, const request_t *theirs, const request_t *mine,
                        const char *api)
{
    char a[96], b[96];
    return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                       "%s is collective and PEs disagree: PE %d asked for %s on %s, PE %d for %s on %s; "
                       "nothing was changed", api, pe, request_text(theirs, a, sizeof(a)),
                       heap_name(theirs->heap), inst->my_pe, request_text(mine, b, sizeof(b)),
                       heap_name(mine->heap));
}

/* Checks the gathered requests: the same everywhere, and done everywhere. */
static int compare_requests(shmemi_instance_t *inst, const request_t *all, const request_t *mine,
                            const char *api)
{
    for (int pe = 0; pe < inst->n_pes; pe++) {
        const request_t *r = &all[pe];
        if (r->kind != mine->kind || r->heap != mine->heap || r->size != mine->size ||
            r->alignment != mine->alignment || (mine->kind == REQ_FREE && r->status == 0 && mine->status == 0 &&
                                                r->offset != mine->offset))
            return disagreement(inst, pe, r, mine, api);
    }
    if (mine->status != 0)
        return mine->status; /* this PE's own error, already recorded */
    for (int pe = 0; pe < inst->n_pes; pe++)
        if (all[pe].status != 0)
            return shmemi_fail(all[pe].status, "%s failed on PE %d, so on every PE", api, pe);
    for (int pe = 0; pe < inst->n_pes; pe++)
        if (all[pe].offset != mine->offset)
            return shmemi_fail(ACLSHMEM_INNER_ERROR,
                               "%s: the symmetric heaps diverged (PE %d got offset %llu, PE %d %llu): an "
                               "earlier collective call was not made by every PE", api, pe,
                               (unsigned long long)all[pe].offset, inst->my_pe,
                               (unsigned long long)mine->offset);
    return ACLSHMEM_SUCCESS;
}

/* Runs the world-wide comparison; returns SUCCESS only if every PE made the same request
 * and succeeded. */
static int agree(shmemi_instance_t *inst, const request_t *mine, const char *api)
{
    shmemi_team_t *world = shmemi_team_get(inst, ACLSHMEM_TEAM_WORLD);
    uint64_t start = shmemi_prof_begin(inst);
    request_t *all = calloc((size_t)inst->n_pes, sizeof(request_t));
    if (!all)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    pthread_mutex_lock(&world->lock);
    int rc = shmemi_team_collective(inst, world, mine, sizeof(*mine), all);
    pthread_mutex_unlock(&world->lock);
    if (rc == ACLSHMEM_SUCCESS)
        rc = compare_requests(inst, all, mine, api);
    free(all);
    shmemi_prof_end_frame(inst, SHMEMI_FRAME_ALLOC, start);
    return rc;
}

/* Checks the request and takes the range locally: 0, or an error code (recorded). */
static int reserve(shmemi_segment_t *seg, request_t *req, const char *api)
{
    size_t size = req->size, alignment = req->alignment;
    if (size == 0)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: size is 0", api);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: alignment %zu is not a power of two", api, alignment);
    if (alignment > SHMEMI_HEAP_ALIGN)
        return shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: alignment %zu is above the supported %zu (1 GiB)", api,
                           alignment, SHMEMI_HEAP_ALIGN);
    if (size > seg->size || alignment > seg->size)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: %zu bytes is more than the %s heap's %zu", api, size,
                           heap_name(req->heap), seg->size);
    if (shmemi_alloc_take(&seg->alloc, size, alignment, &req->offset) != 0)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED,
                           "%s: the %s heap has no free range of %zu bytes (largest free: %zu of %zu)", api,
                           heap_name(req->heap), size, shmemi_alloc_largest_free(&seg->alloc), seg->size);
    return 0;
}

void *shmemi_symmetric_alloc(size_t alignment, size_t size, aclshmem_mem_type_t mem_type, int zero, int failed,
                             const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || check_mem_type(mem_type, api) != ACLSHMEM_SUCCESS)
        return NULL;
    shmemi_segment_t *seg = &inst->heaps.seg[mem_type];
    request_t req = {.kind = REQ_ALLOC, .heap = mem_type, .size = size, .alignment = alignment};
    pthread_mutex_lock(&inst->alloc_lock);
    req.status = failed ? failed : reserve(seg, &req, api);
    if (req.status == 0 && zero)
        memset(seg->base + req.offset, 0, size); /* before the barrier: no peer writes it yet */
    int rc = agree(inst, &req, api);
    if (rc != ACLSHMEM_SUCCESS && req.status == 0)
        shmemi_alloc_release(&seg->alloc, req.offset);
    pthread_mutex_unlock(&inst->alloc_lock);
    return rc == ACLSHMEM_SUCCESS ? seg->base + req.offset : NULL;
}

/* The offset of the live block ptr starts, FREE_OF_NULL for NULL, or an error code. */
static int free_target(shmemi_segment_t *seg, void *ptr, int mem_type, const char *api, uint64_t *offset)
{
    if (!ptr) {
        *offset = FREE_OF_NULL;
        return 0;
    }
    uintptr_t p = (uintptr_t)ptr, base = (uintptr_t)seg->base;
    if (p < base || p - base >= seg->size || !shmemi_alloc_block_size(&seg->alloc, p - base))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %p is not the start of a live allocation on the %s heap",
                           api, ptr, heap_name(mem_type));
    *offset = p - base;
    return 0;
}

void shmemi_symmetric_free(void *ptr, aclshmem_mem_type_t mem_type, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || check_mem_type(mem_type, api) != ACLSHMEM_SUCCESS)
        return;
    shmemi_segment_t *seg = &inst->heaps.seg[mem_type];
    request_t req = {.kind = REQ_FREE, .heap = mem_type};
    pthread_mutex_lock(&inst->alloc_lock);
    req.status = free_target(seg, ptr, mem_type, api, &req.offset);
    /* Free waits for every PE first, so nobody still uses the memory when it is reused. */
    if (agree(inst, &req, api) == ACLSHMEM_SUCCESS && req.offset != FREE_OF_NULL)
        shmemi_alloc_release(&seg->alloc, req.offset);
    pthread_mutex_unlock(&inst->alloc_lock);
}

/* The usable size of the live block ptr starts on the heap (0 when it starts none). */
static size_t live_block_size(shmemi_instance_t *inst, const void *ptr, aclshmem_mem_type_t mem_type)
{
    shmemi_segment_t *seg = &inst->heaps.seg[mem_type];
    uintptr_t p = (uintptr_t)ptr, base = (uintptr_t)seg->base;
    if (p < base || p - base >= seg->size)
        return 0;
    pthread_mutex_lock(&inst->alloc_lock);
    size_t size = shmemi_alloc_block_size(&seg->alloc, p - base);
    pthread_mutex_unlock(&inst->alloc_lock);
    return size;
}

void *shmemi_symmetric_realloc(void *ptr, size_t size, aclshmem_mem_type_t mem_type, const char *api)
{
    if (!ptr)
        return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, mem_type, 0, 0, api);
    if (size == 0) {
        shmemi_symmetric_free(ptr, mem_type, api);
        return NULL;
    }
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || check_mem_type(mem_type, api) != ACLSHMEM_SUCCESS)
        return NULL;
    size_t old = live_block_size(inst, ptr, mem_type);
    int failed = old ? 0 : shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %p is not the start of a live allocation on "
                                       "the %s heap", api, ptr, heap_name(mem_type));
    /* A new block, then the copy, then the old block goes: every PE copies its own part
     * before the free's collective, and on failure the old block stays as it was. */
    uint8_t *fresh = shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, mem_type, 0, failed, api);
    if (!fresh)
        return NULL;
    memcpy(fresh, ptr, old < size ? old : size);
    shmemi_symmetric_free(ptr, mem_type, api);
    return fresh;
}

void *shmemi_heap_base(aclshmem_mem_type_t mem_type, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || check_mem_type(mem_type, api) != ACLSHMEM_SUCCESS)
        return NULL;
    return inst->heaps.seg[mem_type].base;
}
