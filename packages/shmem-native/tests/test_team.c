/*
 * test_team.c - teams: world queries, split_strided (members and non-members, nesting,
 * bad arguments), splits whose PEs ask for different things (refused on every PE), split_2d,
 * translate_pe, get_config, destroy, and the 2047-team pool.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void expect_team_gone(aclshmem_team_t t)
{
    EXPECT_EQ(aclshmem_team_my_pe(t), -1);
    EXPECT_EQ(aclshmem_team_n_pes(t), -1);
    aclshmem_team_config_t cfg;
    EXPECT_EQ(aclshmem_team_get_config(t, &cfg), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmem_team_translate_pe(t, 0, ACLSHMEM_TEAM_WORLD), -1);
    EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 0, t), -1);
}

/* Every member puts its team index into the next member's slot, through world PE numbers. */
static void team_ring(aclshmem_team_t t, int32_t *slot)
{
    int tme = aclshmem_team_my_pe(t), tn = aclshmem_team_n_pes(t);
    ASSERT(tme >= 0 && tn > 0);
    *slot = -1;
    aclshmem_barrier(t);
    int next = aclshmem_team_translate_pe(t, (tme + 1) % tn, ACLSHMEM_TEAM_WORLD);
    ASSERT(next >= 0);
    int32_t v = 500 + tme;
    aclshmem_putmem(slot, &v, sizeof v, next);
    aclshmem_barrier(t);
    EXPECT_EQ(*(volatile int32_t *)slot, 500 + (tme + tn - 1) % tn);
}

/* ---- the world team ------------------------------------------------------------------ */
static int t_world(int me, int n)
{
    EXPECT_EQ(aclshmem_my_pe(), me);
    EXPECT_EQ(aclshmem_n_pes(), n);
    EXPECT_EQ(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD), me);
    EXPECT_EQ(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD), n);
    aclshmem_team_config_t cfg;
    memset(&cfg, 0x5a, sizeof cfg);
    EXPECT_EQ(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, &cfg), ACLSHMEM_SUCCESS);
    EXPECT_EQ(sizeof cfg, 64);
    harness_mark_error();
    EXPECT_EQ(aclshmem_team_get_config(ACLSHMEM_TEAM_WORLD, NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();
    static const aclshmem_team_t unknown[] = { ACLSHMEM_TEAM_INVALID, 1, 77, 2047, 2048, -5, 100000 };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        aclshmem_team_t t = unknown[i];
        EXPECT_EQ(aclshmem_team_my_pe(t), -1);
        EXPECT_EQ(aclshmem_team_n_pes(t), -1);
        harness_mark_error();
        EXPECT_EQ(aclshmem_team_get_config(t, &cfg), ACLSHMEM_INVALID_PARAM);
        EXPECT_ERROR_SET();
        EXPECT_EQ(aclshmem_team_translate_pe(t, 0, ACLSHMEM_TEAM_WORLD), -1);
        EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 0, t), -1);
    }
    for (int i = 0; i < n; i++)
        EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, i, ACLSHMEM_TEAM_WORLD), i);
    EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, n, ACLSHMEM_TEAM_WORLD), -1);
    EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, -1, ACLSHMEM_TEAM_WORLD), -1);

    /* The world cannot be destroyed; destroying nothing is harmless. */
    harness_mark_error();
    aclshmem_team_destroy(ACLSHMEM_TEAM_WORLD);
    EXPECT_ERROR_SET();
    aclshmem_team_destroy(ACLSHMEM_TEAM_INVALID);
    harness_mark_error();
    aclshmem_team_destroy(123);
    EXPECT_ERROR_SET();
    EXPECT_EQ(aclshmem_team_my_pe(ACLSHMEM_TEAM_WORLD), me);
    EXPECT_EQ(aclshmem_team_n_pes(ACLSHMEM_TEAM_WORLD), n);
    int32_t *slot = aclshmem_malloc(sizeof(int32_t));
    ASSERT_NOT_NULL(slot);
    team_ring(ACLSHMEM_TEAM_WORLD, slot);
    aclshmem_free(slot);
    return 0;
}

