/*
 * mn_coll.c - the multi-node suite's collective cases: coll (every collective, on the world
 * and on teams across nodes), get_nbi across nodes, reduce_blocks and coll_mix (the seeded
 * mixes of ../coll/coll_mix.c).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem.h"
#include "aclshmem/coll.h"
#include "coll/coll_mix.h"
#include "mn_suite.h"

/* ---- collectives (issue #25) ----------------------------------------------------------- */
/* Every collective of aclshmem/coll.h across the nodes: the members of another node are
 * read with gets and written with puts, those of this node through the mappings. */
static void coll_moves(aclshmem_team_t team, size_t len, unsigned char *src, unsigned char *dst, int salt)
{
    int tme = aclshmem_team_my_pe(team), tn = aclshmem_team_n_pes(team);
    for (int root = 0; root < tn; root += tn > 2 ? tn - 1 : 1) {
        fill(src, len, root, salt);
        memset(dst, 0, len);
        CHECK(aclshmem_broadcastmem(team, dst, src, len, root) == 0, "broadcast of %zu from %d", len, root);
        EXPECT_PAT("broadcast", dst, len, 0, root, salt);
    }
    /* Into local memory through a symmetric work area (dst); with the second root, the odd team
     * PEs call broadcastmem (in place in dst) instead: a team may mix the two. */
    unsigned char *own = malloc(len + 1), *from = malloc(len + 1);
    CHECK(own && from, "out of memory");
    for (int root = 0; own && from && root < tn; root += tn > 2 ? tn - 1 : 1) {
        int mixed = root != 0 && tme % 2 == 1;
        unsigned char *to = mixed ? dst : own;
        if (tme == root)
            fill(mixed ? dst : from, len, root, salt);
        else
            memset(to, 0, len);
        int rc = mixed ? aclshmem_broadcastmem(team, dst, dst, len, root)
                       : aclshmemx_broadcastmem_local(team, own, from, dst, len, root);
        CHECK(rc == 0, "broadcast_local of %zu from %d%s", len, root, mixed ? " (mixed)" : "");
        EXPECT_PAT("broadcast_local", to, len, 0, root, salt);
    }
    free(own);
    free(from);
    fill(src, len, tme, salt);
    CHECK(aclshmem_fcollectmem(team, dst, src, len) == 0, "fcollect of %zu", len);
    for (int p = 0; p < tn; p++)
        EXPECT_PAT("fcollect", dst + (size_t)p * len, len, 0, p, salt);
    size_t at = 0, mine = len / (size_t)(tme + 1);
    CHECK(aclshmem_collectmem(team, dst, src, mine) == 0, "collect of %zu", mine);
    for (int p = 0; p < tn; p++) {
        EXPECT_PAT("collect", dst + at, len / (size_t)(p + 1), 0, p, salt);
        at += len / (size_t)(p + 1);
    }
    for (int j = 0; j < tn; j++)
        fill(src + (size_t)j * len, len, tme * 64 + j, salt);
    CHECK(aclshmem_alltoallmem(team, dst, src, len) == 0, "alltoall of %zu", len);
    for (int p = 0; p < tn; p++)
        EXPECT_PAT("alltoall", dst + (size_t)p * len, len, 0, p * 64 + tme, salt);
    aclshmem_barrier(team);
}

