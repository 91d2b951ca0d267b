/* Remote memory access: put and get in every shape of OpenSHMEM 1.5, each one call of the
 * RMA engine (rma/rma.c). */
#include "openshmem/osh.h"
#include "rma/rma.h"

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    shmemi_rma_put("shmem_putmem", dest, source, nelems, 1, pe);
}
SHMEMI_PROFILED(shmem_putmem)

void shmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    shmemi_rma_get("shmem_getmem", dest, source, nelems, 1, pe);
}
SHMEMI_PROFILED(shmem_getmem)
