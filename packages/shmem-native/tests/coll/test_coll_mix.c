/*
 * test_coll_mix.c - long seeded mixes of collectives on the world and on sub-teams that come
 * and go, every result checked on every PE (coll_mix.c, which the multi-node suite runs
 * across nodes too).
 */
#include "coll/coll_mix.h"
#include "harness.h"

static void report(int line, const char *message)
{
    harness_report("coll_mix.c", line, "%s", message);
}

static int t_mix_a(int me, int n)
{
    (void)me;
    return coll_mix_run(n, 0x9e3779b97f4a7c15ULL, 4000, report) != 0;
}

static int t_mix_b(int me, int n)
{
    (void)me;
    return coll_mix_run(n, 0xc2b2ae3d27d4eb4fULL, 4000, report) != 0;
}

static const harness_case cases[] = {
    {"mix_a", t_mix_a, {.timeout_s = 240}, {2, 3, 4}},
    {"mix_b", t_mix_b, {.timeout_s = 240}, {5, 7, 8}},
};

int main(int argc, char **argv)
{
    return harness_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
