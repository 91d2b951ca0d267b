/* The collective allocation API.  Each call allocates locally (deterministically), then
 * all PEs compare what they asked for inside the implicit barrier: if any PE asked for
 * something else, every PE undoes its allocation and fails, so an asymmetric request can
 * never silently corrupt the heap. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem/mem.h"
#include "core/error.h"
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
    uint64_t offset; /* result (alloc) or argument (free) */
    int32_t status;  /* 0, or why this PE could not do it */
    int32_t reserved;
} request_t;

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
    for (int pe = 0; rc == ACLSHMEM_SUCCESS && pe < inst->n_pes; pe++) {
        const request_t *r = &all[pe];
        if (r->kind != mine->kind || r->heap != mine->heap || r->size != mine->size ||
            r->alignment != mine->alignment)
            rc = shmemi_fail(ACLSHMEM_INVALID_PARAM,
                             "%s is collective and PEs disagree: PE %d asked for %s of %llu bytes "
                             "(alignment %llu) on %s, PE %d for %s of %llu bytes (alignment %llu) on %s; "
                             "nothing was changed", api, pe, r->kind == REQ_ALLOC ? "an allocation" : "a free",
                             (unsigned long long)r->size, (unsigned long long)r->alignment, heap_name(r->heap),
                             inst->my_pe, mine->kind == REQ_ALLOC ? "an allocation" : "a free",
                             (unsigned long long)mine->size, (unsigned long long)mine->alignment,
                             heap_name(mine->heap));
        else if (r->status != 0 && pe != inst->my_pe)
            rc = shmemi_fail(r->status, "%s failed on PE %d, so on every PE", api, pe);
        else if (r->status == 0 && r->offset != mine->offset)
            rc = shmemi_fail(ACLSHMEM_INNER_ERROR,
                             "%s: the symmetric heaps diverged (PE %d got offset %llu, PE %d %llu): an "
                             "earlier collective call was not made by every PE", api, pe,
                             (unsigned long long)r->offset, inst->my_pe, (unsigned long long)mine->offset);
    }
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

/* failed: an error this PE already found in the arguments; it still takes part, so the
 * other PEs learn of it instead of waiting. */
static void *symmetric_alloc(size_t alignment, size_t size, aclshmem_mem_type_t mem_type, int zero,
                             int failed, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || check_mem_type(mem_type, api) != ACLSHMEM_SUCCESS)
        return NULL;
    shmemi_segment_t *seg = &inst->heaps.seg[mem_type];
    request_t req = {.kind = REQ_ALLOC, .heap = mem_type, .size = size, .alignment = alignment};
    req.status = failed ? failed : reserve(seg, &req, api);
    if (req.status == 0 && zero)
        memset(seg->base + req.offset, 0, size); /* before the barrier: no peer writes it yet */
    int rc = agree(inst, &req, api);
    if (rc != ACLSHMEM_SUCCESS || req.status != 0) {
        if (req.status == 0)
            shmemi_alloc_release(&seg->alloc, req.offset);
        return NULL;
    }
    return seg->base + req.offset;
}

static void symmetric_free(void *ptr, aclshmem_mem_type_t mem_type, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || check_mem_type(mem_type, api) != ACLSHMEM_SUCCESS)
        return;
    if (!ptr)
        return; /* like free(NULL), and symmetric on every PE */
    shmemi_segment_t *seg = &inst->heaps.seg[mem_type];
    request_t req = {.kind = REQ_FREE, .heap = mem_type};
    uintptr_t p = (uintptr_t)ptr, base = (uintptr_t)seg->base;
    size_t offset = p - base;
    if (p < base || offset >= seg->size || !shmemi_alloc_block_size(&seg->alloc, offset))
        req.status = shmemi_fail(ACLSHMEM_INVALID_PARAM,
                                 "%s: %p is not the start of a live allocation on the %s heap", api, ptr,
                                 heap_name(mem_type));
    else
        req.offset = offset;
    /* Free waits for every PE first, so nobody still uses the memory when it is reused. */
    if (agree(inst, &req, api) == ACLSHMEM_SUCCESS && req.status == 0)
        shmemi_alloc_release(&seg->alloc, offset);
}

void *aclshmemx_malloc(size_t size, aclshmem_mem_type_t mem_type)
{
    return symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, mem_type, 0, 0, "aclshmemx_malloc");
}

void *aclshmemx_calloc(size_t count, size_t size, aclshmem_mem_type_t mem_type)
{
    if (count != 0 && size > SIZE_MAX / count) {
        int rc = shmemi_fail(ACLSHMEM_INVALID_VALUE, "aclshmemx_calloc: %zu x %zu bytes overflows size_t",
                             count, size);
        return symmetric_alloc(SHMEMI_ALLOC_GRANULE, SIZE_MAX, mem_type, 0, rc, "aclshmemx_calloc");
    }
    return symmetric_alloc(SHMEMI_ALLOC_GRANULE, count * size, mem_type, 1, 0, "aclshmemx_calloc");
}

void *aclshmemx_align(size_t alignment, size_t size, aclshmem_mem_type_t mem_type)
{
    return symmetric_alloc(alignment, size, mem_type, 0, 0, "aclshmemx_align");
}

void aclshmemx_free(void *ptr, aclshmem_mem_type_t mem_type)
{
    symmetric_free(ptr, mem_type, "aclshmemx_free");
}

void *aclshmem_malloc(size_t size)
{
    return symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, DEVICE_SIDE, 0, 0, "aclshmem_malloc");
}

void *aclshmem_calloc(size_t nmemb, size_t size)
{
    return aclshmemx_calloc(nmemb, size, DEVICE_SIDE);
}

void *aclshmem_align(size_t alignment, size_t size)
{
    return symmetric_alloc(alignment, size, DEVICE_SIDE, 0, 0, "aclshmem_align");
}

void aclshmem_free(void *ptr)
{
    symmetric_free(ptr, DEVICE_SIDE, "aclshmem_free");
}

void *aclshmemx_get_heap_base(aclshmem_mem_type_t mem_type)
{
    shmemi_instance_t *inst = shmemi_require("aclshmemx_get_heap_base");
    if (!inst || check_mem_type(mem_type, "aclshmemx_get_heap_base") != ACLSHMEM_SUCCESS)
        return NULL;
    return inst->heaps.seg[mem_type].base;
}
