/*
 * fuzz_ctrl.c - a seeded random fuzzer of PE 0's control-plane protocol (issue 11).
 *
 * Each iteration starts PE 0's store server in this process (the library's own objects are
 * linked in, so ASan/UBSan builds watch the server's memory) for 1-8 PEs, joins every PE
 * as an insider (tests/ctrl/insider.h: the real handshake, TLS on in some iterations),
 * and splits them into honest PEs and attackers.  Then, in random order:
 *
 *  - attackers send every message type, known and unknown, with random keys (from a
 *    small set, so they collide), member counts, indexes, lengths and payloads, payloads
 *    shorter or longer than announced, half headers, raw garbage, goodbyes and hang-ups;
 *  - outsiders connect without the secret, or try to join as a PE already taken;
 *  - honest PEs run collectives among themselves on keys the attackers never use.
 *
 * What must hold, or the run fails with the seed that reproduces it:
 *  - the server never crashes, and in a sanitizer build never touches memory it should not;
 *  - it never sends a header no server may send;
 *  - honest collectives complete, with every member's data in place, within seconds,
 *    whatever the attackers do; an honest PE is never reported dead;
 *  - the server stops promptly at the end of every iteration (no hang, nothing leaked).
 *
 * Usage: fuzz_ctrl [--seed N] [--iterations N] [--seconds S] [--verbose]
 *   (also SHMEM_FUZZ_SEED / SHMEM_FUZZ_ITERATIONS / SHMEM_FUZZ_SECONDS).  The default is
 *   the bounded CI run; a soak run is e.g. --iterations 0 --seconds 3600 (0: no limit).
 *   A failure prints "--seed X --iterations 1", which replays just the failing iteration.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aclshmem.h"
#include "bootstrap/net.h"
#include "insider.h"
#define FUZZ_NAME "fuzz_ctrl"
#include "fuzz.h"

#define MAX_PES 8
#define HONEST_KEY_BIT (1ull << 63)
#define ATTACKER_KEYS 8
#define SMALL_PAYLOAD 4096
#define REPLY_MS 5000        /* what an honest collective may take on a loaded machine */
#define ITERATION_ALARM_S 60 /* an iteration that takes longer has hung */
#define DEFAULT_ITERATIONS 3000
#define DEFAULT_SECONDS 40

/* ---- failure reporting -------------------------------------------------------------- */
static int verbose;

static void on_alarm(int sig)
{
    (void)sig;
    char msg[160];
    int n = snprintf(msg, sizeof(msg),
                     "fuzz_ctrl: FAILED: an iteration hung\nfuzz_ctrl: reproduce with: fuzz_ctrl --seed %llu "
                     "--iterations 1\n", (unsigned long long)iteration_seed);
    ssize_t ignored = write(2, msg, (size_t)n);
    (void)ignored;
    _exit(2);
}

/* ---- one job under fuzzing ------------------------------------------------------------ */
typedef struct {
    insider_t peer;
    int connected;
    int honest;
    int stuck; /* sent part of a message: anything more would only continue it */
} fuzz_pe_t;

typedef struct {
    insider_server_t srv;
    int n_pes;
    fuzz_pe_t pes[MAX_PES];
    int outsiders[4];
    int n_outsiders;
    uint64_t honest_seq;
    unsigned long actions, messages;
} job_t;

static void disconnect(fuzz_pe_t *p)
{
    if (p->connected)
        insider_close(&p->peer);
    p->connected = 0;
}

/* A message for an attacker: anything the server may send is fine; it may also be gone. */
static void drain_attacker(job_t *job, int pe)
{
    fuzz_pe_t *p = &job->pes[pe];
    for (;;) {
        shmemi_msg_t m;
        uint8_t *payload;
        int rc = insider_recv(&p->peer, &m, &payload, 0);
        free(payload);
        if (rc == -2)
            fail("the server sent PE %d a header no server may send (type %u, len %u)", pe, m.type, m.len);
        if (rc < 0)
            disconnect(p);
        if (rc <= 0)
            return;
    }
}

/* What an honest PE may be told between its own collectives. */
static void check_notice(job_t *job, int pe, const shmemi_msg_t *m)
{
    if (m->type == SHMEMI_MSG_PEER_DIED) {
        if (m->arg < 0 || m->arg >= job->n_pes)
            fail("PE %d was told that PE %d died, in a job of %d", pe, m->arg, job->n_pes);
        if (job->pes[m->arg].honest)
            fail("PE %d was told that honest PE %d died", pe, m->arg);
        return;
    }
    if (m->type == SHMEMI_MSG_EXIT)
        return;
    fail("honest PE %d got an unexpected message: type %u key %llx arg %d", pe, m->type,
         (unsigned long long)m->key, m->arg);
}

