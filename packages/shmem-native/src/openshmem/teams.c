/* Teams: shmem_team_t handles over the team table of team/team.c, the splits, translate,
 * configs, and SHMEM_TEAM_SHARED. */
#include <stdint.h>
#include <stdlib.h>

#include "aclshmem/team.h"
#include "base/error.h"
#include "openshmem/osh.h"

/* Handle bits: the low 12 hold the team's slot + 1 (1..2048; slot 0, the world, is the
 * constant SHMEM_TEAM_WORLD), the others the low bits of the team's unique id.  0xFFF can
 * be no slot: it is the constant SHMEM_TEAM_SHARED. */
#define SLOT_BITS 12
#define SLOT_MASK (((uintptr_t)1 << SLOT_BITS) - 1)
#define UID_MASK 0xFFFFFFFFFFull

/* The team SHMEM_TEAM_SHARED stands for, set by shmem_init (0: not set; then it is the
 * world when every PE shares this node). */
static _Atomic uintptr_t shared_team;

shmem_team_t shmemi_osh_team_handle(const shmemi_team_t *t)
{
    if (t->index == ACLSHMEM_TEAM_WORLD)
        return SHMEM_TEAM_WORLD;
    return (shmem_team_t)(((uintptr_t)(t->uid & UID_MASK) << SLOT_BITS) | (uintptr_t)(t->index + 1));
}

static int all_pes_on_this_node(const shmemi_instance_t *inst)
{
    for (int pe = 0; pe < inst->n_pes; pe++)
        if (!inst->heaps.same_node[pe])
            return 0;
    return 1;
}

/* The handle SHMEM_TEAM_SHARED means now, or 0. */
static uintptr_t shared_handle(const shmemi_instance_t *inst)
{
    uintptr_t h = atomic_load(&shared_team);
    if (!h && all_pes_on_this_node(inst))
        h = (uintptr_t)SHMEM_TEAM_WORLD;
    return h;
}

shmemi_team_t *shmemi_osh_team(shmemi_instance_t *inst, shmem_team_t handle, const char *api)
{
    uintptr_t h = (uintptr_t)handle;
    if (handle == SHMEM_TEAM_INVALID) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the team is SHMEM_TEAM_INVALID", api);
        return NULL;
    }
    if (handle == SHMEM_TEAM_SHARED && !(h = shared_handle(inst))) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: SHMEM_TEAM_SHARED of a job across nodes exists only after shmem_init",
                    api);
        return NULL;
    }
    int slot = (int)(h & SLOT_MASK) - 1;
    shmemi_team_t *t = shmemi_team_get(inst, slot);
    if (!t || (uintptr_t)shmemi_osh_team_handle(t) != h) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team %p was destroyed (or is not a team handle)", api,
                    (void *)handle);
        return NULL;
    }
    return t;
}

/* ---- SHMEM_TEAM_SHARED ------------------------------------------------------------------ */

/* Where this PE's node is in the world: its first PE and how many it holds. */
typedef struct {
    int32_t first, count;
} node_span_t;

static node_span_t node_span_of(const shmemi_instance_t *inst)
{
    node_span_t span = {-1, 0};
    for (int pe = 0; pe < inst->n_pes; pe++)
        if (inst->heaps.same_node[pe]) {
            span.first = span.first < 0 ? pe : span.first;
            span.count++;
        }
    return span;
}

/* *block: the PEs per node when every node holds that many consecutive PEs (as the
 * launchers place them), else 1 (each PE is its own shared team).  Collective. */
static int node_block_size(shmemi_instance_t *inst, shmemi_team_t *world, int *block)
{
    node_span_t mine = node_span_of(inst), *all = calloc((size_t)inst->n_pes, sizeof(*all));
    if (!all)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "shmem_init: out of memory");
    pthread_mutex_lock(&world->lock);
    int rc = shmemi_team_collective(inst, world, &mine, sizeof(mine), all);
    pthread_mutex_unlock(&world->lock);
    *block = all[0].count;
    for (int pe = 0; pe < inst->n_pes && *block > 1; pe++)
        if (all[pe].count != *block || all[pe].first != pe / *block * *block)
            *block = 1;
    free(all);
    return rc;
}

int shmemi_osh_teams_init(shmemi_instance_t *inst)
{
    atomic_store(&shared_team, 0);
    if (all_pes_on_this_node(inst))
        return ACLSHMEM_SUCCESS;
    /* Across nodes: the rows of a 2-D split with a node per row are the nodes. */
    int block = 1;
    SHMEMI_TRY(node_block_size(inst, shmemi_team_get(inst, ACLSHMEM_TEAM_WORLD), &block));
    aclshmem_team_t node = ACLSHMEM_TEAM_INVALID, across = ACLSHMEM_TEAM_INVALID;
    SHMEMI_TRY(shmemi_team_split_2d("shmem_init (SHMEM_TEAM_SHARED)", ACLSHMEM_TEAM_WORLD, block, &node, &across));
    shmemi_team_destroy(inst, across, "shmem_init");
    atomic_store(&shared_team, (uintptr_t)shmemi_osh_team_handle(shmemi_team_get(inst, node)));
    return ACLSHMEM_SUCCESS;
}

void shmemi_osh_teams_fini(void)
{
    atomic_store(&shared_team, 0);
}

/* ---- queries ------------------------------------------------------------------------------ */

/* The team of a query, or NULL: SHMEM_TEAM_INVALID is no error (the answer is -1). */
static shmemi_team_t *query_team(shmem_team_t team, const char *api)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || team == SHMEM_TEAM_INVALID)
        return NULL;
    return shmemi_osh_team(inst, team, api);
}

