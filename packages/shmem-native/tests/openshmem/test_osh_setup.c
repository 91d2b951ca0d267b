/*
 * test_osh_setup.c - the first slice of the OpenSHMEM API (shmem.h) on real PEs: shmem_init
 * from the launcher's variables and without a launcher (a job of one PE), the PE numbers,
 * version and name, the memory management calls, putmem/getmem around a ring,
 * shmem_barrier_all, the deprecated active-set barrier and sync, global_exit, pcontrol, and
 * the errors of bad input and of a bad launcher environment.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osh_test.h"

#define RING_BYTES 4096

static int t_hello(int me, int n)
{
    osh_test_init();
    EXPECT_EQ(shmem_my_pe(), me);
    EXPECT_EQ(shmem_n_pes(), n);
    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    EXPECT_EQ(major, 1);
    EXPECT_EQ(minor, 5);
    EXPECT_EQ(SHMEM_MAJOR_VERSION, 1);
    EXPECT_EQ(SHMEM_MINOR_VERSION, 5);
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    EXPECT(strcmp(name, SHMEM_VENDOR_STRING) == 0);
    shmem_finalize();
    return 0;
}

/* Every PE puts RING_BYTES into the next one and gets them back from there. */
static int t_ring(int me, int n)
{
    osh_test_init();
    unsigned char *buf = shmem_malloc(RING_BYTES);
    ASSERT_NOT_NULL(buf);
    unsigned char mine[RING_BYTES], back[RING_BYTES];
    for (int i = 0; i < RING_BYTES; i++)
        mine[i] = (unsigned char)(me * 31 + i);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    shmem_putmem(buf, mine, RING_BYTES, next);
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < RING_BYTES; i++)
        bad += buf[i] != (unsigned char)(prev * 31 + i);
    EXPECT_EQ(bad, 0);
    shmem_getmem(back, buf, RING_BYTES, next);
    EXPECT(memcmp(back, mine, RING_BYTES) == 0);
    shmem_barrier_all();
    EXPECT_NULL(shmem_malloc(0));
    shmem_free(buf);
    shmem_free(NULL);
    shmem_finalize();
    return 0;
}

static void unset_launcher(void)
{
    unsetenv("SHMEM_RUN_UID");
    unsetenv("SHMEM_RUN_PE");
    unsetenv("SHMEM_RUN_NPES");
}

/* No launcher: a job of one PE, as under other OpenSHMEM implementations. */
static int t_without_launcher(int me, int n)
{
    (void)me;
    (void)n;
    unset_launcher();
    shmem_init();
    EXPECT_EQ(shmem_my_pe(), 0);
    EXPECT_EQ(shmem_n_pes(), 1);
    long *x = shmem_malloc(sizeof(long));
    ASSERT_NOT_NULL(x);
    long v = 42, w = 0;
    shmem_putmem(x, &v, sizeof v, 0);
    shmem_getmem(&w, x, sizeof w, 0);
    EXPECT_EQ(w, 42);
    shmem_free(x);
    shmem_finalize();
    return 0;
}

/* A PE number the launcher could not have set: shmem_init says which variable and exits 1. */
static int t_bad_launcher_env(int me, int n)
{
    (void)me;
    (void)n;
    setenv("SHMEM_RUN_UID", "00", 1);
    setenv("SHMEM_RUN_PE", "5", 1);
    setenv("SHMEM_RUN_NPES", "2", 1);
    shmem_init();
    harness_report(__FILE__, __LINE__, "shmem_init returned after a bad SHMEM_RUN_PE");
    return 1;
}

static int t_bad_input(int me, int n)
{
    (void)me;
    EXPECT_EQ(shmem_my_pe(), -1); /* before init */
    osh_test_init();
    char *buf = shmem_malloc(64);
    ASSERT_NOT_NULL(buf);
    char local[64] = {0};
    OSH_EXPECT_REJECTED(shmem_putmem(buf, local, 8, n), "shmem_putmem");
    OSH_EXPECT_REJECTED(shmem_putmem(buf, local, 8, -1), "PE -1");
    OSH_EXPECT_REJECTED(shmem_getmem(local, local, 8, 0), "not inside a symmetric heap");
    OSH_EXPECT_REJECTED(shmem_putmem(buf, local, 65 + 64 * 1024 * 1024, 0), "shmem_putmem");
    OSH_EXPECT_REJECTED(shmem_free(local), "shmem_free");
    OSH_EXPECT_OK(shmem_putmem(buf, local, 0, 0));
    shmem_barrier_all();
    shmem_free(buf);
    shmem_finalize();
    OSH_EXPECT_REJECTED(shmem_putmem(buf, local, 8, 0), "not initialized");
    return 0;
}

/* calloc zeroes, align aligns, realloc keeps the contents (growing, shrinking, from NULL, to
 * 0), malloc_with_hints takes the hints it knows; every PE makes the same calls. */