/* ---- split_strided -------------------------------------------------------------------- */
static int t_split_strided(int me, int n)
{
    int32_t *slot = aclshmem_malloc(sizeof(int32_t));
    ASSERT_NOT_NULL(slot);

    /* The even PEs. */
    int esize = (n + 1) / 2;
    aclshmem_team_t even = 999;
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, esize, &even), ACLSHMEM_SUCCESS);
    if (me % 2 == 0) {
        ASSERT(even > 0 && even < ACLSHMEM_MAX_TEAMS);
        EXPECT_EQ(aclshmem_team_my_pe(even), me / 2);
        EXPECT_EQ(aclshmem_team_n_pes(even), esize);
        for (int j = 0; j < esize; j++) {
            EXPECT_EQ(aclshmem_team_translate_pe(even, j, ACLSHMEM_TEAM_WORLD), 2 * j);
            EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 2 * j, even), j);
        }
        if (n > 1)
            EXPECT_EQ(aclshmem_team_translate_pe(ACLSHMEM_TEAM_WORLD, 1, even), -1);
        EXPECT_EQ(aclshmem_team_translate_pe(even, esize, ACLSHMEM_TEAM_WORLD), -1);
        EXPECT_EQ(aclshmem_team_translate_pe(even, 0, even), 0);
        aclshmem_team_config_t cfg;
        EXPECT_EQ(aclshmem_team_get_config(even, &cfg), ACLSHMEM_SUCCESS);
        team_ring(even, slot);

        /* A team split from a team: the even PEs but the first. */
        if (esize >= 2) {
            aclshmem_team_t sub = 999;
            EXPECT_EQ(aclshmem_team_split_strided(even, 1, 1, esize - 1, &sub), ACLSHMEM_SUCCESS);
            if (me == 0) {
                EXPECT_EQ(sub, ACLSHMEM_TEAM_INVALID);
            } else {
                ASSERT(sub > 0);
                EXPECT(sub != even);
                EXPECT_EQ(aclshmem_team_my_pe(sub), me / 2 - 1);
                EXPECT_EQ(aclshmem_team_n_pes(sub), esize - 1);
                for (int j = 0; j < esize - 1; j++) {
                    EXPECT_EQ(aclshmem_team_translate_pe(sub, j, ACLSHMEM_TEAM_WORLD), 2 * (j + 1));
                    EXPECT_EQ(aclshmem_team_translate_pe(sub, j, even), j + 1);
                }
                team_ring(sub, slot);
                aclshmem_team_destroy(sub);
                expect_team_gone(sub);
            }
        }
    } else {
        EXPECT_EQ(even, ACLSHMEM_TEAM_INVALID);
    }
    aclshmem_barrier_all();

    /* The whole world again, as a new team. */
    aclshmem_team_t all = 999;
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &all), ACLSHMEM_SUCCESS);
    ASSERT(all > 0);
    EXPECT_EQ(aclshmem_team_my_pe(all), me);
    EXPECT_EQ(aclshmem_team_n_pes(all), n);
    team_ring(all, slot);

    /* A one-PE team of the last PE. */
    aclshmem_team_t last = 999;
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, n - 1, 1, 1, &last), ACLSHMEM_SUCCESS);
    if (me == n - 1) {
        ASSERT(last > 0);
        EXPECT_EQ(aclshmem_team_my_pe(last), 0);
        EXPECT_EQ(aclshmem_team_n_pes(last), 1);
        aclshmem_barrier(last);
        aclshmem_team_destroy(last);
    } else {
        EXPECT_EQ(last, ACLSHMEM_TEAM_INVALID);
    }

    /* Destroyed teams are gone for every query. */
    aclshmem_barrier_all();
    if (me % 2 == 0) {
        aclshmem_team_destroy(even);
        expect_team_gone(even);
        harness_mark_error();
        double t0 = harness_now();
        aclshmem_barrier(even); /* a destroyed team: an error, no hang */
        EXPECT_LT(harness_now() - t0, 2.0);
        EXPECT_ERROR_SET();
    }
    aclshmem_team_destroy(all);
    expect_team_gone(all);
    harness_mark_error();
    aclshmem_team_destroy(all); /* twice */
    EXPECT_ERROR_SET();
    aclshmem_barrier_all();
    aclshmem_free(slot);
    return 0;
}

typedef struct {
    const char *what;
    aclshmem_team_t parent;
    int start, stride, size; /* size < -1000: n + (size + 2000) */
} bad_split_t;

