/* The collectives engine's entry: the checks a call passes on this PE, its record, the
 * exchange that compares it with the team's, then the algorithm. */
#include "coll/coll.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "coll/run.h"
#include "mem/heap.h"

int shmemi_coll_init(shmemi_instance_t *inst)
{
    inst->coll = calloc(1, sizeof(*inst->coll));
    if (!inst->coll)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "out of memory for the collectives' state");
    for (int i = 0; i < ACLSHMEM_MAX_TEAMS; i++)
        pthread_mutex_init(&inst->coll->team[i].lock, NULL);
    return ACLSHMEM_SUCCESS;
}

void shmemi_coll_fini(shmemi_instance_t *inst)
{
    if (!inst->coll)
        return;
    for (int i = 0; i < ACLSHMEM_MAX_TEAMS; i++)
        pthread_mutex_destroy(&inst->coll->team[i].lock);
    free(inst->coll);
    inst->coll = NULL;
}

/* ---- the checks of one PE's arguments ------------------------------------ */

/* The bytes of dest and source a call touches on this PE (0: none). */
typedef struct {
    size_t dst_len, src_len;
} extents_t;

static int product(size_t a, size_t b, size_t *out, const char *api)
{
    if (a && b > SIZE_MAX / a)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %zu * %zu bytes overflow size_t", api, a, b);
    *out = a * b;
    return ACLSHMEM_SUCCESS;
}

/* The span of count elements at a stride (elements), from the first to the last. */
static int strided_span(size_t count, ptrdiff_t stride, size_t esize, size_t *span, const char *api)
{
    if (count == 0) {
        *span = 0;
        return ACLSHMEM_SUCCESS;
    }
    size_t steps = 0;
    SHMEMI_TRY(product(count - 1, (size_t)stride, &steps, api));
    if (steps == SIZE_MAX)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the strided span overflows size_t", api);
    return product(steps + 1, esize, span, api);
}

static int extents(const char *api, const shmemi_team_t *t, const shmemi_coll_t *c, extents_t *e)
{
    size_t esize = shmemi_dtype_size(c->dtype), n = (size_t)t->size, bytes = 0, all_bytes = 0, count = 0;
    SHMEMI_TRY(product(c->nelems, esize, &bytes, api));
    SHMEMI_TRY(product(bytes, n, &all_bytes, api));
    switch (c->kind) {
    case SHMEMI_COLL_BROADCAST:
    case SHMEMI_COLL_BROADCAST_LOCAL:
        *e = (extents_t){bytes, t->my_idx == c->root ? bytes : 0};
        break;
    case SHMEMI_COLL_FCOLLECT:
        *e = (extents_t){all_bytes, bytes};
        break;
    case SHMEMI_COLL_ALLTOALL:
        *e = (extents_t){all_bytes, all_bytes};
        break;
    case SHMEMI_COLL_ALLTOALLS:
        if (c->dst_stride < 1 || c->src_stride < 1)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: the strides (dst %td, sst %td) must be >= 1", api,
                               c->dst_stride, c->src_stride);
        SHMEMI_TRY(product(c->nelems, n, &count, api));
        SHMEMI_TRY(strided_span(count, c->dst_stride, esize, &e->dst_len, api));
        SHMEMI_TRY(strided_span(count, c->src_stride, esize, &e->src_len, api));
        break;
    case SHMEMI_COLL_REDUCESCATTER:
        *e = (extents_t){bytes, all_bytes};
        break;
    case SHMEMI_COLL_COLLECT:
        /* This PE's part of dest (the rest is checked once the counts are known), at least a
         * byte of it: other PEs of this node may read it even when this PE gives nothing. */
        *e = (extents_t){bytes ? bytes : c->dst != NULL, bytes};
        break;
    default: /* reduce */
        *e = (extents_t){bytes, bytes};
    }
    return ACLSHMEM_SUCCESS;
}

static int overlap(const void *a, size_t a_len, const void *b, size_t b_len)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a_len && b_len && x < y + b_len && y < x + a_len;
}

