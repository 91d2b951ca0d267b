/*
 * osh_many_pes.c - an OpenSHMEM program for jobs with more PEs than CPUs (issue #26).
 *
 *     osh_many_pes [--one-cpu] [--quick]
 *
 * Started by aclshmemrun.  --one-cpu: every PE pins itself to the first CPU it may use
 * before shmem_init, so the whole job shares one CPU: a wait that spins without yielding
 * costs every hand-off a scheduler time slice, and a waiter that is never woken stalls
 * (meson runs it with SHMEM_SLEEP_RECHECK_MS=0 and a short timeout).  It then passes a
 * token around the ring through every wait family (wait_until, the _all, _any and _some
 * vector forms, test, signal_wait_until), meets in barriers, team syncs and small and
 * large collectives, and takes a contended lock, checking every value.
 * --quick: only init, a ring put, a barrier and finalize (the smoke run at 64 PEs).
 * Prints "PASS PE <n>" and exits 0, or says what was wrong and exits 1.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <shmem.h>
#include <shmemx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAPS 3       /* times the token goes around the ring in each family */
#define MEETINGS 20  /* barriers, syncs and collectives */

static int failures, me, npes;

#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            printf("FAIL PE %d line %d: %s (last error: %s)\n", me, __LINE__, #cond,             \
                   shmemx_get_last_error());                                                      \
            failures++;                                                                           \
        }                                                                                         \
    } while (0)

long lock;

/* Pins this process to the first CPU it may run on. */
static int pin_to_one_cpu(void)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return -1;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &allowed)) {
            CPU_SET(cpu, &one);
            return sched_setaffinity(0, sizeof(one), &one);
        }
    }
    return -1;
}

static int next(void)
{
    return (me + 1) % npes;
}

/* The token goes around the ring LAPS times: PE 0 starts each lap, every PE waits for its
 * turn (value lap + 1 in its own word) with wait, then hands it on with an atomic set. */
typedef void (*await_fn)(long *word, long value);

static void ring(const char *family, await_fn await)
{
    long *word = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    for (long lap = 1; lap <= LAPS; lap++) {
        if (me != 0)
            await(word, lap);
        shmem_long_atomic_set(word, lap, next()); /* PE npes-1 hands the lap back to PE 0 */
        if (me == 0)
            await(word, lap);
    }
    CHECK(*word == LAPS);
    if (failures)
        printf("PE %d: the ring of %s failed\n", me, family);
    shmem_barrier_all();
    shmem_free(word);
}

static void await_wait_until(long *word, long value)
{
    shmem_long_wait_until(word, SHMEM_CMP_GE, value);
}

static void await_test(long *word, long value)
{
    while (!shmem_long_test(word, SHMEM_CMP_GE, value))
        ; /* the library's test must let the other PEs run (the job shares one CPU) */
}

static void await_vector_all(long *word, long value)
{
    shmem_long_wait_until_all(word, 1, NULL, SHMEM_CMP_GE, value);
}

static void await_vector_any(long *word, long value)
{
    int status = 0;
    CHECK(shmem_long_wait_until_any(word, 1, &status, SHMEM_CMP_GE, value) == 0);
}

static void await_vector_some(long *word, long value)
{
    size_t index = 99;
    CHECK(shmem_long_wait_until_some(word, 1, &index, NULL, SHMEM_CMP_GE, value) == 1 && index == 0);
}

/* The same ring through put-with-signal: the data word travels with the signal. */
static void signal_ring(void)
{
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    long *data = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    for (uint64_t lap = 1; lap <= LAPS; lap++) {
        long payload = (long)(lap * 1000) + me;
        if (me != 0) {
            shmem_signal_wait_until(sig, SHMEM_CMP_GE, lap);
            CHECK(*data == (long)(lap * 1000) + me - 1);
        }
        shmem_long_put_signal(data, &payload, 1, sig, lap, SHMEM_SIGNAL_SET, next());
        if (me == 0) {
            shmem_signal_wait_until(sig, SHMEM_CMP_GE, lap);
            CHECK(*data == (long)(lap * 1000) + npes - 1);
        }
    }
    shmem_barrier_all();
    shmem_free(data);
    shmem_free(sig);
}

static void meetings(void)
{
    long *src = shmem_malloc(4096 * sizeof(long)), *dst = shmem_malloc(4096 * sizeof(long));
    for (int i = 0; i < 4096; i++)
        src[i] = me + i;
    for (int k = 0; k < MEETINGS; k++) {
        shmem_barrier_all();
        shmem_team_sync(SHMEM_TEAM_WORLD);
        CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 4) == 0); /* in the records */
        CHECK(dst[3] == 3L * npes + (long)npes * (npes - 1) / 2);
        CHECK(shmem_long_max_reduce(SHMEM_TEAM_WORLD, dst, src, 4096) == 0); /* the general way */
        CHECK(dst[4095] == npes - 1 + 4095);
    }
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
}

/* Every PE adds 1 to a counter on the last PE, under the lock, LAPS times. */
static void contended_lock(void)
{
    long *counter = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    for (int i = 0; i < LAPS; i++) {
        shmem_set_lock(&lock);
        shmem_long_p(counter, shmem_long_g(counter, npes - 1) + 1, npes - 1);
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    CHECK(shmem_long_g(counter, npes - 1) == (long)npes * LAPS);
    shmem_barrier_all();
    shmem_free(counter);
}

static void ring_put(void)
{
    long *word = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    shmem_long_p(word, 1000 + me, next());
    shmem_barrier_all();
    CHECK(*word == 1000 + (me + npes - 1) % npes);
    shmem_free(word);
}

int main(int argc, char **argv)
{
    int one_cpu = 0, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--one-cpu") == 0)
            one_cpu = 1;
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: %s [--one-cpu] [--quick]\n", argv[0]);
            return 2;
        }
    }
    if (one_cpu && pin_to_one_cpu() != 0) {
        perror("osh_many_pes: sched_setaffinity");
        return 1;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    ring_put();
    if (!quick) {
        ring("shmem_long_wait_until", await_wait_until);
        ring("shmem_long_test", await_test);
        ring("shmem_long_wait_until_all", await_vector_all);
        ring("shmem_long_wait_until_any", await_vector_any);
        ring("shmem_long_wait_until_some", await_vector_some);
        signal_ring();
        meetings();
        contended_lock();
    }
    if (!failures)
        printf("PASS PE %d\n", me);
    shmem_finalize();
    return failures ? 1 : 0;
}
