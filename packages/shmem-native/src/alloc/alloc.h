/* The collective allocation calls behind every public allocation API (aclshmem_malloc and
 * friends, shmem_malloc and friends): errors name api, the public call. */
#ifndef SHMEMI_ALLOC_H
#define SHMEMI_ALLOC_H

#include <stddef.h>

#include "aclshmem/types.h"

/* Collective: size bytes aligned to alignment (a power of two) on the heap mem_type, zeroed
 * if zero.  failed: an error this PE already found in the caller's arguments (0: none); the
 * PE still takes part, so the other PEs learn of it instead of waiting, and every PE gets
 * NULL.  NULL on any failure, with a last error. */
void *shmemi_symmetric_alloc(size_t alignment, size_t size, aclshmem_mem_type_t mem_type, int zero, int failed,
                             const char *api);

/* Collective even for NULL (which frees nothing), so that every PE makes the same call. */
void shmemi_symmetric_free(void *ptr, aclshmem_mem_type_t mem_type, const char *api);

/* Collective: a block of size bytes holding the first bytes of the block ptr (as many as
 * both hold); ptr NULL allocates, size 0 frees (and gives NULL).  On failure NULL, and ptr
 * is left as it was. */
void *shmemi_symmetric_realloc(void *ptr, size_t size, aclshmem_mem_type_t mem_type, const char *api);

/* The first address of the active instance's heap mem_type, or NULL with an error naming api. */
void *shmemi_heap_base(aclshmem_mem_type_t mem_type, const char *api);

#endif
