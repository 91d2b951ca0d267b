/* The setup, memory and cache calls that OpenSHMEM deprecated before 1.5, under their old
 * names: each calls the function that replaced it (whose name its errors carry); the cache
 * calls have nothing to do on machines whose caches are coherent. */
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
    return shmem_my_pe();
}
SHMEMI_PROFILED(_my_pe)

int _num_pes(void)
{
    return shmem_n_pes();
}
SHMEMI_PROFILED(_num_pes)

void *shmalloc(size_t size)
{
    return shmem_malloc(size);
}
SHMEMI_PROFILED(shmalloc)

void shfree(void *ptr)
{
    shmem_free(ptr);
}
SHMEMI_PROFILED(shfree)

void *shrealloc(void *ptr, size_t size)
{
    return shmem_realloc(ptr, size);
}
SHMEMI_PROFILED(shrealloc)

void *shmemalign(size_t alignment, size_t size)
{
    return shmem_align(alignment, size);
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
