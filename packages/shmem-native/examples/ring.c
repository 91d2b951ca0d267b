/*
 * ring.c - a complete libaclshmem program, written only against the public API.
 *
 *   ring [N]      (N PEs, default 4)
 *
 * The parent process forks N children; child i is PE i.  PE 0 makes the job's unique
 * ID and sends its 136 bytes through one pipe to each other PE.  Every PE then joins
 * the job with that ID and checks, in order:
 *
 *   1. ring put   each PE puts its number into its right neighbour's `from_left`
 *   2. get        each PE reads its left neighbour's `stamp`
 *   3. ptr        each PE stores straight into its right neighbour's `direct`
 *                 through the address aclshmem_ptr() gives
 *   4. iput       each PE writes a strided pattern into its right neighbour's `strided`
 *   5. team       the even PEs form a team, meet at its barrier and destroy it
 *
 * Each PE prints one line saying what it verified.  The parent exits 0 only when every
 * PE exited 0.
 */
#define _POSIX_C_SOURCE 200809L

#include <aclshmem.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAP_SIZE (64LL * 1024 * 1024) /* per PE */
#define MAX_PES 64
#define STRIDED_N 4    /* elements written by the iput */
#define STRIDE 2       /* distance between them on the target */
#define TIME_LIMIT 120 /* seconds; a child that hangs longer is killed by SIGALRM */

/* Reports a failed check of PE me and returns 1 (for `failures += ...`). */
static int fail(int me, const char *what)
{
    const char *why = aclshmemx_get_last_error();
    fprintf(stderr, "PE %d: FAILED: %s%s%s\n", me, what, (why && why[0]) ? ": " : "",
            (why && why[0]) ? why : "");
    return 1;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) /* 0: PE 0 closed the pipe without sending an ID */
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The work of one PE once it has joined the job.  Returns the number of failed checks. */
static int run_checks(int me, int n)
{
    int failures = 0;
    int right = (me + 1) % n;
    int left = (me + n - 1) % n;
    char done[256] = "";

    /* Symmetric arrays: every PE allocates the same things in the same order. */
    int32_t *from_left = aclshmem_malloc(sizeof(int32_t));
    int32_t *stamp = aclshmem_malloc(sizeof(int32_t));
    int32_t *direct = aclshmem_malloc(sizeof(int32_t));
    int32_t *strided = aclshmem_malloc(STRIDED_N * STRIDE * sizeof(int32_t));
    if (!from_left || !stamp || !direct || !strided)
        return fail(me, "aclshmem_malloc");

    *from_left = -1;
    *stamp = 1000 + me;
    *direct = -1;
    for (int i = 0; i < STRIDED_N * STRIDE; i++)
        strided[i] = -1;
    aclshmem_barrier_all(); /* everyone's arrays are initialised before anyone writes */

    /* 1. ring put */
    int32_t my_id = me;
    aclshmem_int32_put(from_left, &my_id, 1, right);
    aclshmem_barrier_all();
    if (*from_left != left) {
        fprintf(stderr, "PE %d: ring put: expected %d, found %d\n", me, left, (int)*from_left);
        failures += fail(me, "ring put");
    } else {
        strcat(done, "ring put");
    }

    /* 2. get from the left neighbour */
    int32_t got = -1;
    aclshmem_int32_get(&got, stamp, 1, left);
    if (got != 1000 + left) {
        fprintf(stderr, "PE %d: get: expected %d, found %d\n", me, 1000 + left, (int)got);
        failures += fail(me, "get");
    } else {
        strcat(done, ", get");
    }

    /* 3. a plain store through the peer address */
    int32_t *peer = aclshmem_ptr(direct, right);
    if (peer == NULL) {
        failures += fail(me, "aclshmem_ptr returned NULL for a PE on this machine");
    } else {
        *peer = 2000 + me;
    }
    aclshmem_barrier_all();
    if (*direct != 2000 + left) {
        fprintf(stderr, "PE %d: ptr store: expected %d, found %d\n", me, 2000 + left, (int)*direct);
        failures += fail(me, "store through aclshmem_ptr");
    } else {
        strcat(done, ", ptr store");
    }

    /* 4. strided put: source elements 0..STRIDED_N-1 land every STRIDE elements */
    int32_t pattern[STRIDED_N];
    for (int i = 0; i < STRIDED_N; i++)
        pattern[i] = 100 * me + i;
    aclshmem_int32_iput(strided, pattern, STRIDE, 1, STRIDED_N, right);
    aclshmem_barrier_all();
    int iput_ok = 1;
    for (int i = 0; i < STRIDED_N * STRIDE; i++) {
        int32_t want = (i % STRIDE == 0) ? 100 * left + i / STRIDE : -1;
        if (strided[i] != want) {
            fprintf(stderr, "PE %d: iput: element %d: expected %d, found %d\n", me, i, (int)want,
                    (int)strided[i]);
            iput_ok = 0;
        }
    }
    if (iput_ok)
        strcat(done, ", iput");
    else
        failures += fail(me, "iput");

    /* 5. the team of even PEs */
    int n_even = (n + 1) / 2;
    aclshmem_team_t even = ACLSHMEM_TEAM_INVALID;
    int rc = aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, n_even, &even);
    if (rc != ACLSHMEM_SUCCESS) {
        failures += fail(me, "aclshmem_team_split_strided");
    } else if (me % 2 == 0) {
        if (even == ACLSHMEM_TEAM_INVALID) {
            failures += fail(me, "even PE got no team");
        } else {
            int team_me = aclshmem_team_my_pe(even);
            int team_n = aclshmem_team_n_pes(even);
            aclshmem_barrier(even);
            if (team_me != me / 2 || team_n != n_even) {
                fprintf(stderr, "PE %d: team: expected %d of %d, found %d of %d\n", me, me / 2,
                        n_even, team_me, team_n);
                failures += fail(me, "team of even PEs");
            } else {
                char line[64];
                snprintf(line, sizeof line, ", even team (PE %d of %d)", team_me, team_n);
                strcat(done, line);
            }
            aclshmem_team_destroy(even);
        }
    } else {
        if (even != ACLSHMEM_TEAM_INVALID) {
            failures += fail(me, "odd PE was put in the even team");
            aclshmem_team_destroy(even);
        } else {
            strcat(done, ", not in the even team");
        }
    }

    aclshmem_barrier_all();
    aclshmem_free(strided);
    aclshmem_free(direct);
    aclshmem_free(stamp);
    aclshmem_free(from_left);

    printf("PE %d/%d: verified %s (left PE %d, right PE %d)%s\n", me, n, done[0] ? done : "nothing",
           left, right, failures ? " -- WITH FAILURES" : "");
    fflush(stdout);
    return failures;
}

