/*
 * test_osh_profiling.c - the profiling interface of OpenSHMEM 1.5 (section 10) on real PEs.
 * This program plays the profiler: it defines shmem_long_put and shmem_ctx_long_put itself,
 * counts the calls and the elements, and hands each call to the library through its
 * profiling name (pshmem.h).  The program's calls, by the typed name or the C11 generic one,
 * must reach the profiler and still move the data; functions the profiler leaves alone
 * (shmem_int_p) are the library's, and pshmem_ names reach the same code.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include <pshmem.h>

#include "osh_test.h"

static int puts_seen;      /* calls of shmem_long_put and shmem_ctx_long_put */
static size_t longs_moved; /* their elements */

void shmem_long_put(long *dest, const long *source, size_t nelems, int pe)
{
    puts_seen++;
    longs_moved += nelems;
    pshmem_long_put(dest, source, nelems, pe);
}

void shmem_ctx_long_put(shmem_ctx_t ctx, long *dest, const long *source, size_t nelems, int pe)
{
    puts_seen++;
    longs_moved += nelems;
    pshmem_ctx_long_put(ctx, dest, source, nelems, pe);
}

static int t_intercepted(int me, int n)
{
    osh_test_init();
    shmem_pcontrol(1); /* "profile from here": a no-op in the library, but it must exist */
    long *dest = shmem_calloc(8, sizeof(long));
    int *flag = shmem_calloc(1, sizeof(int));
    ASSERT_NOT_NULL(dest);
    ASSERT_NOT_NULL(flag);
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    long mine[8];
    for (int i = 0; i < 8; i++)
        mine[i] = 100L * me + i;
    shmem_ctx_t ctx;
    ASSERT_EQ(shmem_ctx_create(0, &ctx), 0);
    shmem_long_put(dest, mine, 3, next);             /* the typed name */
    shmem_put(&dest[3], &mine[3], 2, next);          /* the generic name picks shmem_long_put */
    shmem_put(ctx, &dest[5], &mine[5], 3, next);     /* ... and shmem_ctx_long_put */
    pshmem_int_p(flag, 1, next);                     /* a profiling name the profiler leaves alone */
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    shmem_barrier_all();
    EXPECT_EQ(puts_seen, 3);
    EXPECT_EQ(longs_moved, 8);
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(dest[i], 100L * prev + i);
    EXPECT_EQ(*flag, 1);
    EXPECT_EQ(pshmem_n_pes(), shmem_n_pes());
    EXPECT_EQ(pshmem_my_pe(), me);
    pshmem_pcontrol(0);
    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_free(flag);
    shmem_free(dest);
    shmem_finalize();
    return 0;
}

static const harness_case cases[] = {
    { "intercepted", t_intercepted, OSH_OPTS, OSH_PES },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