int shmem_team_my_pe(shmem_team_t team)
{
    shmemi_team_t *t = query_team(team, "shmem_team_my_pe");
    return t ? t->my_idx : -1;
}
SHMEMI_PROFILED(shmem_team_my_pe)

int shmem_team_n_pes(shmem_team_t team)
{
    shmemi_team_t *t = query_team(team, "shmem_team_n_pes");
    return t ? t->size : -1;
}
SHMEMI_PROFILED(shmem_team_n_pes)

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    static const char api[] = "shmem_team_translate_pe";
    shmemi_team_t *src = query_team(src_team, api);
    shmemi_team_t *dst = src ? query_team(dest_team, api) : NULL;
    if (!dst)
        return -1;
    if (src_pe < 0 || src_pe >= src->size) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d is not in the source team of %d PEs", api, src_pe,
                    src->size);
        return -1;
    }
    return shmemi_team_index_of(dst, shmemi_team_world_pe(src, src_pe));
}
SHMEMI_PROFILED(shmem_team_translate_pe)

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    static const char api[] = "shmem_team_get_config";
    shmemi_team_t *t = query_team(team, api);
    if (!t)
        return team == SHMEM_TEAM_INVALID ? shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the team is SHMEM_TEAM_INVALID",
                                                        api)
                                          : -1;
    if (config_mask & ~SHMEM_TEAM_NUM_CONTEXTS)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: config_mask 0x%lx has bits other than "
                           "SHMEM_TEAM_NUM_CONTEXTS", api, config_mask);
    if (config_mask && !config)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: config is NULL", api);
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = t->config.num_contexts;
    return 0;
}
SHMEMI_PROFILED(shmem_team_get_config)

/* ---- splits and destroy ----------------------------------------------------------------- */

/* The number of contexts config asks for (0 when config_mask does not select it). */
static int requested_contexts(const shmem_team_config_t *config, long config_mask, const char *api, int *out)
{
    *out = 0;
    if (config_mask & ~SHMEM_TEAM_NUM_CONTEXTS)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: config_mask 0x%lx has bits other than "
                           "SHMEM_TEAM_NUM_CONTEXTS", api, config_mask);
    if (!(config_mask & SHMEM_TEAM_NUM_CONTEXTS))
        return ACLSHMEM_SUCCESS;
    if (!config || config->num_contexts < 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: config is NULL or asks for a negative number of contexts",
                           api);
    *out = config->num_contexts;
    return ACLSHMEM_SUCCESS;
}

/* The handle of a split's new team (SHMEM_TEAM_INVALID on a PE that is not a member), whose
 * config now records num_contexts. */
static shmem_team_t new_team_handle(shmemi_instance_t *inst, aclshmem_team_t id, int num_contexts)
{
    shmemi_team_t *t = id == ACLSHMEM_TEAM_INVALID ? NULL : shmemi_team_get(inst, id);
    if (!t)
        return SHMEM_TEAM_INVALID;
    t->config.num_contexts = num_contexts;
    return shmemi_osh_team_handle(t);
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)
{
    static const char api[] = "shmem_team_split_strided";
    if (new_team)
        *new_team = SHMEM_TEAM_INVALID;
    shmemi_instance_t *inst = shmemi_require(api);
    shmemi_team_t *parent = inst ? shmemi_osh_team(inst, parent_team, api) : NULL;
    int contexts;
    if (!parent || requested_contexts(config, config_mask, api, &contexts) != ACLSHMEM_SUCCESS)
        return -1;
    aclshmem_team_t id = ACLSHMEM_TEAM_INVALID;
    /* A team of one PE has no stride to speak of. */
    int rc = shmemi_team_split_strided(api, parent->index, start, size == 1 ? 1 : stride, size, new_team ? &id : NULL);
    if (rc == ACLSHMEM_SUCCESS)
        *new_team = new_team_handle(inst, id, contexts);
    return rc == ACLSHMEM_SUCCESS ? 0 : -1;
}
SHMEMI_PROFILED(shmem_team_split_strided)

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team)
{
    static const char api[] = "shmem_team_split_2d";
    if (xaxis_team)
        *xaxis_team = SHMEM_TEAM_INVALID;
    if (yaxis_team)
        *yaxis_team = SHMEM_TEAM_INVALID;
    shmemi_instance_t *inst = shmemi_require(api);
    shmemi_team_t *parent = inst ? shmemi_osh_team(inst, parent_team, api) : NULL;
    int x_contexts, y_contexts;
    if (!parent || requested_contexts(xaxis_config, xaxis_mask, api, &x_contexts) != ACLSHMEM_SUCCESS ||
        requested_contexts(yaxis_config, yaxis_mask, api, &y_contexts) != ACLSHMEM_SUCCESS)
        return -1;
    aclshmem_team_t x = ACLSHMEM_TEAM_INVALID, y = ACLSHMEM_TEAM_INVALID;
    int rc = shmemi_team_split_2d(api, parent->index, xrange, xaxis_team ? &x : NULL, yaxis_team ? &y : NULL);
    if (rc != ACLSHMEM_SUCCESS)
        return -1;
    *xaxis_team = new_team_handle(inst, x, x_contexts);
    *yaxis_team = new_team_handle(inst, y, y_contexts);
    return 0;
}
SHMEMI_PROFILED(shmem_team_split_2d)

void shmem_team_destroy(shmem_team_t team)
{
    static const char api[] = "shmem_team_destroy";
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst || team == SHMEM_TEAM_INVALID)
        return;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED || (uintptr_t)team == shared_handle(inst)) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED cannot be destroyed", api);
        return;
    }
    shmemi_team_t *t = shmemi_osh_team(inst, team, api);
    if (t)
        shmemi_team_destroy(inst, t->index, api);
}
SHMEMI_PROFILED(shmem_team_destroy)
