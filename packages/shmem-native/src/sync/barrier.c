/* The PE barrier of the engine.  The public aclshmem_barrier family sits above it, in
 * platform/barrier.c, because it first orders with the caller's streams or kernel blocks. */
#include "sync/barrier.h"

#include <time.h>

#include "core/ctrl.h"
#include "base/error.h"
#include "core/wait.h"
#include "mem/heap.h"
#include "prof/prof.h"
#include "rma/rma.h"
#include "transport/transport.h"

typedef struct {
    _Atomic uint64_t *counter;
    uint64_t epoch;
} arrival_t;

static int arrived(void *ctx)
{
    arrival_t *a = ctx;
    return atomic_load(a->counter) >= a->epoch;
}

/* The dissemination rounds among n participants (see barrier.h): participant `rank` adds to
 * the round-k counter of participant rank + 2^k and waits for its own.  idx[r] is
 * participant r's team index (NULL: every member takes part, as itself). */
static int dissemination_barrier(shmemi_instance_t *inst, shmemi_team_t *t, int rank, int n, const int *idx)
{
    uint64_t *epochs = inst->teams->barrier_epoch[t->index];
    shmemi_ctrl_t *mine = shmemi_ctrl_of(inst, inst->my_pe);
    int rc = ACLSHMEM_SUCCESS;
    for (int k = 0, dist = 1; rc == ACLSHMEM_SUCCESS && dist < n; k++, dist <<= 1) {
        int next = (rank + dist) % n;
        int partner = shmemi_team_world_pe(t, idx ? idx[next] : next);
        size_t offset = offsetof(shmemi_ctrl_t, team_psync) +
                        ((size_t)t->index * SHMEMI_BARRIER_ROUNDS + (size_t)k) * sizeof(uint64_t);
        const shmemi_transport_ops_t *tr = inst->transport[partner];
        /* The quiet before the barrier completed what this PE wrote; the arrival itself needs
         * no completion (the partner waits for it), so no later quiet has to flush it. */
        shmemi_amo_t arrive = {.op = SHMEMI_AMO_ADD, .kind = SHMEMI_AMO_INT, .width = 8, .value = 1, .untracked = 1};
        rc = tr->amo(inst, NULL, partner, SHMEMI_SEG_CTRL, offset, &arrive, NULL); /* wakes the partner */
        if (rc != ACLSHMEM_SUCCESS)
            break;
        arrival_t a = {&mine->team_psync[t->index][k], ++epochs[k]};
        rc = shmemi_wait(inst, arrived, &a);
    }
    return rc;
}

/* How long a member that arrived polls (yielding, when the node is oversubscribed) before
 * it sleeps on the team's word.  Measured on 2 CPUs (median of 5 alternating runs): 4 PEs
 * 2.7 us, 8 PEs 13 us a barrier with 100 us; sleeping after 5-20 us made 8 PEs 40-80 us (a
 * futex wake-up per member on every barrier), and sleeping at once while more members are
 * missing than there are CPUs did not help 16 or 32 PEs. */
#define NODE_POLL_NS 100000L
/* The same when the node runs more PEs than CPUs.  Then a barrier of 16 PEs on 2 CPUs takes
 * tens of microseconds (every member must get a CPU once), those who come first waited more
 * than 100 us and fell asleep, and every barrier paid a futex wake-up of most members.  A
 * poll that yields costs little (the CPU goes to whoever is runnable), so it lasts 1 ms:
 * 2 shared CPUs, medians of 5 alternating runs (200-500 barriers each): 16 PEs 92-165 ->
 * 37-48 us (OSHMEM 41), 32 PEs 422 -> 167-202 us, 64 PEs 1020 -> 816 us, 8 PEs 19 -> 12
 * us; 4 PEs unchanged (2.6-2.9 us); 2 ms and 5 ms were no better than 1 ms within the
 * noise. */
#define NODE_POLL_OVERSUBSCRIBED_NS 1000000L
/* ... unless the machine is busy with other work: then every member's turn on a CPU comes
 * after other programs' time slices, a barrier outlasts the 1 ms poll, every member yields
 * for 1 ms and then sleeps anyway, and the yields take CPU from the members still to arrive.
 * Measured on 2 CPUs under a load average of 6-17 (2000 barriers): 8 PEs 2.8-3.7 ms a
 * barrier, 16 PEs 4.5-7.8 ms (OSHMEM, which spins: 47-123 us, 0.23-1.4 ms); with a 50 us
 * poll 21-302 us and 0.5-1 ms, but a quiet machine makes 16 PEs 2-3x slower with it.  So a
 * PE whose wait in a barrier took longer than SLOW_BARRIER_NS polls only SHORT_POLL_NS in
 * its next SHORT_POLL_BARRIERS barriers (another slow one starts the count over): a quiet
 * machine keeps the long poll, and after a hiccup it loses a few barriers' speed. */
