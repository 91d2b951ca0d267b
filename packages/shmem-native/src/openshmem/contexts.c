/* Communication contexts.  A context is a slot of a fixed table: its team and options, and a
 * generation that is odd while the slot holds a context.  A handle carries the slot and the
 * generation, so a destroyed context's handle is recognised (its generation has moved on)
 * even after the slot holds another context.  Operations look the slot up without a lock
 * (create and destroy take one), then go to the engine with the PE of the context's team
 * turned into a world PE.
 *
 * Completion is tracked per PE, not per context: every operation is complete or ordered
 * by the engine's quiet (shm: when issued; UCX: after the plug-in's flush), which a
 * context's quiet or fence calls, so it also completes the other contexts' operations.
 * The options are accepted and need nothing: every context may be shared by threads. */
#include <pthread.h>
#include <stdint.h>

#include "core/error.h"
#include "openshmem/osh.h"
#include "rma/rma.h"

#define MAX_CONTEXTS 4096
#define SLOT_BITS 16 /* a handle's low bits: the slot + 2 (0 and 1 are the two constants) */
#define KNOWN_OPTIONS (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE)

typedef struct {
    _Atomic uint64_t generation; /* odd: holds a context */
    shmem_team_t team;
    long options;
} ctx_slot_t;

static ctx_slot_t slots[MAX_CONTEXTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static shmem_ctx_t handle_of(size_t slot, uint64_t generation)
{
    return (shmem_ctx_t)(uintptr_t)((generation << SLOT_BITS) | (slot + 2));
}

/* The slot of a live context other than the default one, or NULL with an error. */
static ctx_slot_t *live_slot(shmem_ctx_t ctx, const char *api)
{
    uintptr_t h = (uintptr_t)ctx;
    size_t slot = (h & (((uintptr_t)1 << SLOT_BITS) - 1)) - 2;
    if (ctx == SHMEM_CTX_INVALID) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the context is SHMEM_CTX_INVALID", api);
        return NULL;
    }
    uint64_t generation = (uint64_t)(h >> SLOT_BITS);
    if (slot >= MAX_CONTEXTS || !(generation & 1) ||
        atomic_load_explicit(&slots[slot].generation, memory_order_acquire) != generation) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: context %p was destroyed (or is not a context handle)", api,
                    (void *)ctx);
        return NULL;
    }
    return &slots[slot];
}

int shmemi_osh_ctx_world_pe(const char *api, shmem_ctx_t ctx, int *pe)
{
    shmemi_instance_t *inst = shmemi_require(api);
    ctx_slot_t *slot = inst ? live_slot(ctx, api) : NULL;
    if (!slot)
        return inst ? ACLSHMEM_INVALID_PARAM : ACLSHMEM_NOT_INITED;
    if (slot->team == SHMEM_TEAM_WORLD)
        return ACLSHMEM_SUCCESS;
    shmemi_team_t *t = shmemi_osh_team(inst, slot->team, api);
    if (!t)
        return ACLSHMEM_INVALID_PARAM;
    if (*pe < 0 || *pe >= t->size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d is not in 0..%d, the PEs of the context's team", api,
                           *pe, t->size - 1);
    *pe = shmemi_team_world_pe(t, *pe);
    return ACLSHMEM_SUCCESS;
}

shmemi_instance_t *shmemi_osh_ctx_instance(const char *api, shmem_ctx_t ctx)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || ctx == SHMEM_CTX_DEFAULT)
        return inst;
    return live_slot(ctx, api) ? inst : NULL;
}

/* A new context on team; nonzero (and *ctx unchanged) when it cannot be made, but for
 * SHMEM_TEAM_INVALID, the team of the PEs a split left out, where OpenSHMEM 1.5 sets *ctx to
 * SHMEM_CTX_INVALID: such a PE tests its handle as the members test theirs. */
static int create(shmem_team_t team, long options, shmem_ctx_t *ctx, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    if (!ctx)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: ctx is NULL", api);
    if (options & ~KNOWN_OPTIONS)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: options 0x%lx are not a mask of SHMEM_CTX_PRIVATE, "
                           "SHMEM_CTX_SERIALIZED and SHMEM_CTX_NOSTORE", api, options);
    if (team == SHMEM_TEAM_INVALID)
        *ctx = SHMEM_CTX_INVALID;
    if (!shmemi_osh_team(inst, team, api))
        return ACLSHMEM_INVALID_PARAM;
    pthread_mutex_lock(&slots_lock);
    size_t slot = 0;
    while (slot < MAX_CONTEXTS && (atomic_load(&slots[slot].generation) & 1))
        slot++;
    if (slot < MAX_CONTEXTS) {
        slots[slot].team = team;
        slots[slot].options = options;
        uint64_t generation = atomic_load(&slots[slot].generation) + 1;
        atomic_store_explicit(&slots[slot].generation, generation, memory_order_release);
        *ctx = handle_of(slot, generation);
    }
    pthread_mutex_unlock(&slots_lock);
    if (slot == MAX_CONTEXTS)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: all %d contexts are in use", api, MAX_CONTEXTS);
    return ACLSHMEM_SUCCESS;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    return create(SHMEM_TEAM_WORLD, options, ctx, "shmem_ctx_create") == ACLSHMEM_SUCCESS ? 0 : -1;
}
SHMEMI_PROFILED(shmem_ctx_create)

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    return create(team, options, ctx, "shmem_team_create_ctx") == ACLSHMEM_SUCCESS ? 0 : -1;
}
SHMEMI_PROFILED(shmem_team_create_ctx)

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    static const char api[] = "shmem_ctx_destroy";
    if (ctx == SHMEM_CTX_INVALID)
        return;
    if (ctx == SHMEM_CTX_DEFAULT) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: SHMEM_CTX_DEFAULT cannot be destroyed", api);
        return;
    }
    shmemi_instance_t *inst = shmemi_osh_ctx_instance(api, ctx);
    if (!inst)
        return;
    shmemi_quiet(inst); /* its operations complete before it goes */
    pthread_mutex_lock(&slots_lock);
    ctx_slot_t *slot = live_slot(ctx, api);
    if (slot)
        atomic_fetch_add_explicit(&slot->generation, 1, memory_order_release);
    pthread_mutex_unlock(&slots_lock);
}
SHMEMI_PROFILED(shmem_ctx_destroy)

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    static const char api[] = "shmem_ctx_get_team";
    if (!team)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team is NULL", api);
    *team = SHMEM_TEAM_INVALID;
    if (!shmemi_osh_ctx_instance(api, ctx))
        return -1;
    *team = ctx == SHMEM_CTX_DEFAULT ? SHMEM_TEAM_WORLD : live_slot(ctx, api)->team;
    return 0;
}
SHMEMI_PROFILED(shmem_ctx_get_team)

void shmemi_osh_contexts_fini(void)
{
    pthread_mutex_lock(&slots_lock);
    for (size_t slot = 0; slot < MAX_CONTEXTS; slot++)
        if (atomic_load(&slots[slot].generation) & 1)
            atomic_fetch_add(&slots[slot].generation, 1);
    pthread_mutex_unlock(&slots_lock);
}
