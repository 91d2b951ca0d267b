/* The records every collective starts with, and the reads, writes and syncs its algorithms
 * share.
 *
 * Round k of a team writes slot k % 2 of the writer's control segment.  A PE writes that
 * slot again in round k + 2, which it starts only after the exchange of round k + 1, which
 * no PE finishes before every member published its record of round k + 1, after it was done
 * with round k: so a record stays as it was for as long as anyone reads it, whatever the
 * algorithm after the exchange does.  Small teams on one node wait for the others' records
 * themselves (polled_exchange); the others publish, meet in the team's barrier, then read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "coll/run.h"
#include "core/wait.h"
#include "mem/heap.h"
#include "rma/rma.h"
#include "sync/barrier.h"
#include "transport/transport.h"

static size_t slot_offset(const shmemi_team_t *t, uint64_t seq)
{
    return offsetof(shmemi_ctrl_t, coll_record) +
           ((size_t)t->index * 2 + (size_t)(seq & 1)) * sizeof(shmemi_coll_slot_t);
}

/* Member idx's slot of round seq, through the mapping (a member on this node). */
static shmemi_coll_slot_t *member_slot(shmemi_instance_t *inst, const shmemi_team_t *t, int idx, uint64_t seq)
{
    return &shmemi_ctrl_of(inst, shmemi_team_world_pe(t, idx))->coll_record[t->index][seq & 1];
}

/* Starts reading member idx's record of round seq from its control segment: a copy through
 * the mapping on this node, else a get that joins gets (all of them wait once, together). */
static int read_record(shmemi_instance_t *inst, const shmemi_team_t *t, int idx, uint64_t seq,
                       shmemi_coll_record_t *out, shmemi_gets_t *gets)
{
    int pe = shmemi_team_world_pe(t, idx);
    size_t offset = slot_offset(t, seq);
    const shmemi_transport_ops_t *tr = inst->transport[pe];
    const void *mapped = tr->ptr(inst, pe, SHMEMI_SEG_CTRL, offset);
    if (mapped) {
        memcpy(out, mapped, sizeof(*out));
        return ACLSHMEM_SUCCESS;
    }
    return tr->get_nbi(inst, NULL, pe, SHMEMI_SEG_CTRL, offset, out, sizeof(*out), gets);
}

/* "reduce (sum) of 100 int32" and the like, for messages. */
static const char *describe(const shmemi_coll_record_t *r, char *buf, size_t len)
{
    unsigned long long n = (unsigned long long)r->nelems;
    const char *type = shmemi_dtype_name((shmemi_dtype_t)r->dtype);
    const char *op = shmemi_redop_name((shmemi_redop_t)r->op);
    switch (r->kind) {
    case SHMEMI_COLL_EXCHANGE:
        snprintf(buf, len, "an exchange of %llu bytes", n);
        break;
    case SHMEMI_COLL_BROADCAST:
        snprintf(buf, len, "a broadcast of %llu %s from team PE %d", n, type, (int)r->root);
        break;
    case SHMEMI_COLL_BROADCAST_LOCAL:
        snprintf(buf, len, "a broadcast of %llu %s in local memory from team PE %d", n, type, (int)r->root);
        break;
    case SHMEMI_COLL_COLLECT:
        snprintf(buf, len, "a collect of %s", type);
        break;
    case SHMEMI_COLL_FCOLLECT:
        snprintf(buf, len, "an fcollect of %llu %s", n, type);
        break;
    case SHMEMI_COLL_ALLTOALL:
        snprintf(buf, len, "an alltoall of %llu %s per PE", n, type);
        break;
    case SHMEMI_COLL_ALLTOALLS:
        snprintf(buf, len, "an alltoalls of %llu %s per PE (dst stride %lld, source stride %lld)", n, type,
                 (long long)r->dst_stride, (long long)r->src_stride);
        break;
    case SHMEMI_COLL_REDUCE:
        snprintf(buf, len, "a %s reduction of %llu %s", op, n, type);
        break;
    case SHMEMI_COLL_REDUCESCATTER:
        snprintf(buf, len, "a %s reduce-scatter of %llu %s per PE", op, n, type);
        break;
    case SHMEMI_COLL_REDUCE_LOCAL:
        snprintf(buf, len, "a %s reduction of %llu %s in local memory", op, n, type);
        break;
    default:
        snprintf(buf, len, "no collective this library knows (kind %d)", (int)r->kind);
    }
    return buf;
}