static void drain_honest(job_t *job, int pe)
{
    for (;;) {
        shmemi_msg_t m;
        uint8_t *payload;
        int rc = insider_recv(&job->pes[pe].peer, &m, &payload, 0);
        free(payload);
        if (rc == 0)
            return;
        if (rc < 0)
            fail("honest PE %d lost its connection (recv %d)", pe, rc);
        check_notice(job, pe, &m);
    }
}

static void drain_all(job_t *job)
{
    for (int pe = 0; pe < job->n_pes; pe++) {
        if (!job->pes[pe].connected)
            continue;
        if (job->pes[pe].honest)
            drain_honest(job, pe);
        else
            drain_attacker(job, pe);
    }
}

/* ---- honest PEs ----------------------------------------------------------------------- */
static void expect_done(job_t *job, int pe, uint64_t key, int n, int idx, uint32_t len)
{
    for (;;) {
        shmemi_msg_t m;
        uint8_t *payload;
        int rc = insider_recv(&job->pes[pe].peer, &m, &payload, REPLY_MS);
        if (rc == 0)
            fail("honest PE %d: no answer to collective %llx within %d ms", pe, (unsigned long long)key, REPLY_MS);
        if (rc < 0)
            fail("honest PE %d lost its connection waiting for collective %llx", pe, (unsigned long long)key);
        if (m.type != SHMEMI_MSG_COLL_DONE) {
            free(payload);
            check_notice(job, pe, &m);
            continue;
        }
        if (m.key != key || m.n != n || m.idx != idx || m.len != (uint32_t)n * len)
            fail("honest PE %d: collective %llx came back as key %llx n %d idx %d len %u (wanted n %d idx %d len %u)",
                 pe, (unsigned long long)key, (unsigned long long)m.key, m.n, m.idx, m.len, n, idx, (uint32_t)n * len);
        for (int j = 0; j < n; j++)
            for (uint32_t b = 0; b < len; b++)
                if (payload[(size_t)j * len + b] != (uint8_t)(key + (uint64_t)j * 31 + b))
                    fail("honest PE %d: collective %llx member %d's byte %u is wrong", pe, (unsigned long long)key, j, b);
        free(payload);
        return;
    }
}

/* Members: the honest PEs still connected, a random subset of them (or all). */
static void honest_collective(job_t *job, int everyone)
{
    int members[MAX_PES], n = 0;
    for (int pe = 0; pe < job->n_pes; pe++)
        if (job->pes[pe].connected && job->pes[pe].honest && (everyone || rnd(2)))
            members[n++] = pe;
    if (n == 0)
        return;
    uint64_t key = HONEST_KEY_BIT | ++job->honest_seq;
    uint32_t len = rnd(4) == 0 ? 0 : 1 + rnd(256);
    uint8_t data[256];
    for (int i = 0; i < n; i++) {
        for (uint32_t b = 0; b < len; b++)
            data[b] = (uint8_t)(key + (uint64_t)i * 31 + b);
        shmemi_msg_t m = {.type = SHMEMI_MSG_COLL, .len = len, .key = key, .n = n, .idx = i};
        if (insider_send(&job->pes[members[i]].peer, &m, data, len) != 0)
            fail("honest PE %d cannot send to the server", members[i]);
        job->messages++;
    }
    for (int i = 0; i < n; i++)
        expect_done(job, members[i], key, n, i, len);
}

/* ---- attackers ------------------------------------------------------------------------ */
static int32_t wild_count(int n_pes)
{
    switch (rnd(8)) {
    case 0:
        return INT_MAX;
    case 1:
        return INT_MIN;
    case 2:
        return (int32_t)rnd64();
    default:
        return (int32_t)rnd((uint32_t)n_pes + 3) - 1; /* -1 .. n_pes + 1 */
    }
}

static uint32_t wild_length(void)
{
    switch (rnd(12)) {
    case 0:
        return SHMEMI_MAX_PAYLOAD;
    case 1:
        return SHMEMI_MAX_PAYLOAD + 1;
    case 2:
        return UINT32_MAX;
    case 3:
        return (uint32_t)rnd64();
    case 4:
    case 5:
        return 0;
    default:
        return rnd(64) == 0 ? rnd(SMALL_PAYLOAD) : rnd(24);
    }
}

static uint32_t wild_type(void)
{
    static const uint32_t types[] = {SHMEMI_MSG_COLL, SHMEMI_MSG_COLL, SHMEMI_MSG_COLL, SHMEMI_MSG_COLL,
                                     SHMEMI_MSG_COLL, SHMEMI_MSG_EXIT, SHMEMI_MSG_BYE, SHMEMI_MSG_COLL_DONE,
                                     SHMEMI_MSG_COLL_ERROR, SHMEMI_MSG_PEER_DIED, 0, 7};
    return rnd(10) == 0 ? (uint32_t)rnd64() : types[rnd(sizeof(types) / sizeof(types[0]))];
}

