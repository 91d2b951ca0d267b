/* The entry points of aclshmem/mem.h: each checks its arguments, then makes one call into
 * the collective allocation calls (alloc/) or, for aclshmem_ptr, the RMA core (rma/).  The
 * allocation calls are collective even when a PE's arguments are wrong: that PE still
 * takes part, with its error (failed), so that the others learn of it instead of waiting. */
#include <stdint.h>

#include "aclshmem/mem.h"
#include "alloc/alloc.h"
#include "base/error.h"
#include "mem/allocator.h"
#include "rma/rma.h"

void *aclshmemx_malloc(size_t size, aclshmem_mem_type_t mem_type)
{
    return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, mem_type, 0, 0, "aclshmemx_malloc");
}

/* count x size, or the error of its overflow (which the allocation then shares). */
static void *calloc_on(size_t count, size_t size, aclshmem_mem_type_t mem_type, const char *api)
{
    if (count != 0 && size > SIZE_MAX / count) {
        int rc = shmemi_fail(ACLSHMEM_INVALID_VALUE, "%s: %zu x %zu bytes overflows size_t", api, count, size);
        return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, SIZE_MAX, mem_type, 0, rc, api);
    }
    return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, count * size, mem_type, 1, 0, api);
}

void *aclshmemx_calloc(size_t count, size_t size, aclshmem_mem_type_t mem_type)
{
    return calloc_on(count, size, mem_type, "aclshmemx_calloc");
}

void *aclshmemx_align(size_t alignment, size_t size, aclshmem_mem_type_t mem_type)
{
    return shmemi_symmetric_alloc(alignment, size, mem_type, 0, 0, "aclshmemx_align");
}

void aclshmemx_free(void *ptr, aclshmem_mem_type_t mem_type)
{
    shmemi_symmetric_free(ptr, mem_type, "aclshmemx_free");
}

void *aclshmem_malloc(size_t size)
{
    return shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, DEVICE_SIDE, 0, 0, "aclshmem_malloc");
}

void *aclshmem_calloc(size_t nmemb, size_t size)
{
    return calloc_on(nmemb, size, DEVICE_SIDE, "aclshmemx_calloc");
}

void *aclshmem_align(size_t alignment, size_t size)
{
    return shmemi_symmetric_alloc(alignment, size, DEVICE_SIDE, 0, 0, "aclshmem_align");
}

void aclshmem_free(void *ptr)
{
    shmemi_symmetric_free(ptr, DEVICE_SIDE, "aclshmem_free");
}

void *aclshmemx_get_heap_base(aclshmem_mem_type_t mem_type)
{
    return shmemi_heap_base(mem_type, "aclshmemx_get_heap_base");
}

void *aclshmem_ptr(void *ptr, int pe)
{
    return shmemi_rma_ptr("aclshmem_ptr", ptr, pe);
}
