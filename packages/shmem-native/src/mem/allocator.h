/* A deterministic best-fit allocator over offsets [0, capacity).  Every PE runs the same
 * requests in the same order, so every PE computes the same offsets. */
#ifndef SHMEMI_ALLOCATOR_H
#define SHMEMI_ALLOCATOR_H

#include <stddef.h>

#define SHMEMI_ALLOC_GRANULE 64 /* sizes round up to this; also the minimum alignment */

typedef struct shmemi_block {
    size_t offset, size;
    int free;
    struct shmemi_block *prev, *next;
} shmemi_block_t;

typedef struct {
    size_t capacity;
    shmemi_block_t *head;
} shmemi_allocator_t;

int shmemi_alloc_init(shmemi_allocator_t *a, size_t capacity);
void shmemi_alloc_destroy(shmemi_allocator_t *a);
/* 0 and *offset, or -1 when no free range fits.  alignment: a power of two. */
int shmemi_alloc_take(shmemi_allocator_t *a, size_t size, size_t alignment, size_t *offset);
/* 0, or -1 if offset does not start an allocated block. */
int shmemi_alloc_release(shmemi_allocator_t *a, size_t offset);
/* Size of the allocated block starting at offset, or 0. */
size_t shmemi_alloc_block_size(const shmemi_allocator_t *a, size_t offset);
size_t shmemi_alloc_largest_free(const shmemi_allocator_t *a);

#endif