/* Sends m with a payload of the announced length, or shorter (then the attacker is stuck
 * mid-message or hangs up), or longer (the extra bytes start the next "header"). */
static void attacker_send(job_t *job, int pe, shmemi_msg_t *m)
{
    fuzz_pe_t *p = &job->pes[pe];
    static uint8_t payload[SMALL_PAYLOAD + 64];
    size_t send_len = m->len;
    int short_payload = m->len > SMALL_PAYLOAD || rnd(16) == 0;
    if (short_payload)
        send_len = rnd((uint32_t)(m->len < SMALL_PAYLOAD ? m->len : SMALL_PAYLOAD) + 1);
    else if (rnd(16) == 0)
        send_len += rnd(64);
    rnd_fill(payload, send_len);
    job->messages++;
    if (insider_send(&p->peer, m, payload, send_len) != 0) {
        disconnect(p);
        return;
    }
    if (short_payload && send_len < m->len) {
        if (rnd(2))
            disconnect(p);
        else
            p->stuck = 1;
    }
}

/* A COLL that looks right: the shape of a collective among n of the job's PEs, on one of
 * the attackers' keys, so several attackers complete, collide or disagree. */
static void plausible_collective(job_t *job, int pe)
{
    int n = 1 + (int)rnd((uint32_t)job->n_pes);
    uint32_t len = rnd(3) == 0 ? 0 : 8 * (1 + rnd(4));
    shmemi_msg_t m = {.type = SHMEMI_MSG_COLL, .len = len, .key = rnd(ATTACKER_KEYS), .n = n,
                      .idx = (int32_t)rnd((uint32_t)n)};
    if (rnd(8) == 0)
        m.n += rnd(2) ? 1 : -1;
    attacker_send(job, pe, &m);
}

static void wild_message(job_t *job, int pe)
{
    shmemi_msg_t m = {.type = wild_type(), .len = wild_length(), .key = rnd(ATTACKER_KEYS),
                      .n = wild_count(job->n_pes), .idx = wild_count(job->n_pes), .arg = (int32_t)rnd64(),
                      .reserved = (int32_t)rnd64()};
    if (m.type == SHMEMI_MSG_EXIT && rnd(2))
        m.len = 0; /* a well-formed EXIT now and then: the server relays it */
    attacker_send(job, pe, &m);
}

static void raw_bytes(job_t *job, int pe)
{
    uint8_t junk[128];
    size_t len = 1 + rnd(sizeof(junk));
    rnd_fill(junk, len);
    if (insider_send_raw(&job->pes[pe].peer, junk, len) != 0)
        disconnect(&job->pes[pe]);
    else
        job->pes[pe].stuck = 1; /* out of step with the framing from here on */
}

static void attacker_action(job_t *job, int pe)
{
    fuzz_pe_t *p = &job->pes[pe];
    if (p->stuck) {
        if (rnd(4) == 0)
            disconnect(p);
        return;
    }
    uint32_t what = rnd(100);
    if (what < 45)
        plausible_collective(job, pe);
    else if (what < 90)
        wild_message(job, pe);
    else if (what < 95)
        raw_bytes(job, pe);
    else if (what < 98)
        disconnect(p);
    else {
        shmemi_msg_t bye = {.type = SHMEMI_MSG_BYE};
        insider_send(&p->peer, &bye, NULL, 0);
        job->messages++;
    }
}

/* ---- outsiders --------------------------------------------------------------------------- */
static void outsider_action(job_t *job)
{
    if (rnd(2) == 0 && job->n_outsiders < 4) {
        int fd = shmemi_tcp_connect(&job->srv.addr, job->srv.addr_len, shmemi_now_ms() + 2000);
        if (fd < 0)
            fail("cannot connect to the server: %s", strerror(-fd));
        if (rnd(2)) {
            uint8_t junk[200];
            rnd_fill(junk, sizeof(junk));
            ssize_t ignored = send(fd, junk, 1 + rnd(sizeof(junk)), MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)ignored;
        }
        job->outsiders[job->n_outsiders++] = fd;
        return;
    }
    /* An insider after the seat of a PE that already joined, or of no PE at all. */
    insider_t again;
    int pe = (int)rnd((uint32_t)job->n_pes + 2) - 1;
    int n = rnd(4) == 0 ? job->n_pes + 1 : job->n_pes;
    if (insider_join(&again, &job->srv, pe, n) == 0)
        fail("a second PE %d of %d was let in", pe, n);
}

/* ---- an iteration -------------------------------------------------------------------- */
static void set_tls(int on)
{
    if (aclshmemx_set_conf_store_tls(on ? true : false, "", 0) != 0)
        fail("cannot turn TLS %s: %s", on ? "on" : "off", aclshmemx_get_last_error());
}

