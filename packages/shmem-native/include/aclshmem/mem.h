/* aclshmem/mem.h - the symmetric heaps.  Every allocation and free is collective, free(NULL)
 * included (a no-op that every PE makes).  Threads: calls from several threads of a PE are
 * safe and run one at a time; the k-th call of every PE must be the same request, so threads
 * that allocate concurrently must either make interchangeable requests (same size, alignment
 * and heap) or be ordered by the program, as OpenSHMEM requires of collectives. */
#ifndef ACLSHMEM_MEM_H
#define ACLSHMEM_MEM_H

#include "aclshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On the DEVICE_SIDE heap.  NULL (and a last-error message) on failure or size 0. */
ACLSHMEM_HOST_API void *aclshmem_malloc(size_t size);
ACLSHMEM_HOST_API void *aclshmem_calloc(size_t nmemb, size_t size);
ACLSHMEM_HOST_API void *aclshmem_align(size_t alignment, size_t size);
ACLSHMEM_HOST_API void aclshmem_free(void *ptr);

/* On the heap named by mem_type. */
ACLSHMEM_HOST_API void *aclshmemx_malloc(size_t size, aclshmem_mem_type_t mem_type);
ACLSHMEM_HOST_API void *aclshmemx_calloc(size_t count, size_t size, aclshmem_mem_type_t mem_type);
ACLSHMEM_HOST_API void *aclshmemx_align(size_t alignment, size_t size, aclshmem_mem_type_t mem_type);
ACLSHMEM_HOST_API void aclshmemx_free(void *ptr, aclshmem_mem_type_t mem_type);

/** Start of this PE's heap of that type; NULL when not initialised. */
ACLSHMEM_HOST_API void *aclshmemx_get_heap_base(aclshmem_mem_type_t mem_type);

/** The address of ptr's symmetric twin on pe, usable by loads and stores from this
 *  process; NULL for a bad PE, a PE on another node, or an address outside the heaps. */
ACLSHMEM_HOST_API void *aclshmem_ptr(void *ptr, int pe);

#ifdef __cplusplus
}
#endif
#endif
