/* Accessibility queries and shmem_ptr: which PEs and addresses this PE reaches, and the
 * load/store address of a peer's symmetric object (PEs of this node map each other's
 * segments). */
#include "base/error.h"
#include "mem/heap.h"
#include "openshmem/osh.h"
#include "rma/rma.h"

int shmem_pe_accessible(int pe)
{
    shmemi_instance_t *inst = shmemi_require("shmem_pe_accessible");
    return inst && pe >= 0 && pe < inst->n_pes;
}
SHMEMI_PROFILED(shmem_pe_accessible)

int shmem_addr_accessible(const void *addr, int pe)
{
    shmemi_instance_t *inst = shmemi_require("shmem_addr_accessible");
    size_t offset;
    /* A query: "no" is an answer, not an error. */
    return inst && pe >= 0 && pe < inst->n_pes && addr && shmemi_heap_locate(&inst->heaps, addr, 1, &offset) >= 0;
}
SHMEMI_PROFILED(shmem_addr_accessible)

void *shmem_ptr(const void *dest, int pe)
{
    return shmemi_rma_ptr("shmem_ptr", dest, pe);
}
SHMEMI_PROFILED(shmem_ptr)

void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    static const char api[] = "shmem_team_ptr";
    shmemi_instance_t *inst = shmemi_require(api);
    shmemi_team_t *t = inst ? shmemi_osh_team(inst, team, api) : NULL;
    if (!t)
        return NULL;
    if (pe < 0 || pe >= t->size) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d is not in 0..%d, the PEs of the team", api, pe, t->size - 1);
        return NULL;
    }
    return shmemi_rma_ptr(api, dest, shmemi_team_world_pe(t, pe));
}
SHMEMI_PROFILED(shmem_team_ptr)
