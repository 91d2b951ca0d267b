/*
 * osh_nodes.c - an OpenSHMEM program that checks what differs when the PEs sit on several
 * nodes: SHMEM_TEAM_SHARED is this node's PEs, shmem_ptr reaches only them, and contexts
 * (of the world and of a team), AMOs, put with signal, waits, a global variable as a target,
 * a lock and collectives (team-based and over active sets) all work between nodes; and that
 * contexts have channels of their own there (a context's quiet completes what it sent, seen
 * through another channel; a barrier completes while the PEs' contexts lie idle; threads
 * with private contexts; contexts made and destroyed many times leave no file descriptors
 * behind).  Started by oshrun; OSH_PPN is the number of PEs per node (unset: every PE on one
 * node).  Prints "PASS PE <n>" and exits 0, or says what was wrong and exits 1.  Run on one
 * node by meson test osh_nodes, across nodes by tests/multinode/test_openshmem_nodes.py.
 */
#include <dirent.h>
#include <pthread.h>
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

/* A context's quiet completes its puts at the target, also as seen through another
 * channel: 64 KiB (several pieces on the wire) on a private context, its quiet, then a
 * flag through the default context; the target reads the data once the flag is up. */
static void check_context_quiet(int me, int n, int ppn)
{
    enum { COUNT = 8192 };
    long *data = shmem_calloc(COUNT, sizeof(long)), *flag = shmem_calloc(1, sizeof(long));
    long *mine = malloc(COUNT * sizeof(long));
    int ahead = (me + ppn) % n, behind = (me + n - ppn) % n;
    for (int i = 0; i < COUNT; i++)
        mine[i] = (long)me * COUNT + i;
    shmem_barrier_all();
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0);
    shmem_ctx_long_put_nbi(ctx, data, mine, COUNT, ahead);
    shmem_ctx_quiet(ctx);
    shmem_long_atomic_set(flag, 1, ahead);
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
    CHECK(data[0] == (long)behind * COUNT && data[COUNT - 1] == (long)behind * COUNT + COUNT - 1);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    free(mine);
    shmem_free(data);
    shmem_free(flag);
}

/* THREADS threads, each with a private context of its own: each puts its slice of a block
 * to the PE one node ahead and adds to a counter on PE 0, then quiets its context. */
enum { THREADS = 4, SLICE = 256 };

typedef struct {
    long *block, *counter;
    int me, ahead, index, failed;
} slice_job_t;

static void *put_slice(void *arg)
{
    slice_job_t *job = arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        job->failed = 1;
        return NULL;
    }
    long values[SLICE];
    for (int i = 0; i < SLICE; i++)
        values[i] = job->me * 100000L + job->index * 1000L + i;
    shmem_ctx_long_put(ctx, job->block + job->index * SLICE, values, SLICE, job->ahead);
    shmem_ctx_long_atomic_add(ctx, job->counter, 1, 0);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

static void check_threads_with_contexts(int me, int n, int ppn)
{
    long *block = shmem_calloc(THREADS * SLICE, sizeof(long)), *counter = shmem_calloc(1, sizeof(long));
    int behind = (me + n - ppn) % n;
    shmem_barrier_all();
    pthread_t thread[THREADS];
    slice_job_t job[THREADS];
    for (int t = 0; t < THREADS; t++) {
        job[t] = (slice_job_t){block, counter, me, (me + ppn) % n, t, 0};
        CHECK(pthread_create(&thread[t], NULL, put_slice, &job[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(thread[t], NULL);
        CHECK(!job[t].failed);
    }
    shmem_barrier_all();
    for (int t = 0; t < THREADS; t++)
        CHECK(block[t * SLICE + SLICE - 1] == behind * 100000L + t * 1000L + SLICE - 1);
    if (me == 0)
        CHECK(*counter == (long)n * THREADS);
    shmem_barrier_all();
    shmem_free(block);
    shmem_free(counter);
}

static int open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    int count = 0;
    for (struct dirent *e = dir ? readdir(dir) : NULL; e; e = readdir(dir))
        count += e->d_name[0] != '.';
    if (dir)
        closedir(dir);
    return count;
}

/* Round after round, a new context writes to the PE one node ahead and is quieted, and then
 * every PE meets in a barrier while the contexts lie idle: the barrier's quiet (of the
 * default context) must complete without them.  On the RMA plane a quiet used to flush the
 * whole UCX worker, which also waited for the endpoint UCX had made there for the PE
 * behind's context, and that finishes connecting only when the PE behind progresses its
 * context, not while it waits in the barrier: 10 of 10 jobs of 20 such rounds hung. */
static void check_barriers_beside_idle_contexts(int me, int n, int ppn)
{
    enum { CONTEXT_ROUNDS = 20 };
    long *box = shmem_calloc(1, sizeof(long));
    int ahead = (me + ppn) % n, behind = (me + n - ppn) % n;
    for (int r = 0; r < CONTEXT_ROUNDS; r++) {
        shmem_ctx_t ctx;
        CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0);
        shmem_ctx_long_p(ctx, box, 1000L * r + me, ahead);
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        CHECK(*box == 1000L * r + behind);
        shmem_barrier_all(); /* box is read before the next round writes it */
        shmem_ctx_destroy(ctx);
    }
    shmem_free(box);
}

/* Contexts made, used across nodes and destroyed again and again: every one's worker,
 * sockets and endpoints go with it, here and at the PE it wrote to. */
static void check_context_churn(int me, int n, int ppn)
{
    enum { CYCLES = 30 };
    long *box = shmem_calloc(1, sizeof(long));
    int ahead = (me + ppn) % n;
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0); /* the first one may set up what stays */
    shmem_ctx_long_p(ctx, box, 1, ahead);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    int before = open_fds();
    for (int i = 0; i < CYCLES; i++) {
        CHECK(shmem_ctx_create(0, &ctx) == 0);
        shmem_ctx_long_atomic_add(ctx, box, 1, ahead);
        shmem_ctx_quiet(ctx);
        if (i == 0 && ppn < n) /* across nodes: a worker of its own (its sockets, event fds) */
            CHECK(open_fds() > before);
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    CHECK(*box == 1 + CYCLES);
    int after = open_fds();
    if (after > before + 2)
        printf("PE %d: %d file descriptors open before %d context cycles, %d after\n", me, before, CYCLES, after);
    CHECK(after <= before + 2);
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
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(provided == SHMEM_THREAD_MULTIPLE);
    const char *ppn_text = getenv("OSH_PPN");
    int ppn = ppn_text ? atoi(ppn_text) : n;
    check_shared_team(me, n, ppn);
    check_contexts(me, n, ppn);
    check_barriers_beside_idle_contexts(me, n, ppn);
    check_context_quiet(me, n, ppn);
    check_threads_with_contexts(me, n, ppn);
    check_context_churn(me, n, ppn);
    check_signal_and_globals(me, n, ppn);
    check_lock(me, n);
    check_collectives(me, n, ppn);
    if (!failures)
        printf("PASS PE %d\n", me);
    shmem_finalize();
    return failures ? 1 : 0;
}
