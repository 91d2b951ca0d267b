#include "team/team.h"

#include <stdlib.h>
#include <string.h>

#include "aclshmem/team.h"
#include "core/error.h"

/* The slots of the team table are read by stream workers (a barrier or wait on a stream
 * looks its team up when it runs) while the host thread creates and destroys teams, so
 * they are published and read atomically: a worker sees either no team, or a team whose
 * fields were all written before it was published. */
static void publish_team(shmemi_team_pool_t *pool, int index, shmemi_team_t *t)
{
    __atomic_store_n(&pool->teams[index], t, __ATOMIC_RELEASE);
}

static shmemi_team_t *load_team(const shmemi_team_pool_t *pool, int index)
{
    return __atomic_load_n(&pool->teams[index], __ATOMIC_ACQUIRE);
}

static shmemi_team_t *team_new(shmemi_instance_t *inst, int index, int start, int stride, int size,
                               uint64_t uid)
{
    shmemi_team_t *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->index = index;
    t->start = start;
    t->stride = stride;
    t->size = size;
    t->my_idx = (inst->my_pe - start) / stride;
    t->uid = uid;
    t->config.version = (1 << 16) + (int)sizeof(aclshmem_team_config_t);
    t->config.num_contexts = 0;
    t->config.uniqueid = uid;
    pthread_mutex_init(&t->lock, NULL);
    shmemi_team_pool_t *pool = inst->teams;
    pool->used[index / 64] |= 1ull << (index % 64);
    publish_team(pool, index, t);
    return t;
}

static void team_free(shmemi_instance_t *inst, shmemi_team_t *t)
{
    shmemi_team_pool_t *pool = inst->teams;
    pool->used[t->index / 64] &= ~(1ull << (t->index % 64));
    publish_team(pool, t->index, NULL);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int shmemi_teams_init(shmemi_instance_t *inst)
{
    inst->teams = calloc(1, sizeof(shmemi_team_pool_t));
    if (!inst->teams || !team_new(inst, ACLSHMEM_TEAM_WORLD, 0, 1, inst->n_pes, 1))
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for the team pool");
    return ACLSHMEM_SUCCESS;
}

void shmemi_teams_fini(shmemi_instance_t *inst)
{
    if (!inst->teams)
        return;
    for (int i = 0; i < ACLSHMEM_MAX_TEAMS; i++) {
        shmemi_team_t *t = load_team(inst->teams, i);
        if (t)
            team_free(inst, t);
    }
    free(inst->teams);
    inst->teams = NULL;
}

shmemi_team_t *shmemi_team_get(shmemi_instance_t *inst, aclshmem_team_t team)
{
    if (!inst || !inst->teams || team < 0 || team >= ACLSHMEM_MAX_TEAMS)
        return NULL;
    return load_team(inst->teams, team);
}

int shmemi_team_collective(shmemi_instance_t *inst, shmemi_team_t *t, const void *in, size_t len, void *out)
{
    uint64_t key = t->uid * 0x9E3779B97F4A7C15ull + ++t->coll_seq;
    return shmemi_bootstrap_collective(inst->boot, key, t->size, t->my_idx, in, len, out,
                                       inst->control_timeout_ms);
}

/* ---- public API ------------------------------------------------------- */

static shmemi_team_t *require_team(shmemi_instance_t *inst, aclshmem_team_t team, const char *api)
{
    shmemi_team_t *t = shmemi_team_get(inst, team);
    if (!t)
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team %d does not exist (never created or destroyed)",
                    api, team);
    return t;
}

/* The lowest id free on every PE whose bit is set in members, or -1. */
static int lowest_common_free(const uint64_t *maps, int n, const uint8_t *members, int skip)
{
    for (int w = 0; w < SHMEMI_TEAM_WORDS; w++) {
        uint64_t used = 0;
        for (int i = 0; i < n; i++)
            if (members[i])
                used |= maps[(size_t)i * SHMEMI_TEAM_WORDS + w];
        if (skip >= 0 && skip / 64 == w)
            used |= 1ull << (skip % 64);
        if (~used)
            return w * 64 + __builtin_ctzll(~used);
    }
    return -1;
}

