/* Cycle profiling.  Recording arrives with the profiling work; until then every PE reports
 * itself as not profiled (pe_id -1), which is what the original reports on PEs other than
 * SHMEM_CYCLE_PROF_PE. */
#include <stdio.h>
#include <string.h>

#include "aclshmem/log.h"
#include "core/error.h"
#include "core/instance.h"

static aclshmem_prof_pe_t unprofiled = {.pe_id = -1};

void aclshmemx_get_prof(aclshmem_prof_pe_t **out_profs, bool verbose)
{
    shmemi_instance_t *inst = shmemi_require("aclshmemx_get_prof");
    if (!inst)
        return;
    aclshmem_prof_pe_t *prof = inst->prof ? inst->prof : &unprofiled;
    if (out_profs)
        *out_profs = prof;
    if (verbose)
        printf("[PE %d] profiling: %s\n", inst->my_pe, prof->pe_id < 0 ? "not enabled on this PE" : "enabled");
}

void aclshmemx_show_prof(void)
{
    aclshmemx_get_prof(NULL, true);
}

void aclshmemx_prof_start(uint32_t frame)
{
    (void)frame;
}

void aclshmemx_prof_end(uint32_t frame)
{
    (void)frame;
}
