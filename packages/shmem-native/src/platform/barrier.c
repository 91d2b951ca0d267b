/* The public barrier family: aclshmem_barrier / _sync and their vector-core forms.  They check
 * the team, then let the platform order the barrier with the caller's device work (on the
 * host: after the default stream's work; in a kernel: the blocks meet first), which then runs
 * the engine's PE barrier (sync/barrier.c).  That is why they live here, above the engine. */
#include "aclshmem/sync.h"
#include "base/error.h"
#include "platform/platform.h"
#include "team/team.h"

static void team_barrier(aclshmem_team_t team, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || team == ACLSHMEM_TEAM_INVALID) /* the invalid team: a no-op, as in the original */
        return;
    shmemi_team_t *t = shmemi_team_get(inst, team);
    if (!t) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team %d does not exist (never created or destroyed)", api, team);
        return;
    }
    shmemi_platform_barrier(inst, t);
}

void aclshmem_barrier(aclshmem_team_t team)
{
    team_barrier(team, "aclshmem_barrier");
}

void aclshmem_barrier_all(void)
{
    team_barrier(ACLSHMEM_TEAM_WORLD, "aclshmem_barrier_all");
}

void aclshmem_sync(aclshmem_team_t team)
{
    team_barrier(team, "aclshmem_sync");
}

void aclshmem_sync_all(void)
{
    team_barrier(ACLSHMEM_TEAM_WORLD, "aclshmem_sync_all");
}

/* Every kernel block of the cpu platform is a vector core, so the vector-core barrier is the
 * kernel-aware barrier itself. */
void aclshmemx_barrier_vec(aclshmem_team_t team)
{
    team_barrier(team, "aclshmemx_barrier_vec");
}

void aclshmemx_barrier_all_vec(void)
{
    team_barrier(ACLSHMEM_TEAM_WORLD, "aclshmemx_barrier_all_vec");
}
