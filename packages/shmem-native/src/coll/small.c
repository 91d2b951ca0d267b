/* Small collectives: the data travels with the records.
 *
 * When a member's whole source fits where its data may travel, each PE copies its source
 * there before the exchange, and after the exchange it has every member's data already: it
 * computes its own dest from them and is done.  No PE reads another's source or writes
 * another's dest afterwards, so the barrier that ends a larger collective (nobody may leave
 * while others still read its source) is not needed: one meeting in all instead of two, and
 * no get per member across nodes.
 *
 * Where the data travels: up to ACLSHMEMX_TEAM_EXCHANGE_MAX bytes in the record's payload;
 * for teams whose members share one node and whose id is below SHMEMI_COLL_PAYLOAD_TEAMS,
 * up to SHMEMI_COLL_PAYLOAD_BYTES in the member's payload area of its control segment,
 * which the others read through the mapping.  Both are used in turn by two rounds and
 * are safe to reuse: a PE writes those of collective k + 2 only after the exchange of
 * k + 1, which no PE finishes before every member was done with collective k
 * (exchange.c).
 *
 * Each PE stages its source when it fits; the call goes this way when every member's did,
 * which every member reads from the same records (collect's counts differ per PE, the
 * others' are the same on every member of a matching call); a mismatched call fails in
 * the exchange before anything is read. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "coll/run.h"
#include "core/wait.h"

/* Bytes of a full source of a call of kind with nelems elements of esize bytes, on a team
 * of n members. */
static size_t source_bytes(shmemi_coll_kind_t kind, uint64_t nelems, size_t esize, int n)
{
    int blocks = kind == SHMEMI_COLL_REDUCESCATTER || kind == SHMEMI_COLL_ALLTOALL ? n : 1;
    return (size_t)nelems * esize * (size_t)blocks;
}

/* The bytes a member's data may take on team t (see above).  Data that travels beside the
 * records saves the meeting that ends a larger call but is copied twice, into the area and
 * out of it, and the area's lines move between the members' caches every call.  Measured
 * on 2 CPUs (best of 5, 5000 calls): with two members, whose meeting is the cheapest,
 * fcollect of 512 B took 0.44-0.49 us this way against 0.66 the general way, but 1 KiB
 * 0.79-0.86 against 0.71 and 4 KiB 1.52 against 0.75; with four members sharing 2 CPUs,
 * whose meetings cost 1.5 us, 2 KiB still gained (fcollect 3.2 against 3.6-3.7 us,
 * broadcast 2.3 against 3.3) but the sum of 4 KiB lost (5.1-5.5 against 4.4-4.6). */
#define PAIR_CAPACITY 512
_Static_assert(ACLSHMEMX_TEAM_EXCHANGE_MAX < PAIR_CAPACITY && PAIR_CAPACITY <= SHMEMI_COLL_PAYLOAD_BYTES,
               "a pair's data beside the records is more than a record carries and fits the area");

static size_t capacity(const shmemi_team_t *t)
{
    if (!t->on_one_node || t->index >= SHMEMI_COLL_PAYLOAD_TEAMS)
        return ACLSHMEMX_TEAM_EXCHANGE_MAX;
    return t->size == 2 ? PAIR_CAPACITY : SHMEMI_COLL_PAYLOAD_BYTES;
}

/* Whether such a source fits in cap bytes (collect: a count of 0 fits too, it stages
 * nothing). */
static int fits(shmemi_coll_kind_t kind, shmemi_dtype_t dtype, uint64_t nelems, int n, size_t cap)
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
    if ((nelems == 0 && kind != SHMEMI_COLL_COLLECT) || nelems > cap / esize)
        return 0;
    return source_bytes(kind, nelems, esize, n) <= cap;
}

int shmemi_coll_small(const shmemi_coll_t *c, const shmemi_team_t *t)
{
    return fits(c->kind, c->dtype, c->nelems, t->size, capacity(t));
}

int shmemi_coll_small_all(const shmemi_coll_run_t *r)
{
    for (int i = 0; i < r->t->size; i++)
        if (!fits(r->c->kind, r->c->dtype, r->all[i].nelems, r->t->size, capacity(r->t)))
            return 0;
    return 1;
}