static void start_job(job_t *job)
{
    memset(job, 0, sizeof(*job));
    job->n_pes = 1 + (int)rnd(MAX_PES);
    set_tls(rnd(6) == 0);
    if (insider_server_start(&job->srv, job->n_pes) != 0)
        fail("cannot start a server: %s", aclshmemx_get_last_error());
    int honest = 0;
    for (int pe = 0; pe < job->n_pes; pe++) {
        if (insider_join(&job->pes[pe].peer, &job->srv, pe, job->n_pes) != 0)
            fail("PE %d of %d cannot join a fresh server", pe, job->n_pes);
        job->pes[pe].connected = 1;
        job->pes[pe].honest = rnd(2);
        honest += job->pes[pe].honest;
    }
    if (job->n_pes > 1 && honest == job->n_pes)
        job->pes[rnd((uint32_t)job->n_pes)].honest = 0; /* someone must attack */
}

static void end_job(job_t *job)
{
    honest_collective(job, 1); /* the server still serves everyone honest */
    drain_all(job);
    for (int pe = 0; pe < job->n_pes; pe++)
        disconnect(&job->pes[pe]);
    for (int i = 0; i < job->n_outsiders; i++)
        close(job->outsiders[i]);
    long ms = insider_server_stop(&job->srv, 2000);
    if (ms > 3000)
        fail("the server took %ld ms to stop", ms);
}

static void run_iteration(job_t *job)
{
    rng_state = splitmix64(iteration_seed) | 1;
    start_job(job);
    int actions = 1 + (int)rnd(60);
    for (int a = 0; a < actions; a++) {
        int pe = (int)rnd((uint32_t)job->n_pes);
        uint32_t what = rnd(100);
        if (what < 5)
            outsider_action(job);
        else if (what < 20)
            honest_collective(job, 0);
        else if (job->pes[pe].connected && !job->pes[pe].honest)
            attacker_action(job, pe);
        drain_all(job);
        job->actions++;
    }
    end_job(job);
}

/* ---- main ------------------------------------------------------------------------------- */
static uint64_t number_arg(const char *text, const char *name)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno || *end || !*text) {
        fprintf(stderr, "fuzz_ctrl: %s wants a number, not \"%s\"\n", name, text);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    uint64_t iterations = DEFAULT_ITERATIONS, seconds = DEFAULT_SECONDS;
    const char *env;
    if ((env = getenv("SHMEM_FUZZ_SEED")))
        seed = number_arg(env, "SHMEM_FUZZ_SEED");
    if ((env = getenv("SHMEM_FUZZ_ITERATIONS")))
        iterations = number_arg(env, "SHMEM_FUZZ_ITERATIONS");
    if ((env = getenv("SHMEM_FUZZ_SECONDS")))
        seconds = number_arg(env, "SHMEM_FUZZ_SECONDS");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--seed") == 0)
            seed = number_arg(argv[++i], "--seed");
        else if (i + 1 < argc && strcmp(argv[i], "--iterations") == 0)
            iterations = number_arg(argv[++i], "--iterations");
        else if (i + 1 < argc && strcmp(argv[i], "--seconds") == 0)
            seconds = number_arg(argv[++i], "--seconds");
        else {
            fprintf(stderr, "usage: fuzz_ctrl [--seed N] [--iterations N (0: no limit)] "
                            "[--seconds S (0: no limit)] [--verbose]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_alarm);
    printf("fuzz_ctrl: seed %llu, up to %llu iterations, up to %llu s\n", (unsigned long long)seed,
           (unsigned long long)iterations, (unsigned long long)seconds);
    int64_t t0 = shmemi_now_ms();
    uint64_t done = 0;
    unsigned long actions = 0, messages = 0;
    job_t job;
    /* Each iteration replays alone from its own seed, the first one from the run's seed. */
    for (iteration_seed = seed; iterations == 0 || done < iterations; iteration_seed = splitmix64(iteration_seed)) {
        if (seconds && shmemi_now_ms() - t0 >= (int64_t)seconds * 1000)
            break;
        alarm(ITERATION_ALARM_S);
        run_iteration(&job);
        alarm(0);
        actions += job.actions;
        messages += job.messages;
        done++;
        if (verbose)
            printf("  iteration %llu (seed %llu): %d PEs, %lu actions\n", (unsigned long long)done,
                   (unsigned long long)iteration_seed, job.n_pes, job.actions);
    }
    printf("fuzz_ctrl: PASS: %llu iterations, %lu actions, %lu attacker/honest messages in %.1f s\n",
           (unsigned long long)done, actions, messages, (double)(shmemi_now_ms() - t0) / 1000.0);
    return 0;
}
