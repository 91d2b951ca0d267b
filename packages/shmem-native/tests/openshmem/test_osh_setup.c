/*
 * test_osh_setup.c - the first slice of the OpenSHMEM API (shmem.h) on real PEs: shmem_init
 * from the launcher's variables and without a launcher (a job of one PE), the PE numbers,
 * version and name, shmem_malloc/free, putmem/getmem around a ring, shmem_barrier_all, and
 * the errors of bad input and of a bad launcher environment.
 */
#define _GNU_SOURCE
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

static const harness_case cases[] = {
    { "hello", t_hello, OSH_OPTS, OSH_PES },
    { "ring", t_ring, OSH_OPTS, OSH_PES },
    { "without_launcher", t_without_launcher, { .no_init = 1, .no_uid = 1 }, { 1 } },
    { "bad_launcher_env", t_bad_launcher_env, { .no_init = 1, .no_uid = 1, .expect_status = 1 }, { 1 } },
    { "bad_input", t_bad_input, OSH_OPTS, { 2 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
