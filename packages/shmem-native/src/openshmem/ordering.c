/* Memory ordering and barriers: fence and quiet (the engine's quiet, for every context: see
 * contexts.c), the team barriers of the platform (which also order with the default stream,
 * for programs that mix in the aclshmem stream API), and the deprecated active-set barrier
 * over a pSync array. */
#include "amo/amo.h"
#include "base/error.h"
#include "core/wait.h"
#include "openshmem/osh.h"
#include "platform/platform.h"
#include "rma/rma.h"

/* quiet: the engine's quiet of the context's channel; fence: the engine's fence, which
 * orders without completing (free on one node and on the UCX AM plane, a UCX fence on the
 * RMA plane). */
static void complete(const char *api, shmem_ctx_t ctx)
{
    shmemi_channel_t *ch;
    shmemi_instance_t *inst = shmemi_osh_ctx_instance(api, ctx, &ch);
    if (inst)
        shmemi_quiet(inst, ch);
}

static void order(const char *api, shmem_ctx_t ctx)
{
    shmemi_channel_t *ch;
    shmemi_instance_t *inst = shmemi_osh_ctx_instance(api, ctx, &ch);
    if (inst)
        shmemi_fence(inst, ch);
}

void shmem_fence(void)
{
    order("shmem_fence", SHMEM_CTX_DEFAULT);
}
SHMEMI_PROFILED(shmem_fence)

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    order("shmem_ctx_fence", ctx);
}
SHMEMI_PROFILED(shmem_ctx_fence)

void shmem_quiet(void)
{
    complete("shmem_quiet", SHMEM_CTX_DEFAULT);
}
SHMEMI_PROFILED(shmem_quiet)

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    complete("shmem_ctx_quiet", ctx);
}
SHMEMI_PROFILED(shmem_ctx_quiet)

/* ---- team barriers ---------------------------------------------------------------------- */

static int team_barrier(shmem_team_t team, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    shmemi_team_t *t = inst ? shmemi_osh_team(inst, team, api) : NULL;
    return t ? shmemi_platform_barrier(inst, t) : ACLSHMEM_INVALID_PARAM;
}

void shmem_barrier_all(void)
{
    team_barrier(SHMEM_TEAM_WORLD, "shmem_barrier_all");
}
SHMEMI_PROFILED(shmem_barrier_all)

void shmem_sync_all(void)
{
    team_barrier(SHMEM_TEAM_WORLD, "shmem_sync_all");
}
SHMEMI_PROFILED(shmem_sync_all)

int shmem_team_sync(shmem_team_t team)
{
    return team_barrier(team, "shmem_team_sync") == ACLSHMEM_SUCCESS ? 0 : -1;
}
SHMEMI_PROFILED(shmem_team_sync)

/* ---- the active-set barrier (deprecated) ------------------------------------------------
 * A dissemination barrier over the members' pSync arrays: in round k each member adds 1 to
 * pSync[k] of the member 2^k ahead, waits until its own pSync[k] is positive and takes 1
 * back off.  Arrivals are counted, not flagged, so a member that already entered the next
 * barrier over the same pSync only leaves one more arrival, which that barrier takes; and
 * every pSync word is back at SHMEM_SYNC_VALUE (0) once all members have returned. */

static int arrived(void *word)
{
    return __atomic_load_n((long *)word, __ATOMIC_ACQUIRE) > 0;
}

static void active_set_barrier(const char *api, shmemi_osh_active_set_t set, long *psync, int complete_first)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || shmemi_osh_active_set_member(inst, &set, api) != ACLSHMEM_SUCCESS ||
        shmemi_osh_work_array(inst, psync, SHMEM_BARRIER_SYNC_SIZE * sizeof(long), sizeof(long), "pSync", api) !=
            ACLSHMEM_SUCCESS)
        return;
    if (complete_first && shmemi_quiet(inst, NULL) != ACLSHMEM_SUCCESS)
        return;
    int me = (inst->my_pe - set.start) >> set.log_stride;
    shmemi_amo_t arrive = {.op = SHMEMI_AMO_ADD, .kind = SHMEMI_AMO_INT, .width = sizeof(long), .value = 1};
    shmemi_amo_t take = arrive;
    take.value = (uint64_t)-1;
    for (int k = 0, dist = 1; dist < set.size; k++, dist <<= 1) {
        int partner = set.start + (((me + dist) % set.size) << set.log_stride);
        if (shmemi_amo(api, NULL, &psync[k], &arrive, partner, NULL) != ACLSHMEM_SUCCESS ||
            shmemi_wait(inst, arrived, &psync[k]) != ACLSHMEM_SUCCESS ||
            shmemi_amo(api, NULL, &psync[k], &take, inst->my_pe, NULL) != ACLSHMEM_SUCCESS)
            return;
    }
}

/* Their profiling names refer to them, which the deprecation would warn about. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    active_set_barrier("shmem_barrier", (shmemi_osh_active_set_t){PE_start, logPE_stride, PE_size}, pSync, 1);
}
SHMEMI_PROFILED(shmem_barrier)

/* In parentheses: shmem.h makes shmem_sync a macro that picks the team or the active-set form. */
void (shmem_sync)(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    active_set_barrier("shmem_sync", (shmemi_osh_active_set_t){PE_start, logPE_stride, PE_size}, pSync, 0);
}
SHMEMI_PROFILED(shmem_sync)
