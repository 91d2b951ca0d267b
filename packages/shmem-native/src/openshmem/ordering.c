/* Barriers, fence and quiet: the PE barrier of the platform (which also orders with the
 * default stream, for programs that mix in the aclshmem stream API) and the engine's quiet. */
#include "core/error.h"
#include "openshmem/osh.h"
#include "platform/platform.h"
#include "team/team.h"

void shmem_barrier_all(void)
{
    shmemi_instance_t *inst = shmemi_require("shmem_barrier_all");
    if (inst)
        shmemi_platform_barrier(inst, shmemi_team_get(inst, ACLSHMEM_TEAM_WORLD));
}
SHMEMI_PROFILED(shmem_barrier_all)
