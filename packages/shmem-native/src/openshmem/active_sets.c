/* Active sets (PE_start, logPE_stride, PE_size) of the deprecated barrier, sync and
 * collectives: their checks, and the team behind each set that the collectives engine runs
 * the deprecated collectives over.
 *
 * The engine's collectives run over teams.  The PEs of an active set are a strided set of
 * world PEs, so they can form a team, but only they make the call (the other PEs know nothing
 * of it): the team cannot be split from the world, whose every PE would have to take part.
 * Its members make it alone instead, through the control plane (shmemi_team_create_strided),
 * on the set's first call.  The creation is named by a hash of the set, which every member
 * computes alike; a count of earlier calls could not serve, as each PE belongs to other sets
 * too.  Later calls find the team in the cache here, where it stays until finalize: a set
 * costs one team id on each of its members, and no PE could drop it alone (its peers would
 * keep theirs, and a new creation would find no partner).  The set of every PE is
 * SHMEM_TEAM_WORLD's team itself. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "mem/heap.h"
#include "openshmem/osh.h"

int shmemi_osh_active_set_member(shmemi_instance_t *inst, const shmemi_osh_active_set_t *set, const char *api)
{
    if (set->log_stride < 0 || set->log_stride > 30 || set->size < 1 || set->start < 0 ||
        set->start + ((int64_t)(set->size - 1) << set->log_stride) >= inst->n_pes)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: the active set (PE_start %d, logPE_stride %d, PE_size %d) does not fit in the "
                           "%d PEs", api, set->start, set->log_stride, set->size, inst->n_pes);
    int rel = inst->my_pe - set->start;
    if (rel < 0 || rel % (1 << set->log_stride) != 0 || (rel >> set->log_stride) >= set->size)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: PE %d is not in the active set it calls for", api,
                           inst->my_pe);
    return ACLSHMEM_SUCCESS;
}

int shmemi_osh_work_array(shmemi_instance_t *inst, const void *array, size_t bytes, size_t align, const char *what,
                          const char *api)
{
    if (!array)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %s is NULL", api, what);
    if ((uintptr_t)array % align)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %s %p is not aligned to %zu bytes", api, what, array, align);
    size_t offset;
    if (shmemi_heap_locate(&inst->heaps, array, bytes, &offset) < 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: %s [%p, +%zu bytes) is not symmetric (not inside a symmetric heap or the "
                           "program's shared data)", api, what, array, bytes);
    return ACLSHMEM_SUCCESS;
}

/* ---- the teams of the sets ------------------------------------------------------------------ */

/* A set as a team sees it: world PEs start, start + stride, ... (size of them). */
typedef struct {
    int start, stride, size;
    aclshmem_team_t id; /* its team, while that team's uid is uid */
    uint64_t uid;
} set_team_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* the cache, and one creation at a time */
static set_team_t *cache;
static size_t cached, capacity;

/* The creation's name: the same on every member, another for every other set (splitmix64 of
 * the set, marked so as not to look like the control plane's other collectives). */
static uint64_t set_key(const set_team_t *s)
{
    uint64_t x = ((uint64_t)(uint32_t)s->start << 32 | (uint32_t)s->size) ^ ((uint64_t)s->stride * 0x9E3779B97F4A7C15ull);
    x += 0xAC71E5E7ull << 32;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (x ^ (x >> 31)) | 1; /* never 0 */
}

/* The cache's entry for s (a new, empty one if it has none), or NULL when out of memory. */
static set_team_t *entry_for(const set_team_t *s)
{
    for (size_t i = 0; i < cached; i++)
        if (cache[i].start == s->start && cache[i].stride == s->stride && cache[i].size == s->size)
            return &cache[i];
    if (cached == capacity) {
        size_t more = capacity ? capacity * 2 : 8;
        set_team_t *grown = realloc(cache, more * sizeof(*grown));
        if (!grown)
            return NULL;
        cache = grown;
        capacity = more;
    }
    cache[cached] = *s;
    cache[cached].id = ACLSHMEM_TEAM_INVALID;
    return &cache[cached++];
}

/* e's team, made now if it has none yet (or lost it: a finalize in between). */
static shmemi_team_t *team_of(shmemi_instance_t *inst, set_team_t *e, const char *api)
{
    shmemi_team_t *t = e->id == ACLSHMEM_TEAM_INVALID ? NULL : shmemi_team_get(inst, e->id);
    if (t && t->uid == e->uid)
        return t;
    e->uid = set_key(e);
    if (shmemi_team_create_strided(api, inst, e->start, e->stride, e->size, e->uid, &e->id) != ACLSHMEM_SUCCESS)
        return NULL;
    return shmemi_team_get(inst, e->id);
}

shmemi_team_t *shmemi_osh_active_set_team(shmemi_instance_t *inst, const shmemi_osh_active_set_t *set,
                                          const char *api)
{
    /* One PE has no stride to speak of: (3, 0, 1) and (3, 2, 1) are one set. */
    set_team_t s = {set->start, set->size == 1 ? 1 : 1 << set->log_stride, set->size, ACLSHMEM_TEAM_INVALID, 0};
    if (s.start == 0 && s.stride == 1 && s.size == inst->n_pes)
        return shmemi_team_get(inst, ACLSHMEM_TEAM_WORLD);
    pthread_mutex_lock(&lock);
    set_team_t *e = entry_for(&s);
    shmemi_team_t *t = e ? team_of(inst, e, api) : NULL;
    pthread_mutex_unlock(&lock);
    if (!e)
        shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory for the active set's team", api);
    return t;
}

void shmemi_osh_active_sets_fini(void)
{
    pthread_mutex_lock(&lock);
    free(cache);
    cache = NULL;
    cached = capacity = 0;
    pthread_mutex_unlock(&lock);
}