/* A reduce or broadcast of local memory is a reduce or broadcast: a team may mix them (each PE
 * passes what it has). */
static int32_t call_kind(int32_t kind)
{
    return kind == SHMEMI_COLL_REDUCE_LOCAL      ? SHMEMI_COLL_REDUCE
           : kind == SHMEMI_COLL_BROADCAST_LOCAL ? SHMEMI_COLL_BROADCAST
                                                 : kind;
}

/* Whether two records ask for the same collective (collect's counts may differ). */
static int same_call(const shmemi_coll_record_t *a, const shmemi_coll_record_t *b)
{
    return call_kind(a->kind) == call_kind(b->kind) && a->dtype == b->dtype && a->op == b->op && a->root == b->root &&
           a->dst_stride == b->dst_stride && a->src_stride == b->src_stride &&
           (a->kind == SHMEMI_COLL_COLLECT || a->nelems == b->nelems);
}

/* The verdict on the gathered records, the same on every PE: each PE compares every record
 * with its own, and if any two differ, every PE finds one that differs from its own. */
static int check_records(const char *api, const shmemi_team_t *t, const shmemi_coll_record_t *mine,
                         const shmemi_coll_record_t *all)
{
    int me = shmemi_team_world_pe(t, t->my_idx);
    char theirs[160], own[160];
    for (int i = 0; i < t->size; i++) {
        const shmemi_coll_record_t *r = &all[i];
        if (r->seq != mine->seq || r->team_uid != mine->team_uid)
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "%s: PE %d is not in this collective of team %d (it is at the team's "
                               "collective #%llu, this PE %d at #%llu): every PE of the team must make "
                               "the same collective calls in the same order", api,
                               shmemi_team_world_pe(t, i), t->index, (unsigned long long)r->seq, me,
                               (unsigned long long)mine->seq);
    }
    for (int i = 0; i < t->size; i++) {
        if (all[i].status == ACLSHMEM_SUCCESS)
            continue;
        if (mine->status != ACLSHMEM_SUCCESS)
            return mine->status; /* this PE's own error, recorded by its checks */
        return shmemi_fail(all[i].status,
                           "%s failed on PE %d (%s: its arguments were refused there), so on every PE "
                           "of team %d; nothing was written", api, shmemi_team_world_pe(t, i),
                           shmemi_error_name(all[i].status), t->index);
    }
    for (int i = 0; i < t->size; i++)
        if (!same_call(&all[i], mine))
            return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                               "%s: the PEs of team %d made different calls: PE %d asked for %s, PE %d "
                               "for %s; nothing was written", api, t->index, shmemi_team_world_pe(t, i),
                               describe(&all[i], theirs, sizeof(theirs)), me,
                               describe(mine, own, sizeof(own)));
    return ACLSHMEM_SUCCESS;
}

/* The team's collective count on this PE, started over for a new team under a reused id
 * (shmemi_coll_upcoming_seq). */
static uint64_t next_seq(shmemi_instance_t *inst, const shmemi_team_t *t)
{
    shmemi_coll_team_t *state = &inst->coll->team[t->index];
    state->seq = shmemi_coll_upcoming_seq(inst, t);
    state->uid = t->uid;
    return state->seq;
}

/* ---- publishing a record ------------------------------------------------------------
 *
 * A record is written and read a 64-bit word at a time, the sequence number (its first
 * word) as a seqlock: the writer zeroes it, writes the other words, then stores it.  A
 * reader that does not wait for the barrier (polled_exchange) takes a copy only when the
 * sequence number it wants is there before and after it copied the rest, so that the slot
 * of an earlier team with the same id, half overwritten by this one's first record, is
 * never taken for this team's. */
