/* coll_mix.c - see coll_mix.h.
 *
 * The other coll tests take one collective at a time.  Here every PE draws the same
 * sequence from one seed: a team (the world or one of ten live strided sub-teams; every 40
 * steps one is destroyed and another split off, so team ids are reused), a collective
 * (broadcast, collect, fcollect, alltoall, sum and max reductions, reduce-scatter, a
 * barrier), a size from a list that straddles the records' payload and the payload areas of
 * 512 B and 2 KiB (the root's 1 MiB pieces are in test_coll_move) and a root.  The PEs of
 * the chosen team call it, the others go on to the next step, so collectives of different
 * teams run at once on a PE's neighbours while the one dest buffer is reused from step to
 * step.  A step that writes a stale round's data, or reads a record of the wrong team,
 * fails the check of that step (a payload area used without its round's parity fails
 * within a few hundred steps: checked).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "aclshmem.h"
#include "coll/coll_mix.h"

static coll_mix_report_fn report_to; /* the caller's, for the run in progress */

static void report(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(int line, const char *fmt, ...)
{
    char message[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    report_to(line, message);
}

/* Ten sub-teams besides the world: the later ones get ids beyond the first 8, which have no
 * payload area (small calls there take the general way). */
#define LIVE_TEAMS 10
#define MAX_ELEMS 70000 /* int32 elements of the largest step (per PE block) */
#define BUF_BYTES ((size_t)MAX_ELEMS * 4 * COLL_MIX_MAX_PES)

/* The shared sequence: xorshift64, the same on every PE. */
static uint64_t rng_state;

static uint32_t draw(uint32_t below)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % below);
}

/* Block sizes in int32 elements: around the record's 128 payload bytes, the payload areas
 * of 512 B (pairs) and 2 KiB per PE, and well beyond. */
static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 127, 128, 129, 511, 512, 513, 1000, 4096, 16385, MAX_ELEMS};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* The value PE pe (its team index) writes at element i of step s: small, so that sums of up
 * to 8 PEs stay far from overflow, and different for every step, PE and element. */
static int32_t value(int step, int pe, size_t i)
{
    return (int32_t)((step * 131 + pe * 7919 + (int)i * 17) % 100003) - 50000;
}

typedef struct {
    int step, me, n; /* me and n: within the team */
    aclshmem_team_t team;
    int32_t *src, *dst;
} step_t;

static void expect_success(int line, const step_t *s, int rc)
{
    if (rc != ACLSHMEM_SUCCESS)
        report(line, "step %d: the collective on team %d returned %d", s->step, (int)s->team, rc);
}

static void fill(const step_t *s, int32_t *to, int pe, size_t count)
{
    for (size_t i = 0; i < count; i++)
        to[i] = value(s->step, pe, i);
}

/* Checks count elements of got against PE pe's values from element `from`; reports the first
 * difference only. */
static void expect_values(const step_t *s, const char *what, const int32_t *got, int pe, size_t from, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (got[i] != value(s->step, pe, from + i)) {
            report(__LINE__, "step %d, %s of %zu elements: element %zu of team PE %d is %d, not %d", s->step,
                   what, count, from + i, pe, got[i], value(s->step, pe, from + i));
            return;
        }
    }
}

static void run_broadcast(const step_t *s, size_t count, int root)
{
    fill(s, s->src, s->me, count);
    memset(s->dst, 0x5a, count * 4);
    expect_success(__LINE__, s, aclshmem_broadcastmem(s->team, s->dst, s->src, count * 4, root));
    expect_values(s, "broadcast", s->dst, root, 0, count);
}

static void run_fcollect(const step_t *s, size_t count)
{
    fill(s, s->src, s->me, count);
    expect_success(__LINE__, s, aclshmem_fcollectmem(s->team, s->dst, s->src, count * 4));
    for (int pe = 0; pe < s->n; pe++)
        expect_values(s, "fcollect", s->dst + (size_t)pe * count, pe, 0, count);
}

/* Team PE pe contributes count - pe elements (at least 0): the counts differ. */
static size_t collect_count(size_t count, int pe)
{
    return count > (size_t)pe ? count - (size_t)pe : 0;
}

static void run_collect(const step_t *s, size_t count)
{
    fill(s, s->src, s->me, collect_count(count, s->me));
    expect_success(__LINE__, s, aclshmem_collectmem(s->team, s->dst, s->src, collect_count(count, s->me) * 4));
    size_t at = 0;
    for (int pe = 0; pe < s->n; pe++) {
        expect_values(s, "collect", s->dst + at, pe, 0, collect_count(count, pe));
        at += collect_count(count, pe);
    }
}

/* Block j of PE i's source holds PE i's values from j * count on. */
static void run_alltoall(const step_t *s, size_t count)
{
    fill(s, s->src, s->me, count * (size_t)s->n);
    expect_success(__LINE__, s, aclshmem_alltoallmem(s->team, s->dst, s->src, count * 4));
    for (int pe = 0; pe < s->n; pe++)
        expect_values(s, "alltoall", s->dst + (size_t)pe * count, pe, (size_t)s->me * count, count);
}