/* Where dest and source may overlap: exactly (broadcast on the root, reduce), or source as
 * this PE's block of dest (fcollect in place); nowhere else. */
static int check_overlap(const char *api, const shmemi_team_t *t, const shmemi_coll_t *c, const extents_t *e)
{
    /* collect: where this PE's block goes in dest is known only after the exchange, which
     * checks it (move.c) */
    if (c->kind == SHMEMI_COLL_COLLECT || !overlap(c->dst, e->dst_len, c->src, e->src_len))
        return ACLSHMEM_SUCCESS;
    int same_array_ok = shmemi_coll_is_broadcast(c->kind) || c->kind == SHMEMI_COLL_REDUCE ||
                        c->kind == SHMEMI_COLL_REDUCE_LOCAL;
    if (same_array_ok && c->dst == c->src)
        return ACLSHMEM_SUCCESS;
    if (c->kind == SHMEMI_COLL_FCOLLECT && (const uint8_t *)c->src == (const uint8_t *)c->dst + t->my_idx * e->src_len)
        return ACLSHMEM_SUCCESS;
    return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                       "%s: dest [%p, +%zu) and source [%p, +%zu) overlap%s", api, c->dst, e->dst_len, c->src,
                       e->src_len,
                       c->kind == SHMEMI_COLL_FCOLLECT ? " (in place, source must be dest + my_pe * nelems)"
                       : same_array_ok                 ? " (they may be the same array, but not overlap otherwise)"
                                                       : "");
}

/* A symmetric buffer: its segment and offset, or seg -1 when len is 0. */
static int symmetric(shmemi_instance_t *inst, const char *api, const char *what, const void *addr, size_t len,
                     int32_t *seg, uint64_t *offset)
{
    *seg = -1;
    *offset = 0;
    if (len == 0)
        return ACLSHMEM_SUCCESS;
    if (!addr)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %s is NULL", api, what);
    size_t off = 0;
    int s = shmemi_heap_locate(&inst->heaps, addr, len, &off);
    if (s < 0)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                           "%s: %s [%p, +%zu bytes) is not symmetric (not inside a symmetric heap or the "
                           "program's shared data)", api, what, addr, len);
    *seg = s;
    *offset = off;
    return ACLSHMEM_SUCCESS;
}

static int check_exchange(const char *api, const shmemi_coll_t *c)
{
    if (c->nelems > ACLSHMEMX_TEAM_EXCHANGE_MAX)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: size %zu is above ACLSHMEMX_TEAM_EXCHANGE_MAX (%d)", api,
                           c->nelems, ACLSHMEMX_TEAM_EXCHANGE_MAX);
    if (c->nelems && (!c->src || !c->dst))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: mine or all is NULL", api);
    return ACLSHMEM_SUCCESS;
}

static int is_reduction(shmemi_coll_kind_t kind)
{
    return kind == SHMEMI_COLL_REDUCE || kind == SHMEMI_COLL_REDUCESCATTER || kind == SHMEMI_COLL_REDUCE_LOCAL;
}

/* reduce_local and broadcast_local: dest and source are local memory (present where the call
 * touches bytes of them: e), work is symmetric (dest's size) and apart from both; the record
 * names work as both sides (the other PEs read and write only work). */
static int local_buffers(const char *api, shmemi_instance_t *inst, const shmemi_coll_t *c, const extents_t *e,
                         shmemi_coll_record_t *rec)
{
    if ((e->dst_len && !c->dst) || (e->src_len && !c->src))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: %s is NULL", api, e->dst_len && !c->dst ? "dest" : "source");
    size_t bytes = e->dst_len;
    SHMEMI_TRY(symmetric(inst, api, "work", c->work, bytes, &rec->src_seg, &rec->src_off));
    rec->dst_seg = rec->src_seg;
    rec->dst_off = rec->src_off;
    const char *hit = overlap(c->work, bytes, c->dst, bytes)        ? "dest"
                      : overlap(c->work, bytes, c->src, e->src_len) ? "source"
                                                                    : NULL;
    if (hit)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: work [%p, +%zu) overlaps %s", api, c->work, bytes, hit);
    return ACLSHMEM_SUCCESS;
}

