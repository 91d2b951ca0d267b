/* Communication contexts.  A context is a slot of a fixed table: its team, options and
 * channel, and a generation that is odd while the slot holds a context.  A handle carries
 * the slot and the generation, so a destroyed context's handle is recognised (its
 * generation has moved on) even after the slot holds another context.  Operations look the
 * slot up without a lock (create and destroy take one), then go to the engine with the PE
 * of the context's team turned into a world PE, on the context's channel.
 *
 * The channel gives a context its own completion: the transports track and complete its
 * operations apart from every other context's (see shmemi_channel_t), so shmem_ctx_quiet
 * waits for this context's operations only.  On one node every operation is complete
 * when issued and a context needs no channel; across nodes the UCX plug-in gives each
 * context a worker and endpoints of its own, so threads with private contexts do not
 * share a lock.  Every context may be shared by threads, so the options need nothing. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "aclshmem/init.h"
#include "base/error.h"
#include "openshmem/osh.h"
#include "rma/rma.h"
#include "transport/transport.h"

#define KNOWN_OPTIONS (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE)

shmemi_osh_ctx_slot_t shmemi_osh_ctx_slots[SHMEMI_MAX_CONTEXTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
/* Live contexts with a channel of their own (under slots_lock): none on one node, so that
 * shmem_clear_lock's quiet of every context skips the table there. */
static size_t channels_open;

static shmem_ctx_t handle_of(size_t slot, uint64_t generation)
{
    return (shmem_ctx_t)(uintptr_t)((generation << SHMEMI_CTX_SLOT_BITS) | (slot + 2));
}

/* The slot of a live context other than the default one, or NULL with an error. */
static shmemi_osh_ctx_slot_t *live_slot(shmem_ctx_t ctx, const char *api)
{
    if (ctx == SHMEM_CTX_INVALID) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the context is SHMEM_CTX_INVALID", api);
        return NULL;
    }
    shmemi_osh_ctx_slot_t *slot = shmemi_osh_ctx_lookup(ctx);
    if (!slot)
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: context %p was destroyed (or is not a context handle)", api,
                    (void *)ctx);
    return slot;
}

/* A context of the world needs no instance here: the engine's call that follows checks it
 * (and a context handle outlives no finalize: finalize destroys them all). */
int shmemi_osh_ctx_route(const char *api, shmem_ctx_t ctx, int *pe, shmemi_channel_t **ch)
{
    *ch = NULL;
    shmemi_osh_ctx_slot_t *slot = live_slot(ctx, api);
    if (!slot)
        return ACLSHMEM_INVALID_PARAM;
    *ch = slot->channel;
    if (slot->team == SHMEM_TEAM_WORLD)
        return ACLSHMEM_SUCCESS;
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    shmemi_team_t *t = shmemi_osh_team(inst, slot->team, api);
    if (!t)
        return ACLSHMEM_INVALID_PARAM;
    if (*pe < 0 || *pe >= t->size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d is not in 0..%d, the PEs of the context's team", api,
                           *pe, t->size - 1);
    *pe = shmemi_team_world_pe(t, *pe);
    return ACLSHMEM_SUCCESS;
}

shmemi_instance_t *shmemi_osh_ctx_instance(const char *api, shmem_ctx_t ctx, shmemi_channel_t **ch)
{
    *ch = NULL;
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || ctx == SHMEM_CTX_DEFAULT)
        return inst;
    shmemi_osh_ctx_slot_t *slot = live_slot(ctx, api);
    if (!slot)
        return NULL;
    *ch = slot->channel;
    return inst;
}