static void coll_reductions(aclshmem_team_t team, size_t count, int64_t *src, int64_t *dst)
{
    int tme = aclshmem_team_my_pe(team), tn = aclshmem_team_n_pes(team);
    for (size_t i = 0; i < count * (size_t)tn; i++)
        src[i] = (int64_t)tme * 1000003 + (int64_t)i;
    CHECK(aclshmem_int64_sum_reduce(team, dst, src, count) == 0, "int64 sum of %zu", count);
    int64_t base = 1000003LL * tn * (tn - 1) / 2;
    for (size_t i = 0; i < count; i++)
        if (dst[i] != base + (int64_t)i * tn) {
            CHECK(0, "sum reduce of %zu: element %zu is %lld", count, i, (long long)dst[i]);
            break;
        }
    CHECK(aclshmem_int64_max_reduce(team, src, src, count) == 0, "int64 max in place of %zu", count);
    for (size_t i = 0; i < count; i++)
        if (src[i] != (int64_t)(tn - 1) * 1000003 + (int64_t)i) {
            CHECK(0, "max reduce in place of %zu: element %zu is %lld", count, i, (long long)src[i]);
            break;
        }
    for (size_t i = 0; i < count * (size_t)tn; i++)
        src[i] = (int64_t)tme + (int64_t)i;
    CHECK(aclshmem_int64_sum_reducescatter(team, dst, src, count) == 0, "reducescatter of %zu", count);
    for (size_t i = 0; i < count; i++)
        if (dst[i] != (int64_t)tn * (int64_t)((size_t)tme * count + i) + tn * (tn - 1) / 2) {
            CHECK(0, "reducescatter of %zu: element %zu is %lld", count, i, (long long)dst[i]);
            break;
        }
    /* Local memory through a symmetric work area (dst). */
    int64_t *mine = malloc((count + 1) * sizeof(int64_t)), *all = malloc((count + 1) * sizeof(int64_t));
    CHECK(mine && all, "out of memory");
    /* ... then with the odd team PEs reducing symmetric memory in the same call (a team may mix) */
    for (int mixed = 0; mixed < 2; mixed++) {
        int symmetric = mixed && tme % 2 == 1;
        int64_t *in = symmetric ? src : mine, *out = symmetric ? dst : all;
        for (size_t i = 0; mine && all && i < count; i++)
            in[i] = (int64_t)tme + (int64_t)i;
        int rc = symmetric ? aclshmem_int64_sum_reduce(team, out, in, count)
                           : aclshmemx_reduce_local(team, out, in, dst, count, ACLSHMEMX_TYPE_int64, ACLSHMEMX_OP_SUM);
        CHECK(rc == 0, "reduce_local of %zu%s", count, mixed ? " (mixed)" : "");
        for (size_t i = 0; mine && all && i < count; i++)
            if (out[i] != (int64_t)tn * (int64_t)i + tn * (tn - 1) / 2) {
                CHECK(0, "reduce_local of %zu%s: element %zu is %lld", count, mixed ? " (mixed)" : "", i,
                      (long long)out[i]);
                break;
            }
    }
    free(mine);
    free(all);
    aclshmem_barrier(team);
}

void case_coll(void)
{
    static const size_t lens[] = {0, 1, 4097, 200001, 2 * MiB + 3};
    size_t cap = (2 * MiB + 3) * (size_t)n;
    unsigned char *src = sym_alloc(cap), *dst = sym_alloc(cap);
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        double t0 = now();
        coll_moves(ACLSHMEM_TEAM_WORLD, lens[k], src, dst, (int)k);
        coll_reductions(ACLSHMEM_TEAM_WORLD, lens[k] / 8, (int64_t *)(void *)src, (int64_t *)(void *)dst);
        printf("PE %d: the collectives of %zu bytes in %.3f s\n", me, lens[k], now() - t0);
    }
    /* Teams across nodes: one PE of each node (stride ppn), the even PEs, and all but PE 0
     * (a node with fewer members than the others). */
    static const struct { int start, stride; } specs[] = {{0, -1}, {0, 2}, {1, 1}};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        int stride = specs[s].stride > 0 ? specs[s].stride : ppn;
        int size = (n - 1 - specs[s].start) / stride + 1;
        if (size < 1)
            continue;
        aclshmem_team_t team = ACLSHMEM_TEAM_INVALID;
        CHECK(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, specs[s].start, stride, size, &team) == 0, "split");
        if (team != ACLSHMEM_TEAM_INVALID) {
            coll_moves(team, 70001, src, dst, 9);
            coll_reductions(team, 70001, (int64_t *)(void *)src, (int64_t *)(void *)dst);
            aclshmem_team_destroy(team);
        }
        aclshmem_barrier_all();
    }
    /* The exchange, and calls that do not match: they fail on every PE of every node. */
    int64_t mine = 5000 + me, *all = xmalloc(sizeof(int64_t) * (size_t)n);
    CHECK(aclshmemx_team_exchange(ACLSHMEM_TEAM_WORLD, &mine, sizeof mine, all) == 0, "exchange");
    for (int p = 0; p < n; p++)
        CHECK(all[p] == 5000 + p, "exchange: PE %d sent %lld", p, (long long)all[p]);
    int rc = aclshmem_broadcastmem(ACLSHMEM_TEAM_WORLD, dst, src, me == n - 1 ? 9 : 8, 0);
    CHECK(rc == ACLSHMEM_INVALID_PARAM, "a broadcast whose sizes differ returned %d", rc);
    CHECK(strstr(aclshmemx_get_last_error(), "different calls") != NULL, "mismatch message: %s",
          aclshmemx_get_last_error());
    free(all);
    aclshmem_barrier_all();
    aclshmem_free(dst);
    aclshmem_free(src);
}

