/*
 * mn_victim.c - the multi-node suite's case victim: a job for tests/multinode/test_outsider.py
 * to attack from outside, which checks that nothing of it changed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "aclshmem.h"
#include "mn_suite.h"

/* ---- a victim for an attacker outside the job (tests/multinode/test_outsider.py) ------------ */
/* Every PE fills a symmetric "target" with its own pattern and publishes where it lies: the
 * file $MN_VICTIM_FILE.pe<N> says "pid P", "target ADDRESS LENGTH" (what an attacker who
 * guessed right would aim at).  Then, until $MN_VICTIM_FILE.done exists or MN_VICTIM_SECONDS
 * (default 2) have passed, the job keeps busy the way a real one would while the attacker
 * works: each round a put and an atomic add to the PE on the next node, a barrier, a get of
 * that PE's whole target, and a 20 ms sleep, so that the UCX worker is progressed all along.
 * Every round checks that the own target still holds its pattern (the first change is
 * reported with the time it was seen), that the peer's target reads back as its pattern and
 * that the job's own RMA delivered.  A barrier that fails (a PE died) ends the PE at once,
 * after a last look at its target. */
#define VICTIM_TARGET (64 * 1024)
#define VICTIM_CHUNK 4096
#define VICTIM_SALT 77

static void victim_publish(const char *file, const void *target)
{
    char path[4096], tmp[4096 + 8];
    snprintf(path, sizeof path, "%s.pe%d", file, me);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fail_at(__LINE__, "cannot write %s", tmp);
        return;
    }
    fprintf(f, "pid %d\ntarget 0x%llx %d\n", (int)getpid(),
            (unsigned long long)(uintptr_t)target, VICTIM_TARGET);
    fclose(f);
    CHECK(rename(tmp, path) == 0, "cannot rename %s to %s", tmp, path); /* seen whole or not at all */
}

/* PE 0 decides when the rounds end and tells every PE through its stop word. */
static int victim_over(double deadline, const char *file)
{
    char done[4096];
    snprintf(done, sizeof done, "%s.done", file ? file : "");
    return now() > deadline || (file && access(done, F_OK) == 0);
}

/* Ends this PE when the last barrier failed (the job is broken), after a last look at its
 * target: what an attacker wrote before a PE died is reported too. */
static void victim_check_barrier(int round, const unsigned char *target)
{
    const char *err = aclshmemx_get_last_error();
    if (!err || !*err)
        return;
    printf("FAIL PE %d [%s]: barrier of round %d failed, the job is broken: %s\n", me, case_name,
           round, err);
    EXPECT_PAT("my target when the job broke", target, VICTIM_TARGET, 0, me, VICTIM_SALT);
    fflush(stdout);
    _exit(1); /* finalize with a dead PE is not what this case tests */
}

typedef struct {
    unsigned char *target, *inbox, *loc;
    int64_t *words; /* [0]: atomic adds received, [1]: stop */
    double t0;
    int target_ok, peer_ok; /* a change is reported once */
} victim_t;

/* One round (see above); returns 1 when it was the last one. */
static int victim_round(victim_t *v, int round, double deadline, const char *file)
{
    fill(v->loc, VICTIM_CHUNK, me, round);
    aclshmem_putmem(v->inbox, v->loc, VICTIM_CHUNK, peer);
    aclshmem_int64_atomic_add(&v->words[0], 1, peer);
    if (me == 0 && victim_over(deadline, file))
        for (int q = 0; q < n; q++)
            aclshmem_int64_p(&v->words[1], 1, q);
    aclshmem_barrier_all();
    victim_check_barrier(round, v->target);
    int stop = v->words[1] != 0; /* read between the barriers: PE 0 writes it before the first */
    char what[64];
    snprintf(what, sizeof what, "round %d: the put from PE %d", round, src);
    EXPECT_PAT(what, v->inbox, VICTIM_CHUNK, 0, src, round);
    CHECK(v->words[0] == round, "round %d: %lld atomic adds arrived, want %d", round,
          (long long)v->words[0], round);
    aclshmem_getmem(v->loc, v->target, VICTIM_TARGET, peer);
    snprintf(what, sizeof what, "round %d: PE %d's target, read by a get", round, peer);
    v->peer_ok = v->peer_ok && EXPECT_PAT(what, v->loc, VICTIM_TARGET, 0, peer, VICTIM_SALT);
    snprintf(what, sizeof what, "my target, %.2f s after it was published", now() - v->t0);
    v->target_ok = v->target_ok && EXPECT_PAT(what, v->target, VICTIM_TARGET, 0, me, VICTIM_SALT);
    aclshmem_barrier_all(); /* the inbox is checked before the next round overwrites it */
    victim_check_barrier(round, v->target);
    return stop;
}

void case_victim(void)
{
    const char *file = getenv("MN_VICTIM_FILE"), *s_secs = getenv("MN_VICTIM_SECONDS");
    victim_t v = {.target = sym_alloc(VICTIM_TARGET), .inbox = sym_alloc(VICTIM_CHUNK),
                  .loc = xmalloc(VICTIM_TARGET), .words = sym_alloc(2 * sizeof(int64_t)),
                  .target_ok = 1, .peer_ok = 1};
    fill(v.target, VICTIM_TARGET, me, VICTIM_SALT);
    v.words[0] = v.words[1] = 0;
    aclshmem_barrier_all();
    if (file)
        victim_publish(file, v.target);
    v.t0 = now();
    double deadline = v.t0 + (s_secs ? atof(s_secs) : 2.0);
    int round = 1;
    while (!victim_round(&v, round, deadline, file)) {
        sleep_ms(20);
        round++;
    }
    printf("PE %d: %d rounds in %.2f s\n", me, round, now() - v.t0);
    free(v.loc);
    aclshmem_free(v.words);
    aclshmem_free(v.inbox);
    aclshmem_free(v.target);
}