static int t_split_bad(int me, int n)
{
    (void)me;
    const bad_split_t bad[] = {
        { "parent INVALID", ACLSHMEM_TEAM_INVALID, 0, 1, 1 },
        { "parent unknown", 77, 0, 1, 1 },
        { "parent 2048", 2048, 0, 1, 1 },
        { "parent -5", -5, 0, 1, 1 },
        { "start -1", ACLSHMEM_TEAM_WORLD, -1, 1, 1 },
        { "start n", ACLSHMEM_TEAM_WORLD, n, 1, 1 },
        { "stride 0", ACLSHMEM_TEAM_WORLD, 0, 0, 1 },
        { "stride -1", ACLSHMEM_TEAM_WORLD, n - 1, -1, 2 },
        { "size 0", ACLSHMEM_TEAM_WORLD, 0, 1, 0 },
        { "size -1", ACLSHMEM_TEAM_WORLD, 0, 1, -1 },
        { "size n+1", ACLSHMEM_TEAM_WORLD, 0, 1, n + 1 },
        { "end beyond the parent", ACLSHMEM_TEAM_WORLD, 1, 1, n },
        { "stride 2 size n", ACLSHMEM_TEAM_WORLD, 0, 2, n },
        { "huge stride", ACLSHMEM_TEAM_WORLD, 0, 0x40000000, 3 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        aclshmem_team_t t = 12345;
        harness_mark_error();
        int rc = aclshmem_team_split_strided(bad[i].parent, bad[i].start, bad[i].stride, bad[i].size, &t);
        if (rc != ACLSHMEM_INVALID_PARAM)
            harness_report(__FILE__, __LINE__, "split \"%s\": %d, expected %d", bad[i].what, rc,
                           ACLSHMEM_INVALID_PARAM);
        if (t != ACLSHMEM_TEAM_INVALID)
            harness_report(__FILE__, __LINE__, "split \"%s\": new_team is %d, expected -1",
                           bad[i].what, t);
        if (rc == ACLSHMEM_SUCCESS && t > 0)
            aclshmem_team_destroy(t);
        else if (!harness_error_since_mark())
            harness_report(__FILE__, __LINE__, "split \"%s\": no last-error message", bad[i].what);
    }
    harness_mark_error();
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, NULL), ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_SET();

    /* split_2d. */
    static const int bad_x[] = { 0, -1, -1000 };
    for (size_t i = 0; i < sizeof bad_x / sizeof bad_x[0]; i++) {
        aclshmem_team_t x = 12345, y = 12345;
        harness_mark_error();
        EXPECT_EQ(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, bad_x[i], &x, &y), ACLSHMEM_INVALID_PARAM);
        EXPECT_EQ(x, ACLSHMEM_TEAM_INVALID);
        EXPECT_EQ(y, ACLSHMEM_TEAM_INVALID);
        EXPECT_ERROR_SET();
    }
    aclshmem_team_t x = 12345, y = 12345;
    EXPECT_EQ(aclshmem_team_split_2d(ACLSHMEM_TEAM_INVALID, 1, &x, &y), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmem_team_split_2d(99, 1, &x, &y), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, NULL, &y), ACLSHMEM_INVALID_PARAM);
    EXPECT_EQ(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, &x, NULL), ACLSHMEM_INVALID_PARAM);

    /* Nothing leaked: the next team gets the lowest id, 1. */
    aclshmem_team_t t = 999;
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_SUCCESS);
    EXPECT_EQ(t, 1);
    EXPECT_EQ(aclshmem_team_n_pes(t), n);
    aclshmem_team_destroy(t);
    aclshmem_barrier_all();
    return 0;
}

/* ---- splits whose PEs disagree: refused on every PE, nothing created ------------------- */

/* The split's last error names both requests: the first PE that asked for something else
 * (theirs) and this PE's own (mine). */