static int check_kind(const char *api, const shmemi_team_t *t, const shmemi_coll_t *c)
{
    if (c->kind < SHMEMI_COLL_EXCHANGE || c->kind > SHMEMI_COLL_BROADCAST_LOCAL)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: unknown collective %d", api, (int)c->kind);
    if ((unsigned)c->dtype >= SHMEMI_DT_COUNT)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: unknown element type %d", api, (int)c->dtype);
    int reduction = is_reduction(c->kind);
    if (reduction && !shmemi_reducer(c->dtype, c->op))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: no %s reduction of %s", api, shmemi_redop_name(c->op),
                           shmemi_dtype_name(c->dtype));
    if (shmemi_coll_is_broadcast(c->kind) && (c->root < 0 || c->root >= t->size))
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: root %d is not a PE of team %d (0..%d)", api, c->root,
                           t->index, t->size - 1);
    return ACLSHMEM_SUCCESS;
}

/* Checks c and fills in this PE's record (all but the sequence fields). */
static int prepare_record(const char *api, shmemi_instance_t *inst, const shmemi_team_t *t, const shmemi_coll_t *c,
                          shmemi_coll_record_t *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->kind = (int32_t)c->kind;
    rec->dtype = (int32_t)c->dtype;
    rec->nelems = c->nelems;
    rec->dst_seg = rec->src_seg = -1;
    if (is_reduction(c->kind))
        rec->op = (int32_t)c->op;
    if (shmemi_coll_is_broadcast(c->kind))
        rec->root = c->root;
    if (c->kind == SHMEMI_COLL_ALLTOALLS) {
        rec->dst_stride = c->dst_stride;
        rec->src_stride = c->src_stride;
    }
    rec->node = -1;
    for (int pe = 0; pe < inst->n_pes && rec->node < 0; pe++)
        if (pe == inst->my_pe || inst->heaps.same_node[pe])
            rec->node = pe;
    if (c->refused != ACLSHMEM_SUCCESS)
        return c->refused;
    SHMEMI_TRY(check_kind(api, t, c));
    if (c->kind == SHMEMI_COLL_EXCHANGE) {
        SHMEMI_TRY(check_exchange(api, c));
        if (c->nelems)
            memcpy(rec->payload, c->src, c->nelems);
        return ACLSHMEM_SUCCESS;
    }
    extents_t e = {0, 0};
    SHMEMI_TRY(extents(api, t, c, &e));
    if (c->kind == SHMEMI_COLL_REDUCE_LOCAL || c->kind == SHMEMI_COLL_BROADCAST_LOCAL) {
        SHMEMI_TRY(local_buffers(api, inst, c, &e, rec));
    } else {
        SHMEMI_TRY(symmetric(inst, api, "dest", c->dst, e.dst_len, &rec->dst_seg, &rec->dst_off));
        SHMEMI_TRY(symmetric(inst, api, "source", c->src, e.src_len, &rec->src_seg, &rec->src_off));
    }
    return check_overlap(api, t, c, &e);
}

int shmemi_coll_check(const char *api, shmemi_instance_t *inst, const shmemi_team_t *t, const shmemi_coll_t *c)
{
    shmemi_coll_record_t rec;
    return prepare_record(api, inst, t, c, &rec);
}

/* ---- running a call -------------------------------------------------------- */

static int run_algorithm(const shmemi_coll_run_t *r)
{
    switch (r->c->kind) {
    case SHMEMI_COLL_BROADCAST:
    case SHMEMI_COLL_BROADCAST_LOCAL:
        return shmemi_coll_broadcast(r);
    case SHMEMI_COLL_COLLECT:
    case SHMEMI_COLL_FCOLLECT:
        return shmemi_coll_gather(r);
    case SHMEMI_COLL_ALLTOALL:
        return shmemi_coll_alltoall(r);
    case SHMEMI_COLL_ALLTOALLS:
        return shmemi_coll_alltoalls(r);
    case SHMEMI_COLL_REDUCE:
    case SHMEMI_COLL_REDUCE_LOCAL:
        return shmemi_coll_reduce(r);
    case SHMEMI_COLL_REDUCESCATTER:
        return shmemi_coll_reducescatter(r);
    default: /* the exchange: every member's bytes, in team order */
        for (int i = 0; r->c->nelems && i < r->t->size; i++)
            memcpy((uint8_t *)r->c->dst + (size_t)i * r->c->nelems, r->all[i].payload, r->c->nelems);
        return ACLSHMEM_SUCCESS;
    }
}

