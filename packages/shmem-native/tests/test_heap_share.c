/*
 * test_heap_share.c - how the PEs of one node reach each other's segments (src/mem/heap.c):
 *  - through /proc/<pid>/fd when the kernel lets them (the usual case): no PE asks a peer
 *    over its hand-off socket;
 *  - over the hand-off socket for a PE whose files /proc will not give (a process that is
 *    not dumpable), for every PE and for one PE of a job;
 *  - every peer's heaps sit apart from the PE's own (not a multiple of 1 MiB away, page
 *    offsets kept), mapped whole and writable, and data moves between all pairs.
 * What a PE did is read from its INFO line "shares memory with N other PE(s) on this node
 * (K over the hand-off socket)".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024ull * 1024)

/* ---- what init said ------------------------------------------------------------------------ */
static int g_shared = -1, g_fallbacks = -1;

static void logger(int level, const char *msg)
{
    (void)level;
    const char *at = strstr(msg, "shares memory with");
    if (at && sscanf(at, "shares memory with %d other PE(s) on this node (%d over the hand-off socket)",
                     &g_shared, &g_fallbacks) != 2)
        g_shared = g_fallbacks = -2; /* the line is there but says something else */
}

/* Inits with the INFO line captured; checks how many peers came over the socket. */
static void init_expecting(int n, int fallbacks)
{
    EXPECT_EQ(aclshmemx_set_extern_logger(logger), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_set_log_level(1), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_init(), 0);
    aclshmemx_set_log_level(2);
    aclshmemx_set_extern_logger(NULL);
    EXPECT_EQ(g_shared, n - 1);
    EXPECT_EQ(g_fallbacks, fallbacks);
}

/* Every PE stores into every peer's heap through aclshmem_ptr and reads what came. */
static void all_pairs_check(int me, int n)
{
    int32_t *slots = aclshmem_calloc((size_t)n, sizeof(int32_t));
    ASSERT_NOT_NULL(slots);
    aclshmem_barrier_all();
    for (int q = 0; q < n; q++) {
        int32_t *r = aclshmem_ptr(slots, q);
        ASSERT_NOT_NULL(r);
        ((volatile int32_t *)r)[me] = 1000 * me + q;
    }
    aclshmem_barrier_all();
    for (int p = 0; p < n; p++)
        EXPECT_EQ(((volatile int32_t *)slots)[p], 1000 * p + me);
    aclshmem_barrier_all();
    aclshmem_free(slots);
}

/* ---- /proc ---------------------------------------------------------------------------------- */
static int t_via_proc(int me, int n)
{
    init_expecting(n, 0);
    all_pairs_check(me, n);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- the hand-off socket ----------------------------------------------------------------------
 * A process that is not dumpable keeps its /proc/<pid>/fd from other processes of its user
 * (see harness_drop_ptrace_capability). */
static int t_no_proc(int me, int n)
{
    harness_drop_ptrace_capability();
    EXPECT_EQ(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), 0);
    init_expecting(n, n - 1);
    all_pairs_check(me, n);
    harness_ring_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* Only PE 1 hides its files: the others ask it over its socket, it opens theirs. */
static int t_one_without_proc(int me, int n)
{
    harness_drop_ptrace_capability(); /* on every PE, so that their capabilities stay alike */
    if (me == 1)
        EXPECT_EQ(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), 0);
    init_expecting(n, me == 1 ? 0 : 1);
    all_pairs_check(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* ---- where the peers' segments are -------------------------------------------------------------- */

/* The permissions /proc/self/maps gives the page at addr ("rw-s", "---p"), or "" if unmapped. */
static void protection_at(const void *addr, char perms[5])
{
    strcpy(perms, "");
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    unsigned long lo, hi;
    char p[5];
    while (fscanf(f, "%lx-%lx %4s%*[^\n]", &lo, &hi, p) == 3) {
        if ((uintptr_t)addr >= lo && (uintptr_t)addr < hi) {
            strcpy(perms, p);
            break;
        }
    }
    fclose(f);
}

static int t_layout(int me, int n)
{
    uint64_t heap = harness_current_opts()->heap_size ? harness_current_opts()->heap_size : HARNESS_DEFAULT_HEAP;
    const aclshmem_mem_type_t kinds[] = {DEVICE_SIDE, HOST_SIDE};
    for (int k = 0; k < 2; k++) {
        char *base = aclshmemx_get_heap_base(kinds[k]);
        ASSERT_NOT_NULL(base);
        for (int q = 0; q < n; q++) {
            char *r = aclshmem_ptr(base, q);
            ASSERT_NOT_NULL(r);
            if (q == me) {
                EXPECT(r == base);
                continue;
            }
            uintptr_t apart = (uintptr_t)(r > base ? r - base : base - r);
            EXPECT_EQ(apart % 4096, 0);
            EXPECT_NE(apart % MiB, 0);
            for (int o = 0; o < q; o++)
                EXPECT(o == me || aclshmem_ptr(base, o) != r);
            char first[5], last[5];
            protection_at(r, first);
            protection_at(r + heap - 1, last);
            EXPECT(strcmp(first, "rw-s") == 0 && strcmp(last, "rw-s") == 0);
        }
    }
    all_pairs_check(me, n);
    return 0;
}

static const harness_case cases[] = {
    {"via_proc", t_via_proc, {.no_init = 1, .no_uid = 1}, {2, 4, 8}},
    {"no_proc", t_no_proc, {.no_init = 1, .no_uid = 1}, {2, 4}},
    {"one_without_proc", t_one_without_proc, {.no_init = 1, .no_uid = 1}, {3, 4}},
    {"layout", t_layout, {0}, {2, 4, 8}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