static void expect_disagreement(int rc, const char *theirs, const char *mine)
{
    EXPECT_EQ(rc, ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS("disagree");
    EXPECT_ERROR_CONTAINS(theirs);
    EXPECT_ERROR_CONTAINS(mine);
    EXPECT_ERROR_CONTAINS("no team was created");
}

/* split_strided on world: PE 0 asks for (start0, stride0, size0), every other PE for
 * (start1, stride1, size1).  Every PE must fail at once, with new_team INVALID. */
static void split_strided_disagreeing(int me, int start0, int stride0, int size0, int start1, int stride1,
                                      int size1)
{
    int start = me == 0 ? start0 : start1, stride = me == 0 ? stride0 : stride1;
    int size = me == 0 ? size0 : size1;
    char theirs[96], mine[96];
    snprintf(theirs, sizeof theirs, "PE %d asked for (start %d, stride %d, size %d)", me == 0 ? 1 : 0,
             me == 0 ? start1 : start0, me == 0 ? stride1 : stride0, me == 0 ? size1 : size0);
    snprintf(mine, sizeof mine, "PE %d for (start %d, stride %d, size %d)", me, start, stride, size);
    aclshmem_team_t t = 999;
    harness_mark_error();
    double t0 = harness_now();
    int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, start, stride, size, &t);
    EXPECT_LT(harness_now() - t0, 5.0); /* no PE waits for the control timeout */
    EXPECT_EQ(t, ACLSHMEM_TEAM_INVALID);
    expect_disagreement(rc, theirs, mine);
    if (rc == ACLSHMEM_SUCCESS && t > 0)
        aclshmem_team_destroy(t);
}

/* A split that every PE asks for in the same way still works, and gets the lowest id: the
 * refused splits took no slot anywhere. */
static void expect_pool_untouched(int n, int32_t *slot)
{
    aclshmem_team_t t = 999;
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_SUCCESS);
    EXPECT_EQ(t, 1);
    EXPECT_EQ(aclshmem_team_n_pes(t), n);
    if (t > 0) {
        team_ring(t, slot);
        aclshmem_team_destroy(t);
    }
    for (int id = 2; id < 8; id++)
        expect_team_gone(id);
    aclshmem_barrier_all();
}

static int t_split_mismatch(int me, int n)
{
    int32_t *slot = aclshmem_malloc(sizeof(int32_t));
    ASSERT_NOT_NULL(slot);

    /* The case: PE 0 asks for {0, 1}, the others for {1}. */
    split_strided_disagreeing(me, 0, 1, 2, 1, 1, 1);
    expect_pool_untouched(n, slot);
    /* Only the size differs. */
    split_strided_disagreeing(me, 0, 1, n, 0, 1, n - 1);
    /* Only the stride differs (both valid). */
    split_strided_disagreeing(me, 0, 2, 1, 0, 1, 1);
    /* PE 0's arguments are invalid on their own: it still takes part, so nobody waits. */
    split_strided_disagreeing(me, 0, 0, n, 0, 1, n);
    split_strided_disagreeing(me, 0, 1, n + 5, 0, 1, n);
    /* The same arguments, but PE 1 has nowhere to put the result: it fails, so all do. */
    aclshmem_team_t t = 999;
    harness_mark_error();
    int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, me == 1 ? NULL : &t);
    EXPECT_EQ(rc, ACLSHMEM_INVALID_PARAM);
    EXPECT_ERROR_CONTAINS(me == 1 ? "new_team is NULL" : "failed on PE 1");
    EXPECT_EQ(t, me == 1 ? 999 : ACLSHMEM_TEAM_INVALID);
    expect_pool_untouched(n, slot);

    /* split_2d: PE 0 asks for rows of 1, the others for rows of 2. */
    aclshmem_team_t x = 999, y = 999;
    int xr = me == 0 ? 1 : 2;
    harness_mark_error();
    rc = aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, xr, &x, &y);
    EXPECT_EQ(x, ACLSHMEM_TEAM_INVALID);
    EXPECT_EQ(y, ACLSHMEM_TEAM_INVALID);
    expect_disagreement(rc, me == 0 ? "PE 1 asked for (x_range 2)" : "PE 0 asked for (x_range 1)",
                        me == 0 ? "PE 0 for (x_range 1)" : "(x_range 2)");
    /* Rows of n and of n + 3 make the same teams, but the PEs still asked for different things. */
    harness_mark_error();
    rc = aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, me == n - 1 ? n + 3 : n, &x, &y);
    expect_disagreement(rc, "asked for (x_range", "(x_range");
    /* One PE passes an invalid x_range. */
    harness_mark_error();
    rc = aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, me == 1 ? 0 : 1, &x, &y);
    expect_disagreement(rc, "asked for (x_range", "(x_range");
    expect_pool_untouched(n, slot);

    /* PE 0 calls split_strided while the others call split_2d: the calls are named. */
    harness_mark_error();
    if (me == 0) {
        rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t);
        EXPECT_EQ(t, ACLSHMEM_TEAM_INVALID);
        expect_disagreement(rc, "PE 1 asked for aclshmem_team_split_2d (x_range 1)",
                            "PE 0 for aclshmem_team_split_strided (start 0, stride 1, size");
    } else {
        rc = aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, &x, &y);
        EXPECT_EQ(x, ACLSHMEM_TEAM_INVALID);
        expect_disagreement(rc, "PE 0 asked for aclshmem_team_split_strided (start 0, stride 1, size",
                            "for aclshmem_team_split_2d (x_range 1)");
    }
    expect_pool_untouched(n, slot);

    /* A split of a split: the PEs are named by their world numbers. */
    if (n >= 4) {
        aclshmem_team_t even = 999;
        ASSERT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, n / 2, &even), ACLSHMEM_SUCCESS);
        if (me % 2 == 0) {
            harness_mark_error();
            rc = me == 0 ? aclshmem_team_split_strided(even, 0, 1, 2, &t)
                         : aclshmem_team_split_strided(even, 1, 1, 1, &t);
            EXPECT_EQ(t, ACLSHMEM_TEAM_INVALID);
            if (me == 0)
                expect_disagreement(rc, "PE 2 asked for (start 1, stride 1, size 1)",
                                    "PE 0 for (start 0, stride 1, size 2)");
            else
                expect_disagreement(rc, "PE 0 asked for (start 0, stride 1, size 2)",
                                    "PE 2 for (start 1, stride 1, size 1)");
            aclshmem_barrier(even); /* the team still works */
            aclshmem_team_destroy(even);
        }
        aclshmem_barrier_all();
        expect_pool_untouched(n, slot);
    }
    aclshmem_free(slot);
    return 0;
}

