/*
 * mn_sync.c - the multi-node suite's synchronisation cases: amo (atomics from every PE on one
 * word), barrier, teams (barriers of teams that span nodes) and killed (a PE that dies).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclshmem.h"
#include "mn_suite.h"

/* ---- atomics from every PE on one word of PE 0 ------------------------------------------ */
#define AMO_TYPES(X) X(int32, int32_t) X(uint32, uint32_t) X(int64, int64_t) X(uint64, uint64_t) \
    X(float, float) X(double, double)
typedef struct {
    const char *name;
    int64_t (*fetch_add)(void *, int64_t, int);
    void (*add)(void *, int64_t, int);
    int64_t (*cswap)(void *, int64_t, int64_t, int);
    int64_t (*fetch)(void *, int);
    void (*set)(void *, int64_t, int);
    int64_t (*swap)(void *, int64_t, int);
    int64_t (*load)(const void *);
    void (*store)(void *, int64_t);
} amo_kind_t;
#define AMO_WRAPPERS(NAME, T)                                                                   \
    static int64_t fadd_##NAME(void *d, int64_t v, int pe) { return (int64_t)aclshmem_##NAME##_atomic_fetch_add(d, (T)v, pe); } \
    static void add_##NAME(void *d, int64_t v, int pe) { aclshmem_##NAME##_atomic_add(d, (T)v, pe); } \
    static int64_t cswap_##NAME(void *d, int64_t c, int64_t v, int pe) { return (int64_t)aclshmem_##NAME##_atomic_compare_swap(d, (T)c, (T)v, pe); } \
    static int64_t fetch_##NAME(void *d, int pe) { return (int64_t)aclshmem_##NAME##_atomic_fetch(d, pe); } \
    static void set_##NAME(void *d, int64_t v, int pe) { aclshmem_##NAME##_atomic_set(d, (T)v, pe); } \
    static int64_t swap_##NAME(void *d, int64_t v, int pe) { return (int64_t)aclshmem_##NAME##_atomic_swap(d, (T)v, pe); } \
    static int64_t load_##NAME(const void *d) { return (int64_t)*(const T *)d; }               \
    static void store_##NAME(void *d, int64_t v) { *(T *)d = (T)v; }
AMO_TYPES(AMO_WRAPPERS)
static const amo_kind_t amo_kinds[] = {
#define AMO_ENTRY(NAME, T) {#NAME, fadd_##NAME, add_##NAME, cswap_##NAME, fetch_##NAME, set_##NAME, \
                            swap_##NAME, load_##NAME, store_##NAME},
    AMO_TYPES(AMO_ENTRY)
};

#define K 100 /* operations per PE and kind */

/* On PE 0: the n * K tickets every PE handed in (plus extra) are exactly 0 .. total - 1. */
static void check_tickets(const char *what, const int64_t *tickets, int64_t total)
{
    unsigned char *seen = calloc((size_t)total, 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < total; i++) {
        int64_t t = tickets[i];
        if (t < 0 || t >= total || seen[t]++)
            bad++;
    }
    CHECK(bad == 0, "%s: %lld of %lld values missing or repeated", what, (long long)bad,
          (long long)total);
    free(seen);
}