/* ---- get_nbi across nodes (issue #25) ------------------------------------------------------ */
/* More gets in flight at once than the AM plane has request slots (256), a large one among
 * them, completed by one quiet; the data is checked only after the quiet (before it, dest
 * may hold anything). */
#define GN_SMALL 1000
#define GN_PIECE 97

/* The error text of a call named after `name` (its message starts with it), name cut off. */
static const char *after_name(const char *msg, const char *name)
{
    return strncmp(msg, name, strlen(name)) == 0 ? msg + strlen(name) : msg;
}

/* get_nbi refuses what get refuses, with get's message (under its own name), and leaves
 * nothing outstanding: a quiet after it works. */
static void get_nbi_bad_input(unsigned char *sym, unsigned char *loc)
{
    static const int bad_pes[] = {-1, 1 << 20};
    for (size_t k = 0; k < 3; k++) {
        int pe = k < 2 ? bad_pes[k] : peer;
        const void *from = k < 2 ? (const void *)sym : (const void *)loc; /* loc: not symmetric */
        char blocking[256];
        aclshmem_getmem(loc, from, 8, pe);
        snprintf(blocking, sizeof blocking, "%s", aclshmemx_get_last_error());
        aclshmemx_clear_last_error();
        aclshmem_getmem_nbi(loc, from, 8, pe);
        const char *nbi = aclshmemx_get_last_error();
        CHECK(*blocking && strcmp(after_name(nbi, "aclshmem_getmem_nbi"), after_name(blocking, "aclshmem_getmem")) == 0,
              "get_nbi's error \"%s\" is not get's \"%s\"", nbi, blocking);
    }
    aclshmemx_clear_last_error();
    aclshmem_quiet();
    CHECK(*aclshmemx_get_last_error() == 0, "quiet after refused get_nbi: %s", aclshmemx_get_last_error());
}

