/*
 * test_heap_share.c - how the PEs of one node reach each other's segments (src/mem/heap.c):
 *  - through /proc/<pid>/fd when the kernel lets them (the usual case): no PE asks a peer
 *    over its hand-off socket;
 *  - over the hand-off socket for a PE whose files /proc will not give (a process that is
 *    not dumpable), for every PE and for one PE of a job;
 *  - every peer's heaps sit apart from the PE's own (not a multiple of 1 MiB away, page
 *    offsets kept), mapped whole and writable, and data moves between all pairs.
 *  - which PEs may compete for a PE's CPUs, by every PE's affinity: PEs bound one to a CPU
 *    spin in their waits, PEs bound to one CPU (or more PEs than CPUs) yield at once.
 * What a PE did is read from its INFO lines "shares memory with N other PE(s) on this node
 * (K over the hand-off socket)" and "may share C CPU(s) with P PE(s) ...: waits W".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1024ull * 1024)

/* ---- what init said ------------------------------------------------------------------------ */
static int g_shared = -1, g_fallbacks = -1;
static int g_cpus = -1, g_cpu_sharers = -1;
static char g_waits[32];

static void logger(int level, const char *msg)
{
    (void)level;
    const char *at = strstr(msg, "shares memory with");
    if (at && sscanf(at, "shares memory with %d other PE(s) on this node (%d over the hand-off socket)",
                     &g_shared, &g_fallbacks) != 2)
        g_shared = g_fallbacks = -2; /* the line is there but says something else */
    at = strstr(msg, "may share");
    if (at && sscanf(at, "may share %d CPU(s) with %d PE(s) of this machine, itself included: waits %31[a-z ]",
                     &g_cpus, &g_cpu_sharers, g_waits) != 3)
        g_cpus = g_cpu_sharers = -2;
}

/* Inits with init's INFO lines captured (logger). */
static void init_logged(void)
{
    EXPECT_EQ(aclshmemx_set_extern_logger(logger), ACLSHMEM_SUCCESS);
    EXPECT_EQ(aclshmemx_set_log_level(1), ACLSHMEM_SUCCESS);
    ASSERT_EQ(harness_init(), 0);
    aclshmemx_set_log_level(2);
    aclshmemx_set_extern_logger(NULL);
}

/* Inits; checks how many peers came over the socket. */
static void init_expecting(int n, int fallbacks)
{
    init_logged();
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

/* ---- who competes for a CPU ------------------------------------------------------------------ */

/* The CPUs this process may use, in order; their count. */
static int allowed_cpus(int cpus[CPU_SETSIZE])
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

static void bind_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ASSERT_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* Inits, then checks the CPUs and PEs init counted and how the waits poll. */
static void init_expecting_cpus(int cpus, int sharers)
{
    init_logged();
    EXPECT_EQ(g_cpus, cpus);
    EXPECT_EQ(g_cpu_sharers, sharers);
    EXPECT(strcmp(g_waits, sharers > cpus ? "yield at once" : "spin first") == 0);
}

/* A barrier and a ping-pong of the pairs (0, 1), (2, 3), ...: waits that spin or yield end. */
static void waits_end(int me, int n)
{
    int64_t *word = aclshmem_calloc(1, sizeof(int64_t));
    ASSERT_NOT_NULL(word);
    aclshmem_barrier_all();
    int partner = me ^ 1;
    for (int64_t i = 1; partner < n && i <= 1000; i++) {
        if (me % 2 == 0)
            aclshmem_int64_p(word, i, partner);
        aclshmem_int64_wait_until(word, ACLSHMEM_CMP_GE, i);
        if (me % 2 == 1)
            aclshmem_int64_p(word, i, partner);
    }
    aclshmem_barrier_all();
    aclshmem_free(word);
}

/* PE i on the i-th allowed CPU (modulo their count): the PEs on one CPU compete, alone on
 * it a PE has its CPU (two PEs on a 2-CPU machine: one CPU each, no yields; this counted
 * the process's one CPU against the machine's 2 PEs and yielded at every look). */
static int t_cpu_each(int me, int n)
{
    int cpus[CPU_SETSIZE], count = allowed_cpus(cpus);
    ASSERT(count > 0);
    bind_to(cpus[me % count]);
    int sharers = 0;
    for (int q = 0; q < n; q++)
        sharers += q % count == me % count;
    init_expecting_cpus(1, sharers);
    waits_end(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* Every PE on the first allowed CPU: all compete for it. */
static int t_one_cpu(int me, int n)
{
    int cpus[CPU_SETSIZE];
    ASSERT(allowed_cpus(cpus) > 0);
    bind_to(cpus[0]);
    init_expecting_cpus(1, n);
    waits_end(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* Unbound: every PE competes for every allowed CPU. */
static int t_cpus_unbound(int me, int n)
{
    int cpus[CPU_SETSIZE], count = allowed_cpus(cpus);
    init_expecting_cpus(count, n);
    waits_end(me, n);
    EXPECT_EQ(aclshmem_finalize(), 0);
    return 0;
}

/* PE 0 on the first CPU, the others unbound: PE 0 overlaps them, so all compete together
 * for every CPU (a chain of overlaps counts as much as a direct one). */
static int t_one_bound(int me, int n)
{
    int cpus[CPU_SETSIZE], count = allowed_cpus(cpus);
    ASSERT(count > 0);
    if (me == 0)
        bind_to(cpus[0]);
    init_expecting_cpus(count, n);
    waits_end(me, n);
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
    {"cpu_each", t_cpu_each, {.no_init = 1}, {2, 3, 4}},
    {"one_cpu", t_one_cpu, {.no_init = 1}, {2, 4}},
    {"cpus_unbound", t_cpus_unbound, {.no_init = 1}, {2, 4}},
    {"one_bound", t_one_bound, {.no_init = 1}, {3}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
