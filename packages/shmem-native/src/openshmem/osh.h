/* What the OpenSHMEM entry points (the .c files of src/openshmem) share.  Each entry point is thin: it
 * checks what only the OpenSHMEM API knows (contexts, team handles, its own constants),
 * then makes one call into the units below, passing its own name for the error messages. */
#ifndef SHMEMI_OSH_H
#define SHMEMI_OSH_H

#include "aclshmem/types.h"
#include "coll/coll.h"
#include "core/instance.h"
#include "shmem.h"
#include "shmemx.h"
#include "team/team.h"
#include "transport/transport.h"

/* Defines pshmem_<name>, the profiling name of shmem_<name>: a weak alias of the same code,
 * so a profiling library may define shmem_<name> itself and call pshmem_<name>. */
#define SHMEMI_PROFILED(fn) extern __typeof__(fn) p##fn __attribute__((weak, alias(#fn), visibility("default")));

/* ---- team handles (teams.c) -----------------------------------------------------------
 * A shmem_team_t holds the team's slot in the instance's team table and 40 bits of the
 * team's unique id, so that the handle of a destroyed team never names the team that takes
 * its slot later.  SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED are constants. */

/* The live team behind handle on inst; NULL with an error naming api when handle is
 * SHMEM_TEAM_INVALID or its team was destroyed. */
shmemi_team_t *shmemi_osh_team(shmemi_instance_t *inst, shmem_team_t handle, const char *api);
/* The handle of t (SHMEM_TEAM_WORLD for the world team). */
shmem_team_t shmemi_osh_team_handle(const shmemi_team_t *t);
/* Builds SHMEM_TEAM_SHARED (collective over the world, at init) and forgets it (finalize). */
int shmemi_osh_teams_init(shmemi_instance_t *inst);
void shmemi_osh_teams_fini(void);

/* ---- contexts (contexts.c) ---------------------------------------------------------- */
/* The table of contexts: a handle is (generation << SHMEMI_CTX_SLOT_BITS) | (slot + 2), and
 * a slot holds a context while its generation is odd and equal to the handle's. */
#define SHMEMI_MAX_CONTEXTS 4096
#define SHMEMI_CTX_SLOT_BITS 16 /* a handle's low bits: the slot + 2 (0 and 1: the two constants) */
typedef struct {
    _Atomic uint64_t generation; /* odd: holds a context */
    shmem_team_t team;
    long options;
    shmemi_channel_t *channel; /* NULL: the default one */
} shmemi_osh_ctx_slot_t;
extern shmemi_osh_ctx_slot_t shmemi_osh_ctx_slots[SHMEMI_MAX_CONTEXTS];

/* The slot of ctx while it holds that context, or NULL for any other handle (a destroyed
 * context, a constant, garbage). */
static inline shmemi_osh_ctx_slot_t *shmemi_osh_ctx_lookup(shmem_ctx_t ctx)
{
    uintptr_t h = (uintptr_t)ctx;
    size_t slot = (h & (((uintptr_t)1 << SHMEMI_CTX_SLOT_BITS) - 1)) - 2;
    uint64_t generation = (uint64_t)(h >> SHMEMI_CTX_SLOT_BITS);
    if (slot >= SHMEMI_MAX_CONTEXTS || !(generation & 1))
        return NULL;
    shmemi_osh_ctx_slot_t *s = &shmemi_osh_ctx_slots[slot];
    return atomic_load_explicit(&s->generation, memory_order_acquire) == generation ? s : NULL;
}

/* The slot of ctx, a live context of the world (the common case, looked up inline on every
 * RMA and AMO of a context), or NULL for any other handle. */
static inline shmemi_osh_ctx_slot_t *shmemi_osh_world_ctx(shmem_ctx_t ctx)
{
    shmemi_osh_ctx_slot_t *s = shmemi_osh_ctx_lookup(ctx);
    return s && s->team == SHMEM_TEAM_WORLD ? s : NULL;
}

/* Where an operation of ctx goes: turns pe, a PE of ctx's team, into a PE of the world and
 * gives ctx's channel in *ch; fails (error naming api) for SHMEM_CTX_INVALID, a destroyed
 * context, a context whose team was destroyed or a pe outside the team.  The default
 * context's PEs are world PEs already and its channel the default one: no lookup; a
 * context of the world is found inline. */
int shmemi_osh_ctx_route(const char *api, shmem_ctx_t ctx, int *pe, shmemi_channel_t **ch);
static inline int shmemi_osh_ctx_pe(const char *api, shmem_ctx_t ctx, int *pe, shmemi_channel_t **ch)
{
    *ch = NULL;
    if (ctx == SHMEM_CTX_DEFAULT)
        return ACLSHMEM_SUCCESS;
    shmemi_osh_ctx_slot_t *world = shmemi_osh_world_ctx(ctx);
    if (!world)
        return shmemi_osh_ctx_route(api, ctx, pe, ch);
    *ch = world->channel;
    return ACLSHMEM_SUCCESS;
}
/* The instance when ctx is a live context (the default one included), and its channel in
 * *ch; else NULL with an error naming api. */
shmemi_instance_t *shmemi_osh_ctx_instance(const char *api, shmem_ctx_t ctx, shmemi_channel_t **ch);
/* A quiet on the default context and on every live context (shmem_clear_lock: whatever
 * the critical section wrote, on any context, is complete before the next holder enters). */
int shmemi_osh_quiet_every_context(shmemi_instance_t *inst);
/* Completes and ends every context (finalize). */
void shmemi_osh_contexts_fini(shmemi_instance_t *inst);

/* ---- collectives (collectives.c) ----------------------------------------------------------
 * Runs c over t, a live team of inst, in the collectives engine, after the work enqueued on
 * the default stream so far (as the barriers do): ACLSHMEM_SUCCESS, or the engine's error,
 * which names api. */
int shmemi_osh_coll(const char *api, shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_coll_t *c);

/* ---- active sets (active_sets.c) ------------------------------------------------------------
 * The PEs PE_start, PE_start + 2^logPE_stride, ... (PE_size of them) of the deprecated
 * active-set barrier, sync and collectives. */
typedef struct {
    int start, log_stride, size;
} shmemi_osh_active_set_t;

/* ACLSHMEM_SUCCESS when set fits in the world's PEs and this PE is one of them; else an error
 * naming api (this PE cannot take part in a call over set). */
int shmemi_osh_active_set_member(shmemi_instance_t *inst, const shmemi_osh_active_set_t *set, const char *api);
/* ACLSHMEM_SUCCESS when array (what: "pSync", "pWrk") is a symmetric array of bytes bytes
 * aligned to align; else an error naming api. */
int shmemi_osh_work_array(shmemi_instance_t *inst, const void *array, size_t bytes, size_t align, const char *what,
                          const char *api);
/* The team of exactly set's PEs (a member of it calls): SHMEM_TEAM_WORLD's team for the set of
 * every PE, else the set's own team, made on the set's first call by its members (collective
 * over them) and kept until finalize; NULL with an error naming api. */
shmemi_team_t *shmemi_osh_active_set_team(shmemi_instance_t *inst, const shmemi_osh_active_set_t *set,
                                          const char *api);
/* Forgets the sets' teams (finalize, which frees the teams). */
void shmemi_osh_active_sets_fini(void);

#endif