/* The whole collective on this PE, once it holds the team's collective lock; all and
 * topo_ints have room for the team's records and topology. */
static int run_locked(const char *api, shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_coll_t *c,
                      shmemi_coll_record_t *all, int *topo_ints)
{
    shmemi_coll_record_t mine;
    /* A PE whose own arguments are bad still takes part, so that the others learn of it. */
    mine.status = prepare_record(api, inst, t, c, &mine);
    if (mine.status == ACLSHMEM_SUCCESS && shmemi_coll_small(c, t))
        shmemi_coll_small_stage(inst, c, t, &mine);
    if (mine.status == ACLSHMEM_SUCCESS && c->kind == SHMEMI_COLL_REDUCE_LOCAL)
        shmemi_coll_reduce_local_stage(t, c);
    if (mine.status == ACLSHMEM_SUCCESS && c->kind == SHMEMI_COLL_BROADCAST_LOCAL)
        shmemi_coll_broadcast_local_stage(t, c);
    SHMEMI_TRY(shmemi_coll_exchange_records(api, inst, t, &mine, all));
    shmemi_coll_run_t r = {.api = api, .inst = inst, .t = t, .c = c, .all = all, .me = t->my_idx,
                           .esize = shmemi_dtype_size(c->dtype)};
    if (c->kind != SHMEMI_COLL_EXCHANGE && shmemi_coll_small_all(&r))
        return shmemi_coll_small_run(&r); /* needs no topology: it reads only the records */
    shmemi_coll_topo_t topo;
    shmemi_coll_topology(all, t->size, topo_ints, &topo);
    r.topo = &topo;
    return run_algorithm(&r);
}

/* Teams up to this size keep their records on the stack (a call of a small collective in a
 * loop pays no malloc and free); larger ones allocate them. */
#define STACK_RECORDS 8

int shmemi_coll(const char *api, aclshmem_team_t team, const shmemi_coll_t *c)
{
    shmemi_instance_t *inst = shmemi_require(api);
    if (!inst)
        return ACLSHMEM_NOT_INITED;
    shmemi_team_t *t = shmemi_team_get(inst, team);
    if (!t)
        return shmemi_fail(ACLSHMEM_INVALID_PARAM, "%s: team %d does not exist (never created or destroyed)", api,
                           team);
    /* The records, then the topology's ints: made now, so that after the exchange no PE
     * can fail to hold them (and take another algorithm than the others). */
    struct {
        shmemi_coll_record_t records[STACK_RECORDS];
        int topo_ints[SHMEMI_COLL_TOPO_INTS(STACK_RECORDS)];
    } on_stack;
    size_t records = (size_t)t->size * sizeof(shmemi_coll_record_t);
    shmemi_coll_record_t *all = t->size <= STACK_RECORDS ? on_stack.records
                                : malloc(records + SHMEMI_COLL_TOPO_INTS(t->size) * sizeof(int));
    if (!all) /* cannot take part: the others fail when this PE's death or timeout is seen */
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory for %d records", api, t->size);
    int *topo_ints = all == on_stack.records ? on_stack.topo_ints : (int *)(void *)((uint8_t *)all + records);
    shmemi_coll_team_t *state = &inst->coll->team[t->index];
    pthread_mutex_lock(&state->lock);
    int rc = run_locked(api, inst, t, c, all, topo_ints);
    pthread_mutex_unlock(&state->lock);
    if (all != on_stack.records)
        free(all);
    return rc;
}
