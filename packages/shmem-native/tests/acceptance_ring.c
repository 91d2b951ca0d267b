/*
 * acceptance_ring.c - an end-to-end program written only against the documented API, the
 * way a user would: 4 PEs are forked, PE 0 makes the unique ID and pipes its 136 bytes to
 * the others, and every PE initialises, passes data around a ring with put and get, stores
 * into its neighbour through aclshmem_ptr, scatters with aclshmem_int32_iput, works in a
 * team of the even PEs, and finalises.  Exit status 0 means every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "aclshmem.h"

#define NPES 4
#define HEAP_SIZE (32ULL * 1024 * 1024)
#define N 64

static int failures;
static int my_pe_g = -1;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "acceptance_ring PE %d: %s:%d: check failed: %s (last error: %s)\n", \
                    my_pe_g, __FILE__, __LINE__, #cond, aclshmemx_get_last_error());           \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int pe_main(int me, int pipes[NPES][2])
{
    my_pe_g = me;
    const int n = NPES;
    const int next = (me + 1) % n, prev = (me + n - 1) % n;

    /* 1. The unique ID: made on PE 0, handed to everybody else as 136 raw bytes. */
    aclshmemx_uniqueid_t uid = ACLSHMEM_UNIQUEID_INITIALIZER;
    if (me == 0) {
        if (aclshmemx_get_uniqueid(&uid) != ACLSHMEM_SUCCESS) {
            fprintf(stderr, "PE 0: aclshmemx_get_uniqueid failed: %s\n", aclshmemx_get_last_error());
            return 1;
        }
        for (int i = 1; i < n; i++)
            if (write(pipes[i][1], &uid, sizeof uid) != (ssize_t)sizeof uid)
                return 1;
    } else if (read_all(pipes[me][0], &uid, sizeof uid) != 0) {
        fprintf(stderr, "PE %d: no unique ID\n", me);
        return 1;
    }
    CHECK(sizeof uid == 136);

    /* 2. Init. */
    CHECK(aclshmemx_set_conf_store_tls(false, NULL, 0) == 0);
    aclshmemx_init_attr_t attr = ACLSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK(aclshmemx_set_attr_uniqueid_args(me, n, (int64_t)HEAP_SIZE, &uid, &attr) == 0);
    int rc = aclshmemx_init_attr(ACLSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != ACLSHMEM_SUCCESS) {
        fprintf(stderr, "PE %d: init failed with %d: %s\n", me, rc, aclshmemx_get_last_error());
        return 1;
    }
    CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_IS_INITIALIZED);
    CHECK(aclshmem_my_pe() == me);
    CHECK(aclshmem_n_pes() == n);

    /* 3. Ring put: my numbers go to the next PE. */
    int32_t *ring = aclshmem_malloc(N * sizeof(int32_t));
    int32_t *src = aclshmem_malloc(N * sizeof(int32_t));
    CHECK(ring != NULL && src != NULL);
    if (!ring || !src)
        return 1;
    int32_t mine[N];
    for (int i = 0; i < N; i++) {
        mine[i] = me * 1000 + i;
        src[i] = me * 1000 + i + 500;
        ring[i] = -1;
    }
    aclshmem_barrier_all();
    aclshmem_putmem(ring, mine, sizeof mine, next);
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++)
        CHECK(ring[i] == prev * 1000 + i);

    /* 4. Ring get: the next PE's numbers come to me. */
    int32_t got[N];
    memset(got, 0, sizeof got);
    aclshmem_getmem(got, src, sizeof got, next);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == next * 1000 + i + 500);
    CHECK(aclshmem_int32_g(&src[7], prev) == prev * 1000 + 7 + 500);

    /* 5. Plain stores into the neighbour's block through aclshmem_ptr. */
    aclshmem_barrier_all();
    int32_t *peer = aclshmem_ptr(ring, next);
    CHECK(peer != NULL);
    if (peer)
        for (int i = 0; i < N; i++)
            peer[i] = 7000 + me;
    CHECK(aclshmem_ptr(ring, n) == NULL);
    CHECK(aclshmem_ptr(mine, next) == NULL);
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++)
        CHECK(ring[i] == 7000 + prev);

    /* 6. Strided put: every 4th element of the next PE's block gets every 2nd of mine. */
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++)
        ring[i] = 0;
    aclshmem_barrier_all();
    aclshmem_int32_iput(ring, mine, 4, 2, N / 4, next);
    aclshmem_barrier_all();
    for (int i = 0; i < N; i++) {
        int32_t want = i % 4 == 0 ? prev * 1000 + (i / 4) * 2 : 0;
        CHECK(ring[i] == want);
    }

    /* 7. A team of the even PEs: split, barrier, a put inside the team, destroy. */
    aclshmem_team_t even = ACLSHMEM_TEAM_INVALID;
    CHECK(aclshmem_team_split_strided(ACLSHMEM_TEAM_WORLD, 0, 2, n / 2, &even) == ACLSHMEM_SUCCESS);
    if (me % 2 == 0) {
        CHECK(even != ACLSHMEM_TEAM_INVALID);
        CHECK(aclshmem_team_my_pe(even) == me / 2);
        CHECK(aclshmem_team_n_pes(even) == n / 2);
        int partner = aclshmem_team_translate_pe(even, (me / 2 + 1) % (n / 2), ACLSHMEM_TEAM_WORLD);
        CHECK(partner == (me + 2) % n);
        aclshmem_barrier(even);
        int32_t v = 9000 + me;
        aclshmem_putmem(&ring[1], &v, sizeof v, partner);
        aclshmem_barrier(even);
        CHECK(ring[1] == 9000 + (me + n - 2) % n);
        aclshmem_team_destroy(even);
        CHECK(aclshmem_team_n_pes(even) == -1);
    } else {
        CHECK(even == ACLSHMEM_TEAM_INVALID);
    }
    aclshmem_barrier_all();

    /* 8. Free and finalize. */
    aclshmem_free(src);
    aclshmem_free(ring);
    CHECK(aclshmem_finalize() == ACLSHMEM_SUCCESS);
    CHECK(aclshmemx_init_status() == ACLSHMEM_STATUS_NOT_INITIALIZED);
    return failures ? 1 : 0;
}

int main(void)
{
    int pipes[NPES][2];
    for (int i = 0; i < NPES; i++)
        if (pipe(pipes[i]) != 0)
            return 1;
    fflush(stdout);
    pid_t pids[NPES];
    for (int i = 0; i < NPES; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            return 1;
        if (pids[i] == 0)
            _exit(pe_main(i, pipes));
    }
    for (int i = 0; i < NPES; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
    /* Wait for everyone, at most 60 s. */
    int ok = 1, left = NPES;
    int done[NPES] = { 0 };
    struct timespec tick = { 0, 20 * 1000 * 1000 };
    for (int t = 0; left > 0 && t < 60 * 50; t++) {
        for (int i = 0; i < NPES; i++) {
            int st;
            if (!done[i] && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                done[i] = 1;
                left--;
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                    fprintf(stderr, "acceptance_ring: PE %d ended badly (status 0x%x)\n", i, st);
                    ok = 0;
                }
            }
        }
        nanosleep(&tick, NULL);
    }
    for (int i = 0; i < NPES; i++) {
        if (!done[i]) {
            fprintf(stderr, "acceptance_ring: PE %d timed out\n", i);
            kill(pids[i], SIGKILL);
            waitpid(pids[i], NULL, 0);
            ok = 0;
        }
    }
    printf("acceptance_ring: %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
