/*
 * osh_launched.c - the OpenSHMEM program that test_oshrun.py builds with aclshmemcc (oshcc)
 * and starts with aclshmemrun (oshrun), or alone.  argv[1] says what to do:
 *
 *   ring          shmem_init; every PE puts its number into the next PE's symmetric word;
 *                 prints "ring <me> of <n> got <previous>" (stdout) and "stderr <me>" (stderr)
 *   cpus          the ring, silent, then "cpus <me> ok|bad: <the CPUs it may run on>"
 *   alone         shmem_init with no launcher: prints "alone <me> of <n> heap ok"
 *   env           prints the launcher's variables (no shmem_init)
 *   fail PE CODE  PE PE exits with CODE at once; the others sleep 60 s (no shmem_init)
 *   signals       prints "ready", then "got SIGINT" / "got SIGTERM" when one arrives, exit 0
 *   lines         a line without newline at the end, and one of 200000 bytes
 */
#define _GNU_SOURCE /* sched_getaffinity */

#include <sched.h>
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int run_pe(void)
{
    const char *pe = getenv("SHMEM_RUN_PE");
    return pe ? atoi(pe) : -1;
}

/* Every PE puts its number into the next PE's symmetric word; returns what arrived in its
 * own (the previous PE's number when the ring worked).  Between shmem_init and
 * shmem_finalize. */
static long ring_received(void)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *word = shmem_malloc(sizeof *word);
    *word = -1;
    shmem_barrier_all();
    long mine = me;
    shmem_putmem(word, &mine, sizeof mine, (me + 1) % n);
    shmem_barrier_all();
    long got = *word;
    shmem_free(word);
    return got;
}

/* Whether got is what ring_received gives on this PE when the ring worked. */
static int ring_ok(long got)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    return got == (me + n - 1) % n;
}

static int cpus(char **args)
{
    (void)args;
    shmem_init();
    int ok = ring_ok(ring_received());
    cpu_set_t set;
    printf("cpus %d %s:", shmem_my_pe(), ok ? "ok" : "bad");
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                printf(" %d", c);
    printf("\n");
    shmem_finalize();
    return ok ? 0 : 1;
}

static int ring(char **args)
{
    (void)args;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long got = ring_received();
    printf("ring %d of %d got %ld\n", me, n, got);
    fprintf(stderr, "stderr %d\n", me);
    int ok = ring_ok(got);
    shmem_finalize();
    return ok ? 0 : 1;
}

static int alone(char **args)
{
    (void)args;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    char *heap = shmem_malloc(64 << 20); /* within the 128 MiB default heap */
    printf("alone %d of %d heap %s\n", me, n, heap ? "ok" : "missing");
    shmem_free(heap);
    shmem_finalize();
    return heap && me == 0 && n == 1 ? 0 : 1;
}

static int env(char **args)
{
    (void)args;
    static const char *const names[] = {"SHMEM_RUN_PE", "SHMEM_RUN_NPES", "SHMEM_RUN_MEM_SIZE", "RANK",
                                        "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                                        "MASTER_PORT", "PYTHONUNBUFFERED"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *value = getenv(names[i]);
        printf("%s=%s\n", names[i], value ? value : "(unset)");
    }
    const char *uid = getenv("SHMEM_RUN_UID"), *secret = getenv("SHMEM_JOB_SECRET");
    printf("uid digits %zu, secret digits %zu\n", uid ? strlen(uid) : 0, secret ? strlen(secret) : 0);
    printf("secret %.8s\n", secret ? secret : "");
    return 0;
}

static int fail(char **args)
{
    if (!args[0] || !args[1])
        return 2;
    if (run_pe() == atoi(args[0]))
        return atoi(args[1]);
    sleep(60);
    printf("not stopped\n");
    return 0;
}

static volatile sig_atomic_t caught;

static void on_signal(int signum)
{
    caught = signum;
}

static int signals(char **args)
{
    (void)args;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("ready\n");
    fflush(stdout);
    struct timespec tenth = {0, 100000000};
    for (int i = 0; i < 600 && !caught; i++)
        nanosleep(&tenth, NULL);
    printf("got %s\n", caught == SIGINT ? "SIGINT" : caught == SIGTERM ? "SIGTERM" : "nothing");
    return caught ? 0 : 1;
}

static int lines(char **args)
{
    (void)args;
    static char longest[200001];
    memset(longest, 'x', sizeof longest - 1);
    printf("%s\n", longest);
    printf("first\nno newline at the end");
    return 0;
}

/* Every mode gets the arguments after its name (NULL-terminated). */
static const struct {
    const char *name;
    int (*run)(char **args);
} modes[] = {{"ring", ring},       {"alone", alone}, {"env", env},   {"fail", fail},
             {"signals", signals}, {"lines", lines},  {"cpus", cpus}};

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(what, modes[i].name) == 0)
            return modes[i].run(argv + 2);
    fprintf(stderr, "osh_launched: unknown mode \"%s\"\n", what);
    return 2;
}
