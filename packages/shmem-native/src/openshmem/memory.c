/* Symmetric memory management: the collective allocation calls of alloc/alloc.c on the heap
 * that aclshmem_malloc uses too (DEVICE_SIDE), so blocks of either API are symmetric
 * objects of both. */
#include <stdint.h>

#include "aclshmem/mem.h"
#include "base/error.h"
#include "mem/allocator.h"
#include "alloc/alloc.h"
#include "openshmem/osh.h"

/* OpenSHMEM's heap. */
#define OSH_HEAP DEVICE_SIDE
#define KNOWN_HINTS (SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE)

/* Size 0 gets NULL, as malloc may give; on every PE alike, so there is nothing to agree on
 * and nothing to report. */
void *shmem_malloc(size_t size)
{
    return size ? shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, OSH_HEAP, 0, 0, "shmem_malloc") : NULL;
}
SHMEMI_PROFILED(shmem_malloc)

void *shmem_calloc(size_t count, size_t size)
{
    static const char api[] = "shmem_calloc";
    if (count == 0 || size == 0)
        return NULL;
    /* An overflow is this PE's error, but it still takes part so the others learn of it. */
    int failed = size > SIZE_MAX / count
                     ? shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: %zu x %zu bytes overflows size_t", api, count, size)
                     : 0;
    return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, failed ? SIZE_MAX : count * size, OSH_HEAP, 1, failed, api);
}
SHMEMI_PROFILED(shmem_calloc)

void *shmem_align(size_t alignment, size_t size)
{
    return size ? shmemi_symmetric_alloc(alignment, size, OSH_HEAP, 0, 0, "shmem_align") : NULL;
}
SHMEMI_PROFILED(shmem_align)

void *shmem_malloc_with_hints(size_t size, long hints)
{
    static const char api[] = "shmem_malloc_with_hints";
    if (size == 0)
        return NULL;
    int failed = hints & ~KNOWN_HINTS ? shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: hints 0x%lx are not a mask of "
                                                    "SHMEM_MALLOC_ATOMICS_REMOTE and SHMEM_MALLOC_SIGNAL_REMOTE",
                                                    api, hints)
                                      : 0;
    return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, OSH_HEAP, 0, failed, api);
}
SHMEMI_PROFILED(shmem_malloc_with_hints)

void *shmem_realloc(void *ptr, size_t size)
{
    return shmemi_symmetric_realloc(ptr, size, OSH_HEAP, "shmem_realloc");
}
SHMEMI_PROFILED(shmem_realloc)

void shmem_free(void *ptr)
{
    shmemi_symmetric_free(ptr, OSH_HEAP, "shmem_free");
}
SHMEMI_PROFILED(shmem_free)
