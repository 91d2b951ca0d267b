#include "mem/allocator.h"

#include <stdint.h>
#include <stdlib.h>

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) & ~(a - 1);
}

int shmemi_alloc_init(shmemi_allocator_t *a, size_t capacity)
{
    a->capacity = capacity;
    a->head = calloc(1, sizeof(shmemi_block_t));
    if (!a->head)
        return -1;
    a->head->size = capacity;
    a->head->free = 1;
    return 0;
}

void shmemi_alloc_destroy(shmemi_allocator_t *a)
{
    for (shmemi_block_t *b = a->head; b;) {
        shmemi_block_t *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

/* Splits b so that a block starts at b->offset + at; returns the second part. */
static shmemi_block_t *split(shmemi_block_t *b, size_t at)
{
    shmemi_block_t *rest = calloc(1, sizeof(*rest));
    if (!rest)
        return NULL;
    rest->offset = b->offset + at;
    rest->size = b->size - at;
    rest->free = b->free;
    rest->prev = b;
    rest->next = b->next;
    if (b->next)
        b->next->prev = rest;
    b->next = rest;
    b->size = at;
    return rest;
}

int shmemi_alloc_take(shmemi_allocator_t *a, size_t size, size_t alignment, size_t *offset)
{
    if (alignment < SHMEMI_ALLOC_GRANULE)
        alignment = SHMEMI_ALLOC_GRANULE;
    if (size > SIZE_MAX - SHMEMI_ALLOC_GRANULE)
        return -1;
    size = align_up(size, SHMEMI_ALLOC_GRANULE);
    shmemi_block_t *best = NULL;
    size_t best_waste = SIZE_MAX;
    for (shmemi_block_t *b = a->head; b; b = b->next) {
        if (!b->free)
            continue;
        size_t start = align_up(b->offset, alignment);
        size_t lead = start - b->offset;
        if (start < b->offset || lead > b->size || b->size - lead < size)
            continue;
        size_t waste = b->size - size;
        if (waste < best_waste) {
            best = b;
            best_waste = waste;
        }
    }
    if (!best)
        return -1;
    size_t lead = align_up(best->offset, alignment) - best->offset;
    if (lead && !(best = split(best, lead)))
        return -1;
    if (best->size > size && !split(best, size))
        return -1;
    best->free = 0;
    *offset = best->offset;
    return 0;
}

static shmemi_block_t *find(const shmemi_allocator_t *a, size_t offset)
{
    for (shmemi_block_t *b = a->head; b; b = b->next)
        if (b->offset == offset)
            return b;
    return NULL;
}

static void merge_next(shmemi_block_t *b)
{
    shmemi_block_t *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    free(n);
}

int shmemi_alloc_release(shmemi_allocator_t *a, size_t offset)
{
    shmemi_block_t *b = find(a, offset);
    if (!b || b->free)
        return -1;
    b->free = 1;
    if (b->next && b->next->free)
        merge_next(b);
    if (b->prev && b->prev->free)
        merge_next(b->prev);
    return 0;
}

size_t shmemi_alloc_block_size(const shmemi_allocator_t *a, size_t offset)
{
    shmemi_block_t *b = find(a, offset);
    return b && !b->free ? b->size : 0;
}

size_t shmemi_alloc_largest_free(const shmemi_allocator_t *a)
{
    size_t largest = 0;
    for (shmemi_block_t *b = a->head; b; b = b->next)
        if (b->free && b->size > largest)
            largest = b->size;
    return largest;
}
