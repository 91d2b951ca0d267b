#include "team/team.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem/team.h"
#include "base/error.h"

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

/* Groups t's members by node (team.h): a member leads its node when no member before it
 * shares its node (which the node's first world PE names). */
static int group_by_node(shmemi_instance_t *inst, shmemi_team_t *t)
{
    const int *node = inst->heaps.node_first;
    int mine = node[inst->my_pe];
    uint8_t *led = calloc((size_t)inst->n_pes, 1); /* by node name: has a leader already */
    t->leaders = malloc((size_t)t->size * sizeof(int));
    if (!led || !t->leaders) {
        free(led);
        free(t->leaders);
        return -1;
    }
    t->local_leader = t->leader_rank = -1;
    for (int i = 0; i < t->size; i++) {
        int n = node[shmemi_team_world_pe(t, i)];
        if (!led[n]) {
            led[n] = 1;
            t->local_leader = n == mine ? i : t->local_leader;
            t->leader_rank = i == t->my_idx ? t->n_leaders : t->leader_rank;
            t->leaders[t->n_leaders++] = i;
        }
        t->local_size += n == mine;
    }
    free(led);
    return 0;
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
    if (group_by_node(inst, t) != 0) {
        free(t);
        return NULL;
    }
    t->on_one_node = t->n_leaders == 1;
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
    free(t->leaders);
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

typedef enum { SPLIT_STRIDED = 1, SPLIT_2D = 2 } split_kind_t;

/* What one PE asked for, as it sends it to every PE of the parent team.  A split is
 * collective: every PE of the parent must make the same call with the same arguments (a PE
 * that joins no child too), or the PEs would build different teams under one id.  So the
 * arguments travel with the id bitmaps and are compared before anything is created. */
typedef struct {
    int32_t kind;    /* split_kind_t */
    int32_t args[3]; /* strided: start, stride, size; 2d: x_range, 0, 0 (as passed) */
    int32_t status;  /* 0, or the error this PE found in its own arguments */
    int32_t reserved;
    uint64_t used[SHMEMI_TEAM_WORDS]; /* the team ids taken on this PE */
} split_request_t;

typedef struct {
    int start, stride, size; /* child, relative to the parent */
} split_spec_t;

/* The lowest id free on every PE whose bit is set in members, or -1. */
static int lowest_common_free(const split_request_t *all, int n, const uint8_t *members, int skip)
{
    for (int w = 0; w < SHMEMI_TEAM_WORDS; w++) {
        uint64_t used = 0;
        for (int i = 0; i < n; i++)
            if (members[i])
                used |= all[i].used[w];
        if (skip >= 0 && skip / 64 == w)
            used |= 1ull << (skip % 64);
        if (~used)
            return w * 64 + __builtin_ctzll(~used);
    }
    return -1;
}

static const char *split_text(const split_request_t *r, int name_the_call, char *buf, size_t len)
{
    const char *call = !name_the_call          ? ""
                       : r->kind == SPLIT_2D ? "aclshmem_team_split_2d "
                                             : "aclshmem_team_split_strided ";
    if (r->kind == SPLIT_2D)
        snprintf(buf, len, "%s(x_range %d)", call, r->args[0]);
    else
        snprintf(buf, len, "%s(start %d, stride %d, size %d)", call, r->args[0], r->args[1], r->args[2]);
    return buf;
}

/* The PEs' requests must all equal this PE's, and every PE must have found its own
 * arguments good; otherwise every PE fails, naming the first PE that differs. */
static int check_agreement(shmemi_team_t *parent, const split_request_t *all, const split_request_t *mine,
                           const char *api)
{
    int me = shmemi_team_world_pe(parent, parent->my_idx);
    for (int i = 0; i < parent->size; i++) {
        const split_request_t *r = &all[i];
        if (r->kind == mine->kind && memcmp(r->args, mine->args, sizeof(r->args)) == 0)
            continue;
        char theirs[96], own[96];
        int name_calls = r->kind != mine->kind;
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: the PEs of parent team %d disagree (a split is collective: every PE of "
                           "the parent must ask for the same): PE %d asked for %s, PE %d for %s; no team "
                           "was created", api, parent->index, shmemi_team_world_pe(parent, i),
                           split_text(r, name_calls, theirs, sizeof(theirs)), me,
                           split_text(mine, name_calls, own, sizeof(own)));
    }
    if (mine->status != 0)
        return mine->status; /* this PE's own error, already recorded */
    for (int i = 0; i < parent->size; i++)
        if (all[i].status != 0)
            return shmemi_fail(all[i].status, "%s failed on PE %d, so on every PE; no team was created", api,
                               shmemi_team_world_pe(parent, i));
    return ACLSHMEM_SUCCESS;
}

/* Gives each child an id free on all its members and creates the children this PE is in.
 * Every PE computes the same ids from the same gathered bitmaps.  On failure the teams made
 * here are freed again, so a failed split leaves no id taken. */
static int create_children(shmemi_instance_t *inst, shmemi_team_t *parent, split_request_t *all,
                           const split_spec_t *spec, int count, uint64_t uid_base, aclshmem_team_t *out)
{
    uint8_t *members = malloc((size_t)parent->size);
    if (!members)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    int rc = ACLSHMEM_SUCCESS, previous = -1;
    for (int c = 0; rc == ACLSHMEM_SUCCESS && c < count; c++) {
        memset(members, 0, (size_t)parent->size);
        for (int i = 0; i < spec[c].size; i++)
            members[spec[c].start + i * spec[c].stride] = 1;
        /* Ids chosen for earlier children of this split are taken on their members too. */
        int index = lowest_common_free(all, parent->size, members, previous);
        if (index < 0) {
            rc = shmemi_fail(ACLSHMEM_INNER_ERROR,
                             "the team pool is full: all %d team ids are in use", ACLSHMEM_MAX_TEAMS);
            break;
        }
        for (int i = 0; i < parent->size; i++)
            if (members[i])
                all[i].used[index / 64] |= 1ull << (index % 64);
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
    for (int c = 0; rc != ACLSHMEM_SUCCESS && c < count; c++)
        if (out[c] != ACLSHMEM_TEAM_INVALID) {
            team_free(inst, shmemi_team_get(inst, out[c]));
            out[c] = ACLSHMEM_TEAM_INVALID;
        }
    free(members);
    return rc;
}

/* Collective over parent: every member sends its request (even one whose own arguments are
 * bad, so that the others learn of it instead of waiting), all check that they agree, then
 * each creates the children it is in (out[c], or TEAM_INVALID where it is not a member). */
static int split_teams(shmemi_instance_t *inst, shmemi_team_t *parent, split_request_t *mine,
                       const split_spec_t *spec, int count, aclshmem_team_t *out, const char *api)
{
    for (int c = 0; c < count; c++)
        out[c] = ACLSHMEM_TEAM_INVALID;
    split_request_t *all = calloc((size_t)parent->size, sizeof(*all));
    if (!all) /* cannot take part: the others time out, as on any PE that stops */
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
    memcpy(mine->used, inst->teams->used, sizeof(mine->used));
    pthread_mutex_lock(&parent->lock);
    uint64_t uid_base = parent->uid * 0x9E3779B97F4A7C15ull + parent->coll_seq * 31 + 7;
    int rc = shmemi_team_collective(inst, parent, mine, sizeof(*mine), all);
    pthread_mutex_unlock(&parent->lock);
    if (rc == ACLSHMEM_SUCCESS)
        rc = check_agreement(parent, all, mine, api);
    if (rc == ACLSHMEM_SUCCESS)
        rc = create_children(inst, parent, all, spec, count, uid_base, out);
    free(all);
    return rc;
}

/* ---- a team made by its members alone --------------------------------------------------- */

typedef enum { CREATE_MEMBERS = 3 } create_kind_t; /* beside split_kind_t, in request.kind */

/* The members' requests must all name the same PEs; every member must be able to take part. */
static int check_members_agree(const split_request_t *all, const split_request_t *mine, int size, int start,
                               int stride, const char *api)
{
    for (int i = 0; i < size; i++)
        if (all[i].kind != mine->kind || memcmp(all[i].args, mine->args, sizeof(mine->args)) != 0)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "%s: member %d of the PEs (start %d, stride %d, size %d) asked for the PEs "
                               "(start %d, stride %d, size %d); no team was created", api,
                               start + i * stride, start, stride, size, all[i].args[0], all[i].args[1],
                               all[i].args[2]);
    for (int i = 0; i < size; i++)
        if (all[i].status != 0)
            return shmemi_fail(all[i].status, "%s failed on PE %d, so on every member; no team was created", api,
                               start + i * stride);
    return ACLSHMEM_SUCCESS;
}

int shmemi_team_create_strided(const char *api, shmemi_instance_t *inst, int start, int stride, int size,
                               uint64_t key, aclshmem_team_t *out)
{
    *out = ACLSHMEM_TEAM_INVALID;
    int me = inst->my_pe - start;
    if (size < 1 || stride < 1 || start < 0 || (int64_t)start + (int64_t)(size - 1) * stride >= inst->n_pes ||
        me < 0 || me % stride != 0 || me / stride >= size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d is not one of the PEs (start %d, stride %d, size %d) "
                           "of the %d PEs", api, inst->my_pe, start, stride, size, inst->n_pes);
    split_request_t mine = {.kind = CREATE_MEMBERS, .args = {start, stride, size}};
    memcpy(mine.used, inst->teams->used, sizeof(mine.used));
    split_request_t *all = calloc((size_t)size, sizeof(*all));
    uint8_t *members = malloc((size_t)size);
    if (!all || !members) { /* cannot take part: the others time out, as on any PE that stops */
        free(all);
        free(members);
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", api);
    }
    memset(members, 1, (size_t)size);
    int rc = shmemi_bootstrap_collective(inst->boot, key, size, me / stride, &mine, sizeof(mine), all,
                                         inst->control_timeout_ms);
    if (rc == ACLSHMEM_SUCCESS)
        rc = check_members_agree(all, &mine, size, start, stride, api);
    int index = rc == ACLSHMEM_SUCCESS ? lowest_common_free(all, size, members, -1) : -1;
    if (rc == ACLSHMEM_SUCCESS && index < 0)
        rc = shmemi_fail(ACLSHMEM_INNER_ERROR, "%s: the team pool is full: all %d team ids are in use", api,
                         ACLSHMEM_MAX_TEAMS);
    if (rc == ACLSHMEM_SUCCESS && !team_new(inst, index, start, stride, size, key))
        rc = shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", api);
    if (rc == ACLSHMEM_SUCCESS)
        *out = index;
    free(all);
    free(members);
    return rc;
}

/* The checks a split can make before it starts: instance 0 and a live parent.  A PE that
 * fails them cannot take part in the split's collective at all. */
static int split_parent(aclshmem_team_t parent_team, const char *api, shmemi_instance_t **inst,
                        shmemi_team_t **parent)
{
    *parent = NULL;
    *inst = shmemi_require(api);
    if (!*inst)
        return ACLSHMEM_NOT_INITED;
    if ((*inst)->id != 0)
        return shmemi_fail(ACLSHMEM_NOT_SUPPORTED, "team split is only available on instance 0");
    *parent = require_team(*inst, parent_team, api);
    return *parent ? ACLSHMEM_SUCCESS : ACLSHMEM_INVALID_PARAM;
}

static int check_strided(const shmemi_team_t *parent, int start, int stride, int size, const aclshmem_team_t *out,
                         const char *api)
{
    if (!out)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: new_team is NULL", api);
    if (start < 0 || start >= parent->size || size <= 0 || size > parent->size || stride < 1 ||
        (int64_t)start + (int64_t)(size - 1) * stride >= parent->size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: start %d, stride %d, size %d do not fit in the parent team of %d PEs", api,
                           start, stride, size, parent->size);
    return ACLSHMEM_SUCCESS;
}

int shmemi_team_split_strided(const char *api, aclshmem_team_t parent_team, int pe_start, int pe_stride,
                              int pe_size, aclshmem_team_t *new_team)
{
    if (new_team)
        *new_team = ACLSHMEM_TEAM_INVALID;
    shmemi_instance_t *inst;
    shmemi_team_t *parent;
    SHMEMI_TRY(split_parent(parent_team, api, &inst, &parent));
    split_request_t req = {.kind = SPLIT_STRIDED, .args = {pe_start, pe_stride, pe_size}};
    req.status = check_strided(parent, pe_start, pe_stride, pe_size, new_team, api);
    split_spec_t spec = {pe_start, pe_stride, pe_size};
    aclshmem_team_t id = ACLSHMEM_TEAM_INVALID;
    int rc = split_teams(inst, parent, &req, &spec, req.status ? 0 : 1, &id, api);
    if (rc == ACLSHMEM_SUCCESS)
        *new_team = id;
    return rc;
}

/* The children of a 2-D split of a parent of n PEs: first the rows (x teams: x_range
 * consecutive PEs), then the columns (y teams: every x_range-th PE). */
static split_spec_t *grid_specs(int n, int x_range, int *count)
{
    int rows = (n + x_range - 1) / x_range;
    *count = rows + x_range;
    split_spec_t *spec = malloc(sizeof(*spec) * (size_t)*count);
    if (!spec)
        return NULL;
    for (int r = 0; r < rows; r++) {
        int start = r * x_range;
        spec[r] = (split_spec_t){start, 1, n - start < x_range ? n - start : x_range};
    }
    for (int x = 0; x < x_range; x++)
        spec[rows + x] = (split_spec_t){x, x_range, (n - x + x_range - 1) / x_range};
    return spec;
}

static int check_2d(int x_range, const aclshmem_team_t *x_team, const aclshmem_team_t *y_team, const char *api)
{
    if (!x_team || !y_team)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: x_team or y_team is NULL", api);
    if (x_range <= 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: x_range %d must be > 0", api, x_range);
    return ACLSHMEM_SUCCESS;
}

int shmemi_team_split_2d(const char *api, aclshmem_team_t parent_team, int x_range, aclshmem_team_t *x_team,
                         aclshmem_team_t *y_team)
{
    if (x_team)
        *x_team = ACLSHMEM_TEAM_INVALID;
    if (y_team)
        *y_team = ACLSHMEM_TEAM_INVALID;
    shmemi_instance_t *inst;
    shmemi_team_t *parent;
    SHMEMI_TRY(split_parent(parent_team, api, &inst, &parent));
    split_request_t req = {.kind = SPLIT_2D, .args = {x_range, 0, 0}};
    req.status = check_2d(x_range, x_team, y_team, api);
    /* A range above the parent's size makes one row of all its PEs. */
    int columns = x_range > parent->size ? parent->size : x_range, count = 0;
    split_spec_t *spec = req.status ? NULL : grid_specs(parent->size, columns, &count);
    aclshmem_team_t *ids = spec ? malloc(sizeof(*ids) * (size_t)count) : NULL;
    if (!req.status && !ids) {
        req.status = shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory");
        count = 0;
    }
    int rc = split_teams(inst, parent, &req, spec, count, ids, api);
    if (rc == ACLSHMEM_SUCCESS) {
        int rows = count - columns;
        *x_team = ids[parent->my_idx / columns];
        *y_team = ids[rows + parent->my_idx % columns];
    }
    free(spec);
    free(ids);
    return rc;
}

int shmemi_team_translate(shmemi_instance_t *inst, aclshmem_team_t src_team, int src_pe, aclshmem_team_t dest_team)
{
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
    return shmemi_team_index_of(dst, shmemi_team_world_pe(src, src_pe));
}

void shmemi_team_destroy(shmemi_instance_t *inst, aclshmem_team_t team, const char *api)
{
    if (team == ACLSHMEM_TEAM_WORLD) {
        shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the world team cannot be destroyed", api);
        return;
    }
    shmemi_team_t *t = require_team(inst, team, api);
    if (t)
        team_free(inst, t);
}

int shmemi_team_config(shmemi_instance_t *inst, aclshmem_team_t team, aclshmem_team_config_t *config)
{
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