/* Whether a member's data of bytes bytes travels in its record (else in its payload area). */
static int in_record(size_t bytes)
{
    return bytes <= ACLSHMEMX_TEAM_EXCHANGE_MAX;
}

void shmemi_coll_small_stage(shmemi_instance_t *inst, const shmemi_coll_t *c, const shmemi_team_t *t,
                             shmemi_coll_record_t *rec)
{
    int has_source = !shmemi_coll_is_broadcast(c->kind) || c->root == t->my_idx;
    size_t bytes = source_bytes(c->kind, c->nelems, shmemi_dtype_size(c->dtype), t->size);
    if (!has_source || bytes == 0)
        return;
    if (in_record(bytes)) {
        memcpy(rec->payload, c->src, bytes);
        return;
    }
    uint64_t round = shmemi_coll_upcoming_seq(inst, t);
    memcpy(shmemi_ctrl_of(inst, inst->my_pe)->coll_payload[t->index][round & 1].bytes, c->src, bytes);
}

/* Member i's data: in its record, or in its payload area of this round (on this node). */
static const uint8_t *member_data(const shmemi_coll_run_t *r, int i)
{
    const shmemi_coll_record_t *rec = &r->all[i];
    if (in_record(source_bytes(r->c->kind, rec->nelems, r->esize, r->t->size)))
        return rec->payload;
    shmemi_ctrl_t *ctrl = shmemi_ctrl_of(r->inst, shmemi_team_world_pe(r->t, i));
    return ctrl->coll_payload[r->t->index][rec->seq & 1].bytes;
}

/* Bytes of elements reduced at a time: a piece of every member's data is copied where its
 * elements are aligned (a record's payload is not), its accumulators up to 4x wider. */
#define REDUCE_PIECE 512

/* Elements [off, off + len) of every member's data, reduced in team order into dest. */
static int reduce_payloads(const shmemi_coll_run_t *r, size_t off, size_t len)
{
    const shmemi_reducer_t *red = shmemi_reducer(r->c->dtype, r->c->op);
    size_t step = REDUCE_PIECE / r->esize * r->esize;
    union {
        long double align;
        uint8_t bytes[4 * REDUCE_PIECE];
    } acc;
    union {
        long double align;
        uint8_t bytes[REDUCE_PIECE];
    } in;
    if (!red || step == 0 || step / r->esize * red->acc_size > sizeof(acc.bytes))
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "%s: no reducer for a small reduction", r->api);
    for (size_t at = 0; at < len; at += step) {
        size_t piece = len - at < step ? len - at : step, count = piece / r->esize;
        for (int i = 0; i < r->t->size; i++) {
            memcpy(in.bytes, member_data(r, i) + off + at, piece);
            if (i == 0)
                red->load(acc.bytes, in.bytes, count);
            else
                red->combine(acc.bytes, in.bytes, count);
        }
        red->store((uint8_t *)r->c->dst + at, acc.bytes, count);
    }
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
        memmove((uint8_t *)r->c->dst + at[i], member_data(r, i), (size_t)r->all[i].nelems * r->esize);
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
            memcpy(dst, member_data(r, r->c->root), len);
        return ACLSHMEM_SUCCESS;
    case SHMEMI_COLL_COLLECT:
        return collect_payloads(r);
    case SHMEMI_COLL_FCOLLECT: /* in place, this PE's block is its source: memmove */
        for (int i = 0; i < n; i++)
            memmove(dst + (size_t)i * len, member_data(r, i), len);
        return ACLSHMEM_SUCCESS;
    case SHMEMI_COLL_ALLTOALL:
        for (int i = 0; i < n; i++)
            memcpy(dst + (size_t)i * len, member_data(r, i) + (size_t)r->me * len, len);
        return ACLSHMEM_SUCCESS;
    case SHMEMI_COLL_REDUCESCATTER:
        return reduce_payloads(r, (size_t)r->me * len, len);
    default: /* reduce, reduce_local */
        return reduce_payloads(r, 0, len);
    }
}
