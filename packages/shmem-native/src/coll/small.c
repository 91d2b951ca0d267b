/* Small collectives: the data travels inside the records.
 *
 * When a member's whole source fits in its record's payload (ACLSHMEMX_TEAM_EXCHANGE_MAX
 * bytes), each PE copies its source there before the exchange, and after the exchange's
 * barrier it has every member's data already: it computes its own dest from the records and
 * is done.  No PE reads another's source or writes another's dest afterwards, so the barrier
 * that ends a larger collective (nobody may leave while others still read its source) is
 * not needed: one barrier in all instead of two, and no get per member across nodes.
 *
 * The records are safe to reuse: a PE writes the record of collective k + 2 in the slot of
 * collective k only after the barrier of k + 1, which every member reaches after reading the
 * records of k (exchange.c keeps two slots per team).
 *
 * Each PE stages its source when it fits; the call goes this way when every member's did,
 * which every member reads from the same records (collect's counts differ per PE, the
 * others' are the same on every member of a matching call); a mismatched call fails in
 * the exchange before anything is read. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "coll/run.h"

/* Bytes of a full source of a call of kind with nelems elements of esize bytes, on a team
 * of n members. */
static size_t source_bytes(shmemi_coll_kind_t kind, uint64_t nelems, size_t esize, int n)
{
    int blocks = kind == SHMEMI_COLL_REDUCESCATTER || kind == SHMEMI_COLL_ALLTOALL ? n : 1;
    return (size_t)nelems * esize * (size_t)blocks;
}

/* Whether such a source fits a record (collect: a count of 0 fits too, it stages nothing). */
static int fits(shmemi_coll_kind_t kind, shmemi_dtype_t dtype, uint64_t nelems, int n)
{
    switch (kind) {
    case SHMEMI_COLL_BROADCAST:
    case SHMEMI_COLL_BROADCAST_LOCAL:
    case SHMEMI_COLL_COLLECT:
    case SHMEMI_COLL_FCOLLECT:
    case SHMEMI_COLL_ALLTOALL:
    case SHMEMI_COLL_REDUCE:
    case SHMEMI_COLL_REDUCE_LOCAL:
    case SHMEMI_COLL_REDUCESCATTER:
        break;
    default: /* alltoalls (strided): the general way */
        return 0;
    }
    size_t esize = shmemi_dtype_size(dtype);
    if ((nelems == 0 && kind != SHMEMI_COLL_COLLECT) || nelems > ACLSHMEMX_TEAM_EXCHANGE_MAX / esize)
        return 0;
    return source_bytes(kind, nelems, esize, n) <= ACLSHMEMX_TEAM_EXCHANGE_MAX;
}

int shmemi_coll_small(const shmemi_coll_t *c, int team_size)
{
    return fits(c->kind, c->dtype, c->nelems, team_size);
}

int shmemi_coll_small_all(const shmemi_coll_run_t *r)
{
    for (int i = 0; i < r->t->size; i++)
        if (!fits(r->c->kind, r->c->dtype, r->all[i].nelems, r->t->size))
            return 0;
    return 1;
}

void shmemi_coll_small_stage(const shmemi_coll_t *c, const shmemi_team_t *t, shmemi_coll_record_t *rec)
{
    int has_source = !shmemi_coll_is_broadcast(c->kind) || c->root == t->my_idx;
    size_t bytes = source_bytes(c->kind, c->nelems, shmemi_dtype_size(c->dtype), t->size);
    if (has_source && bytes)
        memcpy(rec->payload, c->src, bytes);
}

/* Member i's payload from byte off, len bytes, copied where its elements are aligned. */
typedef union {
    long double align;
    uint8_t bytes[ACLSHMEMX_TEAM_EXCHANGE_MAX];
} payload_t;

static const void *payload(const shmemi_coll_run_t *r, int i, size_t off, size_t len, payload_t *copy)
{
    memcpy(copy->bytes, r->all[i].payload + off, len);
    return copy->bytes;
}

/* Elements [off, off + len) of every member's payload, reduced in team order into dest. */
static int reduce_payloads(const shmemi_coll_run_t *r, size_t off, size_t len)
{
    const shmemi_reducer_t *red = shmemi_reducer(r->c->dtype, r->c->op);
    size_t count = len / r->esize;
    union {
        long double align;
        uint8_t bytes[4 * ACLSHMEMX_TEAM_EXCHANGE_MAX]; /* accumulators may be wider than the type */
    } acc;
    if (!red || count * red->acc_size > sizeof(acc.bytes))
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "%s: no reducer for a small reduction", r->api);
    payload_t copy;
    for (int i = 0; i < r->t->size; i++) {
        const void *in = payload(r, i, off, len, &copy);
        if (i == 0)
            red->load(acc.bytes, in, count);
        else
            red->combine(acc.bytes, in, count);
    }
    red->store(r->c->dst, acc.bytes, count);
    return ACLSHMEM_SUCCESS;
}

/* collect: every member's block after the previous ones' (counts may differ). */
static int collect_payloads(const shmemi_coll_run_t *r)
{
    size_t total = 0, small_team[64] = {0};
    size_t *at = r->t->size <= 64 ? small_team : malloc(sizeof(size_t) * (size_t)r->t->size);
    if (!at)
        return shmemi_fail(ACLSHMEM_MALLOC_FAILED, "%s: out of memory", r->api);
    for (int i = 0; i < r->t->size; i++) {
        at[i] = total;
        total += (size_t)r->all[i].nelems * r->esize;
    }
    int rc = shmemi_coll_check_collect_dest(r, at, total);
    for (int i = 0; rc == ACLSHMEM_SUCCESS && i < r->t->size; i++) /* in place: this PE's block is its source */
        memmove((uint8_t *)r->c->dst + at[i], r->all[i].payload, (size_t)r->all[i].nelems * r->esize);
    if (at != small_team)
        free(at);
    return rc;
}

int shmemi_coll_small_run(const shmemi_coll_run_t *r)
{
    size_t len = r->c->nelems * r->esize;
    uint8_t *dst = r->c->dst;
    int n = r->t->size;
    switch (r->c->kind) {
    case SHMEMI_COLL_BROADCAST:
    case SHMEMI_COLL_BROADCAST_LOCAL:
        if (r->me != r->c->root || (const void *)dst != r->c->src)
            memcpy(dst, r->all[r->c->root].payload, len);
        return ACLSHMEM_SUCCESS;
    case SHMEMI_COLL_COLLECT:
        return collect_payloads(r);
    case SHMEMI_COLL_FCOLLECT: /* in place, this PE's block is its source: memmove */
        for (int i = 0; i < n; i++)
            memmove(dst + (size_t)i * len, r->all[i].payload, len);
        return ACLSHMEM_SUCCESS;
    case SHMEMI_COLL_ALLTOALL:
        for (int i = 0; i < n; i++)
            memcpy(dst + (size_t)i * len, r->all[i].payload + (size_t)r->me * len, len);
        return ACLSHMEM_SUCCESS;
    case SHMEMI_COLL_REDUCESCATTER:
        return reduce_payloads(r, (size_t)r->me * len, len);
    default: /* reduce, reduce_local */
        return reduce_payloads(r, 0, len);
    }
}