void case_amo(void)
{
    int64_t *word = sym_alloc(sizeof(int64_t));
    int64_t *tickets = sym_alloc((size_t)(n * K + 1) * sizeof(int64_t)), mine[K];
    for (size_t k = 0; k < sizeof amo_kinds / sizeof amo_kinds[0]; k++) {
        const amo_kind_t *a = &amo_kinds[k];
        char what[64];
        /* fetch_add: every PE takes K tickets; PE 0 sees each of 0 .. nK-1 once */
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++)
            mine[i] = a->fetch_add(word, 1, 0);
        aclshmem_putmem(tickets + me * K, mine, sizeof mine, 0);
        aclshmem_barrier_all();
        CHECK(a->fetch(word, 0) == n * K, "%s atomic_fetch after fetch_add: %lld, want %d", a->name,
              (long long)a->fetch(word, 0), n * K);
        snprintf(what, sizeof what, "%s atomic_fetch_add tickets", a->name);
        if (me == 0)
            check_tickets(what, tickets, n * K);
        /* add: PE p adds p + 1, K times */
        aclshmem_barrier_all();
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++)
            a->add(word, me + 1, 0);
        aclshmem_barrier_all();
        CHECK(me != 0 || a->load(word) == (int64_t)K * n * (n + 1) / 2, "%s atomic_add: %lld, want %lld",
              a->name, (long long)a->load(word), (long long)K * n * (n + 1) / 2);
        /* compare_swap increments: the old values of the successful swaps are tickets too */
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++) {
            int64_t old = a->fetch(word, 0), seen;
            while ((seen = a->cswap(word, old, old + 1, 0)) != old)
                old = seen;
            mine[i] = old;
        }
        aclshmem_putmem(tickets + me * K, mine, sizeof mine, 0);
        aclshmem_barrier_all();
        snprintf(what, sizeof what, "%s atomic_compare_swap increments", a->name);
        if (me == 0) {
            CHECK(a->load(word) == n * K, "%s: %lld, want %d", what, (long long)a->load(word), n * K);
            check_tickets(what, tickets, n * K);
        }
        /* swap: the old values returned, with the final value, are each value written (1 ..
         * nK) and the initial 0 exactly once */
        aclshmem_barrier_all();
        if (me == 0)
            a->store(word, 0);
        aclshmem_barrier_all();
        for (int i = 0; i < K; i++)
            mine[i] = a->swap(word, me * K + i + 1, 0);
        aclshmem_putmem(tickets + me * K, mine, sizeof mine, 0);
        aclshmem_barrier_all();
        snprintf(what, sizeof what, "%s atomic_swap", a->name);
        if (me == 0) {
            tickets[n * K] = a->load(word);
            check_tickets(what, tickets, n * K + 1);
        }
        /* set and fetch: each PE in turn sets, everyone fetches */
        for (int p = 0; p < n; p++) {
            aclshmem_barrier_all();
            if (me == p)
                a->set(word, 500 + p, 0);
            aclshmem_barrier_all();
            int64_t got = a->fetch(word, 0);
            CHECK(got == 500 + p, "%s atomic_set by PE %d, atomic_fetch: %lld", a->name, p,
                  (long long)got);
        }
        aclshmem_barrier_all();
    }
    aclshmem_free(tickets);
    aclshmem_free(word);
}

/* ---- barriers ----------------------------------------------------------------------------- */
/* rounds barriers of team (members only): before each, an nbi put of (round, sender) to the
 * team's next PE; after it, the value from the team's previous PE must be there. */
static void checked_barriers(aclshmem_team_t team, int rounds, int64_t *slot, int variants)
{
    int tme = aclshmem_team_my_pe(team), tn = aclshmem_team_n_pes(team);
    int to = aclshmem_team_translate_pe(team, (tme + 1) % tn, ACLSHMEM_TEAM_WORLD);
    int from = aclshmem_team_translate_pe(team, (tme + tn - 1) % tn, ACLSHMEM_TEAM_WORLD);
    CHECK(to >= 0 && from >= 0, "team %d: translate_pe gave %d and %d", team, to, from);
    for (int r = 0; r < rounds; r++) {
        int64_t v = (int64_t)r * 1000 + me;
        aclshmem_putmem_nbi(&slot[r & 1], &v, sizeof v, to);
        switch (variants ? r % 4 : 1) {
        case 0: aclshmem_barrier_all(); break;
        case 1: aclshmem_barrier(team); break;
        case 2: aclshmem_sync_all(); break;
        default: aclshmemx_barrier_all_vec(); break;
        }
        int64_t want = (int64_t)r * 1000 + from;
        if (slot[r & 1] != want) {
            CHECK(0, "team %d barrier %d: slot holds %lld, want %lld (from PE %d)", team, r,
                  (long long)slot[r & 1], (long long)want, from);
            break;
        }
    }
}