typedef struct {
    int start, stride, size; /* child, relative to the parent */
} split_spec_t;

/* Collective over parent: creates one child team per spec (this PE joins those it is in).
 * Every parent member takes part even when it joins none, so all agree on the ids. */
static int split_teams(shmemi_instance_t *inst, shmemi_team_t *parent, const split_spec_t *spec,
                       int count, aclshmem_team_t *out)
{
    size_t map_bytes = sizeof(uint64_t) * SHMEMI_TEAM_WORDS;
    uint64_t *maps = malloc(map_bytes * (size_t)parent->size);
    uint8_t *members = malloc((size_t)parent->size);
    if (!maps || !members) {
        free(maps);
        free(members);
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    }
    pthread_mutex_lock(&parent->lock);
    uint64_t uid_base = parent->uid * 0x9E3779B97F4A7C15ull + parent->coll_seq * 31 + 7;
    int rc = shmemi_team_collective(inst, parent, inst->teams->used, map_bytes, maps);
    pthread_mutex_unlock(&parent->lock);
    int previous = -1;
    for (int c = 0; rc == ACLSHMEM_SUCCESS && c < count; c++) {
        memset(members, 0, (size_t)parent->size);
        for (int i = 0; i < spec[c].size; i++)
            members[spec[c].start + i * spec[c].stride] = 1;
        /* Ids chosen for earlier children of this split are taken on their members too. */
        int index = lowest_common_free(maps, parent->size, members, previous);
        if (index < 0) {
            rc = shmemi_fail(ACLSHMEM_INNER_ERROR,
                             "the team pool is full: all %d team ids are in use", ACLSHMEM_MAX_TEAMS);
            break;
        }
        for (int i = 0; i < parent->size; i++)
            if (members[i])
                maps[(size_t)i * SHMEMI_TEAM_WORDS + index / 64] |= 1ull << (index % 64);
        previous = index;
        if (!members[parent->my_idx])
            continue;
        int start = shmemi_team_world_pe(parent, spec[c].start);
        shmemi_team_t *t = team_new(inst, index, start, parent->stride * spec[c].stride, spec[c].size,
                                    uid_base + (uint64_t)c + 1);
        if (!t)
            rc = shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
        else
            out[c] = index;
    }
    free(maps);
    free(members);
    return rc;
}

int aclshmem_team_split_strided(aclshmem_team_t parent_team, int pe_start, int pe_stride, int pe_size,
                                aclshmem_team_t *new_team)
{
    if (!new_team)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_team_split_strided: new_team is NULL");
    *new_team = ACLSHMEM_TEAM_INVALID;
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_split_strided");
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    if (inst->id != 0)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED, "team split is only available on instance 0");
    shmemi_team_t *parent = require_team(inst, parent_team, "aclshmem_team_split_strided");
    if (!parent)
        return ACLSHMEM_INVALID_PARAM;
    if (pe_start < 0 || pe_start >= parent->size || pe_size <= 0 || pe_size > parent->size ||
        pe_stride < 1 || (int64_t)pe_start + (int64_t)(pe_size - 1) * pe_stride >= parent->size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "aclshmem_team_split_strided: start %d, stride %d, size %d do not fit in "
                           "the parent team of %d PEs", pe_start, pe_stride, pe_size, parent->size);
    split_spec_t spec = {pe_start, pe_stride, pe_size};
    return split_teams(inst, parent, &spec, 1, new_team);
}