int shmemi_osh_quiet_every_context(shmemi_instance_t *inst)
{
    SHMEMI_TRY(shmemi_quiet(inst, NULL));
    int rc = ACLSHMEM_SUCCESS;
    pthread_mutex_lock(&slots_lock); /* no context goes away meanwhile */
    for (size_t slot = 0; channels_open && slot < SHMEMI_MAX_CONTEXTS && rc == ACLSHMEM_SUCCESS; slot++)
        if ((atomic_load(&shmemi_osh_ctx_slots[slot].generation) & 1) && shmemi_osh_ctx_slots[slot].channel)
            rc = shmemi_quiet(inst, shmemi_osh_ctx_slots[slot].channel);
    pthread_mutex_unlock(&slots_lock);
    return rc;
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
    shmemi_channel_t *channel;
    int rc = shmemi_transport_channel_open(inst, &channel);
    if (rc != ACLSHMEM_SUCCESS) {
        char why[512];
        snprintf(why, sizeof(why), "%s", aclshmemx_get_last_error());
        return shmemi_fail(rc, "%s: the context cannot have a channel of its own: %s", api, why);
    }
    pthread_mutex_lock(&slots_lock);
    size_t slot = 0;
    while (slot < SHMEMI_MAX_CONTEXTS && (atomic_load(&shmemi_osh_ctx_slots[slot].generation) & 1))
        slot++;
    if (slot < SHMEMI_MAX_CONTEXTS) {
        shmemi_osh_ctx_slots[slot].team = team;
        shmemi_osh_ctx_slots[slot].options = options;
        shmemi_osh_ctx_slots[slot].channel = channel;
        channels_open += channel != NULL;
        uint64_t generation = atomic_load(&shmemi_osh_ctx_slots[slot].generation) + 1;
        atomic_store_explicit(&shmemi_osh_ctx_slots[slot].generation, generation, memory_order_release);
        *ctx = handle_of(slot, generation);
    }
    pthread_mutex_unlock(&slots_lock);
    if (slot == SHMEMI_MAX_CONTEXTS) {
        shmemi_transport_channel_close(inst, channel);
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: all %d contexts are in use", api, SHMEMI_MAX_CONTEXTS);
    }
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
    shmemi_channel_t *channel;
    shmemi_instance_t *inst = shmemi_osh_ctx_instance(api, ctx, &channel);
    if (!inst)
        return;
    shmemi_quiet(inst, channel); /* its operations complete before it goes */
    pthread_mutex_lock(&slots_lock);
    shmemi_osh_ctx_slot_t *slot = live_slot(ctx, api);
    if (slot) {
        atomic_fetch_add_explicit(&slot->generation, 1, memory_order_release);
        channels_open -= slot->channel != NULL;
        slot->channel = NULL;
    }
    pthread_mutex_unlock(&slots_lock);
    if (slot)
        shmemi_transport_channel_close(inst, channel);
}
SHMEMI_PROFILED(shmem_ctx_destroy)

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    static const char api[] = "shmem_ctx_get_team";
    if (!team)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team is NULL", api);
    *team = SHMEM_TEAM_INVALID;
    shmemi_channel_t *channel;
    if (!shmemi_osh_ctx_instance(api, ctx, &channel))
        return -1;
    *team = ctx == SHMEM_CTX_DEFAULT ? SHMEM_TEAM_WORLD : live_slot(ctx, api)->team;
    return 0;
}
SHMEMI_PROFILED(shmem_ctx_get_team)

void shmemi_osh_contexts_fini(shmemi_instance_t *inst)
{
    pthread_mutex_lock(&slots_lock);
    for (size_t slot = 0; slot < SHMEMI_MAX_CONTEXTS; slot++) {
        if (!(atomic_load(&shmemi_osh_ctx_slots[slot].generation) & 1))
            continue;
        atomic_fetch_add(&shmemi_osh_ctx_slots[slot].generation, 1);
        shmemi_quiet(inst, shmemi_osh_ctx_slots[slot].channel); /* finalize completes every operation */
        shmemi_transport_channel_close(inst, shmemi_osh_ctx_slots[slot].channel);
        shmemi_osh_ctx_slots[slot].channel = NULL;
    }
    channels_open = 0;
    pthread_mutex_unlock(&slots_lock);
}
