/* Symmetric memory management: the collective allocation calls of mem/mem_api.c on the heap
 * that aclshmem_malloc uses too (DEVICE_SIDE), so blocks of either API are symmetric
 * objects of both. */
#include "aclshmem/mem.h"
#include "mem/allocator.h"
#include "mem/mem_api.h"
#include "openshmem/osh.h"

/* OpenSHMEM's heap. */
#define OSH_HEAP DEVICE_SIDE

void *shmem_malloc(size_t size)
{
    /* Size 0 gets NULL, as malloc may give; on every PE alike, so nothing to agree on. */
    if (size == 0)
        return NULL;
    return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, OSH_HEAP, 0, 0, "shmem_malloc");
}
SHMEMI_PROFILED(shmem_malloc)

void shmem_free(void *ptr)
{
    shmemi_symmetric_free(ptr, OSH_HEAP, "shmem_free");
}
SHMEMI_PROFILED(shmem_free)
