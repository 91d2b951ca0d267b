/* The setup, memory and cache calls that OpenSHMEM deprecated before 1.5, under their old
 * names: each is the call that replaced it (the cache calls have nothing to do on machines
 * whose caches are coherent).  Their errors name the old call. */
#include "core/error.h"
#include "core/instance.h"
#include "mem/allocator.h"
#include "mem/mem_api.h"
#include "openshmem/osh.h"

/* Their profiling aliases refer to them, which the deprecation would warn about. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

void start_pes(int npes)
{
    (void)npes; /* the launcher decides; start_pes never could */
    shmem_init();
}
SHMEMI_PROFILED(start_pes)

int _my_pe(void)
{
    shmemi_instance_t *inst = shmemi_require("_my_pe");
    return inst ? inst->my_pe : -1;
}
SHMEMI_PROFILED(_my_pe)

int _num_pes(void)
{
    shmemi_instance_t *inst = shmemi_require("_num_pes");
    return inst ? inst->n_pes : -1;
}
SHMEMI_PROFILED(_num_pes)

void *shmalloc(size_t size)
{
    return size ? shmemi_symmetric_alloc(SHMEMI_ALLOC_GRANULE, size, DEVICE_SIDE, 0, 0, "shmalloc") : NULL;
}
SHMEMI_PROFILED(shmalloc)

void shfree(void *ptr)
{
    shmemi_symmetric_free(ptr, DEVICE_SIDE, "shfree");
}
SHMEMI_PROFILED(shfree)

void *shrealloc(void *ptr, size_t size)
{
    return shmemi_symmetric_realloc(ptr, size, DEVICE_SIDE, "shrealloc");
}
SHMEMI_PROFILED(shrealloc)

void *shmemalign(size_t alignment, size_t size)
{
    return size ? shmemi_symmetric_alloc(alignment, size, DEVICE_SIDE, 0, 0, "shmemalign") : NULL;
}
SHMEMI_PROFILED(shmemalign)

/* Loads and stores of this node see each other's writes in order (the caches are
 * coherent), so there is nothing to invalidate or flush. */
void shmem_set_cache_inv(void)
{
}
SHMEMI_PROFILED(shmem_set_cache_inv)

void shmem_clear_cache_inv(void)
{
}
SHMEMI_PROFILED(shmem_clear_cache_inv)

void shmem_udcflush(void)
{
}
SHMEMI_PROFILED(shmem_udcflush)

void shmem_set_cache_line_inv(void *dest)
{
    (void)dest;
}
SHMEMI_PROFILED(shmem_set_cache_line_inv)

void shmem_clear_cache_line_inv(void *dest)
{
    (void)dest;
}
SHMEMI_PROFILED(shmem_clear_cache_line_inv)

void shmem_udcflush_line(void *dest)
{
    (void)dest;
}
SHMEMI_PROFILED(shmem_udcflush_line)