/* Body of child `me`.  uid_fds[i] is the write end of PE i's pipe (PE 0 only) or, at
 * index me, this PE's read end.  Returns the process exit status. */
static int pe_main(int me, int n, int *uid_fds)
{
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    alarm(TIME_LIMIT);

    if (me == 0) {
        int rc = aclshmemx_get_uniqueid(&uid);
        if (rc != ACLSHMEM_SUCCESS)
            fail(0, "aclshmemx_get_uniqueid");
        /* Closing the pipes unsent tells the others that there is no job. */
        for (int i = 1; i < n; i++) {
            if (rc == ACLSHMEM_SUCCESS && write_all(uid_fds[i], &uid, sizeof uid) != 0) {
                perror("ring: PE 0: sending the unique ID");
                rc = -1;
            }
            close(uid_fds[i]);
        }
        if (rc != ACLSHMEM_SUCCESS)
            return 1;
    } else {
        int rc = read_all(uid_fds[me], &uid, sizeof uid);
        close(uid_fds[me]);
        if (rc != 0) {
            fprintf(stderr, "PE %d: FAILED: no unique ID came from PE 0\n", me);
            return 1;
        }
    }

    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    if (aclshmemx_set_attr_uniqueid_args(me, n, HEAP_SIZE, &uid, &attr) != ACLSHMEM_SUCCESS)
        return fail(me, "aclshmemx_set_attr_uniqueid_args");
    if (aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr) != ACLSHMEM_SUCCESS)
        return fail(me, "aclshmemx_init_attr");

    int failures = 0;
    if (aclshmem_my_pe() != me || aclshmem_n_pes() != n) {
        fprintf(stderr, "PE %d: aclshmem_my_pe()/n_pes() say %d of %d\n", me, aclshmem_my_pe(),
                aclshmem_n_pes());
        failures += fail(me, "PE numbering");
    } else {
        failures += run_checks(me, n);
    }

    if (aclshmem_finalize() != ACLSHMEM_SUCCESS)
        failures += fail(me, "aclshmem_finalize");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    int n = 4;
    if (argc > 2) {
        fprintf(stderr, "usage: %s [number of PEs, 1..%d]\n", argv[0], MAX_PES);
        return 2;
    }
    if (argc == 2) {
        char *end = NULL;
        long v = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || v < 1 || v > MAX_PES) {
            fprintf(stderr, "%s: the number of PEs must be an integer from 1 to %d, not '%s'\n",
                    argv[0], MAX_PES, argv[1]);
            return 2;
        }
        n = (int)v;
    }

    /* One pipe per PE other than 0: [i][0] is PE i's read end, [i][1] PE 0's write end. */
    int pipes[MAX_PES][2];
    for (int i = 1; i < n; i++) {
        if (pipe(pipes[i]) != 0) {
            perror("ring: pipe");
            return 1;
        }
    }

    fflush(stdout);
    pid_t pids[MAX_PES];
    for (int me = 0; me < n; me++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("ring: fork");
            for (int j = 0; j < me; j++)
                kill(pids[j], SIGKILL);
            return 1;
        }
        if (pid == 0) {
            /* Keep only this PE's ends of the pipes. */
            int fds[MAX_PES];
            for (int i = 1; i < n; i++) {
                if (me == 0) {
                    close(pipes[i][0]);
                    fds[i] = pipes[i][1];
                } else {
                    close(pipes[i][1]);
                    if (i == me)
                        fds[i] = pipes[i][0];
                    else
                        close(pipes[i][0]);
                }
            }
            fflush(stdout);
            exit(pe_main(me, n, fds));
        }
        pids[me] = pid;
    }
    for (int i = 1; i < n; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }

    int failed = 0;
    for (int me = 0; me < n; me++) {
        int status = 0;
        while (waitpid(pids[me], &status, 0) < 0) {
            if (errno != EINTR) {
                perror("ring: waitpid");
                status = -1;
                break;
            }
        }
        if (status == -1) {
            failed++;
        } else if (WIFSIGNALED(status)) {
            fprintf(stderr, "ring: PE %d was killed by signal %d%s\n", me, WTERMSIG(status),
                    WTERMSIG(status) == SIGALRM ? " (time limit)" : "");
            failed++;
        } else if (WEXITSTATUS(status) != 0) {
            fprintf(stderr, "ring: PE %d exited with status %d\n", me, WEXITSTATUS(status));
            failed++;
        }
    }

    if (failed) {
        printf("ring: %d of %d PEs failed\n", failed, n);
        return 1;
    }
    printf("ring: all %d PEs passed\n", n);
    return 0;
}