void case_barrier(void)
{
    int64_t *slot = sym_alloc(2 * sizeof(int64_t));
    slot[0] = slot[1] = -1;
    aclshmem_barrier_all();
    double t0 = now();
    checked_barriers(ACLSHMEM_TEAM_WORLD, 200, slot, 1);
    printf("PE %d: 200 checked barriers (barrier_all, barrier, sync_all, barrier_all_vec) in %.2f s\n",
           me, now() - t0);
    t0 = now();
    for (int i = 0; i < 200; i++)
        aclshmem_barrier_all();
    printf("PE %d: 200 barrier_all in a row in %.2f s\n", me, now() - t0);
    aclshmem_free(slot);
}

/* Teams that span nodes: one PE of each node, every PE but PE 0, and the PEs of even rank. */
void case_teams(void)
{
    int64_t *slot = sym_alloc(2 * sizeof(int64_t));
    static const struct { const char *name; int start, stride, size; } specs[] = {
        {"one PE per node", 0, -1, -1}, {"all but PE 0", 1, 1, -1}, {"even PEs", 0, 2, -1}};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        int stride = specs[s].stride > 0 ? specs[s].stride : ppn;
        int size = s == 0 ? nodes : s == 1 ? n - 1 : (n + 1) / 2;
        aclshmem_team_t team = ACLSHMEM_TEAM_INVALID;
        int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, specs[s].start, stride, size, &team);
        CHECK(rc == 0, "team_split_strided(%s: %d, %d, %d) returned %d", specs[s].name,
              specs[s].start, stride, size, rc);
        int member = me >= specs[s].start && (me - specs[s].start) % stride == 0 &&
                     (me - specs[s].start) / stride < size;
        CHECK(member == (team != ACLSHMEM_TEAM_INVALID), "team %s: member %d but team %d",
              specs[s].name, member, team);
        slot[0] = slot[1] = -1;
        aclshmem_barrier_all();
        if (member && team != ACLSHMEM_TEAM_INVALID) {
            CHECK(aclshmem_team_n_pes(team) == size, "team %s has %d PEs, want %d", specs[s].name,
                  aclshmem_team_n_pes(team), size);
            CHECK(aclshmem_team_my_pe(team) == (me - specs[s].start) / stride,
                  "team %s: my_pe %d", specs[s].name, aclshmem_team_my_pe(team));
            checked_barriers(team, 100, slot, 0);
        }
        aclshmem_barrier_all();
        if (team != ACLSHMEM_TEAM_INVALID)
            aclshmem_team_destroy(team);
    }
    aclshmem_free(slot);
}

/* ---- a PE that dies ------------------------------------------------------------------------ */
/* The last PE (on the last node) SIGKILLs itself while the others wait in a barrier: every
 * survivor's barrier must fail within 10 s with an error naming it. */
void case_killed(void)
{
    int dead = n - 1;
    aclshmem_barrier_all();
    if (me == dead) {
        sleep_ms(500);
        printf("PE %d: SIGKILL myself\n", me);
        fflush(stdout);
        raise(SIGKILL);
    }
    aclshmemx_clear_last_error();
    double t0 = now();
    aclshmem_barrier_all();
    double secs = now() - t0 - 0.5;
    const char *err = aclshmemx_get_last_error();
    char want[32];
    snprintf(want, sizeof want, "PE %d", dead);
    printf("PE %d: barrier_all after PE %d died: %.2f s, \"%s\"\n", me, dead, secs, err);
    CHECK(secs < 10.0, "the barrier took %.1f s to fail", secs);
    CHECK(err && *err, "the barrier returned without an error");
    CHECK(err && strstr(err, want), "the error does not name \"%s\"", want);
}