#define RECORD_WORDS (sizeof(shmemi_coll_record_t) / sizeof(uint64_t))
_Static_assert(sizeof(shmemi_coll_record_t) % sizeof(uint64_t) == 0, "a record is whole words");
_Static_assert(offsetof(shmemi_coll_record_t, seq) == 0, "the sequence number is the first word");

static void publish(shmemi_coll_slot_t *slot, const shmemi_coll_record_t *rec)
{
    uint64_t *to = (uint64_t *)(void *)slot->bytes;
    const uint64_t *from = (const uint64_t *)(const void *)rec;
    __atomic_store_n(&to[0], 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* the zero is seen before any word below */
    for (size_t i = 1; i < RECORD_WORDS; i++)
        __atomic_store_n(&to[i], from[i], __ATOMIC_RELAXED);
    __atomic_store_n(&to[0], rec->seq, __ATOMIC_RELEASE);
}

/* Copies the record of round seq of team uid from slot into out; 0 when the slot does not
 * hold it (yet), or was being written while it was copied. */
static int take_published(const shmemi_coll_slot_t *slot, uint64_t seq, uint64_t uid, shmemi_coll_record_t *out)
{
    const uint64_t *from = (const uint64_t *)(const void *)slot->bytes;
    uint64_t *to = (uint64_t *)(void *)out;
    if (__atomic_load_n(&from[0], __ATOMIC_ACQUIRE) != seq)
        return 0;
    for (size_t i = 1; i < RECORD_WORDS; i++)
        to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy is done before the second look */
    if (__atomic_load_n(&from[0], __ATOMIC_RELAXED) != seq)
        return 0;
    to[0] = seq;
    return out->team_uid == uid;
}

/* ---- the exchange without a barrier (small teams on one node) --------------------------
 *
 * A team whose members share this node needs no barrier to exchange records: each PE publishes
 * its record and waits until every other member's of the same round is in its slot (for two
 * PEs, the barrier's one add and one wait, with the record as the add); one wait for them all,
 * each look taking the records that came (waiting for each in turn, and looking for a barrier
 * at every look, took a reduce of 4 KiB on 4 PEs sharing 2 CPUs 3.95 us against 3.80, a
 * broadcast of 8 B and a barrier 3.03 against 2.94, medians of 8 alternating runs).  Seeing a
 * member's record means it finished its previous collective and its buffers are ready, what
 * the barrier said before.  A slot is rewritten two rounds later, which its writer starts only
 * after it read this PE's record of the round between, published after this PE's reads of this
 * round: the copy cannot be overwritten while it is taken.
 *
 * A PE that calls a barrier of the team while the others are in a collective is a mismatch:
 * the waiters see the barrier's arrival where a record is missing (a member that called the
 * collective and went on to a barrier published its record before it arrived, so a second look
 * finds it; they look at every 8th look only, as a program's mistake may take that much longer
 * to be seen).  Each takes its record back, completes that barrier (which the PE in it would
 * otherwise wait in forever) and fails; the team's next collective then matches on every PE.
 *
 * Up to 4 members: with 16 PEs on 2 CPUs, waiting for 15 records measured slower than one node
 * barrier (fcollect of 8 B: 67-94 us against 41-49). */
#define POLLED_MAX_MEMBERS 4

static int polled(const shmemi_team_t *t)
{
    return t->on_one_node && t->size <= POLLED_MAX_MEMBERS;
}

typedef struct {
    shmemi_instance_t *inst;
    shmemi_team_t *t;
    const shmemi_coll_record_t *mine;
    shmemi_coll_record_t *all;
    unsigned taken; /* the members whose records are in all (bit i: member i) */
    unsigned looks;
    int missing;    /* a member in a barrier instead (-1: none) */
} polled_t;

_Static_assert(POLLED_MAX_MEMBERS <= 8 * (int)sizeof(unsigned), "a bit per member");

/* Takes every record of this round that is out and not yet taken; whether all are. */
static int take_records(polled_t *p)
{
    const shmemi_team_t *t = p->t;
    for (int i = 0; i < t->size; i++)
        if (!(p->taken >> i & 1u) && take_published(member_slot(p->inst, t, i, p->mine->seq), p->mine->seq,
                                                    p->mine->team_uid, &p->all[i]))
            p->taken |= 1u << i;
    return p->taken == (1u << t->size) - 1;
}

/* Whether every record is out, or a member went to a barrier instead (then p->missing). */
static int records_ready(void *ctx)
{
    polled_t *p = ctx;
    if (take_records(p))
        return 1;
    if (++p->looks % 8 || !shmemi_barrier_entered(p->inst, p->t))
        return 0;
    if (take_records(p)) /* look again: a record comes before an arrival */
        return 1;
    for (int i = 0; i < p->t->size && p->missing < 0; i++)
        if (!(p->taken >> i & 1u))
            p->missing = i;
    return 1;
}

static int polled_exchange(const char *api, shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_coll_record_t *mine,
                           shmemi_coll_record_t *all)
{
    /* As the barrier did, this PE's earlier writes complete first: over the network a quiet;
     * on this node a put is a store, which the record's release makes visible before it. */
    if (inst->plugin)
        SHMEMI_TRY(shmemi_quiet(inst, NULL));
    shmemi_coll_slot_t *slot = member_slot(inst, t, t->my_idx, mine->seq);
    publish(slot, mine);
    for (int i = 0; i < t->size; i++) /* they may sleep, waiting for this record */
        if (i != t->my_idx)
            shmemi_doorbell_notify(shmemi_ctrl_of(inst, shmemi_team_world_pe(t, i)));
    all[t->my_idx] = *mine;
    polled_t p = {.inst = inst, .t = t, .mine = mine, .all = all, .taken = 1u << t->my_idx, .missing = -1};
    SHMEMI_TRY(shmemi_wait(inst, records_ready, &p));
    int missing = p.missing;
    if (missing < 0)
        return ACLSHMEM_SUCCESS;
    /* This collective did not happen: its record goes (before the barrier lets the others
     * on to their collective of this number) and the count steps back, so that the team's
     * next collective matches on every PE. */
    __atomic_store_n((uint64_t *)(void *)slot->bytes, 0, __ATOMIC_RELEASE);
    inst->coll->team[t->index].seq--;
    SHMEMI_TRY(shmemi_barrier(inst, t));
    return shmemi_fail(ACLSHMEM_INVALID_PARAM,
                       "%s: a PE of team %d entered a barrier of the team while this PE %d waited in the team's "
                       "collective #%llu (PE %d's part in it never came): every PE of the team must make the same "
                       "collective calls in the same order", api, t->index, inst->my_pe,
                       (unsigned long long)mine->seq, shmemi_team_world_pe(t, missing));
}

/* ---- the exchange across two nodes ------------------------------------------------------
 *
 * Reading another node's records after the barrier is a round trip more, and on a node whose
 * PEs share its CPUs every PE serving its record to the other node's waits for a CPU.  A team
 * on two nodes with several members on some node (up to CARRIED_PER_NODE on each, of the first
 * team ids) sends them with the barrier instead: each node's leader, once its members arrived
 * (their records published), puts its node's records into the other leader's payload area of
 * the round, before its arrival there (shmemi_barrier_carrying); after the barrier each PE
 * reads the other node's records from its own leader's area through the mapping.  That area
 * is written again two rounds later, after the other node's leader passed the next barrier,
 * which needs this node's members to have arrived at it: done with these records.
 *
 * 2 nodes x 2 PEs on 2 CPUs, alternating in one run: a broadcast of 8 B 75-112 -> 48-85 us,
 * of 64 KiB 112-148 -> 107-124 us.  With one PE on each node a read of the other's record
 * costs less than the put does (the put leaves the next barrier's quiet a round trip to
 * make: 14-16 -> 19 us a broadcast of 8 B), so such teams read as before. */
#define CARRIED_PER_NODE (SHMEMI_BARRIER_CARRY_MAX / sizeof(shmemi_coll_record_t))
_Static_assert(SHMEMI_BARRIER_CARRY_MAX <= SHMEMI_COLL_PAYLOAD_BYTES, "a node's records fit a payload area");

static int carried(const shmemi_instance_t *inst, const shmemi_team_t *t)
{
    return t->n_leaders == 2 && t->n_leaders < t->size && t->index < SHMEMI_COLL_PAYLOAD_TEAMS && inst->plugin &&
           (size_t)t->local_size <= CARRIED_PER_NODE && (size_t)(t->size - t->local_size) <= CARRIED_PER_NODE;
}

static int same_node(const shmemi_instance_t *inst, const shmemi_team_t *t, int a, int b)
{
    const int *node = inst->heaps.node_first;
    return node[shmemi_team_world_pe(t, a)] == node[shmemi_team_world_pe(t, b)];
}

typedef struct {
    shmemi_instance_t *inst;
    const shmemi_team_t *t;
    uint64_t seq;
} carry_ctx_t;

/* The leader's block: its node's records, in team order. */
static void build_node_records(void *arg, uint8_t *block)
{
    carry_ctx_t *c = arg;
    size_t k = 0;
    for (int i = 0; i < c->t->size; i++) {
        if (!same_node(c->inst, c->t, i, c->t->my_idx))
            continue;
        memcpy(block + k++ * sizeof(shmemi_coll_record_t), member_slot(c->inst, c->t, i, c->seq)->bytes,
               sizeof(shmemi_coll_record_t));
    }
}

static int carried_exchange(shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_coll_record_t *mine,
                            shmemi_coll_record_t *all)
{
    size_t inbox = offsetof(shmemi_ctrl_t, coll_payload) +
                   ((size_t)t->index * 2 + (size_t)(mine->seq & 1)) * sizeof(shmemi_coll_payload_t);
    carry_ctx_t ctx = {inst, t, mine->seq};
    shmemi_barrier_carry_t carry = {build_node_records, &ctx, (size_t)t->local_size * sizeof(shmemi_coll_record_t),
                                    inbox};
    SHMEMI_TRY(shmemi_barrier_carrying(inst, t, &carry));
    const uint8_t *others = (const uint8_t *)shmemi_ctrl_of(inst, shmemi_team_world_pe(t, t->local_leader)) + inbox;
    size_t k = 0;
    for (int i = 0; i < t->size; i++) {
        if (i == t->my_idx)
            all[i] = *mine;
        else if (same_node(inst, t, i, t->my_idx))
            memcpy(&all[i], member_slot(inst, t, i, mine->seq)->bytes, sizeof(all[i]));
        else
            memcpy(&all[i], others + k++ * sizeof(shmemi_coll_record_t), sizeof(all[i]));
    }
    return ACLSHMEM_SUCCESS;
}

uint64_t shmemi_coll_upcoming_seq(shmemi_instance_t *inst, const shmemi_team_t *t)
{
    const shmemi_coll_team_t *state = &inst->coll->team[t->index];
    return (state->uid == t->uid ? state->seq : 0) + 1;
}

int shmemi_coll_exchange_records(const char *api, shmemi_instance_t *inst, shmemi_team_t *t,
                                 shmemi_coll_record_t *mine, shmemi_coll_record_t *all)
{
    mine->seq = next_seq(inst, t);
    mine->team_uid = t->uid;
    if (polled(t)) {
        SHMEMI_TRY(polled_exchange(api, inst, t, mine, all));
        return check_records(api, t, mine, all);
    }
    publish(member_slot(inst, t, t->my_idx, mine->seq), mine);
    if (carried(inst, t)) {
        SHMEMI_TRY(carried_exchange(inst, t, mine, all));
        return check_records(api, t, mine, all);
    }
    SHMEMI_TRY(shmemi_barrier(inst, t)); /* the records are out; everyone's buffers are ready */
    /* The records of other nodes travel at once, one round trip for all rather than one each
     * (a batch, not a quiet: the barrier's quiet left nothing else to complete, but a batch
     * waits for these gets only). */
    shmemi_gets_t gets = {0};
    int rc = ACLSHMEM_SUCCESS;
    for (int i = 0; i < t->size && rc == ACLSHMEM_SUCCESS; i++) {
        if (i == t->my_idx)
            all[i] = *mine;
        else
            rc = read_record(inst, t, i, mine->seq, &all[i], &gets);
    }
    int wait_rc = shmemi_transport_gets_wait(inst, NULL, &gets); /* (also after a failure: empties it) */
    SHMEMI_TRY(rc);
    SHMEMI_TRY(wait_rc);
    return check_records(api, t, mine, all);
}

int shmemi_coll_sync(const shmemi_coll_run_t *r)
{
    return shmemi_barrier(r->inst, r->t);
}

/* Where member idx keeps side: its world PE, segment and offset. */
static int locate(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, int *pe,
                  int *seg, size_t *offset)
{
    const shmemi_coll_record_t *rec = &r->all[idx];
    *pe = shmemi_team_world_pe(r->t, idx);
    *seg = side == SHMEMI_COLL_SRC ? rec->src_seg : rec->dst_seg;
    *offset = (side == SHMEMI_COLL_SRC ? rec->src_off : rec->dst_off) + off;
    if (*seg < 0) /* the checks let nothing through that moves data from or to no buffer */
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "%s: PE %d has no %s buffer for this collective", r->api, *pe,
                           side == SHMEMI_COLL_SRC ? "source" : "dest");
    return ACLSHMEM_SUCCESS;
}

