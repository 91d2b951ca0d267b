/*
 * mn_globals.c - the multi-node suite's case globals (mn_suite_data only, built with
 * -DMN_SHARE_DATA): the program's own global and static data as targets across nodes.  The
 * globals below are those targets, in the program's data segment: keep their linkage (global
 * or static) and initial values as they are, they are part of what the case tests.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem.h"
#include "mn_suite.h"

/* ---- the program's globals as targets (mn_suite_data only) ------------------------------ */
#ifdef MN_SHARE_DATA
#define G_CAP (MiB + 64)
unsigned char g_bytes[G_CAP];                     /* .bss */
int64_t g_table[8] = {1, 2, 3, 5, 8, 13, 21, 34}; /* .data */
static int64_t g_counter, g_cswap, g_flag;       /* .bss statics */
static int32_t g_sig;

/* putmem/getmem of 1 byte to 1 MiB into and out of a peer's global array, guards kept. */
static void globals_putget(unsigned char *loc)
{
    static const size_t sizes[] = {1, 8, 4095, 65536 + 5, MiB};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t len = sizes[k], off = 1 + k;
        int salt = 100 + (int)k;
        memset(g_bytes, 0xA5, G_CAP);
        fill(loc, len, me, salt);
        aclshmem_barrier_all();
        aclshmem_putmem(g_bytes + off, loc, len, peer);
        aclshmem_barrier_all();
        EXPECT_PAT("putmem into a global", g_bytes + off, len, 0, src, salt);
        CHECK(g_bytes[off - 1] == 0xA5 && g_bytes[off + len] == 0xA5, "putmem of %zu: a guard changed", len);
        fill(g_bytes + off, len, me, salt + 50);
        aclshmem_barrier_all();
        aclshmem_getmem(loc, g_bytes + off, len, peer);
        EXPECT_PAT("getmem from a global", loc, len, 0, peer, salt + 50);
        aclshmem_barrier_all();
    }
}

void case_globals(void)
{
    static const int64_t initial[8] = {1, 2, 3, 5, 8, 13, 21, 34};
    CHECK(memcmp(g_table, initial, sizeof initial) == 0, "init changed the initialised globals");
    const char *one_node = getenv("MN_ONE_NODE");
    int all_here = one_node && strcmp(one_node, "1") == 0;
    for (int q = 0; q < n; q++) /* same-node peers' globals are mapped here, the others' not */
        CHECK((all_here || q / ppn == me / ppn) == (aclshmem_ptr(g_table, q) != NULL), "aclshmem_ptr(g_table, %d)", q);
    unsigned char *loc = xmalloc(G_CAP);
    globals_putget(loc);
    free(loc);
    /* p and g on initialised data */
    g_table[1] = 100 + me;
    aclshmem_barrier_all();
    CHECK(aclshmem_int64_g(&g_table[1], peer) == 100 + peer, "g of a peer's global");
    aclshmem_int64_p(&g_table[2], 200 + me, peer);
    aclshmem_barrier_all();
    CHECK(g_table[2] == 200 + src, "p into a global: %lld, want %d", (long long)g_table[2], 200 + src);
    /* AMOs on static words: every PE adds to PE 0's; one compare_swap of n wins */
    for (int i = 0; i < 100; i++)
        aclshmem_int64_atomic_add(&g_counter, me + 1, 0);
    int64_t old = aclshmem_int64_atomic_compare_swap(&g_cswap, 0, 1000 + me, n - 1);
    aclshmem_barrier_all();
    int64_t total = aclshmem_int64_atomic_fetch(&g_counter, 0), winner = aclshmem_int64_atomic_fetch(&g_cswap, n - 1);
    CHECK(total == 50LL * n * (n + 1), "atomic_add to a static: %lld, want %lld", (long long)total, 50LL * n * (n + 1));
    CHECK(winner >= 1000 && winner < 1000 + n && (old == 0) == (winner == 1000 + me), "compare_swap: %lld",
          (long long)winner);
    /* put-with-signal into globals, waited for on a static signal word */
    unsigned char data[4096];
    fill(data, sizeof data, me, 7);
    aclshmem_barrier_all();
    aclshmemx_putmem_signal(g_bytes, data, sizeof data, &g_sig, me + 1, ACLSHMEM_SIGNAL_SET, peer);
    CHECK(aclshmem_signal_wait_until(&g_sig, ACLSHMEM_CMP_EQ, src + 1) == src + 1, "signal_wait_until on a static");
    EXPECT_PAT("data put with a signal into a global", g_bytes, sizeof data, 0, src, 7);
    /* wait_until on a static flag, set from the previous node */
    aclshmem_barrier_all();
    aclshmem_int64_p(&g_flag, 77, peer);
    aclshmem_int64_wait_until(&g_flag, ACLSHMEM_CMP_EQ, 77);
    CHECK(g_flag == 77, "wait_until on a static flag");
}
#endif
