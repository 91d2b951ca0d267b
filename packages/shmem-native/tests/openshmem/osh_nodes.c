/*
 * osh_nodes.c - an OpenSHMEM program that checks what differs when the PEs sit on several
 * nodes: SHMEM_TEAM_SHARED is this node's PEs, shmem_ptr reaches only them, and contexts
 * (of the world and of a team), AMOs, put with signal, waits, a global variable as a target,
 * a lock and collectives (team-based and over active sets) all work between nodes.  Started by oshrun; OSH_PPN is the number of PEs per
 * node (unset: every PE on one node).  Prints "PASS PE <n>" and exits 0, or says what was
 * wrong and exits 1.  Run on one node by meson test osh_nodes, across nodes by
 * tests/multinode/test_openshmem_nodes.py.
 */
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 20

static int failures;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            printf("FAIL PE %d line %d: %s (last error: %s)\n", shmem_my_pe(), __LINE__, #cond,  \
                   shmemx_get_last_error());                                                      \
            failures++;                                                                           \
        }                                                                                         \
    } while (0)

long global_target[4]; /* a global variable: symmetric under shmem_init */
long lock;

static void check_shared_team(int me, int n, int ppn)
{
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == ppn);
    CHECK(shmem_team_my_pe(SHMEM_TEAM_SHARED) == me % ppn);
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, 0, SHMEM_TEAM_WORLD) == me - me % ppn);
    long *word = shmem_malloc(sizeof(long));
    for (int pe = 0; pe < n; pe++) {
        int same_node = pe / ppn == me / ppn;
        CHECK((shmem_ptr(word, pe) != NULL) == same_node);
    }
    shmem_free(word);
}

/* Through a context of the world and one of the team of even PEs, to the PE one node ahead. */
static void check_contexts(int me, int n, int ppn)
{
    long *box = shmem_calloc(2, sizeof(long));
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0);
    int ahead = (me + ppn) % n, behind = (me + n - ppn) % n;
    shmem_ctx_long_p(ctx, &box[0], 1000 + me, ahead);
    shmem_ctx_long_atomic_add(ctx, &box[1], me + 1, 0);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    CHECK(box[0] == 1000 + behind);
    if (me == 0)
        CHECK(box[1] == (long)n * (n + 1) / 2);
    CHECK(shmem_ctx_long_g(ctx, &box[0], ahead) == 1000 + me);
    shmem_ctx_destroy(ctx);

    shmem_team_t evens;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens) == 0);
    if (me % 2 == 0) {
        shmem_ctx_t team_ctx;
        CHECK(shmem_team_create_ctx(evens, 0, &team_ctx) == 0);
        int last = shmem_team_n_pes(evens) - 1; /* world PE 2 * last */
        shmem_ctx_long_atomic_inc(team_ctx, &box[1], last);
        shmem_ctx_quiet(team_ctx);
        shmem_ctx_destroy(team_ctx);
        shmem_team_destroy(evens);
    }
    shmem_barrier_all();
    if (me == 2 * ((n + 1) / 2 - 1))
        CHECK(box[1] == (me == 0 ? (long)n * (n + 1) / 2 : 0) + (n + 1) / 2);
    shmem_barrier_all();
    shmem_free(box);
}

static void check_signal_and_globals(int me, int n, int ppn)
{
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    long data[4] = {me, me + 1, me + 2, me + 3};
    int ahead = (me + ppn) % n, behind = (me + n - ppn) % n;
    shmem_long_put_signal(global_target, data, 4, sig, 1, SHMEM_SIGNAL_ADD, ahead);
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1) == 1);
    CHECK(global_target[0] == behind && global_target[3] == behind + 3);
    shmem_barrier_all();
    shmem_free(sig);
}

/* Collectives across nodes: a reduction and an fcollect big enough to go node by node, a
 * reduction over SHMEM_TEAM_SHARED, and the active-set forms over sets that span the nodes,
 * whose teams their PEs make through the control plane. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void check_collectives(int me, int n, int ppn)
{
    size_t count = 16384; /* 128 KiB of longs */
    long *src = shmem_malloc(count * sizeof(long)), *dst = shmem_malloc((size_t)n * count * sizeof(long));
    long *work = shmem_malloc(sizeof(long)), *psync = shmem_malloc(SHMEM_SYNC_SIZE * sizeof(long));
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    for (size_t i = 0; i < count; i++)
        src[i] = (long)i + me;
    shmem_barrier_all();
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, count) == 0);
    CHECK(dst[count - 1] == (long)(count - 1) * n + (long)n * (n - 1) / 2);
    CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, count) == 0);
    CHECK(dst[(size_t)(n - 1) * count + 5] == 5 + n - 1);
    CHECK(shmem_long_max_reduce(SHMEM_TEAM_SHARED, dst, src, 1) == 0);
    CHECK(dst[0] == (me / ppn) * ppn + ppn - 1);
    if (me > 0) { /* every PE but the first: a set across the nodes */
        shmem_long_sum_to_all(dst, src, 4, 1, 0, n - 1, work, psync);
        CHECK(dst[3] == 3L * (n - 1) + (long)n * (n - 1) / 2);
    }
    if (me % 2 == 0) { /* the even PEs: from the last of them; the root's dest stays */
        dst[0] = -1;
        shmem_broadcast64(dst, src + 1, 2, (n + 1) / 2 - 1, 0, 1, (n + 1) / 2, psync);
        CHECK(dst[0] == (me / 2 == (n + 1) / 2 - 1 ? -1 : 1 + 2 * ((n + 1) / 2 - 1)));
    }
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++)
        CHECK(psync[i] == SHMEM_SYNC_VALUE);
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
    shmem_free(work);
    shmem_free(psync);
}
#pragma GCC diagnostic pop

/* Every PE adds 1 to a counter on the last PE ROUNDS times by get and put under the lock. */
static void check_lock(int me, int n)
{
    (void)me;
    long *counter = shmem_calloc(1, sizeof(long));
    for (int i = 0; i < ROUNDS; i++) {
        shmem_set_lock(&lock);
        long seen = shmem_long_g(counter, n - 1);
        shmem_long_p(counter, seen + 1, n - 1);
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    CHECK(shmem_long_g(counter, n - 1) == (long)n * ROUNDS);
    shmem_barrier_all();
    shmem_free(counter);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    const char *ppn_text = getenv("OSH_PPN");
    int ppn = ppn_text ? atoi(ppn_text) : n;
    check_shared_team(me, n, ppn);
    check_contexts(me, n, ppn);
    check_signal_and_globals(me, n, ppn);
    check_lock(me, n);
    check_collectives(me, n, ppn);
    if (!failures)
        printf("PASS PE %d\n", me);
    shmem_finalize();
    return failures ? 1 : 0;
}
