/*
 * launch.c - see launch.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "launch.h"

#include <aclshmem.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LAUNCH_PES 64

static int join_failed(int me, const char *what)
{
    const char *why = aclshmemx_get_last_error();
    fprintf(stderr, "PE %d: FAILED: %s%s%s\n", me, what, why && why[0] ? ": " : "", why && why[0] ? why : "");
    return 1;
}

static int io_all(int fd, void *buf, size_t len, int writing)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = writing ? write(fd, p, len) : read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

/* Joins the job: PE 0 makes the unique ID and pipes it to the others. */
static int join(int me, int n, int64_t heap_size, int (*pipes)[2])
{
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    if (me == 0) {
        if (aclshmemx_get_uniqueid(&uid) != ACLSHMEM_SUCCESS)
            return join_failed(me, "aclshmemx_get_uniqueid");
        for (int pe = 1; pe < n; pe++)
            if (io_all(pipes[pe][1], &uid, sizeof uid, 1) != 0)
                return join_failed(me, "sending the unique ID");
    } else if (io_all(pipes[me][0], &uid, sizeof uid, 0) != 0) {
        return join_failed(me, "receiving the unique ID");
    }
    if (aclshmemx_set_conf_store_tls(false, NULL, 0) != ACLSHMEM_SUCCESS) /* a local demo: no TLS */
        return join_failed(me, "aclshmemx_set_conf_store_tls");
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_uniqueid_args(me, n, heap_size, &uid, &attr) != ACLSHMEM_SUCCESS ||
        aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) != ACLSHMEM_SUCCESS)
        return join_failed(me, "init");
    return 0;
}

/* In child me: closes the pipe ends it does not use, so that a PE waiting for the unique ID
 * sees end-of-file if PE 0 dies before sending it. */
static void keep_my_pipe_ends(int me, int n, int (*pipes)[2])
{
    for (int pe = 1; pe < n; pe++) {
        close(pipes[pe][me == 0 ? 0 : 1]);
        if (me != 0 && pe != me)
            close(pipes[pe][0]);
    }
}

/* Waits for every PE; returns how many failed, or -1 when waitpid fails. */
static int wait_all(const char *prog, int n, const pid_t *pids)
{
    int bad = 0;
    for (int pe = 0; pe < n; pe++) {
        int status;
        while (waitpid(pids[pe], &status, 0) < 0)
            if (errno != EINTR) {
                fprintf(stderr, "%s: waitpid: %s\n", prog, strerror(errno));
                return -1;
            }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s: PE %d failed (status 0x%x)\n", prog, pe, status);
            bad++;
        }
    }
    return bad;
}

int example_launch(const char *prog, int n, int64_t heap_size, unsigned time_limit, example_body_t body, void *arg)
{
    if (n < 1 || n > MAX_LAUNCH_PES) {
        fprintf(stderr, "%s: %d PEs: 1..%d can be launched\n", prog, n, MAX_LAUNCH_PES);
        return -1;
    }
    int pipes[MAX_LAUNCH_PES][2];
    pid_t pids[MAX_LAUNCH_PES];
    for (int pe = 1; pe < n; pe++) /* pipes[pe]: PE 0 -> PE pe */
        if (pipe(pipes[pe]) != 0) {
            fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
            return -1;
        }
    fflush(NULL); /* nothing buffered is written twice by the children */
    for (int pe = 0; pe < n; pe++) {
        pids[pe] = fork();
        if (pids[pe] < 0) {
            fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
            for (int started = 0; started < pe; started++)
                kill(pids[started], SIGKILL);
            return -1;
        }
        if (pids[pe] == 0) {
            alarm(time_limit);
            keep_my_pipe_ends(pe, n, pipes);
            int rc = join(pe, n, heap_size, pipes) != 0 ? 1 : body(pe, n, arg);
            fflush(NULL);
            _exit(rc);
        }
    }
    for (int pe = 1; pe < n; pe++) {
        close(pipes[pe][0]);
        close(pipes[pe][1]);
    }
    return wait_all(prog, n, pids);
}

double example_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