#define SLOW_BARRIER_NS 1000000L
#define SHORT_POLL_NS 50000L
#define SHORT_POLL_BARRIERS 16

static long oversubscribed_poll_ns(shmemi_instance_t *inst)
{
    int short_polls = atomic_load_explicit(&inst->short_poll_barriers, memory_order_relaxed);
    return short_polls > 0 ? SHORT_POLL_NS : NODE_POLL_OVERSUBSCRIBED_NS;
}

static void note_wait(shmemi_instance_t *inst, long waited)
{
    int left = atomic_load_explicit(&inst->short_poll_barriers, memory_order_relaxed);
    left = waited > SLOW_BARRIER_NS ? SHORT_POLL_BARRIERS : left > 0 ? left - 1 : 0;
    atomic_store_explicit(&inst->short_poll_barriers, left, memory_order_relaxed);
}

/* A member's wait for the release of a node barrier. */
static int node_wait(shmemi_instance_t *inst, shmemi_team_t *t, shmemi_ctrl_t *root, shmemi_meeting_t *m)
{
    shmemi_wake_word_t *wake = &root->node_wake[t->index];
    if (!inst->oversubscribed)
        return shmemi_wait_shared(inst, shmemi_meeting_released, m, wake, NODE_POLL_NS, NULL);
    long poll_ns = oversubscribed_poll_ns(inst), waited = 0;
    int rc = shmemi_wait_shared(inst, shmemi_meeting_released, m, wake, poll_ns, &waited);
    note_wait(inst, waited);
    return rc;
}

/* The node's members at root (its first member, or its leader), met in m for this barrier
 * of team t. */
static void open_node(shmemi_meeting_t *m, shmemi_ctrl_t *root, const shmemi_team_t *t)
{
    shmemi_meeting_open(m, &root->node_arrivals[t->index], &root->node_release[t->index]);
}

/* Every member waiting at root is woken (they sleep on one futex word of the team). */
static void wake_node(shmemi_ctrl_t *root, const shmemi_team_t *t)
{
    shmemi_wake_shared(&root->node_wake[t->index]);
}

/* Teams whose members all share this node: one counter and one release word in the
 * control segment of the team's first member.  Each member reads the release word, then
 * arrives; the last to arrive puts the counter back to 0, bumps the release word and wakes
 * every member that sleeps with one call (they sleep on one futex word of the team).  One
 * round whatever the size: when PEs outnumber CPUs, a dissemination barrier needs every PE
 * to run in each of its log2(n) rounds, and each round costs context switches (issue #26).
 * The counter is back to 0 before the release, so nobody arrives at the next barrier before
 * it is; while a member waits, the release word can only move on by this one barrier. */
static int node_barrier(shmemi_instance_t *inst, shmemi_team_t *t)
{
    shmemi_ctrl_t *root = shmemi_ctrl_of(inst, shmemi_team_world_pe(t, 0));
    shmemi_meeting_t m;
    open_node(&m, root, t);
    if (!shmemi_meeting_arrive(&m, t->size))
        return node_wait(inst, t, root, &m);
    wake_node(root, t);
    return ACLSHMEM_SUCCESS;
}

/* Teams that span nodes, with more than one member on some node: the members of each node
 * arrive at its leader (the node's first member) and wait there as in a node barrier; the
 * leaders meet across nodes (dissemination) and each releases its node.  Only one PE per
 * node uses the network, which sends 2 * nodes * log2(nodes) messages instead of
 * 2 * PEs * log2(PEs), and the others sleep instead of competing for the CPUs with the
 * leader (2 nodes x 2 PEs on 2 CPUs under load: a barrier took 0.5-1.3 ms flat).  The
 * leader releases its node as the node barrier's last arriver does.  When its part failed it
 * still releases its node (nobody waits forever), moving the release word by FAILED_RELEASE
 * instead of 1, so that the members fail too. */
#define FAILED_RELEASE 2

/* How long a member released by a failed leader waits for the news of a dead PE. */
#define LEADER_FAILURE_GRACE_MS 2000

/* A member released by a leader whose part failed: why, as well as this PE can tell.  A
 * leader's rounds fail mostly because a PE died; the control plane tells every PE so, but
 * the leader may have heard it first, so the member waits a little for the news ("PE n
 * died" says the most) before it blames the leader. */