/* ---- split_2d --------------------------------------------------------------------------- */
static void check_2d(int me, int n, int xr)
{
    aclshmem_team_t x = 999, y = 999;
    int rc = aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, xr, &x, &y);
    EXPECT_EQ(rc, ACLSHMEM_SUCCESS);
    if (rc != ACLSHMEM_SUCCESS)
        return;
    int row = me / xr, col = me % xr;
    int rows = (n + xr - 1) / xr;
    int x_n = n - row * xr < xr ? n - row * xr : xr;
    int y_n = 0;
    for (int r = 0; r < rows; r++)
        if (r * xr + col < n)
            y_n++;
    ASSERT(x > 0 && y > 0);
    EXPECT(x != y);
    if (aclshmem_team_my_pe(x) != col || aclshmem_team_n_pes(x) != x_n)
        harness_report(__FILE__, __LINE__, "x_range %d: x team %d/%d, expected %d/%d", xr,
                       aclshmem_team_my_pe(x), aclshmem_team_n_pes(x), col, x_n);
    if (aclshmem_team_my_pe(y) != row || aclshmem_team_n_pes(y) != y_n)
        harness_report(__FILE__, __LINE__, "x_range %d: y team %d/%d, expected %d/%d", xr,
                       aclshmem_team_my_pe(y), aclshmem_team_n_pes(y), row, y_n);
    for (int j = 0; j < x_n; j++)
        EXPECT_EQ(aclshmem_team_translate_pe(x, j, ACLSHMEM_TEAM_WORLD), row * xr + j);
    for (int j = 0; j < y_n; j++)
        EXPECT_EQ(aclshmem_team_translate_pe(y, j, ACLSHMEM_TEAM_WORLD), j * xr + col);
    /* The intersection of my row and my column is me. */
    EXPECT_EQ(aclshmem_team_translate_pe(x, col, y), row);
    aclshmem_barrier(x);
    aclshmem_barrier(y);
    aclshmem_team_destroy(x);
    aclshmem_team_destroy(y);
    expect_team_gone(x);
    expect_team_gone(y);
    aclshmem_barrier_all();
}

static int t_split_2d(int me, int n)
{
    check_2d(me, n, 1);
    check_2d(me, n, 2);
    if (n >= 3)
        check_2d(me, n, 3);
    check_2d(me, n, n);
    return 0;
}