void *shmemi_coll_peer(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off)
{
    int pe, seg;
    size_t offset;
    if (locate(r, idx, side, off, &pe, &seg, &offset) != ACLSHMEM_SUCCESS)
        return NULL;
    return r->inst->transport[pe]->ptr(r->inst, pe, seg, offset);
}

/* One copy between local memory and member idx's side at off: through its mapping when it
 * shares this node, else with the transport's get or put (a get started into gets unless
 * gets is NULL). */
static int transfer(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, void *local,
                    size_t len, int is_put, shmemi_gets_t *gets)
{
    if (len == 0)
        return ACLSHMEM_SUCCESS;
    int pe, seg;
    size_t offset;
    SHMEMI_TRY(locate(r, idx, side, off, &pe, &seg, &offset));
    const shmemi_transport_ops_t *tr = r->inst->transport[pe];
    uint8_t *mapped = tr->ptr(r->inst, pe, seg, offset);
    if (!mapped)
        return is_put ? tr->put(r->inst, NULL, pe, seg, offset, local, len)
               : gets ? tr->get_nbi(r->inst, NULL, pe, seg, offset, local, len, gets)
                      : tr->get(r->inst, NULL, pe, seg, offset, local, len);
    if (mapped != local)
        memcpy(is_put ? mapped : local, is_put ? local : mapped, len);
    return ACLSHMEM_SUCCESS;
}

int shmemi_coll_pull_start(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, void *to,
                           size_t len, shmemi_gets_t *gets)
{
    return transfer(r, idx, side, off, to, len, 0, gets);
}

int shmemi_coll_pulls_wait(const shmemi_coll_run_t *r, shmemi_gets_t *gets)
{
    return shmemi_transport_gets_wait(r->inst, NULL, gets);
}

int shmemi_coll_pull(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, void *to,
                     size_t len)
{
    return transfer(r, idx, side, off, to, len, 0, NULL);
}

int shmemi_coll_push(const shmemi_coll_run_t *r, int idx, shmemi_coll_side_t side, size_t off, const void *from,
                     size_t len)
{
    return transfer(r, idx, side, off, (void *)from, len, 1, NULL);
}