static int leader_failed(shmemi_instance_t *inst, shmemi_team_t *t)
{
    for (int waited_ms = 0; waited_ms < LEADER_FAILURE_GRACE_MS; waited_ms++) {
        int rc = shmemi_check_alive(inst);
        if (rc != ACLSHMEM_SUCCESS)
            return rc;
        nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
    return shmemi_fail(ACLSHMEM_INNER_ERROR, "barrier: PE %d, which meets the other nodes for this node's members "
                       "of the team, failed (its error says why)", shmemi_team_world_pe(t, t->local_leader));
}

/* A leader's block for the other node's leader (shmemi_barrier_carrying), sent before its
 * arrival there: a fence orders the two (on the network's data plane the messages to one PE
 * are applied in the order sent). */
static int send_carry(shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_barrier_carry_t *carry)
{
    if (!carry)
        return ACLSHMEM_SUCCESS;
    if (t->n_leaders != 2 || carry->bytes > SHMEMI_BARRIER_CARRY_MAX)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "barrier: a block of %zu bytes carried over %d nodes", carry->bytes,
                           t->n_leaders);
    uint8_t block[SHMEMI_BARRIER_CARRY_MAX];
    carry->build(carry->ctx, block);
    int partner = shmemi_team_world_pe(t, t->leaders[1 - t->leader_rank]);
    SHMEMI_TRY(inst->transport[partner]->put(inst, NULL, partner, SHMEMI_SEG_CTRL, carry->inbox, block, carry->bytes));
    return shmemi_fence(inst, NULL);
}

static int two_level_barrier(shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_barrier_carry_t *carry)
{
    shmemi_ctrl_t *leader = shmemi_ctrl_of(inst, shmemi_team_world_pe(t, t->local_leader));
    shmemi_meeting_t m;
    open_node(&m, leader, t);
    if (t->leader_rank < 0) {
        shmemi_meeting_arrive(&m, t->local_size); /* never the last: the leader does not arrive */
        shmemi_doorbell_notify(leader); /* the leader may sleep, waiting for its node */
        SHMEMI_TRY(node_wait(inst, t, leader, &m));
        return atomic_load(m.release) - m.seen == FAILED_RELEASE ? leader_failed(inst, t) : ACLSHMEM_SUCCESS;
    }
    arrival_t node = {m.arrivals, (uint64_t)t->local_size - 1};
    int rc = shmemi_wait(inst, arrived, &node);
    if (rc == ACLSHMEM_SUCCESS)
        rc = send_carry(inst, t, carry); /* the node's members arrived: their part is ready */
    if (rc == ACLSHMEM_SUCCESS)
        rc = dissemination_barrier(inst, t, t->leader_rank, t->n_leaders, t->leaders);
    shmemi_meeting_complete(&m, rc == ACLSHMEM_SUCCESS ? 1 : FAILED_RELEASE);
    wake_node(leader, t);
    return rc;
}

/* Two members: the dissemination barrier's one round (an add and a wait on each side) is
 * already the least there is; more members on one node: the node barrier; across nodes,
 * two levels when some node has several members. */
static int team_barrier(shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_barrier_carry_t *carry)
{
    if (t->on_one_node && t->size > 2)
        return node_barrier(inst, t);
    if (!t->on_one_node && t->n_leaders < t->size)
        return two_level_barrier(inst, t, carry);
    if (carry)
        return shmemi_fail(ACLSHMEM_INNER_ERROR, "barrier: a block carried where no leader meets another");
    return dissemination_barrier(inst, t, t->my_idx, t->size, NULL);
}

int shmemi_barrier_entered(shmemi_instance_t *inst, const shmemi_team_t *t)
{
    if (!t->on_one_node || t->size == 1)
        return 0;
    if (t->size > 2) /* the node barrier: arrivals gather at the first member */
        return atomic_load(&shmemi_ctrl_of(inst, shmemi_team_world_pe(t, 0))->node_arrivals[t->index]) > 0;
    /* two members: the other one's add to this PE's counter of round 0, ahead of its epoch */
    return atomic_load(&shmemi_ctrl_of(inst, inst->my_pe)->team_psync[t->index][0]) >
           inst->teams->barrier_epoch[t->index][0];
}

int shmemi_barrier_carrying(shmemi_instance_t *inst, shmemi_team_t *t, const shmemi_barrier_carry_t *carry)
{
    SHMEMI_TRY(shmemi_quiet(inst, NULL));
    if (t->size == 1)
        return ACLSHMEM_SUCCESS;
    uint64_t start = shmemi_prof_begin(inst);
    pthread_mutex_lock(&t->lock);
    int rc = team_barrier(inst, t, carry);
    pthread_mutex_unlock(&t->lock);
    shmemi_prof_end_frame(inst, SHMEMI_FRAME_BARRIER, start);
    return rc;
}

int shmemi_barrier(shmemi_instance_t *inst, shmemi_team_t *t)
{
    return shmemi_barrier_carrying(inst, t, NULL);
}