void case_get_nbi(void)
{
    const size_t big = 3 * MiB + 5, small_at = big, cap = big + GN_SMALL * GN_PIECE;
    unsigned char *sym = sym_alloc(cap), *loc = xmalloc(cap);
    fill(sym, cap, me, 41);
    memset(loc, 0, cap);
    aclshmem_barrier_all();
    for (int k = 0; k < GN_SMALL; k++)
        aclshmem_getmem_nbi(loc + small_at + (size_t)k * GN_PIECE, sym + small_at + (size_t)k * GN_PIECE, GN_PIECE,
                            peer);
    aclshmem_getmem_nbi(loc, sym, big, peer);
    aclshmem_quiet();
    EXPECT_PAT("1001 get_nbi from another node, one quiet", loc, cap, 0, peer, 41);
    /* put_nbi and get_nbi to the same PE, one quiet completes both */
    int64_t *flag = sym_alloc(sizeof(int64_t));
    *flag = 0;
    unsigned char *landing = sym_alloc(64 * 1024), *out = xmalloc(64 * 1024);
    fill(out, 64 * 1024, me, 43);
    memset(loc, 0, cap);
    aclshmem_barrier_all();
    aclshmem_putmem_nbi(landing, out, 64 * 1024, peer);
    aclshmem_getmem_nbi(loc, sym, 256 * 1024, peer);
    aclshmem_int64_get_nbi((int64_t *)(void *)(loc + 256 * 1024), (const int64_t *)(void *)sym, 8, peer);
    aclshmem_quiet();
    EXPECT_PAT("get_nbi beside a put_nbi", loc, 256 * 1024, 0, peer, 41);
    EXPECT_PAT("int64_get_nbi", loc + 256 * 1024, 64, 0, peer, 41);
    aclshmem_int64_p(flag, 1, peer); /* after the quiet: the data is there before the flag */
    aclshmem_int64_wait_until(flag, ACLSHMEM_CMP_EQ, 1);
    EXPECT_PAT("put_nbi beside a get_nbi", landing, 64 * 1024, 0, src, 43);
    get_nbi_bad_input(sym, loc);
    aclshmem_barrier_all();
    free(out);
    free(loc);
    aclshmem_free(landing);
    aclshmem_free(flag);
    aclshmem_free(sym);
}

/* A reduction whose chunks span several fetch blocks (1 MiB) of the inputs on other nodes,
 * the last one short: the fetch of block k + 1 travels while block k is reduced. */
void case_reduce_blocks(void)
{
    size_t count = 5 * MiB / 8 + 3;
    int64_t *src_buf = sym_alloc(count * sizeof(int64_t)), *dst_buf = sym_alloc(count * sizeof(int64_t));
    for (size_t i = 0; i < count; i++)
        src_buf[i] = (int64_t)me * 1000003 + (int64_t)i;
    CHECK(aclshmem_int64_sum_reduce(ACLSHMEM_TEAM_WORLD, dst_buf, src_buf, count) == 0, "int64 sum of %zu: %s",
          count, aclshmemx_get_last_error());
    int64_t base = 1000003LL * n * (n - 1) / 2;
    for (size_t i = 0; i < count; i++)
        if (dst_buf[i] != base + (int64_t)i * n) {
            CHECK(0, "sum of %zu: element %zu is %lld", count, i, (long long)dst_buf[i]);
            break;
        }
    CHECK(aclshmem_int64_max_reduce(ACLSHMEM_TEAM_WORLD, src_buf, src_buf, count) == 0, "int64 max in place");
    for (size_t i = 0; i < count; i++)
        if (src_buf[i] != (int64_t)(n - 1) * 1000003 + (int64_t)i) {
            CHECK(0, "max in place of %zu: element %zu is %lld", count, i, (long long)src_buf[i]);
            break;
        }
    aclshmem_barrier_all();
    aclshmem_free(dst_buf);
    aclshmem_free(src_buf);
}

/* The seeded mixes of tests/coll/coll_mix.c across nodes: collectives of the world and of
 * strided sub-teams that come and go (teams on one node, on several, with one PE on some
 * node), every result checked.  Two seeds of 1500 steps each. */
static void mix_fail(int line, const char *message)
{
    fail_at(__LINE__, "coll_mix.c:%d: %s", line, message);
}

void case_coll_mix(void)
{
    CHECK(n <= COLL_MIX_MAX_PES, "coll_mix runs on at most %d PEs, not %d", COLL_MIX_MAX_PES, n);
    if (n > COLL_MIX_MAX_PES)
        return;
    static const uint64_t seeds[] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        double t0 = now();
        CHECK(coll_mix_run(n, seeds[k], 1500, mix_fail) == 0, "coll_mix_run");
        printf("PE %d: 1500 mixed collectives in %.3f s\n", me, now() - t0);
    }
}