/* ---- the pool: 2047 teams besides the world, lowest free id first ------------------- */
static int t_pool(int me, int n)
{
    (void)me;
    int made = 0;
    for (int i = 1; i < ACLSHMEM_MAX_TEAMS; i++) {
        aclshmem_team_t t = 999;
        int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t);
        if (rc != ACLSHMEM_SUCCESS) {
            harness_report(__FILE__, __LINE__, "team %d of %d: split returned %d", i,
                           ACLSHMEM_MAX_TEAMS - 1, rc);
            break;
        }
        if (t != i) {
            harness_report(__FILE__, __LINE__, "team %d got id %d", i, t);
            break;
        }
        made++;
    }
    EXPECT_EQ(made, ACLSHMEM_MAX_TEAMS - 1);
    EXPECT_EQ(aclshmem_team_n_pes(ACLSHMEM_MAX_TEAMS - 1), made == ACLSHMEM_MAX_TEAMS - 1 ? n : -1);

    aclshmem_team_t t = 999;
    harness_mark_error();
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_INNER_ERROR);
    EXPECT_EQ(t, ACLSHMEM_TEAM_INVALID);
    EXPECT_ERROR_SET();
    aclshmem_team_t x = 999, y = 999;
    EXPECT_NE(aclshmem_team_split_2d(ACLSHMEM_TEAM_WORLD, 1, &x, &y), ACLSHMEM_SUCCESS);

    /* Free two slots: they come back lowest first. */
    aclshmem_team_destroy(5);
    aclshmem_team_destroy(3);
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_SUCCESS);
    EXPECT_EQ(t, 3);
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_SUCCESS);
    EXPECT_EQ(t, 5);
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_INNER_ERROR);

    for (int i = 1; i <= made; i++)
        aclshmem_team_destroy(i);
    for (int i = 1; i < ACLSHMEM_MAX_TEAMS; i += 409)
        expect_team_gone(i);

    /* A second full round. */
    int again = 0;
    for (int i = 1; i < ACLSHMEM_MAX_TEAMS; i++) {
        int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t);
        if (rc != ACLSHMEM_SUCCESS || t != i) {
            harness_report(__FILE__, __LINE__, "round 2, team %d: rc %d id %d", i, rc, t);
            break;
        }
        again++;
    }
    EXPECT_EQ(again, ACLSHMEM_MAX_TEAMS - 1);
    for (int i = again; i >= 1; i--)
        aclshmem_team_destroy(i);
    EXPECT_EQ(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t), ACLSHMEM_SUCCESS);
    EXPECT_EQ(t, 1);
    aclshmem_team_destroy(t);
    aclshmem_barrier_all();
    return 0;
}

/* ---- a team id reused at once: split, barrier, destroy, again and again -------------- */
static int t_reuse_barrier(int me, int n)
{
    int64_t *arrived = aclshmem_calloc((size_t)n, sizeof(int64_t));
    ASSERT_NOT_NULL(arrived);
    aclshmem_barrier_all();
    int problems = 0;
    for (int r = 1; r <= 200; r++) {
        aclshmem_team_t t = 999;
        int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 1, n, &t);
        if (rc != ACLSHMEM_SUCCESS || t != 1) {
            harness_report(__FILE__, __LINE__, "round %d: split gave rc %d id %d", r, rc, t);
            break;
        }
        if (me == r % n)
            harness_sleep_ms(1); /* someone is late for the new team's barrier */
        for (int q = 0; q < n; q++)
            aclshmem_int64_p(&arrived[me], r, q);
        aclshmem_barrier(t);
        for (int j = 0; j < n; j++) {
            int64_t a = __atomic_load_n(&arrived[j], __ATOMIC_ACQUIRE);
            if ((a < r || a > r + 1) && problems++ < 5)
                harness_report(__FILE__, __LINE__, "round %d: PE %d is at %lld", r, j, (long long)a);
        }
        aclshmem_team_destroy(t);
    }
    aclshmem_barrier_all();
    aclshmem_free(arrived);
    return 0;
}

static const harness_case cases[] = {
    { "world", t_world, { 0 }, { 2, 4, 8 } },
    { "split_strided", t_split_strided, { 0 }, { 2, 4, 8 } },
    { "split_bad", t_split_bad, { 0 }, { 2, 4 } },
    { "split_mismatch", t_split_mismatch, { .init_timeout_s = 10, .timeout_s = 90 }, { 2, 4 } },
    { "split_2d", t_split_2d, { 0 }, { 2, 4, 8 } },
    { "reuse_barrier", t_reuse_barrier, { .timeout_s = 60 }, { 2, 8 } },
    { "pool", t_pool, { .timeout_s = 100 }, { 2, 4, 8 } },
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