/* Sum or max of every PE's values, in place or not. */
static void run_reduce(const step_t *s, size_t count, int max, int in_place)
{
    int32_t *out = in_place ? s->src : s->dst;
    fill(s, s->src, s->me, count);
    int rc = max ? aclshmem_int32_max_reduce(s->team, out, s->src, count)
                 : aclshmem_int32_sum_reduce(s->team, out, s->src, count);
    expect_success(__LINE__, s, rc);
    for (size_t i = 0; i < count; i++) {
        int32_t want = max ? INT32_MIN : 0;
        for (int pe = 0; pe < s->n; pe++) {
            int32_t v = value(s->step, pe, i);
            want = max ? (v > want ? v : want) : want + v;
        }
        if (out[i] != want) {
            report(__LINE__, "step %d, %s reduce of %zu elements%s: element %zu is %d, not %d", s->step,
                   max ? "max" : "sum", count, in_place ? " in place" : "", i, out[i], want);
            return;
        }
    }
}

static void run_reducescatter(const step_t *s, size_t count)
{
    fill(s, s->src, s->me, count * (size_t)s->n);
    expect_success(__LINE__, s, aclshmem_int32_sum_reducescatter(s->team, s->dst, s->src, count));
    for (size_t i = 0; i < count; i++) {
        int32_t want = 0;
        for (int pe = 0; pe < s->n; pe++)
            want += value(s->step, pe, (size_t)s->me * count + i);
        if (s->dst[i] != want) {
            report(__LINE__, "step %d, reduce-scatter of %zu elements: element %zu is %d, not %d", s->step,
                   count, i, s->dst[i], want);
            return;
        }
    }
}

/* Destroys *team (where this PE is in it) and splits another off the world in its place:
 * ACLSHMEM_TEAM_INVALID on the PEs outside the new one. */
static void replace_team(aclshmem_team_t *team, int n_world)
{
    if (*team != ACLSHMEM_TEAM_INVALID)
        aclshmem_team_destroy(*team);
    int start = (int)draw((uint32_t)n_world);
    int stride = 1 + (int)draw((uint32_t)n_world);
    int size = 1 + (int)draw((uint32_t)((n_world - 1 - start) / stride + 1));
    int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, start, stride, size, team);
    if (rc != ACLSHMEM_SUCCESS) {
        report(__LINE__, "splitting PEs %d + %d k (%d of them) off the world returned %d", start, stride, size, rc);
        *team = ACLSHMEM_TEAM_INVALID; /* (every PE fails alike: the split is collective) */
    }
}

static void run_step(int step, const aclshmem_team_t *teams, int32_t *src, int32_t *dst)
{
    int pick = (int)draw(LIVE_TEAMS + 1); /* LIVE_TEAMS: the world */
    int kind = (int)draw(8);
    size_t count = sizes[draw(N_SIZES)];
    int root_draw = (int)draw(64), in_place = (int)draw(2);
    aclshmem_team_t team = pick == LIVE_TEAMS ? ACLSHMEM_TEAM_WORLD : teams[pick];
    if (team == ACLSHMEM_TEAM_INVALID)
        return; /* this PE is not a member: the members run it without us */
    step_t s = {step, aclshmem_team_my_pe(team), aclshmem_team_n_pes(team), team, src, dst};
    if (s.me < 0 || s.n <= 0 || s.n > COLL_MIX_MAX_PES) {
        report(__LINE__, "step %d: team %d says this PE is %d of %d", step, (int)team, s.me, s.n);
        return;
    }
    int root = root_draw % s.n;
    switch (kind) {
    case 0: run_broadcast(&s, count, root); break;
    case 1: run_fcollect(&s, count); break;
    case 2: run_collect(&s, count); break;
    case 3: run_alltoall(&s, count); break;
    case 4: run_reduce(&s, count, 0, in_place); break;
    case 5: run_reduce(&s, count, 1, in_place); break;
    case 6: run_reducescatter(&s, count); break;
    default: aclshmem_barrier(team); break;
    }
}

int coll_mix_run(int n_world, uint64_t seed, int steps, coll_mix_report_fn report_fn)
{
    report_to = report_fn;
    int32_t *src = aclshmem_malloc(BUF_BYTES), *dst = aclshmem_malloc(BUF_BYTES);
    if (src == NULL || dst == NULL) { /* (collective: no PE goes on) */
        report(__LINE__, "no room for two buffers of %zu bytes in the symmetric heap", BUF_BYTES);
        return -1;
    }
    rng_state = seed;
    aclshmem_team_t teams[LIVE_TEAMS];
    for (int k = 0; k < LIVE_TEAMS; k++) {
        teams[k] = ACLSHMEM_TEAM_INVALID;
        replace_team(&teams[k], n_world);
    }
    for (int step = 1; step <= steps; step++) { /* on after a failure: the others need this PE */
        if (step % 40 == 0)
            replace_team(&teams[draw(LIVE_TEAMS)], n_world);
        run_step(step, teams, src, dst);
    }
    aclshmem_barrier_all();
    for (int k = 0; k < LIVE_TEAMS; k++)
        if (teams[k] != ACLSHMEM_TEAM_INVALID)
            aclshmem_team_destroy(teams[k]);
    aclshmem_free(src);
    aclshmem_free(dst);
    return 0;
}