int aclshmem_team_split_2d(aclshmem_team_t parent_team, int x_range, aclshmem_team_t *x_team,
                           aclshmem_team_t *y_team)
{
    if (!x_team || !y_team)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_team_split_2d: x_team or y_team is NULL");
    *x_team = *y_team = ACLSHMEM_TEAM_INVALID;
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_split_2d");
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    if (inst->id != 0)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED, "team split is only available on instance 0");
    shmemi_team_t *parent = require_team(inst, parent_team, "aclshmem_team_split_2d");
    if (!parent)
        return ACLSHMEM_INVALID_PARAM;
    if (x_range <= 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_team_split_2d: x_range %d must be > 0", x_range);
    if (x_range > parent->size)
        x_range = parent->size;
    /* Rows (x teams) hold x_range consecutive PEs; columns (y teams) hold every x_range-th. */
    int rows = (parent->size + x_range - 1) / x_range;
    int count = rows + x_range;
    split_spec_t *spec = malloc(sizeof(*spec) * (size_t)count);
    aclshmem_team_t *ids = malloc(sizeof(*ids) * (size_t)count);
    if (!spec || !ids) {
        free(spec);
        free(ids);
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    }
    for (int r = 0; r < rows; r++) {
        int start = r * x_range;
        int size = parent->size - start < x_range ? parent->size - start : x_range;
        spec[r] = (split_spec_t){start, 1, size};
    }
    for (int x = 0; x < x_range; x++)
        spec[rows + x] = (split_spec_t){x, x_range, (parent->size - x + x_range - 1) / x_range};
    for (int c = 0; c < count; c++)
        ids[c] = ACLSHMEM_TEAM_INVALID;
    int rc = split_teams(inst, parent, spec, count, ids);
    if (rc == ACLSHMEM_SUCCESS) {
        *x_team = ids[parent->my_idx / x_range];
        *y_team = ids[rows + parent->my_idx % x_range];
    }
    free(spec);
    free(ids);
    return rc;
}

int aclshmem_team_translate_pe(aclshmem_team_t src_team, int src_pe, aclshmem_team_t dest_team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_translate_pe");
    if (!inst)
        return -1;
    if (inst->id != 0) {
        shmemi_fail(ACLSHMEM_NOT_SUPPORTED, "team translate is only available on instance 0");
        return -1;
    }
    shmemi_team_t *src = require_team(inst, src_team, "aclshmem_team_translate_pe");
    shmemi_team_t *dst = src ? require_team(inst, dest_team, "aclshmem_team_translate_pe") : NULL;
    if (!dst)
        return -1;
    if (src_pe < 0 || src_pe >= src->size) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_team_translate_pe: PE %d is not in team %d of %d PEs",
                    src_pe, src_team, src->size);
        return -1;
    }
    int world = shmemi_team_world_pe(src, src_pe);
    int rel = world - dst->start;
    if (rel < 0 || rel % dst->stride != 0 || rel / dst->stride >= dst->size)
        return -1;
    return rel / dst->stride;
}

void aclshmem_team_destroy(aclshmem_team_t team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_destroy");
    if (!inst)
        return;
    if (team == ACLSHMEM_TEAM_WORLD) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_team_destroy: the world team cannot be destroyed");
        return;
    }
    shmemi_team_t *t = require_team(inst, team, "aclshmem_team_destroy");
    if (t)
        team_free(inst, t);
}

int aclshmem_my_pe(void)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_my_pe");
    return inst ? inst->my_pe : -1;
}

int aclshmem_n_pes(void)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_n_pes");
    return inst ? inst->n_pes : -1;
}

int aclshmem_team_my_pe(aclshmem_team_t team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_my_pe");
    shmemi_team_t *t = inst ? shmemi_team_get(inst, team) : NULL;
    return t ? t->my_idx : -1;
}

int aclshmem_team_n_pes(aclshmem_team_t team)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_n_pes");
    shmemi_team_t *t = inst ? shmemi_team_get(inst, team) : NULL;
    return t ? t->size : -1;
}

int aclshmem_team_get_config(aclshmem_team_t team, aclshmem_team_config_t *config)
{
    shmemi_instance_t *inst = shmemi_require("aclshmem_team_get_config");
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    if (inst->id != 0)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED, "team configs are only available on instance 0");
    if (!config)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "aclshmem_team_get_config: config is NULL");
    shmemi_team_t *t = require_team(inst, team, "aclshmem_team_get_config");
    if (!t)
        return ACLSHMEM_INVALID_PARAM;
    *config = t->config;
    return ACLSHMEM_SUCCESS;
}