static int t_memory(int me, int n)
{
    (void)n;
    osh_test_init();
    int *zeros = shmem_calloc(100, sizeof(int));
    ASSERT_NOT_NULL(zeros);
    int bad = 0;
    for (int i = 0; i < 100; i++)
        bad += zeros[i] != 0;
    EXPECT_EQ(bad, 0);
    void *aligned = shmem_align(4096, 100);
    ASSERT_NOT_NULL(aligned);
    EXPECT_EQ((uintptr_t)aligned % 4096, 0);
    char *grown = shmem_realloc(NULL, 64);
    ASSERT_NOT_NULL(grown);
    for (int i = 0; i < 64; i++)
        grown[i] = (char)(me + i);
    grown = shmem_realloc(grown, 100000);
    ASSERT_NOT_NULL(grown);
    bad = 0;
    for (int i = 0; i < 64; i++)
        bad += grown[i] != (char)(me + i);
    grown[99999] = 1;
    char *shrunk = shmem_realloc(grown, 32);
    ASSERT_NOT_NULL(shrunk);
    for (int i = 0; i < 32; i++)
        bad += shrunk[i] != (char)(me + i);
    EXPECT_EQ(bad, 0);
    /* The new block is symmetric: the next PE's copy is reachable. */
    shmem_barrier_all();
    EXPECT_EQ(shmem_char_g(&shrunk[3], (me + 1) % n), (char)((me + 1) % n + 3));
    EXPECT_NULL(shmem_realloc(shrunk, 0));
    void *hinted = shmem_malloc_with_hints(256, SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
    ASSERT_NOT_NULL(hinted);
    OSH_EXPECT_REJECTED(EXPECT_NULL(shmem_malloc_with_hints(256, 1L << 20)), "hints");
    OSH_EXPECT_REJECTED(EXPECT_NULL(shmem_calloc(SIZE_MAX, 2)), "overflows");
    OSH_EXPECT_REJECTED(EXPECT_NULL(shmem_align(3, 64)), "power of two");
    OSH_EXPECT_REJECTED(EXPECT_NULL(shmem_malloc(1ull << 40)), "shmem_malloc");
    OSH_EXPECT_OK(EXPECT_NULL(shmem_calloc(0, 8)));
    shmem_free(hinted);
    shmem_free(aligned);
    shmem_free(zeros);
    shmem_finalize();
    return 0;
}

/* The first PE to call shmem_global_exit ends every PE with its status, also PEs that wait
 * in a barrier for it. */
static int t_global_exit(int me, int n)
{
    osh_test_init();
    shmem_barrier_all();
    if (me == n - 1) {
        harness_sleep_ms(200);
        shmem_global_exit(3);
    }
    shmem_barrier_all(); /* blocked here when the exit arrives */
    for (int i = 0; i < 100; i++)
        harness_sleep_ms(100);
    harness_report(__FILE__, __LINE__, "still alive 10 s after shmem_global_exit");
    return 1;
}

/* The deprecated active-set barrier and sync: the even PEs, then every PE, over pSync
 * arrays that every call leaves as it found them. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static int t_active_set(int me, int n)
{
    osh_test_init();
    long *psync = shmem_malloc(2 * SHMEM_BARRIER_SYNC_SIZE * sizeof(long));
    int *arrived = shmem_calloc(1, sizeof(int));
    ASSERT(psync && arrived);
    for (int i = 0; i < 2 * SHMEM_BARRIER_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    int evens = (n + 1) / 2;
    for (int round = 1; round <= 4; round++) {
        if (me % 2 == 0) {
            shmem_int_atomic_inc(arrived, 0);
            shmem_barrier(0, 1, evens, psync);
            if (me == 0)
                EXPECT_EQ(shmem_int_atomic_fetch(arrived, 0), round * evens);
            shmem_sync(0, 1, evens, psync);
        }
        shmem_sync(0, 0, n, psync + SHMEM_BARRIER_SYNC_SIZE);
    }
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < 2 * SHMEM_BARRIER_SYNC_SIZE; i++)
        bad += psync[i] != SHMEM_SYNC_VALUE;
    EXPECT_EQ(bad, 0);
    OSH_EXPECT_REJECTED(shmem_barrier(0, 0, n + 1, psync), "active set");
    if (me == 1)
        OSH_EXPECT_REJECTED(shmem_barrier(0, 1, evens, psync), "not in the active set");
    OSH_EXPECT_REJECTED(shmem_sync(me, 0, 1, NULL), "NULL");
    shmem_pcontrol(1);
    shmem_pcontrol(0, "any", 2);
    shmem_barrier_all();
    shmem_free(arrived);
    shmem_free(psync);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "hello", t_hello, OSH_OPTS, OSH_PES },
    { "ring", t_ring, OSH_OPTS, OSH_PES },
    { "without_launcher", t_without_launcher, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "bad_launcher_env", t_bad_launcher_env, { .no_init = 1, .no_uid = 1, .expect_status = 1 }, { 1 } },
    { "bad_input", t_bad_input, OSH_OPTS, { 2 } },
    { "memory", t_memory, OSH_OPTS, OSH_PES },
    { "global_exit", t_global_exit, { .no_init = 1, .expect_status = 3 }, OSH_PES },
    { "active_set", t_active_set, OSH_OPTS, OSH_PES },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
