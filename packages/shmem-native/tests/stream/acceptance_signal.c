/*
 * acceptance_signal.c - a user program written only against the documented API: 4 PEs are
 * forked; PE 0 makes the unique ID and sends its bytes to the others through pipes; every PE
 * initialises, then for several rounds sends a block of data to its right neighbour with
 * aclshmemx_putmem_signal and waits on its own signal with aclshmem_signal_wait_until, and
 * checks what its left neighbour sent.  Exit status 0: correct data and no hang (a watchdog
 * kills the job after 60 s).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aclshmem.h"

#define NPES 4
#define ROUNDS 20
#define COUNT 4096 /* int64 elements per round */

static int fail(int pe, const char *what)
{
    fprintf(stderr, "acceptance_signal PE %d: %s (last error: %s)\n", pe, what, aclshmemx_get_last_error());
    return 1;
}

static int run_pe(int me, int uid_pipe[NPES][2])
{
    aclshmemx_uniqueid_t uid;
    if (me == 0) {
        if (aclshmemx_get_uniqueid(&uid) != ACLSHMEM_SUCCESS)
            return fail(me, "aclshmemx_get_uniqueid failed");
        for (int pe = 1; pe < NPES; pe++)
            if (write(uid_pipe[pe][1], &uid, sizeof uid) != (ssize_t)sizeof uid)
                return fail(me, "cannot send the unique id");
    } else if (read(uid_pipe[me][0], &uid, sizeof uid) != (ssize_t)sizeof uid) {
        return fail(me, "cannot receive the unique id");
    }

    aclshmemx_set_conf_store_tls(false, NULL, 0);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_uniqueid_args(me, NPES, 64LL << 20, &uid, &attr) != ACLSHMEM_SUCCESS ||
        aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) != ACLSHMEM_SUCCESS)
        return fail(me, "init failed");

    int right = (me + 1) % NPES, left = (me + NPES - 1) % NPES;
    int64_t *inbox = aclshmem_malloc(COUNT * sizeof(int64_t));
    int32_t *signal = aclshmem_calloc(1, sizeof(int32_t));
    int64_t *outbox = malloc(COUNT * sizeof(int64_t));
    if (!inbox || !signal || !outbox)
        return fail(me, "allocation failed");
    aclshmem_barrier_all();

    int errors = 0;
    for (int32_t round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < COUNT; i++)
            outbox[i] = (int64_t)me * 1000000 + round * 10000 + i;
        aclshmemx_putmem_signal(inbox, outbox, COUNT * sizeof(int64_t), signal, round, ACLSHMEM_SIGNAL_SET,
                                right);
        int32_t got = aclshmem_signal_wait_until(signal, ACLSHMEM_CMP_EQ, round);
        if (got != round)
            errors += fail(me, "aclshmem_signal_wait_until returned another value");
        for (int i = 0; i < COUNT; i++)
            if (inbox[i] != (int64_t)left * 1000000 + round * 10000 + i) {
                errors += fail(me, "wrong data after the signal");
                break;
            }
        aclshmem_barrier_all(); /* everyone has read this round before the next one is sent */
    }

    free(outbox);
    aclshmem_free(signal);
    aclshmem_free(inbox);
    if (aclshmem_finalize() != ACLSHMEM_SUCCESS)
        errors += fail(me, "finalize failed");
    if (!errors)
        printf("acceptance_signal PE %d: %d rounds from PE %d verified\n", me, ROUNDS, left);
    return errors ? 1 : 0;
}

int main(void)
{
    int uid_pipe[NPES][2];
    pid_t pids[NPES];
    for (int pe = 0; pe < NPES; pe++)
        if (pipe(uid_pipe[pe]) != 0)
            return perror("pipe"), 1;
    for (int pe = 0; pe < NPES; pe++) {
        pids[pe] = fork();
        if (pids[pe] < 0)
            return perror("fork"), 1;
        if (pids[pe] == 0) {
            alarm(60); /* a hang ends in SIGALRM, not a stuck test */
            int rc = run_pe(pe, uid_pipe);
            fflush(NULL);
            _exit(rc);
        }
    }
    int failed = 0;
    for (int pe = 0; pe < NPES; pe++) {
        int status = 0;
        while (waitpid(pids[pe], &status, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "acceptance_signal: PE %d ended badly (status 0x%x)\n", pe, status);
            failed = 1;
        }
    }
    if (failed)
        for (int pe = 0; pe < NPES; pe++)
            kill(pids[pe], SIGKILL);
    printf("acceptance_signal: %s\n", failed ? "FAILED" : "passed");
    return failed;
}
