/*
 * test_osh_locks.c - OpenSHMEM distributed locks on real PEs: mutual exclusion under
 * contention (a read-modify-write by get and put that loses updates without the lock),
 * test_lock, fairness (PEs get the lock in the order they asked for it), and misuse: a lock
 * cleared by a PE that does not hold it, a long that holds no lock state, an address that is
 * not symmetric.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

#define ROUNDS 200

/* Every PE adds 1 to PE 0's counter ROUNDS times by a get and a put under the lock. */
static int t_contention(int me, int n)
{
    (void)me;
    osh_test_init();
    long *lock = shmem_calloc(1, sizeof(long));
    long *counter = shmem_calloc(1, sizeof(long));
    ASSERT_NOT_NULL(lock);
    ASSERT_NOT_NULL(counter);
    for (int i = 0; i < ROUNDS; i++) {
        shmem_set_lock(lock);
        long seen = shmem_long_g(counter, 0);
        sched_yield(); /* invites the others in, which the lock must keep out */
        shmem_long_p(counter, seen + 1, 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    EXPECT_EQ(shmem_long_g(counter, 0), (long)n * ROUNDS);
    shmem_barrier_all();
    shmem_free(counter);
    shmem_free(lock);
    shmem_finalize();
    return 0;
}

/* test_lock fails while another PE holds the lock, and takes it once it is free. */
static int t_test_lock(int me, int n)
{
    osh_test_init();
    long *lock = shmem_calloc(1, sizeof(long));
    int *taken = shmem_calloc(1, sizeof(int));
    ASSERT_NOT_NULL(lock);
    ASSERT_NOT_NULL(taken);
    if (me == 0)
        EXPECT_EQ(shmem_test_lock(lock), 0);
    shmem_barrier_all();
    if (me != 0)
        EXPECT_EQ(shmem_test_lock(lock), 1);
    shmem_barrier_all();
    if (me == 0)
        shmem_clear_lock(lock);
    shmem_barrier_all();
    while (shmem_test_lock(lock) != 0)
        ;
    shmem_int_atomic_inc(taken, 0);
    shmem_clear_lock(lock);
    shmem_barrier_all();
    if (me == 0)
        EXPECT_EQ(*taken, n);
    shmem_free(taken);
    shmem_free(lock);
    shmem_finalize();
    return 0;
}

/* PE 0 holds the lock; PE 1 asks for it, then (once its request is in the lock) PE 2 does:
 * PE 1 must get it first, and neither before PE 0 let it go.  A request is in the lock when
 * the lock's word on PE 0 changes. */
static void wait_for_change(long *lock, long *seen)
{
    long now;
    while ((now = shmem_long_atomic_fetch(lock, 0)) == *seen)
        harness_sleep_ms(1);
    *seen = now;
}

static int t_fair(int me, int n)
{
    (void)n;
    osh_test_init();
    long *lock = shmem_calloc(1, sizeof(long));
    long *order = shmem_calloc(1, sizeof(long));
    long *go = shmem_calloc(1, sizeof(long));
    long *place = shmem_calloc(3, sizeof(long));
    long *released = shmem_calloc(1, sizeof(long));
    ASSERT(lock && order && go && place && released);
    if (me == 0)
        shmem_set_lock(lock);
    long seen = shmem_long_atomic_fetch(lock, 0);
    shmem_barrier_all();
    if (me == 0) {
        wait_for_change(lock, &seen); /* PE 1 is waiting */
        shmem_long_p(go, 1, 2);
        wait_for_change(lock, &seen); /* PE 2 is waiting too */
        *released = 1;
        shmem_clear_lock(lock);
    } else if (me == 1 || me == 2) {
        if (me == 2)
            shmem_long_wait_until(go, SHMEM_CMP_EQ, 1);
        shmem_set_lock(lock);
        EXPECT_EQ(shmem_long_g(released, 0), 1);
        shmem_long_p(&place[me], shmem_long_atomic_fetch_inc(order, 0), 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    if (me == 0) {
        EXPECT_EQ(place[1], 0);
        EXPECT_EQ(place[2], 1);
    }
    shmem_free(released);
    shmem_free(place);
    shmem_free(go);
    shmem_free(order);
    shmem_free(lock);
    shmem_finalize();
    return 0;
}

static int t_misuse(int me, int n)
{
    (void)n;
    osh_test_init();
    long *lock = shmem_calloc(2, sizeof(long));
    ASSERT_NOT_NULL(lock);
    long local = 0;
    OSH_EXPECT_REJECTED(shmem_clear_lock(lock), "does not hold the lock");
    shmem_barrier_all();
    if (me == 0) {
        shmem_set_lock(lock);
        shmem_barrier_all();
        shmem_barrier_all();
        shmem_clear_lock(lock);
    } else {
        shmem_barrier_all();
        OSH_EXPECT_REJECTED(shmem_clear_lock(lock), "another PE does");
        shmem_barrier_all();
    }
    /* A long that holds what no lock can: used as something else. */
    if (me == 0)
        lock[1] = 0x7777;
    shmem_barrier_all();
    OSH_EXPECT_REJECTED(shmem_set_lock(&lock[1]), "no state of a lock");
    OSH_EXPECT_REJECTED(EXPECT_EQ(shmem_test_lock(&lock[1]), 1), "shmem_test_lock");
    OSH_EXPECT_REJECTED(shmem_set_lock(&local), "shmem_set_lock");
    shmem_barrier_all();
    shmem_free(lock);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "contention", t_contention, OSH_OPTS, OSH_PES },
    { "test_lock", t_test_lock, OSH_OPTS, OSH_PES },
    { "fair", t_fair, OSH_OPTS, { 3, 4 } },
    { "misuse", t_misuse, OSH_OPTS, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
